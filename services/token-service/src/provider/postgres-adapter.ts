import type { Knex } from '@plant/shared';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import {
  consumeOidcPayload,
  destroyOidcPayload,
  findOidcPayload,
  findOidcPayloadByUid,
  findOidcPayloadByUserCode,
  revokeOidcPayloadsByGrant,
  upsertOidcPayload,
} from '../data-access/oidc-payload-repository.js';
import { isStorableText } from '../data-access/storable-text.js';
import type { ClientDirectory } from './client-directory.js';
import { serviceAccountClientMetadata } from './service-account-client.js';

/**
 * oidc-provider's storage, in Postgres (never the in-memory default: replicas share
 * sessions and codes, and a restart loses nothing). Clients are the realm's service
 * accounts, read through the ClientDirectory cache; the portal client is static.
 */
class PostgresAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly realm: string,
    private readonly db: Knex,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    await upsertOidcPayload(this.db, this.realm, this.model, id, payload as Record<string, unknown>, expiresIn);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(id)) return undefined;
    return (await findOidcPayload(this.db, this.realm, this.model, id)) as AdapterPayload | undefined;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(uid)) return undefined;
    return (await findOidcPayloadByUid(this.db, this.realm, this.model, uid)) as AdapterPayload | undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(userCode)) return undefined;
    return (await findOidcPayloadByUserCode(this.db, this.realm, this.model, userCode)) as AdapterPayload | undefined;
  }

  async consume(id: string): Promise<void> {
    await consumeOidcPayload(this.db, this.realm, this.model, id);
  }

  async destroy(id: string): Promise<void> {
    await destroyOidcPayload(this.db, this.realm, this.model, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await revokeOidcPayloadsByGrant(this.db, this.realm, grantId);
  }
}

class ServiceAccountClientAdapter implements Adapter {
  constructor(
    private readonly realm: string,
    private readonly directory: ClientDirectory,
  ) {}

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(id)) return undefined;
    const row = await this.directory.find(this.realm, id);
    return row === undefined ? undefined : (serviceAccountClientMetadata(row) as AdapterPayload);
  }

  // Clients are managed through the internal API only.
  async upsert(): Promise<void> {}
  async findByUid(): Promise<undefined> {
    return undefined;
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  async consume(): Promise<void> {}
  async destroy(): Promise<void> {}
  async revokeByGrantId(): Promise<void> {}
}

export function postgresAdapterFactory(realm: string, db: Knex, directory: ClientDirectory) {
  return (model: string): Adapter => (model === 'Client' ? new ServiceAccountClientAdapter(realm, directory) : new PostgresAdapter(model, realm, db));
}
