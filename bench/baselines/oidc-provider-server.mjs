// Baseline for the token scenario: stock oidc-provider 9 on node:http, one static
// client_credentials client (secret compared in clear, in memory), the default in-memory
// adapter, JWT access tokens signed RS256 (or ES256 with ALG=ES256, a P-256 key) for one
// resource, signed as stock oidc-provider signs (jose, WebCrypto); the same routes and token
// shape as a realm of the token service, without Postgres, hashing, throttling or logging.
//
// Env: PORT (0), ISSUER, AUDIENCE, CLIENT_ID, CLIENT_SECRET, ALG (RS256 | ES256).
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const env = process.env;
const alg = env.ALG === 'ES256' ? 'ES256' : 'RS256';
const { privateKey } =
  alg === 'ES256'
    ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'baseline', use: 'sig', alg };
const audience = env.AUDIENCE ?? 'http://localhost:8081';

const provider = new Provider(env.ISSUER ?? 'http://localhost:8082/realms/baseline', {
  clients: [
    {
      client_id: env.CLIENT_ID ?? 'baseline-client',
      client_secret: env.CLIENT_SECRET ?? 'baseline-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_post',
      // The provider's default (RS256) is refused as metadata when its only key is a P-256 one.
      id_token_signed_response_alg: alg,
    },
  ],
  jwks: { keys: [/** @type {any} */ (jwk)] },
  routes: { token: '/protocol/openid-connect/token', jwks: '/protocol/openid-connect/certs' },
  scopes: ['plants:read', 'plants:write'],
  ttl: { ClientCredentials: 300 },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => audience,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        audience,
        scope: 'plants:read plants:write',
        accessTokenTTL: 300,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg } },
      }),
    },
  },
});

const server = createServer(provider.callback());
server.listen(Number(env.PORT ?? 0), '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: address.port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
