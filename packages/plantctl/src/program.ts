/**
 * The command line: commander's program with every command, and `run`, which maps what went
 * wrong to one line on stderr and the documented exit code (exit-codes.ts).
 */
import { Command, CommanderError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { ProfileStore } from './auth/profile-store.js';
import { configDir } from './config-dir.js';
import { registerAuthCommands } from './commands/auth-commands.js';
import { CommandContext, type GlobalOptions } from './commands/context.js';
import { registerPeopleCommands } from './commands/people-commands.js';
import { registerPlanCommands } from './commands/plan-commands.js';
import { registerServiceAccountCommands } from './commands/service-account-commands.js';
import { CliError, EXIT } from './exit-codes.js';
import { type Io, processIo } from './output/output.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

export const EXIT_CODES_HELP = `
Exit codes:
  0   done (plan: no change)
  1   error
  2   plan: there are changes to apply
  3   not signed in, or the sign-in ended: run plantctl login
  4   not found
  5   conflict: name taken, a limit reached, or the tenant changed since the plan (412)
  64  bad arguments

Step-up:
  A change that needs your second factor verified in the last 10 minutes (the API answers
  RFC 9470's challenge) is not an error: plantctl says so, signs you in again the way you logged
  in (a device code to approve, or your browser with --browser), and retries the change once.

Environment:
  PLANTCTL_CONFIG_DIR   where the sign-in key and tokens are kept (default ~/.config/plantctl)`;

export function buildProgram(io: Io = processIo, env: NodeJS.ProcessEnv = process.env): Command {
  const program = new Command('plantctl')
    .description(
      "The Plant Store platform's admin CLI: sign in as yourself, manage a tenant's service accounts, people and audit trail, and plan and apply its service accounts from a file",
    )
    .version(VERSION)
    .option(
      '--tenant <tenant>',
      'which signed-in tenant to act in (default: the last one signed in to)',
    )
    .addOption(
      new Option('-o, --output <format>', 'table for people, json for scripts')
        .choices(['table', 'json'])
        .default('table'),
    )
    .addHelpText('after', EXIT_CODES_HELP)
    .showHelpAfterError(false)
    // A fixed width: the help reads the same everywhere, and docs/ is generated from it.
    .configureHelp({ helpWidth: 100 })
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();
  const ctx = new CommandContext(io, new ProfileStore(configDir(env)), () =>
    program.opts<GlobalOptions>(),
  );
  registerAuthCommands(program, ctx);
  registerServiceAccountCommands(program, ctx);
  registerPeopleCommands(program, ctx);
  registerPlanCommands(program, ctx);
  program.commands.forEach(function inherit(command: Command): void {
    command
      .configureOutput({ writeOut: io.out, writeErr: io.err })
      .configureHelp({ helpWidth: 100 })
      .exitOverride();
    command.commands.forEach(inherit);
  });
  return program;
}

/** Runs the command line; answers the exit code (never throws). */
export async function run(
  argv: string[],
  io: Io = processIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const program = buildProgram(io, env);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError)
      return error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.exitCode === 0
        ? EXIT.ok
        : EXIT.usage;
    if (error instanceof CliError) {
      io.err(`plantctl: ${error.message}\n`);
      return error.exitCode;
    }
    io.err(`plantctl: ${(error as Error).message ?? String(error)}\n`);
    return EXIT.error;
  }
}
