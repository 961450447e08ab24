/**
 * PostgreSQL stores for the REMIT conformance adapter (`--store postgres`).
 *
 * The harness names a cell's store by a file path (`storePath`, inside the cell's fresh directory).
 * On PostgreSQL a cell's store is a schema of the server at REMIT_PG_URL. The schema's name is kept
 * in a small marker file at `storePath`: the first process to open the path creates a fresh schema
 * name and records it (atomically: link(2) of a finished file), every later process (a restarted
 * adapter after SIGKILL, the k resumers, a resumer in another network namespace, which shares the
 * file system) reads it. A re-run of the same cell gets a new directory, so a new schema: cells and
 * re-runs never see each other's runs.
 *
 * Schemas are dropped by the processes that opened them: the previous cell's when a process opens
 * the next cell (cells of one system run one at a time), the last one when the process shuts down.
 * A test may set REMIT_CONF_PG_TAG to put a tag into every schema name and sweep what is left
 * (`dropTaggedSchemas`), e.g. after a SIGKILL that left nobody to drop a schema.
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresStore, type PostgresStore } from 'remit/postgres';
import type { Store } from 'remit';

export const SCHEMA_PREFIX = 'remit_cf_';
const TAG_PATTERN = /^[a-z0-9]{1,16}$/;
/** Connections per store: k adapter processes share one server (max_connections 200). */
const POOL_SIZE = 4;

export class PostgresAdapterConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PostgresAdapterConfigError';
  }
}

/** The server URL from REMIT_PG_URL, or a typed error that says how to get one. */
export function pgUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const url = env.REMIT_PG_URL;
  if (url === undefined || url.length === 0) {
    throw new PostgresAdapterConfigError(
      'the REMIT adapter with --store postgres needs REMIT_PG_URL (bash scripts/pg.sh start; export REMIT_PG_URL="$(bash scripts/pg.sh url)")',
    );
  }
  return url;
}

function schemaTag(env: NodeJS.ProcessEnv = process.env): string {
  const tag = env.REMIT_CONF_PG_TAG;
  if (tag === undefined || tag === '') return '';
  if (!TAG_PATTERN.test(tag)) throw new PostgresAdapterConfigError(`REMIT_CONF_PG_TAG must match ${TAG_PATTERN}, got ${JSON.stringify(tag)}`);
  return `${tag}_`;
}

function quoted(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new PostgresAdapterConfigError(`bad schema name ${JSON.stringify(schema)}`);
  return `"${schema}"`;
}

function readMarker(storePath: string): string {
  const text = fs.readFileSync(storePath, 'utf8');
  let parsed: { store?: unknown; schema?: unknown };
  try {
    parsed = JSON.parse(text) as { store?: unknown; schema?: unknown };
  } catch {
    throw new PostgresAdapterConfigError(`store marker ${storePath} is not JSON (is it a SQLite file from another system?)`);
  }
  if (parsed.store !== 'postgres' || typeof parsed.schema !== 'string') {
    throw new PostgresAdapterConfigError(`store marker ${storePath} does not name a PostgreSQL schema`);
  }
  return parsed.schema;
}

/** The schema of the cell store at `storePath`: recorded in its marker file, created on first use. */
export function schemaForStorePath(storePath: string): string {
  try {
    return readMarker(storePath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const schema = `${SCHEMA_PREFIX}${schemaTag()}${randomBytes(6).toString('hex')}`;
  const draft = `${storePath}.${process.pid}.draft`;
  fs.writeFileSync(draft, `${JSON.stringify({ store: 'postgres', schema })}\n`);
  try {
    fs.linkSync(draft, storePath); // fails if another process recorded a schema first
    return schema;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return readMarker(storePath);
  } finally {
    fs.rmSync(draft, { force: true });
  }
}

async function withClient<T>(url: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'remit-conformance-admin' });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function dropSchemas(url: string, schemas: Iterable<string>): Promise<void> {
  const list = [...schemas];
  if (list.length === 0) return;
  await withClient(url, async (c) => {
    for (const schema of list) await c.query(`DROP SCHEMA IF EXISTS ${quoted(schema)} CASCADE`);
  });
}

/** Drops every conformance schema carrying `tag` (REMIT_CONF_PG_TAG of a finished campaign). */
export async function dropTaggedSchemas(url: string, tag: string): Promise<number> {
  if (!TAG_PATTERN.test(tag)) throw new PostgresAdapterConfigError(`tag must match ${TAG_PATTERN}, got ${JSON.stringify(tag)}`);
  return withClient(url, async (c) => {
    const rows = await c.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, [`${SCHEMA_PREFIX}${tag}\\_%`]);
    for (const r of rows.rows) await c.query(`DROP SCHEMA IF EXISTS ${quoted(r.nspname)} CASCADE`);
    return rows.rows.length;
  });
}

/** The Postgres side of one adapter process: the cell stores it opened, and their clean-up. */
export class PostgresCellStores {
  private readonly opened = new Set<string>();

  constructor(readonly url: string) {}

  static fromEnv(): PostgresCellStores {
    return new PostgresCellStores(pgUrlFromEnv());
  }

  /** Opens the cell store at `storePath`; drops the schemas of earlier cells this process opened. */
  async open(storePath: string): Promise<PostgresStore> {
    const schema = schemaForStorePath(storePath);
    const earlier = [...this.opened].filter((s) => s !== schema);
    await dropSchemas(this.url, earlier);
    for (const s of earlier) this.opened.delete(s);
    this.opened.add(schema);
    return openPostgresStore({ connectionString: this.url, schema, maxConnections: POOL_SIZE, applicationName: `remit-conformance-${process.pid}` });
  }

  /**
   * A copy of one run of the cell store in a side schema, with `corrupted` in place of the stored
   * bytes of record `seq` (written by UPDATE, under the store's feet). The caller closes the copy
   * and calls `drop`.
   */
  async corruptedCopy(storePath: string, runId: string, records: { seq: number; bytes: Uint8Array }[], seq: number, corrupted: Uint8Array): Promise<{ store: Store; drop: () => Promise<void> }> {
    const schema = `${schemaForStorePath(storePath)}_x`;
    await dropSchemas(this.url, [schema]);
    const copy = await openPostgresStore({ connectionString: this.url, schema, maxConnections: 2 });
    for (const r of records) {
      const outcome = await copy.append(runId, r.seq, [r.bytes]);
      if (!outcome.committed) throw new Error(`copying run ${runId} seq ${r.seq} into ${schema}: not committed`);
    }
    await withClient(this.url, (c) =>
      c.query(`UPDATE ${quoted(schema)}.records SET bytes = $1 WHERE run_id = $2 AND seq = $3`, [Buffer.from(corrupted), runId, seq]),
    );
    return { store: copy, drop: () => dropSchemas(this.url, [schema]) };
  }

  /** Drops every schema this process opened (at shutdown). */
  async dropAll(): Promise<void> {
    await dropSchemas(this.url, this.opened);
    this.opened.clear();
  }
}
