/**
 * The fields of a core's answer (Recovery, Admission, Fed) checked and copied before remit/core's
 * encoders write them: a number outside its field's range, a byte field that is not a genuine
 * Uint8Array, or a missing part is ArgumentInvalidError naming the field (`encodeRecovery(
 * recovery.recordCount)`), never written masked (-1 as 4294967295, a status of 300 as 44) or as
 * other bytes (a string runId as zeros). The copy holds what was checked: a getter read twice, or
 * a subclass's `length`, cannot change what is written. Only the exported encoders use it; the
 * reference core encodes its own answers, which it built, without it.
 */

import { ArgumentInvalidError } from '../errors.js';
import { bytesArgument, describe, integerArgument } from './byte-arguments.js';
import {
  ActionTag, RunStatus,
  type Admission, type EffectNodeStatus, type Fed, type ForkLink, type NextAction, type Recovery, type RecoveredRun, type RunFailure,
} from './types.js';

const U32_MAX = 0xffff_ffff;
/** The highest recovery error code (docs/core-api.md; decodeRecovery refuses above it). */
const MAX_LOG_ERROR_CODE = 12;
/** The highest refusal reason of an admission. */
const MAX_REFUSAL_REASON = 11;
/** The highest effect status (done = 2). */
const MAX_EFFECT_STATUS = 2;

/** Reads the fields of one answer for one exported encoder, naming each by its path. */
class AnswerFields {
  constructor(readonly operation: string) {}

  u8(path: string, value: unknown, max = 0xff): number {
    return integerArgument(this.operation, path, value, 0, max);
  }
  u32(path: string, value: unknown): number {
    return integerArgument(this.operation, path, value, 0, U32_MAX);
  }
  bytes(path: string, value: unknown): Uint8Array {
    return bytesArgument(this.operation, path, value, Number.POSITIVE_INFINITY).slice();
  }
  object(path: string, value: unknown, expected: string): Record<string, unknown> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ArgumentInvalidError(`${this.operation}(${path})`, expected, describe(value));
    return value as Record<string, unknown>;
  }
  array(path: string, value: unknown, expected: string): readonly unknown[] {
    if (!Array.isArray(value)) throw new ArgumentInvalidError(`${this.operation}(${path})`, expected, describe(value));
    return value;
  }
  boolean(path: string, value: unknown): boolean {
    if (typeof value !== 'boolean') throw new ArgumentInvalidError(`${this.operation}(${path})`, 'true or false', describe(value));
    return value;
  }
}

export function checkedRecovery(operation: string, path: string, value: unknown): Recovery {
  const f = new AnswerFields(operation);
  const r = f.object(path, value, 'a Recovery (as recover returns it)');
  const ok = f.boolean(`${path}.ok`, r['ok']);
  if (!ok) {
    return {
      ok: false, code: f.u8(`${path}.code`, r['code'], MAX_LOG_ERROR_CODE) as never, seq: f.u32(`${path}.seq`, r['seq']),
      offset: f.u32(`${path}.offset`, r['offset']), kind: f.u8(`${path}.kind`, r['kind']),
    };
  }
  const status = f.u8(`${path}.status`, r['status'], RunStatus.FAILED) as RecoveredRun['status'];
  const run: RecoveredRun = {
    ok: true, status,
    recordCount: f.u32(`${path}.recordCount`, r['recordCount']), durableLen: f.u32(`${path}.durableLen`, r['durableLen']), tornLen: f.u32(`${path}.tornLen`, r['tornLen']),
    runId: f.bytes(`${path}.runId`, r['runId']), workflow: f.bytes(`${path}.workflow`, r['workflow']),
    version: f.bytes(`${path}.version`, r['version']), fingerprint: f.bytes(`${path}.fingerprint`, r['fingerprint']),
    checkpointSeq: f.u32(`${path}.checkpointSeq`, r['checkpointSeq']), checkpointOffset: f.u32(`${path}.checkpointOffset`, r['checkpointOffset']),
    snapshotSeq: f.u32(`${path}.snapshotSeq`, r['snapshotSeq']), snapshotOffset: f.u32(`${path}.snapshotOffset`, r['snapshotOffset']),
    action: checkedAction(f, `${path}.action`, r['action']),
    effects: f.array(`${path}.effects`, r['effects'], 'an array of effect statuses').map((e, i) => checkedEffect(f, `${path}.effects[${i}]`, e)),
    interruptsParked: f.u32(`${path}.interruptsParked`, r['interruptsParked']), interruptsClaimed: f.u32(`${path}.interruptsClaimed`, r['interruptsClaimed']),
    lineage: f.array(`${path}.lineage`, r['lineage'], 'an array of fork links').map((l, i) => checkedForkLink(f, `${path}.lineage[${i}]`, l)),
  };
  // A failed run's failure may be left out (it is written as three empty fields, as before).
  if (status === RunStatus.FAILED && r['failure'] !== undefined) run.failure = checkedFailure(f, `${path}.failure`, r['failure']);
  return run;
}

function checkedEffect(f: AnswerFields, path: string, value: unknown): EffectNodeStatus {
  const e = f.object(path, value, 'an effect status ({ node, status, doneCount, attempts })');
  return {
    node: f.bytes(`${path}.node`, e['node']), status: f.u8(`${path}.status`, e['status'], MAX_EFFECT_STATUS) as EffectNodeStatus['status'],
    doneCount: f.u32(`${path}.doneCount`, e['doneCount']), attempts: f.u32(`${path}.attempts`, e['attempts']),
  };
}

function checkedForkLink(f: AnswerFields, path: string, value: unknown): ForkLink {
  const l = f.object(path, value, 'a fork link ({ sourceRunId, sourceSeq, runId, forkSeq, intent })');
  return {
    sourceRunId: f.bytes(`${path}.sourceRunId`, l['sourceRunId']), sourceSeq: f.u32(`${path}.sourceSeq`, l['sourceSeq']),
    runId: f.bytes(`${path}.runId`, l['runId']), forkSeq: f.u32(`${path}.forkSeq`, l['forkSeq']), intent: f.bytes(`${path}.intent`, l['intent']),
  };
}

function checkedFailure(f: AnswerFields, path: string, value: unknown): RunFailure {
  const x = f.object(path, value, 'a failure ({ node, code, message })');
  return { node: f.bytes(`${path}.node`, x['node']), code: f.bytes(`${path}.code`, x['code']), message: f.bytes(`${path}.message`, x['message']) };
}

/** The fields each action tag writes after its tag, in order: b = bytes, u = u32 (docs/core-api.md). */
const ACTION_FIELDS: Record<NextAction['tag'], readonly (readonly [string, 'b' | 'u'])[]> = {
  NONE: [],
  FINISH_RUN: [],
  RUN_PURE: [['node', 'b']],
  BEGIN_EFFECT: [['node', 'b']],
  PARK: [['node', 'b']],
  INVOKE_EFFECT: [['node', 'b'], ['key', 'b'], ['intentSeq', 'u'], ['nextAttempt', 'u']],
  FINISH_EFFECT: [['node', 'b'], ['key', 'b'], ['doneSeq', 'u'], ['doneOffset', 'u']],
  AWAIT_RESUME: [['node', 'b'], ['interruptId', 'b'], ['parkedSeq', 'u']],
  FINISH_INTERRUPT: [['node', 'b'], ['interruptId', 'b'], ['claimSeq', 'u'], ['claimOffset', 'u']],
  AWAIT_ATTEMPT: [['node', 'b'], ['key', 'b'], ['intentSeq', 'u'], ['attempt', 'u'], ['attemptSeq', 'u'], ['attemptOffset', 'u']],
};

function checkedAction(f: AnswerFields, path: string, value: unknown): NextAction {
  const a = f.object(path, value, 'a next action ({ tag, ... })');
  const tag = a['tag'];
  if (typeof tag !== 'string' || !Object.hasOwn(ActionTag, tag)) {
    throw new ArgumentInvalidError(`${f.operation}(${path}.tag)`, `one of ${Object.keys(ActionTag).join(', ')}`, typeof tag === 'string' ? JSON.stringify(tag.slice(0, 40)) : describe(tag));
  }
  const out: Record<string, unknown> = { tag };
  for (const [name, type] of ACTION_FIELDS[tag as NextAction['tag']]) out[name] = type === 'b' ? f.bytes(`${path}.${name}`, a[name]) : f.u32(`${path}.${name}`, a[name]);
  return out as unknown as NextAction;
}

export function checkedAdmission(operation: string, value: unknown): Admission {
  const f = new AnswerFields(operation);
  const a = f.object('admission', value, 'an Admission (as admit returns it)');
  const accepted = f.boolean('admission.accepted', a['accepted']);
  const reason = accepted ? f.u8('admission.reason', a['reason'], 0) : integerArgument(operation, 'admission.reason', a['reason'], 1, MAX_REFUSAL_REASON);
  return {
    accepted, reason: reason as Admission['reason'], detail: f.u8('admission.detail', a['detail']),
    seq: f.u32('admission.seq', a['seq']), offset: f.u32('admission.offset', a['offset']),
  };
}

export function checkedFed(operation: string, value: unknown): Fed {
  const f = new AnswerFields(operation);
  const x = f.object('fed', value, 'a Fed (as feed returns it)');
  if (!f.boolean('fed.ok', x['ok'])) return { ok: false, reason: 'BAD_SUMMARY' };
  return { ok: true, recovery: checkedRecovery(operation, 'fed.recovery', x['recovery']), summary: f.bytes('fed.summary', x['summary']) };
}
