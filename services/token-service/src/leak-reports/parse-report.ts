/** Step 4 of a leak report (secret-scanning-route.ts): the verified body as report entries. */
import { BadRequest } from '@plant/shared/api';
import { z } from 'zod';

/** Tokens one report may carry (GitHub batches a few); a longer report is refused whole. */
export const MAX_TOKENS_PER_REPORT = 100;
/** The body bound: 100 tokens with their URLs fit well within it. */
export const REPORT_MAX_BYTES = 256 * 1024;

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
