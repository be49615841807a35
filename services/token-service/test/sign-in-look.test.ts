/**
 * The token service's pages in the portal's look: the shared stylesheet served by this service
 * under /realms/_assets (the only prefix the ingress routes here), allowed by the pages' CSP
 * without inline style; the unknown-realm page for browsers; oidc-provider's error and sign-out
 * pages in the same shell. And what an attacker can do with the new route: nothing reaches a file.
 */
import { describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { renderHeader, STYLESHEET, STYLESHEET_FILE } from '@plant/shared/page-look';
import { REPO_ROOT } from '@plant/test-kit';
import { ADMIN_PASSWORD, TEST_ENV, useHarness, type Harness } from './helpers/harness.js';
import { portalDriver, type PortalDriver } from './helpers/portal-driver.js';

let h: Harness;
let tenant: string;
let driver: PortalDriver;
useHarness((started, first) => {
  [h, tenant] = [started, first];
  driver = portalDriver(h, tenant);
});

const run = promisify(execFile);
const STYLESHEET_PATH = `/realms/_assets/${STYLESHEET_FILE}`;
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const CSP = `default-src 'none'; style-src 'self'; form-action 'self' ${TEST_ENV.PORTAL_URL}; base-uri 'none'; frame-ancestors 'none'`;
/** The pages with a passkey form: this origin's scripts, nothing else. */
const CSP_WITH_SCRIPTS = `default-src 'none'; script-src 'self'; style-src 'self'; form-action 'self' ${TEST_ENV.PORTAL_URL}; base-uri 'none'; frame-ancestors 'none'`;

/** The page's stylesheet links and whatever inline style it carries. */
function lookOf(page: string) {
  return {
    stylesheets: [...page.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1]),
    inlineStyle: /<style|\sstyle=/i.test(page),
    scripts: /<script/i.test(page),
  };
}

/** A request line sent as it is (fetch and supertest resolve `..` segments themselves). */
function rawGet(path: string): Promise<string> {
  const { hostname, port } = new URL(h.publicUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.end(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`),
    );
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('the sign-in pages share the portal look', () => {
  test('When the sign-in form is shown, then it links the shared stylesheet served here with a year of immutable caching, has the shared header, no inline style, and only the passkey scripts of this origin', async () => {
    const { form } = await driver.startSignIn(driver.browser());
    const css = await request(h.publicUrl).get(STYLESHEET_PATH);
    const scripts = [...form.text.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    const served = await Promise.all(
      scripts.map((m) => request(h.publicUrl).get(/src="([^"]+)"/.exec(m[1]!)![1]!)),
    );

    expect(lookOf(form.text)).toEqual({
      stylesheets: [STYLESHEET_PATH],
      inlineStyle: false,
      scripts: true,
    });
    expect(scripts.map((m) => [m[1], m[2]])).toEqual([
      [' type="module" src="/realms/_assets/simplewebauthn-browser.js"', ''],
      [' type="module" src="/realms/_assets/passkey.js"', ''],
    ]);
    expect(served.map((r) => [r.status, r.headers['content-type']])).toEqual([
      [200, 'text/javascript; charset=utf-8'],
      [200, 'text/javascript; charset=utf-8'],
    ]);
    expect(form.text).toContain(renderHeader({ tenant }).value);
    expect(form.headers['content-security-policy']).toBe(CSP_WITH_SCRIPTS);
    expect({
      status: css.status,
      type: css.headers['content-type'],
      cache: css.headers['cache-control'],
      sniff: css.headers['x-content-type-options'],
    }).toEqual({
      status: 200,
      type: 'text/css; charset=utf-8',
      cache: 'public, max-age=31536000, immutable',
      sniff: 'nosniff',
    });
    expect(css.text).toBe(STYLESHEET);
  });

  test('When oidc-provider refuses an authorization request, then its error page has the same look, the reason and the way back to the portal', async () => {
    const res = await request(h.publicUrl)
      .get(
        `/realms/${tenant}/protocol/openid-connect/auth?client_id=nobody&response_type=code&scope=openid`,
      )
      .set('accept', BROWSER_ACCEPT);

    expect(res.status).toBe(400);
    expect(res.headers['content-security-policy']).toBe(CSP);
    expect(lookOf(res.text)).toEqual({
      stylesheets: [STYLESHEET_PATH],
      inlineStyle: false,
      scripts: false,
    });
    expect(res.text).toContain('<h1>Something went wrong</h1>');
    expect(res.text).toContain(
      `<a class="button" href="${TEST_ENV.PORTAL_URL}/">Go to the admin portal</a>`,
    );
  });

  test('When a signed-in user is asked to confirm signing out, then the page has the same look and its buttons submit the provider form', async () => {
    const b = driver.browser();
    await driver.completeSignIn(
      b,
      await driver.startSignIn(b),
      `admin@${tenant}.test`,
      ADMIN_PASSWORD,
    );

    const res = await b.get(`/realms/${tenant}/protocol/openid-connect/logout`);

    expect(res.status).toBe(200);
    expect(lookOf(res.text)).toEqual({
      stylesheets: [STYLESHEET_PATH],
      inlineStyle: false,
      scripts: false,
    });
    expect(res.text).toMatch(
      /<form id="op.logoutForm" method="post" action="[^"]+"><input type="hidden" name="xsrf" value="[^"]+"\/><\/form>/,
    );
    expect(res.text).toContain(
      'form="op.logoutForm" value="yes" name="logout" class="button button-primary">Yes, sign me out</button>',
    );
  });
});

describe('an unknown tenant', () => {
  test('When a browser asks for a realm that does not exist, then a 404 page names it with the way to the portal; a program gets the Error shape', async () => {
    const path = `/realms/no-such-${tenant}/protocol/openid-connect/auth?client_id=portal`;
    const browser = await request(h.publicUrl).get(path).set('accept', BROWSER_ACCEPT);
    const signOut = await request(h.publicUrl)
      .get(`/realms/no-such-${tenant}/protocol/openid-connect/logout`)
      .set('accept', BROWSER_ACCEPT);
    const program = await request(h.publicUrl).get(path);
    const form = await request(h.publicUrl).get(`/realms/no-such-${tenant}/interaction/abc`);
    const post = await request(h.publicUrl)
      .post(`/realms/no-such-${tenant}/interaction/abc/login`)
      .type('form')
      .send({ csrf: 'x', email: 'a@b.test', password: 'x' });

    for (const page of [browser, signOut, form, post]) {
      expect({
        status: page.status,
        csp: page.headers['content-security-policy'],
        cache: page.headers['cache-control'],
      }).toEqual({ status: 404, csp: CSP, cache: 'no-store' });
      expect(lookOf(page.text)).toEqual({
        stylesheets: [STYLESHEET_PATH],
        inlineStyle: false,
        scripts: false,
      });
      expect(page.text).toContain(
        `There is no Plant Store tenant named <strong>no-such-${tenant}</strong>.`,
      );
      expect(page.text).toContain(`href="${TEST_ENV.PORTAL_URL}/"`);
    }
    expect([program.status, program.body]).toEqual([
      404,
      { error: 404, message: 'Realm not found' },
    ]);
  });

  test('When a request to an unknown realm is not a browser navigation to sign-in or sign-out (an endpoint for programs, another method), then it gets the Error shape whatever it accepts', async () => {
    const realm = `/realms/no-such-${tenant}`;
    const answers = await Promise.all([
      ...[
        '/protocol/openid-connect/token',
        '/protocol/openid-connect/certs',
        '/protocol/openid-connect/userinfo',
        '/.well-known/openid-configuration',
        '',
      ].map((path) => request(h.publicUrl).get(`${realm}${path}`).set('accept', BROWSER_ACCEPT)),
      request(h.publicUrl)
        .post(`${realm}/protocol/openid-connect/token`)
        .set('accept', BROWSER_ACCEPT)
        .type('form')
        .send({ grant_type: 'client_credentials' }),
      request(h.publicUrl)
        .post(`/realms/./protocol/openid-connect/token`)
        .set('accept', 'text/html')
        .type('form')
        .send({ grant_type: 'client_credentials' }),
      request(h.publicUrl)
        .post(`${realm}/protocol/openid-connect/auth`)
        .set('accept', BROWSER_ACCEPT),
      request(h.publicUrl)
        .delete(`${realm}/protocol/openid-connect/logout`)
        .set('accept', BROWSER_ACCEPT),
    ]);

    expect(answers.map((a) => [a.status, a.headers['content-type'], a.body])).toEqual(
      answers.map(() => [
        404,
        'application/json; charset=utf-8',
        { error: 404, message: expect.stringMatching(/^(Realm|Tenant) not found$/) },
      ]),
    );
  });

  test('When the realm segment carries markup or is no tenant name, then the 404 page echoes nothing of it', async () => {
    const hostile = [
      '%3Cscript%3Ealert(1)%3C%2Fscript%3E',
      'A%22onmouseover%3D1',
      '..%2F..%2Fetc',
      '-x-',
    ];

    const pages = await Promise.all(
      hostile.map((segment) =>
        request(h.publicUrl)
          .get(`/realms/${segment}/protocol/openid-connect/auth`)
          .set('accept', BROWSER_ACCEPT),
      ),
    );

    for (const page of pages) {
      expect(page.status).toBe(404);
      expect(page.text).toContain('This address does not lead to a Plant Store tenant.');
      expect(page.text).not.toMatch(/<script|onmouseover|etc|-x-/i);
    }
  });
});

describe('the stylesheet route under attack', () => {
  test('When any other name, a traversal or a directory is asked under /realms/_assets, then 404 and no file, whichever Accept', async () => {
    const paths = [
      '/realms/_assets/plant-store.css',
      `/realms/_assets/${STYLESHEET_FILE.replace(/\.css$/, '.js')}`,
      '/realms/_assets/..%2F..%2Fpackage.json',
      '/realms/_assets/%2e%2e/%2e%2e/%2e%2e/package.json',
      '/realms/_assets/',
      '/realms/_assets',
      `/realms/_assets/${STYLESHEET_FILE}/..%2F..%2Fpackage.json`,
    ];

    for (const path of paths) {
      for (const accept of ['application/json', BROWSER_ACCEPT]) {
        const res = await request(h.publicUrl).get(path).set('accept', accept);
        expect({ path, accept, status: res.status }).toEqual({ path, accept, status: 404 });
        expect(res.text).not.toMatch(/"name"\s*:|"dependencies"|:root \{/);
      }
    }
    for (const path of [
      '/realms/_assets/../../package.json',
      '/realms/_assets/../../../../etc/passwd',
    ]) {
      const answer = await rawGet(path);
      expect(answer).toMatch(/^HTTP\/1\.1 404 /);
      expect(answer).not.toMatch(/"dependencies"|root:/);
    }
  });

  test('When the stylesheet is posted to, then 405 with Allow; HEAD gets the headers without a body', async () => {
    const post = await request(h.publicUrl).post(STYLESHEET_PATH).send('x');
    const head = await request(h.publicUrl).head(STYLESHEET_PATH);

    expect([post.status, post.headers.allow, post.body]).toEqual([
      405,
      'GET, HEAD',
      { error: 405, message: 'Method POST is not allowed here; allowed: GET, HEAD' },
    ]);
    expect([head.status, head.headers['content-type'], head.text ?? '']).toEqual([
      200,
      'text/css; charset=utf-8',
      '',
    ]);
  });

  test('When the operator tries to create a tenant named _assets, then the CLI refuses it: no realm can take the stylesheet path', async () => {
    const cli = run(
      process.execPath,
      [
        join(REPO_ROOT, 'services/token-service/dist/cli.js'),
        'tenant',
        'create',
        '_assets',
        '--admin-email',
        'admin@assets.test',
        '--admin-password',
        'a long enough password',
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: TEST_ENV.DATABASE_URL,
          KEY_ENCRYPTION_KEY: TEST_ENV.KEY_ENCRYPTION_KEY,
          AUTH_URL: h.publicUrl,
        },
      },
    );

    await expect(cli).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('invalid tenant name "_assets"'),
    });
    const discovery = await request(h.publicUrl).get(
      '/realms/_assets/.well-known/openid-configuration',
    );
    expect([discovery.status, discovery.body]).toEqual([
      404,
      { error: 404, message: 'Realm not found' },
    ]);
  });
});
