/**
 * Leak reports from GitHub secret scanning's partner program: a JSON array of
 * `{token, type, url, source}`, signed (ECDSA P-256 / SHA-256 over the exact body, the DER
 * signature in base64) with a key GitHub publishes. One endpoint serves every realm: the
 * secret itself says which account it is.
 *
 * The order is the cost order: the signature is checked over the raw bytes before anything
 * is parsed; a token without our prefix and a valid checksum is answered without a database
 * read; only a well-formed one is digested (HMAC under the pepper) and looked up. A live
 * secret is handled by its tenant's `leak_response`:
 *  - `revoke` (the default): the secret is removed and the token version bumped in one
 *    transaction, then published (publishChange): every replica's credential cache and every
 *    resource server hear it, so the secret and the tokens minted with it stop at once; the
 *    account keeps its keys and trusted workloads;
 *  - `notify`: the secret keeps working; the leak is recorded and shown.
 * Either way the account's page lists where it leaked, and the realm's security events record
 * it with the actor "GitHub secret scanning". A repeated report of a secret already revoked is
 * recognised by its digest among the recorded leaks and changes nothing.
 *
 * The answer is GitHub's feedback: per token, its SHA-256 (`token_hash`, hex), its `type`, and
 * `true_positive` (a secret of ours that was live when first reported) or `false_positive`
 * (anything else: not ours, a bad checksum, or no longer live, such as a secret reset before
 * the report). Never the secret.
 */
import { createHash, verify, type KeyObject } from 'node:crypto';
import { BadRequest } from '@plant/shared/api';
import { z } from 'zod';
import { isWellFormedClientSecret, publishChange } from '../credentials/index.js';
import { InvalidReportSignature, type IdentityContext } from '../platform/index.js';

/** Who the leaks and security events name as the reporter. */
export const GITHUB_REPORTER = 'GitHub secret scanning';
/** Tokens one report may carry (GitHub batches a few); a longer report is refused whole. */
export const MAX_TOKENS_PER_REPORT = 100;
/** The body bound: 100 tokens with their URLs fit well within it. */
export const REPORT_MAX_BYTES = 256 * 1024;
const SIGNATURE_SHAPE = /^[A-Za-z0-9+/]{40,200}={0,2}$/;
const KEY_ID_SHAPE = /^[\x21-\x7e]{1,256}$/;

const ReportSchema = z
  .array(
    z.object({
      token: z.string().max(1024),
      type: z.string().max(256),
      url: z.string().max(2048).default(''),
      source: z.string().max(128).default(''),
    }),
    { error: 'the report must be a JSON array of {token, type, url, source}' },
  )
  .max(MAX_TOKENS_PER_REPORT, { error: `a report holds at most ${MAX_TOKENS_PER_REPORT} tokens` });

export type LeakReportEntry = z.infer<typeof ReportSchema>[number];

export interface LeakFeedback {
  token_hash: string;
  token_type: string;
  label: 'true_positive' | 'false_positive';
}

/** The headers' values, shape-checked before any work: a forged header costs nothing. */
export function signatureHeaders(
  keyId: string | string[] | undefined,
  signature: string | string[] | undefined,
): { keyId: string; signature: Buffer } {
  if (typeof keyId !== 'string' || !KEY_ID_SHAPE.test(keyId))
    throw new InvalidReportSignature('Github-Public-Key-Identifier is missing or malformed');
  if (typeof signature !== 'string' || !SIGNATURE_SHAPE.test(signature))
    throw new InvalidReportSignature('Github-Public-Key-Signature is missing or malformed');
  return { keyId, signature: Buffer.from(signature, 'base64') };
}

/** Throws `InvalidReportSignature` unless `signature` is the key's ECDSA P-256 / SHA-256 signature of `body`. */
export function assertSignedBy(key: KeyObject | undefined, body: Buffer, signature: Buffer): void {
  if (key === undefined) throw new InvalidReportSignature('the key identifier is not known');
  let valid = false;
  try {
    valid = verify('sha256', body, key, signature);
  } catch {
    valid = false;
  }
  if (!valid) throw new InvalidReportSignature();
}

/** The verified body as report entries: 400 for anything else. */
export function parseReport(body: Buffer): LeakReportEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadRequest('Request body is not valid JSON');
  }
  const parsed = ReportSchema.safeParse(value);
  if (!parsed.success) throw new BadRequest(parsed.error.issues[0]?.message ?? 'invalid report');
  return parsed.data;
}

export type LeakContext = Pick<
  IdentityContext,
  'secrets' | 'credentialHygiene' | 'realms' | 'publisher'
>;

/** Acts on each token of a verified report, one after another; the feedback in the report's order. */
export async function answerLeakReport(
  ctx: LeakContext,
  entries: LeakReportEntry[],
): Promise<LeakFeedback[]> {
  const feedback: LeakFeedback[] = [];
  for (const entry of entries) {
    const live = await actOnToken(ctx, entry);
    feedback.push({
      token_hash: createHash('sha256').update(entry.token, 'utf8').digest('hex'),
      token_type: entry.type,
      label: live ? 'true_positive' : 'false_positive',
    });
  }
  return feedback;
}

/** True when the token is one of our secrets that was live when (first) reported. */
async function actOnToken(ctx: LeakContext, entry: LeakReportEntry): Promise<boolean> {
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
