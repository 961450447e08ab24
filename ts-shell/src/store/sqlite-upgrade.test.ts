/**
 * SQLite files of older REMIT layouts, as an upgrade meets them (docs/guide.md, "Upgrading REMIT").
 *
 * - A store opened with `create: false` (the CLI's read commands) migrates nothing: `remit runs`
 *   on a layout-1 file dropped next_seq under a replica of that release still running on it, whose
 *   every write then failed. Such a file is refused (StoreError SCHEMA_VERSION, both versions
 *   named), not a byte of it changed; `create: true` migrates it.
 * - A migration that fails says it was one, from which layout to which, keeping the failure's code
 *   and cause: a read-only file (EACCES), another program's view on next_seq, a write lock held
 *   past the busy timeout (SQLITE_BUSY: another process may be migrating the file).
 * - The open reads what the file holds, never only its version: an index of the runs to recover
 *   dropped by hand is rebuilt, a status column dropped is added again (every hint unknown). A
 *   layout-5 file of an earlier release (no remit_schema) whose index was dropped is layout 5, read
 *   as it is by create: false (it was taken for layout 4 and refused by `remit runs`).
 * - Tables under REMIT's names that are not a REMIT layout (another program's remit_runs and
 *   remit_records, or its remit_runs with a next_seq column) are refused, whatever `create` says,
 *   nothing changed: they were called an older layout with --create advised, which then failed
 *   (`no such column: created_at_ms`), or create: true dropped that program's next_seq column.
 * - The status-hint hole after a release without hints wrote to the file: the hint says parked, the
 *   log running, and recoverAll does not see the run; `UPDATE remit_runs SET status = NULL` makes
 *   every run a candidate again (the next recoverAll continues it and corrects the other hints),
 *   and `scrub` finds such a run, which `repair` corrects.
 */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { orderWorkflow, withoutHints } from '../../test-support/hintless-release.js';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { createRemit } from '../remit.js';
import { testRecord } from '../testing/store-contract.js';
import { cliInProcess } from '../../test-support/cli-in-process.js';
import { buildProgram } from '../cli/main.js';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from './sqlite.js';

const root = mkdtempSync(join(tmpdir(), 'remit-sqlite-upgrade-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(root, `f${files++}.db`);
const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

const RECORDS = 'CREATE TABLE remit_records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, committed_at_ms INTEGER NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;';
const SUMMARIES = 'CREATE TABLE remit_summaries (run_id TEXT PRIMARY KEY, record_count INTEGER NOT NULL, byte_length INTEGER NOT NULL, snapshot_seq INTEGER NOT NULL, summary BLOB NOT NULL) WITHOUT ROWID;';
const ONE_RUN = "INSERT INTO remit_records VALUES ('old', 0, x'00', 100);";

/** The layouts earlier releases wrote (every one in WAL mode), each with one run (its record's bytes do not matter here). */
const LAYOUTS: Record<1 | 3 | 4 | '5u', string> = {
  1: `CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, next_seq INTEGER NOT NULL, created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL);
      ${RECORDS} INSERT INTO remit_runs VALUES ('old', 1, 100, 100); ${ONE_RUN}`,
  3: `CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL);
      ${RECORDS} ${SUMMARIES} INSERT INTO remit_runs VALUES ('old', 100); ${ONE_RUN} PRAGMA user_version = 3;`,
  4: `CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL, status TEXT);
      ${RECORDS} ${SUMMARIES}
      CREATE INDEX remit_runs_to_recover ON remit_runs (created_at_ms, run_id) WHERE status IS NULL OR status = 'running';
      INSERT INTO remit_runs VALUES ('old', 100, 'parked'); ${ONE_RUN} PRAGMA user_version = 4;`,
  // Layout 5 as a release before remit_schema wrote it: the version in user_version only.
  '5u': `CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL, status TEXT);
      ${RECORDS} ${SUMMARIES}
      CREATE INDEX remit_runs_to_recover ON remit_runs (created_at_ms, run_id) WHERE status IS NULL OR status NOT IN ('parked', 'completed', 'failed');
      INSERT INTO remit_runs VALUES ('old', 100, NULL); ${ONE_RUN} PRAGMA user_version = 5;`,
};

function layoutFile(version: 1 | 3 | 4 | '5u', extra = ''): string {
  const path = freshPath();
  const db = new Database(path);
  db.exec(`PRAGMA journal_mode = WAL; ${LAYOUTS[version]} ${extra}`);
  db.close();
  return path;
}

const columnsOf = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.pragma('table_info(remit_runs)') as { name: string }[]).map((c) => c.name);
  } finally {
    db.close();
  }
};

const indexOf = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'remit_runs_to_recover'").pluck().get();
  } finally {
    db.close();
  }
};

function openError(path: string, options: ConstructorParameters<typeof SqliteStore>[1] = {}): unknown {
  try {
    new SqliteStore(path, options);
  } catch (error) {
    return error;
  }
  throw new Error(`${path} opened`);
}

describe('create: false never migrates a layout', () => {
  it.each([1, 3, 4] as const)('a layout-%i file is refused (SCHEMA_VERSION, both versions named), not a byte of it changed; create: true migrates it', async (version) => {
    const path = layoutFile(version);
    const before = digest(path);
    const error = openError(path, { create: false });
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'SCHEMA_VERSION', operation: 'open', field: 'schema' });
    const message = (error as Error).message;
    expect(message).toContain(path);
    expect(message).toContain(`file at version ${version}, this library's is ${SQLITE_SCHEMA_VERSION}`);
    expect(message).toContain('nothing in it was changed');
    expect(message).toContain('create: true');
    expect(digest(path)).toBe(before);
    if (version === 1) {
      // The replica of the release that wrote it still writes to it, as it did (it failed with
      // `no such column: next_seq` after a read command had migrated the file).
      const replica = new Database(path);
      replica.prepare("INSERT INTO remit_runs (run_id, next_seq, created_at_ms, updated_at_ms) VALUES ('by-old', 1, 200, 200)").run();
      replica.close();
    }
    const store = new SqliteStore(path);
    expect(await store.append('new', 0, [testRecord(0)], undefined, 'running')).toEqual({ committed: true, nextSeq: 1 });
    await store.close();
    expect(columnsOf(path)).toEqual(['run_id', 'created_at_ms', 'status']);
  });

  it('remit runs (the CLI, create: false) refuses a layout-1 file with that error (exit 8) and leaves it as it was', async () => {
    const path = layoutFile(1);
    const before = digest(path);
    const result = await cliInProcess(root)('runs', '--db', path);
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('open failed (SCHEMA_VERSION)');
    expect(result.stderr).toContain(`file at version 1, this library's is ${SQLITE_SCHEMA_VERSION}`);
    expect(result.stderr).toContain('the CLI with --create');
    expect(digest(path)).toBe(before);
    expect(columnsOf(path)).toContain('next_seq');
  });

  it('the CLI\'s --create says it also migrates an older layout (the SCHEMA_VERSION refusal sends users to it)', () => {
    const create = buildProgram().options.find((o) => o.long === '--create');
    expect(create?.description).toMatch(/create the database if it does not exist, and migrate one of an older REMIT layout/);
  });

  it('a layout-5 file of an earlier release (no remit_schema, user_version 5) whose index was dropped is read as it is, by remit runs too; not a byte changed', async () => {
    const path = layoutFile('5u', 'DROP INDEX remit_runs_to_recover;');
    const before = digest(path);
    const reader = new SqliteStore(path, { create: false });
    expect(await reader.listRunsToRecover()).toEqual(['old']);
    await reader.close();
    const result = await cliInProcess(root)('runs', '--db', path);
    // Listed (its one record is not a real run's: damaged, exit 7), not refused (exit 8).
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^old +damaged/m);
    expect(digest(path)).toBe(before);
    expect(indexOf(path)).toBeUndefined();
    // An open that may write makes the index and records the version.
    const store = new SqliteStore(path);
    expect(await store.listRunsToRecover()).toEqual(['old']);
    await store.close();
    expect(indexOf(path)).toContain("NOT IN ('parked', 'completed', 'failed')");
  });

  it('without remit_schema, an index of other text is layout 4, and so is a missing index when user_version says 4: refused by create: false', () => {
    const replaced = layoutFile('5u', `DROP INDEX remit_runs_to_recover; CREATE INDEX remit_runs_to_recover ON remit_runs (created_at_ms, run_id) WHERE status IS NULL OR status = 'running';`);
    const dropped = layoutFile(4, 'DROP INDEX remit_runs_to_recover;');
    for (const path of [replaced, dropped]) {
      const before = digest(path);
      const error = openError(path, { create: false });
      expect(error).toMatchObject({ storeCode: 'SCHEMA_VERSION', field: 'schema' });
      expect((error as Error).message).toContain(`file at version 4, this library's is ${SQLITE_SCHEMA_VERSION}`);
      expect(digest(path)).toBe(before);
    }
  });
});

describe('tables under REMIT\'s names that are not a REMIT layout are refused, never migrated', () => {
  function otherFile(sql: string): string {
    const path = freshPath();
    const db = new Database(path);
    db.exec(sql);
    db.close();
    return path;
  }

  it.each([false, true])('another program\'s remit_runs and remit_records (create: %s): not called an older layout, --create not advised, nothing changed', (create) => {
    const path = otherFile("CREATE TABLE remit_runs (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE remit_records (a, b); INSERT INTO remit_runs VALUES (1, 'x');");
    const before = digest(path);
    const error = openError(path, { create });
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'SCHEMA_VERSION', operation: 'open', field: 'schema' });
    const message = (error as Error).message;
    expect(message).toContain(`the database file ${path}: its tables remit_runs, remit_records are not a REMIT layout (remit_runs has no run_id, created_at_ms; remit_records has no run_id, seq, bytes, committed_at_ms)`);
    expect(message).toContain('another program\'s tables under REMIT\'s names');
    expect(message).toContain('nothing in it was changed');
    expect(message).not.toContain('older');
    expect(message).not.toContain('--create');
    expect(message).not.toContain('create: true');
    expect(digest(path)).toBe(before);
  });

  it('the CLI with --create on such a file: the same refusal (exit 8), nothing changed', async () => {
    const path = otherFile("CREATE TABLE remit_runs (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE remit_records (a, b);");
    const before = digest(path);
    const result = await cliInProcess(root)('--create', 'runs', '--db', path);
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('are not a REMIT layout');
    expect(result.stderr).not.toContain('no such column');
    expect(digest(path)).toBe(before);
  });

  it('another program\'s remit_runs with a next_seq column, opened with create: true: refused, its next_seq kept (a migration dropped it)', () => {
    const path = otherFile("CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, next_seq INTEGER, created_at_ms INTEGER, note TEXT); INSERT INTO remit_runs VALUES ('k', 7, 1, 'keep me');");
    const before = digest(path);
    const error = openError(path, { create: true });
    expect(error).toMatchObject({ storeCode: 'SCHEMA_VERSION', field: 'schema' });
    expect((error as Error).message).toContain(
      'its table remit_runs is not a REMIT layout (remit_runs has next_seq but no updated_at_ms, where layout 1\'s remit_runs has run_id, next_seq, created_at_ms, updated_at_ms)');
    expect(digest(path)).toBe(before);
    expect(columnsOf(path)).toEqual(['run_id', 'next_seq', 'created_at_ms', 'note']);
  });

  it('a remit_runs of layout 1 without its remit_records is refused too; with it (a layout-1 file) it is migrated', async () => {
    const alone = otherFile('CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, next_seq INTEGER NOT NULL, created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL);');
    expect((openError(alone) as Error).message).toContain('remit_runs has layout 1\'s next_seq, updated_at_ms but the file has no remit_records');
    expect(columnsOf(alone)).toContain('next_seq');
    const store = new SqliteStore(layoutFile(1));
    expect(await store.listRuns()).toHaveLength(1);
    await store.close();
  });
});

describe('a migration that fails says so', () => {
  it('another program\'s view on next_seq: the migration, both versions, SQLite\'s words and what to do; nothing changed', () => {
    const path = layoutFile(1, 'CREATE VIEW progress AS SELECT run_id, next_seq FROM remit_runs;');
    const error = openError(path);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'SQLITE_ERROR', operation: 'open' });
    const message = (error as Error).message;
    expect(message).toContain(`migrating the SQLite layout of the database file ${path} from version 1 to ${SQLITE_SCHEMA_VERSION}`);
    expect(message).toContain('error in view progress after drop column');
    expect(message).toContain('another program\'s view, index or trigger');
    expect(((error as Error).cause as Error).cause).toMatchObject({ code: 'SQLITE_ERROR' });
    expect(columnsOf(path)).toContain('next_seq');
  });

  it('a write lock held past the busy timeout: SQLITE_BUSY saying another process may be migrating the file', () => {
    const path = layoutFile(3);
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const error = openError(path, { busyTimeoutMs: 50 });
      expect(error).toMatchObject({ storeCode: 'SQLITE_BUSY', operation: 'open' });
      expect((error as Error).message).toContain(`migrating the SQLite layout of the database file ${path} from version 3 to ${SQLITE_SCHEMA_VERSION}`);
      expect((error as Error).message).toContain('another process may be migrating this file');
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });

  it('a layout-5 file of an earlier release (no remit_schema) whose version row cannot be written: says what it is, not "altered"', () => {
    const path = layoutFile('5u');
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const error = openError(path, { busyTimeoutMs: 50 });
      expect(error).toMatchObject({ storeCode: 'SQLITE_BUSY', operation: 'open' });
      const message = (error as Error).message;
      expect(message).toContain(
        `migrating the SQLite layout of the database file ${path} (version ${SQLITE_SCHEMA_VERSION} of an earlier release: no remit_schema, the version kept in PRAGMA user_version) (to record version ${SQLITE_SCHEMA_VERSION} in remit_schema) failed`);
      expect(message).not.toContain('altered');
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });

  it('a layout-5 file whose remit_schema says 5 and whose index was dropped by hand: "(version 5, altered)"', async () => {
    const path = freshPath();
    const store = new SqliteStore(path);
    await store.close();
    const db = new Database(path);
    db.exec('DROP INDEX remit_runs_to_recover');
    db.close();
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const error = openError(path, { busyTimeoutMs: 50 });
      expect((error as Error).message).toContain(`${path} (version ${SQLITE_SCHEMA_VERSION}, altered) (to create the index remit_runs_to_recover) failed`);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });

  it('a file the user may not write: EACCES, naming the migration and the permission', () => {
    const dir = mkdtempSync(join(root, 'ro-'));
    chmodSync(root, 0o755);
    chmodSync(dir, 0o777);
    const path = join(dir, 'old.db');
    const db = new Database(path);
    db.exec(`PRAGMA journal_mode = WAL; ${LAYOUTS[3]}`);
    db.close();
    chmodSync(path, 0o444);
    const before = digest(path);
    const sqliteModule = fileURLToPath(new URL('./sqlite.ts', import.meta.url));
    const opener = `const { openSqliteStore } = await import(${JSON.stringify(sqliteModule)});
try { openSqliteStore(process.argv[1]); console.log('{}'); } catch (e) { console.log(JSON.stringify({ storeCode: e.storeCode, message: e.message })); }`;
    const node = [process.execPath, '--import', import.meta.resolve('tsx'), '--input-type=module', '-e', opener, path];
    // Permissions stop every user but root: as root, the opener runs as nobody.
    const [command, ...args] = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...node] : node;
    const result = spawnSync(command!, args, { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_NO_WARNINGS: '1' } });
    const found = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(found.storeCode, result.stderr).toBe('EACCES');
    expect(found.message).toContain(`migrating the SQLite layout of the database file ${path} from version 3 to ${SQLITE_SCHEMA_VERSION}`);
    expect(found.message).toContain(`no write permission on the database file ${path}`);
    expect(found.message).toContain('a user who may write the file');
    expect(digest(path)).toBe(before);
  });
});

describe('the open reads what a layout-5 file holds, not only its version', () => {
  async function currentFile(): Promise<string> {
    const path = freshPath();
    const store = new SqliteStore(path);
    await store.append('a', 0, [testRecord(0)], undefined, 'parked');
    await store.append('b', 0, [testRecord(0)], undefined, 'running');
    await store.close();
    return path;
  }

  it('an index of the runs to recover dropped by hand is rebuilt by an open that may write; create: false reads the file as it is', async () => {
    const path = await currentFile();
    const db = new Database(path);
    db.exec('DROP INDEX remit_runs_to_recover');
    db.close();
    const reader = new SqliteStore(path, { create: false });
    expect(await reader.listRunsToRecover()).toEqual(['b']);
    await reader.close();
    expect(indexOf(path)).toBeUndefined();
    const store = new SqliteStore(path);
    expect(await store.listRunsToRecover()).toEqual(['b']);
    await store.close();
    expect(indexOf(path)).toContain("NOT IN ('parked', 'completed', 'failed')");
  });

  it('a status column dropped by hand is added again (every hint unknown: each run a candidate), not a failure at every write; create: false refuses it, naming the column', async () => {
    const path = await currentFile();
    const db = new Database(path);
    db.exec('DROP INDEX remit_runs_to_recover; ALTER TABLE remit_runs DROP COLUMN status');
    db.close();
    const refused = openError(path, { create: false });
    expect(refused).toMatchObject({ storeCode: 'SCHEMA_VERSION', field: 'schema' });
    expect((refused as Error).message).toContain(`its REMIT layout (version ${SQLITE_SCHEMA_VERSION}) lacks what this library reads and writes`);
    expect((refused as Error).message).toContain('add remit_runs.status');
    const store = new SqliteStore(path);
    expect(await store.listRunsToRecover()).toEqual(['a', 'b']);
    expect(await store.append('c', 0, [testRecord(0)], undefined, 'parked')).toEqual({ committed: true, nextSeq: 1 });
    expect(await store.append('a', 1, [testRecord(1)], undefined, 'completed')).toEqual({ committed: true, nextSeq: 2 });
    expect(await store.listRunsToRecover()).toEqual(['b']);
    await store.close();
    expect(columnsOf(path)).toEqual(['run_id', 'created_at_ms', 'status']);
  });
});

describe('the status-hint hole after a release without hints wrote to the file', () => {
  let failFinish = true;
  const order = orderWorkflow(() => failFinish);

  /** p-0 and p-1 parked (hint parked), then p-0 resumed by the release without hints and left running. */
  async function holedFile(): Promise<string> {
    const path = freshPath();
    failFinish = true;
    const current = await createRemit({ store: new SqliteStore(path), workflows: [order], core: 'reference' });
    for (const runId of ['p-0', 'p-1']) expect((await current.start(order, {}, { runId })).status).toBe('parked');
    await current.close();
    const old = await createRemit({ store: withoutHints(new SqliteStore(path)), workflows: [order], core: 'reference' });
    await expect(old.resume('p-0', 'approve@1', { ok: true })).rejects.toThrow('killed');
    await old.close();
    return path;
  }

  it('recoverAll does not see the run; UPDATE remit_runs SET status = NULL makes every run a candidate, and the next recoverAll continues it and corrects the other hints', async () => {
    const path = await holedFile();
    failFinish = false;
    const remit = await createRemit({ store: new SqliteStore(path), workflows: [order], core: 'reference' });
    expect(await remit.recoverAll()).toEqual([]);
    expect((await remit.status('p-0')).status).toBe('running');
    const db = new Database(path);
    db.exec('UPDATE remit_runs SET status = NULL');
    db.close();
    const outcomes = await remit.recoverAll();
    expect(outcomes.map((o) => o.runId)).toEqual(['p-0']);
    expect((await remit.status('p-0')).status).toBe('completed');
    // p-1 was read, found parked, and its hint written back: the next start-up reads nothing.
    expect(await remit.scrub('p-1')).toMatchObject({ statusHint: 'parked', statusHintAgrees: true });
    const store = new SqliteStore(path, { create: false });
    expect(await store.listRunsToRecover()).toEqual([]);
    await store.close();
    await remit.close();
  });

  it('scrub finds the run (its hint parked, its log running), and repair corrects the hint, after which recoverAll continues it', async () => {
    const path = await holedFile();
    failFinish = false;
    const remit = await createRemit({ store: new SqliteStore(path), workflows: [order], core: 'reference' });
    expect(await remit.scrub('p-0')).toMatchObject({ statusHint: 'parked', logStatus: 'running', statusHintAgrees: false });
    expect(await remit.repair('p-0')).toMatchObject({ statusHintCorrected: 'running' });
    expect((await remit.recoverAll()).map((o) => o.runId)).toEqual(['p-0']);
    expect((await remit.status('p-0')).status).toBe('completed');
    await remit.close();
  });
});
