import type { Migration } from '@plant/shared/db';
import { createPlants } from './0001-create-plants.js';

export { SCHEMA } from './schema.js';

/** Applied in order by `migrate.ts` and by the jest global setup. */
export const migrations: Migration[] = [createPlants];
