/**
 * One Node process, the public API used as a new user writes it: concurrent calls on one run and
 * on many, two instances on one SQLite file, close() while runs are in flight, calls after it, and
 * the errors each gets (class, code, and the run, seq and node they name). Real stores: memory and
 * SQLite in a temporary folder.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AlreadyConsumedError, ArgumentInvalidError, ConflictError, createRemit, EffectInFlightError, END, NotParkedError, openMemoryStore, openSqliteStore, RunExistsError,
  StoreError, UnknownWorkflowError, workflow, type Remit, type Store,
} from './index.js';
import { storeUserEntries } from './remit.js';
import { testRecord } from './testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-one-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A full garbage collection (the flag set at run time; vm's context then has gc). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const rejection = (promise: Promise<unknown>) => promise.then(() => { throw new Error('expected a rejection'); }, (error: unknown) => error);

/** An effect whose handler takes `ms`, counting its calls. */
function slowCharge(ms: number) {
  const calls: string[] = [];
  const wf = workflow({ name: 'charge', version: '1', state: z.object({ n: z.number(), receipt: z.string().optional() }) })
    .effect('charge', {
      run: async (_s, { idempotencyKey }) => {
        calls.push(idempotencyKey);
        await sleep(ms);
        return { receipt: `r-${idempotencyKey}` };
      },
      apply: (_s, result) => ({ receipt: result.receipt }),
      next: END,
    })
    .build();
  return { wf, calls };
}

const approval = workflow({ name: 'approval', version: '1', state: z.object({ n: z.number(), ok: z.boolean().optional() }) })
  .pure('count', { run: async (s) => { await sleep(50); return { n: s.n + 1 }; }, next: 'ask' })
  .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: END })
  .build();

const counter = workflow({ name: 'count', version: '1', state: z.object({ n: z.number() }) })
  .pure('add', { run: (s) => ({ n: s.n + 1 }), next: END })
  .build();

const nextTask = () => new Promise<void>((resolve) => setImmediate(resolve));

async function isClosed(store: Store): Promise<boolean> {
  return store.listRuns().then(() => false, (error: unknown) => (error as { storeCode?: unknown }).storeCode === 'CLOSED');
}

/** Collects garbage until `store` is closed, each time in a later task (finalizers run in one): at most `rounds` times. */
async function closedAfterCollection(store: Store, rounds: number): Promise<boolean> {
  for (let i = 0; i < rounds; i++) {
    await nextTask();
    collectGarbage();
    await nextTask();
    if (await isClosed(store)) return true;
  }
  return false;
}

describe('a closed SQLite store', () => {
  it('refuses every call with StoreError CLOSED naming the operation, the run and the seq, as the memory store does', async () => {
    for (const store of [openSqliteStore(join(dir, 'closed.db')), openMemoryStore()]) {
      await store.close();
      // better-sqlite3's own refusal ("The database connection is not open") read as SQLITE_ERROR.
      await expect(store.append('r', 1, [testRecord(1)])).rejects.toMatchObject({ code: 'REMIT_STORE', storeCode: 'CLOSED', operation: 'append', runId: 'r', seq: 1 });
      await expect(store.readRecords('r')).rejects.toMatchObject({ storeCode: 'CLOSED', operation: 'readRecords', runId: 'r' });
      await expect(store.listRuns()).rejects.toMatchObject({ storeCode: 'CLOSED', operation: 'listRuns' });
      await store.close(); // twice is fine
    }
  });
});

describe('two instances given one store object', () => {
  it('the close() of one does not cut off the other\'s effect: its EFFECT_DONE is recorded, the handler called once; the last close() closes the store', async () => {
    const { wf, calls } = slowCharge(150);
    const store = openSqliteStore(join(dir, 'shared.db'));
    const a = await createRemit({ store, workflows: [wf], core: 'reference' });
    const b = await createRemit({ store, workflows: [wf], core: 'reference' });
    const running = b.start(wf, { n: 1 }, { runId: 'shared' });
    await sleep(40);
    await a.close();
    // Before the fix a.close() closed the store under b: the handler ran, its EFFECT_DONE could
    // not be written, and every other instance was refused the run until the lease expired.
    await expect(running).resolves.toMatchObject({ status: 'completed', state: { receipt: 'r-shared/charge/1' } });
    await expect(b.status('shared')).resolves.toMatchObject({ status: 'completed' });
    await b.close();
    await expect(store.readRecords('shared')).rejects.toMatchObject({ storeCode: 'CLOSED' });
    expect(calls).toEqual(['shared/charge/1']);
  });
});

describe('instances dropped without close() on a shared store', () => {
  it('do not keep it open: once collected, the close() of the one left closes it', async () => {
    const { wf } = slowCharge(0);
    const store = openSqliteStore(join(dir, 'dropped.db'));
    // One instance per request, never closed, as a service sharing one store would make them.
    for (let i = 0; i < 20; i++) await (await createRemit({ store, workflows: [wf], core: 'reference' })).start(wf, { n: i });
    await sleep(0);
    collectGarbage();
    const last = await createRemit({ store, workflows: [wf], core: 'reference' });
    await last.close();
    await expect(store.listRuns()).rejects.toMatchObject({ storeCode: 'CLOSED' });
  });

  it('a store a close() left open for one of them is closed once that instance is collected (it stayed open for good: nothing was left to close it)', async () => {
    const store = openSqliteStore(join(dir, 'dropped-after-close.db'));
    const kept = await createRemit({ store, workflows: [counter], core: 'reference' });
    let dropped: Remit | undefined = await createRemit({ store, workflows: [counter], core: 'reference' });
    await dropped.start(counter, { n: 1 }, { runId: 'r' });
    await kept.close();
    // Still reachable, never closed: it counts, so the store stays open for it (docs/guide.md, "Closing").
    expect(await isClosed(store)).toBe(false);
    await expect(dropped.status('r')).resolves.toMatchObject({ status: 'completed' });
    dropped = undefined;
    expect(await closedAfterCollection(store, 200)).toBe(true);
  });

  it('leave nothing behind once collected: a store given an instance per request keeps no entry per request', async () => {
    const store = openMemoryStore();
    const kept = await createRemit({ store, workflows: [counter], core: 'reference' });
    for (let i = 0; i < 200; i++) await (await createRemit({ store, workflows: [counter], core: 'reference' })).start(counter, { n: i });
    for (let i = 0; i < 200 && storeUserEntries(store) > 1; i++) {
      await nextTask();
      collectGarbage();
    }
    // Before, each dropped instance left its entry until a close() of the store's last user.
    expect(storeUserEntries(store)).toBe(1);
    await kept.close();
  });

  it('that collection does not close the store while another instance given it is still open', async () => {
    const store = openSqliteStore(join(dir, 'dropped-other-open.db'));
    const first = await createRemit({ store, workflows: [counter], core: 'reference' });
    const open = await createRemit({ store, workflows: [counter], core: 'reference' });
    let dropped: Remit | undefined = await createRemit({ store, workflows: [counter], core: 'reference' });
    const collected = new WeakRef(dropped);
    dropped = undefined;
    await first.close();
    for (let i = 0; i < 200 && collected.deref() !== undefined; i++) {
      await nextTask();
      collectGarbage();
    }
    expect(collected.deref()).toBeUndefined();
    await nextTask();
    await expect(open.start(counter, { n: 1 }, { runId: 'still-open' })).resolves.toMatchObject({ status: 'completed' });
    await open.close();
    expect(await isClosed(store)).toBe(true);
  });
});

describe('concurrent calls in one instance', () => {
  it('of five resumes of one interrupt at once exactly one wins; the others are AlreadyConsumedError naming the winner\'s claim', async () => {
    const remit = await createRemit({ store: openSqliteStore(join(dir, 'resumes.db')), workflows: [approval], core: 'reference' });
    const parked = await remit.start(approval, { n: 0 }, { runId: 'p' });
    if (parked.status !== 'parked') throw new Error('expected a park');
    const outcomes = await Promise.allSettled([1, 2, 3, 4, 5].map(() => remit.resume('p', parked.interrupt.id, { ok: true })));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const o of outcomes) {
      if (o.status === 'rejected') expect(o.reason).toMatchObject({ constructor: AlreadyConsumedError, runId: 'p', seq: 3, node: 'ask', interruptId: 'ask@2' });
    }
    await remit.close();
  });

  it('of four starts under one run id one starts the run; the others are RunExistsError naming it at seq 0', async () => {
    const remit = await createRemit({ store: openMemoryStore(), workflows: [approval], core: 'reference' });
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((n) => remit.start(approval, { n }, { runId: 'same' })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ constructor: RunExistsError, runId: 'same', seq: 0 });
    expect((await remit.runs()).map((r) => r.runId)).toEqual(['same']);
    await remit.close();
  });

  it('a resume or continue racing a start still running its first node is refused, typed, and the start parks as if alone', async () => {
    const remit = await createRemit({ store: openMemoryStore(), workflows: [approval], core: 'reference' });
    const starting = remit.start(approval, { n: 0 }, { runId: 'early' });
    await sleep(10);
    expect(await rejection(remit.resume('early', 'ask@2', { ok: true }))).toMatchObject({ constructor: NotParkedError, runId: 'early', status: 'running' });
    // The continue runs the (deterministic) pure node too; the start's append commits first.
    expect(await rejection(remit.continueRun('early'))).toMatchObject({ constructor: ConflictError, runId: 'early', seq: 1 });
    await expect(starting).resolves.toMatchObject({ status: 'parked', state: { n: 1 }, interrupt: { id: 'ask@2' } });
    await remit.close();
  });

  it('a continue of a run whose handler this instance is running is EffectInFlightError (runningHere) naming run, seq and node; with waitForEffectMs it returns the run, the handler called once', async () => {
    const { wf, calls } = slowCharge(150);
    const remit = await createRemit({ store: openSqliteStore(join(dir, 'inflight.db')), workflows: [wf], core: 'reference' });
    const starting = remit.start(wf, { n: 1 }, { runId: 'busy' });
    await sleep(40);
    expect(await rejection(remit.continueRun('busy'))).toMatchObject({
      constructor: EffectInFlightError, runId: 'busy', seq: 2, node: 'charge', key: 'busy/charge/1', runningHere: true, retryAfterMs: 50,
    });
    await expect(remit.continueRun('busy', { waitForEffectMs: 2000 })).resolves.toMatchObject({ status: 'completed' });
    await expect(starting).resolves.toMatchObject({ status: 'completed' });
    expect(calls).toEqual(['busy/charge/1']);
    await remit.close();
  });

  it('twenty runs started and continued at once on one SQLite file by two instances all complete, each handler once', async () => {
    const { wf, calls } = slowCharge(5);
    const db = join(dir, 'many.db');
    const a = await createRemit({ store: openSqliteStore(db), workflows: [wf], core: 'reference' });
    const b = await createRemit({ store: openSqliteStore(db), workflows: [wf], core: 'reference' });
    const ids = Array.from({ length: 20 }, (_, i) => `m${i}`);
    const started = await Promise.allSettled(ids.map((id, i) => (i % 2 === 0 ? a : b).start(wf, { n: i }, { runId: id })));
    expect(started.every((o) => o.status === 'fulfilled' && o.value.status === 'completed')).toBe(true);
    const continued = await Promise.all(ids.map((id, i) => (i % 2 === 0 ? b : a).continueRun(id)));
    expect(continued.every((r) => r.status === 'completed')).toBe(true);
    expect([...calls].sort()).toEqual(ids.map((id) => `${id}/charge/1`).sort());
    await Promise.all([a.close(), b.close()]);
  });
});

describe('close() with runs in flight', () => {
  it('lets a run in flight finish, refuses a later call naming its run, and a new instance on the file sees every run', async () => {
    const { wf, calls } = slowCharge(100);
    const db = join(dir, 'closing.db');
    const remit = await createRemit({ store: openSqliteStore(db), workflows: [wf], core: 'reference' });
    const starting = remit.start(wf, { n: 1 }, { runId: 'c1' });
    await sleep(20);
    const waiting = remit.continueRun('c1', { waitForEffectMs: 5000 });
    await sleep(20);
    const closing = remit.close();
    // The waiting continue stops at close(), having called nothing; the start finishes its effect.
    expect(await rejection(waiting)).toMatchObject({ constructor: EffectInFlightError, runId: 'c1', runningHere: true });
    await expect(starting).resolves.toMatchObject({ status: 'completed' });
    await closing;
    expect(await rejection(remit.start(wf, { n: 2 }, { runId: 'c2' }))).toMatchObject({ constructor: StoreError, storeCode: 'CLOSED', operation: 'start', runId: 'c2' });
    expect(await rejection(remit.resume('c1', 'x@1', {}))).toMatchObject({ storeCode: 'CLOSED', operation: 'resume', runId: 'c1' });
    const next = await createRemit({ store: openSqliteStore(db), workflows: [wf], core: 'reference' });
    expect((await next.runs()).map((r) => [r.runId, r.status])).toEqual([['c1', 'completed']]);
    expect(calls).toEqual(['c1/charge/1']);
    await next.close();
  });
});

describe('names and ids of any size from a caller', () => {
  it('an interrupt id whose node part is longer than any node name is ArgumentInvalidError, cut short; the interrupt stays parked', async () => {
    const remit = await createRemit({ store: openMemoryStore(), workflows: [approval], core: 'reference' });
    await remit.start(approval, { n: 0 }, { runId: 'long' });
    const error = await rejection(remit.resume('long', `${'x'.repeat(1_000_000)}@2`, { ok: true }));
    // It was UnknownInterruptError with the id twice in its message: 2 MB of text.
    expect(error).toMatchObject({ constructor: ArgumentInvalidError, runId: 'long', argument: 'interruptId' });
    expect((error as Error).message.length).toBeLessThan(400);
    await expect(remit.resume('long', 'ask@2', { ok: true })).resolves.toMatchObject({ status: 'completed' });
    await remit.close();
  });

  it('an unknown workflow name of a megabyte is named cut short in UnknownWorkflowError\'s message, whole in its field', async () => {
    const remit = await createRemit({ store: openMemoryStore(), workflows: [approval], core: 'reference' });
    const name = 'w'.repeat(1_000_000);
    const error = await rejection(remit.start(name as never, { n: 0 } as never, { runId: 'u' }));
    expect(error).toMatchObject({ constructor: UnknownWorkflowError, workflow: name, runId: 'u' });
    expect((error as Error).message.length).toBeLessThan(400);
    expect((error as Error).message).toContain('(1000000 characters)');
    await remit.close();
  });
});

describe('a call after close() naming a run id the call would refuse', () => {
  it('is StoreError CLOSED without that id: no NUL, lone surrogate or megabyte of it in the error', async () => {
    const remit = await createRemit({ store: openMemoryStore(), core: 'reference' });
    await remit.close();
    for (const id of ['bad\u0000id', 'lone\ud800', 'x'.repeat(100_000), '']) {
      const error = await rejection(remit.status(id));
      expect(error).toMatchObject({ constructor: StoreError, storeCode: 'CLOSED', operation: 'status' });
      expect((error as StoreError).runId).toBeUndefined();
      expect((error as Error).message.length).toBeLessThan(400);
    }
    expect(await rejection(remit.status('order-7'))).toMatchObject({ storeCode: 'CLOSED', runId: 'order-7' });
  });
});
