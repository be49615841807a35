/**
 * Successful sign-ins in the people trail (`user.sign_in`): written at each completed sign-in,
 * never a password, and bounded by what exists rather than by how often people sign in (a
 * person's newest ones, none past the retention).
 */
import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { SIGN_IN_EVENT_RETENTION } from '@plant/shared/token-service-client';
import { useHarness, type Harness } from './helpers/harness.js';
import { AUTH } from './helpers/internal-client.js';
import { portalDriver } from './helpers/portal-driver.js';

let h: Harness;

useHarness((started) => {
  h = started;
});

const db = () => h.service.db;

async function securityEvents(tenant: string) {
  const res = await request(h.internalUrl)
    .get(`/internal/v1/realms/${tenant}/security-events?limit=200`)
    .set('authorization', AUTH);
  expect(res.status).toBe(200);
  return res.body as Array<Record<string, unknown>>;
}

/** One sign-in of a person without a factor, from its own browser (own address). */
async function signIn(tenant: string, person: { email: string; password: string }) {
  const driver = portalDriver(h, tenant);
  const b = driver.browser();
  const started = await driver.startSignIn(b);
  await driver.completeSignIn(b, started, person.email, person.password);
  return b.ip;
}

const signInRows = (tenant: string, sub: string) =>
  db()('user_security_events')
    .where({ realm: tenant, target_sub: sub, action: 'user.sign_in' })
    .orderBy('id', 'desc');

describe('successful sign-ins in the people trail', () => {
  test('When a person signs in with a password, then one user.sign_in names them, the portal, the method and the address, never the password', async () => {
    const { tenant } = await h.createTenant();
    const editor = await h.createUser(tenant, 'Edit');

    const ip = await signIn(tenant, editor);

    const events = await securityEvents(tenant);
    const signIns = events.filter((e) => e.action === 'user.sign_in');
    expect(signIns).toEqual([
      expect.objectContaining({
        actor_sub: editor.id,
        actor_email: editor.email,
        target_sub: editor.id,
        target_email: editor.email,
        details: { client_id: 'portal', amr: ['pwd'], step_up: false },
        address: ip,
      }),
    ]);
    expect(JSON.stringify(events)).not.toContain(editor.password);
  });

  test('When a sign-in is refused, then nothing is written to the trail', async () => {
    const { tenant } = await h.createTenant();
    const editor = await h.createUser(tenant, 'Edit');
    const driver = portalDriver(h, tenant);
    const b = driver.browser();
    const started = await driver.startSignIn(b);

    const refused = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ csrf: started.csrf, email: editor.email, password: 'not the password' });

    expect(refused.status).toBe(401);
    expect(await signInRows(tenant, editor.id)).toEqual([]);
  });

  test("When a person who holds the bound of sign-ins signs in again, then each sign-in replaces their oldest, and another person's stay", async () => {
    const { tenant } = await h.createTenant();
    const flooder = await h.createUser(tenant, 'View');
    const other = await h.createUser(tenant, 'View');
    await signIn(tenant, other);
    // The bound already reached (written as the flow writes them, an hour ago): real sign-ins
    // past it are what a flood is, without a test paying for a password hash per row.
    const earlier = new Date(Date.now() - 3_600_000);
    const seeded = await db()('user_security_events')
      .insert(
        Array.from({ length: SIGN_IN_EVENT_RETENTION.perPerson }, (_, i) => ({
          realm: tenant,
          action: 'user.sign_in',
          actor_sub: flooder.id,
          actor_email: flooder.email,
          target_sub: flooder.id,
          target_email: flooder.email,
          occurred_at: earlier,
          details: JSON.stringify({ client_id: 'portal', amr: ['pwd'], step_up: false }),
          address: `192.0.2.${i + 1}`,
        })),
      )
      .returning('id');

    const addresses = [
      await signIn(tenant, flooder),
      await signIn(tenant, flooder),
      await signIn(tenant, flooder),
    ];

    const kept = await signInRows(tenant, flooder.id);
    expect(kept).toHaveLength(SIGN_IN_EVENT_RETENTION.perPerson);
    expect(kept.slice(0, 3).map((row) => row.address)).toEqual(addresses.reverse());
    const keptIds = new Set(kept.map((row) => String(row.id)));
    expect(seeded.slice(0, 3).filter(({ id }) => keptIds.has(String(id)))).toEqual([]);
    expect(seeded.slice(3).every(({ id }) => keptIds.has(String(id)))).toBe(true);
    expect(await signInRows(tenant, other.id)).toHaveLength(1);
  });

  test("When sign-ins are older than the retention, then each sign-in deletes up to ten of the realm's, and the trail's other events stay", async () => {
    const { tenant } = await h.createTenant();
    const gone = await h.createUser(tenant, 'View');
    const active = await h.createUser(tenant, 'View');
    const old = new Date(Date.now() - (SIGN_IN_EVENT_RETENTION.days + 1) * 86_400_000);
    const row = (action: string) => ({
      realm: tenant,
      action,
      actor_sub: gone.id,
      actor_email: gone.email,
      target_sub: gone.id,
      target_email: gone.email,
      occurred_at: old,
      details: JSON.stringify({ amr: ['pwd'] }),
    });
    await db()('user_security_events').insert([
      ...Array.from({ length: 12 }, () => row('user.sign_in')),
      row('factor.enrol'),
    ]);

    await signIn(tenant, active);
    const afterOne = await signInRows(tenant, gone.id);
    await signIn(tenant, active);
    const afterTwo = await signInRows(tenant, gone.id);

    expect(afterOne).toHaveLength(2);
    expect(afterTwo).toHaveLength(0);
    expect(
      await db()('user_security_events').where({ realm: tenant, action: 'factor.enrol' }),
    ).toHaveLength(1);
    expect(await signInRows(tenant, active.id)).toHaveLength(2);
  });
});
