/** The Postgres schema the token service owns; no other service reads it. */
export const SCHEMA = 'auth';
