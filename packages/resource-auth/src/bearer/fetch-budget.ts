/**
 * A token bucket for calls that unsigned input can cause: up to `burst` at once, then
 * `perSecond`, however many requests ask. Bearer verification has two: the JWKS refetches that
 * a kid a realm's cached key set lacks can cause, shared by every realm (jwks-cache.ts), and the
 * realm-list loads (realm-directory.ts). Taking is synchronous, so two requests can never both
 * spend the last one.
 */
export class FetchBudget {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  /** Spends one call if the budget has one; false means "not now". */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** How long until `take` can succeed (0: now). */
  waitMs(): number {
    this.refill();
    if (this.tokens >= 1) return 0;
    return this.perSecond > 0
      ? Math.ceil(((1 - this.tokens) / this.perSecond) * 1000)
      : Number.POSITIVE_INFINITY;
  }

  private refill(): void {
    const now = this.now();
    // A clock stepped back refills nothing (and never drains).
    this.tokens = Math.min(
      this.burst,
      this.tokens + (Math.max(0, now - this.refilledAt) / 1000) * this.perSecond,
    );
    this.refilledAt = now;
  }
}
