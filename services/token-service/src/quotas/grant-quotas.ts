import type { Logger } from '@plant/shared/logging';
import { Counter, type Registry } from 'prom-client';
import type { ClientCredentialRow, CredentialAuditEvent } from '../credentials/index.js';
import type { GrantQuotaCounter } from './grant-quota-counter.js';
import { GrantQuotaExceeded } from '../platform/index.js';

export interface GrantQuotasDeps {
  counter: GrantQuotaCounter;
  /** Where the first grant over a quota in a window is recorded (the realm's security events). */
  recordEvent: (event: CredentialAuditEvent) => Promise<void>;
  metrics: Registry;
  logger: Logger;
}

/**
 * Per-account grant quotas, checked once the client has authenticated (a wrong secret never
 * spends an account's quota, so no one can exhaust another's), in the account's mode:
 *  - `off`: nothing is counted, and the grant waits on nothing here;
 *  - `log`: counted; a grant over the quota is counted in `grant_quota_checks_total` and the
 *    first one of each window writes a security event, and it is issued;
 *  - `enforce`: the same, and a grant over the quota is refused (429, Retry-After: the rest of
 *    the window).
 * The metric's labels are the mode and the outcome, never the account: its series stay a fixed
 * handful however many accounts exist. The event is written once per account and window
 * across all replicas: only the grant that made the count exactly one over the quota writes it.
 */
export class GrantQuotas {
  readonly #counter: GrantQuotaCounter;
  readonly #recordEvent: GrantQuotasDeps['recordEvent'];
  /** The metric's series, one per mode and outcome, looked up once (a label lookup per grant otherwise). */
  readonly #checks: Record<'log' | 'enforce', Record<'within' | 'over', Counter.Internal>>;
  readonly #logger: Logger;

  constructor({ counter, recordEvent, metrics, logger }: GrantQuotasDeps) {
    this.#counter = counter;
    this.#recordEvent = recordEvent;
    this.#logger = logger;
    const checks = new Counter({
      name: 'grant_quota_checks_total',
      help: 'Client-credentials grants counted against a quota, by mode (log, enforce) and outcome (within, over)',
      labelNames: ['mode', 'outcome'],
      registers: [metrics],
    });
    const series = (mode: 'log' | 'enforce') => ({
      within: checks.labels(mode, 'within'),
      over: checks.labels(mode, 'over'),
    });
    this.#checks = { log: series('log'), enforce: series('enforce') };
  }

  /** Undefined when the account has no quota in force; else resolves, or rejects with `GrantQuotaExceeded` (enforce). */
  check(credential: ClientCredentialRow): Promise<void> | undefined {
    const mode = credential.quota_mode;
    if (mode === 'off') return undefined;
    return this.#count(credential, mode);
  }

  async #count(credential: ClientCredentialRow, mode: 'log' | 'enforce'): Promise<void> {
    const { realm, sub, quota_per_minute: limit } = credential;
    const { consumed, msBeforeNext } = await this.#counter.count(realm, sub);
    if (consumed <= limit) {
      this.#checks[mode].within.inc();
      return;
    }
    this.#checks[mode].over.inc();
    // Awaited (once per account and window): when the caller sees its 429, the trail has it.
    if (consumed === limit + 1) await this.#recordOver(credential);
    if (mode === 'enforce')
      throw new GrantQuotaExceeded(Math.max(1, Math.ceil(msBeforeNext / 1000)), limit);
  }

  #recordOver({
    realm,
    sub,
    quota_mode: mode,
    quota_per_minute: limit,
  }: ClientCredentialRow): Promise<void> {
    return this.#recordEvent({
      realm,
      actorLabel: 'grant quota',
      action: 'service_account.quota_exceeded',
      targetSub: sub,
      details: { mode, per_minute: limit },
    }).catch((err: Error) =>
      this.#logger.warn({ err: { message: err.message }, sub }, 'quota event not recorded'),
    );
  }
}
