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
 */

import { encodeRecord } from '../core/codec.js';
import { RecordKind, StateForm, type LogRecord, type NextAction, type RecoveredRun, type Recovery, type RecoveryCore } from '../core/types.js';
import {
  ConflictError, DefinitionMismatchError, HandlerThrewError, NotJsonError, RemitError, ResumeValueInvalidError,
  RouteInvalidError, StateInvalidError, TerminalFailure, toValidationIssues, UnknownWorkflowError,
  type ErrorSubject,
} from '../errors.js';
import type { FaultInfo, SequencerHooks } from '../faults.js';
import { bytesEqual, decodeJson, encodeJson, fromUtf8, isPlainObject, utf8, type Json } from '../json.js';
import { chooseSnapshot, computeDelta, EMPTY_DELTA } from '../state/delta.js';
import type { Store } from '../store/store.js';
import { diffDescriptors, type WorkflowDescriptor } from '../workflow/descriptor.js';
import { END, type NodeDefinition, type Route, type Workflow } from '../workflow/workflow.js';
import {
  advanceHead, checkRecovery, cloneJson, headState, kindName, recordAt, runStartedRecord, STATUS_NAMES, type HeadState, type RunStatusName,
} from './log-view.js';

export interface ParkedInterrupt {
  /** `${node}@${parkedSeq}`: pass it to resume(). */
  id: string;
  node: string;
  parkedSeq: number;
}

export interface RunFailureView {
  node: string;
  code: string;
  message: string;
}

/** Where a run stands, as recovered from its durable log. */
export interface RunResult<S = unknown> {
  runId: string;
  workflow: string;
  status: RunStatusName;
  /** The state at the head checkpoint. */
  state: S;
  /** Seq of the last durable record. */
  headSeq: number;
  interrupt?: ParkedInterrupt;
  failure?: RunFailureView;
}

/** How the sequencer batches its appends (RemitOptions). */
export interface SequencingOptions {
  /**
   * Group commit (default true): run consecutive pure nodes in memory and append their completions
   * together with the next boundary record, in one conditional append. false: one append per step.
   */
  groupPureSteps: boolean;
  /** At most this many pure steps wait in memory before they are appended anyway (default 64). */
  maxGroupedPureSteps: number;
}

export const DEFAULT_SEQUENCING: SequencingOptions = { groupPureSteps: true, maxGroupedPureSteps: 64 };

/** Appended anyway once a group's encoded records reach this size, whatever the step count. */
const MAX_GROUPED_BYTES = 4 * 1024 * 1024;

/** What a sequencer needs from its owner (the Remit instance). */
export interface Engine {
  readonly store: Store;
  readonly core: RecoveryCore;
  readonly hooks: SequencerHooks;
  readonly sequencing?: SequencingOptions;
  workflowNamed(name: string): Workflow | undefined;
  workflowNames(): string[];
}

/** A run's log bytes: one buffer that grows by doubling, so appending is not a copy of the whole log. */
class LogBuffer {
  private buffer: Uint8Array;
  private length: number;

  constructor(initial: Uint8Array) {
    this.buffer = initial;
    this.length = initial.length;
  }

  /** The log so far. Bytes under a view are never rewritten: the buffer only grows at its end. */
  get bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  get byteLength(): number {
    return this.length;
  }

  push(parts: readonly Uint8Array[]): void {
    let added = 0;
    for (const p of parts) added += p.length;
    const needed = this.length + added;
    if (needed > this.buffer.length) {
      const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2, 4096));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    for (const p of parts) {
      this.buffer.set(p, this.length);
      this.length += p.length;
    }
  }
}

/** One step's records waiting in memory for the next append (group commit). */
interface StagedRecords {
  seq: number;
  kinds: string[];
  node: string | undefined;
  encoded: Uint8Array[];
}

/** The head state as of the checkpoint record `checkpointSeq`. */
interface CachedHead extends HeadState {
  checkpointSeq: number;
}

/** One run's log, cached in memory between the sequencer's own appends. */
export class RunSession {
  private log = new LogBuffer(new Uint8Array());
  /** Records in `log`, staged ones included (-1: not counted yet, until the first recovery). */
  private recordCount = 0;
  private staged: StagedRecords[] = [];
  private stagedBytes = 0;
  private stagedSteps = 0;
  private head: CachedHead | undefined;
  private recovery: { byteLength: number; value: Recovery } | undefined;
  /** An append failed: nothing cached may be used until the log is read again. */
  private stale = false;
  private checkedWorkflow: Workflow | undefined;
  private readonly names = new Map<string, Uint8Array>();
  readonly sequencing: SequencingOptions;

  private constructor(
    private readonly engine: Engine,
    readonly runId: string,
  ) {
    this.sequencing = engine.sequencing ?? DEFAULT_SEQUENCING;
  }

  static async open(engine: Engine, runId: string): Promise<RunSession> {
    const session = new RunSession(engine, runId);
    await session.reload();
    return session;
  }

  /** The log as this session knows it: the durable records plus any staged (not yet appended). */
  get bytes(): Uint8Array {
    return this.log.bytes;
  }

  get hooks(): SequencerHooks {
    return this.engine.hooks;
  }

  /**
   * The UTF-8 bytes of a node name, encoded once per session (records only copy them into frames).
   */
  nameBytes(name: string): Uint8Array {
    let bytes = this.names.get(name);
    if (bytes === undefined) {
      bytes = utf8(name);
      this.names.set(name, bytes);
    }
    return bytes;
  }

  get hasStaged(): boolean {
    return this.staged.length > 0;
  }

  /** Forget everything in memory and read the run's log from the store. */
  async reload(): Promise<void> {
    const bytes = await this.engine.store.readLog(this.runId);
    this.log = new LogBuffer(bytes);
    this.staged = [];
    this.stagedBytes = 0;
    this.stagedSteps = 0;
    this.head = undefined;
    this.recovery = undefined;
    this.stale = false;
    this.recordCount = bytes.length === 0 ? 0 : -1;
  }

  /** The core's view of the log (durable plus staged records); computed once per log length. */
  recover(allowEmpty = false): RecoveredRun {
    if (this.stale) throw new Error(`sequencer bug: run ${this.runId} used after a failed append without a reload`);
    const byteLength = this.log.byteLength;
    if (this.recovery?.byteLength !== byteLength) {
      this.recovery = { byteLength, value: this.engine.core.recover(this.log.bytes) };
    }
    const recovered = checkRecovery(this.recovery.value, this.runId, allowEmpty);
    if (this.recordCount < 0) this.recordCount = recovered.recordCount;
    if (recovered.recordCount !== this.recordCount) {
      throw new Error(`sequencer bug: run ${this.runId} holds ${this.recordCount} records, the core counts ${recovered.recordCount}`);
    }
    return recovered;
  }

  /**
   * The state at the head checkpoint. From the cache when it is at the checkpoint `recovered`
   * names (it is when this session wrote the checkpoint), else rebuilt from the snapshot and
   * deltas. Without `recovered` (inside a group of pure steps) the cache is used as it stands: it
   * is either empty or at the latest checkpoint, because every record this session adds is folded
   * into it and a reload empties it.
   */
  headState(recovered?: RecoveredRun): HeadState {
    if (recovered === undefined && this.head !== undefined) return this.head;
    const at = recovered ?? this.recover();
    if (this.head?.checkpointSeq === at.checkpointSeq) return this.head;
    const rebuilt = headState(this.log.bytes, at, this.runId);
    this.head = { ...rebuilt, checkpointSeq: at.checkpointSeq };
    return this.head;
  }

  /** The registered workflow this run was started under, refusing a changed definition. */
  workflowFor(recovered: RecoveredRun): Workflow {
    if (this.checkedWorkflow) return this.checkedWorkflow;
    const name = fromUtf8(recovered.workflow);
    const wf = this.engine.workflowNamed(name);
    if (!wf) throw new UnknownWorkflowError(name, this.engine.workflowNames(), { runId: this.runId });
    if (!bytesEqual(wf.fingerprint, recovered.fingerprint)) {
      const started = runStartedRecord(this.log.bytes, this.runId);
      let recorded: WorkflowDescriptor | null = null;
      try {
        recorded = decodeJson(started.definition) as unknown as WorkflowDescriptor;
      } catch {
        recorded = null;
      }
      const differences = recorded ? diffDescriptors(recorded, wf.descriptor) : ['the recorded definition is unreadable'];
      throw new DefinitionMismatchError(this.runId, name, differences);
    }
    this.checkedWorkflow = wf;
    return wf;
  }

  /**
   * Append `records` (whose seqs start at `expectedSeq`), after any staged records, in one
   * conditional append. Hooks see each step's records before and after. A lost race throws
   * ConflictError; nothing is written and the session must be reloaded.
   */
  async append(expectedSeq: number, records: LogRecord[], node?: string, decodedDelta?: Json): Promise<void> {
    this.addRecords(expectedSeq, records, node, false, decodedDelta);
    await this.flush();
  }

  /** Keep a step's records in memory; they go to the store with the next append or flush. */
  stage(expectedSeq: number, records: LogRecord[], node: string, decodedDelta?: Json): void {
    this.addRecords(expectedSeq, records, node, true, decodedDelta);
  }

  /** Whether the staged group is full: the next step appends it first. */
  get groupFull(): boolean {
    return this.stagedSteps >= this.sequencing.maxGroupedPureSteps || this.stagedBytes >= MAX_GROUPED_BYTES;
  }

  /** `decodedDelta`: the parsed state payload of the batch's NODE_COMPLETED when it is a delta (advanceHead). */
  private addRecords(expectedSeq: number, records: LogRecord[], node: string | undefined, groupedStep: boolean, decodedDelta?: Json): void {
    if (this.stale) throw new Error(`sequencer bug: run ${this.runId} used after a failed append without a reload`);
    if (this.recordCount >= 0 && expectedSeq !== this.recordCount) {
      throw new Error(`sequencer bug: run ${this.runId} appends at seq ${expectedSeq}, its log holds ${this.recordCount} records`);
    }
    const encoded = records.map(encodeRecord);
    let bytes = 0;
    for (const e of encoded) bytes += e.length;
    this.log.push(encoded);
    this.staged.push({ seq: expectedSeq, kinds: records.map((r) => kindName(r.kind)), node, encoded });
    this.stagedBytes += bytes;
    if (groupedStep) this.stagedSteps += 1;
    this.recordCount = expectedSeq + records.length;
    for (const record of records) this.foldIntoHead(record, decodedDelta);
  }

  /** Carry the cached head state over a record this session adds (no cache: stays unknown). */
  private foldIntoHead(record: LogRecord, decodedDelta: Json | undefined): void {
    if (record.kind === RecordKind.NODE_COMPLETED && this.head === undefined) return;
    const next = advanceHead(this.head ?? null, record, decodedDelta);
    if (next !== null && next !== this.head) this.head = { ...next, checkpointSeq: record.seq };
  }

  /** Append every staged record in one conditional append (nothing staged: nothing to do). */
  async flush(): Promise<void> {
    if (this.staged.length === 0) return;
    const groups = this.staged;
    const firstSeq = groups[0]!.seq;
    const encoded = groups.length === 1 ? groups[0]!.encoded : groups.flatMap((g) => g.encoded);
    let outcome;
    try {
      for (const g of groups) await this.engine.hooks.at('append.before', this.faultInfo(g));
      outcome = await this.engine.store.append(this.runId, firstSeq, encoded);
    } catch (error) {
      this.invalidate();
      throw error;
    }
    if (!outcome.committed) {
      this.invalidate();
      throw new ConflictError(this.runId, firstSeq, outcome.nextSeq);
    }
    this.staged = [];
    this.stagedBytes = 0;
    this.stagedSteps = 0;
    for (const g of groups) await this.engine.hooks.at('append.after', this.faultInfo(g));
  }

  /**
   * After node code failed with staged pure steps before it: append them (they completed, and a
   * run without group commit would hold them), without letting a failure here hide the node's.
   */
  async flushQuietly(): Promise<void> {
    try {
      await this.flush();
    } catch {
      // The staged steps are lost as in a crash; the run continues from its durable prefix.
    }
  }

  /** Drop the staged records and every cache: the next use reads the log from the store. */
  private invalidate(): void {
    this.stale = true;
    this.staged = [];
    this.stagedBytes = 0;
    this.stagedSteps = 0;
    this.head = undefined;
    this.recovery = undefined;
  }

  private faultInfo(g: StagedRecords): FaultInfo {
    return { runId: this.runId, seq: g.seq, kinds: g.kinds, ...(g.node === undefined ? {} : { node: g.node }) };
  }

  /** Throws ConflictError when the store holds records at or after `nextSeq` (someone else wrote). */
  async assertNoNewRecords(nextSeq: number): Promise<void> {
    const newer = await this.engine.store.readRecords(this.runId, nextSeq);
    if (newer.length > 0) throw new ConflictError(this.runId, nextSeq, nextSeq + newer.length);
  }

  /** Where the run stands, without doing anything. */
  result(recovered: RecoveredRun): RunResult {
    const status = STATUS_NAMES[recovered.status];
    const out: RunResult = {
      runId: fromUtf8(recovered.runId),
      workflow: fromUtf8(recovered.workflow),
      status,
      state: cloneJson(this.headState(recovered).state),
      headSeq: recovered.recordCount - 1,
    };
    if (recovered.action.tag === 'AWAIT_RESUME') {
      out.interrupt = {
        id: fromUtf8(recovered.action.interruptId),
        node: fromUtf8(recovered.action.node),
        parkedSeq: recovered.action.parkedSeq,
      };
    }
    if (recovered.failure) {
      out.failure = {
        node: fromUtf8(recovered.failure.node),
        code: fromUtf8(recovered.failure.code),
        message: fromUtf8(recovered.failure.message),
      };
    }
    return out;
  }

  /** Drive the run until it parks, completes or fails. */
  async drive(): Promise<RunResult> {
    if (this.stale) await this.reload();
    for (;;) {
      const recovered = this.recover();
      const wf = this.workflowFor(recovered);
      const action = recovered.action;
      const runId = fromUtf8(recovered.runId);
      if (action.tag === 'NONE' || action.tag === 'AWAIT_RESUME') {
        // Staged steps that ended the run: the core has just checked them with the rest of the log.
        await this.flush();
        return this.result(recovered);
      }
      if (!this.sequencing.groupPureSteps || !GROUPABLE_ACTIONS.has(action.tag)) {
        await new Step(this, wf, runId, recovered.recordCount, recovered).perform(action);
        continue;
      }
      if (this.groupFull) await this.flush();
      await this.runGroup(wf, runId, action, recovered);
    }
  }

  /**
   * Group commit: perform `action` (a pure node, or the completion of an interrupt or effect whose
   * claim or result is already durable), then pure nodes while the route leads to one and the
   * group is not full, staging every completion in memory. The drive loop then asks the core what
   * comes next (with the staged records in the log) and appends the group with or before it.
   */
  private async runGroup(wf: Workflow, runId: string, action: NextAction, recovered: RecoveredRun): Promise<void> {
    try {
      let next = await new Step(this, wf, runId, this.recordCount, recovered).performStaged(action);
      while (next !== null && next !== END && !this.groupFull && wf.nodes.get(next)?.kind === 'pure') {
        next = await new Step(this, wf, runId, this.recordCount).runPure(next, 'stage');
      }
    } catch (error) {
      // A hook or the sequencer threw inside the group: keep what completed before, then report.
      if (this.hasStaged && !this.stale) await this.flushQuietly();
      throw error;
    }
  }
}

/**
 * Steps whose completion may wait in memory: re-running them after a crash repeats only
 * deterministic work (a pure node; an interrupt's or effect's apply on a durable claim or result).
 */
const EMPTY_BYTES = new Uint8Array();

/** A node's completion records, where it routes, and (delta form) the delta as parsed JSON. */
interface Completion {
  records: LogRecord[];
  next: string;
  decodedDelta?: Json;
}

const GROUPABLE_ACTIONS: ReadonlySet<NextAction['tag']> = new Set(['RUN_PURE', 'FINISH_INTERRUPT', 'FINISH_EFFECT']);

/** One transition of a run: the action the core chose (or, inside a group, its AT(next) rule). */
class Step {
  constructor(
    private readonly session: RunSession,
    private readonly wf: Workflow,
    private readonly runId: string,
    private readonly nextSeq: number,
    /** The core's answer this step came from (absent inside a group of pure steps). */
    private readonly recovered?: RecoveredRun,
  ) {}

  async perform(action: NextAction): Promise<void> {
    switch (action.tag) {
      case 'RUN_PURE':
        await this.runPure(fromUtf8(action.node), 'append');
        return;
      case 'BEGIN_EFFECT':
        return this.beginEffect(fromUtf8(action.node));
      case 'INVOKE_EFFECT':
        return this.invokeEffect(fromUtf8(action.node), fromUtf8(action.key));
      case 'FINISH_EFFECT':
        await this.finishEffect(fromUtf8(action.node), action.doneOffset, 'append');
        return;
      case 'PARK':
        return this.park(fromUtf8(action.node));
      case 'FINISH_INTERRUPT':
        await this.finishInterrupt(fromUtf8(action.node), fromUtf8(action.interruptId), action.claimOffset, 'append');
        return;
      case 'FINISH_RUN':
        return this.session.append(this.nextSeq, [{ kind: RecordKind.RUN_COMPLETED, seq: this.nextSeq }]);
      default:
        throw new Error(`sequencer bug: action ${action.tag} has no step`);
    }
  }

  /** A groupable step (GROUPABLE_ACTIONS) with its completion staged; returns where it routes. */
  async performStaged(action: NextAction): Promise<string | null> {
    switch (action.tag) {
      case 'RUN_PURE':
        return this.runPure(fromUtf8(action.node), 'stage');
      case 'FINISH_EFFECT':
        return this.finishEffect(fromUtf8(action.node), action.doneOffset, 'stage');
      case 'FINISH_INTERRUPT':
        return this.finishInterrupt(fromUtf8(action.node), fromUtf8(action.interruptId), action.claimOffset, 'stage');
      default:
        throw new Error(`sequencer bug: action ${action.tag} cannot be grouped`);
    }
  }

  /** Record a completion now ('append') or leave it for the group's append ('stage'). */
  private async record(records: LogRecord[], name: string, mode: 'append' | 'stage', decodedDelta?: Json): Promise<void> {
    if (mode === 'stage') this.session.stage(this.nextSeq, records, name, decodedDelta);
    else await this.session.append(this.nextSeq, records, name, decodedDelta);
  }

  private subject(node: string): ErrorSubject {
    return { runId: this.runId, seq: this.nextSeq, node };
  }

  private node(name: string): NodeDefinition<Json> {
    const def = this.wf.nodes.get(name);
    // The fingerprint matched, so the run's node table is the workflow's: a miss is a bug.
    if (!def) throw new Error(`sequencer bug: node ${name} of run ${this.runId} is not in workflow ${this.wf.name}`);
    return def;
  }

  /** The head state (the session's; node code only ever gets a copy of it). */
  private state(): HeadState {
    return this.session.headState(this.recovered);
  }

  /**
   * Run pure node `name` and record its completion: appended now ('append') or staged for the
   * group ('stage'). Returns the node the completion routes to (END at the end), or null when the
   * step ended otherwise (a terminal failure was recorded).
   */
  async runPure(name: string, mode: 'append' | 'stage'): Promise<string | null> {
    const def = this.node(name);
    if (def.kind !== 'pure') throw new Error(`sequencer bug: ${name} is not pure`);
    const head = this.state();
    let update: unknown;
    try {
      update = await def.spec.run(cloneJson(head.state), { runId: this.runId, node: name });
    } catch (error) {
      await this.nodeFailed(error, name, []);
      return null;
    }
    await this.session.hooks.at('pure.before-return', { runId: this.runId, seq: this.nextSeq, node: name });
    let completion: Completion;
    try {
      completion = this.completion(name, def.spec.next, head, update, this.nextSeq);
    } catch (error) {
      await this.nodeFailed(error, name, []);
      return null;
    }
    await this.record(completion.records, name, mode, completion.decodedDelta);
    return completion.next;
  }

  private async beginEffect(name: string): Promise<void> {
    const key = `${this.runId}:${name}:${this.nextSeq}`;
    await this.session.append(this.nextSeq, [{ kind: RecordKind.EFFECT_INTENT, seq: this.nextSeq, node: utf8(name), key: utf8(key) }], name);
  }

  private async invokeEffect(name: string, key: string): Promise<void> {
    const def = this.node(name);
    if (def.kind !== 'effect') throw new Error(`sequencer bug: ${name} is not an effect`);
    const head = this.state();
    const hooks = this.session.hooks;
    await hooks.at('effect.before-handler', { runId: this.runId, seq: this.nextSeq, node: name });
    // Another sequencer may have moved the run on since this one read it (it may even have
    // recorded this effect's completion): look once more, and stop rather than call the handler.
    await this.session.assertNoNewRecords(this.nextSeq);
    let result: unknown;
    try {
      result = await def.spec.run(cloneJson(head.state), { runId: this.runId, node: name, idempotencyKey: key });
    } catch (error) {
      return this.nodeFailed(error, name, []);
    }
    await hooks.at('effect.after-handler', { runId: this.runId, seq: this.nextSeq, node: name });
    let recorded: { bytes: Uint8Array; value: Json };
    try {
      recorded = encodeJson(result === undefined ? null : result);
    } catch (error) {
      // The outside effect happened but cannot be recorded: nothing is written, and the next
      // attempt calls the handler again with the same key, which the outside system deduplicates.
      throw new NotJsonError('the effect result', String((error as Error).message), this.subject(name));
    }
    const done: LogRecord = { kind: RecordKind.EFFECT_DONE, seq: this.nextSeq, node: utf8(name), key: utf8(key), result: recorded.bytes };
    await this.completeEffect(name, def, head, recorded.value, [done], 'append');
  }

  /** The effect's result is durable (EFFECT_DONE): complete the node from it. Returns where it routes. */
  private async finishEffect(name: string, doneOffset: number, mode: 'append' | 'stage'): Promise<string | null> {
    const def = this.node(name);
    if (def.kind !== 'effect') throw new Error(`sequencer bug: ${name} is not an effect`);
    const done = recordAt(this.session.bytes, doneOffset, this.runId);
    if (done.kind !== RecordKind.EFFECT_DONE) throw new Error(`sequencer bug: no EFFECT_DONE at offset ${doneOffset}`);
    return this.completeEffect(name, def, this.state(), decodeJson(done.result), [], mode);
  }

  /**
   * Apply an effect result and complete the node; `pending` (EFFECT_DONE) is written in any case,
   * and then at once (mode 'append'): an outside effect's record never waits in memory.
   */
  private async completeEffect(
    name: string,
    def: Extract<NodeDefinition<Json>, { kind: 'effect' }>,
    head: HeadState,
    result: Json,
    pending: LogRecord[],
    mode: 'append' | 'stage' = 'append',
  ): Promise<string | null> {
    let completion: Completion;
    try {
      const update = def.spec.apply ? def.spec.apply(cloneJson(head.state), result) : undefined;
      completion = this.completion(name, def.spec.next, head, update, this.nextSeq + pending.length);
    } catch (error) {
      await this.nodeFailed(error, name, pending);
      return null;
    }
    if (pending.length > 0 && mode === 'stage') throw new Error('sequencer bug: an EFFECT_DONE cannot be staged');
    await this.record([...pending, ...completion.records], name, mode, completion.decodedDelta);
    return completion.next;
  }

  private async park(name: string): Promise<void> {
    const id = `${name}@${this.nextSeq}`;
    await this.session.append(
      this.nextSeq,
      [{ kind: RecordKind.INTERRUPT_PARKED, seq: this.nextSeq, node: utf8(name), interruptId: utf8(id) }],
      name,
    );
  }

  /** The resume value is durable (RESUME_CLAIMED): complete the node with it. Returns where it routes. */
  private async finishInterrupt(name: string, interruptId: string, claimOffset: number, mode: 'append' | 'stage'): Promise<string | null> {
    const def = this.node(name);
    if (def.kind !== 'interrupt') throw new Error(`sequencer bug: ${name} is not an interrupt`);
    const claim = recordAt(this.session.bytes, claimOffset, this.runId);
    if (claim.kind !== RecordKind.RESUME_CLAIMED) throw new Error(`sequencer bug: no RESUME_CLAIMED at offset ${claimOffset}`);
    const parsed = def.spec.resume.safeParse(decodeJson(claim.value));
    if (!parsed.success) {
      throw new ResumeValueInvalidError(interruptId, this.subject(name), toValidationIssues(parsed.error.issues));
    }
    const head = this.state();
    let completion: Completion;
    try {
      completion = this.completion(name, def.spec.next, head, def.spec.apply(cloneJson(head.state), parsed.data), this.nextSeq);
    } catch (error) {
      await this.nodeFailed(error, name, []);
      return null;
    }
    await this.record(completion.records, name, mode, completion.decodedDelta);
    return completion.next;
  }

  /**
   * The NODE_COMPLETED (and RUN_COMPLETED when the route ends the run) for `update` merged into
   * the state: validated by the state schema, encoded as a delta or a snapshot by the storage
   * policy. Throws StateInvalidError / RouteInvalidError / NotJsonError; writes nothing.
   */
  private completion(
    name: string,
    route: Route<Json>,
    head: HeadState,
    update: unknown,
    seq: number,
  ): Completion {
    const subject = { runId: this.runId, seq, node: name };
    const merged = mergeUpdate(head.state, update, subject);
    const parsed = this.wf.stateSchema.safeParse(merged);
    if (!parsed.success) throw new StateInvalidError(subject, toValidationIssues(parsed.error.issues));
    let snapshot: { bytes: Uint8Array; value: Json };
    try {
      snapshot = encodeJson(parsed.data);
    } catch (error) {
      throw new NotJsonError('the state', String((error as Error).message), subject);
    }
    const next = resolveRoute(route, snapshot.value, this.wf, subject);
    const delta = encodeJson(computeDelta(head.state, snapshot.value) ?? EMPTY_DELTA);
    const asSnapshot = chooseSnapshot(snapshot.bytes.length, delta.bytes.length, head.deltaBytesSinceSnapshot);
    const records: LogRecord[] = [{
      kind: RecordKind.NODE_COMPLETED,
      seq,
      node: this.session.nameBytes(name),
      next: next === END ? EMPTY_BYTES : this.session.nameBytes(next),
      stateForm: asSnapshot ? StateForm.SNAPSHOT : StateForm.DELTA,
      state: asSnapshot ? snapshot.bytes : delta.bytes,
    }];
    if (next === END) records.push({ kind: RecordKind.RUN_COMPLETED, seq: seq + 1 });
    return asSnapshot ? { records, next } : { records, next, decodedDelta: delta.value };
  }

  /**
   * Node code failed. A TerminalFailure ends the run (RUN_FAILED, after any staged and pending
   * records); anything else writes only the staged and pending records (an EFFECT_DONE must never
   * be lost: the outside effect happened) and stops the sequencer with a typed error.
   */
  private async nodeFailed(error: unknown, name: string, pending: LogRecord[]): Promise<void> {
    if (error instanceof TerminalFailure) {
      const seq = this.nextSeq + pending.length;
      const failed: LogRecord = {
        kind: RecordKind.RUN_FAILED, seq, node: utf8(name), code: utf8(error.failureCode || 'FAILED'), message: utf8(error.message),
      };
      await this.session.append(this.nextSeq, [...pending, failed], name);
      return;
    }
    if (pending.length > 0) await this.session.append(this.nextSeq, pending, name);
    else if (this.session.hasStaged) await this.session.flushQuietly();
    if (error instanceof RemitError) throw error;
    throw new HandlerThrewError(this.subject(name), error);
  }
}

/** Shallow merge of a node's returned fields into the state (LangGraph's default reducer). */
function mergeUpdate(state: Json, update: unknown, subject: ErrorSubject): unknown {
  if (update === undefined || update === null) return state;
  if (!isPlainObject(update as Json) || !isPlainObject(state)) {
    throw new StateInvalidError(subject, [{ path: '(root)', message: 'a node must return an object of changed fields, or nothing' }]);
  }
  return { ...state, ...(update as Record<string, Json>) };
}

function resolveRoute(route: Route<Json>, state: Json, wf: Workflow, subject: ErrorSubject): string {
  const target = typeof route === 'function' ? route(state) : route;
  if (target === END || (typeof target === 'string' && wf.nodes.has(target))) return target;
  throw new RouteInvalidError(target, subject);
}
