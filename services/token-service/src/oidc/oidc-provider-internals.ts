/**
 * Every use of oidc-provider beyond its documented configuration, in one place. The token
 * service relies on a few of its internals, each for a reason given where it is used:
 *
 * - `Client.find`, the lookup every endpoint makes, is replaced: service accounts come from the
 *   domain's credential cache (service-account-clients.ts), and the portal client signs ID
 *   tokens with its realm's algorithm (grant-engine.ts);
 * - `new Client(metadata)` builds those clients without the adapter;
 * - `Client.prototype.compareClientSecret` is replaced, so `client_secret` holds a digest and
 *   never the secret;
 * - `provider.issuer` becomes a getter, so one provider serves every realm's token endpoint;
 * - `ctx.href` is built on the configured public origin, because oidc-provider builds every URL
 *   it names on it (a DPoP proof's expected `htu`, discovery, redirects);
 * - `ExternalSigningKey` under the experimental `externalSigningSupport` feature, whose `ack`
 *   names the version of the experiment implemented; the provider reads a key's `kty`, `crv`
 *   and `keyObject()` when it is built;
 * - three of its grant helpers (`validateDpop`, `checkDpopRequired`, `applyDpopBinding`) for the
 *   token-exchange grant registered with `registerGrantType` (token-exchange-grant.ts), so its
 *   DPoP proof is checked, replay-claimed and bound exactly as client credentials' is: the
 *   built-in grants get them bound, a registered one does not.
 *
 * package.json pins oidc-provider's exact version, and test/oidc-provider-internals.test.ts
 * checks each point above against the installed one: an upgrade that changes what is patched
 * fails there, not in a grant.
 */
import type Provider from 'oidc-provider';
import { applyDpopBinding } from 'oidc-provider/lib/helpers/grant_common.js';
import { checkDpopRequired } from 'oidc-provider/lib/helpers/sender_constraints.js';
import validateDpop from 'oidc-provider/lib/helpers/validate_dpop.js';

/** The oidc-provider version whose internals this module was written against (package.json pins it). */
export const OIDC_PROVIDER_VERSION = '9.13.3';

/** The experimental feature that admits an ExternalSigningKey in `jwks.keys`, and the version of it we implement. */
export const EXTERNAL_SIGNING = { enabled: true, ack: 'experimental-01' } as const;

export type ProviderContext = Parameters<Parameters<Provider['use']>[0]>[0];
export type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;
export type ClientLookup = (id: unknown) => Promise<Client | undefined>;

interface ClientClass {
  new (metadata: Record<string, unknown>): Client;
  find: ClientLookup;
}

const clientClassOf = (provider: Provider) => provider.Client as unknown as ClientClass;

/** A client built from metadata as oidc-provider would build one from its adapter (validated the same way). */
export function buildClient(provider: Provider, metadata: Record<string, unknown>): Client {
  const Clients = clientClassOf(provider);
  return new Clients(metadata);
}

/**
 * Replaces how the provider looks clients up. `lookup` receives the lookup in place before
 * (the provider's own, which serves the static clients, or an earlier replacement), so
 * replacements chain.
 */
export function replaceClientLookup(
  provider: Provider,
  lookup: (previous: ClientLookup) => ClientLookup,
): void {
  const clients = clientClassOf(provider);
  clients.find = lookup(clients.find.bind(clients));
}

/** The client as `compareClientSecret` sees it: its id and its metadata's `client_secret`. */
export interface SecretHolder {
  clientId: string;
  clientSecret: string;
}

/**
 * Replaces the comparison of a presented `client_secret` (client_secret_basic and _post) with
 * the client's stored one: oidc-provider compares the two strings, so a stored digest needs a
 * comparison of its own.
 */
export function replaceClientSecretComparison(
  provider: Provider,
  compare: (client: SecretHolder, presented: string) => boolean | Promise<boolean>,
): void {
  provider.Client.prototype.compareClientSecret = function compareClientSecret(
    this: SecretHolder,
    presented: string,
  ) {
    return compare(this, presented);
  };
}

/** Makes `provider.issuer`, which oidc-provider reads for every `iss` it writes, the request's. */
export function serveIssuerPerRequest(provider: Provider, issuer: () => string): void {
  Object.defineProperty(provider, 'issuer', {
    get: issuer,
    set: () => undefined,
    configurable: true,
  });
}

/**
 * A middleware that builds the request's `href`, the base of every URL oidc-provider names, on
 * `origin` instead of the Host header, X-Forwarded-Host or an absolute-form target: whoever
 * sends the request would choose those, and a DPoP proof made for an attacker's host would pass.
 */
export function pinRequestOrigin(origin: string) {
  return async function pinnedOrigin(
    ctx: ProviderContext,
    next: () => Promise<unknown>,
  ): Promise<void> {
    Object.defineProperty(ctx, 'href', {
      value: `${origin}${ctx.path}${ctx.search}`,
      configurable: true,
    });
    await next();
  };
}

/** A DPoP proof oidc-provider validated: the key's thumbprint and the proof's id. */
export interface ValidatedProof {
  thumbprint: string;
  jti: string;
}

/** What a registered grant needs of oidc-provider's DPoP handling, bound to `provider` (its built-in grants get the same). */
export interface GrantDpopHelpers {
  /** The request's proof checked (signature, `htm`/`htu`, `iat`, nonce), or undefined without one. */
  validate(ctx: ProviderContext): Promise<ValidatedProof | undefined>;
  /** Refuses (invalid_grant) when the client requires DPoP and sent no proof. */
  requireIfClientDoes(ctx: ProviderContext, proof: ValidatedProof | undefined): void;
  /** Claims the proof's id (replay) and binds `token` to the proof's key (`cnf.jkt`). */
  bind(ctx: ProviderContext, proof: ValidatedProof | undefined, token: unknown): Promise<void>;
}

export function grantDpopHelpers(provider: Provider): GrantDpopHelpers {
  return {
    validate: (ctx) => validateDpop(provider, ctx),
    requireIfClientDoes: (ctx, proof) => checkDpopRequired(provider, ctx, proof),
    bind: (ctx, proof, token) => applyDpopBinding(provider, ctx, proof, token),
  };
}
