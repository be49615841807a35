import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Constant-time equality of two strings of any length (tokens, CSRF values). Both sides are
 * hashed to 32 bytes first, so the comparison never depends on where they differ, nor
 * throws on unequal lengths; the length itself is not secret.
 */
export function constantTimeEquals(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}
