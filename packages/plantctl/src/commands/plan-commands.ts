/**
 * `plantctl plan` and `plantctl apply`: the tenant file against the tenant. `plan` exits 0 (no
 * change), 2 (changes) or 1 (any error); `--out` saves the plan with the ETags it read.
 * `apply -f` plans, prints and applies that plan; `apply --plan` applies a saved one exactly,
 * and the ETags make the API refuse it (412) if the tenant changed since it was made.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ApiClient } from '../api/api-client.js';
import { writePrivateFile } from '../config-dir.js';
import { CliError, EXIT } from '../exit-codes.js';
import { applyPlan, type SavedPlan } from '../plan/apply-plan.js';
import { computePlan } from '../plan/plan.js';
import { renderPlan } from '../plan/render-plan.js';
import { readTenantState } from '../plan/tenant-state.js';
import { readTenantFile } from '../tenant-file/tenant-file.js';
import type { CommandContext } from './context.js';
import { type SecretOptions, secretSink, withSecretOptions } from './secret-options.js';

async function makePlan(
  api: ApiClient,
  file: string,
  prune: boolean,
): Promise<SavedPlan & { kept: ReturnType<typeof computePlan>['kept'] }> {
  const tenantFile = await readTenantFile(file);
  if (tenantFile.tenant !== undefined && tenantFile.tenant !== api.tenant)
    throw new CliError(
      `${file} describes tenant ${tenantFile.tenant}, but you are signed in to ${api.tenant} (use --tenant)`,
      EXIT.usage,
    );
  const state = await readTenantState(api, {
    delegations: tenantFile.accounts.some((a) => a.delegations !== undefined),
  });
  const plan = computePlan(tenantFile.accounts, state.accounts, { prune });
  return {
    kind: 'plantctl-plan',
    version: 1,
    tenant: api.tenant,
    steps: plan.steps,
    kept: plan.kept,
    etags: state.etags,
  };
}

async function readSavedPlan(path: string): Promise<SavedPlan> {
  let plan: SavedPlan;
  try {
    plan = JSON.parse(await readFile(path, 'utf8')) as SavedPlan;
  } catch (error) {
    throw new CliError(`Cannot read the plan ${path}: ${(error as Error).message}`, EXIT.usage);
  }
  if (plan.kind !== 'plantctl-plan' || plan.version !== 1 || !Array.isArray(plan.steps))
    throw new CliError(`${path} is not a plan saved by plantctl plan --out`, EXIT.usage);
  return plan;
}

export function registerPlanCommands(program: Command, ctx: CommandContext): void {
  program
    .command('plan')
    .description(
      'Show what apply would change to make the tenant match the file (exit 0: nothing, 2: changes, 1: error)',
    )
    .requiredOption('-f, --file <tenant.yaml>', 'the tenant file')
    .option(
      '--prune',
      'also delete what the tenant has and the file lacks (accounts, keys, trusts)',
    )
    .option('--out <plan.json>', 'save the plan, with the ETags it read, for apply --plan')
    .action(async (o: { file: string; prune?: boolean; out?: string }) => {
      // plan keeps to three exit codes (0, 2, 1), as Terraform's -detailed-exitcode does.
      const plan = await makePlan(await ctx.api(), o.file, o.prune === true).catch(
        (error: unknown) => {
          throw error instanceof CliError ? new CliError(error.message, EXIT.error) : error;
        },
      );
      if (ctx.output === 'json')
        ctx.io.out(`${JSON.stringify({ steps: plan.steps, kept: plan.kept }, null, 2)}\n`);
      else ctx.io.out(renderPlan(plan, plan.tenant));
      if (o.out !== undefined) {
        const { kept: _kept, ...saved } = plan;
        await writePrivateFile(o.out, `${JSON.stringify(saved, null, 2)}\n`);
      }
      if (plan.steps.length > 0) process.exitCode = EXIT.changes;
    });

  withSecretOptions(
    program
      .command('apply')
      .description(
        'Make the tenant match the file: exactly the plan it prints, refused if the tenant changed since; stops at the first failure',
      )
      .option('-f, --file <tenant.yaml>', 'the tenant file (plans, prints, applies)')
      .option('--plan <plan.json>', 'apply a plan saved by plan --out, exactly')
      .option('--prune', 'also delete what the tenant has and the file lacks')
      .addHelpText(
        'after',
        `
Every change of an existing account is sent with If-Match: the ETag the plan read. When the
account changed since the plan (another apply, the portal), the API refuses it (412): apply
stops there, says the account changed since the plan and what it applied before, and exits 5;
nothing of the other change is overwritten. Plan again. Of two applies racing on one account
from the same state, exactly one goes through.`,
      ),
  ).action(async (o: SecretOptions & { file?: string; plan?: string; prune?: boolean }) => {
    if ((o.file === undefined) === (o.plan === undefined))
      throw new CliError('give -f <tenant.yaml> or --plan <plan.json>', EXIT.usage);
    if (o.plan !== undefined && o.prune === true)
      throw new CliError('--prune belongs to plan when a saved plan is applied', EXIT.usage);
    const api = await ctx.api();
    const sink = await secretSink(ctx, o);
    // With the secrets on stdout (a manifest to pipe), the plan and progress go to stderr.
    const say = sink.usesStdout ? ctx.io.err : ctx.io.out;
    const plan =
      o.plan !== undefined
        ? await readSavedPlan(o.plan)
        : await makePlan(api, o.file!, o.prune === true);
    if (plan.tenant !== api.tenant)
      throw new CliError(
        `The plan is for tenant ${plan.tenant}, but you are signed in to ${api.tenant}`,
        EXIT.usage,
      );
    say(
      renderPlan(
        { steps: plan.steps, kept: 'kept' in plan ? (plan.kept as never) : [] },
        plan.tenant,
      ),
    );
    if (plan.steps.length === 0) return;
    const applied = await applyPlan(api, plan, {
      secret: (account) => sink.put(account),
      done: (line) => say(`${line}\n`),
    });
    say(`Applied ${applied} change${applied === 1 ? '' : 's'}.\n`);
  });
}
