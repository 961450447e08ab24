/**
 * `checkWorkflow`: the resume contract on a service's own workflow, in its own tests. It runs the
 * workflow once without faults (twice: the two must agree), then once per fault point that run
 * reached, crashing there and recovering in a fresh sequencer on the same store, as a restarted
 * process would, and checks each recovered run against the fault-free one:
 *   - determinism: two fault-free runs from the same input take the same path, with the same
 *     effect results, to the same state (a pure node reading a clock or Math.random fails this);
 *   - prefix continuation: the records durable at the crash are the first records after recovery;
 *   - recovered run: the same terminal status and node path, and, when its effects were called
 *     under the same keys, the same effect results and final state;
 *   - effects: every effect's handler is called once, or twice only when the crash fell between
 *     its call and the record of its result (the documented bound), always under one key, and
 *     every key a handler was called with is one the run completed;
 *   - consume-once: after a crash with a resume claim durable, a second resume of the same
 *     interrupt is refused, and the run goes on with the value claimed first;
 *   - liveness: recovery reaches the end with no error but the injected crash.
 * The handlers are called once per scenario: give checkWorkflow a workflow built with test doubles
 * (a factory taking its clients, as in docs/guide.md, "Checking your own workflow"). A crash here is
 * a thrown InjectedFault and a discarded sequencer over a memory store; the conformance harness
 * (conformance/) kills real processes.
 */

import { concatBytes, decodeLog } from '../core/codec.js';
import { createCore, type CoreKind } from '../core/index.js';
import { RecordKind, type LogRecord, type RecoveryCore } from '../core/types.js';
import { AlreadyConsumedError } from '../errors.js';
import { type FaultInfo, type FaultPoint, type SequencerHooks } from '../faults.js';
import { bytesEqual, fromUtf8 } from '../json.js';
import { Remit } from '../remit.js';
import type { RunResult } from '../sequencer/run-result.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import type { InputOf, Workflow } from '../workflow/workflow.js';
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
  /** At most this many fault scenarios, spread over the run (default: every fault point reached). */
  maxScenarios?: number;
  /** At most this many resumes in one run (default 1000): a run that parks more is reported as not ending. */
  maxResumes?: number;
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
  /** The fault-free run: its status, its node path (the nodes it completed, in order) and its final state. */
  reference: { status: string; path: string[]; state: unknown; effectCalls: number };
  /** The crash of each scenario run, as a fault spec (parseFaultSpec, hooksFor), in the order reached. */
  faults: string[];
  /** Empty when every check held. */
  problems: WorkflowProblem[];
}

const RUN_ID = 'checked-run';
const INSTANCE_ID = 'check-workflow';

/** Check `workflow` against the resume contract from `options.input` (see the module comment). */
export async function checkWorkflow<W extends Workflow>(workflow: W, options: CheckWorkflowOptions<W>): Promise<WorkflowCheckReport> {
  const core = typeof options.core === 'object' ? options.core : await createCore(options.core ?? 'wasm');
  const settings: DriveSettings = { workflow, core, input: options.input, resume: options.resume ?? {}, maxResumes: options.maxResumes ?? 1000 };
  const first = await drive(settings, null);
  if (first.failure instanceof MissingResumeValueError) throw first.failure;
  const second = await drive(settings, null);
  const problems: WorkflowProblem[] = [...first.problems, ...second.problems.filter((p) => p.property !== 'liveness')];
  const difference = differenceOf(first.outcome, second.outcome);
  // Without determinism a recovered run cannot be compared with the fault-free one: the other
  // checks (prefix, effects, consume-once, liveness) still run.
  const deterministic = difference === null;
  if (!deterministic) {
    problems.push({ property: 'determinism', message: `two fault-free runs from the same input differ: ${difference}; recovered runs are not compared with the fault-free one` });
  }
  const points = choose(first.points, options.maxScenarios ?? first.points.length);
  for (const index of points) problems.push(...(await crashScenario(settings, first, index, deterministic)));
  return {
    workflow: workflow.name,
    reference: { status: first.outcome.status, path: first.outcome.path, state: first.outcome.state, effectCalls: first.calls.length },
    faults: points.map((i) => first.points[i]!.spec),
    problems,
  };
}

interface DriveSettings {
  workflow: Workflow;
  core: RecoveryCore;
  input: unknown;
  resume: Record<string, ResumeValue>;
  maxResumes: number;
}

/** What a run came to, as compared between runs: status, node path, effect results, final state. */
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

interface Drive {
  outcome: Outcome;
  points: PointReached[];
  /** The idempotency keys handlers were called with, one entry per call. */
  calls: string[];
  problems: WorkflowProblem[];
}

/** A crash at the `crashAt`-th fault point reached: what the store held then. */
interface Crash {
  at: PointReached;
  durable: Uint8Array[];
  /** Keys whose handler had been called and whose result was not yet durable. */
  inFlight: Set<string>;
  claimDurable: boolean;
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
    if (point === 'effect.before-handler') this.calls.push(await this.keyAt(info));
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
    const records = await this.store.readRecords(RUN_ID).catch(() => []);
    const decoded = records.length === 0 ? [] : decodeLog(concatBytes(records.map((r) => r.bytes))).records;
    const done = new Set(decoded.filter((r) => r.kind === RecordKind.EFFECT_DONE).map((r) => fromUtf8((r as { key: Uint8Array }).key)));
    const claimDurable = at.point === 'resume.after-claim' || (at.point === 'append.after' && (at.info.kinds ?? []).includes('RESUME_CLAIMED'));
    return { at, durable: records.map((r) => r.bytes.slice()), inFlight: new Set(this.calls.filter((k) => !done.has(k))), claimDurable };
  }

  /** The key of the effect about to be called: the last EFFECT_INTENT of its node in the store. */
  async keyAt(info: FaultInfo): Promise<string> {
    const records = decodeLog(concatBytes((await this.store.readRecords(info.runId)).map((r) => r.bytes))).records;
    const intent = records.filter((r) => r.kind === RecordKind.EFFECT_INTENT && fromUtf8(r.node) === info.node).pop() as { key: Uint8Array } | undefined;
    return intent === undefined ? `${info.node ?? '?'}@?` : fromUtf8(intent.key);
  }
}

/**
 * Start the run and resume it until it ends; with `crashAt`, crash at that fault point and go on
 * in a fresh sequencer (no hooks) on the same store, as a restarted process.
 */
async function drive(settings: DriveSettings, crashAt: number | null): Promise<Drive & { crash: Crash | null; store: MemoryStore; failure?: unknown }> {
  const backing = new MemoryBacking();
  const store = new MemoryStore({ backing });
  const observer = new Observer(store, crashAt);
  const problems: WorkflowProblem[] = [];
  const faulted = new Remit(store, settings.core, [settings.workflow], observer, {}, { instanceId: INSTANCE_ID });
  let result = await untilEnd(settings, faulted, () => faulted.start(settings.workflow, settings.input, { runId: RUN_ID })).catch((error: unknown) => error);
  if (result instanceof InjectedFault) {
    const restarted = new Remit(new MemoryStore({ backing }), settings.core, [settings.workflow], counting(observer), {}, { instanceId: INSTANCE_ID });
    result = await untilEnd(settings, restarted, () => recover(settings, restarted)).catch((error: unknown) => error);
  }
  if (!isRunResult(result)) {
    problems.push({ property: 'liveness', ...faultOf(observer.crash), message: `the run did not reach its end: ${describe(result)}` });
    const outcome = { status: 'error', path: [], effectKeys: [], effectResults: [], state: undefined };
    return { outcome, points: observer.points, calls: observer.calls, problems, crash: observer.crash, store, failure: result };
  }
  return { outcome: await outcomeOf(store, result), points: observer.points, calls: observer.calls, problems, crash: observer.crash, store };
}

/** The observer's handler count, without its crash: the restarted process has no fault. */
function counting(observer: Observer): SequencerHooks {
  return {
    async at(point, info) {
      if (point === 'effect.before-handler') observer.calls.push(await observer.keyAt(info));
    },
  };
}

/** After a crash: start again when nothing was durable, else continue. */
async function recover(settings: DriveSettings, remit: Remit): Promise<RunResult> {
  const listed = (await remit.store.listRuns()).some((r) => r.runId === RUN_ID);
  return listed ? remit.continueRun(RUN_ID) : remit.start(settings.workflow, settings.input, { runId: RUN_ID });
}

/** checkWorkflow's options lack the resume value of an interrupt the run reached: the options are wrong, not the workflow. */
export class MissingResumeValueError extends Error {
  constructor(readonly workflow: string, readonly node: string) {
    super(`checkWorkflow: the run of ${workflow} parked at interrupt ${node}, and options.resume has no value for it (resume: { ${JSON.stringify(node)}: <value> })`);
    this.name = 'MissingResumeValueError';
  }
}

/** Resume each parked interrupt with its value until the run completes or fails. */
async function untilEnd(settings: DriveSettings, remit: Remit, begin: () => Promise<RunResult>): Promise<RunResult> {
  let result = await begin();
  for (let resumes = 0; result.status === 'parked'; resumes++) {
    if (resumes >= settings.maxResumes) throw new Error(`still parked after ${settings.maxResumes} resumes (maxResumes)`);
    const interrupt = result.interrupt!;
    if (!Object.hasOwn(settings.resume, interrupt.node)) throw new MissingResumeValueError(settings.workflow.name, interrupt.node);
    const given = settings.resume[interrupt.node];
    const value = typeof given === 'function' ? (given as (s: unknown, id: string) => unknown)(result.state, interrupt.id) : given;
    result = await remit.resume(RUN_ID, interrupt.id, value);
  }
  return result;
}

/** One crash scenario: the checks of a recovered run against the fault-free one. */
async function crashScenario(settings: DriveSettings, reference: Drive, index: number, compare: boolean): Promise<WorkflowProblem[]> {
  const run = await drive(settings, index);
  const fault = run.crash === null ? reference.points[index]!.spec : run.crash.at.spec;
  if (run.crash === null) {
    return compare ? [{ property: 'determinism', fault, message: 'the run did not reach this fault point again (it took another path than the fault-free run)' }] : [];
  }
  const problems = run.problems.map((p) => ({ ...p, fault }));
  if (problems.length > 0) return problems;
  const after = (await run.store.readRecords(RUN_ID)).map((r) => r.bytes);
  const prefix = prefixProblem(run.crash.durable, after);
  if (prefix !== null) problems.push({ property: 'prefix', fault, message: prefix });
  const difference = compare ? differenceOf(reference.outcome, run.outcome) : null;
  if (difference !== null) problems.push({ property: 'recovered-run', fault, message: `after recovery the run differs from the fault-free one: ${difference}` });
  problems.push(...effectProblems(run.calls, run.crash.inFlight, after).map((message) => ({ property: 'effects' as const, fault, message })));
  if (run.crash.claimDurable) problems.push(...(await consumeOnceProblems(settings, run)).map((message) => ({ property: 'consume-once' as const, fault, message })));
  return problems;
}

/** The records durable at the crash must be the first records of the recovered log, byte for byte. */
export function prefixProblem(durable: Uint8Array[], after: Uint8Array[]): string | null {
  const changed = durable.findIndex((bytes, seq) => after[seq] === undefined || !bytesEqual(bytes, after[seq]!));
  if (changed < 0) return null;
  return `record ${changed}, durable at the crash, is ${after[changed] === undefined ? 'missing' : 'different'} after recovery`;
}

/** Each key called once, or twice when the crash fell inside its call; every key called is one the run completed. */
export function effectProblems(calls: readonly string[], inFlightAtCrash: ReadonlySet<string>, after: readonly Uint8Array[]): string[] {
  const done = new Set(decodeLog(concatBytes(after)).records.filter((r) => r.kind === RecordKind.EFFECT_DONE).map((r) => fromUtf8((r as { key: Uint8Array }).key)));
  const counts = new Map<string, number>();
  for (const key of calls) counts.set(key, (counts.get(key) ?? 0) + 1);
  const problems: string[] = [];
  for (const [key, made] of counts) {
    const allowed = inFlightAtCrash.has(key) ? 2 : 1;
    if (made > allowed) problems.push(`the handler of ${key} was called ${made} times (at most ${allowed} with this crash)`);
    if (!done.has(key)) problems.push(`the handler was called with key ${key}, which the run never completed: the outside system saw an effect the run does not record`);
  }
  return problems;
}

type ResumeClaimed = Extract<LogRecord, { kind: typeof RecordKind.RESUME_CLAIMED }>;

/** With a resume claim durable, a second resume of that interrupt is refused as consumed. */
async function consumeOnceProblems(settings: DriveSettings, run: { store: MemoryStore; crash: Crash | null }): Promise<string[]> {
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
  const records = decodeLog(concatBytes((await store.readRecords(RUN_ID)).map((r) => r.bytes))).records;
  const path: string[] = [];
  const effectKeys: string[] = [];
  const effectResults: string[] = [];
  for (const r of records) {
    if (r.kind === RecordKind.NODE_COMPLETED) path.push(fromUtf8(r.node));
    if (r.kind !== RecordKind.EFFECT_DONE) continue;
    effectKeys.push(fromUtf8(r.key));
    effectResults.push(`${fromUtf8(r.node)}: ${fromUtf8(r.result)}`);
  }
  return { status: result.status, path, effectKeys, effectResults, state: result.state };
}

/**
 * The first way two outcomes differ, or null. Effect results and the final state are compared only
 * when both runs called their effects under the same keys: a key holds the seq of its intent, so a
 * crash that added an attempt record gives every later effect another key, and a handler whose
 * result depends on its key (a receipt id) then returns another result, rightly.
 */
function differenceOf(a: Outcome, b: Outcome): string | null {
  if (a.status !== b.status) return `status ${a.status} against ${b.status}`;
  const step = a.path.findIndex((node, i) => b.path[i] !== node);
  if (step >= 0 || a.path.length !== b.path.length) {
    const at = step >= 0 ? step : Math.min(a.path.length, b.path.length);
    return `node path ${JSON.stringify(a.path)} against ${JSON.stringify(b.path)} (from step ${at})`;
  }
  if (a.effectKeys.length !== b.effectKeys.length) return `${a.effectKeys.length} effects completed against ${b.effectKeys.length}`;
  if (a.effectKeys.some((key, i) => b.effectKeys[i] !== key)) return null;
  const effect = a.effectResults.findIndex((text, i) => b.effectResults[i] !== text);
  if (effect >= 0) return `effect result ${JSON.stringify(a.effectResults[effect])} against ${JSON.stringify(b.effectResults[effect])}`;
  const sa = JSON.stringify(a.state);
  const sb = JSON.stringify(b.state);
  if (sa !== sb) return `final state ${sa} against ${sb}${pureNodeHint(a, b)}`;
  return null;
}

/** Same path and effect results but another state: a node computed it differently. */
function pureNodeHint(a: Outcome, b: Outcome): string {
  return a.path.length === b.path.length ? ' (same path and effect results: a pure node or an apply is not deterministic)' : '';
}

/** `count` indexes spread evenly over `points` (every one when count covers them). */
function choose(points: readonly PointReached[], count: number): number[] {
  const n = Math.max(0, Math.min(points.length, Math.floor(count)));
  if (n === points.length) return points.map((_, i) => i);
  return Array.from({ length: n }, (_, i) => Math.floor((i * points.length) / n));
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
