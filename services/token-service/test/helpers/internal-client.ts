import request from 'supertest';
import type { Harness } from './harness.js';
import { TEST_ENV } from './harness.js';

/** account-admin's credential: every internal route. */
export const AUTH = `Bearer ${TEST_ENV.ACCOUNT_ADMIN_TOKEN}`;

export interface CreatedAccount {
  name: string;
  client_id: string;
  role: string;
  grants: Array<{ tag: string; permission: string }>;
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
  disabled: boolean;
  disabled_at: string | null;
  secret: string;
  revision: number;
}

/** The internal API as account-admin calls it. */
export function internal(h: Harness) {
  const agent = request(h.internalUrl);
  return {
    raw: agent,
    async createServiceAccount(
      tenant: string,
      name = `robot-${Math.random().toString(36).slice(2, 10)}`,
    ): Promise<CreatedAccount> {
      const res = await agent
        .post(`/internal/v1/realms/${tenant}/service-accounts`)
        .set('authorization', AUTH)
        .send({ name, actor: 'admin@example.test' });
      if (res.status !== 201)
        throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as CreatedAccount;
    },
    patch(tenant: string, clientId: string, body: unknown) {
      return agent
        .patch(`/internal/v1/realms/${tenant}/service-accounts/${clientId}`)
        .set('authorization', AUTH)
        .send(body as object);
    },
    reset(tenant: string, clientId: string) {
      return agent
        .post(`/internal/v1/realms/${tenant}/service-accounts/${clientId}/reset-secret`)
        .set('authorization', AUTH)
        .send({ actor: 'admin@example.test' });
    },
    remove(tenant: string, clientId: string) {
      return agent
        .delete(`/internal/v1/realms/${tenant}/service-accounts/${clientId}`)
        .set('authorization', AUTH);
    },
    credentials(tenant: string, clientId: string) {
      return agent
        .get(`/internal/v1/realms/${tenant}/service-accounts/${clientId}/credentials`)
        .set('authorization', AUTH);
    },
    addKey(tenant: string, clientId: string, key: { jwk: object } | { pem: string }) {
      return agent
        .post(`/internal/v1/realms/${tenant}/service-accounts/${clientId}/keys`)
        .set('authorization', AUTH)
        .send({ ...key, actor: 'admin@example.test' });
    },
    removeKey(tenant: string, clientId: string, keyId: string) {
      return agent
        .delete(
          `/internal/v1/realms/${tenant}/service-accounts/${clientId}/keys/${encodeURIComponent(keyId)}`,
        )
        .set('authorization', AUTH);
    },
    addTrust(
      tenant: string,
      clientId: string,
      trust: { issuer: string; subject: string; audience: string },
    ) {
      return agent
        .post(`/internal/v1/realms/${tenant}/service-accounts/${clientId}/trusts`)
        .set('authorization', AUTH)
        .send({ ...trust, actor: 'admin@example.test' });
    },
    removeTrust(tenant: string, clientId: string, trustId: string) {
      return agent
        .delete(`/internal/v1/realms/${tenant}/service-accounts/${clientId}/trusts/${trustId}`)
        .set('authorization', AUTH);
    },
    removeSecret(tenant: string, clientId: string) {
      return agent
        .delete(`/internal/v1/realms/${tenant}/service-accounts/${clientId}/secret`)
        .set('authorization', AUTH);
    },
    addSecret(tenant: string, clientId: string, body: { expires_at?: string } = {}) {
      return agent
        .post(`/internal/v1/realms/${tenant}/service-accounts/${clientId}/secrets`)
        .set('authorization', AUTH)
        .send({ ...body, actor: 'admin@example.test' });
    },
    removeSecretById(tenant: string, clientId: string, secretId: string) {
      return agent
        .delete(
          `/internal/v1/realms/${tenant}/service-accounts/${clientId}/secrets/${encodeURIComponent(secretId)}`,
        )
        .set('authorization', AUTH);
    },
    setDisabled(tenant: string, clientId: string, disabled: boolean) {
      return agent
        .post(
          `/internal/v1/realms/${tenant}/service-accounts/${clientId}/${disabled ? 'disable' : 'enable'}`,
        )
        .set('authorization', AUTH)
        .send({ actor: 'admin@example.test' });
    },
  };
}
