// keys: client_credentials grants authenticated with private_key_jwt (RFC 7523): each request
// carries a fresh RS256 assertion (its own jti, claimed once in Redis) signed by an RSA-2048 key,
// the most common kind of client key, against the same account's client_secret_post grants on
// the same token service in the same run (target: ≥ 0.8× the secret grant). The load
// generator signs its assertions before its window starts, so signing costs neither side's
// measured time. `BENCH_KEYS_TYPE=ec` (ES256) or `ed25519` measures the other key types.
import { randomUUID } from 'node:crypto';
import { assertionGrantBody, clientAssertion, clientKeyPair } from '@plant/test-kit';
import { grantBody, INTERNAL_API_TOKEN, tokenPath } from '../lib/platform.mjs';

export const name = 'keys';
/** @type {'rsa' | 'ec' | 'ed25519'} */
const KEY_TYPE = /** @type {any} */ (process.env.BENCH_KEYS_TYPE ?? 'rsa');
export const what = `client_credentials grant with private_key_jwt (${KEY_TYPE} key assertion, fresh jti), JWT access token`;
export const baselineWhat =
  "ours: the same account's client_secret_post grant (the token scenario's request)";
// Both sides are the token service; a round's ratio spreads as the token scenario's does.
export const fullRounds = 12;

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const KID = 'bench-key';

/**
 * Adds a key of KEY_TYPE to the writer account (through the internal API, as the portal does).
 * @param {{platform: import('../lib/platform.mjs').Platform, tenant: string, accounts: Record<string, {client_id: string, secret: string}>}} ctx
 * @returns {Promise<{assertionKey: {privateKeyPem: string, kid: string, alg: string}}>}
 */
export async function prepare({ platform, tenant, accounts }) {
  const key = clientKeyPair(KEY_TYPE);
  const res = await fetch(
    `${platform.internalUrl}/internal/v1/realms/${tenant}/service-accounts/${accounts.writer.client_id}/keys`,
    {
      method: 'POST',
      headers: {
        authorization: `Bearer ${INTERNAL_API_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        jwk: { ...key.publicJwk, kid: `${KID}-${randomUUID().slice(0, 8)}` },
        actor: 'bench',
      }),
    },
  );
  if (res.status !== 201)
    throw new Error(`keys: adding the bench key answered ${res.status} ${await res.text()}`);
  const { id } = /** @type {{id: string}} */ (await res.json());
  // One grant before loading, so a broken setup fails loudly instead of benchmarking 401s.
  const assertion = clientAssertion({
    clientId: accounts.writer.client_id,
    audience: `${platform.authUrl}/realms/${tenant}`,
    key,
    kid: id,
  });
  const check = await fetch(`${platform.tokenService.url}${tokenPath(tenant)}`, {
    method: 'POST',
    headers: FORM,
    body: assertionGrantBody(accounts.writer.client_id, assertion),
  });
  if (check.status !== 200)
    throw new Error(`keys: a private_key_jwt grant answered ${check.status} ${await check.text()}`);
  return {
    assertionKey: {
      privateKeyPem: key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      kid: id,
      alg: key.alg,
    },
  };
}

/**
 * @param {import('./index.mjs').ScenarioContext} ctx   `prepared`: what `prepare` made
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets({ platform, tenant, accounts, prepared }) {
  const { assertionKey } =
    /** @type {{assertionKey: {privateKeyPem: string, kid: string, alg: string}}} */ (prepared);
  const { tokenService } = platform;
  const spec = { url: tokenService.url, method: 'POST', path: tokenPath(tenant), headers: FORM };
  return {
    ours: {
      spec: {
        ...spec,
        assertion: {
          clientId: accounts.writer.client_id,
          audience: `${platform.authUrl}/realms/${tenant}`,
          ...assertionKey,
        },
      },
      pids: [tokenService.pid],
      dbApp: 'token-service',
    },
    baseline: {
      spec: { ...spec, body: grantBody(accounts.writer.client_id, accounts.writer.secret) },
      pids: [tokenService.pid],
      dbApp: 'token-service',
    },
  };
}
