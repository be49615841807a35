/**
 * A token bucket shared by every realm: the JWKS fetches that a token can cause without a
 * valid signature (a kid the realm's cached key set lacks) each take one, so made-up kids
 * spread over many real realms cost the token service at most `burst` fetches at once and
 * `perSecond` after that, however many realms and requests they name. Taking is synchronous,
 * so two requests can never both spend the last one.
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

  /** Spends one fetch if the budget has one; false means "not now". */
  take(): boolean {
    const now = this.now();
    // A clock stepped back refills nothing (and never drains).
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.refilledAt) / 1000) * this.perSecond);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
