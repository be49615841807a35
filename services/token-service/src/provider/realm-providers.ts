import type Provider from 'oidc-provider';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IdentityContext } from '../domain/identity-context.js';
import { decryptSigningKey } from '../domain/signing-keys.js';
import { createRealmProvider, type RealmProviderDeps } from './realm-provider.js';

/** How often a built realm's active signing key is checked against Postgres (a rotation event may be missed). */
export const RECHECK_MS = 30_000;
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
 * start works at once. A provider holds its realm's signing key: a rotation heard on Redis
 * drops it, so the next request builds a new one; one found by the periodic re-check is built
 * in the background while the old provider keeps serving.
 */
export class RealmProviders {
  readonly #entries = new Map<string, Entry>();
  readonly #building = new Map<string, Promise<Entry | undefined>>();

  constructor(
    private readonly keys: Pick<IdentityContext, 'signingKeys' | 'realms' | 'encryption'>,
    private readonly deps: RealmProviderDeps,
  ) {}

  /** The realm's request handler, or undefined when the realm does not exist. Waits only when the realm is not built (first use, or dropped by a rotation event). */
  async handlerFor(tenant: string): Promise<Entry['handler'] | undefined> {
    const entry = this.#entries.get(tenant);
    if (entry) return this.#serve(tenant, entry);
    return (await this.#load(tenant, undefined))?.handler;
  }

  /** The realm's handler when it is built; never waits (see `handlerFor`). */
  builtHandler(tenant: string): Entry['handler'] | undefined {
    const entry = this.#entries.get(tenant);
    return entry === undefined ? undefined : this.#serve(tenant, entry);
  }

  /**
   * A built realm is served while its periodic re-check runs in the background: a grant never
   * waits on that query, nor fails when Postgres blips at that moment, and the token route
   * stays on the fast lane (see `public-listener.ts`). Until the re-check lands, a replica that
   * missed a rotation event signs with the retired key, which stays published for a token
   * lifetime plus skew. The next re-check is due a full period later even when this one fails,
   * so an outage costs one warning per realm and period, not a query per request.
   */
  #serve(tenant: string, entry: Entry): Entry['handler'] {
    const now = Date.now();
    if (now - entry.checkedAt >= RECHECK_MS && !this.#building.has(tenant)) {
      entry.checkedAt = now;
      // Map order is recency order (refreshed once a period: enough for eviction).
      this.#entries.delete(tenant);
      this.#entries.set(tenant, entry);
      this.#load(tenant, entry).catch((err: Error) => this.deps.logger.warn({ tenant, err: { message: err.message } }, 'realm re-check failed; serving its current signing key'));
    }
    return entry.handler;
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
    const key = await this.keys.signingKeys.findActive(tenant);
    if (!key) {
      if (!(await this.keys.realms.find(tenant))) this.#entries.delete(tenant);
      return undefined;
    }
    if (previous && previous.kid === key.kid) return previous;
    const jwk = decryptSigningKey(this.keys.encryption, key.kid, key.private_key_encrypted);
    const provider = createRealmProvider(tenant, jwk, this.deps);
    const entry: Entry = { provider, handler: provider.callback(), kid: key.kid, checkedAt: Date.now() };
    this.#entries.set(tenant, entry);
    if (this.#entries.size > MAX_REALMS) this.#entries.delete(this.#entries.keys().next().value!);
    return entry;
  }
}
