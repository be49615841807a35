import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, { ExternalSigningKey } from 'oidc-provider';
import { issuerOf } from '../domain/realm-naming.js';
import { realmConfiguration } from './realm-configuration.js';
import { wireProvider, type RealmBinding, type RealmProviderDeps } from './realm-provider.js';
import type { Rs256SigningKey } from './rs256-signing-key.js';

/** The realm a token request is for, and its signing key: set on the request by the token route's handler. */
export interface RealmRequestBinding {
  tenant: string;
  issuer: string;
  signingKey: Rs256SigningKey;
}

const BINDING = Symbol('realm binding');
type BoundRequest = IncomingMessage & { [BINDING]?: RealmRequestBinding };

/** The binding of `req`, or of the request oidc-provider is serving; none is a wiring bug, and fails the request. */
function requestBinding(req: IncomingMessage | undefined = Provider.ctx?.req): RealmRequestBinding {
  const binding = (req as BoundRequest | undefined)?.[BINDING];
  if (binding === undefined) throw new Error('the grant engine ran outside a bound realm request');
  return binding;
}

/** Placeholders while oidc-provider registers the key at construction (no request yet): a kid, and a public key it checks the shape of. */
const UNBOUND_KID = 'realm-bound';
let unboundPublicKey: KeyObject | undefined;
function placeholderPublicKey(): KeyObject {
  unboundPublicKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
  return unboundPublicKey;
}

/**
 * The grant engine's one signing key: it signs with the key of the request's realm, and names
 * that key's kid. oidc-provider reads `kid` and calls `sign` when it signs a token, inside the
 * request; it reads the public parts only to publish them, which the engine never does (each
 * realm's keys are published by its own provider and the internal JWKS route).
 */
class RealmBoundSigningKey extends ExternalSigningKey {
  override get kid(): string {
    return (Provider.ctx?.req as BoundRequest | undefined)?.[BINDING]?.signingKey.kid ?? UNBOUND_KID;
  }

  override set kid(_value: string) {
    // The kid is the request's realm's.
  }

  override get alg(): string {
    return 'RS256';
  }

  override set alg(_value: string) {
    // Always RS256.
  }

  override get kty(): string {
    return 'RSA';
  }

  override keyObject() {
    const bound = (Provider.ctx?.req as BoundRequest | undefined)?.[BINDING];
    return bound === undefined ? placeholderPublicKey() : bound.signingKey.keyObject();
  }

  override sign(data: Uint8Array): Promise<Uint8Array> {
    return requestBinding().signingKey.sign(data);
  }
}

export interface GrantEngine {
  /** The oidc-provider itself (tests listen to its events). */
  provider: Provider;
  /** Serves a request of the token endpoint for `binding`'s realm (the URL already reduced to the path after the realm). */
  serve(binding: RealmRequestBinding, req: IncomingMessage, res: ServerResponse): void;
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
 * every realm. Discovery, authorization, sign-in, userinfo and logout stay with each realm's
 * own provider (realm-providers.ts), which also publishes its keys.
 */
export function createGrantEngine(deps: RealmProviderDeps): GrantEngine {
  const binding: RealmBinding = { realm: (ctx) => requestBinding(ctx?.req).tenant, issuer: (ctx) => requestBinding(ctx.req).issuer };
  const provider = new Provider(issuerOf(deps.config.AUTH_URL, 'grant-engine'), realmConfiguration({ realm: binding.realm, cookiePath: '/realms' }, new RealmBoundSigningKey(), deps));
  // oidc-provider reads `issuer` whenever it needs it (token `iss`, errors): the request's realm's.
  Object.defineProperty(provider, 'issuer', { get: () => requestBinding().issuer, set: () => undefined, configurable: true });
  wireProvider(provider, binding, deps);
  const callback = provider.callback();
  return {
    provider,
    serve(realm, req, res) {
      (req as BoundRequest)[BINDING] = realm;
      callback(req, res);
    },
  };
}
