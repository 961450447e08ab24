/**
 * The step-cost-vs-run-length workload: one REMIT run of N steps of a one-node loop, pure or
 * effect, on the memory store or SQLite, with the time of every step taken inside the node (the
 * pure node's `run`, the effect's handler) and every byte the sequencer hands to the core counted
 * (lib/counting.ts). Public API only.
 *
 * The interrupt loop is a human-in-the-loop cycle: a pure node, then an interrupt that parks the
 * run, resumed at once by the caller (`resume()`, one call per cycle, each opening the run from
 * the store as a service handling a resume request does); a "step" is one cycle, stamped in the
 * pure node. Each cycle parks one more interrupt id, named as the shell names every interrupt
 * (node@parkSeq, a reserved id the core's summary does not list: docs/core-api.md, "Transitions"),
 * so this loop shows whether a park-and-resume cycle's cost grows with the cycles before it
 * (until 2026-12-07 every parked id stayed in the summary, and it did).
 *
 * A run stops early when its time budget is spent: the node then records `stopped` in the state
 * (in the run's own result, so the log stays a faithful history) and `next` ends the run.
 */

import { z } from 'zod';
import { createRemit, END, openMemoryStore, openSqliteStore, workflow, type Remit, type RunResult, type Store } from 'remit';
import { countingCore, newByteCounter, type ByteCounter } from '../lib/counting.js';
import { remitCore } from './remit.js';
import { fillerText } from './shapes.js';

export type LoopKind = 'pure' | 'effect' | 'interrupt';
export type StoreKind = 'memory' | 'sqlite';

/** The state besides the counter: a small fixed string, so each step's record is a small delta. */
export const STEP_STATE_FIXED_BYTES = 100;

const LoopState = z.object({ step: z.number().int(), fixed: z.string(), stopped: z.boolean() });

export interface StepCostRun {
  /** Steps completed (N, or fewer when the budget stopped the run). */
  steps: number;
  stoppedByBudget: boolean;
  /** performance.now() at the start of each step (index = step number), steps + 1 entries. */
  stamps: Float64Array;
  wallMs: number;
  bytesToCore: number;
  coreCalls: Record<string, number>;
  /** Bytes of the run's log when it ended. */
  logBytes: number;
}

function loopWorkflow(kind: LoopKind, steps: number, stamps: Float64Array, deadline: number) {
  const wf = workflow({ name: `bench-step-cost-${kind}`, version: '1', state: LoopState });
  const stamp = (i: number) => {
    if (i < stamps.length) stamps[i] = performance.now();
  };
  const countStep = (s: z.infer<typeof LoopState>) => {
    stamp(s.step);
    return { step: s.step + 1, stopped: performance.now() > deadline };
  };
  const goOn = (s: z.infer<typeof LoopState>) => s.step < steps && !s.stopped;
  if (kind === 'pure') {
    return wf.pure('work', { run: countStep, next: (s) => (goOn(s) ? 'work' : END) }).build();
  }
  if (kind === 'interrupt') {
    return wf.pure('work', { run: countStep, next: (s) => (goOn(s) ? 'ask' : END) })
      .interrupt('ask', { resume: z.literal('go'), apply: () => ({}), next: 'work' }).build();
  }
  return wf.effect('work', {
    run: async (s) => {
      stamp(s.step);
      return { over: performance.now() > deadline };
    },
    apply: (s, r) => ({ step: s.step + 1, stopped: (r as { over: boolean }).over }),
    next: (s) => (goOn(s) ? 'work' : END),
  }).build();
}

/**
 * Steps of the untimed run each case makes first (fewer when the case's N is smaller): without
 * it the first decile of a case is the first run of its code in this process (V8 compiling it, the
 * SQLite file's first pages), and a last decile "within 1.5× of the first" would be measured
 * against an inflated baseline (pure/memory at N = 10,000: first decile about 3× the last).
 */
export const STEP_COST_WARMUP_STEPS = 2_000;

/** The loop's run from its start to its end (the interrupt loop resumed at every park); throws unless it completed. */
async function runToEnd(remit: Remit, wf: ReturnType<typeof loopWorkflow>, kind: LoopKind, runId: string): Promise<z.infer<typeof LoopState>> {
  let run: RunResult<unknown> = await remit.start(wf, { step: 0, fixed: fillerText(STEP_STATE_FIXED_BYTES), stopped: false }, { runId });
  while (kind === 'interrupt' && run.status === 'parked') run = await remit.resume(runId, run.interrupt!.id, 'go');
  const s = run.state as z.infer<typeof LoopState>;
  if (run.status !== 'completed') throw new Error(`step-cost run ${runId} ended ${run.status} at step ${s.step}`);
  return s;
}

/** An untimed run of the same loop on a scratch store of the same kind (its own file for SQLite). */
async function warmUp(kind: LoopKind, storeKind: StoreKind, steps: number, sqliteFile: string, core: Awaited<ReturnType<typeof remitCore>>['core']): Promise<void> {
  const store: Store = storeKind === 'memory' ? openMemoryStore() : openSqliteStore(`${sqliteFile}.warm-up.db`, { synchronous: 'NORMAL' });
  const wf = loopWorkflow(kind, steps, new Float64Array(steps + 1), Number.POSITIVE_INFINITY);
  const remit = await createRemit({ store, workflows: [wf], core });
  try {
    await runToEnd(remit, wf, kind, `warm-up-${kind}`);
  } finally {
    await remit.close();
  }
}

export async function runStepCost(
  kind: LoopKind, storeKind: StoreKind, steps: number, budgetMs: number, sqliteFile: string,
): Promise<StepCostRun> {
  const { core } = await remitCore();
  await warmUp(kind, storeKind, Math.min(steps, STEP_COST_WARMUP_STEPS), sqliteFile, core);
  const counter: ByteCounter = newByteCounter();
  const store: Store = storeKind === 'memory' ? openMemoryStore() : openSqliteStore(sqliteFile, { synchronous: 'NORMAL' });
  const stamps = new Float64Array(steps + 1).fill(Number.NaN);
  const t0 = performance.now();
  const wf = loopWorkflow(kind, steps, stamps, t0 + budgetMs);
  const remit = await createRemit({ store, workflows: [wf], core: countingCore(core, counter) });
  try {
    const runId = `step-cost-${kind}-${steps}`;
    const s = await runToEnd(remit, wf, kind, runId);
    const wallMs = performance.now() - t0;
    stamps[s.step] = t0 + wallMs;
    const logBytes = (await store.readLog(runId)).length;
    return {
      steps: s.step, stoppedByBudget: s.stopped && s.step < steps, stamps: stamps.subarray(0, s.step + 1), wallMs,
      bytesToCore: counter.bytes, coreCalls: counter.calls, logBytes,
    };
  } finally {
    await remit.close();
  }
}
