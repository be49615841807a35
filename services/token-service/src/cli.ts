import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AppError } from '@plant/shared/api';
import { ConfigError, env, loadConfig } from '@plant/shared/config';
import { createDatabase } from '@plant/shared/db';
import { createLogger } from '@plant/shared/logging';
import { createRedisClient, redisTargetOf, type RedisTarget } from '@plant/shared/redis';
import {
  REVOCATION_CHANNEL,
  revocationMessage,
  type RevocationEntry,
} from '@plant/shared/token-service-client';
import type { z } from 'zod';
import { configShape } from './config.js';
import { SCHEMA } from './migrations/index.js';
import { createRepositories } from './repositories.js';
import {
  KeyEncryption,
  getSigningAlgorithm,
  publishRotation,
  rotateSigningKey,
} from './signing-keys/index.js';
import {
  EmailSchema,
  PasswordSchema,
  resetServiceAccountSecret,
  TenantNameSchema,
  UserRoleSchema,
} from './service-accounts/index.js';
import {
  assertTenantExists,
  issuerOf,
  KEY_ROTATION_CHANNEL,
  keyChangeMessage,
} from './realms/index.js';
import { createTenant } from './realm-creation/index.js';
import { PORTAL_CLIENT_ID, SIGNING_ALGORITHMS, type SigningAlgorithm } from '@plant/shared/api';
import { UsageError, UserNotFound, type IdentityContext } from './platform/index.js';
import {
  getFactorPolicy,
  resetFactors,
  setFactorPolicy,
  type ChangePublisher,
  type ManageDeps,
} from './second-factors/index.js';
import { createUser } from './people/index.js';
import { createClientSecretDigester } from './credentials/index.js';

/**
 * Operator CLI (no UI): `pnpm --silent cli <command>`. Each command prints one JSON line on
 * success, or one line on stderr and a non-zero exit code.
 */
const USAGE = `usage:
  cli tenant create <tenant> --admin-email <email> (--admin-password-file <path|-> | --admin-password <password>) [--alg RS256|ES256] [--admin-factor required|optional]
  cli tenant policy <tenant> [--admin-factor required|optional]
  cli user create <tenant> --email <email> (--password-file <path|-> | --password <password>) --role <View|Edit|Account Admin>
  cli user reset-factors <tenant> --email <email>
  cli keys rotate <tenant> [--alg RS256|ES256]
  cli keys show <tenant>
  cli service-accounts reset-secrets <tenant> [--client-id <id>]...
--alg is the algorithm the realm signs its tokens with (default RS256; keys rotate keeps the realm's
unless told): switching is a rotation, the old key stays published until its tokens have expired.
--admin-factor: must an Account Admin hold a second factor (passkey or authenticator app)? New
tenants: required unless told; tenant policy without it prints the policy.
user reset-factors removes every second factor and recovery code of a person (a locked-out last
admin): their next sign-in enrols a new one where the policy requires it.
service-accounts reset-secrets gives every service account of the tenant (or each --client-id) a new
secret, as a portal reset does: the old secret fails and its tokens are revoked. It prints the new
secrets once; run it after restoring the database to an earlier point (docs/deploy.md, "Restore").
It needs SECRET_PEPPER.
A password file of "-" is read from standard input; a password on the command line lands in shell
history, process lists and audit logs (kubectl exec), so give it on the command line only on a laptop.`;

/** Longer than any password PasswordSchema accepts, so a wrong file is refused, not read whole. */
const PASSWORD_FILE_MAX_BYTES = 4096;

const cliShape = {
  DATABASE_URL: configShape.DATABASE_URL,
  REDIS_URL: configShape.REDIS_URL,
  REDIS_SENTINELS: configShape.REDIS_SENTINELS,
  REDIS_SENTINEL_NAME: configShape.REDIS_SENTINEL_NAME,
  REDIS_SENTINEL_PASSWORD: configShape.REDIS_SENTINEL_PASSWORD,
  AUTH_URL: configShape.AUTH_URL,
  KEY_ENCRYPTION_KEY: configShape.KEY_ENCRYPTION_KEY,
  // Only `service-accounts reset-secrets` digests secrets; the other commands run without it.
  SECRET_PEPPER: configShape.SECRET_PEPPER.optional(),
  PORTAL_URL: configShape.PORTAL_URL,
  CLI_PUBLISH_EVENTS: env
    .bool(true)
    .describe(
      'Announce key rotations and factor changes on Redis so running replicas act on them at once',
    ),
};

function parse<T>(schema: z.ZodType<T>, value: unknown, name: string): T {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new UsageError(`${name}: ${result.error.issues[0]?.message ?? 'invalid'}`);
  return result.data;
}

function option(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string') throw new UsageError(`--${name} is required`);
  return value;
}

/** `--<name>-file <path|->` (standard input for `-`) or `--<name> <value>`: exactly one. */
function secretOption(values: Record<string, unknown>, name: string): string {
  const file = values[`${name}-file`];
  const inline = values[name];
  if (file !== undefined && inline !== undefined)
    throw new UsageError(`give --${name}-file or --${name}, not both`);
  if (typeof file !== 'string') return option(values, name);
  let text: string;
  try {
    const buffer = readFileSync(file === '-' ? 0 : file);
    if (buffer.length > PASSWORD_FILE_MAX_BYTES)
      throw new UsageError(`--${name}-file: larger than ${PASSWORD_FILE_MAX_BYTES} bytes`);
    text = buffer.toString('utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(
      `--${name}-file: cannot read ${file === '-' ? 'standard input' : JSON.stringify(file)}`,
    );
  }
  // One trailing line break (echo, editors) is not part of the password; anything else is.
  return text.replace(/\r?\n$/, '');
}

function algOption(values: Record<string, unknown>): SigningAlgorithm | undefined {
  const value = values.alg;
  if (value === undefined) return undefined;
  const alg = SIGNING_ALGORITHMS.find((known) => known === value);
  if (alg === undefined)
    throw new UsageError(`--alg must be one of ${SIGNING_ALGORITHMS.join(', ')}`);
  return alg;
}

/** `--admin-factor required|optional` as the realm's `require_admin_factor`. */
function adminFactorOption(values: Record<string, unknown>): boolean | undefined {
  const value = values['admin-factor'];
  if (value === undefined) return undefined;
  if (value === 'required') return true;
  if (value === 'optional') return false;
  throw new UsageError('--admin-factor must be required or optional');
}

/** `--alg` and `--admin-factor`, where the command takes them. */
function realmOptions(command: string, values: Record<string, unknown>) {
  const alg = algOption(values);
  if (alg !== undefined && command !== 'tenant create' && command !== 'keys rotate')
    throw new UsageError(`--alg does not apply to ${command}`);
  const adminFactor = adminFactorOption(values);
  if (adminFactor !== undefined && command !== 'tenant create' && command !== 'tenant policy')
    throw new UsageError(`--admin-factor does not apply to ${command}`);
  return { alg, adminFactor };
}

/** The people commands of the second-factor policy: the realm's policy, and a locked-out person's reset. */
async function factorCommand(
  command: 'tenant policy' | 'user reset-factors',
  tenant: string,
  values: Record<string, unknown>,
  ctx: ManageDeps['identity'] & Pick<IdentityContext, 'users'>,
  adminFactor: boolean | undefined,
  { announce }: { announce: RedisTarget | undefined },
): Promise<unknown> {
  // The people whose sessions the change ends (a reset, the policy switched on): announced
  // after commit, so every replica ends them at their next request.
  const changed: RevocationEntry[] = [];
  const publisher: ChangePublisher = { publish: async (entry) => changed.push(entry) };
  const deps = { identity: { ...ctx, publisher } };
  try {
    return await runFactorCommand(command, tenant, values, ctx, adminFactor, deps);
  } finally {
    if (announce !== undefined && changed.length > 0) await announceRevocations(announce, changed);
  }
}

async function runFactorCommand(
  command: 'tenant policy' | 'user reset-factors',
  tenant: string,
  values: Record<string, unknown>,
  ctx: Pick<IdentityContext, 'users'>,
  adminFactor: boolean | undefined,
  deps: ManageDeps,
): Promise<unknown> {
  const actor = { sub: null, email: 'cli' };
  if (command === 'tenant policy') {
    const policy =
      adminFactor === undefined
        ? await getFactorPolicy(deps, tenant)
        : await setFactorPolicy(deps, { tenant, requireAdminFactor: adminFactor, actor });
    // The revision is the API's ETag: an operator's output names the policy only.
    return { tenant, require_admin_factor: policy.require_admin_factor };
  }
  const email = parse(EmailSchema, option(values, 'email'), '--email');
  const credential = await ctx.users.findSignInCredential(tenant, email);
  if (!credential.sub) throw new UserNotFound();
  const reset = await resetFactors(deps, { tenant, sub: credential.sub, actor });
  return { tenant, user: { id: credential.sub, email }, factors_removed: reset.removed };
}

const COMMANDS = [
  'tenant create',
  'tenant policy',
  'user create',
  'user reset-factors',
  'keys rotate',
  'keys show',
  'service-accounts reset-secrets',
];

/** A command line understood: its command, tenant and options, all checked before any connection. */
interface CommandLine {
  command: string;
  tenant: string;
  values: Record<string, unknown>;
  alg: SigningAlgorithm | undefined;
  adminFactor: boolean | undefined;
}

type CliContext = ReturnType<typeof createRepositories> & { encryption: KeyEncryption };

async function main(argv: string[]): Promise<unknown> {
  const line = parseCommandLine(argv);
  const config = loadConfig(cliShape);
  // stdout carries the command's JSON answer (scripts parse it): knex's warnings go to stderr.
  const logger = createLogger({
    name: 'token-service-cli',
    level: 'warn',
    destination: { write: (text: string) => void process.stderr.write(text) },
  });
  const db = createDatabase({
    connectionString: config.DATABASE_URL,
    schema: SCHEMA,
    poolMax: 2,
    applicationName: 'token-service-cli',
    logger,
  });
  const ctx = {
    ...createRepositories(db),
    encryption: new KeyEncryption(config.KEY_ENCRYPTION_KEY),
  };
  try {
    return await runCommand(line, ctx, config);
  } finally {
    await db.destroy();
  }
}

function parseCommandLine(argv: string[]): CommandLine {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'admin-email': { type: 'string' },
      'admin-password': { type: 'string' },
      'admin-password-file': { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      'password-file': { type: 'string' },
      role: { type: 'string' },
      alg: { type: 'string' },
      'admin-factor': { type: 'string' },
      'client-id': { type: 'string', multiple: true },
    },
  });
  const [noun, verb, tenantArg, ...rest] = positionals;
  const command = `${noun ?? ''} ${verb ?? ''}`;
  if (!COMMANDS.includes(command))
    throw new UsageError(`unknown command "${command.trim()}"\n${USAGE}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  if (tenantArg === undefined) throw new UsageError(`the tenant name is missing\n${USAGE}`);
  if (!TenantNameSchema.safeParse(tenantArg).success)
    throw new UsageError(
      `invalid tenant name ${JSON.stringify(tenantArg)}: use 1-63 characters of a-z, 0-9 and inner hyphens`,
    );
  const tenant = tenantArg;
  const { alg, adminFactor } = realmOptions(command, values);
  return { command, tenant, values, alg, adminFactor };
}

async function runCommand(
  { command, tenant, values, alg, adminFactor }: CommandLine,
  ctx: CliContext,
  config: ReturnType<typeof loadConfig<typeof cliShape>>,
): Promise<unknown> {
  if (command === 'tenant create') {
    const adminEmail = parse(EmailSchema, option(values, 'admin-email'), '--admin-email');
    const adminPassword = parse(
      PasswordSchema,
      secretOption(values, 'admin-password'),
      '--admin-password',
    );
    const created = await createTenant(ctx, {
      tenant,
      adminEmail,
      adminPassword,
      ...(alg === undefined ? {} : { alg }),
      ...(adminFactor === undefined ? {} : { requireAdminFactor: adminFactor }),
    });
    return {
      tenant: created.tenant,
      issuer: issuerOf(config.AUTH_URL, tenant),
      kid: created.kid,
      alg: created.alg,
      portal_client_id: PORTAL_CLIENT_ID,
      admin: created.admin,
      require_admin_factor: adminFactor ?? true,
    };
  }
  if (command === 'user create') {
    const email = parse(EmailSchema, option(values, 'email'), '--email');
    const password = parse(PasswordSchema, secretOption(values, 'password'), '--password');
    const role = parse(UserRoleSchema, option(values, 'role'), '--role');
    const user = await createUser(ctx, tenant, { email, password, role, actor: 'cli' });
    return { tenant, user };
  }
  if (command === 'tenant policy' || command === 'user reset-factors')
    return await factorCommand(command, tenant, values, ctx, adminFactor, {
      announce: config.CLI_PUBLISH_EVENTS ? redisTargetOf(config) : undefined,
    });
  if (command === 'keys show') return await getSigningAlgorithm(ctx, tenant);
  if (command === 'service-accounts reset-secrets')
    return await resetSecretsCommand(tenant, values, ctx, config);
  const rotated = await rotateSigningKey(ctx, tenant, alg);
  if (config.CLI_PUBLISH_EVENTS)
    await publishRotation((realm) => announceRotation(redisTargetOf(config), realm), tenant);
  return rotated;
}

/**
 * New secrets for the tenant's service accounts (each `--client-id`, else all of them), each
 * through the one Reset Secret (the old secret fails, its tokens are revoked, the change's
 * effects applied); the revocations are announced after, so every replica drops them at once.
 * One account after another: a failure stops the command, and what it printed so far is lost
 * with it, so the JSON line comes only once every reset is done.
 */
async function resetSecretsCommand(
  tenant: string,
  values: Record<string, unknown>,
  ctx: CliContext,
  config: ReturnType<typeof loadConfig<typeof cliShape>>,
): Promise<unknown> {
  if (config.SECRET_PEPPER === undefined)
    throw new UsageError("service-accounts reset-secrets needs SECRET_PEPPER (the services' own)");
  const given = values['client-id'] as string[] | undefined;
  await assertTenantExists(ctx, tenant);
  const clientIds = given ?? (await ctx.serviceAccounts.list(tenant)).map((account) => account.sub);
  const changed: RevocationEntry[] = [];
  const identity = {
    ...ctx,
    secrets: createClientSecretDigester(config.SECRET_PEPPER),
    publisher: { publish: async (entry: RevocationEntry) => void changed.push(entry) },
  };
  const reset: Array<{ client_id: string; name: string; secret: string }> = [];
  try {
    for (const clientId of clientIds) {
      const account = await resetServiceAccountSecret(identity, tenant, clientId);
      reset.push({ client_id: account.client_id, name: account.name, secret: account.secret });
    }
  } finally {
    if (config.CLI_PUBLISH_EVENTS && changed.length > 0)
      await announceRevocations(redisTargetOf(config), changed);
  }
  return { tenant, reset };
}

/**
 * Best effort: what the CLI changed is announced on Redis after commit. Replicas also re-read the
 * change feed (a portal session its person within a minute) and re-check their realm's key every
 * 30 s, so a Redis that cannot be reached only delays the change: `late` says by how much.
 */
async function announce(
  target: RedisTarget,
  messages: Array<[channel: string, message: string]>,
  late: string,
): Promise<void> {
  const redis = createRedisClient(target, {
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: true,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    for (const [channel, message] of messages) await redis.publish(channel, message);
  } catch {
    process.stderr.write(`note: could not announce the change on Redis; ${late}\n`);
  } finally {
    redis.disconnect();
  }
}

function announceRevocations(target: RedisTarget, entries: RevocationEntry[]): Promise<void> {
  return announce(
    target,
    entries.map((entry) => [REVOCATION_CHANNEL, revocationMessage(entry)]),
    'running replicas pick it up within a minute',
  );
}

function announceRotation(target: RedisTarget, tenant: string): Promise<void> {
  return announce(
    target,
    [[KEY_ROTATION_CHANNEL, keyChangeMessage(tenant)]],
    'running replicas pick the rotation up within 30 s',
  );
}

try {
  const result = await main(process.argv.slice(2));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
} catch (err) {
  let line: string;
  let code = 1;
  if (err instanceof UsageError) {
    line = `error: ${err.message}`;
    code = 2;
  } else if (err instanceof ConfigError || err instanceof AppError) line = `error: ${err.message}`;
  else if (
    (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
    (err as { code?: string }).code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
  ) {
    line = `error: ${(err as Error).message}\n${USAGE}`;
    code = 2;
  } else line = `error: ${(err as Error).message ?? String(err)}`;
  process.stderr.write(`${line}\n`);
  process.exit(code);
}
