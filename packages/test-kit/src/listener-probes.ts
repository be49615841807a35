/**
 * What each service's tests ask its two kinds of listener to prove the split between them: a
 * public port answers none of the management paths, however they are spelled or whatever
 * rewrite or forwarding header comes with them; a management port answers nothing else.
 * Requests go out exactly as written (no URL normalisation, as `fetch` would do).
 */
import { request } from 'node:http';

/** One answer, reduced to what the tests compare: the request, the status, and whether the body is the `Error` shape of that status. */
export interface ListenerAnswer {
  /** `METHOD path [+ headers]`. */
  what: string;
  status: number;
  /** JSON `{error: <status>, message: string}` and nothing else (a HEAD answer: a JSON type, no body). */
  errorShape: boolean;
}

/** The management paths, and how an attacker would spell them to slip past a router. */
export const MANAGEMENT_SPELLINGS: readonly string[] = [
  '/healthz',
  '/readyz',
  '/metrics',
  '/metrics/',
  '/METRICS',
  '/Readyz',
  '/metrics?name[]=http_requests_total',
  '//metrics',
  '/%6detrics',
  '/metrics%2F',
  '/./metrics',
  '/nope/../metrics',
  '/metrics;x=1',
  '/metrics.txt',
];

/** Headers some proxies and frameworks route or rewrite by: none of them may reach a management path here. */
function rewriteHeaders(managementPort: number): Record<string, string> {
  return {
    'x-original-url': '/metrics',
    'x-rewrite-url': '/metrics',
    'x-forwarded-prefix': '/metrics',
    'x-forwarded-port': String(managementPort),
    'x-forwarded-host': `127.0.0.1:${managementPort}`,
    'x-forwarded-for': '127.0.0.1',
    host: `127.0.0.1:${managementPort}`,
  };
}

/** Sends `method path` as written to `baseUrl`'s host and port. */
export function askRaw(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<ListenerAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const what = `${method} ${path}${Object.keys(headers).length === 0 ? '' : ` + ${Object.keys(headers).join(', ')}`}`;
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const json = /^application\/json/.test(res.headers['content-type'] ?? '');
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          what,
          status,
          errorShape: json && (method === 'HEAD' ? text === '' : isErrorBody(text, status)),
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function isErrorBody(text: string, status: number): boolean {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    return (
      Object.keys(body).sort().join() === 'error,message' &&
      body.error === status &&
      typeof body.message === 'string'
    );
  } catch {
    return false;
  }
}

/**
 * Every spelling of the management paths on a public listener, by GET and HEAD, then each
 * management path with headers that would point a careless router at the management port.
 */
export async function askPublicForManagement(
  publicUrl: string,
  managementPort: number,
): Promise<ListenerAnswer[]> {
  const answers: ListenerAnswer[] = [];
  for (const path of MANAGEMENT_SPELLINGS) {
    for (const method of ['GET', 'HEAD']) answers.push(await askRaw(publicUrl, method, path));
  }
  for (const path of ['/healthz', '/readyz', '/metrics'])
    answers.push(await askRaw(publicUrl, 'GET', path, rewriteHeaders(managementPort)));
  return answers;
}

/** A public listener's paths asked on the management port, plain and with forwarding and rewrite headers. */
export async function askManagementForPublic(
  managementUrl: string,
  publicPaths: readonly string[],
): Promise<ListenerAnswer[]> {
  const headers = {
    'x-original-url': publicPaths[0] ?? '/',
    'x-rewrite-url': publicPaths[0] ?? '/',
    'x-forwarded-proto': 'https',
    'x-forwarded-for': '203.0.113.9',
    'x-forwarded-host': 'api.example.com',
  };
  const answers: ListenerAnswer[] = [];
  for (const path of publicPaths) {
    for (const method of ['GET', 'POST']) answers.push(await askRaw(managementUrl, method, path));
    answers.push(await askRaw(managementUrl, 'GET', path, headers));
  }
  return answers;
}
