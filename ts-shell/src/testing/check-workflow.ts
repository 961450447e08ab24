/**
 * `checkWorkflow`: the resume contract's crash-recovery properties on a service's own workflow, in
 * its own tests (not fork determinism, fork intent or checkpoint validity). It runs the
 * workflow twice without faults (the two must agree), then once per fault point the reference run
 * reached (the fault-free run that retried least: below), crashing there (the point picked by its
 * spec, `point[@node][#n]`, as hooksFor fires it) and recovering in a fresh sequencer with another
 * instance id on the same store, as a restarted replica would (its clock past the crashed one's
 * leases), and checks each recovered run against the fault-free one:
 *   - determinism: two fault-free runs from the same input take the same path and, when their
 *     effects returned the same results and their interrupts were resumed with the same values,
 *     end in the same state (failed runs failing at the same node);
 *   - prefix continuation: the records durable at the crash are the first records after recovery;
 *   - recovered run: the same node path, and, when its effects returned the same results and its
 *     interrupts got the same resume values, the same status (the same failing node) and final state (up to the first of
 *     those that differs, the same path: check-outcome.ts);
 *   - effects: every effect's handler is called once, or twice only when the crash fell between
 *     its call and the record of its outcome (the documented bound), and only under keys the run
 *     recorded an outcome for (a result, or the run's failure at that node);
 *   - consume-once: after a crash with a resume claim durable, a second resume of the same
 *     interrupt is refused, both before recovery (the claim open, its node not completed) and
 *     after it, and the run goes on with the value claimed first;
 *   - liveness: recovery reaches the end with no error but the injected crash (node code that
 *     throws is retried by continuing the run, as recoverAll would, `maxRetries` times), within
 *     `maxSteps` node steps and `maxResumes` resumes.
 *   - lost updates: node code (a pure node, a handler, an apply, a route) that changed the state it
 *     was given, a copy, without returning the change, in any run: the change is lost in every run
 *     alike, so no comparison shows it (watched-workflow.ts watches a copy of the workflow's code).
 *   And each route is asked again, after the runs, about the first state it was asked about: a
 *   route that answers otherwise is a determinism problem the runs may not have met (a sample).
 * Comparisons it cannot make (effects that answered differently, resume values that differ) are
 * listed in `unchecked`. The handlers are called once per scenario: give checkWorkflow a workflow
 * built with test doubles that answer a repeated key as the first time, as an idempotent API does
 * (docs/guide.md, "Checking your own workflow").
 *
 * Node code that fails transiently (a double whose first call throws) makes the fault-free runs
 * reach different fault points: the one that retried has the points of its retry. The scenarios
 * are built on the fault-free run that retried least (the first, unless the second retried less),
 * and a scenario whose fault point its run did not reach, when a retry explains it, is listed in
 * `unchecked`, not called nondeterminism. A double that throws as a function of `attempt` (the
 * effect context's) fails in every run alike, so its retry path is crashed at too.
 *
 * `workflow` may be a function that builds it (a factory `() => createWorkflow(deps)`): it is then
 * built anew for each sequencer, as each process builds its own, so that what its closures keep
 * (a cache a node fills and a later node reads, instead of the state) is gone in the replica that
 * recovers a crash, as in production; a workflow object shares it with the crashed sequencer.
 *
 * Each check, and each run of it, uses instance ids of its own (the in-process registry of effect
 * calls is keyed by instance id, run id and key: sequencer/fence.ts), so checks may run at once;
 * every run uses the one run id `checked-run`, which effect keys hold, so that the runs of a check
 * can be compared. A crash here is a thrown InjectedFault and a discarded sequencer over a memory
 * store; the conformance harness (conformance/) kills real processes.
 */

import { randomBytes } from 'node:crypto';
import { concatBytes, decodeLog, decodeRecordAt } from '../core/codec.js';
import type { CoreKind } from '../core/index.js';
import { RecordKind, type LogRecord, type RecoveryCore } from '../core/types.js';
import { AlreadyConsumedError, ArgumentInvalidError, HandlerThrewError, isThenable, OptionInvalidError, RemitError, ResumeValueInvalidError } from '../errors.js';
import { NO_HOOKS, type FaultInfo, type FaultPoint, type SequencerHooks } from '../faults.js';
import { bytesEqual, fromUtf8 } from '../json.js';
import { allKeysOf, notKnown, unknownKey } from '../known-keys.js';
import { createRemit, Remit, startState } from '../remit.js';
import type { RunResult } from '../sequencer/run-result.js';
import { internalTimers, sleepInternally } from '../timers.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { durableValue, validate } from '../values.js';
import { isBuiltWorkflow, type InputOf, type ResumesOf, type StateOf, type Workflow } from '../workflow/workflow.js';
import { compareOutcomes, lastIntentKey, NOT_ENDED, nodeOfInterruptId, outcomeOf, type Difference, type Outcome } from './check-outcome.js';
import { TestingErrorCode } from './errors.js';
import { LostUpdates, reaskRoutes, watchedWorkflow } from './watched-workflow.js';
import { formatFaultSpec, InjectedFault } from './fault-spec.js';

/**
 * A resume value for an interrupt node: the value, or a function of the state parked there and the
 * interrupt id, returning the value or a Promise of it (awaited).
 */
export type ResumeValue = unknown | ((state: unknown, interruptId: string) => unknown);

/**
 * `resume`'s type: for each interrupt node of W (by name, as `.interrupt()` declared it), the value
 * its resume schema accepts, or a function of the state parked there and the interrupt id that
 * returns it (or a Promise of it). A name that is not an interrupt node of W, or a value of
 * another type, is a type error (and refused at run time, for JavaScript callers).
 */
export type ResumeOptions<W extends Workflow> = {
  [K in keyof ResumesOf<W>]?: ResumesOf<W>[K] | ((state: StateOf<W>, interruptId: string) => ResumesOf<W>[K] | Promise<ResumesOf<W>[K]>);
};

export interface CheckWorkflowOptions<W extends Workflow> {
  /** The run's input. */
  input: InputOf<W>;
  /**
   * The value each interrupt node is resumed with, by node name (every interrupt the run reaches
   * needs one): the value itself, or a function `(state, interruptId) => value` of the state parked
   * there (it may be async: its Promise is awaited). An object by node, never one function for
   * every node: `resume: { approve: (s) => ... }`.
   */
  resume?: ResumeOptions<W>;
  /** The recovery core (default 'wasm', as createRemit), refused as createRemit refuses it. */
  core?: CoreKind | RecoveryCore;
  /** At most this many fault scenarios, spread over the run (default: every fault point reached; at least 1). */
  maxScenarios?: number;
  /** At most this many resumes in the fault-free run (default 1000): a run that parks more is reported as not ending. */
  maxResumes?: number;
  /** How often node code that threw is retried by continuing the run (default 3). */
  maxRetries?: number;
  /**
   * At most this many node steps (completed nodes) in the fault-free run (default 10 000, at most
   * 10 000 000): a run that takes more, a route that never reaches END, is reported as not ending.
   */
  maxSteps?: number;
  /**
   * At most this many milliseconds without progress (no fault point reached: no append, no handler
   * call, no claim) before a run is reported as not ending (default 2000; from 1 to 2147483647):
   * node code, a handler or a resume function that never settles. Slower code (a double that
   * sleeps) needs a larger one. Code that never yields (a synchronous endless loop) is not stopped.
   */
  stallLimitMs?: number;
}

export type CheckedProperty = 'determinism' | 'prefix' | 'recovered-run' | 'effects' | 'consume-once' | 'liveness' | 'lost-update';

export interface WorkflowProblem {
  property: CheckedProperty;
  /** The crash of the scenario, as a fault spec (`point[@node][#n]`: give it to hooksFor as it is to replay it); absent for the fault-free runs. */
  fault?: string;
  /** The node the problem points at, when one is known (where the run stopped, the route that chose differently, the first checkpoint that differed, the effect's node). */
  node?: string;
  message: string;
}

export interface WorkflowCheckReport {
  workflow: string;
  /**
   * The fault-free run the scenarios are built on and compared with: the first, unless the second
   * retried node code less (a double that failed once, on its first call). Its status
   * ('not-ended' when it did not reach its end: then its path is [] and its state undefined, and
   * the liveness problem names its last steps), node path, final state, handler calls, retries of
   * node code that threw, and node steps.
   */
  reference: { status: string; path: string[]; state: unknown; effectCalls: number; retries: number; steps: number };
  /** The crash of each scenario run, as a fault spec (a string hooksFor and parseFaultSpec take), in the order reached: only crashes that happened. */
  faults: string[];
  /** Empty when every check held. */
  problems: WorkflowProblem[];
  /** Comparisons that could not be made, and why (effects that answered differently, resume values that differ, fault points a run did not reach). */
  unchecked: string[];
}

const RUN_ID = 'checked-run';
/** The recovering replica's clock runs this far ahead, past every lease the crashed one took. */
const CLOCK_AHEAD_MS = 2 * 86_400_000;
const DEFAULT_MAX_STEPS = 10_000;
const MAX_MAX_STEPS = 10_000_000;
const DEFAULT_STALL_LIMIT_MS = 2_000;
/** The longest delay setTimeout keeps (a larger one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;
/**
 * A recovered run takes at most one group of pure steps (maxGroupedPureSteps, 64) more than the
 * fault-free one: a crash scenario is stopped at twice the reference's steps and this many more.
 */
const SCENARIO_STEP_MARGIN = 128;
/**
 * Every sequencer of a check appends each step on its own (group commit off), so that a crash can
 * fall between any two steps: with group commit, consecutive pure steps share one append, and a
 * node that hands a later one something outside the state (a cache in the workflow's closure)
 * would pass, though in a service a group may end between them (at maxGroupedPureSteps, 4 MiB, or
 * with group commit off). The crash states a grouped run reaches are among these.
 */
const UNGROUPED = { groupPureSteps: false };
/** How many of the last steps a step-limit problem names. */
const TAIL_STEPS = 6;
const CHECK_OPTIONS = allKeysOf<CheckWorkflowOptions<Workflow>>()('input', 'resume', 'core', 'maxScenarios', 'maxResumes', 'maxRetries', 'maxSteps', 'stallLimitMs');

/** Instance ids are unique per module copy and process, and per check and run (the module comment). */
const PROCESS_TAG = randomBytes(3).toString('hex');
let checksStarted = 0;

/** The instance ids of one check: two per run (the sequencer that may crash, the replica that recovers). */
class InstanceIds {
  private readonly check = `${PROCESS_TAG}.${++checksStarted}`;
  private made = 0;

  forRun(): { first: string; replica: string } {
    const id = `check-workflow-${this.check}-${++this.made}`;
    return { first: id, replica: `${id}-replica` };
  }

  one(): string {
    return `check-workflow-${this.check}-${++this.made}`;
  }
}

/** Check `workflow` against the resume contract from `options.input` (see the module comment). */
export async function checkWorkflow<W extends Workflow>(workflow: W | (() => W), options: CheckWorkflowOptions<W>): Promise<WorkflowCheckReport> {
  const settings = await settingsOf(workflow, options);
  const report = await checkRuns(settings);
  // Met in any run, fault-free or recovered: each node's code reported once, after the rest (a
  // lost update may be what kept a run from its end).
  report.problems.push(...settings.lostUpdates.all().map((lost) => ({ property: 'lost-update' as const, ...lost })));
  // Asked after the runs (watched-workflow.ts): only when the runs themselves found no difference, which it would repeat.
  if (!report.problems.some((p) => p.property === 'determinism' || p.property === 'recovered-run')) {
    report.problems.push(...reaskRoutes(settings.lostUpdates).map((unstable) => ({ property: 'determinism' as const, ...unstable })));
  }
  // First: it concerns every scenario's effect check, not one comparison.
  for (const node of settings.lostUpdates.keyNeverRead().reverse()) {
    report.unchecked.unshift(
      `effect ${node}: its handler never read its idempotencyKey, so whether the outside system applies a repeated call once was not checked ` +
        '(the check counts handler calls; after a crash inside a call the handler is called again): if it changes an outside system, pass it the key',
    );
  }
  return report;
}

/** The fault-free runs and the crash scenarios (the module comment). */
async function checkRuns(settings: DriveSettings): Promise<WorkflowCheckReport> {
  const first = await drive(settings, null);
  if (first.usage !== undefined) throw first.usage;
  const report: WorkflowCheckReport = { workflow: settings.workflow.name, reference: referenceOf(first), faults: [], problems: [...first.problems], unchecked: [] };
  // A run that does not end without faults has nothing to recover to: no scenario is run.
  if (first.problems.length > 0) return report;
  await sleepInternally(2); // a pure node reading a millisecond clock reads another one in the second run
  const second = await drive(settings, null);
  // Which fault-free run did not end: the first one's problem would read the same, without a fault.
  report.problems.push(...second.problems.map((p) => ({ ...p, message: p.message.replace(/^the run /, 'the second fault-free run ') })));
  const comparison = compareOutcomes(first.outcome, second.outcome, { a: 'the first fault-free run', b: 'the second fault-free run' });
  if (comparison.difference !== null) report.problems.push(problem('determinism', undefined, comparison.difference, 'two fault-free runs from the same input differ: '));
  if (comparison.unchecked !== null) report.unchecked.push(`the two fault-free runs: ${comparison.unchecked}`);
  const deterministic = comparison.difference === null;
  if (!deterministic) report.unchecked.push('recovered runs were not compared with the fault-free one: the two fault-free runs differ');
  // Transient failures (a double whose first call throws) make the run that retried reach more
  // fault points than the runs after it: the scenarios follow the run that retried least.
  const reference = second.problems.length === 0 && second.retries < first.retries ? second : first;
  report.reference = referenceOf(reference);
  // A recovered run re-runs the steps its crash lost (a whole group commit, up to 64), so its bound
  // is the fault-free run's length with room for those, never the option the fault-free run met
  // (a 10-step run under maxSteps 10 would be stopped after its crash); the same for resumes.
  const scenarioSettings: DriveSettings = {
    ...settings,
    maxResumes: reference.resumes + 1,
    maxSteps: 2 * reference.steps + SCENARIO_STEP_MARGIN,
    stepsWhy: `twice the fault-free run's ${reference.steps} and ${SCENARIO_STEP_MARGIN} more`,
  };
  const specs = choose(reference.points.length, settings.maxScenarios).map((index) => reference.points[index]!.spec);
  for (const [i, spec] of specs.entries()) {
    const scenario = await crashScenario(scenarioSettings, reference, spec, deterministic);
    if (scenario.crashed) report.faults.push(spec);
    report.problems.push(...scenario.problems);
    if (scenario.unchecked !== null) report.unchecked.push(`${spec}: ${scenario.unchecked}`);
    // Each later scenario would likely wait out the same stall: the check ends here, saying so.
    if (scenario.stalled) {
      for (const left of specs.slice(i + 1)) report.unchecked.push(`${left}: not run: the scenario ${spec} stalled (stallLimitMs)`);
      break;
    }
  }
  return report;
}

interface DriveSettings {
  /** The workflow (watched: watched-workflow.ts); with a factory, the first one it built. */
  workflow: Workflow;
  /** The workflow a new sequencer runs, as a new process would have it: a factory's next one, else `workflow`. */
  fresh: () => Workflow;
  core: RecoveryCore;
  input: unknown;
  resume: Record<string, ResumeValue>;
  maxScenarios: number;
  maxResumes: number;
  maxRetries: number;
  maxSteps: number;
  /** Why maxSteps is what it is, for the message (the option, or the bound of a crash scenario). */
  stepsWhy: string;
  stallLimitMs: number;
  ids: InstanceIds;
  /** What the watched copy of the workflow's node code found (watched-workflow.ts). */
  lostUpdates: LostUpdates;
  /** The idempotency keys a handler returned for, in any run of the check (its runs share keys). */
  answeredKeys: Set<string>;
}

/** The options checked and completed, before anything runs: a usage error is thrown, not reported. */
async function settingsOf<W extends Workflow>(given: W | (() => W), options: CheckWorkflowOptions<W>): Promise<DriveSettings> {
  const workflow = typeof given === 'function' ? builtBy(given) : given;
  if (!isBuiltWorkflow(workflow)) throw new ArgumentInvalidError('workflow', WORKFLOW_ARGUMENT, describeWorkflowArgument(workflow));
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ArgumentInvalidError('options', 'an object of checkWorkflow options ({ input, resume, ... })', Array.isArray(options) ? 'an array' : String(options));
  }
  const unknown = unknownKey(options, CHECK_OPTIONS);
  if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as unknown as Record<string, unknown>)[unknown], notKnown('an option of checkWorkflow', CHECK_OPTIONS));
  startState(workflow, options.input); // StateInvalidError and the like, as start() would throw
  const resume = checkedResume(workflow, options.resume);
  const limits = {
    maxScenarios: wholeOption('maxScenarios', options.maxScenarios, 1, Number.MAX_SAFE_INTEGER),
    // Only an absent option takes the default: null is refused like any value that is not a whole number.
    maxResumes: wholeOption('maxResumes', options.maxResumes === undefined ? 1000 : options.maxResumes, 0, 1_000_000),
    maxRetries: wholeOption('maxRetries', options.maxRetries === undefined ? 3 : options.maxRetries, 0, 100),
    maxSteps: wholeOption('maxSteps', options.maxSteps === undefined ? DEFAULT_MAX_STEPS : options.maxSteps, 1, MAX_MAX_STEPS),
    stallLimitMs: wholeOption('stallLimitMs', options.stallLimitMs === undefined ? DEFAULT_STALL_LIMIT_MS : options.stallLimitMs, 1, MAX_TIMER_MS),
  };
  // The core as createRemit takes it: OptionInvalidError for an object without the RecoveryCore
  // functions or a value that is neither a name nor an object, CoreUnavailableError for an
  // unknown name; then the core itself (a name loaded, an object as it is).
  const { core } = await createRemit({ store: new MemoryStore(), core: options.core as CoreKind | RecoveryCore });
  const lostUpdates = new LostUpdates();
  const watched = watchedWorkflow(workflow, lostUpdates);
  const fresh = typeof given === 'function' ? () => watchedWorkflow(sameDefinition(builtBy(given), workflow), lostUpdates) : () => watched;
  return { workflow: watched, fresh, core, input: options.input, resume, ...limits, stepsWhy: 'maxSteps', ids: new InstanceIds(), lostUpdates, answeredKeys: new Set() };
}

const WORKFLOW_ARGUMENT = 'a built workflow (workflow(...)....build()), or a function () => workflow that builds one';

function describeWorkflowArgument(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object that is not a built workflow' : typeof value;
}

/**
 * What a workflow factory built. A factory is called once per sequencer (a fresh process): what
 * its closures hold (a cache, a client's memory) is new to the replica that recovers a crash, as
 * in production, where a cache warmed by the crashed process is gone.
 */
function builtBy(factory: () => unknown): Workflow {
  const built = factory();
  if (isThenable(built)) throw asyncFactoryRefused(built);
  if (!isBuiltWorkflow(built)) throw new ArgumentInvalidError('workflow', WORKFLOW_ARGUMENT, `a function that returned ${describeWorkflowArgument(built)}`);
  return built;
}

/**
 * An async factory (`async () => createWorkflow(await loadDeps())`): the check calls the factory
 * for each sequencer in the midst of a run, where it cannot wait. Its Promise is left handled, or
 * its rejection (the dependencies failing to load) would be unhandled and end the test process.
 */
function asyncFactoryRefused(built: PromiseLike<unknown>): ArgumentInvalidError {
  Promise.resolve(built).catch(() => {});
  return new ArgumentInvalidError('workflow', WORKFLOW_ARGUMENT,
    'a function that returned a Promise (an async function): build the workflow synchronously, awaiting what it needs first (const deps = await loadDeps(); checkWorkflow(() => createWorkflow(deps), ...))');
}

/** A factory's later workflow, refused unless it is the definition of its first (the runs would not compare). */
function sameDefinition(built: Workflow, first: Workflow): Workflow {
  if (built.fingerprintHex !== first.fingerprintHex) {
    throw new ArgumentInvalidError('workflow', 'a function that builds the same definition at every call', `one whose definition changed between calls (${first.name} ${first.version}: its fingerprint differs)`);
  }
  return built;
}

/**
 * `resume` (undefined: none) is an object by interrupt node name, naming interrupt nodes of the
 * workflow only (a misspelt node would never be resumed), whose values are not Promises.
 */
function checkedResume(workflow: Workflow, resume: unknown): Record<string, ResumeValue> {
  if (resume === undefined) return {};
  const interrupts = workflow.nodeOrder.filter((name) => workflow.nodes.get(name)!.kind === 'interrupt');
  // A Map by node name has no own keys: it passed, and the run then met "no value" at its first interrupt.
  if (resume === null || typeof resume !== 'object' || Array.isArray(resume) || resume instanceof Map) {
    const example = `{ ${JSON.stringify(interrupts[0] ?? 'node')}: <value or (state, interruptId) => value> }`;
    const hint = typeof resume === 'function' ? ', not one function for every node' : Array.isArray(resume) ? ', not an array' :
      resume instanceof Map ? ', not a Map (Object.fromEntries(map) makes one)' : '';
    throw new OptionInvalidError('resume', resume, `must be an object of resume values by interrupt node name, each a value or a function (state, interruptId) => value: resume: ${example}${hint}`);
  }
  for (const [node, value] of Object.entries(resume)) {
    if (workflow.nodes.get(node)?.kind !== 'interrupt') {
      throw new OptionInvalidError('resume', node, `names ${JSON.stringify(node)}, which is not an interrupt node of ${workflow.name} (its interrupt nodes: ${interrupts.join(', ') || 'none'})`);
    }
    if (isThenable(value)) {
      throw new OptionInvalidError('resume', node, `gives ${JSON.stringify(node)} a Promise: give the value itself, or a function (state, interruptId) => value, which may be async`);
    }
  }
  return resume as Record<string, ResumeValue>;
}

/** A whole-number option from `min` to `max`; undefined stays the default (max). */
function wholeOption(name: string, value: unknown, min: number, max: number): number {
  if (value === undefined) return max;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new OptionInvalidError(name, value, `must be a whole number from ${min} to ${max}`);
  }
  return value;
}

/** One fault point the sequencer reached, in order, with the spec that picks it. */
interface PointReached {
  point: FaultPoint;
  info: FaultInfo;
  spec: string;
}

/** A crash at the chosen fault point: what the store held then. */
interface Crash {
  at: PointReached;
  durable: Uint8Array[];
  /** Keys whose handler had been called and whose outcome was not yet durable. */
  inFlight: Set<string>;
  claimDurable: boolean;
}

interface Drive {
  outcome: Outcome;
  points: PointReached[];
  /** The idempotency keys handlers were called with, one entry per call. */
  calls: string[];
  resumes: number;
  /** How often node code threw and the run was continued (HandlerThrewError). */
  retries: number;
  /** Node steps: the NODE_COMPLETED records appended (a crash that lost some counts them again). */
  steps: number;
  problems: WorkflowProblem[];
  crash: Crash | null;
  store: MemoryStore;
  /** An error that says the options are wrong (a resume value missing or refused), not the workflow. */
  usage?: Error;
  /** Stopped by stallLimitMs. */
  stalled?: true;
  /** After a crash with a claim durable: what a second resume answered before recovery (null: refused as consumed). */
  earlyResume?: { node?: string; message: string } | null;
}

/** The records of the checked run, decoded once each (a drive reads them at every handler call). */
class LogReader {
  private readonly records: LogRecord[] = [];

  constructor(readonly store: MemoryStore) {}

  async read(): Promise<readonly LogRecord[]> {
    for (const stored of await this.store.readRecords(RUN_ID, this.records.length)) {
      const step = decodeRecordAt(stored.bytes, 0);
      if (step.outcome !== 'record') throw new Error(`checkWorkflow: record ${stored.seq} of the checked run cannot be read (${step.outcome})`);
      this.records.push(step.record);
    }
    return this.records;
  }
}

/** A drive stopped by checkWorkflow's own bounds (maxSteps, maxResumes), or a run left to another sequencer. */
class RunStopped extends Error {
  /** `stalled`: stopped by stallLimitMs (what it ran goes on unawaited, to its next fault point). */
  constructor(message: string, readonly node?: string, readonly stalled = false) {
    super(message);
    this.name = 'RunStopped';
  }
}

/** Node code at `node` still threw after maxRetries retries. */
class RetriesSpent extends RunStopped {}

/**
 * The hooks of one drive: they note every point reached and every handler call, count node steps
 * (stopping the run past maxSteps: a loop that never reaches END runs in microtasks, and no timer
 * would ever fire to stop it), and crash at the point of one spec.
 */
class Observer implements SequencerHooks {
  readonly points: PointReached[] = [];
  readonly calls: string[] = [];
  /** The key of each effect node's last handler call. */
  readonly lastKey = new Map<string, string>();
  crash: Crash | null = null;
  /**
   * Set when the drive was given up after stallLimitMs: what it was running is not awaited (a
   * handler call in flight finishes on its own), but the run stops at its next fault point, as a
   * crashed one does, so that it calls no handler after the check moved on or returned.
   */
  abandoned = false;
  steps = 0;
  /** The last progress: when a fault point was reached, and which (for a stalled run's report). */
  progress: { at: number; point: string | null; node?: string } = { at: internalTimers.monotonicNow(), point: null };
  private readonly tail: string[] = [];
  private readonly seen = new Map<string, number>();

  constructor(private readonly log: LogReader, private readonly crashAt: string | null, private readonly settings: DriveSettings) {}

  async at(point: FaultPoint, info: FaultInfo): Promise<void> {
    // A crashed process reaches no further point: the sequencer may catch a throw (the
    // best-effort EFFECT_RELEASED does) and go on, but it must do nothing more.
    if (this.crash !== null || this.abandoned) throw new InjectedFault(point, info);
    this.countStep(point, info);
    this.noteAnswer(point, info);
    const reached: PointReached = { point, info, spec: this.specFor(point, info) };
    this.noteProgress(reached.spec, point, info);
    this.points.push(reached);
    if (reached.spec === this.crashAt) {
      this.crash = await this.snapshot(reached);
      throw new InjectedFault(point, info);
    }
    await this.noteCall(point, info);
  }

  /** The hooks of the replica that recovers: no more crashes (but for a run abandoned after a stall). */
  async afterCrash(point: FaultPoint, info: FaultInfo): Promise<void> {
    if (this.abandoned) throw new InjectedFault(point, info);
    this.countStep(point, info);
    this.noteAnswer(point, info);
    this.noteProgress(`${point}${info.node === undefined ? '' : `@${info.node}`} (in the recovered run)`, point, info);
    await this.noteCall(point, info);
  }

  /** `where` was reached now; the node is kept when it is the one whose code runs next (a handler, an interrupt's apply). */
  noteProgress(where: string, point?: FaultPoint, info?: FaultInfo): void {
    const next = point === 'effect.before-handler' || point === 'resume.after-claim' ? info?.node : undefined;
    this.progress = { at: internalTimers.monotonicNow(), point: where, ...(next === undefined ? {} : { node: next }) };
  }

  /** append.before fires once per step whose records a batch carries (with group commit too). */
  private countStep(point: FaultPoint, info: FaultInfo): void {
    if (point !== 'append.before' || !(info.kinds ?? []).includes('NODE_COMPLETED')) return;
    this.steps += 1;
    this.tail.push(info.node ?? '?');
    if (this.tail.length > TAIL_STEPS) this.tail.shift();
    if (this.steps <= this.settings.maxSteps) return;
    const last = this.tail[this.tail.length - 1];
    throw new RunStopped(
      `still running after ${this.settings.maxSteps} node steps (${this.settings.stepsWhy}), its last ones ${this.tail.join(' → ')}: ` +
        `a loop whose route never reaches END?${this.settings.stepsWhy === 'maxSteps' ? ' (a longer run needs a larger maxSteps)' : ''}`,
      last,
    );
  }

  /** A handler about to be called: the key is the last EFFECT_INTENT of its node in the store. */
  private async noteCall(point: FaultPoint, info: FaultInfo): Promise<void> {
    if (point !== 'effect.before-handler') return;
    const key = info.node === undefined ? undefined : lastIntentKey(await this.log.read(), info.node);
    this.calls.push(key ?? `${info.node ?? '?'}@?`);
    if (key !== undefined && info.node !== undefined) this.lastKey.set(info.node, key);
  }

  /** effect.after-handler: the handler of the node's last call returned (noted before a crash there too). */
  private noteAnswer(point: FaultPoint, info: FaultInfo): void {
    const key = point === 'effect.after-handler' && info.node !== undefined ? this.lastKey.get(info.node) : undefined;
    if (key !== undefined) this.settings.answeredKeys.add(key);
  }

  /**
   * The spec that fires at this very point (faultMatches): with a node, its occurrence among the
   * points of that node; without one, among every point of that kind (a spec without a node
   * matches them all).
   */
  private specFor(point: FaultPoint, info: FaultInfo): string {
    const byPoint = (this.seen.get(point) ?? 0) + 1;
    this.seen.set(point, byPoint);
    if (info.node === undefined) return formatFaultSpec({ point, occurrence: byPoint });
    const id = `${point}@${info.node}`;
    const occurrence = (this.seen.get(id) ?? 0) + 1;
    this.seen.set(id, occurrence);
    return formatFaultSpec({ point, occurrence, node: info.node });
  }

  private async snapshot(at: PointReached): Promise<Crash> {
    const stored = await this.log.store.readRecords(RUN_ID);
    const recorded = recordedKeys(await this.log.read());
    const claimDurable = at.point === 'resume.after-claim' || (at.point === 'append.after' && (at.info.kinds ?? []).includes('RESUME_CLAIMED'));
    return { at, durable: stored.map((r) => r.bytes.slice()), inFlight: new Set(this.calls.filter((k) => !recorded.has(k))), claimDurable };
  }
}

interface Counter {
  /** Interrupts resumed: each park counted once, however often its resume was retried. */
  resumes: number;
  retries: number;
  resumed: Set<string>;
  /** The value given to each interrupt (by id), as JSON text: what its resume schema read. */
  given: Map<string, string>;
}

/** The outcome's resume values with the value the check gave each (a schema's default may make the same one differ). */
function withGivenValues(outcome: Outcome, counter: Counter): Outcome {
  for (const input of outcome.inputs) {
    const given = input.kind === 'resume' ? counter.given.get(input.id) : undefined;
    if (given !== undefined) input.given = given;
  }
  return outcome;
}

/**
 * Start the run and resume it until it ends; with `crashAt` (a fault spec), crash at the point it
 * picks and go on in a fresh sequencer (another instance, no faults) on the same store, as a
 * restarted replica.
 */
async function drive(settings: DriveSettings, crashAt: string | null): Promise<Drive> {
  const backing = new MemoryBacking();
  const store = new MemoryStore({ backing });
  const log = new LogReader(store);
  const observer = new Observer(log, crashAt, settings);
  const counter: Counter = { resumes: 0, retries: 0, resumed: new Set(), given: new Map() };
  const ids = settings.ids.forRun();
  const wf = settings.fresh();
  const faulted = new Remit(store, settings.core, [wf], observer, UNGROUPED, { instanceId: ids.first });
  const crashed = () => observer.crash !== null;
  const starting = untilEnd(settings, faulted, counter, () => faulted.start(wf, settings.input, { runId: RUN_ID }), crashed);
  let result = await untilStalled(starting, observer, settings.stallLimitMs).catch((e: unknown) => e);
  let earlyResume: Drive['earlyResume'];
  if (crashed()) {
    // Whatever the crashed sequencer threw or returned, the replica takes over.
    const hooks: SequencerHooks = { at: (point, info) => observer.afterCrash(point, info) };
    const fence = { instanceId: ids.replica, now: () => Date.now() + CLOCK_AHEAD_MS };
    const replicaWf = settings.fresh(); // the replica is another process: a factory builds it anew
    const restarted = new Remit(new MemoryStore({ backing }), settings.core, [replicaWf], hooks, UNGROUPED, fence);
    observer.noteProgress(`${observer.crash!.at.spec} (the crash; the replica took over)`);
    // The claim is durable and its node not completed: another resumer, now, before recovery
    // finishes the node, must be refused (a resume checked only after recovery completed the run
    // meets a spent interrupt, and a sequencer that admits a second claim while one is open passed).
    if (observer.crash!.claimDurable) {
      // Hooks of its own: given up after a stall, it stops at its next point, and the replica goes on.
      let resumerAbandoned = false;
      const resumerHooks: SequencerHooks = {
        at: (point, info) => (resumerAbandoned ? Promise.reject(new InjectedFault(point, info)) : observer.afterCrash(point, info)),
      };
      const resumer = new Remit(new MemoryStore({ backing }), settings.core, [settings.fresh()], resumerHooks, UNGROUPED, { instanceId: settings.ids.one(), now: fence.now });
      const abandonResumer = () => {
        resumerAbandoned = true;
      };
      earlyResume = await untilStalled(secondResume(observer.crash!.durable, resumer, 'before recovery'), observer, settings.stallLimitMs, abandonResumer).catch((e: unknown) => ({
        ...(observer.crash!.at.info.node === undefined ? {} : { node: observer.crash!.at.info.node }),
        message: `a second resume, after the claim was durable, before recovery, did not settle: ${describe(e)}`,
      }));
    }
    result = await untilStalled(untilEnd(settings, restarted, counter, () => recover(settings, restarted, replicaWf), () => false), observer, settings.stallLimitMs).catch((e: unknown) => e);
  }
  const base = {
    points: observer.points, calls: observer.calls, resumes: counter.resumes, retries: counter.retries, steps: observer.steps, crash: observer.crash, store,
    ...(earlyResume === undefined ? {} : { earlyResume }),
  };
  if (isRunResult(result)) return { ...base, outcome: withGivenValues(outcomeOf(await log.read(), result), counter), problems: [] };
  const node = result instanceof RemitError || result instanceof RunStopped || result instanceof MissingResumeValueError || result instanceof ResumeFunctionThrewError
    ? result.node
    : undefined;
  const why = result instanceof RetriesSpent && node !== undefined ? repeatedKeyHint(settings, observer, node) : '';
  const stopped: WorkflowProblem = { property: 'liveness', ...faultOf(observer.crash), ...(node === undefined ? {} : { node }), message: `the run did not reach its end: ${describe(result)}${why}` };
  return {
    ...base, outcome: NOT_ENDED, problems: [stopped],
    ...(isUsageError(result) ? { usage: result } : {}), ...(result instanceof RunStopped && result.stalled ? { stalled: true as const } : {}),
  };
}

/**
 * Why an effect's handler kept throwing, when its key is one it returned for before: a handler
 * that refuses a key it has seen (a unique-key insert, a "duplicate request" error) fails every
 * call after a crash inside its first one, in production as here (where every run of the check
 * has the run id checked-run, so its keys repeat from run to run).
 */
function repeatedKeyHint(settings: DriveSettings, observer: Observer, node: string): string {
  const key = observer.lastKey.get(node);
  if (key === undefined || !settings.answeredKeys.has(key)) return '';
  return ` (the handler of ${node} threw for key ${key}, which it had returned for before, in an earlier run or attempt of this check: ` +
    'a handler is called again with the same key after a crash inside its call, and must answer as it did the first time; ' +
    'treat the outside system\'s "already done" or "duplicate" answer for the key as success and return the first result)';
}

/**
 * `running`, or RunStopped once the run went `limitMs` without progress (a fault point reached):
 * node code, a handler or a resume function that never settles would otherwise hold the check
 * until the test runner's timeout, saying nothing of where. What it was running goes on unawaited
 * until its next fault point, where the abandoned observer stops it (Observer.abandoned).
 */
function untilStalled<T>(running: Promise<T>, observer: Observer, limitMs: number, abandon = () => { observer.abandoned = true; }): Promise<T> {
  // The timer and the clock REMIT loaded with (internalTimers): under a test's fake timers a faked
  // setTimeout never fired, and the check never settled; a frozen fake clock never saw a stall.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_resolve, reject) => {
    const check = () => {
      const idle = internalTimers.monotonicNow() - observer.progress.at;
      if (idle < limitMs) {
        timer = internalTimers.setTimeout(check, limitMs - idle);
        return;
      }
      abandon();
      const { point, node } = observer.progress;
      const since = point === null ? 'since the run began' : `since fault point ${point}`;
      reject(new RunStopped(
        `no progress for ${limitMs} ms (stallLimitMs) ${since}: node code, an effect handler or a resume function that never settles? (slower code needs a larger stallLimitMs)`,
        node,
        true,
      ));
    };
    timer = internalTimers.setTimeout(check, limitMs);
  });
  return Promise.race([running, stalled]).finally(() => internalTimers.clearTimeout(timer));
}

/** After a crash: start again when nothing was durable, else continue. */
async function recover(settings: DriveSettings, remit: Remit, wf: Workflow): Promise<RunResult> {
  const listed = (await remit.store.listRuns()).some((r) => r.runId === RUN_ID);
  return listed ? remit.continueRun(RUN_ID) : remit.start(wf, settings.input, { runId: RUN_ID });
}

/**
 * Resume each parked interrupt with its value until the run completes or fails. Node code that
 * throws (HandlerThrewError) is retried by continuing the run, as recoverAll or a caller would.
 * Once `crashed`, the sequencer is dropped: what it threw or returned is given back as it is.
 */
async function untilEnd(settings: DriveSettings, remit: Remit, counter: Counter, begin: () => Promise<RunResult>, crashed: () => boolean): Promise<RunResult> {
  let retries = 0;
  let next = begin;
  for (;;) {
    let result: RunResult;
    try {
      result = await next();
    } catch (error) {
      if (crashed() || !(error instanceof HandlerThrewError)) throw error;
      if (retries++ >= settings.maxRetries) {
        throw new RetriesSpent(`node code still threw after ${settings.maxRetries} retries (maxRetries, counted per sequencer): ${describe(error)}`, error.node);
      }
      counter.retries += 1;
      next = () => remit.continueRun(RUN_ID);
      continue;
    }
    if (crashed() || result.status === 'completed' || result.status === 'failed') return result;
    if (result.status !== 'parked') throw new RunStopped(`the run was left ${result.status} at seq ${result.headSeq}: another sequencer holds it`);
    const interrupt = result.interrupt;
    // A resume retried after its apply threw (the interrupt not consumed) is the same resume.
    if (!counter.resumed.has(interrupt.id)) {
      if (counter.resumes >= settings.maxResumes) throw new RunStopped(`still parked after ${settings.maxResumes} resumes (maxResumes), at ${interrupt.node}`, interrupt.node);
      counter.resumes += 1;
      counter.resumed.add(interrupt.id);
    }
    const value = await resumeValue(settings, result);
    const text = jsonText(value);
    if (text !== undefined) counter.given.set(interrupt.id, text);
    next = () => remit.resume(RUN_ID, interrupt.id, value);
  }
}

/** The value `options.resume` gives the interrupt the run parked at (a function's Promise awaited). */
async function resumeValue(settings: DriveSettings, parked: Extract<RunResult, { status: 'parked' }>): Promise<unknown> {
  const interrupt = parked.interrupt;
  if (!Object.hasOwn(settings.resume, interrupt.node)) throw new MissingResumeValueError(settings.workflow.name, interrupt.node);
  const given = settings.resume[interrupt.node];
  let value = given;
  if (typeof given === 'function') {
    try {
      value = await (given as (state: unknown, interruptId: string) => unknown)(parked.state, interrupt.id);
    } catch (error) {
      throw new ResumeFunctionThrewError(interrupt.node, error);
    }
  }
  refuseUnloggable(settings.workflow, interrupt.node, value);
  return value;
}

/** Errors that say a value of `options.resume` cannot be logged: usage errors, though the library's. */
const unloggableResumeValues = new WeakSet<Error>();

/**
 * A resume value its schema takes, whose output the log cannot hold as it is (undefined, a BigInt,
 * a Date or a Map the schema lets through): NotJsonError or ValueUnfaithfulError, as resume()
 * would throw, marked as the options' mistake. The schema itself (a transform that is not
 * idempotent) is the workflow's, left to resume(); a value the schema refuses too
 * (ResumeValueInvalidError).
 */
function refuseUnloggable(workflow: Workflow, node: string, value: unknown): void {
  const def = workflow.nodes.get(node);
  if (def?.kind !== 'interrupt') return;
  const parsed = validate(def.spec.resume, value);
  if (!parsed.success) return;
  try {
    durableValue('resume value', parsed.data, null, { runId: RUN_ID, node });
  } catch (error) {
    if (error instanceof Error) unloggableResumeValues.add(error);
    throw error;
  }
}

/** checkWorkflow's options lack the resume value of an interrupt the run reached: the options are wrong, not the workflow. */
export class MissingResumeValueError extends Error {
  readonly code = TestingErrorCode.MISSING_RESUME_VALUE;
  constructor(readonly workflow: string, readonly node: string) {
    super(`checkWorkflow: the run of ${workflow} parked at interrupt ${node}, and options.resume has no value for it (resume: { ${JSON.stringify(node)}: <value or (state, interruptId) => value> })`);
    this.name = 'MissingResumeValueError';
  }
}

/** A resume function of checkWorkflow's options threw (or its Promise rejected): the options are wrong, not the workflow. */
export class ResumeFunctionThrewError extends Error {
  readonly code = TestingErrorCode.RESUME_FUNCTION_THREW;
  constructor(readonly node: string, cause: unknown) {
    super(`checkWorkflow: options.resume[${JSON.stringify(node)}] threw: ${describe(cause)}`, { cause });
    this.name = 'ResumeFunctionThrewError';
  }
}

/** Errors of checkWorkflow's own options, met while driving the fault-free run. */
function isUsageError(error: unknown): error is Error {
  return error instanceof MissingResumeValueError || error instanceof ResumeFunctionThrewError || error instanceof ResumeValueInvalidError ||
    (error instanceof Error && unloggableResumeValues.has(error));
}

interface Scenario {
  /** Whether the run reached the spec's fault point and crashed there. */
  crashed: boolean;
  problems: WorkflowProblem[];
  unchecked: string | null;
}

/** One crash scenario, at the point `spec` picks: the checks of a recovered run against the fault-free one. */
async function crashScenario(settings: DriveSettings, reference: Drive, spec: string, compare: boolean): Promise<Scenario & { stalled: boolean }> {
  const run = await drive(settings, spec);
  return { ...(await judgeScenario(settings, reference, run, spec, compare)), stalled: run.stalled === true };
}

async function judgeScenario(settings: DriveSettings, reference: Drive, run: Drive, spec: string, compare: boolean): Promise<Scenario> {
  if (run.crash === null) return notReached(reference, run, spec, compare);
  const fault = run.crash.at.spec;
  // A second claim admitted before recovery may leave a log recovery cannot go on from: that
  // claim is named first, as the cause of the liveness problem after it.
  const early: WorkflowProblem[] = run.earlyResume ? [{ property: 'consume-once', fault, ...run.earlyResume }] : [];
  if (run.problems.length > 0) return { crashed: true, problems: [...early, ...run.problems.map((p) => ({ ...p, fault }))], unchecked: null };
  const problems: WorkflowProblem[] = [];
  const after = (await run.store.readRecords(RUN_ID)).map((r) => r.bytes);
  const prefix = prefixProblem(run.crash.durable, after);
  if (prefix !== null) problems.push({ property: 'prefix', fault, ...recordNode(run.crash.durable[firstChangedRecord(run.crash.durable, after)]), message: prefix });
  const comparison = compare ? compareOutcomes(reference.outcome, run.outcome, { a: 'the fault-free run', b: 'the recovered run' }) : { difference: null, unchecked: null };
  if (comparison.difference !== null) problems.push(problem('recovered-run', fault, comparison.difference, 'after recovery the run differs from the fault-free one: '));
  for (const effect of effectProblems(run.calls, run.crash.inFlight, after)) {
    problems.push({ property: 'effects', fault, ...(effect.node === undefined ? {} : { node: effect.node }), message: effect.message });
  }
  if (run.crash.claimDurable) {
    const remit = new Remit(run.store, settings.core, [settings.fresh()], NO_HOOKS, UNGROUPED, { instanceId: settings.ids.one() });
    const late = await secondResume(run.crash.durable, remit, 'after recovery');
    problems.push(...early, ...(late === null ? [] : [{ property: 'consume-once' as const, fault, ...late }]));
  }
  return { crashed: true, problems, unchecked: comparison.unchecked };
}

/**
 * A scenario whose run did not reach its fault point, so did not crash. Node code that threw and
 * was retried, in the reference or in this run, explains it (the points of a retry); otherwise,
 * after two fault-free runs that agreed, the run took another way than they did.
 */
function notReached(reference: Drive, run: Drive, spec: string, compare: boolean): Scenario {
  const problems = run.problems.map((p) => ({ ...p, fault: spec, message: `before reaching this fault point: ${p.message}` }));
  if (problems.length > 0) return { crashed: false, problems, unchecked: null };
  if (!compare) return { crashed: false, problems: [], unchecked: 'not crashed at: this run did not reach it (the fault-free runs differ)' };
  // The run ended without crashing: it is compared with the fault-free one as any run is. A
  // difference before any outside value differed is the answer (retries do not change a
  // deterministic run's path or states); an outside value that differed explains the other way.
  const comparison = compareOutcomes(reference.outcome, run.outcome, { a: 'the fault-free run', b: 'this run' });
  if (comparison.difference !== null) {
    return { crashed: false, problems: [problem('determinism', spec, comparison.difference, 'the run did not reach this fault point, and it differs from the fault-free run: ')], unchecked: null };
  }
  if (comparison.unchecked !== null) return { crashed: false, problems: [], unchecked: `not crashed at: this run did not reach it after ${comparison.unchecked}` };
  if (reference.retries + run.retries > 0) {
    const where = reference.retries > 0 ? `the fault-free run retried node code that threw ${reference.retries} time(s), this run ${run.retries}` : `this run retried node code that threw ${run.retries} time(s), the fault-free run did not`;
    return { crashed: false, problems: [], unchecked: `not crashed at: this run did not reach it (${where}, so they reach different fault points)` };
  }
  const node = reference.points.find((p) => p.spec === spec)?.info.node;
  return {
    crashed: false,
    problems: [{
      property: 'determinism', fault: spec, ...(node === undefined ? {} : { node }),
      message: 'the run did not reach this fault point, which the fault-free runs reached without retrying: it took another way than they did (a route, a pure node or an apply is not deterministic)',
    }],
    unchecked: null,
  };
}

function problem(property: CheckedProperty, fault: string | undefined, difference: Difference, prefix: string): WorkflowProblem {
  return { property, ...(fault === undefined ? {} : { fault }), ...(difference.node === undefined ? {} : { node: difference.node }), message: `${prefix}${difference.message}` };
}

/** The first record durable at the crash that recovery changed or lost (-1: none). */
function firstChangedRecord(durable: readonly Uint8Array[], after: readonly Uint8Array[]): number {
  return durable.findIndex((bytes, seq) => after[seq] === undefined || !bytesEqual(bytes, after[seq]!));
}

/** The records durable at the crash must be the first records of the recovered log, byte for byte. */
export function prefixProblem(durable: readonly Uint8Array[], after: readonly Uint8Array[]): string | null {
  const changed = firstChangedRecord(durable, after);
  if (changed < 0) return null;
  return `record ${changed}, durable at the crash, is ${after[changed] === undefined ? 'missing' : 'different'} after recovery`;
}

/** The node a record names, if it names one. */
function recordNode(bytes: Uint8Array | undefined): { node?: string } {
  if (bytes === undefined) return {};
  const step = decodeRecordAt(bytes, 0);
  return step.outcome === 'record' && 'node' in step.record ? { node: fromUtf8(step.record.node) } : {};
}

/** A problem of the effects check: its message, the key, and the effect's node (from the key's intent). */
export interface EffectProblem {
  key: string;
  node?: string;
  message: string;
}

/**
 * Each key called once, or twice when the crash fell inside its call; every key called is one the
 * run recorded an outcome for: its EFFECT_DONE, or the run's failure at that node (a handler that
 * called fail()).
 */
export function effectProblems(calls: readonly string[], inFlightAtCrash: ReadonlySet<string>, after: readonly Uint8Array[]): EffectProblem[] {
  const records = decodeLog(concatBytes(after)).records;
  const recorded = recordedKeys(records);
  const released = countBy(records.filter((r) => r.kind === RecordKind.EFFECT_RELEASED).map((r) => fromUtf8((r as { key: Uint8Array }).key)));
  const nodes = new Map<string, string>();
  for (const r of records) if (r.kind === RecordKind.EFFECT_INTENT || r.kind === RecordKind.EFFECT_DONE) nodes.set(fromUtf8(r.key), fromUtf8(r.node));
  const problems: EffectProblem[] = [];
  for (const [key, made] of countBy(calls)) {
    const node = nodes.get(key);
    const of = { key, ...(node === undefined ? {} : { node }) };
    // One call, one more per attempt released after its handler threw, one more for the crash.
    const allowed = 1 + (released.get(key) ?? 0) + (inFlightAtCrash.has(key) ? 1 : 0);
    if (made > allowed) problems.push({ ...of, message: `the handler of ${key} was called ${made} times (at most ${allowed}: once, once more per attempt released after a throw, once more if the crash fell inside a call)` });
    if (!recorded.has(key)) problems.push({ ...of, message: `the handler was called with key ${key}, for which the run recorded no outcome: the outside system saw an effect the run does not record` });
  }
  return problems;
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

/** The keys a log records an outcome for: EFFECT_DONE, and the last intent of a node the run failed at. */
function recordedKeys(records: readonly LogRecord[]): Set<string> {
  const keys = new Set<string>();
  const lastIntent = new Map<string, string>();
  for (const r of records) {
    if (r.kind === RecordKind.EFFECT_INTENT) lastIntent.set(fromUtf8(r.node), fromUtf8(r.key));
    if (r.kind === RecordKind.EFFECT_DONE) keys.add(fromUtf8(r.key));
    if (r.kind === RecordKind.RUN_FAILED && lastIntent.has(fromUtf8(r.node))) keys.add(lastIntent.get(fromUtf8(r.node))!);
  }
  return keys;
}

type ResumeClaimed = Extract<LogRecord, { kind: typeof RecordKind.RESUME_CLAIMED }>;

/**
 * With a resume claim durable (the last claim of `durable`, the records at the crash), a second
 * resume of that interrupt, with the value claimed, is refused as consumed (null), or the problem.
 * `when`: before recovery (the claim open, its node not completed) or after it.
 */
async function secondResume(durable: readonly Uint8Array[], remit: Remit, when: string): Promise<{ node: string; message: string } | null> {
  const claim = decodeLog(concatBytes(durable)).records.filter((r): r is ResumeClaimed => r.kind === RecordKind.RESUME_CLAIMED).pop();
  if (claim === undefined) return null;
  const interruptId = fromUtf8(claim.interruptId);
  const again = await remit.resume(RUN_ID, interruptId, JSON.parse(fromUtf8(claim.value))).then(
    () => null,
    (error: unknown) => error,
  );
  if (again instanceof AlreadyConsumedError) return null;
  const message = `a second resume of ${interruptId}, after its claim was durable, ${when}, was ${again === null ? 'accepted' : `refused with ${describe(again)}, not AlreadyConsumedError`}`;
  return { node: nodeOfInterruptId(interruptId), message };
}

function referenceOf(run: Drive): WorkflowCheckReport['reference'] {
  return { status: run.outcome.status, path: run.outcome.path, state: run.outcome.state, effectCalls: run.calls.length, retries: run.retries, steps: run.steps };
}

/** `count` indexes spread evenly over `length` points, each in the middle of its share (every one when count covers them). */
function choose(length: number, count: number): number[] {
  if (count >= length) return Array.from({ length }, (_, i) => i);
  return Array.from({ length: count }, (_, i) => Math.floor(((i + 0.5) * length) / count));
}

function faultOf(crash: Crash | null): { fault?: string } {
  return crash === null ? {} : { fault: crash.at.spec };
}

function isRunResult(value: unknown): value is RunResult {
  return typeof value === 'object' && value !== null && 'status' in value && 'runId' in value && !(value instanceof Error);
}

/** JSON text of a value given (undefined when it has none: a cycle or a BigInt its schema strips). */
function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) as string | undefined;
  } catch {
    return undefined;
  }
}

function describe(value: unknown): string {
  if (value instanceof RunStopped) return value.message;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  return String(value);
}

