/**
 * A user's tests under fake timers (vi.useFakeTimers(), installed after REMIT was imported): REMIT's
 * own waits (checkWorkflow's pause and stall detector, a SQLite lock's retry, continueRun's wait for
 * an effect in flight) use the timers and the monotonic clock as they were when REMIT loaded, so
 * they end without the test advancing time; before, checkWorkflow never settled and a waiting
 * continueRun never returned. The clocks whose readings are stored or judged against stored times
 * (the effect lease's, a store's) read Date.now at each call, so faked time is what a lease is
 * judged by: a test can move past a lease with vi.setSystemTime.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { EffectInFlightError, StoreError } from './errors.js';
import type { SequencerHooks } from './faults.js';
import { createRemit } from './remit.js';
import { openMemoryStore } from './store/memory.js';
import { openSqliteStore } from './store/sqlite.js';
import { checkWorkflow } from './testing/check-workflow.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const root = mkdtempSync(join(tmpdir(), 'remit-fake-timers-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

/** Long enough for the real waits below, short enough that a wait on a faked timer fails the test soon. */
const SETTLES_MS = 15_000;

function mailer(run: () => unknown = () => 'sent') {
  return workflow({ name: 'mail', version: '1', state: z.object({ n: z.number(), id: z.string().optional() }) })
    .pure('count', { run: (s) => ({ n: s.n + 1 }), next: 'send' })
    .effect('send', { run: async (_s, { idempotencyKey }) => { await run(); return idempotencyKey; }, apply: (_s, id: string) => ({ id }), next: 'approve' })
    .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: () => ({}), next: END })
    .build();
}

/** A crash right after the handler returned, before its result was recorded: the attempt stays claimed. */
const crashAfterHandler: SequencerHooks = {
  at(point) {
    if (point === 'effect.after-handler') throw new Error('crash');
  },
};

describe('checkWorkflow under fake timers', () => {
  it('settles, with everything faked (vi.useFakeTimers())', async () => {
    vi.useFakeTimers();
    const report = await checkWorkflow(mailer(), { input: { n: 1 }, resume: { approve: { ok: true } } });
    expect(report.problems).toEqual([]);
    expect(report.faults.length).toBeGreaterThan(0);
  }, SETTLES_MS);

  it('settles with only setTimeout faked', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const report = await checkWorkflow(mailer(), { input: { n: 1 }, resume: { approve: { ok: true } } });
    expect(report.problems).toEqual([]);
  }, SETTLES_MS);

  it('still reports a handler that waits on a faked timer as stalled, after stallLimitMs of real time', async () => {
    vi.useFakeTimers();
    // The handler's own setTimeout is the test's fake one: it never fires unless the test advances it.
    const report = await checkWorkflow(mailer(() => new Promise((resolve) => setTimeout(resolve, 10))), {
      input: { n: 1 }, resume: { approve: { ok: true } }, stallLimitMs: 300,
    });
    expect(report.problems).toEqual([expect.objectContaining({ property: 'liveness', message: expect.stringMatching(/no progress for 300 ms \(stallLimitMs\)/) })]);
  }, SETTLES_MS);
});

describe('a SQLite store under fake timers', () => {
  it('waits out another connection\'s lock up to busyTimeoutMs of real time, then refuses (SQLITE_BUSY)', async () => {
    const path = join(root, 'locked.db');
    const remit = await createRemit({ store: openSqliteStore(path, { busyTimeoutMs: 200 }), workflows: [mailer()], core });
    const locker = new Database(path);
    locker.exec('BEGIN IMMEDIATE');
    vi.useFakeTimers();
    const refused = await remit.start('mail', { n: 1 }, { runId: 'r' }).catch((e: unknown) => e);
    vi.useRealTimers();
    expect(refused).toBeInstanceOf(StoreError);
    expect(refused).toMatchObject({ storeCode: 'SQLITE_BUSY', runId: 'r' });
    locker.exec('ROLLBACK');
    locker.close();
    await remit.close();
  }, SETTLES_MS);
});

describe('effect leases under fake timers', () => {
  async function claimedByCrashedInstance() {
    const store = openMemoryStore();
    const wf = mailer();
    const a = await createRemit({ store, workflows: [wf], core, instanceId: 'A', hooks: crashAfterHandler });
    await expect(a.start(wf, { n: 1 }, { runId: 'r' })).rejects.toThrow('crash');
    const b = await createRemit({ store, workflows: [wf], core, instanceId: 'B' });
    return b;
  }

  it('continueRun({ waitForEffectMs }) waits real time and returns (EffectInFlightError once the wait ran out)', async () => {
    const b = await claimedByCrashedInstance();
    vi.useFakeTimers();
    const started = Date.now();
    const error = await b.continueRun('r', { waitForEffectMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EffectInFlightError);
    // The fake clock did not move: the wait was timed by the real one.
    expect(Date.now()).toBe(started);
  }, SETTLES_MS);

  it('are judged by the faked time: moved past the lease, another instance takes the attempt over', async () => {
    const b = await claimedByCrashedInstance();
    vi.useFakeTimers();
    await expect(b.continueRun('r')).rejects.toBeInstanceOf(EffectInFlightError);
    vi.setSystemTime(Date.now() + 31_000); // past the default 30 s lease
    expect(await b.continueRun('r')).toMatchObject({ status: 'parked' });
  });
});
