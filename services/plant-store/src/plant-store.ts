/** Wires the Plant Store: Postgres, bearer verification with the revocation map, the public and the management listener. */
import {
  createBearerAuth,
  createRedisReplayStore,
  type RevocationChecker,
} from '@plant/resource-auth';
import { createDatabase, type Knex } from '@plant/shared/db';
import {
  createManagementApp,
  createMetricsRegistry,
  readyWhen,
  registerCacheMetrics,
  startWebServer,
} from '@plant/shared/http';
import { currentRequestId, type Logger } from '@plant/shared/logging';
import { redisTargetOf } from '@plant/shared/redis';
import type { PlantStoreConfig } from './config.js';
import { SCHEMA } from './migrations/index.js';
import { createPlantRepository } from './data-access/plant-repository.js';
import { PLANTS_REALM } from './domain/plant-authorization.js';
import { createApp } from './entry-points/api/server.js';

/** A revocation checker with a life cycle (the map's Redis subscription and re-sync timer). */
export interface RevocationService extends RevocationChecker {
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export interface PlantStoreProcess {
  port: number;
  /** The management listener's port (/healthz, /readyz, /metrics). */
  managementPort: number;
  /** The service's pool (component tests read rows back through it). */
  db: Knex;
  /** Drains in-flight requests (up to `graceMs`) on both listeners, then closes the revocation map, JWKS cache and pool. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Wires and starts the service. `revocation` (the revocation map of `@plant/resource-auth`)
 * is started here, consulted on every request and gates /readyz; without it tokens are
 * checked for signature and claims only, which only tests may want.
 */
export async function runPlantStore(
  config: PlantStoreConfig,
  logger: Logger,
  {
    revocation,
    metrics = createMetricsRegistry('plant-store'),
  }: { revocation?: RevocationService; metrics?: ReturnType<typeof createMetricsRegistry> } = {},
): Promise<PlantStoreProcess> {
  const db = createDatabase({
    connectionString: config.DATABASE_URL,
    schema: SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
    applicationName: 'plant-store',
    logger,
  });
  // DPoP proof ids, claimed in Redis so a proof is accepted once across every replica.
  const replay = createRedisReplayStore({ redis: redisTargetOf(config), logger });
  const nonceKeys = config.DPOP_NONCE_KEYS.split(',')
    .map((key) => key.trim())
    .filter(Boolean);
  const auth = createBearerAuth({
    authUrl: config.AUTH_URL,
    audience: config.PLANT_STORE_AUDIENCE,
    jwksBaseUrl: config.TOKEN_SERVICE_INTERNAL_URL,
    internalToken: config.INTERNAL_API_TOKEN,
    realm: PLANTS_REALM,
    logger,
    requestId: currentRequestId,
    jwksCacheBytes: config.JWKS_CACHE_MB * 1024 * 1024,
    ...(revocation ? { revocation } : {}),
    dpop: { publicUrl: config.PUBLIC_URL, replay, nonceKeys },
  });
  registerCacheMetrics(metrics, {
    jwks: () => auth.jwksStats(),
    verified_tokens: () => auth.verifiedTokenStats(),
  });
  const plants = createPlantRepository(db, { namedStatements: config.DATABASE_NAMED_STATEMENTS });
  // The pool's first connection opens while the revocation snapshot loads rather than on the
  // first readiness probe after it; a failure here is the probe's to report.
  plants.ping().catch(() => undefined);
  await revocation?.start?.();
  const app = createApp({ plants, auth, logger, metrics, publicUrl: config.PUBLIC_URL });
  const management = createManagementApp({
    logger,
    metrics,
    readiness: {
      database: () => plants.ping(),
      ...(revocation
        ? { revocation: readyWhen(revocation, 'revocation snapshot not loaded') }
        : {}),
    },
  });
  const web = await startWebServer(app, { port: config.PORT, host: config.HOST });
  const managementWeb = await startWebServer(management, {
    port: config.MANAGEMENT_PORT,
    host: config.MANAGEMENT_HOST,
  });
  return {
    port: web.port,
    managementPort: managementWeb.port,
    db,
    async stop(graceMs) {
      // Probes and the last scrape answer while the public port drains.
      await web.close(graceMs);
      await managementWeb.close(graceMs);
      await revocation?.stop?.();
      auth.close();
      await replay.close();
      await db.destroy();
    },
  };
}
