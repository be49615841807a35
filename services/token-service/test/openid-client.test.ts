import { describe, expect, test } from '@jest/globals';
import * as client from 'openid-client';
import { decodeJwt, useHarness, TEST_ENV, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';

let h: Harness;
let tenant: string;

useHarness((started, first) => {
  h = started;
  tenant = first;
});

describe('a third-party OAuth client (openid-client)', () => {
  test('When it discovers the realm and runs the client credentials grant with client_secret_basic, then it gets a Bearer token for the Plant Store', async () => {
    const account = await internal(h).createServiceAccount(tenant);

    const config = await client.discovery(
      new URL(h.issuer(tenant)),
      account.client_id,
      undefined,
      client.ClientSecretBasic(account.secret),
      {
        execute: [client.allowInsecureRequests],
      },
    );
    const tokens = await client.clientCredentialsGrant(config);

    expect(config.serverMetadata().issuer).toBe(h.issuer(tenant));
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(300);
    expect(tokens.scope).toBe('plants:read');
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({
      iss: h.issuer(tenant),
      sub: account.client_id,
      aud: TEST_ENV.PLANT_STORE_AUDIENCE,
      tenant,
    });
  });

  test('When it uses client_secret_post and asks for a scope, then it gets that scope', async () => {
    const api = internal(h);
    const account = await api.createServiceAccount(tenant);
    await api.patch(tenant, account.client_id, { role: 'Edit' }).expect(200);

    const config = await client.discovery(
      new URL(h.issuer(tenant)),
      account.client_id,
      undefined,
      client.ClientSecretPost(account.secret),
      {
        execute: [client.allowInsecureRequests],
      },
    );
    const tokens = await client.clientCredentialsGrant(config, {
      scope: 'plants:read plants:write',
    });

    expect(tokens.scope).toBe('plants:read plants:write');
  });

  test('When its secret is wrong, then it sees invalid_client', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const config = await client.discovery(
      new URL(h.issuer(tenant)),
      account.client_id,
      undefined,
      client.ClientSecretBasic(`${account.secret}x`),
      {
        execute: [client.allowInsecureRequests],
      },
    );

    // A 401 with WWW-Authenticate surfaces as the parsed challenge (oauth4webapi).
    await expect(client.clientCredentialsGrant(config)).rejects.toMatchObject({
      status: 401,
      cause: [
        {
          scheme: 'basic',
          parameters: {
            realm: h.issuer(tenant),
            error: 'invalid_client',
            error_description: 'client authentication failed',
          },
        },
      ],
    });
  });
});
