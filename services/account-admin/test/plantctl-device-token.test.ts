/**
 * What plantctl does: a person's device grant at the realm (RFC 8628), then `/api/v1` with the
 * DPoP-bound token it got (RFC 9449: `Authorization: DPoP` and a proof for the portal's URL),
 * a change guarded by `If-Match`. The same token as a bearer token, or with a proof of another
 * key, or a replayed proof, is refused.
 */
import { beforeAll, describe, expect, test } from '@jest/globals';
import { dpopKey, type DpopKey } from '@plant/test-kit';
import { ACCOUNT_ADMIN_AUDIENCE } from './helpers/platform.js';
import { CookieJar, follow, send, submitSignInForm } from './helpers/browser-client.js';
import { useSignedInPortal } from './helpers/portal-api.js';

const p = useSignedInPortal();
const key = dpopKey();
let token: string;

/** The device grant as plantctl and the person's browser run it; the token endpoint's answer. */
async function deviceGrant(cliKey: DpopKey): Promise<Record<string, unknown>> {
  const realm = `${p.ts.authUrl}/realms/${p.acme.tenant}`;
  const started = (await (
    await fetch(`${realm}/protocol/openid-connect/auth/device`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: 'plantctl',
        scope: 'openid offline_access',
        resource: ACCOUNT_ADMIN_AUDIENCE,
      }).toString(),
    })
  ).json()) as { device_code: string; user_code: string; verification_uri: string };

  const jar = new CookieJar();
  const form = await send(jar, started.verification_uri);
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const post = (fields: Record<string, string>) =>
    send(jar, started.verification_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf, user_code: started.user_code, ...fields }).toString(),
    });
  const confirm = await post({});
  const confirmXsrf = /name="xsrf" value="([^"]+)"/.exec(await confirm.text())![1]!;
  const approved = await send(jar, started.verification_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      xsrf: confirmXsrf,
      user_code: started.user_code,
      confirm: 'yes',
    }).toString(),
  });
  const { res: signIn, url } = await follow(
    jar,
    new URL(approved.headers.get('location')!, started.verification_uri).href,
  );
  const next = await submitSignInForm(jar, url, await signIn.text(), p.acme.admin);
  const { res: done } = await follow(jar, next);
  expect(await done.text()).toContain('Device approved');

  const tokenUrl = `${realm}/protocol/openid-connect/token`;
  const res = await fetch(tokenUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      dpop: cliKey.proof({ htm: 'POST', htu: tokenUrl }),
    },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: started.device_code,
      client_id: 'plantctl',
    }).toString(),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

function api(
  method: string,
  path: string,
  options: { proof?: string; scheme?: string; ifMatch?: string; body?: unknown } = {},
) {
  const htu = `${p.portal.url}/api/v1${path}`;
  return fetch(htu, {
    method,
    headers: {
      authorization: `${options.scheme ?? 'DPoP'} ${token}`,
      dpop: options.proof ?? key.proof({ htm: method, htu, token }),
      ...(options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch }),
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
}

beforeAll(async () => {
  const tokens = await deviceGrant(key);
  expect(tokens.token_type).toBe('DPoP');
  token = tokens.access_token as string;
}, 60_000);

describe('plantctl at /api/v1', () => {
  test('When plantctl calls with its DPoP-bound token and a proof, then it reads and changes service accounts, guarded by If-Match', async () => {
    const created = await p.createAccount('plantctl');
    const path = `/service-accounts/${created.client_id}`;

    const me = await api('GET', '/me');
    const read = await api('GET', path);
    const etag = read.headers.get('etag')!;
    const changed = await api('PATCH', path, { ifMatch: etag, body: { role: 'Edit' } });
    const again = await api('PATCH', path, { ifMatch: etag, body: { role: 'View' } });

    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ principal_type: 'user', role: 'Account Admin' });
    expect(read.status).toBe(200);
    expect(changed.status).toBe(200);
    expect(again.status).toBe(412);
  });

  test('When the token is sent as a bearer token, with another key’s proof, or with a replayed proof, then it is refused', async () => {
    const htu = `${p.portal.url}/api/v1/me`;
    const proof = key.proof({ htm: 'GET', htu, token });
    const first = await api('GET', '/me', { proof });

    const asBearer = await api('GET', '/me', { scheme: 'Bearer' });
    const otherKey = await api('GET', '/me', {
      proof: dpopKey().proof({ htm: 'GET', htu, token }),
    });
    const replayed = await api('GET', '/me', { proof });

    expect(first.status).toBe(200);
    expect([asBearer.status, otherKey.status, replayed.status]).toEqual([401, 401, 401]);
  });
});
