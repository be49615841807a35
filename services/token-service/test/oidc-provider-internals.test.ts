/**
 * The contract between the token service and the oidc-provider internals it relies on
 * (src/oidc/oidc-provider-internals.ts), checked against the installed oidc-provider with a
 * provider of its own: an upgrade that changes any of them fails here, with the point named,
 * before a grant fails anywhere else.
 */
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { REPO_ROOT } from '@plant/test-kit';
import Provider, { ExternalSigningKey } from 'oidc-provider';
import request from 'supertest';
import {
  buildClient,
  type Client,
  EXTERNAL_SIGNING,
  OIDC_PROVIDER_VERSION,
  pinRequestOrigin,
  replaceClientLookup,
  replaceClientSecretComparison,
  serveIssuerPerRequest,
} from '../src/oidc/oidc-provider-internals.js';

const RESOURCE = 'https://api.example.test';
const CLIENT_ID = 'sa-contract';
const STORED_SECRET = 'digest-of-right-secret';

/** A signing key outside jose, as the token service's own keys are: counts its signatures. */
class CountingKey extends ExternalSigningKey {
  signatures = 0;
  readonly #pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  override get kid(): string {
    return 'contract-key';
  }
  override get alg(): string {
    return 'ES256';
  }
  override get kty(): string {
    return 'EC';
  }
  override get crv(): string {
    return 'P-256';
  }
  override keyObject(): KeyObject {
    return this.#pair.publicKey;
  }
  override async sign(data: Uint8Array): Promise<Uint8Array> {
    this.signatures += 1;
    return sign('sha256', data, { key: this.#pair.privateKey, dsaEncoding: 'ieee-p1363' });
  }
}

let issuer = 'https://auth.example.test/realms/first';
const lookups: unknown[] = [];
const comparisons: Array<{ clientId: string; clientSecret: string; presented: string }> = [];
const key = new CountingKey();
let provider: Provider;
let server: Server;

beforeAll(() => {
  provider = new Provider('https://auth.example.test/realms/placeholder', {
    clients: [],
    jwks: { keys: [key as never] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      externalSigningSupport: EXTERNAL_SIGNING,
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        getResourceServerInfo: () => ({
          audience: RESOURCE,
          scope: 'plants:read',
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
  });
  serveIssuerPerRequest(provider, () => issuer);
  provider.use(pinRequestOrigin('https://auth.example.test'));
  replaceClientLookup(provider, (previous) => async (id) => {
    lookups.push(id);
    if (id !== CLIENT_ID) return previous(id);
    return buildClient(provider, {
      client_id: CLIENT_ID,
      client_secret: STORED_SECRET,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_post',
      id_token_signed_response_alg: 'ES256',
    }) as Client;
  });
  replaceClientSecretComparison(provider, async (client, presented) => {
    comparisons.push({ clientId: client.clientId, clientSecret: client.clientSecret, presented });
    return presented === 'right-secret';
  });
  server = createServer(provider.callback());
});

afterAll(() => {
  server.close();
});

const grant = (secret: string) =>
  request(server)
    .post('/token')
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: secret });

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

describe('oidc-provider internals the token service relies on', () => {
  test('When the installed oidc-provider is read, then it is the exact version the boundary was written against, and package.json pins it', () => {
    const require = createRequire(join(REPO_ROOT, 'services/token-service/package.json'));
    const installed = JSON.parse(
      readFileSync(require.resolve('oidc-provider/package.json'), 'utf8'),
    ) as { version: string };
    const manifest = JSON.parse(
      readFileSync(join(REPO_ROOT, 'services/token-service/package.json'), 'utf8'),
    ) as {
      dependencies: Record<string, string>;
    };
    expect(installed.version).toBe(OIDC_PROVIDER_VERSION);
    expect(manifest.dependencies['oidc-provider']).toBe(OIDC_PROVIDER_VERSION);
  });

  test('When a client authenticates at the token endpoint, then the replaced Client.find is asked for it and a client built from metadata is used', async () => {
    lookups.length = 0;
    const res = await grant('right-secret');
    expect(res.status).toBe(200);
    expect(lookups).toContain(CLIENT_ID);
  });

  test('When a secret is presented, then the replaced compareClientSecret decides, seeing the stored client_secret and the presented one', async () => {
    comparisons.length = 0;
    expect((await grant('right-secret')).status).toBe(200);
    const refused = await grant('wrong-secret');
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: 'invalid_client' });
    expect(comparisons).toEqual([
      { clientId: CLIENT_ID, clientSecret: STORED_SECRET, presented: 'right-secret' },
      { clientId: CLIENT_ID, clientSecret: STORED_SECRET, presented: 'wrong-secret' },
    ]);
  });

  test('When the issuer getter answers differently between requests, then each token and discovery name the issuer of their own request', async () => {
    issuer = 'https://auth.example.test/realms/first';
    const first = claimsOf((await grant('right-secret')).body.access_token);
    issuer = 'https://auth.example.test/realms/second';
    const second = claimsOf((await grant('right-secret')).body.access_token);
    const discovery = await request(server).get('/.well-known/openid-configuration');
    expect(first.iss).toBe('https://auth.example.test/realms/first');
    expect(second.iss).toBe('https://auth.example.test/realms/second');
    expect(discovery.body.issuer).toBe('https://auth.example.test/realms/second');
  });

  test('When a request names another host (Host, X-Forwarded-Host), then the URLs oidc-provider builds are on the pinned origin', async () => {
    const discovery = await request(server)
      .get('/.well-known/openid-configuration')
      .set('Host', 'evil.example')
      .set('X-Forwarded-Host', 'evil.example');
    expect(discovery.body.token_endpoint).toBe('https://auth.example.test/token');
    expect(discovery.body.jwks_uri).toBe('https://auth.example.test/jwks');
  });

  test('When a JWT access token is issued, then the ExternalSigningKey signs it, under the kid and alg it names', async () => {
    const before = key.signatures;
    const token = (await grant('right-secret')).body.access_token as string;
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(key.signatures).toBe(before + 1);
    expect(header).toMatchObject({ alg: 'ES256', kid: 'contract-key', typ: 'at+jwt' });
  });
});
