/**
 * Suite "step cost vs run length": does a step cost the same at step 10 and at step 100,000? One
 * REMIT run of N steps of a one-node loop (pure or effect) on the memory store and on SQLite
 * (synchronous=NORMAL, so the disk's flush time does not hide the CPU per step), each step timed
 * inside the node (workloads/step-cost.ts), every byte the sequencer hands to the core counted by
 * a Proxy around the core (lib/counting.ts).
 *
 * Per case: µs/step per decile of the run, read two ways: the median over consecutive windows of
 * W steps of (window time / W), W = 64, the largest pure-step group commit, so every window of a
 * pure loop holds about one commit and one recovery (smaller runs use a tenth of a decile); and
 * the mean, the decile's time over its steps, which a cost paid in a few windows cannot hide under
 * the median. The flatness figure is the last decile's over the first's, each way; the targets
 * judge the worse. Bytes to the core are given against the log's final size.
 *
 * Each case has a time budget: a run that spends it stops (the node records that in the state)
 * and the row says after how many steps; a larger N of a loop/store pair whose smaller N already
 * ran out of budget is not started and is reported as "not run (budget)".
 */

import path from 'node:path';
import { freshDbPath, type SuiteContext, type SuiteOutput } from '../lib/context.js';
import { NOT_RUN_BUDGET, row, unavailableRow, type ResultRow } from '../lib/results.js';
import { summarize } from '../lib/stats.js';
import { runStepCost, STEP_COST_WARMUP_STEPS, STEP_STATE_FIXED_BYTES, type LoopKind, type StepCostRun, type StoreKind } from '../workloads/step-cost.js';

/** Steps per window: the sequencer's default maximum pure-step group. */
const WINDOW_STEPS = 64;

/** Per-step µs of consecutive windows of `w` steps between stamp indexes [from, to). */
function windowUs(stamps: Float64Array, from: number, to: number, w: number): number[] {
  const out: number[] = [];
  for (let a = from; a + w <= to; a += w) out.push(((stamps[a + w]! - stamps[a]!) / w) * 1000);
  return out;
}

export interface DecileFigures {
  /** Median window µs/step per decile (10 entries). */
  decileUs: number[];
  /** Mean µs/step per decile: the decile's time over its steps (10 entries). */
  decileMeanUs: number[];
  windowSteps: number;
  /** All windows' µs/step, for the row's spread. */
  allWindowsUs: number[];
}

export function decileFigures(stamps: Float64Array, steps: number): DecileFigures {
  const decile = Math.floor(steps / 10);
  const w = decile >= WINDOW_STEPS * 10 ? WINDOW_STEPS : Math.max(1, Math.floor(decile / 10));
  const decileUs: number[] = [];
  const decileMeanUs: number[] = [];
  const all: number[] = [];
  for (let d = 0; d < 10; d++) {
    const from = d * decile;
    const to = d === 9 ? steps : from + decile;
    const ws = windowUs(stamps, from, to, w);
    all.push(...ws);
    decileUs.push(ws.length > 0 ? summarize(ws).median : Number.NaN);
    decileMeanUs.push(to > from ? ((stamps[to]! - stamps[from]!) / (to - from)) * 1000 : Number.NaN);
  }
  return { decileUs, decileMeanUs, windowSteps: w, allWindowsUs: all };
}

/**
 * The run lengths the targets judge (lib/targets.ts: step-flat at 10,000 and 100,000 for the pure
 * and effect loops, the interrupt loop at 10,000). Each such case runs profile.stepCost.judgedRuns
 * times and its row is the median run: one run's last decile can be slowed by something outside the
 * process for seconds on end (two runs of 2026-12-07 each missed step-flat on one case, 2.86× and
 * 1.72×, and neither figure came back when that case ran again), which a growth with N does not
 * do: it is in every run.
 */
const JUDGED_STEPS: Record<LoopKind, number[]> = { pure: [10_000, 100_000], effect: [10_000, 100_000], interrupt: [10_000] };

/** Last decile over first, by the median of windows and by the mean. */
function lastOverFirst(f: Pick<DecileFigures, 'decileUs' | 'decileMeanUs'>): { median: number; mean: number } {
  return { median: f.decileUs[9]! / f.decileUs[0]!, mean: f.decileMeanUs[9]! / f.decileMeanUs[0]! };
}

/** A run's flatness as the targets read it: last decile over first, the worse of median and mean. */
export function flatnessOfFigures(f: Pick<DecileFigures, 'decileUs' | 'decileMeanUs'>): number {
  const { median, mean } = lastOverFirst(f);
  return Math.max(median, mean);
}

/**
 * The index of the median run by flatness; of an even number of runs, the worse of the middle two
 * (so two runs report the worse one, never a mean of them).
 */
export function medianRunIndex(flatness: number[]): number {
  if (flatness.length === 0) throw new Error('medianRunIndex: no runs');
  const order = flatness.map((v, i) => ({ v, i })).sort((a, b) => a.v - b.v);
  return order[Math.floor(order.length / 2)]!.i;
}

interface MeasuredRun {
  run: StepCostRun;
  figures: DecileFigures;
}

/** `runs` runs of one case on fresh stores, stopping early when one is cut by its budget. */
async function measureCase(ctx: SuiteContext, loop: LoopKind, storeKind: StoreKind, n: number, runs: number): Promise<MeasuredRun[]> {
  const measured: MeasuredRun[] = [];
  for (let i = 1; i <= runs; i++) {
    const file = freshDbPath(ctx.tmpDir, `step-cost-${loop}-${n}${runs > 1 ? `-run${i}` : ''}.db`);
    const run = await runStepCost(loop, storeKind, n, ctx.profile.stepCost.caseBudgetMs, path.resolve(file));
    measured.push({ run, figures: decileFigures(run.stamps, run.steps) });
    if (run.stoppedByBudget) break;
  }
  return measured;
}

/** The row's metrics: the chosen run's figures, with every run's flatness (`flatness`, in run order) and the most bytes any run handed the core. */
function caseMetrics(chosen: MeasuredRun, all: MeasuredRun[], flatness: number[]): Record<string, number> {
  const { run: r, figures: f } = chosen;
  const ratio = lastOverFirst(f);
  const metrics: Record<string, number> = {
    steps_run: r.steps,
    stopped_by_budget: r.stoppedByBudget ? 1 : 0,
    run_ms: r.wallMs,
    // From the first step's start to the end of the run (its last commit included).
    step_us_mean: ((r.stamps[r.steps]! - r.stamps[0]!) / r.steps) * 1000,
    window_steps: f.windowSteps,
    last_over_first_decile: ratio.median,
    last_over_first_decile_mean: ratio.mean,
    bytes_to_core: r.bytesToCore,
    log_bytes: r.logBytes,
    bytes_to_core_over_log: r.bytesToCore / r.logBytes,
    core_calls: Object.values(r.coreCalls).reduce((a, b) => a + b, 0),
    runs: all.length,
  };
  f.decileUs.forEach((us, i) => (metrics[`step_us_decile_${i + 1}`] = us));
  metrics.step_us_mean_decile_1 = f.decileMeanUs[0]!;
  metrics.step_us_mean_decile_10 = f.decileMeanUs[9]!;
  flatness.forEach((v, i) => (metrics[`flatness_run_${i + 1}`] = v));
  metrics.bytes_to_core_over_log_max = Math.max(...all.map((m) => m.run.bytesToCore / m.run.logBytes));
  return metrics;
}

export async function runStepCostSuite(ctx: SuiteContext): Promise<SuiteOutput> {
  const { steps: sizes, caseBudgetMs, judgedRuns } = ctx.profile.stepCost;
  const rows: ResultRow[] = [];
  const notes: string[] = [];
  const { remitCore } = await import('../workloads/remit.js');
  notes.push((await remitCore()).note);
  const outOfBudget = new Set<string>();
  for (const loop of ['pure', 'effect', 'interrupt'] as LoopKind[]) {
    for (const storeKind of ['memory', 'sqlite'] as StoreKind[]) {
      const pair = `${loop} ${storeKind}`;
      for (const n of sizes) {
        const caseName = `${pair} N=${n}`;
        const params: ResultRow['params'] = { loop, store: storeKind, steps: n, budget_ms: caseBudgetMs };
        if (outOfBudget.has(pair)) {
          rows.push(unavailableRow('step-cost', caseName, params, 'remit', 'subject', `${NOT_RUN_BUDGET}: a smaller N of this loop/store ran out of its ${caseBudgetMs / 1000} s budget`));
          ctx.log(`step-cost: ${caseName} ${NOT_RUN_BUDGET}`);
          continue;
        }
        const runs = JUDGED_STEPS[loop].includes(n) ? judgedRuns : 1;
        ctx.log(`step-cost: ${caseName} (budget ${caseBudgetMs / 1000} s${runs > 1 ? `, ${runs} runs` : ''})`);
        const measured = await measureCase(ctx, loop, storeKind, n, runs);
        const flatness = measured.map((m) => flatnessOfFigures(m.figures));
        const chosen = measured[medianRunIndex(flatness)]!;
        if (measured.some((m) => m.run.stoppedByBudget)) outOfBudget.add(pair);
        const r = chosen.run;
        rows.push(row({
          suite: 'step-cost', case: caseName, params, impl: 'remit', role: 'subject',
          time_ms: summarize(chosen.figures.allWindowsUs.map((us) => us / 1000)),
          metrics: caseMetrics(chosen, measured, flatness),
          ...(r.stoppedByBudget ? { note: `stopped by its ${caseBudgetMs / 1000} s budget after ${r.steps} of ${n} steps; figures are over those steps` } : {}),
        }));
      }
    }
  }
  notes.push(
    `One run per case, except the run lengths the targets judge (pure and effect loops at N = 10,000 and 100,000, the interrupt loop at 10,000), which run ${judgedRuns} times each on fresh stores: their row is the median run by flatness (the worse of its median and mean readings; of two runs, the worse), every run's flatness is in its metrics (flatness_run_1 …, in the order they ran), and bytes_to_core_over_log_max is the most any of them handed the core. One node looping: pure (a pure node; the sequencer groups up to ${WINDOW_STEPS} pure steps per commit) or effect (an effect node whose handler does nothing: intent+attempt, then outcome+completion, two commits per step). State: a counter and a ${STEP_STATE_FIXED_BYTES}-byte string. SQLite: synchronous=NORMAL, a fresh file per case.`,
    'Interrupt loop: a step is one human-in-the-loop cycle (a pure node, then an interrupt that parks the run, resumed at once through resume(), which opens the run from the store: its stored summary and the records after it). Each cycle parks one more interrupt id, named as the shell names every interrupt (node@parkSeq): a reserved id, which the core\'s summary does not list (docs/core-api.md, "Transitions"; until 2026-12-07 every parked id stayed in the summary, so a cycle\'s cost grew with the cycles before it). The interrupt rows are reported beside the pure and effect ones and have their own target, not part of the step-flat and core-bytes targets.',
    `Each step is stamped inside the node (performance.now()); a decile's µs/step is the median over windows of W steps (W = ${WINDOW_STEPS} from N = ${WINDOW_STEPS * 100} on, else a tenth of a decile) of window time / W, and its mean is the decile's time over its steps; time_ms is the per-step time over all windows. last/first = decile 10 over decile 1, by the median (last_over_first_decile) and by the mean (last_over_first_decile_mean); the targets judge the worse of the two.`,
    'Bytes to core: the byte length of every byte-array argument of every call the sequencer made on the core (a Proxy around it), against the log\'s size at the end of the run.',
    `Budget: ${caseBudgetMs / 1000} s per case (${ctx.profile.name} profile).`,
    `Warm-up: each case first makes an untimed run of the same loop (min(N, ${STEP_COST_WARMUP_STEPS}) steps) on a scratch store of the same kind, so its first decile is not the first run of its code in the process (STEP_COST_WARMUP_STEPS in workloads/step-cost.ts says why).`,
  );
  return { rows, notes, charts: [stepCostChart(rows, ctx)] };
}

/** µs/step against run length; a run cut by its budget is a point at the steps it ran. */
export function stepCostChart(rows: ResultRow[], ctx: Pick<SuiteContext, 'profile'>) {
  const series = [];
  for (const loop of ['pure', 'effect', 'interrupt']) {
    for (const store of ['memory', 'sqlite']) {
      const pts = rows.filter((r) => r.status === 'measured' && r.params.loop === loop && r.params.store === store);
      const x = (r: ResultRow) => r.metrics.steps_run ?? (r.params.steps as number);
      series.push({ name: `${loop}, ${store}: mean`, points: pts.map((r) => ({ x: x(r), y: r.metrics.step_us_mean! })) });
      series.push({ name: `${loop}, ${store}: last 10 %`, dashed: true, points: pts.map((r) => ({ x: x(r), y: r.metrics.step_us_decile_10! })) });
    }
  }
  return {
    file: 'step-cost',
    spec: {
      title: 'µs per step vs run length N',
      subtitle: `one run per point, ${ctx.profile.name} profile; a run cut by its budget is drawn at the steps it ran; flat is the goal`,
      xLabel: 'steps in the run (N)',
      yLabel: 'µs per step',
      xLog: true,
      yLog: true,
      series,
    },
  };
}
