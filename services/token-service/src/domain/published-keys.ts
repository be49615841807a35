import type { Knex } from '@plant/shared';
import { findPublishedSigningKeys } from '../data-access/signing-key-repository.js';
import { findRealm } from '../data-access/realm-repository.js';
import { TenantNotFound } from './errors.js';

/** Clock skew resource servers may allow on exp. */
const CLOCK_SKEW_SECONDS = 60;

/** The realm's JWKS: the active key first, then keys retired less than a token lifetime (+ skew) ago. */
export async function publishedJwks(db: Knex, tenant: string, accessTokenTtl: number): Promise<{ keys: Record<string, unknown>[] }> {
  const rows = await findPublishedSigningKeys(db, tenant, accessTokenTtl + CLOCK_SKEW_SECONDS);
  if (rows.length === 0 && !(await findRealm(db, tenant))) throw new TenantNotFound();
  return { keys: rows.map((row) => row.public_jwk) };
}
