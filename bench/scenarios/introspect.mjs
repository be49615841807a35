// introspect: RFC 7662 token introspection at the token service (a resource server's credential,
// a live token: verification and the live revocation map), against the list scenario's
// request on the Plant Store. Target: ≥ 1.0× the list's req/s.

export const name = 'introspect';
export const what =
  'POST /realms/<t>/protocol/openid-connect/token/introspect, a resource server credential, a live token';
export const baselineWhat =
  'GET /plants?limit=20 with a bearer token on the Plant Store (the list scenario)';

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 */
function introspection({ platform, tenant, tokens }) {
  return {
    url: platform.tokenService.url,
    method: 'POST',
    path: `/realms/${tenant}/protocol/openid-connect/token/introspect`,
    headers: {
      authorization: `Bearer ${platform.secrets.PLANT_STORE_INTERNAL_TOKEN}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token: tokens.reader }).toString(),
  };
}

/**
 * @param {import('./index.mjs').ScenarioContext} ctx
 * @returns {{ours: import('../lib/load.mjs').Target, baseline: import('../lib/load.mjs').Target}}
 */
export function targets(ctx) {
  const store = ctx.platform.plantStores[0];
  return {
    ours: {
      spec: introspection(ctx),
      pids: [ctx.platform.tokenService.pid],
      dbApp: 'token-service',
    },
    baseline: {
      spec: {
        url: store.url,
        method: 'GET',
        path: '/plants?limit=20',
        headers: { authorization: `Bearer ${ctx.tokens.reader}` },
      },
      pids: [store.pid],
      dbApp: 'plant-store',
    },
  };
}

/**
 * An active answer before loading (a broken credential would bench 401s).
 * @param {import('./index.mjs').ScenarioContext} ctx
 */
export async function check(ctx) {
  const { url, path, ...init } = introspection(ctx);
  const res = await fetch(`${url}${path}`, init);
  const body = /** @type {{active?: unknown}} */ (await res.json());
  if (res.status !== 200 || body.active !== true)
    throw new Error(`introspect: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
}
