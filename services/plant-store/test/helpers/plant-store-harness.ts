/**
 * Runs the Plant Store in-process on an ephemeral port against the real test database,
 * with the test issuer standing in for the token service (its JWKS route), and captures
 * every log line so tests can assert on them (and scan them for secrets).
 */
import { afterAll, beforeAll } from '@jest/globals';
import type { RevocationChecker } from '@plant/resource-auth';
import type { Knex } from '@plant/shared/db';
import { createLogger } from '@plant/shared/logging';
import { startTestIssuer, TEST_DATABASE_URL, uniqueName, type TestIssuer } from '@plant/test-kit';
import { loadPlantStoreConfig } from '../../src/config.js';
import { runPlantStore } from '../../src/plant-store.js';

export const PUBLIC_URL = 'http://plants.test:8081';

export interface PlantStoreHarness {
  url: string;
  /** The management port (/healthz, /readyz, /metrics). */
  managementUrl: string;
  issuer: TestIssuer;
  db: Knex;
  logs: string[];
  /** A fresh tenant the issuer knows. */
  newTenant(): string;
  /** A valid access token of `tenant` (an Edit service account unless claims say otherwise). */
  token(tenant: string, claims?: Record<string, unknown>): string;
  close(): Promise<void>;
}

export async function startPlantStore(
  options: { revocation?: RevocationChecker; databaseUrl?: string } = {},
): Promise<PlantStoreHarness> {
  const issuer = await startTestIssuer({
    authUrl: 'http://auth.test:8082',
    audience: 'http://plant-store.test:8081',
  });
  const logs: string[] = [];
  const logger = createLogger({
    name: 'plant-store',
    level: 'debug',
    destination: { write: (line: string) => void logs.push(line) },
  });
  // The production wiring, with the test issuer standing in for the token service's JWKS route.
  const config = loadPlantStoreConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    MANAGEMENT_PORT: '0',
    PUBLIC_URL,
    DATABASE_URL: options.databaseUrl ?? TEST_DATABASE_URL,
    DATABASE_POOL_MAX: '5',
    AUTH_URL: issuer.authUrl,
    PLANT_STORE_AUDIENCE: issuer.audience,
    TOKEN_SERVICE_INTERNAL_URL: issuer.url,
    INTERNAL_API_TOKEN: 'unused-without-the-revocation-map',
  });
  const store = await runPlantStore(
    config,
    logger,
    options.revocation ? { revocation: options.revocation } : {},
  );
  return {
    url: `http://127.0.0.1:${store.port}`,
    managementUrl: `http://127.0.0.1:${store.managementPort}`,
    issuer,
    db: store.db,
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
      await store.stop(1000);
      await issuer.close();
    },
  };
}

/** The usual arrangement of a test file: one store, started before its tests and closed after them. */
export function usePlantStore(): () => PlantStoreHarness {
  let store: PlantStoreHarness | undefined;
  beforeAll(async () => {
    store = await startPlantStore();
  });
  afterAll(async () => {
    await store?.close();
  });
  return () => store!;
}
