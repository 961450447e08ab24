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

import fs from 'node:fs';
import Database from 'better-sqlite3';
import { compareTasks, warmUpNote, type TimedTask } from '../lib/measure.js';
import { freshDbPath, type SuiteContext, type SuiteOutput } from '../lib/context.js';
import { ONE_COMMIT_PER_STEP, row, unavailableRow, type ResultRow } from '../lib/results.js';
import { runPostgresCommitSuite } from '../postgres.js';
import { scaleSummary } from '../lib/stats.js';
import { openRawDb, rawInsertCommitLoop, type SyncMode } from '../workloads/raw-sqlite.js';
import { FDATASYNC_BLOCK_BYTES, fdatasyncLoop, openFlushFile } from '../workloads/fdatasync.js';
import { openSqliteStore, type Store } from 'remit';
import {
  prepareCrashedRun, remitCrashAfterIntent, remitEffectRun, remitOpenEffects, remitRecoverers, replayedEffectRun, replayedRecoverers,
  takeHandlerCalls, type EffectPath,
} from '../workloads/effect-step.js';

const RAW = 'raw-insert-commit';
/**
 * Untimed steps each task runs before the step-commit samples, as whole runs (runs = steps over
 * the run length), the tasks alternating. A service commits steps with its code long compiled;
 * V8 needs thousands of REMIT steps for that. `npx tsx bench/warmup-trend.ts --case commit` (runs
 * of 100 steps at NORMAL, alternating with the raw loop; two runs on 2026-12-05): REMIT's median
 * step took 26-27 us over its first 10 runs, 12-16 us over runs 10-25, 8.3-9.3 us over runs 25-40
 * and 6.8-7.9 us from run 100 on; the raw loop 7.1-7.4 us over its first 25 runs, 5.8-6.4 us after.
 * 25 warm-up runs, as before, left the samples in that fall. The suite reports each task's warm-up
 * (lib/measure.ts, warmUpNote), so a reader can check that the samples come after it.
 */
const STEP_COMMIT_WARMUP_STEPS = 15_000;

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
    const closeAfter: (() => Promise<void>)[] = [];
    let recordBytes = 64;
    if (remitMod) {
      const mod = remitMod;
      const file = freshDbPath(ctx.tmpDir, `remit-commit-${sync}.db`);
      const wf = mod.growthWorkflow(steps, false);
      const remit = await mod.remitOpen(file, wf, sync);
      closeAfter.push(() => remit.close());
      let runNo = 0;
      // One untimed run measures the REMIT step record's size, so the raw rows carry the same bytes.
      await mod.remitRunGrowth(file, steps, false, { remit, runId: `size-probe`, fixedBytes: COMMIT_STATE_FIXED_BYTES });
      recordBytes = averageStepRecordBytes(file, 'size-probe');
      tasks.push({
        impl: 'remit', async: true,
        fn: () => mod.remitRunGrowth(file, steps, false, { remit, runId: `commit-${runNo++}`, fixedBytes: COMMIT_STATE_FIXED_BYTES }),
      });
      params.remit_step_record_bytes = recordBytes;
      if (sync === 'NORMAL') {
        // Beside the grouped steps, the same steps with one commit each, so the per-step
        // comparison with the raw loop (one commit per insert) is shown too (lib/targets.ts).
        const eachFile = freshDbPath(ctx.tmpDir, 'remit-commit-NORMAL-each.db');
        const each = await mod.remitOpen(eachFile, wf, sync, { groupPureSteps: false });
        closeAfter.push(() => each.close());
        let eachNo = 0;
        tasks.push({
          impl: ONE_COMMIT_PER_STEP, async: true,
          fn: () => mod.remitRunGrowth(eachFile, steps, false, { remit: each, runId: `each-${eachNo++}`, fixedBytes: COMMIT_STATE_FIXED_BYTES }),
        });
      }
    }
    const rawFile = freshDbPath(ctx.tmpDir, `raw-commit-${sync}.db`);
    const rawDb = openRawDb(rawFile, sync as SyncMode);
    const rawRecord = new Uint8Array(recordBytes).fill(0x61);
    let rawRun = 0;
    tasks.push({ impl: RAW, fn: () => rawInsertCommitLoop(rawDb, `raw-${rawRun++}`, steps, rawRecord) });
    ctx.log(`commit: ${caseName}, ${samples} samples of ${steps} steps`);
    const outcomes = await compareTasks(`commit ${caseName}`, tasks, { iterations: 1, timeMs: 0, warmupIterations: warmUpRuns(STEP_COMMIT_WARMUP_STEPS, steps), rounds: samples });
    rawDb.close();
    for (const close of closeAfter.splice(0)) await close();
    notes.push(warmUpNote(caseName, outcomes, steps, 'step'));
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
  const flushLimit = await runFlushLimitCase(ctx, remitMod);
  rows.push(...flushLimit.rows);
  notes.push(flushLimit.note);
  if (remitMod) {
    const effects = await runEffectStepCases(ctx);
    rows.push(...effects.rows);
    notes.push(...effects.notes);
  }
  if (ctx.pgUrl) {
    const pg = await runPostgresCommitSuite(ctx);
    rows.push(...pg.rows);
    notes.push(...pg.notes);
  }
  notes.push(
    `One sample = ${steps} steps; times are per step. REMIT runs a one-node self-loop whose state is a counter plus a ${COMMIT_STATE_FIXED_BYTES}-byte string, so each step writes one small NODE_COMPLETED delta (a run adds RUN_STARTED before and RUN_COMPLETED, batched with the last step). Each task first runs ${warmUpRuns(STEP_COMMIT_WARMUP_STEPS, steps)} untimed runs (${STEP_COMMIT_WARMUP_STEPS} steps: JIT warm-up, the same for every task, alternating; STEP_COMMIT_WARMUP_STEPS in suites/commit.ts says why so many).`,
    'The raw loop inserts rows of the REMIT step record\'s average size into a (run_id, seq) WITHOUT ROWID table, one autocommit transaction per row, WAL journal, same synchronous setting.',
    `"remit" groups pure steps (up to 64 to a commit, the default); at NORMAL "${ONE_COMMIT_PER_STEP}" runs the same steps with groupPureSteps: false, one commit each as the raw loop makes, alternating with the other two.`,
    `"${ONE_COMMIT_CASE}": REMIT with groupPureSteps: false (one append, so one WAL flush, per step), the raw loop, and "${FDATASYNC}" (write ${FDATASYNC_BLOCK_BYTES} B in place into a preallocated file in the bench's scratch folder, fdatasync; ${ctx.profile.commit.fdatasyncWrites} per sample), alternating in one Bench; share of fdatasync rate = commits/s over fdatasyncs/s measured beside them.`,
  );
  return { rows, notes, charts: [] };
}

export const FDATASYNC = 'fdatasync-loop';
export const ONE_COMMIT_CASE = 'synchronous=FULL, one commit per step';

/**
 * The flush limit beside durable commits, in one Bench (alternating): REMIT with one append per
 * commit (groupPureSteps: false), the raw insert-commit loop, and a write+fdatasync loop
 * (workloads/fdatasync.ts), all `steps` operations per sample at synchronous=FULL. The commit rows'
 * rate_vs_fdatasync is their commit rate over the flush rate.
 */
async function runFlushLimitCase(ctx: SuiteContext, remitMod: typeof import('../workloads/remit.js') | null): Promise<{ rows: ResultRow[]; note: string }> {
  const { steps, samples, fdatasyncWrites } = ctx.profile.commit;
  const params: ResultRow['params'] = { synchronous: 'FULL', steps_per_sample: steps, group_pure_steps: 'false', fdatasync_writes_per_sample: fdatasyncWrites, fdatasync_block_bytes: FDATASYNC_BLOCK_BYTES };
  const tasks: TimedTask[] = [];
  let recordBytes = 64;
  let remit: Awaited<ReturnType<NonNullable<typeof remitMod>['remitOpen']>> | undefined;
  if (remitMod) {
    const mod = remitMod;
    const file = freshDbPath(ctx.tmpDir, 'remit-one-commit.db');
    const r = (remit = await mod.remitOpen(file, mod.growthWorkflow(steps, false), 'FULL', { groupPureSteps: false }));
    await mod.remitRunGrowth(file, steps, false, { remit: r, runId: 'size-probe', fixedBytes: COMMIT_STATE_FIXED_BYTES });
    recordBytes = averageStepRecordBytes(file, 'size-probe');
    params.remit_step_record_bytes = recordBytes;
    let runNo = 0;
    tasks.push({
      impl: 'remit', async: true,
      fn: () => mod.remitRunGrowth(file, steps, false, { remit: r, runId: `one-${runNo++}`, fixedBytes: COMMIT_STATE_FIXED_BYTES }),
    });
  }
  const rawDb = openRawDb(freshDbPath(ctx.tmpDir, 'raw-one-commit.db'), 'FULL');
  const rawRecord = new Uint8Array(recordBytes).fill(0x61);
  let rawRun = 0;
  tasks.push({ impl: RAW, fn: () => rawInsertCommitLoop(rawDb, `raw-${rawRun++}`, steps, rawRecord) });
  const flushFile = openFlushFile(freshDbPath(ctx.tmpDir, 'fdatasync.bin'));
  const block = new Uint8Array(FDATASYNC_BLOCK_BYTES).fill(0x62);
  tasks.push({ impl: FDATASYNC, fn: () => fdatasyncLoop(flushFile, fdatasyncWrites, block) });
  ctx.log(`commit: ${ONE_COMMIT_CASE} beside the fdatasync loop, ${samples} samples`);
  const outcomes = await compareTasks(`commit ${ONE_COMMIT_CASE}`, tasks, { iterations: 1, timeMs: 0, warmupIterations: warmUpRuns(STEP_COMMIT_WARMUP_STEPS, steps), rounds: samples });
  rawDb.close();
  fs.closeSync(flushFile.fd);
  await remit?.close();
  const rows = outcomes.map((o) => {
    const perOp = o.impl === FDATASYNC ? fdatasyncWrites : steps;
    if (!o.time_ms) return row({ suite: 'commit', case: ONE_COMMIT_CASE, params, impl: o.impl, role: 'subject', status: 'error', note: o.error });
    const t = scaleSummary(o.time_ms, 1 / perOp);
    return row({
      suite: 'commit', case: ONE_COMMIT_CASE, params, impl: o.impl, role: o.impl === 'remit' ? 'subject' : 'limit', time_ms: t,
      metrics: o.impl === FDATASYNC ? { fdatasync_per_s: 1000 / t.median } : { steps_per_s: 1000 / t.median },
      ...(o.impl === FDATASYNC ? { note: `write ${FDATASYNC_BLOCK_BYTES} B in place + fdatasync, per operation` } : {}),
    });
  });
  if (!remitMod) rows.push(unavailableRow('commit', ONE_COMMIT_CASE, params, 'remit', 'subject', 'REMIT workload did not load'));
  const flush = rows.find((r) => r.impl === FDATASYNC && r.status === 'measured');
  const raw = rows.find((r) => r.impl === RAW && r.status === 'measured');
  for (const r of rows) {
    if (r.impl === FDATASYNC || !r.time_ms) continue;
    if (flush?.time_ms) r.ratios.rate_vs_fdatasync = flush.time_ms.median / r.time_ms.median;
    if (r.impl !== RAW && raw?.time_ms) r.ratios[`speed_vs_${RAW}`] = raw.time_ms.median / r.time_ms.median;
  }
  return { rows, note: warmUpNote(ONE_COMMIT_CASE, outcomes.filter((o) => o.impl !== FDATASYNC), steps, 'step') };
}

/** Whole runs of `stepsPerRun` steps that make at least `warmUpSteps` warm-up steps. */
function warmUpRuns(warmUpSteps: number, stepsPerRun: number): number {
  return Math.ceil(warmUpSteps / stepsPerRun);
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

// ------------------------------------------------------------------ the fence's cost on an effect step

/**
 * Untimed effect steps each task of the uncontended effect-step case runs first (as whole runs,
 * alternating). `npx tsx bench/warmup-trend.ts --case effect [--sync FULL]` (400 runs of 50 effect
 * steps alternating with the replay of the step before the fence, 2026-12-05): REMIT's speed ratio
 * to the replay was 0.55 over the first 10 runs and 0.76-0.89 over runs 10-60 at NORMAL (0.83-0.87
 * at FULL), 0.93-0.97 from run 60 on (0.91-0.92 at FULL), while the one warm-up run the case made
 * before put its samples in runs 2-16.
 */
const EFFECT_STEP_WARMUP_STEPS = 5_000;

const PREVIOUS = 'previous-effect-step (replayed)';
const FENCED = 'fenced-effect-step (replayed)';
/** Concurrent recoverers in the contended case. */
const RECOVERERS = 4;

/**
 * The effect step with and without the invocation fence, side by side (workloads/effect-step.ts
 * says how the previous step is replayed), and REMIT itself: per effect step without contention,
 * and the time for k recoverers of a run crashed right after its intent to settle, with the
 * handler calls each path made.
 */
async function runEffectStepCases(ctx: SuiteContext): Promise<{ rows: ResultRow[]; notes: string[] }> {
  const { steps, samples, syncModes } = ctx.profile.commit;
  const effectSteps = Math.max(10, Math.floor(steps / 2));
  const effectWarmUpRuns = warmUpRuns(EFFECT_STEP_WARMUP_STEPS, effectSteps);
  const rows: ResultRow[] = [];
  const warmUps: string[] = [];
  for (const sync of syncModes) {
    // Without contention: one sequencer, `effectSteps` effect steps per sample.
    const caseName = `effect step, synchronous=${sync}`;
    const params: ResultRow['params'] = { synchronous: sync, effect_steps_per_sample: effectSteps };
    const stores = new Map<string, Store>();
    const storeFor = (name: string) => {
      let s = stores.get(name);
      if (!s) stores.set(name, (s = openSqliteStore(freshDbPath(ctx.tmpDir, `effects-${name}-${sync}.db`), { synchronous: sync })));
      return s;
    };
    const { remit, wf } = await remitOpenEffects(freshDbPath(ctx.tmpDir, `effects-remit-${sync}.db`), effectSteps, sync);
    let n = 0;
    const tasks: TimedTask[] = [
      { impl: PREVIOUS, async: true, fn: () => replayedEffectRun(storeFor('previous'), `p-${n++}`, effectSteps, 'previous') },
      { impl: FENCED, async: true, fn: () => replayedEffectRun(storeFor('fenced'), `f-${n++}`, effectSteps, 'fenced') },
      { impl: 'remit', async: true, fn: () => remitEffectRun(remit, wf, `r-${n++}`) },
    ];
    ctx.log(`commit: ${caseName}, ${samples} samples of ${effectSteps} effect steps`);
    const outcomes = await compareTasks(`commit ${caseName}`, tasks, {
      iterations: 1, timeMs: 0, warmupIterations: effectWarmUpRuns, rounds: samples,
    });
    await remit.close();
    warmUps.push(warmUpNote(caseName, outcomes, effectSteps, 'effect step'));
    for (const s of stores.values()) await s.close();
    takeHandlerCalls();
    rows.push(...withRatios(outcomes.map((o) => effectRow(caseName, params, o, effectSteps)), PREVIOUS));

    // With contention: RECOVERERS sequencers recover one crashed run at once, one sample per run.
    const contended = `effect step, ${RECOVERERS} concurrent recoverers, synchronous=${sync}`;
    const cParams: ResultRow['params'] = { synchronous: sync, recoverers: RECOVERERS };
    const calls: Record<string, number[]> = { [PREVIOUS]: [], [FENCED]: [], remit: [] };
    const opened: Store[] = [];
    const replayedTask = (impl: string, path: EffectPath): TimedTask => {
      const file = freshDbPath(ctx.tmpDir, `recover-${path}-${sync}.db`);
      const handles = Array.from({ length: RECOVERERS + 1 }, () => openSqliteStore(file, { synchronous: sync, busyTimeoutMs: 10_000 }));
      opened.push(...handles);
      let run = 0;
      return {
        impl, async: true,
        fn: async () => {
          const runId = `${path}-${run++}`;
          await prepareCrashedRun(handles[0]!, runId, path);
          takeHandlerCalls();
          const t0 = performance.now();
          const winners = await replayedRecoverers(handles.slice(1), runId, path);
          const ms = performance.now() - t0;
          if (winners !== 1) throw new Error(`${winners} recoverers recorded the completion`);
          calls[impl]!.push(takeHandlerCalls());
          return { overriddenDuration: ms };
        },
      };
    };
    const remitFile = freshDbPath(ctx.tmpDir, `recover-remit-${sync}.db`);
    const recoverers = await Promise.all(
      Array.from({ length: RECOVERERS }, (_, i) => remitOpenEffects(remitFile, 1, sync, { instanceId: `recoverer-${i}` }).then((x) => x.remit)),
    );
    let remitRun = 0;
    const cTasks: TimedTask[] = [
      replayedTask(PREVIOUS, 'previous'),
      replayedTask(FENCED, 'fenced'),
      {
        impl: 'remit', async: true,
        fn: async () => {
          const runId = `remit-${remitRun++}`;
          await remitCrashAfterIntent(remitFile, runId, sync);
          takeHandlerCalls();
          const t0 = performance.now();
          const finished = await remitRecoverers(recoverers, runId);
          const ms = performance.now() - t0;
          if (finished < 1) throw new Error('no REMIT recoverer finished');
          calls['remit']!.push(takeHandlerCalls());
          return { overriddenDuration: ms };
        },
      },
    ];
    ctx.log(`commit: ${contended}, ${samples} samples`);
    const cOutcomes = await compareTasks(`commit ${contended}`, cTasks, { iterations: 1, timeMs: 0, warmupIterations: 1, rounds: samples });
    for (const r of recoverers) await r.close();
    for (const h of opened) await h.close();
    const cRows = cOutcomes.map((o) => {
      const r = effectRow(contended, cParams, o, 1);
      const c = calls[o.impl] ?? [];
      if (c.length > 0) {
        r.metrics['handler_calls_per_step_mean'] = c.reduce((a, b) => a + b, 0) / c.length;
        r.metrics['handler_calls_per_step_max'] = Math.max(...c);
      }
      return r;
    });
    rows.push(...withRatios(cRows, PREVIOUS));
  }
  const notes = [
    `Effect step (the invocation fence's cost): "${PREVIOUS}" replays the effect step of the sequencer before the fence, with its store and core calls in its order and log format 1 ` +
      '(recover; append EFFECT_INTENT; recover; read the store again; handler; append EFFECT_DONE + NODE_COMPLETED); ' +
      `"${FENCED}" replays the fenced step the same way (recover; append EFFECT_INTENT + EFFECT_ATTEMPT, format 2; handler; append EFFECT_DONE + NODE_COMPLETED); ` +
      '"remit" is the library itself (a one-node effect loop through the public API). Times are per effect step; the handler does nothing. ' +
      `ratios speed_vs_${PREVIOUS} = previous median / this median (above 1: faster than before the fence).`,
    `Contention: ${RECOVERERS} sequencers, each on its own connection, recover one run crashed right after its intent (fenced: and attempt 1 of a dead sequencer whose lease expired) at once; ` +
      'the time is until all have settled; handler_calls_per_step counts the handler calls they made (before the fence: up to one per recoverer; with it: 1).',
    `Warm-up: each task of the uncontended case first runs ${EFFECT_STEP_WARMUP_STEPS} untimed effect steps (${effectWarmUpRuns} runs; EFFECT_STEP_WARMUP_STEPS in suites/commit.ts says why); the contended case one untimed recovery per task.`,
    ...warmUps,
  ];
  return { rows, notes };
}

function effectRow(caseName: string, params: ResultRow['params'], o: { impl: string; time_ms?: import('../lib/stats.js').Summary; error?: string }, perSample: number): ResultRow {
  const role = o.impl === PREVIOUS ? 'limit' : 'subject';
  if (!o.time_ms) return row({ suite: 'commit', case: caseName, params, impl: o.impl, role, status: 'error', note: o.error });
  const t = scaleSummary(o.time_ms, 1 / perSample);
  return row({ suite: 'commit', case: caseName, params, impl: o.impl, role, time_ms: t, metrics: { effect_steps_per_s: 1000 / t.median } });
}

function withRatios(rows: ResultRow[], baseline: string): ResultRow[] {
  const base = rows.find((r) => r.impl === baseline && r.status === 'measured');
  for (const r of rows) {
    if (r.impl !== baseline && r.time_ms && base?.time_ms) r.ratios[`speed_vs_${baseline}`] = base.time_ms.median / r.time_ms.median;
  }
  return rows;
}
