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
 */

import { concatBytes, encodeRecord } from '../core/codec.js';
import { RecordKind, StateForm, type LogRecord, type RecoveredRun, type RecoveryCore } from '../core/types.js';
import {
  ConflictError, DefinitionMismatchError, HandlerThrewError, NotJsonError, RemitError, ResumeValueInvalidError,
  RouteInvalidError, StateInvalidError, TerminalFailure, toValidationIssues, UnknownWorkflowError,
  type ErrorSubject,
} from '../errors.js';
import type { SequencerHooks } from '../faults.js';
import { bytesEqual, decodeJson, encodeJson, fromUtf8, isPlainObject, utf8, type Json } from '../json.js';
import { chooseSnapshot, computeDelta, EMPTY_DELTA } from '../state/delta.js';
import type { Store } from '../store/store.js';
import { diffDescriptors, type WorkflowDescriptor } from '../workflow/descriptor.js';
import { END, type NodeDefinition, type Route, type Workflow } from '../workflow/workflow.js';
import { headState, kindName, recordAt, recoverOrThrow, runStartedRecord, STATUS_NAMES, type RunStatusName } from './log-view.js';

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

/** What a sequencer needs from its owner (the Remit instance). */
export interface Engine {
  readonly store: Store;
  readonly core: RecoveryCore;
  readonly hooks: SequencerHooks;
  workflowNamed(name: string): Workflow | undefined;
  workflowNames(): string[];
}

/** One run's log, cached in memory between the sequencer's own appends. */
export class RunSession {
  private log: Uint8Array = new Uint8Array();
  private checkedWorkflow: Workflow | undefined;

  private constructor(
    private readonly engine: Engine,
    readonly runId: string,
  ) {}

  static async open(engine: Engine, runId: string): Promise<RunSession> {
    const session = new RunSession(engine, runId);
    await session.reload();
    return session;
  }

  get bytes(): Uint8Array {
    return this.log;
  }

  get hooks(): SequencerHooks {
    return this.engine.hooks;
  }

  async reload(): Promise<void> {
    this.log = await this.engine.store.readLog(this.runId);
  }

  recover(allowEmpty = false): RecoveredRun {
    return recoverOrThrow(this.engine.core, this.runId, this.log, allowEmpty);
  }

  /** The registered workflow this run was started under, refusing a changed definition. */
  workflowFor(recovered: RecoveredRun): Workflow {
    if (this.checkedWorkflow) return this.checkedWorkflow;
    const name = fromUtf8(recovered.workflow);
    const wf = this.engine.workflowNamed(name);
    if (!wf) throw new UnknownWorkflowError(name, this.engine.workflowNames(), { runId: this.runId });
    if (!bytesEqual(wf.fingerprint, recovered.fingerprint)) {
      const started = runStartedRecord(this.log, this.runId);
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
   * Append `records` (whose seqs start at `expectedSeq`) conditionally. Hooks see the batch before
   * and after. A lost race throws ConflictError; the cache is only extended by committed bytes.
   */
  async append(expectedSeq: number, records: LogRecord[], node?: string): Promise<void> {
    const encoded = records.map(encodeRecord);
    const kinds = records.map((r) => kindName(r.kind));
    const info = { runId: this.runId, seq: expectedSeq, kinds, ...(node === undefined ? {} : { node }) };
    await this.engine.hooks.at('append.before', info);
    const outcome = await this.engine.store.append(this.runId, expectedSeq, encoded);
    if (!outcome.committed) throw new ConflictError(this.runId, expectedSeq, outcome.nextSeq);
    this.log = concatBytes([this.log, ...encoded]);
    await this.engine.hooks.at('append.after', info);
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
      state: headState(this.log, recovered, this.runId).state,
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
    for (;;) {
      const recovered = this.recover();
      const wf = this.workflowFor(recovered);
      const action = recovered.action;
      if (action.tag === 'NONE' || action.tag === 'AWAIT_RESUME') return this.result(recovered);
      const step = new Step(this, wf, recovered);
      await step.perform();
    }
  }
}

/** One transition of a run: the action the core chose for `recovered`. */
class Step {
  private readonly runId: string;
  private readonly nextSeq: number;

  constructor(
    private readonly session: RunSession,
    private readonly wf: Workflow,
    private readonly recovered: RecoveredRun,
  ) {
    this.runId = fromUtf8(recovered.runId);
    this.nextSeq = recovered.recordCount;
  }

  async perform(): Promise<void> {
    const action = this.recovered.action;
    switch (action.tag) {
      case 'RUN_PURE':
        return this.runPure(fromUtf8(action.node));
      case 'BEGIN_EFFECT':
        return this.beginEffect(fromUtf8(action.node));
      case 'INVOKE_EFFECT':
        return this.invokeEffect(fromUtf8(action.node), fromUtf8(action.key));
      case 'FINISH_EFFECT':
        return this.finishEffect(fromUtf8(action.node), action.doneOffset);
      case 'PARK':
        return this.park(fromUtf8(action.node));
      case 'FINISH_INTERRUPT':
        return this.finishInterrupt(fromUtf8(action.node), fromUtf8(action.interruptId), action.claimOffset);
      case 'FINISH_RUN':
        return this.session.append(this.nextSeq, [{ kind: RecordKind.RUN_COMPLETED, seq: this.nextSeq }]);
      default:
        throw new Error(`sequencer bug: action ${action.tag} has no step`);
    }
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

  private state(): { state: Json; deltaBytesSinceSnapshot: number } {
    return headState(this.session.bytes, this.recovered, this.runId);
  }

  private async runPure(name: string): Promise<void> {
    const def = this.node(name);
    if (def.kind !== 'pure') throw new Error(`sequencer bug: ${name} is not pure`);
    const head = this.state();
    let update: unknown;
    try {
      update = await def.spec.run(head.state, { runId: this.runId, node: name });
    } catch (error) {
      return this.nodeFailed(error, name, []);
    }
    await this.session.hooks.at('pure.before-return', { runId: this.runId, seq: this.nextSeq, node: name });
    let completion: LogRecord[];
    try {
      completion = this.completion(name, def.spec.next, head, update, this.nextSeq);
    } catch (error) {
      return this.nodeFailed(error, name, []);
    }
    await this.session.append(this.nextSeq, completion, name);
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
      result = await def.spec.run(head.state, { runId: this.runId, node: name, idempotencyKey: key });
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
    await this.completeEffect(name, def, head, recorded.value, [done]);
  }

  private async finishEffect(name: string, doneOffset: number): Promise<void> {
    const def = this.node(name);
    if (def.kind !== 'effect') throw new Error(`sequencer bug: ${name} is not an effect`);
    const done = recordAt(this.session.bytes, doneOffset, this.runId);
    if (done.kind !== RecordKind.EFFECT_DONE) throw new Error(`sequencer bug: no EFFECT_DONE at offset ${doneOffset}`);
    await this.completeEffect(name, def, this.state(), decodeJson(done.result), []);
  }

  /** Apply an effect result and complete the node; `pending` (EFFECT_DONE) is written in any case. */
  private async completeEffect(
    name: string,
    def: Extract<NodeDefinition<Json>, { kind: 'effect' }>,
    head: { state: Json; deltaBytesSinceSnapshot: number },
    result: Json,
    pending: LogRecord[],
  ): Promise<void> {
    let completion: LogRecord[];
    try {
      const update = def.spec.apply ? def.spec.apply(head.state, result) : undefined;
      completion = this.completion(name, def.spec.next, head, update, this.nextSeq + pending.length);
    } catch (error) {
      return this.nodeFailed(error, name, pending);
    }
    await this.session.append(this.nextSeq, [...pending, ...completion], name);
  }

  private async park(name: string): Promise<void> {
    const id = `${name}@${this.nextSeq}`;
    await this.session.append(
      this.nextSeq,
      [{ kind: RecordKind.INTERRUPT_PARKED, seq: this.nextSeq, node: utf8(name), interruptId: utf8(id) }],
      name,
    );
  }

  private async finishInterrupt(name: string, interruptId: string, claimOffset: number): Promise<void> {
    const def = this.node(name);
    if (def.kind !== 'interrupt') throw new Error(`sequencer bug: ${name} is not an interrupt`);
    const claim = recordAt(this.session.bytes, claimOffset, this.runId);
    if (claim.kind !== RecordKind.RESUME_CLAIMED) throw new Error(`sequencer bug: no RESUME_CLAIMED at offset ${claimOffset}`);
    const parsed = def.spec.resume.safeParse(decodeJson(claim.value));
    if (!parsed.success) {
      throw new ResumeValueInvalidError(interruptId, this.subject(name), toValidationIssues(parsed.error.issues));
    }
    const head = this.state();
    let completion: LogRecord[];
    try {
      completion = this.completion(name, def.spec.next, head, def.spec.apply(head.state, parsed.data), this.nextSeq);
    } catch (error) {
      return this.nodeFailed(error, name, []);
    }
    await this.session.append(this.nextSeq, completion, name);
  }

  /**
   * The NODE_COMPLETED (and RUN_COMPLETED when the route ends the run) for `update` merged into
   * the state: validated by the state schema, encoded as a delta or a snapshot by the storage
   * policy. Throws StateInvalidError / RouteInvalidError / NotJsonError; writes nothing.
   */
  private completion(
    name: string,
    route: Route<Json>,
    head: { state: Json; deltaBytesSinceSnapshot: number },
    update: unknown,
    seq: number,
  ): LogRecord[] {
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
    const delta = encodeJson(computeDelta(head.state, snapshot.value) ?? EMPTY_DELTA).bytes;
    const asSnapshot = chooseSnapshot(snapshot.bytes.length, delta.length, head.deltaBytesSinceSnapshot);
    const records: LogRecord[] = [{
      kind: RecordKind.NODE_COMPLETED,
      seq,
      node: utf8(name),
      next: next === END ? new Uint8Array() : utf8(next),
      stateForm: asSnapshot ? StateForm.SNAPSHOT : StateForm.DELTA,
      state: asSnapshot ? snapshot.bytes : delta,
    }];
    if (next === END) records.push({ kind: RecordKind.RUN_COMPLETED, seq: seq + 1 });
    return records;
  }

  /**
   * Node code failed. A TerminalFailure ends the run (RUN_FAILED, after any pending records);
   * anything else writes only the pending records (an EFFECT_DONE must never be lost: the outside
   * effect happened) and stops the sequencer with a typed error.
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
