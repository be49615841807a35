import type { Knex, Migration } from '@plant/shared/db';

/**
 * The revocation change feed (docs/architecture.md, "Revocation change feed"): one row per change
 * of a principal's token version or deletion, numbered by a sequence, so a resource server asks
 * for the changes after the last position it read instead of downloading the whole state.
 *
 * The rows are written by a trigger on `principals`, not by the code that bumps: every writer
 * (this code, an older replica during a rollout, an operator's SQL) produces them alike. The
 * trigger takes a row lock on `revocation_feed` before it takes a position and holds it to commit,
 * so positions become visible in the order they were taken: a reader that has seen position n has
 * seen every position below it, and never skips a change committed late with a smaller number.
 * Only transactions that change revocation state take that lock (a reset, a delete, a role or
 * grant change: one row each, at the end of its transaction).
 *
 * Rows older than a token lifetime plus the skew margin are pruned (`revocation_feed.pruned_through`
 * remembers the highest pruned position: a reader behind it loads the snapshot again). Existing
 * state is carried over with the migration's time as its change time: the older facts are kept one
 * more horizon, never lost early; a deletion keeps its own time (a deletion is a principal's last change).
 */
export const revocationChanges: Migration = {
  name: '004-revocation-changes',
  async up(knex: Knex) {
    const schema = await currentSchema(knex);
    await knex.raw('create sequence revocation_change_position as bigint');
    await knex.raw(`
      create table revocation_changes (
        position bigint primary key,
        realm text not null,
        sub text not null,
        version integer not null,
        deleted boolean not null,
        changed_at timestamptz not null default clock_timestamp()
      )`);
    // The snapshot and the pruner read by age; the feed by position (the primary key).
    await knex.raw('create index revocation_changes_changed_at on revocation_changes (changed_at)');
    await knex.raw(`
      create table revocation_feed (
        singleton boolean primary key default true check (singleton),
        pruned_through bigint not null default 0
      )`);
    await knex.raw('insert into revocation_feed default values');
    // Names are schema-qualified: the trigger also runs for sessions whose search_path is elsewhere.
    await knex.raw(
      `
      create function ??.record_revocation_change() returns trigger language plpgsql as $$
      begin
        perform 1 from ??.revocation_feed for no key update;
        insert into ??.revocation_changes (position, realm, sub, version, deleted)
          values (nextval('??.revocation_change_position'), new.realm, new.sub, new.token_version, new.deleted_at is not null);
        return null;
      end $$`.replace(/\?\?/g, `"${schema}"`),
    );
    await knex.raw(`
      create trigger principals_revocation_change
        after update of token_version, deleted_at on principals
        for each row
        when (new.token_version <> old.token_version or (new.deleted_at is null) <> (old.deleted_at is null))
        execute function record_revocation_change()`);
    await knex.raw(`
      insert into revocation_changes (position, realm, sub, version, deleted, changed_at)
        select nextval('revocation_change_position'), realm, sub, token_version, deleted_at is not null, changed_at
        from (
          select realm, sub, token_version, deleted_at, coalesce(deleted_at, now()) as changed_at
          from principals
          where token_version > 1 or deleted_at is not null
          order by changed_at, realm, sub
        ) carried`);
    // The snapshot no longer reads principals by version; deleted principals are pruned by age.
    await knex.raw('drop index if exists principals_changed');
  },
  async down(knex: Knex) {
    await knex.raw(
      'create index principals_changed on principals (token_version) where token_version > 1 and deleted_at is null',
    );
    await knex.raw('drop trigger principals_revocation_change on principals');
    await knex.raw('drop function record_revocation_change()');
    await knex.raw('drop table revocation_feed');
    await knex.raw('drop table revocation_changes');
    await knex.raw('drop sequence revocation_change_position');
  },
};

async function currentSchema(knex: Knex): Promise<string> {
  const { rows } = (await knex.raw('select current_schema() as schema')) as {
    rows: Array<{ schema: string }>;
  };
  const schema = rows[0]?.schema;
  if (!schema || !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`unexpected schema ${schema}`);
  return schema;
}
