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
import { createCore } from '../core/index.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import type { Store } from '../store/store.js';
import { workflow } from '../workflow/workflow.js';
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

/** `store` with every append's record bytes and summary bytes counted. */
function counting(store: MemoryStore): { store: Store; written: { records: number; summaries: number; summaryBytes: number; largest: number } } {
  const written = { records: 0, summaries: 0, summaryBytes: 0, largest: 0 };
  const append = store.append.bind(store);
  const view = Object.create(store) as MemoryStore;
  view.append = async (runId, expectedSeq, records, summary, status) => {
    for (const r of records) written.records += r.length;
    if (summary !== undefined) {
      written.summaries += 1;
      written.summaryBytes += summary.summary.length;
      written.largest = Math.max(written.largest, summary.summary.length);
    }
    return append(runId, expectedSeq, records, summary, status);
  };
  return { store: view, written };
}

// The cadence is the shell's; the cores write the same summary bytes (the equivalence suite).
describe('summaries stored over an interrupt loop', () => {
  it('take bytes proportional to the log\'s, and a fresh process still reads from one', async () => {
    const core = await createCore('wasm');
    const backing = new MemoryStore();
    const { store, written } = counting(backing);
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
