/**
 * One HTTP exchange between our services (the internal API, a realm's keys), on Node's own
 * `http`/`https` with keep-alive agents rather than the global `fetch`.
 *
 * Why not `fetch`: each call of undici's fetch builds WHATWG request, response, headers and
 * stream objects, and its abort signals, that outlive the exchange by a collection or two; a
 * resource server that meets thousands of realms for the first time (a JWKS fetch each) grew
 * V8's heap, and with it its RSS, by tens of MB that it then kept (measured: docs/performance.md,
 * "At scale"), and each periodic revocation resync paid the same machinery. Here an exchange
 * allocates its request, its body chunks and one timer, and the timer is cleared as soon as the
 * body is read or discarded.
 *
 * Redirects are not followed (an answer is whatever the server said).
 */
import http from 'node:http';
import https from 'node:https';
import { TimeoutError } from './with-timeout.js';

export interface HttpCallOptions {
  /** Default GET. */
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The whole exchange, body included: past it the request is destroyed and the call rejects with the package's `TimeoutError`. */
  timeoutMs: number;
  /** Aborts the exchange (rejects with an `AbortError`). */
  signal?: AbortSignal;
}

export interface HttpCallAnswer {
  status: number;
  /** Reads the body as UTF-8; rejects past `maxBytes` (the request is then destroyed). */
  text(maxBytes?: number): Promise<{ text: string; bytes: number }>;
  /** Drops the body unread (the connection is reused once it has drained). */
  discard(): void;
}

/**
 * Idle sockets are closed by us after 30 s, well before the token service's listeners close
 * theirs (65 s, web-server.ts): a call is then never sent on a socket the server is closing.
 * Polls every few seconds (the revocation feed) keep theirs in use.
 */
const IDLE_SOCKET_MS = 30_000;
const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  'https:': new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
} as const;

function namedError(name: string, message: string): Error {
  const err = new Error(message);
  err.name = name;
  return err;
}

/** Sends the request; resolves once the status and headers have arrived. */
// long: one request with its bounds (timeout, body size, status), callbacks of node:http that share the same request and answer.
export function httpCall(url: string, options: HttpCallOptions): Promise<HttpCallAnswer> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    return Promise.reject(new TypeError(`unsupported protocol ${target.protocol}`));
  const transport = target.protocol === 'https:' ? https : http;
  // long: the request itself: its events (response, data, end, error, timeout) close over one answer.
  return new Promise((resolve, reject) => {
    const request = transport.request(target, {
      method: options.method ?? 'GET',
      headers:
        options.body === undefined
          ? options.headers
          : { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) },
      agent: AGENTS[target.protocol as keyof typeof AGENTS],
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    let lastError: Error | undefined;
    let answered = false;
    // Once answered, the reason reaches the body's reader (below), not the request's 'error'.
    const fail = (err: Error) => {
      lastError = err;
      if (answered) request.destroy();
      else request.destroy(err);
    };
    const timer = setTimeout(
      () => fail(new TimeoutError(`the call to ${target.host} (${options.timeoutMs} ms)`)),
      options.timeoutMs,
    );
    const done = () => clearTimeout(timer);
    request.on('error', (err) => {
      lastError ??= err;
      done();
      reject(err);
    });
    request.on('response', (response) => {
      answered = true;
      resolve({
        status: response.statusCode ?? 0,
        discard() {
          // The deadline stands until the discarded body has drained: a peer that stalls
          // mid-body is cut off by it, not left holding the socket.
          if (response.complete) done();
          else {
            response.once('end', done);
            response.once('close', done);
          }
          response.resume();
        },
        text(maxBytes = Infinity) {
          return new Promise((resolveText, rejectText) => {
            if (response.destroyed && !response.complete) {
              done();
              return void rejectText(
                lastError ?? namedError('AnswerCutShort', 'the answer ended before its body'),
              );
            }
            const chunks: Buffer[] = [];
            let bytes = 0;
            let ended = false;
            response.on('data', (chunk: Buffer) => {
              bytes += chunk.length;
              if (bytes <= maxBytes) return void chunks.push(chunk);
              ended = true;
              done();
              fail(namedError('BodyTooLarge', `body over ${maxBytes} bytes`));
              rejectText(lastError);
            });
            response.on('error', (err) => {
              done();
              rejectText(lastError ?? err);
            });
            response.on('end', () => {
              if (ended) return;
              ended = true;
              done();
              resolveText({ text: Buffer.concat(chunks, bytes).toString('utf8'), bytes });
            });
            // Destroyed mid-body (timeout, abort, a reset): the reason, if we know it, is in lastError.
            response.on('close', () => {
              if (ended) return;
              done();
              rejectText(
                lastError ?? namedError('AnswerCutShort', 'the answer ended before its body'),
              );
            });
          });
        },
      });
    });
    request.end(options.body);
  });
}
