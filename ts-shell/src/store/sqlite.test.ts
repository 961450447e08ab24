import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { enableWal, SQLITE_SCHEMA_VERSION, SqliteStore } from './sqlite.js';
import type { Store } from './store.js';
import { describeStoreContract, outcomeOf, testRecord } from '../testing/store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = () => join(dir, `contract-${n++}.db`);

function concatBytes(parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((p) => [...p]));
}

/** A hand edit of a run's hint (sqlite3 on the file), on a connection of its own. */
async function writeStatusHint(store: Store, runId: string, value: string): Promise<void> {
  const db = new Database((store as SqliteStore).path);
  try {
    expect(db.prepare('UPDATE remit_runs SET status = ? WHERE run_id = ?').run(value, runId).changes).toBe(1);
  } finally {
    db.close();
  }
}

describeStoreContract('sqlite', () => new SqliteStore(freshPath()), {
  openSecondHandle: (store) => new SqliteStore((store as SqliteStore).path),
  writeStatusHint,
});

describeStoreContract('sqlite synchronous=NORMAL', () => new SqliteStore(freshPath(), { synchronous: 'NORMAL' }), {
  openSecondHandle: (store) => new SqliteStore((store as SqliteStore).path, { synchronous: 'NORMAL' }),
  writeStatusHint,
});

describe('sqlite specifics', () => {
  describe('switching a file to WAL at open (enableWal)', () => {
    // SQLite takes the lock for the switch without its busy handler, so processes opening one new
    // file together got SQLITE_BUSY from open (seen under load: 2 of 320 opens by 8 processes at
    // once); the store waits for it as for any lock, up to the busy timeout.
    const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const fakeDb = (failures: Error[]) => {
      let calls = 0;
      return {
        get calls() { return calls; },
        pragma(text: string) {
          expect(text).toBe('journal_mode = WAL');
          calls++;
          const failure = failures.shift();
          if (failure !== undefined) throw failure;
          return 'wal';
        },
      };
    };
    it('tries again while the lock is taken, then succeeds', () => {
      const db = fakeDb([busy(), busy(), busy()]);
      enableWal(db as never, 1000);
      expect(db.calls).toBe(4);
    });
    it('gives up with SQLITE_BUSY once the busy timeout has passed', () => {
      const db = fakeDb(Array.from({ length: 1000 }, busy));
      const started = Date.now();
      expect(() => enableWal(db as never, 60)).toThrow(/database is locked/);
      expect(Date.now() - started).toBeLessThan(1000);
    });
    it('does not retry any other error', () => {
      const db = fakeDb([Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' })]);
      expect(() => enableWal(db as never, 1000)).toThrow(/disk I\/O error/);
      expect(db.calls).toBe(1);
    });
  });

  it('keeps committed records across close and reopen', async () => {
    const path = freshPath();
    const first = new SqliteStore(path);
    await first.append('run', 0, [testRecord(0), testRecord(1)]);
    const before = await first.readLog('run');
    await first.close();
    const second = new SqliteStore(path);
    expect(await second.readLog('run')).toEqual(before);
    expect(await second.append('run', 2, [testRecord(2)])).toEqual({ committed: true, nextSeq: 3 });
    await second.close();
  });

  it('uses WAL and FULL synchronous by default, NORMAL on request', async () => {
    const path = freshPath();
    const store = new SqliteStore(path);
    const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    await store.close();
    const normal = new SqliteStore(path, { synchronous: 'NORMAL' });
    expect((normal as unknown as { db: import('better-sqlite3').Database }).db.pragma('synchronous', { simple: true })).toBe(1);
    await normal.close();
  });

  it('reports a closed database as a StoreError naming the operation', async () => {
    const store = new SqliteStore(freshPath());
    await store.close();
    await expect(store.readLog('run')).rejects.toBeInstanceOf(StoreError);
  });

  it('lists runs with the next seq and last commit time derived from the records', async () => {
    let now = 1000;
    const store = new SqliteStore(freshPath(), { clock: () => now });
    await store.append('a', 0, [testRecord(0)]);
    now = 2000;
    await store.append('b', 0, [testRecord(0), testRecord(1)]);
    now = 3000;
    await store.append('a', 1, [testRecord(1)]);
    expect(await store.listRuns()).toEqual([
      { runId: 'a', nextSeq: 2, createdAtMs: 1000, updatedAtMs: 3000, statusHint: null },
      { runId: 'b', nextSeq: 2, createdAtMs: 2000, updatedAtMs: 2000, statusHint: null },
    ]);
    now = 4000;
    expect(await store.fork('a', 1, 'c', testRecord(1, 'fork'))).toEqual({ committed: true });
    expect((await store.listRuns()).find((r) => r.runId === 'c')).toEqual({ runId: 'c', nextSeq: 2, createdAtMs: 4000, updatedAtMs: 4000, statusHint: null });
    await store.close();
  });

  it('opens a file of the previous layout (next_seq kept in remit_runs) and keeps its records', async () => {
    const path = freshPath();
    const old = new Database(path);
    old.exec(`
      CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, next_seq INTEGER NOT NULL, created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL);
      CREATE TABLE remit_records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, committed_at_ms INTEGER NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;`);
    old.prepare('INSERT INTO remit_runs VALUES (?, ?, ?, ?)').run('run', 2, 500, 600);
    old.prepare('INSERT INTO remit_records VALUES (?, ?, ?, ?)').run('run', 0, testRecord(0), 500);
    old.prepare('INSERT INTO remit_records VALUES (?, ?, ?, ?)').run('run', 1, testRecord(1), 600);
    old.close();
    const store = new SqliteStore(path);
    expect(await store.readLog('run')).toEqual(concatBytes([testRecord(0), testRecord(1)]));
    expect(await store.listRuns()).toEqual([{ runId: 'run', nextSeq: 2, createdAtMs: 500, updatedAtMs: 600, statusHint: null }]);
    expect(await store.append('run', 2, [testRecord(2)])).toEqual({ committed: true, nextSeq: 3 });
    const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    expect((db.pragma('table_info(remit_runs)') as { name: string }[]).map((c) => c.name)).toEqual(['run_id', 'created_at_ms', 'status']);
    expect(await store.listRunsToRecover()).toEqual(['run']);
    await store.close();
  });

  it('upgrades a schema-4 file in place: the index of the runs to recover lists a hint that is not a status; records and hints are kept', async () => {
    const path = freshPath();
    const v4 = new Database(path);
    v4.exec(`
      CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL, status TEXT);
      CREATE TABLE remit_records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, committed_at_ms INTEGER NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
      CREATE TABLE remit_summaries (run_id TEXT PRIMARY KEY, record_count INTEGER NOT NULL, byte_length INTEGER NOT NULL, snapshot_seq INTEGER NOT NULL, summary BLOB NOT NULL) WITHOUT ROWID;
      CREATE INDEX remit_runs_to_recover ON remit_runs (created_at_ms, run_id) WHERE status IS NULL OR status = 'running';
      PRAGMA user_version = 4;`);
    const hints: [string, string | null][] = [['running', 'running'], ['done', 'completed'], ['unknown', null], ['bogus', 'bogus'], ['parked', 'parked']];
    hints.forEach(([runId, status], i) => {
      v4.prepare('INSERT INTO remit_runs VALUES (?, ?, ?)').run(runId, 100 + i, status);
      for (const seq of [0, 1]) v4.prepare('INSERT INTO remit_records VALUES (?, ?, ?, ?)').run(runId, seq, testRecord(seq, runId), 100 + i);
    });
    v4.prepare('INSERT INTO remit_summaries VALUES (?, ?, ?, ?, ?)').run('done', 2, 40, 1, Buffer.from([7, 7]));
    // What the old index lists: the hint that is not a status is left out.
    expect(v4.prepare(`SELECT run_id FROM remit_runs INDEXED BY remit_runs_to_recover WHERE status IS NULL OR status = 'running' ORDER BY created_at_ms, run_id`).pluck().all()).toEqual(['running', 'unknown']);
    v4.close();
    const store = new SqliteStore(path);
    expect(await store.listRunsToRecover()).toEqual(['running', 'unknown', 'bogus']);
    expect(await store.readStatusHint('bogus')).toEqual({ statusHint: null, statusHintInvalid: 'bogus', recordCount: 2 });
    expect((await store.listRuns()).map((r) => [r.runId, r.statusHint])).toEqual(hints.map(([runId, status]) => [runId, status === 'bogus' ? null : status]));
    for (const [runId] of hints) expect((await store.readRecords(runId)).map((r) => r.bytes)).toEqual([testRecord(0, runId), testRecord(1, runId)]);
    expect((await store.readSummary('done'))?.summary).toEqual({ recordCount: 2, byteLength: 40, snapshotSeq: 1, summary: new Uint8Array([7, 7]) });
    const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    const index = db.prepare(`SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'remit_runs_to_recover'`).pluck().get() as string;
    expect(index).toContain(`status IS NULL OR status NOT IN ('parked', 'completed', 'failed')`);
    // The list is read through the index, not by a scan of every run.
    const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT run_id FROM remit_runs WHERE status IS NULL OR status NOT IN ('parked', 'completed', 'failed') ORDER BY created_at_ms, run_id`).all() as { detail: string }[];
    expect(plan.map((p) => p.detail).join('; ')).toMatch(/USING (COVERING )?INDEX remit_runs_to_recover/);
    await store.close();
  });

  it('reads a hint stored as a blob or a number by hand as unknown, and lists its run', async () => {
    const path = freshPath();
    const store = new SqliteStore(path);
    await store.append('blob', 0, [testRecord(0)], undefined, 'completed');
    await store.append('number', 0, [testRecord(0)], undefined, 'failed');
    const raw = new Database(path);
    raw.prepare('UPDATE remit_runs SET status = ? WHERE run_id = ?').run(Buffer.from('completed'), 'blob');
    raw.prepare('UPDATE remit_runs SET status = ? WHERE run_id = ?').run(3n, 'number'); // an INTEGER: TEXT affinity stores '3'
    raw.close();
    expect(await store.listRunsToRecover()).toEqual(['blob', 'number']);
    expect(await store.readStatusHint('blob')).toEqual({ statusHint: null, statusHintInvalid: `x'${Buffer.from('completed').toString('hex')}' (9 bytes)`, recordCount: 1 });
    expect(await store.readStatusHint('number')).toEqual({ statusHint: null, statusHintInvalid: '3', recordCount: 1 });
    await store.close();
  });

  it('reopens a file of the current layout without rewriting it, and creates the tables in a file that has the version but not the tables', async () => {
    const path = freshPath();
    const first = new SqliteStore(path);
    expect(await first.append('run', 0, [testRecord(0)])).toEqual({ committed: true, nextSeq: 1 });
    await first.close();
    const again = new SqliteStore(path);
    expect(await again.readLog('run')).toEqual(testRecord(0));
    expect(await again.append('run', 1, [testRecord(1)])).toEqual({ committed: true, nextSeq: 2 });
    await again.close();
    // Another program's file that happens to carry the version: the tables are still created.
    const foreign = freshPath();
    const other = new Database(foreign);
    other.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
    other.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
    other.close();
    const store = new SqliteStore(foreign);
    expect(await store.append('run', 0, [testRecord(0)])).toEqual({ committed: true, nextSeq: 1 });
    expect(await store.listRuns()).toEqual([expect.objectContaining({ runId: 'run', nextSeq: 1 })]);
    await store.close();
  });

  it('one-record appends: a stale, a future and a first-record seq are refused or handled as batches', async () => {
    const store = new SqliteStore(freshPath());
    expect(outcomeOf(await store.append('run', 1, [testRecord(1)]))).toEqual({ committed: false, nextSeq: 0, tail: [] });
    expect(await store.append('run', 0, [testRecord(0)])).toEqual({ committed: true, nextSeq: 1 });
    expect(await store.append('run', 1, [testRecord(1)])).toEqual({ committed: true, nextSeq: 2 });
    expect(outcomeOf(await store.append('run', 1, [testRecord(1, 'again')]))).toEqual({ committed: false, nextSeq: 2, tail: [{ seq: 1, bytes: testRecord(1) }] });
    expect(outcomeOf(await store.append('run', 3, [testRecord(3)]))).toEqual({ committed: false, nextSeq: 2, tail: [] });
    expect((await store.readRecords('run')).map((r) => r.seq)).toEqual([0, 1]);
    expect((await store.listRuns()).map((r) => r.runId)).toEqual(['run']);
    await store.close();
  });
});

describe('sqlite: batch sizes around the multi-row insert chunk (64 rows)', () => {
  it('stores batches of 2, 63, 64, 65 and 130 records byte for byte, in order', async () => {
    const store = new SqliteStore(freshPath());
    const written: Uint8Array[] = [];
    let seq = 0;
    for (const size of [1, 2, 63, 64, 65, 130, 1]) {
      const batch = Array.from({ length: size }, (_, i) => testRecord(seq + i, `b${size}-${i}`));
      expect(await store.append('run', seq, batch)).toEqual({ committed: true, nextSeq: seq + size });
      written.push(...batch);
      seq += size;
    }
    const stored = await store.readRecords('run');
    expect(stored.map((r) => r.seq)).toEqual(written.map((_, i) => i));
    expect(stored.map((r) => r.bytes)).toEqual(written);
    await store.close();
  });
});

describe('sqlite: processes racing on one file', () => {
  const exec = promisify(execFile);
  const child = fileURLToPath(new URL('../../test-support/sqlite-race.child.ts', import.meta.url));

  it('four writer processes appending to one run: every seq stored once, by the writer told it committed', async () => {
    const path = freshPath();
    const target = 3000;
    const writers = ['w0', 'w1', 'w2', 'w3'];
    const startAtMs = String(Date.now() + 3000);
    const outputs = await Promise.all(
      writers.map((w) => exec(process.execPath, ['--import', import.meta.resolve('tsx'), child, path, 'race', w, String(target), startAtMs], { env: { ...process.env, NODE_NO_WARNINGS: '1' } })),
    );
    const claimed = new Map<number, string>();
    for (const { stdout } of outputs) {
      const { writer, committed } = JSON.parse(stdout.trim()) as { writer: string; committed: number[] };
      for (const seq of committed) {
        expect(claimed.has(seq), `seq ${seq} reported committed by ${claimed.get(seq)} and ${writer}`).toBe(false);
        claimed.set(seq, writer);
      }
    }
    const store = new SqliteStore(path);
    const stored = await store.readRecords('race');
    await store.close();
    expect(stored.map((r) => r.seq)).toEqual(stored.map((_, i) => i));
    expect(stored.length).toBeGreaterThanOrEqual(target);
    expect(claimed.size).toBe(stored.length);
    const perWriter = writers.map((w) => [...claimed.values()].filter((x) => x === w).length);
    console.log('records committed per writer:', perWriter.join(' '));
    for (const r of stored) {
      const payload = new TextDecoder().decode(r.bytes.subarray(12, r.bytes.length - 4));
      expect(payload).toBe(`${claimed.get(r.seq)}:${r.seq}`);
    }
  });
});

describe('sqlite reads (property): readRun and a refused append agree with readSummary and readRecords', () => {
  // A history of appends (some carrying a summary whose snapshot seq is any seq already written,
  // 0 included), removals of the last record, and refused appends at stale or future seqs.
  const step = fc.oneof(
    fc.record({ op: fc.constant('append' as const), count: fc.integer({ min: 1, max: 3 }), summaryAt: fc.option(fc.nat(), { nil: undefined }) }),
    fc.record({ op: fc.constant('removeLast' as const) }),
    fc.record({ op: fc.constant('refused' as const), offset: fc.integer({ min: -3, max: 2 }).filter((d) => d !== 0) }),
  );

  it('readRun is readSummary beside the records from its snapshot seq (or all of them); a refused append reports readRecords from its seq', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 12 }), async (steps) => {
        const store = new SqliteStore(':memory:');
        let next = 0;
        for (const s of steps) {
          if (s.op === 'append') {
            const records = Array.from({ length: s.count }, (_, i) => testRecord(next + i));
            const count = next + s.count;
            const summary = s.summaryAt === undefined ? undefined
              : { recordCount: count, byteLength: 1, snapshotSeq: s.summaryAt % count, summary: Uint8Array.of(count, s.summaryAt % 251) };
            expect((await store.append('run', next, records, summary)).committed).toBe(true);
            next = count;
          } else if (s.op === 'removeLast') {
            if (next === 0) continue;
            const last = (await store.readRecords('run', next - 1))[0]!;
            if (await store.removeLastRecord('run', next - 1, last.bytes)) next -= 1;
          } else {
            const at = next + s.offset;
            if (at < 1) continue;
            const outcome = await store.append('run', at, [testRecord(at, 'lost')]);
            expect(outcome.committed).toBe(false);
            expect(outcome.nextSeq).toBe(next);
            expect(outcome.committed ? null : outcome.tail).toEqual(at < next ? await store.readRecords('run', at) : []);
          }
          const found = await store.readSummary('run');
          expect(await store.readRun('run')).toEqual({ found, records: await store.readRecords('run', found?.summary.snapshotSeq ?? 0) });
        }
        await store.close();
      }),
      { numRuns: 150 },
    );
  });
});
