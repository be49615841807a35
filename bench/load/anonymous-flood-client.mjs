// The anonymous flood, always its own process: `BENCH_LOAD_SPEC='<json>' node bench/load/anonymous-flood-client.mjs`.
// `clients` loops, ALL from one loopback address (127.<run>.0.1: one source, as an attacker
// without an address range), send what stores state before anyone signs in, as fast as they
// are answered and ignoring Retry-After: the portal client's authorization request to the
// token service (a `state` of the longest size allowed, 512 characters) and, when the portal
// runs, its GET /login?tenant=<t> (a pending sign-in). Prints {"event":"flooding"} once every
// loop has had an answer, then on SIGTERM {"event":"result", statuses, elapsedSec} and exits.
import { createHash, randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';

/** @type {{authUrl: string, portalUrl?: string, tenant: string, redirectUri: string, clients: number}} authUrl: where the token service listens */
const spec = JSON.parse(process.env.BENCH_LOAD_SPEC ?? '{}');
const run = 1 + (randomBytes(1)[0] % 254);
const agent = new Agent({
  keepAlive: true,
  maxSockets: spec.clients,
  localAddress: `127.${run}.0.1`,
});

/**
 * @param {string} url
 * @returns {Promise<number>} the status, 0 when the request failed
 */
function get(url) {
  return new Promise((resolve) => {
    const req = request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

function authorizationUrl() {
  const query = new URLSearchParams({
    client_id: 'portal',
    response_type: 'code',
    redirect_uri: spec.redirectUri,
    scope: 'openid',
    code_challenge: createHash('sha256').update(randomBytes(32)).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(384).toString('base64url'),
  });
  return `${spec.authUrl}/realms/${spec.tenant}/protocol/openid-connect/auth?${query}`;
}

/** @type {Record<string, number>} */
const statuses = {};
let answeredLoops = 0;
let running = true;
const started = process.hrtime.bigint();

async function loop() {
  let first = true;
  let turn = 0;
  while (running) {
    turn += 1;
    const portal = spec.portalUrl !== undefined && turn % 2 === 0;
    const status = await get(
      portal ? `${spec.portalUrl}/login?tenant=${spec.tenant}` : authorizationUrl(),
    );
    const key = `${portal ? 'login' : 'auth'} ${status}`;
    statuses[key] = (statuses[key] ?? 0) + 1;
    if (first) {
      first = false;
      answeredLoops += 1;
      if (answeredLoops === spec.clients)
        process.stdout.write(`${JSON.stringify({ event: 'flooding' })}\n`);
    }
  }
}

process.once('SIGTERM', () => {
  running = false;
  process.stdout.write(
    `${JSON.stringify({ event: 'result', statuses, elapsedSec: Number(process.hrtime.bigint() - started) / 1e9 })}\n`,
  );
  process.exit(0);
});
await Promise.all(Array.from({ length: spec.clients }, () => loop()));
