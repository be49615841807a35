// dpop: the list scenario's request with a DPoP-bound token and a fresh proof per request
// (RFC 9449: signature check, the jti claimed in Redis), against the same list with a bearer
// token on the same Plant Store. Target: ≥ 0.8× the bearer list's req/s.
import { dpopKey } from '@plant/test-kit';
import { PLANT_STORE_AUDIENCE } from '../lib/platform.mjs';

export const name = 'dpop';
export const what =
  'GET /plants?limit=20, DPoP-bound token + ES256 proof per request (jti claimed in Redis)';
export const baselineWhat = 'the same Plant Store and list with a bearer token (the list scenario)';

const PATH = '/plants?limit=20';

/**
 * A service account that requires DPoP, and its bound token.
 * @param {{platform: import('../lib/platform.mjs').Platform, tenant: string}} ctx
 */
export async function prepare({ platform, tenant }) {
  const account = await platform.createServiceAccount(tenant, { name: `bench-dpop-${Date.now()}` });
  await platform.updateServiceAccount(tenant, account.clientId, { dpop_bound_access_tokens: true });
  const key = dpopKey('ES256');
  const token = await platform.grantToken(tenant, account, {}, { dpop: key });
  return { token, key };
}

/**
 * What the load generator signs proofs with (bench/load/dpop-proofs.mjs): the private key goes
 * in its environment, as the accounts' secrets do.
 * @param {{token: string, key: import('@plant/test-kit').DpopKey}} prepared
 */
function proofSpec({ token, key }) {
  return {
    alg: key.alg,
    privateJwk: key.privateKey.export({ format: 'jwk' }),
    htm: 'GET',
    htu: `${PLANT_STORE_AUDIENCE}/plants`,
    token,
  };
}

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets({ platform, tokens, prepared }) {
  const store = platform.plantStores[0];
  const { token } = /** @type {{token: string, key: any}} */ (prepared);
  return {
    ours: {
      spec: {
        url: store.url,
        method: 'GET',
        path: PATH,
        headers: { authorization: `DPoP ${token}` },
        dpop: proofSpec(/** @type {any} */ (prepared)),
      },
      pids: [store.pid],
      dbApp: 'plant-store',
    },
    // Built anew per request, as each DPoP request is (its proof): the load generator, on the
    // same two cores, costs both sides alike and only the server's work differs.
    baseline: {
      spec: {
        url: store.url,
        method: 'GET',
        path: PATH,
        headers: { authorization: `Bearer ${tokens.reader}` },
        rebuildEachRequest: true,
      },
      pids: [store.pid],
      dbApp: 'plant-store',
    },
  };
}

/**
 * One request of each side before loading.
 * @param {import('./index.mjs').ScenarioContext} ctx
 */
export async function check({ platform, tokens, prepared }) {
  const store = platform.plantStores[0];
  const { token, key } = /** @type {{token: string, key: import('@plant/test-kit').DpopKey}} */ (
    prepared
  );
  const proof = key.proof({ htm: 'GET', htu: `${PLANT_STORE_AUDIENCE}/plants`, token });
  const answers = [
    await fetch(`${store.url}${PATH}`, {
      headers: { authorization: `DPoP ${token}`, dpop: proof },
    }),
    await fetch(`${store.url}${PATH}`, { headers: { authorization: `Bearer ${tokens.reader}` } }),
  ];
  for (const res of answers)
    if (res.status !== 200)
      throw new Error(
        `dpop: the Plant Store answered ${res.status} ${(await res.text()).slice(0, 200)}`,
      );
}
