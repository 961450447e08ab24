/**
 * What the sequencer returns and what it needs from its owner: the public result of driving a run
 * (RunResult), the batching options, and the Engine interface the Remit instance implements.
 */

import type { RecoveryCore } from '../core/types.js';
import type { SequencerHooks } from '../faults.js';
import type { Store } from '../store/store.js';
import type { Workflow } from '../workflow/workflow.js';
import type { FenceSettings } from './fence.js';
import type { RunStatusName } from './log-view.js';

export interface ParkedInterrupt {
  /** `${node}@${parkedSeq}`: pass it to resume(). */
  id: string;
  node: string;
  parkedSeq: number;
}

export interface RunFailureView {
  node: string;
  code: string;
  message: string;
}

/** What every RunResult holds, whatever the run's status. */
export interface RunResultBase<S = unknown> {
  runId: string;
  workflow: string;
  /** The state at the head checkpoint. */
  state: S;
  /** Seq of the last durable record. */
  headSeq: number;
}

/**
 * Where a run stands, as recovered from its durable log. Narrowed by `status`: a parked run has
 * its `interrupt` (`if (run.status === 'parked') run.interrupt.id`), a failed one its `failure`,
 * and no other status has either. Never `empty`: a run without records is RunNotFoundError, so
 * a switch over `status` handles the four statuses of docs/guide.md ("Running") and no more.
 */
export type RunResult<S = unknown> =
  | (RunResultBase<S> & { status: 'parked'; interrupt: ParkedInterrupt; failure?: undefined })
  | (RunResultBase<S> & { status: 'failed'; failure: RunFailureView; interrupt?: undefined })
  | (RunResultBase<S> & { status: Exclude<RunStatusName, 'parked' | 'failed' | 'empty'>; interrupt?: undefined; failure?: undefined });

/** How the sequencer batches its appends (RemitOptions). */
export interface SequencingOptions {
  /**
   * Group commit (default true): run consecutive pure nodes in memory and append their completions
   * together with the next boundary record, in one conditional append. false: one append per step.
   */
  groupPureSteps: boolean;
  /** At most this many pure steps wait in memory before they are appended anyway (default 64). */
  maxGroupedPureSteps: number;
  /**
   * A session driving a run releases, after a commit, the log bytes it holds between record 0 and
   * the head snapshot once they pass this many (default 1 MiB): it then holds what a fresh
   * process's read of the run would (run-session.ts, releaseHistory), so a long drive's memory
   * does not grow with the run. Not a public option: tests set it low to release at every commit.
   */
  maxHeldHistoryBytes: number;
}

export const DEFAULT_SEQUENCING: SequencingOptions = { groupPureSteps: true, maxGroupedPureSteps: 64, maxHeldHistoryBytes: 1024 * 1024 };

/** What a sequencer needs from its owner (the Remit instance). */
export interface Engine {
  readonly store: Store;
  readonly core: RecoveryCore;
  readonly hooks: SequencerHooks;
  readonly sequencing?: SequencingOptions;
  /** The invocation fence's settings: this instance's id, the lease, the clock. */
  readonly fence: FenceSettings;
  workflowNamed(name: string): Workflow | undefined;
  workflowNames(): string[];
}

