/**
 * What the runner records about one run of one cell: everything the checkers judge. Checkers read
 * only this (never the runner or an adapter), so they can be tested on hand-made observations.
 */
import type { CorruptionProbe, DefinitionChangeProbe, FaultEvent, HelloResult, Outcome, RunView } from './protocol.js';
import type { Scenario } from './scenario.js';
import type { SinkLine } from './sink.js';

/** A range of effect-sink lines [from, to) written while a step ran. */
export interface SinkWindow {
  from: number;
  to: number;
}

/** What happened when a fault (or an unexpected crash or timeout) stopped a command. */
export interface FaultMoment {
  step: string;
  runId: string;
  /** The fault events the adapter announced; empty for an unexpected crash. */
  events: FaultEvent[];
  /** How the command ended. */
  ending: 'crashed' | 'error-outcome' | 'timeout';
  outcome: Outcome | null;
  /** Sink lines written before the fault was handled. */
  sinkOffset: number;
  /** The run as recovery sees it right after the fault (read by a live process). */
  view: RunView | null;
}

export interface DrivenRun {
  runId: string | null;
  /** Every outcome in order, including those that ended in a fault and the recoveries after. */
  outcomes: Outcome[];
  final: Outcome | null;
  view: RunView | null;
}

export interface Incident {
  step: string;
  what: 'timeout' | 'unexpected-crash' | 'adapter-error' | 'gave-up';
  detail: string;
}

export interface StepObservations {
  baseline?: DrivenRun & { window: SinkWindow };
  start?: DrivenRun & { window: SinkWindow };
  resume?: DrivenRun & { window: SinkWindow };
  resumeConcurrent?: {
    mode: 'in-process' | 'processes' | 'hosts';
    outcomes: (Outcome | null)[];
    values: unknown[];
    view: RunView | null;
    window: SinkWindow;
  };
  /**
   * The recoverer cells: after the fault stopped the start, k recoverers continued the run at once:
   * k calls in one process, k processes, or k processes on hosts (cross-host.ts: released by a
   * barrier, then each held at its first append until all had reached it).
   */
  recoverConcurrent?: {
    mode: 'in-process' | 'processes' | 'hosts';
    /** Where each recoverer ran: a host name, "process i", or "call i". */
    hosts: string[];
    outcomes: (Outcome | null)[];
    /** Hosts: how many recoverers were waiting at the barrier and at the append when each was opened (k, k elsewhere). */
    waiting: { start: number; append: number };
    before: RunView | null;
    after: RunView | null;
    window: SinkWindow;
  };
  resumeDuplicate?: { outcome: Outcome | null; before: RunView | null; after: RunView | null; window: SinkWindow };
  recoverTwice?: {
    first: RunView | null;
    second: RunView | null;
    otherProcess: RunView | null;
    /** Why no second process read the store, when none did. */
    otherProcessReason: string | null;
  };
  forkTwice?: {
    sourceBefore: RunView | null;
    sourceAfter: RunView | null;
    forks: (DrivenRun & { window: SinkWindow })[];
    window: SinkWindow;
  };
  continueFromOlder?: { outcome: Outcome | null; before: RunView | null; after: RunView | null; window: SinkWindow };
  probeInvalidResume?: {
    parked: Outcome | null;
    invalid: Outcome | null;
    before: RunView | null;
    after: RunView | null;
    valid: DrivenRun;
    window: SinkWindow;
  };
  probeInvalidState?: { outcome: Outcome | null; view: RunView | null };
  probeCorruption?: CorruptionProbe | null;
  probeDefinitionChange?: DefinitionChangeProbe | null;
}

export interface CellRun {
  system: string;
  scenario: Scenario;
  hello: HelloResult;
  /** The armed fault's events, across the whole cell. */
  faultsFired: FaultEvent[];
  faults: FaultMoment[];
  steps: StepObservations;
  /** The main run as it stands after its own steps (before forks and probes). */
  mainView: RunView | null;
  sink: SinkLine[];
  incidents: Incident[];
}
