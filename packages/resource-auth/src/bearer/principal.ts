/**
 * Who a verified access token speaks for, read from its claims (docs/architecture.md,
 * "Access tokens"). Only `createBearerAuth` builds one, after the signature and every
 * claim checked out, so handlers can trust each field.
 */

/** Tenant (realm) names, the token service's rule (platform/realm-names.ts), exported for resource servers. */
export { isTenantName, TENANT_NAME_PATTERN } from '../platform/realm-names.js';

export const ROLES = ['View', 'Edit', 'Account Admin'] as const;
export type Role = (typeof ROLES)[number];

export const PRINCIPAL_TYPES = ['service_account', 'user'] as const;
export type PrincipalType = (typeof PRINCIPAL_TYPES)[number];

/** A permission on one plant group (tag): `edit` lets a View principal create plants of that tag. */
export interface Grant {
  tag: string;
  permission: 'edit';
}

/**
 * One party of an exchanged token's chain (RFC 8693 §4.1 `act`): the service account that
 * obtained it for the subject, and its token version then. Revocation checks each one as it
 * checks the subject: a reset, disable or deletion of any actor refuses the token, and so does
 * the removal of the credential it obtained the token with.
 */
export interface Actor {
  sub: string;
  ver: number;
  /** The credential the actor authenticated the exchange with (`cred`, as a token's own; decision 0035). */
  cred?: string;
}

/** The deepest chain of actors a token may carry (a token exchanged from an exchanged one, and so on). */
export const MAX_ACTOR_DEPTH = 3;

export interface Principal {
  /** The realm the token was issued by; the only source of the caller's tenant. */
  tenant: string;
  /** The principal id: a service account's client_id or a user's id. */
  sub: string;
  /** The OAuth client that obtained the token. */
  clientId: string;
  principalType: PrincipalType;
  role: Role;
  grants: Grant[];
  /** Space-separated OAuth scopes, as issued. */
  scope: string;
  /** The principal's token version when the token was minted (revocation compares it). */
  ver: number;
  /** Expiry, seconds since the epoch. */
  exp: number;
  /** The token id, when the issuer set one. */
  jti?: string;
  /**
   * The credential that obtained the token (`cred`: `secret:<id>`, `key:<id>`, `trust:<id>`;
   * decision 0035). Absent for people's tokens and tokens minted before tokens named it.
   */
  cred?: string;
  /** The thumbprint of the key the token is bound to (`cnf.jkt`, RFC 9449): set, only a DPoP proof by that key may use it. */
  jkt?: string;
  /** A user token's authentication context class (`acr`): which kind of sign-in it came from. */
  acr?: string;
  /** A user token's `auth_time`: when the person authenticated (seconds since the epoch). */
  authTime?: number;
  /**
   * Who acts for `sub` (token exchange, RFC 8693 `act`): the current actor first (also the
   * token's `clientId`), then the one it acted for, and so on. Absent on a token the subject
   * obtained itself. Role, grants and scope are still the subject's (narrowed by the exchange).
   */
  actors?: readonly Actor[];
}

const ROLE_RANK: Record<Role, number> = { View: 1, Edit: 2, 'Account Admin': 3 };

/** Reading: what the View role allows (listing plants, any API's reads). */
export const READ_SCOPE = 'plants:read';
/** Changing: what the Edit role or an edit grant allows (creating plants, any API's writes). */
export const WRITE_SCOPE = 'plants:write';

/**
 * The scope a token must carry to use each role's powers. The token service names its scopes
 * after the Plant Store for every audience (another API's token gets "the role's scope"), so
 * at any API `plants:read` means "may read" and `plants:write` "may change"; the Account Admin
 * role has no scope of its own and writes with `plants:write`.
 */
const ROLE_SCOPE: Record<Role, string> = {
  View: READ_SCOPE,
  Edit: WRITE_SCOPE,
  'Account Admin': WRITE_SCOPE,
};

/** The scope `requireRole(minimum)` / `hasRole(_, minimum)` needs in the token besides the role. */
export function scopeForRole(minimum: Role): string {
  return ROLE_SCOPE[minimum];
}

/** True when the token's space-separated `scope` holds exactly this value (RFC 6749 §3.3). */
export function hasScope(principal: Principal, scope: string): boolean {
  return principal.scope.split(' ').includes(scope);
}

/**
 * True when the principal's role is `minimum` or above (View < Edit < Account Admin) and the
 * token's scope allows that level (`scopeForRole`): a scope narrows what the role allows and
 * never widens it, so an Edit account's `plants:read` token only reads.
 */
export function hasRole(principal: Principal, minimum: Role): boolean {
  return roleRefusal(principal, minimum) === undefined;
}

/** True when the principal holds an `edit` grant on exactly this tag and its token may write (`plants:write`). */
export function hasEditGrant(principal: Principal, tag: string): boolean {
  return editGrantRefusal(principal, tag) === undefined;
}

/** Why `hasRole(principal, minimum)` is false (`role` first: a View account cannot get `plants:write`); undefined when true. */
export function roleRefusal(principal: Principal, minimum: Role): 'role' | 'scope' | undefined {
  if (ROLE_RANK[principal.role] < ROLE_RANK[minimum]) return 'role';
  return hasScope(principal, ROLE_SCOPE[minimum]) ? undefined : 'scope';
}

/** Why `hasEditGrant(principal, tag)` is false (`grant` first); undefined when true. */
export function editGrantRefusal(principal: Principal, tag: string): 'grant' | 'scope' | undefined {
  if (!principal.grants.some((grant) => grant.permission === 'edit' && grant.tag === tag))
    return 'grant';
  return hasScope(principal, WRITE_SCOPE) ? undefined : 'scope';
}

/** The `insufficient_scope` message of `requireRole(minimum)` for a refusal. */
export function roleRefusalMessage(minimum: Role, refusal: 'role' | 'scope'): string {
  return refusal === 'role'
    ? `This operation needs the ${minimum} role or above`
    : `This operation needs the ${ROLE_SCOPE[minimum]} scope; the token's scope is narrower`;
}

const MAX_GRANTS = 1000;
const MAX_CLAIM_TEXT = 255;

function isText(value: unknown, max = MAX_CLAIM_TEXT): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

/** The optional text claims that are there (`jti`, `cred`), or the reason one is malformed. */
function optionalTexts(
  claims: Record<'jti' | 'cred', unknown>,
): Partial<Record<'jti' | 'cred', string>> | string {
  const present: Partial<Record<'jti' | 'cred', string>> = {};
  for (const name of ['jti', 'cred'] as const) {
    const value = claims[name];
    if (value === undefined) continue;
    if (!isText(value)) return `Token ${name} claim is invalid`;
    present[name] = value;
  }
  return present;
}

/**
 * Reads the principal from an already signature-checked payload, or returns the reason
 * the claims are unusable. The issuer/tenant relation is checked earlier (before any key
 * fetch), so here `tenant` is known to be valid.
 */
export function principalFromClaims(
  tenant: string,
  claims: Record<string, unknown>,
): Principal | string {
  const {
    sub,
    client_id: clientId,
    principal_type: principalType,
    role,
    scope,
    ver,
    exp,
    jti,
    cred,
  } = claims;
  if (!isText(sub)) return 'Token sub claim is missing or invalid';
  if (!isText(clientId)) return 'Token client_id claim is missing or invalid';
  if (
    typeof principalType !== 'string' ||
    !(PRINCIPAL_TYPES as readonly string[]).includes(principalType)
  ) {
    return 'Token principal_type claim is missing or invalid';
  }
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role))
    return 'Token role claim is missing or invalid';
  if (scope !== undefined && typeof scope !== 'string') return 'Token scope claim is invalid';
  if (typeof ver !== 'number' || !Number.isSafeInteger(ver) || ver < 1)
    return 'Token ver claim must be a positive integer';
  if (typeof exp !== 'number' || !Number.isFinite(exp))
    return 'Token exp claim is missing or invalid';
  const optional = optionalTexts({ jti, cred });
  if (typeof optional === 'string') return optional;
  const jkt = readBinding(claims.cnf);
  if (jkt === null) return 'Token cnf claim is invalid';
  const grants = readGrants(claims.grants);
  if (grants === undefined) return 'Token grants claim is invalid';
  const principal: Principal = {
    tenant,
    sub,
    clientId,
    principalType: principalType as PrincipalType,
    role: role as Role,
    grants,
    scope: scope ?? '',
    ver,
    exp,
  };
  Object.assign(principal, optional);
  if (jkt !== undefined) principal.jkt = jkt;
  return withActors(Object.assign(principal, authContextOf(claims)), claims.act);
}

/** `acr` and `auth_time`, informational (step-up reads them): a malformed value is as good as none, never a refusal. */
function authContextOf(claims: Record<string, unknown>): Pick<Principal, 'acr' | 'authTime'> {
  const { acr, auth_time: authTime } = claims;
  return {
    ...(isText(acr) ? { acr } : {}),
    ...(typeof authTime === 'number' && Number.isFinite(authTime) ? { authTime } : {}),
  };
}

/**
 * The `act` chain, outermost (current) actor first, or undefined when it is malformed or deeper
 * than MAX_ACTOR_DEPTH: such a token is refused, never read as one without actors (that would
 * skip the actors' revocation). Members besides `sub`, `ver`, `cred` and `act` are informational;
 * a `cred` that is there but malformed refuses the token, as the token's own `cred` does.
 */
function readActors(value: unknown): Actor[] | undefined {
  const actors: Actor[] = [];
  let act = value;
  while (act !== undefined) {
    if (actors.length === MAX_ACTOR_DEPTH) return undefined;
    if (typeof act !== 'object' || act === null || Array.isArray(act)) return undefined;
    const { sub, ver, cred } = act as { sub?: unknown; ver?: unknown; cred?: unknown };
    if (!isText(sub) || typeof ver !== 'number' || !Number.isSafeInteger(ver) || ver < 1)
      return undefined;
    if (cred !== undefined && !isText(cred)) return undefined;
    actors.push(Object.freeze(cred === undefined ? { sub, ver } : { sub, ver, cred }));
    act = (act as { act?: unknown }).act;
  }
  return actors;
}

/** The principal with its actor chain (an exchanged token), or the reason `act` is unusable. */
function withActors(principal: Principal, act: unknown): Principal | string {
  if (act === undefined) return principal;
  const actors = readActors(act);
  if (actors === undefined) return 'Token act claim is invalid';
  principal.actors = actors;
  return principal;
}

/** A SHA-256 thumbprint in base64url. */
const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

/**
 * `cnf.jkt`, undefined for an unbound token, or null when `cnf` binds the token to something
 * this server cannot check (another confirmation method, a malformed thumbprint): such a token
 * is refused rather than taken for an unbound one.
 */
function readBinding(cnf: unknown): string | undefined | null {
  if (cnf === undefined) return undefined;
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf)) return null;
  const members = Object.keys(cnf);
  const { jkt } = cnf as { jkt?: unknown };
  return members.length === 1 && typeof jkt === 'string' && THUMBPRINT.test(jkt) ? jkt : null;
}

function readGrants(value: unknown): Grant[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_GRANTS) return undefined;
  const grants: Grant[] = [];
  for (const item of value) {
    if (typeof item !== 'object' || item === null) return undefined;
    const { tag, permission } = item as { tag?: unknown; permission?: unknown };
    if (!isText(tag) || permission !== 'edit') return undefined;
    grants.push({ tag, permission });
  }
  return grants;
}
