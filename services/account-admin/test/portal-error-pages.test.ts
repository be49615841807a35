/**
 * Error pages for browsers, the `Error` JSON for everyone else: an unknown path, an unknown
 * service account, a page the role may not open, a failure, and an ended session, each asked
 * with a browser's `Accept` and with an API client's; and what an attacker can put in the path
 * (markup, a long path) is never echoed into a page.
 */
import { describe, expect, test } from '@jest/globals';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@plant/shared/logging';
import { CookieJar, send, signIn } from './helpers/browser-client.js';
import { useSignedInPortal } from './helpers/portal-api.js';
import { browserErrorPages } from '../src/portal/index.js';

const p = useSignedInPortal();
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

/** The page's title (h1) and its one way back. */
async function pageOf(res: Response) {
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    title: /<h1>([^<]*)<\/h1>/.exec(text)?.[1],
    back: /<a class="button" href="([^"]*)">([^<]*)<\/a>/.exec(text)?.slice(1, 3),
    text,
  };
}

describe('error pages', () => {
  test('When a signed-in browser opens an unknown path, then a 404 page in the portal shell leads back to Service accounts; an API client still gets the Error JSON', async () => {
    const asBrowser = await send(p.admin.jar, `${p.portal.url}/nowhere`, { headers: BROWSER });
    const asClient = await send(p.admin.jar, `${p.portal.url}/nowhere`);
    const apiPath = await send(p.admin.jar, `${p.portal.url}/api/v1/nowhere`, {
      headers: BROWSER,
    });

    const page = await pageOf(asBrowser);
    expect(page).toMatchObject({
      status: 404,
      type: 'text/html; charset=utf-8',
      title: 'Page not found',
      back: ['/settings/service-accounts', 'Back to service accounts'],
    });
    expect(page.text).toContain('aria-label="Settings"');
    expect(asBrowser.headers.get('cache-control')).toBe('no-store');
    expect([asClient.status, await asClient.json()]).toEqual([
      404,
      { error: 404, message: 'No route for GET /nowhere' },
    ]);
    expect([apiPath.status, apiPath.headers.get('content-type')]).toEqual([
      404,
      'application/json; charset=utf-8',
    ]);
  });

  test('When a browser errs on the assets or a discovery document, then it gets the Error JSON: machines read there', async () => {
    const asset = await send(p.admin.jar, `${p.portal.url}/assets/portal.js`, {
      method: 'POST',
      headers: BROWSER,
    });
    const discovery = await send(
      p.admin.jar,
      `${p.portal.url}/.well-known/plantctl-configuration?tenant[a]=x`,
      { headers: BROWSER },
    );

    for (const [res, status] of [
      [asset, 405],
      [discovery, 400],
    ] as const) {
      expect([res.status, res.headers.get('content-type')]).toEqual([
        status,
        'application/json; charset=utf-8',
      ]);
      expect(await res.json()).toMatchObject({ error: status, message: expect.any(String) });
    }
  });

  test('When a signed-out browser opens an unknown path holding markup, then the 404 page leads to sign-in and echoes nothing of the path', async () => {
    const path = `/%3Cscript%3Ealert(1)%3C%2Fscript%3E/${'x'.repeat(4000)}`;

    const page = await pageOf(await fetch(`${p.portal.url}${path}`, { headers: BROWSER }));

    expect(page).toMatchObject({
      status: 404,
      title: 'Page not found',
      back: ['/', 'Back to sign-in'],
    });
    expect(page.text).not.toContain('<script>');
    expect(page.text).not.toContain('xxxxxxxx');
  });

  test('When a browser opens an unknown service account, then the 404 page says so and leads back', async () => {
    const page = await pageOf(
      await send(
        p.admin.jar,
        `${p.portal.url}/settings/service-accounts/00000000-0000-4000-8000-000000000000`,
        { headers: BROWSER },
      ),
    );

    expect(page).toMatchObject({
      status: 404,
      title: 'Page not found',
      back: ['/settings/service-accounts', 'Back to service accounts'],
    });
    expect(page.text).not.toContain('Something went wrong');
  });

  test('When a View user opens People, then a 403 page names why and leads back', async () => {
    const viewer = await signIn(p.portal.url, p.acme.tenant, p.acme.viewer);

    const page = await pageOf(
      await send(viewer.jar, `${p.portal.url}/settings/people`, { headers: BROWSER }),
    );

    expect(page).toMatchObject({
      status: 403,
      title: 'You cannot open this page',
      back: ['/settings/service-accounts', 'Back to service accounts'],
    });
  });

  test("When a browser's session has ended, then the page it opens sends it to sign-in, which says so once and comes back afterwards", async () => {
    const session = await signIn(p.portal.url, p.acme.tenant, p.acme.editor);
    const ended = await send(session.jar, `${p.portal.url}/api/v1/me/sessions`, {
      headers: session.headers(),
    });
    const [mine] = (await ended.json()) as Array<{ id: string }>;
    expect(
      (
        await send(session.jar, `${p.portal.url}/api/v1/me/sessions/${mine!.id}`, {
          method: 'DELETE',
          headers: session.headers(),
        })
      ).status,
    ).toBe(204);
    const jar = new CookieJar();
    jar.set('aa_session', session.jar.get('aa_session')!);

    const opened = await send(jar, `${p.portal.url}/activity`, { headers: BROWSER });
    const picker = await send(jar, `${p.portal.url}${opened.headers.get('location')}`, {
      headers: BROWSER,
    });
    const again = await send(jar, `${p.portal.url}/?return_to=%2Factivity`, { headers: BROWSER });

    expect([opened.status, opened.headers.get('location')]).toEqual([
      303,
      '/?return_to=%2Factivity',
    ]);
    const text = await picker.text();
    expect(picker.status).toBe(200);
    expect(text).toContain('Your session has ended.');
    expect(text).toContain('name="return_to" value="/activity"');
    expect(jar.get('aa_session')).toBeUndefined();
    expect(await again.text()).not.toContain('Your session has ended.');
  });

  test('When a route fails unexpectedly, then a browser gets a 500 page that shows nothing of the error, and an API client the Error JSON', async () => {
    // The portal's own last handlers behind a route that throws: no route of the portal fails on purpose.
    const app = express();
    app.get('/boom', () => {
      throw new Error('secret detail at /internal/db');
    });
    app.use(
      ...browserErrorPages(
        createLogger({ name: 'error-pages-test', level: 'silent' }),
        async () => undefined,
      ),
    );
    app.use(
      (
        _err: unknown,
        _req: express.Request,
        res: express.Response,
        _next: express.NextFunction,
      ) => {
        res.status(500).json({ error: 500, message: 'Internal Server Error' });
      },
    );
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/boom`;

    try {
      const page = await pageOf(await fetch(url, { headers: BROWSER }));
      const json = await fetch(url);

      expect(page).toMatchObject({
        status: 500,
        title: 'Something went wrong',
        back: ['/', 'Back to sign-in'],
      });
      expect(page.text).not.toContain('secret detail');
      expect([json.status, await json.json()]).toEqual([
        500,
        { error: 500, message: 'Internal Server Error' },
      ]);
    } finally {
      server.close();
    }
  });
});
