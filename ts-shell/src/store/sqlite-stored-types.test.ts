/**
 * A value of the wrong SQLite type in a blob column (a hand edit with the sqlite3 CLI:
 * `UPDATE remit_records SET bytes = CAST(bytes AS TEXT) ...`) is store damage, reported as such.
 *
 * - A record's `bytes` that is TEXT, INTEGER or REAL is a StoreError RECORD_NOT_BYTES naming the
 *   run and the seq, from every read (status, inspect, scrub, repair, continueRun, recoverAll, the
 *   store's own reads). It is never read as an empty or zero-filled record (a torn record
 *   `repair` would remove), and no removal deletes it.
 * - A summary's `summary` that is not a BLOB is a bad summary like any other: a fresh process
 *   ignores it, scrub says it disagrees, repair deletes it; the records are untouched.
 *
 * The runs are made through the library (createRemit, workflow, openSqliteStore); the damage is
 * made on a connection of its own, as an operator would.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRemit } from '../remit.js';
import { END, workflow } from '../workflow/workflow.js';
import { StoreError } from '../errors.js';
import { testRecord } from '../testing/test-record.js';
import { openSqliteStore, type SqliteStore } from './sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-sqlite-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = () => join(dir, `types-${n++}.db`);

/**
 * `steps` pure steps, then a park at `approve`, then END. Each pure step is its own append
 * (groupPureSteps: false below), so the run has steps + 3 records when parked (RUN_STARTED, the
 * steps' NODE_COMPLETED, the last one's, INTERRUPT_PARKED) and a long one gets a stored summary.
 */
const counter = workflow({ name: 'counter', version: '1', state: z.object({ n: z.number().int(), limit: z.number().int(), approved: z.boolean().optional() }) })
  .pure('count', {
    run: (s) => ({ n: s.n + 1 }),
    next: (s) => (s.n >= s.limit ? 'approve' : 'count'),
  })
  .interrupt('approve', {
    resume: z.object({ ok: z.boolean() }),
    apply: (_s, v) => ({ approved: v.ok }),
    next: END,
  })
  .build();

async function parkedRun(limit: number) {
  const path = freshPath();
  const store = openSqliteStore(path);
  const remit = await createRemit({ store, workflows: [counter], core: 'reference', groupPureSteps: false });
  const parked = await remit.start(counter, { n: 0, limit }, { runId: 'r' });
  expect(parked.status).toBe('parked');
  return { path, store, remit, interruptId: parked.interrupt!.id };
}

/** The SQL an operator would type: the column's value, as another storage class. */
const REWRITES = {
  TEXT: 'CAST(bytes AS TEXT)',
  INTEGER: 'length(bytes)',
  REAL: 'length(bytes) + 0.5',
  /** A text that reads as a number: `new Uint8Array('48')` would be 48 zero bytes. */
  NUMERIC_TEXT: `'48'`,
  EMPTY_TEXT: `''`,
} as const;
type Rewrite = keyof typeof REWRITES;

function rawRows(path: string, runId: string): { seq: number; kind: string; value: unknown }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT seq, typeof(bytes) AS kind, bytes AS value FROM remit_records WHERE run_id = ? ORDER BY seq').all(runId) as { seq: number; kind: string; value: unknown }[];
  } finally {
    db.close();
  }
}

function rewrite(path: string, sql: string, ...params: unknown[]): void {
  const db = new Database(path);
  try {
    expect(db.prepare(sql).run(...params).changes).toBe(1);
  } finally {
    db.close();
  }
}

const damageRecord = (path: string, runId: string, seq: number, how: Rewrite) =>
  rewrite(path, `UPDATE remit_records SET bytes = ${REWRITES[how]} WHERE run_id = ? AND seq = ?`, runId, seq);

const notBytes = (runId: string, seq: number) => ({ code: 'REMIT_STORE', storeCode: 'RECORD_NOT_BYTES', runId, seq });

describe('sqlite: a record stored as TEXT, INTEGER or REAL instead of a BLOB', () => {
  it('its last record as TEXT (the sqlite3 CLI edit): every view says RECORD_NOT_BYTES naming the run and seq; none calls it torn; nothing is deleted', async () => {
    const { path, store, remit, interruptId } = await parkedRun(4);
    const before = rawRows(path, 'r');
    const last = before.length - 1;
    expect(before.map((r) => r.kind)).toEqual(before.map(() => 'blob'));
    damageRecord(path, 'r', last, 'TEXT');
    const damaged = rawRows(path, 'r');
    expect(damaged[last]!.kind).toBe('text');

    const expected = notBytes('r', last);
    const statusError = await remit.status('r').catch((e: unknown) => e);
    expect(statusError).toBeInstanceOf(StoreError);
    expect(statusError).toMatchObject(expected);
    expect(String((statusError as Error).message)).toMatch(new RegExp(`run r, seq ${last}: .*TEXT`));
    await expect(remit.inspect('r')).rejects.toMatchObject(expected);
    await expect(remit.scrub('r')).rejects.toMatchObject(expected);
    await expect(remit.repair('r')).rejects.toMatchObject(expected);
    await expect(remit.continueRun('r')).rejects.toMatchObject(expected);
    await expect(remit.resume('r', interruptId, { ok: true })).rejects.toMatchObject(expected);
    await expect(remit.fork('r', 1, { newRunId: 'f' })).rejects.toMatchObject(expected);
    await expect(store.readRecords('r')).rejects.toMatchObject({ ...expected, operation: 'readRecords' });
    await expect(store.readRun('r')).rejects.toMatchObject({ ...expected, operation: 'readRun' });
    // A refused append reports the records in the way: the damaged one is an error there too.
    await expect(store.append('r', last, [testRecord(last)])).rejects.toMatchObject({ ...expected, operation: 'append' });
    // The removal a repair would make, with what a misread gave (no bytes) or the record's own
    // bytes: a row whose stored value is not a BLOB is never removed.
    await expect(store.removeLastRecord('r', last, new Uint8Array())).rejects.toMatchObject({ ...expected, operation: 'removeLastRecord' });
    await expect(store.removeLastRecord('r', last, new Uint8Array(before[last]!.value as Buffer))).rejects.toMatchObject(expected);

    expect(rawRows(path, 'r')).toEqual(damaged);
    expect(await store.listRuns()).toEqual([expect.objectContaining({ runId: 'r', nextSeq: before.length })]);
    // What the message says: the cast kept the bytes, and the reverse cast gives them back.
    expect(String((statusError as Error).message)).toMatch(/CAST\(bytes AS BLOB\)/);
    rewrite(path, 'UPDATE remit_records SET bytes = CAST(bytes AS BLOB) WHERE run_id = ? AND seq = ?', 'r', last);
    expect(rawRows(path, 'r')).toEqual(before);
    expect((await remit.resume('r', interruptId, { ok: true })).status).toBe('completed');
    await remit.close();
  });

  it('recoverAll reports the run with the typed error and goes on; the run is left as it is', async () => {
    const { path, remit } = await parkedRun(2);
    damageRecord(path, 'r', 3, 'INTEGER');
    // Its hint says parked, so recoverAll would not read it: make it a candidate (unknown hint).
    rewrite(path, 'UPDATE remit_runs SET status = NULL WHERE run_id = ?', 'r');
    const damaged = rawRows(path, 'r');
    expect(await remit.recoverAll()).toEqual([{ runId: 'r', error: expect.objectContaining(notBytes('r', 3)) }]);
    expect(rawRows(path, 'r')).toEqual(damaged);
    await remit.close();
  });

  it('runs() lists the run as damaged with the store code and still lists the other runs', async () => {
    const { path, remit } = await parkedRun(2);
    await remit.start(counter, { n: 0, limit: 1 }, { runId: 'healthy' });
    damageRecord(path, 'r', 3, 'TEXT');
    const listed = await remit.runs();
    expect(listed.find((run) => run.runId === 'r')).toMatchObject({ status: 'damaged', damage: { kind: 'corrupt', code: 'RECORD_NOT_BYTES', seq: 3, repairable: false } });
    expect(listed.find((run) => run.runId === 'healthy')).toMatchObject({ status: 'parked' });
    await remit.close();
  });

  it('(property) any record, any storage class that is not a BLOB: a typed error naming run and seq from every reading view, and no row changes', async () => {
    const { path, store, remit } = await parkedRun(3);
    const intact = rawRows(path, 'r');
    const last = intact.length - 1;
    const raw = new Database(path);
    try {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: last }), fc.constantFrom(...(Object.keys(REWRITES) as Rewrite[])), async (seq, how) => {
          const original = intact[seq]!.value as Buffer;
          raw.prepare(`UPDATE remit_records SET bytes = ${REWRITES[how]} WHERE run_id = 'r' AND seq = ?`).run(seq);
          try {
            const damaged = rawRows(path, 'r');
            expect(damaged[seq]!.kind).not.toBe('blob');
            const expected = notBytes('r', seq);
            await expect(remit.status('r')).rejects.toMatchObject(expected);
            await expect(remit.inspect('r')).rejects.toMatchObject(expected);
            await expect(remit.scrub('r')).rejects.toMatchObject(expected);
            await expect(remit.repair('r')).rejects.toMatchObject(expected);
            await expect(remit.continueRun('r')).rejects.toMatchObject(expected);
            await expect(store.readRecords('r', seq)).rejects.toMatchObject(expected);
            if (seq === last) {
              // Neither what a misread gave (no bytes, zero bytes) nor the record's own bytes
              // removes a row whose stored value is not a BLOB.
              for (const guess of [new Uint8Array(0), new Uint8Array(48), new Uint8Array(original)]) {
                await expect(store.removeLastRecord('r', seq, guess)).rejects.toMatchObject({ ...expected, operation: 'removeLastRecord' });
              }
            }
            expect(rawRows(path, 'r')).toEqual(damaged);
          } finally {
            raw.prepare(`UPDATE remit_records SET bytes = ? WHERE run_id = 'r' AND seq = ?`).run(original, seq);
          }
          expect(rawRows(path, 'r')).toEqual(intact);
          expect((await remit.status('r')).status).toBe('parked');
        }),
        { numRuns: 40 },
      );
    } finally {
      raw.close();
    }
    await remit.close();
  });
});

describe('sqlite: a recovery summary stored as TEXT or INTEGER instead of a BLOB', () => {
  for (const [label, sql] of [['TEXT', 'CAST(summary AS TEXT)'], ['INTEGER', '40'], ['numeric TEXT', `'40'`]] as const) {
    it(`is a bad summary (${label}): ignored by a fresh process, disagrees in scrub, deleted by repair; records untouched`, async () => {
      const { path, remit, interruptId } = await parkedRun(40);
      const records = rawRows(path, 'r');
      expect(records.length).toBeGreaterThan(32);
      rewrite(path, `UPDATE remit_summaries SET summary = ${sql} WHERE run_id = ?`, 'r');
      await remit.close();

      const store: SqliteStore = openSqliteStore(path);
      const fresh = await createRemit({ store, workflows: [counter], core: 'reference' });
      const found = await store.readSummary('r');
      expect(found).not.toBeNull();
      expect(found!.summary.summary).toEqual(new Uint8Array(0));
      expect(found!.runStarted.bytes).toEqual(new Uint8Array(records[0]!.value as Buffer));
      expect((await fresh.status('r')).status).toBe('parked');
      expect(await fresh.scrub('r')).toMatchObject({ damage: null, summaryAgrees: false });
      expect(await fresh.repair('r')).toMatchObject({ removedSeq: null, summaryRemoved: true });
      expect(await store.readSummary('r')).toBeNull();
      expect(rawRows(path, 'r')).toEqual(records);
      expect((await fresh.resume('r', interruptId, { ok: true })).status).toBe('completed');
      await fresh.close();
    });
  }
});
