/**
 * Group commit of consecutive pure steps (docs/guide.md, "Crash and resume semantics"): the log is
 * byte for byte the one a run without grouping writes; fewer appends carry it; hooks still fire
 * once per step's records, in order; a failure inside a group keeps what completed before it; a
 * lost group only runs pure code again. Memory store; the reference and the Wasm core.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import type { RecoveryCore } from '../core/types.js';
import { ConflictError, HandlerThrewError, StateInvalidError, fail } from '../errors.js';
import type { FaultInfo, FaultPoint, SequencerHooks } from '../faults.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import type { AppendOutcome, Store } from '../store/store.js';
import { logFacts } from '../../test-support/contract-checks.js';
import { END, workflow } from '../workflow/workflow.js';

const cores: RecoveryCore[] = [await createCore('reference')];
try {
  cores.push(await createCore('wasm'));
} catch {
  // The Wasm build is optional here; the model-based and equivalence suites insist on it.
}

/** A memory store that counts appends and the records each carried. */
class CountingStore extends MemoryStore {
  readonly batches: number[] = [];
  override async append(runId: string, expectedSeq: number, records: Uint8Array[]): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records);
    if (outcome.committed) this.batches.push(records.length);
    return outcome;
  }
}

const State = z.object({
  i: z.number().int(),
  trail: z.array(z.string()),
  note: z.string().optional(),
  sent: z.string().optional(),
  answer: z.string().optional(),
});
type S = z.infer<typeof State>;

interface Behaviour {
  spins: number;
  /** What `spin` does at i === at: throw an ordinary error, fail the run, or return an invalid state. */
  breakAt?: { at: number; how: 'throw' | 'terminal' | 'invalid' };
}

function chain(behaviour: Behaviour, counters: { pure: number; effect: number }) {
  return workflow({ name: 'chain', version: '1', state: State })
    .pure('first', { run: (s) => { counters.pure++; return { trail: [...s.trail, 'first'] }; }, next: 'second' })
    .pure('second', { run: () => { counters.pure++; return { note: 'x'.repeat(120) }; }, next: 'spin' })
    .pure('spin', {
      run: (s) => {
        counters.pure++;
        const b = behaviour.breakAt;
        if (b && s.i === b.at) {
          if (b.how === 'throw') throw new Error('spin broke');
          if (b.how === 'terminal') fail('SPIN_FAILED', 'spin gave up');
          return { i: -1.5 };
        }
        return { i: s.i + 1, trail: [...s.trail, `s${s.i}`] };
      },
      next: (s) => (s.i < behaviour.spins ? 'spin' : 'send'),
    })
    .effect('send', {
      run: (s, ctx) => { counters.effect++; return `sent:${ctx.idempotencyKey}:${s.i}`; },
      apply: (_s, r: string) => ({ sent: r }),
      next: 'after',
    })
    .pure('after', { run: (s) => { counters.pure++; return { trail: [...s.trail, 'after'] }; }, next: 'ask' })
    .interrupt('ask', { resume: z.string(), apply: (_s, v) => ({ answer: v }), next: 'finish' })
    .pure('finish', { run: (s) => { counters.pure++; return { trail: [...s.trail, 'finish'] }; }, next: END })
    .build();
}

const initial: S = { i: 0, trail: [] };

/** One instance id and a fixed clock, so that two runs write the same lease bytes. */
const FENCE = { instanceId: 'test-instance', now: () => 1_700_000_000_000 };

async function runChain(core: RecoveryCore, groupPureSteps: boolean, behaviour: Behaviour, hooks?: SequencerHooks) {
  const counters = { pure: 0, effect: 0 };
  const wf = chain(behaviour, counters);
  const store = new CountingStore();
  const remit = new Remit(store, core, [wf], hooks, { groupPureSteps }, FENCE);
  const parked = await remit.start(wf, initial, { runId: 'c' });
  expect(parked.status).toBe('parked');
  const done = await remit.resume('c', parked.interrupt!.id, 'yes');
  expect(done.status).toBe('completed');
  return { store, remit, wf, counters, done, log: await store.readLog('c') };
}

for (const core of cores) {
  describe(`group commit (${core.name} core)`, () => {
    it('writes the same log bytes as one append per step, in far fewer appends', async () => {
      for (const spins of [3, 63, 64, 65, 200]) {
        const grouped = await runChain(core, true, { spins });
        const single = await runChain(core, false, { spins });
        expect(grouped.log).toEqual(single.log);
        expect(grouped.done.state).toEqual(single.done.state);
        expect(grouped.counters).toEqual(single.counters);
        const records = logFacts('c', grouped.log).records.length;
        expect(single.store.batches.reduce((a, b) => a + b, 0)).toBe(records);
        expect(grouped.store.batches.reduce((a, b) => a + b, 0)).toBe(records);
        // Start; the pure steps up to send's intent and attempt 1 (a group at most every 64 steps);
        // send's result and completion; after's completion with the park; the claim; ask's and finish's
        // completions with the end.
        const pureBeforeSend = 2 + spins;
        expect(grouped.store.batches.length, JSON.stringify(grouped.store.batches)).toBe(1 + Math.ceil(pureBeforeSend / 64) + 1 + 1 + 1 + 1);
        expect(grouped.store.batches.slice(-4)).toEqual([2, 2, 1, 3]);
        expect(single.store.batches.length).toBeGreaterThan(spins + 5);
      }
    });

    it('fires append hooks once per step, in seq order, before and after the one append of a group', async () => {
      const seen: string[] = [];
      const hooks: SequencerHooks = {
        at(point: FaultPoint, info: FaultInfo) {
          if (point === 'append.before' || point === 'append.after' || point === 'pure.before-return') {
            seen.push(`${point} ${info.seq} ${info.node ?? '-'} ${(info.kinds ?? []).join('+')}`.trim());
          }
        },
      };
      const grouped = await runChain(core, true, { spins: 2 }, hooks);
      const groupedSeen = seen.splice(0);
      await runChain(core, false, { spins: 2 }, hooks);
      const singleSeen = seen.splice(0);
      expect(groupedSeen.slice(0, 13)).toEqual([
        'append.before 0 - RUN_STARTED',
        'append.after 0 - RUN_STARTED',
        'pure.before-return 1 first',
        'pure.before-return 2 second',
        'pure.before-return 3 spin',
        'pure.before-return 4 spin',
        'append.before 1 first NODE_COMPLETED',
        'append.before 2 second NODE_COMPLETED',
        'append.before 3 spin NODE_COMPLETED',
        'append.before 4 spin NODE_COMPLETED',
        'append.before 5 send EFFECT_INTENT+EFFECT_ATTEMPT',
        'append.after 1 first NODE_COMPLETED',
        'append.after 2 second NODE_COMPLETED',
      ]);
      // Same events, only the order of before/after around grouped appends differs.
      expect([...groupedSeen].sort()).toEqual([...singleSeen].sort());
      expect(grouped.store.batches).toEqual([1, 6, 2, 2, 1, 3]);
    });

    it('an ordinary throw inside a group keeps the completed steps; continuing finishes the same run', async () => {
      const behaviour: Behaviour = { spins: 10, breakAt: { at: 4, how: 'throw' } };
      const counters = { pure: 0, effect: 0 };
      const store = new CountingStore();
      const remit = new Remit(store, core, [chain(behaviour, counters)], undefined, { groupPureSteps: true }, FENCE);
      const error = await remit.start('chain', initial, { runId: 'c' }).catch((e) => e);
      expect(error).toBeInstanceOf(HandlerThrewError);
      expect(error).toMatchObject({ node: 'spin', seq: 7 });
      // RUN_STARTED, first, second, spin ×4 (i = 0..3) are durable; spin at i = 4 is not.
      expect(logFacts('c', await store.readLog('c')).completedNodes).toEqual(['first', 'second', 'spin', 'spin', 'spin', 'spin']);
      behaviour.breakAt = undefined;
      const parked = await remit.continueRun('c');
      await remit.resume('c', parked.interrupt!.id, 'yes');
      const reference = await runChain(core, false, { spins: 10 });
      expect(await store.readLog('c')).toEqual(reference.log);
    });

    it('a terminal failure inside a group appends the completed steps and RUN_FAILED together', async () => {
      const counters = { pure: 0, effect: 0 };
      const store = new CountingStore();
      const remit = new Remit(store, core, [chain({ spins: 10, breakAt: { at: 2, how: 'terminal' } }, counters)], undefined, {}, FENCE);
      const failed = await remit.start('chain', initial, { runId: 'c' });
      expect(failed).toMatchObject({ status: 'failed', failure: { node: 'spin', code: 'SPIN_FAILED' }, headSeq: 5 });
      expect(store.batches).toEqual([1, 5]);
      expect(failed.state).toMatchObject({ i: 2 });
    });

    it('an invalid state inside a group keeps the steps before it and records nothing for the bad one', async () => {
      const counters = { pure: 0, effect: 0 };
      const store = new CountingStore();
      const remit = new Remit(store, core, [chain({ spins: 10, breakAt: { at: 3, how: 'invalid' } }, counters)], undefined, {}, FENCE);
      const error = await remit.start('chain', initial, { runId: 'c' }).catch((e) => e);
      expect(error).toBeInstanceOf(StateInvalidError);
      expect(error).toMatchObject({ field: 'i', seq: 6 });
      expect(logFacts('c', await store.readLog('c')).completedNodes).toEqual(['first', 'second', 'spin', 'spin', 'spin']);
      expect((await remit.status('c')).state).toMatchObject({ i: 3 });
    });

    it('a group lost before its append (a fault at append.before) only runs pure code again', async () => {
      const counters = { pure: 0, effect: 0 };
      const backing = new MemoryBacking();
      const wf = chain({ spins: 5 }, counters);
      let armed = true;
      const hooks: SequencerHooks = {
        at(point, info) {
          if (armed && point === 'append.before' && info.kinds?.includes('EFFECT_INTENT')) {
            armed = false;
            throw new Error('crash before the group is durable');
          }
        },
      };
      const store = new MemoryStore({ backing });
      await expect(new Remit(store, core, [wf], hooks, {}, FENCE).start(wf, initial, { runId: 'c' })).rejects.toThrow('crash before');
      expect(logFacts('c', await store.readLog('c')).completedNodes).toEqual([]);
      expect(counters).toEqual({ pure: 7, effect: 0 });
      const again = new Remit(new MemoryStore({ backing }), core, [wf], undefined, {}, FENCE);
      const parked = await again.continueRun('c');
      expect(parked.status).toBe('parked');
      expect(counters).toEqual({ pure: 15, effect: 1 });
      await again.resume('c', parked.interrupt!.id, 'yes');
      expect(await store.readLog('c')).toEqual((await runChain(core, false, { spins: 5 })).log);
    });

    it('two sequencers racing with groups: one writes each step, the other gets ConflictError and writes nothing', async () => {
      const backing = new MemoryBacking();
      const counters = { pure: 0, effect: 0 };
      const wf = chain({ spins: 100 }, counters);
      const starter = new Remit(new MemoryStore({ backing }), core, [wf], {
        at(point, info) { if (point === 'append.after' && info.kinds?.[0] === 'RUN_STARTED') throw new Error('stop after start'); },
      });
      await expect(starter.start(wf, initial, { runId: 'c' })).rejects.toThrow('stop after start');
      const outcomes = await Promise.allSettled([0, 1].map(() => new Remit(new MemoryStore({ backing }), core, [wf]).continueRun('c')));
      const winners = outcomes.filter((o) => o.status === 'fulfilled');
      expect(winners.length).toBeGreaterThanOrEqual(1);
      for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(ConflictError);
      const log = await new MemoryStore({ backing }).readLog('c');
      expect(core.recover(log)).toMatchObject({ ok: true, status: 2 });
      expect(logFacts('c', log).completedNodes.filter((n) => n === 'spin')).toHaveLength(100);
    });

    it('node code gets a copy of the state: mutating it in place changes nothing recorded or cached', async () => {
      const Mut = z.object({ n: z.number(), items: z.array(z.number()) });
      const wf = workflow({ name: 'mut', version: '1', state: Mut })
        .pure('a', { run: (s) => { const m = s as { n: number; items: number[] }; m.items.push(99); m.n = 1000; return { n: 1 }; }, next: 'b' })
        .pure('b', { run: (s) => ({ n: s.n + 1, items: [...s.items, s.n] }), next: END })
        .build();
      const store = new MemoryStore();
      const done = await new Remit(store, core, [wf]).start(wf, { n: 0, items: [] }, { runId: 'm' });
      expect(done.state).toEqual({ n: 2, items: [1] });
      done.state.items.push(5);
      expect((await new Remit(store, core, [wf]).status('m')).state).toEqual({ n: 2, items: [1] });
    });

    it('groupPureSteps: false appends once per step; maxGroupedPureSteps bounds a group', async () => {
      const counters = { pure: 0, effect: 0 };
      const wf = chain({ spins: 30 }, counters);
      const single = new CountingStore();
      await new Remit(single, core, [wf], undefined, { groupPureSteps: false }, FENCE).start(wf, initial, { runId: 'c' });
      expect(single.batches.slice(0, 4)).toEqual([1, 1, 1, 1]);
      const bounded = new CountingStore();
      await new Remit(bounded, core, [wf], undefined, { maxGroupedPureSteps: 8 }, FENCE).start(wf, initial, { runId: 'c' });
      expect(bounded.batches.slice(0, 6)).toEqual([1, 8, 8, 8, 10, 2]);
      expect(await bounded.readLog('c')).toEqual(await single.readLog('c'));
      expect(() => new Remit(new MemoryStore(), core, [wf], undefined, { maxGroupedPureSteps: 0 })).toThrow(RangeError);
    });
  });
}

void ({} as Store);
