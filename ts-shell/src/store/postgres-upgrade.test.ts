/**
 * PostgreSQL schemas as an upgrade meets them (docs/postgres.md, "Upgrades"; docs/guide.md,
 * "Upgrading REMIT").
 *
 * - A migration that fails says which one it was, keeping the server's SQLSTATE as the storeCode:
 *   a data-only role at migration 3 got only `must be owner of index runs_to_recover`.
 * - A schema whose bookkeeping rows were lost (deleted to let an older release open it, a restore
 *   without schema_migrations) is brought up to date instead of failing at every open with
 *   `relation "summaries" already exists`; migration 3 applied again to a schema that has the
 *   status column makes every hint unknown, as the release without hints that ran meanwhile may
 *   have left a running run marked parked. A table of another shape under REMIT's name is refused,
 *   before a migration creates or changes it, and so is another program's schema_migrations (its
 *   rows 1 and 2 made migration 3 null that program's own runs.status).
 * - The status-hint hole of a rolling deploy from a release before migration 3: a run it left
 *   running keeps the hint parked and no recoverAll sees it; `UPDATE <schema>.runs SET status =
 *   NULL` makes every run a candidate, and the next recoverAll continues it and corrects the rest.
 * Needs a server whose test user may create roles (scripts/pg.sh grants CREATEROLE).
 */

import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { createRemit } from '../remit.js';
import { orderWorkflow, withoutHints } from '../../test-support/hintless-release.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { MIGRATIONS } from './postgres-migrations.js';
import { PostgresStore, type PostgresStoreOptions } from './postgres.js';

let failFinish = true;
const order = orderWorkflow(() => failFinish);

describePg('postgres: upgrades', (url) => {
  const schemas = new Set<string>();
  const roles: string[] = [];
  const stores: PostgresStore[] = [];
  const admin = new pg.Client({ connectionString: url });
  let connected: Promise<void> | undefined;
  const sql = async <Row = Record<string, unknown>>(text: string): Promise<Row[]> => {
    connected ??= admin.connect();
    await connected;
    return (await admin.query(text)).rows as Row[];
  };
  const open = async (options: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> => {
    const schema = options.schema ?? freshSchemaName();
    schemas.add(schema);
    const store = await PostgresStore.open({ connectionString: url, schema, maxConnections: 2, retryBudgetMs: 500, ...options });
    stores.push(store);
    return store;
  };
  const openError = (options: Partial<PostgresStoreOptions>) => open(options).then(() => { throw new Error('opened'); }, (error: unknown) => error);
  afterAll(async () => {
    for (const store of stores) await store.close();
    await dropSchemas(url, schemas);
    const database = new URL(url).pathname.slice(1);
    for (const role of roles) {
      await sql(`REVOKE ALL ON DATABASE ${database} FROM ${role}`);
      await sql(`DROP ROLE IF EXISTS ${role}`);
    }
    if (connected) await admin.end();
  });

  it('a migration a data-only role cannot apply says which migration, keeps the SQLSTATE, and says what to do', async () => {
    const old = await open({ migrations: MIGRATIONS.slice(0, 3) });
    const schema = old.schema;
    const role = `${schema}_app`;
    roles.push(role);
    await sql(`CREATE ROLE ${role} LOGIN PASSWORD 'app'`);
    await sql(`GRANT CONNECT ON DATABASE ${new URL(url).pathname.slice(1)} TO ${role}`);
    for (const grant of [
      `GRANT USAGE ON SCHEMA ${schema} TO ${role}`,
      `GRANT SELECT, INSERT, UPDATE ON ${schema}.runs TO ${role}`,
      `GRANT SELECT, INSERT, DELETE ON ${schema}.records TO ${role}`,
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ${schema}.summaries TO ${role}`,
      `GRANT SELECT ON ${schema}.schema_migrations TO ${role}`,
    ]) await sql(grant);
    const appUrl = new URL(url);
    appUrl.username = role;
    appUrl.password = 'app';
    const error = await openError({ connectionString: appUrl.toString(), schema });
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: '42501', operation: 'open' });
    const message = (error as Error).message;
    expect(message).toContain(`schema ${schema}: applying migration 4 (recovery candidates by exclusion) failed: must be owner of`);
    expect(message).toContain('nothing was applied');
    expect(message).toContain("migrate: 'verify'");
    expect(await sql(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`)).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
  });

  it('schema_migrations rows 2-4 deleted (an older release let in): the next open applies them again, keeps every row, and makes every hint unknown', async () => {
    const store = await open();
    const remit = await createRemit({ store, workflows: [order], core: 'reference' });
    expect((await remit.start(order, {}, { runId: 'p-0' })).status).toBe('parked');
    await sql(`DELETE FROM ${store.schema}.schema_migrations WHERE version >= 2`);
    const again = await open({ schema: store.schema });
    expect(await sql(`SELECT version FROM ${store.schema}.schema_migrations ORDER BY version`)).toEqual([1, 2, 3, 4].map((version) => ({ version })));
    expect(await again.listRunsToRecover()).toEqual(['p-0']);
    expect((await again.readRecords('p-0')).length).toBe(2);
    // Read, found parked (nothing to continue), and its hint written back.
    expect(await remit.recoverAll()).toEqual([]);
    expect(await again.listRunsToRecover()).toEqual([]);
  });

  it('schema_migrations dropped (a restore without it): the next open records every migration again and keeps the tables', async () => {
    const store = await open();
    const remit = await createRemit({ store, workflows: [order], core: 'reference' });
    await remit.start(order, {}, { runId: 'p-0' });
    await sql(`DROP TABLE ${store.schema}.schema_migrations`);
    const again = await open({ schema: store.schema });
    expect(await sql(`SELECT version FROM ${store.schema}.schema_migrations ORDER BY version`)).toEqual([1, 2, 3, 4].map((version) => ({ version })));
    expect((await again.listRuns()).map((r) => r.runId)).toEqual(['p-0']);
  });

  it('a table of another program under the name runs, in a schema without REMIT\'s bookkeeping, is refused (SCHEMA_VERSION), nothing created', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    await sql(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.runs (run_id text PRIMARY KEY, owner text)`);
    const error = await openError({ schema });
    expect(error).toMatchObject({ storeCode: 'SCHEMA_VERSION', field: 'schema' });
    expect((error as Error).message).toContain('a table runs without next_seq, created_at, updated_at, which is not the table migration 1 creates');
    expect(await sql(`SELECT tablename FROM pg_tables WHERE schemaname = '${schema}' ORDER BY 1`)).toEqual([{ tablename: 'runs' }]);
  });

  it('another program\'s schema_migrations (rows 1 and 2 its own) in a shared schema: refused (SCHEMA_VERSION) naming the rows, its runs.status kept, nothing created', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    await sql(`CREATE SCHEMA ${schema};
      CREATE TABLE ${schema}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO ${schema}.schema_migrations (version, name) VALUES (1, 'create users'), (2, 'create runs');
      CREATE TABLE ${schema}.runs (run_id text PRIMARY KEY, created_at timestamptz NOT NULL, status text);
      INSERT INTO ${schema}.runs VALUES ('job-1', now(), 'succeeded'), ('job-2', now(), 'queued')`);
    for (const migrate of ['apply', 'verify'] as const) {
      const error = await openError({ schema, migrate });
      expect(error).toMatchObject({ storeCode: 'SCHEMA_VERSION', field: 'schema' });
      const message = (error as Error).message;
      expect(message).toContain('schema_migrations is not REMIT\'s bookkeeping: it records 1 "create users", 2 "create runs", where REMIT\'s migrations are 1 "runs and records", 2 "recovery summaries"');
      expect(message).toContain('nothing was changed');
    }
    expect(await sql(`SELECT run_id, status FROM ${schema}.runs ORDER BY 1`)).toEqual([{ run_id: 'job-1', status: 'succeeded' }, { run_id: 'job-2', status: 'queued' }]);
    expect(await sql(`SELECT tablename FROM pg_tables WHERE schemaname = '${schema}' ORDER BY 1`)).toEqual([{ tablename: 'runs' }, { tablename: 'schema_migrations' }]);
    expect(await sql(`SELECT version FROM ${schema}.schema_migrations ORDER BY 1`)).toEqual([{ version: 1 }, { version: 2 }]);
  });

  it('a schema_migrations of other columns, or whose versions do not start at 1, is refused (SCHEMA_VERSION) before its rows are read', async () => {
    const other = freshSchemaName();
    schemas.add(other);
    await sql(`CREATE SCHEMA ${other}; CREATE TABLE ${other}.schema_migrations (version text PRIMARY KEY, applied boolean)`);
    const error = await openError({ schema: other });
    expect(error).toMatchObject({ storeCode: 'SCHEMA_VERSION', field: 'schema' });
    expect((error as Error).message).toContain('schema_migrations is not REMIT\'s bookkeeping: it is a table without the columns version integer, name text, applied_at timestamp with time zone of REMIT\'s');
    expect(await sql(`SELECT tablename FROM pg_tables WHERE schemaname = '${other}' ORDER BY 1`)).toEqual([{ tablename: 'schema_migrations' }]);
    const stamped = freshSchemaName();
    schemas.add(stamped);
    await sql(`CREATE SCHEMA ${stamped};
      CREATE TABLE ${stamped}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO ${stamped}.schema_migrations (version, name) VALUES (20240101, 'init')`);
    const refused = await openError({ schema: stamped });
    expect(refused).toMatchObject({ storeCode: 'SCHEMA_VERSION' });
    expect((refused as Error).message).toContain('schema_migrations is not REMIT\'s bookkeeping: it records 20240101 "init"');
  });

  it('REMIT\'s bookkeeping at migration 2 beside another program\'s runs: refused before migration 3 would null its status column (SCHEMA_VERSION), nothing changed', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    await sql(`CREATE SCHEMA ${schema};
      CREATE TABLE ${schema}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO ${schema}.schema_migrations (version, name) VALUES (1, 'runs and records'), (2, 'recovery summaries');
      CREATE TABLE ${schema}.runs (run_id text PRIMARY KEY, created_at timestamptz NOT NULL, status text);
      INSERT INTO ${schema}.runs VALUES ('job-1', now(), 'succeeded')`);
    const error = await openError({ schema });
    expect(error).toMatchObject({ storeCode: 'SCHEMA_VERSION', field: 'schema' });
    expect((error as Error).message).toContain(
      'a table runs without next_seq, updated_at, which is not the table migration 1 creates and pending migrations 3 (run status hints) and 4 (recovery candidates by exclusion) would change');
    expect(await sql(`SELECT run_id, status FROM ${schema}.runs`)).toEqual([{ run_id: 'job-1', status: 'succeeded' }]);
    expect(await sql(`SELECT version FROM ${schema}.schema_migrations ORDER BY 1`)).toEqual([{ version: 1 }, { version: 2 }]);
    expect(await sql(`SELECT indexname FROM pg_indexes WHERE schemaname = '${schema}' AND indexname = 'runs_to_recover'`)).toEqual([]);
  });

  it('the status-hint hole of a release before migration 3: UPDATE runs SET status = NULL makes every run a candidate, and recoverAll continues the hidden run and corrects the rest', async () => {
    const store = await open();
    failFinish = true;
    const current = await createRemit({ store, workflows: [order], core: 'reference' });
    for (const runId of ['p-0', 'p-1']) expect((await current.start(order, {}, { runId })).status).toBe('parked');
    const old = await createRemit({ store: withoutHints(await open({ schema: store.schema })), workflows: [order], core: 'reference' });
    await expect(old.resume('p-0', 'approve@1', { ok: true })).rejects.toThrow('killed');
    failFinish = false;
    expect(await current.recoverAll()).toEqual([]);
    expect((await current.status('p-0')).status).toBe('running');
    await sql(`UPDATE ${store.schema}.runs SET status = NULL`);
    expect(await store.listRunsToRecover()).toEqual(['p-0', 'p-1']);
    expect((await current.recoverAll()).map((o) => o.runId)).toEqual(['p-0']);
    expect((await current.status('p-0')).status).toBe('completed');
    expect(await store.listRunsToRecover()).toEqual([]);
    expect((await store.listRuns()).map((r) => [r.runId, r.statusHint])).toEqual([['p-0', 'completed'], ['p-1', 'parked']]);
  });
});
