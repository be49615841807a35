/**
 * The token service's own bearer values at rest: a portal sign-in through the three
 * processes, a second sign-in left at the form, then `pg_dump --schema=auth` searched for
 * every cookie value and every code the browsers were handed (session and interaction ids,
 * the authorization code). The rows are there, keyed by digests; sign-out and the next
 * sign-in still work.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CookieJar, httpRequest, startPlatform, type Platform } from '../src/index.js';

const run = promisify(execFile);
let p: Platform;

beforeAll(async () => {
  p = await startPlatform({ plantStores: 0, accountAdmin: true });
}, 60_000);

afterAll(() => p?.close());

/** The rows of `auth.oidc_payloads` in a plain-text dump, as (realm, model) of each. */
function payloadRows(dump: string): Array<{ realm: string; model: string }> {
  const block = /^COPY auth\.oidc_payloads \(([^)]*)\) FROM stdin;\n([\s\S]*?)^\\\.$/m.exec(dump);
  if (!block) return [];
  const columns = block[1]!.split(', ');
  return block[2]!
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const cells = line.split('\t');
      return { realm: cells[columns.indexOf('realm')]!, model: cells[columns.indexOf('model')]! };
    });
}

describe('Bearer values of a sign-in at rest', () => {
  test('When a user has signed in through the portal and another sign-in waits at the form, then pg_dump of the auth schema holds none of the cookie values or codes either browser saw, and sign-out and sign-in still work', async () => {
    const tenant = await p.createTenant('br');
    const admin = `admin@${tenant}.test`;
    const session = await p.portalSession(tenant, admin);
    const pending = new CookieJar();
    const start = await pending.send(`${p.portalUrl}/login?tenant=${tenant}`);
    const authorize = await pending.send(start.headers.location as string);
    const form = await pending.send(new URL(authorize.headers.location as string, p.authUrl).href);

    const { stdout: dump } = await run('pg_dump', ['--schema=auth', '--no-owner', p.databaseUrl], {
      maxBuffer: 512 * 1024 * 1024,
    });

    // What the browsers hold: the realm session, the interaction ids, the code; the rows behind them are in the dump.
    expect(form.status).toBe(200);
    expect([...session.browser.seen].length).toBeGreaterThanOrEqual(6);
    expect([...pending.seen].length).toBeGreaterThanOrEqual(4);
    const models = new Set(
      payloadRows(dump)
        .filter((row) => row.realm === tenant)
        .map((row) => row.model),
    );
    expect([...models].sort()).toEqual([
      'AccessToken',
      'AuthorizationCode',
      'Grant',
      'Interaction',
      'Session',
    ]);
    const found = [...session.browser.seen, ...pending.seen].filter((value) =>
      dump.includes(value),
    );
    expect(found).toEqual([]);

    // Sign-out through the portal ends the realm session too; the next sign-in asks for the password again.
    const signOut = await httpRequest(`${p.portalUrl}/logout`, {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
    });
    expect(signOut.status).toBe(200);
    const confirmPage = await session.browser.send((signOut.body as { redirect: string }).redirect);
    const action = /action="([^"]+)"/.exec(confirmPage.text)?.[1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(confirmPage.text)?.[1];
    expect({ status: confirmPage.status, action: typeof action, xsrf: typeof xsrf }).toEqual({
      status: 200,
      action: 'string',
      xsrf: 'string',
    });
    const confirmed = await session.browser.send(new URL(action!, p.authUrl).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf!, logout: 'yes' }).toString(),
    });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.location).toBe(`${p.portalUrl}/`);
    const portalApi = await httpRequest(`${p.portalUrl}/api/v1/service-accounts`, {
      headers: { cookie: session.cookie },
    });
    expect(portalApi.status).toBe(401);
    const again = await session.browser.send(
      (await session.browser.send(`${p.portalUrl}/login?tenant=${tenant}`)).headers
        .location as string,
    );
    expect(again.status).toBe(303);
    expect(new URL(again.headers.location as string, p.authUrl).pathname).toMatch(
      new RegExp(`^/realms/${tenant}/interaction/[A-Za-z0-9_-]+$`),
    );
    expect((await p.portalSession(tenant, admin)).landing).toBe('/settings/service-accounts');
  });
});
