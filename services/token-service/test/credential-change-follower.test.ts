import { describe, expect, test } from '@jest/globals';
import { eventually } from '@plant/test-kit';
import request from 'supertest';
import { generateClientSecret } from '../src/credentials/client-secrets.js';
import { FOLLOW_MS } from '../src/credentials/follow-credential-changes.js';
import { basic, uniqueIp, useHarness, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';

/**
 * A credential change whose event never arrived (a replica cut off from Redis at that moment,
 * or a change made with SQL): the token service's reader of the change feed forgets the cached
 * credential within its period, so the old secret stops working here too.
 */
let h: Harness;
let tenant: string;
useHarness((started, first) => {
  h = started;
  tenant = first;
});

const grant = (clientId: string, secret: string) =>
  request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });

describe('the credential cache follows the change feed', () => {
  test("When a secret is replaced in Postgres without an event, then the cached old secret is refused within the follower's period and the new one works", async () => {
    const account = await internal(h).createServiceAccount(tenant);
    expect((await grant(account.client_id, account.secret)).status).toBe(200);
    const replaced = generateClientSecret();

    const { db, identity } = h.service;
    await db.transaction(async (trx) => {
      await trx('service_accounts')
        .where({ realm: tenant, sub: account.client_id })
        .update({ secret_digest: identity.secrets.digest(replaced) });
      await trx('principals')
        .where({ realm: tenant, sub: account.client_id })
        .update({ token_version: trx.raw('token_version + 1') });
    });
    const staleAtOnce = (await grant(account.client_id, account.secret)).status;

    await eventually(
      async () => (await grant(account.client_id, account.secret)).status === 401,
      'the old secret to be refused',
      3 * FOLLOW_MS,
    );
    expect(staleAtOnce).toBe(200);
    expect((await grant(account.client_id, replaced)).status).toBe(200);
  });

  test('When the follower reads a quiet feed, then no cached credential is forgotten', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    expect((await grant(account.client_id, account.secret)).status).toBe(200);
    const cached = h.service.identity.clientCredentials.cached(tenant, account.client_id);

    await h.service.follower.follow();

    expect(cached?.row).toBeDefined();
    expect(h.service.identity.clientCredentials.cached(tenant, account.client_id)).toBe(cached);
  });
});
