/**
 * The commit and gate suites on PostgreSQL, each against a raw node-postgres baseline measured in
 * the same run, on the same server, with the same connection settings (synchronous_commit on,
 * the server's default; the rows record what the server reported).
 *
 *   runPostgresCommitSuite(ctx): durable step commit. REMIT (PostgresStore, one run of `steps` pure
 *     steps per sample) vs `raw-pg-insert-commit`: `steps` single-row autocommit INSERTs of the same
 *     record size into a (run_id, seq) table, one connection.
 *   runPostgresGateSuite(ctx): the consume-once gate, k = 1, 2, 8 racers per parked interrupt.
 *     `remit:postgres:resume` (public resume(), k Remit instances with their own pools),
 *     `remit:postgres:claim-only` (read log, core.feed, core.admitFrom, conditional append: the gate alone),
 *     `remit:postgres:claim-held` (the same without the read, made before the clock: the claim resume() makes
 *     after judging the interrupt and the value) vs
 *     `raw-pg-on-conflict`: k connections racing `INSERT ... ON CONFLICT DO NOTHING RETURNING`.
 *     Every sample checks exactly one winner per claim.
 *
 * Both take the bench framework's SuiteContext (ctx.pgUrl must be set; otherwise every row is
 * "unavailable" with the reason) and return its SuiteOutput: rows of the commit and gate suites
 * with params.store = "postgres" (bench/README.md, "Results JSON"), so bench/run.ts can append them
 * to those suites. Each run works in fresh schemas (remit_bench_*) that it drops at the end.
 *
 * Stand-alone: npx tsx bench/postgres.ts --pg "$(bash scripts/pg.sh url)" [--full]
 */

import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import pg from 'pg';
import { claimFromHeld, claimOnce, readEveryRacer } from './workloads/claim.js';
import { createRemit, type Remit } from 'remit';
import { openPostgresStore, type PostgresStore } from 'remit/postgres';
import type { SuiteContext, SuiteOutput } from './lib/context.js';
import { compareTasks, warmUpNote, type TimedTask } from './lib/measure.js';
import { FULL, QUICK } from './lib/profile.js';
import { row, unavailableRow, type ResultRow } from './lib/results.js';
import { scaleSummary } from './lib/stats.js';
import { growthWorkflow, parkedInterruptId, parkedWorkflow, remitCore, remitPrepareParked, remitRunGrowth } from './workloads/remit.js';
import { RESUME_VALUE } from './workloads/shapes.js';

export const REMIT_PG = 'remit:postgres';
export const RAW_PG_COMMIT = 'raw-pg-insert-commit';
export const REMIT_PG_RESUME = 'remit:postgres:resume';
export const REMIT_PG_CLAIM = 'remit:postgres:claim-only';
export const REMIT_PG_CLAIM_HELD = 'remit:postgres:claim-held';
export const RAW_PG_GATE = 'raw-pg-on-conflict';

/** Same state shape as the SQLite commit suite: a counter plus a 100-byte string. */
const COMMIT_STATE_FIXED_BYTES = 100;
const GATE_NODES = 1;
/** Connection settings shared by REMIT's pools and the raw clients. */
const STATEMENT_TIMEOUT_MS = 10_000;

function rawClientConfig(url: string): pg.ClientConfig {
  return { connectionString: url, statement_timeout: STATEMENT_TIMEOUT_MS, keepAlive: true, application_name: 'remit-bench-raw' };
}

async function withClient<T>(url: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(rawClientConfig(url));
  await c.connect();
  try {
    return await use(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

function freshSchema(kind: string): string {
  return `remit_bench_${kind}_${randomBytes(5).toString('hex')}`;
}

async function dropSchemas(url: string, schemas: string[]): Promise<void> {
  await withClient(url, async (c) => {
    for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  });
}

/** What the server says about durability, recorded in every row's params. */
async function serverSettings(url: string): Promise<{ synchronous_commit: string; fsync: string; server_version: string }> {
  return withClient(url, async (c) => {
    const get = async (name: string) => String((await c.query(`SHOW ${name}`)).rows[0]?.[name] ?? '?');
    return { synchronous_commit: await get('synchronous_commit'), fsync: await get('fsync'), server_version: await get('server_version') };
  });
}

function openStore(url: string, schema: string): Promise<PostgresStore> {
  return openPostgresStore({ connectionString: url, schema, statementTimeoutMs: STATEMENT_TIMEOUT_MS, applicationName: 'remit-bench' });
}

function noPg(suite: 'commit' | 'gate', impls: [string, ResultRow['role']][], caseName: string, params: ResultRow['params']): SuiteOutput {
  const note = 'no PostgreSQL URL (--pg URL, e.g. "$(bash scripts/pg.sh url)")';
  return { rows: impls.map(([impl, role]) => unavailableRow(suite, caseName, { ...params, store: 'postgres' }, impl, role, note)), notes: [note], charts: [] };
}

function ratioTo(rows: ResultRow[], baselineImpl: string): void {
  const base = rows.find((r) => r.impl === baselineImpl && r.status === 'measured');
  for (const r of rows) {
    if (r.impl !== baselineImpl && r.time_ms && base?.time_ms) r.ratios[`speed_vs_${baselineImpl}`] = base.time_ms.median / r.time_ms.median;
  }
}

/** Durable step commit on PostgreSQL: REMIT steps/s vs a raw single-row INSERT loop. */
export async function runPostgresCommitSuite(ctx: SuiteContext): Promise<SuiteOutput> {
  const { steps, samples } = ctx.profile.commit;
  const caseName = 'postgres';
  const baseParams: ResultRow['params'] = { store: 'postgres', steps_per_sample: steps };
  if (!ctx.pgUrl) return noPg('commit', [[REMIT_PG, 'subject'], [RAW_PG_COMMIT, 'limit']], caseName, baseParams);
  const url = ctx.pgUrl;
  const settings = await serverSettings(url);
  const params: ResultRow['params'] = { ...baseParams, synchronous_commit: settings.synchronous_commit, fsync: settings.fsync };
  const { core, note: coreNote } = await remitCore();
  const remitSchema = freshSchema('commit');
  const rawSchema = freshSchema('rawcommit');
  const store = await openStore(url, remitSchema);
  const wf = growthWorkflow(steps, false);
  const remit = await createRemit({ store, workflows: [wf], core });
  const raw = new pg.Client(rawClientConfig(url));
  await raw.connect();
  try {
    // One untimed run gives the REMIT step record's size, so the raw rows carry the same bytes.
    await remitRunGrowth('', steps, false, { remit, runId: 'size-probe', fixedBytes: COMMIT_STATE_FIXED_BYTES });
    const probe = await store.readRecords('size-probe');
    const recordBytes = Math.round(probe.reduce((n, r) => n + r.bytes.length, 0) / probe.length);
    params.remit_step_record_bytes = recordBytes;
    await raw.query(`CREATE SCHEMA "${rawSchema}"`);
    await raw.query(`CREATE TABLE "${rawSchema}".records (run_id text NOT NULL, seq integer NOT NULL, bytes bytea NOT NULL, committed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (run_id, seq))`);
    const record = Buffer.alloc(recordBytes, 0x61);
    const insert = `INSERT INTO "${rawSchema}".records (run_id, seq, bytes) VALUES ($1, $2, $3)`;
    let remitRun = 0;
    let rawRun = 0;
    const tasks: TimedTask[] = [
      { impl: REMIT_PG, async: true, fn: () => remitRunGrowth('', steps, false, { remit, runId: `commit-${remitRun++}`, fixedBytes: COMMIT_STATE_FIXED_BYTES }) },
      {
        impl: RAW_PG_COMMIT,
        async: true,
        fn: async () => {
          const runId = `raw-${rawRun++}`;
          for (let seq = 0; seq < steps; seq++) await raw.query(insert, [runId, seq, record]);
          return steps;
        },
      },
    ];
    ctx.log(`commit (postgres): ${samples} samples of ${steps} steps`);
    const outcomes = await compareTasks('commit postgres', tasks, { iterations: 1, timeMs: 0, warmupIterations: 1, rounds: samples });
    const rows = outcomes.map((o) => {
      const role: ResultRow['role'] = o.impl === RAW_PG_COMMIT ? 'limit' : 'subject';
      if (!o.time_ms) return row({ suite: 'commit', case: caseName, params, impl: o.impl, role, status: 'error', note: o.error });
      const perStep = scaleSummary(o.time_ms, 1 / steps);
      return row({ suite: 'commit', case: caseName, params, impl: o.impl, role, time_ms: perStep, metrics: { steps_per_s: 1000 / perStep.median } });
    });
    ratioTo(rows, RAW_PG_COMMIT);
    return {
      rows,
      notes: [
        coreNote,
        `PostgreSQL ${settings.server_version}, synchronous_commit=${settings.synchronous_commit}, fsync=${settings.fsync}. One sample = ${steps} steps; times are per step.`,
        `REMIT: PostgresStore (pool of 10, statement_timeout ${STATEMENT_TIMEOUT_MS} ms); each step is one conditional-append statement (compare-and-set of runs.next_seq feeding the record insert). Raw: one connection, ${steps} autocommit INSERTs of ${recordBytes}-byte rows into a (run_id, seq) table.`,
      ],
      charts: [],
    };
  } finally {
    await remit.close().catch(() => undefined);
    await raw.end().catch(() => undefined);
    await dropSchemas(url, [remitSchema, rawSchema]);
  }
}

function expectOneWinner(won: boolean[], runId: string): void {
  const winners = won.filter(Boolean).length;
  if (winners !== 1) throw new Error(`claim ${runId}: ${winners} of ${won.length} racers won, expected exactly 1`);
}

async function timed(op: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await op();
  return performance.now() - t0;
}

/** The consume-once gate on PostgreSQL: claims resolved per second with k racers. */
export async function runPostgresGateSuite(ctx: SuiteContext): Promise<SuiteOutput> {
  const { claims, racers: racerCounts, samples } = ctx.profile.gate;
  if (!ctx.pgUrl) {
    const out: SuiteOutput = { rows: [], notes: [], charts: [] };
    for (const k of racerCounts) {
      const part = noPg('gate', [[REMIT_PG_RESUME, 'subject'], [REMIT_PG_CLAIM, 'subject'], [REMIT_PG_CLAIM_HELD, 'subject'], [RAW_PG_GATE, 'limit']], `postgres k=${k}`, { racers: k, claims_per_sample: claims });
      out.rows.push(...part.rows);
      out.notes = part.notes;
    }
    return out;
  }
  const url = ctx.pgUrl;
  const settings = await serverSettings(url);
  const { core, note: coreNote } = await remitCore();
  const wf = parkedWorkflow(GATE_NODES);
  const interruptId = parkedInterruptId(GATE_NODES);
  const interruptBytes = new TextEncoder().encode(interruptId);
  const valueBytes = new TextEncoder().encode(JSON.stringify(RESUME_VALUE));
  const rows: ResultRow[] = [];
  const warmUpNotes: string[] = [];
  for (const k of racerCounts) {
    const caseName = `postgres k=${k}`;
    const params: ResultRow['params'] = { store: 'postgres', racers: k, claims_per_sample: claims, synchronous_commit: settings.synchronous_commit };
    const remitSchema = freshSchema(`gate${k}`);
    const rawSchema = freshSchema(`rawgate${k}`);
    const preparerStore = await openStore(url, remitSchema);
    const preparer = await createRemit({ store: preparerStore, workflows: [wf], core });
    const racers: Remit[] = [];
    const claimStores: PostgresStore[] = [];
    const rawClients: pg.Client[] = [];
    try {
      for (let i = 0; i < k; i++) racers.push(await createRemit({ store: await openStore(url, remitSchema), workflows: [wf], core }));
      for (let i = 0; i < k; i++) claimStores.push(await openStore(url, remitSchema));
      for (let i = 0; i < k; i++) {
        const c = new pg.Client(rawClientConfig(url));
        await c.connect();
        rawClients.push(c);
      }
      await rawClients[0]!.query(`CREATE SCHEMA "${rawSchema}"`);
      await rawClients[0]!.query(`CREATE TABLE "${rawSchema}".claims (run_id text NOT NULL, interrupt_id text NOT NULL, value bytea NOT NULL, PRIMARY KEY (run_id, interrupt_id))`);
      const rawInsert = `INSERT INTO "${rawSchema}".claims (run_id, interrupt_id, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING run_id`;
      let batchNo = 0;
      // Parked runs a sample consumes are made before its clock starts.
      const prepareBatch = async (): Promise<string[]> => {
        const ids: string[] = [];
        for (let c = 0; c < claims; c++) {
          const runId = `gate-k${k}-${batchNo}-${c}`;
          await remitPrepareParked('', GATE_NODES, runId, preparer);
          ids.push(runId);
        }
        batchNo++;
        return ids;
      };
      let rawBatch = 0;
      const tasks: TimedTask[] = [
        {
          impl: REMIT_PG_RESUME,
          async: true,
          fn: async () => {
            const ids = await prepareBatch();
            return {
              overriddenDuration: await timed(async () => {
                for (const runId of ids) {
                  const settled = await Promise.allSettled(racers.map((r) => r.resume(runId, interruptId, RESUME_VALUE)));
                  expectOneWinner(settled.map((s) => s.status === 'fulfilled'), runId);
                }
              }),
            };
          },
        },
        {
          impl: REMIT_PG_CLAIM,
          async: true,
          fn: async () => {
            const ids = await prepareBatch();
            return {
              overriddenDuration: await timed(async () => {
                for (const runId of ids) expectOneWinner(await Promise.all(claimStores.map((s) => claimOnce(s, core, runId, interruptBytes, valueBytes))), runId);
              }),
            };
          },
        },
        {
          impl: REMIT_PG_CLAIM_HELD,
          async: true,
          fn: async () => {
            const ids = await prepareBatch();
            const held = await readEveryRacer(claimStores, core, ids);
            return {
              overriddenDuration: await timed(async () => {
                for (let i = 0; i < ids.length; i++) {
                  expectOneWinner(await Promise.all(claimStores.map((s, r) => claimFromHeld(s, core, ids[i]!, held[i]![r]!, interruptBytes, valueBytes))), ids[i]!);
                }
              }),
            };
          },
        },
        {
          impl: RAW_PG_GATE,
          async: true,
          fn: async () => {
            const batch = rawBatch++;
            for (let c = 0; c < claims; c++) {
              const runId = `raw-${batch}-${c}`;
              const results = await Promise.all(rawClients.map((cl) => cl.query(rawInsert, [runId, interruptId, Buffer.from(valueBytes)])));
              expectOneWinner(results.map((r) => r.rowCount === 1), runId);
            }
            return claims;
          },
        },
      ];
      ctx.log(`gate (postgres): k=${k}, ${samples} samples of ${claims} claims`);
      const outcomes = await compareTasks(`gate postgres k=${k}`, tasks, { iterations: 1, timeMs: 0, warmupIterations: 1, rounds: samples });
      const caseRows = outcomes.map((o) => {
        const role: ResultRow['role'] = o.impl === RAW_PG_GATE ? 'limit' : 'subject';
        if (!o.time_ms) return row({ suite: 'gate', case: caseName, params, impl: o.impl, role, status: 'error', note: o.error });
        const perClaim = scaleSummary(o.time_ms, 1 / claims);
        return row({ suite: 'gate', case: caseName, params, impl: o.impl, role, time_ms: perClaim, metrics: { claims_per_s: 1000 / perClaim.median } });
      });
      ratioTo(caseRows, RAW_PG_GATE);
      rows.push(...caseRows);
      warmUpNotes.push(warmUpNote(caseName, outcomes, claims, 'claim'));
    } finally {
      for (const r of [preparer, ...racers]) await r.close().catch(() => undefined);
      for (const s of claimStores) await s.close().catch(() => undefined);
      for (const c of rawClients) await c.end().catch(() => undefined);
      await dropSchemas(url, [remitSchema, rawSchema]);
    }
  }
  return {
    rows,
    notes: [
      coreNote,
      `PostgreSQL ${settings.server_version}, synchronous_commit=${settings.synchronous_commit}. One sample = ${claims} parked interrupts, each raced by k racers at once (Promise.all), each racer with its own connection(s); times are per claim. Exactly one winner per claim is checked in every sample.`,
      'remit:postgres:resume is the public resume(): the winner also drives the run to its end (two more commits); claim-only is the gate alone as a process that has not opened the run makes it (readRun, then the claim); claim-held is the claim from the state that read left, as resume() makes it after judging the interrupt and the value (the reads are made before the clock). Racers share one Node process; across processes and hosts see the conformance harness.',
      ...warmUpNotes,
    ],
    charts: [],
  };
}

function markdownTable(rows: ResultRow[]): string {
  const fmt = (n: number | undefined, digits = 3) => (n === undefined ? '–' : n >= 100 ? n.toFixed(0) : n.toPrecision(digits));
  const lines = ['| suite | case | impl | median ms/op | p25–p75 ms | n | per s | speed vs raw |', '|---|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    const t = r.time_ms;
    const rate = r.metrics.steps_per_s ?? r.metrics.claims_per_s;
    const ratio = Object.values(r.ratios)[0];
    lines.push(
      `| ${r.suite} | ${r.case} | ${r.impl} | ${fmt(t?.median)} | ${t ? `${fmt(t.p25)}–${fmt(t.p75)}` : '–'} | ${t?.samples ?? '–'} | ${fmt(rate)} | ${ratio === undefined ? '–' : `${ratio.toFixed(3)}×`} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const pgAt = args.indexOf('--pg');
  const pgUrl = pgAt >= 0 ? args[pgAt + 1] : process.env.REMIT_PG_URL;
  const profile = args.includes('--full') ? FULL : QUICK;
  const t0 = performance.now();
  const log = (m: string) => process.stderr.write(`[bench postgres ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${m}\n`);
  const ctx: SuiteContext = { profile, repoRoot: path.resolve(import.meta.dirname ?? '.', '..'), tmpDir: '', codeDir: '', pgUrl, log };
  const commit = await runPostgresCommitSuite(ctx);
  log('commit done');
  const gate = await runPostgresGateSuite(ctx);
  log('gate done');
  process.stdout.write(`${markdownTable([...commit.rows, ...gate.rows])}\n\n${[...commit.notes, ...gate.notes].map((n) => `- ${n}`).join('\n')}\n`);
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ commit, gate }, null, 2)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
