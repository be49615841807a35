import { describe, expect, test } from '@jest/globals';
import { TimeoutError, withTimeout } from '../src/util/index.js';

describe('withTimeout', () => {
  test('When the promise settles in time, then its value or its error comes through', async () => {
    await expect(withTimeout(Promise.resolve(42), 1000, 'answer')).resolves.toBe(42);
    await expect(withTimeout(Promise.reject(new Error('refused')), 1000, 'answer')).rejects.toThrow('refused');
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
