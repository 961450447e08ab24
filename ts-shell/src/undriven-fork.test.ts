/**
 * A fork nobody has continued waits for continueRun (docs/guide.md, "Fork"): recoverAll neither
 * drives nor reports it, so a fork made to look at a run, at a checkpoint before an effect, never
 * calls that effect at the next start-up (it would be a new effect: the fork's key is new). Once
 * continued, a fork is recovered like any run. On the memory and SQLite stores, through the
 * library and the CLI's listing.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { renderInspection } from './inspect.js';
import { Remit } from './remit.js';
import { MemoryBacking, MemoryStore } from './store/memory.js';
import { SqliteStore } from './store/sqlite.js';
import type { Store } from './store/store.js';
import { END, workflow } from './workflow/workflow.js';
import type { SequencerHooks } from './faults.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-undriven-fork-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const calls: string[] = [];
const order = workflow({ name: 'order', version: '1', state: z.object({ n: z.number(), sent: z.string().optional() }) })
  .pure('prepare', { run: (s) => ({ n: s.n + 1 }), next: 'send' })
  .effect('send', { run: (_s, { idempotencyKey }) => (calls.push(idempotencyKey), { id: idempotencyKey }), apply: (_s, r) => ({ sent: r.id }), next: 'finish' })
  .pure('finish', { run: (s) => ({ n: s.n * 2 }), next: END })
  .build();

const targets: Array<[string, () => { open: () => Store }]> = [
  ['memory', () => { const backing = new MemoryBacking(); return { open: () => new MemoryStore({ backing }) }; }],
  ['sqlite', () => { const path = join(dir, `${Math.random().toString(36).slice(2)}.db`); return { open: () => new SqliteStore(path, { synchronous: 'NORMAL' }) }; }],
];

describe.each(targets)('a fork nobody continued, on the %s store', (_name, target) => {
  it('is neither driven nor reported by recoverAll, is marked by runs(), and is driven by continueRun', async () => {
    calls.length = 0;
    const core = await createCore('reference');
    const { open } = target();
    const first = open();
    const remit = new Remit(first, core, [order]);
    expect((await remit.start(order, { n: 1 }, { runId: 'o1' })).status).toBe('completed');
    expect(calls).toEqual(['o1/send/2']);
    // seq 1 is prepare's NODE_COMPLETED: the checkpoint before the effect.
    const fork = await remit.fork('o1', 1, { newRunId: 'o1-look', intent: { why: 'investigate' } });
    await first.close();

    const restarted = open();
    const service = new Remit(restarted, core, [order]);
    expect(await service.recoverAll()).toEqual([]);
    expect(calls).toEqual(['o1/send/2']);
    const listed = (await service.runs()).find((r) => r.runId === fork.runId);
    expect(listed).toMatchObject({ status: 'running', undrivenFork: true });
    expect((await service.runs()).find((r) => r.runId === 'o1')).not.toHaveProperty('undrivenFork');
    const inspected = await service.inspect(fork.runId);
    expect(inspected).toMatchObject({ status: 'running', undrivenFork: true });
    expect(renderInspection(inspected)).toMatch(/^fork, not continued: recoverAll leaves it alone; continue it with remit continue o1-look$/m);
    expect(await service.inspect('o1')).not.toHaveProperty('undrivenFork');
    // Still there at the next start-up, still waiting.
    expect(await new Remit(restarted, core, [order]).recoverAll()).toEqual([]);

    const continued = await service.continueRun(fork.runId);
    expect(continued.status).toBe('completed');
    expect(calls).toEqual(['o1/send/2', 'o1-look/send/3']);
    expect((await service.runs()).find((r) => r.runId === fork.runId)).not.toHaveProperty('undrivenFork');
    expect(await service.inspect(fork.runId)).not.toHaveProperty('undrivenFork');
    await restarted.close();
  });

  it('stays waiting after a continue whose first node fails, and is driven by recoverAll after one whose later node throws', async () => {
    calls.length = 0;
    let failAt: 'first' | 'second' | null = null;
    const chain = workflow({ name: 'chain', version: '1', state: z.object({ n: z.number() }) })
      .pure('first', { run: (s) => (failAt === 'first' ? { n: 'not a number' as unknown as number } : { n: s.n + 1 }), next: 'second' })
      .pure('second', { run: (s) => { if (failAt === 'second') throw new Error('transient'); return { n: s.n * 2 }; }, next: 'send' })
      .effect('send', { run: (_s, { idempotencyKey }) => (calls.push(idempotencyKey), {}), next: END })
      .build();
    for (const groupPureSteps of [true, false]) {
      const core = await createCore('reference');
      const store = target().open();
      const remit = new Remit(store, core, [chain], undefined, { groupPureSteps });
      await remit.start(chain, { n: 1 }, { runId: 'c' });
      const fork = await remit.fork('c', 0, { newRunId: 'c-again' });
      // The first node returns an invalid state: nothing committed, the fork still waits.
      failAt = 'first';
      await expect(remit.continueRun(fork.runId)).rejects.toMatchObject({ code: 'REMIT_STATE_INVALID', node: 'first' });
      expect(await remit.inspect(fork.runId)).toMatchObject({ headSeq: 1, undrivenFork: true });
      expect(await remit.recoverAll()).toEqual([]);
      // The second node throws: the first one's completion is appended first, so the fork has
      // been continued, and the next recoverAll drives it on, its effect included.
      failAt = 'second';
      await expect(remit.continueRun(fork.runId)).rejects.toMatchObject({ code: 'REMIT_HANDLER_THREW', node: 'second' });
      const continued = await remit.inspect(fork.runId);
      expect(continued.records.map((r) => r.kind)).toEqual(['RUN_STARTED', 'FORKED', 'NODE_COMPLETED']);
      expect(continued).not.toHaveProperty('undrivenFork');
      failAt = null;
      const outcomes = await remit.recoverAll();
      expect(outcomes.map((o) => [o.runId, 'result' in o ? o.result.status : o.error])).toEqual([['c-again', 'completed']]);
      expect(calls.splice(0)).toEqual(['c/send/3', 'c-again/send/4']);
      await store.close();
    }
  });

  it('is continued by a continue whose first node is an effect whose handler throws: the next recoverAll calls it again', async () => {
    // The guide says so: the attempt is committed before the handler is called (the fence).
    const sent: string[] = [];
    let handlerThrows = false;
    const charge = workflow({ name: 'charge-first', version: '1', state: z.object({ n: z.number() }) })
      .pure('a', { run: (s) => ({ n: s.n + 1 }), next: 'charge' })
      .effect('charge', { run: (_s, { idempotencyKey }) => { sent.push(idempotencyKey); if (handlerThrows) throw new Error('ETIMEDOUT'); return {}; }, next: END })
      .build();
    const store = target().open();
    const remit = new Remit(store, await createCore('reference'), [charge]);
    await remit.start(charge, { n: 0 }, { runId: 's' });
    await remit.fork('s', 1, { newRunId: 'look' });
    handlerThrows = true;
    await expect(remit.continueRun('look')).rejects.toMatchObject({ code: 'REMIT_HANDLER_THREW', node: 'charge' });
    const continued = await remit.inspect('look');
    expect(continued.records.map((r) => r.kind)).toEqual(['RUN_STARTED', 'NODE_COMPLETED', 'FORKED', 'EFFECT_INTENT', 'EFFECT_ATTEMPT', 'EFFECT_RELEASED']);
    expect(continued).not.toHaveProperty('undrivenFork');
    handlerThrows = false;
    expect((await remit.recoverAll()).map((o) => o.runId)).toEqual(['look']);
    expect(sent).toEqual(['s/charge/2', 'look/charge/3', 'look/charge/3']);
    await store.close();
  });

  it('a resume of it is refused as not parked, saying it is a fork nobody continued and how to drive it', async () => {
    const asks = workflow({ name: 'asks', version: '1', state: z.object({ n: z.number() }) })
      .interrupt('ask', { resume: z.number(), apply: (_s, v) => ({ n: v }), next: END })
      .build();
    const remit = new Remit(target().open(), await createCore('reference'), [asks]);
    const parked = await remit.start(asks, { n: 0 }, { runId: 'q' });
    await remit.fork('q', 0, { newRunId: 'q-fork' });
    // Status says running, as the log does (no flag on RunResult): runs() and inspect() mark the fork.
    expect(await remit.status('q-fork')).toMatchObject({ status: 'running', headSeq: 1 });
    const refused = remit.resume('q-fork', parked.interrupt!.id, 1);
    await expect(refused).rejects.toMatchObject({ code: 'REMIT_NOT_PARKED', status: 'running', runId: 'q-fork' });
    await expect(refused).rejects.toThrow(
      /^cannot resume ask@1: the run is running, not parked; it is a fork that nobody has continued yet \(its last record is FORKED\): drive it with `remit continue q-fork` \(Remit\.continueRun\), then resume it once it parks \[/,
    );
    // Once continued it parks, and the resume goes through; later refusals carry no fork advice.
    const continued = await remit.continueRun('q-fork');
    expect(continued.status).toBe('parked');
    expect((await remit.resume('q-fork', continued.interrupt!.id, 2)).status).toBe('completed');
    await expect(remit.resume('q-fork', continued.interrupt!.id, 3)).rejects.not.toThrow(/nobody has continued/);
  });

  it('once continued and crashed, it is recovered by recoverAll like any run', async () => {
    calls.length = 0;
    const core = await createCore('reference');
    const { open } = target();
    const first = open();
    await new Remit(first, core, [order]).start(order, { n: 1 }, { runId: 'o2' });
    await new Remit(first, core, [order]).fork('o2', 1, { newRunId: 'o2-redo' });
    // The continue crashes right after its first commit (the effect's intent and attempt).
    const crash: SequencerHooks = { at: (point) => { if (point === 'append.after') throw new Error('crash'); } };
    await expect(new Remit(first, core, [order], crash, undefined, { instanceId: 'replica-1' }).continueRun('o2-redo')).rejects.toThrow('crash');
    await first.close();

    const restarted = open();
    // The restarted replica keeps its instance id, so it takes its own attempt over at once.
    const outcomes = await new Remit(restarted, core, [order], undefined, undefined, { instanceId: 'replica-1' }).recoverAll();
    expect(outcomes.map((o) => [o.runId, 'result' in o ? o.result.status : o.error])).toEqual([['o2-redo', 'completed']]);
    expect(calls.filter((k) => k.startsWith('o2-redo/'))).toEqual(['o2-redo/send/3']);
    await restarted.close();
  });
});
