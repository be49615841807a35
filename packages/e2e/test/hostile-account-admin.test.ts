/**
 * Hostile input against the account-admin process's REST API (`/api/v1`), as an Account
 * Admin user signed in through the real token service: create bodies, update bodies, and
 * any method on any path (HOSTILE_RUNS cases each, 2,000 by default); and the portal's links
 * a user can be sent (forged page cursors, return_to paths that normalise to another host).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import {
  assertHostile,
  bodyCase,
  headerSafe,
  hostileAnswerProblem,
  hostileString,
  internalDetail,
  pageProblem,
  HOSTILE_RUNS,
  HOSTILE_TIMEOUT_MS,
  HOSTILE_SEED,
  httpRequest,
  jsonText,
  pathSafe,
  shapedObjectText,
  startPlatform,
  type Platform,
  type ServiceAccount,
} from '../src/index.js';

let p: Platform;
let tenant: string;
let adminToken: string;
let target: ServiceAccount;

type Account = { name: string; client_id: string; role: string; grants: unknown[] };

beforeAll(async () => {
  p = await startPlatform({ plantStores: 0, accountAdmin: true });
  tenant = await p.createTenant('ha');
  adminToken = await p.userToken(tenant, `admin@${tenant}.test`);
  target = await p.createServiceAccount(tenant);
}, 60_000);

afterAll(() => p?.close());

const api = (path: string) => `${p.portalUrl}/api/v1${path}`;

async function accounts(): Promise<Account[]> {
  const res = await httpRequest(api('/service-accounts'), {
    headers: { authorization: `Bearer ${adminToken}` },
  });
  expect(res.status).toBe(200);
  return (res.body as Array<Account & { last_used_at?: unknown }>).map(
    ({ last_used_at: _ignored, ...rest }) => rest,
  );
}

async function assertStillUp(): Promise<void> {
  expect(p.accountAdmin!.child.exitCode).toBeNull();
  expect((await httpRequest(`${p.accountAdmin!.managementUrl}/healthz`)).status).toBe(200);
}

const text = hostileString.map((s) => JSON.stringify(s));
const grantText = shapedObjectText({
  tag: text,
  permission: fc.constantFrom('"edit"', '"view"', '"EDIT"', 'null'),
});
const grantsText = fc
  .array(fc.oneof({ weight: 3, arbitrary: grantText }, { weight: 1, arbitrary: jsonText }), {
    maxLength: 60,
  })
  .map((items) => `[${items.join(',')}]`);

describe('account-admin /api/v1 under hostile input', () => {
  test(
    'When service-account create bodies are hostile, then no answer is 5xx or leaks internals, every error is the Error shape, and exactly the accounts that got 201 exist afterwards',
    async () => {
      const before = await accounts();
      const created: Account[] = [];
      const statuses = new Set<number>();

      const sent = await assertHostile(bodyCase(shapedObjectText({ name: text })), async (c) => {
        const answer = await httpRequest(api('/service-accounts'), {
          method: 'POST',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': c.contentType },
          body: c.body,
        });
        statuses.add(answer.status);
        const problem = hostileAnswerProblem(answer, 'error');
        if (problem !== undefined) return problem;
        if (![201, 400, 409, 413, 415].includes(answer.status))
          return `unexpected status ${answer.status}`;
        if (answer.status === 201) {
          const {
            secret,
            last_used_at: _ignored,
            ...account
          } = answer.body as Account & { secret: string; last_used_at: unknown };
          if (typeof secret !== 'string' || !secret.startsWith('pss_'))
            return 'a 201 without the new secret';
          created.push(account);
        }
        return undefined;
      });

      expect(sent).toBeGreaterThanOrEqual(HOSTILE_RUNS);
      expect([...statuses]).toEqual(expect.arrayContaining([201, 400, 409, 415]));
      await assertStillUp();
      const byName = (a: Account, b: Account) => (a.client_id < b.client_id ? -1 : 1);
      expect([...(await accounts())].sort(byName)).toEqual([...before, ...created].sort(byName));
    },
    HOSTILE_TIMEOUT_MS,
  );

  test(
    'When update bodies for one account are hostile, then no answer is 5xx or leaks internals, every error is the Error shape, and the account ends as one of the 200 answers left it',
    async () => {
      const initial = (await accounts()).find((a) => a.client_id === target.clientId)!;
      // One known change first, so the end state is a real choice among at least two whatever
      // the generated bodies are (a seed whose few valid bodies all restate the account must not
      // make the test vacuous, nor fail it).
      const changed = await httpRequest(api(`/service-accounts/${target.clientId}`), {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ role: initial.role === 'Edit' ? 'View' : 'Edit' }),
      });
      expect(changed.status).toBe(200);
      const { last_used_at: _unused, ...afterChange } = changed.body as Account & {
        last_used_at: unknown;
      };
      const outcomes = [JSON.stringify(initial), JSON.stringify(afterChange)];
      const answered = new Map<number, number>();
      const body = shapedObjectText({
        role: fc.constantFrom(
          '"View"',
          '"Edit"',
          '"Account Admin"',
          '"view"',
          '"EDIT "',
          'null',
          '["Edit"]',
        ),
        grants: grantsText,
      });

      const sent = await assertHostile(bodyCase(body), async (c) => {
        const answer = await httpRequest(api(`/service-accounts/${target.clientId}`), {
          method: 'PATCH',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': c.contentType },
          body: c.body,
        });
        answered.set(answer.status, (answered.get(answer.status) ?? 0) + 1);
        const problem = hostileAnswerProblem(answer, 'error');
        if (problem !== undefined) return problem;
        if (![200, 400, 413, 415].includes(answer.status))
          return `unexpected status ${answer.status}`;
        if (answer.status === 200) {
          const { last_used_at: _ignored, ...account } = answer.body as Account & {
            last_used_at: unknown;
          };
          if (!['View', 'Edit'].includes(account.role)) return `role became ${account.role}`;
          outcomes.push(JSON.stringify(account));
        }
        return undefined;
      });

      expect(sent).toBeGreaterThanOrEqual(HOSTILE_RUNS);
      await assertStillUp();
      const final = (await accounts()).find((a) => a.client_id === target.clientId)!;
      expect({
        final: outcomes.includes(JSON.stringify(final)),
        answered: Object.fromEntries(answered),
        seed: HOSTILE_SEED,
      }).toEqual({ final: true, answered: expect.anything(), seed: HOSTILE_SEED });
    },
    HOSTILE_TIMEOUT_MS,
  );

  test(
    'When any method hits hostile /api/v1 paths with hostile bodies and headers, then no answer is 5xx or leaks internals, errors are the Error shape, and nothing changes that did not answer 2xx',
    async () => {
      const before = await accounts();
      const segment = fc.oneof(
        {
          weight: 4,
          arbitrary: fc.constantFrom(
            'service-accounts',
            'audit-events',
            'me',
            'openapi.json',
            'reset-secret',
            `${target.clientId}x`,
            'sa-00000000000000000000000000000000',
          ),
        },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            '..',
            '.',
            '%2e%2e',
            '%2f',
            '%00',
            '%ZZ',
            '%',
            '~',
            '*',
            ';',
            'a;b=c',
            '?',
            '#',
            '\\',
            '%5c',
            'x'.repeat(300),
            '__proto__',
            'constructor',
          ),
        },
        {
          weight: 2,
          arbitrary: hostileString.map((s) =>
            encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd')),
          ),
        },
        { weight: 1, arbitrary: hostileString.map(pathSafe) },
      );
      const hostileCase = fc.record({
        method: fc.constantFrom(
          'GET',
          'HEAD',
          'POST',
          'PUT',
          'PATCH',
          'DELETE',
          'OPTIONS',
          'TRACE',
          'PROPFIND',
          'get',
        ),
        path: fc
          .array(segment, { minLength: 0, maxLength: 4 })
          .map((parts) => `/${parts.join('/')}`),
        query: fc.option(
          fc
            .array(fc.tuple(fc.constantFrom('limit', 'cursor', 'x'), hostileString))
            .map((pairs) =>
              pairs
                .map(([k, v]) => `${k}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, ''))}`)
                .join('&'),
            ),
          { nil: undefined },
        ),
        body: fc.option(bodyCase(jsonText), { nil: undefined }),
        csrf: fc.option(hostileString.map(headerSafe), { nil: undefined }),
      });
      const created: Account[] = [];

      const sent = await assertHostile(hostileCase, async (c) => {
        const url = api(`${c.path}${c.query === undefined ? '' : `?${c.query}`}`);
        const answer = await httpRequest(url, {
          method: c.method.toUpperCase(),
          headers: {
            authorization: `Bearer ${adminToken}`,
            'content-type': c.body?.contentType,
            'x-csrf-token': c.csrf,
          },
          body: c.body?.body,
        });
        if (c.method.toUpperCase() === 'HEAD')
          return answer.status >= 500 ? `status ${answer.status}` : undefined;
        const problem = hostileAnswerProblem(answer, 'error');
        if (problem !== undefined) return problem;
        if (answer.status === 201)
          created.push(
            (({ secret: _s, last_used_at: _l, ...a }) => a)(
              answer.body as Account & { secret: string; last_used_at: unknown },
            ),
          );
        return undefined;
      });

      expect(sent).toBeGreaterThanOrEqual(HOSTILE_RUNS);
      await assertStillUp();
      const byId = (a: Account, b: Account) => (a.client_id < b.client_id ? -1 : 1);
      expect([...(await accounts())].sort(byId)).toEqual([...before, ...created].sort(byId));
    },
    HOSTILE_TIMEOUT_MS,
  );
});

describe('Links into the portal', () => {
  const cursor = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
  const forged = [
    'before:9999999999999999999',
    'before:9223372036854775808',
    'before:-9223372036854775809',
    'v1:-9223372036854775809',
  ].map(cursor);

  test('When a signed-in user follows a forged page cursor past int64, then the API answers 400 in the Error shape and the Activity page a 400 page, never 500', async () => {
    const session = await p.portalSession(tenant, `admin@${tenant}.test`);
    const answers = [];
    for (const value of forged) {
      const viaSession = await httpRequest(api(`/audit-events?cursor=${value}`), {
        headers: { cookie: session.cookie },
      });
      const viaBearer = await httpRequest(api(`/audit-events?cursor=${value}`), {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      const page = await httpRequest(`${p.portalUrl}/activity?cursor=${value}`, {
        headers: { cookie: session.cookie },
      });
      answers.push({
        value,
        viaSession: [viaSession.status, viaSession.body],
        viaBearer: [viaBearer.status, viaBearer.body],
        page: [page.status, pageProblem(page), internalDetail(page.text)],
      });
    }

    const refused = [
      400,
      { error: 400, message: 'cursor is not valid; use the link of the previous page' },
    ];
    expect(answers).toEqual(
      forged.map((value) => ({
        value,
        viaSession: refused,
        viaBearer: refused,
        page: [400, undefined, undefined],
      })),
    );
  });

  test('When the tenant picker is opened with a return_to whose dot segments or encoded dots normalise to //host, then its hidden field holds the default landing, never a protocol-relative path', async () => {
    const crafted = [
      '/.//evil.example',
      '/%2e//evil.example',
      '/%2E%2E//evil.example',
      '/a/..//evil.example',
      '/a/%2e%2e//evil.example',
      '/./\\evil.example',
    ];
    const fields = [];
    for (const returnTo of crafted) {
      const picker = await httpRequest(`${p.portalUrl}/?return_to=${encodeURIComponent(returnTo)}`);
      fields.push({
        returnTo,
        status: picker.status,
        field: /name="return_to" value="([^"]*)"/.exec(picker.text)?.[1],
      });
    }

    expect(fields).toEqual(
      crafted.map((returnTo) => ({ returnTo, status: 200, field: '/settings/service-accounts' })),
    );
    for (const { field } of fields)
      expect(new URL(field!, p.portalUrl).origin).toBe(new URL(p.portalUrl).origin);
  });
});
