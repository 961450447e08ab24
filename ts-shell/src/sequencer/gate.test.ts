/**
 * The consume-once gate under racing resumers (docs/guide.md, "Concurrent sequencers"): k Remit
 * instances, each with its own store connection, resume one parked interrupt at the same moment.
 * Exactly one wins; every other one is refused by the core (AlreadyConsumedError), and each racer
 * reads the run once: a loser of the conditional append learns what won from the records the
 * store reports with the refusal (AppendOutcome.tail), not from a second read. On the memory,
 * SQLite and PostgreSQL stores.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { AlreadyConsumedError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { PostgresStore } from '../store/postgres.js';
import { SqliteStore } from '../store/sqlite.js';
import { countingReads } from '../../test-support/counting-reads.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import type { Store } from '../store/store.js';
import { END, workflow } from '../workflow/workflow.js';

const State = z.object({ step: z.number().int(), approved: z.string() });
const parked = workflow({ name: 'gate', version: '1', state: State })
  .pure('work', { run: (s) => ({ step: s.step + 1 }), next: 'approve' })
  .interrupt('approve', { resume: z.string(), apply: (_s, v) => ({ approved: v }), next: 'finish' })
  .pure('finish', { run: (s) => ({ step: s.step + 1 }), next: END })
  .build();

type OpenHandle = () => Promise<Store>;

function describeGate(name: string, openHandle: () => Promise<OpenHandle>, runs: number): void {
  it(`${name}: of k racers resuming one interrupt exactly one wins, the others are refused ALREADY_CONSUMED, each reading the run once`, async () => {
    const core = await createCore('wasm');
    const open = await openHandle();
    const preparer = new Remit(await open(), core, [parked]);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), fc.array(fc.string({ maxLength: 12 }), { minLength: 8, maxLength: 8 }), async (k, values) => {
        const runId = `gate-${run++}`;
        const started = await preparer.start(parked, { step: 0, approved: '' }, { runId });
        expect(started.status).toBe('parked');
        const handles = await Promise.all(Array.from({ length: k }, async () => countingReads(await open())));
        const racers = handles.map((h) => new Remit(h.store, core, [parked]));
        try {
          const settled = await Promise.allSettled(racers.map((r, i) => r.resume(runId, started.interrupt!.id, values[i])));
          const winners = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [i] : []));
          expect(winners).toHaveLength(1);
          for (const s of settled) {
            if (s.status === 'rejected') expect(s.reason).toBeInstanceOf(AlreadyConsumedError);
          }
          const winner = winners[0]!;
          const done = settled[winner] as PromiseFulfilledResult<Awaited<ReturnType<Remit['resume']>>>;
          expect(done.value).toMatchObject({ status: 'completed', state: { step: 2, approved: values[winner] } });
          // Losers: one read each (the cold read); the store's refusal told them what won.
          handles.forEach((h, i) => {
            if (i !== winner) expect(h.count.calls).toBe(1);
          });
          expect((await preparer.status(runId)).state).toEqual({ step: 2, approved: values[winner] });
        } finally {
          for (const r of racers) await r.close();
        }
      }),
      { numRuns: runs },
    );
    await preparer.close();
  });
}

describe('consume-once gate', () => {
  describeGate('memory', async () => {
    const backing = new MemoryBacking();
    return async () => new MemoryStore({ backing });
  }, 30);

  const dir = mkdtempSync(join(tmpdir(), 'remit-gate-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  describeGate('sqlite', async () => {
    const file = join(dir, 'gate.db');
    return async () => new SqliteStore(file, { synchronous: 'NORMAL' });
  }, 20);
});

describePg('consume-once gate on postgres', (url) => {
  const schemas = new Set<string>();
  afterAll(async () => dropSchemas(url, schemas));
  describeGate('postgres', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    return () => PostgresStore.open({ connectionString: url, schema, maxConnections: 2 });
  }, 12);
});
