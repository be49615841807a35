/**
 * plantctl's apply under the two things a person's plan does not control, against the three
 * services as processes:
 * - Two applies racing. Two people (two machines, two sign-ins) each plan a different file for
 *   the same account, then both apply at once. Each apply sends `If-Match` with the ETag its
 *   plan read; the token service decides under the account's row lock, so exactly one finds the
 *   revision it names and the other is refused (412) whichever comes first. Deterministic by
 *   construction: both plans are made before either apply starts, so both name the same
 *   revision, and nothing waits on a clock.
 * - Step-up. A change that needs a second factor verified in the last ten minutes, by a sign-in
 *   whose factor is older: the API answers RFC 9470's challenge, plantctl says so, signs in again
 *   through the realm (the device grant, asking the challenge's acr_values and max_age), and
 *   retries once. Ten minutes are not waited out: the stored access token is the real one
 *   re-signed with the realm's own key (as only an insider could) with an `auth_time` eleven
 *   minutes old, exactly what the CLI would hold after ten quiet minutes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { realmSigningKey, signJws, TEST_SECRETS } from '@plant/test-kit';
import { expectExit, type Run, usePlantctlShell } from './helpers/plantctl-shell.js';

const s = usePlantctlShell('prace');

interface Account {
  name: string;
  role: string;
  grants: string[];
  quota?: string;
}

function tenantFile(accounts: Account[]): string {
  return `apiVersion: plantctl.plantstore.dev/v1
kind: Tenant
tenant: ${s.tenant}
service_accounts:
${accounts
  .map(
    (a) =>
      `  - name: ${a.name}\n    role: ${a.role}\n    grants: [${a.grants.join(', ')}]\n${a.quota ?? ''}`,
  )
  .join('')}`;
}

async function write(name: string, accounts: Account[]): Promise<string> {
  const path = join(s.work, name);
  await writeFile(path, tenantFile(accounts));
  return path;
}

/** A JWT's header (0) or claims (1), unverified: the test reads what the realm issued. */
function partOf(token: string, part: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[part]!, 'base64url').toString()) as Record<
    string,
    unknown
  >;
}

describe('plantctl apply against a tenant that moves', () => {
  test('When two people plan different files for the same account and both apply at once, then exactly one wins, the other is refused as changed since its plan (exit 5) having changed nothing, and the account is the winner’s file', async () => {
    const second = join(s.work, 'second-machine');
    expectExit(await s.login(), 0);
    expectExit(await s.login(second), 0);
    const base = await write('base.yaml', [{ name: 'race-target', role: 'View', grants: [] }]);
    expectExit(
      await s.plantctl(['apply', '-f', base, '--secret-file', join(s.work, 'race.env')]),
      0,
    );

    const files = {
      a: await write('a.yaml', [{ name: 'race-target', role: 'Edit', grants: ['roses'] }]),
      b: await write('b.yaml', [{ name: 'race-target', role: 'View', grants: ['tulips'] }]),
    };
    const plans = { a: join(s.work, 'a.plan.json'), b: join(s.work, 'b.plan.json') };
    // Both plans first: each reads the account at the same revision.
    expect((await s.plantctl(['plan', '-f', files.a, '--out', plans.a])).code).toBe(2);
    expect((await s.plantctl(['plan', '-f', files.b, '--out', plans.b], second)).code).toBe(2);
    const etagOf = async (plan: string) =>
      (JSON.parse(await readFile(plan, 'utf8')) as { etags: Record<string, string> }).etags;
    const [etagsA, etagsB] = [await etagOf(plans.a), await etagOf(plans.b)];
    const accountTag = Object.entries(etagsA).find(([path]) =>
      /^\/service-accounts\/[^/]+$/.test(path),
    );
    expect(accountTag?.[1]).toMatch(/^"v\d+"$/);
    expect(etagsB[accountTag![0]]).toBe(accountTag![1]);

    const [runA, runB] = await Promise.all([
      s.plantctl(['apply', '--plan', plans.a]),
      s.plantctl(['apply', '--plan', plans.b], second),
    ]);

    const runs: Record<'a' | 'b', Run> = { a: runA, b: runB };
    const winners = (['a', 'b'] as const).filter((k) => runs[k].code === 0);
    expect({ winners: winners.length, codes: [runA.code, runB.code].sort() }).toEqual({
      winners: 1,
      codes: [0, 5],
    });
    const winner = winners[0]!;
    const loser = winner === 'a' ? 'b' : 'a';
    expect(runs[winner].stdout).toContain('Applied 1 change.');
    expect(runs[loser].stderr).toMatch(
      /Stopped at step 1 \(update "race-target" .*\): the account changed since the plan \(412 Precondition Failed\)/,
    );
    expect(runs[loser].stderr).toContain('0 steps applied before it.');
    // The winner's file is the tenant now; the loser's plans a change again from it.
    expectExit(await s.plantctl(['plan', '-f', files[winner]]), 0);
    expect((await s.plantctl(['plan', '-f', files[loser]])).code).toBe(2);
    const got = await s.plantctl(['service-accounts', 'list', '--output', 'json']);
    const account = (
      JSON.parse(got.stdout) as Array<{
        name: string;
        role: string;
        grants: Array<{ tag: string }>;
      }>
    ).find((a) => a.name === 'race-target');
    expect({ role: account?.role, tags: account?.grants.map((g) => g.tag) }).toEqual(
      winner === 'a' ? { role: 'Edit', tags: ['roses'] } : { role: 'View', tags: ['tulips'] },
    );
  });

  test('When plantctl changes people at once, then each change is conditional on the person as it read them: every run exits 0 or 5 (refused, nothing changed), one at least wins, and the person is at a winner’s role', async () => {
    expectExit(await s.login(), 0);
    const email = await s.platform.createUser(s.tenant, 'View');
    const roles = ['Edit', 'View', 'Edit', 'View', 'Edit', 'View'];

    const runs = await Promise.all(
      roles.map((role) => s.plantctl(['people', 'role', email, role])),
    );

    const codes = runs.map((r) => r.code);
    expect(codes.filter((c) => c !== 0 && c !== 5)).toEqual([]);
    const won = roles.filter((_, i) => codes[i] === 0);
    expect(won.length).toBeGreaterThanOrEqual(1);
    for (const run of runs.filter((r) => r.code === 5)) expect(run.stderr).toContain('412');
    const got = await s.plantctl(['people', 'get', email, '--output', 'json']);
    expectExit(got, 0);
    expect(won).toContain((JSON.parse(got.stdout) as { role: string }).role);
  }, 90_000); // six CLI processes at once, on a shared machine

  test('When an apply’s change needs a second factor the sign-in verified more than ten minutes ago, then plantctl says so, signs in again with the passkey through the realm, retries once and succeeds', async () => {
    expectExit(await s.login(), 0);
    const tokensPath = join(s.configDir, s.tenant, 'tokens.json');
    const tokens = JSON.parse(await readFile(tokensPath, 'utf8')) as Record<string, unknown>;
    const real = String(tokens.access_token);
    const key = await realmSigningKey(
      s.platform.databaseUrl,
      s.tenant,
      TEST_SECRETS.KEY_ENCRYPTION_KEY,
    );
    const header = partOf(real, 0);
    expect(header.kid).toBe(key.kid);
    const claims = partOf(real, 1);
    expect(claims).toMatchObject({
      acr: 'urn:plantstore:acr:factor',
      cnf: { jkt: expect.any(String) },
    });
    const aged = signJws(
      header,
      { ...claims, auth_time: Math.floor(Date.now() / 1000) - 11 * 60 },
      key.privateKey,
    );
    await writeFile(tokensPath, JSON.stringify({ ...tokens, access_token: aged }));

    // Creating an account needs a recent factor; the aged token alone is refused with RFC 9470.
    const file = await write('step-up.yaml', [
      { name: 'made-after-step-up', role: 'View', grants: [] },
    ]);
    const run = await s.withDeviceApproval([
      'apply',
      '-f',
      file,
      '--secret-file',
      join(s.work, 'step-up.env'),
    ]);

    expectExit(run, 0);
    expect(run.stderr).toContain('This change needs your second factor again.');
    expect(run.stderr).toMatch(/enter the code \S+/);
    expect(run.stdout).toContain('Applied 1 change.');
    expectExit(await s.plantctl(['plan', '-f', file]), 0);
    // The step-up's sign-in replaced the stored tokens: its factor is fresh.
    const after = JSON.parse(await readFile(tokensPath, 'utf8')) as { access_token: string };
    const authTime = partOf(after.access_token, 1).auth_time as number;
    expect(authTime).toBeGreaterThan(Math.floor(Date.now() / 1000) - 10 * 60);
  });
});
