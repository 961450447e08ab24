/**
 * A run the store lists but keeps no record of (NO_RECORDS, sequencer/log-health.ts: a hand edit,
 * a partial restore) is seen the same way by every view: damage naming the run, NO_RECORDS and
 * what to do (runs, recoverAll, status, continueRun, resume, fork, inspect, scrub, repair), never
 * "no such run", which stays for a run the store does not list. No view changes anything stored,
 * and a new run under the id replaces the listing. Memory, SQLite and PostgreSQL stores; the state
 * is made by deleting the run's records through the store's own data (memory) or a raw connection
 * (SQLite, PostgreSQL). A run that keeps records keeps its id taken on every store.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from './core/index.js';
import { ForkTargetExistsError, LogCorruptError, RunExistsError, RunNotFoundError } from './errors.js';
import { renderInspection } from './inspect.js';
import { Remit } from './remit.js';
import { missingRecordsDamage } from './sequencer/log-health.js';
import { MemoryStore } from './store/memory.js';
import { PostgresStore } from './store/postgres.js';
import { SqliteStore } from './store/sqlite.js';
import type { Store } from './store/store.js';
import { z } from 'zod';
import { testRecord } from './testing/test-record.js';
import { counter } from '../test-support/counter-workflow.js';
import { describePg, dropSchemas, freshSchemaName } from '../test-support/postgres-test-env.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const dir = mkdtempSync(join(tmpdir(), 'remit-no-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Target {
  name: string;
  open(): Store | Promise<Store>;
  /** Delete every record (and the summary and status hint) of `runId`, leaving its listing. */
  emptyRun(store: Store, runId: string): void | Promise<void>;
  /** Delete only the records of `runId`: its listing and its stored recovery summary stay. */
  deleteRecordsOnly(store: Store, runId: string): void | Promise<void>;
  /** Another handle on the same stored data, as a fresh process opens it (none: the same store). */
  reopen?(store: Store): Store | Promise<Store>;
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
    reopen: (store) => new SqliteStore((store as SqliteStore).path),
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

/** The PostgreSQL target: each store in a schema of its own, hand edits through a raw connection. */
function postgresTarget(url: string): Target {
  const schemas = new Set<string>();
  const stores: PostgresStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close().catch(() => {})));
    await dropSchemas(url, schemas);
  });
  const openSchema = async (schema: string) => {
    schemas.add(schema);
    const store = await PostgresStore.open({ connectionString: url, schema, maxConnections: 4 });
    stores.push(store);
    return store;
  };
  const edit = async (store: Store, statements: string[], runId: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const text of statements) await client.query(text.replaceAll('{s}', `"${(store as PostgresStore).schema}"`), [runId]);
    } finally {
      await client.end();
    }
  };
  return {
    name: 'postgres',
    open: () => openSchema(freshSchemaName()),
    // As a hand edit (psql) leaves it: the run row stays, with its next_seq.
    emptyRun: (store, runId) => edit(store, [
      'DELETE FROM {s}.records WHERE run_id = $1', 'DELETE FROM {s}.summaries WHERE run_id = $1', 'UPDATE {s}.runs SET status = NULL WHERE run_id = $1',
    ], runId),
    deleteRecordsOnly: (store, runId) => edit(store, ['DELETE FROM {s}.records WHERE run_id = $1'], runId),
    reopen: (store) => openSchema((store as PostgresStore).schema),
  };
}

/** Everything stored for `runId` apart from commit times: what a refused write must leave as it was. */
async function runState(store: Store, runId: string): Promise<unknown> {
  const listing = (await store.listRuns()).find((l) => l.runId === runId);
  return {
    listing: listing && { ...listing, updatedAtMs: undefined },
    records: await store.readRecords(runId),
    summary: await store.readSummary?.(runId),
    hint: await store.readStatusHint?.(runId),
  };
}

for (const target of targets) describeTarget(target);
describePg('a run listed without records on the postgres store (server)', (url) => {
  const target = postgresTarget(url);
  describeTarget(target);

  describe('racing creators on the postgres store', () => {
    it('of 8 processes starting a run into one NO_RECORDS id at the same moment, exactly one does; the others are told the run exists', async () => {
      const store = await target.open();
      const remit = new Remit(store, core, [counter, longLoop]);
      expect((await remit.start(longLoop, { i: 0 }, { runId: 'ghost' })).status).toBe('completed');
      await target.deleteRecordsOnly(store, 'ghost');
      // Eight processes: each its own pool (so its own connection), none of them caching the run.
      const racers = await Promise.all(Array.from({ length: 8 }, async () => new Remit(await target.reopen!(store), core, [counter, longLoop])));
      const outcomes = await Promise.allSettled(racers.map((r, i) => r.start(counter, { i: 10 + i * 100 }, { runId: 'ghost' })));
      const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === 'rejected') {
          expect(o.reason).toBeInstanceOf(RunExistsError);
          expect(o.reason).toMatchObject({ code: 'REMIT_RUN_EXISTS', runId: 'ghost' });
        }
      }
      // The log is the winner's run and nothing else: its input, completed, no stale summary.
      const winner = winners[0]!;
      const fresh = new Remit(await target.reopen!(store), core, [counter, longLoop]);
      expect(await fresh.status('ghost')).toMatchObject({ status: 'completed', state: { i: winner * 100 + 11 } });
      const report = await fresh.scrub('ghost');
      expect(report).toMatchObject({ damage: null });
      expect(report.summaryAgrees).not.toBe(false);
      expect(report.statusHintAgrees).not.toBe(false);
      const records = await store.readRecords('ghost');
      expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i));
      expect(await new Remit(await target.reopen!(store), core, [counter, longLoop]).continueRun('ghost')).toMatchObject({ status: 'completed' });
    });
  });
});

function describeTarget(target: Target): void {
  describe(`a run listed without records on the ${target.name} store`, () => {
    async function setup() {
      const store = await target.open();
      const remit = new Remit(store, core, [counter]);
      for (const runId of ['sound', 'ghost']) expect((await remit.start(counter, { i: 0 }, { runId })).status).toBe('completed');
      await target.emptyRun(store, 'ghost');
      return { store, remit };
    }

    it('is NO_RECORDS damage in every view, naming the run and what to do; a run not listed is RunNotFoundError', async () => {
      const { store, remit } = await setup();
      const before = await snapshot(store);
      const advice = missingRecordsDamage('ghost').advice;
      expect(advice).toMatch(/restore the store from a backup, or start a new run under a new id; a new run under this id \(`remit run --run-id=ghost` replaces the listing on the memory, SQLite and PostgreSQL stores\) makes the same idempotency keys as the lost run \(run id\/node\/seq\), which an outside system that deduplicates by key answers with the lost run's results: reuse the id only if the lost run called no effect, or no outside system keeps its keys$/);
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
      const store = await target.open();
      const remit = new Remit(store, core, [counter, longLoop]);
      // Long enough for group commits to store a summary, which the hand edit leaves behind.
      for (const runId of ['stale', 'stale-fork']) expect((await remit.start(longLoop, { i: 0 }, { runId })).status).toBe('completed');
      expect((await store.readSummary!('stale'))?.summary.recordCount).toBeGreaterThan(20);
      for (const runId of ['stale', 'stale-fork']) await target.deleteRecordsOnly(store, runId);
      // The advice: a new run under the id (shorter than the summary), and a fork into the other.
      expect((await remit.start(counter, { i: 0 }, { runId: 'stale' })).status).toBe('completed');
      expect((await remit.start(counter, { i: 0 }, { runId: 'source' })).status).toBe('completed');
      await remit.fork('source', 2, { newRunId: 'stale-fork' });
      for (const runId of ['stale', 'stale-fork']) {
        const report = await remit.scrub(runId);
        expect(report, runId).toMatchObject({ damage: null });
        expect(report.summaryAgrees, runId).not.toBe(false);
        expect(report.statusHintAgrees, runId).not.toBe(false);
        // A fresh process (another instance on another handle, nothing cached) reads the new run as it is.
        const fresh = new Remit(target.reopen ? await target.reopen(store) : store, core, [counter, longLoop]);
        expect((await fresh.continueRun(runId)).status, runId).toBe('completed');
        expect(await fresh.status(runId), runId).toMatchObject({ status: 'completed' });
      }
      // The stale summary went with the old listing, and the listing counts the new run's records.
      for (const runId of ['stale', 'stale-fork']) {
        const count = (await store.readRecords(runId)).length;
        expect((await store.readSummary!(runId))?.summary.recordCount ?? 0, runId).toBeLessThanOrEqual(count);
        expect((await store.listRuns()).find((l) => l.runId === runId)?.nextSeq, runId).toBe(count);
        const hint = await store.readStatusHint?.(runId);
        if (hint) expect(hint, runId).toMatchObject({ statusHint: 'completed', recordCount: count });
      }
      await remit.close();
    });

    it('a run that keeps records keeps its id taken: a start or a fork into it is refused and changes nothing', async () => {
      const { store, remit } = await setup();
      const before = await runState(store, 'sound');
      const started = await remit.start(counter, { i: 5 }, { runId: 'sound' }).catch((e: unknown) => e);
      expect(started).toBeInstanceOf(RunExistsError);
      expect(started).toMatchObject({ code: 'REMIT_RUN_EXISTS', runId: 'sound' });
      await remit.start(counter, { i: 0 }, { runId: 'source' });
      const forked = await remit.fork('source', 2, { newRunId: 'sound' }).catch((e: unknown) => e);
      expect(forked).toBeInstanceOf(ForkTargetExistsError);
      expect(await runState(store, 'sound')).toEqual(before);
      // A fork from a source too short for it leaves a NO_RECORDS listing as it was.
      const ghost = await runState(store, 'ghost');
      expect(await store.fork('source', 99, 'ghost', testRecord(99, 'fork'))).toEqual({ committed: false, reason: 'SOURCE_TOO_SHORT' });
      expect(await runState(store, 'ghost')).toEqual(ghost);
      await remit.close();
    });
  });
}

/** A pure loop of 60 steps: its group commits store recovery summaries. */
const longLoop = workflow({ name: 'long-loop', version: '1', state: z.object({ i: z.number().int() }) })
  .pure('step', { run: (s) => ({ i: s.i + 1 }), next: (s) => (s.i < 60 ? 'step' : END) })
  .build();
