/**
 * close() waits for the operations still running on the instance: a graceful shutdown in the
 * middle of an effect must let its EFFECT_DONE be appended (else the next process calls the
 * handler again). Once close() is called the instance takes no new work: a call from outside its
 * operations fails with StoreError CLOSED before it touches the store, and recoverAll takes up no
 * other run (each one left is reported, and the next instance recovers it).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { EffectInFlightError, StoreError } from './errors.js';
import type { SequencerHooks } from './faults.js';
import { Remit } from './remit.js';
import { MemoryBacking, MemoryStore } from './store/memory.js';
import type { Store } from './store/store.js';
import { SqliteStore } from './store/sqlite.js';
import { END, workflow } from './workflow/workflow.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-close-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('close()', () => {
  it('waits for a run whose effect handler is running; the handler is called once across a restart', async () => {
    let calls = 0;
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => { entered = r; });
    const charge = workflow({ name: 'charge', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .effect('charge', {
        run: async () => {
          calls++;
          entered();
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
    await inHandler; // close() comes while the handler runs, not before it began
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
    // Both calls are in their wait (asleep between two reads of the run), recoverAll's too: a
    // close() that came before recoverAll took the run up would report it CLOSED (not looked at),
    // not EffectInFlightError. A fixed sleep did not make sure of that on a loaded machine.
    const sleeping = (remit as unknown as { sleeping: Set<unknown> }).sleeping;
    expect(sleeping).toBeInstanceOf(Set);
    while (sleeping.size < 2) await new Promise((r) => setTimeout(r, 5));
    const began = Date.now();
    await remit.close();
    // Not the wait's 60 s, nor attempt 1's 30 s lease (the wait would end there and take it over).
    expect(Date.now() - began).toBeLessThan(15_000);
    expect(await continuing).toBeInstanceOf(EffectInFlightError);
    expect(await continuing).toMatchObject({ runId: 'w', node: 'charge', owner: 'dead', attempt: 1 });
    const [outcome] = await recovering;
    expect(outcome).toMatchObject({ runId: 'w' });
    expect((outcome as { error: unknown }).error).toBeInstanceOf(EffectInFlightError);
    expect(calls).toBe(0);
  });

  /**
   * A memory store whose reads can be held at a gate: the round trip of a networked store, during
   * which close() is called. Before, the read's caller went on to drive the run, took the expired
   * attempt over and called the handler after close() had begun.
   */
  function gatedStore(backing: MemoryBacking) {
    const base = new MemoryStore({ backing });
    let gate: Promise<void> | null = null;
    let open: () => void = () => {};
    let held = 0;
    const store = Object.create(base) as Store;
    for (const method of ['readRun', 'readRecords', 'readSummary'] as const) {
      const read = (base[method] as (...args: unknown[]) => Promise<unknown>).bind(base);
      (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        if (gate !== null) {
          held++;
          await gate;
        }
        return read(...args);
      };
    }
    return {
      store,
      hold: () => { gate = new Promise<void>((resolve) => (open = resolve)); held = 0; },
      release: () => { gate = null; open(); },
      heldReads: () => held,
    };
  }

  async function abandonedAttempt(backing: MemoryBacking, wf: ReturnType<typeof chargeWith>, runId: string): Promise<void> {
    const crash: SequencerHooks = { at(point, info) { if (point === 'append.after' && info.kinds?.includes('EFFECT_ATTEMPT')) throw new Error('crash'); } };
    const dead = new Remit(new MemoryStore({ backing }), await createCore('reference'), [wf], crash, {}, { instanceId: 'dead' });
    await expect(dead.start(wf, {}, { runId })).rejects.toThrow('crash');
  }

  function chargeWith(calls: { n: number }, leaseMs: number) {
    return workflow({ name: 'charge-gated', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .effect('charge', { leaseMs, run: () => { calls.n++; return { ok: true }; }, apply: (_s, r) => r, next: END })
      .build();
  }

  const until = async (done: () => boolean) => { while (!done()) await new Promise((r) => setTimeout(r, 2)); };

  it('a waiting continueRun whose read of the run is under way when close() is called calls no handler and throws what it waited out', async () => {
    const calls = { n: 0 };
    const backing = new MemoryBacking();
    const wf = chargeWith(calls, 300);
    await abandonedAttempt(backing, wf, 'g');
    const gated = gatedStore(backing);
    const remit = new Remit(gated.store, await createCore('reference'), [wf], undefined, {}, { instanceId: 'closing' });
    const continuing = remit.continueRun('g', { waitForEffectMs: 10_000 }).catch((e: unknown) => e);
    const sleeping = (remit as unknown as { sleeping: Set<unknown> }).sleeping;
    await until(() => sleeping.size > 0); // refused once: attempt 1's lease is live
    gated.hold();
    await until(() => gated.heldReads() > 0); // its next read of the run is under way
    await new Promise((r) => setTimeout(r, 350)); // attempt 1's lease has ended meanwhile
    const closing = remit.close();
    gated.release();
    await closing;
    expect(await continuing).toBeInstanceOf(EffectInFlightError);
    expect(calls.n).toBe(0);
  });

  it('recoverAll does not continue a run it was reading when close() was called: reported CLOSED, no handler called', async () => {
    const calls = { n: 0 };
    const backing = new MemoryBacking();
    const wf = chargeWith(calls, 1_000);
    await abandonedAttempt(backing, wf, 'h');
    await new Promise((r) => setTimeout(r, 1_050)); // attempt 1's lease has ended: a continue would take it over
    const gated = gatedStore(backing);
    const remit = new Remit(gated.store, await createCore('reference'), [wf], undefined, {}, { instanceId: 'closing' });
    gated.hold();
    const recovering = remit.recoverAll();
    await until(() => gated.heldReads() > 0);
    const closing = remit.close();
    gated.release();
    await closing;
    const [outcome] = await recovering;
    expect(outcome).toMatchObject({ runId: 'h' });
    const error = (outcome as { error: unknown }).error;
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'CLOSED', runId: 'h' });
    expect((error as Error).message).toMatch(/recoverAll read this run and did not continue it/);
    expect(calls.n).toBe(0);
  });

  it('refuses a call made after close() was called, from outside the instance\'s work, with StoreError CLOSED naming the operation and the run; nothing is written', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const slow = workflow({ name: 'slow', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .effect('wait', { run: async () => { await held; return { ok: true }; }, apply: (_s, r) => r, next: END })
      .build();
    const db = join(dir, 'refused.db');
    const core = await createCore('reference');
    const remit = new Remit(new SqliteStore(db), core, [slow]);
    const running = remit.start(slow, {}, { runId: 'in-flight' });
    await new Promise((r) => setTimeout(r, 20));
    const closing = remit.close();
    const calls: [string, () => Promise<unknown>, string | undefined][] = [
      ['start', () => remit.start(slow, {}, { runId: 'late' }), 'late'],
      ['start', () => remit.start(slow, {}), undefined],
      ['resume', () => remit.resume('in-flight', 'i', {}), 'in-flight'],
      ['continueRun', () => remit.continueRun('in-flight'), 'in-flight'],
      ['status', () => remit.status('in-flight'), 'in-flight'],
      ['fork', () => remit.fork('in-flight', 0), 'in-flight'],
      ['runs', () => remit.runs(), undefined],
      ['recoverAll', () => remit.recoverAll(), undefined],
    ];
    for (const beforeOrAfter of ['while close() waits', 'after close() resolved']) {
      for (const [operation, call, runId] of calls) {
        const error = await call().then(() => 'resolved', (e: unknown) => e);
        expect(error, `${operation} ${beforeOrAfter}`).toBeInstanceOf(StoreError);
        expect(error, `${operation} ${beforeOrAfter}`).toMatchObject({ operation, storeCode: 'CLOSED', runId });
        expect((error as Error).message).toMatch(/close\(\) was called/);
      }
      if (beforeOrAfter === 'while close() waits') {
        release();
        await expect(running).resolves.toMatchObject({ status: 'completed' });
        await closing;
      }
    }
    const reopened = new Remit(new SqliteStore(db), core, [slow]);
    expect((await reopened.runs()).map((r) => r.runId)).toEqual(['in-flight']);
    await reopened.close();
  });

  it('lets the work it waits for make calls: a handler that starts another run while close() waits', async () => {
    let remit!: Remit;
    const child = workflow({ name: 'child', version: '1', state: z.object({ n: z.number() }) }).pure('inc', { run: (s) => ({ n: s.n + 1 }), next: END }).build();
    const parent = workflow({ name: 'parent', version: '1', state: z.object({ childStatus: z.string().optional() }) })
      .effect('spawn', {
        run: async () => {
          await new Promise((r) => setTimeout(r, 50));
          return { childStatus: (await remit.start(child, { n: 1 }, { runId: 'child' })).status };
        },
        apply: (_s, r) => r,
        next: END,
      })
      .build();
    remit = new Remit(new MemoryStore(), await createCore('reference'), [parent, child]);
    const running = remit.start(parent, {}, { runId: 'parent' });
    await new Promise((r) => setTimeout(r, 10));
    await remit.close();
    await expect(running).resolves.toMatchObject({ status: 'completed', state: { childStatus: 'completed' } });
  });

  it('stops recoverAll taking up runs: every candidate is continued once or reported CLOSED, and the next instance recovers the rest (fast-check over when close() comes and how many runs are driven at once)', async () => {
    const core = await createCore('reference');
    let calls = new Map<string, number>();
    let closeCalled = false;
    let startedAfterClose = 0;
    const charge = workflow({ name: 'charge-many', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .effect('charge', {
        run: async (_s, ctx) => {
          calls.set(ctx.runId, (calls.get(ctx.runId) ?? 0) + 1);
          if (closeCalled) startedAfterClose++;
          await new Promise((r) => setTimeout(r, 5));
          return { ok: true };
        },
        apply: (_s, r) => r,
        next: END,
      })
      .build();
    // Interrupted runs: RUN_STARTED committed, then the process "crashed".
    const crash: SequencerHooks = { at(point, info) { if (point === 'append.after' && info.kinds?.includes('RUN_STARTED')) throw new Error('crash'); } };
    let sample = 0;
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 3 }), async (runs, closeAfterMs, concurrency) => {
      const db = join(dir, `recover-all-${sample++}.db`);
      const ids = Array.from({ length: runs }, (_, i) => `r${i}`);
      const crashing = new Remit(new SqliteStore(db), core, [charge], crash);
      for (const runId of ids) await expect(crashing.start(charge, {}, { runId })).rejects.toThrow('crash');
      await crashing.close();
      calls = new Map();
      closeCalled = false;
      startedAfterClose = 0;

      const first = new Remit(new SqliteStore(db), core, [charge]);
      const recovering = first.recoverAll({ concurrency });
      await new Promise((r) => setTimeout(r, closeAfterMs));
      closeCalled = true;
      await first.close();
      const outcomes = await recovering;
      expect(outcomes.map((o) => o.runId).sort()).toEqual(ids);
      const left: string[] = [];
      for (const outcome of outcomes) {
        if ('result' in outcome) {
          expect(outcome.result.status).toBe('completed');
        } else {
          expect(outcome.error).toBeInstanceOf(StoreError);
          expect(outcome.error).toMatchObject({ operation: 'recoverAll', storeCode: 'CLOSED', runId: outcome.runId });
          left.push(outcome.runId);
        }
      }
      // No run was taken up after close() was called but the ones being continued then.
      expect(startedAfterClose).toBeLessThanOrEqual(concurrency);
      expect(calls.size).toBe(runs - left.length);

      const second = new Remit(new SqliteStore(db), core, [charge]);
      const rest = await second.recoverAll();
      expect(rest.map((o) => o.runId).sort()).toEqual(left.sort());
      for (const outcome of rest) expect(outcome).toMatchObject({ result: { status: 'completed' } });
      await second.close();
      for (const runId of ids) expect(calls.get(runId), runId).toBe(1);
    }), { numRuns: 16 });
  });
});
