import type { Knex, RevocationEntry } from '@plant/shared';
import { findRevocationEntry, revocationSnapshot } from '../data-access/principal-repository.js';
import { PrincipalNotFound } from './errors.js';

/** Deletions older than a token lifetime plus a minute of skew cannot have live tokens. */
export function deletionHorizonSeconds(accessTokenTtl: number): number {
  return accessTokenTtl + 60;
}

export async function getRevocationSnapshot(db: Knex, accessTokenTtl: number): Promise<{ entries: RevocationEntry[] }> {
  return { entries: await revocationSnapshot(db, deletionHorizonSeconds(accessTokenTtl)) };
}

export async function getRevocationEntry(db: Knex, tenant: string, sub: string): Promise<RevocationEntry> {
  const entry = await findRevocationEntry(db, tenant, sub);
  if (!entry) throw new PrincipalNotFound();
  return entry;
}
