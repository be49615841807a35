import type { Plant } from '@plant/shared/api';
import type { Principal } from '@plant/resource-auth';
import type { PlantRepository } from '../data-access/plant-repository.js';
import { assertMayListPlants } from './plant-authorization.js';
import { encodeCursor } from './plant-validators.js';
import { toPlant } from './plant-view.js';

export interface PlantPage {
  plants: Plant[];
  /** Present when more plants follow: the cursor of the next page. */
  nextCursor?: string;
}

/** What listing plants needs of the store. */
export type PlantReader = Pick<PlantRepository, 'listAfter'>;

/**
 * One page of the caller's plants in ascending id order. Keyset pagination (ids above the
 * cursor's) returns every plant exactly once across pages even while others insert.
 * One extra row is read to know whether a next page exists.
 */
export async function listPlants(
  plants: PlantReader,
  principal: Principal,
  { limit, afterId }: { limit: number; afterId: string | undefined },
): Promise<PlantPage> {
  assertMayListPlants(principal);
  const rows = await plants.listAfter(principal.tenant, afterId, limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const result: PlantPage = { plants: page.map(toPlant) };
  if (rows.length > limit && last !== undefined) result.nextCursor = encodeCursor(last.id);
  return result;
}
