/**
 * recoverAll at start-up on a store holding many finished runs and a few interrupted ones: the
 * time of one `recoverAll()` reading every run (a store view without `listRunsToRecover`, as
 * before the recovery index) against one reading only the candidates the store lists, on SQLite
 * and (with --pg) PostgreSQL. Also the first call after an upgrade, when no run has a hint yet
 * (every run a candidate; recoverAll corrects the hints), and the call after it.
 *
 *   bash scripts/build.sh && npx tsx bench/recover-all.ts [--completed 5000] [--running 10] [--repeats 3] [--pg URL]
 *
 * The command line is checked before any work (node:util parseArgs, strict): an unknown option, a
 * value out of range, a --pg that is not a postgres:// or postgresql:// URL (lib/args.ts,
 * checkPgUrl) or whose server does not answer (checkPgConnection, before the SQLite cases) is
 * refused on one line with exit code 2; --help prints the usage.
 *
 * Each measurement runs on a fresh copy of one base store (SQLite: VACUUM INTO, scratch files in
 * bench/results/tmp/; PostgreSQL: a new schema filled by INSERT ... SELECT, dropped after), so
 * every call finds the same runs to continue. Prints one JSON line per case: median milliseconds
 * over the repeats (each call must continue exactly the interrupted runs).
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { z } from 'zod';
import { createRemit, END, openMemoryStore, openSqliteStore, workflow, type Store } from 'remit';
import { createCore } from 'remit/core';
import { openPostgresStore, type PostgresStore } from 'remit/postgres';
import { UsageError, checkPgConnection, checkPgUrl } from './lib/args.js';
import { readScriptArgs, refuseUsage, wholeOption } from './lib/script-args.js';

const usage = `usage: npx tsx bench/recover-all.ts [options]
  --completed N   finished runs in the store, 0 to 1000000 (5000)
  --running N     runs interrupted after their first record, 0 to 10000 (10)
  --repeats N     calls timed per case (the median is printed), 1 to 1000 (3)
  --pg URL        PostgreSQL too: a postgres:// or postgresql:// URL (default: SQLite only)
  --help          this text`;
/** A bad command line: one line on stderr, exit 2, before any work (as bench/run.ts refuses one). */
const refuse = (message: string): never => refuseUsage('recover-all', message);
const values = readScriptArgs('recover-all', usage, { completed: '5000', running: '10', repeats: '3', pg: undefined });
const COMPLETED = wholeOption('recover-all', 'completed', values.completed, 0, 1_000_000);
const RUNNING = wholeOption('recover-all', 'running', values.running, 0, 10_000);
const REPEATS = wholeOption('recover-all', 'repeats', values.repeats, 1, 1000);
const PG_URL = values.pg ?? '';
if (values.pg !== undefined) {
  try {
    checkPgUrl(values.pg, '--pg');
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    refuse(error.message);
  }
}

const State = z.object({ n: z.number().int(), ok: z.boolean().optional() });
const approvals = workflow({ name: 'approvals', version: '1', state: State })
  .pure('prepare', { run: (s) => ({ n: s.n + 1 }), next: 'approve' })
  .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: 'settle' })
  .effect('settle', { run: async () => ({ add: 10 }), apply: (s, r) => ({ n: s.n + r.add }), next: 'finish' })
  .pure('finish', { run: (s) => ({ n: s.n * 2 }), next: END })
  .build();

const core = await createCore(process.env['REMIT_BENCH_CORE'] === 'reference' ? 'reference' : 'wasm');
type Hooks = NonNullable<Parameters<typeof createRemit>[0]['hooks']>;
const remitOn = (store: Store, hooks?: Hooks) =>
  createRemit({ store, core, workflows: [approvals], instanceId: 'bench-replica', ...(hooks ? { hooks } : {}) });

/** The logs: COMPLETED finished runs and RUNNING runs interrupted after their first record. */
async function buildLogs(): Promise<Array<{ runId: string; records: Uint8Array[]; status: 'completed' | 'running' }>> {
  const memory = openMemoryStore();
  for (let i = 0; i < COMPLETED; i++) {
    const parked = await (await remitOn(memory)).start(approvals, { n: i }, { runId: `done-${i}` });
    await (await remitOn(memory)).resume(parked.runId, parked.interrupt!.id, { ok: true });
  }
  const crashAfterFirstAppend: Hooks = { at: (point) => { if (point === 'append.after') throw new Error('crash'); } };
  for (let i = 0; i < RUNNING; i++) {
    await (await remitOn(memory, crashAfterFirstAppend)).start(approvals, { n: i }, { runId: `crashed-${i}` }).catch(() => {});
  }
  const out = [];
  for (const { runId } of await memory.listRuns()) {
    out.push({ runId, records: (await memory.readRecords(runId)).map((r) => r.bytes), status: runId.startsWith('done') ? ('completed' as const) : ('running' as const) });
  }
  return out;
}

/** One store kind: a base store loaded once, and fresh copies of it. */
interface Target {
  name: string;
  load(logs: Awaited<ReturnType<typeof buildLogs>>, withHints: boolean): Promise<Store>;
  copy(base: Store): Promise<Store>;
  cleanup(): Promise<void>;
}

async function load(store: Store, logs: Awaited<ReturnType<typeof buildLogs>>, withHints: boolean): Promise<Store> {
  for (const log of logs) {
    const outcome = await store.append(log.runId, 0, log.records, undefined, withHints ? log.status : undefined);
    if (!outcome.committed) throw new Error(`run ${log.runId} was not loaded`);
  }
  return store;
}

function sqliteTarget(): Target {
  const scratch = fileURLToPath(new URL('./results/tmp/', import.meta.url));
  mkdirSync(scratch, { recursive: true });
  const dir = mkdtempSync(join(scratch, 'recover-all-'));
  let files = 0;
  const fresh = () => join(dir, `s${files++}.db`);
  return {
    name: 'sqlite',
    load: (logs, withHints) => load(openSqliteStore(fresh()), logs, withHints),
    async copy(base) {
      const path = fresh();
      const db = new Database((base as unknown as { path: string }).path);
      db.prepare('VACUUM INTO ?').run(path);
      db.close();
      return openSqliteStore(path);
    },
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresTarget(url: string): Target {
  const schemas: string[] = [];
  let n = 0;
  const open = (): Promise<PostgresStore> => {
    const schema = `remit_recover_all_${process.pid}_${n++}`;
    schemas.push(schema);
    return openPostgresStore({ connectionString: url, schema });
  };
  const sql = async (text: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  return {
    name: 'postgres',
    load: async (logs, withHints) => load(await open(), logs, withHints),
    async copy(base) {
      const copy = await open();
      const from = `"${(base as PostgresStore).schema}"`;
      const to = `"${copy.schema}"`;
      await sql(`INSERT INTO ${to}.runs SELECT * FROM ${from}.runs; INSERT INTO ${to}.records SELECT * FROM ${from}.records;
        INSERT INTO ${to}.summaries SELECT * FROM ${from}.summaries; ANALYZE ${to}.runs; ANALYZE ${to}.records`);
      return copy;
    },
    async cleanup() {
      for (const schema of schemas) await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

/** The store without the index: recoverAll reads every run, as it did before the index existed. */
function withoutIndex(store: Store): Store {
  return Object.assign(Object.create(store) as Store, { listRunsToRecover: undefined, correctRunStatuses: undefined });
}

async function timeRecoverAll(store: Store): Promise<{ ms: number; continued: number }> {
  const started = performance.now();
  const outcomes = await (await remitOn(store)).recoverAll();
  const ms = performance.now() - started;
  const continued = outcomes.filter((o) => 'result' in o && o.result.status === 'parked').length;
  if (continued !== RUNNING || outcomes.length !== RUNNING) throw new Error(`recoverAll continued ${continued} of ${RUNNING} runs (${outcomes.length} outcomes)`);
  return { ms, continued };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(target: Target, base: Store, label: string, view: (s: Store) => Store, twice = false): Promise<void> {
  const times: number[] = [];
  const second: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const copy = await target.copy(base);
    times.push((await timeRecoverAll(view(copy))).ms);
    if (twice) {
      const started = performance.now();
      await (await remitOn(copy)).recoverAll();
      second.push(performance.now() - started);
    }
    await copy.close();
  }
  const row: Record<string, unknown> = { store: target.name, case: label, completed: COMPLETED, running: RUNNING, medianMs: Math.round(median(times)), samplesMs: times.map(Math.round) };
  if (twice) row['nextCallMedianMs'] = Math.round(median(second));
  console.log(JSON.stringify(row));
}

if (PG_URL) {
  try {
    await checkPgConnection(PG_URL, '--pg');
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    refuse(error.message);
  }
}
const logs = await buildLogs();
for (const target of [sqliteTarget(), ...(PG_URL ? [postgresTarget(PG_URL)] : [])]) {
  try {
    const hinted = await target.load(logs, true);
    await measure(target, hinted, 'full scan (no index)', withoutIndex);
    await measure(target, hinted, 'index', (s) => s);
    const upgraded = await target.load(logs, false);
    await measure(target, upgraded, 'index, first call after upgrade (no hints yet)', (s) => s, true);
    await hinted.close();
    await upgraded.close();
  } finally {
    await target.cleanup();
  }
}
