/**
 * Invitations: how a person joins a realm. An Account Admin invites an email with a role; the
 * link carries a random token (32 CSPRNG bytes, base64url), shown once to the admin (and
 * e-mailed by account-admin). Only HMAC-SHA-256(SECRET_PEPPER, token) is stored, as for client
 * secrets: the token is random, so a keyed fast hash is sound, and a lookup by digest compares
 * nothing an attacker can time (they cannot compute the digest of a guess).
 *
 * Acceptance is the realm's own page (people/invitation-routes.ts): the invitee sets a
 * password; in one transaction the invitation is consumed by a conditional update and the person
 * is created, so two acceptances at once yield one person. The first sign-in follows at the
 * portal, where the tenant's factor policy applies as for anyone.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { normalizeMailbox, pageLimit, positionCursor } from '@plant/shared/api';
import { meets, takePrecondition } from '@plant/shared/http';
import {
  INVITATION_PAGE_MAX,
  INVITATION_REVISION,
  MAX_PENDING_INVITATIONS,
  type Invitation,
  type InvitationPage,
  type InvitationWithUrl,
  type UserRole,
} from '@plant/shared/token-service-client';
import type { InvitationLookup, InvitationRow } from './invitation-repository.js';
import {
  InvitationLimitReached,
  InvitationNotFound,
  PreconditionFailed,
  TenantNotFound,
  UserEmailTaken,
  type IdentityContext,
} from '../platform/index.js';
import type { PasswordCheckers } from '../passwords/index.js';
import { assertTenantExists } from '../realms/index.js';

/** 32 random bytes in base64url: 43 characters, nothing else. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface InvitationSettings {
  /** The token service's public base URL: links point at its realm pages. */
  authUrl: string;
  ttlSeconds: number;
}

export function invitationUrl(authUrl: string, tenant: string, token: string): string {
  return `${authUrl.replace(/\/+$/, '')}/realms/${encodeURIComponent(tenant)}/invitation?token=${token}`;
}

function toInvitation(row: InvitationRow): Invitation {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    created_at: new Date(row.created_at).toISOString(),
    created_by: row.created_by,
    expires_at: new Date(row.expires_at).toISOString(),
  };
}

/**
 * A new invitation and its link (shown once); a pending one for the same email is revoked. The
 * email is recorded with its domain in lower case (`normalizeMailbox`): the address the mail
 * goes to, as mailers fold it. A tenant with MAX_PENDING_INVITATIONS pending takes no new email
 * (409); re-inviting a pending email replaces it and still works.
 */
export async function createInvitation(
  ctx: Pick<IdentityContext, 'invitations' | 'secrets'>,
  settings: InvitationSettings,
  tenant: string,
  input: { email: string; role: UserRole; actor?: string | undefined },
): Promise<InvitationWithUrl> {
  const token = randomBytes(32).toString('base64url');
  const outcome = await ctx.invitations.create(
    {
      id: randomUUID(),
      realm: tenant,
      email: normalizeMailbox(input.email),
      role: input.role,
      tokenDigest: ctx.secrets.digest(token),
      createdBy: input.actor ?? null,
      expiresInSeconds: settings.ttlSeconds,
    },
    MAX_PENDING_INVITATIONS,
  );
  if (outcome.kind === 'unknown-realm') throw new TenantNotFound();
  if (outcome.kind === 'email-taken') throw new UserEmailTaken();
  if (outcome.kind === 'limit-reached') throw new InvitationLimitReached();
  return { ...toInvitation(outcome.row), url: invitationUrl(settings.authUrl, tenant, token) };
}

/** `limit` of `GET …/invitations`: the whole bound by default (an older caller sends none and reads every pending one). */
const INVITATION_LIMIT = pageLimit(
  INVITATION_PAGE_MAX,
  INVITATION_PAGE_MAX,
  'Maximum number of invitations to return',
);
/** The cursor of the next page: opaque, the position of the last invitation answered. */
const INVITATION_CURSOR = positionCursor(
  'before:',
  'cursor is not valid: use the next_cursor of the previous page',
  { min: 1n },
);

/** What the query of `GET …/invitations` may name. */
export const INVITATIONS_QUERY = ['limit', 'cursor'] as const;

/** The query of `GET …/invitations`: 400 for a limit or a cursor the API did not make. */
export function parseInvitationsQuery(query: Record<string, unknown>): {
  limit: number;
  before: string | undefined;
} {
  return { limit: INVITATION_LIMIT.parse(query), before: INVITATION_CURSOR.decode(query.cursor) };
}

/** A page of the realm's pending invitations, newest first, and the cursor of the next one. */
export async function listInvitations(
  ctx: Pick<IdentityContext, 'invitations' | 'realms'>,
  tenant: string,
  page: { limit: number; before: string | undefined },
): Promise<InvitationPage> {
  const { rows, more } = await ctx.invitations.listPending(tenant, {
    limit: page.limit,
    ...(page.before === undefined ? {} : { beforeSeq: page.before }),
  });
  if (rows.length === 0 && page.before === undefined) await assertTenantExists(ctx, tenant);
  const last = rows.at(-1);
  return {
    invitations: rows.map(toInvitation),
    next_cursor: more && last !== undefined ? INVITATION_CURSOR.encode(last.seq) : null,
  };
}

/** Revokes a pending invitation; the invitation as it was (its email names it in the audit trail). */
export async function revokeInvitation(
  ctx: Pick<IdentityContext, 'invitations' | 'realms'>,
  tenant: string,
  id: string,
): Promise<Invitation> {
  // `If-Match` (conditionalRoute): a pending invitation is always at INVITATION_REVISION; the
  // revoking update itself decides a race, as only one finds the invitation still pending.
  const precondition = takePrecondition();
  if (precondition !== undefined && !meets(precondition, INVITATION_REVISION))
    throw new PreconditionFailed();
  const row = await ctx.invitations.revoke(tenant, id);
  if (row !== undefined) return toInvitation(row);
  await assertTenantExists(ctx, tenant);
  throw new InvitationNotFound();
}

/** The invitation a link names (any state), or undefined for a token we never issued here (malformed ones included). */
export async function findInvitation(
  ctx: Pick<IdentityContext, 'invitations' | 'secrets'>,
  tenant: string,
  token: string,
): Promise<InvitationLookup | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  return ctx.invitations.findByDigest(tenant, ctx.secrets.digest(token));
}

export type Acceptance =
  | { kind: 'accepted'; sub: string }
  | { kind: 'unknown' | 'expired' | 'revoked' | 'accepted-before' | 'email-taken' }
  | { kind: 'busy' };

/**
 * Sets the password and creates the person. The link is checked first (a used or revoked link
 * costs no hash); the hash runs on the password checkers (never queued: busy when all are).
 */
export async function acceptInvitation(
  deps: { identity: Pick<IdentityContext, 'invitations' | 'secrets'>; checkers: PasswordCheckers },
  tenant: string,
  input: { token: string; password: string; address: string | null; requestId: string | null },
): Promise<Acceptance> {
  const found = await findInvitation(deps.identity, tenant, input.token);
  if (found === undefined) return { kind: 'unknown' };
  if (found.state !== 'pending')
    return { kind: found.state === 'accepted' ? 'accepted-before' : found.state };
  const hashing = deps.checkers.tryHash(input.password);
  if (hashing === undefined) return { kind: 'busy' };
  const passwordHash = await hashing;
  return deps.identity.invitations.accept(
    tenant,
    deps.identity.secrets.digest(input.token),
    { sub: randomUUID(), passwordHash },
    { address: input.address, requestId: input.requestId },
  );
}
