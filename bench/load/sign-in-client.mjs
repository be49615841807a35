// The sign-in hammer, always its own process: `BENCH_LOAD_SPEC='<json>' node bench/load/sign-in-client.mjs`.
// Opens one sign-in form of the realm (the portal client's authorization request, then the
// interaction page: its cookies and CSRF field), then `clients` loops post it with a wrong
// password for a fresh unknown email each time, each loop from a loopback address of its own
// (127.<run>.<n>.<n>: the token service counts failures per address, and this is a crowd,
// not one source), one attempt in flight per loop. A 401 (a password was checked) is followed
// at once by the next attempt; a 429 by a pause of its Retry-After (±50 %, so the crowd does not
// return in waves), as the answer asks. Prints {"event":"hammering"} once every loop has had an
// answer, then on SIGTERM {"event":"result", statuses, elapsedSec} and exits.
import { createHash, randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** @type {{authUrl: string, tenant: string, redirectUri: string, clients: number}} authUrl: where the token service listens */
const spec = JSON.parse(process.env.BENCH_LOAD_SPEC ?? '{}');
const run = 1 + (randomBytes(1)[0] % 254);

/**
 * @param {string} url
 * @param {{method?: string, headers?: Record<string, string>, body?: string, agent?: Agent}} [init]
 * @returns {Promise<{status: number, headers: import('node:http').IncomingHttpHeaders, text: string}>}
 */
function send(url, { method = 'GET', headers = {}, body, agent } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers:
          body === undefined
            ? headers
            : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** @param {string[] | undefined} setCookie */
const cookiesOf = (setCookie) => (setCookie ?? []).map((line) => line.split(';')[0]).join('; ');

async function openForm() {
  const query = new URLSearchParams({
    client_id: 'portal',
    response_type: 'code',
    redirect_uri: spec.redirectUri,
    scope: 'openid',
    code_challenge: createHash('sha256').update(randomBytes(32)).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'bench',
  });
  const auth = await send(
    `${spec.authUrl}/realms/${spec.tenant}/protocol/openid-connect/auth?${query}`,
  );
  // The path only: an absolute location names AUTH_URL, the issuers' base, not where the service listens.
  const interaction = `${spec.authUrl}${new URL(/** @type {string} */ (auth.headers.location), spec.authUrl).pathname}`;
  const cookie = cookiesOf(auth.headers['set-cookie']);
  const form = await send(interaction, { headers: { cookie } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1];
  if (auth.status !== 303 || form.status !== 200 || csrf === undefined)
    throw new Error(`no sign-in form: ${auth.status} ${form.status} ${form.text.slice(0, 200)}`);
  return { action: `${interaction}/login`, cookie, csrf };
}

const form = await openForm();
/** @type {Record<string, number>} */
const statuses = {};
let answeredLoops = 0;
let running = true;
const started = process.hrtime.bigint();

/** @param {number} n */
async function loop(n) {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    localAddress: `127.${run}.${1 + (n >> 8)}.${1 + (n & 0xff)}`,
  });
  let first = true;
  while (running) {
    const body = new URLSearchParams({
      csrf: form.csrf,
      email: `nobody-${randomBytes(6).toString('hex')}@bench.test`,
      password: 'not the password',
    }).toString();
    const answer = await send(form.action, {
      method: 'POST',
      headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body,
      agent,
    }).catch(() => ({
      status: 0,
      headers: /** @type {import('node:http').IncomingHttpHeaders} */ ({}),
      text: '',
    }));
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    if (first) {
      first = false;
      answeredLoops += 1;
      if (answeredLoops === spec.clients)
        process.stdout.write(`${JSON.stringify({ event: 'hammering' })}\n`);
    }
    if (answer.status === 429)
      await sleep(Number(answer.headers['retry-after'] ?? 1) * 1000 * (0.5 + Math.random()));
    else if (answer.status !== 401) await sleep(100);
  }
  agent.destroy();
}

process.once('SIGTERM', () => {
  running = false;
  process.stdout.write(
    `${JSON.stringify({ event: 'result', statuses, elapsedSec: Number(process.hrtime.bigint() - started) / 1e9 })}\n`,
  );
  process.exit(0);
});
await Promise.all(Array.from({ length: spec.clients }, (_, n) => loop(n)));
