import pg from 'pg';
import type { Knex } from 'knex';

/** A statement Postgres parses and plans once per connection, then runs by name (unless the runner is told not to name it). */
export interface PreparedStatement {
  name: string;
  text: string;
}

/** Runs a prepared statement and resolves to its rows. */
export type StatementRunner = <R>(statement: PreparedStatement, values: unknown[]) => Promise<R[]>;

/** What the runner needs of knex's pool and of a pooled `pg` client (which takes a ready `Query`). */
interface PooledClient {
  acquireConnection(): Promise<{ query(query: pg.Query): unknown }>;
  releaseConnection(connection: unknown): Promise<void>;
}

/**
 * Hot-path queries without the query builder, on the pool knex already holds (same
 * connections, limits, acquire timeout and disposal of broken connections). Each runs as a
 * ready `pg.Query`: given a config object, `client.query` copies it property by property
 * (with descriptors) and wraps the result in a second promise to rewrite the stack, work a
 * hot route need not repeat per request. Values travel as text, so int64 ids stay exact both ways.
 *
 * `named: false` sends every statement unnamed (parsed and planned on each run, in the same
 * round trip): a transaction-pooling PgBouncer (before 1.21) hands each transaction a server
 * connection of its own, where a statement prepared on another one does not exist.
 */
export function createStatementRunner(
  db: Knex,
  { named = true }: { named?: boolean } = {},
): StatementRunner {
  const pool = db.client as unknown as PooledClient;
  return async function runStatement<R>(
    statement: PreparedStatement,
    values: unknown[],
  ): Promise<R[]> {
    const connection = await pool.acquireConnection();
    try {
      return await new Promise<R[]>((resolve, reject) => {
        const query = new pg.Query(statement.text, values, (err, result) =>
          err ? reject(err) : resolve((result as unknown as { rows: R[] }).rows),
        );
        if (named) (query as pg.Query & { name: string }).name = statement.name;
        connection.query(query);
      });
    } finally {
      void pool.releaseConnection(connection);
    }
  };
}
