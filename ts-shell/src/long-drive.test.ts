/**
 * A drive of many pure steps in a row, on stores that answer at once (SQLite's appends are
 * synchronous, the memory store's resolve as microtasks), lets the event loop run every few
 * milliseconds: a long loop does not hold the process's other work (timers, other requests),
 * where before it held the event loop for the whole drive, and a loop only the outside world ends
 * never ended.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { Remit } from './remit.js';
import { MemoryBacking, MemoryStore } from './store/memory.js';
import type { Store } from './store/store.js';
import { SqliteStore } from './store/sqlite.js';
import { END, workflow } from './workflow/workflow.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-long-drive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const core = await createCore('reference');

const Count = z.object({ n: z.number() });
/** Loops while n is below `until` (Infinity: never ends). */
const loop = (until: number) => workflow({ name: 'loop', version: '1', state: Count })
  .pure('tick', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n < until ? 'tick' : END) })
  .build();

/** A store, and one opened again on what it keeps (the same backing, the same file). */
const stores: Array<[string, () => { store: Store; reopen: () => Store }]> = [
  ['memory', () => {
    const backing = new MemoryBacking();
    return { store: new MemoryStore({ backing }), reopen: () => new MemoryStore({ backing }) };
  }],
  ['SQLite', () => {
    const path = join(dir, `${Math.random().toString(36).slice(2)}.db`);
    return { store: new SqliteStore(path), reopen: () => new SqliteStore(path) };
  }],
];

describe.each(stores)('a long drive on the %s store', (_name, open) => {
  it('lets timers fire while it runs, and completes', async () => {
    const remit = new Remit(open().store, core, [loop(20_000)]);
    let ticks = 0;
    const timer = setInterval(() => { ticks += 1; }, 5);
    try {
      const started = performance.now();
      const result = await remit.start(loop(20_000), { n: 0 }, { runId: 'long' });
      const elapsed = performance.now() - started;
      expect(result).toMatchObject({ status: 'completed', state: { n: 20_000 } });
      // A 5 ms interval fires about once per pause (10 ms); only a drive of under 20 ms may see none.
      if (elapsed > 40) expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
      await remit.close();
    }
  });

  it('of slow pure steps within one group (fewer than a group holds) lets a timer fire before it ends', async () => {
    const busy = (ms: number) => { const until = performance.now() + ms; while (performance.now() < until); };
    const slow = workflow({ name: 'slow', version: '1', state: Count })
      .pure('tick', { run: (s) => (busy(1), { n: s.n + 1 }), next: (s) => (s.n < 40 ? 'tick' : END) })
      .build();
    const remit = new Remit(open().store, core, [slow]);
    let ended = false;
    let firedBeforeEnd: boolean | undefined;
    setTimeout(() => { firedBeforeEnd = !ended; }, 5);
    const done = await remit.start(slow, { n: 0 }, { runId: 'slow' });
    ended = true;
    expect(done).toMatchObject({ status: 'completed', state: { n: 40 } });
    // 40 steps of 1 ms: at least 40 ms, in one group of pure steps; the 5 ms timer fired inside it.
    expect(firedBeforeEnd).toBe(true);
    await remit.close();
  });

  it('of a loop that only the outside world ends lets that world run: a timer ends it, and close() waits for it', async () => {
    let stop = false;
    const untilStopped = workflow({ name: 'until-stopped', version: '1', state: Count })
      .pure('tick', { run: (s) => ({ n: s.n + 1 }), next: () => (stop ? END : 'tick') })
      .build();
    const { store, reopen } = open();
    const remit = new Remit(store, core, [untilStopped]);
    const running = remit.start(untilStopped, { n: 0 }, { runId: 'until' });
    // Before the pauses this timer never fired: the drive held the event loop, and the loop never ended.
    setTimeout(() => { stop = true; }, 30);
    const result = await running;
    expect(result.status).toBe('completed');
    expect(result.state.n).toBeGreaterThan(1);
    await remit.close();
    // What the drive staged across its pauses is all recorded.
    const later = new Remit(reopen(), core, [untilStopped]);
    expect(await later.status('until')).toMatchObject({ status: 'completed', state: { n: result.state.n } });
    await later.close();
  });
});

describe('runs() over many runs on SQLite', () => {
  it('lets timers fire while it reads their logs (from a review of an approval inbox: 10,000 runs held the loop for 961 ms)', async () => {
    const one = workflow({ name: 'one', version: '1', state: Count }).pure('tick', { run: (s) => ({ n: s.n + 1 }), next: END }).build();
    const remit = new Remit(new SqliteStore(join(dir, 'many.db')), core, [one]);
    for (let i = 0; i < 1500; i++) await remit.start(one, { n: i }, { runId: `run-${i}` });
    let ticks = 0;
    const timer = setInterval(() => { ticks += 1; }, 5);
    try {
      const started = performance.now();
      const listed = await remit.runs();
      const elapsed = performance.now() - started;
      expect(listed).toHaveLength(1500);
      if (elapsed > 40) expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
      await remit.close();
    }
  });
});

describe('several long drives at once', () => {
  it('let the event loop run about every 10 ms between them all, not every 10 ms each (from a review: 64 recoverAll workers held it for 530 ms)', async () => {
    const remit = new Remit(new MemoryStore(), core, [loop(4000)]);
    let ticks = 0;
    const timer = setInterval(() => { ticks += 1; }, 1);
    try {
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => remit.start(loop(4000), { n: 0 }, { runId: `many-${i}` })));
      const elapsed = performance.now() - started;
      for (const result of results) expect(result.status).toBe('completed');
      // Paced one by one, eight drives gave a tick about every 80 ms; paced together, about every 10.
      if (elapsed > 200) expect(ticks, `${ticks} ticks in ${Math.round(elapsed)} ms`).toBeGreaterThan(elapsed / 40);
    } finally {
      clearInterval(timer);
      await remit.close();
    }
  });
});
