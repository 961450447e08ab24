/**
 * A resume value is refused before its claim when the completion it leads to would fail: once
 * RESUME_CLAIMED is durable the interrupt is consumed, so a value that passes the interrupt's
 * schema but whose apply throws, whose state fails the state schema or would not read back, or
 * whose route goes nowhere, would leave the run unable ever to finish. Each case: the typed error,
 * the log unchanged (the interrupt still parked), and a good value then completing the run. A
 * `fail()` in apply is the node's decision: the claim is taken and the run fails.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore, type CoreKind } from '../core/index.js';
import { fail } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';

const State = z.object({ amount: z.number().max(100), note: z.string().optional(), extra: z.any().optional() });

/** `amount` is applied as given; a few values make apply or the route misbehave on purpose. */
const capped = workflow({ name: 'capped', version: '1', state: State })
  .interrupt('setAmount', {
    resume: z.number(),
    apply: (_s, v) => {
      if (v === 13) throw new Error('unlucky');
      if (v === 66) fail('DECLINED', 'the approver declined');
      if (v === 88) return Promise.reject(new Error('async apply')) as never;
      if (v === 99) return new Map([['amount', 2]]) as never;
      return v === 42 ? { amount: 1, extra: new Date(0) } : { amount: v };
    },
    next: (s) => {
      if (s.amount === 8) throw new Error('route broke');
      if (s.amount === 9) fail('ROUTED_OUT', 'the route failed the run');
      return s.amount === 7 ? ('nowhere' as 'done') : 'done';
    },
  })
  .pure('done', { run: () => ({ note: 'ok' }), next: END })
  .build();

const cores: CoreKind[] = ['reference', 'wasm'];

describe.each(cores)('resume pre-check (%s core)', (kind) => {
  async function parkedRun() {
    const store = new MemoryStore();
    const remit = new Remit(store, await createCore(kind), [capped]);
    const parked = await remit.start(capped, { amount: 1 }, { runId: 'r' });
    expect(parked.status).toBe('parked');
    return { store, remit, id: parked.interrupt!.id };
  }

  it.each([
    [500, 'REMIT_STATE_INVALID', 'amount'],
    [13, 'REMIT_HANDLER_THREW', undefined],
    [7, 'REMIT_ROUTE_INVALID', undefined],
    [42, 'REMIT_VALUE_UNFAITHFUL', undefined],
    [8, 'REMIT_HANDLER_THREW', undefined],
    [88, 'REMIT_STATE_INVALID', '(root)'],
    [99, 'REMIT_STATE_INVALID', '(root)'],
  ])('value %s: %s before the claim; the interrupt stays parked and a good value completes the run', async (value, code, field) => {
    const { store, remit, id } = await parkedRun();
    const before = await store.readRecords('r');
    const refused = await remit.resume('r', id, value).then(() => null, (error: unknown) => error);
    expect(refused).toMatchObject({ code, runId: 'r', node: 'setAmount', ...(field ? { field } : {}) });
    expect(await store.readRecords('r')).toEqual(before);
    expect((await remit.status('r')).status).toBe('parked');
    const done = await remit.resume('r', id, 5);
    expect(done).toMatchObject({ status: 'completed', state: { amount: 5, note: 'ok' } });
  });

  it.each([
    [66, 'DECLINED'],
    [9, 'ROUTED_OUT'],
  ])('fail() in apply or in the route (value %s) is the node\'s decision: the claim is taken and the run fails with %s', async (value, code) => {
    const { remit, id } = await parkedRun();
    const failed = await remit.resume('r', id, value);
    expect(failed).toMatchObject({ status: 'failed', failure: { code } });
  });

  it('property: a spent or unknown interrupt is refused as such whatever the value, before the value is judged', async () => {
    // Any value, valid or not: the interrupt's answer comes first (a value error would say "the
    // interrupt was not consumed" of one that was, and send a caller to fix a value that cannot help).
    const values = fc.oneof(fc.integer({ min: -5, max: 200 }), fc.constantFrom(500, 13, 42, 'text', null, { amount: 1 }));
    await fc.assert(
      fc.asyncProperty(values, async (value) => {
        const { store, remit, id } = await parkedRun();
        expect((await remit.resume('r', id, 5)).status).toBe('completed');
        const after = await store.readRecords('r');
        await expect(remit.resume('r', id, value)).rejects.toMatchObject({ code: 'REMIT_ALREADY_CONSUMED', runId: 'r' });
        const other = await parkedRun();
        const seq = Number(other.id.split('@')[1]);
        await expect(other.remit.resume('r', `setAmount@${seq + 7}`, value)).rejects.toMatchObject({ code: 'REMIT_UNKNOWN_INTERRUPT', runId: 'r' });
        expect(await store.readRecords('r')).toEqual(after);
        expect((await other.remit.status('r')).status).toBe('parked');
      }),
      { numRuns: 25 },
    );
  });

  it('property: after any resume value, the run is completed, failed, or still parked and resumable', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.integer({ min: -5, max: 200 }), fc.constantFrom(7, 8, 9, 13, 42, 66, 88, 99, 500)), async (value) => {
        const { remit, id } = await parkedRun();
        const outcome = await remit.resume('r', id, value).then((r) => r.status, () => 'refused');
        if (outcome === 'refused') {
          expect((await remit.status('r')).status).toBe('parked');
          expect((await remit.resume('r', id, 5)).status).toBe('completed');
        } else {
          expect(['completed', 'failed']).toContain(outcome);
          expect((await remit.status('r')).status).toBe(outcome);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('a resume value the log cannot hold', () => {
  it('is refused naming the seq its claim would have taken, as a refused state names its record\'s seq', async () => {
    const anyValue = workflow({ name: 'any-value', version: '1', state: z.object({ v: z.any().optional() }) })
      .interrupt('ask', { resume: z.any(), apply: (_s, v) => ({ v }), next: END })
      .build();
    const remit = new Remit(new MemoryStore(), await createCore('reference'), [anyValue]);
    const parked = await remit.start(anyValue, {}, { runId: 'nj' });
    if (parked.status !== 'parked') throw new Error('expected a park');
    await expect(remit.resume('nj', parked.interrupt.id, 1n)).rejects.toMatchObject({ code: 'REMIT_NOT_JSON', runId: 'nj', seq: 2, node: 'ask' });
    await expect(remit.resume('nj', parked.interrupt.id, new Date(0))).rejects.toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', runId: 'nj', seq: 2, node: 'ask' });
    expect((await remit.status('nj')).status).toBe('parked');
  });
});
