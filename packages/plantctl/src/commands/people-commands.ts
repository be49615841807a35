/** `plantctl people`, `plantctl invitations` and `plantctl audit`: Settings → People and Activity. */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Command, Option } from 'commander';
import type { AuditEvent, Invitation, User } from '../api/resources.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Column, printResult, table } from '../output/output.js';
import type { CommandContext } from './context.js';

const ROLES = ['View', 'Edit', 'Account Admin'];

const USER_COLUMNS: Column<User>[] = [
  ['ID', (u) => u.id],
  ['EMAIL', (u) => u.email],
  ['ROLE', (u) => u.role],
  ['STATUS', (u) => u.status],
  ['LAST SIGN-IN', (u) => u.last_sign_in_at],
];

const INVITATION_COLUMNS: Column<Invitation>[] = [
  ['ID', (i) => i.id],
  ['EMAIL', (i) => i.email],
  ['ROLE', (i) => i.role],
  ['INVITED BY', (i) => i.created_by],
  ['EXPIRES', (i) => i.expires_at],
];

const AUDIT_COLUMNS: Column<AuditEvent>[] = [
  ['WHEN', (e) => e.occurred_at],
  ['WHO', (e) => e.actor_email ?? e.actor_type],
  ['ACTION', (e) => e.action],
  ['ACCOUNT', (e) => e.name ?? e.client_id],
  ['FROM', (e) => e.address],
];

/** The id of the person named by `ref` (their id, else their email). */
async function resolvePerson(ctx: CommandContext, ref: string): Promise<string> {
  const users = (await (await ctx.api()).request<User[]>('GET', '/users')).body;
  const found =
    users.find((u) => u.id === ref) ??
    users.find((u) => u.email.toLowerCase() === ref.toLowerCase());
  if (found === undefined) throw new CliError(`No person ${JSON.stringify(ref)}`, EXIT.notFound);
  return found.id;
}

/**
 * The person named by `ref`, read: their path and the ETag of the state a change is meant for.
 * A change sent with it (`If-Match`) is refused (412, exit 5) when someone changed the person
 * between this read and the change, rather than applied over what the command never saw.
 */
async function readPerson(
  ctx: CommandContext,
  ref: string,
): Promise<{ path: string; etag?: string }> {
  const path = `/users/${encodeURIComponent(await resolvePerson(ctx, ref))}`;
  const { etag } = await (await ctx.api()).request<User>('GET', path);
  return etag === undefined ? { path } : { path, etag };
}

// long: the command table of people and invitations, one entry per subcommand (data).
export function registerPeopleCommands(program: Command, ctx: CommandContext): void {
  const people = program
    .command('people')
    .description(
      "Manage the tenant's people (Account Admins only); a change is refused (exit 5) when the person changed after the command read them",
    );
  const userPath = async (ref: string) =>
    `/users/${encodeURIComponent(await resolvePerson(ctx, ref))}`;
  const call = async <T>(method: string, path: string, body?: unknown) =>
    (await (await ctx.api()).request<T>(method, path, body === undefined ? {} : { body })).body;
  /** A change of the person named by `ref`, conditional on the state just read of them. */
  const change = async <T>(method: string, ref: string, body?: unknown) => {
    const { path, etag } = await readPerson(ctx, ref);
    return (
      await (
        await ctx.api()
      ).request<T>(method, path, {
        ...(body === undefined ? {} : { body }),
        ...(etag === undefined ? {} : { ifMatch: etag }),
      })
    ).body;
  };

  people
    .command('list')
    .description('Everyone in the tenant')
    .action(async () =>
      printResult(ctx.io, ctx.output, await call<User[]>('GET', '/users'), USER_COLUMNS),
    );
  people
    .command('get <person>')
    .description('One person, by id or email')
    .action(async (ref: string) =>
      printResult(ctx.io, ctx.output, await call<User>('GET', await userPath(ref)), USER_COLUMNS),
    );
  people
    .command('invite <email>')
    .description(
      'Invite someone: the single-use link is shown once (and e-mailed when the portal can)',
    )
    .addOption(new Option('--role <role>', 'their role').choices(ROLES).default('View'))
    .action(async (email: string, o: { role: string }) => {
      const answer = await call<{ invitation: Invitation; email: string }>('POST', '/users', {
        email,
        role: o.role,
      });
      if (ctx.output === 'json') return ctx.io.out(`${JSON.stringify(answer, null, 2)}\n`);
      ctx.io.out(`${answer.invitation.url}\n`);
      ctx.tell(`Invited ${email} as ${o.role} (e-mail: ${answer.email}); the link is shown once.`);
    });
  people
    .command('role <person> <role>')
    .description("Change a person's role; their tokens are revoked")
    .action(async (ref: string, role: string) => {
      if (!ROLES.includes(role))
        throw new CliError(`role must be one of ${ROLES.join(', ')}`, EXIT.usage);
      printResult(ctx.io, ctx.output, await change<User>('PATCH', ref, { role }), USER_COLUMNS);
    });
  for (const [verb, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const)
    people
      .command(`${verb} <person>`)
      .description(
        verb === 'disable'
          ? 'Disable a person: their sessions and tokens end'
          : 'Enable a disabled person',
      )
      .action(async (ref: string) =>
        printResult(ctx.io, ctx.output, await change<User>('PATCH', ref, { status }), USER_COLUMNS),
      );
  people
    .command('remove <person>')
    .description('Remove a person and their second factors')
    .option('--yes', 'do it (without --yes nothing is removed)')
    .action(async (ref: string, o: { yes?: boolean }) => {
      if (o.yes !== true) throw new CliError('Removing needs --yes', EXIT.usage);
      await change('DELETE', ref);
      ctx.tell(`Removed ${ref}.`);
    });

  const invitations = program.command('invitations').description('Pending invitations');
  invitations
    .command('list')
    .description('Pending invitations, newest first (never the link)')
    .action(async () =>
      printResult(
        ctx.io,
        ctx.output,
        await call<Invitation[]>('GET', '/invitations?limit=100'),
        INVITATION_COLUMNS,
      ),
    );
  invitations.command('revoke <id>').action(async (id: string) => {
    await call('DELETE', `/invitations/${encodeURIComponent(id)}`);
    ctx.tell(`Revoked invitation ${id}.`);
  });

  registerAuditCommand(program, ctx);
}

/** Follow keeps this many event ids to tell new from seen: at most two pages' worth. */
const SEEN_MAX = 200;

function registerAuditCommand(program: Command, ctx: CommandContext): void {
  program
    .command('audit')
    .description('The audit trail, newest first; --follow prints new events as they happen')
    .option('--limit <n>', 'how many (1..100)', (v) => Number.parseInt(v, 10), 25)
    .option('--follow', 'keep printing new events, oldest first, until interrupted')
    .option(
      '--interval <seconds>',
      'with --follow: how often to ask',
      (v) => Number.parseFloat(v),
      5,
    )
    .action(async (o: { limit: number; follow?: boolean; interval: number }) => {
      const api = await ctx.api();
      const page = async (limit: number) =>
        (await api.request<AuditEvent[]>('GET', `/audit-events?limit=${limit}`)).body;
      const first = await page(o.limit);
      if (o.follow !== true) return printResult(ctx.io, ctx.output, first, AUDIT_COLUMNS);
      const seen: string[] = [];
      const emit = (events: AuditEvent[]) => {
        for (const event of [...events].reverse()) {
          if (seen.includes(event.id)) continue;
          seen.push(event.id);
          if (seen.length > SEEN_MAX) seen.shift();
          ctx.io.out(
            ctx.output === 'json'
              ? `${JSON.stringify(event)}\n`
              : `${table([event], AUDIT_COLUMNS).split('\n')[1]!}\n`,
          );
        }
      };
      if (ctx.output !== 'json') ctx.io.out(table([], AUDIT_COLUMNS));
      emit(first);
      for (;;) {
        await sleep(o.interval * 1000);
        emit(await page(100));
      }
    });
}
