import { createStatementRunner, isUniqueViolation, type Knex } from '@plant/shared/db';
import { SCHEMA } from '../migrations/schema.js';

/** A stored plant; `id` is the exact int64 as a decimal string (pg returns int8 as text). */
export interface PlantRow {
  id: string;
  name: string;
  tag: string | null;
}

export interface PlantRepository {
  /** Stores a plant; false (nothing stored) when the tenant already has this id. */
  insert(
    tenant: string,
    plant: { id: string; name: string; tag?: string | undefined },
  ): Promise<boolean>;
  /** Up to `take` plants of the tenant with an id above `afterId` (all when absent), ascending by id. */
  listAfter(tenant: string, afterId: string | undefined, take: number): Promise<PlantRow[]>;
  /** Resolves when the database answers (readiness). */
  ping(): Promise<void>;
}

/*
 * The two statements every list and create runs, as named prepared statements: Postgres
 * parses and plans each once per connection, and no query builder compiles the same SQL on
 * every request (unnamed when the pool is a transaction pooler's). Ids travel as decimal text both ways (bigint parameters, int8 results as
 * strings), so they stay exact int64s. Cold paths keep using knex.
 */
const LIST_FIRST = {
  name: 'plants-list-first',
  text: `select id, name, tag from "${SCHEMA}".plants where tenant = $1 order by id asc limit $2`,
};
const LIST_AFTER = {
  name: 'plants-list-after',
  text: `select id, name, tag from "${SCHEMA}".plants where tenant = $1 and id > $3 order by id asc limit $2`,
};
const INSERT = {
  name: 'plants-insert',
  text: `insert into "${SCHEMA}".plants (tenant, id, name, tag) values ($1, $2, $3, $4)`,
};

/** `namedStatements: false` behind a transaction-pooling PgBouncer (DATABASE_NAMED_STATEMENTS). */
export function createPlantRepository(
  db: Knex,
  { namedStatements = true }: { namedStatements?: boolean } = {},
): PlantRepository {
  const run = createStatementRunner(db, { named: namedStatements });
  return {
    async insert(tenant, { id, name, tag }) {
      try {
        await run(INSERT, [tenant, id, name, tag ?? null]);
        return true;
      } catch (err) {
        if (isUniqueViolation(err, 'plants_pkey')) return false;
        throw err;
      }
    },
    listAfter(tenant, afterId, take) {
      return afterId === undefined
        ? run<PlantRow>(LIST_FIRST, [tenant, take])
        : run<PlantRow>(LIST_AFTER, [tenant, take, afterId]);
    },
    async ping() {
      await db.raw('select 1');
    },
  };
}
