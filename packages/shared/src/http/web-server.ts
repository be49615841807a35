import { once } from 'node:events';
import type { Server } from 'node:http';
import { createServer, STATUS_CODES } from 'node:http';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import type { RequestListener } from 'node:http';

/** How long idle keep-alive sockets stay open after close() starts (see close). */
const IDLE_SOCKET_GRACE_MS = 500;

export interface WebServer {
  server: Server;
  /** The bound port (useful with port 0 in tests). */
  port: number;
  url: string;
  /** Stop accepting, let in-flight requests finish (up to `graceMs`), then close the rest. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Listens with production-safe timeouts. Keep-alive outlives typical load-balancer idle
 * timeouts (60 s) so the proxy, not us, closes idle connections: otherwise a request can
 * race our close and get a reset.
 */
export async function startWebServer(
  handler: RequestListener,
  { port, host = '0.0.0.0' }: { port: number; host?: string },
): Promise<WebServer> {
  const server = createServer(handler);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000;
  server.on('clientError', answerClientError);
  server.listen(port, host);
  await once(server, 'listening');
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    server,
    port: bound,
    url: `http://127.0.0.1:${bound}`,
    close(graceMs = 10_000) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        // From now on every response closes its connection, so clients move to a new one
        // (refused: we no longer listen) instead of reusing this one.
        server.on('request', (_req, res) => res.setHeader('connection', 'close'));
        // Stop listening without http.Server#close, which also closes idle keep-alive sockets
        // at once: a request a client has already put on such a socket would meet a reset.
        // Left open a moment, those sockets get their answer (with Connection: close).
        let sweeper: NodeJS.Timeout | undefined;
        const idleGrace = setTimeout(() => {
          // A keep-alive socket still idle now would stay open until the client drops it:
          // sweep idle sockets so close() ends with the last response.
          server.closeIdleConnections();
          sweeper = setInterval(() => server.closeIdleConnections(), 50);
          sweeper.unref();
        }, IDLE_SOCKET_GRACE_MS);
        idleGrace.unref();
        NetServer.prototype.close.call(server, () => {
          clearTimeout(timer);
          clearTimeout(idleGrace);
          clearInterval(sweeper);
          resolve();
        });
      });
      return closing;
    },
  };
}

const CLIENT_ERROR_MESSAGES: Record<number, string> = {
  400: 'Malformed HTTP request',
  408: 'Request timed out',
  413: 'Request too large',
  431: 'Request headers too large',
};

/** How long a socket answered with a parser error keeps reading what its client still sends. */
const LINGER_MS = 2_000;
/** Sockets answered with a parser error, lingering until their client closes or LINGER_MS ends. */
const answered = new WeakSet<Socket>();

/**
 * Requests Node's HTTP parser refuses (bad framing, CR/LF in a header, headers over 16 KiB)
 * never reach express; Node would answer them with an empty body. Answer with the `Error`
 * shape instead, as Node does otherwise: only when no response has started on the socket.
 *
 * Then linger, as nginx's `lingering_close` does: the client is often still sending the rest
 * of the refused request (a long URL, its body), and each further chunk makes the parser fail
 * again. Destroying the socket then would answer those bytes with a reset, which can discard
 * the error answer before the client has read it (the client sees EPIPE or ECONNRESET instead
 * of the 431). So the socket stays half-open, reading and dropping what arrives, until the
 * client closes its side or LINGER_MS passes.
 */
function answerClientError(
  err: NodeJS.ErrnoException & { rawPacket?: Buffer },
  socket: Socket,
): void {
  if (answered.has(socket)) return;
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const status =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 431
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
          ? 413
          : 400;
  const body = JSON.stringify({ error: status, message: CLIENT_ERROR_MESSAGES[status] });
  // A response to HEAD must carry no body. `rawPacket` is only the chunk the parser failed in:
  // when headers overflow, a long request line may span several chunks and the method is not
  // in it, and a body sent to a HEAD request would corrupt the client's stream. So an overflow
  // whose method we cannot read is answered with the status alone.
  const start = err.rawPacket?.subarray(0, 17).toString('latin1') ?? '';
  const isHead = start.startsWith('HEAD ');
  const methodReadable = /^[A-Za-z]{1,16} /.test(start);
  const withBody = !isHead && (status !== 431 || methodReadable);
  const length = withBody ? Buffer.byteLength(body) : 0;
  answered.add(socket);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n${withBody ? body : ''}`,
  );
}

/**
 * Runs `shutdown` once on SIGTERM or SIGINT, then exits. A second signal exits at once.
 * `shutdown` should stop the listeners (drain), then close pools and clients.
 */
export function onShutdownSignal(
  shutdown: (signal: string) => Promise<void>,
  log: (msg: string) => void = () => {},
): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log(`received ${signal}, draining`);
    shutdown(signal).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
