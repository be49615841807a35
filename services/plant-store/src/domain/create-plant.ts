import type { NewPlant, Plant } from '@plant/shared/api';
import type { Principal } from '@plant/resource-auth';
import type { PlantRepository } from '../data-access/plant-repository.js';
import { DuplicatePlantId } from './errors.js';
import { assertMayCreatePlant } from './plant-authorization.js';
import { toPlant } from './plant-view.js';

/** Stores a new plant in the caller's tenant (from the token, never the request). */
/** What creating a plant needs of the store. */
export type PlantWriter = Pick<PlantRepository, 'insert'>;

export async function createPlant(
  plants: PlantWriter,
  principal: Principal,
  input: NewPlant,
): Promise<Plant> {
  assertMayCreatePlant(principal, input.tag);
  if (!(await plants.insert(principal.tenant, input))) throw new DuplicatePlantId(input.id);
  return toPlant(input);
}
