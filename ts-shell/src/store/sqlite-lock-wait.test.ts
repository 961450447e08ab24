/**
 * SQLite: another connection holding the write lock (a backup, the sqlite3 shell, a migration, a
 * second store on the file) is waited out on timers, never inside a call. better-sqlite3 is
 * synchronous and SQLite's busy handler sleeps inside the call, so a held lock froze the whole
 * service: its timers, requests and signal handlers (found by a review of a service on REMIT: a
 * health check that never touched REMIT answered after the lock's 3 s). Here the lock is held by
 * a connection of this same process, which could not even let go of it while the thread slept.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { StoreError } from '../errors.js';
import { Remit } from '../remit.js';
import { END, workflow } from '../workflow/workflow.js';
import { openSqliteStore } from './sqlite.js';

const core = await createCore('reference');
const wf = workflow({ name: 'w', version: '1', state: z.object({ n: z.number() }) }).pure('p', { run: (s) => ({ n: s.n + 1 }), next: END }).build();
const root = mkdtempSync(join(tmpdir(), 'remit-lock-wait-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Counts the ticks of a 5 ms interval while `work` runs: how often the event loop got to run. */
async function ticksDuring<T>(work: Promise<T>): Promise<{ ticks: number; outcome: T | unknown }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  try {
    const outcome = await work.catch((error: unknown) => error);
    return { ticks, outcome };
  } finally {
    clearInterval(timer);
  }
}

describe('another connection holds the SQLite write lock', () => {
  it('a write waits for it without blocking the event loop, and commits once the lock is let go', async () => {
    const path = join(root, 'released.db');
    const remit = new Remit(openSqliteStore(path), core, [wf]);
    await remit.start(wf, { n: 0 }, { runId: 'before' });
    const locker = new Database(path);
    locker.exec('BEGIN IMMEDIATE');
    setTimeout(() => locker.exec('COMMIT'), 200);
    const { ticks, outcome } = await ticksDuring(remit.start(wf, { n: 1 }, { runId: 'during' }));
    expect(outcome).toMatchObject({ runId: 'during', status: 'completed', state: { n: 2 } });
    // About 40 ticks in 200 ms; with the wait inside the call there were none, and the lock was
    // never let go (its timer could not run): the write failed after the 5 s busy timeout.
    expect(ticks).toBeGreaterThan(10);
    locker.close();
    expect((await remit.runs()).map((r) => r.runId).sort()).toEqual(['before', 'during']);
    await remit.close();
  });

  it('held past busyTimeoutMs: StoreError SQLITE_BUSY naming the run, nothing written, the event loop free meanwhile', async () => {
    const path = join(root, 'held.db');
    const remit = new Remit(openSqliteStore(path, { busyTimeoutMs: 150 }), core, [wf]);
    await remit.start(wf, { n: 0 }, { runId: 'before' });
    const locker = new Database(path);
    locker.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    const { ticks, outcome } = await ticksDuring(remit.start(wf, { n: 1 }, { runId: 'refused' }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(outcome).toBeInstanceOf(StoreError);
    expect(outcome).toMatchObject({ storeCode: 'SQLITE_BUSY', operation: 'append', runId: 'refused' });
    expect(ticks).toBeGreaterThan(5);
    locker.exec('ROLLBACK');
    locker.close();
    expect((await remit.runs()).map((r) => r.runId)).toEqual(['before']);
    await remit.close();
  });

  it('reads go on while another connection writes (WAL), and a store on the same file in the same process waits its turn', async () => {
    const path = join(root, 'two-stores.db');
    const first = new Remit(openSqliteStore(path), core, [wf]);
    const second = new Remit(openSqliteStore(path), core, [wf]);
    await first.start(wf, { n: 0 }, { runId: 'a' });
    const locker = new Database(path);
    locker.exec('BEGIN IMMEDIATE');
    expect(await second.status('a')).toMatchObject({ status: 'completed' });
    setTimeout(() => locker.exec('COMMIT'), 50);
    const results = await Promise.all([first.start(wf, { n: 1 }, { runId: 'b' }), second.start(wf, { n: 2 }, { runId: 'c' })]);
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed']);
    locker.close();
    await first.close();
    await second.close();
  });
});

describe('the append of an effect\'s result refused (a lock held past busyTimeoutMs)', () => {
  it('the StoreError names the node and says the handler returned and its result was not recorded; the next continue calls it again with the same key', async () => {
    const path = join(root, 'effect-done.db');
    const calls: Array<{ key: string; attempt: number }> = [];
    let locker: InstanceType<typeof Database> | undefined;
    const charge = workflow({ name: 'charge', version: '1', state: z.object({ receipt: z.string().optional() }) })
      .effect('charge', {
        run: (_s, { idempotencyKey, attempt }) => {
          calls.push({ key: idempotencyKey, attempt });
          // Another program takes the write lock while the handler runs, and keeps it.
          if (attempt === 1) (locker = new Database(path)).exec('BEGIN IMMEDIATE');
          return { receipt: `r-${idempotencyKey}` };
        },
        apply: (_s, r) => ({ receipt: r.receipt }),
        next: END,
      })
      .build();
    const remit = new Remit(openSqliteStore(path, { busyTimeoutMs: 50 }), core, [charge], undefined, {}, { instanceId: 'pod-1' });
    const error = await remit.start(charge, {}, { runId: 'o-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'SQLITE_BUSY', runId: 'o-1', node: 'charge' });
    expect((error as Error).message).toContain(`the handler of effect charge had returned (attempt 1, key ${calls[0]!.key}: the outside effect happened), and its result was not recorded (EFFECT_DONE), so the next continue calls the handler again with the same idempotency key`);
    locker!.exec('ROLLBACK');
    locker!.close();
    expect(await remit.continueRun('o-1')).toMatchObject({ status: 'completed', state: { receipt: `r-${calls[0]!.key}` } });
    expect(calls).toEqual([{ key: calls[0]!.key, attempt: 1 }, { key: calls[0]!.key, attempt: 2 }]);
    await remit.close();
  });
});
