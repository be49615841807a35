import { rawJsonBody, type Route } from '@plant/shared/http';
import type { NextFunction, Request, Response } from 'express';
import { KeysUnavailable, type SecretScanningKeys } from './secret-scanning-keys.js';
import { SecretScanningOff } from '../platform/index.js';
import {
  answerLeakReport,
  assertSignedBy,
  parseReport,
  REPORT_MAX_BYTES,
  signatureHeaders,
  type LeakContext,
} from './secret-scanning.js';
import { ServiceUnavailable } from '@plant/shared/api';
import { Counter, type Registry } from 'prom-client';

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
 * Public and unauthenticated but for the signature: the headers are shape-checked before the
 * body is read, the body is read up to REPORT_MAX_BYTES (413 beyond), and the signature over
 * its exact bytes is checked before it is parsed (leak-reports/secret-scanning.ts).
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
        signatureHeaders(
          req.headers['github-public-key-identifier'],
          req.headers['github-public-key-signature'],
        );
        next();
      },
      readBody,
      async (req: Request, res: Response) => {
        const { keyId, signature } = signatureHeaders(
          req.headers['github-public-key-identifier'],
          req.headers['github-public-key-signature'],
        );
        const body = req.body as Buffer;
        const key = await keys!.keyFor(keyId).catch((err: unknown) => {
          if (err instanceof KeysUnavailable)
            throw new ServiceUnavailable('The verification keys are unavailable; retry later');
          throw err;
        });
        assertSignedBy(key, body, signature);
        metrics.reports.inc();
        const feedback = await answerLeakReport(identity, parseReport(body));
        for (const { label } of feedback) metrics.tokens.inc({ label });
        res.setHeader('cache-control', 'no-store').json(feedback);
      },
    ],
  };
}
