/**
 * A store that answers an append as no sound store does is a StoreError naming what it did, not
 * a lost race: a refusal whose next seq is behind records the session was told were committed
 * (RECORDS_LOST), a commit reported with another next seq (BAD_APPEND_OUTCOME). As a race, the
 * first left the run undriven ("another sequencer has it") and ran its steps and effects again
 * on the next recovery. The broken stores are the store contract's mutants
 * (test-support/store-mutants.ts).
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { ConflictError, StoreError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { STORE_MUTANTS } from '../../test-support/store-mutants.js';
import { END, workflow } from '../workflow/workflow.js';

const mutant = (name: string) => STORE_MUTANTS.find((m) => m.name === name)!.Store;

describe('the sequencer on a store that lies about its appends', () => {
  const calls: string[] = [];
  const flow = workflow({ name: 'lied-to', version: '1', state: z.object({ n: z.number(), sent: z.string().optional() }) })
    .pure('a', { run: (s) => ({ n: s.n + 1 }), next: 'send' })
    .effect('send', {
      run: async (_s, { idempotencyKey }) => {
        calls.push(idempotencyKey);
        return { id: idempotencyKey };
      },
      apply: (_s, sent: { id: string }) => ({ sent: sent.id }),
      next: 'b',
    })
    .pure('b', { run: (s) => ({ n: s.n + 1 }), next: END })
    .build();
  const remitOn = async (store: MemoryStore) => new Remit(store, await createCore('reference'), [flow]);

  it.each(['drops-later-batches', 'drops-last-record-of-batch'])('%s: records reported committed, then missing, are RECORDS_LOST, not a race', async (name) => {
    calls.length = 0;
    const Store = mutant(name);
    const error = await (await remitOn(new Store())).start(flow, { n: 0 }, { runId: 'r' }).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ConflictError);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'RECORDS_LOST', operation: 'append', runId: 'r' });
    expect((error as Error).message).toMatch(/gone, though it reported them committed/u);
    expect(calls.length).toBeLessThanOrEqual(1);
  });

  it('a commit reported with another next seq is BAD_APPEND_OUTCOME', async () => {
    const error = await (await remitOn(new (mutant('commit-reports-old-next-seq'))())).start(flow, { n: 0 }, { runId: 'r' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'BAD_APPEND_OUTCOME', operation: 'append', runId: 'r', seq: 0 });
  });

  it('a sound store: the same run completes, its effect called once', async () => {
    calls.length = 0;
    const backing = new MemoryBacking();
    const run = await (await remitOn(new MemoryStore({ backing }))).start(flow, { n: 0 }, { runId: 'r' });
    expect(run).toMatchObject({ status: 'completed', state: { n: 2 } });
    expect(calls).toHaveLength(1);
  });
});
