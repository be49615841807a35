import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CookieJar, send, signIn } from './helpers/browser-client.js';
import {
  createTenant,
  startPortal,
  startTokenService,
  type Platform,
  type PortalHandle,
  type TestTenant,
} from './helpers/platform.js';

/** A TCP relay standing for the in-cluster address of the token service (e.g. http://token-service:8082). */
async function startRelay(
  targetPort: number,
): Promise<{ server: Server; url: string; requests: () => string[] }> {
  const requestLines: string[] = [];
  const server = createServer((socket) => {
    const upstream = connect(targetPort, '127.0.0.1');
    socket.on('data', (chunk: Buffer) => {
      for (const match of chunk.toString('latin1').matchAll(/^(GET|POST) (\S+) HTTP\/1\.1\r$/gm))
        requestLines.push(`${match[1]} ${match[2]!.split('?')[0]}`);
    });
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}`, requests: () => [...requestLines] };
}

let ts: Platform;
let relay: Awaited<ReturnType<typeof startRelay>>;
let portal: PortalHandle;
let acme: TestTenant;

beforeAll(async () => {
  ts = await startTokenService();
  relay = await startRelay(Number(new URL(ts.authUrl).port));
  portal = await startPortal(ts, { env: { AUTH_INTERNAL_URL: relay.url } });
  acme = await createTenant(ts);
}, 60_000);

afterAll(async () => {
  await portal?.stop();
  relay?.server.close();
  await ts?.close();
});

describe('sign-in through an internal token-service address', () => {
  test('When AUTH_INTERNAL_URL is set, then discovery and the code exchange use it while the browser is sent to the public AUTH_URL', async () => {
    const jar = new CookieJar();

    const start = await send(jar, `${portal.url}/login?tenant=${acme.tenant}`);

    expect(start.status).toBe(303);
    expect(
      start.headers
        .get('location')!
        .startsWith(`${ts.authUrl}/realms/${acme.tenant}/protocol/openid-connect/auth?`),
    ).toBe(true);
    const session = await signIn(portal.url, acme.tenant, acme.admin);
    const me = await fetch(`${portal.url}/api/v1/me`, { headers: session.headers() });
    expect(await me.json()).toMatchObject({
      tenant: acme.tenant,
      email: acme.admin.email,
      role: 'Account Admin',
    });
    const realm = `/realms/${acme.tenant}`;
    expect(relay.requests()).toEqual(
      expect.arrayContaining([
        `GET ${realm}/.well-known/openid-configuration`,
        `POST ${realm}/protocol/openid-connect/token`,
      ]),
    );
    // The browser's legs (authorize, sign-in form) never went through the internal address.
    expect(
      relay
        .requests()
        .filter((line) => line.includes('/interaction/') || line.endsWith('/openid-connect/auth')),
    ).toEqual([]);
  });
});
