/**
 * An API another team writes, outside the Plant Store, protected by `@plant/resource-auth`
 * (packages/resource-auth/README.md, "Protect your own API"): tokens verified locally against the
 * realm's keys, DPoP-bound tokens with their proofs, and a reset or delete refusing old tokens
 * as fast as at the Plant Store. Configured by the token service's two URLs, this API's own
 * read-only credential, Redis, and the audience its clients ask tokens for.
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

await auth.start();
const server = app.listen(Number(process.env.PORT ?? 8090), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    `${JSON.stringify({ msg: 'listening', port: typeof address === 'object' && address !== null ? address.port : undefined })}\n`,
  );
});
process.once('SIGTERM', () => server.close(() => void auth.stop().then(() => process.exit(0))));
