import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { renderHeader, STYLESHEET, STYLESHEET_FILE } from '@plant/shared/page-look';
import {
  askManagementForPublic,
  askPublicForManagement,
  uniqueName,
  type ServiceProcess,
} from '@plant/test-kit';
import { signIn, type PortalSession } from './helpers/browser-client.js';
import {
  createTenant,
  startTokenService,
  type Platform,
  type TestTenant,
} from './helpers/platform.js';

let ts: Platform;
let portal: ServiceProcess;
let acme: TestTenant;
let admin: PortalSession;

beforeAll(async () => {
  ts = await startTokenService({ accountAdmin: true });
  portal = ts.accountAdmin!;
  acme = await createTenant(ts);
  admin = await signIn(portal.url, acme.tenant, acme.admin);
}, 60_000);

afterAll(() => ts?.close());

describe('the account-admin process', () => {
  test('When probed on the management port, then /healthz and /readyz answer 200 and /metrics exposes request metrics', async () => {
    const health = await fetch(`${portal.managementUrl}/healthz`);
    const ready = await fetch(`${portal.managementUrl}/readyz`);
    const metrics = await fetch(`${portal.managementUrl}/metrics`);

    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain('http_requests_total');
    expect(text).toContain('audit_write_failures_total');
  });

  test('When the public port is asked for /metrics, /healthz or /readyz, however spelled or redirected, then it answers 404 in the Error shape', async () => {
    const answers = await askPublicForManagement(portal.url, portal.managementPort);

    expect(answers.length).toBeGreaterThan(20);
    expect(answers).toEqual(answers.map(({ what }) => ({ what, status: 404, errorShape: true })));
  });

  test('When the management port is asked for a portal page, an asset or the API, with or without forwarding and rewrite headers, then it answers 404 in the Error shape', async () => {
    const answers = await askManagementForPublic(portal.managementUrl, [
      '/api/v1/service-accounts',
      '/settings/service-accounts',
      '/login?tenant=acme',
      '/assets/portal.js',
      '/',
    ]);

    expect(answers).toEqual(answers.map(({ what }) => ({ what, status: 404, errorShape: true })));
  });

  test('When a portal page is served, then it carries a CSP allowing only its own script and style, and no-store', async () => {
    const res = await fetch(`${portal.url}/settings/service-accounts`, {
      headers: { cookie: admin.cookie() },
    });

    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp.split(';').map((d) => d.trim())).toEqual(
      expect.arrayContaining([
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
        `form-action 'self' ${ts.authUrl}`,
      ]),
    );
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const script = await fetch(`${portal.url}/assets/portal.js`);
    expect([script.status, script.headers.get('content-type')]).toEqual([
      200,
      'text/javascript; charset=utf-8',
    ]);
  });

  test('When a portal page is served, then it links the stylesheet shared with the sign-in pages, served here under its content-named path for a year', async () => {
    const page = await (await fetch(`${portal.url}/`)).text();
    const css = await fetch(`${portal.url}/assets/${STYLESHEET_FILE}`);
    const oldName = await fetch(`${portal.url}/assets/portal.css`);

    expect([...page.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1])).toEqual([
      `/assets/${STYLESHEET_FILE}`,
    ]);
    expect(page).toContain(renderHeader({ area: 'admin' }).value);
    expect(page).not.toMatch(/<style|\sstyle=/i);
    expect([
      css.status,
      css.headers.get('content-type'),
      css.headers.get('cache-control'),
      await css.text(),
    ]).toEqual([200, 'text/css; charset=utf-8', 'public, max-age=31536000, immutable', STYLESHEET]);
    expect([oldName.status, await oldName.json()]).toEqual([
      404,
      { error: 404, message: 'Not found' },
    ]);
  });

  test('When a service account name contains markup, then the page shows it as text', async () => {
    const name = `<img src=x onerror=alert(1)> ${uniqueName('x')}`;
    const created = await fetch(`${portal.url}/api/v1/service-accounts`, {
      method: 'POST',
      headers: admin.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ name }),
    });
    expect(created.status).toBe(201);

    const page = await (
      await fetch(`${portal.url}/settings/service-accounts`, {
        headers: { cookie: admin.cookie() },
      })
    ).text();

    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  test('When an unknown route or a wrong method is used, then the answer is the Error shape', async () => {
    const unknown = await fetch(`${portal.url}/api/v1/nothing-here`, { headers: admin.headers() });
    const wrong = await fetch(`${portal.url}/api/v1/service-accounts`, {
      method: 'PUT',
      headers: admin.headers(),
    });

    expect([unknown.status, await unknown.json()]).toEqual([
      404,
      { error: 404, message: 'No route for GET /api/v1/nothing-here' },
    ]);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(await wrong.json()).toEqual({
      error: 405,
      message: 'Method PUT is not allowed here; allowed: GET, HEAD, POST',
    });
  });

  test('When a page or an asset is asked with a method it does not serve, then 405 with Allow in the Error shape', async () => {
    const page = await fetch(`${portal.url}/activity`, {
      method: 'POST',
      headers: { cookie: admin.cookie() },
    });
    const asset = await fetch(`${portal.url}/assets/portal.js`, { method: 'POST' });
    const missingAsset = await fetch(`${portal.url}/assets/nothing.js`, { method: 'DELETE' });

    for (const [res, path] of [
      [page, '/activity'],
      [asset, '/assets/portal.js'],
      [missingAsset, '/assets/nothing.js'],
    ] as const) {
      expect({
        path,
        status: res.status,
        allow: res.headers.get('allow'),
        body: JSON.parse((await res.text()) || 'null') as unknown,
      }).toEqual({
        path,
        status: 405,
        allow: 'GET, HEAD',
        body: {
          error: 405,
          message: `Method ${path === '/assets/nothing.js' ? 'DELETE' : 'POST'} is not allowed here; allowed: GET, HEAD`,
        },
      });
    }
  });

  test('When a directory under /assets is asked for, then 404 in the Error shape, never a redirect that echoes the path', async () => {
    const long = 'x'.repeat(12_000);
    const answers = [];
    // `%2F..` reaches the server as it is (fetch resolves `..` and `%2e%2e` itself); the static server reads it as `/..`.
    for (const path of [
      '/assets',
      '/assets/',
      `/assets/${long}/%2F..`,
      '/assets/a/%2F..',
      '/assets/portal.css/%2F..',
    ]) {
      const res = await fetch(`${portal.url}${path}`, { redirect: 'manual' });
      const text = await res.text();
      answers.push({
        path: path.slice(0, 40),
        status: res.status,
        location: res.headers.get('location')?.slice(0, 60) ?? null,
        body: text.startsWith('{') ? (JSON.parse(text) as unknown) : text.slice(0, 60),
      });
    }

    expect(answers).toEqual(
      answers.map(({ path }) => ({
        path,
        status: 404,
        location: null,
        body: { error: 404, message: 'Not found' },
      })),
    );
  });

  test('When SIGTERM arrives, then the process drains and exits 0', async () => {
    const code = await portal.stop('SIGTERM');
    expect(code).toBe(0);
    expect(portal.logs.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    expect(portal.logs.join('\n')).not.toContain(admin.csrf);
  });
});
