/**
 * SQLite: REMIT's layout version is kept in a table of its own (remit_schema), not in SQLite's one
 * `PRAGMA user_version`, which another program sharing the file may use. REMIT used to overwrite
 * the host's value (3 became 5), and a host value of 5 or more made it skip its migrations (the
 * index of the runs to recover never made; a schema-3 layout never given its status column: every
 * start failed with "no column named status"). What to migrate is read from the layout present.
 * A file of a newer layout is refused (StoreError SCHEMA_VERSION, as the PostgreSQL store refuses a
 * newer schema), nothing in it changed.
 */

import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { testRecord } from '../testing/store-contract.js';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from './sqlite.js';

const root = mkdtempSync(join(tmpdir(), 'remit-layout-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(root, `f${files++}.db`);

/** A file of another program, with its own table and its own user_version. */
function hostFile(userVersion: number, extra = ''): string {
  const path = freshPath();
  const db = new Database(path);
  db.exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); ${extra} PRAGMA user_version = ${userVersion};`);
  db.close();
  return path;
}

function inspectFile(path: string): { userVersion: unknown; index: unknown; layout: unknown; columns: string[] } {
  const db = new Database(path, { readonly: true });
  try {
    return {
      userVersion: db.pragma('user_version', { simple: true }),
      index: db.prepare(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'remit_runs_to_recover'`).pluck().get(),
      layout: db.prepare(`SELECT count(*) FROM sqlite_schema WHERE name = 'remit_schema'`).pluck().get() === 1 ? db.prepare('SELECT version FROM remit_schema').pluck().get() : undefined,
      columns: (db.pragma('table_info(remit_runs)') as { name: string }[]).map((c) => c.name),
    };
  } finally {
    db.close();
  }
}

describe('the SQLite layout version, kept apart from the host program\'s user_version', () => {
  it('another program\'s user_version (3) is left as it was when REMIT adds its tables', async () => {
    const path = hostFile(3);
    const store = new SqliteStore(path);
    expect(await store.append('r', 0, [testRecord(0)], undefined, 'running')).toEqual({ committed: true, nextSeq: 1 });
    await store.close();
    expect(inspectFile(path)).toEqual({ userVersion: 3, index: 1, layout: SQLITE_SCHEMA_VERSION, columns: ['run_id', 'created_at_ms', 'status'] });
  });

  it('a host user_version of 5 or more does not make REMIT skip its layout: the index of the runs to recover is made', async () => {
    const path = hostFile(9);
    const store = new SqliteStore(path);
    await store.append('r', 0, [testRecord(0)], undefined, 'running');
    expect(await store.listRunsToRecover()).toEqual(['r']);
    await store.close();
    expect(inspectFile(path)).toMatchObject({ userVersion: 9, index: 1, layout: SQLITE_SCHEMA_VERSION });
  });

  it('a schema-3 REMIT layout whose user_version a host set to 7 is migrated (status column added): a start works, it is not wedged', async () => {
    const path = hostFile(7, `
      CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL);
      CREATE TABLE remit_records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, committed_at_ms INTEGER NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
      CREATE TABLE remit_summaries (run_id TEXT PRIMARY KEY, record_count INTEGER NOT NULL, byte_length INTEGER NOT NULL, snapshot_seq INTEGER NOT NULL, summary BLOB NOT NULL) WITHOUT ROWID;
      INSERT INTO remit_runs VALUES ('old', 100);
      INSERT INTO remit_records VALUES ('old', 0, x'00000000000000000000000000000000', 100);`);
    const store = new SqliteStore(path);
    expect(await store.append('new', 0, [testRecord(0)], undefined, 'running')).toEqual({ committed: true, nextSeq: 1 });
    expect(await store.listRunsToRecover()).toEqual(['old', 'new']);
    await store.close();
    expect(inspectFile(path)).toEqual({ userVersion: 7, index: 1, layout: SQLITE_SCHEMA_VERSION, columns: ['run_id', 'created_at_ms', 'status'] });
  });

  it('a schema-4 index under a user_version a host set to 5 is rebuilt from what the layout holds', async () => {
    const path = hostFile(5, `
      CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL, status TEXT);
      CREATE TABLE remit_records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, committed_at_ms INTEGER NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
      CREATE TABLE remit_summaries (run_id TEXT PRIMARY KEY, record_count INTEGER NOT NULL, byte_length INTEGER NOT NULL, snapshot_seq INTEGER NOT NULL, summary BLOB NOT NULL) WITHOUT ROWID;
      CREATE INDEX remit_runs_to_recover ON remit_runs (created_at_ms, run_id) WHERE status IS NULL OR status = 'running';`);
    const store = new SqliteStore(path);
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare(`SELECT sql FROM sqlite_schema WHERE name = 'remit_runs_to_recover'`).pluck().get()).toContain(`NOT IN ('parked', 'completed', 'failed')`);
    db.close();
  });

  it('a file of a newer REMIT layout is refused (SCHEMA_VERSION, naming the file and both versions), nothing in it changed', async () => {
    const path = freshPath();
    const made = new SqliteStore(path);
    await made.append('r', 0, [testRecord(0)]);
    await made.close();
    const raw = new Database(path);
    raw.exec(`UPDATE remit_schema SET version = ${SQLITE_SCHEMA_VERSION + 1}`);
    raw.close();
    const digest = createHash('sha256').update(readFileSync(path)).digest('hex');
    for (const create of [true, false]) {
      const error = (() => {
        try {
          return new SqliteStore(path, { create });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ storeCode: 'SCHEMA_VERSION', operation: 'open', field: 'schema' });
      expect((error as Error).message).toContain(path);
      expect((error as Error).message).toContain(`file at version ${SQLITE_SCHEMA_VERSION + 1}, this library knows up to ${SQLITE_SCHEMA_VERSION}`);
    }
    expect(createHash('sha256').update(readFileSync(path)).digest('hex')).toBe(digest);
  });
});

describe('a file an earlier release left at this layout (user_version 5, no remit_schema)', () => {
  /** Such a file: made by this release, then its remit_schema dropped, as the earlier release wrote it. */
  async function earlierReleaseFile(dir: string): Promise<string> {
    const path = join(dir, 'earlier.db');
    const store = new SqliteStore(path);
    await store.append('r', 0, [testRecord(0)], undefined, 'running');
    await store.close();
    const db = new Database(path);
    db.exec('DROP TABLE remit_schema');
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
    db.close();
    return path;
  }

  it('is read by a user who may not write it (a read-only backup): the version row waits for an open that can write', async () => {
    const dir = mkdtempSync(join(root, 'ro-'));
    chmodSync(root, 0o755);
    chmodSync(dir, 0o777);
    const path = await earlierReleaseFile(dir);
    chmodSync(path, 0o444);
    const sqliteModule = fileURLToPath(new URL('./sqlite.ts', import.meta.url));
    const reader = `const { openSqliteStore } = await import(${JSON.stringify(sqliteModule)});
try { const s = openSqliteStore(process.argv[1], { create: false }); console.log(JSON.stringify({ runs: (await s.listRuns()).map((l) => l.runId) })); await s.close(); }
catch (e) { console.log(JSON.stringify({ storeCode: e.storeCode, message: e.message })); }`;
    const node = [process.execPath, '--import', import.meta.resolve('tsx'), '--input-type=module', '-e', reader, path];
    // Permissions stop every user but root: as root, the reader runs as nobody.
    const [command, ...args] = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...node] : node;
    const result = spawnSync(command!, args, { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_NO_WARNINGS: '1' } });
    expect(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}'), result.stderr).toEqual({ runs: ['r'] });
    expect(inspectFile(path).layout).toBeUndefined();
    // The first open that can write records the version.
    chmodSync(path, 0o644);
    await new SqliteStore(path).close();
    expect(inspectFile(path)).toMatchObject({ layout: SQLITE_SCHEMA_VERSION, userVersion: SQLITE_SCHEMA_VERSION });
  });
});
