/**
 * The PostgreSQL schema of the REMIT store, as versioned migrations applied by the library itself.
 *
 * - Migrations are an ordered array; version n is applied once, in order, and recorded in
 *   `<schema>.schema_migrations`. A published migration is never edited: a change is a new entry.
 * - All pending migrations are applied in one transaction holding a transaction-scoped advisory
 *   lock keyed by the schema name, so any number of processes may open the store at once: one
 *   applies, the others wait for it and then find nothing to do.
 * - A database whose schema is newer than this library knows is refused, never "downgraded".
 */

/**
 * The part of a pg client that migrations use. Declared here rather than imported from pg's types,
 * so that the published declarations need no @types/pg.
 */
export interface SqlClient {
  query<Row = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<{ rowCount: number | null; rows: Row[] }>;
}

export interface Migration {
  version: number;
  name: string;
  /** SQL run in the migration transaction; `{schema}` is replaced by the quoted schema name. */
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'runs and records',
    sql: `
CREATE TABLE {schema}.runs (
  run_id      text        PRIMARY KEY,
  next_seq    integer     NOT NULL CHECK (next_seq > 0),
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
-- One row per record. The primary key (run_id, seq) makes a second record at any seq impossible,
-- whatever the writers do. append_token identifies the append call that wrote the row; it is how a
-- writer that lost its connection finds out whether its own append committed (docs/postgres.md).
CREATE TABLE {schema}.records (
  run_id        text        NOT NULL REFERENCES {schema}.runs (run_id),
  seq           integer     NOT NULL CHECK (seq >= 0),
  bytes         bytea       NOT NULL,
  append_token  uuid        NOT NULL,
  committed_at  timestamptz NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX runs_created_at ON {schema}.runs (created_at, run_id);
`,
  },
  {
    version: 2,
    name: 'recovery summaries',
    sql: `
-- One recovery summary per run, written by an append in the same statement (docs/log-format.md,
-- "Stored recovery summary"); opaque bytes to the store. No foreign key: the run's row may be
-- created by that same statement.
CREATE TABLE {schema}.summaries (
  run_id        text    PRIMARY KEY,
  record_count  integer NOT NULL CHECK (record_count > 0),
  byte_length   bigint  NOT NULL CHECK (byte_length >= 0),
  snapshot_seq  integer NOT NULL CHECK (snapshot_seq >= 0),
  summary       bytea   NOT NULL
);
`,
  },
  {
    version: 3,
    name: 'run status hints',
    sql: `
-- The sequencer's status hint, written by the appends that change it (docs/guide.md, "Recovery at
-- start-up"). NULL: unknown (runs stored before this migration, or after a repair), so a recovery
-- candidate. Adding a nullable column rewrites no row; the partial index holds only candidates.
ALTER TABLE {schema}.runs ADD COLUMN status text CHECK (status IN ('running', 'parked', 'completed', 'failed'));
CREATE INDEX runs_to_recover ON {schema}.runs (created_at, run_id) WHERE status IS NULL OR status = 'running';
`,
  },
  {
    version: 4,
    name: 'recovery candidates by exclusion',
    sql: `
-- A hint that is not one of the four statuses counts as unknown, so as a recovery candidate: the
-- index (and listRunsToRecover, whose condition must match it) holds every run whose hint is not
-- parked, completed or failed. The CHECK of migration 3 keeps such values out of this table, but
-- a schema whose constraint was dropped, or rows written by another program, must never hide a
-- run. Rebuilt once (it holds only candidates); no row is rewritten.
DROP INDEX IF EXISTS {schema}.runs_to_recover;
CREATE INDEX runs_to_recover ON {schema}.runs (created_at, run_id) WHERE status IS NULL OR status NOT IN ('parked', 'completed', 'failed');
`,
  },
];

/**
 * Schema names are plain lower-case identifiers, so they never need escaping beyond quotes: at
 * most 63 bytes (PostgreSQL's NAMEDATALEN - 1), and not starting with pg_, a prefix PostgreSQL
 * reserves for system schemas (CREATE SCHEMA pg_x is SQLSTATE 42939).
 */
export const SCHEMA_NAME_PATTERN = /^(?!pg_)[a-z_][a-z0-9_]{0,62}$/;

export function quoteSchema(schema: string): string {
  if (!SCHEMA_NAME_PATTERN.test(schema)) throw new Error(`schema name ${JSON.stringify(schema)} must match ${SCHEMA_NAME_PATTERN}`);
  return `"${schema}"`;
}

export class SchemaVersionError extends Error {
  constructor(readonly schema: string, readonly found: number, readonly known: number, problem: string) {
    super(`schema ${schema}: ${problem} (database at version ${found}, this library knows up to ${known})`);
    this.name = 'SchemaVersionError';
  }
}

export interface MigrationReport {
  applied: number[];
  version: number;
}

/**
 * Brings `schema` up to the latest migration (`mode: 'apply'`) or checks that it is already there
 * (`mode: 'verify'`, for deployments whose database user may not create tables).
 * `client` must not be inside a transaction; it is left outside one.
 */
export async function migrateSchema(
  client: SqlClient,
  schema: string,
  options: { mode?: 'apply' | 'verify'; migrations?: readonly Migration[]; lockTimeoutMs?: number } = {},
): Promise<MigrationReport> {
  const migrations = options.migrations ?? MIGRATIONS;
  assertOrdered(migrations);
  const quoted = quoteSchema(schema);
  const latest = migrations.at(-1)?.version ?? 0;
  await client.query('BEGIN');
  try {
    // statement_timeout also bounds the wait for another process's migration.
    await client.query(`SET LOCAL statement_timeout = ${Math.max(0, Math.floor(options.lockTimeoutMs ?? 60_000))}`);
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('remit.migrations'), hashtext($1))`, [schema]);
    const current = await appliedVersions(client, schema, quoted, options.mode === 'verify');
    const found = current.at(-1) ?? 0;
    if (found > latest) throw new SchemaVersionError(schema, found, latest, 'the schema is newer than this library');
    const pending = migrations.filter((m) => !current.includes(m.version));
    if (pending.length > 0 && options.mode === 'verify') {
      throw new SchemaVersionError(schema, found, latest, `migrations ${pending.map((m) => m.version).join(', ')} are not applied`);
    }
    for (const migration of pending) {
      await client.query(migration.sql.replaceAll('{schema}', quoted));
      await client.query(`INSERT INTO ${quoted}.schema_migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
    }
    await client.query('COMMIT');
    return { applied: pending.map((m) => m.version), version: latest };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** Applied versions, ascending; creates the schema and the bookkeeping table unless verifying. */
async function appliedVersions(client: SqlClient, schema: string, quoted: string, verifyOnly: boolean): Promise<number[]> {
  const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  // CREATE SCHEMA IF NOT EXISTS would demand CREATE on the database even when the schema exists,
  // so a schema created beforehand by an administrator is detected first and left alone.
  if (exists.rowCount === 0) {
    if (verifyOnly) return [];
    await client.query(`CREATE SCHEMA ${quoted}`);
  }
  const table = await client.query(`SELECT to_regclass($1) AS oid`, [`${quoted}.schema_migrations`]);
  if (table.rows[0]?.oid === null) {
    if (verifyOnly) return [];
    await client.query(
      `CREATE TABLE ${quoted}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
  }
  const rows = await client.query<{ version: number }>(`SELECT version FROM ${quoted}.schema_migrations ORDER BY version`);
  return rows.rows.map((r) => r.version);
}

function assertOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${i} has version ${m.version}; versions must be 1, 2, 3, ... in order`);
  });
}
