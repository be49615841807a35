/**
 * The table of sensitive actions (platform/step-up.ts) is the one place that decides step-up:
 * every action it lists is refused through the API to a session whose person has a second
 * factor not verified recently (RFC 9470's challenge, nothing done), and the use cases ask
 * about exactly the actions it lists, each in one place. A use case that stops consulting the
 * table, or a table entry nobody asks about, fails here.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { clientKeyPair, TEST_SECRETS, uniqueName } from '@plant/test-kit';
import { Redis } from 'ioredis';
import { createSessionStore } from '../src/sessions/session-store.js';
import { SENSITIVE_ACTIONS, type SensitiveAction } from '../src/platform/step-up.js';
import { CookieJar, type PortalSession } from './helpers/browser-client.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

const p = useSignedInPortal();
let redis: Redis;
let adminSub: string;

beforeAll(async () => {
  redis = new Redis(p.ts.redisUrl);
  adminSub = ((await (await p.asAdminSession('GET', '/me')).json()) as { sub: string }).sub;
});
afterAll(() => redis?.quit());

/** A portal session of acme's admin, who has a second factor this session never verified. */
async function unverifiedAdminSession(): Promise<PortalSession> {
  const store = createSessionStore(redis, TEST_SECRETS.SESSION_SECRET);
  const id = await store.create(
    {
      tenant: p.acme.tenant,
      sub: adminSub,
      email: p.acme.admin.email,
      role: 'Account Admin',
      tokenVersion: 1,
      createdAt: Date.now(),
      lastSeenAt: Date.now(),
      userAgent: 'stolen',
      address: '127.0.0.1',
      stepUpRequired: true,
    },
    600,
  );
  const csrf = createHmac('sha256', TEST_SECRETS.SESSION_SECRET)
    .update(`csrf:${id}`)
    .digest('base64url');
  const jar = new CookieJar();
  jar.set('aa_session', id);
  jar.set('csrf_token', csrf);
  return {
    jar,
    csrf,
    cookie: () => jar.header(`${p.portal.url}/`),
    headers: (extra = {}) => ({
      cookie: jar.header(`${p.portal.url}/`),
      'x-csrf-token': csrf,
      ...extra,
    }),
  };
}

/**
 * Each action's API call, as [method, path, body]: valid, so that without the gate it would
 * act (on a real service account) or answer 404 (on a person or invitation nobody has).
 */
const callOf = (
  clientId: string,
  nobody: string,
): Record<SensitiveAction, [string, string, unknown?]> => ({
  'create-service-account': ['POST', '/service-accounts', { name: uniqueName('sensitive') }],
  'change-quota': ['PATCH', `/service-accounts/${clientId}`, { quota: null }],
  'reset-secret': ['POST', `/service-accounts/${clientId}/reset-secret`],
  'delete-service-account': ['DELETE', `/service-accounts/${clientId}`],
  'add-key': ['POST', `/service-accounts/${clientId}/keys`, { jwk: clientKeyPair('ec').publicJwk }],
  'add-secret': ['POST', `/service-accounts/${clientId}/secrets`, {}],
  'add-trust': [
    'POST',
    `/service-accounts/${clientId}/trusts`,
    { issuer: 'https://issuer.example.test', subject: 'x', audience: 'y' },
  ],
  'change-delegations': ['PUT', `/service-accounts/${clientId}/delegations`, { delegations: [] }],
  'update-credential-policy': ['PATCH', '/settings/credentials', { leak_response: 'notify' }],
  invite: ['POST', '/users', { email: `${uniqueName('invitee')}@acme.test`, role: 'View' }],
  'change-person': ['PATCH', `/users/${nobody}`, { role: 'Edit' }],
  'remove-person': ['DELETE', `/users/${nobody}`],
  'revoke-invitation': ['DELETE', `/invitations/${nobody}`],
  'sign-out-everywhere': ['DELETE', `/users/${nobody}/sessions`],
  'reset-factors': ['DELETE', `/users/${nobody}/factors`],
  'remove-own-factor': ['DELETE', `/me/factors/${nobody}`],
  'update-people-settings': ['PATCH', '/settings/people', { require_admin_second_factor: true }],
});

/** Every `assertRecentFactor(…)` call in account-admin's sources (comments aside), as the action it names, or the call's text when it names none. */
function askedActions(): string[] {
  const asked: string[] = [];
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const code = readFileSync(join(entry.parentPath, entry.name), 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
      .join('\n');
    for (const [call] of code.matchAll(/\bassertRecentFactor\([^)]*\)/g)) {
      if (/^assertRecentFactor\(actor: Actor/.test(call)) continue;
      asked.push(/^assertRecentFactor\(\w+, '([a-z-]+)'\)$/.exec(call)?.[1] ?? call);
    }
  }
  return asked.sort();
}

describe('the table of sensitive actions', () => {
  test('When the sources are read, then the use cases ask about exactly the actions the table lists, each in one place', () => {
    expect(askedActions()).toEqual(Object.keys(SENSITIVE_ACTIONS).sort());
  });

  test('When a session whose person has an unverified second factor calls each sensitive action, then each is 401 with the step-up challenge', async () => {
    const account = await p.createAccount('sensitive');
    const stolen = await unverifiedAdminSession();
    const calls = callOf(account.client_id!, randomUUID());
    expect(Object.keys(calls).sort()).toEqual(Object.keys(SENSITIVE_ACTIONS).sort());

    for (const [action, [method, path, body]] of Object.entries(calls)) {
      const res = await p.call(stolen, method, path, { body });
      expect({ action, status: res.status, body: await res.json() }).toEqual({
        action,
        status: 401,
        body: { error: 401, message: 'This action needs your second factor again' },
      });
      expect({ action, challenge: res.headers.get('www-authenticate') }).toEqual({
        action,
        challenge:
          'Bearer error="insufficient_user_authentication", error_description="This action needs your second factor again", acr_values="urn:plantstore:acr:factor", max_age=600',
      });
    }
    const events = (await p.auditEvents()).filter((e) => e.client_id === account.client_id);
    expect(events.map((e) => e.action)).toEqual(['service_account.create']);
  });
});
