/**
 * A stand-in for the token service in component tests: it mints RFC 9068 access tokens
 * for any realm it knows, with any claim or header overridden, and serves each realm's
 * JWKS at `GET /internal/v1/realms/:tenant/jwks` on an ephemeral local port (404 for a
 * realm it does not know), exactly where resource servers fetch it from the real one.
 *
 * It also answers the realm list (`GET /internal/v1/realms`, every realm it knows) and the
 * revocation routes resource servers use, from entries the test sets with `revoke`
 * (test-issuer-revocations.ts). It does not publish on Redis.
 *
 * Every realm gets its own key (RSA for RS256 unless ES256 is asked for), so a token of realm
 * A re-labelled as realm B fails the signature check, as it would against the token service.
 * The end-to-end tests use the real token service instead.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { b64url, withOverrides } from './jwt-signing.js';
import {
  newIssuerKey,
  publicJwkOf,
  signIssuerJws,
  type IssuerAlgorithm,
  type IssuerKey,
} from './test-issuer-keys.js';
import { IssuerRevocations } from './test-issuer-revocations.js';

export type { IssuerAlgorithm } from './test-issuer-keys.js';

export interface TestIssuerOptions {
  /** Issuers are `{authUrl}/realms/<tenant>`; give the resource server the same value. */
  authUrl?: string;
  /** Default `aud` of minted tokens. */
  audience?: string;
}

export interface MintOptions {
  tenant: string;
  /** Claims merged over the defaults; a value of `undefined` removes the claim. */
  claims?: Record<string, unknown>;
  /** Header parameters merged over `{alg: <the key's>, typ: 'at+jwt', kid}`; `undefined` removes one. */
  header?: Record<string, unknown>;
  /** Sign with this key of the realm (default: its newest). */
  kid?: string;
}

export interface TestIssuer {
  /** Base URL of the JWKS server: pass as `jwksBaseUrl` / `TOKEN_SERVICE_INTERNAL_URL`. */
  url: string;
  authUrl: string;
  audience: string;
  /** Makes a realm known (with one fresh key for `alg`, default RS256); returns the key id. Idempotent per tenant. */
  addRealm(tenant: string, alg?: IssuerAlgorithm): string;
  /** Forgets a realm (as if deleted): its JWKS answers 404 and the realm list leaves it out. */
  removeRealm(tenant: string): void;
  /** Adds a new key to a realm (key rotation, or an algorithm switch with `alg`) and returns its kid; later tokens use it. */
  addKey(tenant: string, alg?: IssuerAlgorithm): string;
  /** Serves `jwk` as it is in the realm's JWKS too, after its keys (a key of another curve, a malformed one). */
  publishJwk(tenant: string, jwk: Record<string, unknown>): void;
  /** `{AUTH_URL}/realms/<tenant>`. */
  issuerOf(tenant: string): string;
  /** A correctly signed access token (defaults: an Edit service account, 300 s lifetime, ver 1). */
  mint(options: MintOptions): string;
  /** The same claims with `alg: none` and an empty signature. */
  mintAlgNone(options: MintOptions): string;
  /** HS256 with the realm's PUBLIC key (PEM) as the HMAC secret: the classic key-confusion attack. */
  mintHs256WithPublicKey(options: MintOptions): string;
  /** Signed by an unrelated key of the header's algorithm (the realm key's by default), but naming the realm's real kid. */
  mintWithOtherKey(options: MintOptions): string;
  /** Signed by the realm's EC key with the signature in ASN.1 DER, where JOSE wants the raw r||s pair. */
  mintDerSignature(options: MintOptions): string;
  /** Expired an hour ago. */
  mintExpired(options: MintOptions): string;
  /** How many JWKS requests the realm got (404s included). */
  jwksRequests(tenant: string): number;
  /** How many times the realm list was asked for. */
  realmListRequests(): number;
  /** Records a revocation entry (a bumped version or a deletion) for the revocation routes. */
  revoke(tenant: string, sub: string, change: { version?: number; deleted?: boolean }): void;
  /** While true the JWKS route and the realm list answer 503 (the token service is down). */
  setUnavailable(down: boolean): void;
  close(): Promise<void>;
}

/** What the issuer's server answers from, shared with the `TestIssuer` that changes it. */
interface IssuerState {
  realms: Map<string, IssuerKey[]>;
  published: Map<string, Array<Record<string, unknown>>>;
  requests: Map<string, number>;
  revocations: IssuerRevocations;
  unavailable: boolean;
  realmLists: number;
}

/** The issuer's routes: revocations, the realm list and each realm's JWKS, as the token service serves them. */
function issuerRoutes(state: IssuerState): RequestListener {
  return (req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') return reply(404, { error: 404, message: 'Not found' });
    const url = req.url ?? '';
    const revocationAnswer = state.revocations.answer(url, (tenant) => state.realms.has(tenant));
    if (revocationAnswer) return reply(revocationAnswer.status, revocationAnswer.body);
    if (url === '/internal/v1/realms') {
      state.realmLists += 1;
      if (state.unavailable)
        return reply(503, { error: 503, message: 'Service temporarily unavailable' });
      return reply(200, { realms: [...state.realms.keys()].sort() });
    }
    const match = /^\/internal\/v1\/realms\/([^/?]+)\/jwks(?:\?.*)?$/.exec(url);
    if (!match) return reply(404, { error: 404, message: 'Not found' });
    const { status, body } = jwksAnswer(state, decodeURIComponent(match[1]!));
    reply(status, body);
  };
}

/** A realm's JWKS: its keys and whatever was published beside them; every request is counted. */
function jwksAnswer(state: IssuerState, tenant: string): { status: number; body: unknown } {
  state.requests.set(tenant, (state.requests.get(tenant) ?? 0) + 1);
  if (state.unavailable)
    return { status: 503, body: { error: 503, message: 'Service temporarily unavailable' } };
  const keys = state.realms.get(tenant);
  if (!keys) return { status: 404, body: { error: 404, message: `Unknown realm ${tenant}` } };
  return {
    status: 200,
    body: { keys: [...keys.map(publicJwkOf), ...(state.published.get(tenant) ?? [])] },
  };
}

/** Starts the issuer's JWKS server on 127.0.0.1 and an ephemeral port. */
export async function startTestIssuer(options: TestIssuerOptions = {}): Promise<TestIssuer> {
  const authUrl = (options.authUrl ?? 'http://auth.test').replace(/\/+$/, '');
  const audience = options.audience ?? 'http://plant-store.test';
  const state: IssuerState = {
    realms: new Map(),
    published: new Map(),
    requests: new Map(),
    revocations: new IssuerRevocations(),
    unavailable: false,
    realmLists: 0,
  };
  const { realms, published, requests, revocations } = state;
  const otherKeys = { RS256: newIssuerKey('RS256'), ES256: newIssuerKey('ES256') };

  const server: Server = createServer(issuerRoutes(state));
  // As the real token service's listener (startWebServer): keep-alive outlives the client's idle
  // timeout, so the client closes idle sockets first. At Node's 5 s a busy client could send on
  // a socket the server was closing, and that fetch failed ("other side closed").
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const keysOf = (tenant: string): IssuerKey[] => {
    const keys = realms.get(tenant);
    if (!keys) throw new Error(`test issuer: unknown realm ${tenant}; call addRealm first`);
    return keys;
  };
  const keyOf = (tenant: string, kid?: string): IssuerKey => {
    const keys = keysOf(tenant);
    const key = kid === undefined ? keys[keys.length - 1] : keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`test issuer: realm ${tenant} has no key ${kid}`);
    return key;
  };
  const issuerOf = (tenant: string) => `${authUrl}/realms/${tenant}`;

  function parts(
    { tenant, claims, header, kid }: MintOptions,
    alg?: string,
  ): { signingInput: string; key: IssuerKey } {
    // Tokens for realms the issuer does not know can still be minted (with a throwaway key).
    const key = realms.has(tenant) ? keyOf(tenant, kid) : otherKeys.RS256;
    const now = Math.floor(Date.now() / 1000);
    const sub = `sa-${randomUUID()}`;
    const payload = withOverrides(
      {
        iss: issuerOf(tenant),
        sub,
        aud: audience,
        client_id: sub,
        iat: now,
        exp: now + 300,
        jti: randomUUID(),
        scope: 'plants:read plants:write',
        tenant,
        principal_type: 'service_account',
        role: 'Edit',
        grants: [],
        ver: 1,
      },
      claims,
    );
    const fullHeader = withOverrides({ alg: alg ?? key.alg, typ: 'at+jwt', kid: key.kid }, header);
    return { signingInput: `${b64url(fullHeader)}.${b64url(payload)}`, key };
  }

  const issuer: TestIssuer = {
    url,
    authUrl,
    audience,
    issuerOf,
    addRealm(tenant, alg) {
      const existing = realms.get(tenant);
      if (existing) return existing[existing.length - 1]!.kid;
      const key = newIssuerKey(alg);
      realms.set(tenant, [key]);
      return key.kid;
    },
    removeRealm(tenant) {
      realms.delete(tenant);
      published.delete(tenant);
    },
    addKey(tenant, alg) {
      const key = newIssuerKey(alg);
      keysOf(tenant).push(key);
      return key.kid;
    },
    publishJwk(tenant, jwk) {
      keysOf(tenant);
      published.set(tenant, [...(published.get(tenant) ?? []), jwk]);
    },
    mint(opts) {
      const { signingInput, key } = parts(opts);
      return signIssuerJws(signingInput, key);
    },
    mintAlgNone(opts) {
      return `${parts(opts, 'none').signingInput}.`;
    },
    mintHs256WithPublicKey(opts) {
      const { signingInput, key } = parts(opts, 'HS256');
      const secret = key.publicKey.export({ format: 'pem', type: 'spki' });
      return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
    },
    mintWithOtherKey(opts) {
      const { signingInput, key } = parts(opts);
      const alg = opts.header?.alg ?? key.alg;
      return signIssuerJws(signingInput, alg === 'ES256' ? otherKeys.ES256 : otherKeys.RS256);
    },
    mintDerSignature(opts) {
      const { signingInput, key } = parts(opts);
      if (key.alg !== 'ES256')
        throw new Error('test issuer: a DER signature needs an ES256 realm key');
      return signIssuerJws(signingInput, key, { der: true });
    },
    mintExpired(opts) {
      const now = Math.floor(Date.now() / 1000);
      return issuer.mint({ ...opts, claims: { iat: now - 3900, exp: now - 3600, ...opts.claims } });
    },
    jwksRequests(tenant) {
      return requests.get(tenant) ?? 0;
    },
    realmListRequests() {
      return state.realmLists;
    },
    revoke(tenant, sub, change) {
      revocations.revoke(tenant, sub, change);
    },
    setUnavailable(down) {
      state.unavailable = down;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return issuer;
}
