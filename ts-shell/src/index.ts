/**
 * REMIT's public API: define workflows, run them durably, resume, fork, inspect. This list is the
 * whole of it; what is not exported here is internal. Other entries: `remit/postgres` (the
 * PostgreSQL store), `remit/core` (the recovery core on its own), `remit/testing` (fault hooks and
 * effect sinks for tests), `remit/testing/store-contract` (the store contract suite, vitest).
 * Guide: docs/guide.md.
 */

// Defining workflows.
export { workflow, END, MAX_NODE_NAME_BYTES, MAX_NODE_COUNT } from './workflow/workflow.js';
export type {
  WorkflowBuilder, Workflow, WorkflowOptions, ZodSchemaLike, StateOf, InputOf, ResumesOf, NodeContext, EffectContext, PureNodeSpec, EffectNodeSpec,
  InterruptNodeSpec, Route, StateUpdate, NodeKindName, End,
} from './workflow/workflow.js';
export { fail, TerminalFailure } from './errors.js';

// Running them.
export { createRemit, MAX_RUN_ID_BYTES } from './remit.js';
export type {
  Remit, RemitOptions, StartOptions, ContinueOptions, RecoverAllOptions, RunsOptions, ListedStatus, ForkOptions, ForkResult, RunSummary, RecoverAllOutcome,
  RepairResult,
  ScrubReport,
} from './remit.js';
export type { RunDamage } from './sequencer/log-health.js';
export type { RunResult, ParkedInterrupt, RunFailureView } from './sequencer/sequencer.js';
export type { RunStatusName } from './sequencer/log-view.js';
export type { CoreKind, RecoveryCore } from './core/index.js';
export type { SequencerHooks, FaultPoint, FaultInfo } from './faults.js';

// Stores (PostgreSQL: `remit/postgres`).
export { openSqliteStore } from './store/sqlite.js';
export type { SqliteStore, SqliteStoreOptions } from './store/sqlite.js';
export { openMemoryStore } from './store/memory.js';
export type { MemoryStore, MemoryStoreOptions } from './store/memory.js';
export type {
  Store, StoredRecord, AppendOutcome, ForkOutcome, RunListing, RecoverySummary, RunRead, RunStatusHint, RunStatusCorrection, StoredStatusHint,
} from './store/store.js';

// Inspecting logs.
export { renderInspection } from './inspect.js';
export type { RunInspection, InspectedRecord } from './inspect.js';

// Errors: one class per code (docs/errors.md); `isRemitError(e)`, then switch on `e.code`.
export {
  RemitError, ErrorCode, isRemitError, DefinitionInvalidError, DefinitionMismatchError, UnknownWorkflowError, RunNotFoundError,
  RunExistsError, RunIdInvalidError, ArgumentInvalidError, StateInvalidError, NotJsonError, ValueUnfaithfulError,
  RouteInvalidError, HandlerThrewError, ResumeValueInvalidError, UnknownInterruptError, NotParkedError, AlreadyConsumedError,
  ConflictError, NotACheckpointError, BeyondHeadError, ImplicitForkError, ForkTargetExistsError, LogCorruptError, LogTornError,
  RepairRefusedError, StoreError, StoreNotFoundError, CoreUnavailableError, CoreRefusedError, EffectInFlightError,
  OptionInvalidError,
} from './errors.js';
export type { AnyRemitError, ErrorSubject, ValidationIssue, CoreUnavailableReason, UnfaithfulReason } from './errors.js';
// Not a RemitError: a broken invariant of REMIT's own code ("REMIT bug"), to be reported (docs/errors.md).
export { InvariantViolation } from './assert.js';
// Not a RemitError either: one call needed more linear memory than the Wasm core has (docs/errors.md).
export { CoreOutOfMemoryError } from './core/wasm-core.js';

export type { Json } from './json.js';
