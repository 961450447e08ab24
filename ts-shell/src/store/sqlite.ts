/**
 * The embedded store: SQLite through better-sqlite3 12.x, one row per record.
 *
 * - WAL journal, so readers never block the writer and several processes can share one file.
 * - Durable commits by default: `synchronous=FULL` fsyncs the WAL at every commit, so a committed
 *   append survives power loss. `synchronous: 'NORMAL'` (documented option) survives process
 *   crashes (SIGKILL) but may lose the last commits on power loss; it is several times faster.
 * - Every write is one `BEGIN IMMEDIATE` transaction that checks the run's next seq and writes only
 *   if it is the expected one, so of two writers (threads, processes) exactly one commits. The
 *   busy timeout makes a writer wait for the lock instead of failing at once.
 * - The primary key (run_id, seq) is a second guard: no seq can ever be stored twice.
 */

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { StoreError } from '../errors.js';
import { checkBatchSeqs, concatRecords, type StoreClock } from './common.js';
import type { AppendOutcome, ForkOutcome, RunListing, Store, StoredRecord } from './store.js';

export interface SqliteStoreOptions {
  /** 'FULL' (default): durable against power loss. 'NORMAL': durable against process crashes only. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a writer waits for another process's write lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  clock?: StoreClock;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS remit_runs (
  run_id        TEXT PRIMARY KEY,
  next_seq      INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS remit_records (
  run_id          TEXT    NOT NULL,
  seq             INTEGER NOT NULL,
  bytes           BLOB    NOT NULL,
  committed_at_ms INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
`;

type Db = Database.Database;

export class SqliteStore implements Store {
  readonly description: string;
  readonly path: string;
  private readonly db: Db;
  private readonly nowMs: StoreClock;
  private readonly statements;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path === ':memory:' ? path : resolve(path);
    this.description = `sqlite:${this.path}`;
    this.nowMs = options.clock ?? Date.now;
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.db = this.wrap('open', {}, () => {
      if (this.path !== ':memory:') mkdirSync(dirname(this.path), { recursive: true });
      return new Database(this.path, { timeout: busyTimeoutMs });
    });
    this.wrap('open', {}, () => {
      this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
      this.db.transaction(() => this.db.exec(SCHEMA)).immediate();
    });
    this.statements = this.wrap('open', {}, () => ({
      nextSeq: this.db.prepare<[string], { next_seq: number }>('SELECT next_seq FROM remit_runs WHERE run_id = ?'),
      readFrom: this.db.prepare<[string, number], { seq: number; bytes: Buffer; committed_at_ms: number }>(
        'SELECT seq, bytes, committed_at_ms FROM remit_records WHERE run_id = ? AND seq >= ? ORDER BY seq',
      ),
      insertRecord: this.db.prepare('INSERT INTO remit_records (run_id, seq, bytes, committed_at_ms) VALUES (?, ?, ?, ?)'),
      insertRun: this.db.prepare('INSERT INTO remit_runs (run_id, next_seq, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?)'),
      updateRun: this.db.prepare('UPDATE remit_runs SET next_seq = ?, updated_at_ms = ? WHERE run_id = ?'),
      copyPrefix: this.db.prepare(
        'INSERT INTO remit_records (run_id, seq, bytes, committed_at_ms) SELECT ?, seq, bytes, committed_at_ms FROM remit_records WHERE run_id = ? AND seq < ?',
      ),
      listRuns: this.db.prepare<[], { run_id: string; next_seq: number; created_at_ms: number; updated_at_ms: number }>(
        'SELECT run_id, next_seq, created_at_ms, updated_at_ms FROM remit_runs ORDER BY created_at_ms, run_id',
      ),
    }));
  }

  async readLog(runId: string, fromSeq = 0): Promise<Uint8Array> {
    return concatRecords(await this.readRecords(runId, fromSeq));
  }

  async readRecords(runId: string, fromSeq = 0): Promise<StoredRecord[]> {
    return this.wrap('readRecords', { runId }, () =>
      this.statements.readFrom.all(runId, Math.max(0, fromSeq)).map((row) => ({
        seq: row.seq,
        bytes: new Uint8Array(row.bytes),
        committedAtMs: row.committed_at_ms,
      })),
    );
  }

  async append(runId: string, expectedSeq: number, records: Uint8Array[]): Promise<AppendOutcome> {
    checkBatchSeqs(this.description, runId, expectedSeq, records);
    const appendTx = this.db.transaction((): AppendOutcome => {
      const nextSeq = this.statements.nextSeq.get(runId)?.next_seq ?? 0;
      if (nextSeq !== expectedSeq) return { committed: false, nextSeq };
      if (records.length === 0) return { committed: true, nextSeq };
      const now = this.nowMs();
      records.forEach((bytes, i) => this.statements.insertRecord.run(runId, expectedSeq + i, bytes, now));
      const newNext = expectedSeq + records.length;
      if (expectedSeq === 0) this.statements.insertRun.run(runId, newNext, now, now);
      else this.statements.updateRun.run(newNext, now, runId);
      return { committed: true, nextSeq: newNext };
    });
    return this.wrap('append', { runId, seq: expectedSeq }, () => appendTx.immediate());
  }

  async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array): Promise<ForkOutcome> {
    checkBatchSeqs(this.description, targetRunId, prefixRecords, [forkRecord]);
    const forkTx = this.db.transaction((): ForkOutcome => {
      if (this.statements.nextSeq.get(targetRunId) !== undefined) return { committed: false, reason: 'TARGET_EXISTS' };
      const sourceNext = this.statements.nextSeq.get(sourceRunId)?.next_seq ?? 0;
      if (sourceNext < prefixRecords || sourceNext === 0) return { committed: false, reason: 'SOURCE_TOO_SHORT' };
      const now = this.nowMs();
      this.statements.copyPrefix.run(targetRunId, sourceRunId, prefixRecords);
      this.statements.insertRecord.run(targetRunId, prefixRecords, forkRecord, now);
      this.statements.insertRun.run(targetRunId, prefixRecords + 1, now, now);
      return { committed: true };
    });
    return this.wrap('fork', { runId: sourceRunId, seq: prefixRecords }, () => forkTx.immediate());
  }

  async listRuns(): Promise<RunListing[]> {
    return this.wrap('listRuns', {}, () =>
      this.statements.listRuns.all().map((row) => ({
        runId: row.run_id,
        nextSeq: row.next_seq,
        createdAtMs: row.created_at_ms,
        updatedAtMs: row.updated_at_ms,
      })),
    );
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** Run a synchronous database step; any driver error becomes a StoreError with its SQLite code. */
  private wrap<T>(operation: string, subject: { runId?: string; seq?: number }, step: () => T): T {
    try {
      return step();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const code = (error as { code?: unknown }).code;
      throw new StoreError(this.description ?? 'sqlite', operation, typeof code === 'string' ? code : 'SQLITE_ERROR', subject, error);
    }
  }
}

export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(path, options);
}
