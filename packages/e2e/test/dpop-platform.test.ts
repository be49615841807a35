/**
 * DPoP end to end: the token service and two Plant Stores as processes. A service
 * account that requires sender-constrained tokens gets tokens bound to its key; the Plant Stores
 * take them only with a proof of that key for that request, once, across both replicas; a
 * third-party client (openid-client) works unmodified; a reset still revokes them.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as client from 'openid-client';
import { dpopKey, PLANT_STORE_AUDIENCE, type DpopKey, type ServiceAccount } from '@plant/test-kit';
import { startPlatform, type Platform } from '../src/index.js';

let p: Platform;
let tenant: string;
let account: ServiceAccount;
const key = dpopKey();
let token: string;

/** The Plant Stores' PUBLIC_URL: what every proof's htu names, whatever address the test connects to. */
const PLANTS = `${PLANT_STORE_AUDIENCE}/plants`;

beforeAll(async () => {
  p = await startPlatform({ plantStores: 2 });
  tenant = await p.createTenant('dpop');
  account = await p.createServiceAccount(tenant, { role: 'Edit' });
  await p.updateServiceAccount(tenant, account.clientId, { dpop_bound_access_tokens: true });
  token = await p.grantToken(tenant, account, {}, { dpop: key });
}, 120_000);

afterAll(() => p?.close());

interface Answer {
  status: number;
  challenge: string | null;
  body: unknown;
}

async function plants(
  store: number,
  init: {
    scheme?: string;
    token?: string;
    proof?: string | undefined;
    method?: string;
    body?: unknown;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {
    authorization: `${init.scheme ?? 'DPoP'} ${init.token ?? token}`,
  };
  if (init.proof !== undefined) headers.dpop = init.proof;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${p.plantStores[store]!.url}/plants?limit=5`, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    body: await res.json(),
  };
}

const proofFor = (k: DpopKey, method = 'GET', t = token) =>
  k.proof({ htm: method, htu: PLANTS, token: t });
const refused = (error: string, message: string) => ({
  status: 401,
  challenge: expect.stringMatching(new RegExp(`^DPoP realm="plants", error="${error}"`)),
  body: { error: 401, message },
});

describe('DPoP at the Plant Stores', () => {
  test('When the bound token comes with a proof per request, then both Plant Stores list and create for it', async () => {
    expect((await plants(0, { proof: proofFor(key) })).status).toBe(200);
    expect((await plants(1, { proof: proofFor(key) })).status).toBe(200);
    const created = await plants(1, {
      method: 'POST',
      proof: proofFor(key, 'POST'),
      body: { id: 1, name: 'Fern', tag: 'dpop' },
    });
    expect(created).toEqual({ status: 200, challenge: null, body: { name: 'Fern', tag: 'dpop' } });
  });

  test('When the bound token is stolen and sent as Bearer, then 401 invalid_token under the DPoP scheme', async () => {
    expect(await plants(0, { scheme: 'Bearer' })).toEqual(
      refused(
        'invalid_token',
        'The access token is DPoP-bound: send it with the DPoP scheme and a DPoP proof',
      ),
    );
  });

  test("When the thief signs proofs with a key of their own, or forges the owner's key into one, then 401", async () => {
    const thief = dpopKey();
    expect(await plants(0, { proof: proofFor(thief) })).toEqual(
      refused('invalid_token', 'The DPoP proof key is not the key the access token is bound to'),
    );
    const forged = thief.proof({ htm: 'GET', htu: PLANTS, token, header: { jwk: key.jwk } });
    expect(await plants(0, { proof: forged })).toEqual(
      refused('invalid_dpop_proof', 'DPoP proof signature is invalid'),
    );
  });

  test('When a proof is replayed at the same or the other Plant Store, or reused for another method or URL, then 401 invalid_dpop_proof', async () => {
    const proof = proofFor(key);
    expect((await plants(0, { proof })).status).toBe(200);
    expect(await plants(0, { proof })).toEqual(
      refused('invalid_dpop_proof', 'DPoP proof has already been used'),
    );
    expect(await plants(1, { proof })).toEqual(
      refused('invalid_dpop_proof', 'DPoP proof has already been used'),
    );
    expect(
      await plants(0, { method: 'POST', proof: proofFor(key), body: { id: 2, name: 'Moss' } }),
    ).toEqual(refused('invalid_dpop_proof', 'DPoP proof htm does not match the request method'));
    expect(
      await plants(0, {
        proof: key.proof({
          htm: 'GET',
          htu: `http://127.0.0.1:${p.plantStores[0]!.port}/plants`,
          token,
        }),
      }),
    ).toEqual(refused('invalid_dpop_proof', 'DPoP proof htu does not match the request URL'));
  });

  test('When one proof is fired 30 times at once at both Plant Stores, then exactly one request passes', async () => {
    const proof = proofFor(key);
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => plants(i % 2, { proof }).then((a) => a.status)),
    );
    expect({
      ok: statuses.filter((s) => s === 200).length,
      refused: statuses.filter((s) => s === 401).length,
    }).toEqual({ ok: 1, refused: 29 });
  });

  test('When the proof is huge or carries a symmetric key, then 401 invalid_dpop_proof in the Error shape and the stores stay up', async () => {
    expect((await plants(0, { proof: `${'a'.repeat(6000)}.b.c` })).status).toBe(401);
    expect(
      (
        await plants(0, {
          proof: key.proof({
            htm: 'GET',
            htu: PLANTS,
            token,
            header: { jwk: { kty: 'oct', k: 'c2VjcmV0' } },
          }),
        })
      ).body,
    ).toEqual({ error: 401, message: 'DPoP proof jwk must be a public key' });
    expect((await plants(1, { proof: proofFor(key) })).status).toBe(200);
  });

  test('When the secret is reset, then the bound token is refused (revoked) even with a valid proof', async () => {
    const other = await p.createServiceAccount(tenant);
    await p.updateServiceAccount(tenant, other.clientId, { dpop_bound_access_tokens: true });
    const otherKey = dpopKey('EdDSA');
    const bound = await p.grantToken(tenant, other, {}, { dpop: otherKey });
    expect(
      (await plants(0, { token: bound, proof: proofFor(otherKey, 'GET', bound) })).status,
    ).toBe(200);
    await p.resetSecret(tenant, other.clientId);
    let answer: Answer | undefined;
    for (let i = 0; i < 100 && answer?.status !== 401; i += 1)
      answer = await plants(0, { token: bound, proof: proofFor(otherKey, 'GET', bound) });
    expect(answer).toEqual({
      status: 401,
      challenge: expect.stringContaining('error="invalid_token"'),
      body: { error: 401, message: 'Token has been revoked' },
    });
  });
});

describe('A third-party client (openid-client) with DPoP', () => {
  test('When openid-client gets a DPoP token by discovery and calls the Plant Store with its DPoP handle, then it works unmodified', async () => {
    const config = await client.discovery(
      new URL(`${p.authUrl}/realms/${tenant}`),
      account.clientId,
      undefined,
      client.ClientSecretPost(account.secret),
      { execute: [client.allowInsecureRequests] },
    );
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const tokens = await client.clientCredentialsGrant(config, {}, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    // Its proofs name the URL it is asked to fetch (the stores' PUBLIC_URL); the request itself goes
    // to a store's address, as an ingress in front of that name would send it.
    config[client.customFetch] = (url, options) =>
      fetch(
        url.startsWith(PLANT_STORE_AUDIENCE)
          ? url.replace(PLANT_STORE_AUDIENCE, p.plantStores[1]!.url)
          : url,
        options as RequestInit,
      );
    for (let call = 0; call < 2; call += 1) {
      const res = await client.fetchProtectedResource(
        config,
        tokens.access_token,
        new URL(PLANTS),
        'GET',
        undefined,
        undefined,
        { DPoP },
      );
      expect({ call, status: res.status, body: await res.json() }).toEqual({
        call,
        status: 200,
        body: expect.any(Array),
      });
    }
  });
});
