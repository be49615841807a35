import { describe, expect, test } from '@jest/globals';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { TimeoutError, withTimeout } from '../src/util/index.js';

describe('withTimeout', () => {
  test('When the promise settles in time, then its value or its error comes through', async () => {
    await expect(withTimeout(Promise.resolve(42), 1000, 'answer')).resolves.toBe(42);
    await expect(withTimeout(Promise.reject(new Error('refused')), 1000, 'answer')).rejects.toThrow(
      'refused',
    );
  });

  test('When the promise takes longer, then it rejects with a TimeoutError naming what was awaited', async () => {
    const never = new Promise<never>(() => undefined);
    const started = Date.now();

    const outcome = withTimeout(never, 50, 'PING');

    await expect(outcome).rejects.toBeInstanceOf(TimeoutError);
    await expect(outcome).rejects.toThrow('PING timed out');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  test('When the promise rejects after the timeout, then nothing else happens (no unhandled rejection)', async () => {
    let reject!: (err: Error) => void;
    const late = new Promise<never>((_, r) => (reject = r));

    await expect(withTimeout(late, 10, 'late')).rejects.toThrow('late timed out');
    reject(new Error('too late'));
    await new Promise((resolve) => setImmediate(resolve));
  });
});

describe('withTimeout on a stalled process', () => {
  test('When the answer arrives in time but the process stalls past the deadline before reading it, then the answer wins over the late timer', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const [peer] = (
      await Promise.all([once(server, 'connection'), once(client, 'connect')])
    )[0] as [Socket];
    try {
      const answered = new Promise<string>((resolve) =>
        client.once('data', (chunk: Buffer) => resolve(chunk.toString())),
      );
      const outcome = withTimeout(answered, 50, 'pong');
      // Written to the kernel at once: the answer waits in the client's socket, unread, while
      // the process is stalled past the deadline.
      peer.write('pong');
      stall(200);

      await expect(outcome).resolves.toBe('pong');
    } finally {
      client.destroy();
      peer.destroy();
      server.close();
    }
  });
});

/** Blocks the event loop for `ms`: nothing runs, as when the machine gives the process no CPU. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}
