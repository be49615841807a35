// Seeding for `pnpm bench:scale`, with SQL, as years of production would have left the data:
// realms with their keys and a service account each, principals reset and deleted long ago,
// plants, audit events. The token service's own modules (built) encrypt the keys and digest
// the secrets, so what is stored is exactly what the service would have stored.
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { KeyEncryption } from '../../services/token-service/dist/signing-keys/key-encryption.js';
import {
  createClientSecretDigester,
  generateClientSecret,
} from '../../services/token-service/dist/credentials/client-secrets.js';

/** @typedef {import('pg').Client} Db */

/**
 * One RSA key for every seeded realm: generating 10,000 keys would take minutes of the 15. Each
 * realm's row has its own kid and its own ciphertext (the kid is the encryption's associated
 * data), so the token service and the Plant Store hold one key object per realm as they would.
 * @param {{keyEncryptionKey: string, pepper: string}} secrets
 */
export function realmSeeder({ keyEncryptionKey, pepper }) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateJwk = privateKey.export({ format: 'jwk' });
  const publicJwk = createPublicKey(createPrivateKey({ key: privateJwk, format: 'jwk' })).export({
    format: 'jwk',
  });
  const encryption = new KeyEncryption(keyEncryptionKey);
  const secret = generateClientSecret();
  const digest = createClientSecretDigester(pepper).digest(secret);
  return {
    /** The one secret of every seeded service account (each has its own client_id). */
    secret,
    /**
     * Realms `<prefix>-<i>` for i in [from, to), each with its key and one View service account `sa-<prefix>-<i>`.
     * @param {Db} db
     * @param {string} prefix
     * @param {number} from
     * @param {number} to
     */
    async seed(db, prefix, from, to) {
      for (let start = from; start < to; start += 1000) {
        const end = Math.min(to, start + 1000);
        const names = [];
        const kids = [];
        const publics = [];
        const sealed = [];
        for (let i = start; i < end; i++) {
          const realm = `${prefix}-${i}`;
          const kid = `${realm}-key`;
          names.push(realm);
          kids.push(kid);
          publics.push(
            JSON.stringify({
              kty: 'RSA',
              n: publicJwk.n,
              e: publicJwk.e,
              kid,
              alg: 'RS256',
              use: 'sig',
            }),
          );
          sealed.push(
            encryption
              .encrypt(JSON.stringify({ ...privateJwk, kid, alg: 'RS256', use: 'sig' }), kid)
              .toString('base64'),
          );
        }
        await db.query('insert into auth.realms (name) select unnest($1::text[])', [names]);
        await db.query(
          `insert into auth.signing_keys (kid, realm, public_jwk, private_key_encrypted)
           select k, r, p::jsonb, decode(s, 'base64') from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as t(k, r, p, s)`,
          [kids, names, publics, sealed],
        );
        await db.query(
          `insert into auth.principals (sub, realm, kind, created_by) select 'sa-' || r, r, 'service_account', 'bench:scale' from unnest($1::text[]) r`,
          [names],
        );
        await db.query(
          `insert into auth.service_accounts (sub, realm, name, role, secret_digest, secret_created_at) select 'sa-' || r, r, 'scale', 'View', $2, now() from unnest($1::text[]) r`,
          [names, digest],
        );
      }
      await db.query(
        'analyze auth.realms; analyze auth.signing_keys; analyze auth.principals; analyze auth.service_accounts',
      );
    },
  };
}

/**
 * Principals reset or deleted longer ago than a token lives: half deleted, half live with a
 * version above 1 (reset), in realm `realm`, as the token-version trigger recorded them, every
 * record `agoSeconds` old. What the token service does with such history (prune it) is what the
 * figures measure.
 * @param {Db} db
 * @param {string} realm
 * @param {number} from
 * @param {number} to
 * @param {number} agoSeconds
 */
export async function seedRevokedHistory(db, realm, from, to, agoSeconds) {
  await db.query(
    `insert into auth.principals (sub, realm, kind, token_version, created_at, created_by, deleted_at)
     select 'old-' || $1 || '-' || g, $1, 'service_account', 2, now() - make_interval(secs => $4 * 2), 'bench:scale',
            case when g % 2 = 0 then now() - make_interval(secs => $4) end
     from generate_series($2::int, $3::int - 1) g`,
    [realm, from, to, agoSeconds],
  );
  await db.query(
    `insert into auth.revocation_changes (position, realm, sub, version, deleted, changed_at)
     select nextval('auth.revocation_change_position'), $1, 'old-' || $1 || '-' || g, 2, g % 2 = 0, now() - make_interval(secs => $4)
     from generate_series($2::int, $3::int - 1) g`,
    [realm, from, to, agoSeconds],
  );
  await db.query('analyze auth.principals; analyze auth.revocation_changes');
}

/**
 * `count` plants with ids from+1..from+count for `tenant` (the Plant Store's table only).
 * @param {Db} db
 * @param {string} tenant
 * @param {number} from
 * @param {number} count
 */
export async function seedPlantRange(db, tenant, from, count) {
  await db.query(
    `insert into plants.plants (tenant, id, name, tag)
     select $1, g, 'plant ' || g, (array['indoor', 'outdoor', 'succulent', null])[1 + g % 4]
     from generate_series($2::bigint + 1, $2::bigint + $3::bigint) g`,
    [tenant, from, count],
  );
  await db.query('analyze plants.plants');
}

/**
 * `count` audit events of `tenant`, as the portal's actions write them (one actor, four kinds of action).
 * @param {Db} db
 * @param {string} tenant
 * @param {number} count
 */
export async function seedAuditEvents(db, tenant, count) {
  await db.query(
    `insert into admin.audit_events (tenant, occurred_at, actor_sub, actor_email, actor_type, action, target_client_id, target_name, details, request_id, address)
     select $1, now() - make_interval(secs => $2::int - g), 'bench-admin', 'admin@bench.test', 'user',
            (array['service_account.create', 'service_account.update', 'service_account.reset_secret', 'service_account.delete'])[1 + g % 4],
            'sa-' || (g % 500), 'robot-' || (g % 500), '{"role":"Edit"}'::jsonb, 'bench-' || g, '127.0.0.1'
     from generate_series(1, $2::int) g`,
    [tenant, count],
  );
  await db.query('analyze admin.audit_events');
}
