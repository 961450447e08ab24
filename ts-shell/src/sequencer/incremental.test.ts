/**
 * Incremental recovery in the sequencer (docs/core-api.md, "Incremental recovery"): a session hands
 * the core only bytes it has not checked, feeds a long log in bounded pieces, and judges resume and
 * continue admission from the summary it holds. On both cores, with a core that counts what it is
 * handed.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import type { AdmissionRequest, RecoveryCore } from '../core/types.js';
import { AlreadyConsumedError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';
import { wholeLogStore } from '../../test-support/whole-log-store.js';

interface Counts { recoverBytes: number; admitLogCalls: number; feedBytes: number; largestFeed: number; admitFromCalls: number }

/** `core`, counting the bytes handed to it per function. */
function counting(core: RecoveryCore): { core: RecoveryCore; counts: Counts } {
  const counts: Counts = { recoverBytes: 0, admitLogCalls: 0, feedBytes: 0, largestFeed: 0, admitFromCalls: 0 };
  return {
    counts,
    core: {
      ...core,
      name: core.name,
      recover: (log) => ((counts.recoverBytes += log.length), core.recover(log)),
      admit: (log, request: AdmissionRequest) => ((counts.admitLogCalls += 1), core.admit(log, request)),
      feed: (summary, chunk) => {
        counts.feedBytes += summary.length + chunk.length;
        counts.largestFeed = Math.max(counts.largestFeed, chunk.length);
        return core.feed(summary, chunk);
      },
      admitFrom: (summary, request) => ((counts.admitFromCalls += 1), core.admitFrom(summary, request)),
    },
  };
}

const State = z.object({ i: z.number().int(), pad: z.string() });

function effectLoop(steps: number) {
  return workflow({ name: 'effect-loop', version: '1', state: State })
    .effect('send', { run: async () => ({ ok: true }), apply: (s) => ({ i: s.i + 1 }), next: (s) => (s.i < steps ? 'send' : END) })
    .build();
}

function bigPureLoop(steps: number, padBytes: number) {
  return workflow({ name: 'big-loop', version: '1', state: State })
    .pure('work', { run: (s) => ({ i: s.i + 1, pad: `${s.i + 1}`.padEnd(padBytes, 'x') }), next: (s) => (s.i < steps ? 'work' : END) })
    .build();
}

function parkLoop() {
  return workflow({ name: 'park', version: '1', state: State })
    .pure('prepare', { run: (s) => ({ i: s.i + 1 }), next: 'approve' })
    .interrupt('approve', { resume: z.boolean(), apply: (s) => ({ i: s.i + 1 }), next: END })
    .build();
}

async function logBytes(store: MemoryStore, runId: string): Promise<number> {
  let n = 0;
  for (const r of await store.readRecords(runId)) n += r.bytes.length;
  return n;
}

describe.each(['reference', 'wasm'] as const)('incremental recovery in the sequencer (%s core)', (kind) => {
  it('a run hands the core each byte about once: no whole-log recovery, fed bytes within 2x the log', async () => {
    const { core, counts } = counting(await createCore(kind));
    const wf = effectLoop(400);
    const store = new MemoryStore();
    const run = await new Remit(store, core, [wf]).start(wf, { i: 0, pad: 'p' }, { runId: 'r1' });
    expect(run.status).toBe('completed');
    const size = await logBytes(store, 'r1');
    expect(counts.recoverBytes).toBe(0);
    expect(counts.feedBytes).toBeGreaterThanOrEqual(size);
    expect(counts.feedBytes).toBeLessThanOrEqual(2 * size);
    // A fresh session (another process) reads the same run back to the same answer.
    const again = await new Remit(store, await createCore(kind), [wf]).continueRun('r1');
    expect(again).toEqual(run);
  });

  it('a log longer than a feed piece is fed in pieces of at most 1 MiB plus a record, to the same answer', async () => {
    const wf = bigPureLoop(120, 30_000);
    const store = new MemoryStore();
    const run = await new Remit(store, await createCore(kind), [wf]).start(wf, { i: 0, pad: '' }, { runId: 'big' });
    expect(run.status).toBe('completed');
    expect(await logBytes(store, 'big')).toBeGreaterThan(3 * 1024 * 1024);
    const { core, counts } = counting(await createCore(kind));
    // A whole-log read: a store without the summary capability makes continueRun read every record.
    const reread = await new Remit(wholeLogStore(store), core, [wf]).continueRun('big');
    expect(reread).toEqual(run);
    expect(counts.largestFeed).toBeGreaterThan(0);
    expect(counts.largestFeed).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
  });

  it('the views that judge a whole log (runs, inspect, scrub, repair) feed it in pieces too, to the answer recover gives', async () => {
    const wf = bigPureLoop(120, 30_000);
    const store = new MemoryStore();
    const run = await new Remit(store, await createCore(kind), [wf]).start(wf, { i: 0, pad: '' }, { runId: 'big' });
    expect(await logBytes(store, 'big')).toBeGreaterThan(3 * 1024 * 1024);
    const { core, counts } = counting(await createCore(kind));
    const remit = new Remit(store, core, [wf]);
    expect((await remit.runs()).map((r) => [r.runId, r.status, r.headSeq])).toEqual([['big', 'completed', run.headSeq]]);
    const inspection = await remit.inspect('big');
    expect(inspection).toMatchObject({ status: 'completed', headSeq: run.headSeq });
    expect(inspection.damage).toBeUndefined();
    expect(await remit.scrub('big')).toMatchObject({ damage: null, summaryAgrees: true, logStatus: 'completed' });
    expect(await remit.repair('big')).toMatchObject({ removedSeq: null, summaryRemoved: false, statusHintCorrected: null });
    // No call handed the core the whole log: the Wasm core's memory holds a piece and the summary.
    expect(counts.recoverBytes).toBe(0);
    expect(counts.admitLogCalls).toBe(0);
    expect(counts.largestFeed).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
  });

  it('a record damaged past the first piece is named by every whole-log view as a whole-log recover names it', async () => {
    const wf = bigPureLoop(120, 30_000);
    const store = new MemoryStore();
    await new Remit(store, await createCore(kind), [wf]).start(wf, { i: 0, pad: '' }, { runId: 'big' });
    const damagedSeq = 80; // about 2.4 MB in: in the third piece
    const stored = store.backing.runs.get('big')!.records[damagedSeq]!;
    stored.bytes = stored.bytes.slice();
    stored.bytes[stored.bytes.length - 100]! ^= 0x40;
    const records = await store.readRecords('big');
    const plain = await createCore(kind);
    const whole = plain.recover(new Uint8Array(Buffer.concat(records.map((r) => r.bytes))));
    expect(whole).toMatchObject({ ok: false, seq: damagedSeq });
    const remit = new Remit(store, plain, [wf]);
    const scrub = await remit.scrub('big');
    expect(scrub.damage).toMatchObject({ kind: 'corrupt', seq: damagedSeq });
    expect((await remit.inspect('big')).damage).toEqual(scrub.damage);
    expect((await remit.runs())[0]).toMatchObject({ status: 'damaged', damage: scrub.damage });
  });

  it('resume is admitted from the summary, not by another pass over the log; a second resume is still refused', async () => {
    const wf = parkLoop();
    const store = new MemoryStore();
    const parked = await new Remit(store, await createCore(kind), [wf]).start(wf, { i: 0, pad: '' }, { runId: 'p1' });
    expect(parked.status).toBe('parked');
    const { core, counts } = counting(await createCore(kind));
    const remit = new Remit(store, core, [wf]);
    const done = await remit.resume('p1', parked.interrupt!.id, true);
    expect(done.status).toBe('completed');
    expect(counts.admitLogCalls).toBe(0);
    expect(counts.admitFromCalls).toBe(1);
    await expect(remit.resume('p1', parked.interrupt!.id, true)).rejects.toBeInstanceOf(AlreadyConsumedError);
    expect(counts.admitLogCalls).toBe(0);
  });
});
