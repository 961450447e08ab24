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
 * For each it prints the suite's flatness figure (the last decile's over the first's, each decile
 * the mean of its steps: suites/step-cost.ts, decileFigures) and the spread (the slowest decile's
 * over the fastest's). A spread the allocating loop shows as well as REMIT's is the machine's (its
 * allocator, caches, memory), not something REMIT's steps do as the run grows.
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { choiceOption, readScriptArgs, wholeOption } from './lib/script-args.js';
import { summarize } from './lib/stats.js';
import { decileFigures } from './suites/step-cost.js';
import { runStepCost } from './workloads/step-cost.js';

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

/** Last decile over first, and slowest decile over fastest, each decile the mean of its steps. */
function figures(stamps: Float64Array, n: number): { flatness: number; spread: number; meanUs: number[] } {
  const { decileMeanUs } = decileFigures(stamps, n);
  return { flatness: decileMeanUs[9]! / decileMeanUs[0]!, spread: Math.max(...decileMeanUs) / Math.min(...decileMeanUs), meanUs: decileMeanUs };
}

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
mkdirSync(join(repoRoot, 'bench', 'results', 'tmp'), { recursive: true });
const dir = mkdtempSync(join(repoRoot, 'bench', 'results', 'tmp', 'step-cost-regimes-'));
try {
  const results: Record<LoopName, { flatness: number; spread: number }[]> = { remit: [], allocating: [], arithmetic: [] };
  process.stdout.write(`REMIT ${loop} loop on ${storeKind}, ${steps} steps; µs a step by decile (the mean of its steps)\n\n`);
  for (let round = 0; round < runs; round++) {
    const order = LOOPS.map((_, i) => LOOPS[(i + round) % LOOPS.length]!);
    for (const name of order) {
      let stamps: Float64Array;
      let n = steps;
      if (name === 'remit') {
        const run = await runStepCost(loop, storeKind, steps, 3_600_000, join(dir, `round-${round}.db`));
        stamps = run.stamps;
        n = run.steps;
      } else {
        stamps = name === 'allocating' ? await allocatingLoop(steps) : arithmeticLoop(steps);
      }
      const f = figures(stamps, n);
      results[name].push(f);
      process.stdout.write(`round ${round + 1} ${name.padEnd(10)} ${f.meanUs.map((v) => v.toFixed(1).padStart(6)).join(' ')}  last/first ${f.flatness.toFixed(2)}  slowest/fastest ${f.spread.toFixed(2)}\n`);
    }
  }
  process.stdout.write('\n| loop | last/first decile, each round | median | slowest/fastest decile, each round | median |\n|---|---|---|---|---|\n');
  for (const name of LOOPS) {
    const flat = results[name].map((r) => r.flatness);
    const spread = results[name].map((r) => r.spread);
    process.stdout.write(`| ${name} | ${flat.map((v) => v.toFixed(2)).join(', ')} | ${summarize(flat).median.toFixed(2)} | ${spread.map((v) => v.toFixed(2)).join(', ')} | ${summarize(spread).median.toFixed(2)} |\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
