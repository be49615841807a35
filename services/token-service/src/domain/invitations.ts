/**
 * Invitations: how a person joins a realm. An Account Admin invites an email with a role; the
 * link carries a random token (32 CSPRNG bytes, base64url), shown once to the admin (and
 * e-mailed by account-admin). Only HMAC-SHA-256(SECRET_PEPPER, token) is stored, as for client
 * secrets: the token is random, so a keyed fast hash is sound, and a lookup by digest compares
 * nothing an attacker can time (they cannot compute the digest of a guess).
 *
 * Acceptance is the realm's own page (entry-points/web/invitation-routes.ts): the invitee sets a
 * password; in one transaction the invitation is consumed by a conditional update and the person
 * is created, so two acceptances at once yield one person. The first sign-in follows at the
 * portal, where the tenant's factor policy applies as for anyone.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Invitation, InvitationWithUrl, UserRole } from '@plant/shared/token-service-client';
import type { InvitationLookup, InvitationRow } from '../data-access/invitation-repository.js';
import { InvitationNotFound, TenantNotFound, UserEmailTaken } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import type { PasswordCheckers } from './password-checkers.js';
import { assertTenantExists } from './tenants.js';

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

/** A new invitation and its link (shown once); a pending one for the same email is revoked. */
export async function createInvitation(
  ctx: Pick<IdentityContext, 'invitations' | 'secrets'>,
  settings: InvitationSettings,
  tenant: string,
  input: { email: string; role: UserRole; actor?: string | undefined },
): Promise<InvitationWithUrl> {
  const token = randomBytes(32).toString('base64url');
  const id = randomUUID();
  const outcome = await ctx.invitations.create({
    id,
    realm: tenant,
    email: input.email,
    role: input.role,
    tokenDigest: ctx.secrets.digest(token),
    createdBy: input.actor ?? null,
    expiresInSeconds: settings.ttlSeconds,
  });
  if (outcome === 'unknown-realm') throw new TenantNotFound();
  if (outcome === 'email-taken') throw new UserEmailTaken();
  const row = (await ctx.invitations.listPending(tenant)).find((i) => i.id === id);
  if (row === undefined) throw new InvitationNotFound();
  return { ...toInvitation(row), url: invitationUrl(settings.authUrl, tenant, token) };
}

export async function listInvitations(
  ctx: Pick<IdentityContext, 'invitations' | 'realms'>,
  tenant: string,
): Promise<Invitation[]> {
  const rows = await ctx.invitations.listPending(tenant);
  if (rows.length === 0) await assertTenantExists(ctx, tenant);
  return rows.map(toInvitation);
}

export async function revokeInvitation(
  ctx: Pick<IdentityContext, 'invitations' | 'realms'>,
  tenant: string,
  id: string,
): Promise<void> {
  if (await ctx.invitations.revoke(tenant, id)) return;
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
