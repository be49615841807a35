/**
 * Apply: the plan's steps, in order, one API call each, every change to an existing account
 * conditional on the ETag the plan read (`If-Match`), so a tenant changed since the plan is
 * refused (412) and nothing of the other writer's is overwritten. Each answer's ETag replaces
 * the one held for that account, so the plan's own later steps go on from its own change. The
 * first failure stops the apply; what was done is reported, with the error. A created account's
 * secret goes to the secret sink at once and nowhere else.
 */
import { type ApiClient, ApiError } from '../api/api-client.js';
import {
  accountPath,
  type ServiceAccount,
  type ServiceAccountWithSecret,
} from '../api/resources.js';
import { CliError } from '../exit-codes.js';
import type { AccountRef, Step } from './plan.js';
import { describeStep } from './render-plan.js';

export interface SavedPlan {
  kind: 'plantctl-plan';
  version: 1;
  tenant: string;
  steps: Step[];
  /** ETags as the plan read them, by resource path under /api/v1. */
  etags: Record<string, string>;
}

export interface ApplyHooks {
  /** A created account's secret, handed on the moment it arrives. */
  secret(account: ServiceAccountWithSecret): Promise<void>;
  /** One line per step done. */
  done(line: string): void;
}

export class ApplyFailed extends CliError {
  constructor(
    readonly applied: number,
    readonly failedStep: Step,
    cause: CliError,
  ) {
    super(
      `Stopped at step ${applied + 1} (${describeStep(failedStep)}): ${reasonOf(cause)}\n${applied} step${applied === 1 ? '' : 's'} applied before it.`,
      cause.exitCode,
    );
    this.name = 'ApplyFailed';
  }
}

/**
 * A 412 is the apply's own refusal, not a fault: someone changed the account after this plan
 * read it (another apply, the portal). Nothing of theirs was overwritten; a new plan shows it.
 */
function reasonOf(cause: CliError): string {
  if (cause instanceof ApiError && cause.status === 412)
    return 'the account changed since the plan (412 Precondition Failed): nothing of the other change was overwritten; run plan again';
  return cause.message;
}

export async function applyPlan(
  api: ApiClient,
  plan: SavedPlan,
  hooks: ApplyHooks,
): Promise<number> {
  const etags = new Map(Object.entries(plan.etags));
  const created = new Map<string, string>();
  let applied = 0;
  for (const step of plan.steps) {
    try {
      await applyStep(api, step, { etags, created, hooks });
    } catch (error) {
      if (error instanceof CliError) throw new ApplyFailed(applied, step, error);
      throw error;
    }
    applied++;
    hooks.done(`  ✓ ${describeStep(step)}`);
  }
  return applied;
}

interface ApplyContext {
  etags: Map<string, string>;
  /** client_ids of the accounts this apply created, by name. */
  created: Map<string, string>;
  hooks: ApplyHooks;
}

function clientIdOf(ref: AccountRef, ctx: ApplyContext): string {
  const id = ref.client_id ?? ctx.created.get(ref.name);
  if (id === undefined) throw new CliError(`The plan names ${ref.name} before creating it`);
  return id;
}

/**
 * An answer without an ETag (a key or trust added or removed: 201 with the credential, 204;
 * the delegations put in place):
 * the account's ETag is read again, so the plan's next step on it is still conditional. Only a
 * change made between this plan's own write and this read could go unseen.
 */
async function reread(api: ApiClient, path: string, ctx: ApplyContext): Promise<void> {
  if (!ctx.etags.has(path)) return;
  const res = await api.request('GET', path);
  if (res.etag) ctx.etags.set(path, res.etag);
  else ctx.etags.delete(path);
}

// long: one case per kind of step, each a single API call (data-like).
async function applyStep(api: ApiClient, step: Step, ctx: ApplyContext): Promise<void> {
  if (step.kind === 'create') {
    const res = await api.request<ServiceAccountWithSecret>('POST', '/service-accounts', {
      body: { name: step.account.name },
    });
    ctx.created.set(step.account.name, res.body.client_id);
    if (res.etag) ctx.etags.set(accountPath(res.body.client_id), res.etag);
    await ctx.hooks.secret(res.body);
    return;
  }
  const path = accountPath(clientIdOf(step.account, ctx));
  const write = async (method: string, sub: string, body?: unknown) => {
    const ifMatch = ctx.etags.get(path);
    const res = await api.request<ServiceAccount | undefined>(method, `${path}${sub}`, {
      ...(body === undefined ? {} : { body }),
      ...(ifMatch === undefined ? {} : { ifMatch }),
    });
    if (res.etag) ctx.etags.set(path, res.etag);
    else if (method !== 'DELETE' || sub !== '') await reread(api, path, ctx);
  };
  switch (step.kind) {
    case 'update':
      return write('PATCH', '', step.changes);
    case 'add-key':
      return write('POST', '/keys', step.key);
    case 'remove-key':
      return write('DELETE', `/keys/${encodeURIComponent(step.key_id)}`);
    case 'add-trust':
      return write('POST', '/trusts', step.trust);
    case 'remove-trust':
      return write('DELETE', `/trusts/${encodeURIComponent(step.trust_id)}`);
    case 'set-delegations':
      return write('PUT', '/delegations', { delegations: step.delegations });
    case 'disable':
    case 'enable':
      return write('POST', `/${step.kind}`);
    case 'delete':
      return write('DELETE', '');
  }
}
