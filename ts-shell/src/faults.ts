/**
 * Named fault points. The sequencer calls `hooks.at(point, info)` at each one and awaits it; a hook
 * may throw (a thrown-error fault), SIGKILL the process (a crash), or pause. The conformance
 * harness crosses these points with its fault kinds. Production code passes no hooks.
 */

export const FAULT_POINTS = [
  /** Before a conditional append is sent to the store (`info.kinds`: the batch's record kinds). */
  'append.before',
  /** After the store committed a batch, before the sequencer uses it. */
  'append.after',
  /** Inside a pure node: its code returned, the step is not yet recorded. */
  'pure.before-return',
  /** The effect intent is durable; the handler is about to be called. */
  'effect.before-handler',
  /** The handler returned (the outside effect happened); its completion is not yet recorded. */
  'effect.after-handler',
  /** A resume claim is durable; no node has run on it yet. */
  'resume.after-claim',
  /** A fork was admitted; the store has not copied the prefix yet. */
  'fork.before-store',
  /** The store committed the fork. */
  'fork.after-store',
] as const;

export type FaultPoint = (typeof FAULT_POINTS)[number];

export interface FaultInfo {
  runId: string;
  /** For appends: the expected seq of the batch's first record; otherwise the head's next seq. */
  seq: number;
  node?: string;
  /** Record kind names of the batch (appends and claims). */
  kinds?: string[];
  /** For forks: the new run's id. */
  targetRunId?: string;
}

export interface SequencerHooks {
  at(point: FaultPoint, info: FaultInfo): void | Promise<void>;
}

export const NO_HOOKS: SequencerHooks = { at() {} };

export function isFaultPoint(name: string): name is FaultPoint {
  return (FAULT_POINTS as readonly string[]).includes(name);
}
