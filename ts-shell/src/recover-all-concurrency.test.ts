/**
 * recoverAll({ concurrency }): at most that many runs driven at once, every handler called once,
 * the outcomes in the candidates' order and the same as one run after another (a run's outcome
 * does not depend on how many runs are driven beside it).
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { OptionInvalidError, UnknownWorkflowError } from './errors.js';
import type { SequencerHooks } from './faults.js';
import { Remit, type RecoverAllOutcome } from './remit.js';
import { MemoryBacking, MemoryStore } from './store/memory.js';
import { END, workflow } from './workflow/workflow.js';

const State = z.object({ n: z.number().int(), done: z.boolean().optional() });

/** Crashes right after RUN_STARTED committed: the run is left running, for recoverAll. */
const crashAfterStart: SequencerHooks = { at(point, info) { if (point === 'append.after' && info.kinds?.includes('RUN_STARTED')) throw new Error('crash'); } };

/** How a candidate run was left: what recoverAll should make of it. */
type Shape = 'effect' | 'parks' | 'completed' | 'unregistered';

interface Handlers { inFlight: number; most: number; calls: Map<string, number>; delayMs: (runId: string) => number }

function definitions(h: Handlers) {
  const charge = workflow({ name: 'charge', version: '1', state: State })
    .effect('charge', {
      run: async (_s, ctx) => {
        h.calls.set(ctx.runId, (h.calls.get(ctx.runId) ?? 0) + 1);
        h.inFlight++;
        h.most = Math.max(h.most, h.inFlight);
        await new Promise((r) => setTimeout(r, h.delayMs(ctx.runId)));
        h.inFlight--;
        return { done: true };
      },
      apply: (_s, r) => r,
      next: END,
    })
    .build();
  const parks = workflow({ name: 'parks', version: '1', state: State })
    .pure('tick', { run: (s) => ({ n: s.n + 1 }), next: 'ask' })
    .interrupt('ask', { resume: z.literal('go'), apply: () => ({}), next: END })
    .build();
  const other = workflow({ name: 'other', version: '1', state: State })
    .pure('tick', { run: (s) => ({ n: s.n + 1 }), next: END })
    .build();
  return { charge, parks, other };
}

async function leaveRuns(backing: MemoryBacking, shapes: Shape[], h: Handlers): Promise<string[]> {
  const core = await createCore('reference');
  const { charge, parks, other } = definitions(h);
  const crashing = new Remit(new MemoryStore({ backing }), core, [charge, parks, other], crashAfterStart);
  const ids: string[] = [];
  for (const [i, shape] of shapes.entries()) {
    const runId = `r${String(i).padStart(2, '0')}-${shape}`;
    const wf = shape === 'effect' ? charge : shape === 'unregistered' ? other : parks;
    await expect(crashing.start(wf, { n: 0 }, { runId })).rejects.toThrow('crash');
    if (shape === 'completed') {
      const ok = new Remit(new MemoryStore({ backing }), core, [parks]);
      const parked = await ok.continueRun(runId);
      await ok.resume(runId, parked.interrupt!.id, 'go');
      await ok.close();
    }
    ids.push(runId);
  }
  await crashing.close();
  return ids;
}

/** An outcome as a comparable line: the run and its status, or its error's class. */
const describeOutcome = (o: RecoverAllOutcome) => ('result' in o ? `${o.runId} ${o.result.status}` : `${o.runId} ${(o.error as Error).constructor.name}`);

async function recover(shapes: Shape[], concurrency: number | undefined, delayMs: Handlers['delayMs']) {
  const h: Handlers = { inFlight: 0, most: 0, calls: new Map(), delayMs };
  const backing = new MemoryBacking();
  const ids = await leaveRuns(backing, shapes, h);
  const { charge, parks } = definitions(h);
  // The instance that recovers has no 'other': those runs are reported UnknownWorkflowError.
  const remit = new Remit(new MemoryStore({ backing }), await createCore('reference'), [charge, parks]);
  const outcomes = await remit.recoverAll(concurrency === undefined ? {} : { concurrency });
  await remit.close();
  return { ids, outcomes, h };
}

describe('recoverAll({ concurrency })', () => {
  it('drives at most `concurrency` runs at once, and one at a time by default', async () => {
    const shapes: Shape[] = Array.from({ length: 8 }, () => 'effect');
    const byDefault = await recover(shapes, undefined, () => 15);
    expect(byDefault.h.most).toBe(1);
    const four = await recover(shapes, 4, () => 15);
    expect(four.h.most).toBe(4);
    for (const run of [byDefault, four]) {
      expect(run.outcomes.map(describeOutcome)).toEqual(run.ids.map((id) => `${id} completed`));
      for (const id of run.ids) expect(run.h.calls.get(id), id).toBe(1);
    }
  });

  it('gives the outcomes of one run after another, in the candidates\' order, whatever order the runs end in (fast-check)', async () => {
    const shape = fc.constantFrom<Shape>('effect', 'parks', 'completed', 'unregistered');
    await fc.assert(fc.asyncProperty(
      fc.array(shape, { minLength: 1, maxLength: 9 }), fc.integer({ min: 2, max: 6 }), fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 9, maxLength: 9 }),
      async (shapes, concurrency, delays) => {
        const delayMs = (runId: string) => delays[Number(runId.slice(1, 3))]!;
        const alone = await recover(shapes, 1, delayMs);
        const together = await recover(shapes, concurrency, delayMs);
        expect(together.outcomes.map(describeOutcome)).toEqual(alone.outcomes.map(describeOutcome));
        expect(together.h.most).toBeLessThanOrEqual(concurrency);
        for (const [i, id] of together.ids.entries()) expect(together.h.calls.get(id) ?? 0, id).toBe(shapes[i] === 'effect' ? 1 : 0);
        const unknown = together.outcomes.filter((o) => 'error' in o).map((o) => (o as { error: unknown }).error);
        for (const error of unknown) expect(error).toBeInstanceOf(UnknownWorkflowError);
      },
    ), { numRuns: 25 });
  });

  it('looks at a run once when a store lists it twice (its contract asks for a superset): one outcome, one handler call, at any concurrency', async () => {
    for (const concurrency of [1, 2, 3]) {
      const h: Handlers = { inFlight: 0, most: 0, calls: new Map(), delayMs: () => 10 };
      const backing = new MemoryBacking();
      const ids = await leaveRuns(backing, ['effect', 'effect'], h);
      const store = new MemoryStore({ backing });
      const twice = Object.assign(Object.create(store) as MemoryStore, { listRunsToRecover: async () => [ids[0]!, ids[0]!, ids[1]!, ids[0]!] });
      const { charge, parks } = definitions(h);
      const remit = new Remit(twice, await createCore('reference'), [charge, parks]);
      const outcomes = await remit.recoverAll({ concurrency });
      await remit.close();
      expect(outcomes.map(describeOutcome), `concurrency ${concurrency}`).toEqual([`${ids[0]} completed`, `${ids[1]} completed`]);
      for (const id of ids) expect(h.calls.get(id)).toBe(1);
    }
  });

  it('refuses a concurrency that is not a whole number from 1 to 1000, before reading anything', async () => {
    const store = new MemoryStore();
    let listed = 0;
    const counting = Object.assign(Object.create(store) as MemoryStore, {
      listRuns: () => { listed++; return store.listRuns(); },
      listRunsToRecover: () => { listed++; return store.listRunsToRecover(); },
    });
    const remit = new Remit(counting, await createCore('reference'), []);
    for (const concurrency of [0, -1, 1.5, 1001, Number.NaN, '2', null]) {
      const refused = await remit.recoverAll({ concurrency: concurrency as number }).catch((e: unknown) => e);
      expect(refused, String(concurrency)).toBeInstanceOf(OptionInvalidError);
      expect(refused).toMatchObject({ option: 'concurrency' });
      expect((refused as Error).message).toMatch(/concurrency.*whole number of runs from 1 to 1000/);
    }
    expect(listed).toBe(0);
    expect(await remit.recoverAll({ concurrency: 1000 })).toEqual([]);
    expect(listed).toBe(1);
    await remit.close();
  });
});
