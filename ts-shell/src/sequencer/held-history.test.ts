/**
 * A session driving a long run does not keep the whole log in memory (RunSession.releaseHistory):
 * after a commit it releases the bytes between record 0 and the head snapshot once they pass
 * sequencing.maxHeldHistoryBytes, and then holds what a fresh process's read from a stored summary
 * holds. The bytes it takes stay bounded while the log grows; the run's records and answers are
 * those of a session that keeps everything (summary-property.test.ts compares them over generated
 * runs, releasing at every commit).
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import type { SequencerHooks } from '../faults.js';
import { NO_HOOKS } from '../faults.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';
import type { SequencingOptions } from './run-result.js';
import { RunSession } from './run-session.js';

const STEPS = 4_000;
const State = z.object({ i: z.number().int(), note: z.string() });
/** Pure steps and effect steps in turn, each changing a 200-character note: a snapshot every few steps. */
const long = workflow({ name: 'long', version: '1', state: State })
  .pure('think', { run: (s) => ({ i: s.i + 1, note: `${s.i}`.padEnd(200, 'x') }), next: 'send' })
  .effect('send', { run: async (s) => ({ sent: s.i }), apply: (s) => ({ i: s.i + 1 }), next: (s) => (s.i >= STEPS ? END : 'think') })
  .build();

class Crash extends Error {}

/** The run started and left running after its first few records (a crash), on a memory store. */
async function crashedEarly(core: Awaited<ReturnType<typeof createCore>>): Promise<MemoryStore> {
  const store = new MemoryStore();
  const hooks: SequencerHooks = { at: (point, info) => { if (point === 'append.before' && info.seq >= 4) throw new Crash('crash'); } };
  await expect(new Remit(store, core, [long], hooks, {}, { instanceId: 'writer', now: () => 1_000 }).start(long, { i: 0, note: '' }, { runId: 'r' })).rejects.toBeInstanceOf(Crash);
  return store;
}

/** Drive the crashed run to its end in one session; what the session holds then, and the log. */
async function driveToEnd(core: Awaited<ReturnType<typeof createCore>>, sequencing: Partial<SequencingOptions>) {
  const store = await crashedEarly(core);
  // A clock past the crashed writer's effect lease (its attempt in flight is taken over at once),
  // and fixed, so that two drives write the very same attempt records.
  const session = await RunSession.open(new Remit(store, core, [long], NO_HOOKS, sequencing, { instanceId: 'driver', now: () => 10_000_000 }), 'r');
  session.recover();
  const result = await session.drive();
  const rows = await store.readRecords('r');
  return { result, held: session.heldByteLength, rows, logBytes: rows.reduce((n, r) => n + r.bytes.length, 0) };
}

describe.each(['reference', 'wasm'] as const)('a long drive in one session (%s core)', (coreName) => {
  it('holds a bounded part of the log, not all of it, and ends as a session holding it all', async () => {
    const core = await createCore(coreName);
    const limit = 16 * 1024;
    const released = await driveToEnd(core, { maxHeldHistoryBytes: limit });
    const kept = await driveToEnd(core, { maxHeldHistoryBytes: Number.POSITIVE_INFINITY });
    expect(released.result).toMatchObject({ status: 'completed', state: { i: STEPS } });
    expect(released.result).toEqual(kept.result);
    expect(released.rows.map((r) => Buffer.from(r.bytes).toString('hex'))).toEqual(kept.rows.map((r) => Buffer.from(r.bytes).toString('hex')));
    // Kept: the whole log (and room to grow). Released: record 0, at most `limit` before the head
    // snapshot, the bytes from it on, and room to grow: a small part of a log of over a megabyte.
    expect(released.logBytes).toBeGreaterThan(1_000_000);
    expect(kept.held).toBeGreaterThanOrEqual(kept.logBytes);
    expect(released.held).toBeLessThan(8 * limit);
  });

  it('releases nothing while the bytes before the head snapshot are under the limit', async () => {
    const core = await createCore(coreName);
    const { held, logBytes } = await driveToEnd(core, { maxHeldHistoryBytes: 4 * 1024 * 1024 });
    expect(logBytes).toBeGreaterThan(1_000_000);
    expect(held).toBeGreaterThanOrEqual(logBytes);
  });
});
