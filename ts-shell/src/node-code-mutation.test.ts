/**
 * Node code that changes the state it is given, in place, changes nothing recorded: a pure node's
 * run, a route, an effect's handler and apply, an interrupt's apply, whatever the state's size (a
 * small state is recorded as a snapshot, a large one as a delta). A route was given the state the
 * step records and its change was recorded when the step wrote a delta, lost with a snapshot
 * (docs/guide.md, the lost-update row of "Checking your own workflow", says what happens instead).
 * The run's result, and the state a fresh instance reads back, are what the returned updates make.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRemit, END, openMemoryStore, workflow } from './index.js';

const State = z.object({ n: z.number(), notes: z.string(), items: z.array(z.string()) });
type S = z.infer<typeof State>;

/**
 * Changes the small fields of the state it is given, in place (`notes` is left alone: a change to
 * a large field makes the delta large, and the step then writes a snapshot whatever the size).
 */
function scribble(state: Readonly<S>): void {
  const s = state as S;
  s.n = 99;
  s.items.push('leaked');
}

type Kind = 'pure run' | 'route' | 'effect handler' | 'effect apply' | 'interrupt apply';
const KINDS: readonly Kind[] = ['pure run', 'route', 'effect handler', 'effect apply', 'interrupt apply'];

/** A workflow whose one node of `kind` scribbles on its state and returns n + 1 (its other code leaves the state alone). */
function scribbling(kind: Kind) {
  const start = workflow({ name: `scribble-${kind.replace(' ', '-')}`, version: '1', state: State });
  const plusOne = (s: Readonly<S>) => ({ n: s.n + 1 });
  if (kind === 'pure run' || kind === 'route') {
    return start
      .pure('step', {
        run: (s) => { const update = plusOne(s); if (kind === 'pure run') scribble(s); return update; },
        next: (s) => { if (kind === 'route') scribble(s); return 'done'; },
      })
      .pure('done', { run: () => ({}), next: END })
      .build();
  }
  if (kind === 'interrupt apply') {
    return start
      .interrupt('ask', { resume: z.boolean(), apply: (s) => { const update = plusOne(s); scribble(s); return update; }, next: END })
      .build();
  }
  return start
    .effect('charge', {
      run: (s) => { if (kind === 'effect handler') scribble(s); return { ok: true }; },
      apply: (s) => { const update = plusOne(s); if (kind === 'effect apply') scribble(s); return update; },
      next: END,
    })
    .build();
}

describe('node code that changes the state it is given', () => {
  it('changes nothing recorded, in any kind of node code, at any state size (snapshot or delta)', async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom(...KINDS), fc.integer({ min: 0, max: 6000 }), fc.integer({ min: -5, max: 5 }), async (kind, size, n) => {
      const wf = scribbling(kind);
      const store = openMemoryStore();
      const remit = await createRemit({ store, workflows: [wf], core: 'reference' });
      const input = { n, notes: 'x'.repeat(size), items: ['a'] };
      const expected = { n: n + 1, notes: input.notes, items: ['a'] };
      const started = await remit.start(wf, input, { runId: 'r' });
      const run = started.status === 'parked' ? await remit.resume('r', started.interrupt.id, true) : started;
      expect(run).toMatchObject({ status: 'completed', state: expected });
      const reader = await createRemit({ store, workflows: [wf], core: 'reference' });
      expect(await reader.status('r')).toMatchObject({ status: 'completed', state: expected });
      await remit.close();
      await reader.close();
    }), {
      numRuns: 60,
      // The shrunk counterexample of the route's change recorded (a delta), and a large state.
      examples: [['route', 13, -2], ['route', 5000, 1]],
    });
  });
});
