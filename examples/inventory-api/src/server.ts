/**
 * An API another team writes, outside the Plant Store, protected by `@plant/resource-auth`
 * (packages/resource-auth/README.md, "Protect your own API"): tokens verified locally against the
 * realm's keys, DPoP-bound tokens with their proofs, and a reset or delete refusing old tokens
 * as fast as at the Plant Store. Configured by the token service's two URLs, this API's own
 * read-only credential, Redis, and the audience its clients ask tokens for.
 *
 * With a service account of its own (`EXCHANGE_CLIENT_ID`, `EXCHANGE_CLIENT_SECRET`) that an
 * Account Admin allowed to act for others at the Plant Store, it is also a middle service:
 * `/inventory/plants` calls the Plant Store (`PLANT_STORE_URL`) on the caller's behalf with a
 * token exchanged for the caller's (RFC 8693), which names both and carries the caller's
 * grants narrowed to what was asked; a reset of either account refuses it at its next use.
 */
import express from 'express';
import { createResourceAuth, principalOf } from '@plant/resource-auth';

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    process.stderr.write(`configuration error: ${name} is required but not set\n`);
    process.exit(1);
  }
  return value;
}

const auth = createResourceAuth({
  authUrl: setting('AUTH_URL'), // {auth_url}: issuers are {auth_url}/realms/<tenant>
  internalUrl: setting('TOKEN_SERVICE_INTERNAL_URL'), // keys, realm list, revocations
  credential: setting('INTERNAL_API_TOKEN'), // this API's entry of RESOURCE_SERVER_TOKENS
  redisUrl: setting('REDIS_URL'),
  audience: setting('API_AUDIENCE'), // one of the token service's API_AUDIENCES
  publicUrl: setting('PUBLIC_URL'), // what clients call: DPoP proofs name it
  realm: 'inventory',
});

const app = express();
app.get('/healthz', (_req, res) => {
  res.status(auth.isReady() ? 200 : 503).json({ ready: auth.isReady() });
});
// requireRole reads the token's scope too: View needs plants:read, Edit plants:write (a narrowed token does less).
app.get('/inventory', auth.middleware, auth.requireRole('View'), (req, res) => {
  const caller = principalOf(req);
  res.json({
    tenant: caller.tenant,
    caller: caller.sub,
    sender_constrained: caller.jkt !== undefined,
    items: [{ sku: 'pot-12cm', count: 40 }],
  });
});
app.post('/inventory', auth.middleware, auth.requireRole('Edit'), (req, res) => {
  res.status(201).json({ tenant: principalOf(req).tenant, recorded: true });
});

/** The exchange (RFC 8693): the caller's token for one that lets this API call the Plant Store for the caller. */
async function onBehalfOf(
  tenant: string,
  callerToken: string,
  scope: string,
): Promise<{ token: string } | { status: number; body: unknown }> {
  const form = new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: callerToken,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    audience: setting('PLANT_STORE_AUDIENCE'),
    scope,
  });
  const basic = Buffer.from(
    `${encodeURIComponent(setting('EXCHANGE_CLIENT_ID'))}:${encodeURIComponent(setting('EXCHANGE_CLIENT_SECRET'))}`,
  ).toString('base64');
  const res = await fetch(`${setting('AUTH_URL')}/realms/${tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: form,
  });
  const body = (await res.json()) as { access_token?: string; error?: string };
  if (res.ok && typeof body.access_token === 'string') return { token: body.access_token };
  // Refused (the caller's token no longer active, this API no longer allowed): not the caller's fault to retry.
  return { status: 403, body: { error: 403, message: `token exchange refused: ${body.error}` } };
}

/** The Plant Store's answer to a call made for the caller, passed on as it came. */
async function callPlantStore(
  req: express.Request,
  res: express.Response,
  scope: string,
  init: { method: string; body?: string },
): Promise<void> {
  const caller = principalOf(req);
  // The bearer value this API was called with (DPoP-bound ones are exchanged as well: the subject token's key stays the caller's).
  const callerToken = (req.headers.authorization ?? '').replace(/^\S+\s+/, '');
  const exchanged = await onBehalfOf(caller.tenant, callerToken, scope);
  if (!('token' in exchanged)) {
    res.status(exchanged.status).json(exchanged.body);
    return;
  }
  const answer = await fetch(`${setting('PLANT_STORE_URL')}/plants`, {
    method: init.method,
    headers: {
      authorization: `Bearer ${exchanged.token}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  res
    .status(answer.status)
    .type('application/json')
    .send(await answer.text());
}

if (process.env.EXCHANGE_CLIENT_ID !== undefined && process.env.EXCHANGE_CLIENT_ID !== '') {
  app.get('/inventory/plants', auth.middleware, auth.requireRole('View'), (req, res, next) => {
    callPlantStore(req, res, 'plants:read', { method: 'GET' }).catch(next);
  });
  app.post('/inventory/plants', auth.middleware, express.json(), (req, res, next) => {
    // The caller's own grants decide at the Plant Store (a View caller with an edit grant may create its tag's plants).
    callPlantStore(req, res, 'plants:write', {
      method: 'POST',
      body: JSON.stringify(req.body),
    }).catch(next);
  });
}

await auth.start();
const server = app.listen(Number(process.env.PORT ?? 8090), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    `${JSON.stringify({ msg: 'listening', port: typeof address === 'object' && address !== null ? address.port : undefined })}\n`,
  );
});
process.once('SIGTERM', () => server.close(() => void auth.stop().then(() => process.exit(0))));
