/**
 * Step 6 of a leak report (secret-scanning-route.ts): each token acted on (step 5), then GitHub's
 * feedback: per token, its SHA-256 (`token_hash`, hex), its `type`, and `true_positive` (a
 * secret of ours that was live when first reported) or `false_positive` (anything else: not
 * ours, a bad checksum, or no longer live, such as a secret reset before the report). Never the
 * secret.
 */
import { createHash } from 'node:crypto';
import type { LeakReportEntry } from './parse-report.js';
import { type LeakContext, revokeLeakedSecret } from './revoke-leaked-secret.js';

export interface LeakFeedback {
  token_hash: string;
  token_type: string;
  label: 'true_positive' | 'false_positive';
}

/** Acts on each token of a verified report, one after another; the feedback in the report's order. */
export async function answerLeakReport(
  ctx: LeakContext,
  entries: LeakReportEntry[],
): Promise<LeakFeedback[]> {
  const feedback: LeakFeedback[] = [];
  for (const entry of entries) {
    const live = await revokeLeakedSecret(ctx, entry);
    feedback.push({
      token_hash: createHash('sha256').update(entry.token, 'utf8').digest('hex'),
      token_type: entry.type,
      label: live ? 'true_positive' : 'false_positive',
    });
  }
  return feedback;
}
