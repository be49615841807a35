/**
 * What a code or passkey attempt spends: the failed-sign-in budget, the port this wing names for
 * it. Sign-in owns the budget (sign-in/sign-in-throttle.ts: its SignInThrottle is what the
 * composition root hands in here) and calls this wing for the factor steps of a sign-in; naming
 * the port on this side keeps second-factors below sign-in.
 */

/** The points an attempt holds: opaque here, handed back to the budget that gave them. */
export interface HeldPoints {
  readonly source: string;
}

/** No point left on a counter: come back after this many seconds. */
export interface BudgetRefusal {
  readonly retryAfterSeconds: number;
}

export interface AttemptBudget {
  /** The source's point, before anything about the person is read. */
  reserveSource(ip: string): Promise<HeldPoints | BudgetRefusal>;
  /** Then the person's points (`accountKey`: this wing's key for the person). */
  reserveAccount(
    held: HeldPoints,
    tenant: string,
    accountKey: string,
  ): Promise<HeldPoints | BudgetRefusal>;
  /** The attempt was not checked: every point goes back. */
  release(held: HeldPoints): Promise<void>;
  /** The attempt succeeded: its failures are forgotten, the other points go back. */
  succeeded(held: HeldPoints): Promise<void>;
}

export const isRefusal = (held: HeldPoints | BudgetRefusal): held is BudgetRefusal =>
  'retryAfterSeconds' in held;
