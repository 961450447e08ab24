/**
 * close() waits for the operations still running on the instance: a graceful shutdown in the
 * middle of an effect must let its EFFECT_DONE be appended (else the next process calls the
 * handler again), and an operation after close() fails with a typed store error.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { EffectInFlightError, StoreError } from './errors.js';
import type { SequencerHooks } from './faults.js';
import { Remit } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { SqliteStore } from './store/sqlite.js';
import { END, workflow } from './workflow/workflow.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-close-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('close()', () => {
  it('waits for a run whose effect handler is running; the handler is called once across a restart', async () => {
    let calls = 0;
    const charge = workflow({ name: 'charge', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .effect('charge', {
        run: async () => {
          calls++;
          await new Promise((r) => setTimeout(r, 100));
          return { ok: true };
        },
        apply: (_s, r) => r,
        next: END,
      })
      .build();
    const db = join(dir, 'close.db');
    const core = await createCore('reference');
    const first = new Remit(new SqliteStore(db), core, [charge]);
    const running = first.start(charge, {}, { runId: 'r' });
    await new Promise((r) => setTimeout(r, 20));
    const closing = first.close();
    await expect(running).resolves.toMatchObject({ status: 'completed', state: { ok: true } });
    await closing;
    await expect(first.status('r')).rejects.toBeInstanceOf(StoreError);

    const second = new Remit(new SqliteStore(db), core, [charge]);
    expect(await second.continueRun('r')).toMatchObject({ status: 'completed' });
    expect(calls).toBe(1);
    await second.close();
    await second.close(); // twice is fine
  });

  it('called from inside a handler, it does not wait for its own operation (no deadlock); that operation fails with a StoreError', async () => {
    let remit!: Remit;
    const selfClosing = workflow({ name: 'self-closing', version: '1', state: z.object({ n: z.number() }) })
      .effect('e', {
        run: async () => {
          await remit.close();
          return { done: true };
        },
        next: END,
      })
      .build();
    remit = new Remit(new SqliteStore(join(dir, 'self.db')), await createCore('reference'), [selfClosing]);
    const outcome = await Promise.race([
      remit.start(selfClosing, { n: 0 }, { runId: 's' }).then(() => 'resolved', (e: unknown) => e),
      new Promise((r) => setTimeout(() => r('deadlocked'), 5000)),
    ]);
    expect(outcome).toBeInstanceOf(StoreError);
  });

  it('waits for every operation that reads the store, workflowOf and status included, begun before it', async () => {
    const parks = workflow({ name: 'parks', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => v, next: END })
      .build();
    const core = await createCore('reference');
    const reads = { workflowOf: (r: Remit) => r.workflowOf('p').then((wf) => wf.name), status: (r: Remit) => r.status('p').then((run) => run.status) };
    // One instance per read: close() waiting for one would let another finish meanwhile.
    for (const [name, read] of Object.entries(reads)) {
      const remit = new Remit(new MemoryStore(), core, [parks]);
      await remit.start(parks, {}, { runId: 'p' });
      const reading = read(remit).catch((e: unknown) => e);
      await remit.close();
      expect(await reading, name).toMatch(/^park/);
      await expect(read(remit), name).rejects.toBeInstanceOf(StoreError);
    }
  });

  it('stops a waitForEffectMs wait at once: the waiting calls throw EffectInFlightError, no handler is called, close() resolves', async () => {
    let calls = 0;
    const charge = workflow({ name: 'charge-wait', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .effect('charge', { run: () => { calls++; return { ok: true }; }, apply: (_s, r) => r, next: END })
      .build();
    const db = join(dir, 'wait.db');
    const core = await createCore('reference');
    // Another replica claimed attempt 1 and stopped there (its lease, 30 s, is live).
    const crash: SequencerHooks = { at(point, info) { if (point === 'append.after' && info.kinds?.includes('EFFECT_ATTEMPT')) throw new Error('crash'); } };
    const dead = new Remit(new SqliteStore(db), core, [charge], crash, {}, { instanceId: 'dead' });
    await expect(dead.start(charge, {}, { runId: 'w' })).rejects.toThrow('crash');
    await dead.close();

    const remit = new Remit(new SqliteStore(db), core, [charge], undefined, {}, { instanceId: 'closing' });
    const continuing = remit.continueRun('w', { waitForEffectMs: 60_000 }).catch((e: unknown) => e);
    const recovering = remit.recoverAll({ waitForEffectMs: 60_000 });
    await new Promise((r) => setTimeout(r, 100));
    const began = Date.now();
    await remit.close();
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(await continuing).toBeInstanceOf(EffectInFlightError);
    expect(await continuing).toMatchObject({ runId: 'w', node: 'charge', owner: 'dead', attempt: 1 });
    const [outcome] = await recovering;
    expect(outcome).toMatchObject({ runId: 'w' });
    expect((outcome as { error: unknown }).error).toBeInstanceOf(EffectInFlightError);
    expect(calls).toBe(0);
  });
});
