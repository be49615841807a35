/**
 * A leaked secret reported as GitHub secret scanning reports it, every service a process and
 * two token-service replicas: the replica that did not take the report stops issuing tokens
 * for the secret, and the Plant Store refuses the tokens minted with it, without waiting for
 * anything but the revocation event.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, LeakReporter, leakedToken, platformPorts } from '@plant/test-kit';
import { httpRequest, startPlatform, type Platform } from '../src/index.js';

let p: Platform;
let reporter: LeakReporter;

beforeAll(async () => {
  reporter = new LeakReporter(mkdtempSync(join(tmpdir(), 'e2e-leak-keys-')));
  const ports = await platformPorts({ tokenServices: 2 });
  p = await startPlatform({
    ports: { 'token-service': ports['token-service'] },
    serviceEnv: { 'token-service': { SECRET_SCANNING_GITHUB_KEYS: reporter.documentPath } },
  });
}, 120_000);

afterAll(async () => {
  await p?.close();
});

function grantAt(url: string, tenant: string, clientId: string, secret: string) {
  return httpRequest(`${url}/realms/${tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
    }).toString(),
  });
}

describe('a leak report across replicas', () => {
  test('When a live secret is reported to one token-service replica, then the other stops issuing for it and the Plant Store refuses its tokens', async () => {
    const tenant = await p.createTenant('leak');
    const account = await p.createServiceAccount(tenant);
    const [first, second] = p.tokenServices;
    // Both replicas have the credential cached; a token is in use at the Plant Store.
    expect((await grantAt(first!.url, tenant, account.clientId, account.secret)).status).toBe(200);
    const minted = await grantAt(second!.url, tenant, account.clientId, account.secret);
    const token = (minted.body as { access_token: string }).access_token;
    expect((await p.listPlants(token)).status).toBe(200);
    const report = reporter.report([leakedToken(account.secret)]);

    const answer = await httpRequest(`${first!.url}/secret-scanning/github`, {
      method: 'POST',
      headers: report.headers,
      body: report.body,
    });
    const answeredAt = Date.now();

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      expect.objectContaining({ label: 'true_positive', token_type: leakedToken('').type }),
    ]);
    await eventually(
      async () =>
        (await grantAt(second!.url, tenant, account.clientId, account.secret)).status === 401,
      'the other replica refuses the leaked secret',
    );
    await eventually(
      async () => (await p.listPlants(token)).status === 401,
      'the Plant Store refuses the token minted with it',
    );
    // Reported, not asserted: no wall-clock bound in a test (docs/performance.md has the figure's method).
    process.stdout.write(`leak report to refusal everywhere: ${Date.now() - answeredAt} ms\n`);
  });
});
