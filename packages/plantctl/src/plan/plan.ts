/**
 * The plan: what would make the tenant's service accounts what the file says, as a list of
 * steps, each one API call with the reason it is there. Pure: the tenant as read in, the steps
 * out; `apply` makes exactly these calls in this order and nothing else.
 *
 * Order: deletions first (they free room under the 25-account cap), then per account in the
 * file's order: create, update, keys removed then added (the 5-key cap), trusts removed then
 * added, the delegations put in place, disable or enable last. What the tenant has and the file
 * lacks (accounts, keys, trusts) is removed only with `prune`; otherwise it is listed as kept,
 * which is no change. Delegations are a set the file gives whole or not at all, as grants are,
 * so they are converged without `prune`; a file without them leaves them alone.
 */
import type {
  Delegation,
  DelegationChange,
  Quota,
  Role,
  ServiceAccount,
  ServiceAccountKey,
  ServiceAccountTrust,
} from '../api/resources.js';
import {
  type DesiredAccount,
  type DesiredDelegation,
  type DesiredKey,
  type DesiredTrust,
  nameKey,
} from '../tenant-file/tenant-file.js';

export interface CurrentAccount {
  account: ServiceAccount;
  keys: ServiceAccountKey[];
  trusts: ServiceAccountTrust[];
  /** Read only when the file gives some account's delegations. */
  delegations?: Delegation[];
}

/** An account a step acts on: an existing one by client_id, or the one an earlier step creates. */
export interface AccountRef {
  name: string;
  client_id?: string;
}

export interface AccountChanges {
  role?: Role;
  grants?: Array<{ tag: string; permission: 'edit' }>;
  dpop_bound_access_tokens?: boolean;
  receive_signals?: boolean;
  quota?: Quota | null;
}

export type Step =
  | { kind: 'create'; account: AccountRef; why: string }
  | { kind: 'update'; account: AccountRef; changes: AccountChanges; why: string }
  | {
      kind: 'add-key';
      account: AccountRef;
      thumbprint: string;
      key: DesiredKey['body'];
      why: string;
    }
  | { kind: 'remove-key'; account: AccountRef; key_id: string; thumbprint: string; why: string }
  | { kind: 'add-trust'; account: AccountRef; trust: DesiredTrust; why: string }
  | {
      kind: 'remove-trust';
      account: AccountRef;
      trust_id: string;
      trust: DesiredTrust;
      why: string;
    }
  | {
      kind: 'set-delegations';
      account: AccountRef;
      /** The whole set, as `PUT …/delegations` takes it. */
      delegations: DelegationChange[];
      why: string;
    }
  | { kind: 'disable' | 'enable'; account: AccountRef; why: string }
  | { kind: 'delete'; account: AccountRef; why: string };

/** Something the tenant has that the file lacks, left alone without `prune`. */
export interface Kept {
  account: AccountRef;
  what: string;
}

export interface Plan {
  steps: Step[];
  kept: Kept[];
}

/** A new account as the API creates it: what its first update is compared with. */
function fresh(name: string): CurrentAccount {
  return {
    account: {
      name,
      client_id: '',
      role: 'View',
      grants: [],
      dpop_bound_access_tokens: false,
      receive_signals: false,
      created_at: '',
      created_by: null,
      last_used_at: null,
      disabled: false,
      disabled_at: null,
      secret_expires_at: null,
      quota: null,
    },
    keys: [],
    trusts: [],
    delegations: [],
  };
}

export function computePlan(
  desired: DesiredAccount[],
  current: CurrentAccount[],
  { prune }: { prune: boolean },
): Plan {
  const byName = new Map(current.map((c) => [nameKey(c.account.name), c]));
  const wanted = new Set(desired.map((d) => nameKey(d.name)));
  const plan: Plan = { steps: [], kept: [] };
  for (const c of current) {
    if (wanted.has(nameKey(c.account.name))) continue;
    const account = refOf(c);
    if (prune) plan.steps.push({ kind: 'delete', account, why: 'not in the file (--prune)' });
    else plan.kept.push({ account, what: 'the account (not in the file; --prune deletes it)' });
  }
  for (const d of desired) {
    const existing = byName.get(nameKey(d.name));
    if (existing === undefined)
      plan.steps.push({ kind: 'create', account: { name: d.name }, why: 'not in the tenant' });
    accountSteps(d, existing ?? fresh(d.name), existing === undefined, prune, plan);
  }
  return plan;
}

function refOf(c: CurrentAccount): AccountRef {
  return { name: c.account.name, client_id: c.account.client_id };
}

function accountSteps(
  d: DesiredAccount,
  c: CurrentAccount,
  created: boolean,
  prune: boolean,
  plan: Plan,
): void {
  const account: AccountRef = created ? { name: d.name } : refOf(c);
  const update = changesOf(d, c.account);
  if (update.reasons.length > 0)
    plan.steps.push({
      kind: 'update',
      account,
      changes: update.changes,
      why: update.reasons.join('; '),
    });
  keySteps(d, c, account, prune, plan);
  trustSteps(d, c, account, prune, plan);
  delegationStep(d, c, account, plan);
  if (d.disabled !== c.account.disabled)
    plan.steps.push({
      kind: d.disabled ? 'disable' : 'enable',
      account,
      why: d.disabled ? 'the file says disabled: true' : 'the file says disabled: false',
    });
}

export function changesOf(
  d: DesiredAccount,
  a: ServiceAccount,
): { changes: AccountChanges; reasons: string[] } {
  const changes: AccountChanges = {};
  const reasons: string[] = [];
  if (d.role !== a.role) {
    changes.role = d.role;
    reasons.push(`role ${a.role} → ${d.role}`);
  }
  const tags = [...new Set(a.grants.map((g) => g.tag))].sort();
  if (!sameList(tags, d.grants)) {
    changes.grants = d.grants.map((tag) => ({ tag, permission: 'edit' }));
    reasons.push(`grants [${tags.join(', ')}] → [${d.grants.join(', ')}]`);
  }
  for (const field of ['dpop_bound_access_tokens', 'receive_signals'] as const)
    if (d[field] !== a[field]) {
      changes[field] = d[field];
      reasons.push(`${field} ${a[field]} → ${d[field]}`);
    }
  if (!sameQuota(d.quota, a.quota)) {
    changes.quota = d.quota;
    reasons.push(`quota ${quotaText(a.quota)} → ${quotaText(d.quota)}`);
  }
  return { changes, reasons };
}

function keySteps(
  d: DesiredAccount,
  c: CurrentAccount,
  account: AccountRef,
  prune: boolean,
  plan: Plan,
): void {
  const wanted = new Set(d.keys.map((k) => k.thumbprint));
  for (const key of c.keys)
    if (!wanted.has(key.thumbprint)) {
      if (prune)
        plan.steps.push({
          kind: 'remove-key',
          account,
          key_id: key.id,
          thumbprint: key.thumbprint,
          why: 'not in the file (--prune)',
        });
      else plan.kept.push({ account, what: `key ${key.id} (not in the file; --prune removes it)` });
    }
  const present = new Set(c.keys.map((k) => k.thumbprint));
  for (const key of d.keys)
    if (!present.has(key.thumbprint)) {
      present.add(key.thumbprint);
      plan.steps.push({
        kind: 'add-key',
        account,
        thumbprint: key.thumbprint,
        key: key.body,
        why: 'not on the account',
      });
    }
}

function trustKey(t: DesiredTrust): string {
  return JSON.stringify([t.issuer, t.subject, t.audience]);
}

function trustSteps(
  d: DesiredAccount,
  c: CurrentAccount,
  account: AccountRef,
  prune: boolean,
  plan: Plan,
): void {
  const wanted = new Set(d.trusts.map(trustKey));
  for (const trust of c.trusts)
    if (!wanted.has(trustKey(trust))) {
      const { issuer, subject, audience } = trust;
      if (prune)
        plan.steps.push({
          kind: 'remove-trust',
          account,
          trust_id: trust.id,
          trust: { issuer, subject, audience },
          why: 'not in the file (--prune)',
        });
      else
        plan.kept.push({
          account,
          what: `trust ${issuer} ${subject} (not in the file; --prune removes it)`,
        });
    }
  const present = new Set(c.trusts.map(trustKey));
  for (const trust of d.trusts)
    if (!present.has(trustKey(trust))) {
      present.add(trustKey(trust));
      plan.steps.push({ kind: 'add-trust', account, trust, why: 'not on the account' });
    }
}

/** An audience as the token service compares them (a URL once parsed), with its scope values sorted. */
function delegationKey(audience: string, scope: readonly string[]): string {
  return JSON.stringify([URL.parse(audience)?.href ?? audience, [...scope].sort()]);
}

function delegationsText(list: ReadonlyArray<{ audience: string; scope: string }>): string {
  return `[${list.map((d) => `${d.audience} (${d.scope})`).join(', ')}]`;
}

function delegationStep(
  d: DesiredAccount,
  c: CurrentAccount,
  account: AccountRef,
  plan: Plan,
): void {
  if (d.delegations === undefined) return;
  const current = c.delegations ?? [];
  const wanted = d.delegations.map((w: DesiredDelegation) => ({
    audience: w.audience,
    scope: w.scope.join(' '),
  }));
  const keys = (list: Array<{ audience: string; scope: string }>) =>
    list.map((x) => delegationKey(x.audience, x.scope.split(' '))).sort();
  if (sameList(keys(current), keys(wanted))) return;
  plan.steps.push({
    kind: 'set-delegations',
    account,
    delegations: wanted,
    why: `delegations ${delegationsText(current)} → ${delegationsText(wanted)}`,
  });
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameQuota(a: Quota | null, b: Quota | null): boolean {
  return a === null || b === null ? a === b : a.per_minute === b.per_minute && a.mode === b.mode;
}

function quotaText(q: Quota | null): string {
  return q === null ? "the tenant's default" : `${q.per_minute}/min ${q.mode}`;
}
