import { isUniqueViolation, type Knex } from '@plant/shared';
import { DuplicatePlantId } from '../domain/plant-errors.js';
import { SCHEMA } from './migrations/schema.js';

/** A stored plant; `id` is the exact int64 as a decimal string (pg returns int8 as text). */
export interface PlantRow {
  id: string;
  name: string;
  tag: string | null;
}

export interface PlantRepository {
  /** Stores a plant; throws `DuplicatePlantId` when the tenant already has this id. */
  insert(tenant: string, plant: { id: string; name: string; tag?: string | undefined }): Promise<void>;
  /** Up to `take` plants of the tenant with an id above `afterId` (all when absent), ascending by id. */
  listAfter(tenant: string, afterId: string | undefined, take: number): Promise<PlantRow[]>;
  /** Resolves when the database answers (readiness). */
  ping(): Promise<void>;
}

export function createPlantRepository(db: Knex): PlantRepository {
  const plants = () => db.withSchema(SCHEMA).table('plants');
  return {
    async insert(tenant, { id, name, tag }) {
      try {
        await plants().insert({ tenant, id, name, tag: tag ?? null });
      } catch (err) {
        if (isUniqueViolation(err, 'plants_pkey')) throw new DuplicatePlantId(id);
        throw err;
      }
    },
    async listAfter(tenant, afterId, take) {
      const query = plants().select('id', 'name', 'tag').where({ tenant }).orderBy('id', 'asc').limit(take);
      if (afterId !== undefined) query.andWhere('id', '>', afterId);
      return (await query) as PlantRow[];
    },
    async ping() {
      await db.raw('select 1');
    },
  };
}
