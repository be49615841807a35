import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: this module lives in packages/deploy-checks/{src,dist}/. */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The deployable services: each has a target of the root Dockerfile and services/<name>/src/config.ts. */
export const SERVICES = ['plant-store', 'token-service', 'account-admin'] as const;
export type ServiceName = (typeof SERVICES)[number];
