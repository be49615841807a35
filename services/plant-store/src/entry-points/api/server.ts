import { createHttpApp, type createMetricsRegistry, type HttpApp } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import type { BearerAuth } from '@plant/resource-auth';
import { plantRoutes, type PlantRoutesDependencies } from './routes.js';

export interface AppDependencies {
  plants: PlantRoutesDependencies['plants'];
  auth: BearerAuth;
  logger: Logger;
  /** Where request metrics go; the management port (`createManagementApp`) exposes them. */
  metrics: ReturnType<typeof createMetricsRegistry>;
  /** Base URL clients use ({base_url}): Link headers and the OpenAPI `servers` entry. */
  publicUrl: string;
}

/**
 * The Plant Store's public request listener (its routes in `routes.ts`; probes and metrics are
 * the management port's). Tests drive it in-process, `start.ts` serves it.
 */
export function createApp({ plants, auth, logger, metrics, publicUrl }: AppDependencies): HttpApp {
  return createHttpApp({
    logger,
    metrics,
    routes: plantRoutes({ plants, auth, publicUrl }),
  });
}
