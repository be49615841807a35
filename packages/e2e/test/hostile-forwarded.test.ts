/**
 * Forwarded addresses at the token endpoint, the service as a separate built process: with
 * TRUST_PROXY as ranges, an `X-Forwarded-For` from an address outside them is ignored, so a
 * caller cannot walk around the per-address failure limits by naming a new address each time;
 * from a trusted proxy the header is honoured.
 */
import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { httpRequest, startPlatform, type Platform, type ServiceAccount } from '../src/index.js';

const UNTRUSTED = '127.0.0.61';
const TRUSTED_PROXY = '127.0.0.62';
const LIMIT = 3;

let p: Platform;
let tenant: string;
let account: ServiceAccount;

beforeAll(async () => {
  p = await startPlatform({
    plantStores: 0,
    serviceEnv: {
      'token-service': {
        TRUST_PROXY: `10.0.0.0/8, ${TRUSTED_PROXY}`,
        CLIENT_AUTH_FAILURES_PER_CLIENT_IP: String(LIMIT),
      },
    },
  });
  tenant = await p.createTenant('fwd');
  account = await p.createServiceAccount(tenant);
}, 60_000);

afterAll(() => p?.close());

function wrongSecret(from: string, forwardedFor: string) {
  return httpRequest(`${p.authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    agent: new Agent({ localAddress: from }),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-forwarded-for': forwardedFor,
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: account.clientId,
      client_secret: 'pss_wrong',
    }).toString(),
  });
}

describe('X-Forwarded-For at the token endpoint (TRUST_PROXY as ranges)', () => {
  test('When a caller outside the trusted ranges names a new forwarded address with each wrong secret, then its own address is counted and it is stopped at the limit', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= LIMIT + 3; i += 1)
      statuses.push((await wrongSecret(UNTRUSTED, `198.51.100.${i}`)).status);

    expect(statuses).toEqual([...Array<number>(LIMIT).fill(401), 429, 429, 429]);
  });

  test('When a trusted proxy forwards wrong secrets for distinct clients, then each client address is counted on its own', async () => {
    const distinct: number[] = [];
    for (let i = 1; i <= LIMIT + 2; i += 1)
      distinct.push((await wrongSecret(TRUSTED_PROXY, `203.0.113.${i}`)).status);
    const same: number[] = [];
    for (let i = 1; i <= LIMIT + 1; i += 1)
      same.push((await wrongSecret(TRUSTED_PROXY, '192.0.2.77')).status);

    expect(distinct).toEqual(Array<number>(LIMIT + 2).fill(401));
    expect(same).toEqual([...Array<number>(LIMIT).fill(401), 429]);
  });
});
