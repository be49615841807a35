/**
 * `plantctl service-accounts` (alias `sa`): everything the portal's Settings → Service accounts
 * does. An account is named by its client_id or its name.
 */
import { readFile } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import type { ApiClient } from '../api/api-client.js';
import {
  accountPath,
  type Delegation,
  type DelegationChange,
  sameAudience,
  type ServiceAccount,
  type ServiceAccountCredentials,
  type ServiceAccountSecret,
  type ServiceAccountWithSecret,
} from '../api/resources.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Column, printResult } from '../output/output.js';
import type { CommandContext } from './context.js';
import { type SecretOptions, secretSink, withSecretOptions } from './secret-options.js';

const ACCOUNT_COLUMNS: Column<ServiceAccount>[] = [
  ['NAME', (a) => a.name],
  ['CLIENT ID', (a) => a.client_id],
  ['ROLE', (a) => a.role],
  ['GRANTS', (a) => a.grants.map((g) => g.tag)],
  ['DPOP', (a) => (a.dpop_bound_access_tokens ? 'required' : '-')],
  ['SIGNALS', (a) => (a.receive_signals ? 'yes' : '-')],
  ['QUOTA', (a) => (a.quota ? `${a.quota.per_minute}/min ${a.quota.mode}` : 'default')],
  ['STATE', (a) => (a.disabled ? 'disabled' : 'active')],
  ['LAST USED', (a) => a.last_used_at],
];

/** The account named by `ref` (its client_id, else its exact name). */
async function findAccount(api: ApiClient, ref: string): Promise<ServiceAccount> {
  const list = await api.request<ServiceAccount[]>('GET', '/service-accounts');
  const found = list.body.find((a) => a.client_id === ref) ?? list.body.find((a) => a.name === ref);
  if (found === undefined)
    throw new CliError(`No service account ${JSON.stringify(ref)} in ${api.tenant}`, EXIT.notFound);
  return found;
}

/** The client_id of the account named by `ref` (its client_id, else its exact name). */
export async function resolveAccount(api: ApiClient, ref: string): Promise<string> {
  return (await findAccount(api, ref)).client_id;
}

const bool = (value: string): boolean => {
  if (value === 'on' || value === 'true') return true;
  if (value === 'off' || value === 'false') return false;
  throw new CliError(`expected on or off, not ${value}`, EXIT.usage);
};

// long: the command table of one noun, one entry per subcommand (data).
export function registerServiceAccountCommands(program: Command, ctx: CommandContext): void {
  const sa = program
    .command('service-accounts')
    .alias('sa')
    .description("Manage the tenant's service accounts");
  const printAccount = (account: ServiceAccount | ServiceAccount[]) =>
    printResult(ctx.io, ctx.output, account, ACCOUNT_COLUMNS);
  const change = async (ref: string, method: string, rest: string, body?: unknown) => {
    const api = await ctx.api();
    const res = await api.request<ServiceAccount>(
      method,
      accountPath(await resolveAccount(api, ref), rest),
      body === undefined ? {} : { body },
    );
    return res.body;
  };

  sa.command('list')
    .description('List the service accounts (never a secret)')
    .action(async () =>
      printAccount(
        (await (await ctx.api()).request<ServiceAccount[]>('GET', '/service-accounts')).body,
      ),
    );

  sa.command('get <account>')
    .description('Show one service account (by client_id or name)')
    .action(async (ref: string) => {
      const api = await ctx.api();
      printAccount(
        (await api.request<ServiceAccount>('GET', accountPath(await resolveAccount(api, ref))))
          .body,
      );
    });

  withSecretOptions(
    sa
      .command('create <name>')
      .description(
        'Create a service account (role View); its secret is shown once, or written where --secret-file says',
      ),
  ).action(async (name: string, options: SecretOptions) => {
    const sink = await secretSink(ctx, options);
    const res = await (await ctx.api()).request<ServiceAccountWithSecret>(
      'POST',
      '/service-accounts',
      { body: { name } },
    );
    await sink.put(res.body);
    ctx.tell(`Created ${res.body.name} (${res.body.client_id}).`);
  });

  withSecretOptions(
    sa
      .command('reset-secret <account>')
      .description('Replace the secret: the old one and every token it got stop working now'),
  ).action(async (ref: string, options: SecretOptions) => {
    const sink = await secretSink(ctx, options);
    await sink.put((await change(ref, 'POST', '/reset-secret')) as ServiceAccountWithSecret);
  });

  sa.command('delete <account>')
    .description('Delete a service account: its credentials and tokens stop working now')
    .option('--yes', 'do it (without --yes nothing is deleted)')
    .action(async (ref: string, options: { yes?: boolean }) => {
      if (options.yes !== true) throw new CliError('Deleting needs --yes', EXIT.usage);
      await change(ref, 'DELETE', '');
      ctx.tell(`Deleted ${ref}.`);
    });

  for (const verb of ['disable', 'enable'] as const)
    sa.command(`${verb} <account>`)
      .description(
        verb === 'disable'
          ? 'Disable: no token until enabled, its tokens refused now'
          : 'Enable a disabled account',
      )
      .action(async (ref: string) => printAccount(await change(ref, 'POST', `/${verb}`)));

  sa.command('role <account> <role>')
    .description('Set the role (View or Edit); older tokens are revoked')
    .action(async (ref: string, role: string) => {
      if (role !== 'View' && role !== 'Edit')
        throw new CliError('role must be View or Edit', EXIT.usage);
      printAccount(await change(ref, 'PATCH', '', { role }));
    });

  sa.command('grants <account> [tags...]')
    .description(
      'Replace the grants: edit on each plant tag given (none: no grants); older tokens are revoked',
    )
    .action(async (ref: string, tags: string[]) =>
      printAccount(
        await change(ref, 'PATCH', '', {
          grants: tags.map((tag) => ({ tag, permission: 'edit' })),
        }),
      ),
    );

  sa.command('dpop <account> <on|off>')
    .description('Require sender-constrained tokens (DPoP, RFC 9449) or stop requiring them')
    .action(async (ref: string, value: string) =>
      printAccount(await change(ref, 'PATCH', '', { dpop_bound_access_tokens: bool(value) })),
    );

  sa.command('signals <account> <on|off>')
    .description("Allow the account to receive the tenant's Shared Signals, or stop it")
    .action(async (ref: string, value: string) =>
      printAccount(await change(ref, 'PATCH', '', { receive_signals: bool(value) })),
    );

  sa.command('quota <account>')
    .description("Set the account's own grant quota, or --default for the tenant's")
    .option('--per-minute <n>', 'grants per minute (1..100000)', (v) => Number.parseInt(v, 10))
    .addOption(
      new Option('--mode <mode>', 'what happens over it').choices(['off', 'log', 'enforce']),
    )
    .option('--default', "use the tenant's default quota")
    .action(async (ref: string, o: { perMinute?: number; mode?: string; default?: boolean }) => {
      if (o.default === true) return printAccount(await change(ref, 'PATCH', '', { quota: null }));
      if (o.perMinute === undefined || o.mode === undefined)
        throw new CliError('give --per-minute and --mode, or --default', EXIT.usage);
      printAccount(
        await change(ref, 'PATCH', '', { quota: { per_minute: o.perMinute, mode: o.mode } }),
      );
    });

  registerCredentialCommands(sa, ctx);
  registerSecretCommands(sa, ctx);
  registerDelegationCommands(sa, ctx);
}

const DELEGATION_COLUMNS: Column<Delegation>[] = [
  ['AUDIENCE', (d) => d.audience],
  ['SCOPE', (d) => d.scope],
  ['ADDED', (d) => d.created_at],
  ['BY', (d) => d.created_by],
];

/** What `allow` gives when no scope is named: the least one. */
const DEFAULT_DELEGATION_SCOPE = 'plants:read';

/** The account's delegations as read, with the ETag a change of them is conditional on. */
interface ReadDelegations {
  api: ApiClient;
  path: string;
  etag?: string;
  delegations: Delegation[];
}

/**
 * Reads the account, then its delegations. The delegations answer no ETag of their own: the
 * account's covers everything under it, its delegations among them (the token service counts
 * the account's revision up with each change of them; decisions 0043 and 0045). Read before
 * them, the tag can only be older than what was read, never newer: a change made in between
 * makes the PUT 412, not lost.
 */
async function readDelegations(ctx: CommandContext, ref: string): Promise<ReadDelegations> {
  const api = await ctx.api();
  const path = accountPath(await resolveAccount(api, ref));
  const { etag } = await api.request<ServiceAccount>('GET', path);
  const { body } = await api.request<{ delegations: Delegation[] }>('GET', `${path}/delegations`);
  return { api, path, delegations: body.delegations, ...(etag === undefined ? {} : { etag }) };
}

/** Puts the whole set in place, conditional on the account as it was read (412: exit 5). */
async function putDelegations(
  read: ReadDelegations,
  next: DelegationChange[],
): Promise<Delegation[]> {
  const { body } = await read.api.request<{ delegations: Delegation[] }>(
    'PUT',
    `${read.path}/delegations`,
    {
      body: { delegations: next.map(({ audience, scope }) => ({ audience, scope })) },
      ...(read.etag === undefined ? {} : { ifMatch: read.etag }),
    },
  );
  return body.delegations;
}

/**
 * `sa delegations`: where an account may act for others (token exchange, RFC 8693). The API
 * takes the whole set at once; `allow` and `revoke` read it, change one audience's entry and put
 * the set back, so the other audiences' entries stay as they were.
 */
function registerDelegationCommands(sa: Command, ctx: CommandContext): void {
  const delegations = sa
    .command('delegations')
    .description(
      'Where an account may act for others (token exchange): target APIs and the most scope it may delegate at each',
    );
  const print = (list: Delegation[]) => printResult(ctx.io, ctx.output, list, DELEGATION_COLUMNS);
  delegations
    .command('list <account>')
    .description("The account's permissions to act for others, by target audience")
    .action(async (ref: string) => print((await readDelegations(ctx, ref)).delegations));
  delegations
    .command('allow <account> <audience> [scopes...]')
    .description(
      `Allow acting for others at one API with at most these scopes (plants:read, plants:write; none: ${DEFAULT_DELEGATION_SCOPE}); replaces that API's entry, keeps the others`,
    )
    .action(async (ref: string, audience: string, scopes: string[]) => {
      // "plants:read plants:write" as one argument is the same as two.
      const values = [...new Set(scopes.flatMap((s) => s.split(' ')).filter(Boolean))];
      const scope = values.length === 0 ? DEFAULT_DELEGATION_SCOPE : values.join(' ');
      const read = await readDelegations(ctx, ref);
      const others = read.delegations.filter((d) => !sameAudience(d.audience, audience));
      print(await putDelegations(read, [...others, { audience, scope }]));
    });
  delegations
    .command('revoke <account> <audience>')
    .description(
      "Stop the account acting for others at one API; the account's older tokens are revoked, the exchanged ones among them",
    )
    .action(async (ref: string, audience: string) => {
      const read = await readDelegations(ctx, ref);
      const kept = read.delegations.filter((d) => !sameAudience(d.audience, audience));
      if (kept.length === read.delegations.length)
        throw new CliError(`${ref} may not act for others at ${audience}`, EXIT.notFound);
      await putDelegations(read, kept);
      ctx.tell(`Revoked ${ref}'s delegation to ${audience}.`);
    });
}

/**
 * `sa secrets`: rotation without an outage. Add a second secret, move the client to it, then
 * remove the old one: exactly the tokens the removed secret got are revoked, the new one's stay.
 */
function registerSecretCommands(sa: Command, ctx: CommandContext): void {
  const secrets = sa
    .command('secrets')
    .description("An account's secrets (at most two live), for a rotation without an outage");
  secrets
    .command('list <account>')
    .description("The account's secrets: id and dates, never the value")
    .action(async (ref: string) => {
      const api = await ctx.api();
      const { body } = await api.request<ServiceAccountCredentials>(
        'GET',
        accountPath(await resolveAccount(api, ref), '/credentials'),
      );
      printResult(ctx.io, ctx.output, body.secrets, [
        ['ID', (s) => s.id],
        ['CREATED', (s) => s.created_at],
        ['EXPIRES', (s) => s.expires_at ?? 'never'],
        ['LAST USED', (s) => s.last_used_at],
      ]);
    });
  withSecretOptions(
    secrets
      .command('add <account>')
      .description(
        'Add a secret beside the current one (at most two live); shown once, or written where --secret-file says',
      )
      .option('--expires-at <time>', 'when it stops working (ISO 8601 with a zone, ≤ 730 days)'),
  ).action(async (ref: string, options: SecretOptions & { expiresAt?: string }) => {
    const sink = await secretSink(ctx, options);
    const api = await ctx.api();
    const account = await findAccount(api, ref);
    const { body } = await api.request<ServiceAccountSecret & { secret: string }>(
      'POST',
      accountPath(account.client_id, '/secrets'),
      { body: options.expiresAt === undefined ? {} : { expires_at: options.expiresAt } },
    );
    await sink.put({ ...account, secret: body.secret });
    ctx.tell(`Added secret ${body.id} to ${account.name}.`);
  });
  secrets
    .command('remove <account> <secret-id>')
    .description(
      'Remove one secret; exactly the tokens it got are revoked, the other secret keeps working',
    )
    .action(async (ref: string, id: string) => {
      const api = await ctx.api();
      await api.request(
        'DELETE',
        accountPath(await resolveAccount(api, ref), `/secrets/${encodeURIComponent(id)}`),
      );
      ctx.tell(`Removed secret ${id}.`);
    });
}

// long: the command table of keys and trusts, one entry per subcommand (data).
function registerCredentialCommands(sa: Command, ctx: CommandContext): void {
  const credentials = async (ref: string) => {
    const api = await ctx.api();
    return (
      await api.request<ServiceAccountCredentials>(
        'GET',
        accountPath(await resolveAccount(api, ref), '/credentials'),
      )
    ).body;
  };
  const write = async (ref: string, method: string, rest: string, body?: unknown) => {
    const api = await ctx.api();
    return (
      await api.request(
        method,
        accountPath(await resolveAccount(api, ref), rest),
        body === undefined ? {} : { body },
      )
    ).body;
  };

  sa.command('credentials <account>')
    .description("The account's credentials: the secret's dates, its keys and trusted workloads")
    .action(async (ref: string) => {
      const c = await credentials(ref);
      if (ctx.output === 'json') return ctx.io.out(`${JSON.stringify(c, null, 2)}\n`);
      ctx.io.out(
        `secret: ${c.secret ? `created ${c.secret.created_at}, expires ${c.secret.expires_at ?? 'never'}` : 'none'}\n`,
      );
      ctx.io.out(
        `keys: ${c.keys.length}, trusts: ${c.trusts.length}, ${c.disabled ? 'disabled' : 'active'}\n`,
      );
    });

  const keys = sa
    .command('keys')
    .description("An account's public keys (private_key_jwt, RFC 7523)");
  keys
    .command('list <account>')
    .description("The account's keys")
    .action(async (ref: string) =>
      printResult(ctx.io, ctx.output, (await credentials(ref)).keys, [
        ['ID', (k) => k.id],
        ['ALG', (k) => k.alg],
        ['THUMBPRINT', (k) => k.thumbprint],
        ['ADDED', (k) => k.created_at],
        ['LAST USED', (k) => k.last_used_at],
      ]),
    );
  keys
    .command('add <account> <file>')
    .description('Add a public key from a file: a JWK (JSON) or a BEGIN PUBLIC KEY PEM')
    .action(async (ref: string, file: string) => {
      const text = await readFile(file, 'utf8');
      const body = text.includes('-----BEGIN')
        ? { pem: text }
        : { jwk: JSON.parse(text) as unknown };
      printResult(
        ctx.io,
        ctx.output,
        (await write(ref, 'POST', '/keys', body)) as Record<string, unknown>,
        [
          ['ID', (k) => k.id],
          ['THUMBPRINT', (k) => k.thumbprint],
        ],
      );
    });
  keys
    .command('remove <account> <key-id>')
    .description('Remove a key; the tokens it got are revoked')
    .action(async (ref: string, id: string) => {
      await write(ref, 'DELETE', `/keys/${encodeURIComponent(id)}`);
      ctx.tell(`Removed key ${id}.`);
    });

  const trusts = sa
    .command('trusts')
    .description('Workloads trusted to act as the account (federation)');
  trusts
    .command('list <account>')
    .description("The account's trusted workloads")
    .action(async (ref: string) =>
      printResult(ctx.io, ctx.output, (await credentials(ref)).trusts, [
        ['ID', (t) => t.id],
        ['ISSUER', (t) => t.issuer],
        ['SUBJECT', (t) => t.subject],
        ['AUDIENCE', (t) => t.audience],
        ['LAST USED', (t) => t.last_used_at],
      ]),
    );
  trusts
    .command('add <account>')
    .description(
      'Trust a workload: its platform tokens with this issuer, subject and audience authenticate the account',
    )
    .requiredOption('--issuer <url>', "the workload platform's OIDC issuer (https)")
    .requiredOption('--subject <sub>', 'the sub its tokens carry')
    .requiredOption('--audience <aud>', 'the aud its tokens carry for us')
    .action(async (ref: string, o: { issuer: string; subject: string; audience: string }) => {
      const added = (await write(ref, 'POST', '/trusts', o)) as Record<string, unknown>;
      ctx.tell(`Trusted ${o.issuer} ${o.subject} (${String(added.id)}).`);
    });
  trusts
    .command('remove <account> <trust-id>')
    .description('Remove a trusted workload; the tokens it got are revoked')
    .action(async (ref: string, id: string) => {
      await write(ref, 'DELETE', `/trusts/${encodeURIComponent(id)}`);
      ctx.tell(`Removed trust ${id}.`);
    });
}
