/**
 * Suite 3, durable step commit: steps per second of a REMIT run of `steps` pure steps on SQLite
 * (synchronous FULL and NORMAL), against the limit: a raw better-sqlite3 loop of single-row
 * insert-commits of the same record size on a file with the same settings. One sample = one
 * whole run (or loop) of `steps` commits; REMIT and raw alternate sample by sample.
 *
 * A REMIT step here is: recover the cached log (the core), run the node, validate the state
 * (zod), compute the delta, encode the record, and one conditional-append transaction
 * (BEGIN IMMEDIATE; read next_seq; insert; update next_seq; COMMIT).
 */

import Database from 'better-sqlite3';
import { compareTasks, type TimedTask } from '../lib/measure.js';
import { freshDbPath, type SuiteContext, type SuiteOutput } from '../lib/context.js';
import { row, unavailableRow, type ResultRow } from '../lib/results.js';
import { runPostgresCommitSuite } from '../postgres.js';
import { scaleSummary } from '../lib/stats.js';
import { openRawDb, rawInsertCommitLoop, type SyncMode } from '../workloads/raw-sqlite.js';

const RAW = 'raw-insert-commit';
/** Small fixed field of the state: the step record is then a typical small delta. */
const COMMIT_STATE_FIXED_BYTES = 100;

export async function runCommit(ctx: SuiteContext): Promise<SuiteOutput> {
  const { steps, samples, syncModes } = ctx.profile.commit;
  const rows: ResultRow[] = [];
  const notes: string[] = [];
  let remitMod: typeof import('../workloads/remit.js') | null = null;
  try {
    remitMod = await import('../workloads/remit.js');
    notes.push((await remitMod.remitCore()).note);
  } catch (e) {
    notes.push(`REMIT unavailable: ${String((e as Error)?.message ?? e).slice(0, 200)}`);
  }
  for (const sync of syncModes) {
    const caseName = `synchronous=${sync}`;
    const params: ResultRow['params'] = { synchronous: sync, steps_per_sample: steps };
    const tasks: TimedTask[] = [];
    let recordBytes = 64;
    if (remitMod) {
      const mod = remitMod;
      const file = freshDbPath(ctx.tmpDir, `remit-commit-${sync}.db`);
      const wf = mod.growthWorkflow(steps, false);
      const remit = await mod.remitOpen(file, wf, sync);
      let runNo = 0;
      // One untimed run measures the REMIT step record's size, so the raw rows carry the same bytes.
      await mod.remitRunGrowth(file, steps, false, { remit, runId: `size-probe`, fixedBytes: COMMIT_STATE_FIXED_BYTES });
      recordBytes = averageStepRecordBytes(file, 'size-probe');
      tasks.push({
        impl: 'remit', async: true,
        fn: () => mod.remitRunGrowth(file, steps, false, { remit, runId: `commit-${runNo++}`, fixedBytes: COMMIT_STATE_FIXED_BYTES }),
      });
      params.remit_step_record_bytes = recordBytes;
    }
    const rawFile = freshDbPath(ctx.tmpDir, `raw-commit-${sync}.db`);
    const rawDb = openRawDb(rawFile, sync as SyncMode);
    const rawRecord = new Uint8Array(recordBytes).fill(0x61);
    let rawRun = 0;
    tasks.push({ impl: RAW, fn: () => rawInsertCommitLoop(rawDb, `raw-${rawRun++}`, steps, rawRecord) });
    ctx.log(`commit: ${caseName}, ${samples} samples of ${steps} steps`);
    const outcomes = await compareTasks(`commit ${caseName}`, tasks, { iterations: 1, timeMs: 0, warmupIterations: 1, rounds: samples });
    rawDb.close();
    const caseRows = outcomes.map((o) => {
      if (!o.time_ms) return row({ suite: 'commit', case: caseName, params, impl: o.impl, role: 'subject', status: 'error', note: o.error });
      const perStep = scaleSummary(o.time_ms, 1 / steps);
      return row({
        suite: 'commit', case: caseName, params, impl: o.impl, role: o.impl === RAW ? 'limit' : 'subject', time_ms: perStep,
        metrics: { steps_per_s: 1000 / perStep.median },
      });
    });
    if (!remitMod) caseRows.push(unavailableRow('commit', caseName, params, 'remit', 'subject', 'REMIT workload did not load'));
    const raw = caseRows.find((r) => r.impl === RAW && r.status === 'measured');
    for (const r of caseRows) {
      if (r.impl !== RAW && r.time_ms && raw?.time_ms) r.ratios[`speed_vs_${RAW}`] = raw.time_ms.median / r.time_ms.median;
    }
    rows.push(...caseRows);
  }
  if (ctx.pgUrl) {
    const pg = await runPostgresCommitSuite(ctx);
    rows.push(...pg.rows);
    notes.push(...pg.notes);
  }
  notes.push(
    `One sample = ${steps} steps; times are per step. REMIT runs a one-node self-loop whose state is a counter plus a ${COMMIT_STATE_FIXED_BYTES}-byte string, so each step writes one small NODE_COMPLETED delta (a run adds RUN_STARTED before and RUN_COMPLETED, batched with the last step).`,
    'The raw loop inserts rows of the REMIT step record\'s average size into a (run_id, seq) WITHOUT ROWID table, one autocommit transaction per row, WAL journal, same synchronous setting.',
  );
  return { rows, notes, charts: [] };
}

function averageStepRecordBytes(file: string, runId: string): number {
  const db = new Database(file, { readonly: true });
  try {
    const r = db.prepare('SELECT avg(length(bytes)) AS avg FROM remit_records WHERE run_id = ?').get(runId) as { avg: number };
    return Math.round(r.avg);
  } finally {
    db.close();
  }
}
