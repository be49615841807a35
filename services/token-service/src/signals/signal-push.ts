import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { checkedLookup, type IssuerFetchPolicy, urlProblem } from '../client-auth/index.js';

/** What a push came to (RFC 8935 §2.2-2.4). */
export type PushOutcome =
  | { kind: 'delivered' }
  /** The receiver refused this SET (400): retrying the same SET cannot succeed. */
  | { kind: 'rejected'; error: string }
  /** Anything else (no answer, 401/403, 429, 5xx): the SET is tried again later. */
  | { kind: 'failed'; error: string };

/**
 * Connections to receivers are kept open between pushes (a TLS handshake per SET would cost
 * more than the push): 2 idle per receiver address at most, an idle one closed after 30 s. No
 * cap on sockets in use, per address or in all: a cap would be a queue shared by every tenant
 * (another tenant's slow receiver at the same address, or all of them, would hold a push up in
 * it). Sockets in use are bounded by the pushes in flight, one per stream in the tenants' lanes
 * (signal-delivery.ts). The address a connection reached was checked when it was made
 * (`checkedLookup`).
 */
const AGENT_OPTIONS = {
  keepAlive: true,
  maxFreeSockets: 2,
  timeout: 30_000,
};
const agents = { http: new HttpAgent(AGENT_OPTIONS), https: new HttpsAgent(AGENT_OPTIONS) };

/** The receiver's error body is read this far, for the log (RFC 8935 §2.3 `{err, description}`). */
const MAX_ERROR_BYTES = 2048;

/** Why a push URL is refused, or undefined: the trusted-issuer rules (https, global unicast). */
export function pushUrlProblem(
  target: string,
  policy: Pick<IssuerFetchPolicy, 'allowHttp' | 'allowPrivate'>,
): string | undefined {
  const url = URL.parse(target);
  if (url === null) return 'is not a URL';
  return urlProblem(url, policy);
}

function errorOf(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { err?: unknown; description?: unknown };
    if (typeof parsed.err === 'string')
      return `${status} ${parsed.err}${typeof parsed.description === 'string' ? `: ${parsed.description.slice(0, 200)}` : ''}`;
  } catch {
    // not the RFC's body: the status says enough
  }
  return `answered ${status}`;
}

/**
 * POSTs one SET (RFC 8935 §2.1): `application/secevent+jwt`, the receiver's own Authorization
 * header when it gave one, to an address checked as it is connected to (no DNS rebinding past
 * the check), no redirect followed, within `timeoutMs` for the whole exchange.
 */
export function pushSecurityEvent(
  target: string,
  set: string,
  authorization: string | undefined,
  policy: IssuerFetchPolicy,
): Promise<PushOutcome> {
  const problem = pushUrlProblem(target, policy);
  if (problem !== undefined)
    return Promise.resolve({ kind: 'failed', error: `endpoint ${problem}` });
  const url = new URL(target);
  const secure = url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  return new Promise<PushOutcome>((resolve) => {
    const headers: Record<string, string> = {
      'content-type': 'application/secevent+jwt',
      accept: 'application/json',
      'content-length': String(Buffer.byteLength(set)),
    };
    if (authorization !== undefined) headers.authorization = authorization;
    const req = send(
      url,
      {
        method: 'POST',
        headers,
        lookup: checkedLookup(policy.allowPrivate, policy.resolve),
        agent: secure ? agents.https : agents.http,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < MAX_ERROR_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('error', () => resolve({ kind: 'failed', error: 'answer cut off' }));
        res.on('end', () => {
          clearTimeout(deadline);
          if (status >= 200 && status < 300) return resolve({ kind: 'delivered' });
          const body = Buffer.concat(chunks).subarray(0, MAX_ERROR_BYTES).toString('utf8');
          resolve({
            kind: status === 400 ? 'rejected' : 'failed',
            error: errorOf(status, body),
          });
        });
      },
    );
    const deadline = setTimeout(
      () => req.destroy(new Error(`no answer within ${policy.timeoutMs} ms`)),
      policy.timeoutMs,
    );
    req.on('error', (err) => {
      clearTimeout(deadline);
      resolve({ kind: 'failed', error: err.message });
    });
    req.end(set);
  });
}
