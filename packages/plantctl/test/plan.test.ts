/**
 * The plan computation, by properties (fast-check) over arbitrary tenants and files: applying a
 * plan leaves nothing to plan (idempotence), nothing is deleted without prune, and a tenant
 * that matches its file plans no step. `applyToModel` is a model of what each step does to the
 * tenant, as the API documents it.
 */
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { ServiceAccount } from '../src/api/resources.js';
import { computePlan, type CurrentAccount, type Plan } from '../src/plan/plan.js';
import { renderPlan } from '../src/plan/render-plan.js';
import type { DesiredAccount } from '../src/tenant-file/tenant-file.js';

const names = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta');
const tags = fc
  .uniqueArray(fc.constantFrom('roses', 'tulips', 'ferns', 'moss'), { maxLength: 3 })
  .map((t) => [...t].sort());
const quota = fc.option(
  fc.record({
    per_minute: fc.integer({ min: 1, max: 100_000 }),
    mode: fc.constantFrom('off' as const, 'log' as const, 'enforce' as const),
  }),
  { nil: null },
);
const thumbprints = fc.uniqueArray(fc.constantFrom('tA', 'tB', 'tC', 'tD'), { maxLength: 3 });
const trusts = fc.uniqueArray(
  fc.record({
    issuer: fc.constantFrom('https://a.example', 'https://b.example'),
    subject: fc.constantFrom('s1', 's2'),
    audience: fc.constant('aud'),
  }),
  { maxLength: 3, selector: (t) => JSON.stringify(t) },
);

/** A set of delegations, each audience once; two audiences are the same URL written two ways. */
const delegations = fc.uniqueArray(
  fc.record({
    audience: fc.constantFrom(
      'http://plant-store.test',
      'https://api.example',
      'https://api.example/',
    ),
    scope: fc.subarray(['plants:read', 'plants:write'], { minLength: 1 }),
  }),
  { maxLength: 3, selector: (d) => new URL(d.audience).href },
);

const settings = fc.record({
  role: fc.constantFrom('View' as const, 'Edit' as const),
  grants: tags,
  dpop_bound_access_tokens: fc.boolean(),
  receive_signals: fc.boolean(),
  quota,
  disabled: fc.boolean(),
  keys: thumbprints,
  trusts,
  /** Absent in the file: not the plan's to manage. */
  delegations: fc.option(delegations, { nil: undefined }),
});

const desiredTenant = fc
  .uniqueArray(fc.tuple(names, settings), { maxLength: 5, selector: ([n]) => n })
  .map((entries) =>
    entries.map(
      ([name, { delegations, ...s }]): DesiredAccount => ({
        name,
        ...s,
        ...(delegations === undefined ? {} : { delegations }),
        keys: s.keys.map((thumbprint) => ({
          thumbprint,
          body: { jwk: { kty: 'OKP', x: thumbprint } },
        })),
      }),
    ),
  );

let nextId = 0;
function accountOf(
  name: string,
  s: Omit<DesiredAccount, 'name' | 'keys' | 'trusts' | 'delegations'>,
): ServiceAccount {
  return {
    name,
    client_id: `pc-${nextId++}`,
    role: s.role,
    grants: s.grants.map((tag) => ({ tag, permission: 'edit' })),
    dpop_bound_access_tokens: s.dpop_bound_access_tokens,
    receive_signals: s.receive_signals,
    quota: s.quota,
    disabled: s.disabled,
    created_at: '2026-01-01T00:00:00Z',
    created_by: null,
    last_used_at: null,
    disabled_at: null,
    secret_expires_at: null,
  };
}

const currentTenant = fc
  .uniqueArray(fc.tuple(fc.oneof(names, fc.constantFrom('Alpha', 'legacy')), settings), {
    maxLength: 5,
    selector: ([n]) => n.toLowerCase(),
  })
  .map((entries) =>
    entries.map(
      ([name, s]): CurrentAccount => ({
        account: accountOf(name, s),
        keys: s.keys.map((thumbprint) => ({
          id: `k-${thumbprint}`,
          alg: 'EdDSA',
          thumbprint,
          created_at: '',
          last_used_at: null,
        })),
        trusts: s.trusts.map((t, i) => ({
          id: `trust-${i}`,
          ...t,
          created_at: '',
          last_used_at: null,
        })),
        delegations: (s.delegations ?? []).map((d) => ({
          audience: d.audience,
          scope: d.scope.join(' '),
          created_at: null,
          created_by: null,
        })),
      }),
    ),
  );

/** What the API does for each step, on a copy of the tenant. */
function applyToModel(current: CurrentAccount[], plan: Plan): CurrentAccount[] {
  let tenant = structuredClone(current);
  const find = (ref: { name: string; client_id?: string }) =>
    tenant.find((c) =>
      ref.client_id ? c.account.client_id === ref.client_id : c.account.name === ref.name,
    )!;
  for (const step of plan.steps) {
    switch (step.kind) {
      case 'create':
        tenant.push({
          account: accountOf(step.account.name, {
            role: 'View',
            grants: [],
            dpop_bound_access_tokens: false,
            receive_signals: false,
            quota: null,
            disabled: false,
          }),
          keys: [],
          trusts: [],
          delegations: [],
        });
        break;
      case 'update':
        Object.assign(find(step.account).account, step.changes);
        break;
      case 'add-key':
        find(step.account).keys.push({
          id: `k-${step.thumbprint}`,
          alg: 'EdDSA',
          thumbprint: step.thumbprint,
          created_at: '',
          last_used_at: null,
        });
        break;
      case 'remove-key':
        find(step.account).keys = find(step.account).keys.filter((k) => k.id !== step.key_id);
        break;
      case 'add-trust':
        find(step.account).trusts.push({
          id: `trust-new-${Math.random()}`,
          ...step.trust,
          created_at: '',
          last_used_at: null,
        });
        break;
      case 'remove-trust':
        find(step.account).trusts = find(step.account).trusts.filter((t) => t.id !== step.trust_id);
        break;
      case 'set-delegations':
        // The whole set, as the PUT puts it in place.
        find(step.account).delegations = step.delegations.map((d) => ({
          ...d,
          created_at: null,
          created_by: null,
        }));
        break;
      case 'disable':
      case 'enable':
        find(step.account).account.disabled = step.kind === 'disable';
        break;
      case 'delete':
        tenant = tenant.filter((c) => c.account.client_id !== step.account.client_id);
        break;
    }
  }
  return tenant;
}

describe('plan', () => {
  test('When a plan is applied, then planning the same file again finds nothing to change (with and without prune)', () => {
    fc.assert(
      fc.property(desiredTenant, currentTenant, fc.boolean(), (desired, current, prune) => {
        const after = applyToModel(current, computePlan(desired, current, { prune }));
        expect(computePlan(desired, after, { prune }).steps).toEqual([]);
      }),
    );
  });

  test('When prune is not given, then no step deletes or removes anything, and what the file lacks is listed as kept', () => {
    fc.assert(
      fc.property(desiredTenant, currentTenant, (desired, current) => {
        const plan = computePlan(desired, current, { prune: false });
        expect(
          plan.steps.filter((s) => ['delete', 'remove-key', 'remove-trust'].includes(s.kind)),
        ).toEqual([]);
        const wanted = new Set(desired.map((d) => d.name.toLowerCase()));
        const extra = current.filter((c) => !wanted.has(c.account.name.toLowerCase()));
        expect(
          plan.kept.filter((k) => k.what.startsWith('the account')).map((k) => k.account.client_id),
        ).toEqual(extra.map((c) => c.account.client_id));
      }),
    );
  });

  test('When prune is given, then exactly the accounts the file lacks are deleted, before any other step', () => {
    fc.assert(
      fc.property(desiredTenant, currentTenant, (desired, current) => {
        const plan = computePlan(desired, current, { prune: true });
        const deletes = plan.steps.filter((s) => s.kind === 'delete');
        expect(plan.steps.slice(0, deletes.length)).toEqual(deletes);
        const wanted = new Set(desired.map((d) => d.name.toLowerCase()));
        expect(deletes.map((s) => s.account.client_id).sort()).toEqual(
          current
            .filter((c) => !wanted.has(c.account.name.toLowerCase()))
            .map((c) => c.account.client_id)
            .sort(),
        );
      }),
    );
  });

  test('When the name differs only in letter case, then the account is the same one and is not created again', () => {
    const current = [
      {
        account: accountOf('Deployer', {
          role: 'View',
          grants: [],
          dpop_bound_access_tokens: false,
          receive_signals: false,
          quota: null,
          disabled: false,
        }),
        keys: [],
        trusts: [],
      },
    ];
    const desired: DesiredAccount[] = [
      {
        name: 'deployer',
        role: 'Edit',
        grants: [],
        dpop_bound_access_tokens: false,
        receive_signals: false,
        quota: null,
        disabled: false,
        keys: [],
        trusts: [],
      },
    ];
    const plan = computePlan(desired, current, { prune: true });
    expect(plan.steps).toEqual([
      {
        kind: 'update',
        account: { name: 'Deployer', client_id: current[0]!.account.client_id },
        changes: { role: 'Edit' },
        why: 'role View → Edit',
      },
    ]);
  });

  test('When a new account has settings, then it is created and then brought to them, each step with its reason', () => {
    const desired: DesiredAccount[] = [
      {
        name: 'ci',
        role: 'Edit',
        grants: ['roses'],
        dpop_bound_access_tokens: true,
        receive_signals: false,
        quota: { per_minute: 60, mode: 'enforce' },
        disabled: false,
        keys: [],
        trusts: [
          {
            issuer: 'https://token.actions.githubusercontent.com',
            subject: 'repo:o/r:ref:refs/heads/main',
            audience: 'aud',
          },
        ],
      },
    ];
    const plan = computePlan(desired, [], { prune: false });
    expect(plan.steps.map((s) => s.kind)).toEqual(['create', 'update', 'add-trust']);
    expect(renderPlan(plan, 'acme')).toBe(
      [
        'Plan for tenant acme:',
        '  + create service account "ci"  (not in the tenant)',
        '  ~ update "ci": role View → Edit; grants [] → [roses]; dpop_bound_access_tokens false → true; quota the tenant\'s default → 60/min enforce',
        '  + trust https://token.actions.githubusercontent.com subject repo:o/r:ref:refs/heads/main for "ci"  (not on the account)',
        '3 changes to make.',
        '',
      ].join('\n'),
    );
  });

  test('When the file gives no delegations for an account, then no step touches its delegations, whatever the tenant has', () => {
    fc.assert(
      fc.property(desiredTenant, currentTenant, fc.boolean(), (desired, current, prune) => {
        const plan = computePlan(desired, current, { prune });
        const managed = new Set(
          desired.filter((d) => d.delegations !== undefined).map((d) => d.name.toLowerCase()),
        );
        for (const step of plan.steps.filter((s) => s.kind === 'set-delegations'))
          expect(managed.has(step.account.name.toLowerCase())).toBe(true);
      }),
    );
  });

  test('When the file gives an account other delegations, then one step puts the whole set, shown with before and after; the same URL written another way is no change', () => {
    const base = {
      role: 'View' as const,
      grants: [],
      dpop_bound_access_tokens: false,
      receive_signals: false,
      quota: null,
      disabled: false,
    };
    const current: CurrentAccount[] = [
      {
        account: accountOf('exchanger', base),
        keys: [],
        trusts: [],
        delegations: [
          {
            audience: 'https://api.example',
            scope: 'plants:read plants:write',
            created_at: null,
            created_by: null,
          },
          {
            audience: 'http://plant-store.test',
            scope: 'plants:read',
            created_at: null,
            created_by: null,
          },
        ],
      },
    ];
    const desired = (delegations: DesiredAccount['delegations']): DesiredAccount[] => [
      { name: 'exchanger', ...base, keys: [], trusts: [], delegations },
    ];
    expect(
      computePlan(
        desired([
          { audience: 'http://plant-store.test/', scope: ['plants:read'] },
          { audience: 'https://api.example', scope: ['plants:read', 'plants:write'] },
        ]),
        current,
        { prune: false },
      ).steps,
    ).toEqual([]);

    const plan = computePlan(
      desired([{ audience: 'https://api.example', scope: ['plants:read'] }]),
      current,
      { prune: false },
    );
    expect(plan.steps).toEqual([
      {
        kind: 'set-delegations',
        account: { name: 'exchanger', client_id: current[0]!.account.client_id },
        delegations: [{ audience: 'https://api.example', scope: 'plants:read' }],
        why: 'delegations [https://api.example (plants:read plants:write), http://plant-store.test (plants:read)] → [https://api.example (plants:read)]',
      },
    ]);
    expect(renderPlan(plan, 'acme')).toBe(
      [
        'Plan for tenant acme:',
        `  ~ set the delegations of "exchanger" (${current[0]!.account.client_id}): delegations [https://api.example (plants:read plants:write), http://plant-store.test (plants:read)] → [https://api.example (plants:read)]`,
        '1 change to make.',
        '',
      ].join('\n'),
    );
    // [] allows none: every permission is taken away.
    expect(computePlan(desired([]), current, { prune: false }).steps).toMatchObject([
      { kind: 'set-delegations', delegations: [] },
    ]);
  });
});
