/**
 * The token service's subscription to change events across reconnects, on a redis-server of the
 * file's own: it subscribes every channel again by itself, and a SUBSCRIBE that Redis refuses or
 * that a close cuts short is handled, never an unhandled rejection (which ends a Node process;
 * under jest it fails whatever runs at that moment).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { REVOCATION_CHANNEL } from '@plant/shared/token-service-client';
import { eventually, startRedisServer, type RedisServer } from '@plant/test-kit';
import { CLIENT_AUTH_FAILURE_CHANNEL } from '../src/client-auth/client-auth-failure-repository.js';
import { KEY_ROTATION_CHANNEL } from '../src/realms/realm-naming.js';
import { startHarness, type Harness } from './helpers/harness.js';

let redis: RedisServer;
let h: Harness;

beforeAll(async () => {
  redis = await startRedisServer();
  h = await startHarness({ REDIS_URL: redis.url });
});

afterAll(async () => {
  await h?.close();
  await redis?.stop();
});

/** How many connections are subscribed to each channel. */
async function subscribed(): Promise<Record<string, number>> {
  const answer = (
    await redis.cli(
      'PUBSUB',
      'NUMSUB',
      REVOCATION_CHANNEL,
      KEY_ROTATION_CHANNEL,
      CLIENT_AUTH_FAILURE_CHANNEL,
    )
  ).split('\n');
  return { revocations: Number(answer[1]), keys: Number(answer[3]), failures: Number(answer[5]) };
}

/** SUBSCRIBEs refused so far: the counts of the ACL log's channel entries. */
async function refusedSubscribes(): Promise<number> {
  const log = (await redis.cli('ACL', 'LOG')).split('\n');
  let refused = 0;
  for (let i = 0; i < log.length; i += 1)
    if (log[i] === 'count' && log.slice(i, i + 4).includes('channel'))
      refused += Number(log[i + 1]);
  return refused;
}

describe('the change subscription across reconnects', () => {
  test('When Redis refuses the SUBSCRIBE after a reconnect, then nothing is left unhandled, and the next connection subscribes every channel again', async () => {
    // Both the token service's subscriber and introspection's revocation subscriber.
    await eventually(async () => (await subscribed()).keys === 1, 'the service is subscribed');

    // Channels forbidden: Redis drops the subscribed connections, and their SUBSCRIBE on
    // reconnecting is refused (NOPERM), which the ACL log records.
    expect(await redis.cli('ACL', 'SETUSER', 'default', 'resetchannels')).toBe('OK');
    await redis.cli('CLIENT', 'KILL', 'TYPE', 'pubsub');
    // Three at least: the service's two SUBSCRIBEs (with the failure hints' channel apart) and
    // introspection's one.
    await eventually(async () => (await refusedSubscribes()) >= 3, 'the SUBSCRIBEs are refused');

    expect(await redis.cli('ACL', 'SETUSER', 'default', 'allchannels')).toBe('OK');
    // The refused connection stays up unsubscribed: a new one subscribes again.
    await redis.cli('CLIENT', 'KILL', 'TYPE', 'normal');

    await eventually(async () => {
      const now = await subscribed();
      return now.keys === 1 && now.failures === 1 && now.revocations === 2;
    }, 'every channel is subscribed again');
  });
});
