/** The plan as a person reads it, and the summary line plan and apply end with. */
import type { Plan, Step } from './plan.js';

const SIGN: Record<Step['kind'], string> = {
  create: '+',
  update: '~',
  'add-key': '+',
  'remove-key': '-',
  'add-trust': '+',
  'remove-trust': '-',
  'set-delegations': '~',
  disable: '~',
  enable: '~',
  delete: '-',
};

function who(step: { account: { name: string; client_id?: string } }): string {
  const { name, client_id } = step.account;
  return client_id ? `${JSON.stringify(name)} (${client_id})` : JSON.stringify(name);
}

export function describeStep(step: Step): string {
  switch (step.kind) {
    case 'create':
      return `create service account ${who(step)}`;
    case 'update':
      return `update ${who(step)}: ${step.why}`;
    case 'add-key':
      return `add key ${step.thumbprint} to ${who(step)}`;
    case 'remove-key':
      return `remove key ${step.key_id} from ${who(step)}`;
    case 'add-trust':
      return `trust ${step.trust.issuer} subject ${step.trust.subject} for ${who(step)}`;
    case 'remove-trust':
      return `remove trust ${step.trust.issuer} subject ${step.trust.subject} from ${who(step)}`;
    case 'set-delegations':
      return `set the delegations of ${who(step)}: ${step.why}`;
    case 'disable':
    case 'enable':
      return `${step.kind} ${who(step)}`;
    case 'delete':
      return `delete service account ${who(step)}`;
  }
}

export function renderPlan(plan: Plan, tenant: string): string {
  const lines = [`Plan for tenant ${tenant}:`];
  for (const step of plan.steps) {
    const why = step.kind === 'update' || step.kind === 'set-delegations' ? '' : `  (${step.why})`;
    lines.push(`  ${SIGN[step.kind]} ${describeStep(step)}${why}`);
  }
  for (const kept of plan.kept)
    lines.push(`  = keep ${kept.what} on ${JSON.stringify(kept.account.name)}`);
  lines.push(summary(plan));
  return `${lines.join('\n')}\n`;
}

export function summary(plan: Plan): string {
  const n = plan.steps.length;
  return n === 0
    ? 'No changes: the tenant matches the file.'
    : `${n} change${n === 1 ? '' : 's'} to make.`;
}
