import type { Migration } from '@plant/shared';
import { authSchema } from './001-auth-schema.js';

export const SCHEMA = 'auth';

export const migrations: Migration[] = [authSchema];
