/**
 * How many untimed runs a step loop needs before it is warm: the evidence behind the commit
 * suite's warm-ups (suites/commit.ts, STEP_COMMIT_WARMUP_STEPS and EFFECT_STEP_WARMUP_STEPS). In
 * one fresh process, REMIT's run and its baseline alternate run by run, as the suite's tasks do,
 * and the median per step of each stretch of runs is printed:
 *
 *   npx tsx bench/warmup-trend.ts [--case commit|effect] [--sync NORMAL|FULL] [--runs 1000]
 *
 * `commit`: REMIT's grouped pure steps (runs of 100) beside the raw insert-commit loop;
 * `effect`: REMIT's effect step (runs of 50) beside the replay of the step before the fence. The
 * numbers a warm-up figure in bench/README.md quotes come from this script. Scratch files go to a
 * folder of its own under bench/results/tmp/ (git-ignored), removed at the end.
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStore } from 'remit';
import { growthWorkflow, remitOpen, remitRunGrowth } from './workloads/remit.js';
import { openRawDb, rawInsertCommitLoop } from './workloads/raw-sqlite.js';
import { remitEffectRun, remitOpenEffects, replayedEffectRun } from './workloads/effect-step.js';
import { summarize } from './lib/stats.js';
import { choiceOption, readScriptArgs, wholeOption } from './lib/script-args.js';

const usage = `usage: npx tsx bench/warmup-trend.ts [options]
  --case C    commit|effect: grouped pure steps beside raw inserts, or the effect step beside its replay (commit)
  --sync S    NORMAL|FULL: PRAGMA synchronous (NORMAL)
  --runs N    alternating runs of each, at least 10 (1000)
  --help      this text`;
const values = readScriptArgs('warmup-trend', usage, { case: 'commit', sync: 'NORMAL', runs: '1000' });
const which = choiceOption('warmup-trend', 'case', values.case, ['commit', 'effect'] as const);
const sync = choiceOption('warmup-trend', 'sync', values.sync, ['NORMAL', 'FULL'] as const);
const runs = wholeOption('warmup-trend', 'runs', values.runs, 10);

/** One REMIT run and one baseline run of `steps` steps each, and the names of both. */
interface Pair {
  steps: number;
  names: [string, string];
  remit(i: number): Promise<void>;
  baseline(i: number): Promise<void> | void;
  close(): Promise<void>;
}

async function commitPair(dir: string): Promise<Pair> {
  const steps = 100;
  const remit = await remitOpen(join(dir, 'remit.db'), growthWorkflow(steps, false), sync as 'NORMAL' | 'FULL');
  const raw = openRawDb(join(dir, 'raw.db'), sync as 'NORMAL' | 'FULL');
  // The suite's REMIT step record averages about 90 bytes (commit suite, remit_step_record_bytes).
  const record = new Uint8Array(90).fill(0x61);
  return {
    steps,
    names: ['remit', 'raw-insert-commit'],
    remit: (i) => remitRunGrowth('', steps, false, { remit, runId: `r-${i}`, fixedBytes: 100 }),
    baseline: (i) => void rawInsertCommitLoop(raw, `raw-${i}`, steps, record),
    close: async () => {
      raw.close();
      await remit.close();
    },
  };
}

async function effectPair(dir: string): Promise<Pair> {
  const steps = 50;
  const { remit, wf } = await remitOpenEffects(join(dir, 'remit.db'), steps, sync as 'NORMAL' | 'FULL');
  const previous = openSqliteStore(join(dir, 'previous.db'), { synchronous: sync as 'NORMAL' | 'FULL' });
  return {
    steps,
    names: ['remit', 'previous-effect-step (replayed)'],
    remit: (i) => remitEffectRun(remit, wf, `r-${i}`),
    baseline: (i) => replayedEffectRun(previous, `p-${i}`, steps, 'previous'),
    close: async () => {
      await previous.close();
      await remit.close();
    },
  };
}

const scratch = fileURLToPath(new URL('./results/tmp/', import.meta.url));
mkdirSync(scratch, { recursive: true });
const dir = mkdtempSync(join(scratch, 'warmup-trend-'));
try {
  const pair = which === 'commit' ? await commitPair(dir) : await effectPair(dir);
  const perStep: [number[], number[]] = [[], []];
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    await pair.remit(i);
    perStep[0].push(((performance.now() - t0) * 1000) / pair.steps);
    t0 = performance.now();
    await pair.baseline(i);
    perStep[1].push(((performance.now() - t0) * 1000) / pair.steps);
  }
  await pair.close();
  const bounds = [0, 10, 25, 40, 60, 100, 200, 400, 700, 1000].filter((b) => b < runs).concat(runs);
  process.stdout.write(`${which}, synchronous=${sync}, ${runs} alternating runs of ${pair.steps} steps; median us per step\n`);
  for (let k = 0; k + 1 < bounds.length; k++) {
    const [from, to] = [bounds[k]!, bounds[k + 1]!];
    const [a, b] = perStep.map((s) => summarize(s.slice(from, to)).median) as [number, number];
    process.stdout.write(`runs ${from}-${to}: ${pair.names[0]} ${a.toFixed(2)}, ${pair.names[1]} ${b.toFixed(2)}, ratio ${(b / a).toFixed(2)}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
