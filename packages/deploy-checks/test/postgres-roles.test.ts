import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_DATABASE_URL, uniqueName } from '@plant/test-kit';
import { repoRoot, SERVICES } from '../src/repo-paths.js';

// deploy/postgres/init-roles.sh against the real Postgres, in a database of its own and with
// role names of its own (roles are server-wide), then each service's built migrations run as
// its role: the roles are enough to migrate, and limited to their own schema.
const server = new URL(TEST_DATABASE_URL);
const database = uniqueName('deploychecks').replace(/-/g, '_');
const roles = Object.fromEntries(
  SERVICES.map((s) => [s, `${database}_${s.replace(/-/g, '_')}`]),
) as Record<(typeof SERVICES)[number], string>;
const password = 'test-only-password';
const envPrefix = (service: string) => service.toUpperCase().replace(/-/g, '_');
const adminEnv = {
  ...process.env,
  PGHOST: server.hostname,
  PGPORT: server.port || '5432',
  PGUSER: decodeURIComponent(server.username) || 'postgres',
};

function psqlAdmin(sql: string, db = 'postgres'): string {
  return execFileSync('psql', ['-v', 'ON_ERROR_STOP=1', '-qAt', '-d', db, '-c', sql], {
    env: adminEnv,
    encoding: 'utf8',
  });
}

function urlFor(service: (typeof SERVICES)[number]): string {
  const url = new URL(TEST_DATABASE_URL);
  url.username = roles[service];
  url.password = password;
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs SQL as a service's role; returns the error line, or 'ok'. */
function asRole(service: (typeof SERVICES)[number], sql: string): string {
  const result = spawnSync('psql', ['-v', 'ON_ERROR_STOP=1', '-qAt', urlFor(service), '-c', sql], {
    encoding: 'utf8',
  });
  return result.status === 0
    ? 'ok'
    : (result.stderr.match(/ERROR: +(.*)/)?.[1] ?? result.stderr.trim());
}

const migrateOf = (service: string) => join(repoRoot, 'services', service, 'dist', 'migrate.js');

beforeAll(() => {
  psqlAdmin(`create database "${database}"`);
  const initEnv: NodeJS.ProcessEnv = {
    ...adminEnv,
    POSTGRES_USER: adminEnv.PGUSER,
    POSTGRES_DB: database,
  };
  for (const service of SERVICES) {
    initEnv[`${envPrefix(service)}_DB_ROLE`] = roles[service];
    initEnv[`${envPrefix(service)}_DB_PASSWORD`] = password;
  }
  execFileSync('bash', [join(repoRoot, 'deploy/postgres/init-roles.sh')], {
    env: initEnv,
    encoding: 'utf8',
  });
});

afterAll(() => {
  psqlAdmin(`drop database if exists "${database}" with (force)`);
  for (const role of Object.values(roles)) psqlAdmin(`drop role if exists "${role}"`);
});

describe('deploy/postgres/init-roles.sh', () => {
  test.each(SERVICES)(
    "When %s's built migrations run as its own role, then they succeed and its tables land in its schema",
    (service) => {
      expect(existsSync(migrateOf(service))).toBe(true);
      const run = spawnSync(process.execPath, [migrateOf(service)], {
        env: { PATH: process.env.PATH, DATABASE_URL: urlFor(service), LOG_LEVEL: 'error' },
        encoding: 'utf8',
      });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
      const schema = psqlAdmin(
        `select nspname from pg_namespace n join pg_roles r on r.oid = n.nspowner where r.rolname = '${roles[service]}'`,
        database,
      ).trim();
      const tables = psqlAdmin(
        `select count(*) from pg_tables where schemaname = '${schema}' and tableowner = '${roles[service]}'`,
        database,
      ).trim();
      expect(Number(tables)).toBeGreaterThanOrEqual(2);
    },
  );

  test('When a service role reaches outside its schema, then Postgres refuses: no new schemas, nothing in public, nothing in another service schema', () => {
    const schemaOf = (service: (typeof SERVICES)[number]) =>
      psqlAdmin(
        `select nspname from pg_namespace n join pg_roles r on r.oid = n.nspowner where r.rolname = '${roles[service]}'`,
        database,
      ).trim();
    const own = schemaOf('plant-store');
    const other = schemaOf('token-service');
    expect({
      ownSchema: asRole(
        'plant-store',
        `create table ${own}.deploy_check_probe (x int); drop table ${own}.deploy_check_probe`,
      ),
      newSchema: asRole('plant-store', 'create schema deploy_check_probe'),
      publicSchema: asRole('plant-store', 'create table public.deploy_check_probe (x int)'),
      otherSchemaRead: asRole('plant-store', `select count(*) from ${other}.knex_migrations`),
      otherSchemaWrite: asRole('account-admin', `create table ${other}.deploy_check_probe (x int)`),
    }).toEqual({
      ownSchema: 'ok',
      newSchema: `permission denied for database ${database}`,
      publicSchema: 'permission denied for schema public',
      otherSchemaRead: `permission denied for schema ${other}`,
      otherSchemaWrite: `permission denied for schema ${other}`,
    });
  });

  test.each(SERVICES)(
    'When %s migrates with MIGRATION_DATABASE_URL beside a DATABASE_URL that goes through a pooler, then it migrates straight to Postgres through the former',
    (service) => {
      // The pooler's address here reaches nothing: the migrations cannot have used it.
      const pooler = `postgres://${roles[service]}:${password}@127.0.0.1:1/${database}`;
      const run = spawnSync(process.execPath, [migrateOf(service)], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: pooler,
          MIGRATION_DATABASE_URL: urlFor(service),
          LOG_LEVEL: 'error',
        },
        encoding: 'utf8',
      });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    },
  );
});
