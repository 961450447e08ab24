/**
 * `checkWorkflow`: the resume contract on a service's own workflow, in its own tests. It runs the
 * workflow twice without faults (the two must agree), then once per fault point the first run
 * reached, crashing there and recovering in a fresh sequencer with another instance id on the
 * same store, as a restarted replica would (its clock past the crashed one's leases), and checks
 * each recovered run against the fault-free one:
 *   - determinism: two fault-free runs from the same input take the same path and, when their
 *     effects returned the same results, end in the same state;
 *   - prefix continuation: the records durable at the crash are the first records after recovery;
 *   - recovered run: the same terminal status and node path, and, when its effects were called
 *     under the same keys and returned the same results, the same final state;
 *   - effects: every effect's handler is called once, or twice only when the crash fell between
 *     its call and the record of its outcome (the documented bound), and only under keys the run
 *     recorded an outcome for (a result, or the run's failure at that node);
 *   - consume-once: after a crash with a resume claim durable, a second resume of the same
 *     interrupt is refused, and the run goes on with the value claimed first;
 *   - liveness: recovery reaches the end with no error but the injected crash (node code that
 *     throws is retried by continuing the run, as recoverAll would, `maxRetries` times).
 * Comparisons it cannot make (effects that answered differently) are listed in `unchecked`. The
 * handlers are called once per scenario: give checkWorkflow a workflow built with test doubles that
 * answer a repeated key as the first time, as an idempotent API does (docs/guide.md, "Checking
 * your own workflow"). A crash here is a thrown InjectedFault and a discarded sequencer over a
 * memory store; the conformance harness (conformance/) kills real processes.
 */

import { concatBytes, decodeLog } from '../core/codec.js';
import { createCore, type CoreKind } from '../core/index.js';
import { RecordKind, type LogRecord, type RecoveryCore } from '../core/types.js';
import { AlreadyConsumedError, ArgumentInvalidError, HandlerThrewError, OptionInvalidError, ResumeValueInvalidError } from '../errors.js';
import type { FaultInfo, FaultPoint, SequencerHooks } from '../faults.js';
import { bytesEqual, fromUtf8 } from '../json.js';
import { allKeysOf, notKnown, unknownKey } from '../known-keys.js';
import { Remit, startState } from '../remit.js';
import type { RunResult } from '../sequencer/run-result.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { isBuiltWorkflow, type InputOf, type Workflow } from '../workflow/workflow.js';
import { formatFaultSpec, InjectedFault } from './fault-spec.js';

/** A resume value for an interrupt node: the value, or a function of the state parked there. */
export type ResumeValue = unknown | ((state: unknown, interruptId: string) => unknown);

export interface CheckWorkflowOptions<W extends Workflow> {
  /** The run's input. */
  input: InputOf<W>;
  /** The value each interrupt node is resumed with, by node name (every interrupt the run reaches needs one). */
  resume?: Record<string, ResumeValue>;
  /** The recovery core (default 'wasm', as createRemit). */
  core?: CoreKind | RecoveryCore;
  /** At most this many fault scenarios, spread over the run (default: every fault point reached; at least 1). */
  maxScenarios?: number;
  /** At most this many resumes in the fault-free run (default 1000): a run that parks more is reported as not ending. */
  maxResumes?: number;
  /** How often node code that threw is retried by continuing the run (default 3). */
  maxRetries?: number;
}

export type CheckedProperty = 'determinism' | 'prefix' | 'recovered-run' | 'effects' | 'consume-once' | 'liveness';

export interface WorkflowProblem {
  property: CheckedProperty;
  /** The crash of the scenario, as a fault spec (`point[@node][#n]`, parseFaultSpec); absent for the fault-free runs. */
  fault?: string;
  message: string;
}

export interface WorkflowCheckReport {
  workflow: string;
  /** The first fault-free run: its status ('not-ended' when it did not reach its end), node path and final state. */
  reference: { status: string; path: string[]; state: unknown; effectCalls: number };
  /** The crash of each scenario run, as a fault spec (parseFaultSpec, hooksFor), in the order reached. */
  faults: string[];
  /** Empty when every check held. */
  problems: WorkflowProblem[];
  /** Comparisons that could not be made, and why (effects that answered a repeated key differently). */
  unchecked: string[];
}

const RUN_ID = 'checked-run';
/** The crashed process and the one that recovers: two replicas, as after a real restart. */
const INSTANCE_IDS = ['check-workflow-1', 'check-workflow-2'] as const;
/** The recovering replica's clock runs this far ahead, past every lease the crashed one took. */
const CLOCK_AHEAD_MS = 2 * 86_400_000;
const CHECK_OPTIONS = allKeysOf<CheckWorkflowOptions<Workflow>>()('input', 'resume', 'core', 'maxScenarios', 'maxResumes', 'maxRetries');

/** Check `workflow` against the resume contract from `options.input` (see the module comment). */
export async function checkWorkflow<W extends Workflow>(workflow: W, options: CheckWorkflowOptions<W>): Promise<WorkflowCheckReport> {
  const settings = await settingsOf(workflow, options);
  const first = await drive(settings, null);
  if (first.usage !== undefined) throw first.usage;
  const report: WorkflowCheckReport = { workflow: workflow.name, reference: referenceOf(first), faults: [], problems: [...first.problems], unchecked: [] };
  // A run that does not end without faults has nothing to recover to: no scenario is run.
  if (first.problems.length > 0) return report;
  await sleep(2); // a pure node reading a millisecond clock reads another one in the second run
  const second = await drive(settings, null);
  report.problems.push(...second.problems);
  const comparison = compareOutcomes(first.outcome, second.outcome);
  if (comparison.difference !== null) report.problems.push({ property: 'determinism', message: `two fault-free runs from the same input differ: ${comparison.difference}` });
  if (comparison.unchecked !== null) report.unchecked.push(`the two fault-free runs: ${comparison.unchecked}`);
  const deterministic = comparison.difference === null && comparison.unchecked === null;
  if (!deterministic) report.unchecked.push('recovered runs were not compared with the fault-free one: the two fault-free runs did not agree');
  const scenarioSettings = { ...settings, maxResumes: first.resumes + 1 };
  for (const index of choose(first.points.length, settings.maxScenarios)) {
    report.faults.push(first.points[index]!.spec);
    const scenario = await crashScenario(scenarioSettings, first, index, deterministic);
    report.problems.push(...scenario.problems);
    if (scenario.unchecked !== null) report.unchecked.push(`${first.points[index]!.spec}: ${scenario.unchecked}`);
  }
  return report;
}

interface DriveSettings {
  workflow: Workflow;
  core: RecoveryCore;
  input: unknown;
  resume: Record<string, ResumeValue>;
  maxScenarios: number;
  maxResumes: number;
  maxRetries: number;
}

/** The options checked and completed, before anything runs: a usage error is thrown, not reported. */
async function settingsOf<W extends Workflow>(workflow: W, options: CheckWorkflowOptions<W>): Promise<DriveSettings> {
  if (!isBuiltWorkflow(workflow)) throw new ArgumentInvalidError('workflow', 'a built workflow (workflow(...)....build())', typeof workflow);
  if (options === null || typeof options !== 'object') throw new ArgumentInvalidError('options', 'an object of checkWorkflow options ({ input, resume, ... })', String(options));
  const unknown = unknownKey(options, CHECK_OPTIONS);
  if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as unknown as Record<string, unknown>)[unknown], notKnown('an option of checkWorkflow', CHECK_OPTIONS));
  startState(workflow, options.input); // StateInvalidError and the like, as start() would throw
  const resume = options.resume ?? {};
  checkResumeNodes(workflow, resume);
  if (options.core === null) throw new OptionInvalidError('core', null, 'must be "wasm", "reference" or a RecoveryCore');
  const core = typeof options.core === 'object' ? options.core : await createCore(options.core ?? 'wasm');
  return {
    workflow, core, input: options.input, resume,
    maxScenarios: wholeOption('maxScenarios', options.maxScenarios, 1, Number.MAX_SAFE_INTEGER),
    maxResumes: wholeOption('maxResumes', options.maxResumes ?? 1000, 0, 1_000_000),
    maxRetries: wholeOption('maxRetries', options.maxRetries ?? 3, 0, 100),
  };
}

/** `resume` names interrupt nodes of the workflow only (a misspelt node would never be resumed). */
function checkResumeNodes(workflow: Workflow, resume: Record<string, ResumeValue>): void {
  if (resume === null || typeof resume !== 'object') throw new OptionInvalidError('resume', resume, 'must be an object of resume values by interrupt node name');
  for (const node of Object.keys(resume)) {
    if (workflow.nodes.get(node)?.kind === 'interrupt') continue;
    const interrupts = workflow.nodeOrder.filter((name) => workflow.nodes.get(name)!.kind === 'interrupt');
    throw new OptionInvalidError('resume', node, `names ${JSON.stringify(node)}, which is not an interrupt node of ${workflow.name} (its interrupt nodes: ${interrupts.join(', ') || 'none'})`);
  }
}

/** A whole-number option from `min` to `max`; undefined stays the default (max). */
function wholeOption(name: string, value: unknown, min: number, max: number): number {
  if (value === undefined) return max;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new OptionInvalidError(name, value, `must be a whole number from ${min} to ${max}`);
  }
  return value;
}

/** What a run came to, as compared between runs: status, node path, effect keys and results, final state. */
interface Outcome {
  status: string;
  path: string[];
  /** The key of each effect the run completed, in order. */
  effectKeys: string[];
  effectResults: string[];
  state: unknown;
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
  problems: WorkflowProblem[];
  crash: Crash | null;
  store: MemoryStore;
  /** An error that says the options are wrong (a resume value missing or refused), not the workflow. */
  usage?: Error;
}

/** The hooks of one drive: they note every point reached and every handler call, and crash at one. */
class Observer implements SequencerHooks {
  readonly points: PointReached[] = [];
  readonly calls: string[] = [];
  crash: Crash | null = null;
  private readonly seen = new Map<string, number>();

  constructor(private readonly store: MemoryStore, private readonly crashAt: number | null) {}

  async at(point: FaultPoint, info: FaultInfo): Promise<void> {
    const reached: PointReached = { point, info, spec: this.specFor(point, info) };
    const index = this.points.push(reached) - 1;
    if (index === this.crashAt && this.crash === null) {
      this.crash = await this.snapshot(reached);
      throw new InjectedFault(point, info);
    }
    await this.noteCall(point, info);
  }

  /** A handler about to be called: the key is the last EFFECT_INTENT of its node in the store. */
  async noteCall(point: FaultPoint, info: FaultInfo): Promise<void> {
    if (point !== 'effect.before-handler') return;
    const intent = decodedLog(await this.store.readRecords(info.runId))
      .filter((r): r is Extract<LogRecord, { kind: typeof RecordKind.EFFECT_INTENT }> => r.kind === RecordKind.EFFECT_INTENT && fromUtf8(r.node) === info.node)
      .pop();
    this.calls.push(intent === undefined ? `${info.node ?? '?'}@?` : fromUtf8(intent.key));
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
    const records = await this.store.readRecords(RUN_ID);
    const recorded = recordedKeys(decodedLog(records));
    const claimDurable = at.point === 'resume.after-claim' || (at.point === 'append.after' && (at.info.kinds ?? []).includes('RESUME_CLAIMED'));
    return { at, durable: records.map((r) => r.bytes.slice()), inFlight: new Set(this.calls.filter((k) => !recorded.has(k))), claimDurable };
  }
}

/**
 * Start the run and resume it until it ends; with `crashAt`, crash at that fault point and go on
 * in a fresh sequencer (another instance, no faults) on the same store, as a restarted replica.
 */
async function drive(settings: DriveSettings, crashAt: number | null): Promise<Drive> {
  const backing = new MemoryBacking();
  const store = new MemoryStore({ backing });
  const observer = new Observer(store, crashAt);
  const counter = { resumes: 0 };
  const faulted = new Remit(store, settings.core, [settings.workflow], observer, {}, { instanceId: INSTANCE_IDS[0] });
  let result = await untilEnd(settings, faulted, counter, () => faulted.start(settings.workflow, settings.input, { runId: RUN_ID })).catch((e: unknown) => e);
  if (result instanceof InjectedFault) {
    const hooks: SequencerHooks = { at: (point, info) => observer.noteCall(point, info) };
    const fence = { instanceId: INSTANCE_IDS[1], now: () => Date.now() + CLOCK_AHEAD_MS };
    const restarted = new Remit(new MemoryStore({ backing }), settings.core, [settings.workflow], hooks, {}, fence);
    result = await untilEnd(settings, restarted, counter, () => recover(settings, restarted)).catch((e: unknown) => e);
  }
  const base = { points: observer.points, calls: observer.calls, resumes: counter.resumes, crash: observer.crash, store };
  if (isRunResult(result)) return { ...base, outcome: await outcomeOf(store, result), problems: [] };
  const outcome: Outcome = { status: 'not-ended', path: [], effectKeys: [], effectResults: [], state: undefined };
  const problem: WorkflowProblem = { property: 'liveness', ...faultOf(observer.crash), message: `the run did not reach its end: ${describe(result)}` };
  return { ...base, outcome, problems: [problem], ...(isUsageError(result) ? { usage: result } : {}) };
}

/** After a crash: start again when nothing was durable, else continue. */
async function recover(settings: DriveSettings, remit: Remit): Promise<RunResult> {
  const listed = (await remit.store.listRuns()).some((r) => r.runId === RUN_ID);
  return listed ? remit.continueRun(RUN_ID) : remit.start(settings.workflow, settings.input, { runId: RUN_ID });
}

/**
 * Resume each parked interrupt with its value until the run completes or fails. Node code that
 * throws (HandlerThrewError) is retried by continuing the run, as recoverAll or a caller would.
 */
async function untilEnd(settings: DriveSettings, remit: Remit, counter: { resumes: number }, begin: () => Promise<RunResult>): Promise<RunResult> {
  let retries = 0;
  let next = begin;
  for (;;) {
    let result: RunResult;
    try {
      result = await next();
    } catch (error) {
      if (!(error instanceof HandlerThrewError) || retries++ >= settings.maxRetries) throw error;
      next = () => remit.continueRun(RUN_ID);
      continue;
    }
    if (result.status !== 'parked') return result;
    if (counter.resumes++ >= settings.maxResumes) throw new Error(`still parked after ${settings.maxResumes} resumes (maxResumes)`);
    next = () => remit.resume(RUN_ID, result.interrupt!.id, resumeValue(settings, result));
  }
}

/** The value `options.resume` gives the interrupt the run parked at. */
function resumeValue(settings: DriveSettings, parked: RunResult): unknown {
  const interrupt = parked.interrupt!;
  if (!Object.hasOwn(settings.resume, interrupt.node)) throw new MissingResumeValueError(settings.workflow.name, interrupt.node);
  const given = settings.resume[interrupt.node];
  if (typeof given !== 'function') return given;
  try {
    return (given as (state: unknown, interruptId: string) => unknown)(parked.state, interrupt.id);
  } catch (error) {
    throw new ResumeFunctionThrewError(interrupt.node, error);
  }
}

/** checkWorkflow's options lack the resume value of an interrupt the run reached: the options are wrong, not the workflow. */
export class MissingResumeValueError extends Error {
  constructor(readonly workflow: string, readonly node: string) {
    super(`checkWorkflow: the run of ${workflow} parked at interrupt ${node}, and options.resume has no value for it (resume: { ${JSON.stringify(node)}: <value> })`);
    this.name = 'MissingResumeValueError';
  }
}

/** A resume function of checkWorkflow's options threw: the options are wrong, not the workflow. */
export class ResumeFunctionThrewError extends Error {
  constructor(readonly node: string, cause: unknown) {
    super(`checkWorkflow: options.resume[${JSON.stringify(node)}] threw: ${describe(cause)}`, { cause });
    this.name = 'ResumeFunctionThrewError';
  }
}

/** Errors of checkWorkflow's own options, met while driving the fault-free run. */
function isUsageError(error: unknown): error is Error {
  return error instanceof MissingResumeValueError || error instanceof ResumeFunctionThrewError || error instanceof ResumeValueInvalidError;
}

/** One crash scenario: the checks of a recovered run against the fault-free one. */
async function crashScenario(settings: DriveSettings, reference: Drive, index: number, compare: boolean): Promise<{ problems: WorkflowProblem[]; unchecked: string | null }> {
  const run = await drive(settings, index);
  const fault = run.crash === null ? reference.points[index]!.spec : run.crash.at.spec;
  if (run.crash === null) {
    const problems: WorkflowProblem[] = compare ? [{ property: 'determinism', fault, message: 'the run did not reach this fault point again (it took another path than the fault-free run)' }] : [];
    return { problems, unchecked: compare ? null : 'the run did not reach this fault point again' };
  }
  if (run.problems.length > 0) return { problems: run.problems.map((p) => ({ ...p, fault })), unchecked: null };
  const problems: WorkflowProblem[] = [];
  const after = (await run.store.readRecords(RUN_ID)).map((r) => r.bytes);
  const prefix = prefixProblem(run.crash.durable, after);
  if (prefix !== null) problems.push({ property: 'prefix', fault, message: prefix });
  const comparison = compare ? compareOutcomes(reference.outcome, run.outcome) : { difference: null, unchecked: null };
  if (comparison.difference !== null) problems.push({ property: 'recovered-run', fault, message: `after recovery the run differs from the fault-free one: ${comparison.difference}` });
  problems.push(...effectProblems(run.calls, run.crash.inFlight, after).map((message) => ({ property: 'effects' as const, fault, message })));
  if (run.crash.claimDurable) problems.push(...(await consumeOnceProblems(settings, run)).map((message) => ({ property: 'consume-once' as const, fault, message })));
  return { problems, unchecked: comparison.unchecked };
}

/** The records durable at the crash must be the first records of the recovered log, byte for byte. */
export function prefixProblem(durable: readonly Uint8Array[], after: readonly Uint8Array[]): string | null {
  const changed = durable.findIndex((bytes, seq) => after[seq] === undefined || !bytesEqual(bytes, after[seq]!));
  if (changed < 0) return null;
  return `record ${changed}, durable at the crash, is ${after[changed] === undefined ? 'missing' : 'different'} after recovery`;
}

/**
 * Each key called once, or twice when the crash fell inside its call; every key called is one the
 * run recorded an outcome for: its EFFECT_DONE, or the run's failure at that node (a handler that
 * called fail()).
 */
export function effectProblems(calls: readonly string[], inFlightAtCrash: ReadonlySet<string>, after: readonly Uint8Array[]): string[] {
  const records = decodeLog(concatBytes(after)).records;
  const recorded = recordedKeys(records);
  const released = countBy(records.filter((r) => r.kind === RecordKind.EFFECT_RELEASED).map((r) => fromUtf8((r as { key: Uint8Array }).key)));
  const problems: string[] = [];
  for (const [key, made] of countBy(calls)) {
    // One call, one more per attempt released after its handler threw, one more for the crash.
    const allowed = 1 + (released.get(key) ?? 0) + (inFlightAtCrash.has(key) ? 1 : 0);
    if (made > allowed) problems.push(`the handler of ${key} was called ${made} times (at most ${allowed}: once, once more per attempt released after a throw, once more if the crash fell inside a call)`);
    if (!recorded.has(key)) problems.push(`the handler was called with key ${key}, for which the run recorded no outcome: the outside system saw an effect the run does not record`);
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

/** With a resume claim durable, a second resume of that interrupt is refused as consumed. */
async function consumeOnceProblems(settings: DriveSettings, run: Drive): Promise<string[]> {
  const claim = decodeLog(concatBytes(run.crash!.durable)).records.filter((r): r is ResumeClaimed => r.kind === RecordKind.RESUME_CLAIMED).pop();
  if (claim === undefined) return [];
  const interruptId = fromUtf8(claim.interruptId);
  const again = await new Remit(run.store, settings.core, [settings.workflow]).resume(RUN_ID, interruptId, JSON.parse(fromUtf8(claim.value))).then(
    () => null,
    (error: unknown) => error,
  );
  if (again instanceof AlreadyConsumedError) return [];
  return [`a second resume of ${interruptId}, after its claim was durable, was ${again === null ? 'accepted' : `refused with ${describe(again)}, not AlreadyConsumedError`}`];
}

/** The compared outcome of an ended run, from its records. */
async function outcomeOf(store: MemoryStore, result: RunResult): Promise<Outcome> {
  const outcome: Outcome = { status: result.status, path: [], effectKeys: [], effectResults: [], state: result.state };
  for (const r of decodedLog(await store.readRecords(RUN_ID))) {
    if (r.kind === RecordKind.NODE_COMPLETED) outcome.path.push(fromUtf8(r.node));
    if (r.kind !== RecordKind.EFFECT_DONE) continue;
    outcome.effectKeys.push(fromUtf8(r.key));
    outcome.effectResults.push(`${fromUtf8(r.key)}: ${fromUtf8(r.result)}`);
  }
  return outcome;
}

/**
 * The first way two outcomes differ (null: none), and a comparison that could not be made (null:
 * none). Status and node path are always compared. Effect results and the final state only when
 * both runs called their effects under the same keys (a key holds its intent's seq: a crash that
 * added an attempt record gives later effects other keys, and a result may come from the key,
 * a receipt id); the final state only when the effects also returned the same results.
 */
function compareOutcomes(a: Outcome, b: Outcome): { difference: string | null; unchecked: string | null } {
  const none = { difference: null, unchecked: null };
  if (a.status !== b.status) return { ...none, difference: `status ${a.status} against ${b.status}` };
  const step = a.path.findIndex((node, i) => b.path[i] !== node);
  if (step >= 0 || a.path.length !== b.path.length) {
    return { ...none, difference: `node path ${JSON.stringify(a.path)} against ${JSON.stringify(b.path)} (from step ${step >= 0 ? step : Math.min(a.path.length, b.path.length)})` };
  }
  if (a.effectKeys.length !== b.effectKeys.length || a.effectKeys.some((key, i) => b.effectKeys[i] !== key)) return none;
  const effect = a.effectResults.findIndex((text, i) => b.effectResults[i] !== text);
  if (effect >= 0) {
    return { ...none, unchecked: `an effect answered the same key differently (${a.effectResults[effect]} against ${b.effectResults[effect]}), so the final states were not compared` };
  }
  const [sa, sb] = [JSON.stringify(a.state), JSON.stringify(b.state)];
  if (sa !== sb) return { ...none, difference: `final state ${sa} against ${sb} (same path and effect results: a pure node, a route or an apply is not deterministic)` };
  return none;
}

function referenceOf(run: Drive): WorkflowCheckReport['reference'] {
  return { status: run.outcome.status, path: run.outcome.path, state: run.outcome.state, effectCalls: run.calls.length };
}

/** `count` indexes spread evenly over `length` points, each in the middle of its share (every one when count covers them). */
function choose(length: number, count: number): number[] {
  if (count >= length) return Array.from({ length }, (_, i) => i);
  return Array.from({ length: count }, (_, i) => Math.floor(((i + 0.5) * length) / count));
}

function decodedLog(records: readonly { bytes: Uint8Array }[]): LogRecord[] {
  return records.length === 0 ? [] : decodeLog(concatBytes(records.map((r) => r.bytes))).records;
}

function faultOf(crash: Crash | null): { fault?: string } {
  return crash === null ? {} : { fault: crash.at.spec };
}

function isRunResult(value: unknown): value is RunResult {
  return typeof value === 'object' && value !== null && 'status' in value && 'runId' in value && !(value instanceof Error);
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  return String(value);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
