import type Provider from 'oidc-provider';
import { isStorableText } from '../data-access/storable-text.js';
import { PORTAL_CLIENT_ID } from '../domain/realm-naming.js';
import type { ClientDirectory } from './client-directory.js';

type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/**
 * oidc-provider rebuilds a dynamic client from its adapter's metadata on every lookup: it
 * hashes the whole metadata (JSON + SHA-256) to find the built Client in a 100-entry LRU,
 * and re-validates it on a miss. The ClientDirectory hands back the same row object until the
 * account changes (reset, delete, role, grants, or its TTL), so keying the built Client on
 * that row costs nothing per grant, stays correct when the row is replaced, and keeps more
 * than 100 active service accounts from rebuilding clients on every grant.
 */
export function cacheClientsByRow(provider: Provider, realm: string, directory: ClientDirectory): void {
  const clients = provider.Client as unknown as { find(id: unknown): Promise<Client | undefined> };
  const find = clients.find.bind(clients);
  const byRow = new WeakMap<object, Client>();
  clients.find = async function findClient(id: unknown): Promise<Client | undefined> {
    if (typeof id !== 'string' || id.length === 0 || id === PORTAL_CLIENT_ID || !isStorableText(id)) return find(id);
    // A fresh cached answer is read without an await: this runs once per grant.
    const hit = directory.cached(realm, id);
    const row = hit !== undefined ? hit.row : await directory.find(realm, id);
    if (row === undefined) return undefined;
    const cached = byRow.get(row);
    if (cached !== undefined) return cached;
    const client = await find(id);
    if (client !== undefined) byRow.set(row, client);
    return client;
  };
}
