import { SizedLru } from '@plant/shared/util';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { IdentityContext } from '../platform/index.js';
import { decryptSigningKey, NodeSigningKey } from '../signing-keys/index.js';
import { issuerOf } from '../realms/index.js';
import { createRealmProvider, type RealmProviderDeps } from './realm-provider.js';

/** How often the cached keys are checked against Postgres (a rotation event may be missed). */
export const RECHECK_MS = 30_000;
/** Each re-check also reads the rotations of this long before the last one succeeded: a rotation's transaction may commit after it began. */
const RECHECK_OVERLAP_MS = 60_000;
/**
 * What one entry is charged against its cache's budget: a built provider after its first requests
 * (its configuration, koa app, model classes and what V8 keeps for them), and a realm's signing
 * key (the private and public `KeyObject`s). Measured, not guessed: docs/performance.md,
 * "At scale", says how, and what it found.
 */
export const PROVIDER_ENTRY_BYTES = 128 * 1024;
export const SIGNING_KEY_ENTRY_BYTES = 4 * 1024;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The realm a token request is for, and its signing key: set on the request by the token route's handler. */
export interface RealmRequestBinding {
  tenant: string;
  issuer: string;
  signingKey: NodeSigningKey;
}

/**
 * The one oidc-provider serving every realm's token endpoint (grants/grant-engine.ts, built on
 * this wing's configuration and handed in by the composition root).
 */
export interface GrantEngine {
  /** The oidc-provider itself (tests listen to its events). */
  provider: Provider;
  /** Serves a request of the token endpoint for `binding`'s realm (the URL already reduced to the path after the realm). */
  serve(binding: RealmRequestBinding, req: IncomingMessage, res: ServerResponse): void;
}

interface RealmKey {
  kid: string;
  signingKey: NodeSigningKey;
  /** The realm's token endpoint on the grant engine, made once per key. */
  grant: Handler;
}

interface Entry {
  provider: Provider;
  handler: Handler;
  kid: string;
}

export interface RealmCacheBudgets {
  /** Bytes the built providers may take (REALM_PROVIDER_CACHE_MB). */
  providerBytes: number;
  /** Bytes the realms' decrypted signing keys may take (REALM_KEY_CACHE_MB). */
  keyBytes: number;
}

/** What `/metrics` shows of the two caches. */
export interface RealmCacheStats {
  providers: { entries: number; bytes: number; budgetBytes: number; evictions: number };
  keys: { entries: number; bytes: number; budgetBytes: number; evictions: number };
  /** Providers built since start (a realm's first request, after an eviction, after a rotation). */
  builds: number;
}

/**
 * The realms' endpoints. The token endpoint of every realm is served by one grant engine
 * (grant-engine.ts) that signs with the realm's key; the other endpoints (discovery, sign-in,
 * userinfo, logout, keys) by one oidc-provider per realm, built on first use, so a tenant created
 * after start works at once. Two caches, each least-recently-used and bounded by memory rather
 * than by a count:
 *
 * - the realms' signing keys, decrypted (a few KB each): a grant needs nothing else of its realm,
 *   so grants spread over any number of realms cost a key each, no build and no query;
 * - the realms' own providers (about a hundred times larger): what fits in their budget; one
 *   dropped is built again, from the cached key, at its realm's next browser request.
 *
 * A rotation heard on Redis drops both entries; the periodic re-check (one query per
 * `RECHECK_MS` for every realm: the keys activated since the last one, in the background)
 * replaces a cached key it finds changed, so the next request uses the new key.
 */
export class RealmProviders {
  readonly #keys: SizedLru<string, RealmKey>;
  readonly #providers: SizedLru<string, Entry>;
  readonly #loading = new Map<string, Promise<RealmKey | undefined>>();
  readonly #engine: GrantEngine;
  #builds = 0;
  /** When the last re-check started, and when the last one that succeeded did. */
  #recheckStartedAt = Date.now();
  #recheckedAt = Date.now();

  constructor(
    private readonly identity: Pick<IdentityContext, 'signingKeys' | 'realms' | 'encryption'>,
    private readonly deps: RealmProviderDeps,
    budgets: RealmCacheBudgets,
    engine: GrantEngine,
  ) {
    this.#keys = new SizedLru(budgets.keyBytes, () => SIGNING_KEY_ENTRY_BYTES);
    this.#providers = new SizedLru(budgets.providerBytes, () => PROVIDER_ENTRY_BYTES);
    this.#engine = engine;
  }

  /** The one oidc-provider serving every realm's token endpoint. */
  get grantEngine(): Provider {
    return this.#engine.provider;
  }

  /** The realm's token endpoint when its key is cached; never waits (see `grantHandlerFor`). */
  grantHandler(tenant: string): Handler | undefined {
    const key = this.#keys.get(tenant);
    if (key === undefined) return undefined;
    this.#recheckWhenDue();
    return key.grant;
  }

  /** The realm's token endpoint, or undefined when the realm does not exist. Waits only when the realm's key is not cached. */
  async grantHandlerFor(tenant: string): Promise<Handler | undefined> {
    return this.grantHandler(tenant) ?? (await this.#load(tenant))?.grant;
  }

  stats(): RealmCacheStats {
    const of = (lru: SizedLru<string, unknown>) => ({
      entries: lru.size,
      bytes: lru.bytes,
      budgetBytes: lru.budgetBytes,
      evictions: lru.evictions,
    });
    return { providers: of(this.#providers), keys: of(this.#keys), builds: this.#builds };
  }

  /** The realm's request handler, or undefined when the realm does not exist. Waits only when the realm's key is not cached. */
  async handlerFor(tenant: string): Promise<Handler | undefined> {
    const built = this.builtHandler(tenant);
    if (built !== undefined) return built;
    const key = await this.#load(tenant);
    return key === undefined ? undefined : this.#serve(tenant, key);
  }

  /**
   * The realm's handler when its key is cached (building its provider now if it is not built);
   * never waits (see `handlerFor`).
   */
  builtHandler(tenant: string): Handler | undefined {
    const key = this.#keys.get(tenant);
    return key === undefined ? undefined : this.#serve(tenant, key);
  }

  async providerFor(tenant: string): Promise<Provider | undefined> {
    await this.handlerFor(tenant);
    return this.#providers.peek(tenant)?.provider;
  }

  /** Drop the realm's key and provider (key rotated): the next request loads the new key. */
  invalidate(tenant: string): void {
    this.#keys.delete(tenant);
    this.#providers.delete(tenant);
  }

  /**
   * Realms are served from their cached keys while the periodic re-check runs in the background:
   * a grant never waits on that query, nor fails when Postgres blips at that moment, and the
   * token route stays on the fast lane. Until the re-check lands, a replica that missed a
   * rotation event signs with the retired key, which stays published for a token lifetime plus
   * skew. One query a period whatever the number of realms (the keys activated since the last
   * re-check that succeeded, with an overlap); the next is due a full period later even when this
   * one fails, so an outage costs one warning per period, not a query per request.
   */
  #recheckWhenDue(): void {
    const now = Date.now();
    if (now - this.#recheckStartedAt < RECHECK_MS) return;
    this.#recheckStartedAt = now;
    const since = (now - this.#recheckedAt + RECHECK_OVERLAP_MS) / 1000;
    this.identity.signingKeys.activatedWithin(Math.ceil(since)).then(
      (rotated) => {
        this.#recheckedAt = now;
        for (const { realm, kid } of rotated) {
          const cached = this.#keys.peek(realm);
          if (cached !== undefined && cached.kid !== kid)
            void this.#load(realm, cached).catch(() => this.invalidate(realm));
        }
      },
      (err: Error) =>
        this.deps.logger.warn(
          { err: { message: err.message } },
          'realm key re-check failed; serving the cached signing keys',
        ),
    );
  }

  #serve(tenant: string, key: RealmKey): Handler {
    this.#recheckWhenDue();
    const entry = this.#providers.get(tenant);
    if (entry !== undefined && entry.kid === key.kid) return entry.handler;
    const provider = createRealmProvider(tenant, key.signingKey, this.deps);
    const built: Entry = { provider, handler: provider.callback(), kid: key.kid };
    this.#builds += 1;
    this.#providers.set(tenant, built);
    return built.handler;
  }

  /** The realm's active key from Postgres (one query per realm at a time); undefined when the realm has none. */
  #load(tenant: string, previous?: RealmKey): Promise<RealmKey | undefined> {
    let pending = this.#loading.get(tenant);
    if (!pending) {
      pending = this.#read(tenant, previous).finally(() => this.#loading.delete(tenant));
      this.#loading.set(tenant, pending);
    }
    return pending;
  }

  async #read(tenant: string, previous: RealmKey | undefined): Promise<RealmKey | undefined> {
    const row = await this.identity.signingKeys.findActive(tenant);
    if (!row) {
      if (!(await this.identity.realms.find(tenant))) this.invalidate(tenant);
      return undefined;
    }
    if (previous && previous.kid === row.kid) return previous;
    const signingKey = new NodeSigningKey(
      decryptSigningKey(this.identity.encryption, row.kid, row.private_key_encrypted),
    );
    const binding: RealmRequestBinding = {
      tenant,
      issuer: issuerOf(this.deps.config.AUTH_URL, tenant),
      signingKey,
    };
    const engine = this.#engine;
    const key: RealmKey = {
      kid: row.kid,
      signingKey,
      grant: (req, res) => engine.serve(binding, req, res),
    };
    this.#keys.set(tenant, key);
    return key;
  }
}
