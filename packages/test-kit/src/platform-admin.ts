/**
 * What an operator and the portal do to a running platform, for arranging tests and
 * benchmarks: tenants and users through the operator CLI, service accounts through the token
 * service's internal API, tokens through the client credentials grant. Each throws unless the
 * platform answers as it should, so an arrange step cannot silently go wrong.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DpopKey } from './dpop-client.js';
import { REPO_ROOT, uniqueName } from './env.js';
import { USER_PASSWORD } from './platform-env.js';

const run = promisify(execFile);

export interface ServiceAccount {
  clientId: string;
  secret: string;
  name: string;
}

export interface ServiceAccountChange {
  role?: 'View' | 'Edit';
  grants?: Array<{ tag: string; permission: 'edit' }>;
  dpop_bound_access_tokens?: boolean;
  receive_signals?: boolean;
}

export interface PlatformAdmin {
  /** The token service's operator CLI; resolves with the JSON line it prints. */
  cli(...args: string[]): Promise<Record<string, unknown>>;
  /**
   * A new tenant (default name: unique, starting with `prefix`) with its first Account Admin,
   * `admin@<tenant>.test`, and the admin-factor policy off (as the demo tenant).
   */
  createTenant(prefix?: string, name?: string): Promise<string>;
  /** A user of the tenant (password USER_PASSWORD); resolves with the email. */
  createUser(
    tenant: string,
    role: 'View' | 'Edit' | 'Account Admin',
    email?: string,
  ): Promise<string>;
  /** A service account (role View unless `role` says otherwise), as the portal creates it. */
  createServiceAccount(
    tenant: string,
    options?: { name?: string; role?: 'View' | 'Edit' },
  ): Promise<ServiceAccount>;
  updateServiceAccount(
    tenant: string,
    clientId: string,
    change: ServiceAccountChange,
  ): Promise<void>;
  /** Resolves with the new secret. */
  resetSecret(tenant: string, clientId: string): Promise<string>;
  deleteServiceAccount(tenant: string, clientId: string): Promise<void>;
  /** A client credentials access token (client_secret_post), with any extra form fields (`resource`); with `dpop`, bound to that key by a proof. */
  grantToken(
    tenant: string,
    account: { clientId: string; secret: string },
    extra?: Record<string, string>,
    options?: { dpop?: DpopKey },
  ): Promise<string>;
}

export interface PlatformAdminTarget {
  /** Where the token service listens. */
  authUrl: string;
  /** Its configured public base URL (AUTH_URL), which a DPoP proof's `htu` must name; `authUrl` when they are the same. */
  publicAuthUrl?: string;
  internalUrl: string;
  /** account-admin's credential: service-account management is its alone. */
  internalApiToken: string;
  cliEnv: Record<string, string>;
}

async function expectStatus(res: Response, status: number, what: string): Promise<unknown> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${text.slice(0, 300)}`);
  return text === '' ? undefined : JSON.parse(text);
}

export function platformAdmin({
  authUrl,
  publicAuthUrl = authUrl,
  internalUrl,
  internalApiToken,
  cliEnv,
}: PlatformAdminTarget): PlatformAdmin {
  const headers = {
    authorization: `Bearer ${internalApiToken}`,
    'content-type': 'application/json',
  };
  const accounts = (tenant: string) =>
    `${internalUrl}/internal/v1/realms/${tenant}/service-accounts`;
  const internal = (method: string, url: string, body?: unknown) =>
    fetch(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

  const admin: PlatformAdmin = {
    async cli(...args) {
      const { stdout } = await run(
        process.execPath,
        [join(REPO_ROOT, 'services/token-service/dist/cli.js'), ...args],
        { env: cliEnv },
      );
      return JSON.parse(stdout.trim()) as Record<string, unknown>;
    },
    async createTenant(prefix = 't', name = uniqueName(prefix)) {
      await admin.cli(
        'tenant',
        'create',
        name,
        '--admin-email',
        `admin@${name}.test`,
        '--admin-password',
        USER_PASSWORD,
        // As the demo: tests of other features sign admins in with a password alone.
        '--admin-factor',
        'optional',
      );
      return name;
    },
    async createUser(tenant, role, email = `${uniqueName('u')}@${tenant}.test`) {
      await admin.cli(
        'user',
        'create',
        tenant,
        '--email',
        email,
        '--password',
        USER_PASSWORD,
        '--role',
        role,
      );
      return email;
    },
    async createServiceAccount(tenant, { name = uniqueName('sa'), role = 'View' } = {}) {
      const created = (await expectStatus(
        await internal('POST', accounts(tenant), { name, actor: 'test' }),
        201,
        'create service account',
      )) as { client_id: string; secret: string };
      if (role !== 'View') await admin.updateServiceAccount(tenant, created.client_id, { role });
      return { clientId: created.client_id, secret: created.secret, name };
    },
    async updateServiceAccount(tenant, clientId, change) {
      await expectStatus(
        await internal('PATCH', `${accounts(tenant)}/${clientId}`, { ...change, actor: 'test' }),
        200,
        'update service account',
      );
    },
    async resetSecret(tenant, clientId) {
      const reset = await expectStatus(
        await internal('POST', `${accounts(tenant)}/${clientId}/reset-secret`, { actor: 'test' }),
        200,
        'reset secret',
      );
      return (reset as { secret: string }).secret;
    },
    async deleteServiceAccount(tenant, clientId) {
      await expectStatus(
        await internal('DELETE', `${accounts(tenant)}/${clientId}`),
        204,
        'delete service account',
      );
    },
    async grantToken(tenant, { clientId, secret }, extra = {}, { dpop } = {}) {
      const path = `/realms/${tenant}/protocol/openid-connect/token`;
      const res = await fetch(`${authUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(dpop === undefined
            ? {}
            : { dpop: dpop.proof({ htm: 'POST', htu: `${publicAuthUrl}${path}` }) }),
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: secret,
          ...extra,
        }).toString(),
      });
      return ((await expectStatus(res, 200, 'token')) as { access_token: string }).access_token;
    },
  };
  return admin;
}
