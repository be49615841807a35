/**
 * An HTTP client that sends exactly what a test asks for (any method, header, raw body,
 * wrong content length) over keep-alive connections, and never follows redirects, plus a
 * raw-socket sender for what no HTTP library will send (CR/LF in headers, short bodies).
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  setCookie?: string[];
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: unknown;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string | string[] | undefined>;
  body?: string | Buffer;
  agent?: Agent;
  timeoutMs?: number;
}

/** Keep-alive, a few sockets: the fuzzer's concurrency, without a connection per case. */
export const keepAliveAgent = new Agent({ keepAlive: true, maxSockets: 16 });

export function httpRequest(
  url: string,
  {
    method = 'GET',
    headers = {},
    body,
    agent = keepAliveAgent,
    timeoutMs = 30_000,
  }: RequestOptions = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const clean: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(headers)) if (v !== undefined && v !== '') clean[k] = v;
    // Node's client sends a DELETE/GET/OPTIONS body without any length, which the server
    // then reads as the next request on the keep-alive connection: always frame it.
    if (body !== undefined && !Object.keys(clean).some((k) => k.toLowerCase() === 'content-length'))
      clean['content-length'] = String(Buffer.byteLength(body));
    // The path goes out as written: a URL parser would resolve `%2e%2e` and `..` segments
    // before sending, so a hostile path would reach some other route than the one under test.
    // What cannot go on the request line as is (spaces, non-ASCII) is left to the parser to encode.
    const target = new URL(url);
    const written = url.startsWith(target.origin)
      ? (url.slice(target.origin.length).split('#')[0] ?? '')
      : '';
    const path = /^\/[\x21-\x7e]*$/.test(written) ? written : `${target.pathname}${target.search}`;
    const options = {
      method,
      headers: clean,
      agent,
      timeout: timeoutMs,
      host: target.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: target.port,
      path,
    };
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = text === '' ? undefined : JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          setCookie: res.headers['set-cookie'],
          text,
          body: parsed,
        });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

export interface RawAnswer {
  /** 0 when the server closed without answering. */
  status: number;
  head: string;
  body: string;
}

/**
 * Writes `bytes` on a fresh connection, half-closes it when `end` is set (a truncated
 * body), and reads until the server closes or `timeoutMs` passes.
 */
export function rawRequest(
  port: number,
  bytes: Buffer | string,
  { end = false, timeoutMs = 5000 } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = split >= 0 ? text.slice(0, split) : text;
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: split >= 0 ? text.slice(split + 4) : '' });
    });
    socket.write(bytes);
    if (end) socket.end();
  });
}
