/**
 * What the route-table fuzzer knows of each app: real values by parameter and field name (the
 * tenant, ids that exist, a sign-in form's uid and CSRF token) and the credentials of real
 * callers, kept valid between routes (a case may delete the account it names, sign the
 * session out or finish the sign-in), and what each mount is known to serve.
 */
import { readdirSync } from 'node:fs';
import { MAX_SERVICE_ACCOUNTS } from '@plant/shared/token-service-client';
import { dpopKey } from '@plant/test-kit';
import { ASSETS_DIR } from '../../../../services/account-admin/src/http/server.js';
import { clientAssertion, clientKeyPair } from '@plant/test-kit';
import {
  ACCOUNT_ADMIN_AUDIENCE,
  httpRequest,
  PLANT_STORE_AUDIENCE,
  type FuzzContext,
  type Platform,
  type ServiceAccount,
} from '../../src/index.js';

export interface FuzzContexts {
  /** The context of one app's caller: fresh credentials, and the ids it names existing. */
  forApp(app: string): Promise<FuzzContext>;
  /** What a mount of the app is known to serve (paths under it), and the query parameters those read. */
  mountPaths(app: string, mount: string): { subpaths: string[]; query: string[] };
}

/** The id of the fuzzer's key on its target account. */
const FUZZ_KID = 'fuzz-key';

/** What oidc-provider's endpoints read (authorization, end session, userinfo, token, revocation). */
const OAUTH_PARAMETERS = [
  'client_id',
  'response_type',
  'redirect_uri',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'prompt',
  'max_age',
  'login_hint',
  'id_token_hint',
  'post_logout_redirect_uri',
  'response_mode',
  'request',
  'request_uri',
  'claims',
  'ui_locales',
  'grant_type',
  'code',
  'client_secret',
  'client_assertion_type',
  'client_assertion',
  'token',
  'token_type_hint',
  'logout',
  'xsrf',
];

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
/** Tokens last ACCESS_TOKEN_TTL (300 s): renewed well before. */
const RENEW_AFTER_MS = 120_000;

function renewing<T>(get: () => Promise<T>): () => Promise<T> {
  let value: { at: number; value: T } | undefined;
  return async () => {
    if (value === undefined || Date.now() - value.at > RENEW_AFTER_MS)
      value = { at: Date.now(), value: await get() };
    return value.value;
  };
}

export async function fuzzContexts(p: Platform): Promise<FuzzContexts> {
  const tenant = await p.createTenant('er');
  const admin = `admin@${tenant}.test`;
  const editor = await p.createServiceAccount(tenant, { role: 'Edit' });
  // The sign-in form's account: failed sign-ins throttle it, never the admin, whose sessions the fuzzer renews.
  const formUser = await p.createUser(tenant, 'View');
  const users = (await p.internal('GET', `/internal/v1/realms/${tenant}/users`)).body as Array<{
    id: string;
    email: string;
  }>;
  // Who account-admin's person routes name (sign-out everywhere): never the admin the fuzzer acts as.
  const others = users.filter((u) => u.email !== admin).map((u) => u.id);
  const discovery = (
    await httpRequest(`${p.authUrl}/realms/${tenant}/.well-known/openid-configuration`)
  ).body as Record<string, unknown>;
  const realmBase = `${p.authUrl}/realms/${tenant}/`;
  const realmPaths = Object.values(discovery)
    .filter((v): v is string => typeof v === 'string' && v.startsWith(realmBase))
    .map((url) => url.slice(realmBase.length));
  const plantToken = renewing(() => p.grantToken(tenant, editor));
  const adminToken = renewing(() => p.userToken(tenant, admin));
  let session = await p.portalSession(tenant, admin);
  let target: ServiceAccount = await p.createServiceAccount(tenant);
  // The target's key and trusted workload, so the routes that name one reach past their lookup.
  const fuzzKey = clientKeyPair('ec');
  const trust = {
    issuer: 'https://ci.example',
    subject: 'repo:acme/app:ref:refs/heads/main',
    audience: `${p.authUrl}/realms/${tenant}`,
  };
  let trustId = '';

  /** The account the fuzzer names by id exists (a DELETE case may have removed it) with its key and trust; fuzz-created ones never fill the tenant. */
  async function liveTarget(): Promise<ServiceAccount> {
    if (
      (await p.internal('GET', `/internal/v1/realms/${tenant}/service-accounts/${target.clientId}`))
        .status !== 200
    ) {
      const accounts = (await p.internal('GET', `/internal/v1/realms/${tenant}/service-accounts`))
        .body as Array<{ client_id: string }>;
      if (accounts.length >= MAX_SERVICE_ACCOUNTS - 1) {
        for (const { client_id: id } of accounts.filter((a) => a.client_id !== editor.clientId))
          await p.deleteServiceAccount(tenant, id);
      }
      target = await p.createServiceAccount(tenant);
    }
    const base = `/internal/v1/realms/${tenant}/service-accounts/${target.clientId}`;
    const held = (await p.internal('GET', `${base}/credentials`)).body as {
      keys: Array<{ id: string }>;
      trusts: Array<{ id: string }>;
    };
    if (!held.keys.some((k) => k.id === FUZZ_KID))
      await p.internal('POST', `${base}/keys`, { jwk: { ...fuzzKey.publicJwk, kid: FUZZ_KID } });
    trustId =
      held.trusts[0]?.id ??
      ((await p.internal('POST', `${base}/trusts`, trust)).body as { id: string }).id;
    return target;
  }

  /** Real values of the credential routes' inputs (the target's key and trust as they are now). */
  const credentialKnown = () => ({
    key_id: [FUZZ_KID],
    trust_id: [trustId],
    jwk: [JSON.stringify(fuzzKey.publicJwk)],
    pem: [fuzzKey.publicPem],
    issuer: [trust.issuer],
    subject: [trust.subject],
    audience: [trust.audience],
  });
  // The editor holds the key too: the token endpoint's assertion reaches a real key once.
  await p.internal(
    'POST',
    `/internal/v1/realms/${tenant}/service-accounts/${editor.clientId}/keys`,
    { jwk: { ...fuzzKey.publicJwk, kid: FUZZ_KID } },
  );

  // A Shared Signals receiver and its poll stream (a DELETE case may have removed the stream).
  const receiver = await p.createServiceAccount(tenant);
  await p.updateServiceAccount(tenant, receiver.clientId, { receive_signals: true });
  const receiverToken = renewing(() =>
    p.grantToken(tenant, receiver, { scope: 'ssf.manage ssf.read' }),
  );
  let streamId = '';
  async function liveSignalStream(): Promise<{ token: string; streamId: string }> {
    const token = await receiverToken();
    const streams = `${p.authUrl}/realms/${tenant}/ssf/streams`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    if (
      streamId === '' ||
      (await httpRequest(`${streams}?stream_id=${streamId}`, { headers })).status !== 200
    ) {
      const created = await httpRequest(streams, {
        method: 'POST',
        headers,
        body: JSON.stringify({ delivery: { method: 'urn:ietf:rfc:8936' } }),
      });
      streamId = (created.body as { stream_id?: string }).stream_id ?? 'no-stream';
    }
    return { token, streamId };
  }

  /**
   * A signed-in portal session (a POST /logout case may have ended it). A fuzz case may have
   * turned the tenant's people policy on (`require_admin_factor: true` is a valid body): the
   * admin holds no second factor, so it is turned off again before signing in with a password.
   */
  async function liveSession() {
    if (
      (await httpRequest(`${p.portalUrl}/api/v1/me`, { headers: { cookie: session.cookie } }))
        .status !== 200
    ) {
      await p.internal('PUT', `/internal/v1/realms/${tenant}/factor-policy`, {
        require_admin_factor: false,
      });
      session = await p.portalSession(tenant, admin);
    }
    return session;
  }

  const shared = {
    tenant: [tenant],
    role: ['View', 'Edit', 'Account Admin'],
    grants: ['[]', '[{"tag":"herbs","permission":"edit"}]'],
    name: ['fuzz-account'],
    actor: [admin],
  };

  return {
    async forApp(app): Promise<FuzzContext> {
      if (app === 'plant-store') {
        return {
          known: {
            id: ['7', '9223372036854775807'],
            name: ['fern'],
            tag: ['herbs'],
            limit: ['1', '1000'],
            cursor: [base64url('v1:1')],
          },
          // The DPoP scheme too (a stale, foreign proof), so hostile input also goes through the proof parser.
          credentials: [
            {
              authorization: `DPoP ${await plantToken()}`,
              dpop: dpopKey().proof({ htm: 'GET', htu: `${PLANT_STORE_AUDIENCE}/plants`, iat: 1 }),
            },
            { authorization: `Bearer ${await plantToken()}` },
          ],
        };
      }
      if (app === 'token-service public') {
        const form = await p.openSignInForm(tenant);
        const signals = await liveSignalStream();
        const portal = {
          client_id: [editor.clientId, 'portal'],
          redirect_uri: [`${p.portalUrl}/auth/callback`],
          post_logout_redirect_uri: [`${p.portalUrl}/`],
        };
        return {
          known: {
            ...shared,
            ...portal,
            uid: [form.uid],
            csrf: [form.csrf],
            email: [formUser],
            password: ['not-the-password'],
            client_secret: [editor.secret],
            client_assertion_type: ['urn:ietf:params:oauth:client-assertion-type:jwt-bearer'],
            client_assertion: [
              clientAssertion({
                clientId: editor.clientId,
                audience: `${p.authUrl}/realms/${tenant}`,
                key: fuzzKey,
                kid: FUZZ_KID,
              }),
            ],
            grant_type: [
              'client_credentials',
              'client_credentials',
              'authorization_code',
              'password',
            ],
            scope: [
              'plants:read',
              'plants:write',
              'openid',
              'plants:read plants:write',
              'openid email profile',
            ],
            resource: [PLANT_STORE_AUDIENCE, ACCOUNT_ADMIN_AUDIENCE],
            response_type: ['code', 'token', 'none'],
            code_challenge: ['E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'],
            code_challenge_method: ['S256', 'plain'],
            code_verifier: ['a'.repeat(43)],
            prompt: ['login', 'none', 'consent'],
            id_token_hint: [await adminToken()],
            token: [await plantToken()],
            token_type_hint: ['access_token', 'refresh_token'],
            stream_id: [signals.streamId],
          },
          // The Plant Store's internal credential opens token introspection; Basic last, so the dictionary's merged headers carry it to the token endpoint.
          credentials: [
            { cookie: form.cookie },
            { authorization: `Bearer ${p.secrets.PLANT_STORE_INTERNAL_TOKEN}` },
            // A Shared Signals receiver's token, so the SSF routes are reached past authentication.
            { authorization: `Bearer ${signals.token}` },
            {
              authorization: `Basic ${Buffer.from(`${editor.clientId}:${editor.secret}`).toString('base64')}`,
            },
          ],
        };
      }
      if (app === 'token-service internal') {
        const account = await liveTarget();
        return {
          // alg: the realm's signing algorithm, switched back and forth by the cases that get through.
          known: {
            ...shared,
            ...credentialKnown(),
            client_id: [account.clientId],
            id: users.map((u) => u.id),
            sub: [account.clientId, ...users.map((u) => u.id)],
            alg: ['RS256', 'ES256'],
          },
          // The Plant Store's too (403 outside its scope); account-admin's last, so the dictionary's merged headers carry it.
          credentials: [
            { authorization: `Bearer ${p.secrets.PLANT_STORE_INTERNAL_TOKEN}` },
            { authorization: `Bearer ${p.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN}` },
          ],
        };
      }
      if (app === 'account-admin') {
        const [account, signedIn] = [await liveTarget(), await liveSession()];
        return {
          known: {
            ...shared,
            ...credentialKnown(),
            client_id: [account.clientId],
            limit: ['1', '100'],
            cursor: [base64url('before:1')],
            return_to: [
              '/activity',
              '/.//evil.example',
              '/%2e//evil.example',
              '/a/..//evil.example',
              '//evil.example',
              '/\\evil.example',
              'https://evil.example/',
            ],
            state: ['x'.repeat(43)],
            id: others,
            action: ['enrol-passkey', 'enrol-totp', 'recovery-codes'],
            iss: [`${p.authUrl}/realms/${tenant}`],
            error: ['access_denied'],
          },
          credentials: [
            { authorization: `Bearer ${await adminToken()}` },
            { cookie: signedIn.cookie, 'x-csrf-token': signedIn.csrf },
          ],
        };
      }
      return { known: shared, credentials: [] };
    },
    mountPaths(app, mount) {
      if (app === 'token-service public' && mount === '/realms/:tenant')
        return {
          subpaths: ['.well-known/openid-configuration', ...realmPaths],
          query: OAUTH_PARAMETERS,
        };
      if (app === 'account-admin' && mount === '/assets')
        return { subpaths: readdirSync(ASSETS_DIR), query: [] };
      if (app === 'account-admin' && mount === '/api/v1')
        return {
          subpaths: [
            'me',
            'service-accounts',
            'audit-events',
            'openapi.json',
            `service-accounts/${target.clientId}/reset-secret`,
          ],
          query: ['limit', 'cursor'],
        };
      return { subpaths: [], query: [] };
    },
  };
}
