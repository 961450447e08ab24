/**
 * The run's digest (record 0's chain value, which keys the registry of running effect calls) is
 * read once per read of the log, not at every effect step: record 0 holds the definition and the
 * node table, so decoding and checking it cost O(nodes) a step (402 µs a step at 1,000 nodes
 * against 26 µs at 10). Counted here as decodes of RUN_STARTED over a run of effect steps.
 */

import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import * as codec from '../core/codec.js';
import { createCore } from '../core/index.js';
import { RecordKind } from '../core/types.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';

const decoded = vi.hoisted(() => ({ runStarted: 0 }));

vi.mock('../core/codec.js', async (importOriginal) => {
  const original = await importOriginal<typeof codec>();
  return {
    ...original,
    decodeRecordAt: (...args: Parameters<typeof original.decodeRecordAt>) => {
      const step = original.decodeRecordAt(...args);
      if (step.outcome === 'record' && step.record.kind === RecordKind.RUN_STARTED) decoded.runStarted += 1;
      return step;
    },
  };
});

const EFFECTS = 60;

/** A loop of effect steps in a workflow of `fillers` more nodes it never reaches. */
function effectLoop(fillers: number) {
  let builder = workflow({ name: 'digest', version: '1', state: z.object({ i: z.number().int() }) })
    .effect('e', { run: () => 1, apply: (s) => ({ i: s.i + 1 }), next: (s) => (s.i >= EFFECTS ? END : 'e') });
  for (let k = 0; k < fillers; k++) builder = builder.pure(`filler-${k}`, { run: () => ({}), next: END }) as unknown as typeof builder;
  return builder.build();
}

describe.each([true, false])('effect steps (groupPureSteps %s)', (groupPureSteps) => {
  it('decode record 0 a few times a run, not once a step', async () => {
    const wf = effectLoop(200);
    const remit = new Remit(new MemoryStore(), await createCore('wasm'), [wf], undefined, { groupPureSteps });
    decoded.runStarted = 0;
    const run = await remit.start(wf, { i: 0 }, { runId: 'r' });
    expect(run.status).toBe('completed');
    // Once for the digest (counted: the count sees the sequencer's decodes), and at most a few
    // more (a head state rebuilt from RUN_STARTED's snapshot); it was once per effect step, 60 here.
    expect(decoded.runStarted).toBeGreaterThanOrEqual(1);
    expect(decoded.runStarted).toBeLessThanOrEqual(4);
    // Each continue (a new session, a new read of the log) reads it again, once.
    decoded.runStarted = 0;
    await remit.status('r');
    expect(decoded.runStarted).toBeLessThanOrEqual(2);
  });
});
