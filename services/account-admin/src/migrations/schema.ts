/** The Postgres schema account-admin owns; no other service reads it. */
export const SCHEMA = 'admin';
