/**
 * Portal sessions: who signed in, from which browser and address, and the role, token version
 * and factor generation the token service last confirmed. Sessions and pending sign-ins live server-side
 * (session-store.ts; the browser holds only a random id); the portal opens, loads
 * and ends them here, and keeps a sign-in in progress (saved at the start, taken once at the
 * callback).
 *
 * A change to a person (role change, disable, removal, factor reset, sign-out everywhere) bumps
 * their token version and is published to every replica's revocation map, the one bearer
 * tokens are checked against. Every request with a session checks the session's version
 * against that map (a lookup in memory): 'revoked' re-reads the person from the token service
 * (ending the session when they are gone or disabled, otherwise taking the new role and
 * version), so a change reaches the person's next request on every replica.
 *
 * A factor belongs to the person, not to the session, so the same re-read also ends the
 * session when a factor was taken away from the person since it began (their factor
 * generation moved: a reset, a removal; whoever holds the session may hold the lost
 * authenticator), and when the person is now an Account Admin without a factor where the
 * policy requires one (promoted, the policy switched on, the last factor removed): their next
 * sign-in asks the password and enrols before it enters. A person who enrolled a factor since
 * the session began needs it for sensitive actions from then on (step-up). Each of these
 * changes bumps the person's token version, so the re-read happens at the next request. 'unavailable' (no
 * map and no answer from the token service) fails closed with 503, as a bearer token does.
 *
 * The map keeps an entry only for the token lifetime plus the skew margin (at least 90 s), as
 * long as a bearer token could need it; a session lives for hours. So a session also re-reads
 * its person once CONFIRM_INTERVAL_MS (60 s, below any entry's life) has passed since the last
 * read: a change newer than the last read is still in the map, an older one was read. That
 * periodic read tolerates a token service that does not answer (the session keeps what it
 * knows; every change needs the token service anyway); the read a 'revoked' verdict asks for
 * does not (503).
 */
import { AuthUnavailable, type RevocationChecker } from '@plant/resource-auth';
import { AppError } from '@plant/shared/api';
import { meets, takePrecondition } from '@plant/shared/http';
import type { TokenServiceClient, User } from '@plant/shared/token-service-client';
import {
  USER_AGENT_MAX,
  type ListedSession,
  type PendingSignIn,
  type Session,
  type SessionStore,
} from './session-store.js';
import {
  type Actor,
  actorLabel,
  assertCanManage,
  type RequestMeta,
  FACTOR_ACR,
  PersonNotFound,
  PreconditionFailed,
  SessionNotFound,
  TokenServiceUnavailable,
  assertRecentFactor,
  hasSecondFactor,
} from '../platform/index.js';
import { recordIrreversible, type ManagementDeps } from '../audit/index.js';

export type {
  ListedSession,
  PendingSignIn,
  Session,
  SessionStore,
} from './session-store.js';

export function actorFromSession(session: Session): Actor {
  return {
    tenant: session.tenant,
    sub: session.sub,
    email: session.email,
    type: 'user',
    role: session.role,
    via: 'session',
    ...(session.stepUpRequired === true ? { stepUpRequired: true } : {}),
    ...(session.factorAt === undefined ? {} : { factorAt: session.factorAt }),
  };
}

/** Where a request came from, as a session records it. */
export interface SeenFrom {
  address: string | null;
  userAgent: string | null;
}

/** The User-Agent as a session keeps it: control characters dropped, cut to USER_AGENT_MAX. */
export function userAgentOf(header: unknown): string | null {
  if (typeof header !== 'string') return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = header.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean === '' ? null : clean.slice(0, USER_AGENT_MAX);
}

/** What the ID token of a sign-in (or step-up) says about the person's second factor. */
export interface FactorClaims {
  acr?: unknown;
  auth_time?: unknown;
  factors_enrolled?: unknown;
}

/**
 * `factorAt` when the realm verified a second factor at `auth_time` (acr factor), and whether
 * sensitive actions need one: the person has a factor (`factors_enrolled`). A tenant whose
 * policy requires a factor for Account Admins makes them enrol one before their sign-in
 * completes, so for them `factors_enrolled` is true as well.
 */
export function factorStateOf(claims: FactorClaims): Pick<Session, 'factorAt' | 'stepUpRequired'> {
  const authTime = claims.auth_time;
  const verified =
    claims.acr === FACTOR_ACR && typeof authTime === 'number' && Number.isFinite(authTime);
  return {
    stepUpRequired: claims.factors_enrolled === true,
    ...(verified ? { factorAt: authTime * 1000 } : {}),
  };
}

/** What the sign-in callback knows of the person who signed in. */
export type NewSession = Omit<Session, 'createdAt' | 'lastSeenAt' | 'handle'>;

/** Opens a session for a person who just signed in (role and version just confirmed); returns its new id. */
export function openSession(
  store: SessionStore,
  person: NewSession,
  ttlSeconds: number,
): Promise<string> {
  const now = Date.now();
  return store.create({ ...person, createdAt: now, lastSeenAt: now }, ttlSeconds);
}

/** How often a session's "last seen" (and address) is written: not on every request. */
export const LAST_SEEN_INTERVAL_MS = 60_000;

export interface LoadSessionDeps {
  store: SessionStore;
  tokenService: TokenServiceClient;
  /** The revocation map bearer tokens are checked against; without one (some component tests) no check. */
  revocation?: RevocationChecker | undefined;
}

/** How long a session goes without re-reading its person (below the shortest life of a revocation entry). */
export const CONFIRM_INTERVAL_MS = 60_000;

type Confirmed = Pick<
  Session,
  'role' | 'email' | 'tokenVersion' | 'confirmedAt' | 'stepUpRequired'
>;

/**
 * Why a session of this person may not go on although the person is active: a factor was taken
 * away since the session began, or the realm requires a factor they do not hold.
 */
export function sessionVoidedByFactors(
  user: Pick<User, 'factor_generation' | 'factor_required' | 'factors'>,
  sessionGeneration: number | undefined,
): boolean {
  if ((user.factor_generation ?? 0) > (sessionGeneration ?? 0)) return true;
  return user.factor_required === true && !hasSecondFactor(user);
}

/**
 * The person as the token service has them now; 'gone' when removed or disabled; 'unknown' when
 * the token service does not answer and `required` is false (else 503).
 */
async function currentPerson(
  tokenService: TokenServiceClient,
  session: Session,
  required: boolean,
): Promise<Confirmed | 'gone' | 'unknown'> {
  try {
    const user = await tokenService.getUser(session.tenant, session.sub);
    if ((user as { status?: unknown }).status === 'disabled') return 'gone';
    if (sessionVoidedByFactors(user, session.factorGeneration)) return 'gone';
    return {
      role: user.role,
      email: user.email,
      tokenVersion: typeof user.token_version === 'number' ? user.token_version : 0,
      confirmedAt: Date.now(),
      // Never lowered: a factor enrolled since sign-in is needed from now on.
      stepUpRequired: session.stepUpRequired === true || hasSecondFactor(user),
    };
  } catch (err) {
    if (err instanceof TokenServiceUnavailable) {
      if (required) throw new AuthUnavailable();
      return 'unknown';
    }
    if (err instanceof AppError && err.status === 404) return 'gone';
    throw err;
  }
}

/**
 * The session with this id, checked against the revocation map; undefined when there is none
 * (any more). Records `seen` (address, and last seen) at most every LAST_SEEN_INTERVAL_MS.
 */
export async function loadSession(
  { store, tokenService, revocation }: LoadSessionDeps,
  id: string,
  seen: SeenFrom,
): Promise<Session | undefined> {
  const session = await store.get(id);
  if (session === undefined) return undefined;
  let current = session;
  if (revocation !== undefined) {
    const verdict = await revocation.check(session.tenant, session.sub, session.tokenVersion ?? 0);
    if (verdict === 'unavailable') throw new AuthUnavailable();
    const revoked = verdict === 'revoked';
    const due = Date.now() - (session.confirmedAt ?? session.createdAt) >= CONFIRM_INTERVAL_MS;
    if (revoked || due) {
      const person = await currentPerson(tokenService, session, revoked);
      if (person === 'gone') {
        await store.destroy(id);
        return undefined;
      }
      if (person !== 'unknown') current = { ...session, ...person };
    }
  }
  const now = Date.now();
  const stale = now - session.lastSeenAt >= LAST_SEEN_INTERVAL_MS;
  if (stale) current = { ...current, lastSeenAt: now, address: seen.address ?? current.address };
  if (current !== session) await store.update(id, current);
  return current;
}

export async function endSession(store: SessionStore, id: string): Promise<void> {
  await store.destroy(id);
}

/** A session as `/api/v1/me/sessions` shows it. */
export interface SessionView {
  id: string;
  browser: string | null;
  address: string | null;
  started_at: string;
  last_seen_at: string;
  current: boolean;
}

function toView(session: ListedSession, currentHandle: string | undefined): SessionView {
  return {
    id: session.handle,
    browser: session.userAgent,
    address: session.address,
    started_at: new Date(session.createdAt).toISOString(),
    last_seen_at: new Date(session.lastSeenAt).toISOString(),
    current: session.handle === currentHandle,
  };
}

/** A person's own portal sessions, newest first; `current` marks the one asking (none for a bearer caller). */
export async function listOwnSessions(
  store: SessionStore,
  actor: Actor,
  currentHandle: string | undefined,
): Promise<SessionView[]> {
  if (actor.type !== 'user') return [];
  const sessions = await store.listForPerson(actor.tenant, actor.sub);
  return sessions.map((s) => toView(s, currentHandle));
}

/** A handle as the store makes them (43 base64url characters): anything else names no session. */
const HANDLE = /^[A-Za-z0-9_-]{43}$/;

/** The audited use cases' deps (as the service-account ones have them) and the session store. */
export interface SessionAdminDeps extends ManagementDeps {
  store: SessionStore;
}

/**
 * A session's revision, the validator of its `ETag`: a session is begun and then ended, never
 * changed (its expiry slides, which is not a change anyone else makes), so while it lasts it
 * has this one state (docs/decisions/0045-etag-on-the-policy-and-invitations.md).
 */
export const SESSION_REVISION = 1;

/**
 * Ends one of the actor's own sessions (the current one too: that is a sign-out); audited.
 * Under `If-Match` (conditionalRoute) another tag than SESSION_REVISION's is 412; the store's
 * deletion decides a race, as only one finds the session, and the loser's 404 is 412.
 */
export async function endOwnSession(
  deps: SessionAdminDeps,
  actor: Actor,
  meta: RequestMeta,
  handle: string,
): Promise<void> {
  const precondition = takePrecondition();
  if (precondition !== undefined && !meets(precondition, SESSION_REVISION))
    throw new PreconditionFailed();
  if (actor.type !== 'user' || !HANDLE.test(handle)) throw new SessionNotFound();
  if (!(await deps.store.destroyByHandle(actor.tenant, actor.sub, handle)))
    throw new SessionNotFound();
  // The session is gone whatever happens next: retried, then logged for replay (never a 500 after the fact).
  await recordIrreversible(deps, {
    tenant: actor.tenant,
    actorSub: actor.sub,
    actorEmail: actor.email,
    actorType: actor.type,
    action: 'session.end',
    targetType: 'session',
    targetClientId: handle,
    targetName: actorLabel(actor),
    details: {},
    requestId: meta.requestId,
    address: meta.address,
  });
}

/** A person's id as the token service makes them (a UUID): anything else names nobody. */
const PERSON_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Signs a person out everywhere (Account Admin, with a recent second factor): the token service
 * bumps their version (every replica refuses their sessions' old version and bearer tokens) and
 * ends their sign-in sessions at the realm; then their portal sessions are deleted here.
 * Audited with how many portal sessions ended.
 */
export async function signOutEverywhere(
  deps: SessionAdminDeps,
  actor: Actor,
  meta: RequestMeta,
  personId: string,
): Promise<{ sessions_ended: number }> {
  assertCanManage(actor);
  assertRecentFactor(actor, 'sign-out-everywhere');
  if (!PERSON_ID.test(personId)) throw new PersonNotFound();
  const person = await deps.tokenService.signOutEverywhere(actor.tenant, personId);
  const ended = await deps.store.destroyAllForPerson(actor.tenant, personId);
  await recordIrreversible(deps, {
    tenant: actor.tenant,
    actorSub: actor.sub,
    actorEmail: actor.email,
    actorType: actor.type,
    action: 'user.sign_out_everywhere',
    targetType: 'user',
    targetClientId: personId,
    targetName: person.email,
    details: { sessions_ended: ended },
    requestId: meta.requestId,
    address: meta.address,
  });
  return { sessions_ended: ended };
}

/** How long a started sign-in may take to come back to the callback. */
export const SIGN_IN_TTL_SECONDS = 600;

/** Remembers a started sign-in under its OAuth `state` until the callback takes it. */
export async function savePendingSignIn(
  store: SessionStore,
  state: string,
  pending: PendingSignIn,
): Promise<void> {
  await store.savePendingSignIn(state, pending, SIGN_IN_TTL_SECONDS);
}

/** The sign-in started under this `state`, removed as it is read: a state is good for one callback only. */
export function takePendingSignIn(
  store: SessionStore,
  state: string,
): Promise<PendingSignIn | undefined> {
  return store.takePendingSignIn(state);
}

/**
 * A step-up came back for the person of this session: its factor time (and whether step-up
 * applies) follow the new ID token; the session keeps its id, cookie and everything else.
 */
export async function recordStepUp(
  store: SessionStore,
  id: string,
  session: Session,
  claims: FactorClaims,
): Promise<void> {
  const state = factorStateOf(claims);
  await store.update(id, {
    ...session,
    stepUpRequired: state.stepUpRequired === true || session.stepUpRequired === true,
    ...(state.factorAt === undefined ? {} : { factorAt: state.factorAt }),
  });
}
