/**
 * The two profiles. quick: `npm run bench`, a few minutes on two shared cores, so sizes are
 * smaller and samples fewer; full: `npm run bench -- --full`, every size with more samples. Both
 * run the same code; only these numbers differ.
 */

import type { SamplingPlan } from './measure.js';

export interface RecoveryCasePlan {
  records: number;
  plan: SamplingPlan;
}

export interface Profile {
  name: 'quick' | 'full';
  recovery: RecoveryCasePlan[];
  /** Tiny-log and invalid-at-offset-0 calls that isolate the JS/Wasm boundary cost. */
  boundaryPlan: SamplingPlan;
  /**
   * Sizes are run in order while the suite's time stays under budgetS; a size the budget cannot
   * afford any more (predicted from the previous size's time, scaled linearly in N) is reported as
   * "not run (budget)".
   */
  resume: { nodes: number[]; samples: number; syncModes: ('FULL' | 'NORMAL')[]; budgetS: number };
  commit: { steps: number; samples: number; syncModes: ('FULL' | 'NORMAL')[]; fdatasyncWrites: number };
  gate: { claims: number; racers: number[]; samples: number };
  storage: { steps: number[] };
  /**
   * Run lengths of the step-cost suite, the time budget of one run, and how many runs each case
   * the targets judge makes (suites/step-cost.ts, JUDGED_STEPS): its row is the median run.
   */
  stepCost: { steps: number[]; caseBudgetMs: number; judgedRuns: number };
  /** Records of the log whose recovery the wasm-memory suite measures. */
  wasmMemory: { records: number };
}

const plan = (iterations: number, timeMs: number, warmupIterations: number, rounds: number): SamplingPlan => ({
  iterations, timeMs, warmupIterations, rounds,
});

export const QUICK: Profile = {
  name: 'quick',
  recovery: [
    { records: 1_000, plan: plan(100, 150, 20, 3) },
    { records: 10_000, plan: plan(20, 150, 5, 3) },
    { records: 100_000, plan: plan(4, 100, 1, 3) },
    { records: 1_000_000, plan: plan(1, 0, 1, 3) },
  ],
  boundaryPlan: plan(200, 150, 50, 3),
  resume: { nodes: [10, 100, 1000, 10_000, 100_000], samples: 5, syncModes: ['FULL', 'NORMAL'], budgetS: 240 },
  commit: { steps: 100, samples: 15, syncModes: ['FULL', 'NORMAL'], fdatasyncWrites: 200 },
  gate: { claims: 100, racers: [1, 2, 8], samples: 5 },
  storage: { steps: [10, 100, 300, 1000] },
  stepCost: { steps: [100, 1000, 10_000], caseBudgetMs: 30_000, judgedRuns: 3 },
  wasmMemory: { records: 1_000_000 },
};

export const FULL: Profile = {
  name: 'full',
  recovery: [
    { records: 1_000, plan: plan(500, 1000, 50, 5) },
    { records: 10_000, plan: plan(100, 1000, 10, 5) },
    { records: 100_000, plan: plan(15, 1000, 3, 5) },
    { records: 1_000_000, plan: plan(3, 0, 1, 5) },
  ],
  boundaryPlan: plan(1000, 1000, 200, 5),
  resume: { nodes: [10, 100, 1000, 10_000, 100_000], samples: 11, syncModes: ['FULL', 'NORMAL'], budgetS: 1200 },
  commit: { steps: 300, samples: 25, syncModes: ['FULL', 'NORMAL'], fdatasyncWrites: 500 },
  gate: { claims: 300, racers: [1, 2, 8], samples: 8 },
  storage: { steps: [10, 100, 300, 1000, 3000] },
  stepCost: { steps: [100, 1000, 10_000, 100_000], caseBudgetMs: 120_000, judgedRuns: 3 },
  wasmMemory: { records: 1_000_000 },
};
