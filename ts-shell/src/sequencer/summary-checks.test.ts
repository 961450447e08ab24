/**
 * One case for each check a fresh process makes of a stored summary and the records read with it
 * (RunSession.keepFromSummary, stored-summary.ts), so that removing any of them fails a test: a
 * review that mutated them found these passing without them (summary-property.test.ts generates
 * summaries, but its oracle opens them with the production openSummary, and its hand edits are
 * resealed). Each case damages what a store holds in one way; a fresh `status()` must give exactly
 * the answer of a fresh process reading the whole log (docs/guide.md, "Fresh-process resume").
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { concatBytes } from '../core/codec.js';
import { createCore } from '../core/index.js';
import { EMPTY_SUMMARY, type RecoveryCore } from '../core/types.js';
import { fail } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import type { RecoverySummary, Store } from '../store/store.js';
import { END, workflow, type Workflow } from '../workflow/workflow.js';
import { copyBacking } from '../../test-support/memory-backing.js';
import { countingReads } from '../../test-support/counting-reads.js';
import { openSummary, sealSummary } from './stored-summary.js';

const State = z.object({ i: z.number().int(), note: z.string() });
const STEPS = 120;

/** A counting loop that parks at its end; `extra` adds a node, so the definition (fingerprint) differs. */
function loop(version = '1', extra = false): Workflow {
  const base = workflow({ name: 'checked', version, state: State })
    // A long note that never changes: deltas are small against the state, so snapshots are rare.
    .pure('count', { run: (s) => ({ i: s.i + 1 }), next: (s) => (s.i >= STEPS ? 'ask' : 'count') })
    .interrupt('ask', { resume: z.boolean(), apply: (s) => ({ i: s.i + 1 }), next: END });
  return (extra ? base.pure('spare', { run: () => ({}), next: END }) : base).build();
}

/** Run `wf` as run 'r' (one append per step, so summaries are stored) into a new memory backing. */
async function written(core: RecoveryCore, wf: Workflow = loop()): Promise<MemoryBacking> {
  const backing = new MemoryBacking();
  const run = await new Remit(new MemoryStore({ backing }), core, [wf], undefined, { groupPureSteps: false }).start(wf, { i: 0, note: 'n'.repeat(600) }, { runId: 'r' });
  expect(run.status).toBe('parked');
  expect(backing.runs.get('r')!.summary).toBeDefined();
  return backing;
}

type Answer = { ok: unknown } | { error: { name: string; code: unknown; seq: unknown; offset: unknown; message: string } };

/** A summary of the whole of run 'r', sealed: no record is fed after it, so what it says is the answer. */
function wholeSummary(core: RecoveryCore, backing: MemoryBacking): RecoverySummary {
  const records = backing.runs.get('r')!.records;
  const bytes = concatBytes(records.map((r) => r.bytes));
  const fed = core.feed(EMPTY_SUMMARY, bytes);
  if (!fed.ok || !fed.recovery.ok) throw new Error('the run does not recover');
  return sealSummary(records.length, bytes.length, fed.recovery.snapshotSeq, fed.summary);
}

/** A fresh process's status('r') on `store`. */
async function statusOn(core: RecoveryCore, store: Store): Promise<Answer> {
  try {
    return { ok: await new Remit(store, core, [loop()]).status('r') };
  } catch (error) {
    const e = error as { constructor: { name: string }; code?: unknown; seq?: unknown; offset?: unknown; message: string };
    return { error: { name: e.constructor.name, code: e.code, seq: e.seq, offset: e.offset, message: e.message } };
  }
}

/** The answers from `backing` as stored, and from the same records with no summary (the whole log). */
async function bothAnswers(core: RecoveryCore, backing: MemoryBacking): Promise<{ fromSummary: Answer; wholeLog: Answer }> {
  const whole = copyBacking(backing);
  delete whole.runs.get('r')!.summary;
  return { fromSummary: await statusOn(core, new MemoryStore({ backing: copyBacking(backing) })), wholeLog: await statusOn(core, new MemoryStore({ backing: whole })) };
}

describe.each(['reference', 'wasm'] as const)('each check of a stored summary (%s core)', (coreKind) => {
  it('a summary whose core bytes changed at rest under the old checksum is refused, whichever byte changed', async () => {
    const core = await createCore(coreKind);
    const backing = await written(core);
    const genuine = wholeSummary(core, backing);
    backing.runs.get('r')!.summary = genuine;
    expect(await bothAnswers(core, backing)).toMatchObject({ fromSummary: { ok: { status: 'parked' } } });
    const coreBytes = openSummary(genuine)!.length;
    for (let at = 0; at < coreBytes; at++) {
      const damaged = copyBacking(backing);
      const stored = damaged.runs.get('r')!.summary!;
      stored.summary = stored.summary.slice();
      stored.summary[at]! ^= 0x01;
      const { fromSummary, wholeLog } = await bothAnswers(core, damaged);
      expect(fromSummary, `core byte ${at} flipped`).toEqual(wholeLog);
    }
  });

  it('record 0, or a record the summary covers, with a byte after its end is read as the whole log reads it', async () => {
    const core = await createCore(coreKind);
    const backing = await written(core);
    const snapshotSeq = backing.runs.get('r')!.summary!.snapshotSeq;
    for (const seq of [0, snapshotSeq]) {
      const damaged = copyBacking(backing);
      const row = damaged.runs.get('r')!.records[seq]!;
      row.bytes = concatBytes([row.bytes, new Uint8Array([0])]);
      const { fromSummary, wholeLog } = await bothAnswers(core, damaged);
      expect(wholeLog).toMatchObject({ error: { name: 'LogCorruptError' } });
      expect(fromSummary, `seq ${seq}`).toEqual(wholeLog);
    }
  });

  it('record 0 of another definition under the same name (another version, or the same version and other nodes) is read as the whole log reads it', async () => {
    const core = await createCore(coreKind);
    for (const other of [loop('2'), loop('1', true)]) {
      const backing = await written(core);
      const foreign = await written(core, other);
      backing.runs.get('r')!.records[0] = foreign.runs.get('r')!.records[0]!;
      const { fromSummary, wholeLog } = await bothAnswers(core, backing);
      expect(wholeLog).toMatchObject({ error: { name: 'LogCorruptError' } });
      expect(fromSummary).toEqual(wholeLog);
    }
  });

  it('a summary resealed with a later snapshot seq than its core\'s snapshot is read past (the whole log), not an internal error', async () => {
    const core = await createCore(coreKind);
    const backing = await written(core);
    // Covering the whole log, so no later snapshot is fed after it.
    const genuine = wholeSummary(core, backing);
    backing.runs.get('r')!.summary = genuine;
    const expected = (await bothAnswers(core, backing)).wholeLog;
    expect(expected).toMatchObject({ ok: { status: 'parked' } });
    expect(genuine.recordCount - genuine.snapshotSeq).toBeGreaterThan(5);
    for (let seq = genuine.snapshotSeq + 1; seq < genuine.recordCount; seq++) {
      const moved = copyBacking(backing);
      moved.runs.get('r')!.summary = sealSummary(genuine.recordCount, genuine.byteLength, seq, openSummary(genuine)!);
      expect((await bothAnswers(core, moved)).fromSummary, `snapshot seq ${seq}`).toEqual(expected);
    }
  });

  it('a memory store holding a summary for a run whose records are gone (a hand edit) reports the run as listed without records', async () => {
    const core = await createCore(coreKind);
    const backing = await written(core);
    backing.runs.get('r')!.records.length = 0;
    expect(await statusOn(core, new MemoryStore({ backing }))).toMatchObject({ error: { name: 'LogCorruptError', code: 'REMIT_LOG_CORRUPT' } });
  });

  it('a fresh status() of a run without a stored summary reads it once (readRun gives the whole log then)', async () => {
    const core = await createCore(coreKind);
    const backing = await written(core);
    delete backing.runs.get('r')!.summary;
    const { store, count } = countingReads(new MemoryStore({ backing }));
    expect(await statusOn(core, store)).toMatchObject({ ok: { status: 'parked' } });
    expect(count.calls).toBe(1);
  });
});

describe('a group whose failing append throws', () => {
  it('is not appended again: staged steps and RUN_FAILED are dropped with the session, the store keeps what it had', async () => {
    const core = await createCore('reference');
    const wf = workflow({ name: 'failing', version: '1', state: z.object({ i: z.number().int() }) })
      .pure('a', { run: (s) => ({ i: s.i + 1 }), next: 'b' })
      .pure('b', { run: (s) => ({ i: s.i + 1 }), next: 'c' })
      .pure('c', { run: () => fail('GAVE_UP', 'c gives up'), next: END })
      .build();
    const backing = new MemoryBacking();
    const store = new MemoryStore({ backing });
    let appends = 0;
    const failing = Object.create(store) as MemoryStore;
    failing.append = async (...args: Parameters<MemoryStore['append']>) => {
      appends += 1;
      // RUN_STARTED commits; the group after it (a, b and the failure) is refused by a failing store.
      if (appends === 2) throw new Error('disk gone');
      return store.append(...args);
    };
    await expect(new Remit(failing, core, [wf]).start(wf, { i: 0 }, { runId: 'f' })).rejects.toThrow(/disk gone/);
    expect(appends).toBe(2);
    expect(backing.runs.get('f')!.records).toHaveLength(1);
  });
});
