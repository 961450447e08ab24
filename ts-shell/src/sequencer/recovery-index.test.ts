/**
 * The recovery index (docs/guide.md, "Recovery at start-up"): stores keep a status hint per run,
 * written by the appends that change it, and `listRunsToRecover` lists the runs whose hint is
 * running or unknown. What must hold, whatever the sequence of starts, parks, resumes, completions,
 * failures, crashes mid-run, forks and repairs:
 *
 *   1. superset: every run whose log recovers as running is listed;
 *   2. recoverAll on the store gives the outcome recoverAll gives reading every run (on a copy of
 *      the store taken just before, through a view without the index).
 *
 * fast-check over real SQLite files and PostgreSQL schemas (the memory store too, for speed of
 * shrinking). The migration tests open a schema-3 SQLite file and a migration-2 PostgreSQL schema
 * with this code: every old run is a candidate until recoverAll has looked at it, nothing is lost.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { fail, RemitError } from '../errors.js';
import type { SequencerHooks } from '../faults.js';
import { Remit, type RecoverAllOutcome } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { MIGRATIONS } from '../store/postgres-migrations.js';
import { PostgresStore } from '../store/postgres.js';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/store.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { copyBacking } from '../../test-support/memory-backing.js';
import { END, workflow } from '../workflow/workflow.js';

const core = await createCore('reference');
const RUNS = Number(process.env['REMIT_INDEX_RUNS'] ?? 25);
const dir = mkdtempSync(join(tmpdir(), 'remit-index-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `index-${files++}.db`);

const State = z.object({ n: z.number().int(), ok: z.boolean().optional() });

/** prepare (pure) -> approve (interrupt) -> settle (effect; fails the run unless approved) -> finish (pure) -> END. */
const approvals = workflow({ name: 'approvals', version: '1', state: State })
  .pure('prepare', { run: (s) => ({ n: s.n + 1 }), next: 'approve' })
  .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: 'settle' })
  .effect('settle', {
    run: async (s) => {
      if (!s.ok) fail('DECLINED', 'the approver said no');
      return { add: 10 };
    },
    apply: (s, r) => ({ n: s.n + r.add }),
    next: 'finish',
  })
  .pure('finish', { run: (s) => ({ n: s.n * 2 }), next: END })
  .build();

/** Thrown by a hook after the store committed an append: the process "dies" there. */
class Crash extends Error {}

/** Refusals a random command may meet (a fork at a non-checkpoint, a repair that must not remove). */
const EXPECTED_REFUSALS = new Set(['REMIT_NOT_A_CHECKPOINT', 'REMIT_REPAIR_REFUSED', 'REMIT_NOT_PARKED', 'REMIT_BEYOND_HEAD']);

/** One instance id for every Remit, as a restarted replica: it takes over its own unfinished attempts. */
function remitOn(store: Store, crashAfterAppends?: number): Remit {
  let left = crashAfterAppends ?? Number.POSITIVE_INFINITY;
  const hooks: SequencerHooks = {
    at(point) {
      if (point === 'append.after' && --left <= 0) throw new Crash('crash after an append');
    },
  };
  return new Remit(store, core, [approvals], hooks, {}, { instanceId: 'replica-1' });
}

/** The same store without the index, as a custom store would be: recoverAll reads every run. */
function withoutIndex(store: Store): Store {
  return Object.assign(Object.create(store) as Store, { listRunsToRecover: undefined, correctRunStatuses: undefined });
}

async function quietly(action: Promise<unknown>): Promise<void> {
  try {
    await action;
  } catch (error) {
    if (error instanceof Crash) return;
    if (error instanceof RemitError && EXPECTED_REFUSALS.has(error.code)) return;
    throw error;
  }
}

type Command =
  | { tag: 'start'; crashAfter: number | undefined }
  | { tag: 'resume'; pick: number; ok: boolean; crashAfter: number | undefined }
  | { tag: 'continue'; pick: number; crashAfter: number | undefined }
  | { tag: 'fork'; pick: number; checkpoint: number }
  | { tag: 'tearAndRepair'; pick: number }
  | { tag: 'recoverAll' };

const crashAfter = fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined });
const pick = fc.nat(50);
const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.record({ tag: fc.constant('start' as const), crashAfter }), weight: 4 },
  { arbitrary: fc.record({ tag: fc.constant('resume' as const), pick, ok: fc.boolean(), crashAfter }), weight: 4 },
  { arbitrary: fc.record({ tag: fc.constant('continue' as const), pick, crashAfter }), weight: 2 },
  { arbitrary: fc.record({ tag: fc.constant('fork' as const), pick, checkpoint: fc.nat(10) }), weight: 2 },
  { arbitrary: fc.record({ tag: fc.constant('tearAndRepair' as const), pick }), weight: 2 },
  { arbitrary: fc.constant({ tag: 'recoverAll' as const }), weight: 1 },
);

interface Target {
  name: string;
  open(): Promise<Store>;
  /** A second store holding a byte copy of `store`'s data (records, summaries, hints). */
  copy(store: Store): Promise<Store>;
  /** Overwrite the stored bytes of record `seq` (damage at rest, as a disk would). */
  overwrite(store: Store, runId: string, seq: number, bytes: Uint8Array): Promise<void>;
}

/** An outcome without its details: which run, and what became of it (status) or which error. */
function outline(outcomes: RecoverAllOutcome[]) {
  return outcomes.map((o) =>
    'result' in o ? { runId: o.runId, status: o.result.status, headSeq: o.result.headSeq } : { runId: o.runId, error: (o.error as RemitError).code },
  );
}

async function runningRuns(store: Store): Promise<string[]> {
  return (await remitOn(store).runs()).filter((r) => r.status === 'running').map((r) => r.runId);
}

async function expectSuperset(store: Store): Promise<void> {
  const listed = new Set(await store.listRunsToRecover!());
  for (const runId of await runningRuns(store)) expect(listed.has(runId), `running run ${runId} is not listed by listRunsToRecover`).toBe(true);
  await expectNoHintReportedWrong(store);
}

/**
 * What the sequencer writes never makes scrub or `runs` report a wrong hint (statusHintAgrees
 * false: `remit scrub` and `remit runs` exit 7 for it): those reports are for hand edits and
 * other programs, so a false alarm on a database only REMIT wrote would be a defect.
 */
async function expectNoHintReportedWrong(store: Store): Promise<void> {
  const remit = remitOn(store);
  for (const summary of await remit.runs()) {
    expect(summary.statusHintAgrees, `runs(): run ${summary.runId} (${summary.status}) hint ${summary.statusHint}`).not.toBe(false);
    const report = await remit.scrub(summary.runId).catch(() => null);
    if (report !== null) expect(report.statusHintAgrees, `scrub: run ${summary.runId} (${report.logStatus}) hint ${report.statusHint}`).not.toBe(false);
  }
}

async function perform(target: Target, store: Store, c: Command, next: { run: number; fork: number }): Promise<void> {
  const all = (await store.listRuns()).map((r) => r.runId);
  const chosen = all.length === 0 ? undefined : all[('pick' in c ? c.pick : 0) % all.length]!;
  switch (c.tag) {
    case 'start': {
      const runId = `r${next.run++}`;
      return quietly(remitOn(store, c.crashAfter).start(approvals, { n: 1 }, { runId }));
    }
    case 'resume': {
      if (chosen === undefined) return;
      const status = await remitOn(store).status(chosen).catch(() => null);
      if (status?.interrupt === undefined) return;
      return quietly(remitOn(store, c.crashAfter).resume(chosen, status.interrupt.id, { ok: c.ok }));
    }
    case 'continue':
      if (chosen === undefined) return;
      return quietly(remitOn(store, c.crashAfter).continueRun(chosen));
    case 'fork': {
      if (chosen === undefined) return;
      const records = (await remitOn(store).inspect(chosen)).records;
      const checkpoints = records.filter((r) => r.kind === 'RUN_STARTED' || r.kind === 'NODE_COMPLETED').map((r) => r.seq);
      if (checkpoints.length === 0) return;
      const at = checkpoints[c.checkpoint % checkpoints.length]!;
      return quietly(remitOn(store).fork(chosen, at, { newRunId: `f${next.fork++}` }));
    }
    case 'tearAndRepair': {
      // A torn last record (a crash while writing it, on a store that could tear), then repair: it
      // removes the record when losing it is a crash before it, else the bytes are put back.
      if (chosen === undefined) return;
      const rows = await store.readRecords(chosen);
      const last = rows[rows.length - 1]!;
      await target.overwrite(store, chosen, last.seq, last.bytes.slice(0, Math.max(1, last.bytes.length >> 1)));
      try {
        await remitOn(store).repair(chosen);
      } catch (error) {
        if (!(error instanceof RemitError && error.code === 'REMIT_REPAIR_REFUSED')) throw error;
        await target.overwrite(store, chosen, last.seq, last.bytes);
      }
      return;
    }
    case 'recoverAll': {
      const copy = await target.copy(store);
      try {
        const fullScan = outline(await remitOn(withoutIndex(copy)).recoverAll());
        expect(outline(await remitOn(store).recoverAll())).toEqual(fullScan);
      } finally {
        await copy.close();
      }
    }
  }
}

async function checkIndex(target: Target, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 14 }), async (commands) => {
      const store = await target.open();
      try {
        const next = { run: 0, fork: 0 };
        for (const c of [...commands, { tag: 'recoverAll' as const }]) {
          await perform(target, store, c, next);
          await expectSuperset(store);
        }
        // After recoverAll nothing is left running but what it could not finish, and every hint it
        // corrected is right: the candidates are exactly the running runs.
        expect(await store.listRunsToRecover!()).toEqual(await runningRuns(store));
      } finally {
        await store.close();
      }
    }),
    { numRuns, endOnFailure: true },
  );
}

const memoryTarget: Target = {
  name: 'memory',
  open: async () => new MemoryStore(),
  async copy(store) {
    return new MemoryStore({ backing: copyBacking((store as MemoryStore).backing) });
  },
  async overwrite(store, runId, seq, bytes) {
    (store as MemoryStore).backing.runs.get(runId)!.records[seq]!.bytes = bytes.slice();
  },
};

const sqliteTarget: Target = {
  name: 'sqlite',
  open: async () => new SqliteStore(freshFile(), { synchronous: 'NORMAL' }),
  async copy(store) {
    const path = freshFile();
    const db = new Database((store as SqliteStore).path);
    db.prepare('VACUUM INTO ?').run(path);
    db.close();
    return new SqliteStore(path, { synchronous: 'NORMAL' });
  },
  async overwrite(store, runId, seq, bytes) {
    const db = new Database((store as SqliteStore).path);
    db.prepare('UPDATE remit_records SET bytes = ? WHERE run_id = ? AND seq = ?').run(Buffer.from(bytes), runId, seq);
    db.close();
  },
};

describe('recovery index: listRunsToRecover is a superset of the running runs; recoverAll equals a full scan', () => {
  it(`on the memory store (${RUNS} sequences)`, async () => {
    await checkIndex(memoryTarget, RUNS);
  });

  it(`on a SQLite file (${RUNS} sequences)`, async () => {
    await checkIndex(sqliteTarget, RUNS);
  }, 120_000);
});

/** Runs left in each state, written through the sequencer on a memory store (hints and all). */
async function sampleRuns(): Promise<MemoryStore> {
  const store = new MemoryStore();
  await remitOn(store).start(approvals, { n: 1 }, { runId: 'parked' });
  const done = await remitOn(store).start(approvals, { n: 1 }, { runId: 'done' });
  await remitOn(store).resume('done', done.interrupt!.id, { ok: true });
  const failed = await remitOn(store).start(approvals, { n: 1 }, { runId: 'failed' });
  await remitOn(store).resume('failed', failed.interrupt!.id, { ok: false });
  await quietly(remitOn(store, 1).start(approvals, { n: 1 }, { runId: 'crashed' }));
  return store;
}

const EXPECTED_AFTER_RECOVERY = { parked: 'parked', done: 'completed', failed: 'failed', crashed: 'parked' };

async function statuses(store: Store): Promise<Record<string, string>> {
  return Object.fromEntries((await remitOn(store).runs()).map((r) => [r.runId, r.status]));
}

/** What an old store holds, run by run, in listRuns order (records only: old layouts keep no hint). */
async function recordsOf(store: Store): Promise<Map<string, Uint8Array[]>> {
  const out = new Map<string, Uint8Array[]>();
  for (const { runId } of await store.listRuns()) out.set(runId, (await store.readRecords(runId)).map((r) => r.bytes));
  return out;
}

/** After an upgrade: every old run a candidate; recoverAll continues the crashed one, corrects the rest. */
async function expectUpgradedStore(store: Store, before: Map<string, Uint8Array[]>): Promise<void> {
  expect((await store.listRunsToRecover!()).sort()).toEqual([...before.keys()].sort());
  expect(await statuses(store)).toEqual({ parked: 'parked', done: 'completed', failed: 'failed', crashed: 'running' });
  const outcomes = outline(await remitOn(store).recoverAll());
  expect(outcomes).toEqual([{ runId: 'crashed', status: 'parked', headSeq: 2 }]);
  expect(await store.listRunsToRecover!()).toEqual([]);
  expect(await statuses(store)).toEqual(EXPECTED_AFTER_RECOVERY);
  for (const [runId, records] of before) {
    const now = (await store.readRecords(runId)).map((r) => r.bytes);
    expect(now.slice(0, records.length), `run ${runId} keeps its records`).toEqual(records);
  }
}

describe('recovery index: stores written before it', () => {
  it('a schema-3 SQLite file opened by this code: its runs are candidates until recoverAll looked at them; nothing lost', async () => {
    const source = await sampleRuns();
    const before = await recordsOf(source);
    const path = freshFile();
    const old = new Database(path);
    old.exec(`
      CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL);
      CREATE TABLE remit_records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, committed_at_ms INTEGER NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
      CREATE TABLE remit_summaries (run_id TEXT PRIMARY KEY, record_count INTEGER NOT NULL, byte_length INTEGER NOT NULL, snapshot_seq INTEGER NOT NULL, summary BLOB NOT NULL) WITHOUT ROWID;
      PRAGMA user_version = 3;`);
    let createdAt = 1000;
    for (const [runId, records] of before) {
      old.prepare('INSERT INTO remit_runs VALUES (?, ?)').run(runId, createdAt);
      records.forEach((bytes, seq) => old.prepare('INSERT INTO remit_records VALUES (?, ?, ?, ?)').run(runId, seq, Buffer.from(bytes), createdAt));
      createdAt += 1;
    }
    old.close();
    const store = new SqliteStore(path);
    const db = new Database(path, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    db.close();
    await expectUpgradedStore(store, before);
    await store.close();
  });
});

describePg('recovery index on PostgreSQL', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));

  async function openSchema(schema: string, migrations = MIGRATIONS): Promise<PostgresStore> {
    schemas.add(schema);
    return PostgresStore.open({ connectionString: url, schema, maxConnections: 2, migrations });
  }

  async function sql(text: string, params: unknown[] = []): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(text, params);
    } finally {
      await client.end();
    }
  }

  const postgresTarget: Target = {
    name: 'postgres',
    open: () => openSchema(freshSchemaName('remit_idx')),
    async copy(store) {
      const from = `"${(store as PostgresStore).schema}"`;
      const copy = await openSchema(freshSchemaName('remit_idx'));
      const to = `"${copy.schema}"`;
      await sql(`INSERT INTO ${to}.runs SELECT * FROM ${from}.runs; INSERT INTO ${to}.records SELECT * FROM ${from}.records;
        INSERT INTO ${to}.summaries SELECT * FROM ${from}.summaries`);
      return copy;
    },
    async overwrite(store, runId, seq, bytes) {
      await sql(`UPDATE "${(store as PostgresStore).schema}".records SET bytes = $3 WHERE run_id = $1 AND seq = $2`, [runId, seq, Buffer.from(bytes)]);
    },
  };

  it(`superset and full-scan equality on PostgreSQL (${Math.ceil(RUNS / 2)} sequences)`, async () => {
    await checkIndex(postgresTarget, Math.ceil(RUNS / 2));
  }, 300_000);

  it('a migration-2 schema opened by this code: its runs are candidates until recoverAll looked at them; nothing lost', async () => {
    const source = await sampleRuns();
    const before = await recordsOf(source);
    const schema = freshSchemaName('remit_idx');
    const old = await openSchema(schema, MIGRATIONS.slice(0, 2));
    for (const [runId, records] of before) expect((await old.append(runId, 0, records)).committed).toBe(true);
    await old.close();
    const store = await openSchema(schema);
    await expectUpgradedStore(store, before);
    await store.close();
  });
});
