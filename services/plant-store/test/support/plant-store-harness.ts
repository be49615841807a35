/**
 * Runs the Plant Store in-process on an ephemeral port against the real test database,
 * with the test issuer standing in for the token service (its JWKS route), and captures
 * every log line so tests can assert on them (and scan them for secrets).
 */
import { createBearerAuth, type RevocationChecker } from '@plant/resource-auth';
import { createDatabase, createLogger, createMetricsRegistry, type Knex } from '@plant/shared';
import { startTestIssuer, TEST_DATABASE_URL, uniqueName, type TestIssuer } from '@plant/test-kit';
import { SCHEMA } from '../../src/data-access/migrations/index.js';
import { createPlantRepository } from '../../src/data-access/plant-repository.js';
import { PLANTS_REALM } from '../../src/domain/plant-authorization.js';
import { createApp, startWebServer, stopWebServer } from '../../src/entry-points/api/server.js';

export const PUBLIC_URL = 'http://plants.test:8081';

export interface PlantStoreHarness {
  url: string;
  issuer: TestIssuer;
  db: Knex;
  logs: string[];
  /** A fresh tenant the issuer knows. */
  newTenant(): string;
  /** A valid access token of `tenant` (an Edit service account unless claims say otherwise). */
  token(tenant: string, claims?: Record<string, unknown>): string;
  close(): Promise<void>;
}

export async function startPlantStore(options: { revocation?: RevocationChecker; databaseUrl?: string } = {}): Promise<PlantStoreHarness> {
  const issuer = await startTestIssuer({ authUrl: 'http://auth.test:8082', audience: 'http://plant-store.test:8081' });
  const logs: string[] = [];
  const logger = createLogger({ name: 'plant-store', level: 'debug', destination: { write: (line: string) => void logs.push(line) } });
  const db = createDatabase({ connectionString: options.databaseUrl ?? TEST_DATABASE_URL, schema: SCHEMA, poolMax: 5 });
  const auth = createBearerAuth({
    authUrl: issuer.authUrl,
    audience: issuer.audience,
    jwksBaseUrl: issuer.url,
    realm: PLANTS_REALM,
    logger,
    ...(options.revocation ? { revocation: options.revocation } : {}),
  });
  const app = createApp({
    plants: createPlantRepository(db),
    auth,
    logger,
    metrics: createMetricsRegistry('plant-store'),
    publicUrl: PUBLIC_URL,
    ...(options.revocation ? { revocation: options.revocation } : {}),
  });
  const web = await startWebServer(app, { port: 0, host: '127.0.0.1' });
  return {
    url: web.url,
    issuer,
    db,
    logs,
    newTenant() {
      const tenant = uniqueName('t');
      issuer.addRealm(tenant);
      return tenant;
    },
    token(tenant, claims) {
      return issuer.mint({ tenant, ...(claims ? { claims } : {}) });
    },
    async close() {
      await stopWebServer(web, 1000);
      auth.close();
      await issuer.close();
      await db.destroy();
    },
  };
}
