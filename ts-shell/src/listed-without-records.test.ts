/**
 * A run the store lists but keeps no record of (NO_RECORDS, sequencer/log-health.ts: a hand edit,
 * a partial restore) is seen the same way by every view: damage naming the run, NO_RECORDS and
 * what to do (runs, recoverAll, status, continueRun, resume, fork, inspect, scrub, repair), never
 * "no such run", which stays for a run the store does not list. No view changes anything stored,
 * and a new run under the id replaces the listing. Memory and SQLite stores; the state is made by
 * deleting the run's records through the store's own data (memory) or a raw connection (SQLite).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from './core/index.js';
import { LogCorruptError, RunNotFoundError } from './errors.js';
import { renderInspection } from './inspect.js';
import { Remit } from './remit.js';
import { missingRecordsDamage } from './sequencer/log-health.js';
import { MemoryStore } from './store/memory.js';
import { SqliteStore } from './store/sqlite.js';
import type { Store } from './store/store.js';
import { z } from 'zod';
import { counter } from '../test-support/counter-workflow.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const dir = mkdtempSync(join(tmpdir(), 'remit-no-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Target {
  name: string;
  open(): Store;
  /** Delete every record (and the summary and status hint) of `runId`, leaving its listing. */
  emptyRun(store: Store, runId: string): void;
  /** Delete only the records of `runId`: its listing and its stored recovery summary stay. */
  deleteRecordsOnly(store: Store, runId: string): void;
}

function deleteMemoryRecords(store: Store, runId: string): void {
  (store as MemoryStore).backing.runs.get(runId)!.records.length = 0;
}

function emptyMemoryRun(store: Store, runId: string): void {
  const run = (store as MemoryStore).backing.runs.get(runId)!;
  run.records.length = 0;
  delete run.summary;
  delete run.status;
}

const targets: Target[] = [
  {
    name: 'memory',
    open: () => new MemoryStore(),
    emptyRun: emptyMemoryRun,
    deleteRecordsOnly: deleteMemoryRecords,
  },
  {
    // A store without readStatusHint (a custom store): whether the run is listed comes from listRuns.
    name: 'memory without readStatusHint',
    open: () => {
      const store = new MemoryStore();
      Object.defineProperty(store, 'readStatusHint', { value: undefined });
      return store;
    },
    emptyRun: emptyMemoryRun,
    deleteRecordsOnly: deleteMemoryRecords,
  },
  {
    name: 'sqlite',
    open: () => new SqliteStore(join(dir, `${Math.random().toString(36).slice(2)}.db`)),
    emptyRun(store, runId) {
      const db = new Database((store as SqliteStore).path);
      db.prepare('DELETE FROM remit_records WHERE run_id = ?').run(runId);
      db.prepare('DELETE FROM remit_summaries WHERE run_id = ?').run(runId);
      db.prepare('UPDATE remit_runs SET status = NULL WHERE run_id = ?').run(runId);
      db.close();
    },
    deleteRecordsOnly(store, runId) {
      const db = new Database((store as SqliteStore).path);
      db.prepare('DELETE FROM remit_records WHERE run_id = ?').run(runId);
      db.close();
    },
  },
];

/** Everything a read could change: the listing and every run's records. */
async function snapshot(store: Store): Promise<unknown> {
  const listings = await store.listRuns();
  return Promise.all(listings.map(async (l) => ({ ...l, records: await store.readRecords(l.runId) })));
}

for (const target of targets) {
  describe(`a run listed without records on the ${target.name} store`, () => {
    async function setup() {
      const store = target.open();
      const remit = new Remit(store, core, [counter]);
      for (const runId of ['sound', 'ghost']) expect((await remit.start(counter, { i: 0 }, { runId })).status).toBe('completed');
      target.emptyRun(store, 'ghost');
      return { store, remit };
    }

    it('is NO_RECORDS damage in every view, naming the run and what to do; a run not listed is RunNotFoundError', async () => {
      const { store, remit } = await setup();
      const before = await snapshot(store);
      const advice = missingRecordsDamage('ghost').advice;
      expect(advice).toMatch(/restore the store from a backup, or start a new run under this id \(`remit run --run-id=ghost`/);
      const damaged = { code: 'REMIT_LOG_CORRUPT', runId: 'ghost', seq: 0, logError: 'NO_RECORDS', advice };

      expect((await remit.runs()).find((r) => r.runId === 'ghost')).toMatchObject({ status: 'damaged', damage: { code: 'NO_RECORDS', advice } });
      const recovered = (await remit.recoverAll()).find((o) => o.runId === 'ghost');
      expect(recovered).toMatchObject({ error: damaged });

      for (const [view, call] of [
        ['status', () => remit.status('ghost')],
        ['continueRun', () => remit.continueRun('ghost')],
        ['continueRun fromSeq', () => remit.continueRun('ghost', { fromSeq: 0 })],
        ['resume', () => remit.resume('ghost', 'tick@1', {})],
        ['fork', () => remit.fork('ghost', 0)],
      ] as const) {
        const error = await call().catch((e: unknown) => e);
        expect(error, view).toBeInstanceOf(LogCorruptError);
        expect(error, view).toMatchObject(damaged);
        expect(String((error as Error).message), view).toMatch(/lists the run but keeps none of its records \(NO_RECORDS\).*remit run --run-id=ghost.*\[run ghost, seq 0\]/);
      }

      const inspection = await remit.inspect('ghost');
      expect(inspection).toMatchObject({
        runId: 'ghost', status: 'damaged', workflow: null, headSeq: -1, records: [],
        error: { code: 'NO_RECORDS', seq: 0, offset: 0 }, damage: { code: 'NO_RECORDS', seq: 0, repairable: false, advice },
      });
      const text = renderInspection(inspection);
      expect(text).toMatch(/DAMAGED at seq 0 \(byte offset 0\): NO_RECORDS: the store lists the run but keeps none of its records/);
      expect(text).toContain(`what to do: ${advice}`);

      expect(await remit.scrub('ghost')).toMatchObject({ runId: 'ghost', records: 0, logBytes: 0, damage: { code: 'NO_RECORDS', advice } });
      const refused = await remit.repair('ghost').catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'REMIT_REPAIR_REFUSED', runId: 'ghost', seq: 0, why: expect.stringMatching(/^NO_RECORDS: .*remit run --run-id=ghost/) });

      // Not listed at all: "no such run", from every view.
      for (const call of [
        () => remit.status('nobody'), () => remit.continueRun('nobody'), () => remit.resume('nobody', 'tick@1', {}), () => remit.fork('nobody', 0),
        () => remit.inspect('nobody'), () => remit.scrub('nobody'), () => remit.repair('nobody'),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RunNotFoundError);
        expect(error).toMatchObject({ code: 'REMIT_RUN_NOT_FOUND', runId: 'nobody' });
      }

      // Nothing any view did changed what is stored; a new run under the id replaces the listing.
      expect(await snapshot(store)).toEqual(before);
      expect((await remit.start(counter, { i: 0 }, { runId: 'ghost' })).status).toBe('completed');
      expect(await remit.status('ghost')).toMatchObject({ status: 'completed' });
      await remit.close();
    });

    it('a run started or forked under the id does not inherit the old run\'s stored recovery summary', async () => {
      const store = target.open();
      const remit = new Remit(store, core, [counter, longLoop]);
      // Long enough for group commits to store a summary, which the hand edit leaves behind.
      for (const runId of ['stale', 'stale-fork']) expect((await remit.start(longLoop, { i: 0 }, { runId })).status).toBe('completed');
      expect((await store.readSummary!('stale'))?.summary.recordCount).toBeGreaterThan(20);
      for (const runId of ['stale', 'stale-fork']) target.deleteRecordsOnly(store, runId);
      // The advice: a new run under the id (shorter than the summary), and a fork into the other.
      expect((await remit.start(counter, { i: 0 }, { runId: 'stale' })).status).toBe('completed');
      expect((await remit.start(counter, { i: 0 }, { runId: 'source' })).status).toBe('completed');
      await remit.fork('source', 2, { newRunId: 'stale-fork' });
      for (const runId of ['stale', 'stale-fork']) {
        const report = await remit.scrub(runId);
        expect(report, runId).toMatchObject({ damage: null });
        expect(report.summaryAgrees, runId).not.toBe(false);
        // A fresh process (another instance, nothing cached) reads the new run as it is.
        const fresh = new Remit(store, core, [counter, longLoop]);
        expect((await fresh.continueRun(runId)).status, runId).toBe('completed');
      }
      await remit.close();
    });
  });
}

/** A pure loop of 60 steps: its group commits store recovery summaries. */
const longLoop = workflow({ name: 'long-loop', version: '1', state: z.object({ i: z.number().int() }) })
  .pure('step', { run: (s) => ({ i: s.i + 1 }), next: (s) => (s.i < 60 ? 'step' : END) })
  .build();
