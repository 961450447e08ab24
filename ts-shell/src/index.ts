/**
 * REMIT's public API: define workflows, run them durably, resume, fork, inspect.
 * Quickstart: docs/guide.md.
 */

export { workflow, WorkflowBuilder, END, MAX_NODE_NAME_BYTES } from './workflow/workflow.js';
export type {
  Workflow, WorkflowOptions, StateOf, InputOf, NodeContext, EffectContext, PureNodeSpec, EffectNodeSpec,
  InterruptNodeSpec, Route, StateUpdate, NodeKindName, NodeDefinition, End,
} from './workflow/workflow.js';
export { describeWorkflow, diffDescriptors, fingerprintOf, canonicalDescriptor } from './workflow/descriptor.js';
export type { WorkflowDescriptor, NodeDescriptor } from './workflow/descriptor.js';

export { createRemit, Remit, loadCore, checkRunId, MAX_RUN_ID_BYTES } from './remit.js';
export type { RemitOptions, StartOptions, ForkOptions, ForkResult, RunSummary, RecoverAllOutcome } from './remit.js';
export type { RunResult, ParkedInterrupt, RunFailureView } from './sequencer/sequencer.js';
export type { RunStatusName } from './sequencer/log-view.js';

export { inspectLog, renderInspection } from './inspect.js';
export type { RunInspection, InspectedRecord } from './inspect.js';

export { FAULT_POINTS, NO_HOOKS, isFaultPoint } from './faults.js';
export type { FaultPoint, FaultInfo, SequencerHooks } from './faults.js';

export * from './errors.js';

export type { Store, StoredRecord, AppendOutcome, ForkOutcome, RunListing } from './store/store.js';
export { MemoryStore, MemoryBacking, openMemoryStore } from './store/memory.js';
export type { MemoryStoreOptions } from './store/memory.js';
export { SqliteStore, openSqliteStore } from './store/sqlite.js';
export type { SqliteStoreOptions } from './store/sqlite.js';

export { createCore } from './core/index.js';
export type { CoreKind } from './core/index.js';
export type { RecoveryCore } from './core/types.js';

export { computeDelta, applyDelta, chooseSnapshot } from './state/delta.js';
export type { Delta } from './state/delta.js';
export type { Json } from './json.js';
