import { env, loadConfig } from '@plant/shared';

/** Every environment variable of the Plant Store (docs/architecture.md). */
export const configShape = {
  PORT: env.port(8081).describe('Public HTTP port (0 = ephemeral)'),
  HOST: env.string('0.0.0.0').describe('Listen address'),
  PUBLIC_URL: env.url('http://localhost:8081').describe('Base URL clients use ({base_url}); used in Link headers'),
  DATABASE_URL: env.url('postgres://postgres@127.0.0.1:5432/plantstore').describe('Postgres URL; the service uses schema plants'),
  DATABASE_POOL_MAX: env.int(10, 1, 100).describe('Postgres pool size'),
  REDIS_URL: env.url('redis://127.0.0.1:6379').describe('Redis URL (revocation events)'),
  LOG_LEVEL: env.logLevel().describe('pino log level'),
  AUTH_URL: env.url('http://localhost:8082').describe('Public base URL of the token service; token issuers are {AUTH_URL}/realms/<tenant>'),
  PLANT_STORE_AUDIENCE: env.string('http://localhost:8081').describe('The aud claim a token must carry'),
  TOKEN_SERVICE_INTERNAL_URL: env.url('http://127.0.0.1:9082').describe("The token service's internal API (JWKS, revocation snapshot)"),
  INTERNAL_API_TOKEN: env.secret().describe('Shared token for the internal API (secret)'),
  REVOCATION_RESYNC_MS: env.int(5000, 100, 3_600_000).describe('Period of the full revocation re-sync'),
};

export type PlantStoreConfig = ReturnType<typeof loadPlantStoreConfig>;

export function loadPlantStoreConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(configShape, source);
}
