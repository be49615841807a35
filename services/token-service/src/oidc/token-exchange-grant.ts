/**
 * The token-exchange grant (RFC 8693) inside oidc-provider's token endpoint, registered with its
 * documented `registerGrantType`: oidc-provider parses the form, authenticates the client as for
 * any grant (secret, key, trusted workload: service-account-clients.ts) and refuses a client
 * without the grant type (unauthorized_client, realm-provider.ts); then this grant
 *
 * 1. refuses a client that requires DPoP and sent no proof (before any token is verified);
 * 2. has the token-exchange wing decide (token-exchange/exchange-policy.ts: target, permission,
 *    subject and actor tokens, scope, lifetime, the `act` chain, which names the credential the
 *    actor authenticated with, so removing it revokes the token as it revokes the actor's own);
 * 3. mints the token as client credentials' are minted (oidc-provider's `ClientCredentials`
 *    model, the realm's key, RFC 9068): for the one audience, with the decided scope and
 *    lifetime, bound to the actor's DPoP key when it sent a proof (its id claimed once across
 *    replicas), and the subject's claims with `act` (token-claims.ts writes them);
 * 4. answers RFC 8693 §2.2.1's response, with `issued_token_type`; the request's span names
 *    the subject and the actor chain (ids, never a token).
 */
import type { SigningAlgorithm } from '@plant/shared/api';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { annotateActiveSpan } from '@plant/shared/tracing';
import { ExchangeRefused } from '../platform/index.js';
import {
  ACCESS_TOKEN_TYPE,
  TOKEN_EXCHANGE_GRANT,
  TOKEN_EXCHANGE_PARAMETERS,
  planExchange,
  type ExchangeContext,
  type ExchangeParams,
  type ExchangePlan,
} from '../token-exchange/index.js';
import { grantDpopHelpers, type ProviderContext } from './oidc-provider-internals.js';
import { principalOf } from './principal-metadata.js';

/** The exchange's claims of each token this grant minted, read by the JWT customizer (token-claims.ts). */
const EXCHANGED = new WeakMap<object, ExchangePlan['claims']>();

/** The subject's claims and `act` of a token minted by this grant; undefined for any other. */
export function exchangedClaimsOf(token: object): ExchangePlan['claims'] | undefined {
  return EXCHANGED.get(token);
}

/** The ids of the `act` chain, the current actor first. */
function actorsOf(act: ExchangePlan['claims']['act']): string[] {
  const actors: string[] = [];
  for (let a: typeof act | undefined = act; a !== undefined; a = a.act) actors.push(a.sub);
  return actors;
}

/**
 * What the request's trace says of an exchange: who is the subject, who acts (the chain, and
 * its depth), which kind of subject token; principal ids only, never a token's value.
 */
function exchangeSpanAttributes(plan: ExchangePlan, subjectTokenType: unknown) {
  const actors = actorsOf(plan.claims.act);
  return {
    'plantstore.tenant': plan.claims.tenant,
    'plantstore.subject': plan.claims.sub,
    'plantstore.actors': actors,
    'plantstore.chain_depth': actors.length,
    'plantstore.exchange.subject_token_type': String(subjectTokenType).split(':').at(-1) ?? '',
  };
}

export interface TokenExchangeDeps {
  /** The realm of the request being served. */
  realm(): string;
  /** The algorithm the realm signs with. */
  algorithm(): SigningAlgorithm;
  /** The `cred` of the credential the actor authenticated this request with (decision 0035). */
  credentialOf(ctx: KoaContextWithOIDC): string | undefined;
  /** Everything the decision needs but the realm. */
  context: Omit<ExchangeContext, 'tenant'>;
}

interface TokenModel {
  resourceServer: unknown;
  scope?: string;
  expiration: number;
  tokenType: string;
  save(): Promise<string>;
}

type TokenModelClass = new (init: Record<string, unknown>) => TokenModel;

export function registerTokenExchange(provider: Provider, deps: TokenExchangeDeps): void {
  const dpop = grantDpopHelpers(provider);
  async function tokenExchange(ctx: KoaContextWithOIDC): Promise<void> {
    const { client } = ctx.oidc;
    const principal = principalOf(client);
    if (client === undefined || principal === undefined)
      throw new ExchangeRefused('unauthorized_client', 'this client may not act for others');
    const providerCtx = ctx as unknown as ProviderContext;
    const proof = await dpop.validate(providerCtx);
    dpop.requireIfClientDoes(providerCtx, proof);
    const cred = deps.credentialOf(ctx);
    const plan = await planExchange(
      ctx.oidc.params as ExchangeParams,
      {
        sub: client.clientId,
        version: principal.version,
        delegations: principal.delegations,
        ...(cred === undefined ? {} : { cred }),
      },
      { ...deps.context, tenant: deps.realm() },
    );
    annotateActiveSpan(exchangeSpanAttributes(plan, ctx.oidc.params?.subject_token_type));
    const Token = provider.ClientCredentials as unknown as TokenModelClass;
    const token = new Token({ client, scope: plan.scope, expiresIn: plan.expiresIn });
    token.resourceServer = new provider.ResourceServer(plan.audience, {
      audience: plan.audience,
      scope: plan.scope,
      accessTokenTTL: plan.expiresIn,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: deps.algorithm() } },
    });
    await dpop.bind(providerCtx, proof, token);
    EXCHANGED.set(token, plan.claims);
    ctx.oidc.entity('ClientCredentials', token as never);
    const value = await token.save();
    ctx.body = {
      access_token: value,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: token.tokenType,
      expires_in: token.expiration,
      scope: plan.scope,
    };
  }
  provider.registerGrantType(TOKEN_EXCHANGE_GRANT, tokenExchange, TOKEN_EXCHANGE_PARAMETERS, [
    'audience',
    'resource',
  ]);
}
