import { once } from 'node:events';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@plant/shared/logging';

/**
 * Below Linux's ephemeral range (32768–60999): a port the kernel hands out for outgoing
 * connections (a Postgres or Redis client of a test running alongside) can be taken between
 * our check and the service's bind, which failed CI once with EADDRINUSE.
 */
const PORT_RANGE = { from: 20_000, to: 32_000 };

/**
 * Each jest worker (JEST_WORKER_ID 1, 2 …) draws from its own slice, and within it walks
 * forward: a port is chosen long before its process binds it (a platform's ports are all
 * chosen before any service starts), and two workers probing the same random port in that
 * window once both got it and one service failed with EADDRINUSE (CI, twice). Walking means
 * a worker hands a port out again only after its slice wraps (1,500 ports); the probe still
 * skips any port some other program holds.
 */
const SLICES = 8;
const SLICE = Math.floor((PORT_RANGE.to - PORT_RANGE.from) / SLICES);
const sliceStart = PORT_RANGE.from + (Number(process.env.JEST_WORKER_ID ?? 0) % SLICES) * SLICE;
let cursor = Math.floor(Math.random() * SLICE);

async function isFree(port: number): Promise<boolean> {
  const probe = createServer();
  probe.listen(port, '127.0.0.1');
  // `once(…, 'listening')` rejects when 'error' comes instead: taken.
  const outcome = await once(probe, 'listening').then(
    () => true,
    () => false,
  );
  if (outcome) await new Promise<void>((resolve) => probe.close(() => resolve()));
  return outcome;
}

/** A free TCP port on 127.0.0.1 (closed again at once), for a process told its port before it starts. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < SLICE; attempt++) {
    const port = sliceStart + (cursor++ % SLICE);
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port in ${sliceStart}–${sliceStart + SLICE - 1}`);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls until `probe` is true; throws naming `what` after `timeoutMs`. For states reached
 * asynchronously (a published event, a reconnect): a fixed sleep would be flaky or slow.
 */
export async function eventually(
  probe: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

export interface CapturedLogger {
  /** A real pino logger, with the shared redaction. */
  logger: Logger;
  /** Every line logged so far, one JSON text each. */
  lines: string[];
  /** Every line logged so far, as logged. */
  text(): string;
}

/** A service logger whose lines the test reads back (to assert what is logged, and what never is). */
export function captureLogs(name: string, level = 'debug'): CapturedLogger {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return {
    logger: createLogger({ name, level, destination }),
    lines,
    text: () => lines.map((line) => `${line}\n`).join(''),
  };
}
