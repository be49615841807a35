/**
 * The change-effects table (src/changes/change-effects.ts) is complete, its rendering is what
 * docs/change-effects.md shows, and real changes against Postgres do exactly what it says: the
 * token version and the revocation feed, the credential revision, the entry published, the
 * Shared Signals events queued and the security trail's rows.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import request from 'supertest';
import {
  CHANGE_EFFECTS,
  CHANGE_KINDS,
  type ChangeKind,
  effectsOf,
} from '../src/changes/change-effects.js';
import { generatedSection, renderChangeEffects } from '../src/changes/change-effects-docs.js';
import {
  setServiceAccountQuota,
  updateCredentialPolicy,
} from '../src/credentials/credential-policy.js';
import { answerLeakReport } from '../src/leak-reports/answer-leak-report.js';
import { removeUser, signOutUserEverywhere, updateUser } from '../src/people/users.js';
import { resetFactors } from '../src/second-factors/second-factors.js';
import { kindsOfChange } from '../src/service-accounts/service-account-repository.js';
import { eventOf } from '../src/signal-outbox/signal-outbox.js';
import { basic, type Harness, startHarness } from './helpers/harness.js';
import { type CreatedAccount, internal } from './helpers/internal-client.js';
import { tokenRequest } from './helpers/token-client.js';

const DOC = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/change-effects.md');
const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');

/** The token service's product code outside the table's own wing, one string. */
function codeOutsideTheTable(): string {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.startsWith('changes/'))
    .map((file) => readFileSync(join(SRC, file), 'utf8'))
    .join('\n');
}

describe('the change-effects table', () => {
  test('When the kinds are listed, then each has exactly one entry and the table has no other', () => {
    expect(Object.keys(CHANGE_EFFECTS).sort()).toEqual([...CHANGE_KINDS].sort());
    expect(new Set(CHANGE_KINDS).size).toBe(CHANGE_KINDS.length);
  });

  test('When docs/change-effects.md is read, then its generated section is the table rendered', () => {
    const document = readFileSync(DOC, 'utf8');
    if (process.env.UPDATE_CHANGE_EFFECTS === '1') {
      const section = generatedSection(document);
      if (section !== undefined)
        writeFileSync(DOC, document.replace(section, renderChangeEffects()));
    }
    expect(generatedSection(readFileSync(DOC, 'utf8'))).toBe(renderChangeEffects());
  });

  test('When the product code is read, then every kind is named where it is applied and no audit action is written past the table', () => {
    const code = codeOutsideTheTable();
    // A kind nobody names is an entry nobody reads: its change applies effects of its own.
    expect(CHANGE_KINDS.filter((kind) => !code.includes(`'${kind}'`))).toEqual([]);
    // An audit action written as a literal is a change that decides its trail itself.
    const actions = CHANGE_KINDS.flatMap((kind) => effectsOf(kind).audit ?? []);
    expect(actions.filter((action) => code.includes(`'${action}'`))).toEqual([]);
    // A person's change applies its entry through applyPersonChange, which queues no signals.
    expect(
      CHANGE_KINDS.filter((k) => k.startsWith('person.') && effectsOf(k).signals.length > 0),
    ).toEqual([]);
  });

  test('When a service account change is patched, then its kinds are a reset, a settings change, or both', () => {
    expect(kindsOfChange({ secretDigest: 'd' }).kinds).toEqual(['service-account.secret-reset']);
    expect(kindsOfChange({ role: 'Edit', grants: [] })).toEqual({
      kinds: ['service-account.settings-change'],
      parts: ['role', 'grants'],
    });
    expect(kindsOfChange({}).kinds).toEqual(['service-account.settings-change']);
    expect(kindsOfChange({ secretDigest: 'd', receiveSignals: true }).kinds).toEqual([
      'service-account.secret-reset',
      'service-account.settings-change',
    ]);
  });
});

let h: Harness;
let tenant: string;
let api: ReturnType<typeof internal>;
const published: RevocationEntry[] = [];

beforeAll(async () => {
  h = await startHarness();
  ({ tenant } = await h.createTenant());
  api = internal(h);
  h.service.publisher.onLocal((entry) => published.push(entry));
  // A poll stream that wants every event type, so each change's events are queued and can be read.
  const receiver = await api.createServiceAccount(tenant);
  await api.patch(tenant, receiver.client_id, { receive_signals: true }).expect(200);
  const token = await tokenRequest(h, tenant)
    .set('authorization', basic(receiver.client_id, receiver.secret))
    .type('form')
    .send({ grant_type: 'client_credentials', scope: 'ssf.manage ssf.read' })
    .expect(200);
  await request(h.publicUrl)
    .post(`/realms/${tenant}/ssf/streams`)
    .set('authorization', `Bearer ${token.body.access_token}`)
    .send({
      delivery: { method: 'urn:ietf:rfc:8936' },
      events_requested: [
        'https://schemas.openid.net/secevent/caep/event-type/credential-change',
        'https://schemas.openid.net/secevent/caep/event-type/session-revoked',
        'https://schemas.openid.net/secevent/risc/event-type/account-disabled',
        'https://schemas.openid.net/secevent/risc/event-type/account-enabled',
        'https://schemas.openid.net/secevent/risc/event-type/account-purged',
        'https://schemas.openid.net/secevent/risc/event-type/credential-compromise',
      ],
    })
    .expect(201);
});
afterAll(async () => {
  await h?.close();
});

/** What a principal looks like to the table's columns at one moment. */
async function snapshot(sub: string) {
  const db = h.service.db;
  const principal = await db('principals').where({ sub }).first('token_version', 'deleted_at');
  const account = await db('service_accounts').where({ sub }).first('credentials_revision');
  const feed = await db('revocation_changes').where({ sub }).count<{ n: string }[]>({ n: '*' });
  const events = await db('ssf_stream_events')
    .where({ sub })
    .orderBy('seq')
    .select('event_type', 'event');
  const audit = await db('user_security_events')
    .where({ target_sub: sub })
    .orderBy('id')
    .pluck('action');
  return {
    version: principal?.token_version as number,
    deleted: principal?.deleted_at != null,
    revision: account?.credentials_revision as number | undefined,
    feed: Number(feed[0]!.n),
    events: events.map((e: { event_type: string; event: unknown }) => ({
      type: e.event_type,
      event: typeof e.event === 'string' ? JSON.parse(e.event) : e.event,
    })),
    audit: audit as string[],
    published: published.filter((entry) => entry.sub === sub).length,
  };
}

/**
 * Runs `change` and checks that what changed is what the entry of `kind` lists; `parts` fills a
 * settings change's reason.
 */
async function expectEffects(
  kind: ChangeKind,
  sub: string,
  change: () => Promise<unknown>,
  parts: string[] = [],
): Promise<void> {
  const effects = effectsOf(kind);
  const before = await snapshot(sub);
  await change();
  const after = await snapshot(sub);
  const revokes = effects.revokes !== 'none';
  // A credential's revocation writes its feed row and leaves the version.
  const bumps = revokes && effects.revokes !== 'credential-tokens';
  expect({ kind, bumped: after.version - before.version, feed: after.feed - before.feed }).toEqual({
    kind,
    bumped: bumps ? 1 : 0,
    feed: revokes ? 1 : 0,
  });
  expect({ kind, deleted: after.deleted }).toEqual({
    kind,
    deleted: effects.revokes === 'deleted',
  });
  if (after.revision !== undefined && before.revision !== undefined)
    expect({ kind, counted: after.revision - before.revision }).toEqual({
      kind,
      counted: effects.countsCredentialChange ? 1 : 0,
    });
  expect({ kind, published: after.published - before.published }).toEqual({
    kind,
    published: effects.publishes === 'none' ? 0 : 1,
  });
  const expected = effects.signals.flatMap((signal) => {
    if (signal.type === 'session-revoked' && signal.reason.includes('{parts}'))
      return [{ ...signal, reason: signal.reason.replace('{parts}', parts.join(', ')) }];
    return [signal];
  });
  expect({ kind, events: after.events.slice(before.events.length) }).toEqual({
    kind,
    events: expected.map((signal) => {
      const { type, event } = eventOf(signal, effects.initiatedBy);
      const { event_timestamp: _, ...rest } = event;
      return { type, event: expect.objectContaining(rest) };
    }),
  });
  expect({ kind, audit: after.audit.slice(before.audit.length) }).toEqual({
    kind,
    audit: effects.audit === null ? [] : [effects.audit],
  });
}

const jwk = () => ({
  ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
  alg: 'ES256',
});

describe('changes against Postgres do what the table says', () => {
  test('When each kind of service-account change happens, then its revocation, revision, publication, signals and audit are its entry', async () => {
    let account: CreatedAccount | undefined;
    account = await api.createServiceAccount(tenant);
    const sub = account.client_id;
    const created = await snapshot(sub);
    expect(created.events.map((e) => e.type)).toEqual(
      effectsOf('service-account.create').signals.map((s) => eventOf(s, 'admin').type),
    );
    expect(created.published).toBe(0);

    await expectEffects('service-account.secret-reset', sub, async () => {
      const res = await api.reset(tenant, sub).expect(200);
      account = { ...account!, secret: res.body.secret };
    });
    let secondId = '';
    await expectEffects('service-account.secret-add', sub, async () => {
      secondId = (await api.addSecret(tenant, sub).expect(201)).body.id;
    });
    await expectEffects('service-account.secret-remove', sub, () =>
      api.removeSecretById(tenant, sub, secondId).expect(204),
    );
    await expectEffects(
      'service-account.settings-change',
      sub,
      () => api.patch(tenant, sub, { role: 'Edit' }).expect(200),
      ['role'],
    );
    let keyId = '';
    await expectEffects('service-account.key-add', sub, async () => {
      keyId = (await api.addKey(tenant, sub, { jwk: jwk() }).expect(201)).body.id;
    });
    await expectEffects('service-account.key-remove', sub, () =>
      api.removeKey(tenant, sub, keyId).expect(204),
    );
    let trustId = '';
    await expectEffects('service-account.trust-add', sub, async () => {
      trustId = (
        await api
          .addTrust(tenant, sub, {
            issuer: 'https://issuer.example.com',
            subject: 'system:serviceaccount:ci:deployer',
            audience: h.issuer(tenant),
          })
          .expect(201)
      ).body.id;
    });
    await expectEffects('service-account.trust-remove', sub, () =>
      api.removeTrust(tenant, sub, trustId).expect(204),
    );
    await expectEffects('service-account.quota-change', sub, () =>
      setServiceAccountQuota(h.service.identity, tenant, sub, { per_minute: 60, mode: 'log' }),
    );
    await expectEffects('service-account.disable', sub, () =>
      api.setDisabled(tenant, sub, true).expect(200),
    );
    await expectEffects('service-account.enable', sub, () =>
      api.setDisabled(tenant, sub, false).expect(200),
    );
    const report = (token: string) => [
      {
        token,
        type: 'plantstore_client_secret',
        url: 'https://example.com/leak',
        source: 'commit',
      },
    ];
    await updateCredentialPolicy(h.service.identity, tenant, { leak_response: 'notify' });
    await expectEffects('service-account.leak-notify', sub, () =>
      answerLeakReport(h.service.identity, report(account!.secret)),
    );
    await updateCredentialPolicy(h.service.identity, tenant, { leak_response: 'revoke' });
    await expectEffects('service-account.leak-revoke', sub, () =>
      answerLeakReport(h.service.identity, report(account!.secret)),
    );
    await expectEffects('service-account.key-add', sub, () =>
      api.addKey(tenant, sub, { jwk: jwk() }).expect(201),
    );
    await api.reset(tenant, sub).expect(200);
    await expectEffects('service-account.secret-remove', sub, () =>
      api.removeSecret(tenant, sub).expect(204),
    );
    await expectEffects('service-account.delete', sub, () => api.remove(tenant, sub).expect(204));
  });

  test('When the realm credential policy changes, then each account of the realm is counted and published, nothing revoked', async () => {
    const { client_id: sub } = await api.createServiceAccount(tenant);
    await expectEffects('realm.credential-policy', sub, () =>
      updateCredentialPolicy(h.service.identity, tenant, { secret_max_age_days: 90 }),
    );
  });

  test('When a person changes, then the revocation and trail are the entry of their kind', async () => {
    const { tenant: realm } = await h.createTenant();
    const person = await h.createUser(realm, 'Edit');
    const { identity } = h.service;
    await expectEffects('person.role', person.id, () =>
      updateUser(identity, realm, person.id, { role: 'View' }),
    );
    await expectEffects('person.disable', person.id, () =>
      updateUser(identity, realm, person.id, { status: 'disabled' }),
    );
    await expectEffects('person.enable', person.id, () =>
      updateUser(identity, realm, person.id, { status: 'active' }),
    );
    await expectEffects('person.sign-out-everywhere', person.id, () =>
      signOutUserEverywhere(identity, realm, person.id),
    );
    await expectEffects('person.factors-reset', person.id, () =>
      resetFactors({ identity }, { tenant: realm, sub: person.id, actor: { sub: null } }),
    );
    await expectEffects('person.remove', person.id, () => removeUser(identity, realm, person.id));
  });
});
