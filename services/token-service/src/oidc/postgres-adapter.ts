import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { IdentityContext } from '../platform/index.js';
import { restorePayload, scrubPayload } from './payload-scrubbing.js';
import { USER_CODE_REF } from './oidc-payload-repository.js';

type OidcPayloads = IdentityContext['oidcPayloads'];

/**
 * oidc-provider's storage, in Postgres (never the in-memory default: replicas share
 * sessions and codes, and a restart loses nothing). Ids, uids, user codes and grant ids go to
 * the repository as given and are stored only as digests; the payload is scrubbed of the
 * bearer values oidc-provider copies into it (payload-scrubbing.ts).
 */
class PostgresAdapter implements Adapter {
  constructor(
    private readonly model: string,
    /** The realm's name, read at each call: the grant engine's adapter serves the request's realm. */
    private readonly realmOf: () => string,
    private readonly payloads: OidcPayloads,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    await this.payloads.upsert(
      this.realmOf(),
      this.model,
      id,
      scrubPayload(this.model, id, payload as Record<string, unknown>),
      expiresIn,
    );
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const stored = await this.payloads.find(this.realmOf(), this.model, id);
    return stored && (restorePayload(id, stored) as AdapterPayload);
  }

  /** Sessions only. The session comes back without its id, which only its cookie holds; oidc-provider reads it (session binding) and never saves it. */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const stored = await this.payloads.findByUid(this.realmOf(), this.model, uid);
    return stored && (restorePayload(undefined, stored) as AdapterPayload);
  }

  /** Device codes only: it comes back under USER_CODE_REF (the table has no device code to give back). */
  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const stored = await this.payloads.findByUserCode(this.realmOf(), this.model, userCode);
    return stored && (restorePayload(`${USER_CODE_REF}${userCode}`, stored) as AdapterPayload);
  }

  async consume(id: string): Promise<void> {
    await this.payloads.consume(this.realmOf(), this.model, id);
  }

  async destroy(id: string): Promise<void> {
    await this.payloads.destroy(this.realmOf(), this.model, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.payloads.revokeByGrant(this.realmOf(), grantId);
  }
}

/**
 * Clients are the realm's service accounts, served by `Client.find` itself (realm-provider.ts)
 * and managed through the internal API only; the portal client is static. Nothing is stored
 * or looked up as a client here.
 */
class NoClientStorage implements Adapter {
  async find(): Promise<undefined> {
    return undefined;
  }
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

export function postgresAdapterFactory(realm: () => string, payloads: OidcPayloads) {
  return (model: string): Adapter =>
    model === 'Client' ? new NoClientStorage() : new PostgresAdapter(model, realm, payloads);
}
