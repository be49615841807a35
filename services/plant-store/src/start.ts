/**
 * The Plant Store process: load config, connect, listen, log `listening` once;
 * SIGTERM/SIGINT drain in-flight requests, then close the pool.
 */
import { createBearerAuth, createRevocationSync, type RevocationChecker } from '@plant/resource-auth';
import { createDatabase, createMetricsRegistry, runServiceMain, type Logger } from '@plant/shared';
import { loadPlantStoreConfig, type PlantStoreConfig } from './config.js';
import { SCHEMA } from './data-access/migrations/index.js';
import { createPlantRepository } from './data-access/plant-repository.js';
import { PLANTS_REALM } from './domain/plant-authorization.js';
import { createApp, startWebServer, stopWebServer } from './entry-points/api/server.js';

/** A revocation checker with a life cycle (the map's Redis subscription and re-sync timer). */
export interface RevocationService extends RevocationChecker {
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export interface PlantStoreProcess {
  port: number;
  stop(): Promise<void>;
}

/**
 * Wires and starts the service. `revocation` (the revocation map of `@plant/resource-auth`)
 * is started here, consulted on every request and gates /readyz; without it tokens are
 * checked for signature and claims only, which only tests may want.
 */
export async function runPlantStore(
  config: PlantStoreConfig,
  logger: Logger,
  { revocation, metrics = createMetricsRegistry('plant-store') }: { revocation?: RevocationService; metrics?: ReturnType<typeof createMetricsRegistry> } = {},
): Promise<PlantStoreProcess> {
  const db = createDatabase({ connectionString: config.DATABASE_URL, schema: SCHEMA, poolMax: config.DATABASE_POOL_MAX, applicationName: 'plant-store', logger });
  const auth = createBearerAuth({
    authUrl: config.AUTH_URL,
    audience: config.PLANT_STORE_AUDIENCE,
    jwksBaseUrl: config.TOKEN_SERVICE_INTERNAL_URL,
    realm: PLANTS_REALM,
    logger,
    ...(revocation ? { revocation } : {}),
  });
  await revocation?.start?.();
  const app = createApp({
    plants: createPlantRepository(db),
    auth,
    logger,
    metrics,
    publicUrl: config.PUBLIC_URL,
    ...(revocation ? { revocation } : {}),
  });
  const web = await startWebServer(app, { port: config.PORT, host: config.HOST });
  return {
    port: web.port,
    async stop() {
      await stopWebServer(web);
      await revocation?.stop?.();
      auth.close();
      await db.destroy();
    },
  };
}

runServiceMain('plant-store', () => loadPlantStoreConfig(), async (config, logger) => {
  const metrics = createMetricsRegistry('plant-store');
  const revocation = createRevocationSync({
    redisUrl: config.REDIS_URL,
    tokenServiceUrl: config.TOKEN_SERVICE_INTERNAL_URL,
    internalToken: config.INTERNAL_API_TOKEN,
    resyncMs: config.REVOCATION_RESYNC_MS,
    logger,
    metricsRegistry: metrics,
  });
  return runPlantStore(config, logger, { revocation, metrics });
});
