/**
 * The embedded store: SQLite through better-sqlite3 12.x, one row per record.
 *
 * - WAL journal, so readers never block the writer and several processes can share one file.
 * - Durable commits by default: `synchronous=FULL` fsyncs the WAL at every commit, so a committed
 *   append survives power loss. `synchronous: 'NORMAL'` (documented option) survives process
 *   crashes (SIGKILL) but may lose the last commits on power loss; it is several times faster.
 * - The run's next seq is never stored: it is one more than the largest seq of the run's records,
 *   read through the primary key (run_id, seq) with one index seek. So an append writes only its
 *   records; no per-run row is rewritten at every step.
 * - A one-record append to an existing run is one statement, `INSERT … SELECT … WHERE max(seq) =
 *   expectedSeq - 1`. SQLite takes the write lock before the statement reads anything, so the
 *   check and the insert are one atomic step across connections and processes. Every other write
 *   (a batch, a run's first records, a fork) is one `BEGIN IMMEDIATE` transaction that reads the
 *   next seq and writes only if it is the expected one. A call waits for another connection's
 *   lock instead of failing at once, on timers and up to busyTimeoutMs (waitOutLocks), and so does
 *   an open that switches a new file to WAL (enableWal, inside the open: it is synchronous).
 * - A refused append reports the records in the way (AppendOutcome.tail), read with the next seq
 *   in one read transaction (inside the immediate one for a batch).
 * - The primary key is a second guard: no seq can ever be stored twice.
 * - `remit_runs` holds one row per run, written once with its first records (or its fork): the
 *   creation time that `listRuns` reports. Its next seq and last commit time come from the records.
 *   Its `status` is the sequencer's status hint, rewritten (in the append's transaction) only by
 *   the batches that change it, so a step writes nothing more; a partial index on the runs whose
 *   hint is not parked, completed or failed (running, unknown: NULL, or a value that is not a
 *   status, written by hand) makes `listRunsToRecover` cost what it returns. An index on
 *   (created_at_ms, run_id), remit_runs_by_creation, makes a page of `listRunsPage` cost its
 *   page, and `listRuns` read in that order without sorting.
 * - The layout's version is kept in REMIT's own table `remit_schema`, never in `PRAGMA
 *   user_version`, which belongs to the program whose file REMIT may share (SQLITE_SCHEMA_VERSION).
 */

import { accessSync, constants, existsSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { describeThrown, OptionInvalidError, RemitError, StoreError, StoreNotFoundError } from '../errors.js';
import { ensureDirectory } from '../files.js';
import { allKeysOf, notKnown, unknownKey } from '../known-keys.js';
import {
  bytesEqual, checkBatchSeqs, checkCorrections, checkPageArguments, checkReadArguments, checkRunStatus, checkStoredRunId, clockFailed, concatRecords, isStorableRunId,
  readPageNow, RECOVERY_CANDIDATE_SQL, statusHintOf, checkedClock, storedRecordBytes, storedSummaryBytes, type KeyedListing, type ListingScan, type NotBytes, type StoreClock,
} from './common.js';
import { internalTimers, sleepInternally } from '../timers.js';
import type {
  AppendOutcome, ForkOutcome, RecoverySummary, RunListing, RunRead, RunStatusCorrection, RunStatusHint, Store, StoredRecord, StoredStatusHint,
} from './store.js';

export interface SqliteStoreOptions {
  /** 'FULL' (default): durable against power loss. 'NORMAL': durable against process crashes only. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a writer waits for another process's write lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * true (default): create the file (and its folder) when it does not exist, and migrate an older
   * layout. false: a missing file is a StoreNotFoundError, and nothing is created (for tools that
   * only read, so that a mistyped path is an error instead of a new, empty store); a file of an
   * older layout is refused (StoreError SCHEMA_VERSION), never migrated (layoutNotMigrated).
   */
  create?: boolean;
  clock?: StoreClock;
}

const SQLITE_STORE_OPTIONS = allKeysOf<SqliteStoreOptions>()('synchronous', 'busyTimeoutMs', 'create', 'clock');

/**
 * The version of the layout below, kept in REMIT's own table remit_schema (one row), never in
 * SQLite's `PRAGMA user_version`: a file REMIT shares with another program (`remit run` adds its
 * tables to another program's database) leaves that number to the program. Releases before this
 * one kept it there: version 1 (or 0) kept next_seq in remit_runs; version 3 had no status column
 * in remit_runs; version 4's index of the runs to recover held only the hints running and NULL (a
 * hint that is not a status was left out of it). What such a file needs is read from its layout
 * (migrate), not from that number, which a host may have changed.
 */
export const SQLITE_SCHEMA_VERSION = 5;

const RECOVERY_INDEX_SQL = `CREATE INDEX remit_runs_to_recover ON remit_runs (created_at_ms, run_id) WHERE ${RECOVERY_CANDIDATE_SQL}`;

/**
 * The index listRunsPage reads (and listRuns, in its order): every run by creation time, then run
 * id. Not part of the layout's version: a file without it is read and written alike (a page then
 * scans and sorts remit_runs), and releases that do not know it keep it up to date and never drop
 * it, so making it in a file of layout 5 needs no new version, which would lock those releases
 * out of the file (checkLayoutNotNewer). An open that may write makes it (migrate).
 */
const PAGING_INDEX_SQL = 'CREATE INDEX remit_runs_by_creation ON remit_runs (created_at_ms, run_id)';
const PAGING_INDEX_CHANGE = 'create the index remit_runs_by_creation (of runs by creation time, which listRunsPage reads)';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS remit_schema (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS remit_runs (
  run_id        TEXT    PRIMARY KEY,
  created_at_ms INTEGER NOT NULL,
  status        TEXT
);
CREATE TABLE IF NOT EXISTS remit_records (
  run_id          TEXT    NOT NULL,
  seq             INTEGER NOT NULL,
  bytes           BLOB    NOT NULL,
  committed_at_ms INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS remit_summaries (
  run_id        TEXT    PRIMARY KEY,
  record_count  INTEGER NOT NULL,
  byte_length   INTEGER NOT NULL,
  snapshot_seq  INTEGER NOT NULL,
  summary       BLOB    NOT NULL
) WITHOUT ROWID;
`;

type Db = Database.Database;

/**
 * A run's listing, written with its first records (or its fork), in their transaction. No record
 * of the run exists then, so a listing already there (a run whose records were removed by hand:
 * NO_RECORDS) is stale and is replaced, and so is its recovery summary: kept, it would describe
 * the old records to every fresh process reading the new run (a BAD_LINK refusal at its seq).
 */
function replaceListing(statements: ReturnType<typeof prepareStatements>, runId: string, now: number, runStatus: RunStatusHint | undefined): void {
  statements.deleteSummary.run(runId);
  statements.insertRun.run(runId, now, runStatus ?? null);
}

/**
 * `journal_mode = WAL`, waiting (up to the busy timeout) while another connection holds the lock
 * the switch needs. Switching a new file to WAL takes an exclusive lock that SQLite does not wait
 * for with the busy handler: processes opening one new file at the same moment (a service's workers
 * starting together) got SQLITE_BUSY from `open`, found by a test of four writer processes under
 * load. A file already in WAL mode needs no such lock: the first try succeeds.
 */
export function enableWal(db: { pragma(source: string): unknown }, busyTimeoutMs: number): void {
  // The monotonic clock, as REMIT loaded it: a wall clock frozen or set back (a test's fake Date,
  // an NTP step) kept the thread blocked past busyTimeoutMs, for as long as the lock was held.
  const deadline = internalTimers.monotonicNow() + busyTimeoutMs;
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 50)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || internalTimers.monotonicNow() + pauseMs > deadline) throw error;
      sleepBlocking(pauseMs);
    }
  }
}

/** Blocks the thread for `ms` (opening a store is synchronous, as SQLite's own busy wait is). */
function sleepBlocking(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * better-sqlite3 is loaded when the first SQLite store opens, not when 'remit' is imported: a
 * service on PostgreSQL or memory never loads the native module (and starts faster).
 */
let betterSqlite3: { Database: typeof Database; addon: object | undefined } | undefined;
function loadBetterSqlite3(): { Database: typeof Database; addon: object | undefined } {
  if (betterSqlite3 === undefined) {
    const require = createRequire(import.meta.url);
    const packageJson = require.resolve('better-sqlite3/package.json');
    betterSqlite3 = { Database: require('better-sqlite3') as typeof Database, addon: installedAddon(require, dirname(packageJson)) };
  }
  return betterSqlite3;
}

/**
 * better-sqlite3's native addon where its install puts it (`build/Release/better_sqlite3.node`,
 * built or downloaded), or undefined when it is not there or does not load. Given to the
 * connection as `nativeBinding`: otherwise better-sqlite3 finds it with the `bindings` package,
 * which works out the caller's folder from a stack trace and tries one candidate path after
 * another, about 1-2 ms of a fresh process's first open (half of it; `new Database` alone measured
 * 2.2-3.8 ms cold against 0.9-1.5 ms with the addon given). Undefined leaves that search to
 * better-sqlite3, which then reports a missing or broken addon in its own words.
 */
export function installedAddon(require: (id: string) => unknown, packageDir: string): object | undefined {
  const file = join(packageDir, 'build', 'Release', 'better_sqlite3.node');
  try {
    if (!statSync(file).isFile()) return undefined;
    const addon = require(file);
    return addon !== null && typeof addon === 'object' ? addon : undefined;
  } catch {
    return undefined;
  }
}

/** A better-sqlite3 connection to `path` with the addon found once per process (installedAddon). */
function openDatabase(path: string, options: Database.Options): Database.Database {
  const { Database: Connection, addon } = loadBetterSqlite3();
  // better-sqlite3 takes the addon object itself as nativeBinding (lib/database.js); its type
  // declarations list only a path.
  return new Connection(path, addon === undefined ? options : { ...options, nativeBinding: addon as unknown as string });
}

/** Rows per multi-row INSERT (4 parameters each, far below SQLite's 32766-parameter limit). */
const MAX_ROWS_PER_INSERT = 64;
/**
 * `summary` and `bytes` are unknown: a BLOB column keeps whatever storage class a hand edit writes
 * into it (`CAST(bytes AS TEXT)`, a number), and better-sqlite3 returns it as a string or a number.
 * Every read goes through storedRecordBytes / storedSummaryBytes (common.ts).
 */
type SummaryRow = { record_count: number; byte_length: number; snapshot_seq: number; summary: unknown };
type StoredRow = { seq: number; bytes: unknown; committed_at_ms: number };
type ListingRow = { run_id: string; created_at_ms: number; last_seq: number | null; updated_at_ms: number | null; status: unknown };
/** A listing's place in remit_runs_by_creation: its created_at_ms as stored (a hand edit may make it REAL) and its run id. */
type PagingKey = readonly [createdAtMs: number, runId: string];

/** A run's listing as listRuns and listRunsPage read it: its row, its next seq and last commit time from its records. */
const LISTING_COLUMNS = `r.run_id, r.created_at_ms, r.status,
  (SELECT max(seq) FROM remit_records x WHERE x.run_id = r.run_id) AS last_seq,
  (SELECT committed_at_ms FROM remit_records x WHERE x.run_id = r.run_id ORDER BY seq DESC LIMIT 1) AS updated_at_ms`;
/** `status` is unknown: a hand edit may have stored any value (TEXT affinity keeps blobs as they are). */
type HintRow = { status: unknown; last_seq: number | null };

/**
 * Every statement the store runs, each prepared at its first use and kept for the connection.
 * Lazily because preparing them all costs about a millisecond at open, on the critical path of a
 * fresh process that resumes one run and needs a few of them (bench/README.md, resume suite).
 */
function prepareStatements(db: Db) {
  return preparedOnFirstUse({
    lastSeq: () => db.prepare<[string], number | null>('SELECT max(seq) FROM remit_records WHERE run_id = ?').pluck(),
    readFrom: () => db.prepare<[string, number], StoredRow>(
      'SELECT seq, bytes, committed_at_ms FROM remit_records WHERE run_id = ? AND seq >= ? ORDER BY seq',
    ),
    readFromAtMost: () => db.prepare<[string, number, number], StoredRow>(
      'SELECT seq, bytes, committed_at_ms FROM remit_records WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?',
    ),
    insertRecord: () => db.prepare<[string, number, Uint8Array, number]>(
      'INSERT INTO remit_records (run_id, seq, bytes, committed_at_ms) VALUES (?, ?, ?, ?)',
    ),
    /** Inserts only when the run's last seq is the one given last (the conditional append). */
    insertAfterLast: () => db.prepare<[string, number, Uint8Array, number, string, number]>(
      'INSERT INTO remit_records (run_id, seq, bytes, committed_at_ms) SELECT ?, ?, ?, ? ' +
        'WHERE (SELECT max(seq) FROM remit_records WHERE run_id = ?) = ?',
    ),
    readSummary: () => db.prepare<[string], SummaryRow>('SELECT record_count, byte_length, snapshot_seq, summary FROM remit_summaries WHERE run_id = ?'),
    writeSummary: () => db.prepare<[string, number, number, number, Uint8Array]>(
      'INSERT OR REPLACE INTO remit_summaries (run_id, record_count, byte_length, snapshot_seq, summary) VALUES (?, ?, ?, ?, ?)',
    ),
    deleteSummary: () => db.prepare<[string]>('DELETE FROM remit_summaries WHERE run_id = ?'),
    /** Deletes the record only while it is a BLOB holding exactly the bytes given (removeLastRecord). */
    deleteRecord: () => db.prepare<[string, number, Uint8Array]>(
      "DELETE FROM remit_records WHERE run_id = ? AND seq = ? AND typeof(bytes) = 'blob' AND bytes = ?",
    ),
    /**
     * The listing written with a run's first record (or a fork's), in its transaction: no record of
     * the run exists then, so a listing already there is stale (records removed by hand) and is replaced.
     */
    insertRun: () => db.prepare<[string, number, RunStatusHint | null]>(
      'INSERT INTO remit_runs (run_id, created_at_ms, status) VALUES (?, ?, ?) ' +
        'ON CONFLICT (run_id) DO UPDATE SET created_at_ms = excluded.created_at_ms, status = excluded.status',
    ),
    writeStatus: () => db.prepare<[RunStatusHint | null, string]>('UPDATE remit_runs SET status = ? WHERE run_id = ?'),
    /** Replaces the hint only while the run's last seq is the one given last (a correction). */
    correctStatus: () => db.prepare<[RunStatusHint, string, string, number]>(
      'UPDATE remit_runs SET status = ? WHERE run_id = ? AND (SELECT max(seq) FROM remit_records WHERE run_id = ?) = ?',
    ),
    /** Through the partial index remit_runs_to_recover: the same condition, and its order. */
    runsToRecover: () => db.prepare<[], string>(
      `SELECT run_id FROM remit_runs WHERE ${RECOVERY_CANDIDATE_SQL} ORDER BY created_at_ms, run_id`,
    ).pluck(),
    /** One statement, one snapshot: the hint and the run's last seq. */
    readStatusHint: () => db.prepare<[string], HintRow>(
      'SELECT r.status, (SELECT max(seq) FROM remit_records x WHERE x.run_id = r.run_id) AS last_seq FROM remit_runs r WHERE r.run_id = ?',
    ),
    copyPrefix: () => db.prepare<[string, string, number]>(
      'INSERT INTO remit_records (run_id, seq, bytes, committed_at_ms) SELECT ?, seq, bytes, committed_at_ms FROM remit_records WHERE run_id = ? AND seq < ?',
    ),
    /** Runs with records and no listing row (deleted by hand): through the records' primary key. */
    unlistedRuns: () => db.prepare<[], string>(
      'SELECT DISTINCT run_id FROM remit_records x WHERE NOT EXISTS (SELECT 1 FROM remit_runs r WHERE r.run_id = x.run_id) ORDER BY run_id',
    ).pluck(),
    /** The listing again, from the run's first record; nothing when it is listed or has no records. */
    relistRun: () => db.prepare<[string, string]>(
      'INSERT INTO remit_runs (run_id, created_at_ms, status) SELECT run_id, committed_at_ms, NULL FROM remit_records ' +
        'WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM remit_runs r WHERE r.run_id = ?) ORDER BY seq LIMIT 1',
    ),
    listRuns: () => db.prepare<[], ListingRow>(`SELECT ${LISTING_COLUMNS} FROM remit_runs r ORDER BY r.created_at_ms, r.run_id`),
    /** listRunsPage's cursor: one lookup through the primary key. */
    listing: () => db.prepare<[string], ListingRow>(`SELECT ${LISTING_COLUMNS} FROM remit_runs r WHERE r.run_id = ?`),
    /** listRunsPage's reads (pageReads), each a range of remit_runs_by_creation from a key, nearest first. */
    listingsFirst: () => db.prepare<[number], ListingRow>(`SELECT ${LISTING_COLUMNS} FROM remit_runs r ORDER BY r.created_at_ms, r.run_id LIMIT ?`),
    listingsAfter: () => db.prepare<[number, string, number], ListingRow>(
      `SELECT ${LISTING_COLUMNS} FROM remit_runs r WHERE (r.created_at_ms, r.run_id) > (?, ?) ORDER BY r.created_at_ms, r.run_id LIMIT ?`,
    ),
    listingsBefore: () => db.prepare<[number, string, number], ListingRow>(
      `SELECT ${LISTING_COLUMNS} FROM remit_runs r WHERE (r.created_at_ms, r.run_id) < (?, ?) ORDER BY r.created_at_ms DESC, r.run_id DESC LIMIT ?`,
    ),
  });
}

/**
 * An object with a property for each maker, computed by the maker at the property's first read
 * and then stored in its place (later reads are plain property reads).
 */
function preparedOnFirstUse<T extends Record<string, () => unknown>>(makers: T): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const out = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const key of Object.keys(makers) as (keyof T & string)[]) {
    Object.defineProperty(out, key, {
      configurable: true,
      enumerable: true,
      get() {
        const value = makers[key]!() as ReturnType<T[typeof key]>;
        Object.defineProperty(out, key, { value, enumerable: true, writable: false, configurable: false });
        return value;
      },
    });
  }
  return out;
}

/** Whether the file holds every one of `tables`. */
function hasTables(db: Db, tables: readonly string[]): boolean {
  const found = db.prepare(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN (${tables.map(() => '?').join(', ')})`).pluck().get(...tables);
  return found === tables.length;
}

/**
 * Whether the file holds a REMIT layout of any version (remit_summaries came later, and migrating
 * an older file adds it): the test a store that must not create applies before it writes.
 */
function isRemitFile(db: Db): boolean {
  return hasTables(db, ['remit_runs', 'remit_records']);
}

/**
 * A store that must not create leaves an empty file or another program's database as it found it:
 * the layout is looked for on a read-only connection, before the store's own connection sets WAL
 * (persistent), adds tables, or checkpoints another program's WAL when it closes.
 */
function checkRemitFile(description: string, path: string, busyTimeoutMs: number): void {
  // A read-only connection to a WAL database creates `-wal` and `-shm` when they are not there,
  // and cannot remove them when it closes (that takes a checkpoint, a write).
  const walFilesAbsent = !existsSync(`${path}-wal`) && !existsSync(`${path}-shm`);
  const probe = openDatabase(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
  let remit = false;
  try {
    remit = isRemitFile(probe);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_READONLY_ROLLBACK') throw hotJournalError(description, path, error);
    // Not SQLite at all (a text file, a mistyped path to another kind of file): no REMIT database
    // there either, said as for another program's database, not as a store failure.
    if (code !== 'SQLITE_NOTADB') throw error;
    throw new StoreNotFoundError(description, path, 'the file is not a SQLite database (SQLITE_NOTADB), so not a REMIT database; nothing in it was changed');
  } finally {
    probe.close();
    if (!remit && walFilesAbsent) removeProbeWalFiles(path, busyTimeoutMs);
  }
  if (remit) return;
  throw new StoreNotFoundError(description, path,
    'the file is not a REMIT database (it has no remit_records and remit_runs tables: an empty file, or another program\'s database); nothing in it was changed');
}

/**
 * Remove the `-wal` and `-shm` files the read-only probe made beside another program's WAL
 * database, as SQLite removes them: a connection that reads and closes takes the exclusive lock
 * that tells it no other connection has the file open, checkpoints the WAL (empty: the probe made
 * it, so the database file is not written) and deletes both. A process that opened the file
 * meanwhile keeps them (the lock is not granted), as it must: never deleted from outside SQLite.
 * Best effort: a failure leaves them, harmless to the other program.
 */
function removeProbeWalFiles(path: string, busyTimeoutMs: number): void {
  if (!existsSync(`${path}-wal`) && !existsSync(`${path}-shm`)) return;
  try {
    const tidy = openDatabase(path, { fileMustExist: true, timeout: busyTimeoutMs });
    try {
      tidy.pragma('schema_version'); // a read: the connection opens the WAL, so its close cleans up
    } finally {
      tidy.close();
    }
  } catch {
    // Left as they are (see above).
  }
}

/**
 * The file has a hot rollback journal (another program stopped in the middle of a write to it,
 * in rollback mode; a REMIT file is in WAL mode): reading it takes rolling that write back first,
 * a write that a store which must not change the file does not make.
 */
function hotJournalError(description: string, path: string, cause: unknown): StoreError {
  return new StoreError(description, 'open', 'SQLITE_READONLY_ROLLBACK', {}, new Error(
    `the file ${path} has a hot rollback journal (${path}-journal: a program was stopped in the middle of a write to it), so it cannot be read without ` +
      'rolling that write back, which a store opened with create: false does not do; nothing in it was changed: open it once with the program that wrote it ' +
      '(or the sqlite3 shell), which rolls the write back, then again here',
    { cause },
  ));
}

/**
 * A path that names a folder, or another file that is not a regular one (a FIFO, a socket, a
 * device), is refused as what it is, with or without create, before anything is opened; a
 * symbolic link is followed. SQLite would say `unable to open database file` (SQLITE_CANTOPEN) for
 * a folder, which reads as a permission or path problem; it would block forever in the open of a
 * FIFO that no other process writes (the read-only probe of `create: false`), and take `/dev/null`
 * for an empty database whose every commit is thrown away.
 */
function checkRegularFile(description: string, path: string): void {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return; // Not there, or not to be looked at: opening it (or create: false) says which.
  }
  if (stats.isDirectory()) throw new StoreError(description, 'open', 'EISDIR', {}, new Error(`${path} is a folder, not a database file: name the file, e.g. ${join(path, 'remit.db')}`));
  if (stats.isFile()) return;
  const kind = stats.isFIFO() ? 'a FIFO (named pipe)' : stats.isSocket() ? 'a socket' : stats.isCharacterDevice() ? 'a character device' : stats.isBlockDevice() ? 'a block device' : 'not a regular file';
  throw new StoreError(description, 'open', 'NOT_A_FILE', {}, new Error(
    `${path} is ${kind}, not a database file: SQLite would wait on it or lose what it writes to it, so it was not opened; name a regular file (or one yet to be created)`,
  ));
}

/**
 * Why SQLite could not open or write `path` (SQLITE_CANTOPEN, SQLITE_READONLY_DIRECTORY,
 * SQLITE_READONLY at open), read from the permissions of this process (accessSync): which path
 * lacks which access, with the system's code, or undefined when the permissions are not the reason. The first
 * folder on the way that cannot be searched hides everything below it, so it is the one named;
 * then the file (read and write, or the folder's write permission to create it), then the
 * folder's write permission, which SQLite needs to create the -wal and -shm files beside the file,
 * then those files.
 */
function accessProblemOf(path: string): AccessProblem | undefined {
  const folder = dirname(path);
  for (const dir of foldersDownTo(folder)) {
    const code = accessRefusal(dir, constants.X_OK);
    if (code !== undefined) return { code, problem: `no search (x) permission on the folder ${dir}, so ${path} cannot be reached` };
  }
  if (accessRefusal(path, constants.F_OK) !== undefined) {
    const code = accessRefusal(folder, constants.W_OK);
    return code === undefined ? undefined : { code, problem: `no write permission on the folder ${folder}, so the database file ${path} cannot be created in it` };
  }
  const refused = (['read', 'write'] as const)
    .map((access) => ({ access, code: accessRefusal(path, access === 'read' ? constants.R_OK : constants.W_OK) }))
    .filter((r) => r.code !== undefined);
  if (refused.length > 0) return { code: refused[0]!.code!, problem: `no ${refused.map((r) => r.access).join(' or ')} permission on the database file ${path}` };
  for (const suffix of ['-wal', '-shm']) {
    const beside = path + suffix;
    const exists = accessRefusal(beside, constants.F_OK) === undefined;
    const code = exists ? accessRefusal(beside, constants.R_OK | constants.W_OK) : accessRefusal(folder, constants.W_OK);
    if (code === undefined) continue;
    return {
      code,
      problem: exists
        ? `no read and write permission on ${beside}, which SQLite uses beside the database file`
        : `no write permission on the folder ${folder}, where SQLite creates ${basename(beside)} beside the database file`,
    };
  }
  return undefined;
}

/** A missing access: the system's code (EACCES; EROFS for a read-only file system, ...) and which path lacks what. */
interface AccessProblem {
  code: string;
  problem: string;
}

/** The folders from the root down to `folder` (an absolute path), `folder` last. */
function foldersDownTo(folder: string): string[] {
  const out: string[] = [];
  for (let dir = folder; ; dir = dirname(dir)) {
    out.unshift(dir);
    if (dirname(dir) === dir) return out;
  }
}

/** The system's code refusing `mode` on `path` (accessSync, as this process), or undefined when allowed. */
function accessRefusal(path: string, mode: number): string | undefined {
  try {
    accessSync(path, mode);
    return undefined;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : 'EACCES';
  }
}

/** SQLite's codes at open that a missing permission gives, with no word of which path. */
const ACCESS_CODES = new Set(['SQLITE_CANTOPEN', 'SQLITE_READONLY_DIRECTORY', 'SQLITE_READONLY', 'SQLITE_PERM']);

/** The codes of a write the process may not make (accessProblemOf's, or SQLite's own when it found none; SQLITE_READONLY_* too). */
const ACCESS_FAILURES = new Set(['EACCES', 'EPERM', 'EROFS', ...ACCESS_CODES]);

/**
 * A store that must not create fails on a missing file with StoreNotFoundError, and on a file it
 * may not see (a folder it cannot search) with the StoreError of the system's code, so that
 * "permission denied" does not read as "no such file".
 */
function checkFileExists(description: string, path: string): void {
  try {
    statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new StoreNotFoundError(description, path, 'the SQLite file does not exist (check the path, or let the store create it)');
    }
    throw new StoreError(description, 'open', code ?? 'STAT_FAILED', {}, error);
  }
}

/**
 * Bring the file's layout to SQLITE_SCHEMA_VERSION, inside the caller's immediate transaction (so
 * two processes opening one old file migrate it once), after SCHEMA created whatever table was
 * missing. Each step looks at what the file holds, so it is a no-op where it was done already and
 * never trusts a version number a host program may have changed. Version 1 kept a next_seq and an
 * updated_at_ms column in remit_runs, rewritten at every append; both are dropped (they are
 * derived from the records now). Version 4 added the status hint: NULL (unknown) for every run
 * already stored, so each is a recovery candidate until recoverAll has looked at it. Version 5
 * builds the partial index of the candidates with the condition RECOVERY_CANDIDATE_SQL (every hint
 * but parked, completed and failed; version 4's held only running and NULL, so a value that is not
 * a status hid its run); the index holds only candidates, so the rebuild is one pass over
 * remit_runs. Records and hints are never touched. Any open that may write also makes the index
 * listRunsPage reads, remit_runs_by_creation, where it is missing (PAGING_INDEX_SQL: no version).
 *
 * `earlierRelease`: the file has REMIT's tables but no remit_schema, so a release that kept its
 * layout version in `PRAGMA user_version` wrote it. Those releases still read it there: one of
 * them opening this file after a migration would take the new layout for its old one and
 * "migrate" it back (rebuild the narrower index), so such a file that needed a migration and whose
 * user_version is below this layout's gets SQLITE_SCHEMA_VERSION there too, as those releases
 * wrote it. Any other file (another program's, or one whose value is higher) keeps its user_version.
 */
function migrate(db: Db, earlierRelease: boolean): void {
  let changed = false;
  const columns = new Set((db.pragma('table_info(remit_runs)') as { name: string }[]).map((c) => c.name));
  for (const obsolete of ['next_seq', 'updated_at_ms']) {
    if (columns.has(obsolete)) {
      db.exec(`ALTER TABLE remit_runs DROP COLUMN ${obsolete}`);
      changed = true;
    }
  }
  if (!columns.has('status')) {
    db.exec('ALTER TABLE remit_runs ADD COLUMN status TEXT');
    changed = true;
  }
  // SQLite keeps the CREATE statement's text as it was given: any other text is another index.
  if (db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'remit_runs_to_recover'").pluck().get() !== RECOVERY_INDEX_SQL) {
    db.exec('DROP INDEX IF EXISTS remit_runs_to_recover');
    db.exec(RECOVERY_INDEX_SQL);
    changed = true;
  }
  // Not `changed`: an earlier release reading user_version has nothing to undo about this index.
  if (db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'remit_runs_by_creation'").pluck().get() !== PAGING_INDEX_SQL) {
    db.exec('DROP INDEX IF EXISTS remit_runs_by_creation');
    db.exec(PAGING_INDEX_SQL);
  }
  db.prepare('INSERT INTO remit_schema (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version').run(SQLITE_SCHEMA_VERSION);
  if (earlierRelease && changed && (db.pragma('user_version', { simple: true }) as number) < SQLITE_SCHEMA_VERSION) {
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  }
}

/**
 * What a REMIT file's layout holds, read from its tables, columns and index, never from a version
 * number alone (a host may have changed user_version; a hand edit may have dropped the index or a
 * column of a file whose remit_schema says 5).
 */
interface LayoutFound {
  /**
   * The version remit_schema records or, in a file without it (an earlier release kept the version
   * in user_version), the earliest layout its tables, columns and index match: 1 keeps next_seq in
   * remit_runs, 2 has no remit_summaries, 3 no status column, 4 another recovery index than this
   * release's. No index at all is layout 5 with its index dropped by hand (every layout since 4
   * made one), unless user_version says 4 (a layout-4 file whose index was dropped).
   */
  version: number;
  /** Whether remit_schema records the version (false: a file of an earlier release, which kept it in user_version). */
  versionRecorded: boolean;
  /**
   * Whether a layout-5 file's tables, columns or index differ from layout 5's (dropped or changed by
   * hand); a missing version row is not counted. False for an older version (what differs is the
   * migration).
   */
  altered: boolean;
  /** What an open that may write changes to bring it to this release's layout, in words and in order; empty: nothing. */
  changes: string[];
  /**
   * Whether this release reads and writes the file as it is: every table and column it uses is
   * there, and the version is this layout's. Only the version row (a layout-5 file of an earlier
   * release) or the index of the runs to recover (dropped by hand: listRunsToRecover then scans
   * remit_runs) may be missing or other, and the paging index.
   */
  usableAsIs: boolean;
  /**
   * Whether the file has the paging index as this release makes it (PAGING_INDEX_SQL). Not among
   * `changes` (what brings the layout to its version): without it, a file of this layout is used
   * as it is, and an open that may write makes it (a file of the release before holds none).
   */
  pagingIndex: boolean;
}

/** REMIT's tables and its index, as sqlite_schema lists them (one statement: the open's fast path reads it). */
const LAYOUT_OBJECTS_SQL =
  "SELECT type, name, sql FROM sqlite_schema WHERE (type = 'table' AND name IN ('remit_schema', 'remit_runs', 'remit_records', 'remit_summaries')) " +
  "OR (type = 'index' AND name IN ('remit_runs_to_recover', 'remit_runs_by_creation'))";

/** The columns of REMIT's tables in the file (one statement). */
const LAYOUT_COLUMNS_SQL =
  "SELECT m.name AS tableName, c.name AS columnName FROM sqlite_schema m, pragma_table_info(m.name) c " +
  "WHERE m.type = 'table' AND m.name IN ('remit_schema', 'remit_runs', 'remit_records', 'remit_summaries')";

/**
 * The columns each of REMIT's tables has had in every layout (1 to 5, from the migrations): a
 * table of that name without them is not REMIT's (another program's, under REMIT's name), and a
 * migration would fail on it (`no such column: created_at_ms`) or change that program's data.
 */
const REMIT_COLUMNS: ReadonlyMap<string, readonly string[]> = new Map([
  ['remit_schema', ['id', 'version']],
  ['remit_runs', ['run_id', 'created_at_ms']],
  ['remit_records', ['run_id', 'seq', 'bytes', 'committed_at_ms']],
  ['remit_summaries', ['run_id', 'record_count', 'byte_length', 'snapshot_seq', 'summary']],
]);

/** remit_runs of layout 1, the only one with next_seq and updated_at_ms (which a migration drops), beside remit_records. */
const LAYOUT_1_RUNS_COLUMNS = ['run_id', 'next_seq', 'created_at_ms', 'updated_at_ms'];

/**
 * What makes REMIT's tables in the file not a REMIT layout, in words, or undefined: one lacks a
 * column every layout has, or remit_runs has a column of layout 1 (which a migration would drop)
 * without being layout 1's remit_runs beside a remit_records.
 */
function notRemitLayout(tables: ReadonlyMap<string, ReadonlySet<string>>): string | undefined {
  const problems: string[] = [];
  for (const [table, required] of REMIT_COLUMNS) {
    const columns = tables.get(table);
    const missing = columns === undefined ? [] : required.filter((c) => !columns.has(c));
    if (missing.length > 0) problems.push(`${table} has no ${missing.join(', ')}`);
  }
  const runs = tables.get('remit_runs');
  const layout1 = ['next_seq', 'updated_at_ms'].filter((c) => runs?.has(c));
  if (problems.length === 0 && layout1.length > 0) {
    const missing = LAYOUT_1_RUNS_COLUMNS.filter((c) => !runs!.has(c));
    if (missing.length > 0) problems.push(`remit_runs has ${layout1.join(', ')} but no ${missing.join(', ')}, where layout 1's remit_runs has ${LAYOUT_1_RUNS_COLUMNS.join(', ')}`);
    else if (!tables.has('remit_records')) problems.push(`remit_runs has layout 1's ${layout1.join(', ')} but the file has no remit_records`);
  }
  return problems.length === 0 ? undefined : problems.join('; ');
}

/**
 * Tables under REMIT's names that are not a REMIT layout (notRemitLayout) are refused, whatever
 * `create` says, before anything of the file is changed: StoreError SCHEMA_VERSION. Migrating
 * them failed half way (`no such column: created_at_ms`, after a refusal that called them an
 * older layout and advised --create), or dropped another program's `next_seq` column.
 */
function tablesNotRemits(description: string, path: string, tables: ReadonlyMap<string, unknown>, problem: string): StoreError {
  return new StoreError(description, 'open', 'SCHEMA_VERSION', { field: 'schema' }, new Error(
    `the database file ${path}: ${tables.size === 1 ? 'its table' : 'its tables'} ${[...tables.keys()].join(', ')} ${tables.size === 1 ? 'is' : 'are'} not a REMIT layout (${problem}): ` +
      'another program\'s tables under REMIT\'s names, or REMIT\'s altered by hand; nothing in it was changed, and no open migrates such tables: ' +
      'give REMIT a database file of its own (another path), or rename the other program\'s tables',
  ));
}

/**
 * The file's layout (LayoutFound), or undefined for a file without remit_runs and remit_records
 * (new, or another program's). Tables under REMIT's names that are not a REMIT layout are refused
 * (tablesNotRemits).
 */
function layoutOf(db: Db, description: string, path: string): LayoutFound | undefined {
  const objects = new Map(db.prepare<[], { type: string; name: string; sql: unknown }>(LAYOUT_OBJECTS_SQL).all().map((o) => [o.name, o]));
  if (!objects.has('remit_runs') && !objects.has('remit_records') && !objects.has('remit_summaries') && !objects.has('remit_schema')) return undefined;
  const tables = new Map<string, Set<string>>();
  for (const { tableName, columnName } of db.prepare<[], { tableName: string; columnName: string }>(LAYOUT_COLUMNS_SQL).all()) {
    let columns = tables.get(tableName);
    if (columns === undefined) tables.set(tableName, (columns = new Set()));
    columns.add(columnName);
  }
  const problem = notRemitLayout(tables);
  if (problem !== undefined) throw tablesNotRemits(description, path, tables, problem);
  if (!objects.has('remit_runs') || !objects.has('remit_records')) return undefined;
  const stored = objects.has('remit_schema') ? db.prepare('SELECT max(version) FROM remit_schema').pluck().get() : undefined;
  const recorded = typeof stored === 'number' ? stored : undefined;
  const columns = tables.get('remit_runs') ?? new Set<string>();
  const obsolete = ['next_seq', 'updated_at_ms'].filter((c) => columns.has(c));
  const summaries = objects.has('remit_summaries');
  const status = columns.has('status');
  // SQLite keeps the CREATE statement's text as it was given: any other text is another index.
  const index = objects.get('remit_runs_to_recover')?.sql;
  const changes: string[] = [];
  if (obsolete.length > 0) changes.push(`drop remit_runs.${obsolete.join(', ')}`);
  if (!summaries) changes.push('create remit_summaries');
  if (!status) changes.push('add remit_runs.status (the status hint, NULL: unknown)');
  if (index !== RECOVERY_INDEX_SQL) changes.push(`${index === undefined ? 'create' : 'rebuild'} the index remit_runs_to_recover`);
  const altered = changes.length > 0;
  if (recorded !== SQLITE_SCHEMA_VERSION) changes.push(`record version ${SQLITE_SCHEMA_VERSION} in remit_schema`);
  // An index with other text is layout 4's; none at all is layout 5's dropped by hand (layout 4
  // made one too), unless the user_version an earlier release kept says 4.
  const inferred = obsolete.length > 0 ? 1 : !summaries ? 2 : !status ? 3 : index === RECOVERY_INDEX_SQL ? SQLITE_SCHEMA_VERSION
    : index !== undefined ? 4 : recorded === undefined && db.pragma('user_version', { simple: true }) === 4 ? 4 : SQLITE_SCHEMA_VERSION;
  const version = recorded ?? inferred;
  return {
    version, versionRecorded: recorded !== undefined, altered: altered && version === SQLITE_SCHEMA_VERSION, changes,
    usableAsIs: obsolete.length === 0 && summaries && status && version === SQLITE_SCHEMA_VERSION,
    pagingIndex: objects.get('remit_runs_by_creation')?.sql === PAGING_INDEX_SQL,
  };
}

/**
 * A store opened with `create: false` changes no layout: a file older than this release's (or one
 * lacking a table or column it uses) is refused, StoreError SCHEMA_VERSION as for a newer one.
 * Migrating it from a tool that only reads (the CLI's `remit runs`) dropped next_seq from a
 * layout-1 file under a replica of that release still running on it, whose every write then
 * failed (`no such column: next_seq`).
 */
function layoutNotMigrated(description: string, path: string, layout: LayoutFound): StoreError {
  const state = layout.version < SQLITE_SCHEMA_VERSION
    ? `its REMIT layout is older than this library's (file at version ${layout.version}, this library's is ${SQLITE_SCHEMA_VERSION})`
    : `its REMIT layout (version ${layout.version}) lacks what this library reads and writes (altered by hand or by another program)`;
  return new StoreError(description, 'open', 'SCHEMA_VERSION', { field: 'schema' }, new Error(
    `the database file ${path}: ${state}; a store opened with create: false does not migrate it (${layout.changes.join('; ')}), so nothing in it was changed: ` +
      'open it once with create: true (a service\'s open; the CLI with --create), which migrates it' +
      (layout.version < SQLITE_SCHEMA_VERSION ? ', after stopping every process of an older release that uses the file (docs/guide.md, "Upgrading REMIT"); or read it with the release that wrote it' : ''),
  ));
}

/**
 * The layout a migration starts from, for its failure's message (migrationFailed): from which
 * version, or what a layout-5 file lacks: the version row an earlier release did not write (it
 * kept the version in user_version), or what a hand edit dropped or changed.
 */
function layoutMigrated(layout: LayoutFound): string {
  if (layout.version !== SQLITE_SCHEMA_VERSION) return `from version ${layout.version} to ${SQLITE_SCHEMA_VERSION}`;
  const earlier = layout.versionRecorded ? '' : ' of an earlier release: no remit_schema, the version kept in PRAGMA user_version';
  const altered = layout.altered ? `${earlier === '' ? ',' : ';'} altered` : '';
  return `(version ${layout.version}${earlier}${altered})`;
}

/**
 * A file written by a newer release is refused, never changed or "downgraded" (its layout may
 * hold what this release would misread or drop): StoreError SCHEMA_VERSION, as the PostgreSQL
 * store refuses a newer schema.
 */
function checkLayoutNotNewer(description: string, path: string, version: number | undefined): void {
  if (version === undefined || version <= SQLITE_SCHEMA_VERSION) return;
  throw new StoreError(description, 'open', 'SCHEMA_VERSION', { field: 'schema' }, new Error(
    `the database file ${path}: its REMIT layout is newer than this library (file at version ${version}, this library knows up to ${SQLITE_SCHEMA_VERSION}); ` +
      'nothing in it was changed: open it with the REMIT release that wrote it, or a later one',
  ));
}

export class SqliteStore implements Store {
  readonly description: string;
  readonly path: string;
  private readonly db: Db;
  private readonly nowMs: StoreClock;
  private readonly statements: ReturnType<typeof prepareStatements>;
  private readonly multiRowInserts = new Map<number, Database.Statement<unknown[]>>();
  private readonly appendBatch: (runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint) => AppendOutcome;
  /** A refused one-statement append's outcome: the records in the way and the next seq, one snapshot. */
  private readonly refusal: (runId: string, expectedSeq: number) => AppendOutcome;
  private readonly readRunTx: (runId: string) => RunRead;
  private readonly readPageTx: (after: string | undefined, limit: number) => RunListing[] | null;
  private readonly readSummaryTx: (runId: string, operation: string) => { summary: RecoverySummary; runStarted: StoredRecord } | null;
  private readonly forkRun: (sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint) => ForkOutcome;
  private readonly removeLast: (runId: string, seq: number, expected: Uint8Array) => boolean;
  private readonly correctStatuses: (corrections: readonly RunStatusCorrection[]) => number;
  /**
   * The database file the store opened (none for ":memory:"): its device and inode, and its path
   * with every symbolic link resolved, which is where SQLite keeps its -wal and -shm.
   */
  private readonly opened: OpenedFile | undefined;
  /** Set by close(): every later call is StoreError CLOSED, as the memory and PostgreSQL stores give. */
  private closed = false;
  /** How long a call waits for another connection's lock (waitOutLocks). */
  private readonly busyTimeoutMs: number;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    // Every check below comes before the file system is touched (resolve() only computes).
    if (typeof path !== 'string' || path === '') throw new OptionInvalidError('path', path, 'must be the path of the SQLite file (or ":memory:")');
    // SQLite takes a path as a C string: it would end at the first NUL and open another file
    // (`/x/a\u0000b.db` opens `/x/a`), so a path holding one names no file the store can open.
    if (path.includes('\u0000')) throw new OptionInvalidError('path', path, 'must not contain a NUL character (\\u0000): SQLite would open the path cut short at it');
    // better-sqlite3 trims the path it is given: REMIT would check one file and SQLite open another
    // (`app.db\n`, read from a config file, created `app.db`). The ends are named as JSON, so that
    // the whitespace shows, even where the message cuts a long path short.
    // Found by trimming (what better-sqlite3 does), not by /\s+$/: that search is quadratic in a long
    // run of whitespace inside the path (100,000 spaces held the event loop for 10 s).
    const leading = path.length - path.trimStart().length;
    const trailing = path.length - path.trimEnd().length;
    if ((leading > 0 || trailing > 0) && path !== ':memory:') {
      const end = leading > 0 ? path.slice(0, leading) : path.slice(path.length - trailing);
      throw new OptionInvalidError('path', path, `must not start or end with whitespace (it ${leading > 0 ? 'starts' : 'ends'} with ${JSON.stringify(end)}): better-sqlite3 trims it and would open another file than the one named; nothing was created`);
    }
    if (options === null || typeof options !== 'object') throw new OptionInvalidError('options', options, 'must be an object of SQLite store options, or nothing');
    const unknown = unknownKey(options, SQLITE_STORE_OPTIONS);
    if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as Record<string, unknown>)[unknown], notKnown('an option of the SQLite store', SQLITE_STORE_OPTIONS));
    const busyTimeoutMs = options.busyTimeoutMs === undefined ? 5000 : options.busyTimeoutMs;
    // Refused before the file is touched: an unknown value must not silently mean FULL, nor a
    // timeout SQLite cannot take (its busy_timeout is a 32-bit count of milliseconds).
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 0x7fff_ffff) {
      throw new OptionInvalidError('busyTimeoutMs', busyTimeoutMs, `must be a whole number of milliseconds from 0 to ${0x7fff_ffff}`);
    }
    const synchronous = options.synchronous === undefined ? 'FULL' : options.synchronous;
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL') throw new OptionInvalidError('synchronous', synchronous, 'must be "FULL" or "NORMAL"');
    // Only true and false: any other value (a string 'no' or 'false', 0) is neither, and taken as
    // true it would create the file a tool meant only to read.
    const create = options.create === undefined ? true : options.create;
    if (typeof create !== 'boolean') throw new OptionInvalidError('create', create, 'must be true or false (default true)');
    const clock = checkedClock(options.clock);
    this.path = path === ':memory:' ? path : resolve(path);
    this.description = `sqlite:${this.path}`;
    this.nowMs = reportingFailure(clock);
    if (this.path !== ':memory:') checkRegularFile(this.description, this.path);
    if (!create && this.path !== ':memory:') {
      checkFileExists(this.description, this.path);
      this.wrap('open', {}, () => checkRemitFile(this.description, this.path, busyTimeoutMs));
    }
    this.db = this.wrap('open', {}, () => {
      if (this.path !== ':memory:' && create) ensureDirectory(dirname(this.path));
      return openDatabase(this.path, { timeout: busyTimeoutMs, fileMustExist: !create });
    });
    // A failed open (a full disk: SQLITE_FULL, SQLITE_IOERR_SHMSIZE; a lock held past the busy
    // timeout) closes the connection it made: left open, each one kept its file descriptors (the
    // file's and the -shm's) until garbage collection, so a service retrying its open piled them up.
    try {
      this.opened = this.openConnection(busyTimeoutMs, synchronous, create);
      // From here on a lock is waited out on timers, not inside a call (waitOutLocks).
      this.busyTimeoutMs = busyTimeoutMs;
      this.db.pragma('busy_timeout = 0');
    } catch (error) {
      try {
        this.db.close();
      } catch {
        // The open's own error is the one to report.
      }
      throw error;
    }
    const statements = this.wrap('open', {}, () => prepareStatements(this.db));
    this.statements = statements;
    const appendTx = this.db.transaction((runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): AppendOutcome => {
      const nextSeq = nextSeqOf(statements.lastSeq.get(runId));
      if (nextSeq !== expectedSeq) {
        // A refused first record: the run exists, and its records would be the whole log (store.ts, AppendOutcome).
        if (expectedSeq === 0) return { committed: false, nextSeq };
        return { committed: false, nextSeq, tail: nextSeq > expectedSeq ? this.recordsFrom(runId, expectedSeq, 'append') : [] };
      }
      if (records.length === 0) return { committed: true, nextSeq };
      const now = this.nowMs();
      this.insertRows(runId, expectedSeq, records, now);
      if (expectedSeq === 0) replaceListing(statements, runId, now, runStatus);
      else if (runStatus !== undefined) statements.writeStatus.run(runStatus, runId);
      if (summary !== undefined && summary.recordCount <= expectedSeq + records.length) {
        statements.writeSummary.run(runId, summary.recordCount, summary.byteLength, summary.snapshotSeq, summary.summary);
      }
      return { committed: true, nextSeq: expectedSeq + records.length };
    });
    this.appendBatch = appendTx.immediate;
    this.refusal = this.db.transaction((runId: string, expectedSeq: number): AppendOutcome => {
      const tail = this.recordsFrom(runId, expectedSeq, 'append');
      const nextSeq = tail.length > 0 ? tail[tail.length - 1]!.seq + 1 : nextSeqOf(statements.lastSeq.get(runId));
      return { committed: false, nextSeq, tail };
    }).deferred;
    // One snapshot: the cursor through the primary key, then pageReads' ranges of remit_runs_by_creation.
    this.readPageTx = this.db.transaction((after: string | undefined, limit: number): RunListing[] | null => {
      const cursor = after === undefined ? undefined : statements.listing.get(after);
      if (after !== undefined && cursor === undefined) return null;
      return readPageNow(cursor && keyedListing(cursor), limit, (scan) => scanListings(statements, scan).map(keyedListing));
    }).deferred;
    this.readRunTx = this.db.transaction((runId: string): RunRead => {
      const found = this.readSummaryTx(runId, 'readRun');
      return { found, records: this.recordsFrom(runId, found?.summary.snapshotSeq ?? 0, 'readRun') };
    }).deferred;
    // A summary column that is not a BLOB is a bad summary (storedSummaryBytes: ignored, deleted
    // by repair); a record 0 that is not one is damage (RECORD_NOT_BYTES).
    this.readSummaryTx = this.db.transaction((runId: string, operation: string) => {
      const row = statements.readSummary.get(runId);
      const first = row === undefined ? undefined : statements.readFrom.get(runId, 0);
      if (row === undefined || first === undefined || first.seq !== 0) return null;
      return {
        summary: { recordCount: row.record_count, byteLength: row.byte_length, snapshotSeq: row.snapshot_seq, summary: storedSummaryBytes(row.summary) },
        runStarted: { seq: 0, bytes: storedRecordBytes(this.description, operation, runId, 0, first.bytes, storageClassOf), committedAtMs: first.committed_at_ms },
      };
    }).deferred;
    const forkTx = this.db.transaction((sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): ForkOutcome => {
      if (statements.lastSeq.get(targetRunId) !== null) return { committed: false, reason: 'TARGET_EXISTS' };
      const sourceNext = nextSeqOf(statements.lastSeq.get(sourceRunId));
      if (sourceNext < prefixRecords || sourceNext === 0) return { committed: false, reason: 'SOURCE_TOO_SHORT' };
      const now = this.nowMs();
      statements.copyPrefix.run(targetRunId, sourceRunId, prefixRecords);
      statements.insertRecord.run(targetRunId, prefixRecords, forkRecord, now);
      replaceListing(statements, targetRunId, now, runStatus);
      return { committed: true };
    });
    this.forkRun = forkTx.immediate;
    const removeTx = this.db.transaction((runId: string, seq: number, expected: Uint8Array): boolean => {
      // Record 0 is never removed (store.ts, removeLastRecord).
      if (seq === 0 || statements.lastSeq.get(runId) !== seq) return false;
      const row = statements.readFrom.get(runId, seq);
      if (row === undefined) return false;
      // A record stored as TEXT or a number is damage, never a torn record to remove: it would
      // compare equal to the empty or zero-filled bytes a misreading gave (RECORD_NOT_BYTES).
      if (!bytesEqual(storedRecordBytes(this.description, 'removeLastRecord', runId, seq, row.bytes, storageClassOf), expected)) return false;
      // The delete checks the stored value again (a BLOB holding `expected`); under the write
      // lock it cannot have changed, so it always deletes here, and the summary and hint go with it.
      const deleted = statements.deleteRecord.run(runId, seq, expected).changes === 1;
      if (!deleted) return false;
      statements.deleteSummary.run(runId);
      statements.writeStatus.run(null, runId);
      return true;
    });
    this.removeLast = removeTx.immediate;
    // One immediate transaction: the record counts are read under the write lock, and one commit
    // (one fsync) covers every correction.
    this.correctStatuses = this.db.transaction((corrections: readonly RunStatusCorrection[]): number => {
      let written = 0;
      for (const c of corrections) {
        if (Number.isInteger(c.recordCount) && c.recordCount >= 1) written += statements.correctStatus.run(c.runStatus, c.runId, c.runId, c.recordCount - 1).changes;
      }
      return written;
    }).immediate;
  }

  /**
   * Set the connection up (busy timeout, WAL, synchronous, the layout) and return the file it
   * opened: every write checks the path still names it (checkSameFile). `create` false: the layout
   * is never changed (layoutNotMigrated).
   */
  private openConnection(busyTimeoutMs: number, synchronous: string, create: boolean): OpenedFile | undefined {
    this.wrap('open', {}, () => {
      this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      // A newer layout is refused before anything of the file is changed (WAL, tables).
      const layout = layoutOf(this.db, this.description, this.path);
      checkLayoutNotNewer(this.description, this.path, layout?.version);
      // Refused before WAL is set: a store that must not create changes nothing of such a file.
      if (!create && layout !== undefined && !layout.usableAsIs) throw layoutNotMigrated(this.description, this.path, layout);
      enableWal(this.db, busyTimeoutMs);
      this.db.pragma(`synchronous = ${synchronous}`);
      // A file already at this layout needs neither the schema's statements nor the write lock
      // they take (about a millisecond of a fresh process's open). The version is written in the
      // transaction that creates or migrates the tables. What is checked is what the file holds
      // (layoutOf), so an index dropped by hand is rebuilt and a status column dropped is added
      // again (NULL: every run a candidate until recoverAll has looked), never trusted to be there.
      // The paging index alone missing (a file of the release before) is made by the same
      // transaction as a migration (migrate), by an open that may write.
      if (layout !== undefined && layout.changes.length === 0 && (layout.pagingIndex || !create)) return;
      // A file this release uses as it is (a layout-5 file of an earlier release, which has no
      // remit_schema yet; an index dropped by hand) is read as it is by a store that must not
      // change it, and when it cannot be written (a read-only backup, a user who may only read):
      // the version row and the index are written by the first open that can write.
      if (!create && layout !== undefined) return;
      try {
        this.db.transaction(() => {
          // Read again under the write lock: another process may have migrated the file meanwhile.
          checkLayoutNotNewer(this.description, this.path, layoutOf(this.db, this.description, this.path)?.version);
          const earlierRelease = !hasTables(this.db, ['remit_schema']) && isRemitFile(this.db);
          this.db.exec(SCHEMA);
          migrate(this.db, earlierRelease);
        }).immediate();
      } catch (error) {
        if (layout?.usableAsIs === true && isReadonlyError(error)) return;
        // The paging index alone, with another connection holding the write lock past the busy
        // timeout: the file is used as it is (pages then scan the runs table), as an earlier
        // release opened it, and the next open that takes the lock makes the index.
        if (layout?.usableAsIs === true && layout.changes.length === 0 && isBusyError(error)) return;
        // A new file's tables (no layout yet) fail as any open does.
        if (layout === undefined || (error instanceof StoreError && error.storeCode === 'SCHEMA_VERSION')) throw error;
        throw this.migrationFailed(layout, error, busyTimeoutMs);
      }
    });
    return this.path === ':memory:' ? undefined : this.wrap('open', {}, () => ({ identity: fileIdentityOf(this.path), sqliteFile: realpathSync(this.path) }));
  }

  /**
   * The error of a migration that failed (rolled back: nothing in the file changed), saying it was
   * one, from which version to which and what it was to change, with the failure's own code and
   * cause: a read-only file said only EACCES, another program's view on next_seq only `error in
   * view progress after drop column`, and a replica opening while another process migrated a
   * large file only `database is locked`.
   */
  private migrationFailed(layout: LayoutFound, error: unknown, busyTimeoutMs: number): StoreError {
    const failure = error instanceof StoreError ? error : this.storeErrorOf('open', {}, error);
    const code = failure.storeCode;
    const what = describeThrown(failure.cause ?? failure);
    const advice =
      code.startsWith('SQLITE_BUSY')
        ? `another connection held the write lock for the whole busy timeout (${busyTimeoutMs} ms): another process may be migrating this file, or a backup or the sqlite3 shell may hold it; open again once it is done, or with a larger busyTimeoutMs`
        : ACCESS_FAILURES.has(code) || code.startsWith('SQLITE_READONLY')
          ? 'open it once as a user who may write the file and its folder (the service), which migrates it, or open a writable copy'
          : /error in (view|index|trigger) .* after (drop|add) column/.test(what)
            ? 'another program\'s view, index or trigger in the file uses what the migration changes (named above): drop or change it, then open again'
            : undefined;
    // The paging index, no part of the layout, is named only when it was all there was to make.
    return new StoreError(this.description, 'open', code, {}, new Error(
      `migrating the SQLite layout of the database file ${this.path} ${layoutMigrated(layout)} ` +
        `(to ${(layout.changes.length > 0 ? layout.changes : [PAGING_INDEX_CHANGE]).join('; ')}) failed: ${what}; ` +
        `nothing in the file was changed (the migration is one transaction)${advice === undefined ? '' : `: ${advice}`}`,
      { cause: error },
    ));
  }

  /**
   * Insert `records` at seqs firstSeq.. with multi-row INSERT statements of up to
   * MAX_ROWS_PER_INSERT rows (one statement per chunk instead of one per record: a group of
   * steps costs about a third less), prepared once per row count.
   */
  private insertRows(runId: string, firstSeq: number, records: Uint8Array[], now: number): void {
    for (let start = 0; start < records.length; start += MAX_ROWS_PER_INSERT) {
      const rows = Math.min(MAX_ROWS_PER_INSERT, records.length - start);
      if (rows === 1) {
        this.statements.insertRecord.run(runId, firstSeq + start, records[start]!, now);
        continue;
      }
      let insert = this.multiRowInserts.get(rows);
      if (insert === undefined) {
        insert = this.db.prepare(`INSERT INTO remit_records (run_id, seq, bytes, committed_at_ms) VALUES ${'(?, ?, ?, ?), '.repeat(rows - 1)}(?, ?, ?, ?)`);
        this.multiRowInserts.set(rows, insert);
      }
      const params: unknown[] = new Array(rows * 4);
      for (let i = 0; i < rows; i++) {
        params[i * 4] = runId;
        params[i * 4 + 1] = firstSeq + start + i;
        params[i * 4 + 2] = records[start + i];
        params[i * 4 + 3] = now;
      }
      insert.run(params);
    }
  }

  /**
   * The run's records from `fromSeq` on, as StoredRecords (the caller is inside a transaction or
   * wrap); a record that is not a BLOB is StoreError RECORD_NOT_BYTES, reported by `operation`.
   */
  private recordsFrom(runId: string, fromSeq: number, operation: string, limit?: number): StoredRecord[] {
    const from = Math.max(0, fromSeq);
    const rows = limit === undefined ? this.statements.readFrom.all(runId, from) : this.statements.readFromAtMost.all(runId, from, limit);
    return rows.map((row) => ({
      seq: row.seq,
      bytes: storedRecordBytes(this.description, operation, runId, row.seq, row.bytes, storageClassOf),
      committedAtMs: row.committed_at_ms,
    }));
  }

  async readLog(runId: string, fromSeq = 0): Promise<Uint8Array> {
    // Its own arguments first: a refusal names readLog, the call made.
    checkReadArguments(this.description, 'readLog', runId, fromSeq);
    return concatRecords(await this.readRecords(runId, fromSeq));
  }

  async readRecords(runId: string, fromSeq = 0, limit?: number): Promise<StoredRecord[]> {
    checkReadArguments(this.description, 'readRecords', runId, fromSeq, limit);
    return this.call('readRecords', { runId }, () => this.recordsFrom(runId, fromSeq, 'readRecords', limit));
  }

  async readSummary(runId: string): Promise<{ summary: RecoverySummary; runStarted: StoredRecord } | null> {
    checkStoredRunId(this.description, 'readSummary', runId);
    return this.call('readSummary', { runId }, () => this.readSummaryTx(runId, 'readSummary'));
  }

  async readRun(runId: string): Promise<RunRead> {
    checkStoredRunId(this.description, 'readRun', runId);
    return this.call('readRun', { runId }, () => this.readRunTx(runId));
  }

  async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    checkStoredRunId(this.description, 'append', runId);
    checkBatchSeqs(this.description, runId, expectedSeq, records);
    checkRunStatus(this.description, 'append', runId, runStatus);
    const subject = { runId, seq: expectedSeq };
    if (summary !== undefined || runStatus !== undefined) {
      return this.callWrite('append', subject, () => this.appendBatch(runId, expectedSeq, records, summary, runStatus));
    }
    if (records.length === 1 && expectedSeq > 0) {
      // The common step: one statement, no explicit transaction (see the header comment).
      const inserted = await this.callWrite('append', subject, () =>
        this.statements.insertAfterLast.run(runId, expectedSeq, records[0]!, this.nowMs(), runId, expectedSeq - 1).changes,
      );
      if (inserted === 1) return { committed: true, nextSeq: expectedSeq + 1 };
      return this.call('append', subject, () => this.refusal(runId, expectedSeq));
    }
    return this.callWrite('append', subject, () => this.appendBatch(runId, expectedSeq, records));
  }

  async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    checkStoredRunId(this.description, 'fork', sourceRunId);
    checkStoredRunId(this.description, 'fork', targetRunId);
    checkBatchSeqs(this.description, targetRunId, prefixRecords, [forkRecord], 'fork');
    checkRunStatus(this.description, 'fork', targetRunId, runStatus);
    return this.callWrite('fork', { runId: sourceRunId, seq: prefixRecords }, () => this.forkRun(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus));
  }

  async deleteSummary(runId: string): Promise<void> {
    checkStoredRunId(this.description, 'deleteSummary', runId);
    await this.callWrite('deleteSummary', { runId }, () => this.statements.deleteSummary.run(runId));
  }

  async removeLastRecord(runId: string, seq: number, expected: Uint8Array): Promise<boolean> {
    checkStoredRunId(this.description, 'removeLastRecord', runId);
    return this.callWrite('removeLastRecord', { runId, seq }, () => this.removeLast(runId, seq, expected));
  }

  async listRuns(): Promise<RunListing[]> {
    return this.call('listRuns', {}, () => this.statements.listRuns.all().map(listingOf));
  }

  async listRunsPage(after: string | undefined, limit: number): Promise<RunListing[] | null> {
    checkPageArguments(this.description, after, limit);
    return this.call('listRunsPage', {}, () => (after !== undefined && !isStorableRunId(after) ? null : this.readPageTx(after, limit)));
  }

  async listUnlistedRuns(): Promise<string[]> {
    return this.call('listUnlistedRuns', {}, () => this.statements.unlistedRuns.all());
  }

  async relistRun(runId: string): Promise<boolean> {
    checkStoredRunId(this.description, 'relistRun', runId);
    return this.callWrite('relistRun', { runId }, () => this.statements.relistRun.run(runId, runId).changes === 1);
  }

  async listRunsToRecover(): Promise<string[]> {
    return this.call('listRunsToRecover', {}, () => this.statements.runsToRecover.all());
  }

  async readStatusHint(runId: string): Promise<StoredStatusHint | null> {
    checkStoredRunId(this.description, 'readStatusHint', runId);
    const row = await this.call('readStatusHint', { runId }, () => this.statements.readStatusHint.get(runId));
    return row === undefined ? null : { ...statusHintOf(row.status), recordCount: nextSeqOf(row.last_seq) };
  }

  async correctRunStatuses(corrections: readonly RunStatusCorrection[]): Promise<number> {
    checkCorrections(this.description, corrections);
    if (corrections.length === 0) return 0;
    return this.callWrite('correctRunStatuses', {}, () => this.correctStatuses(corrections));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.db.open) this.db.close();
  }

  /** A read step of a store call (wrap), another connection's lock waited out on timers (waitOutLocks). */
  private call<T>(operation: string, subject: { runId?: string; seq?: number }, step: () => T): Promise<T> {
    return this.waitOutLocks(() => this.wrap(operation, subject, step));
  }

  /** A write step of a store call (write), another connection's lock waited out on timers (waitOutLocks). */
  private callWrite<T>(operation: string, subject: { runId?: string; seq?: number }, step: () => T): Promise<T> {
    return this.waitOutLocks(() => this.write(operation, subject, step));
  }

  /**
   * Run `step`, and while another connection holds the lock it needs (SQLITE_BUSY), run it again
   * after a pause on a timer, until busyTimeoutMs has passed. Why not SQLite's busy handler:
   * better-sqlite3 is synchronous, and the handler sleeps inside the call, so a backup or a
   * sqlite3 shell holding the write lock froze the whole service (its requests, timers and signal
   * handlers) for up to busyTimeoutMs at each write. The connection's busy timeout is 0 once the
   * store is open. Nothing of a refused step was written: SQLITE_BUSY comes from taking the lock
   * (BEGIN IMMEDIATE, or a lone statement's own), and a transaction that fails is rolled back. The
   * first try runs at once, so a store without contention behaves as before.
   */
  private async waitOutLocks<T>(step: () => T): Promise<T> {
    let deadline = Number.POSITIVE_INFINITY;
    for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 50)) {
      try {
        return step();
      } catch (error) {
        if (!(error instanceof StoreError) || !error.storeCode.startsWith('SQLITE_BUSY')) throw error;
        // The clock is read only once a lock is met: a call without contention costs nothing more.
        // A monotonic clock: a step of the wall clock must not cut the wait short or stretch it.
        // Both the clock and the timer as REMIT loaded them: a test's fake timers must not stop the wait.
        if (deadline === Number.POSITIVE_INFINITY) deadline = internalTimers.monotonicNow() + this.busyTimeoutMs;
        if (internalTimers.monotonicNow() >= deadline) throw error;
      }
      await sleepInternally(Math.min(pauseMs, Math.max(1, deadline - internalTimers.monotonicNow())));
    }
  }

  /**
   * A write step: first checks that the path still names the file this connection opened. A file
   * deleted, moved away or replaced (a restore copied over it by rename, a cleanup that removed
   * it) while the store is open leaves this connection writing to a file no one else sees, and
   * gone once it closes: each such commit would be reported committed and then lost. Refused
   * instead, with nothing written: StoreError FILE_REPLACED naming the operation and the run.
   */
  private write<T>(operation: string, subject: { runId?: string; seq?: number }, step: () => T): T {
    return this.wrap(operation, subject, () => {
      this.checkSameFile(operation, subject);
      return step();
    });
  }

  private checkSameFile(operation: string, subject: { runId?: string; seq?: number }): void {
    if (this.opened === undefined || !this.db.open) return;
    const now = identityAtPath(this.path);
    if (now === this.opened.identity) return;
    const problem = fileReplacedProblem(this.path, this.opened, now !== undefined);
    throw new StoreError(this.description, operation, 'FILE_REPLACED', subject, new Error(problem));
  }

  /** Run a synchronous database step; any driver error becomes a StoreError with its SQLite code. */
  private wrap<T>(operation: string, subject: { runId?: string; seq?: number }, step: () => T): T {
    // better-sqlite3 says only "The database connection is not open" (a TypeError without a code,
    // which read as SQLITE_ERROR): a closed store is CLOSED, naming the operation and the run.
    if (this.closed) throw new StoreError(this.description, operation, 'CLOSED', subject, new Error('the store was closed'));
    try {
      return step();
    } catch (error) {
      if (error instanceof RemitError) throw error;
      throw this.storeErrorOf(operation, subject, error);
    }
  }

  /** A driver's error (or the clock's, carried as a ClockFailure) as the StoreError of `operation`, with SQLite's code. */
  private storeErrorOf(operation: string, subject: { runId?: string; seq?: number }, error: unknown): StoreError {
    // The clock threw inside the step (rolled back: nothing written): one code, whatever it threw.
    if (error instanceof ClockFailure) return clockFailed(this.description, operation, subject, error.thrown);
    const code = (error as { code?: unknown }).code;
    if (operation === 'open' && typeof code === 'string' && ACCESS_CODES.has(code) && this.path !== ':memory:') {
      // SQLite names neither the path nor the access it lacks (`unable to open database file`):
      // said here, as the EACCES the store reports for a path it may not look at.
      const found = accessProblemOf(this.path);
      if (found !== undefined) return new StoreError(this.description, operation, found.code, subject, new Error(`${found.problem} (SQLite: ${describeThrown(error)}, ${code})`, { cause: error }));
    }
    return new StoreError(this.description ?? 'sqlite', operation, typeof code === 'string' ? code : 'SQLITE_ERROR', subject, error);
  }
}

function listingOf(row: ListingRow): RunListing {
  return { runId: row.run_id, nextSeq: nextSeqOf(row.last_seq), createdAtMs: row.created_at_ms, updatedAtMs: row.updated_at_ms ?? row.created_at_ms, ...statusHintOf(row.status) };
}

function keyedListing(row: ListingRow): KeyedListing<PagingKey> {
  return { listing: listingOf(row), key: [row.created_at_ms, row.run_id] };
}

/** One of pageReads' reads: a range of remit_runs_by_creation next to a key, nearest first. */
function scanListings(statements: ReturnType<typeof prepareStatements>, { direction, from, count }: ListingScan<PagingKey>): ListingRow[] {
  if (from === undefined) return statements.listingsFirst.all(count);
  return (direction === 'after' ? statements.listingsAfter : statements.listingsBefore).all(from[0], from[1], count);
}

/**
 * What a value better-sqlite3 read from a BLOB column is, when it is not a Buffer: its SQLite
 * storage class (a number may be INTEGER or REAL: JavaScript does not tell 5.0 from 5). A TEXT made
 * by `CAST(bytes AS TEXT)` still holds the record's bytes (the cast reinterprets them, in the
 * UTF-8 database REMIT creates), and `CAST(bytes AS BLOB)` gives them back.
 */
function storageClassOf(value: unknown): NotBytes {
  const cause = 'a hand edit or another program wrote it into the BLOB column';
  const remedy = 'restore the record from a backup';
  if (typeof value === 'string') {
    return { found: 'TEXT', cause, remedy: `${remedy}; a TEXT made by CAST(bytes AS TEXT) still holds its bytes, and UPDATE remit_records SET bytes = CAST(bytes AS BLOB) on that row gives them back` };
  }
  if (typeof value === 'number' || typeof value === 'bigint') return { found: 'a number (INTEGER or REAL)', cause, remedy };
  return { found: value === null || value === undefined ? 'NULL' : typeof value, cause, remedy };
}

/** What the store's clock threw, carried out of the SQLite step to `wrap`, which names the operation and the run. */
class ClockFailure {
  constructor(readonly thrown: unknown) {}
}

/**
 * The store's clock (checkedClock) with a throw of its own carried as a ClockFailure: better-sqlite3
 * rolls the transaction back and rethrows it as it is, and `wrap` reports StoreError CLOCK_FAILED.
 * A reading that is not milliseconds stays the OptionInvalidError checkedClock gives.
 */
function reportingFailure(clock: StoreClock): StoreClock {
  return () => {
    try {
      return clock();
    } catch (error) {
      if (error instanceof RemitError) throw error;
      throw new ClockFailure(error);
    }
  };
}

/** The file a SQLite store opened: its device and inode (fileIdentityOf), and its path with symbolic links resolved. */
interface OpenedFile {
  identity: string;
  sqliteFile: string;
}

/** Which file `path` names: its device and inode (a file replaced by rename or deleted and made again has another). */
function fileIdentityOf(path: string): string {
  const stats = statSync(path, { bigint: true });
  return `${stats.dev}:${stats.ino}`;
}

/** SQLite's answer while another connection holds the lock past the busy timeout (SQLITE_BUSY, SQLITE_BUSY_*). */
function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** An error of SQLite refusing to write a read-only file or folder (SQLITE_READONLY, SQLITE_READONLY_*). */
function isReadonlyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_READONLY');
}

/** Which file `path` names now (fileIdentityOf), undefined when none does (deleted or moved away); another failure (EACCES) is thrown. */
function identityAtPath(path: string): string | undefined {
  try {
    return fileIdentityOf(path);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Where the file a store opened is now: at a path, deleted (no path names it), or not known. */
type OpenedFileNow = { at: string } | 'deleted' | 'unknown';

/**
 * Where the file with `identity` that this process holds open now is, read from /proc/self/fd
 * (Linux): the path of the descriptor's file, or deleted when no link to it is left. 'unknown'
 * elsewhere, or when no descriptor of this process is that file. Only called on a refusal.
 */
function openedFileNow(identity: string): OpenedFileNow {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return 'unknown';
  }
  for (const fd of fds) {
    try {
      const link = `/proc/self/fd/${fd}`;
      const stats = statSync(link, { bigint: true });
      if (`${stats.dev}:${stats.ino}` !== identity) continue;
      return stats.nlink === 0n ? 'deleted' : { at: readlinkSync(link) };
    } catch {
      // A descriptor closed meanwhile, or not one to look at: the next.
    }
  }
  return 'unknown';
}

/**
 * The FILE_REPLACED message: what happened to the path, where the records this store committed
 * are, and what to do, so that following it loses nothing.
 *
 * Why REMIT does not move the records itself: the commits since the last checkpoint are in
 * `<path>-wal`, which SQLite finds by the path, not with the file. A checkpoint through this
 * connection would write them into the file it opened, but it goes through the `-wal` and `-shm`
 * now at the path, which another connection that opened the path since (a restarted service, a
 * restore) shares: their commits would be copied into the old file and truncated out of theirs.
 * Whether one has cannot be known for sure (it may have opened and closed), so the message says
 * what to move or remove, and when.
 */
function fileReplacedProblem(path: string, opened: OpenedFile, replaced: boolean): string {
  const file = opened.sqliteFile;
  if (file !== path && sameFileAt(file, opened.identity)) {
    // Only a symbolic link changed: the file, and its -wal and -shm beside it, are where they were.
    return `${path} named ${file} through a symbolic link when this store opened it, and now ${replaced ? 'names another file' : 'names no file'}: ` +
      `the link was changed, so nothing was written. This store's file is still ${file}, with every commit (its -wal and -shm beside it): ` +
      `close this store (the Remit instance) and open ${file}, or make ${path} name it again (the link changed may be a folder of the path, or a link a link leads to)`;
  }
  const happened = replaced ? 'was replaced by another file (a copy renamed over it, or the file deleted and made again)' : 'was deleted or moved away';
  const wal = `${file}-wal and ${file}-shm`;
  const named = file === path ? `the database file ${path}` : `the database file ${file} (opened as ${path}, through a symbolic link)`;
  const start = `${named} ${happened} since this store opened it, so nothing was written. ` +
    `Its latest commits are in ${wal} (SQLite keeps them by the path, not with the file). Close this store (the Remit instance); then, while no process has ${file} open`;
  const now = openedFileNow(opened.identity);
  if (typeof now === 'object') {
    return `${start}, move ${wal} beside ${now.at} (the file was moved there) as ${now.at}-wal and ${now.at}-shm, and open ${now.at}: SQLite applies them to it` +
      `${replaced ? `; open ${file} only after that (the file now there would otherwise be given them)` : ''}`;
  }
  if (now === 'deleted') {
    return `${start}, remove ${wal}: the file they belong to was ${replaced ? 'replaced' : 'deleted'} and is gone once this store closes, ` +
      `and SQLite would apply them to ${replaced ? 'the file now at the path' : 'any file made at the path later'}; restore the file from a backup if its runs are needed`;
  }
  return `${start}: if the file was moved, move ${wal} beside it under its new name (<new path>-wal, <new path>-shm) and open it there; ` +
    `if it was ${replaced ? 'replaced' : 'deleted'}, remove ${wal} before opening ${file} again (SQLite would apply them to the file there)`;
}

/** Whether `path` still names the file with `identity` (false when it names none or cannot be looked at). */
function sameFileAt(path: string, identity: string): boolean {
  try {
    return fileIdentityOf(path) === identity;
  } catch {
    return false;
  }
}

/** The run's next seq from its largest stored seq (null: no records). */
function nextSeqOf(lastSeq: number | null | undefined): number {
  return lastSeq === null || lastSeq === undefined ? 0 : lastSeq + 1;
}

/**
 * Create the folder of a SQLite file that is yet to be created, with the StoreError the store's
 * own open would give when that fails (the CLI creates the folder first and the file last, after
 * the command's checks, so that a refused command leaves no database).
 */
export function createSqliteFolder(path: string): void {
  try {
    ensureDirectory(dirname(resolve(path)));
    // SQLite writes the file and its -wal and -shm beside it: a folder it cannot write fails here.
    accessSync(dirname(resolve(path)), constants.W_OK);
  } catch (error) {
    if (error instanceof RemitError) throw error;
    const code = (error as { code?: unknown }).code;
    throw new StoreError(`sqlite:${resolve(path)}`, 'open', typeof code === 'string' ? code : 'SQLITE_ERROR', {}, error);
  }
}

export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(path, options);
}
