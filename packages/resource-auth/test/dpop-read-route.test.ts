/**
 * A read route (`readHandler`) reads while a DPoP proof's jti is being claimed: what it read is
 * sent only once the claim succeeded. Hostile cases: replays (one replica, two, a burst), a
 * forged proof (no claim written, no read), a replay store that is down or never answers (503,
 * nothing read is sent), a method other than GET (claims before reading), a read that fails.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import request from 'supertest';
import { TEST_REDIS_URL } from '@plant/test-kit';
import { createRedisReplayStore } from '../src/index.js';
import {
  dpopKey,
  invalidProof,
  outcome,
  READ,
  useDpopWorld,
  type DpopServer,
} from './dpop-support.js';

const world = useDpopWorld();
let replicas: [DpopServer, DpopServer];

beforeAll(async () => {
  replicas = [await world.server(), await world.server()];
});

function read(
  server: DpopServer,
  token: string,
  proof: string,
  { method = 'get', failRead = false }: { method?: 'get' | 'post'; failRead?: boolean } = {},
) {
  const req = request(server.url)
    [method]('/v1/read')
    .set('authorization', `DPoP ${token}`)
    .set('dpop', proof);
  return failRead ? req.set('x-fail-read', '1') : req;
}

const replayed = invalidProof('DPoP proof has already been used');

describe('DPoP read route: the claim decides what is sent', () => {
  test('When a proof is used once, then the read is sent; sent again to either replica, then 401 invalid_dpop_proof and nothing read', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const proof = key.proof({ htm: 'GET', htu: READ, token });
    const first = await read(replicas[0], token, proof);
    expect({ status: first.status, body: first.body }).toEqual({
      status: 200,
      body: { sub: expect.any(String), jkt: key.thumbprint },
    });
    expect(outcome(await read(replicas[0], token, proof))).toEqual(replayed);
    expect(outcome(await read(replicas[1], token, proof))).toEqual(replayed);
  });

  test('When one proof is sent 40 times at once across two replicas, then exactly one read is sent', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const proof = key.proof({ htm: 'GET', htu: READ, token });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => read(replicas[i % 2]!, token, proof)),
    );
    expect(answers.filter((res) => res.status === 200).length).toBe(1);
    expect(
      answers.filter(
        (res) => res.status === 401 && res.body.message === 'DPoP proof has already been used',
      ).length,
    ).toBe(39);
  });

  test('When 20 fresh proofs and 5 sends of a used one arrive at once at one replica (one pipeline), then each gets its own answer', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const used = key.proof({ htm: 'GET', htu: READ, token });
    expect((await read(replicas[0], token, used)).status).toBe(200);
    const proofs = Array.from({ length: 25 }, (_, i) =>
      i % 5 === 0 ? used : key.proof({ htm: 'GET', htu: READ, token }),
    );
    const statuses = await Promise.all(
      proofs.map((proof) => read(replicas[0], token, proof).then((res) => res.status)),
    );
    expect(statuses).toEqual(proofs.map((proof) => (proof === used ? 401 : 200)));
  });

  test("When the proof carries the owner's key but another key signed it, then 401, nothing is read and its jti is not claimed", async () => {
    const owner = dpopKey();
    const thief = dpopKey();
    const token = world.boundToken(owner);
    const forged = thief.proof({
      htm: 'GET',
      htu: READ,
      token,
      header: { jwk: owner.jwk },
      jti: 'forged-jti',
    });
    const readsBefore = replicas[0].reads();
    expect(outcome(await read(replicas[0], token, forged))).toEqual(
      invalidProof('DPoP proof signature is invalid'),
    );
    expect(replicas[0].reads()).toBe(readsBefore);
    // The owner's own proof with that jti is still accepted: the forged one wrote nothing.
    expect(
      (
        await read(
          replicas[0],
          token,
          owner.proof({ htm: 'GET', htu: READ, token, jti: 'forged-jti' }),
        )
      ).status,
    ).toBe(200);
  });

  test('When the read fails and the proof is a replay, then the answer is the replay 401; with a fresh proof, the read error', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const proof = key.proof({ htm: 'GET', htu: READ, token });
    expect((await read(replicas[0], token, proof)).status).toBe(200);
    expect(outcome(await read(replicas[0], token, proof, { failRead: true }))).toEqual(replayed);
    const fresh = await read(replicas[0], token, key.proof({ htm: 'GET', htu: READ, token }), {
      failRead: true,
    });
    expect({ status: fresh.status, body: fresh.body }).toEqual({
      status: 409,
      body: { error: 409, message: 'The read failed' },
    });
  });

  test('When the route is called with POST, then the proof is claimed before the read: a replayed POST reads nothing', async () => {
    const key = dpopKey();
    const token = world.boundToken(key);
    const proof = key.proof({ htm: 'POST', htu: READ, token });
    expect((await read(replicas[0], token, proof, { method: 'post' })).status).toBe(200);
    const readsBefore = replicas[0].reads();
    expect(outcome(await read(replicas[0], token, proof, { method: 'post' }))).toEqual(replayed);
    expect(replicas[0].reads()).toBe(readsBefore);
  });
});

describe('DPoP read route: the replay store unable to answer (fail closed)', () => {
  const unavailable = {
    status: 503,
    body: { error: 503, message: 'DPoP proof replay check is temporarily unavailable' },
  };
  let silent: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    // A "Redis" that accepts connections and never answers: only the claim's deadline ends the wait.
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  test('When Redis cannot be reached, then 503 in the Error shape and nothing read is sent', async () => {
    const down = await world.server({ redis: 'redis://127.0.0.1:1' });
    const key = dpopKey();
    const token = world.boundToken(key);
    const res = await read(down, token, key.proof({ htm: 'GET', htu: READ, token }));
    expect({ status: res.status, body: res.body }).toEqual(unavailable);
  });

  test('When Redis accepts the connection but never answers, then the claim times out: 503, and the next request is decided again', async () => {
    const { port } = silent.address() as { port: number };
    const server = await world.server({
      replay: createRedisReplayStore({ redis: `redis://127.0.0.1:${port}`, timeoutMs: 200 }),
    });
    const key = dpopKey();
    const token = world.boundToken(key);
    const answers = await Promise.all([
      read(server, token, key.proof({ htm: 'GET', htu: READ, token })),
      read(server, token, key.proof({ htm: 'GET', htu: READ, token })),
    ]);
    expect(answers.map((res) => ({ status: res.status, body: res.body }))).toEqual([
      unavailable,
      unavailable,
    ]);
    expect((await read(server, token, key.proof({ htm: 'GET', htu: READ, token }))).status).toBe(
      503,
    );
  });

  test('When a claim succeeds, then its key is in Redis under the hash of thumbprint and jti', async () => {
    const prefix = `read-${process.pid}-${Date.now()}:`;
    const server = await world.server({
      replay: createRedisReplayStore({ redis: TEST_REDIS_URL, keyPrefix: prefix }),
    });
    const key = dpopKey();
    const token = world.boundToken(key);
    expect(
      (await read(server, token, key.proof({ htm: 'GET', htu: READ, token, jti: 'read-jti' })))
        .status,
    ).toBe(200);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      expect(
        await redis.exists(
          `${prefix}${createHash('sha256').update(`${key.thumbprint}:read-jti`).digest('base64url')}`,
        ),
      ).toBe(1);
    } finally {
      redis.disconnect();
    }
  });
});
