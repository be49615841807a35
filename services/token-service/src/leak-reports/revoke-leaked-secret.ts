/**
 * Step 5 of a leak report (secret-scanning-route.ts), per token: find the live secret, revoke
 * it (or record the leak), and signal the change. A token without our prefix and a valid
 * checksum is answered without a database read; only a well-formed one is digested (HMAC under
 * the pepper) and looked up. A live secret is handled by its tenant's `leak_response`:
 *  - `revoke` (the default): the secret is removed and the token version bumped in one
 *    transaction (which queues the RISC credential-compromise event, the signal-outbox wing),
 *    then published (publishChange): every replica's credential cache and every resource
 *    server hear it, so the secret and the tokens minted with it stop at once; the account keeps
 *    its keys and trusted workloads;
 *  - `notify`: the secret keeps working; the leak is recorded and shown.
 * Either way the account's page lists where it leaked, and the realm's security events record
 * it with the actor "GitHub secret scanning". A repeated report of a secret already revoked is
 * recognised by its digest among the recorded leaks and changes nothing.
 */
import { isWellFormedClientSecret, publishChange } from '../credentials/index.js';
import type { IdentityContext } from '../platform/index.js';
import type { LeakReportEntry } from './parse-report.js';

/** Who the leaks and security events name as the reporter. */
export const GITHUB_REPORTER = 'GitHub secret scanning';

export type LeakContext = Pick<
  IdentityContext,
  'secrets' | 'credentialHygiene' | 'realms' | 'publisher'
>;

/** True when the token is one of our secrets that was live when (first) reported. */
export async function revokeLeakedSecret(
  ctx: LeakContext,
  entry: LeakReportEntry,
): Promise<boolean> {
  if (!isWellFormedClientSecret(entry.token)) return false;
  const digest = ctx.secrets.digest(entry.token);
  const report = { url: entry.url, source: entry.source, reporter: GITHUB_REPORTER };
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const secret = await ctx.credentialHygiene.findLiveSecret(digest);
    if (secret === undefined) break;
    const outcome = await ctx.credentialHygiene.recordLeak(secret, digest, report);
    // Reset, revoked or deleted between the lookup and the lock: look again (it may be gone).
    if (outcome === 'changed' || outcome === undefined) continue;
    if (outcome !== 'already-reported') await publishChange(ctx, secret.realm, outcome, {});
    return true;
  }
  return ctx.credentialHygiene.wasReported(digest);
}
