import type { Knex } from '@plant/shared/db';

export interface RealmRow {
  name: string;
  created_at: Date;
}

export interface RealmRepository {
  find(name: string): Promise<RealmRow | undefined>;
  /** Every realm's name, in byte order (the same in every locale, so the answer and its ETag are stable). */
  listNames(): Promise<string[]>;
}

export function createRealmRepository(db: Knex): RealmRepository {
  return {
    async find(name) {
      return db('realms').where({ name }).first(['name', 'created_at']);
    },
    async listNames() {
      const rows: Array<{ name: string }> = await db('realms')
        .orderByRaw('name collate "C"')
        .select('name');
      return rows.map((row) => row.name);
    },
  };
}
