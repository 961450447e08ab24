/**
 * One transition of a run: the action the core chose (or, inside a group of pure steps, the
 * core's AT(next) rule), performed with the node's code and recorded through the session. Node
 * code gets copies of the state; every state is validated before it is encoded.
 *
 * Effects go through the invocation fence (./fence.ts): a handler is called only after this
 * sequencer's own conditional append of an EFFECT_ATTEMPT committed, and then at most once per
 * attempt. The common path claims attempt 1 in the same append as the intent.
 */

import { RecordKind, StateForm, type LogRecord, type NextAction, type RecoveredRun } from '../core/types.js';
import {
  afterHandlerReturned, afterHandlerTakenOver, ConflictError, EffectInFlightError, HandlerThrewError, RemitError, restateRecorded, RouteInvalidError, StateInvalidError,
  StoreError, TerminalFailure, isInstanceOf, isThenable, toValidationIssues, type ErrorSubject,
} from '../errors.js';
import { assert, unreachable } from '../assert.js';
import { effectKey, interruptId } from '../ids.js';
import { withArticle } from '../display.js';
import { decideTakeover, decodeLease, encodeLease, encodeReleaseReason, inFlightCalls, OWN_CALL_RETRY_MS, readLeaseClock } from './fence.js';
import { fromUtf8, isPlainObject, jsonBytes, setOwnKey, utf8, utf8Length, type Json } from '../json.js';
import { chooseSnapshot, computeDelta, EMPTY_DELTA } from '../state/delta.js';
import { durableText, durableValue, handleRejectionsIn, ignoreRejection, MAX_VALUE_TEXT_BYTES, textBytesOverLimit, validate, type DurableText } from '../values.js';
import { END, type NodeDefinition, type Route, type Workflow } from '../workflow/workflow.js';
import { cloneJson, kindName, recordedValue, type HeadState } from './log-view.js';
import type { RunSession } from './run-session.js';
import { droppedField } from '../workflow/declared-fields.js';

/** The `next` of a completion that ends the run (records only copy it into their frames). */
const NO_BYTES = new Uint8Array();

/** A node's completion records, where it routes, and (delta form) the delta as parsed JSON. */
interface Completion {
  records: LogRecord[];
  next: string;
  decodedDelta?: Json;
}

/**
 * Steps whose completion may wait in memory: re-running them after a crash repeats only
 * deterministic work (a pure node; an interrupt's or effect's apply on a durable claim or result).
 */
export const GROUPABLE_ACTIONS: ReadonlySet<NextAction['tag']> = new Set(['RUN_PURE', 'FINISH_INTERRUPT', 'FINISH_EFFECT']);

/** One transition of a run: the action the core chose (or, inside a group, its AT(next) rule). */
export class Step {
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
        return this.claimAndCall(fromUtf8(action.node), fromUtf8(action.key), action.nextAttempt, []);
      case 'AWAIT_ATTEMPT':
        return this.awaitAttempt(action);
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
        return unreachable(`action ${action.tag} has no step`);
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
        return unreachable(`action ${action.tag} cannot be grouped`);
    }
  }

  /**
   * Record a completion now ('append') or leave it for the group's append ('stage': synchronous,
   * so a staged step awaits nothing here).
   */
  private record(records: LogRecord[], name: string, mode: 'append' | 'stage', decodedDelta?: Json): Promise<void> | undefined {
    if (mode === 'stage') {
      this.session.stage(this.nextSeq, records, name, decodedDelta);
      return undefined;
    }
    return this.session.append(this.nextSeq, records, name, decodedDelta);
  }

  private subject(node: string): ErrorSubject {
    return { runId: this.runId, seq: this.nextSeq, node };
  }

  private node(name: string): NodeDefinition<Json> {
    const def = this.wf.nodes.get(name);
    // The fingerprint matched, so the run's node table is the workflow's: a miss is a bug.
    assert(def !== undefined, () => `node ${name} of run ${this.runId} is not in workflow ${this.wf.name}`);
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
    assert(def.kind === 'pure', () => `${name} is not pure`);
    const head = this.state();
    let update: unknown;
    try {
      update = def.spec.run(cloneJson(head.state), { runId: this.runId, node: name });
      // A synchronous node's result is used as it is: awaiting it would only cost a turn.
      if (isThenable(update)) update = await update;
    } catch (error) {
      await this.nodeFailed(error, name, []);
      return null;
    }
    if (this.session.hooked) await this.session.hooks.at('pure.before-return', { runId: this.runId, seq: this.nextSeq, node: name });
    let completion: Completion;
    try {
      completion = this.completion(name, def.spec.next, head, update, this.nextSeq);
    } catch (error) {
      await this.nodeFailed(error, name, []);
      return null;
    }
    const recorded = this.record(completion.records, name, mode, completion.decodedDelta);
    if (recorded !== undefined) await recorded;
    return completion.next;
  }

  /** The effect node's first step: its intent and attempt 1 in one conditional append, then the handler. */
  private async beginEffect(name: string): Promise<void> {
    const key = effectKey(this.runId, name, this.nextSeq);
    const intent: LogRecord = { kind: RecordKind.EFFECT_INTENT, seq: this.nextSeq, node: utf8(name), key: utf8(key) };
    await this.claimAndCall(name, key, 1, [intent]);
  }

  /**
   * Attempt `action.attempt` has no outcome (AWAIT_ATTEMPT): take it over by claiming the next
   * attempt when the takeover rule allows (fence.ts, decideTakeover), else stop with
   * EffectInFlightError having written and called nothing.
   */
  private async awaitAttempt(action: Extract<NextAction, { tag: 'AWAIT_ATTEMPT' }>): Promise<void> {
    const name = fromUtf8(action.node);
    const key = fromUtf8(action.key);
    const record = this.session.recordAt(action.attemptOffset);
    assert(record.kind === RecordKind.EFFECT_ATTEMPT, () => `no EFFECT_ATTEMPT at offset ${action.attemptOffset}`);
    const fence = this.session.fence;
    if (fence.canary === 'off') {
      // Test-only: the fence switched off. Call the handler for the recorded attempt, claiming nothing.
      return this.after(action.attemptSeq).callHandler(name, key, action.attempt);
    }
    const lease = decodeLease(record.lease);
    // An unreadable lease names no owner to look up (another program or version wrote it, or a
    // clock that gave no time): any call of this thread on this effect may be the one running it.
    const runningHere = lease === null
      ? inFlightCalls.hasAnyOwner(this.runId, key, this.runDigest())
      : inFlightCalls.has(lease.owner, this.runId, key, this.runDigest());
    const decision = decideTakeover(lease, fence, runningHere, { runId: this.runId, seq: action.attemptSeq, node: name });
    if (!decision.takeover) {
      throw new EffectInFlightError(
        this.runId, action.attemptSeq, name, key, action.attempt, decision.owner, decision.leaseExpiresAtMs, decision.retryAfterMs, decision.runningHere,
      );
    }
    await this.claimAndCall(name, key, action.attempt + 1, []);
  }

  /**
   * Claim attempt `attempt` of the effect instance `key` with one conditional append (after
   * `before`: the intent, on the common path) and, only if that append committed, call the handler.
   * A lost race (ConflictError) or a store failure (the append may or may not have committed)
   * calls nothing. The call is registered in this thread before the append and until it ends.
   */
  private async claimAndCall(name: string, key: string, attempt: number, before: LogRecord[]): Promise<void> {
    const def = this.node(name);
    assert(def.kind === 'effect', () => `${name} is not an effect`);
    const fence = this.session.fence;
    const attemptSeq = this.nextSeq + before.length;
    const leaseMs = def.spec.leaseMs ?? fence.effectLeaseMs;
    const call = inFlightCalls.enter(fence.instanceId, this.runId, key, this.runDigest());
    if (call === null) {
      // Another call of this instance is claiming or executing this effect right now: the attempt
      // in flight is its claim of this same attempt, at the same seq (after the intent on the
      // effect's first step; over the abandoned attempt on a takeover), with a lease from about
      // now. (Reported before as the attempt taken over, whose owner and lease are another's.)
      const leaseUntilMs = readLeaseClock(fence, { runId: this.runId, seq: attemptSeq, node: name }, leaseMs) + leaseMs;
      throw new EffectInFlightError(this.runId, attemptSeq, name, key, attempt, fence.instanceId, leaseUntilMs, OWN_CALL_RETRY_MS, true);
    }
    try {
      // Checked before the claim is written: a lease stamped from a clock that gave no time would
      // be unreadable, and so taken over at once by another instance while this call runs.
      const leaseUntilMs = readLeaseClock(fence, { runId: this.runId, seq: attemptSeq, node: name }, leaseMs) + leaseMs;
      const claim: LogRecord = {
        kind: RecordKind.EFFECT_ATTEMPT, seq: attemptSeq, node: utf8(name), key: utf8(key), attempt,
        lease: encodeLease({ owner: fence.instanceId, leaseUntilMs }),
      };
      try {
        await this.session.append(this.nextSeq, [...before, claim], name);
      } catch (error) {
        // A lost claim: say which effect, and that its handler was not called here.
        if (isInstanceOf(error, ConflictError)) throw restateRecorded(error, `nothing was written: attempt ${attempt} of effect ${name} (key ${key}) was not claimed here, so its handler was not called here`);
        throw error;
      }
      // The attempt is durable and it is this sequencer's: it alone calls the handler for it.
      await this.after(attemptSeq).callHandler(name, key, attempt);
    } finally {
      call.leave();
    }
  }

  /**
   * Record 0's chain value (its checksum), for the registry of running calls: a run of the same id
   * in another store (another tenant's database) is another run, whose calls this one must not
   * wait for, and every handle on this run's data reads the same record 0. The session keeps it
   * (RunSession.runDigest): decoding record 0, which holds the whole node table, at every effect
   * step cost O(nodes) a step.
   */
  private runDigest(): string {
    return this.session.runDigest;
  }

  /** The step that follows the record at `seq` (the session's log already holds it). */
  private after(seq: number): Step {
    return new Step(this.session, this.wf, this.runId, seq + 1);
  }

  /**
   * Call the handler of attempt `attempt` (this step's seq follows its EFFECT_ATTEMPT) and record
   * the outcome: EFFECT_DONE with the node's completion, or, when the handler threw an ordinary
   * error (or returned something that is not JSON), EFFECT_RELEASED (best effort), so that the
   * next continue claims the next attempt at once.
   */
  private async callHandler(name: string, key: string, attempt: number): Promise<void> {
    const def = this.node(name);
    assert(def.kind === 'effect', () => `${name} is not an effect`);
    const head = this.state();
    const hooks = this.session.hooks;
    await hooks.at('effect.before-handler', { runId: this.runId, seq: this.nextSeq, node: name });
    let result: unknown;
    try {
      result = await def.spec.run(cloneJson(head.state), { runId: this.runId, node: name, idempotencyKey: key, attempt });
    } catch (error) {
      // Read once: a failure's getters may answer differently at each read.
      const thrown = readThrown(error);
      if (isInstanceOf(thrown, FailureToRecord)) return this.nodeFailed(thrown, name, []);
      return this.nodeFailed(thrown, name, [], await this.release(name, key, attempt, thrown));
    }
    await hooks.at('effect.after-handler', { runId: this.runId, seq: this.nextSeq, node: name });
    // A result that would not read back as itself cannot be recorded: the attempt is given up, and
    // the next one calls the handler again with the same key, which the outside system deduplicates.
    let recorded: { bytes: Uint8Array; value: Json };
    try {
      recorded = durableValue('effect result', result === undefined ? null : result, null, this.subject(name));
    } catch (error) {
      const released = await this.release(name, key, attempt, error);
      // The refusal's "nothing was written" would be untrue once the release is recorded.
      if (released !== undefined && isInstanceOf(error, RemitError)) restateRecorded(error, released);
      throw error;
    }
    const done: LogRecord = { kind: RecordKind.EFFECT_DONE, seq: this.nextSeq, node: utf8(name), key: utf8(key), result: recorded.bytes };
    try {
      await this.completeEffect(name, def, head, recorded.value, [done], 'append');
    } catch (error) {
      // A store failure at the append of EFFECT_DONE (a lock, a lost connection) says only that
      // the append failed, and a lost race (the attempt was taken over after its lease ran out)
      // that nothing was written and no handler called: the caller must also learn that this
      // call's handler ran and the outside effect happened.
      if (isInstanceOf(error, ConflictError)) throw afterHandlerTakenOver(error, name, key, attempt);
      // BAD_APPEND_OUTCOME: a custom store said it committed, with a wrong next seq; not a failure to record.
      throw isInstanceOf(error, StoreError) && error.storeCode !== 'BAD_APPEND_OUTCOME' ? afterHandlerReturned(error, name, key, attempt, done.seq) : error;
    }
  }

  /**
   * EFFECT_RELEASED for an attempt whose handler will not produce an outcome. Best effort: if it
   * fails (a lost race, a store error), the attempt stays as it is and the takeover rule applies.
   */
  private async release(name: string, key: string, attempt: number, cause: unknown): Promise<string | undefined> {
    try {
      const released: LogRecord = {
        kind: RecordKind.EFFECT_RELEASED, seq: this.nextSeq, node: utf8(name), key: utf8(key), attempt, reason: encodeReleaseReason(cause),
      };
      await this.session.append(this.nextSeq, [released], name);
      return releasedClause(attempt);
    } catch (error) {
      // A store's refusal or failure (a lost race, a lost connection): the handler's failure is
      // what the caller must see, and the attempt is left to the takeover rule. Anything else came
      // from a hook (an injected fault) or is a bug: it propagates unchanged, as hooks' errors do.
      if (!isInstanceOf(error, RemitError)) throw error;
      // A lost race: another sequencer appended after this attempt (its lease ran out, and it took
      // the attempt over): this call's outcome is not the run's, and the caller is told so.
      if (isInstanceOf(error, ConflictError)) return takenOverClause(attempt);
      return isInstanceOf(error, StoreError) && LOST_ANSWERS.has(error.storeCode) ? releaseUnknownClause(attempt, error) : unreleasedClause(attempt, error);
    }
  }

  /** The effect's result is durable (EFFECT_DONE): complete the node from it. Returns where it routes. */
  private async finishEffect(name: string, doneOffset: number, mode: 'append' | 'stage'): Promise<string | null> {
    const def = this.node(name);
    assert(def.kind === 'effect', () => `${name} is not an effect`);
    const done = this.session.recordAt(doneOffset);
    assert(done.kind === RecordKind.EFFECT_DONE, () => `no EFFECT_DONE at offset ${doneOffset}`);
    const value = recordedValue(done.result, this.runId, done.seq, doneOffset);
    return this.completeEffect(name, def, this.state(), value, [], mode, recordedResultClause(done.seq));
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
    recordedBefore?: string,
  ): Promise<string | null> {
    let completion: Completion;
    try {
      const update = def.spec.apply ? def.spec.apply(cloneJson(head.state), result) : undefined;
      completion = this.completion(name, def.spec.next, head, update, this.nextSeq + pending.length);
    } catch (error) {
      await this.nodeFailed(error, name, pending, recordedBefore);
      return null;
    }
    assert(pending.length === 0 || mode === 'append', 'an EFFECT_DONE cannot be staged');
    const recorded = this.record([...pending, ...completion.records], name, mode, completion.decodedDelta);
    if (recorded !== undefined) await recorded;
    return completion.next;
  }

  private async park(name: string): Promise<void> {
    const id = interruptId(name, this.nextSeq);
    await this.session.append(
      this.nextSeq,
      [{ kind: RecordKind.INTERRUPT_PARKED, seq: this.nextSeq, node: utf8(name), interruptId: utf8(id) }],
      name,
    );
  }

  /**
   * What completing interrupt `name` with `value` would give, computed and thrown away, before the
   * value is claimed: once RESUME_CLAIMED is durable the interrupt is consumed, so a value its
   * schema accepts but whose apply throws, whose merged state fails the state schema or has no JSON
   * form, or whose route goes nowhere, would wedge the run for good. Throws the error the completion
   * would (HandlerThrewError, StateInvalidError, RouteInvalidError, ValueUnfaithfulError); a
   * TerminalFailure is a decision of the node (the run fails after the claim), not refused here.
   * `this.nextSeq` is the claim's seq; the completion would follow it.
   */
  checkResume(name: string, value: Json): void {
    const completionSeq = this.nextSeq + 1;
    try {
      this.interruptCompletion(name, value, completionSeq);
    } catch (error) {
      // As finishInterrupt's nodeFailed would: fail() in apply or in the route fails the run after
      // the claim; REMIT's typed errors as they are; anything else node code threw.
      const thrown = readThrown(error);
      if (isInstanceOf(thrown, FailureToRecord)) return;
      if (isInstanceOf(thrown, RemitError)) throw thrown;
      throw new HandlerThrewError({ runId: this.runId, seq: completionSeq, node: name }, thrown, 'nothing was recorded: the value was not claimed and the interrupt is still parked');
    }
  }

  /** Interrupt `name` completed with `value` at `seq`: its apply on the head state, then completion(). Throws what either throws. */
  private interruptCompletion(name: string, value: Json, seq: number): Completion {
    const def = this.node(name);
    assert(def.kind === 'interrupt', () => `${name} is not an interrupt`);
    const head = this.state();
    return this.completion(name, def.spec.next, head, def.spec.apply(cloneJson(head.state), value), seq);
  }

  /** The resume value is durable (RESUME_CLAIMED): complete the node with it. Returns where it routes. */
  private async finishInterrupt(name: string, interruptId: string, claimOffset: number, mode: 'append' | 'stage'): Promise<string | null> {
    const claim = this.session.recordAt(claimOffset);
    assert(claim.kind === RecordKind.RESUME_CLAIMED, () => `no RESUME_CLAIMED at offset ${claimOffset}`);
    // The claim holds the schema's output, checked before it was claimed to read back as itself
    // (values.ts): it is applied as stored, never validated (transformed) again.
    const value = recordedValue(claim.value, this.runId, claim.seq, claimOffset);
    let completion: Completion;
    try {
      completion = this.interruptCompletion(name, value, this.nextSeq);
    } catch (error) {
      await this.nodeFailed(error, name, []);
      return null;
    }
    const recorded = this.record(completion.records, name, mode, completion.decodedDelta);
    if (recorded !== undefined) await recorded;
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
    const snapshot = checkedState(this.wf, head, update, subject);
    // The delta is made of JSON read back (snapshot.value), so it is JSON as it stands; its copy
    // for the head cache equals what parsing its bytes gives. All of it is taken before the route
    // runs: the route is given snapshot.value itself (no copy per step), so a change the route
    // makes to it is never recorded, whether the step writes a delta or a snapshot.
    const delta = computeDelta(head.state, snapshot.value) ?? EMPTY_DELTA;
    const deltaBytes = jsonBytes(delta);
    // The snapshot's bytes are encoded only when the policy writes them (most steps write a delta).
    const asSnapshot = chooseSnapshot(utf8Length(snapshot.text), deltaBytes.length, head.deltaBytesSinceSnapshot);
    const decodedDelta = asSnapshot ? undefined : cloneJson(delta as Json);
    const next = resolveRoute(route, snapshot.value, this.wf, subject);
    const records: LogRecord[] = [{
      kind: RecordKind.NODE_COMPLETED,
      seq,
      node: this.session.nameBytes(name),
      next: next === END ? NO_BYTES : this.session.nameBytes(next),
      stateForm: asSnapshot ? StateForm.SNAPSHOT : StateForm.DELTA,
      state: asSnapshot ? utf8(snapshot.text) : deltaBytes,
    }];
    if (next === END) records.push({ kind: RecordKind.RUN_COMPLETED, seq: seq + 1 });
    return decodedDelta === undefined ? { records, next } : { records, next, decodedDelta };
  }

  /**
   * Node code failed. A TerminalFailure ends the run (RUN_FAILED, after any staged and pending
   * records); anything else writes only the staged and pending records (an EFFECT_DONE must never
   * be lost: the outside effect happened) and stops the sequencer with a typed error, whose message
   * says what was recorded (`recordedBefore`: what the caller already wrote for this failure).
   */
  private async nodeFailed(error: unknown, name: string, pending: LogRecord[], recordedBefore?: string): Promise<void> {
    // The seq of the record the failure stands in for: the completion's, after what is pending.
    const seq = this.nextSeq + pending.length;
    const thrown = readThrown(error);
    if (isInstanceOf(thrown, FailureToRecord)) {
      const failed: LogRecord = {
        kind: RecordKind.RUN_FAILED, seq, node: utf8(name), code: utf8(keptFailureText(thrown.code)), message: utf8(keptFailureText(thrown.message)),
      };
      await this.session.append(this.nextSeq, [...pending, failed], name);
      return;
    }
    if (pending.length > 0) await this.session.append(this.nextSeq, pending, name);
    else if (this.session.hasStaged) await this.session.flushQuietly();
    const recorded = pending.length === 0 ? recordedBefore
      : `${pending.map((r) => kindName(r.kind)).join(' and ')} ${pending.length === 1 ? 'was' : 'were'} recorded (the outside effect happened); the node's completion was not, and runs again next time`;
    // REMIT's own refusal (the state schema's, a route's) keeps its class, and says what is durable:
    // an effect's result is, and a continue will not call the handler again.
    if (isInstanceOf(thrown, RemitError)) throw recorded === undefined ? thrown : restateRecorded(thrown, recorded);
    throw new HandlerThrewError({ ...this.subject(name), seq }, thrown, recorded);
  }
}

/** A TerminalFailure as read once: what RUN_FAILED records (the code, 'FAILED' when empty, and the message). */
class FailureToRecord {
  constructor(readonly code: string, readonly message: string) {}
}

/**
 * What node code threw, read once: a FailureToRecord for a TerminalFailure whose code and message
 * are strings, else the thrown value as node code's error. fail() and the constructor check both,
 * but a subclass can change them afterwards (`this.message = reason`), or make them getters; such a
 * failure cannot be recorded, and failing the run on a text made up here would record what node
 * code did not say. It is node code's error instead (HandlerThrewError: the effect's attempt
 * released, the interrupt left parked), a TypeError saying why with the failure as its cause. A
 * FailureToRecord or an error already read is given back as it is.
 */
function readThrown(error: unknown): unknown {
  if (isInstanceOf(error, FailureToRecord) || !isInstanceOf(error, TerminalFailure)) return error;
  try {
    const { failureCode, message } = error as { failureCode: unknown; message: unknown };
    if (typeof failureCode === 'string' && typeof message === 'string') return new FailureToRecord(failureCode || 'FAILED', message);
  } catch {
    // A getter a subclass defined threw: no text to record.
  }
  return new TypeError('a TerminalFailure whose failureCode or message is not a string (changed after fail() checked them) cannot be recorded as RUN_FAILED', { cause: error });
}

/**
 * A failure code or message as RUN_FAILED keeps it: whole, unless its UTF-8 is over the longest text
 * JavaScript reads back as one string (MAX_VALUE_TEXT_BYTES), where it is cut, saying so. Written
 * whole, it could never be read back (every status of the run would fail), and refusing it would
 * leave the run unable to fail.
 */
function keptFailureText(text: string): string {
  if (textBytesOverLimit(text) === undefined) return text;
  // A UTF-16 unit takes at most 3 bytes of UTF-8: this many units always fit, with room for the note.
  let kept = text.slice(0, Math.floor((MAX_VALUE_TEXT_BYTES - 200) / 3));
  if (/[\ud800-\udbff]$/.test(kept)) kept = kept.slice(0, -1);
  return `${kept}… (cut to ${kept.length} of ${text.length} characters: the log keeps a failure text of at most ${MAX_VALUE_TEXT_BYTES} bytes of UTF-8)`;
}

/** What a completion's failure leaves durable when the effect's result was recorded before it. */
function recordedResultClause(doneSeq: number): string {
  return `the effect's result is recorded (EFFECT_DONE at seq ${doneSeq}; the handler is not called again); the node's completion was not, and runs again next time`;
}

/**
 * The state after `update` (a node's returned fields) is merged in, validated by the state schema
 * and read back as its JSON text: StateInvalidError for a refused state or a field the schema
 * would drop, a value error for one that would not read back. A Promise the update holds (a field
 * set without `await`) has its rejection handled whatever the schema does with it.
 */
function checkedState(wf: Workflow, head: HeadState, update: unknown, subject: ErrorSubject): DurableText {
  let fields = update;
  try {
    fields = fieldsReadOnce(update);
    handleRejectionsIn(fields, false);
    const merged = mergeUpdate(head.state, fields, subject);
    const parsed = validate(wf.stateSchema, merged, subject);
    if (!parsed.success) throw new StateInvalidError(subject, toValidationIssues(parsed.error.issues));
    const dropped = droppedField(wf.stateSchema, fields, parsed.data);
    if (dropped !== undefined) throw new StateInvalidError(subject, [{ path: dropped, message: DROPPED_FIELD }]);
    return durableText('state', parsed.data, wf.stateSchema, subject, merged);
  } catch (error) {
    handleRejectionsIn(fields, true);
    throw error;
  }
}

/**
 * A plain object's own fields, each read once (a getter of node code runs once), so that the
 * Promise check, the merge and the dropped-field check see the same values; anything else as it is
 * (mergeUpdate refuses it).
 */
function fieldsReadOnce(update: unknown): unknown {
  if (update === null || typeof update !== 'object' || Array.isArray(update) || isThenable(update)) return update;
  const prototype = Object.getPrototypeOf(update) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return update;
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(update)) setOwnKey(fields, key, (update as Record<string, unknown>)[key]);
  return fields;
}

/** Shallow merge of a node's returned fields into the state (LangGraph's default reducer). */
function mergeUpdate(state: Json, update: unknown, subject: ErrorSubject): unknown {
  if (update === undefined || update === null) return state;
  if (isThenable(update)) {
    // Only a pure node's run may be async; an apply's Promise would merge as "no change" (it has
    // no own fields), and its rejection would go unhandled.
    ignoreRejection(update);
    const returned = update instanceof Promise ? 'a Promise' : 'a thenable (an object with a then method)';
    throw new StateInvalidError(subject, [{ path: '(root)', message: `apply returned ${returned}: an effect's or interrupt's apply must return the changed fields synchronously` }]);
  }
  // A Map, a Date or a class instance would merge as its own enumerable fields (often none).
  const prototype = typeof update === 'object' ? Object.getPrototypeOf(update) : undefined;
  if (!isPlainObject(update as Json) || (prototype !== Object.prototype && prototype !== null) || !isPlainObject(state)) {
    throw new StateInvalidError(subject, [{ path: '(root)', message: `a node must return a plain object of changed fields, or nothing (got ${describeUpdate(update)})` }]);
  }
  // A field returned as undefined is removed, as JSON would drop it, before the schema sees the
  // state: an .exactOptional() field refuses undefined but accepts its absence.
  const merged: Record<string, unknown> = { ...state, ...(update as Record<string, Json>) };
  for (const key of Object.keys(update as object)) if ((update as Record<string, unknown>)[key] === undefined) delete merged[key];
  return merged;
}

const DROPPED_FIELD = 'the node returned this field, which the state schema names nowhere and drops, so the change would be lost ' +
  '(a misspelt name? return the state\'s own fields; for a run already started, fix the node code: a changed schema is another definition, which the run refuses)';

function describeUpdate(update: unknown): string {
  if (Array.isArray(update)) return 'an array';
  if (typeof update !== 'object') return withArticle(typeof update);
  const name = (Object.getPrototypeOf(update) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return name ? withArticle(name) : 'an object';
}

function resolveRoute(route: Route<Json>, state: Json, wf: Workflow, subject: ErrorSubject): string {
  const target = typeof route === 'function' ? route(state) : route;
  if (target === END || (typeof target === 'string' && wf.nodes.has(target))) return target;
  // An async route is refused; its rejection (a failed lookup, a fail() inside it) would otherwise
  // go unhandled, which ends a Node process by default.
  if (isThenable(target)) ignoreRejection(target);
  throw new RouteInvalidError(target, subject);
}

/** What a handler's failure leaves when another sequencer appended first: the attempt was taken over. */
function takenOverClause(attempt: number): string {
  return `nothing was written: another sequencer appended to the run after attempt ${attempt} was claimed here (its lease ran out and the attempt was taken over), so this call's outcome is not the run's`;
}

/**
 * What an effect's failed attempt left when its release could not be recorded (a store error):
 * the attempt is still claimed, and its lease is what another instance waits for.
 */
function unreleasedClause(attempt: number, error: RemitError): string {
  return `EFFECT_RELEASED could not be recorded (${error.message}): attempt ${attempt} stays claimed by this instance until its lease runs out ` +
    '(until then a continue from another instance is refused with EffectInFlightError; one from this instance, or one with its instanceId, takes the attempt over); the node\'s completion was not recorded';
}

/**
 * Store answers after which a write may have committed: the answer was lost (OUTCOME_UNKNOWN), or
 * a custom store said it committed with a next seq that does not add up (BAD_APPEND_OUTCOME).
 */
const LOST_ANSWERS: ReadonlySet<string> = new Set(['OUTCOME_UNKNOWN', 'BAD_APPEND_OUTCOME']);

/** An effect's failed attempt whose release's answer was lost: it may be recorded, or the attempt still claimed. */
function releaseUnknownClause(attempt: number, error: RemitError): string {
  return `EFFECT_RELEASED may or may not have been recorded (${error.message}; status() and inspect() say which): if not, attempt ${attempt} stays claimed by this instance until its lease runs out; the node's completion was not recorded`;
}

/** What an effect's failed attempt recorded, in the error it ends with: its release. */
function releasedClause(attempt: number): string {
  return `EFFECT_RELEASED was recorded (attempt ${attempt} is given up: the next continue calls the handler again, with the same idempotency key); the node's completion was not recorded`;
}
