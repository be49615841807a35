/** The Postgres schema the Plant Store owns; no other service reads it. */
export const SCHEMA = 'plants';
