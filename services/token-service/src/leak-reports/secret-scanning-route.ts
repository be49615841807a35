/**
 * Leak reports from GitHub secret scanning's partner program: a JSON array of
 * `{token, type, url, source}`, signed with a key GitHub publishes (secret-scanning-keys.ts).
 * One endpoint serves every realm: the secret itself says which account it is.
 *
 * The steps, in cost order, each in its own file:
 *  1. the signature headers are shape-checked before the body is read (verify-report-signature.ts);
 *  2. the body is read up to REPORT_MAX_BYTES (413 beyond);
 *  3. the signature over its exact bytes is verified with GitHub's key (verify-report-signature.ts);
 *  4. the body is parsed into report entries (parse-report.ts);
 *  5. per token: the live secret found, revoked or its leak recorded, the change signalled
 *     (revoke-leaked-secret.ts);
 *  6. the answer: GitHub's feedback per token (answer-leak-report.ts).
 */
import { rawJsonBody, type Route } from '@plant/shared/http';
import type { NextFunction, Request, Response } from 'express';
import { Counter, type Registry } from 'prom-client';
import { SecretScanningOff } from '../platform/index.js';
import { answerLeakReport } from './answer-leak-report.js';
import { parseReport, REPORT_MAX_BYTES } from './parse-report.js';
import type { LeakContext } from './revoke-leaked-secret.js';
import type { SecretScanningKeys } from './secret-scanning-keys.js';
import { signatureHeaders, verifyReportSignature } from './verify-report-signature.js';

export interface SecretScanningDeps {
  identity: LeakContext;
  /** Undefined when SECRET_SCANNING_GITHUB_KEYS is empty: the endpoint answers 404. */
  keys: SecretScanningKeys | undefined;
}

/** The reports' metrics: verified reports and their tokens by feedback label (bounded label sets). */
function reportMetrics(registry: Registry) {
  return {
    reports: new Counter({
      name: 'secret_scanning_reports_total',
      help: 'Leak reports whose signature verified',
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'secret_scanning_tokens_total',
      help: 'Tokens of verified leak reports by feedback label (true_positive: one of our live secrets)',
      labelNames: ['label'],
      registers: [registry],
    }),
  };
}

export const SECRET_SCANNING_PATH = '/secret-scanning/github';

/**
 * `POST /secret-scanning/github`: GitHub secret scanning's partner reports, for every realm.
 * Public and unauthenticated but for the signature (steps 1 and 3).
 */
export function secretScanningRoute(
  { identity, keys }: SecretScanningDeps,
  registry: Registry,
): Route {
  const readBody = rawJsonBody({ limit: REPORT_MAX_BYTES });
  const metrics = reportMetrics(registry);
  return {
    method: 'POST',
    path: SECRET_SCANNING_PATH,
    input: { body: { type: 'json', fields: [] } },
    handlers: [
      (req: Request, _res: Response, next: NextFunction) => {
        if (keys === undefined) throw new SecretScanningOff();
        signatureHeaders(req.headers);
        next();
      },
      readBody,
      async (req: Request, res: Response) => {
        const body = req.body as Buffer;
        await verifyReportSignature(keys!, req.headers, body);
        metrics.reports.inc();
        const feedback = await answerLeakReport(identity, parseReport(body));
        for (const { label } of feedback) metrics.tokens.inc({ label });
        res.setHeader('cache-control', 'no-store').json(feedback);
      },
    ],
  };
}
