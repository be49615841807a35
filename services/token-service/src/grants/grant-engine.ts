import {
  DEFAULT_SIGNING_ALGORITHM,
  SIGNING_ALGORITHMS,
  type SigningAlgorithm,
} from '@plant/shared/api';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Provider, { ExternalSigningKey } from 'oidc-provider';
import { PERSON_CLIENT_IDS } from '@plant/shared/api';
import { issuerOf } from '../realms/index.js';
import type { NodeSigningKey } from '../signing-keys/index.js';
import {
  buildClient,
  type Client,
  exchangeGrant,
  replaceClientLookup,
  serveIssuerPerRequest,
  realmConfiguration,
  wireProvider,
  type GrantEngine,
  type RealmBinding,
  type RealmProviderDeps,
  type RealmRequestBinding,
} from '../oidc/index.js';

const BINDING = Symbol('realm binding');
type BoundRequest = IncomingMessage & { [BINDING]?: RealmRequestBinding };

/** The binding of `req`, or of the request oidc-provider is serving; none is a wiring bug, and fails the request. */
function requestBinding(req: IncomingMessage | undefined = Provider.ctx?.req): RealmRequestBinding {
  const binding = (req as BoundRequest | undefined)?.[BINDING];
  if (binding === undefined) throw new Error('the grant engine ran outside a bound realm request');
  return binding;
}

/** The request's realm's key, or none outside a request (oidc-provider registering its keys at construction). */
function boundKey(): NodeSigningKey | undefined {
  return (Provider.ctx?.req as BoundRequest | undefined)?.[BINDING]?.signingKey;
}

/**
 * Placeholders while oidc-provider registers a key at construction (no request yet): a kid,
 * and a public key it checks the shape of and never uses. For RSA (2048 bits) a modulus of all
 * ones has that shape and is plainly no one's key; generating a real pair instead cost every
 * start a blocking RSA key generation (docs/performance.md, "Start-up"). A P-256 pair costs
 * a fraction of a millisecond.
 */
const PLACEHOLDERS: Record<
  SigningAlgorithm,
  { kid: string; kty: string; crv?: string; publicKey?: KeyObject }
> = {
  RS256: { kid: 'realm-bound-rs256', kty: 'RSA' },
  ES256: { kid: 'realm-bound-es256', kty: 'EC', crv: 'P-256' },
};
function placeholderPublicKey(alg: SigningAlgorithm): KeyObject {
  const placeholder = PLACEHOLDERS[alg];
  placeholder.publicKey ??=
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey
      : createPublicKey({
          key: { kty: 'RSA', n: Buffer.alloc(256, 0xff).toString('base64url'), e: 'AQAB' },
          format: 'jwk',
        });
  return placeholder.publicKey;
}

/**
 * One of the grant engine's signing keys, one per algorithm: it signs with the key of the
 * request's realm, and names that key's kid. oidc-provider picks it by the algorithm it signs
 * with (the realm's: realm-configuration.ts), reads `kid` and calls `sign` inside the request;
 * it reads the public parts only to publish them, which the engine never does (each realm's
 * keys are published by its own provider and the internal JWKS route).
 */
class RealmBoundSigningKey extends ExternalSigningKey {
  readonly #alg: SigningAlgorithm;

  constructor(alg: SigningAlgorithm) {
    super();
    this.#alg = alg;
  }

  override get kid(): string {
    const bound = boundKey();
    return bound?.algorithm === this.#alg ? bound.kid! : PLACEHOLDERS[this.#alg].kid;
  }

  override set kid(_value: string) {
    // The kid is the request's realm's.
  }

  override get alg(): string {
    return this.#alg;
  }

  override set alg(_value: string) {
    // Fixed per instance.
  }

  override get kty(): string {
    return PLACEHOLDERS[this.#alg].kty;
  }

  override get crv(): string | undefined {
    return PLACEHOLDERS[this.#alg].crv;
  }

  override keyObject(): KeyObject {
    const bound = boundKey();
    return bound?.algorithm === this.#alg ? bound.keyObject() : placeholderPublicKey(this.#alg);
  }

  override sign(data: Uint8Array): Promise<Uint8Array> {
    const { signingKey } = requestBinding();
    // oidc-provider chose this key by the realm's algorithm: another one here is a wiring bug.
    if (signingKey.algorithm !== this.#alg)
      return Promise.reject(new Error(`the realm signs ${signingKey.algorithm}, not ${this.#alg}`));
    return signingKey.sign(data);
  }
}

/**
 * A person's ID token (the portal's code exchange, plantctl's grants) is in its realm's
 * algorithm: the static clients name the default (RS256), so a realm of another algorithm gets
 * a copy of each naming its own, built once per client and algorithm.
 */
function signPortalIdTokensWithRealmAlgorithm(
  provider: Provider,
  algorithm: () => SigningAlgorithm,
): void {
  const portals = new Map<string, Client>();
  replaceClientLookup(
    provider,
    (find) =>
      async function findClient(id: unknown): Promise<Client | undefined> {
        const alg = algorithm();
        // The clients were built outside any request, with the default algorithm: only the portal client of another needs its own.
        if (
          typeof id !== 'string' ||
          !PERSON_CLIENT_IDS.has(id) ||
          alg === DEFAULT_SIGNING_ALGORITHM
        )
          return find(id);
        let portal = portals.get(`${id} ${alg}`);
        if (portal === undefined) {
          const stock = await find(id);
          if (stock === undefined) return undefined;
          portal = buildClient(provider, {
            ...stock.metadata(),
            id_token_signed_response_alg: alg,
          });
          portals.set(`${id} ${alg}`, portal);
        }
        return portal;
      },
  );
}

/**
 * One oidc-provider for the token endpoint of every realm. A provider per realm costs about a
 * hundred kilobytes and a millisecond of CPU to build (docs/performance.md, "At scale"), so
 * grants spread over more realms than fit in memory would build one per grant; the engine is
 * built once. Everything it does for a realm reads the realm from the request it serves: the
 * issuer (`iss`, the `WWW-Authenticate` realm), the signing key, the service accounts (clients),
 * the stored codes and grants (the adapter), the users and the claims. The realm comes from the
 * route (the URL's realm, a valid tenant name, whose key is loaded), so a client, a code or a
 * grant of another realm is simply not found. The portal client's metadata is the same in
 * every realm but for its ID tokens' algorithm, the realm's. Discovery, authorization, sign-in, userinfo and logout stay with each realm's
 * own provider (realm-providers.ts), which also publishes its keys.
 */
export function createGrantEngine(deps: RealmProviderDeps): GrantEngine {
  const binding: RealmBinding = {
    realm: (ctx) => requestBinding(ctx?.req).tenant,
    issuer: (ctx) => requestBinding(ctx.req).issuer,
  };
  // Outside a request (construction: the clients' default ID-token algorithm) the default, RS256.
  const algorithm = (): SigningAlgorithm => boundKey()?.algorithm ?? DEFAULT_SIGNING_ALGORITHM;
  const keys = SIGNING_ALGORITHMS.map((alg) => new RealmBoundSigningKey(alg));
  const provider = new Provider(
    issuerOf(deps.config.AUTH_URL, 'grant-engine'),
    realmConfiguration({ realm: binding.realm, algorithm, cookiePath: '/realms' }, keys, deps),
  );
  // oidc-provider reads `issuer` whenever it needs it (token `iss`, errors): the request's realm's.
  serveIssuerPerRequest(provider, () => requestBinding().issuer);
  wireProvider(provider, binding, deps);
  exchangeGrant(provider, { realm: () => requestBinding().tenant, algorithm }, deps);
  signPortalIdTokensWithRealmAlgorithm(provider, algorithm);
  const callback = provider.callback();
  return {
    provider,
    serve(realm, req, res) {
      (req as BoundRequest)[BINDING] = realm;
      callback(req, res);
    },
  };
}
