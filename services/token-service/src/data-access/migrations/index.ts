import type { Migration } from '@plant/shared';
import { authSchema } from './0001-auth-schema.js';

export { SCHEMA } from './schema.js';

/** Applied in order by `migrate.ts` and by the jest global setup. The file is 0001, the recorded name stays '001-auth-schema'. */
export const migrations: Migration[] = [authSchema];
