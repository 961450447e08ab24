/**
 * What a session read from a stored summary holds (docs/guide.md, "Fresh-process resume": a fresh
 * process reads only the summary and the tail): record 0 and the bytes from the head snapshot on,
 * not a buffer of the whole log's length. It used to allocate a zero-filled buffer as large as the
 * whole log at every open (status, resume, continueRun, workflowOf) and lay the records read out at
 * their offsets in it: with large effect results early in a run and a small tail, that allocation
 * and the full garbage collections V8 runs for it were most of a status() call.
 *
 * The session still answers as a whole-log read does, offsets the core reports stay the whole
 * log's (a damaged record in the tail is named at its offset in the log), and the run goes on from
 * such a session (its appends, and the summaries stored with them).
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { concatBytes, decodeLog, encodeLogV2 } from '../core/codec.js';
import { createCore } from '../core/index.js';
import { RecordKind } from '../core/types.js';
import { LogCorruptError } from '../errors.js';
import { NO_HOOKS } from '../faults.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { workflow } from '../workflow/workflow.js';
import type { RunResult, SequencingOptions } from './run-result.js';
import { RunSession } from './run-session.js';

const EFFECTS = 8;
const RESULT_BYTES = 256 * 1024;
const big = 'z'.repeat(RESULT_BYTES);

/** Large effect results first (2 MiB of log), then a loop of small pure steps parking every 40. */
const wf = workflow({ name: 'held', version: '1', state: z.object({ i: z.number().int(), k: z.number().int() }) })
  .effect('fetch', { run: () => ({ blob: big }), apply: (s) => ({ i: s.i + 1 }), next: (s) => (s.i >= EFFECTS ? 'tail' : 'fetch') })
  .pure('tail', { run: (s) => ({ k: s.k + 1 }), next: (s) => (s.k % 40 === 0 ? 'ask' : 'tail') })
  .interrupt('ask', { resume: z.boolean(), apply: () => ({}), next: 'tail' })
  .build();

const cores = ['reference', 'wasm'] as const;

/** A run parked after the large results and `cycles` resumes, with a stored summary past them. */
async function longRun(core: Awaited<ReturnType<typeof createCore>>, cycles: number, sequencing: Partial<SequencingOptions> = {}) {
  const store = new MemoryStore();
  let run: RunResult = await new Remit(store, core, [wf], NO_HOOKS, sequencing).start(wf, { i: 0, k: 0 }, { runId: 'r' });
  for (let c = 0; c < cycles; c++) {
    if (run.status !== 'parked') throw new Error(`run ${run.status}`);
    run = await new Remit(store, core, [wf], NO_HOOKS, sequencing).resume('r', run.interrupt.id, true);
  }
  expect(run.status).toBe('parked');
  const rows = await store.readRecords('r');
  const found = (await store.readSummary('r'))!;
  expect(found).not.toBeNull();
  const { snapshotSeq } = found.summary;
  const sum = (from: number) => rows.slice(from).reduce((n, r) => n + r.bytes.length, 0);
  return { store, rows, found, logBytes: sum(0), tailBytes: sum(snapshotSeq), firstBytes: rows[0]!.bytes.length };
}

describe.each(cores)('a session read from a stored summary (%s core)', (coreName) => {
  it('holds record 0 and the bytes from the head snapshot on, not the whole log, and answers as a whole-log read', async () => {
    const core = await createCore(coreName);
    const { store, rows, found, logBytes, tailBytes, firstBytes } = await longRun(core, 3);
    expect(found.summary.snapshotSeq).toBeGreaterThan(EFFECTS * 3);
    const remit = new Remit(store, core, [wf]);
    const session = await RunSession.open(remit, 'r');
    const whole = await RunSession.open(remit, 'r', { wholeLog: true });
    // The bytes held are record 0 and the tail read, with room for the next appends (no more than
    // as much again): O(tail + record 0), where the log is over 2 MiB of early results.
    expect(logBytes).toBeGreaterThan(EFFECTS * RESULT_BYTES);
    expect(session.heldByteLength).toBeGreaterThanOrEqual(firstBytes + tailBytes);
    expect(session.heldByteLength).toBeLessThanOrEqual(2 * (firstBytes + tailBytes));
    expect(session.heldByteLength * 20).toBeLessThan(logBytes);
    expect(whole.heldByteLength).toBeGreaterThanOrEqual(logBytes);
    expect(session.result(session.recover())).toEqual(whole.result(whole.recover()));
    expect(session.recover()).toEqual(whole.recover());
    // Records it read are found at their offsets in the whole log; before its read, none (record 0 included).
    let offset = 0;
    for (const row of rows) {
      const held = session.heldRecordAt(offset, row.seq);
      if (row.seq < found.summary.snapshotSeq) expect(held).toBeNull();
      else expect(held).toEqual(whole.heldRecordAt(offset, row.seq));
      offset += row.bytes.length;
    }
    expect(session.heldRecordAt(offset, rows.length)).toBeNull();
    expect(() => session.bytes).toThrow(/does not hold bytes/);
  });

  it('drives the run on from there, and each open of it stays as small', async () => {
    const core = await createCore(coreName);
    const { store, logBytes } = await longRun(core, 1);
    const sizes: number[] = [];
    for (let c = 0; c < 6; c++) {
      const remit = new Remit(store, core, [wf]);
      const session = await RunSession.open(remit, 'r');
      sizes.push(session.heldByteLength);
      const parked = session.result(session.recover());
      if (parked.status !== 'parked') throw new Error(parked.status);
      await remit.resume('r', parked.interrupt.id, true);
    }
    for (const size of sizes) expect(size * 20).toBeLessThan(logBytes);
    const remit = new Remit(store, core, [wf]);
    const fresh = await RunSession.open(remit, 'r');
    const whole = await RunSession.open(remit, 'r', { wholeLog: true });
    expect(fresh.result(fresh.recover())).toEqual(whole.result(whole.recover()));
    expect((await remit.scrub('r')).summaryAgrees).toBe(true);
  });

  it('names a record of the tail whose state cannot be read at its offset in the whole log', async () => {
    const core = await createCore(coreName);
    // Steps appended one by one: the stored summary ends a few steps before the park.
    const { store, rows, found } = await longRun(core, 2, { groupPureSteps: false });
    // The head checkpoint (the last NODE_COMPLETED, after the summary's records), its state made
    // unreadable, it and the records after it re-framed and re-chained: the summary's records are
    // untouched, so the session keeps the summary (the core checks the records past its end, from
    // the summary's chain value).
    const decoded = decodeLog(concatBytes(rows.map((r) => r.bytes)));
    let seq = decoded.records.length - 1;
    while (decoded.records[seq]!.kind !== RecordKind.NODE_COMPLETED) seq -= 1;
    expect(seq).toBeGreaterThanOrEqual(found.summary.recordCount);
    const records = decoded.records.map((r, i) => (i === seq ? { ...r, state: new TextEncoder().encode('{oops') } : r));
    const log = encodeLogV2(records);
    const again = decodeLog(log);
    expect(again.error).toBeNull();
    const run = store.backing.runs.get('r')!;
    run.records.forEach((stored, i) => {
      stored.bytes = log.slice(again.offsets[i], again.offsets[i + 1] ?? log.length);
    });
    const remit = new Remit(store, core, [wf]);
    const session = await RunSession.open(remit, 'r');
    expect(session.heldByteLength * 20).toBeLessThan(log.length);
    const whole = await RunSession.open(remit, 'r', { wholeLog: true });
    const fromSummary = caught(() => session.result(session.recover()));
    const fromWholeLog = caught(() => whole.result(whole.recover()));
    expect(fromSummary).toEqual({ logError: 'UNREADABLE_STATE', seq, offset: again.offsets[seq] });
    expect(fromWholeLog).toEqual(fromSummary);
  });
});

function caught(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    if (!(error instanceof LogCorruptError)) throw error;
    return { logError: error.logError, seq: error.seq, offset: error.offset };
  }
  return 'no error';
}
