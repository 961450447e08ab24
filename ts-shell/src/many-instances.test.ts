/**
 * A process may create many Remit instances (a test suite, a service that builds one per tenant):
 * each must not add to the cost of every later await. Node keeps every AsyncLocalStorage that ever
 * ran and copies each into every new promise (one symbol-keyed slot per storage on the async
 * resource), so the instances share one storage: the slots seen inside an operation do not grow
 * with the number of instances created.
 */

import { executionAsyncResource } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { Remit } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { END, workflow } from './workflow/workflow.js';

/** The AsyncLocalStorage slots on the async resource the calling code runs in. */
const storageSlots = () => Object.getOwnPropertySymbols(executionAsyncResource()).filter((s) => s.description === 'kResourceStore').length;

describe('many Remit instances in one process', () => {
  it('share one async storage: the storage slots inside an operation do not grow with the instances created', async () => {
    const core = await createCore('reference');
    const seen: number[] = [];
    const probe = workflow({ name: 'probe', version: '1', state: z.object({ n: z.number() }) })
      .pure('look', { run: async (s) => { await Promise.resolve(); seen.push(storageSlots()); return { n: s.n + 1 }; }, next: END })
      .build();
    const runOnce = async () => new Remit(new MemoryStore(), core, [probe]).start(probe, { n: 0 });
    await runOnce();
    for (let i = 0; i < 200; i++) await runOnce();
    expect(seen).toHaveLength(201);
    expect(seen[0]).toBeGreaterThan(0); // the probe sees the storage it counts
    expect(new Set(seen)).toEqual(new Set([seen[0]]));
  });
});
