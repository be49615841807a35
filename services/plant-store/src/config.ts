import { baseConfig, env, loadConfig, resourceServerConfig } from '@plant/shared/config';

/** Every environment variable of the Plant Store (docs/architecture.md). */
export const configShape = {
  ...baseConfig({
    port: 8081,
    managementPort: 9181,
    schema: 'plants',
    redisUse: 'revocation events, DPoP proof ids',
    authUrlDoc:
      'Public base URL of the token service; token issuers are {AUTH_URL}/realms/<tenant>',
  }),
  ...resourceServerConfig({ internalApiUse: 'JWKS, realm list, revocation snapshot' }),
  DATABASE_NAMED_STATEMENTS: env
    .bool(true)
    .describe(
      'Run the hot queries as named prepared statements; false behind a transaction-pooling PgBouncer older than 1.21, which cannot carry them',
    ),
  PUBLIC_URL: env
    .url('http://localhost:8081')
    .describe(
      'Base URL clients use ({base_url}); used in Link headers and as the URL DPoP proofs must name (htu)',
    ),
  DPOP_NONCE_KEYS: env
    .optionalSecretList()
    .describe(
      'Comma-separated keys (32+ characters) of DPoP nonces (RFC 9449 §8), the first issuing, all accepted; set, every DPoP proof must carry a nonce this service issued; empty: no nonce (secret)',
    ),
  PLANT_STORE_AUDIENCE: env
    .string('http://localhost:8081')
    .describe('The aud claim a token must carry'),
};

export type PlantStoreConfig = ReturnType<typeof loadPlantStoreConfig>;

export function loadPlantStoreConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(configShape, source);
}
