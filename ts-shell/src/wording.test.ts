/**
 * Messages read as English and say what to do: "an" before a vowel-initial kind, "1 record", and
 * DefinitionMismatchError naming the way to finish the runs of an old definition
 * (docs/guide.md, "Changing a workflow").
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { count, withArticle } from './display.js';
import { DefinitionMismatchError, StateInvalidError } from './errors.js';
import { renderInspection } from './inspect.js';
import { Remit } from './remit.js';
import { MemoryBacking, MemoryStore } from './store/memory.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');

describe('articles and counts', () => {
  it('withArticle and count', () => {
    expect(['EFFECT_ATTEMPT', 'INTERRUPT_PARKED', 'Error', 'undefined', 'Object', 'ArrayBuffer'].map(withArticle)).toEqual([
      'an EFFECT_ATTEMPT', 'an INTERRUPT_PARKED', 'an Error', 'an undefined', 'an Object', 'an ArrayBuffer',
    ]);
    expect(['RESUME_CLAIMED', 'FORKED', 'Uint8Array', 'Promise', 'Map', 'string'].map(withArticle)).toEqual([
      'a RESUME_CLAIMED', 'a FORKED', 'a Uint8Array', 'a Promise', 'a Map', 'a string',
    ]);
    expect([count(0, 'run'), count(1, 'run'), count(2, 'run')]).toEqual(['0 runs', '1 run', '2 runs']);
  });

  it('a node returning an Error is refused naming "an Error"', async () => {
    const wf = workflow({ name: 'bad', version: '1', state: z.object({ n: z.number() }) })
      .pure('oops', { run: () => new Error('not a state') as never, next: END })
      .build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const error = await remit.start(wf, { n: 0 }, { runId: 'r' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateInvalidError);
    expect((error as Error).message).toMatch(/\(got an Error\)/);
    expect((error as Error).message).not.toMatch(/\ba Error\b/);
  });

  it('the core names a bad argument with the right article', async () => {
    const refused = (bad: unknown) => {
      try {
        core.recover(bad as never);
      } catch (error) {
        return (error as { received: string }).received;
      }
      return 'accepted';
    };
    expect([undefined, null, {}, new ArrayBuffer(1), 'log', [1]].map(refused)).toEqual(['undefined', 'null', 'an Object', 'an ArrayBuffer', 'a string', 'an array']);
  });

  it('renderInspection counts one record in the singular', async () => {
    const wf = workflow({ name: 'step', version: '1', state: z.object({ n: z.number() }) })
      .pure('inc', { run: (s) => ({ n: s.n + 1 }), next: END })
      .build();
    const backing = new MemoryBacking();
    // A crash right after RUN_STARTED is durable: the log holds one record.
    const stop = { at(point: string, info: { kinds?: string[] }) { if (point === 'append.after' && info.kinds?.includes('RUN_STARTED')) throw new Error('crash'); } };
    await expect(new Remit(new MemoryStore({ backing }), core, [wf], stop, { groupPureSteps: false }).start(wf, { n: 0 }, { runId: 'one' })).rejects.toThrow('crash');
    const text = renderInspection(await new Remit(new MemoryStore({ backing }), core, [wf]).inspect('one'));
    expect(text).toMatch(/^1 record, \d+ bytes \(/m);
  });
});

describe('DefinitionMismatchError', () => {
  it('says how to finish the runs of the old definition: keep registering it, and register the changed one under a new name', async () => {
    const State = z.object({ n: z.number() });
    const v1 = workflow({ name: 'refund', version: '1', state: State }).interrupt('approve', { resume: z.object({}), apply: () => ({}), next: END }).build();
    const v2 = workflow({ name: 'refund', version: '2', state: State }).interrupt('approve', { resume: z.object({}), apply: () => ({}), next: END }).build();
    const backing = new MemoryBacking();
    const parked = await new Remit(new MemoryStore({ backing }), core, [v1]).start(v1, { n: 0 }, { runId: 'old' });
    const error = await new Remit(new MemoryStore({ backing }), core, [v2]).resume('old', parked.interrupt!.id, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DefinitionMismatchError);
    expect((error as Error).message).toMatch(/version changed from 1 to 2/);
    expect((error as Error).message).toMatch(/register the definition it was started under, unchanged, .*under a new workflow name/);
    expect((error as Error).message).toContain('docs/guide.md, "Changing a workflow"');
    // The way it names works: v1 as it was, the changed definition under another name.
    const both = new Remit(new MemoryStore({ backing }), core, [v1, workflow({ name: 'refund-2', version: '1', state: State }).interrupt('approve', { resume: z.object({}), apply: () => ({}), next: END }).build()]);
    expect((await both.resume('old', parked.interrupt!.id, {})).status).toBe('completed');
  });
});
