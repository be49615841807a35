/**
 * A tenant's maximum secret age: a secret works for `maxAgeDays` days from its creation and is
 * refused from that instant on. Computed from the creation time at every check (never stored
 * as a deadline), so changing the policy applies to existing secrets at once, counted from
 * when each was made, and a cached credential cannot outlive its secret.
 */
const DAY_MS = 86_400_000;

export function secretExpiresAt(
  createdAt: Date | string | null,
  maxAgeDays: number | null,
): Date | null {
  if (createdAt === null || maxAgeDays === null) return null;
  return new Date(new Date(createdAt).getTime() + maxAgeDays * DAY_MS);
}

/** True from the expiry instant on. */
export function isSecretExpired(
  createdAt: Date | string | null,
  maxAgeDays: number | null,
  now = Date.now(),
): boolean {
  const expiresAt = secretExpiresAt(createdAt, maxAgeDays);
  return expiresAt !== null && now >= expiresAt.getTime();
}

/**
 * When a secret stops working: its own expiry (given when it was added) or the realm's maximum
 * age counted from its creation, whichever comes first; null: neither applies.
 */
export function secretDeadline(
  createdAt: Date | string,
  expiresAt: Date | string | null,
  maxAgeDays: number | null,
): Date | null {
  const aged = secretExpiresAt(createdAt, maxAgeDays);
  const own = expiresAt === null ? null : new Date(expiresAt);
  if (aged === null) return own;
  return own === null || aged < own ? aged : own;
}
