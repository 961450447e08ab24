/**
 * Review of the day's changes as a user meets them: close() with one store object shared by
 * several instances (remit.ts, STORE_USERS), in the cases the first tests did not reach; and a
 * route that changes the state it is given, which the guide's lost-update row says is lost.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRemit, END, openMemoryStore, openSqliteStore, workflow, type Remit, type Store } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-todays-review-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A full garbage collection (the flag set at run time; vm's context then has gc). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const nextTask = () => new Promise<void>((resolve) => setImmediate(resolve));

const counter = workflow({ name: 'count', version: '1', state: z.object({ n: z.number() }) })
  .pure('add', { run: (s) => ({ n: s.n + 1 }), next: END })
  .build();

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

describe('a store left open by close() for an instance dropped without close()', () => {
  it('is closed once that instance is collected (it stayed open for good: nothing was left to close it)', async () => {
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

  it('is not closed by that collection while another instance given it is still open', async () => {
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

describe('a route that changes the state it is given', () => {
  it('changes nothing recorded, whatever the state\'s size (its change was recorded when the step wrote a delta, a large state, and lost with a snapshot, a small one)', async () => {
    const wf = workflow({ name: 'route-writes', version: '1', state: z.object({ n: z.number(), notes: z.string() }) })
      .pure('add', { run: (s) => ({ n: s.n + 1 }), next: (s) => { (s as { n: number }).n = 99; return 'done'; } })
      .pure('done', { run: () => ({}), next: END })
      .build();
    for (const notes of ['', 'x'.repeat(5000)]) {
      const store = openMemoryStore();
      const remit = await createRemit({ store, workflows: [wf], core: 'reference' });
      await expect(remit.start(wf, { n: 1, notes }, { runId: 'r' })).resolves.toMatchObject({ status: 'completed', state: { n: 2 } });
      const reader = await createRemit({ store, workflows: [wf], core: 'reference' });
      await expect(reader.status('r')).resolves.toMatchObject({ status: 'completed', state: { n: 2 } });
      await remit.close();
      await reader.close();
    }
  });
});
