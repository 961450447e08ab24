/**
 * The PostgreSQL schema of the REMIT store, as versioned migrations applied by the library itself.
 *
 * - Migrations are an ordered array; version n is applied once, in order, and recorded in
 *   `<schema>.schema_migrations`. What a published migration makes is never changed: a change is a
 *   new entry. Migrations 1-3 were given `IF NOT EXISTS` forms later, so that a schema whose
 *   bookkeeping rows were lost (deleted to let an older release open it, a restore without the
 *   table) is brought up to date instead of failing at every open with `relation "summaries"
 *   already exists`; a table of another shape under REMIT's name is refused (checkTablesAreRemits),
 *   and so is a `schema_migrations` that is not REMIT's (checkBookkeepingIsRemits): another
 *   program's in a shared schema, whose rows 1 and 2 let migration 3 null its own `runs.status`.
 * - A migration that fails says which one it was (MigrationFailedError), keeping the server's code.
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
  /** Recorded with the version; never changed once published: an open compares the recorded names with these (checkBookkeepingIsRemits). */
  name: string;
  /** SQL run in the migration transaction; `{schema}` is replaced by the quoted schema name. */
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'runs and records',
    sql: `
CREATE TABLE IF NOT EXISTS {schema}.runs (
  run_id      text        PRIMARY KEY,
  next_seq    integer     NOT NULL CHECK (next_seq > 0),
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
-- One row per record. The primary key (run_id, seq) makes a second record at any seq impossible,
-- whatever the writers do. append_token identifies the append call that wrote the row; it is how a
-- writer that lost its connection finds out whether its own append committed (docs/postgres.md).
CREATE TABLE IF NOT EXISTS {schema}.records (
  run_id        text        NOT NULL REFERENCES {schema}.runs (run_id),
  seq           integer     NOT NULL CHECK (seq >= 0),
  bytes         bytea       NOT NULL,
  append_token  uuid        NOT NULL,
  committed_at  timestamptz NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS runs_created_at ON {schema}.runs (created_at, run_id);
`,
  },
  {
    version: 2,
    name: 'recovery summaries',
    sql: `
-- One recovery summary per run, written by an append in the same statement (docs/log-format.md,
-- "Stored recovery summary"); opaque bytes to the store. No foreign key: the run's row may be
-- created by that same statement.
CREATE TABLE IF NOT EXISTS {schema}.summaries (
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
-- Applied again to a schema that has the column (its bookkeeping row was lost: deleted so that a
-- release without hints could open it), the hints are made unknown, as this migration leaves them:
-- that release wrote none, so a run it left running may carry the hint 'parked' and be hidden.
DO $remit$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '{schema}.runs'::regclass AND attname = 'status' AND NOT attisdropped) THEN
    UPDATE {schema}.runs SET status = NULL WHERE status IS NOT NULL;
  END IF;
END $remit$;
ALTER TABLE {schema}.runs ADD COLUMN IF NOT EXISTS status text CHECK (status IN ('running', 'parked', 'completed', 'failed'));
CREATE INDEX IF NOT EXISTS runs_to_recover ON {schema}.runs (created_at, run_id) WHERE status IS NULL OR status = 'running';
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

/**
 * A step of the migration (creating the schema or its bookkeeping table, applying a migration or
 * recording it) that the server refused, saying which: a data-only role at migration 3 got only
 * `must be owner of index runs_to_recover`, which does not say that a migration was being
 * applied. The server's error is the cause, and its SQLSTATE is this error's `code`, so the store
 * reports the same storeCode (a timeout stays TIMEOUT; a broken connection is retried).
 */
export class MigrationFailedError extends Error {
  readonly code: string | undefined;
  constructor(readonly schema: string, readonly step: string, cause: unknown) {
    const found = (cause as { code?: unknown } | null)?.code;
    const code = typeof found === 'string' ? found : undefined;
    const advice = code === '42501'
      ? ': the role lacks a privilege this needs (creating the schema takes CREATE on the database, a table CREATE on the schema, and altering a table or its index its ownership): ' +
        'apply the migrations once with the credentials of the role that owns the schema ' +
        'and its tables (the default migrate: \'apply\'), and open the stores of roles that may not change the schema with migrate: \'verify\', ' +
        'with the grants docs/postgres.md lists ("Permissions")'
      : '';
    super(`schema ${schema}: ${step} failed: ${cause instanceof Error ? cause.message : String(cause)}; nothing was applied (the pending migrations are one transaction)${advice}`, { cause });
    this.name = 'MigrationFailedError';
    this.code = code;
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
    const recorded = await appliedVersions(client, schema, quoted, options.mode === 'verify', latest);
    checkBookkeepingIsRemits(schema, recorded, migrations);
    const current = recorded.map((r) => r.version);
    const found = current.at(-1) ?? 0;
    if (found > latest) throw new SchemaVersionError(schema, found, latest, 'the schema is newer than this library');
    const pending = migrations.filter((m) => !current.includes(m.version));
    if (pending.length > 0 && options.mode === 'verify') {
      throw new SchemaVersionError(schema, found, latest, `migrations ${pending.map((m) => m.version).join(', ')} are not applied`);
    }
    await checkTablesAreRemits(client, schema, found, latest, pending);
    for (const migration of pending) {
      const step = `applying migration ${migration.version} (${migration.name})`;
      await inStep(schema, step, () => client.query(migration.sql.replaceAll('{schema}', quoted)));
      await inStep(schema, `${step}: recording it in schema_migrations`, () =>
        client.query(`INSERT INTO ${quoted}.schema_migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]));
    }
    await client.query('COMMIT');
    return { applied: pending.map((m) => m.version), version: latest };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** `run`, its error (a server's) restated as MigrationFailedError naming `step`. */
async function inStep<T>(schema: string, step: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof MigrationFailedError || error instanceof SchemaVersionError) throw error;
    throw new MigrationFailedError(schema, step, error);
  }
}

/**
 * The columns of each table the built-in migrations 1 and 2 create (REMIT_TABLES: what makes a
 * table of that name REMIT's), the migration that creates it, and the later ones that change it
 * (3 adds runs.status, and nulls it when applied again; 4 rebuilds runs' index).
 */
const REMIT_TABLES: ReadonlyMap<string, { version: number; alteredBy: readonly number[]; columns: readonly string[] }> = new Map([
  ['runs', { version: 1, alteredBy: [3, 4], columns: ['run_id', 'next_seq', 'created_at', 'updated_at'] }],
  ['records', { version: 1, alteredBy: [], columns: ['run_id', 'seq', 'bytes', 'append_token', 'committed_at'] }],
  ['summaries', { version: 2, alteredBy: [], columns: ['run_id', 'record_count', 'byte_length', 'snapshot_seq', 'summary'] }],
]);

/**
 * Before a built-in migration that creates a table (1: runs, records; 2: summaries) or changes one
 * (3 and 4: runs) is applied, a relation of that name already in the schema must be REMIT's table
 * (its bookkeeping rows were lost), which `CREATE TABLE IF NOT EXISTS` then keeps and migrations
 * 3 and 4 alter. Another program's table of that name (a schema shared with it: `public`) would be
 * taken for REMIT's: the store's writes would fail on it or reference it, and migration 3 applied
 * to it would set its `status` column to NULL in every row. Refused, SchemaVersionError, nothing
 * changed.
 */
async function checkTablesAreRemits(client: SqlClient, schema: string, found: number, latest: number, pending: readonly Migration[]): Promise<void> {
  const isPending = (version: number) => pending.some((m) => m === MIGRATIONS[version - 1]);
  const creating = [...REMIT_TABLES].filter(([, t]) => isPending(t.version) || t.alteredBy.some(isPending));
  if (creating.length === 0) return;
  const rows = await client.query<{ relname: string; relkind: string; columns: string[] | null }>(
    `SELECT c.relname, c.relkind::text AS relkind,
       (SELECT array_agg(a.attname::text) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = ANY($2::text[])`,
    [schema, creating.map(([name]) => name)],
  );
  for (const row of rows.rows) {
    const table = REMIT_TABLES.get(row.relname)!;
    const missing = table.columns.filter((c) => !(row.columns ?? []).includes(c));
    if ((row.relkind === 'r' || row.relkind === 'p') && missing.length === 0) continue;
    const what = row.relkind === 'r' || row.relkind === 'p' ? `a table ${row.relname} without ${missing.join(', ')}` : `a relation ${row.relname} that is not a table (relkind ${row.relkind})`;
    const altering = table.alteredBy.filter(isPending).map((v) => `${v} (${MIGRATIONS[v - 1]!.name})`);
    const alters = altering.length === 0 ? '' : ` and pending migration${altering.length > 1 ? 's' : ''} ${altering.join(' and ')} would change`;
    throw new SchemaVersionError(schema, found, latest,
      `schema_migrations records ${found === 0 ? 'no migration' : `migrations up to ${found}`}, and the schema holds ${what}, which is not the table migration ${table.version} creates${alters}: ` +
        `it is ${NOT_REMITS}`);
  }
}

/** The columns of REMIT's schema_migrations, as appliedVersions creates it, and their types. */
const BOOKKEEPING_COLUMNS: ReadonlyMap<string, string> = new Map([['version', 'integer'], ['name', 'text'], ['applied_at', 'timestamp with time zone']]);

const NOT_REMITS = 'another program\'s, in a schema REMIT shares (or REMIT\'s altered by hand); nothing was changed: give REMIT a schema of its own (the schema option)';

/**
 * schema_migrations already in the schema must be REMIT's: a table with its columns (checked
 * before its rows are read), each recorded version that this library knows under the name it
 * gives that migration, and versions counted from 1. Another program's bookkeeping table of that
 * name (in `public`, or any schema REMIT shares), whose rows 1 and 2 were taken for REMIT's
 * migrations 1 and 2, had migration 3 applied to that program's own `runs` (its status column set
 * to NULL in every row): refused, SchemaVersionError, nothing changed. A version above this
 * library's is left to the newer-schema refusal, unless version 1 is missing too (not REMIT's).
 */
function checkBookkeepingIsRemits(schema: string, recorded: readonly { version: number; name: string }[], migrations: readonly Migration[]): void {
  const latest = migrations.at(-1)?.version ?? 0;
  const found = recorded.at(-1)?.version ?? 0;
  const renamed = recorded.filter((r) => r.version <= latest && (r.version < 1 || migrations[r.version - 1]?.name !== r.name));
  const foreign = renamed.length > 0 || (found > latest && recorded[0]?.version !== 1);
  if (!foreign) return;
  const shown = renamed.length > 0 ? renamed : recorded;
  const listed = shown.slice(0, 4).map((r) => `${r.version} ${JSON.stringify(r.name)}`).join(', ') + (shown.length > 4 ? ', ...' : '');
  const remits = migrations.slice(0, 4).map((m) => `${m.version} ${JSON.stringify(m.name)}`).join(', ');
  throw new SchemaVersionError(schema, found, latest,
    `schema_migrations is not REMIT's bookkeeping: it records ${listed}, where REMIT's migrations are ${remits}${migrations.length > 4 ? ', ...' : ''}; ` +
      `it is ${NOT_REMITS}`);
}

/**
 * Applied versions with their names, ascending; creates the schema and the bookkeeping table
 * unless verifying. A schema_migrations of other columns is refused before its rows are read.
 */
async function appliedVersions(client: SqlClient, schema: string, quoted: string, verifyOnly: boolean, latest: number): Promise<{ version: number; name: string }[]> {
  const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  // CREATE SCHEMA IF NOT EXISTS would demand CREATE on the database even when the schema exists,
  // so a schema created beforehand by an administrator is detected first and left alone.
  if (exists.rowCount === 0) {
    if (verifyOnly) return [];
    await inStep(schema, 'creating the schema', () => client.query(`CREATE SCHEMA ${quoted}`));
  }
  const table = await client.query<{ relkind: string; columns: [string, string][] | null }>(
    `SELECT c.relkind::text AS relkind,
       (SELECT array_agg(ARRAY[a.attname::text, format_type(a.atttypid, a.atttypmod)]) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'schema_migrations'`,
    [schema],
  );
  const bookkeeping = table.rows[0];
  if (bookkeeping === undefined) {
    if (verifyOnly) return [];
    await inStep(schema, 'creating the bookkeeping table schema_migrations', () => client.query(
      `CREATE TABLE ${quoted}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    ));
  } else {
    const columns = new Map(bookkeeping.columns ?? []);
    const other = [...BOOKKEEPING_COLUMNS].filter(([name, type]) => columns.get(name) !== type).map(([name, type]) => `${name} ${type}`);
    const isTable = bookkeeping.relkind === 'r' || bookkeeping.relkind === 'p';
    if (!isTable || other.length > 0) {
      const what = isTable ? `a table without the column${other.length > 1 ? 's' : ''} ${other.join(', ')} of REMIT's` : `a relation that is not a table (relkind ${bookkeeping.relkind})`;
      throw new SchemaVersionError(schema, 0, latest,
        `schema_migrations is not REMIT's bookkeeping: it is ${what}; it is ${NOT_REMITS}`);
    }
  }
  const rows = await client.query<{ version: number; name: string }>(`SELECT version, name FROM ${quoted}.schema_migrations ORDER BY version`);
  return rows.rows;
}

function assertOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${i} has version ${m.version}; versions must be 1, 2, 3, ... in order`);
  });
}
