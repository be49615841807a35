import type { Knex } from '@plant/shared';
import type Provider from 'oidc-provider';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { findRealm } from '../data-access/realm-repository.js';
import { findActiveSigningKey } from '../data-access/signing-key-repository.js';
import type { KeyEncryption } from '../domain/key-encryption.js';
import { decryptSigningKey } from '../domain/signing-keys.js';
import { createRealmProvider, type RealmProviderDeps } from './realm-provider.js';

const RECHECK_MS = 30_000;
/** Realms kept built at once; the least recently used is dropped (rebuilding costs one query and a key decryption). */
const MAX_REALMS = 1000;

interface Entry {
  provider: Provider;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  kid: string;
  checkedAt: number;
}

/**
 * One oidc-provider per realm, created on first use and cached, so a tenant created after
 * start works at once. A provider holds its realm's signing key; after a rotation (heard
 * on Redis, or found by the periodic re-check) the next request builds a new one.
 */
export class RealmProviders {
  readonly #entries = new Map<string, Entry>();
  readonly #building = new Map<string, Promise<Entry | undefined>>();

  constructor(
    private readonly db: Knex,
    private readonly encryption: KeyEncryption,
    private readonly deps: RealmProviderDeps,
  ) {}

  /** The realm's request handler, or undefined when the realm does not exist. */
  async handlerFor(tenant: string): Promise<Entry['handler'] | undefined> {
    const entry = this.#entries.get(tenant);
    if (entry) {
      // Map order is recency order.
      this.#entries.delete(tenant);
      this.#entries.set(tenant, entry);
      if (Date.now() - entry.checkedAt < RECHECK_MS) return entry.handler;
    }
    return (await this.#load(tenant, entry))?.handler;
  }

  /** The realm's handler when it is built and recently checked; never waits (see `handlerFor`). */
  builtHandler(tenant: string): Entry['handler'] | undefined {
    const entry = this.#entries.get(tenant);
    return entry !== undefined && Date.now() - entry.checkedAt < RECHECK_MS ? entry.handler : undefined;
  }

  async providerFor(tenant: string): Promise<Provider | undefined> {
    await this.handlerFor(tenant);
    return this.#entries.get(tenant)?.provider;
  }

  /** Drop the cached provider (key rotated): the next request rebuilds it. */
  invalidate(tenant: string): void {
    this.#entries.delete(tenant);
  }

  #load(tenant: string, previous: Entry | undefined): Promise<Entry | undefined> {
    let pending = this.#building.get(tenant);
    if (!pending) {
      pending = this.#build(tenant, previous).finally(() => this.#building.delete(tenant));
      this.#building.set(tenant, pending);
    }
    return pending;
  }

  async #build(tenant: string, previous: Entry | undefined): Promise<Entry | undefined> {
    const key = await findActiveSigningKey(this.db, tenant);
    if (!key) {
      if (!(await findRealm(this.db, tenant))) this.#entries.delete(tenant);
      return undefined;
    }
    if (previous && previous.kid === key.kid) {
      previous.checkedAt = Date.now();
      return previous;
    }
    const jwk = decryptSigningKey(this.encryption, key.kid, key.private_key_encrypted);
    const provider = createRealmProvider(tenant, jwk, this.deps);
    const entry: Entry = { provider, handler: provider.callback(), kid: key.kid, checkedAt: Date.now() };
    this.#entries.set(tenant, entry);
    if (this.#entries.size > MAX_REALMS) this.#entries.delete(this.#entries.keys().next().value!);
    return entry;
  }
}
