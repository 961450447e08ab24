/**
 * Side-by-side timing with tinybench. Every implementation of one workload is a task of the same
 * Bench, and the Bench runs `rounds` times so that the implementations alternate (A B C, A B C, ...):
 * on a machine shared with other work, slow phases then hit every implementation instead of
 * whichever happened to run during them. Samples of all rounds are pooled before summarizing.
 */

import { Bench } from 'tinybench';
import { summarize, type Summary } from './stats.js';

export interface TimedTask {
  impl: string;
  /** One operation. Its result is kept in a sink so the engine cannot drop the work. */
  fn: () => unknown;
  async?: boolean;
  /** Runs before every call, outside the timed region (e.g. copy a fresh database file). */
  beforeEach?: () => void;
  /**
   * Calls per sample for sub-microsecond operations (synchronous only): one sample is then the
   * mean of `batch` back-to-back calls, so the timer's own cost does not dominate.
   */
  batch?: number;
}

export interface SamplingPlan {
  /** Minimum timed calls per task per round. */
  iterations: number;
  /** Time budget per task per round (ms); a task stops once both limits are met. */
  timeMs: number;
  /**
   * Untimed calls per task before sampling (JIT warm-up, page cache), the tasks alternating call by
   * call as the rounds do. Their durations are returned (TimedOutcome.warmup_ms), so a suite can
   * show that the samples come after the warm-up's fall.
   */
  warmupIterations: number;
  rounds: number;
}

export interface TimedOutcome {
  impl: string;
  /** Milliseconds per call; absent when the task threw. */
  time_ms?: Summary;
  /** Milliseconds of each untimed warm-up call, in order (a batch task: per call of the batch). */
  warmup_ms: number[];
  error?: string;
}

let sink: unknown;
/** Read after a run so results of timed calls stay observable. */
export function sinkValue(): unknown {
  return sink;
}

/**
 * A task may time part of itself (e.g. leave out preparing its input) by returning
 * { overriddenDuration: ms }; tinybench then records that instead of its own measurement.
 */
function passOverride(result: unknown): { overriddenDuration: number } | undefined {
  const d = (result as { overriddenDuration?: unknown } | null)?.overriddenDuration;
  return typeof d === 'number' ? { overriddenDuration: d } : undefined;
}

export async function compareTasks(name: string, tasks: readonly TimedTask[], plan: SamplingPlan): Promise<TimedOutcome[]> {
  const pooled = new Map<string, number[]>(tasks.map((t) => [t.impl, []]));
  const errors = new Map<string, string>();
  const warmup = await warmUp(tasks, plan.warmupIterations, errors);
  for (let round = 0; round < plan.rounds; round++) {
    const live = tasks.filter((t) => !errors.has(t.impl));
    if (live.length === 0) break;
    const bench = new Bench({
      name,
      iterations: plan.iterations,
      time: plan.timeMs,
      // The warm-up calls (warmUp) were made before the first round; code stays warm between rounds.
      warmup: false,
      retainSamples: true,
    });
    for (const t of live) {
      const opts = { async: t.async ?? false, ...(t.beforeEach ? { beforeEach: t.beforeEach } : {}) };
      const batch = t.batch ?? 1;
      if (t.async) {
        bench.add(t.impl, async () => passOverride((sink = await t.fn())), opts);
      } else if (batch > 1) {
        bench.add(t.impl, () => {
          const start = performance.now();
          for (let i = 0; i < batch; i++) sink = t.fn();
          const elapsed = performance.now() - start;
          return { overriddenDuration: elapsed / batch, overriddenIterationCost: elapsed };
        }, opts);
      } else {
        bench.add(t.impl, () => passOverride((sink = t.fn())), opts);
      }
    }
    await bench.run();
    for (const task of bench.tasks) {
      const r = task.result;
      if (r.state === 'errored') {
        errors.set(task.name, r.error?.message ?? 'error');
      } else if (r.state === 'completed' || r.state === 'aborted-with-statistics') {
        const into = pooled.get(task.name)!;
        for (const s of r.latency.samples ?? []) into.push(s);
      }
    }
  }
  return tasks.map((t) => {
    const err = errors.get(t.impl);
    const warmup_ms = warmup.get(t.impl)!;
    if (err !== undefined) return { impl: t.impl, warmup_ms, error: err };
    return { impl: t.impl, time_ms: summarize(pooled.get(t.impl)!), warmup_ms };
  });
}

/**
 * `iterations` untimed calls of every task, alternating (A B C, A B C, ...), each timed as a
 * sample would be (its overriddenDuration when it returns one). A task that throws is recorded in
 * `errors` and left out of the rest.
 */
async function warmUp(tasks: readonly TimedTask[], iterations: number, errors: Map<string, string>): Promise<Map<string, number[]>> {
  const durations = new Map<string, number[]>(tasks.map((t) => [t.impl, []]));
  for (let i = 0; i < iterations; i++) {
    for (const t of tasks) {
      if (errors.has(t.impl)) continue;
      try {
        t.beforeEach?.();
        const batch = t.batch ?? 1;
        const start = performance.now();
        let result: unknown;
        for (let b = 0; b < batch; b++) result = sink = t.async ? await t.fn() : t.fn();
        const elapsed = performance.now() - start;
        durations.get(t.impl)!.push(passOverride(result)?.overriddenDuration ?? elapsed / batch);
      } catch (error) {
        errors.set(t.impl, (error as Error)?.message ?? String(error));
      }
    }
  }
  return durations;
}

/** Time one asynchronous operation `samples` times by hand (for work tinybench cannot repeat cheaply). */
export async function timeRepeated(
  samples: number,
  prepare: (i: number) => Promise<void> | void,
  op: (i: number) => Promise<unknown> | unknown,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    await prepare(i);
    const t0 = performance.now();
    sink = await op(i);
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * Each task's warm-up per operation (`opsPerCall` operations of `unit` in one call): the median of
 * its first and of its last tenth of warm-up calls, beside the median of its samples. A last tenth
 * well above the samples would mean the samples were still in the warm-up's fall.
 */
export function warmUpNote(caseName: string, outcomes: readonly TimedOutcome[], opsPerCall: number, unit: string): string {
  const us = (ms: number) => `${((ms * 1000) / opsPerCall).toFixed(2)} us`;
  const parts = outcomes.filter((o) => o.time_ms && o.warmup_ms.length > 0).map((o) => {
    const tenth = Math.max(1, Math.floor(o.warmup_ms.length / 10));
    const first = summarize(o.warmup_ms.slice(0, tenth)).median;
    const last = summarize(o.warmup_ms.slice(-tenth)).median;
    const calls = tenth === 1 ? 'warm-up call' : `${tenth} warm-up calls`;
    return `${o.impl} ${us(first)} over its first ${calls}, ${us(last)} over its last, ${us(o.time_ms!.median)} in the samples`;
  });
  return `Warm-up, ${caseName}, per ${unit}: ${parts.length > 0 ? parts.join('; ') : 'none'}.`;
}
