/**
 * How often the sequencer stores a recovery summary: after at least SUMMARY_EVERY_RECORDS records
 * and enough log bytes since the stored one that the bytes of summaries written stay within
 * SUMMARY_BYTES_PER_LOG_BYTE times the log's bytes. A summary grows with the run (every consumed
 * interrupt id stays in it); stored every 32 records alone, an interrupt loop of 2,000 cycles wrote
 * 15 times its log's bytes in summaries, 8,000 cycles 60 times: a ratio growing with the run. The
 * price is a longer tail for a fresh process: at most about 1/SUMMARY_BYTES_PER_LOG_BYTE of the
 * summary's size of records more.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { concatBytes, decodeLog, encodeLogV2 } from '../core/codec.js';
import { createCore } from '../core/index.js';
import { RecordKind, type LogRecord, type RecoveryCore } from '../core/types.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { END, workflow, type Workflow } from '../workflow/workflow.js';
import { countingAppends } from '../../test-support/counting-appends.js';
import { countingReads } from '../../test-support/counting-reads.js';
import { wholeLogStore } from '../../test-support/whole-log-store.js';
import type { RunResult } from './run-result.js';
import { RunSession, SUMMARY_BYTES_PER_LOG_BYTE, SUMMARY_EVERY_RECORDS } from './run-session.js';

/**
 * A pure step, then a park, resumed at once. Before reserved interrupt ids (docs/core-api.md,
 * "Transitions") each cycle kept one more id in the summary; the ids the shell writes are reserved
 * and no longer listed, so the summary keeps one size, and the cadence's bound must still hold.
 */
const wf = workflow({ name: 'cadence', version: '1', state: z.object({ c: z.number().int() }) })
  .pure('p', { run: (s) => ({ c: s.c + 1 }), next: 'ask' })
  .interrupt('ask', { resume: z.object({ go: z.boolean() }), apply: () => ({}), next: 'p' })
  .build();

// The cadence is the shell's; the cores write the same summary bytes (the equivalence suite).
describe('summaries stored over an interrupt loop', () => {
  it('take bytes proportional to the log\'s, and a fresh process still reads from one', async () => {
    const core = await createCore('wasm');
    const backing = new MemoryStore();
    const { store, written } = countingAppends(backing);
    const remit = new Remit(store, core, [wf]);
    let run: RunResult = await remit.start(wf, { c: 0 }, { runId: 'loop' });
    const CYCLES = 2000;
    for (let i = 0; i < CYCLES; i++) {
      if (run.status !== 'parked') throw new Error(run.status);
      run = await remit.resume('loop', run.interrupt.id, { go: true });
    }
    // The summary kept one size (listed, the 2,000 ids would take about 40 KB), and was stored again and again.
    expect(written.largest).toBeLessThan(400);
    expect(written.summaries).toBeGreaterThan(20);
    // Each summary stored follows at least 1/SUMMARY_BYTES_PER_LOG_BYTE of its size in log bytes
    // since the one before it (not counting its checksum). Stored every 32 records alone, the
    // summaries were 14.8 times the log's bytes here, and 60 times at 8,000 cycles.
    expect(SUMMARY_BYTES_PER_LOG_BYTE).toBeLessThan(14);
    expect(written.summaryBytes).toBeLessThanOrEqual(SUMMARY_BYTES_PER_LOG_BYTE * written.records + 4 * written.summaries);

    // A fresh process reads the summary and the records from its snapshot on: the summary's own
    // size and a few records more past where it ends, not the log.
    const rows = await backing.readRecords('loop');
    const found = (await backing.readSummary('loop'))!;
    const logBytes = rows.reduce((n, r) => n + r.bytes.length, 0);
    const largestRecord = Math.max(...rows.slice(1).map((r) => r.bytes.length));
    const tail = rows.slice(found.summary.snapshotSeq).reduce((n, r) => n + r.bytes.length, 0);
    expect(logBytes - found.summary.byteLength).toBeLessThanOrEqual(found.summary.summary.length / SUMMARY_BYTES_PER_LOG_BYTE + (SUMMARY_EVERY_RECORDS + 8) * largestRecord);
    expect(tail * 4).toBeLessThan(logBytes);
    const fresh = await RunSession.open(new Remit(backing, core, [wf]), 'loop');
    expect(fresh.heldByteLength).toBeLessThanOrEqual(2 * (rows[0]!.bytes.length + tail));
    const whole = await RunSession.open(new Remit(backing, core, [wf]), 'loop', { wholeLog: true });
    expect(fresh.result(fresh.recover())).toEqual(whole.result(whole.recover()));
  });
});

const Looped = z.object({ k: z.number().int(), i: z.number().int() });

/** `cycles` parks at `ask`, then `steps` pure steps, then the end. */
function parksThenCounts(cycles: number, steps: number): Workflow {
  return workflow({ name: 'unreserved', version: '1', state: Looped })
    .interrupt('ask', { resume: z.boolean(), apply: (s) => ({ k: s.k + 1 }), next: (s) => (s.k >= cycles ? 'count' : 'ask') })
    .pure('count', { run: (s) => ({ i: s.i + 1 }), next: (s) => (s.i >= steps ? END : 'count') })
    .build();
}

/**
 * The log of `cycles` parks at `ask` each claimed, up to and including the last claim (as a crash
 * right after it leaves it), with every interrupt id rewritten to one that is not reserved
 * (`ask:<k>:` and padding, not `name@seq`): a log another writer made, whose ids the core's summary
 * lists (docs/core-api.md, "Summary encoding"), so that the summary is large against the records
 * the shell appends after them.
 */
async function unreservedPrefix(core: RecoveryCore, cycles: number, steps: number, idBytes: number): Promise<Uint8Array[]> {
  const wf = parksThenCounts(cycles, steps);
  const backing = new MemoryBacking();
  const remit = new Remit(wholeLogStore(new MemoryStore({ backing })), core, [wf]);
  let run = await remit.start(wf, { k: 0, i: 0 }, { runId: 'u' });
  // Resumed with the whole log read each time: `cycles` is small.
  for (let c = 0; c < cycles; c++) {
    if (run.status !== 'parked') throw new Error(run.status);
    // Each resume stops at the last claim: the drive after it is the shell's under test.
    run = c < cycles - 1 ? await remit.resume('u', run.interrupt.id, true) : run;
  }
  const rows = backing.runs.get('u')!.records.map((r) => r.bytes);
  const decoded = decodeLog(concatBytes(rows));
  const renamed = new Map<string, Uint8Array>();
  const rename = (id: Uint8Array): Uint8Array => {
    const key = Buffer.from(id).toString('hex');
    if (!renamed.has(key)) renamed.set(key, new TextEncoder().encode(`ask:${renamed.size}:`.padEnd(idBytes, '.')));
    return renamed.get(key)!;
  };
  // The last park's claim, written as the shell writes one (a value of `true`).
  const lastPark = decoded.records[decoded.records.length - 1]!;
  expect(lastPark.kind).toBe(RecordKind.INTERRUPT_PARKED);
  const claimValue = decoded.records.find((r) => r.kind === RecordKind.RESUME_CLAIMED) as Extract<LogRecord, { kind: typeof RecordKind.RESUME_CLAIMED }>;
  const records: LogRecord[] = [
    ...decoded.records,
    { kind: RecordKind.RESUME_CLAIMED, seq: decoded.records.length, interruptId: (lastPark as { interruptId: Uint8Array }).interruptId, value: claimValue.value },
  ].map((r) => (r.kind === RecordKind.INTERRUPT_PARKED || r.kind === RecordKind.RESUME_CLAIMED ? { ...r, interruptId: rename(r.interruptId) } : r));
  const log = encodeLogV2(records);
  const again = decodeLog(log);
  expect(again.error ?? null).toBeNull();
  expect(core.recover(log)).toMatchObject({ ok: true, recordCount: records.length });
  return again.offsets.map((at, i) => log.slice(at, again.offsets[i + 1] ?? log.length));
}

describe.each(['reference', 'wasm'] as const)('summaries stored after interrupts whose ids are not reserved (%s core)', (coreKind) => {
  // The summary lists every unreserved id (here about 40 KB), so the byte condition of the
  // cadence binds, not the record count: a summary goes with an append only once the log grew by
  // an eighth of its size since the stored one. Stored every 32 records instead, the summaries of
  // the drive below would be several times the log's bytes.
  it('take at most SUMMARY_BYTES_PER_LOG_BYTE times the log\'s bytes, and a fresh process still reads from one', async () => {
    const core = await createCore(coreKind);
    const CYCLES = 100;
    const STEPS = 3000;
    const prefix = await unreservedPrefix(core, CYCLES, STEPS, 400);
    const backing = new MemoryBacking();
    await new MemoryStore({ backing }).append('u', 0, prefix);
    const { store, written } = countingAppends(new MemoryStore({ backing }));
    const wf = parksThenCounts(CYCLES, STEPS);
    // One append per step (no group commit): the cadence is judged at every append.
    const done = await new Remit(store, core, [wf], undefined, { groupPureSteps: false }).continueRun('u');
    expect(done).toMatchObject({ status: 'completed', state: { k: CYCLES, i: STEPS } });
    // The summary is as large as the ids make it, and was stored again and again.
    expect(written.largest).toBeGreaterThan(30_000);
    expect(written.summaries).toBeGreaterThan(5);
    const rows = backing.runs.get('u')!.records;
    const logBytes = rows.reduce((n, r) => n + r.bytes.length, 0);
    // Each summary follows at least 1/SUMMARY_BYTES_PER_LOG_BYTE of its size in log bytes since the
    // one before it (the first, since the log's start: a whole-log read knows of none stored).
    expect(written.summaryBytes).toBeLessThanOrEqual(SUMMARY_BYTES_PER_LOG_BYTE * logBytes + 4 * written.summaries);
    // The price: a fresh process reads at most about an eighth of the summary's size past its end.
    const found = await new MemoryStore({ backing }).readSummary('u');
    expect(found).not.toBeNull();
    const largestRecord = Math.max(...rows.slice(prefix.length).map((r) => r.bytes.length));
    expect(logBytes - found!.summary.byteLength).toBeLessThanOrEqual(found!.summary.summary.length / SUMMARY_BYTES_PER_LOG_BYTE + (SUMMARY_EVERY_RECORDS + 8) * largestRecord);
    const { store: counted, count } = countingReads(new MemoryStore({ backing }));
    const fresh = await new Remit(counted, core, [wf]).status('u');
    expect(fresh).toEqual(done);
    // From the summary: record 0 and the records from its snapshot on, not the log.
    expect(count.recordsFrom).not.toContain(0);
    expect(count.records).toBeLessThan(rows.length / 4);
  }, 60_000);
});
