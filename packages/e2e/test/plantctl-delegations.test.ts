/**
 * plantctl's delegations (who may act for others: token exchange, RFC 8693) against the three
 * services as processes, from a fresh shell: `sa delegations list`, `allow` and `revoke` end to
 * end, and the tenant file's delegations through plan and apply. The token service knows a
 * second API besides the Plant Store (`API_AUDIENCES`), so an entry kept beside a changed one
 * shows.
 *
 * Every change is conditional on the account's ETag (the delegations answer none of their own;
 * the account's covers them), so a change between reading and writing is refused, not lost.
 *
 * The attacker's side: an audience the API refuses (account-admin's own, one of no API here), a
 * scope that cannot be delegated, and another tenant's account by its client_id or its name:
 * each refused with one line and the documented exit code, nothing changed.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { ACCOUNT_ADMIN_AUDIENCE, PLANT_STORE_AUDIENCE } from '@plant/test-kit';
import { expectExit, type Run, usePlantctlShell } from './helpers/plantctl-shell.js';

const INVENTORY = 'https://inventory.example';
const s = usePlantctlShell('pdeleg', {
  serviceEnv: { 'token-service': { API_AUDIENCES: INVENTORY } },
});

interface Listed {
  audience: string;
  scope: string;
  created_at: string | null;
  created_by: string | null;
}

/** A change needs a recent second factor: should the sign-in's have aged, the step-up is approved. */
const change = (args: string[]): Promise<Run> => s.withDeviceApproval(args);

async function listed(account: string): Promise<Array<Pick<Listed, 'audience' | 'scope'>>> {
  const run = await s.plantctl(['sa', 'delegations', 'list', account, '-o', 'json']);
  expectExit(run, 0);
  return (JSON.parse(run.stdout) as Listed[]).map(({ audience, scope }) => ({ audience, scope }));
}

/** The other tenant's account's delegations, as the token service holds them (account-admin's view). */
async function theirDelegations(tenant: string, clientId: string): Promise<unknown> {
  const res = await fetch(
    `${s.platform.internalUrl}/internal/v1/realms/${tenant}/service-accounts/${clientId}/delegations`,
    { headers: { authorization: `Bearer ${s.platform.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN}` } },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { delegations: unknown }).delegations;
}

beforeAll(async () => {
  expectExit(await s.login(), 0);
  expectExit(
    await s.plantctl(['sa', 'create', 'exchanger', '--secret-file', join(s.work, 'exchanger')]),
    0,
  );
}, 120_000);

describe('plantctl service-accounts delegations', () => {
  test('When plantctl allows an account to act for others at two APIs, replaces one and revokes the other, then each list shows the set the API holds, the other entry kept', async () => {
    expect(await listed('exchanger')).toEqual([]);
    const empty = await s.plantctl(['sa', 'delegations', 'list', 'exchanger']);
    expectExit(empty, 0);
    expect(empty.stdout).toBe('AUDIENCE  SCOPE  ADDED  BY\n');

    const both = await change([
      'sa',
      'delegations',
      'allow',
      'exchanger',
      PLANT_STORE_AUDIENCE,
      'plants:read',
      'plants:write',
    ]);
    expectExit(both, 0);
    expect(both.stdout).toMatch(
      new RegExp(`^AUDIENCE +SCOPE +ADDED +BY\n${PLANT_STORE_AUDIENCE} +plants:read plants:write `),
    );
    // No scope named: the least one.
    expectExit(await change(['sa', 'delegations', 'allow', 'exchanger', INVENTORY]), 0);
    expect(await listed('exchanger')).toEqual([
      { audience: PLANT_STORE_AUDIENCE, scope: 'plants:read plants:write' },
      { audience: INVENTORY, scope: 'plants:read' },
    ]);

    // The same URL written with a trailing slash is the same audience: its entry is replaced.
    const inventoryBefore = JSON.parse(
      (await s.plantctl(['sa', 'delegations', 'list', 'exchanger', '-o', 'json'])).stdout,
    ) as Listed[];
    expectExit(
      await change([
        'sa',
        'delegations',
        'allow',
        'exchanger',
        `${PLANT_STORE_AUDIENCE}/`,
        'plants:read',
      ]),
      0,
    );
    const after = JSON.parse(
      (await s.plantctl(['sa', 'delegations', 'list', 'exchanger', '-o', 'json'])).stdout,
    ) as Listed[];
    expect(after.map(({ audience, scope }) => ({ audience, scope }))).toEqual([
      { audience: PLANT_STORE_AUDIENCE, scope: 'plants:read' },
      { audience: INVENTORY, scope: 'plants:read' },
    ]);
    // The entry left alone keeps who made it and when.
    expect(after[1]).toEqual(inventoryBefore[1]);
    expect(after[1]!.created_by).toContain(s.admin);

    const revoked = await change(['sa', 'delegations', 'revoke', 'exchanger', INVENTORY]);
    expectExit(revoked, 0);
    expect(revoked.stderr).toContain(`Revoked exchanger's delegation to ${INVENTORY}.`);
    expect(await listed('exchanger')).toEqual([
      { audience: PLANT_STORE_AUDIENCE, scope: 'plants:read' },
    ]);
    const again = await change(['sa', 'delegations', 'revoke', 'exchanger', INVENTORY]);
    expect(again.code).toBe(4);
    expect(again.stderr).toBe(`plantctl: exchanger may not act for others at ${INVENTORY}\n`);
  });

  test('When an audience the API refuses, or a scope that cannot be delegated, is allowed, then plantctl prints the API’s refusal on one line and exits 1, and the set is unchanged', async () => {
    const before = await listed('exchanger');
    for (const audience of [ACCOUNT_ADMIN_AUDIENCE, 'https://attacker.example']) {
      const refused = await change(['sa', 'delegations', 'allow', 'exchanger', audience]);
      expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 1, stdout: '' });
      expect(refused.stderr).toMatch(
        new RegExp(
          `^plantctl: PUT /service-accounts/[^/]+/delegations: 400 audience "${audience}" is not an API of this platform\n$`,
        ),
      );
    }
    for (const scope of ['admin', 'plants:read admin']) {
      const refused = await change(['sa', 'delegations', 'allow', 'exchanger', INVENTORY, scope]);
      expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 1, stdout: '' });
      expect(refused.stderr).toMatch(/^plantctl: PUT \S+: 400 .*scope must be/);
      expect(refused.stderr.split('\n')).toHaveLength(2);
    }
    expect(await listed('exchanger')).toEqual(before);
  });

  test('When another tenant’s account is named, by its client_id or its name, then list, allow and revoke find no such account (exit 4) and its delegations are untouched', async () => {
    const other = await s.platform.createTenant('pdother');
    const theirs = await s.platform.createServiceAccount(other, { name: 'their-exchanger' });
    for (const ref of [theirs.clientId, theirs.name])
      for (const args of [
        ['list', ref],
        ['allow', ref, PLANT_STORE_AUDIENCE, 'plants:write'],
        ['revoke', ref, PLANT_STORE_AUDIENCE],
      ]) {
        const run = await change(['sa', 'delegations', ...args]);
        expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
          code: 4,
          stdout: '',
          stderr: `plantctl: No service account ${JSON.stringify(ref)} in ${s.tenant}\n`,
        });
      }
    expect(await theirDelegations(other, theirs.clientId)).toEqual([]);
  });

  test('When the tenant file gives an account delegations, then plan shows the set changing (2), apply puts it, plan again finds nothing (0); [] revokes them all', async () => {
    const file = join(s.work, 'delegations.yaml');
    const tenantFile = (delegations: string) => `apiVersion: plantctl.plantstore.dev/v1
kind: Tenant
tenant: ${s.tenant}
service_accounts:
  - name: exchanger
  - name: obo-api
    delegations: ${delegations}
`;
    await writeFile(
      file,
      tenantFile(`\n      - audience: ${INVENTORY}\n        scope: [plants:write, plants:read]`),
    );
    const plan = await s.plantctl(['plan', '-f', file]);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('+ create service account "obo-api"');
    expect(plan.stdout).toContain(
      `~ set the delegations of "obo-api": delegations [] → [${INVENTORY} (plants:read plants:write)]`,
    );
    const apply = await change([
      'apply',
      '-f',
      file,
      '--secret-file',
      join(s.work, 'obo-api.secret'),
    ]);
    expectExit(apply, 0);
    expect(apply.stdout).toContain('Applied 2 changes.');
    expect(await listed('obo-api')).toEqual([
      { audience: INVENTORY, scope: 'plants:read plants:write' },
    ]);
    expectExit(await s.plantctl(['plan', '-f', file]), 0);

    await writeFile(file, tenantFile('[]'));
    const revoke = await change(['apply', '-f', file]);
    expectExit(revoke, 0);
    expect(revoke.stdout).toContain(
      `~ set the delegations of "obo-api" (${JSON.parse((await s.plantctl(['sa', 'get', 'obo-api', '-o', 'json'])).stdout).client_id}): delegations [${INVENTORY} (plants:read plants:write)] → []`,
    );
    expect(await listed('obo-api')).toEqual([]);
    // The account whose entry gives no delegations keeps its own: they are not the file's.
    expect(revoke.stdout).not.toContain('"exchanger"');
    expect(await listed('exchanger')).not.toEqual([]);
  });

  test('When the delegations change between a saved plan and its apply, then apply is refused (412, exit 5) and the other change stands', async () => {
    const file = join(s.work, 'race.yaml');
    const saved = join(s.work, 'race-plan.json');
    await writeFile(
      file,
      `apiVersion: plantctl.plantstore.dev/v1
kind: Tenant
tenant: ${s.tenant}
service_accounts:
  - name: exchanger
    delegations: []
`,
    );
    expect((await s.plantctl(['plan', '-f', file, '--out', saved])).code).toBe(2);
    // Someone else allows another API after the plan read the account.
    expectExit(await change(['sa', 'delegations', 'allow', 'exchanger', INVENTORY]), 0);
    const applied = await change(['apply', '--plan', saved]);
    expect(applied.code).toBe(5);
    expect(applied.stderr).toContain(
      'the account changed since the plan (412 Precondition Failed)',
    );
    expect(await listed('exchanger')).toContainEqual({ audience: INVENTORY, scope: 'plants:read' });
  });
});
