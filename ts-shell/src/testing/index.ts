/**
 * `remit/testing`: what a service needs to test its own workflows against REMIT's guarantees.
 * - `checkWorkflow`: the resume contract on a workflow of yours, with a crash at every fault point
 *   its run reaches, each recovered run checked against a fault-free one (docs/guide.md,
 *   "Checking your own workflow").
 * - Fault hooks: the named points where the sequencer pauses for `createRemit({ hooks })`, and
 *   `point[:KIND][@node][#n]` specs that fire once at the n-th match (throw, kill, pause).
 * - Its own errors, each with a `code` (`TestingErrorCode`; docs/errors.md, "remit/testing"):
 *   `FaultSpecInvalidError`, `MissingResumeValueError`, `ResumeFunctionThrewError`.
 * - Effect sinks that deduplicate by idempotency key and count handler calls apart from
 *   applications, so a test can assert "applied exactly once" after crashes.
 * - Log reading for checkers: `applyDelta` rebuilds a state from a delta payload of a
 *   NODE_COMPLETED record (docs/log-format.md, payload conventions).
 * The store contract suite (vitest) is its own entry: `remit/testing/store-contract`.
 * - `MemoryBacking`: one in-memory log shared by several `openMemoryStore({ backing })` handles,
 *   to test several instances (as if processes) on one store.
 * Nothing here is used by the library itself.
 */

export { FAULT_POINTS, NO_HOOKS, isFaultPoint } from '../faults.js';
export type { FaultPoint, FaultInfo, SequencerHooks } from '../faults.js';
export { parseFaultSpec, formatFaultSpec, faultMatches, hooksFor, checkSpecNode, InjectedFault } from './fault-spec.js';
export { FaultSpecInvalidError, TestingErrorCode } from './errors.js';
export type { FaultSpec, FaultHooks, HooksForOptions } from './fault-spec.js';
export { FileEffectSink, MemoryEffectSink, receiptIdFor } from './effect-sink.js';
export type { EffectSink, EffectReceipt, EffectCount, EffectCounts, MemoryEffectSinkOptions } from './effect-sink.js';
export { testRecord } from './test-record.js';
export { applyDelta } from '../state/delta.js';
export type { Delta } from '../state/delta.js';
export { MemoryBacking } from '../store/memory.js';
export { checkWorkflow, MissingResumeValueError, ResumeFunctionThrewError } from './check-workflow.js';
export type { CheckWorkflowOptions, CheckedProperty, ResumeOptions, ResumeValue, WorkflowCheckReport, WorkflowProblem } from './check-workflow.js';
