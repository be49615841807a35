/**
 * A Shared Signals receiver as an outsider would write one from the specifications alone: it
 * knows a transmitter's issuer, fetches the issuer's JWKS (from the SSF configuration's
 * `jwks_uri`), and checks each Security Event Token (RFC 8417) itself with node:crypto: the
 * `typ: secevent+jwt` header, the signature by a published key, `iss`, `aud`, `jti`, `iat`, one
 * event, a `sub_id`. Push (RFC 8935): an HTTP endpoint on loopback that answers 202 for a valid
 * SET and 400 `{err, description}` for another, and can be taken down and brought back on the
 * same port. A `HeldAnswers` gate makes receivers slow on the test's command: their answers wait
 * until it is released, and it counts the requests open at once over every receiver that shares
 * it. Poll (RFC 8936): `pollSignals` verifies what a poll answers.
 */
import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface VerifiedSet {
  jti: string;
  iat: number;
  iss: string;
  aud: string | string[];
  sub_id: Record<string, unknown>;
  /** The one event type and its member. */
  type: string;
  event: Record<string, unknown>;
  header: Record<string, unknown>;
  raw: string;
}

export class SetRejected extends Error {
  constructor(
    readonly err: string,
    description: string,
  ) {
    super(description);
  }
}

export interface SetExpectations {
  issuer: string;
  jwksUri: string;
  /** The receiver's own name in `aud` (its client_id). */
  audience: string;
}

function part(segment: string | undefined): Record<string, unknown> {
  if (segment === undefined) throw new SetRejected('invalid_request', 'not a JWS');
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
  } catch {
    throw new SetRejected('invalid_request', 'a segment is not base64url JSON');
  }
}

/** The issuer's keys, fetched again for a kid it does not know yet (a rotation). */
export class JwksCache {
  #keys = new Map<string, { alg: string; key: KeyObject }>();
  constructor(private readonly jwksUri: string) {}

  async key(kid: string): Promise<{ alg: string; key: KeyObject } | undefined> {
    if (!this.#keys.has(kid)) await this.#refresh();
    return this.#keys.get(kid);
  }

  async #refresh(): Promise<void> {
    const res = await fetch(this.jwksUri);
    if (!res.ok) throw new SetRejected('invalid_key', `JWKS answered ${res.status}`);
    const { keys } = (await res.json()) as { keys: Record<string, unknown>[] };
    this.#keys = new Map(
      keys.map((jwk) => [
        String(jwk.kid),
        { alg: String(jwk.alg), key: createPublicKey({ key: jwk as never, format: 'jwk' }) },
      ]),
    );
  }
}

const ALGORITHMS: Record<string, { hash: string; ec: boolean }> = {
  RS256: { hash: 'sha256', ec: false },
  ES256: { hash: 'sha256', ec: true },
};

/** Checks a SET as RFC 8417, SSF 1.0 §4 and the CAEP interoperability profile describe it; throws `SetRejected` with RFC 8935's error code. */
export async function verifySet(
  token: string,
  expect: SetExpectations,
  keys = new JwksCache(expect.jwksUri),
): Promise<VerifiedSet> {
  const [h, p, s, extra] = token.split('.');
  if (extra !== undefined || s === undefined) throw new SetRejected('invalid_request', 'not a JWS');
  const header = part(h);
  const payload = part(p);
  if (header.typ !== 'secevent+jwt')
    throw new SetRejected('invalid_request', `typ is ${String(header.typ)}, not secevent+jwt`);
  const alg = ALGORITHMS[String(header.alg)];
  if (alg === undefined) throw new SetRejected('invalid_key', `alg ${String(header.alg)}`);
  const known = await keys.key(String(header.kid));
  if (known === undefined || known.alg !== header.alg)
    throw new SetRejected(
      'invalid_key',
      `no published key ${String(header.kid)} for ${String(header.alg)}`,
    );
  const signed = verifySignature(
    alg.hash,
    Buffer.from(`${h}.${p}`),
    alg.ec ? { key: known.key, dsaEncoding: 'ieee-p1363' } : known.key,
    Buffer.from(s, 'base64url'),
  );
  if (!signed) throw new SetRejected('invalid_key', 'the signature does not verify');
  if (payload.iss !== expect.issuer) throw new SetRejected('invalid_issuer', String(payload.iss));
  const aud = payload.aud as string | string[];
  if (!(Array.isArray(aud) ? aud : [aud]).includes(expect.audience))
    throw new SetRejected('invalid_audience', String(aud));
  if (typeof payload.jti !== 'string' || typeof payload.iat !== 'number')
    throw new SetRejected('invalid_request', 'jti and iat are required');
  if ('exp' in payload || 'sub' in payload)
    throw new SetRejected('invalid_request', 'a SET has no exp, and its subject is sub_id');
  const events = payload.events as Record<string, Record<string, unknown>> | undefined;
  const types = Object.keys(events ?? {});
  if (types.length !== 1) throw new SetRejected('invalid_request', 'one event per SET');
  const subId = payload.sub_id as Record<string, unknown> | undefined;
  if (typeof subId?.format !== 'string')
    throw new SetRejected('invalid_request', 'sub_id is required');
  return {
    jti: payload.jti,
    iat: payload.iat,
    iss: payload.iss as string,
    aud,
    sub_id: subId,
    type: types[0]!,
    event: events![types[0]!]!,
    header,
    raw: token,
  };
}

/**
 * A slow receiver's answers, held until the test releases them: `open` counts the pushes waiting
 * for their answer now (over every receiver given this gate; a push its transmitter gave up on
 * leaves the count), `peak` the most ever open at once.
 */
export class HeldAnswers {
  open = 0;
  peak = 0;
  #released = false;
  #holding: (() => void)[] = [];
  #watchers: { probe: () => boolean; resolve: () => void }[] = [];

  /** Resolves once `n` pushes are open at once. */
  openAtLeast(n: number): Promise<void> {
    return this.#until(() => this.open >= n);
  }

  /** Lets every held answer go, and answers every later push at once. */
  release(): void {
    this.#released = true;
    for (const answer of this.#holding.splice(0)) answer();
  }

  /** For the receiver: a push came; `answer` runs when released. The returned function ends it. */
  hold(answer: () => void): () => void {
    this.open += 1;
    this.peak = Math.max(this.peak, this.open);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.open -= 1;
      this.#settle();
    };
    this.#settle();
    if (this.#released) answer();
    else this.#holding.push(answer);
    return end;
  }

  #until(probe: () => boolean): Promise<void> {
    if (probe()) return Promise.resolve();
    return new Promise((resolve) => this.#watchers.push({ probe, resolve }));
  }

  #settle(): void {
    for (const watcher of this.#watchers.slice())
      if (watcher.probe()) {
        this.#watchers.splice(this.#watchers.indexOf(watcher), 1);
        watcher.resolve();
      }
  }
}

export interface SignalReceiver {
  /** The push endpoint (`http://127.0.0.1:<port>/events`). */
  url: string;
  /** Every valid SET received, in arrival order, a redelivery (same jti) once. */
  received: VerifiedSet[];
  /** SETs refused, with why. */
  refused: { err: string; description: string }[];
  /** Pushes answered, valid or not (redeliveries included). */
  deliveries: number;
  /** Resolves once `count` distinct SETs arrived. */
  waitFor(count: number): Promise<VerifiedSet[]>;
  /** Stops listening (connections refused) until `up`. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A push receiver (RFC 8935) on loopback; with `authorization`, a push without that exact header
 * is refused 401; with `held`, every answer waits until that gate is released.
 */
export async function startSignalReceiver(
  expect: SetExpectations,
  options: { authorization?: string; host?: string; held?: HeldAnswers } = {},
): Promise<SignalReceiver> {
  const keys = new JwksCache(expect.jwksUri);
  const host = options.host ?? '127.0.0.1';
  const seen = new Set<string>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;
  const receiver: SignalReceiver = {
    url: '',
    received: [],
    refused: [],
    deliveries: 0,
    waitFor(count) {
      if (receiver.received.length >= count) return Promise.resolve(receiver.received.slice());
      return new Promise((resolve) =>
        waiters.push({ count, resolve: () => resolve(receiver.received.slice()) }),
      );
    },
    down: () => stop(),
    up: () => listen(),
    close: () => stop(),
  };
  const settle = () => {
    for (const waiter of waiters.slice())
      if (receiver.received.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
  };
  const handle: Parameters<typeof createServer>[1] = (req, res) => {
    const chunks: Buffer[] = [];
    let release = (answer: () => void) => answer();
    if (options.held !== undefined) {
      const held = options.held;
      let answer: () => void = () => undefined;
      let ready = false;
      const end = held.hold(() => {
        ready = true;
        answer();
      });
      res.on('close', end);
      release = (next) => {
        answer = next;
        if (ready) next();
      };
    }
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.deliveries += 1;
      const reply = (status: number, body?: unknown) =>
        release(() => {
          res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
          res.end(body === undefined ? undefined : JSON.stringify(body));
        });
      if (req.method !== 'POST' || req.url !== '/events') return reply(404);
      if (
        options.authorization !== undefined &&
        req.headers.authorization !== options.authorization
      )
        return reply(401, { err: 'authentication_failed', description: 'wrong Authorization' });
      if (req.headers['content-type'] !== 'application/secevent+jwt')
        return reply(400, { err: 'invalid_request', description: 'content type' });
      verifySet(Buffer.concat(chunks).toString('utf8'), expect, keys).then(
        (set) => {
          if (!seen.has(set.jti)) {
            seen.add(set.jti);
            receiver.received.push(set);
            settle();
          }
          reply(202);
        },
        (err: Error) => {
          const refusal = {
            err: err instanceof SetRejected ? err.err : 'invalid_request',
            description: err.message,
          };
          receiver.refused.push(refusal);
          reply(400, refusal);
        },
      );
    });
  };
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer(handle);
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      server.once('error', reject);
      server.listen(port, host, () => {
        port = (server.address() as AddressInfo).port;
        receiver.url = `http://${host}:${port}/events`;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  await listen();
  return receiver;
}

/** One RFC 8936 poll, its SETs verified; `ack` acknowledges earlier ones. */
export async function pollSignals(
  pollUrl: string,
  accessToken: string,
  expect: SetExpectations,
  request: { maxEvents?: number; returnImmediately?: boolean; ack?: string[] } = {},
): Promise<{ sets: VerifiedSet[]; moreAvailable: boolean }> {
  const res = await fetch(pollUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  if (res.status !== 200) throw new Error(`poll answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { sets: Record<string, string>; moreAvailable?: boolean };
  const keys = new JwksCache(expect.jwksUri);
  const sets: VerifiedSet[] = [];
  for (const [jti, token] of Object.entries(body.sets)) {
    const set = await verifySet(token, expect, keys);
    if (set.jti !== jti) throw new Error(`poll keyed SET ${set.jti} as ${jti}`);
    sets.push(set);
  }
  return { sets, moreAvailable: body.moreAvailable === true };
}
