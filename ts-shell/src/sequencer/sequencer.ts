/**
 * The sequencer: from a run's durable log alone, decide (through the recovery core) what happens
 * next, do it, and record it with a conditional append at the expected next seq. Loop until the
 * run parks, completes or fails.
 *
 * What must hold (docs/guide.md, "Crash and resume semantics"):
 * - every transition is one conditional append; a lost race throws ConflictError, nothing written;
 * - an effect handler runs only after its EFFECT_INTENT is durable, with the key from that record;
 *   once EFFECT_DONE is durable the handler is never called again for that instance;
 * - no state reaches the store without passing the state schema;
 * - an ordinary error thrown by node code records nothing: the run continues from its durable
 *   prefix next time. Only a TerminalFailure records RUN_FAILED.
 *
 * Work per step (why the session keeps what it keeps):
 * - the log bytes live in one growable buffer; the sequencer's own appends are added to it once;
 * - the head state is carried from step to step by folding each appended record into it
 *   (`advanceHead`, the same fold a rebuild from the log uses), never rebuilt from the snapshot;
 * - the core's answer is cached per log length, so the core runs at most once per step;
 * - group commit (`groupPureSteps`, on by default): consecutive pure nodes run in memory and their
 *   NODE_COMPLETED records go to the store in one conditional append together with the next
 *   boundary record (EFFECT_INTENT, INTERRUPT_PARKED, the end of the run, a failure), or after
 *   `maxGroupedPureSteps`. The completion of an interrupt whose claim is durable (and of an effect
 *   whose EFFECT_DONE is durable) joins the group too: it is a deterministic apply of a durable
 *   value. So losing an unflushed group to a crash only runs deterministic code again; an effect
 *   handler still runs only after its intent is durable, and its result is appended at once. The
 *   core checks the whole log, group included, before the group is appended, and picks the
 *   boundary step; inside a group the next pure node is the one the last completion routed to
 *   (the core's AT(next) rule, docs/core-api.md).
 * - none of this is trusted after a failure: any failed append (conflict, store error, a hook
 *   that threw) drops the unflushed group and the caches, and the log is read again from the store.
 *
 * The code: ./run-session.ts (the log, caches, staging and flushing, the drive loop), ./step.ts
 * (one transition per next action), ./log-buffer.ts, ./log-view.ts (reading logs), and
 * ./run-result.ts (the result type, options and the Engine interface). This module is their entry.
 */

export { RunSession } from './run-session.js';
export { DEFAULT_SEQUENCING } from './run-result.js';
export type { Engine, ParkedInterrupt, RunFailureView, RunResult, SequencingOptions } from './run-result.js';
