/** login, logout, whoami. */
import type { Command } from 'commander';
import { login, Session } from '../auth/session.js';
import { CliError, EXIT } from '../exit-codes.js';
import { printResult } from '../output/output.js';
import type { CommandContext } from './context.js';

export function registerAuthCommands(program: Command, ctx: CommandContext): void {
  program
    .command('login')
    .description(
      "Sign in to a tenant's realm as yourself: the device grant (RFC 8628) by default, your browser with --browser",
    )
    .usage('--tenant <tenant> --portal <url> [--browser]')
    .requiredOption('--portal <url>', "the tenant's portal, e.g. https://portal.example.com")
    .option(
      '--browser',
      'sign in in a browser on this machine (loopback redirect with PKCE, RFC 8252); keeps a refresh token as the device grant does',
    )
    .option('--no-open', 'with --browser: print the URL instead of opening the browser')
    .addHelpText(
      'after',
      '\n--tenant <tenant> (the global option) names the tenant to sign in to; it is required here.',
    )
    .action(async (options: { portal: string; browser?: boolean; open: boolean }) => {
      const tenant = ctx.tenant;
      if (tenant === undefined) throw new CliError('login needs --tenant <tenant>', EXIT.usage);
      const profile = await login(ctx.store, {
        tenant,
        portal: options.portal,
        browser: options.browser === true,
        open: options.open,
        tell: ctx.tell,
      });
      const me = await (await ctx.api()).request<{ email: string; role: string }>('GET', '/me');
      ctx.tell(`Signed in to ${profile.tenant} as ${me.body.email} (${me.body.role}).`);
    });

  program
    .command('logout')
    .description('Revoke the sign-in at the realm and remove its key and tokens from this machine')
    .action(async () => {
      const session = await Session.open(ctx.store, ctx.tenant, ctx.tell);
      await session.logout();
      ctx.tell(`Signed out of ${session.profile.tenant}.`);
    });

  program
    .command('whoami')
    .description('Who you are signed in as, in which tenant, with which role')
    .action(async () => {
      const me = await (await ctx.api()).request<Record<string, unknown>>('GET', '/me');
      printResult(ctx.io, ctx.output, me.body, [
        ['TENANT', (r) => r.tenant],
        ['EMAIL', (r) => r.email],
        ['ROLE', (r) => r.role],
        ['MANAGES SERVICE ACCOUNTS', (r) => r.can_manage_service_accounts],
      ]);
    });
}
