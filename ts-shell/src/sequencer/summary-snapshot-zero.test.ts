/**
 * A stored recovery summary whose snapshot seq is 0, which the log format rules out (docs/log-format.md,
 * "Stored recovery summary": 0 < snapshot_seq < record_count): a fresh process reads past it, so its
 * answers and the records it leaves are the whole log's, whatever core bytes and counts it carries.
 * The one such summary no later check of the read refuses is another log's genuine summary of the
 * same run id and definition, sealed under its own counts: the check of the snapshot seq is what
 * refuses it.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { concatBytes } from '../core/codec.js';
import { createCore } from '../core/index.js';
import { EMPTY_SUMMARY, type RecoveryCore } from '../core/types.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import type { RecoverySummary } from '../store/store.js';
import { END, workflow, type Workflow } from '../workflow/workflow.js';
import { copyBacking } from '../../test-support/memory-backing.js';
import { countingReads } from '../../test-support/counting-reads.js';
import { wholeLogStore } from '../../test-support/whole-log-store.js';
import { sealSummary } from './stored-summary.js';

const CORES = ['reference', 'wasm'] as const;

type Answer = { ok: unknown } | { error: { name: string; code: unknown; seq: unknown } };

async function answerOf(call: Promise<unknown>): Promise<Answer> {
  try {
    return { ok: await call };
  } catch (error) {
    const e = error as { constructor: { name: string }; code?: unknown; seq?: unknown };
    return { error: { name: e.constructor.name, code: e.code, seq: e.seq } };
  }
}

const Counted = z.object({ i: z.number().int(), note: z.string() });

/**
 * A counting loop that parks at its end. `note` is what each step writes to the state's note
 * (nothing: the note never changes); the definition (name, version, nodes, schemas: the
 * fingerprint) is the same whatever it writes, so two runs of it under one id differ only in
 * their records' bytes.
 */
function counter(steps: number, note?: (i: number) => string): Workflow {
  return workflow({ name: 'counted', version: '1', state: Counted })
    .pure('count', { run: (s) => (note === undefined ? { i: s.i + 1 } : { i: s.i + 1, note: note(s.i) }), next: (s) => (s.i >= steps ? 'ask' : 'count') })
    .interrupt('ask', { resume: z.boolean(), apply: (s) => ({ i: s.i + 1 }), next: END })
    .build();
}

/** Run `wf` as run 'r' into a new memory backing (no stored summary is kept: the test places its own). */
async function runOf(wf: Workflow): Promise<MemoryBacking> {
  const backing = new MemoryBacking();
  const run = await new Remit(wholeLogStore(new MemoryStore({ backing })), await createCore('reference'), [wf]).start(wf, { i: 0, note: '' }, { runId: 'r' });
  expect(run.status).toBe('parked');
  return backing;
}

/** The core's summary of the first `records` records of run 'r' in `backing`, with the counts it covers. */
function coreSummaryOf(core: RecoveryCore, backing: MemoryBacking, records: number): { summary: Uint8Array; recordCount: number; byteLength: number } {
  const bytes = concatBytes(backing.runs.get('r')!.records.slice(0, records).map((r) => r.bytes));
  const fed = core.feed(EMPTY_SUMMARY, bytes);
  if (!fed.ok || !fed.recovery.ok) throw new Error('the prefix does not recover');
  return { summary: fed.summary, recordCount: records, byteLength: bytes.length };
}

describe.each(CORES)('a stored summary whose snapshot seq is 0 (%s core)', (coreKind) => {
  // docs/log-format.md, "Stored recovery summary": 0 < snapshot_seq < record_count. The sequencer
  // never stores one at 0 (record 0 is read with the summary, not from its snapshot on), and a
  // fresh process reads past one: its answers and the records it leaves are the whole log's,
  // whatever core bytes and counts the summary carries. The case that needs the check itself (the
  // later checks of the read do not refuse it): a genuine summary of another log of the same run
  // id and definition, as long in records and longer in bytes, sealed under its own counts. At any
  // snapshot seq 0 < s < N that is the guide's one undetectable summary (summary-property.test.ts,
  // `undetectable`); at 0 the format itself refutes it.
  it('is read past, whatever core bytes and counts it carries: status, continueRun and resume give the whole-log answers', async () => {
    const core = await createCore(coreKind);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 4, max: 40 }),
        fc.integer({ min: 60, max: 400 }),
        fc.constantFrom('foreign-whole' as const, 'foreign-whole' as const, 'own-whole' as const, 'own-prefix' as const, 'foreign-prefix' as const),
        fc.nat(),
        fc.constantFrom('own' as const, 'whole-log' as const, 'past-record-0' as const),
        async (steps, noteLength, which, pick, counts) => {
          const own = await runOf(counter(steps));
          // Same id, same definition, as many records, each step's note `noteLength` bytes: a longer log.
          const other = await runOf(counter(steps, (i) => (i % 2 === 0 ? 'a' : 'b').repeat(noteLength)));
          const records = own.runs.get('r')!.records;
          expect(other.runs.get('r')!.records.length).toBe(records.length);
          const foreign = which.startsWith('foreign');
          const prefix = which.endsWith('whole') ? records.length : 1 + (pick % (records.length - 1));
          const coreSummary = coreSummaryOf(core, foreign ? other : own, prefix);
          const logBytes = records.reduce((n, r) => n + r.bytes.length, 0);
          const byteLength = counts === 'own' ? coreSummary.byteLength : counts === 'whole-log' ? logBytes : coreSummary.byteLength + records[0]!.bytes.length;
          const placed: RecoverySummary = sealSummary(coreSummary.recordCount, byteLength, 0, coreSummary.summary);

          const wf = counter(steps);
          const ops = (remit: Remit) => [
            () => remit.status('r'),
            () => remit.continueRun('r'),
            () => remit.resume('r', `ask@${records.length - 1}`, true),
            () => remit.status('r'),
          ];
          const whole = copyBacking(own);
          const expected: Answer[] = [];
          for (let k = 0; k < 4; k++) expected.push(await answerOf(ops(new Remit(wholeLogStore(new MemoryStore({ backing: whole })), core, [wf]))[k]!()));
          expect(expected[0]).toMatchObject({ ok: { status: 'parked', state: { i: steps, note: '' } } });

          const withSummary = copyBacking(own);
          withSummary.runs.get('r')!.summary = placed;
          // A fresh process per call, as a user's separate requests would be.
          const { store, count } = countingReads(new MemoryStore({ backing: withSummary }));
          const actual: Answer[] = [await answerOf(ops(new Remit(store, core, [wf]))[0]!())];
          // Read past: after its read from the summary, the first status read the whole log again
          // (a readRecords from seq 0, which a summary kept never makes).
          expect(count.recordsFrom).toContain(0);
          for (let k = 1; k < 4; k++) actual.push(await answerOf(ops(new Remit(new MemoryStore({ backing: withSummary }), core, [wf]))[k]!()));
          expect(actual).toEqual(expected);
          const recordsAfter = (b: MemoryBacking) => b.runs.get('r')!.records.map((r) => Buffer.from(r.bytes).toString('hex'));
          expect(recordsAfter(withSummary)).toEqual(recordsAfter(whole));
        },
      ),
      // The case only the snapshot-seq check refuses comes first, whatever the seed draws.
      { numRuns: 25, examples: [[8, 200, 'foreign-whole', 0, 'own']] },
    );
  }, 60_000);

  it('regression: another log\'s whole summary sealed at snapshot seq 0 under its own counts is not taken for this run\'s', async () => {
    const core = await createCore(coreKind);
    const own = await runOf(counter(20));
    const other = await runOf(counter(20, (i) => (i % 2 === 0 ? 'a' : 'b').repeat(300)));
    const records = own.runs.get('r')!.records.length;
    const foreign = coreSummaryOf(core, other, records);
    own.runs.get('r')!.summary = sealSummary(foreign.recordCount, foreign.byteLength, 0, foreign.summary);
    const status = await answerOf(new Remit(new MemoryStore({ backing: own }), core, [counter(20)]).status('r'));
    expect(status).toMatchObject({ ok: { status: 'parked', headSeq: records - 1, state: { i: 20, note: '' } } });
  });
});
