/**
 * The reference core against docs/core-api.md, rule by rule, on hand-built logs. The equivalence
 * suite compares the reference with the Wasm core; this file is what ties the reference to the doc.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeRecord, frameRecord } from './codec.js';
import { decodeAdmission, decodeRecovery, encodeAdmissionRequest } from './encoding.js';
import { admit, createReferenceCore, recover, reference } from './reference-core.js';
import {
  EffectStatus, LogErrorCode, NONE32, RecordKind, RefusalReason, RunStatus,
  type AdmissionRequest, type LogRecord, type RecoveredRun,
} from './types.js';

const t = (s: string) => new TextEncoder().encode(s);
const EMPTY = new Uint8Array(0);
type Rec = LogRecord extends infer R ? (R extends LogRecord ? Omit<R, 'seq'> : never) : never;

// Workflow: prep (pure) -> pay (effect) -> approve (interrupt) -> end or back to prep.
const nodes = [
  { name: t('prep'), kind: 1 },
  { name: t('pay'), kind: 2 },
  { name: t('approve'), kind: 3 },
];
const start = (over: Partial<Extract<Rec, { kind: 1 }>> = {}): Rec => ({
  kind: RecordKind.RUN_STARTED, runId: t('run-1'), workflow: t('wf'), version: t('v1'), fingerprint: t('fp'),
  definition: t('{}'), nodes, startNode: t('prep'), state: t('{"n":0}'), ...over,
});
const done = (node: string, next: string, stateForm = 0): Rec =>
  ({ kind: RecordKind.NODE_COMPLETED, node: t(node), next: t(next), stateForm, state: t('{}') });
const intent = (key = 'k1', node = 'pay'): Rec => ({ kind: RecordKind.EFFECT_INTENT, node: t(node), key: t(key) });
const effectDone = (key = 'k1', node = 'pay'): Rec => ({ kind: RecordKind.EFFECT_DONE, node: t(node), key: t(key), result: t('"ok"') });
const parked = (id = 'i1', node = 'approve'): Rec => ({ kind: RecordKind.INTERRUPT_PARKED, node: t(node), interruptId: t(id) });
const claimed = (id = 'i1'): Rec => ({ kind: RecordKind.RESUME_CLAIMED, interruptId: t(id), value: t('true') });
const forked = (sourceSeq: number, runId = 'run-2'): Rec =>
  ({ kind: RecordKind.FORKED, sourceRunId: t('run-1'), sourceSeq, runId: t(runId), intent: t('"try"') });
const runCompleted: Rec = { kind: RecordKind.RUN_COMPLETED };
const failed: Rec = { kind: RecordKind.RUN_FAILED, node: t('pay'), code: t('E'), message: t('boom') };

function encodeRecs(records: Rec[]): { log: Uint8Array; offsets: number[] } {
  const parts = records.map((r, seq) => encodeRecord({ ...r, seq } as LogRecord));
  const offsets: number[] = [];
  let total = 0;
  for (const p of parts) {
    offsets.push(total);
    total += p.length;
  }
  const log = new Uint8Array(total);
  parts.forEach((p, i) => log.set(p, offsets[i]!));
  return { log, offsets };
}
const logOf = (...records: Rec[]) => encodeRecs(records).log;

function recovered(records: Rec[]): RecoveredRun {
  const r = recover(logOf(...records));
  if (!r.ok) throw new Error(`expected recovery, got error ${r.code} at seq ${r.seq}`);
  return r;
}
function errorOf(records: Rec[]) {
  const r = recover(logOf(...records));
  if (r.ok) throw new Error('expected an error');
  return r;
}

const happyPath: Rec[] = [start(), done('prep', 'pay'), intent(), effectDone(), done('pay', 'approve'), parked(), claimed(), done('approve', ''), runCompleted];

describe('recover: phases and actions', () => {
  const cases: Array<[number, RunStatus, string]> = [
    [0, RunStatus.EMPTY, 'NONE'],
    [1, RunStatus.RUNNING, 'RUN_PURE'],
    [2, RunStatus.RUNNING, 'BEGIN_EFFECT'],
    [3, RunStatus.RUNNING, 'INVOKE_EFFECT'],
    [4, RunStatus.RUNNING, 'FINISH_EFFECT'],
    [5, RunStatus.RUNNING, 'PARK'],
    [6, RunStatus.PARKED, 'AWAIT_RESUME'],
    [7, RunStatus.RUNNING, 'FINISH_INTERRUPT'],
    [8, RunStatus.RUNNING, 'FINISH_RUN'],
    [9, RunStatus.COMPLETED, 'NONE'],
  ];
  it.each(cases)('after %i records: status %i, action %s', (n, status, action) => {
    const r = recovered(happyPath.slice(0, n));
    expect(r.status).toBe(status);
    expect(r.action.tag).toBe(action);
    expect(r.recordCount).toBe(n);
  });

  it('reports the action parameters from the recorded records', () => {
    const { offsets } = encodeRecs(happyPath);
    expect(recovered(happyPath.slice(0, 3)).action).toEqual({ tag: 'INVOKE_EFFECT', node: t('pay'), key: t('k1'), intentSeq: 2, nextAttempt: 1 });
    expect(recovered(happyPath.slice(0, 4)).action).toEqual({ tag: 'FINISH_EFFECT', node: t('pay'), key: t('k1'), doneSeq: 3, doneOffset: offsets[3] });
    expect(recovered(happyPath.slice(0, 6)).action).toEqual({ tag: 'AWAIT_RESUME', node: t('approve'), interruptId: t('i1'), parkedSeq: 5 });
    expect(recovered(happyPath.slice(0, 7)).action).toEqual({ tag: 'FINISH_INTERRUPT', node: t('approve'), interruptId: t('i1'), claimSeq: 6, claimOffset: offsets[6] });
  });

  it('reports an empty log with empty fields and NONE32 pointers', () => {
    expect(recover(EMPTY)).toEqual({
      ok: true, status: RunStatus.EMPTY, recordCount: 0, durableLen: 0, tornLen: 0, runId: EMPTY, workflow: EMPTY,
      version: EMPTY, fingerprint: EMPTY, checkpointSeq: NONE32, checkpointOffset: NONE32, snapshotSeq: NONE32,
      snapshotOffset: NONE32, action: { tag: 'NONE' }, effects: [], interruptsParked: 0, interruptsClaimed: 0, lineage: [],
    });
  });

  it('tracks checkpoint and snapshot separately (deltas move only the checkpoint)', () => {
    const { offsets } = encodeRecs([start(), done('prep', 'pay', 1)]);
    const r = recovered([start(), done('prep', 'pay', 1)]);
    expect([r.checkpointSeq, r.checkpointOffset, r.snapshotSeq, r.snapshotOffset]).toEqual([1, offsets[1], 0, 0]);
  });

  it('reports effect statuses and counts per effect node in table order', () => {
    expect(recovered(happyPath.slice(0, 2)).effects).toEqual([{ node: t('pay'), status: EffectStatus.FRESH, doneCount: 0, attempts: 0 }]);
    expect(recovered(happyPath.slice(0, 3)).effects[0]!.status).toBe(EffectStatus.INTENT_ONLY);
    const loop = [...happyPath.slice(0, 7), done('approve', 'prep'), done('prep', 'pay'), intent('k2')];
    expect(recovered(loop).effects).toEqual([{ node: t('pay'), status: EffectStatus.INTENT_ONLY, doneCount: 1, attempts: 0 }]);
    expect(recovered([...loop, effectDone('k2')]).effects[0]).toMatchObject({ status: EffectStatus.DONE, doneCount: 2 });
  });

  it('reports a torn tail and recovers the records before it', () => {
    const full = logOf(...happyPath.slice(0, 3));
    const prefixLen = logOf(...happyPath.slice(0, 2)).length;
    for (const cut of [prefixLen + 1, prefixLen + 12, full.length - 1]) {
      const r = recover(full.subarray(0, cut));
      expect(r).toMatchObject({ ok: true, recordCount: 2, durableLen: prefixLen, tornLen: cut - prefixLen });
    }
  });

  it('reports a failure with its fields, and allows RUN_FAILED in any non-terminal phase', () => {
    for (let n = 1; n <= 8; n++) {
      const r = recovered([...happyPath.slice(0, n), failed]);
      expect(r.status).toBe(RunStatus.FAILED);
      expect(r.failure).toEqual({ node: t('pay'), code: t('E'), message: t('boom') });
    }
  });

  it('follows forks: run id replaced, lineage recorded, phase unchanged', () => {
    const r = recovered([start(), done('prep', 'pay'), forked(1), intent()]);
    expect(r.runId).toEqual(t('run-2'));
    expect(r.lineage).toEqual([{ sourceRunId: t('run-1'), sourceSeq: 1, runId: t('run-2'), forkSeq: 2, intent: t('"try"') }]);
    expect(r.action.tag).toBe('INVOKE_EFFECT');
    expect(recovered([start(), forked(0)]).action.tag).toBe('RUN_PURE');
  });
});

describe('recover: errors name the first bad record', () => {
  const cases: Array<[string, Rec[], LogErrorCode, number]> = [
    ['s = 0 not RUN_STARTED', [done('prep', 'pay')], LogErrorCode.IMPOSSIBLE_ORDER, 0],
    ['RUN_FAILED at s = 0', [failed], LogErrorCode.IMPOSSIBLE_ORDER, 0],
    ['second RUN_STARTED', [start(), start()], LogErrorCode.IMPOSSIBLE_ORDER, 1],
    ['empty node table', [start({ nodes: [] })], LogErrorCode.BAD_NODE_TABLE, 0],
    ['node kind 4', [start({ nodes: [{ name: t('prep'), kind: 4 }] })], LogErrorCode.BAD_NODE_TABLE, 0],
    ['duplicate names', [start({ nodes: [nodes[0]!, nodes[0]!] })], LogErrorCode.BAD_NODE_TABLE, 0],
    ['unknown start node', [start({ startNode: t('nope') })], LogErrorCode.UNKNOWN_NODE, 0],
    ['completing an unknown node', [start(), done('nope', 'pay')], LogErrorCode.UNKNOWN_NODE, 1],
    ['routing to an unknown node', [start(), done('prep', 'nope')], LogErrorCode.UNKNOWN_NODE, 1],
    ['completing the wrong node', [start(), done('pay', 'approve')], LogErrorCode.IMPOSSIBLE_ORDER, 1],
    ['completing an effect node with no result', [start(), done('prep', 'pay'), done('pay', 'approve')], LogErrorCode.IMPOSSIBLE_ORDER, 2],
    ['completing an effect node after intent only', [start(), done('prep', 'pay'), intent(), done('pay', 'approve')], LogErrorCode.IMPOSSIBLE_ORDER, 3],
    ['intent on a pure node', [start(), intent('k', 'prep')], LogErrorCode.IMPOSSIBLE_ORDER, 1],
    ['intent on an unknown node', [start(), intent('k', 'nope')], LogErrorCode.UNKNOWN_NODE, 1],
    ['done with another key', [start(), done('prep', 'pay'), intent('k1'), effectDone('k2')], LogErrorCode.IMPOSSIBLE_ORDER, 3],
    ['done without intent', [start(), done('prep', 'pay'), effectDone()], LogErrorCode.IMPOSSIBLE_ORDER, 2],
    ['second intent', [start(), done('prep', 'pay'), intent(), intent()], LogErrorCode.IMPOSSIBLE_ORDER, 3],
    ['parking a pure node', [start(), parked('i', 'prep')], LogErrorCode.IMPOSSIBLE_ORDER, 1],
    ['claim while not parked', [start(), claimed()], LogErrorCode.IMPOSSIBLE_ORDER, 1],
    ['claim of another id', [...happyPath.slice(0, 6), claimed('i2')], LogErrorCode.IMPOSSIBLE_ORDER, 6],
    ['second claim', [...happyPath.slice(0, 7), claimed('i1')], LogErrorCode.IMPOSSIBLE_ORDER, 7],
    ['duplicate interrupt id', [...happyPath.slice(0, 7), done('approve', 'prep'), done('prep', 'pay'), intent('k2'), effectDone('k2'), done('pay', 'approve'), parked('i1')], LogErrorCode.DUPLICATE_INTERRUPT, 12],
    ['fork not after a checkpoint', [start(), done('prep', 'pay'), intent(), forked(2)], LogErrorCode.IMPOSSIBLE_ORDER, 3],
    ['fork naming the wrong source seq', [start(), done('prep', 'pay'), forked(0)], LogErrorCode.IMPOSSIBLE_ORDER, 2],
    ['fork after a fork', [start(), forked(0), forked(1)], LogErrorCode.IMPOSSIBLE_ORDER, 2],
    ['RUN_COMPLETED before the end', [start(), runCompleted], LogErrorCode.IMPOSSIBLE_ORDER, 1],
    ['record after RUN_COMPLETED', [...happyPath, failed], LogErrorCode.IMPOSSIBLE_ORDER, 9],
    ['record after RUN_FAILED', [start(), failed, failed], LogErrorCode.IMPOSSIBLE_ORDER, 2],
    ['terminal check before node lookup', [start(), failed, done('nope', '')], LogErrorCode.IMPOSSIBLE_ORDER, 2],
    ['UNKNOWN_NODE before IMPOSSIBLE_ORDER', [start(), intent('k', 'nope')], LogErrorCode.UNKNOWN_NODE, 1],
  ];
  it.each(cases)('%s', (_name, records, code, seq) => {
    const { offsets } = encodeRecs(records);
    const err = errorOf(records);
    expect(err).toEqual({ ok: false, code, seq, offset: offsets[seq], kind: records[seq]!.kind });
  });

  it('parsing comes first: a malformed payload beats any order rule', () => {
    const bad = encodeRecs([start()]).log;
    const second = frameRecord(1, RecordKind.RUN_COMPLETED, Uint8Array.of(0));
    const log = new Uint8Array([...bad, ...second]);
    expect(recover(log)).toEqual({ ok: false, code: LogErrorCode.MALFORMED_PAYLOAD, seq: 1, offset: bad.length, kind: 8 });
  });

  it('loads nothing after a corrupt record, even a valid one', () => {
    const { log, offsets } = encodeRecs(happyPath);
    log[offsets[2]! + 14] = log[offsets[2]! + 14]! ^ 0x40;
    expect(recover(log)).toMatchObject({ ok: false, code: LogErrorCode.BAD_CHECKSUM, seq: 2, offset: offsets[2] });
  });
});

describe('admit', () => {
  const { log, offsets } = encodeRecs(happyPath.slice(0, 6)); // parked on i1, head 5
  const admitted = (l: Uint8Array, req: AdmissionRequest) => admit(l, req);
  const resume = (id: string): AdmissionRequest => ({ tag: 'RESUME', interruptId: t(id) });

  it('RESUME: accept the parked id, refuse others by the rules in order', () => {
    expect(admitted(log, resume('i1'))).toEqual({ accepted: true, reason: 0, detail: 0, seq: 6, offset: log.length });
    expect(admitted(log, resume('i9'))).toEqual({ accepted: false, reason: RefusalReason.UNKNOWN_INTERRUPT, detail: 0, seq: 5, offset: log.length });
    const afterClaim = encodeRecs(happyPath.slice(0, 7));
    expect(admitted(afterClaim.log, resume('i1'))).toEqual({
      accepted: false, reason: RefusalReason.ALREADY_CONSUMED, detail: 0, seq: 6, offset: afterClaim.offsets[6],
    });
    const running = logOf(...happyPath.slice(0, 2));
    expect(admitted(running, resume('i1'))).toMatchObject({ reason: RefusalReason.NOT_PARKED, seq: 1, offset: running.length });
    const completedLog = encodeRecs(happyPath);
    expect(admitted(completedLog.log, resume('i1'))).toMatchObject({ reason: RefusalReason.ALREADY_CONSUMED, seq: 6 });
  });

  it('FORK_AT: checkpoints only, up to the head', () => {
    expect(admitted(log, { tag: 'FORK_AT', seq: 0 })).toEqual({ accepted: true, reason: 0, detail: 0, seq: 1, offset: offsets[1] });
    expect(admitted(log, { tag: 'FORK_AT', seq: 4 })).toEqual({ accepted: true, reason: 0, detail: 0, seq: 5, offset: offsets[5] });
    expect(admitted(log, { tag: 'FORK_AT', seq: 2 })).toEqual({ accepted: false, reason: RefusalReason.NOT_A_CHECKPOINT, detail: 0, seq: 2, offset: offsets[2] });
    expect(admitted(log, { tag: 'FORK_AT', seq: 6 })).toEqual({ accepted: false, reason: RefusalReason.BEYOND_HEAD, detail: 0, seq: 5, offset: log.length });
  });

  it('CONTINUE_FROM: only the head; older needs a fork', () => {
    expect(admitted(log, { tag: 'CONTINUE_FROM', seq: 5 })).toEqual({ accepted: true, reason: 0, detail: 0, seq: 6, offset: log.length });
    expect(admitted(log, { tag: 'CONTINUE_FROM', seq: 4 })).toMatchObject({ reason: RefusalReason.IMPLICIT_FORK, seq: 5, offset: log.length });
    expect(admitted(log, { tag: 'CONTINUE_FROM', seq: 0xffffffff })).toMatchObject({ reason: RefusalReason.BEYOND_HEAD, seq: 5 });
  });

  it('log problems come before request problems', () => {
    const broken = log.slice();
    broken[offsets[3]! + 13] = broken[offsets[3]! + 13]! ^ 1;
    expect(admitted(broken, resume('i1'))).toEqual({
      accepted: false, reason: RefusalReason.LOG_INVALID, detail: LogErrorCode.BAD_CHECKSUM, seq: 3, offset: offsets[3],
    });
    expect(reference.admitEncoded(broken, Uint8Array.of(77))).toEqual(Uint8Array.of(2, 7, 4, 3, 0, 0, 0, ...u32le(offsets[3]!)));
    expect(admitted(EMPTY, resume('i1'))).toEqual({ accepted: false, reason: RefusalReason.NO_RUN, detail: 0, seq: 0, offset: 0 });
    expect(admitted(log.subarray(0, 5), { tag: 'FORK_AT', seq: 0 })).toMatchObject({ reason: RefusalReason.NO_RUN });
  });

  it('refuses malformed requests as BAD_REQUEST (typed and encoded alike)', () => {
    const badBytes = [[], [0], [4, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0], [1, 2, 0, 0, 0, 0x69], [2, 1, 0, 0], [2, 1, 0, 0, 0, 0], [3]];
    for (const b of badBytes) {
      expect(decodeAdmission(reference.admitEncoded(log, Uint8Array.from(b)))).toMatchObject({ reason: RefusalReason.BAD_REQUEST, seq: 0, offset: 0 });
    }
    expect(admitted(log, resume(''))).toMatchObject({ reason: RefusalReason.BAD_REQUEST });
    expect(admitted(log, { tag: 'RESUME', interruptId: new Uint8Array(1025) })).toMatchObject({ reason: RefusalReason.BAD_REQUEST });
    expect(admitted(log, { tag: 'FORK_AT', seq: -1 })).toMatchObject({ reason: RefusalReason.BAD_REQUEST });
    expect(admitted(log, { tag: 'CONTINUE_FROM', seq: 1.5 })).toMatchObject({ reason: RefusalReason.BAD_REQUEST });
  });
});

function u32le(n: number): number[] {
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24];
}

describe('the reference RecoveryCore', () => {
  it('encoded and decoded results agree', () => {
    const { log } = encodeRecs(happyPath);
    for (let cut = 0; cut <= log.length; cut += 7) {
      const prefix = log.subarray(0, cut);
      expect(decodeRecovery(reference.recoverEncoded(prefix))).toEqual(reference.recover(prefix));
      const req: AdmissionRequest = { tag: 'RESUME', interruptId: t('i1') };
      expect(decodeAdmission(reference.admitEncoded(prefix, encodeAdmissionRequest(req)))).toEqual(reference.admit(prefix, req));
    }
  });
  it('is total: random bytes and random requests never throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 12 }), (log, req) => {
        reference.recoverEncoded(log);
        reference.admitEncoded(log, req);
      }),
      { numRuns: 500 },
    );
  });
  it('recovering twice gives the same bytes', () => {
    const { log } = encodeRecs(happyPath);
    expect(reference.recoverEncoded(log)).toEqual(reference.recoverEncoded(log));
  });
  it('canaries change behaviour only where they say', () => {
    const canary = createReferenceCore({ canary: 'accept-second-claim' });
    const afterClaim = logOf(...happyPath.slice(0, 7));
    expect(canary.admit(afterClaim, { tag: 'RESUME', interruptId: t('i1') }).accepted).toBe(true);
    expect(canary.recoverEncoded(logOf(...happyPath))).toEqual(reference.recoverEncoded(logOf(...happyPath)));
  });
  it('createReferenceCore refuses options it does not know, a canary it does not have and options that are not an object', () => {
    // Before, { bogus: 1 } and a misspelt canary were ignored: a core without the bug a must-fail test meant to inject.
    const refusal = (options: unknown) => {
      try {
        createReferenceCore(options as never);
      } catch (error) {
        const e = error as { name?: unknown; code?: unknown; field?: unknown; argument?: unknown };
        return { name: e.name, code: e.code, field: e.field, argument: e.argument };
      }
      return undefined;
    };
    const option = (field: string) => ({ name: 'OptionInvalidError', code: 'REMIT_OPTION_INVALID', field, argument: undefined });
    expect(refusal({ bogus: 1 })).toEqual(option('bogus'));
    expect(refusal({ canary: 'accept-second-claim', canery: 'x' })).toEqual(option('canery'));
    expect(refusal(Object.create({ bogus: 1 }))).toEqual(option('bogus'));
    expect(refusal({ canary: 'accept-second-clam' })).toEqual(option('canary'));
    expect(refusal({ canary: 1 })).toEqual(option('canary'));
    const argument = { name: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', field: undefined, argument: 'createReferenceCore(options)' };
    expect(refusal(null)).toEqual(argument);
    expect(refusal('accept-second-claim')).toEqual(argument);
    expect(refusal([])).toEqual(argument);
    expect(refusal(undefined)).toBeUndefined();
    expect(refusal({})).toBeUndefined();
    expect(refusal({ canary: undefined })).toBeUndefined();
    expect(refusal({ canary: 'summary-forgets-prev-kind' })).toBeUndefined();
  });
});
