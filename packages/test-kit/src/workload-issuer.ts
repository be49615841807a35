/**
 * A workload's own platform as an OIDC issuer (a Kubernetes cluster's service-account issuer,
 * a CI provider): discovery at `{issuer}/.well-known/openid-configuration`, its JWKS, and
 * tokens about a workload (`sub`) for an audience, on 127.0.0.1 and an ephemeral port. The
 * token service's federation is tested against it, never against the internet; `setMode` makes
 * it hostile (a huge or slow JWKS, redirects, a discovery document naming another issuer).
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signJws, withOverrides } from './jwt-signing.js';

/** How the issuer answers: `normal`, or one way of being hostile or broken. */
export type WorkloadIssuerMode =
  | 'normal'
  /** JWKS of 10 MiB, streamed. */
  | 'huge-jwks'
  /** JWKS answers nothing for 20 s. */
  | 'slow-jwks'
  /** JWKS headers at once, then a byte every 200 ms. */
  | 'trickle-jwks'
  /** JWKS with 500 keys. */
  | 'many-keys'
  /** Discovery redirects (302) to the JWKS. */
  | 'redirect'
  /** Discovery names another issuer. */
  | 'wrong-issuer'
  /** Every document answers 503. */
  | 'down';

export interface WorkloadTokenOptions {
  subject: string;
  audience: string | string[];
  /** Over `{iss, sub, aud, iat, exp: now + 600, jti}`; `undefined` removes one. */
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
}

export interface WorkloadIssuer {
  /** The issuer identifier: `http://127.0.0.1:<port>` (or under `path`). */
  issuer: string;
  /** The same issuer with `localhost` for its host: a name that resolves to a loopback address. */
  issuerByName: string;
  /** A token of this platform about a workload, signed with its current key. */
  mint(options: WorkloadTokenOptions): string;
  /** The same, signed by a key the JWKS does not publish (with a kid of its own). */
  mintWithUnpublishedKey(options: WorkloadTokenOptions): string;
  /** A new signing key, published at once; later tokens use it. Returns its kid. */
  rotateKey(): string;
  /** Serves `jwk` as it is in the JWKS too, after the signing keys (a hostile key, padding): what a compromised or broken issuer could publish. */
  publishJwk(jwk: Record<string, unknown>): void;
  setMode(mode: WorkloadIssuerMode): void;
  /** Requests per document so far. */
  requests(): { discovery: number; jwks: number };
  close(): Promise<void>;
}

interface Key {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

const newKey = (): Key => ({
  kid: randomUUID(),
  ...generateKeyPairSync('ec', { namedCurve: 'P-256' }),
});

function streamHuge(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let sent = 0;
  const write = () => {
    while (sent < 10 * 1024 * 1024) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', write);
    }
    res.end('{"keys":[]}');
  };
  res.write('{"pad":"');
  write();
}

export async function startWorkloadIssuer({
  path = '',
}: {
  path?: string;
} = {}): Promise<WorkloadIssuer> {
  const keys: Key[] = [newKey()];
  const published: Array<Record<string, unknown>> = [];
  const unpublished = newKey();
  const counts = { discovery: 0, jwks: 0 };
  let mode: WorkloadIssuerMode = 'normal';
  let issuer = '';
  const timers = new Set<NodeJS.Timeout>();

  const jwks = (count = keys.length) => ({
    keys: [
      ...Array.from({ length: count }, (_, i) => keys[i % keys.length]!).map((k, i) => ({
        ...k.publicKey.export({ format: 'jwk' }),
        kid: i < keys.length ? k.kid : `${k.kid}-${i}`,
        use: 'sig',
        alg: 'ES256',
      })),
      ...published,
    ],
  });
  type Json = (status: number, body: unknown, headers?: Record<string, string>) => void;
  const serveDiscovery = (json: Json) => {
    if (mode === 'redirect') return json(302, {}, { location: `${issuer}/jwks` });
    json(200, {
      issuer: mode === 'wrong-issuer' ? `${issuer}/other` : issuer,
      jwks_uri: `${issuer}/jwks`,
      id_token_signing_alg_values_supported: ['ES256'],
    });
  };
  /** The JWKS as the mode has it: whole, huge, late, trickling or with many keys. */
  const serveJwks = (res: ServerResponse, json: Json) => {
    if (mode === 'huge-jwks') return streamHuge(res);
    if (mode === 'slow-jwks') {
      const timer = setTimeout(() => json(200, jwks()), 20_000);
      timers.add(timer);
      return;
    }
    if (mode === 'trickle-jwks') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 200);
      timers.add(timer);
      res.on('close', () => clearInterval(timer));
      return;
    }
    json(200, jwks(mode === 'many-keys' ? 500 : keys.length));
  };
  const server = createServer((req, res) => {
    const json: Json = (status, body, headers = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const url = req.url ?? '';
    if (url === `${path}/.well-known/openid-configuration`) counts.discovery += 1;
    if (url === `${path}/jwks`) counts.jwks += 1;
    if (mode === 'down') return json(503, { error: 'unavailable' });
    if (url === `${path}/.well-known/openid-configuration`) return serveDiscovery(json);
    if (url === `${path}/jwks`) return serveJwks(res, json);
    json(404, { error: 'not found' });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  issuer = `http://127.0.0.1:${port}${path}`;

  const payloadOf = ({ subject, audience, claims }: WorkloadTokenOptions) => {
    const now = Math.floor(Date.now() / 1000);
    return withOverrides(
      {
        iss: issuer,
        sub: subject,
        aud: audience,
        iat: now,
        nbf: now,
        exp: now + 600,
        jti: randomUUID(),
      },
      claims,
    );
  };
  const sign = (options: WorkloadTokenOptions, key: Key) =>
    signJws(
      withOverrides({ alg: 'ES256', typ: 'JWT', kid: key.kid }, options.header),
      payloadOf(options),
      key.privateKey,
    );

  return {
    issuer,
    issuerByName: `http://localhost:${port}${path}`,
    mint: (options) => sign(options, keys[keys.length - 1]!),
    mintWithUnpublishedKey: (options) => sign(options, unpublished),
    rotateKey() {
      const key = newKey();
      keys.push(key);
      return key.kid;
    },
    publishJwk(jwk) {
      published.push(jwk);
    },
    setMode(next) {
      mode = next;
    },
    requests: () => ({ ...counts }),
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
