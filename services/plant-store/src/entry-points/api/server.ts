import { createHttpApp, type createMetricsRegistry, type HttpApp, type Logger } from '@plant/shared';
import type { BearerAuth, RevocationChecker } from '@plant/resource-auth';
import { plantRoutes, type PlantRoutesDependencies } from './routes.js';

export interface AppDependencies {
  plants: PlantRoutesDependencies['plants'];
  /** Resolves when the database answers (readiness). */
  ping(): Promise<void>;
  auth: BearerAuth;
  logger: Logger;
  metrics: ReturnType<typeof createMetricsRegistry>;
  /** Base URL clients use ({base_url}): Link headers and the OpenAPI `servers` entry. */
  publicUrl: string;
  /**
   * The revocation map the bearer auth consults, when there is one: /readyz waits for its
   * first snapshot. Pass the same checker to `createBearerAuth`.
   */
  revocation?: RevocationChecker;
}

/** The Plant Store's request listener (its routes in `routes.ts`). Tests drive it in-process, `start.ts` serves it. */
export function createApp({ plants, ping, auth, logger, metrics, publicUrl, revocation }: AppDependencies): HttpApp {
  return createHttpApp({
    logger,
    metrics,
    readiness: {
      database: ping,
      ...(revocation
        ? {
            revocation: () => {
              if (!revocation.isReady()) throw new Error('revocation snapshot not loaded');
            },
          }
        : {}),
    },
    routes: plantRoutes({ plants, auth, publicUrl }),
  });
}
