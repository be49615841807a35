import type { Logger } from '@plant/shared/logging';
import type { OidcPayloadRepository } from './oidc-payload-repository.js';

/**
 * Expired oidc-provider rows (interactions, codes, sessions) are deleted this often, at most
 * SWEEP_BATCH a pass (SWEEP_BATCH / SWEEP_MS rows a second per replica, far above what the
 * sign-in start budgets let anyone create): a row is gone within seconds of expiring, never
 * left for a long sweep that would churn the table at once. Reads ignore expired rows anyway.
 */
const SWEEP_MS = 2_000;
const SWEEP_BATCH = 2_000;

/** Starts the sweep (one pass at a time); the timer is what `clearInterval` stops. */
export function startExpiredPayloadSweep(
  payloads: OidcPayloadRepository,
  logger: Logger,
): NodeJS.Timeout {
  let sweeping = false;
  const cleanup = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    payloads
      .deleteExpired(SWEEP_BATCH)
      .catch((err: Error) =>
        logger.warn({ err: { message: err.message } }, 'oidc payload cleanup failed'),
      )
      .finally(() => {
        sweeping = false;
      });
  }, SWEEP_MS);
  cleanup.unref();
  return cleanup;
}
