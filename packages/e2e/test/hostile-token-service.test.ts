/**
 * Hostile input against the token service process: the token endpoint's form body, headers,
 * methods and realm paths (HOSTILE_RUNS cases, 2,000 by default). The failure throttles
 * are raised for this file only, so wrong secrets reach the parser and the comparison
 * instead of stopping at 429 after ten tries (hostile-auth-tokens tests the throttle itself).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import {
  ACCOUNT_ADMIN_AUDIENCE,
  assertHostile,
  CONTENT_TYPES,
  headerSafe,
  hostileAnswerProblem,
  hostileString,
  HOSTILE_RUNS,
  HOSTILE_TIMEOUT_MS,
  httpRequest,
  NUMBER_LITERALS,
  pathSafe,
  PLANT_STORE_AUDIENCE,
  PROTO_KEYS,
  startPlatformWithEditor,
  TEST_SECRETS,
  type Platform,
  type ServiceAccount,
} from '../src/index.js';

let p: Platform;
let tenant: string;
let account: ServiceAccount;

beforeAll(async () => {
  ({ p, tenant, account } = await startPlatformWithEditor('ht', {
    plantStores: 0,
    serviceEnv: {
      'token-service': {
        CLIENT_AUTH_FAILURES_PER_CLIENT_IP: '100000',
        CLIENT_AUTH_FAILURES_PER_IP: '100000',
        CLIENT_AUTH_FAILURES_PER_CLIENT: '1000000',
      },
    },
  }));
}, 60_000);

afterAll(() => p?.close());

type Field = readonly [string, string, 'encoded' | 'raw'];

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** The form as a hostile case asks: raw or percent-encoded pairs, in its charset, or cut short. */
function formBody(c: { fields: readonly Field[]; encoding: string; cut: number }): Buffer {
  const text = c.fields
    .map(([k, v, mode]) =>
      mode === 'raw'
        ? `${k}=${v}`
        : `${encodeURIComponent(k.replace(/[\ud800-\udfff]/g, '\ufffd'))}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '\ufffd'))}`,
    )
    .join('&');
  return c.encoding === 'truncated'
    ? Buffer.from(text.slice(0, text.length === 0 ? 0 : c.cut % text.length), 'utf8')
    : Buffer.from(text, c.encoding as BufferEncoding);
}

/** A granted token: Bearer, only the scopes a service account may hold, never cached. */
function grantProblem(answer: Awaited<ReturnType<typeof httpRequest>>): string | undefined {
  const grant = answer.body as { access_token?: unknown; token_type?: unknown; scope?: unknown };
  if (typeof grant.access_token !== 'string' || grant.token_type !== 'Bearer')
    return `a 200 without a Bearer token: ${answer.text.slice(0, 200)}`;
  const scopes = String(grant.scope ?? '')
    .split(' ')
    .filter(Boolean);
  if (scopes.some((s) => !['plants:read', 'plants:write'].includes(s)))
    return `a token with scope ${String(grant.scope)}`;
  if (answer.headers['cache-control'] !== 'no-store')
    return 'a token answer without Cache-Control: no-store';
  return undefined;
}

async function accountsWithoutUsage(): Promise<unknown[]> {
  const res = await p.internal('GET', `/internal/v1/realms/${tenant}/service-accounts`);
  expect(res.status).toBe(200);
  return (res.body as Array<Record<string, unknown>>).map(
    ({ last_used_at: _ignored, ...rest }) => rest,
  );
}

describe('Token endpoint under hostile input', () => {
  test(
    'When the token endpoint gets thousands of hostile form bodies, headers, methods and realm paths, then no answer is 5xx or leaks internals, every error is RFC 6749 or Error, a token never carries more than the account may have, and no account changes',
    async () => {
      const before = await accountsWithoutUsage();
      const value = fc.oneof(
        {
          weight: 4,
          arbitrary: fc.constantFrom(
            'client_credentials',
            'authorization_code',
            'password',
            'refresh_token',
            'urn:ietf:params:oauth:grant-type:jwt-bearer',
            account.clientId,
            account.secret,
            `${account.secret}x`,
            account.secret.slice(0, -1),
            'pss_',
            'plants:read',
            'plants:write',
            'openid',
            'plants:read plants:write admin',
            'openid offline_access',
            PLANT_STORE_AUDIENCE,
            ACCOUNT_ADMIN_AUDIENCE,
            'http://evil.example',
            'portal',
            '',
          ),
        },
        { weight: 1, arbitrary: fc.constantFrom(...NUMBER_LITERALS) },
        { weight: 3, arbitrary: hostileString },
      );
      const key = fc.oneof(
        {
          weight: 6,
          arbitrary: fc.constantFrom(
            'grant_type',
            'client_id',
            'client_secret',
            'scope',
            'resource',
          ),
        },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            'audience',
            'client_assertion',
            'client_assertion_type',
            'code',
            'redirect_uri',
            'code_verifier',
            'refresh_token',
            'username',
            'password',
            'grant_type[]',
            'client_id[0]',
            ...PROTO_KEYS,
          ),
        },
        { weight: 1, arbitrary: hostileString },
      );
      const hostileCase = fc.record({
        method: fc.oneof(
          { weight: 12, arbitrary: fc.constant('POST') },
          { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
        ),
        realm: fc.oneof(
          { weight: 10, arbitrary: fc.constant(tenant) },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              'no-such-realm-e2e',
              tenant.toUpperCase(),
              `${tenant}%00`,
              '..',
              '%2e%2e',
              `${tenant}/..`,
              'a'.repeat(64),
              '-x-',
              '',
            ),
          },
          {
            weight: 1,
            arbitrary: hostileString.map((s) =>
              encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd')),
            ),
          },
        ),
        fields: fc.oneof(
          fc.array<Field>(
            fc.tuple(key, value, fc.constantFrom<'encoded' | 'raw'>('encoded', 'encoded', 'raw')),
            { maxLength: 7 },
          ),
          // A valid grant with hostile additions: reaches scope and resource handling past client authentication.
          fc
            .array(
              fc.tuple(
                fc.constantFrom<string>('scope', 'resource', 'audience', 'foo'),
                value,
                fc.constant<'encoded' | 'raw'>('encoded'),
              ),
              { maxLength: 2 },
            )
            .map((extra): Field[] => [
              ['grant_type', 'client_credentials', 'encoded'],
              ['client_id', account.clientId, 'encoded'],
              ['client_secret', account.secret, 'encoded'],
              ...extra,
            ]),
        ),
        contentType: fc.oneof(
          { weight: 6, arbitrary: fc.constant('application/x-www-form-urlencoded') },
          {
            weight: 3,
            arbitrary: fc.constantFrom(
              ...CONTENT_TYPES,
              'application/x-www-form-urlencoded; charset=utf-16',
              'application/x-www-form-urlencoded; charset=iso-8859-1',
            ),
          },
        ),
        authorization: fc.oneof(
          { weight: 4, arbitrary: fc.constant(undefined) },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              `Basic ${b64(`${account.clientId}:${account.secret}`)}`,
              `Basic ${b64(`${account.clientId}:wrong`)}`,
              `Basic ${b64(account.clientId)}`,
              'Basic',
              'Basic ',
              'Basic ====',
              'Basic %%%',
              'Bearer x',
              `basic ${b64(`${account.clientId}:${account.secret}`)}`,
              `Basic ${b64(':')}`,
            ),
          },
          {
            weight: 2,
            arbitrary: fc
              .tuple(hostileString, hostileString)
              .map(
                ([u, s]) =>
                  `Basic ${b64(`${encodeURIComponent(u.replace(/[\ud800-\udfff]/g, ''))}:${s}`)}`,
              ),
          },
          { weight: 1, arbitrary: hostileString.map((s) => headerSafe(`Basic ${s}`)) },
        ),
        accept: fc.constantFrom(
          undefined,
          'text/html',
          '*/*',
          'application/json',
          headerSafe('\u202e'),
        ),
        encoding: fc.constantFrom('utf8', 'utf8', 'utf8', 'latin1', 'utf16le', 'truncated'),
        cut: fc.nat(),
      });

      const statuses = new Set<number>();
      const sent = await assertHostile(hostileCase, async (c) => {
        const body = formBody(c);
        const answer = await httpRequest(
          `${p.authUrl}/realms/${pathSafe(c.realm)}/protocol/openid-connect/token`,
          {
            method: c.method,
            headers: {
              'content-type': c.contentType,
              authorization: c.authorization,
              accept: c.accept,
            },
            body: c.method === 'GET' ? undefined : body,
          },
        );
        statuses.add(answer.status);
        const problem = hostileAnswerProblem(answer, 'oauth');
        if (problem !== undefined) return problem;
        if (![200, 204, 400, 401, 404, 405, 413, 415, 429, 431].includes(answer.status))
          return `unexpected status ${answer.status}`;
        return answer.status === 200 ? grantProblem(answer) : undefined;
      });

      expect(sent).toBeGreaterThanOrEqual(HOSTILE_RUNS);
      // Tokens were granted too, so the scope property was exercised, not vacuous.
      expect([...statuses]).toEqual(expect.arrayContaining([200, 400, 401, 404]));
      expect(p.tokenService.child.exitCode).toBeNull();
      expect((await httpRequest(`${p.tokenService.managementUrl}/healthz`)).status).toBe(200);
      expect(await accountsWithoutUsage()).toEqual(before);
      expect((await p.requestToken(tenant, account.clientId, account.secret)).status).toBe(200);
    },
    HOSTILE_TIMEOUT_MS,
  );
});

describe('Ids Postgres cannot store', () => {
  test('When a client_id, an authorization code or an internal API path id carries NUL, then the answer is 401/400/404 in its documented shape, never 500', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const internalAuth = { authorization: `Bearer ${TEST_SECRETS.ACCOUNT_ADMIN_INTERNAL_TOKEN}` };
    const token = `${p.authUrl}/realms/${tenant}/protocol/openid-connect/token`;
    const calls = [
      httpRequest(token, {
        method: 'POST',
        headers: form,
        body: 'grant_type=client_credentials&client_id=nul%00inside&client_secret=x',
      }),
      httpRequest(token, {
        method: 'POST',
        headers: form,
        body: `grant_type=authorization_code&client_id=portal&code=a%00b&redirect_uri=x&code_verifier=${'a'.repeat(43)}`,
      }),
      httpRequest(`${p.internalUrl}/internal/v1/realms/${tenant}/service-accounts/a%00b`, {
        headers: internalAuth,
      }),
      httpRequest(`${p.internalUrl}/internal/v1/realms/${tenant}/principals/a%00b`, {
        headers: internalAuth,
      }),
      httpRequest(`${p.internalUrl}/internal/v1/realms/${tenant}/users/a%00b`, {
        headers: internalAuth,
      }),
    ];

    const [clientCredentials, code, account, principal, user] = await Promise.all(calls);

    expect({ status: clientCredentials!.status, body: clientCredentials!.body }).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
    });
    expect({ status: code!.status, body: code!.body }).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'grant request is invalid' },
    });
    for (const answer of [account, principal, user])
      expect({ status: answer!.status, body: answer!.body }).toEqual({
        status: 404,
        body: { error: 404, message: 'Not found' },
      });
  });
});
