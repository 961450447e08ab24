/**
 * Whether a step-cost run's uneven deciles are REMIT's or the machine's: the evidence behind
 * "single runs vary" in bench/README.md.
 *
 *   npx tsx bench/step-cost-regimes.ts [--loop pure|effect] [--store memory|sqlite] [--steps 100000] [--runs 5]
 *
 * Each of `runs` rounds runs, one after another in this process and in an order that turns from
 * round to round, three loops of `steps` steps each, every step stamped:
 * - `remit`: the step-cost suite's loop (workloads/step-cost.ts, runStepCost: a fresh store, an
 *   untimed warm-up run first);
 * - `allocating`: the same kind of JavaScript work with no REMIT code: a state object built, written
 *   to JSON, encoded to bytes and parsed back, and every step's bytes kept (a log in memory), a few
 *   µs a step;
 * - `arithmetic`: a loop of integer arithmetic that allocates nothing.
 * The two control loops first run STEP_COST_WARMUP_STEPS steps untimed, as runStepCost warms
 * REMIT's up, and a full garbage collection runs before every loop, so that no loop's first
 * decile pays for the one before it. For each it prints its deciles (µs a step, the mean of each
 * decile's steps), the suite's flatness figure (the worse of last/first by the median of windows
 * and by the mean: suites/step-cost.ts, flatnessOfFigures), the spread (the slowest decile's mean
 * over the fastest's) and the garbage collector's share of the slowest decile (the collections
 * that started in it, timed by a PerformanceObserver of 'gc' entries). A spread the allocating
 * loop shows as well as REMIT's is the machine's (its allocator, caches, memory), not something
 * REMIT's steps do as the run grows.
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { choiceOption, readScriptArgs, wholeOption } from './lib/script-args.js';
import { summarize } from './lib/stats.js';
import { decileFigures, flatnessOfFigures } from './suites/step-cost.js';
import { runStepCost, STEP_COST_WARMUP_STEPS } from './workloads/step-cost.js';

const usage = `usage: npx tsx bench/step-cost-regimes.ts [options]
  --loop L      pure|effect: REMIT's loop (pure)
  --store S     memory|sqlite: REMIT's store (memory)
  --steps N     steps of each loop, at least 1000 (100000)
  --runs N      rounds of the three loops, at least 1 (5)
  --help        this text`;
const values = readScriptArgs('step-cost-regimes', usage, { loop: 'pure', store: 'memory', steps: '100000', runs: '5' });
const loop = choiceOption('step-cost-regimes', 'loop', values.loop, ['pure', 'effect'] as const);
const storeKind = choiceOption('step-cost-regimes', 'store', values.store, ['memory', 'sqlite'] as const);
const steps = wholeOption('step-cost-regimes', 'steps', values.steps, 1000);
const runs = wholeOption('step-cost-regimes', 'runs', values.runs, 1);

type LoopName = 'remit' | 'allocating' | 'arithmetic';
const LOOPS: LoopName[] = ['remit', 'allocating', 'arithmetic'];

/** `n` steps of building, writing, encoding and parsing a small state, keeping each step's bytes. */
async function allocatingLoop(n: number): Promise<Float64Array> {
  const stamps = new Float64Array(n + 1);
  const kept: Uint8Array[] = [];
  const encoder = new TextEncoder();
  let state = { step: 0, fixed: 'x'.repeat(100), items: [] as string[] };
  stamps[0] = performance.now();
  for (let s = 1; s <= n; s++) {
    for (let i = 0; i < 4; i++) {
      const next = { ...state, step: state.step + 1, items: [`item-${s}-${i}`] };
      const bytes = encoder.encode(JSON.stringify(next));
      state = JSON.parse(new TextDecoder().decode(bytes)) as typeof state;
      if (i === 0) kept.push(bytes);
    }
    stamps[s] = performance.now();
    // A turn of the event loop now and then, as REMIT's awaits give.
    if (s % 64 === 0) await Promise.resolve();
  }
  if (kept.length !== n) throw new Error('the allocating loop lost its bytes');
  return stamps;
}

/** `n` steps of integer arithmetic (no allocation). */
function arithmeticLoop(n: number): Float64Array {
  const stamps = new Float64Array(n + 1);
  let x = 1;
  stamps[0] = performance.now();
  for (let s = 1; s <= n; s++) {
    for (let i = 0; i < 4000; i++) x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    stamps[s] = performance.now();
  }
  if (x === 0.5) throw new Error('unreachable');
  return stamps;
}

/** A full collection, from V8's own `gc` (exposed here rather than asking for `node --expose-gc`). */
setFlagsFromString('--expose-gc');
const fullGc = runInNewContext('gc') as () => void;

/** Every garbage collection of the process: when it started and how long it took (ms, performance.now()'s clock). */
const collections: { start: number; ms: number }[] = [];
const keep = (entries: readonly { startTime: number; duration: number }[]) => {
  for (const e of entries) collections.push({ start: e.startTime, ms: e.duration });
};
const gcObserver = new PerformanceObserver((list) => keep(list.getEntries()));
gcObserver.observe({ entryTypes: ['gc'] });
/** Every entry so far: Node queues them to the observer on the event loop, so a turn of it first. */
const settle = async () => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  keep(gcObserver.takeRecords());
};

interface LoopFigures { flatness: number; spread: number; meanUs: number[]; gcShareOfSlowest: number }

/**
 * The suite's flatness (flatnessOfFigures), the slowest decile's mean over the fastest's, and the
 * share of the slowest decile's time spent in collections that started in it.
 */
function figures(stamps: Float64Array, n: number): LoopFigures {
  const f = decileFigures(stamps, n);
  const meanUs = f.decileMeanUs;
  const slowest = meanUs.indexOf(Math.max(...meanUs));
  const decile = Math.floor(n / 10);
  const from = stamps[slowest * decile]!;
  const to = stamps[slowest === 9 ? n : (slowest + 1) * decile]!;
  const gcMs = collections.filter((c) => c.start >= from && c.start < to).reduce((sum, c) => sum + c.ms, 0);
  return { flatness: flatnessOfFigures(f), spread: Math.max(...meanUs) / Math.min(...meanUs), meanUs, gcShareOfSlowest: gcMs / (to - from) };
}

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
mkdirSync(join(repoRoot, 'bench', 'results', 'tmp'), { recursive: true });
const dir = mkdtempSync(join(repoRoot, 'bench', 'results', 'tmp', 'step-cost-regimes-'));
try {
  const results: Record<LoopName, LoopFigures[]> = { remit: [], allocating: [], arithmetic: [] };
  process.stdout.write(`REMIT ${loop} loop on ${storeKind}, ${steps} steps; µs a step by decile (the mean of its steps)\n\n`);
  // The control loops' warm-up, as runStepCost warms REMIT's loop up before each timed run.
  await allocatingLoop(STEP_COST_WARMUP_STEPS);
  arithmeticLoop(STEP_COST_WARMUP_STEPS);
  for (let round = 0; round < runs; round++) {
    const order = LOOPS.map((_, i) => LOOPS[(i + round) % LOOPS.length]!);
    for (const name of order) {
      let stamps: Float64Array;
      let n = steps;
      fullGc();
      if (name === 'remit') {
        const run = await runStepCost(loop, storeKind, steps, 3_600_000, join(dir, `round-${round}.db`));
        stamps = run.stamps;
        n = run.steps;
      } else {
        stamps = name === 'allocating' ? await allocatingLoop(steps) : arithmeticLoop(steps);
      }
      await settle();
      const f = figures(stamps, n);
      results[name].push(f);
      process.stdout.write(`round ${round + 1} ${name.padEnd(10)} ${f.meanUs.map((v) => v.toFixed(1).padStart(6)).join(' ')}  `
        + `flatness ${f.flatness.toFixed(2)}  slowest/fastest ${f.spread.toFixed(2)}  GC in the slowest ${(100 * f.gcShareOfSlowest).toFixed(1)} %\n`);
    }
  }
  process.stdout.write('\n| loop | flatness (the suite\'s), each round | median | slowest/fastest decile, each round | median | GC share of the slowest decile, most |\n|---|---|---|---|---|---|\n');
  for (const name of LOOPS) {
    const flat = results[name].map((r) => r.flatness);
    const spread = results[name].map((r) => r.spread);
    const gc = Math.max(...results[name].map((r) => r.gcShareOfSlowest));
    process.stdout.write(`| ${name} | ${flat.map((v) => v.toFixed(2)).join(', ')} | ${summarize(flat).median.toFixed(2)} | `
      + `${spread.map((v) => v.toFixed(2)).join(', ')} | ${summarize(spread).median.toFixed(2)} | ${(100 * gc).toFixed(1)} % |\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
