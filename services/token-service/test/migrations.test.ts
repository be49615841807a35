import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDatabase, migrateLatest, type Knex } from '@plant/shared/db';
import { TEST_DATABASE_URL, uniqueName } from '@plant/test-kit';
import { authSchema } from '../src/migrations/0001-auth-schema.js';
import { oidcPayloadDigests } from '../src/migrations/0002-oidc-payload-digests.js';
import { revocationSnapshotIndexes } from '../src/migrations/0003-revocation-snapshot-indexes.js';
import { revocationChanges } from '../src/migrations/0004-revocation-changes.js';
import { serviceAccountCredentials } from '../src/migrations/0005-service-account-credentials.js';
import { serviceAccountNameKeys } from '../src/migrations/0007-service-account-name-keys.js';
import { migrations } from '../src/migrations/index.js';

// A schema of its own: these tests run migrations up and down.
const schema = uniqueName('auth_migrations').replace(/-/g, '_');
let db: Knex;

beforeAll(() => {
  db = createDatabase({ connectionString: TEST_DATABASE_URL, schema, poolMax: 1 });
});

afterAll(async () => {
  await db.raw('drop schema if exists ?? cascade', [schema]);
  await db.destroy();
});

const indexesOf = async (table: string) =>
  (await db('pg_indexes')
    .where({ schemaname: schema, tablename: table })
    .orderBy('indexname')
    .pluck('indexname')) as string[];

const columnsOf = async (table: string) =>
  (
    await db('information_schema.columns')
      .where({ table_schema: schema, table_name: table })
      .orderBy('column_name')
      .select('column_name', 'data_type')
  ).map((c) => `${c.column_name} ${c.data_type}`);

describe('the token service migrations', () => {
  test('When it runs over rows stored with their ids in clear, then the rows are gone, every key column is a digest, and down and up again work', async () => {
    await migrateLatest(db, schema, [authSchema]);
    await db('oidc_payloads').insert({
      realm: 'r',
      model: 'Session',
      id: 'clear-session-id',
      payload: JSON.stringify({ jti: 'clear-session-id' }),
      uid: 'clear-uid',
    });

    await migrateLatest(db, schema, migrations);
    const after = {
      rows: (await db('oidc_payloads').count<Array<{ count: string }>>({ count: '*' }))[0]!.count,
      columns: await columnsOf('oidc_payloads'),
    };
    await db.transaction((trx) => oidcPayloadDigests.down(trx));
    const down = await columnsOf('oidc_payloads');
    await db.transaction((trx) => oidcPayloadDigests.up(trx));

    expect(after).toEqual({
      rows: '0',
      columns: [
        'consumed_at timestamp with time zone',
        'expires_at timestamp with time zone',
        'grant_id_digest bytea',
        'id_digest bytea',
        'model text',
        'payload jsonb',
        'realm text',
        'uid_digest bytea',
        'user_code_digest bytea',
      ],
    });
    expect(down).toEqual(
      expect.arrayContaining(['id text', 'uid text', 'grant_id text', 'user_code text']),
    );
    expect(await columnsOf('oidc_payloads')).toEqual(after.columns);
  });

  test('When the snapshot index migration is undone and redone, then the principals carry the index of each snapshot arm, and not the one it replaced', async () => {
    await migrateLatest(db, schema, migrations);
    await db.transaction((trx) => revocationChanges.down(trx));

    const applied = await indexesOf('principals');
    await db.transaction((trx) => revocationSnapshotIndexes.down(trx));
    const undone = await indexesOf('principals');
    await db.transaction((trx) => revocationSnapshotIndexes.up(trx));

    expect(applied).toEqual(expect.arrayContaining(['principals_changed', 'principals_deleted']));
    expect(applied).not.toContain('principals_revoked');
    expect(undone).toEqual(expect.arrayContaining(['principals_revoked']));
    expect(undone).not.toContain('principals_changed');
    expect(await indexesOf('principals')).toEqual(applied);
    await db.transaction((trx) => revocationChanges.up(trx));
  });

  test('When the change feed migration runs over existing principals, then a changed live principal and a deletion are carried into the feed, the deletion at its own time, and down and up again work', async () => {
    await migrateLatest(db, schema, migrations);
    await db.transaction((trx) => revocationChanges.down(trx));
    await db('realms').insert({ name: 'carried' });
    await db('principals').insert([
      { sub: 'unchanged', realm: 'carried', kind: 'service_account' },
      { sub: 'reset', realm: 'carried', kind: 'service_account', token_version: 3 },
      {
        sub: 'deleted',
        realm: 'carried',
        kind: 'service_account',
        token_version: 2,
        deleted_at: new Date('2020-01-01T00:00:00Z'),
      },
    ]);

    await db.transaction((trx) => revocationChanges.up(trx));
    const carried = await db('revocation_changes')
      .orderBy('position')
      .select('position', 'sub', 'version', 'deleted', 'changed_at');
    await db('principals').where({ sub: 'unchanged' }).update({ token_version: 2 });

    expect(carried.map(({ changed_at: _at, ...row }) => row)).toEqual([
      { position: '1', sub: 'deleted', version: 2, deleted: true },
      { position: '2', sub: 'reset', version: 3, deleted: false },
    ]);
    expect(carried[0].changed_at).toEqual(new Date('2020-01-01T00:00:00Z'));
    expect(
      await db('revocation_changes').where({ sub: 'unchanged' }).select('position', 'version'),
    ).toEqual([{ position: '3', version: 2 }]);
    expect(await indexesOf('principals')).not.toContain('principals_changed');
  });

  test('When the credentials migration runs over accounts with secrets, then each secret dates from its account, and down and up again work', async () => {
    await migrateLatest(db, schema, migrations);
    await db('realms').insert({ name: 'mig-realm' }).onConflict('name').ignore();
    await db('principals').insert({
      sub: 'sa-mig',
      realm: 'mig-realm',
      kind: 'service_account',
      created_at: new Date('2026-01-02T03:04:05Z'),
    });
    await db.transaction((trx) => serviceAccountCredentials.down(trx));
    await db('service_accounts').insert({
      sub: 'sa-mig',
      realm: 'mig-realm',
      name: 'mig',
      role: 'View',
      secret_digest: 'ab',
    });

    await db.transaction((trx) => serviceAccountCredentials.up(trx));
    const row = await db('service_accounts').where({ sub: 'sa-mig' }).first();

    expect(new Date(row.secret_created_at).toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect({
      disabled_at: row.disabled_at,
      credentials_revision: row.credentials_revision,
    }).toEqual({ disabled_at: null, credentials_revision: 1 });
    await expect(
      db('service_accounts').where({ sub: 'sa-mig' }).update({ secret_digest: null }),
    ).rejects.toThrow(/service_accounts_secret_created/);
    expect(await columnsOf('service_account_keys')).toEqual(
      expect.arrayContaining(['public_jwk jsonb', 'thumbprint text']),
    );
  });

  test('When the name-key migration runs over accounts that already look alike, then the oldest keeps the key, the others keep their rows without one, and a new look-alike is refused', async () => {
    await migrateLatest(db, schema, migrations);
    await db.transaction((trx) => serviceAccountNameKeys.down(trx));
    const realm = uniqueName('keys');
    const other = uniqueName('keys');
    await db('realms').insert([{ name: realm }, { name: other }]);
    const accounts = [
      { sub: 'sa-newer', realm, name: '\u0410dmin', at: '2026-02-01T00:00:00Z' },
      { sub: 'sa-older', realm, name: 'Admin', at: '2026-01-01T00:00:00Z' },
      {
        sub: 'sa-fullwidth',
        realm,
        name: '\uff21\uff24\uff2d\uff29\uff2e',
        at: '2026-03-01T00:00:00Z',
      },
      { sub: 'sa-plain', realm, name: 'nightly', at: '2026-01-01T00:00:00Z' },
      { sub: 'sa-other-realm', realm: other, name: '\u0410dmin', at: '2026-04-01T00:00:00Z' },
    ];
    await db('principals').insert(
      accounts.map((a) => ({
        sub: a.sub,
        realm: a.realm,
        kind: 'service_account',
        created_at: new Date(a.at),
      })),
    );
    await db('service_accounts').insert(
      accounts.map((a) => ({
        sub: a.sub,
        realm: a.realm,
        name: a.name,
        role: 'View',
        secret_digest: 'ab',
        secret_created_at: new Date(a.at),
      })),
    );

    await db.transaction((trx) => serviceAccountNameKeys.up(trx));
    const rows = await db('service_accounts')
      .whereIn(
        'sub',
        accounts.map((a) => a.sub),
      )
      .orderBy('sub')
      .select('sub', 'name', 'name_key');

    expect(rows).toEqual([
      { sub: 'sa-fullwidth', name: '\uff21\uff24\uff2d\uff29\uff2e', name_key: null },
      { sub: 'sa-newer', name: '\u0410dmin', name_key: null },
      { sub: 'sa-older', name: 'Admin', name_key: 'adrnin' },
      { sub: 'sa-other-realm', name: '\u0410dmin', name_key: 'adrnin' },
      { sub: 'sa-plain', name: 'nightly', name_key: 'nightly' },
    ]);
    await db('principals').insert({ sub: 'sa-late', realm, kind: 'service_account' });
    await expect(
      db('service_accounts').insert({
        sub: 'sa-late',
        realm,
        name: 'ADM\u0399N',
        name_key: 'adrnin',
        role: 'View',
        secret_digest: 'ab',
        secret_created_at: new Date(),
      }),
    ).rejects.toThrow(/service_accounts_name_key_unique/);
  });
});
