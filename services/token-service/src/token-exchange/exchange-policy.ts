/**
 * Token exchange's decision (OAuth 2.0 Token Exchange, RFC 8693; docs/decisions/0037): what a
 * service account acting for a subject gets, as a short pipeline of named steps, each refusing
 * with the RFC's code (`ExchangeRefused`). The oidc wing's grant (oidc/token-exchange-grant.ts)
 * authenticates the actor, checks its DPoP proof and mints what `planExchange` decided; nothing
 * here knows oidc-provider.
 *
 * 1. the request's form: one subject token of the access-token type, an actor token only with
 *    its type, no other token type asked for;
 * 2. the target: `audience` and `resource` name exactly one API this realm issues for;
 * 3. the actor's permission there (an Account Admin's, token-exchange/delegations.ts);
 * 4. the subject token: live in this realm, verified exactly as a resource server verifies it
 *    (signature, claims, and the revocation of its subject and every actor already in it);
 *    never a portal (account-admin) token; or (type `jwt`) a trusted workload's platform token,
 *    standing for the one service account whose trust names that workload, verified as that
 *    trust's client assertion is (the workload could authenticate as the account with it
 *    anyway: exchanging it only ever narrows what it is worth);
 * 5. `may_act` (§4.4) when the subject token carries one; the chain's depth;
 * 6. the actor token, when given: a live token of the same actor;
 * 7. the scope: the subject token's, what the actor may delegate there and what was asked;
 * 8. the lifetime: never beyond the subject token's (nor the actor token's) expiry.
 */
import {
  MAX_ACTOR_DEPTH,
  READ_SCOPE,
  WRITE_SCOPE,
  type Actor,
  type Principal,
} from '@plant/resource-auth';
import { AppError } from '@plant/shared/api';
import { ExchangeRefused, WorkloadTokenRefused } from '../platform/index.js';
import { sameAudience } from './delegations.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** RFC 8693 §3: a JWT of another issuer; here a trusted workload's platform token. */
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
/** The form parameters of the grant (RFC 8693 §2.1); `audience` and `resource` may repeat (then they must agree). */
export const TOKEN_EXCHANGE_PARAMETERS = [
  'audience',
  'resource',
  'scope',
  'requested_token_type',
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
] as const;

const DELEGABLE = new Set([READ_SCOPE, WRITE_SCOPE]);

/** The grant's parameters as oidc-provider parsed them (a repeated one is an array). */
export type ExchangeParams = Partial<Record<(typeof TOKEN_EXCHANGE_PARAMETERS)[number], unknown>>;

/** The authenticated client, the would-be actor: its account, version and permissions. */
export interface ExchangingActor {
  sub: string;
  version: number;
  delegations: readonly { audience: string; scope: string }[];
  /** The credential the actor authenticated the exchange with (`cred`: `secret:<id>`, …). */
  cred?: string;
}

export interface ExchangeContext {
  tenant: string;
  /** The APIs this realm issues service-account tokens for (the Plant Store, `API_AUDIENCES`). */
  audiences: readonly string[];
  /** Account-admin's audience: a portal token is never a subject token. */
  portalAudience: string;
  /** The configured access-token lifetime, seconds: the most an exchanged token gets. */
  ttl: number;
  /** Verifies a token as a resource server would (the introspection verifier, token-inspector.ts). */
  inspect(token: string): Promise<Principal>;
  /**
   * The service account a trusted workload's platform token stands for (the one account of the
   * realm whose trust names exactly that workload), as a principal of the account's own role,
   * grants and version, expiring with the platform token; rejects with `WorkloadTokenRefused`.
   */
  inspectWorkload(token: string): Promise<Principal>;
  nowSeconds(): number;
}

/** What the grant mints: the claims beside the ones oidc-provider writes (`iss`, `aud`, `exp`, `iat`, `jti`, `client_id`, `cnf`). */
export interface ExchangePlan {
  audience: string;
  scope: string;
  expiresIn: number;
  claims: {
    sub: string;
    tenant: string;
    principal_type: Principal['principalType'];
    role: Principal['role'];
    grants: Principal['grants'];
    ver: number;
    /** The subject token's own credential: removing it refuses the exchanged token too. */
    cred?: string;
    act: ActClaim;
  };
}

/**
 * RFC 8693 §4.1: the current actor, the one before it inside; `cred` is the credential each
 * actor authenticated its exchange with (decision 0035), checked as a token's own `cred` is.
 */
export interface ActClaim {
  sub: string;
  ver: number;
  cred?: string;
  act?: ActClaim;
}

const refuse = (code: ConstructorParameters<typeof ExchangeRefused>[0], description: string) =>
  new ExchangeRefused(code, description);

/** A parameter given once, as a string, or undefined; repeated is a refusal. */
function single(params: ExchangeParams, name: keyof ExchangeParams): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw refuse('invalid_request', `${name} must not be repeated`);
  return value;
}

const listOf = (value: unknown): string[] =>
  value === undefined ? [] : Array.isArray(value) ? (value as string[]) : [value as string];

/** What the subject token is: one of this realm's access tokens, or a trusted workload's platform token. */
export type SubjectTokenType = typeof ACCESS_TOKEN_TYPE | typeof JWT_TOKEN_TYPE;

/** Step 1: the request's form. */
export function readForm(params: ExchangeParams): {
  subjectToken: string;
  subjectTokenType: SubjectTokenType;
  actorToken?: string;
} {
  const subjectToken = single(params, 'subject_token');
  if (subjectToken === undefined || subjectToken === '')
    throw refuse('invalid_request', 'subject_token is required');
  const subjectTokenType = single(params, 'subject_token_type');
  if (subjectTokenType !== ACCESS_TOKEN_TYPE && subjectTokenType !== JWT_TOKEN_TYPE)
    throw refuse(
      'invalid_request',
      `subject_token_type must be ${ACCESS_TOKEN_TYPE} or ${JWT_TOKEN_TYPE}`,
    );
  const actorToken = single(params, 'actor_token');
  const actorTokenType = single(params, 'actor_token_type');
  if ((actorToken === undefined) !== (actorTokenType === undefined))
    throw refuse('invalid_request', 'actor_token and actor_token_type go together');
  if (actorTokenType !== undefined && actorTokenType !== ACCESS_TOKEN_TYPE)
    throw refuse('invalid_request', `actor_token_type must be ${ACCESS_TOKEN_TYPE}`);
  const requested = single(params, 'requested_token_type');
  if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE)
    throw refuse('invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
  return actorToken === undefined || actorToken === ''
    ? { subjectToken, subjectTokenType }
    : { subjectToken, subjectTokenType, actorToken };
}

/** Step 2: exactly one target, one of this realm's APIs, written as configured. */
export function readTarget(params: ExchangeParams, audiences: readonly string[]): string {
  const named = [...listOf(params.audience), ...listOf(params.resource)];
  if (named.length === 0) throw refuse('invalid_request', 'audience or resource is required');
  const [first] = named as [string, ...string[]];
  if (!named.every((one) => sameAudience(one, first)))
    throw refuse('invalid_target', 'an exchanged token is for exactly one audience');
  const audience = audiences.find((known) => sameAudience(known, first));
  if (audience === undefined) throw refuse('invalid_target', 'the audience is not known here');
  return audience;
}

/** Step 3: what the actor may delegate at the target. */
export function permittedScope(actor: ExchangingActor, audience: string): Set<string> {
  if (actor.delegations.length === 0)
    throw refuse('unauthorized_client', 'this client may not act for others');
  const permission = actor.delegations.find((d) => sameAudience(d.audience, audience));
  if (permission === undefined)
    throw refuse('invalid_target', 'this client may not act for others at this audience');
  return new Set(permission.scope.split(' '));
}

/** A verified token, or the RFC's invalid_request: which check failed is the resource server's business, not the caller's. */
async function verified(ctx: ExchangeContext, token: string, which: string): Promise<Principal> {
  try {
    return await ctx.inspect(token);
  } catch (err) {
    // 503 (the revocation state cannot be read) stays a 503: the token may be fine.
    if (err instanceof AppError && err.status === 401)
      throw refuse('invalid_request', `${which} is not an active access token of this realm`);
    throw err;
  }
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

/** Step 4, a workload's platform token: the account whose trust names the workload, as that account. */
async function readWorkloadSubject(
  ctx: ExchangeContext,
  token: string,
): Promise<{ subject: Principal; claims: Record<string, unknown> }> {
  let subject: Principal;
  try {
    subject = await ctx.inspectWorkload(token);
  } catch (err) {
    if (err instanceof WorkloadTokenRefused)
      throw refuse(
        'invalid_request',
        'subject_token is not a token of a workload this realm trusts',
      );
    throw err;
  }
  return { subject, claims: claimsOf(token) };
}

/** Step 4: the subject token, live and of this realm, never a portal token. */
async function readSubject(
  ctx: ExchangeContext,
  token: string,
  type: SubjectTokenType,
): Promise<{ subject: Principal; claims: Record<string, unknown> }> {
  if (type === JWT_TOKEN_TYPE) return readWorkloadSubject(ctx, token);
  const subject = await verified(ctx, token, 'subject_token');
  if (subject.tenant !== ctx.tenant)
    throw refuse('invalid_request', 'subject_token is not an active access token of this realm');
  const claims = claimsOf(token);
  if (listOf(claims.aud).some((aud) => sameAudience(aud, ctx.portalAudience)))
    throw refuse('invalid_request', 'a portal token cannot be exchanged');
  return { subject, claims };
}

/** Step 5: `may_act` names the actor when present (RFC 8693 §4.4), and the chain stays within its bound. */
export function assertMayAct(
  claims: Record<string, unknown>,
  subject: Principal,
  actor: ExchangingActor,
): void {
  const mayAct = claims.may_act;
  if (mayAct !== undefined) {
    const named =
      typeof mayAct === 'object' && mayAct !== null ? (mayAct as { sub?: unknown }).sub : undefined;
    if (named !== actor.sub)
      throw refuse('invalid_request', 'the subject token does not allow this client to act for it');
  }
  if ((subject.actors?.length ?? 0) + 1 > MAX_ACTOR_DEPTH)
    throw refuse('invalid_request', `a chain of actors is at most ${MAX_ACTOR_DEPTH} deep`);
}

/** Step 6: an actor token, when given, is a live token of the same actor. */
async function readActorToken(
  ctx: ExchangeContext,
  token: string | undefined,
  actor: ExchangingActor,
): Promise<Principal | undefined> {
  if (token === undefined) return undefined;
  const principal = await verified(ctx, token, 'actor_token');
  if (
    principal.tenant !== ctx.tenant ||
    principal.sub !== actor.sub ||
    principal.actors !== undefined
  )
    throw refuse('invalid_request', 'actor_token must be a token of the authenticated client');
  return principal;
}

/** Step 7: the intersection of the subject token's scope, the permission's and the request's. */
export function narrowedScope(
  subject: Principal,
  permitted: ReadonlySet<string>,
  asked: unknown,
): string {
  if (asked !== undefined && typeof asked !== 'string')
    throw refuse('invalid_request', 'scope must not be repeated');
  const wanted = asked === undefined ? undefined : asked.split(' ').filter(Boolean);
  for (const value of wanted ?? [])
    if (!DELEGABLE.has(value))
      throw refuse('invalid_scope', `scope ${JSON.stringify(value)} cannot be delegated`);
  const held = new Set(subject.scope.split(' '));
  const scope = [READ_SCOPE, WRITE_SCOPE].filter(
    (value) =>
      held.has(value) && permitted.has(value) && (wanted === undefined || wanted.includes(value)),
  );
  if (scope.length === 0)
    throw refuse('invalid_scope', 'nothing of the requested scope can be delegated');
  return scope.join(' ');
}

/** Step 8: whole seconds left of the shortest-lived token involved, at most the configured lifetime. */
export function lifetimeOf(ctx: ExchangeContext, ...tokens: (Principal | undefined)[]): number {
  const exp = Math.min(...tokens.filter((t) => t !== undefined).map((t) => t!.exp));
  const left = Math.floor(exp - ctx.nowSeconds());
  if (left < 1) throw refuse('invalid_request', 'subject_token has expired');
  return Math.min(ctx.ttl, left);
}

/** The `act` claim: this actor, and inside it the chain the subject token already carried. */
export function actChain(actor: ExchangingActor, before: readonly Actor[] = []): ActClaim {
  let inner: ActClaim | undefined;
  for (let i = before.length - 1; i >= 0; i -= 1)
    inner = inner === undefined ? { ...before[i]! } : { ...before[i]!, act: inner };
  const current: ActClaim = { sub: actor.sub, ver: actor.version };
  if (actor.cred !== undefined) current.cred = actor.cred;
  if (inner !== undefined) current.act = inner;
  return current;
}

/** The whole decision, steps 1-8 in order (cheap and local first: a refused target costs no token verification). */
export async function planExchange(
  params: ExchangeParams,
  actor: ExchangingActor,
  ctx: ExchangeContext,
): Promise<ExchangePlan> {
  const form = readForm(params);
  const audience = readTarget(params, ctx.audiences);
  const permitted = permittedScope(actor, audience);
  const { subject, claims } = await readSubject(ctx, form.subjectToken, form.subjectTokenType);
  assertMayAct(claims, subject, actor);
  const actorToken = await readActorToken(ctx, form.actorToken, actor);
  const scope = narrowedScope(subject, permitted, params.scope);
  return {
    audience,
    scope,
    expiresIn: lifetimeOf(ctx, subject, actorToken),
    claims: {
      sub: subject.sub,
      tenant: subject.tenant,
      principal_type: subject.principalType,
      role: subject.role,
      grants: subject.grants,
      ver: subject.ver,
      ...(subject.cred === undefined ? {} : { cred: subject.cred }),
      act: actChain(actor, subject.actors),
    },
  };
}
