/**
 * The revocation publisher when Redis refuses the publish: the entry is kept, one per principal
 * (joined as resource servers join them), and published again until Redis takes it. Redis is a
 * stand-in whose PUBLISH fails while told to, so the failure and the recovery are exact.
 */
import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { captureLogs, eventually } from '@plant/test-kit';
import {
  parseRevocationEnvelope,
  REVOCATION_CHANNEL,
  type RevocationEntry,
} from '@plant/shared/token-service-client';
import { REPUBLISH_MAX_MS, RevocationPublisher } from '../src/revocation/revocation-publisher.js';

/** PUBLISH that fails while `refusing`, recording what it took. */
class StandInRedis extends EventEmitter {
  refusing = true;
  readonly taken: RevocationEntry[] = [];
  /** When each taken message says it was published. */
  readonly publishedAt: Array<number | undefined> = [];
  attempts = 0;

  publish(channel: string, message: string): Promise<number> {
    this.attempts += 1;
    if (this.refusing)
      return Promise.reject(
        new Error("NOPERM User default has no permissions to run the 'publish' command"),
      );
    const envelope = parseRevocationEnvelope(message);
    if (channel === REVOCATION_CHANNEL && envelope !== undefined) {
      this.taken.push(envelope.entry);
      this.publishedAt.push(envelope.publishedMs);
    }
    return Promise.resolve(1);
  }
}

const publishers: RevocationPublisher[] = [];
afterEach(() => {
  for (const p of publishers.splice(0)) p.stop();
  jest.useRealTimers();
});

function publisherOn(redis: StandInRedis) {
  const logs = captureLogs('publisher');
  const publisher = new RevocationPublisher(redis as unknown as Redis, logs.logger);
  publishers.push(publisher);
  return { publisher, logs };
}

const entry = (sub: string, version: number, deleted = false): RevocationEntry => ({
  tenant: 'acme',
  sub,
  version,
  deleted,
});

describe('a revocation publish that fails', () => {
  test('When Redis refuses a publish, then the entry is kept and published again, within the retry bound, once Redis takes it', async () => {
    // The publisher's clock is jest's: the bound is checked exactly, however loaded the machine.
    jest.useFakeTimers();
    const startedAt = Date.now();
    const redis = new StandInRedis();
    const { publisher, logs } = publisherOn(redis);
    const heard: RevocationEntry[] = [];
    publisher.onLocal((e) => heard.push(e));

    await publisher.publish(entry('sa-1', 2));
    // Long enough for the retries to back off to their longest delay.
    await jest.advanceTimersByTimeAsync(5 * REPUBLISH_MAX_MS);
    const refused = redis.attempts;
    redis.refusing = false;
    await jest.advanceTimersByTimeAsync(REPUBLISH_MAX_MS);

    expect(refused).toBeGreaterThanOrEqual(5);
    expect(heard).toEqual([entry('sa-1', 2)]);
    expect(redis.taken).toEqual([entry('sa-1', 2)]);
    // The republished message says when it went out (jest's clock), for the subscribers' delay metric.
    const [publishedAt] = redis.publishedAt;
    expect(publishedAt).toBeGreaterThan(startedAt);
    expect(publishedAt).toBeLessThanOrEqual(Date.now());
    expect(publisher.pending).toBe(0);
    expect(logs.text()).toContain('revocation publish failed; kept to publish again');
    expect(logs.text()).toContain('revocation events republished');
  });

  test('When several changes of one principal fail, then one entry is kept for it (the highest version, deleted if any was), and one per principal', async () => {
    const redis = new StandInRedis();
    const { publisher } = publisherOn(redis);

    await publisher.publish(entry('sa-1', 2));
    await publisher.publish(entry('sa-1', 4, true));
    await publisher.publish(entry('sa-1', 3));
    await publisher.publish(entry('sa-2', 2));
    const kept = publisher.pending;
    redis.refusing = false;
    await eventually(() => publisher.pending === 0, 'everything is republished', 5000);

    expect(kept).toBe(2);
    expect(redis.taken.sort((a, b) => a.sub.localeCompare(b.sub))).toEqual([
      entry('sa-1', 4, true),
      entry('sa-2', 2),
    ]);
  });

  test('When a later publish of the same principal goes through, then the kept entry it covers is done, and others kept are sent at once', async () => {
    jest.useFakeTimers();
    const redis = new StandInRedis();
    const { publisher } = publisherOn(redis);
    await publisher.publish(entry('sa-1', 2));
    await publisher.publish(entry('sa-2', 2));

    redis.refusing = false;
    await publisher.publish(entry('sa-1', 3));
    // At once: before the first backed-off retry would have come.
    await jest.advanceTimersByTimeAsync(1);

    expect(publisher.pending).toBe(0);

    expect(redis.taken).toEqual([entry('sa-1', 3), entry('sa-2', 2)]);
  });

  test('When the publisher is stopped, then it stops retrying', async () => {
    jest.useFakeTimers();
    const redis = new StandInRedis();
    const { publisher } = publisherOn(redis);
    await publisher.publish(entry('sa-1', 2));

    publisher.stop();
    const attempts = redis.attempts;
    await jest.advanceTimersByTimeAsync(10 * REPUBLISH_MAX_MS);

    expect(redis.attempts).toBe(attempts);
    expect(publisher.pending).toBe(1);
  });

  test('When Redis is ready again, then the kept entries are published at once', async () => {
    const redis = new StandInRedis();
    const { publisher } = publisherOn(redis);
    await publisher.publish(entry('sa-1', 2));
    // Let the retries back off to their longest delay.
    await eventually(() => redis.attempts >= 5, 'the retries back off', 5000);

    redis.refusing = false;
    const attempts = redis.attempts;
    redis.emit('ready');
    // A timer armed after the publisher's: it fires after an immediate republish, and a second or
    // so before the backed-off one, however loaded the machine (no wall-clock bound to miss).
    await new Promise((resolve) => setTimeout(resolve, 5));

    expect(redis.taken).toEqual([entry('sa-1', 2)]);
    expect(redis.attempts).toBe(attempts + 1);
  });
});
