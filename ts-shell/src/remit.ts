/**
 * The public façade: a Remit instance binds a store, a recovery core and the workflows it can run.
 *
 *   const remit = await createRemit({ store: openSqliteStore('./remit.db'), workflows: [refund] });
 *   const run = await remit.start(refund, { orderId: 'o-1', amountCents: 1250, reason: 'damaged' });
 *   if (run.status === 'parked') await remit.resume(run.runId, run.interrupt.id, { approved: true, approver: 'kim' });
 *
 * Several instances (in one process or many) may share a store: every write is a conditional
 * append, so at most one of them moves a run forward at each step, and an effect handler is called
 * only by the instance whose append of the effect's attempt committed (docs/guide.md, "Concurrent
 * sequencers").
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import cluster from 'node:cluster';
import { getEnvironmentData, isMainThread, setEnvironmentData, threadId } from 'node:worker_threads';
import { chainValueBefore } from './core/framing.js';
import { createCore, type CoreKind } from './core/index.js';
import { reference } from './core/reference-core.js';
import { compareListings } from './store/common.js';
import { CoreOutOfMemoryError } from './core/wasm-core.js';
import {
  NodeKind, RecordKind, RefusalReason, type Admission, type AdmissionRequest, type LogRecord, type RecoveredRun, type RecoveryCore,
} from './core/types.js';
import {
  afterOwnClaim, AlreadyConsumedError, cutForMessage, MAX_QUOTED_CHARS, ArgumentInvalidError, BeyondHeadError, ConflictError, CoreRefusedError, DefinitionInvalidError,
  EffectInFlightError, ForkTargetExistsError, ImplicitForkError, LogCorruptError, NotACheckpointError, NotParkedError,
  OptionInvalidError, RemitError, RepairRefusedError, ResumeValueInvalidError, RunExistsError, RunNotFoundError, StateInvalidError, StoreError,
  isInstanceOf, namingRun, restateRecorded, toValidationIssues, undrivenForkAdvice, UnknownInterruptError, UnknownWorkflowError, type ErrorSubject,
} from './errors.js';
import { NO_HOOKS, type SequencerHooks } from './faults.js';
import { inspectLog, type RunInspection } from './inspect.js';
import { bytesEqual, decodeJson, fromUtf8, utf8, type Json } from './json.js';
import { checkedForkOutcome, checkedListings, checkedRecords, checkedRunIds } from './store/answers.js';
import { checkWholeRead } from './store/whole-read.js';
import { concatBytes, decodeRecordAt } from './core/codec.js';
import { damageError, diagnoseRows, diagnoseValues, missingRecordsDamage, unreadableRunDamage, type RunDamage } from './sequencer/log-health.js';
import { checkRecovery, headState, kindName, recordAt, runStartedRecord, STATUS_NAMES, statusAfterRecords, type RunStatusName } from './sequencer/log-view.js';
import { DEFAULT_SEQUENCING, RunSession, type Engine, type RunResult, type SequencingOptions } from './sequencer/sequencer.js';
import { EMPTY_SUMMARY_AT, feedInPieces, recoverInPieces } from './sequencer/feed-pieces.js';
import { openSummary } from './sequencer/stored-summary.js';
import { DEFAULT_EFFECT_LEASE_MS, type FenceSettings } from './sequencer/fence.js';
import type { RunListing, RunStatusCorrection, RunStatusHint, Store, StoredRecord, StoredStatusHint } from './store/store.js';
import {
  checkEffectKeysFit, checkInstanceId, checkRunId, defaultForkRunId, defaultInstanceId, defaultRunId, INTERRUPT_ID_EXPECTED, isSeq,
  MAX_RUN_ID_BYTES, parseInterruptId, runIdProblem, SEQ_EXPECTED,
} from './ids.js';
import { durableValue, encodeRecordWithinLimits, handleRejectionsIn, validate, type ReadBackSchema } from './values.js';
import { assert } from './assert.js';
import { allKeysOf, notKnown, unknownKey } from './known-keys.js';
import { canonicalDescriptor, diffDescriptors } from './workflow/descriptor.js';
import { droppedField, ON_PURPOSE } from './workflow/declared-fields.js';
import { eventLoopPacer, internalTimers } from './timers.js';
import { isBuiltWorkflow, isLeaseMs, MAX_LEASE_MS, MAX_NODE_NAME_BYTES, unresumableInterrupt, WorkflowBuilder, type InputOf, type StateOf, type Workflow } from './workflow/workflow.js';

export { MAX_RUN_ID_BYTES } from './ids.js';

export interface RemitOptions {
  store: Store;
  workflows?: readonly Workflow[];
  /** 'wasm' (default): the Rust core compiled to WebAssembly; 'reference': the TypeScript twin. */
  core?: CoreKind | RecoveryCore;
  /** Fault-injection hooks for the conformance harness and tests (faults.ts). */
  hooks?: SequencerHooks;
  /**
   * Group commit (default true): consecutive pure nodes run in memory and their completions are
   * appended together with the next effect intent, park, end of run or failure, in one durable
   * commit (docs/guide.md, "Crash and resume semantics"). false: one commit per step.
   */
  groupPureSteps?: boolean;
  /** With group commit: at most this many pure steps per commit (default 64). */
  maxGroupedPureSteps?: number;
  /**
   * This instance's id, written as the owner of every effect attempt it claims (default: a random
   * `remit-<uuid>`, new for every createRemit). A stable id per replica (a pod name, a host name)
   * lets a restarted replica take over its own unfinished attempts at once instead of waiting for
   * their leases. TWO LIVE PROCESSES MUST NEVER SHARE AN ID: each would take the other's running
   * attempt for its own abandoned one and call the handler again. At most 200 UTF-8 bytes. In a
   * worker thread the owner written is `${instanceId}#thread-${threadId}` (Remit.instanceId), and
   * in a `node:cluster` worker `${instanceId}#worker-${cluster.worker.id}` (its threads' too), so
   * the threads and cluster workers of one host may be given one id.
   */
  instanceId?: string;
  /**
   * How long (ms) an effect attempt is protected from takeover by other instances (default 30 000;
   * an effect node's `leaseMs` overrides it). It must exceed the handler's longest run plus the
   * clock skew between hosts: a lease that expires while its handler still runs lets another
   * instance call the handler again (same key). Shorter leases recover crashed runs sooner.
   */
  effectLeaseMs?: number;
}

export interface ContinueOptions {
  /** Refuse unless this is the head seq (continuing from an older checkpoint needs a fork). */
  fromSeq?: number;
  /**
   * When another sequencer holds the run (an effect attempt in flight under a live lease, or a lost
   * append race), read the log again and retry until this many milliseconds have passed, instead of
   * throwing EffectInFlightError / ConflictError at once (default 0). At most 24 h. The wait ends
   * when close() is called: the error is thrown then.
   */
  waitForEffectMs?: number;
}

export interface RunsOptions {
  /** At most this many runs (a whole number from 1). Default: every run. */
  limit?: number;
  /**
   * Only the runs after the run of this id: the last runId of the previous page. Pages are cut
   * from the listing ordered by creation time, then run id. A run listed from the first page to
   * the last is in exactly one page; a run created or listed anew while paging (a start under the
   * id of a run listed without records, a repair that lists a run again) may fall before the
   * cursor and be in none: created in the cursor's millisecond with a smaller id, by a process
   * whose clock is behind, or on PostgreSQL, whose creation time is the transaction's start.
   */
  after?: string;
  /**
   * Only the runs of this status, or of one of these (`'parked'`: an inbox of the runs waiting for
   * a resume). Every run passed over is still read to know its status; `limit` counts the runs
   * given, so a page of 50 parked runs reads as many runs as it takes to find them.
   */
  status?: ListedStatus | readonly ListedStatus[];
}

/** A status runs() gives: a run's status, or `damaged`. */
export type ListedStatus = RunSummary['status'];

const LISTED_STATUSES: readonly ListedStatus[] = ['running', 'parked', 'completed', 'failed', 'damaged'];

export interface RecoverAllOptions {
  /** Passed to each continueRun (ContinueOptions.waitForEffectMs). */
  waitForEffectMs?: number;
  /**
   * How many runs are looked at and driven at once: a whole number from 1 to 1000. Default: 1,
   * one after another. The outcomes come in the order of the candidates whatever order their runs
   * end in. More than one helps when handlers wait on the network: a store call itself is not
   * faster (SQLite's is synchronous), and each run is driven exactly as `continueRun` drives it.
   */
  concurrency?: number;
}

export interface StartOptions {
  /** Default: `${workflow}-${uuid}`. At most 200 UTF-8 bytes. */
  runId?: string;
}

export interface ForkOptions {
  /** Why this fork exists; recorded in the FORKED record as JSON. */
  intent?: unknown;
  /** Default: `${sourceRunId}.fork-${8 hex}`. */
  newRunId?: string;
}

export interface ForkResult {
  runId: string;
  sourceRunId: string;
  checkpointSeq: number;
  forkSeq: number;
}

/** What `Remit.scrub` re-verified. */
export interface ScrubReport {
  runId: string;
  records: number;
  logBytes: number;
  /** Damage found in the whole log (null: every record passes its checks). */
  damage: RunDamage | null;
  /** Records the stored recovery summary covers (null: the store keeps none for the run). */
  summaryRecords: number | null;
  /** Whether the stored summary is the one the core computes from those records (null: none). */
  summaryAgrees: boolean | null;
  /** The status the log recovers to; null when it is damaged. */
  logStatus: RunStatusHint | null;
  /**
   * The run's stored status hint (docs/guide.md, "Recovery at start-up"): one of the four, or null
   * when it is unknown (none stored, a store without hints, or a stored value that is not a status:
   * then `statusHintInvalid` holds it).
   */
  statusHint: RunStatusHint | null;
  /** A stored hint that is not one of the four statuses, as stored (it counts as unknown); absent otherwise. */
  statusHintInvalid?: string;
  /**
   * Whether the stored hint is the status the log says (`logStatus`). false: it names another
   * status, or is not a status at all (`remit repair` corrects it). null: nothing to compare (no
   * hint, a store without `readStatusHint`, a damaged log, or a run that kept moving while it was
   * scrubbed).
   */
  statusHintAgrees: boolean | null;
  /**
   * true when the run's records are stored without a listing (a listing row deleted by hand, on a
   * store that allows it: SQLite): runs() and recoverAll do not see the run; `remit repair` lists
   * it again. Absent otherwise.
   */
  unlisted?: true;
}

/** What reading and recovering one run's log says about it (RunSummary without the listing's fields). */
type ExaminedRun = Omit<RunSummary, 'runId' | 'createdAtMs' | 'updatedAtMs'>;

export interface RunSummary {
  runId: string;
  /** The workflow named by the run's first record ('?' when that record is unreadable). */
  workflow: string;
  /** What the log recovers to ('empty' never: a run listed without records is `damaged`, NO_RECORDS). */
  status: Exclude<RunStatusName, 'empty'> | 'damaged';
  /** Seq of the last intact record (before the damaged one, for a damaged run). */
  headSeq: number;
  createdAtMs: number;
  updatedAtMs: number;
  interruptId?: string;
  /**
   * true for a fork that nobody has continued yet (status running, its last record the FORKED
   * one): it is driven only by continueRun (`remit continue`, or `remit fork --continue`);
   * recoverAll leaves it alone. Absent otherwise.
   */
  undrivenFork?: true;
  /** For a damaged run: which record, how, and what the operator can do (docs/guide.md, "Damaged runs"). */
  damage?: RunDamage;
  /** The stored status hint, when the store lists hints (`RunListing.statusHint`): one of the four, or null (unknown). */
  statusHint?: RunStatusHint | null;
  /** A stored hint that is not one of the four statuses, as stored (it counts as unknown). */
  statusHintInvalid?: string;
  /**
   * With `statusHint`: whether it is the status the log says (as `ScrubReport.statusHintAgrees`;
   * null also when the run moved between the listing and the read of its log).
   */
  statusHintAgrees?: boolean | null;
}

/**
 * One run recoverAll looked at: continued (`result`), or not, with the typed error (`error`), also
 * for every damaged run it found.
 */
export type RecoverAllOutcome = { runId: string; result: RunResult } | { runId: string; error: unknown };

/** What `repair` did. */
export interface RepairResult {
  runId: string;
  /** The seq of the damaged last record it removed, or null when the log was not damaged. */
  removedSeq: number | null;
  /** That record's kind when its header survived, else null. */
  removedKind: string | null;
  /** How many bytes of it were stored. */
  removedBytes: number;
  /** Whether a stored recovery summary that disagreed with the (sound) log was deleted. */
  summaryRemoved: boolean;
  /**
   * The status hint a sound log's disagreeing hint was corrected to (scrub's `statusHintAgrees:
   * false`), or null when none was corrected.
   */
  statusHintCorrected: RunStatusHint | null;
  /** What removing it means for the run (or why nothing was done). */
  note: string;
  /** Seq of the run's last record now. */
  headSeq: number;
  /** true when the run's records were stored without a listing and it was listed again (scrub's `unlisted`); absent otherwise. */
  relisted?: true;
}

export async function createRemit(options: RemitOptions): Promise<Remit> {
  checkRemitOptions(options);
  const core = typeof options.core === 'object' ? options.core : await createCore(options.core ?? 'wasm');
  const sequencing: Partial<SequencingOptions> = {};
  if (options.groupPureSteps !== undefined) sequencing.groupPureSteps = options.groupPureSteps;
  if (options.maxGroupedPureSteps !== undefined) sequencing.maxGroupedPureSteps = options.maxGroupedPureSteps;
  const fence: Partial<FenceOptions> = {};
  if (options.instanceId !== undefined) fence.instanceId = options.instanceId;
  if (options.effectLeaseMs !== undefined) fence.effectLeaseMs = options.effectLeaseMs;
  return new Remit(options.store, core, options.workflows ?? [], options.hooks ?? NO_HOOKS, sequencing, fence);
}

const ONE_DEFINITION_PER_NAME = 'register one definition per name (a changed definition goes under a new name: docs/guide.md, "Changing a workflow")';

/** What differs between two definitions of one name, for DefinitionInvalidError's message. */
function definitionChanges(first: Workflow, second: Workflow): string {
  return diffDescriptors(first.descriptor, second.descriptor).join('; ');
}

/**
 * createRemit's `workflows` holds at most one definition of a name: two entries of one name that
 * are not the same object are refused, naming both. Different definitions could not both drive the
 * name's runs; two builds of one definition (the same fingerprint: node code is not part of it)
 * would leave REMIT running whichever came last, which the list does not say. The same object
 * listed twice is harmless and accepted.
 */
function checkOneDefinitionPerName(workflows: readonly Workflow[]): void {
  const firstIndex = new Map<string, number>();
  for (const [index, wf] of workflows.entries()) {
    const earlier = firstIndex.get(wf.name);
    if (earlier === undefined) firstIndex.set(wf.name, index);
    if (earlier === undefined || workflows[earlier] === wf) continue;
    const first = workflows[earlier]!;
    const what = first.fingerprintHex === wf.fingerprintHex
      ? 'two builds of one definition (the same fingerprint; their node code may differ, and only one could run)'
      : `two different definitions (${definitionChanges(first, wf)})`;
    throw new DefinitionInvalidError(wf.name, `workflows[${earlier}] and workflows[${index}] are ${what}; ${ONE_DEFINITION_PER_NAME}`, { field: 'workflows' });
  }
}

/** The options createRemit knows; any other key is refused (a misspelt option would be ignored). */
const REMIT_OPTIONS = allKeysOf<RemitOptions>()('store', 'workflows', 'core', 'hooks', 'groupPureSteps', 'maxGroupedPureSteps', 'instanceId', 'effectLeaseMs');
const STORE_METHODS = ['readLog', 'readRecords', 'append', 'fork', 'listRuns', 'close'] as const;
const OPTIONAL_STORE_METHODS = ['readSummary', 'readRun', 'listRunsToRecover', 'readStatusHint', 'correctRunStatuses', 'removeLastRecord', 'listRunsPage'] as const;
const CORE_METHODS = ['recover', 'admit', 'recoverEncoded', 'admitEncoded', 'feed', 'admitFrom', 'feedEncoded', 'admitFromEncoded'] as const;

/**
 * createRemit's check of its `workflows` option, on its own: the CLI runs it before it creates a
 * database, so that a module createRemit would refuse leaves none behind.
 */
export function checkWorkflowsOption(workflows: unknown): asserts workflows is Workflow[] {
  if (!Array.isArray(workflows)) throw new OptionInvalidError('workflows', workflows, 'must be an array of built workflows (workflow(...)....build())');
  // An index loop, not forEach: forEach skips the holes of a sparse array, which the
  // constructor's for...of would then register as undefined.
  for (let index = 0; index < workflows.length; index++) {
    const entry: unknown = workflows[index];
    if (isBuiltWorkflow(entry)) continue;
    const hint = entry instanceof WorkflowBuilder ? ' (a builder: call .build())' : '';
    throw new OptionInvalidError('workflows', entry, `entry ${index} is not a built workflow${hint}`);
  }
  checkOneDefinitionPerName(workflows as Workflow[]);
}

/**
 * Throws OptionInvalidError (field: the option) unless REMIT can use every option, before a core
 * is loaded or the store is touched: a store and a core object with their interfaces' functions,
 * built workflows, hooks with `at`, a boolean groupPureSteps, a positive whole
 * maxGroupedPureSteps, a valid instanceId and effectLeaseMs, and no option REMIT does not know.
 * (An unknown core name is CoreUnavailableError, UNKNOWN_CORE, from createCore.)
 */
function checkRemitOptions(options: unknown): asserts options is RemitOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ArgumentInvalidError('options', 'an object of createRemit options ({ store, workflows, ... })', describeArgument(options));
  }
  const o = options as Record<string, unknown>;
  const unknown = unknownKey(o, REMIT_OPTIONS);
  if (unknown !== undefined) throw new OptionInvalidError(unknown, o[unknown], notKnown('an option of createRemit', REMIT_OPTIONS));
  const store = o['store'];
  if (store === null || typeof store !== 'object') throw new OptionInvalidError('store', store, 'must be a Store (openSqliteStore, openMemoryStore, openPostgresStore)');
  // openPostgresStore resolves to its store: passed without await, it would be refused for lacking every method.
  if (typeof (store as { then?: unknown }).then === 'function' && typeof (store as { append?: unknown }).append !== 'function') {
    throw new OptionInvalidError('store', store, 'is a Promise, not a Store: await it first (const store = await openPostgresStore(...))');
  }
  const missing = STORE_METHODS.filter((m) => typeof (store as Record<string, unknown>)[m] !== 'function');
  const notFunctions = OPTIONAL_STORE_METHODS.filter((m) => (store as Record<string, unknown>)[m] !== undefined && typeof (store as Record<string, unknown>)[m] !== 'function');
  if (missing.length > 0 || notFunctions.length > 0 || typeof (store as { description?: unknown }).description !== 'string') {
    const what = [...missing, ...notFunctions].map((m) => `${m}()`);
    throw new OptionInvalidError('store', store, `is not a Store: it lacks ${what.length > 0 ? what.join(', ') : 'a description'}`);
  }
  if (o['workflows'] !== undefined) checkWorkflowsOption(o['workflows']);
  const core = o['core'];
  if (core !== undefined && typeof core !== 'string') {
    if (core === null || typeof core !== 'object') throw new OptionInvalidError('core', core, 'must be "wasm", "reference" or a RecoveryCore');
    const lacking = CORE_METHODS.filter((m) => typeof (core as Record<string, unknown>)[m] !== 'function');
    if (lacking.length > 0) throw new OptionInvalidError('core', core, `is not a RecoveryCore: it lacks ${lacking.map((m) => `${m}()`).join(', ')}`);
  }
  const hooks = o['hooks'];
  if (hooks !== undefined && (hooks === null || typeof hooks !== 'object' || typeof (hooks as { at?: unknown }).at !== 'function')) {
    throw new OptionInvalidError('hooks', hooks, 'must be an object with an at(point, info) function (SequencerHooks)');
  }
  if (o['groupPureSteps'] !== undefined && typeof o['groupPureSteps'] !== 'boolean') {
    throw new OptionInvalidError('groupPureSteps', o['groupPureSteps'], 'must be true or false');
  }
  if (o['maxGroupedPureSteps'] !== undefined) checkMaxGroupedPureSteps(o['maxGroupedPureSteps']);
  if (o['instanceId'] !== undefined) checkInstanceId(o['instanceId']);
  if (o['effectLeaseMs'] !== undefined && !isLeaseMs(o['effectLeaseMs'])) {
    throw new OptionInvalidError('effectLeaseMs', o['effectLeaseMs'], `must be a whole number of milliseconds from 1 to ${MAX_LEASE_MS}`);
  }
}

function checkMaxGroupedPureSteps(value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new OptionInvalidError('maxGroupedPureSteps', value, 'must be a positive whole number');
  }
}

/**
 * Throws ArgumentInvalidError unless an options argument is an object or undefined, and
 * OptionInvalidError for a key of it that `operation` does not know (nothing read or written yet).
 */
function checkOptionsArgument(operation: string, value: unknown, known: readonly string[], subject: ErrorSubject): void {
  if (value === undefined) return;
  const expected = `an object of ${operation} options ({ ${known.join(', ')} }) or undefined`;
  // A Map or a Set keeps its entries apart from its keys: `new Map([['runId', 'x']])` would be read
  // as no options at all, its runId ignored. (Other objects are read by their keys, inherited ones too.)
  if (value === null || typeof value !== 'object' || Array.isArray(value) || isInstanceOf(value, Map) || isInstanceOf(value, Set)) {
    throw new ArgumentInvalidError('options', expected, describeArgument(value), subject);
  }
  const unknown = unknownKey(value, known);
  if (unknown !== undefined) throw new OptionInvalidError(unknown, (value as Record<string, unknown>)[unknown], notKnown(`an option of ${operation}`, known), subject);
}

const START_OPTIONS = allKeysOf<StartOptions>()('runId');
const CONTINUE_OPTIONS = allKeysOf<ContinueOptions>()('fromSeq', 'waitForEffectMs');
const FORK_OPTIONS = allKeysOf<ForkOptions>()('newRunId', 'intent');
/** Where a fork's new run id comes from, for RunIdInvalidError's field. */
const NEW_RUN_ID_ARGUMENT = 'options.newRunId of fork';
const RECOVER_ALL_OPTIONS = allKeysOf<RecoverAllOptions>()('waitForEffectMs', 'concurrency');
const MAX_RECOVER_CONCURRENCY = 1000;

/** What recoverAll learnt of one candidate: an outcome, a hint to correct, or nothing to say. */
type CandidateLook = RecoverAllOutcome | RunStatusCorrection | undefined;

function checkConcurrency(value: unknown): number {
  if (value === undefined) return 1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_RECOVER_CONCURRENCY) {
    throw new OptionInvalidError('concurrency', value, `must be a whole number of runs from 1 to ${MAX_RECOVER_CONCURRENCY}`);
  }
  return value;
}
const RUNS_OPTIONS = allKeysOf<RunsOptions>()('limit', 'after', 'status');

/** runs()'s options, checked before anything is read: a mistyped limit is refused as such, not after a listing read. */
function checkRunsOptions(options: RunsOptions): void {
  const { limit, after } = options;
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) {
    throw new OptionInvalidError('limit', limit, 'must be a whole number from 1');
  }
  if (after !== undefined && typeof after !== 'string') throw new OptionInvalidError('after', after, 'must be the runId of a listed run (the last of the previous page)');
  statusesWanted(options.status);
}

/** The statuses runs() keeps (null: every one), or OptionInvalidError naming the option. */
function statusesWanted(status: RunsOptions['status']): ReadonlySet<ListedStatus> | null {
  if (status === undefined) return null;
  const given: unknown[] = Array.isArray(status) ? status : [status];
  if (given.length === 0 || !given.every((one) => (LISTED_STATUSES as readonly unknown[]).includes(one))) {
    throw new OptionInvalidError('status', status, `must be one of ${LISTED_STATUSES.join(', ')}, or a non-empty array of them`);
  }
  return new Set(given as ListedStatus[]);
}

/**
 * The listings of the page `options` ask for (all of them, in the store's order, without paging
 * options). Pages are cut from the listing ordered here by creation time, then run id (as
 * JavaScript compares strings), whatever order a store lists in: a custom store need not order
 * its listing for pages to neither skip nor repeat a run listed throughout. (A store's
 * listRunsPage pages in this order too: compareListings, store/common.ts.)
 */
function pageOf(listings: RunListing[], options: RunsOptions): RunListing[] {
  const { limit, after } = options;
  if (limit === undefined && after === undefined) return listings;
  const ordered = [...listings].sort(compareListings);
  let from = 0;
  if (after !== undefined) {
    const at = ordered.findIndex((listing) => listing.runId === after);
    if (at < 0) throw unknownCursor(after);
    from = at + 1;
  }
  // With a status filter, the limit counts the runs kept, known only once each is read (runs()).
  return ordered.slice(from, limit === undefined || options.status !== undefined ? undefined : from + limit);
}

/**
 * runs()'s refusal of a cursor that names no listed run: read as "from the start" it would list
 * the first pages again, read as "nothing after" it would end the paging early.
 */
function unknownCursor(after: string): OptionInvalidError {
  return new OptionInvalidError('after', after, 'names no run of this store: it must be the runId of a listed run (the last of the previous page)');
}

/**
 * How many listings runs() asks listRunsPage for at a time under a status filter, at least: the
 * runs kept are known only once read, so an inbox of a few parked runs among thousands would
 * otherwise take a call per listing or two.
 */
const FILTERED_PAGE_READ = 32;

/**
 * The listings runs() examines, in its order, read as far as runs() takes them: with a limit, a
 * store's pages (listRunsPage), each costing its page, the next one only when a status filter has
 * kept fewer runs than the limit; otherwise, or from a store without listRunsPage, the whole
 * listing (one row a run) cut by pageOf.
 */
async function* listingsToExamine(store: Store, options: RunsOptions): AsyncGenerator<RunListing> {
  const { limit } = options;
  if (limit === undefined || typeof store.listRunsPage !== 'function') {
    yield* pageOf(checkedListings(store, await store.listRuns()), options);
    return;
  }
  const count = options.status === undefined ? limit : Math.max(limit, FILTERED_PAGE_READ);
  for (let after = options.after; ; ) {
    const page = checkedPage(store, await store.listRunsPage(after, count), after, count);
    if (page === null) throw after === options.after ? unknownCursor(after!) : listingGone(store, after!);
    yield* page;
    if (page.length < count) return;
    after = page[page.length - 1]!.runId;
  }
}

/**
 * listRunsPage's answer: null (the cursor `after` names no listed run; never without one), or at
 * most `limit` listings, strictly in runs()'s order and after the cursor; else StoreError
 * BAD_READ. The order is checked, not taken on trust: the whole-listing path sorts a custom
 * store's listing itself, and a page out of order, repeating a run or not past its cursor would
 * list a run twice or make a paging loop that never ends.
 */
function checkedPage(store: Store, page: unknown, after: string | undefined, limit: number): RunListing[] | null {
  if (page === null && after !== undefined) return null;
  const listings = Array.isArray(page) && page.every((l: Partial<RunListing> | null) => l !== null && typeof l === 'object' && typeof l.runId === 'string' && Number.isFinite(l.createdAtMs));
  const what = !listings
    ? page === null ? 'null (no such cursor) to a page from the first run'
      : 'something that is neither null nor an array of run listings ({ runId, nextSeq, createdAtMs, ... })'
    : page.length > limit ? `${page.length} listings for a page of at most ${limit}` : pageOrderProblem(page as RunListing[], after);
  if (what === null) return page as RunListing[];
  throw new StoreError(store.description, 'listRunsPage', 'BAD_READ', {}, new Error(`the store answered ${what}`));
}

/** What is wrong with the order of a page after the cursor `after`, or null. */
function pageOrderProblem(page: readonly RunListing[], after: string | undefined): string | null {
  if (after !== undefined && page.some((listing) => listing.runId === after)) return `a page that holds its cursor run ${JSON.stringify(cutForMessage(after, MAX_QUOTED_CHARS))}`;
  const at = page.findIndex((listing, i) => i > 0 && compareListings(page[i - 1]!, listing) >= 0);
  return at < 0 ? null : `a page out of order or repeating a run at item ${at} (runs() orders by createdAtMs, then runId)`;
}

/**
 * The last run of the page the store gave just before names no listed run now (its listing row
 * deleted by hand meanwhile): runs() cannot tell where the next page starts.
 */
function listingGone(store: Store, runId: string): StoreError {
  return new StoreError(store.description, 'listRunsPage', 'BAD_READ', { runId }, new Error(
    `the store answered that run ${runId}, the last of the page it had just given, names no listed run (its listing removed meanwhile): call runs() again`,
  ));
}

/** The fence settings a Remit is constructed with (createRemit passes instanceId and effectLeaseMs). */
export interface FenceOptions {
  instanceId: string;
  effectLeaseMs: number;
  /** Tests only: another clock for leases (default Date.now). */
  now: () => number;
  /** Tests only: the fence switched off (fence.ts). Refused outside vitest unless REMIT_ALLOW_CANARY=1. */
  canary: 'off';
}

/** RUN_STARTED.definition of each workflow, encoded once (a workflow is immutable once built). */
const definitions = new WeakMap<Workflow, Uint8Array>();

function definitionBytes(wf: Workflow): Uint8Array {
  let bytes = definitions.get(wf);
  if (bytes === undefined) definitions.set(wf, (bytes = utf8(canonicalDescriptor(wf.descriptor))));
  return bytes;
}

/** The longest waitForEffectMs accepted (a day). */
const MAX_WAIT_MS = 86_400_000;

function canaryAllowed(): boolean {
  return process.env['VITEST'] !== undefined || process.env['REMIT_ALLOW_CANARY'] === '1';
}

function fenceSettings(options: Partial<FenceOptions>): FenceSettings {
  const instanceId = options.instanceId ?? defaultInstanceId();
  checkInstanceId(instanceId);
  const effectLeaseMs = options.effectLeaseMs ?? DEFAULT_EFFECT_LEASE_MS;
  if (!isLeaseMs(effectLeaseMs)) {
    throw new OptionInvalidError('effectLeaseMs', effectLeaseMs, `must be a whole number of milliseconds from 1 to ${MAX_LEASE_MS}`);
  }
  if (options.canary !== undefined && !canaryAllowed()) {
    throw new OptionInvalidError('fence canary', options.canary, 'is for tests only (set REMIT_ALLOW_CANARY=1 outside vitest)');
  }
  // Date.now read at each call, not kept: a test's fake timers installed after createRemit drive its leases too.
  return { instanceId: ownerScoped(instanceId), effectLeaseMs, now: options.now ?? (() => Date.now()), ...(options.canary ? { canary: options.canary } : {}) };
}

/**
 * The id a Remit writes as its attempts' owner: the given id, with the cluster worker's id in a
 * `node:cluster` worker (PM2's cluster mode too) and the thread's in a worker thread. The registry
 * of running effect calls (fence.ts) is module state, one per thread, so a sibling process or
 * thread given the same id (the pod name) would take an attempt another one is executing for an
 * abandoned one of its own and call the handler again. A cluster worker's id is not reused while
 * its primary runs, nor a thread id within a process.
 */
function ownerScoped(instanceId: string): string {
  return `${instanceId}${CLUSTER_WORKER_SCOPE}${isMainThread ? '' : `#thread-${threadId}`}`;
}

/**
 * `#worker-<n>` in a `node:cluster` worker and in the worker threads it starts, else ''. Node hides
 * the cluster from a worker thread (cluster.isWorker is false there, and thread ids start again in
 * every process), so the worker's main thread hands its scope to the threads it starts, through
 * their environment data, when this module loads there: remit must be imported by the worker's main
 * thread before it starts threads that use it.
 */
const CLUSTER_WORKER_SCOPE: string = (() => {
  const key = 'remit:cluster-worker-scope';
  if (cluster.isWorker && cluster.worker !== undefined) {
    const scope = `#worker-${cluster.worker.id}`;
    setEnvironmentData(key, scope);
    return scope;
  }
  const inherited = isMainThread ? undefined : getEnvironmentData(key);
  return typeof inherited === 'string' ? inherited : '';
})();

function checkWaitMs(value: unknown, subject: ErrorSubject = {}): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_WAIT_MS) {
    throw new OptionInvalidError('waitForEffectMs', value, `must be a whole number of milliseconds from 0 to ${MAX_WAIT_MS}`, subject);
  }
  return value;
}

/**
 * The operations running around the current code, of every Remit instance: one storage for the
 * process, not one per instance. Node keeps every AsyncLocalStorage that ever ran in a global list
 * and copies each one into every promise created after it, so one per instance made every await
 * cost more with every instance created (10,000 instances: 60 % of a process's CPU in that copy).
 * A set may hold another instance's operations; close() only looks up its own in it.
 */
const ENCLOSING_OPERATIONS = new AsyncLocalStorage<ReadonlySet<Promise<unknown>>>();

/** The operations close() waits for (every public one that reads or writes the store). */
const TRACKED_OPERATIONS = ['start', 'resume', 'continueRun', 'fork', 'status', 'workflowOf', 'inspect', 'scrub', 'runs', 'recoverAll', 'repair'] as const;
type TrackedOperation = (typeof TRACKED_OPERATIONS)[number];

/** The run a call of `operation` names: start's `runId` option, or the first argument of an operation on one run. */
function runNamedBy(operation: TrackedOperation, args: unknown[]): unknown {
  if (operation === 'start') return (args[2] as { runId?: unknown } | undefined)?.runId;
  return operation === 'runs' || operation === 'recoverAll' ? undefined : args[0];
}

/**
 * StoreError CLOSED, as a closed store gives, for `operation` once close() was called, naming the
 * run when there is one. An id the call would have refused (RunIdInvalidError) is not named: CLOSED
 * comes first, and a NUL, a lone surrogate or megabytes of it would reach the message and the logs.
 */
function closedError(store: string, operation: TrackedOperation, runId: unknown, why: string): StoreError {
  const named = typeof runId === 'string' && runId.length > 0 && runId.length <= MAX_RUN_ID_BYTES && runIdProblem(runId) === null;
  return new StoreError(store, operation, 'CLOSED', named ? { runId } : {}, new Error(`close() was called on this Remit instance: ${why}`));
}

/**
 * The instances not yet closed of each store object. A service may give one store to several
 * instances (two createRemit calls with one openSqliteStore): the close() of one must not close
 * the store under the others' running work (an effect whose handler returned would lose its
 * EFFECT_DONE, and its run wait for the lease), so the last of them to close closes the store.
 * Held weakly: an instance dropped without close() (one per request on a shared store) has no
 * work left to protect (a running operation keeps its instance reachable), and must not be kept.
 */
const STORE_USERS = new WeakMap<Store, Set<WeakRef<Remit>>>();

/** Whether an instance given `store`, other than the ones closed, is still reachable. */
function storeStillUsed(store: Store): boolean {
  const users = STORE_USERS.get(store);
  for (const user of users ?? []) if (user.deref() === undefined) users!.delete(user);
  return users !== undefined && users.size > 0;
}

/**
 * The stores a close() left open because an instance not closed still counted as a user. Such an
 * instance may be one dropped and not yet collected (one per request): once the last user is
 * collected, nothing is left to close the store, which close() was asked to close (a PostgreSQL
 * pool would keep the process alive, a SQLite file stay open), so the collection closes it.
 */
const CLOSE_ASKED = new WeakSet<Store>();

/**
 * The entries of STORE_USERS an instance's collection leaves: how many there are for `store`,
 * dropped instances' included until their collection is seen (for tests; not exported by the package).
 */
export function storeUserEntries(store: Store): number {
  return STORE_USERS.get(store)?.size ?? 0;
}

/**
 * Called once an instance never closed is collected: forgets it among its store's users (else a
 * service making an instance per request on one store kept one entry per request for ever), and
 * closes the store if a close() left it open for it alone.
 */
const STORE_RELEASE = new FinalizationRegistry<{ store: Store; use: WeakRef<Remit> }>(({ store, use }) => {
  STORE_USERS.get(store)?.delete(use);
  if (!CLOSE_ASKED.has(store) || storeStillUsed(store)) return;
  CLOSE_ASKED.delete(store);
  // No caller waits for this close: a failure has nobody to go to (close() would have thrown it).
  store.close().catch(() => {});
});

export class Remit implements Engine {
  private readonly workflows = new Map<string, Workflow>();
  readonly sequencing: SequencingOptions;
  readonly fence: FenceSettings;

  constructor(
    readonly store: Store,
    readonly core: RecoveryCore,
    workflows: readonly Workflow[] = [],
    readonly hooks: SequencerHooks = NO_HOOKS,
    sequencing: Partial<SequencingOptions> = {},
    fence: Partial<FenceOptions> = {},
  ) {
    this.sequencing = { ...DEFAULT_SEQUENCING, ...sequencing };
    const maxSteps = this.sequencing.maxGroupedPureSteps;
    if (!Number.isInteger(maxSteps) || maxSteps < 1) {
      throw new RangeError(`maxGroupedPureSteps must be a positive integer, got ${String(maxSteps)}`);
    }
    this.fence = fenceSettings(fence);
    for (const wf of workflows) this.register(wf);
    if (!STORE_USERS.has(store)) STORE_USERS.set(store, new Set());
    STORE_USERS.get(store)!.add(this.storeUse);
    STORE_RELEASE.register(this, { store, use: this.storeUse }, this.storeUse);
    // Every operation is counted while it runs, so that close() can wait for it (an effect whose
    // handler returned must get its EFFECT_DONE appended, not a closed store).
    for (const name of TRACKED_OPERATIONS) {
      const operation = this[name] as (...args: unknown[]) => Promise<unknown>;
      Object.defineProperty(this, name, { value: (...args: unknown[]) => this.track(name, args, () => operation.apply(this, args)), writable: true, configurable: true });
    }
  }

  /** This instance among the users of its store object (STORE_USERS). */
  private readonly storeUse = new WeakRef(this);

  /** Set by close(): a waitForEffectMs wait stops then (driveWaiting). */
  private closing = false;
  /** The sleeps of waits in progress, each ended early by close() (and forgotten when it ends). */
  private readonly sleeping = new Set<() => void>();

  /** The operations running, each with the ones it runs inside (recoverAll's continueRun, ...). */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Inside an operation: it and the operations around it (close() called from their code must not wait for them). */
  private readonly enclosing = ENCLOSING_OPERATIONS;

  private track<T>(name: TrackedOperation, args: unknown[], start: () => Promise<T>): Promise<T> {
    // A Promise in start's input or a resume value (a field set without await) has its rejection
    // handled, whatever refuses the call (a closed instance, an unknown workflow, a bad id, ...):
    // the value's own fields at once, all it holds once the call is refused.
    const given = name === 'start' ? args[1] : name === 'resume' ? args[2] : undefined;
    if (given !== undefined) handleRejectionsIn(given, false);
    const operation = this.tracked(name, args, start);
    if (given === undefined) return operation;
    // The caller gets this derived Promise: one it leaves unhandled is still reported as before.
    return operation.catch((error: unknown) => {
      handleRejectionsIn(given, true);
      throw error;
    });
  }

  private tracked<T>(name: TrackedOperation, args: unknown[], start: () => Promise<T>): Promise<T> {
    const around = this.enclosing.getStore() ?? new Set<Promise<unknown>>();
    // Once close() is called, a call from outside the instance's operations is refused before it
    // touches the store (a shutdown must not be held open by new work); a call made by running
    // work (recoverAll's continueRun, a handler's start) is part of what close() waits for.
    if (this.closing && !this.runsInsideOperation(around)) {
      return Promise.reject(closedError(this.store.description, name, runNamedBy(name, args), 'it takes no new work; nothing was read or written'));
    }
    const chain = new Set(around);
    const operation = this.enclosing.run(chain, start);
    chain.add(operation);
    this.inFlight.add(operation);
    const forget = () => void this.inFlight.delete(operation);
    operation.then(forget, forget);
    return operation;
  }

  /** True when `around` (the calling context's operations) holds one of this instance's operations. */
  private runsInsideOperation(around: ReadonlySet<Promise<unknown>>): boolean {
    for (const operation of around) if (this.inFlight.has(operation)) return true;
    return false;
  }

  /** This instance's id: the owner written into the effect attempts it claims (in a worker thread, with the thread's id). */
  get instanceId(): string {
    return this.fence.instanceId;
  }

  /**
   * Register a built workflow: runs of its name are driven by its node code from then on, in this
   * instance. A run is bound to a definition (its fingerprint), not to an object: another object of
   * the same definition replaces the registered one for every run of the name, as a restarted
   * process drives the runs with the object it registered (docs/guide.md, "Recovery at start-up").
   */
  register(wf: Workflow): this {
    return this.registerFor('register()', wf);
  }

  /**
   * Register `wf` for `caller` (register(), or start() given a built workflow). Another definition
   * of a registered name is refused, and not registered: the message says that `caller` was given
   * it, and what differs from the registered one.
   */
  private registerFor(caller: string, wf: Workflow): this {
    if (!isBuiltWorkflow(wf)) throw new ArgumentInvalidError('workflow', 'a built workflow (workflow(...)....build())', describeArgument(wf));
    const known = this.workflows.get(wf.name);
    if (known && known.fingerprintHex !== wf.fingerprintHex) {
      throw new DefinitionInvalidError(wf.name, `${caller} was given a definition other than the one registered under this name, and did not register it (${definitionChanges(known, wf)}); ${ONE_DEFINITION_PER_NAME}`);
    }
    this.workflows.set(wf.name, wf);
    return this;
  }

  workflowNamed(name: string): Workflow | undefined {
    return this.workflows.get(name);
  }

  workflowNames(): string[] {
    return [...this.workflows.keys()];
  }

  /** Start a run and drive it until it parks, completes or fails. */
  start<W extends Workflow>(workflow: W, input: InputOf<W>, options?: StartOptions): Promise<RunResult<StateOf<W>>>;
  /**
   * Start a run of the registered workflow of this name: the types know neither its input nor its
   * state (both `unknown`, as `status()` gives); start() checks the input against its schema.
   */
  start(workflow: string, input: unknown, options?: StartOptions): Promise<RunResult<unknown>>;
  async start(workflow: Workflow | string, input: unknown, options: StartOptions = {}): Promise<RunResult<unknown>> {
    if (typeof workflow !== 'string' && !isBuiltWorkflow(workflow)) {
      throw new ArgumentInvalidError('workflow', 'a built workflow (workflow(...)....build()) or the name of a registered one', describeArgument(workflow));
    }
    checkOptionsArgument('start', options, START_OPTIONS, {});
    // An unknown name is refused naming the run id asked for (an id that is not a string is
    // refused by checkStart, after the name).
    const wf = this.resolveWorkflow(workflow, typeof options.runId === 'string' ? { runId: options.runId } : {});
    refuseUnresumable(wf);
    const { runId, state } = checkStart(wf, input, options.runId);
    const started: LogRecord = {
      kind: RecordKind.RUN_STARTED,
      seq: 0,
      runId: utf8(runId),
      workflow: utf8(wf.name),
      version: utf8(wf.version),
      fingerprint: wf.fingerprint,
      definition: definitionBytes(wf),
      nodes: wf.nodeOrder.map((name) => ({ name: utf8(name), kind: nodeKindCode(wf, name) })),
      startNode: utf8(wf.start),
      state: state.bytes,
    };
    // The append at seq 0 commits only if the run has no record: that is the existence check.
    const session = RunSession.fresh(this, runId);
    try {
      await session.append(0, [started]);
    } catch (error) {
      if (error instanceof ConflictError) throw new RunExistsError(runId);
      throw error;
    }
    return this.driveAfterOwnAppend(session);
  }

  /**
   * Resume a parked interrupt with `value`. The run and the interrupt are judged first (a run not
   * parked, an interrupt already consumed or unknown, a damaged log: refused whatever the value),
   * then the value by the interrupt's schema (invalid: refused, nothing recorded), then it is
   * claimed by a conditional append (a second or concurrent resume is refused with
   * AlreadyConsumedError before any node runs), then the run is driven on.
   */
  async resume(runId: string, interruptId: string, value: unknown): Promise<RunResult> {
    checkRunId(runId);
    const parsedId = parseInterruptId(interruptId);
    // No node name is over MAX_NODE_NAME_BYTES (build() refuses one; UTF-8 takes at least a byte
    // per UTF-16 unit): such an id is malformed, refused with the id cut short, not echoed whole.
    if (parsedId === null || parsedId.node.length > MAX_NODE_NAME_BYTES || utf8(parsedId.node).length > MAX_NODE_NAME_BYTES) {
      // resume(interruptId, runId, ...): the run id given is shaped as an interrupt id.
      const swapped = typeof interruptId === 'string' && parseInterruptId(runId) !== null
        ? ` (the run id ${describeArgument(runId)} has an interrupt id's form: if the first two arguments were swapped, resume takes (runId, interruptId, value))`
        : '';
      throw new ArgumentInvalidError('interruptId', INTERRUPT_ID_EXPECTED, `${describeArgument(interruptId)}${swapped}`, { runId });
    }
    const session = await this.openRun(runId);
    const wf = session.workflowFor(session.recover());
    const nodeName = parsedId.node;
    const def = wf.nodes.get(nodeName);
    if (!def || def.kind !== 'interrupt') {
      throw new UnknownInterruptError(interruptId, { runId, seq: session.recover().recordCount - 1 }, `workflow ${wf.name} has no interrupt node ${JSON.stringify(nodeName)}; ids look like node@seq`);
    }
    // The interrupt first: a spent or unknown id is refused as such (AlreadyConsumedError,
    // UnknownInterruptError, ...) whatever the value, and a value error's "the interrupt was not
    // consumed" is then true: it is parked and open.
    const request: AdmissionRequest = { tag: 'RESUME', interruptId: utf8(interruptId) };
    let admission = await session.admitReadingLog(request);
    if (!admission.accepted) throw await this.resumeRefusal(admission, session, { interruptId, node: nodeName, claim: () => this.claimOf(def.spec.resume, value, runId) });
    const encoded = checkedResumeValue(session, def.spec.resume, { runId, seq: admission.seq, node: nodeName }, interruptId, value);
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) {
        admission = await session.admitReadingLog(request);
        if (!admission.accepted) throw await this.resumeRefusal(admission, session, { interruptId, node: nodeName, claim: () => encoded });
      }
      const claim: LogRecord = { kind: RecordKind.RESUME_CLAIMED, seq: admission.seq, interruptId: utf8(interruptId), value: encoded };
      try {
        await session.append(admission.seq, [claim], nodeName);
        break;
      } catch (error) {
        if (error instanceof StoreError && error.storeCode === 'OUTCOME_UNKNOWN') throw claimOutcomeUnknown(error, interruptId, admission.seq);
        // Another writer got there first: ask the core again; it names the winner. The session
        // holds the winner's records when the store reported them with the refusal (no read).
        if (!(error instanceof ConflictError) || attempt >= 3) throw error;
        if (session.needsReload) await session.reload();
      }
    }
    const claimSeq = admission.seq;
    try {
      await this.hooks.at('resume.after-claim', { runId, seq: session.recover().recordCount, node: nodeName, kinds: ['RESUME_CLAIMED'] });
      return await this.driveAfterOwnAppend(session);
    } catch (error) {
      // The claim stands whatever the drive met after it: say so, or the winner cannot tell it won.
      // An error that is not REMIT's (the core out of memory, a custom store's own error) keeps
      // its class and message and is given claimSeq alone.
      throw error instanceof RemitError ? afterOwnClaim(error, interruptId, claimSeq) : withClaimSeq(error, claimSeq);
    }
  }

  /**
   * Drive a run whose RUN_STARTED or RESUME_CLAIMED this call has just made durable. When another
   * sequencer takes the run over meanwhile (it appended first, or holds an effect attempt), this
   * call's record still stands, so an error saying "nothing was written" would be false: it
   * resolves with the run as it stands in the store (status `running` while the other drives it).
   */
  private async driveAfterOwnAppend(session: RunSession): Promise<RunResult> {
    try {
      return await session.drive();
    } catch (error) {
      if (!(error instanceof ConflictError || error instanceof EffectInFlightError)) throw error;
      await session.reload();
      return session.result(session.recover());
    }
  }

  /**
   * Drive an existing run from its durable head (after a crash, a thrown error, a fork). With
   * `fromSeq`, refuse unless it is the head: going back in time needs an explicit fork. With
   * `waitForEffectMs`, wait (bounded) for another sequencer's effect attempt instead of throwing
   * EffectInFlightError at once.
   */
  async continueRun(runId: string, options: ContinueOptions = {}): Promise<RunResult> {
    checkRunId(runId);
    checkOptionsArgument('continueRun', options, CONTINUE_OPTIONS, { runId });
    if (options.fromSeq !== undefined) checkSeqArgument('fromSeq', options.fromSeq, { runId });
    const waitMs = checkWaitMs(options.waitForEffectMs, { runId });
    // Read as without fromSeq (from the stored summary and the records after its snapshot): the
    // summary decides CONTINUE_FROM (docs/core-api.md, "Admission from a summary").
    const session = await this.openRun(runId);
    session.recover();
    if (options.fromSeq !== undefined) {
      const requestedSeq = options.fromSeq;
      const request = { tag: 'CONTINUE_FROM', seq: requestedSeq } as const;
      let admission = await session.admitReadingLog(request);
      if (!admission.accepted) {
        // The fork the message suggests must be one fork() accepts: only at a checkpoint.
        const requestedIsCheckpoint = admission.reason === RefusalReason.IMPLICIT_FORK && (await session.isCheckpoint(requestedSeq));
        // Asked again: isCheckpoint may have read the whole log again (a record that did not read),
        // and another writer may have appended since the first read; the answer is that read's.
        admission = await session.admitReadingLog(request);
        if (!admission.accepted) throw this.refusal(admission, runId, session, { requestedSeq, requestedIsCheckpoint });
      }
    }
    return this.driveWaiting(session, waitMs);
  }

  /**
   * Drive; while another sequencer holds the run (EffectInFlightError, or ConflictError: it
   * appended first), read the log again and retry until `waitMs` has passed. Polls every 20 ms at
   * first, backing off to 500 ms, and never sleeps past the in-flight lease's expiry. Once close()
   * is called it waits no more: it throws the error it was waiting out, as when the wait runs out,
   * so that a shutdown is not held for the wait and no handler is called after the close began.
   */
  private async driveWaiting(session: RunSession, waitMs: number): Promise<RunResult> {
    // Timed by the monotonic clock: the wall clock (the fence's, which leases are judged by) may be
    // stepped, and a wait of 1 s took 6 s with it set back 5 s. REMIT's own (timers.ts): a test's
    // fake timers would otherwise hold the wait.
    const deadline = internalTimers.monotonicNow() + waitMs;
    let pollMs = 20;
    for (;;) {
      try {
        return await session.drive();
      } catch (error) {
        if (!(error instanceof EffectInFlightError || error instanceof ConflictError)) throw error;
        const left = deadline - internalTimers.monotonicNow();
        if (left <= 0 || this.closing) throw error;
        const retryAfter = error instanceof EffectInFlightError ? error.retryAfterMs : 0;
        await this.sleepUnlessClosed(Math.max(1, Math.min(left, pollMs, retryAfter > 0 ? retryAfter : pollMs)));
        if (this.closing) throw error;
        pollMs = Math.min(pollMs * 2, 500);
        await session.reload();
        // close() may have been called during the read (a round trip on a networked store): the
        // next drive could claim the next attempt and call its handler, which close() rules out.
        if (this.closing) throw error;
      }
    }
  }

  /** Sleeps `ms`, or less: until close() is called (the timer is cleared then). */
  private sleepUnlessClosed(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        internalTimers.clearTimeout(timer);
        this.sleeping.delete(wake);
        resolve();
      };
      const timer = internalTimers.setTimeout(wake, ms);
      this.sleeping.add(wake);
    });
  }

  /**
   * Create a new run from `runId`'s checkpoint at `checkpointSeq`: a byte copy of records
   * 0..checkpointSeq and a FORKED record, in one atomic store operation. The source is not
   * touched. The new run is not driven: call continueRun(fork.runId). Until then recoverAll leaves
   * it alone (RunSummary.undrivenFork), so a fork made to look at a run never runs its effects.
   */
  async fork(runId: string, checkpointSeq: number, options: ForkOptions = {}): Promise<ForkResult> {
    checkRunId(runId);
    checkSeqArgument('checkpointSeq', checkpointSeq, { runId });
    // -0 passes as seq 0; the result reports it as 0, the seq the FORKED record names.
    checkpointSeq = Math.abs(checkpointSeq);
    checkOptionsArgument('fork', options, FORK_OPTIONS, { runId });
    if (options.newRunId !== undefined) checkRunId(options.newRunId, NEW_RUN_ID_ARGUMENT, { runId });
    // A fork copies a prefix up to any checkpoint and chains to it: it reads the whole log.
    const session = await this.openRun(runId, { wholeLog: true });
    const recovered = session.recover();
    const admission = session.admit({ tag: 'FORK_AT', seq: checkpointSeq });
    if (!admission.accepted) throw this.refusal(admission, runId, session, { requestedSeq: checkpointSeq });
    // The checkpoint's state must be readable: a fork of an unreadable one (damage a later snapshot
    // hides from the source's own reads) would be a new run born damaged.
    const prefix = session.bytes.subarray(0, admission.offset);
    headState(prefix, checkRecovery(recoverInPieces(this.core, prefix), runId), runId);
    const newRunId = options.newRunId ?? defaultForkRunId(runId);
    checkRunId(newRunId);
    // The fork's keys name its own run id; its effect nodes are in the copied RUN_STARTED.
    const table = runStartedRecord(session.bytes, runId).nodes;
    const effectNodes = table.filter((n) => n.kind === NodeKind.EFFECT).map((n) => fromUtf8(n.name));
    checkEffectKeysFit(newRunId, effectNodes, options.newRunId === undefined ? undefined : NEW_RUN_ID_ARGUMENT, { runId });
    const intent = durableValue('fork intent', options.intent ?? null, null, { runId, seq: checkpointSeq });
    const forked: LogRecord = {
      kind: RecordKind.FORKED,
      seq: admission.seq,
      sourceRunId: recovered.runId,
      sourceSeq: checkpointSeq,
      runId: utf8(newRunId),
      intent: intent.bytes,
    };
    const info = { runId, seq: admission.seq, targetRunId: newRunId, kinds: ['FORKED'] };
    await this.hooks.at('fork.before-store', info);
    // Format 2, chained to the checkpoint it follows (the last record of the copied prefix).
    const forkedBytes = encodeRecordWithinLimits(forked, chainValueBefore(session.bytes, admission.offset), { runId });
    const outcome = checkedForkOutcome(this.store, newRunId, admission.seq, await this.store.fork(runId, checkpointSeq + 1, newRunId, forkedBytes, statusAfterRecords([forked])));
    if (!outcome.committed) {
      if (outcome.reason === 'TARGET_EXISTS') throw new ForkTargetExistsError(newRunId, { runId, seq: checkpointSeq });
      throw new StoreError(this.store.description, 'fork', outcome.reason, { runId, seq: checkpointSeq });
    }
    await this.hooks.at('fork.after-store', info);
    return { runId: newRunId, sourceRunId: runId, checkpointSeq, forkSeq: admission.seq };
  }

  /**
   * The registered workflow that would drive `runId`, checked as continueRun and resume check it,
   * without moving the run: UnknownWorkflowError when this instance registers no workflow of the
   * run's name, DefinitionMismatchError (with its differences) when the one it registers is not
   * the definition the run was started under. A fork of the run is a run of the same definition.
   */
  async workflowOf(runId: string): Promise<Workflow> {
    checkRunId(runId);
    const session = await this.openRun(runId);
    return session.workflowFor(session.recover());
  }

  /**
   * Where a run stands, without moving it. A damaged log throws LogTornError or LogCorruptError
   * (also a run the store lists without records: NO_RECORDS).
   */
  async status(runId: string): Promise<RunResult> {
    checkRunId(runId);
    const session = await this.openRun(runId);
    return session.result(session.recover());
  }

  /**
   * The run's session, its log recovered. A run the store lists but keeps no record of is the
   * damage `runs` and `recoverAll` report (LogCorruptError, NO_RECORDS, with log-health's advice),
   * not RunNotFoundError, which stays for a run the store does not list.
   */
  private async openRun(runId: string, options: { wholeLog?: boolean } = {}): Promise<RunSession> {
    const opened = openedIfFound(await RunSession.open(this, runId, options));
    if (opened !== null) return opened;
    const rows = await this.readListedRecords(runId);
    if (rows.length === 0) throw damageError(runId, missingRecordsDamage(runId));
    // Started between the two reads: its records are there now. Should the session's own read
    // still find none (a readRun behind readRecords: a replica), it is opened by the read that
    // found them, a whole read.
    return openedIfFound(await RunSession.open(this, runId, options)) ?? RunSession.open(this, runId, { ...options, wholeLog: true });
  }

  /**
   * The run's stored records, for the views that read them all (inspect, scrub, repair): none
   * for a run the store lists without records (which diagnoseRows reports as NO_RECORDS damage),
   * RunNotFoundError for a run it does not list. Only an empty read asks whether the run is
   * listed (one row through `readStatusHint` where the store has it, else the whole listing), so
   * a run's own reads cost nothing more. A store writes a run's listing with its first record: a
   * run listed after an empty read was started meanwhile, and the second read finds its records.
   */
  private async readListedRecords(runId: string): Promise<StoredRecord[]> {
    const rows = checkedRecords(this.store, 'readRecords', runId, await this.store.readRecords(runId));
    if (rows.length > 0) return rows;
    const listed = this.store.readStatusHint !== undefined
      ? (await this.store.readStatusHint(runId)) !== null
      : checkedListings(this.store, await this.store.listRuns()).some((listing) => listing.runId === runId);
    if (!listed) throw new RunNotFoundError(runId);
    return checkedRecords(this.store, 'readRecords', runId, await this.store.readRecords(runId));
  }

  /**
   * The log rendered for people: one row per record plus the recovered summary (and the damage, if
   * any: a run the store lists without records is `damaged`, NO_RECORDS, with no rows).
   */
  async inspect(runId: string): Promise<RunInspection> {
    checkRunId(runId);
    return inspectLog(runId, await this.readListedRecords(runId), this.core);
  }

  /**
   * Re-verify a run from its first record (docs/guide.md, "Fresh-process resume"): the whole log
   * is recovered, and the stored recovery summary (if the store keeps one) is recomputed from the
   * records it covers and compared byte for byte, with its record count, byte length and snapshot
   * seq. A fresh process checks only that the records after the summary line up with it and
   * chain from it, so a summary that is well formed but wrong (`summaryAgrees: false`) is found
   * here and nowhere else. The run's stored status hint (if the store has `readStatusHint`) is
   * compared with the status the log recovers to (`statusHintAgrees`): recoverAll trusts a
   * parked, completed or failed hint without reading the run, so a wrong one (a hand edit) is
   * found here too, and `repair` corrects it.
   */
  async scrub(runId: string): Promise<ScrubReport> {
    checkRunId(runId);
    for (let read = 1; ; read++) {
      let rows = await this.readListedRecords(runId);
      const hint = (await this.store.readStatusHint?.(runId)) ?? null;
      // The hint is judged against the records read only when it was read at the same record
      // count: a run that moved in between is read again (a run driven all along is not judged).
      if (hint !== null && hint.recordCount !== rows.length && read < SCRUB_READS) continue;
      // Still counting more on the last read: the store may cut its whole reads short (said so,
      // READS_CUT_SHORT), or the run grew (the newer read is scrubbed).
      if (hint !== null && hint.recordCount > rows.length) rows = (await checkWholeRead(this.store, runId, rows.length)) ?? rows;
      const log = concatBytes(rows.map((r) => r.bytes));
      const summary = await this.summaryAgreement(runId, log, rows.length, read < SCRUB_READS);
      if (summary === 'moved') continue;
      const recovery = recoverInPieces(this.core, log);
      const damage = diagnoseRows(runId, rows, recovery) ?? diagnoseValues(runId, rows, log);
      const logStatus = damage === null && recovery.ok ? hintOfStatus(STATUS_NAMES[recovery.status]) : null;
      const unlisted = hint === null && rows.length > 0 && this.store.relistRun !== undefined;
      return {
        runId, records: rows.length, logBytes: log.length, damage, ...summary,
        logStatus, ...hintAgreement(hint, rows.length, logStatus), ...(unlisted ? { unlisted: true as const } : {}),
      };
    }
  }

  /**
   * The run's stored recovery summary (if the store keeps one) recomputed from `log`, the run's
   * whole log of `recordCount` records, and compared; 'moved' when the run changed after `log` was
   * read and `mayReadAgain` (scrub reads it all again). On its last read, the summary is judged
   * against the newer read, never against a read known to be behind the store.
   */
  private async summaryAgreement(runId: string, log: Uint8Array, recordCount: number, mayReadAgain: boolean): Promise<Pick<ScrubReport, 'summaryRecords' | 'summaryAgrees'> | 'moved'> {
    const found = (await this.store.readSummary?.(runId)) ?? null;
    if (found === null) return { summaryRecords: null, summaryAgrees: null };
    const stored = found.summary;
    // Covering more records than were read: a wrong summary, unless the store cut its read short
    // (StoreError READS_CUT_SHORT), where repair would delete a sound summary for a wrong read,
    // or another process wrote meanwhile (the summary may cover its records: judged on a newer read).
    if (stored.recordCount > recordCount) {
      const newer = await checkWholeRead(this.store, runId, recordCount);
      if (newer !== null && mayReadAgain) return 'moved';
      if (newer !== null) log = concatBytes(newer.map((r) => r.bytes));
    }
    const core = openSummary(stored);
    if (core === null || stored.byteLength > log.length) return { summaryRecords: stored.recordCount, summaryAgrees: false };
    const fed = feedInPieces(this.core, EMPTY_SUMMARY_AT, log, stored.byteLength);
    const summaryAgrees =
      fed !== null &&
      fed.recovery.ok &&
      fed.recovery.durableLen === stored.byteLength &&
      fed.recovery.recordCount === stored.recordCount &&
      fed.recovery.snapshotSeq === stored.snapshotSeq &&
      bytesEqual(fed.at.summary, inCurrentEncoding(this.core, core));
    return { summaryRecords: stored.recordCount, summaryAgrees };
  }

  /**
   * Every run with its status, in the store's listing order, or a page of them (`limit`, `after`:
   * RunsOptions), by creation time then run id; a damaged run is `damaged`, with `damage` saying where and what to
   * do. On a store whose listing reports status hints, each run's hint and whether it agrees with
   * the log just read (`statusHintAgrees`), as scrub does: no more reads than the logs. A run the
   * Wasm core has no memory for (CoreOutOfMemoryError) is read with the reference core.
   */
  async runs(options?: RunsOptions): Promise<RunSummary[]> {
    if (arguments.length > 1) {
      throw new ArgumentInvalidError('runs()', 'called with at most one argument (its options: { limit, after, status })', `${arguments.length} arguments`);
    }
    checkOptionsArgument('runs', options, RUNS_OPTIONS, {});
    checkRunsOptions(options ?? {});
    // Each run's log is read only for the page asked (listingsToExamine).
    const wanted = statusesWanted(options?.status);
    const out: RunSummary[] = [];
    // Reading thousands of logs on SQLite (synchronous reads) would hold the event loop for the whole listing.
    const pause = eventLoopPacer();
    for await (const listing of listingsToExamine(this.store, options ?? {})) {
      await pause();
      const base = { runId: listing.runId, createdAtMs: listing.createdAtMs, updatedAtMs: listing.updatedAtMs };
      const examined = await this.examine(listing.runId, this.core, listing.nextSeq).catch(async (error: unknown): Promise<ExaminedRun> => {
        // A run the Wasm core has no memory for (a failure message or fork intent near the payload
        // limit, which its summary keeps) is listed from the reference core, which answers as the
        // Wasm core would (the equivalence suite): a listing that threw would hide every other run.
        if (error instanceof CoreOutOfMemoryError) return this.examine(listing.runId, reference, listing.nextSeq);
        // One run whose rows the store cannot read is listed as damaged; the others still are.
        const damage = unreadableRunDamage(error);
        if (damage === null) throw error;
        return { workflow: '?', status: 'damaged', headSeq: -1, damage };
      });
      if (wanted !== null && !wanted.has(examined.status)) continue;
      out.push({ ...base, ...examined, ...listedHint(listing, examined) });
      // Here, not before the next listing is taken: a store's next page is read only if needed.
      if (options?.limit !== undefined && out.length >= options.limit) break;
    }
    return out;
  }

  /**
   * One run's whole log read and recovered: what `runs` says about it. A read of fewer records than
   * the listing counts (`listed`, its next seq) is checked as one cut short (StoreError
   * READS_CUT_SHORT), or replaced by the newer read when the run grew: a parked run is never
   * listed as running from a read that left its last records out.
   */
  private async examine(runId: string, core: RecoveryCore, listed: number): Promise<ExaminedRun> {
    let rows = checkedRecords(this.store, 'readRecords', runId, await this.store.readRecords(runId));
    if (listed > rows.length && rows.length > 0) rows = (await checkWholeRead(this.store, runId, rows.length)) ?? rows;
    // Listed but without a record: a store writes a run's listing with its first record, so only
    // damage (a hand edit, a partial restore) makes one; it is shown, never skipped or "empty".
    if (rows.length === 0) return { workflow: '?', status: 'damaged', headSeq: -1, damage: missingRecordsDamage(runId) };
    const log = concatBytes(rows.map((r) => r.bytes));
    const recovery = recoverInPieces(core, log);
    const damage = diagnoseRows(runId, rows, recovery);
    if (damage !== null) {
      const workflow = recovery.ok ? fromUtf8(recovery.workflow) : workflowOfFirstRecord(log);
      return { workflow, status: 'damaged', headSeq: damage.seq - 1, damage };
    }
    assert(recovery.ok, () => `run ${runId}: the core refused a log that diagnosis found sound`);
    const status = STATUS_NAMES[recovery.status];
    assert(status !== 'empty', () => `run ${runId}: a sound log of ${rows.length} records recovered as empty`);
    const examined: ExaminedRun = { workflow: fromUtf8(recovery.workflow), status, headSeq: recovery.recordCount - 1 };
    if (recovery.action.tag === 'AWAIT_RESUME') examined.interruptId = fromUtf8(recovery.action.interruptId);
    if (examined.status === 'running' && isUndrivenFork(log, rows[rows.length - 1]!.bytes.length, runId)) examined.undrivenFork = true;
    return examined;
  }

  /**
   * Continue every running run of a registered workflow (call at service start-up). A run whose
   * effect attempt is in flight elsewhere is reported with its EffectInFlightError, unless
   * `waitForEffectMs` lets each continue wait for it. Each run is read as a fresh process reads it
   * (record 0 and the records from its stored summary's snapshot on): a run damaged in those
   * records is not touched; it is reported with its typed error (LogTornError, LogCorruptError), so
   * that start-up logs show it (damage before the snapshot is scrub's to find, and does not change
   * the run's recovery: docs/guide.md, "Damaged runs"). So is a
   * running run of a workflow this instance does not have registered (UnknownWorkflowError, naming
   * the workflow and the registered ones): it is left as it is, for an instance that has it. A
   * fork that nobody has continued (`RunSummary.undrivenFork`: its last record is FORKED) is left
   * alone and not reported, as a parked run is: only continueRun drives it, so that forking a run to
   * look at it never runs the fork's effects at the next start-up.
   *
   * Which runs it looks at (docs/guide.md, "Recovery at start-up"): on a store with
   * `listRunsToRecover`, only the runs whose status hint is running or unknown, so its cost follows
   * those, not every stored run; each is still read and recovered, continued only if the core
   * finds it running, and a hint found stale (parked, completed or failed) is corrected. A stored
   * value that is not a status counts as unknown (the run is listed, read and its hint corrected).
   * The index is trusted the other way, on purpose (start-up cost, bench/README.md "recoverAll at
   * start-up"): a run whose hint is parked, completed or failed is not read, so a run damaged at
   * rest after it parked or ended, and a running run whose hint was changed by hand to one of
   * those, are not seen here; `scrub` (and `runs`) report both, and `repair` corrects the hint. On
   * a store without the method, every stored run.
   */
  async recoverAll(options: RecoverAllOptions = {}): Promise<RecoverAllOutcome[]> {
    checkOptionsArgument('recoverAll', options, RECOVER_ALL_OPTIONS, {});
    const waitForEffectMs = checkWaitMs(options.waitForEffectMs);
    const concurrency = checkConcurrency(options.concurrency);
    const candidates = await this.recoveryCandidates();
    // One slot per candidate: the outcomes keep the candidates' order whatever order runs end in.
    const looked: CandidateLook[] = new Array<CandidateLook>(candidates.length).fill(undefined);
    let next = 0;
    // Thousands of candidates read on SQLite (synchronous reads) would hold the event loop throughout.
    const pause = eventLoopPacer();
    const takeUp = async (): Promise<void> => {
      // close() was called: the run being continued is finished, no other is taken up.
      while (next < candidates.length && !this.closing) {
        await pause();
        if (next >= candidates.length || this.closing) break;
        const index = next++;
        const runId = candidates[index]!;
        // recoverCandidate reports every failure as the run's outcome; this catch is for a throw it
        // did not foresee, which must not end the other workers' loops while the caller has returned.
        looked[index] = await this.recoverCandidate(runId, waitForEffectMs).catch((error: unknown) => ({ runId, error }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, candidates.length) }, takeUp));
    const out: RecoverAllOutcome[] = [];
    const corrections: RunStatusCorrection[] = [];
    for (const [index, runId] of candidates.entries()) {
      const look = looked[index];
      // Not looked at (close() was called): reported, and the next process's recoverAll takes it up.
      if (index >= next) out.push({ runId, error: closedError(this.store.description, 'recoverAll', runId, 'recoverAll took up no other run; this one was not looked at') });
      else if (look !== undefined && 'recordCount' in look) corrections.push(look);
      else if (look !== undefined) out.push(look);
    }
    try {
      await this.correctStatusHints(corrections);
    } catch (error) {
      // The hints are only hints (the log is the truth): the runs recovered above are still
      // reported; each run whose hint could not be corrected carries the store's error.
      for (const { runId } of corrections) out.push({ runId, error });
    }
    return out;
  }

  /**
   * One candidate of recoverAll: its outcome (continued, or the typed error why not), the hint to
   * store for a run found parked, completed or failed (it is not reported), or nothing (a fork
   * nobody continued, which waits for continueRun).
   */
  private async recoverCandidate(runId: string, waitForEffectMs: number): Promise<CandidateLook> {
    let session: RunSession;
    let recovered: RecoveredRun;
    try {
      // Read as status() and continueRun read a run: record 0 and the records from its stored
      // summary's snapshot on (the whole log when it has none), so start-up costs each run its
      // tail, not its history. Damage in what that reads is thrown named (LogTornError,
      // LogCorruptError, with advice); damage before the snapshot is scrub's to find (guide,
      // "Fresh-process resume"), as it is for continueRun.
      session = await this.openRun(runId);
      recovered = session.recover();
    } catch (error) {
      // One run the store cannot read (damage, a lost connection) is that run's outcome: the
      // other runs are still recovered and reported.
      return { runId, error };
    }
    const status = STATUS_NAMES[recovered.status];
    if (status === 'parked' || status === 'completed' || status === 'failed') {
      return { runId, recordCount: recovered.recordCount, runStatus: status };
    }
    if (status !== 'running') return undefined;
    // A fork that nobody continued waits for continueRun, as a parked run waits for resume.
    if (endsInOwnFork(recovered)) return undefined;
    const workflow = fromUtf8(recovered.workflow);
    // Reported, not skipped: a service whose `workflows` misses one would otherwise never
    // recover that workflow's runs, and nothing would say so.
    if (!this.workflows.has(workflow)) return { runId, error: new UnknownWorkflowError(workflow, this.workflowNames(), { runId }, { ofStartedRun: true }) };
    if (this.closing) {
      // close() was called while this run was read: it is not continued (a continue could call
      // a handler after the close began).
      return { runId, error: closedError(this.store.description, 'recoverAll', runId, 'recoverAll read this run and did not continue it') };
    }
    try {
      // Driven as continueRun drives it, from this read: reading the run again would cost its
      // tail twice. A sequencer that appended since is caught up on by the conditional append.
      return { runId, result: await this.driveWaiting(session, waitForEffectMs) };
    } catch (error) {
      return { runId, error };
    }
  }

  /** The runs recoverAll looks at: the store's candidates when it lists them, else every run. */
  private async recoveryCandidates(): Promise<string[]> {
    const ids = this.store.listRunsToRecover !== undefined
      ? checkedRunIds(this.store, await this.store.listRunsToRecover())
      : checkedListings(this.store, await this.store.listRuns()).map((listing) => listing.runId);
    // Each run once: a custom store may list one twice (its contract asks for a superset), and
    // two workers on one run would race each other (one outcome an EffectInFlightError).
    return [...new Set(ids)];
  }

  /**
   * The candidates the core found not running: their hint was unknown (stored before the store
   * kept hints, or repaired) or stale. One store call for all of them (after an upgrade that is
   * every stored run); each is written only while its run holds the records read, so a resume
   * that raced this look keeps its own hint.
   */
  private async correctStatusHints(corrections: RunStatusCorrection[]): Promise<void> {
    if (corrections.length === 0 || this.store.correctRunStatuses === undefined || this.store.listRunsToRecover === undefined) return;
    await this.store.correctRunStatuses(corrections);
  }

  /**
   * Repair a damaged run whose last record is torn or empty: remove that record, only when losing
   * it is the same as a crash just before it was written (a record the sequencer writes for its
   * own progress; docs/guide.md, "Damaged runs"). Refuses with RepairRefusedError otherwise (a
   * checksum failure, a resume claim, a fork record, a run's first record), changing nothing. A
   * run that is not damaged keeps its records; its stored status hint, when it disagrees with the
   * log (scrub's `statusHintAgrees: false`), is corrected to the log's status, and its stored
   * summary, when it disagrees, is deleted. The run is not driven: call continueRun next.
   */
  async repair(runId: string): Promise<RepairResult> {
    checkRunId(runId);
    const rows = await this.readListedRecords(runId);
    // Records without a listing (a row deleted by hand): listed again first, so that runs() and
    // recoverAll see the run whatever else the repair finds.
    const relisted = rows.length > 0 && this.store.relistRun !== undefined && (await this.store.readStatusHint?.(runId)) === null
      && (await this.store.relistRun(runId));
    if (relisted) {
      const result = await this.repair(runId);
      // The listing was changed: the repair's own "nothing was changed" means nothing else was.
      const rest = result.note.replace(/; nothing was changed$/, '; nothing else was changed');
      return { ...result, relisted: true, note: `its records were stored without a listing, and it was listed again (runs() and recoverAll see it); ${rest}` };
    }
    const log = concatBytes(rows.map((r) => r.bytes));
    const recovery = recoverInPieces(this.core, log);
    const damage = diagnoseRows(runId, rows, recovery) ?? diagnoseValues(runId, rows, log);
    if (damage === null) {
      assert(recovery.ok, () => `run ${runId}: the core refused a log that diagnosis found sound`);
      const logStatus = hintOfStatus(STATUS_NAMES[recovery.status]);
      assert(logStatus !== null, () => `run ${runId}: a sound log with records recovered as empty`);
      return this.repairSoundLog(runId, log, rows.length, logStatus);
    }
    if (!damage.repairable) {
      // A run listed without records has nothing to remove: the refusal names the damage and what to do.
      throw new RepairRefusedError(runId, damage.seq, damage.code === 'NO_RECORDS' ? `NO_RECORDS: ${damage.why}; ${damage.advice}` : damage.why);
    }
    const last = rows[rows.length - 1] as StoredRecord;
    if (last.seq !== damage.seq) throw new RepairRefusedError(runId, damage.seq, `the damaged record is not the last one stored (seq ${last.seq} is)`);
    if (this.store.removeLastRecord === undefined) {
      throw new RepairRefusedError(runId, damage.seq, `the store ${this.store.description} cannot remove a record (it has no removeLastRecord)`);
    }
    const removed = await this.store.removeLastRecord(runId, damage.seq, last.bytes);
    if (!removed) throw new RepairRefusedError(runId, damage.seq, 'the run changed while it was being repaired (another process wrote or repaired it); read it again');
    return {
      runId, removedSeq: damage.seq, removedKind: damage.recordKind, removedBytes: last.bytes.length, summaryRemoved: false, statusHintCorrected: null,
      note: damage.why, headSeq: damage.seq - 1,
    };
  }

  /**
   * Why a stored hint's record count (`counted`) is not the `read` records of the log: another
   * process appended meanwhile (records past `read` are there now: repair again), or the store's
   * listing contradicts its records, which only a hand edit makes (a record deleted, a PostgreSQL
   * run row's next_seq changed): "repair it again" would then be said for ever.
   */
  private async hintCountNote(runId: string, counted: number, read: number): Promise<string> {
    // Records past a whole read: another process wrote meanwhile, or the store cut its read short (which throws).
    const grown = counted > read ? await checkWholeRead(this.store, runId, read) : null;
    if (grown !== null) return `its status hint was not compared: the store counts ${counted} records where ${read} were read (another process changed the run meanwhile: repair it again)`;
    return `its status hint was not compared: the store counts ${counted} records where ${read} are stored (read twice): its listing contradicts its records, which only a hand edit makes `
      + `(a record deleted, a count changed); restore the run from a backup (on PostgreSQL, docs/postgres.md, INCONSISTENT, says how to set the run row's count from its records)`;
  }

  /**
   * A sound log of `recordCount` records (`logStatus` its status). A stored status hint that
   * disagrees with it (scrub's `statusHintAgrees: false`) is corrected through the store's
   * conditional `correctRunStatuses` (written only while the run holds those records; refused,
   * changing nothing, when it moved). A stored recovery summary that disagrees with it
   * (`summaryAgrees: false`) is then deleted (always safe: it is derived, and the next appends
   * store a new one), so that no fresh process trusts it. Anything else: nothing to do. A store
   * that lacks what a correction needs is refused before anything is written.
   */
  private async repairSoundLog(runId: string, log: Uint8Array, recordCount: number, logStatus: RunStatusHint): Promise<RepairResult> {
    const headSeq = recordCount - 1;
    const notes: string[] = [];
    const hint = (await this.store.readStatusHint?.(runId)) ?? null;
    const hintWrong = hint !== null && hintAgreement(hint, recordCount, logStatus).statusHintAgrees === false;
    // Judged on a newer read when the run moved after `log` was read (so never 'moved' here).
    const summary = await this.summaryAgreement(runId, log, recordCount, false);
    const summaryWrong = summary !== 'moved' && summary.summaryAgrees === false;
    const stored = hint === null ? 'unknown' : describeStoredHint(hint);
    if (hint !== null && hint.recordCount !== recordCount) notes.push(await this.hintCountNote(runId, hint.recordCount, recordCount));
    if (hintWrong && this.store.correctRunStatuses === undefined) {
      throw new RepairRefusedError(runId, headSeq, `the stored status hint ${stored} disagrees with the log (${logStatus}), and the store ${this.store.description} cannot correct it (it has no correctRunStatuses)`);
    }
    if (summaryWrong && this.store.deleteSummary === undefined) {
      throw new RepairRefusedError(runId, headSeq, `the stored recovery summary disagrees with the log, and the store ${this.store.description} cannot delete it (it has no deleteSummary)`);
    }
    let statusHintCorrected: RunStatusHint | null = null;
    if (hintWrong) {
      // The store call names no run (it takes many); its failure (a full disk) names this one.
      const written = await this.store.correctRunStatuses!([{ runId, recordCount, runStatus: logStatus }]).catch((error: unknown) => {
        throw error instanceof RemitError ? namingRun(error, { runId }) : error;
      });
      if (written !== 1) throw new RepairRefusedError(runId, headSeq, 'the run changed while its status hint was being corrected (another process wrote to it); read it again');
      statusHintCorrected = logStatus;
      const listed = logStatus === 'running' ? ' (recoverAll lists and continues the run again)' : '';
      notes.push(`its status hint ${stored} disagreed with the log and was corrected to ${logStatus}${listed}`);
    }
    if (summaryWrong) {
      await this.store.deleteSummary!(runId);
      notes.push('its stored recovery summary disagreed with it and was deleted (a fresh process reads the whole log until the sequencer stores the next one)');
    }
    const note = notes.length === 0
      ? 'the log is not damaged, and its stored recovery summary and status hint (if any) agree with it; nothing was changed'
      : `the log is not damaged; ${notes.join('; ')}`;
    return { runId, removedSeq: null, removedKind: null, removedBytes: 0, summaryRemoved: summaryWrong, statusHintCorrected, note, headSeq };
  }

  /**
   * Wait for every operation of this instance still running (a start, resume, continue... and the
   * handlers they are calling), then close the store, unless another instance not yet closed was
   * given the same store object (the last one closes it). From the call on, the instance takes no new
   * work: a call from outside its running operations fails with StoreError CLOSED before it
   * touches the store (a call their handlers make is waited for), and recoverAll takes up no other
   * run (each one left is in its outcomes with that error). A waitForEffectMs
   * wait (continueRun, recoverAll) stops when close() is called: that call throws the
   * EffectInFlightError or ConflictError it was waiting out.
   */
  async close(): Promise<void> {
    this.closing = true;
    for (const wake of [...this.sleeping]) wake();
    // Called from node code or a hook of one of this instance's operations: waiting for that
    // operation would wait for itself. It is not waited for; its next store call fails.
    const caller = this.enclosing.getStore();
    const others = () => [...this.inFlight].filter((operation) => !caller?.has(operation));
    for (let left = others(); left.length > 0; left = others()) await Promise.allSettled(left);
    // Another open instance given this store object keeps it open: its close() closes it, or,
    // dropped without close(), its collection does (CLOSE_ASKED).
    STORE_USERS.get(this.store)?.delete(this.storeUse);
    STORE_RELEASE.unregister(this.storeUse);
    if (storeStillUsed(this.store)) {
      CLOSE_ASKED.add(this.store);
      return;
    }
    CLOSE_ASKED.delete(this.store);
    await this.store.close();
  }

  private resolveWorkflow(workflow: Workflow | string, subject: ErrorSubject): Workflow {
    if (typeof workflow !== 'string') {
      this.registerFor('start()', workflow);
      return workflow;
    }
    const wf = this.workflows.get(workflow);
    if (!wf) throw new UnknownWorkflowError(workflow, this.workflowNames(), subject);
    return wf;
  }

  /**
   * A resume refused before its claim. For ALREADY_CONSUMED, the claim that consumed the interrupt
   * is read back: the error carries the value it recorded and whether this call's value, checked
   * and encoded as its claim would have been, is byte for byte that value (a resume retried after
   * its answer was lost finds its own claim). A claim that cannot be read (a store failure, damage)
   * leaves both out: the refusal itself stands.
   */
  private async resumeRefusal(
    admission: Admission,
    session: RunSession,
    about: { interruptId: string; node: string; claim: () => Uint8Array | null },
  ): Promise<Error> {
    const runId = session.runId;
    if (admission.reason !== RefusalReason.ALREADY_CONSUMED) return this.refusal(admission, runId, session, about);
    const subject = { runId, seq: admission.seq, node: about.node };
    const recorded = await this.recordedClaimValue(session, admission);
    if (recorded === null) return new AlreadyConsumedError(about.interruptId, subject);
    const mine = about.claim();
    return new AlreadyConsumedError(about.interruptId, subject, { value: recorded.value, same: mine !== null && bytesEqual(mine, recorded.bytes) });
  }

  /**
   * The value of the RESUME_CLAIMED the refusal names, as bytes and as JSON, or null when it cannot
   * be read as one. From the session's bytes when it holds them; otherwise (the claim is older than
   * the head snapshot a fresh session read from) that one record from the store.
   */
  private async recordedClaimValue(session: RunSession, claim: Admission): Promise<{ bytes: Uint8Array; value: Json } | null> {
    try {
      const record = session.heldRecordAt(claim.offset, claim.seq) ?? (await session.storedRecord(claim.seq));
      if (record === null || record.kind !== RecordKind.RESUME_CLAIMED) return null;
      return { bytes: record.value, value: decodeJson(record.value) };
    } catch {
      return null;
    }
  }

  /** The bytes a claim of `value` would record, or null when the value would be refused. */
  private claimOf(schema: ReadBackSchema, value: unknown, runId: string): Uint8Array | null {
    try {
      const parsed = validate(schema, value, { runId });
      // A value with a field the schema would drop is refused, never "the same value" as a claim.
      if (!parsed.success || droppedField(schema, value, parsed.data, 'input') !== undefined) return null;
      return durableValue('resume value', parsed.data, schema, { runId }, value).bytes;
    } catch {
      return null;
    }
  }

  /** The typed error for a refused admission. */
  private refusal(
    admission: Admission,
    runId: string,
    session: RunSession,
    about: { interruptId?: string; node?: string; requestedSeq?: number; requestedIsCheckpoint?: boolean },
  ): Error {
    const subject = { runId, seq: admission.seq, ...(about.node === undefined ? {} : { node: about.node }) };
    const id = about.interruptId ?? '';
    switch (admission.reason) {
      case RefusalReason.ALREADY_CONSUMED:
        return new AlreadyConsumedError(id, subject);
      case RefusalReason.NOT_PARKED: {
        const recovered = session.recover();
        const advice = endsInOwnFork(recovered) ? undrivenForkAdvice(runId) : undefined;
        const status = STATUS_NAMES[recovered.status];
        assert(status !== 'parked', () => `the core refused a resume of ${id} as not parked, and recovers run ${runId} as parked`);
        return new NotParkedError(id, status, subject, advice);
      }
      case RefusalReason.UNKNOWN_INTERRUPT: {
        const action = session.recover().action;
        const current = action.tag === 'AWAIT_RESUME' ? fromUtf8(action.interruptId) : '?';
        return new UnknownInterruptError(id, subject, `the run is parked on ${current}`);
      }
      case RefusalReason.NOT_A_CHECKPOINT: {
        const record = session.heldRecordAt(admission.offset, admission.seq);
        return new NotACheckpointError(runId, admission.seq, record === null ? undefined : kindName(record.kind));
      }
      case RefusalReason.BEYOND_HEAD:
        return new BeyondHeadError(runId, about.requestedSeq ?? -1, admission.seq);
      case RefusalReason.IMPLICIT_FORK:
        return new ImplicitForkError(runId, about.requestedSeq ?? -1, admission.seq, about.requestedIsCheckpoint ?? false);
      case RefusalReason.NO_RUN:
        return new RunNotFoundError(runId);
      case RefusalReason.LOG_INVALID:
        return new LogCorruptError(runId, admission.seq, admission.offset, `recovery error code ${admission.detail}`);
      default:
        return new CoreRefusedError(`reason ${admission.reason}`, subject);
    }
  }
}

function effectNodeNames(wf: Workflow): string[] {
  return wf.nodeOrder.filter((name) => wf.nodes.get(name)?.kind === 'effect');
}

function nodeKindCode(wf: Workflow, name: string): number {
  const kind = wf.nodes.get(name)!.kind;
  return kind === 'pure' ? NodeKind.PURE : kind === 'effect' ? NodeKind.EFFECT : NodeKind.INTERRUPT;
}

/** Throws ArgumentInvalidError unless `value` can be a sequence number (an integer in 0..2^32-1). */
function checkSeqArgument(argument: string, value: unknown, subject: ErrorSubject): asserts value is number {
  if (!isSeq(value)) throw new ArgumentInvalidError(argument, SEQ_EXPECTED, describeArgument(value), subject);
}

/**
 * Everything start() checks before it writes: the run id (`argument` names where it came from),
 * that the effect keys fit the log's names, and the first state. Returns the run id (generated
 * when none is given) and the encoded state. The CLI runs it before it creates a database.
 */
export function checkStart(wf: Workflow, input: unknown, runId: string | undefined, argument = 'options.runId of start'): { runId: string; state: ReturnType<typeof durableValue> } {
  if (runId !== undefined) checkRunId(runId, argument);
  const id = runId ?? defaultRunId(wf.name);
  checkEffectKeysFit(id, effectNodeNames(wf), runId === undefined ? undefined : argument);
  // A refused input names the caller's run id, never a generated one: no run was started.
  return { runId: id, state: startState(wf, input, runId !== undefined ? { runId, seq: 0 } : { seq: 0 }) };
}

/**
 * The encoded first state of a run of `wf` from `input`, or the typed error start() throws for it
 * (StateInvalidError, or the errors of a value that does not survive JSON): the CLI checks a `run`
 * with it before it creates a database.
 */
export function startState(wf: Workflow, input: unknown, subject: ErrorSubject = { seq: 0 }): ReturnType<typeof durableValue> {
  // A Promise in the input (a field set without await) has its rejection handled, refused or not.
  handleRejectionsIn(input, false);
  try {
    return checkedStartState(wf, input, subject);
  } catch (error) {
    handleRejectionsIn(input, true);
    throw error;
  }
}

function checkedStartState(wf: Workflow, input: unknown, subject: ErrorSubject): ReturnType<typeof durableValue> {
  const parsed = validate(wf.stateSchema, input, subject);
  if (!parsed.success) throw new StateInvalidError(subject, toValidationIssues(parsed.error.issues));
  const dropped = droppedField(wf.stateSchema, input, parsed.data, 'input');
  if (dropped !== undefined) {
    throw new StateInvalidError(subject, [{ path: dropped, message: `the input has this field, which the state schema names nowhere and drops, so it would be lost (a misspelt name? ${ON_PURPOSE})` }]);
  }
  return durableValue('input', parsed.data, wf.stateSchema, subject, input);
}

/**
 * The claim's bytes of a resume value, fully checked before the claim: once RESUME_CLAIMED is
 * durable, the stored value is applied as it is, so it must pass its schema without losing a field,
 * read back as itself (values.ts), or the run could never finish; and the completion it leads to
 * must succeed, or the interrupt would be consumed by a value that can never finish the run. On
 * a refusal, every Promise the value holds has its rejection handled (resume handles its fields').
 */
function checkedResumeValue(session: RunSession, schema: ReadBackSchema, at: { runId: string; seq: number; node: string }, interruptId: string, value: unknown): Uint8Array {
  try {
    const parsed = validate(schema, value, { runId: at.runId });
    if (!parsed.success) throw new ResumeValueInvalidError(interruptId, { runId: at.runId, node: at.node }, toValidationIssues(parsed.error.issues));
    // A misspelt field the schema would drop: refused, where the claim would consume the interrupt
    // with a value that lost it.
    const dropped = droppedField(schema, value, parsed.data, 'input');
    if (dropped !== undefined) {
      throw new ResumeValueInvalidError(interruptId, { runId: at.runId, node: at.node }, [
        { path: dropped, message: `the value has this field, which the resume schema names nowhere and drops, so it would be lost (a misspelt name? ${ON_PURPOSE})` },
      ]);
    }
    const encoded = durableValue('resume value', parsed.data, schema, at, value);
    session.checkResume(at.node, decodeJson(encoded.bytes));
    return encoded.bytes;
  } catch (error) {
    handleRejectionsIn(value, true);
    throw notClaimed(error);
  }
}

/**
 * A refusal before the claim (a value that would not read back, the completion's state refused by
 * the state schema, a route that names no node, ...) restated to say, as a refused value does,
 * that the interrupt was not consumed.
 */
function notClaimed(error: unknown): unknown {
  if (!(error instanceof RemitError) || /interrupt (is still parked|was not consumed)/.test(error.message)) return error;
  return restateRecorded(error, 'nothing was written: the value was not claimed and the interrupt is still parked (a value that passes resumes it)');
}

/**
 * A new run of a workflow with an interrupt no value can resume (workflow.ts, unresumableInterrupt)
 * is refused: it would park there for ever. Runs already started (by a release that did not refuse
 * such a definition) continue, and finish if their route passes the interrupt by.
 */
function refuseUnresumable(wf: Workflow): void {
  const unresumable = unresumableInterrupt(wf);
  if (unresumable === undefined) return;
  throw new DefinitionInvalidError(wf.name,
    `${unresumable.why}; no new run is started (runs started before continue, and finish if their route passes ${unresumable.node} by): ` +
      'define the fixed workflow under a new name for new runs (docs/guide.md, "Changing a workflow")',
    { node: unresumable.node, field: 'resume' });
}

/** How an argument that was refused looked, for the message. */
function describeArgument(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  if (typeof value === 'number') return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value !== 'object') return typeof value;
  const prototype = safePrototype(value);
  const name = prototype === null ? undefined : (prototype as { constructor?: { name?: unknown } }).constructor?.name;
  return prototype === Object.prototype || prototype === null || typeof name !== 'string' || name === '' ? 'object' : `a ${name}`;
}

function safePrototype(value: object): object | null | undefined {
  try {
    return Object.getPrototypeOf(value) as object | null;
  } catch {
    return undefined;
  }
}

/**
 * Whether a sound log ends in its FORKED record: a fork nobody has continued yet. No effect of it
 * can have started (an attempt is recorded before its handler is called), and recoverAll leaves it
 * for an explicit continueRun: driving it would run the fork's effects, under new keys, at the
 * next start-up of a service that forked a run only to look at it.
 */
function isUndrivenFork(log: Uint8Array, lastRecordBytes: number, runId: string): boolean {
  return recordAt(log, log.length - lastRecordBytes, runId).kind === RecordKind.FORKED;
}

/**
 * isUndrivenFork from the recovery alone (no record read): the run's last record is the FORKED
 * record that made it, the newest link of its lineage.
 */
function endsInOwnFork(recovered: RecoveredRun): boolean {
  return recovered.lineage.some((link) => link.forkSeq === recovered.recordCount - 1 && bytesEqual(link.runId, recovered.runId));
}

/** The workflow named by a log's first record when it is intact (a run damaged later), else '?'. */
function workflowOfFirstRecord(log: Uint8Array): string {
  const first = decodeRecordAt(log, 0, 0);
  return first.outcome === 'record' && first.record.kind === RecordKind.RUN_STARTED ? fromUtf8(first.record.workflow) : '?';
}

/** `session` when its read found the run (it recovers to something), null when it found none (RunNotFoundError). */
function openedIfFound(session: RunSession): RunSession | null {
  try {
    session.recover();
    return session;
  } catch (error) {
    if (error instanceof RunNotFoundError) return null;
    throw error;
  }
}

/** Reads of a run scrub makes at most while the run moves under it (its hint read at another record count). */
const SCRUB_READS = 3;

/** A recovered status as a status hint (null for 'empty', which a run with records never is). */
function hintOfStatus(status: RunStatusName): RunStatusHint | null {
  return status === 'empty' ? null : status;
}

/** A stored hint for messages: the status, or the value that is not one, quoted. */
export function describeStoredHint(hint: { statusHint: RunStatusHint | null; statusHintInvalid?: string }): string {
  if (hint.statusHintInvalid !== undefined) return `${JSON.stringify(hint.statusHintInvalid)} (not a status)`;
  return hint.statusHint ?? 'unknown';
}

/**
 * A stored summary's core bytes in the encoding `core` writes now: a summary of an earlier
 * encoding (version 1, before reserved interrupt ids) is read by the core, and agrees with the
 * records when it says what they say, whichever version wrote it. Fed nothing, the core writes the
 * summary it read back out in its own encoding (the very bytes, for a summary of this version);
 * one it refuses is returned as it is, and so does not agree.
 */
function inCurrentEncoding(core: RecoveryCore, summary: Uint8Array): Uint8Array {
  const fed = core.feed(summary, new Uint8Array(0));
  return fed.ok && fed.recovery.ok ? fed.summary : summary;
}

/**
 * A stored hint (read at `hint.recordCount` records) against the status of the log of
 * `recordCount` records: false when it names another status or is not a status at all, true when
 * it is the log's, null when there is nothing to compare (no hint, a damaged log, another count).
 */
function hintAgreement(
  hint: Pick<StoredStatusHint, 'statusHint' | 'statusHintInvalid' | 'recordCount'> | null,
  recordCount: number,
  logStatus: RunStatusHint | null,
): Pick<ScrubReport, 'statusHint' | 'statusHintInvalid' | 'statusHintAgrees'> {
  if (hint === null) return { statusHint: null, statusHintAgrees: null };
  const stored = { statusHint: hint.statusHint, ...(hint.statusHintInvalid === undefined ? {} : { statusHintInvalid: hint.statusHintInvalid }) };
  if (logStatus === null || hint.recordCount !== recordCount) return { ...stored, statusHintAgrees: null };
  if (hint.statusHintInvalid !== undefined) return { ...stored, statusHintAgrees: false };
  return { ...stored, statusHintAgrees: hint.statusHint === null ? null : hint.statusHint === logStatus };
}

/** `runs`' hint fields for one listing, when the store lists hints: compared with the log `examined` read. */
function listedHint(listing: RunListing, examined: Pick<RunSummary, 'status' | 'headSeq'>): Pick<RunSummary, 'statusHint' | 'statusHintInvalid' | 'statusHintAgrees'> {
  if (listing.statusHint === undefined) return {};
  const logStatus = examined.status === 'damaged' ? null : hintOfStatus(examined.status);
  const hint = { statusHint: listing.statusHint, recordCount: listing.nextSeq, ...(listing.statusHintInvalid === undefined ? {} : { statusHintInvalid: listing.statusHintInvalid }) };
  return hintAgreement(hint, examined.headSeq + 1, logStatus);
}

/**
 * A resume's claim append that the store could not say committed or not (StoreError
 * OUTCOME_UNKNOWN): restated so that the caller does not read "no claimSeq" as "not claimed".
 */
function claimOutcomeUnknown(error: StoreError, interruptId: string, seq: number): StoreError {
  return restateRecorded(
    error,
    `whether this resume's claim of ${interruptId} (RESUME_CLAIMED at seq ${seq}) was recorded is unknown: status() tells (still parked on ${interruptId}: not claimed, resume again; otherwise the interrupt is consumed, perhaps by this value: a retry of this resume refused with AlreadyConsumedError naming seq ${seq} says with sameValue whether that claim holds this value)`,
  );
}

/** `error` given `claimSeq` when it is an object that can take it; anything else as it is. */
function withClaimSeq(error: unknown, claimSeq: number): unknown {
  if (typeof error !== 'object' || error === null || Object.isFrozen(error)) return error;
  try {
    Object.defineProperty(error, 'claimSeq', { value: claimSeq, enumerable: true, configurable: true });
  } catch {
    // A proxy or an object that refuses new properties: the error as it is.
  }
  return error;
}
