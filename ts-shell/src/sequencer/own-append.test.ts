/**
 * A `start` or `resume` whose own record (RUN_STARTED, RESUME_CLAIMED) committed must not report
 * that nothing was written when another sequencer then takes the run over: it resolves with the
 * run as it stands, and the claim it made is the one the run applies. (Of k concurrent resumers
 * exactly one wins; the winner must be able to tell that it won.)
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore, type CoreKind } from '../core/index.js';
import { AlreadyConsumedError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';
import { pauseAt } from '../../test-support/pause-at.js';

const flow = workflow({ name: 'handover', version: '1', state: z.object({ k: z.number(), v: z.string().optional() }) })
  .pure('prep', { run: (s) => ({ k: s.k + 1 }), next: 'approve' })
  .interrupt('approve', { resume: z.string(), apply: (_s, v) => ({ v }), next: 'tail' })
  .pure('tail', { run: (s) => ({ k: s.k + 1 }), next: END })
  .build();

describe.each<CoreKind>(['reference', 'wasm'])('a start or resume taken over after its own append (%s core)', (kind) => {
  it('start: RUN_STARTED committed, another sequencer drives the run meanwhile; start resolves with the run as it stands', async () => {
    const core = await createCore(kind);
    const backing = new MemoryBacking();
    const hold = pauseAt('append.before', (i) => i.kinds?.[0] === 'NODE_COMPLETED');
    const starting = new Remit(new MemoryStore({ backing }), core, [flow], hold.hooks, { groupPureSteps: false }).start(flow, { k: 0 }, { runId: 'r' });
    await hold.paused;
    const other = await new Remit(new MemoryStore({ backing }), core, [flow]).continueRun('r');
    expect(other.status).toBe('parked');
    hold.release();
    await expect(starting).resolves.toMatchObject({ runId: 'r', status: 'parked', interrupt: { id: other.interrupt!.id } });
  });

  it('resume: the claim committed, another sequencer finishes the run; resume resolves, and its value is the one applied', async () => {
    const core = await createCore(kind);
    const backing = new MemoryBacking();
    const parked = await new Remit(new MemoryStore({ backing }), core, [flow]).start(flow, { k: 0 }, { runId: 'r' });
    const hold = pauseAt('resume.after-claim', () => true);
    const resuming = new Remit(new MemoryStore({ backing }), core, [flow], hold.hooks).resume('r', parked.interrupt!.id, 'from-A');
    await hold.paused;
    const other = await new Remit(new MemoryStore({ backing }), core, [flow]).continueRun('r');
    expect(other).toMatchObject({ status: 'completed', state: { v: 'from-A', k: 2 } });
    hold.release();
    await expect(resuming).resolves.toMatchObject({ status: 'completed', state: { v: 'from-A', k: 2 } });
    // A second resume is refused, naming the claim the first one made.
    const again = await new Remit(new MemoryStore({ backing }), core, [flow]).resume('r', parked.interrupt!.id, 'from-B').catch((e: unknown) => e);
    expect(again).toBeInstanceOf(AlreadyConsumedError);
    expect(again).toMatchObject({ seq: 3 });
  });
});
