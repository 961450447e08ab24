/**
 * Log format 2 and core API 2 on the TypeScript side, rule by rule (docs/log-format.md, "Record
 * framing", "The chain"; docs/core-api.md, "Effect attempts"): the codec's format-2 framing and
 * link, the integrity order with BAD_LINK, format order, and the attempt transitions and actions
 * of the reference core. The Wasm core is held to the same bytes by the equivalence suite.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { chainOf, decodeLog, decodeRecordAt, encodeLog, encodeLogV2, encodeRecord, encodeRecordV2, frameRecord } from './codec.js';
import { crc32c } from './crc32c.js';
import { linkOf, readU32 } from './framing.js';
import { admit, recover } from './reference-core.js';
import { EffectStatus, LogErrorCode, RecordKind, RefusalReason, type LogRecord, type RecoveredRun } from './types.js';

const t = (s: string) => new TextEncoder().encode(s);
type Rec = LogRecord extends infer R ? (R extends LogRecord ? Omit<R, 'seq'> : never) : never;
const nodes = [{ name: t('prep'), kind: 1 }, { name: t('pay'), kind: 2 }, { name: t('approve'), kind: 3 }];
const start = (runId = 'run-1'): Rec => ({
  kind: RecordKind.RUN_STARTED, runId: t(runId), workflow: t('wf'), version: t('v1'), fingerprint: t('fp'),
  definition: t('{}'), nodes, startNode: t('prep'), state: t('{"n":0}'),
});
const done = (node: string, next: string): Rec => ({ kind: RecordKind.NODE_COMPLETED, node: t(node), next: t(next), stateForm: 0, state: t('{}') });
const intent = (key = 'k1'): Rec => ({ kind: RecordKind.EFFECT_INTENT, node: t('pay'), key: t(key) });
const attempt = (a: number, key = 'k1', node = 'pay'): Rec =>
  ({ kind: RecordKind.EFFECT_ATTEMPT, node: t(node), key: t(key), attempt: a, lease: t('{"owner":"x","leaseUntilMs":1}') });
const released = (a: number, key = 'k1'): Rec => ({ kind: RecordKind.EFFECT_RELEASED, node: t('pay'), key: t(key), attempt: a, reason: t('{"error":"e"}') });
const effectDone = (key = 'k1'): Rec => ({ kind: RecordKind.EFFECT_DONE, node: t('pay'), key: t(key), result: t('"ok"') });
const parked = (id = 'i1'): Rec => ({ kind: RecordKind.INTERRUPT_PARKED, node: t('approve'), interruptId: t(id) });

const seqd = (records: Rec[]) => records.map((r, seq) => ({ ...r, seq }) as LogRecord);
/** A log whose record i has format versions[i] (default: all format 2). */
function logOf(records: Rec[], versions: number[] = records.map(() => 2)): Uint8Array {
  let prev = 0;
  const parts = seqd(records).map((r, i) => {
    const bytes = versions[i] === 2 ? encodeRecordV2(r, prev) : encodeRecord(r);
    prev = chainOf(bytes);
    return bytes;
  });
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let pos = 0;
  for (const p of parts) { out.set(p, pos); pos += p.length; }
  return out;
}
function offsetsOf(log: Uint8Array): number[] {
  return decodeLog(log).offsets;
}
function ok(records: Rec[], versions?: number[]): RecoveredRun {
  const r = recover(logOf(records, versions));
  if (!r.ok) throw new Error(`expected a recovery, got error ${r.code} at seq ${r.seq}`);
  return r;
}
function err(records: Rec[], versions?: number[]): [number, number] {
  const r = recover(logOf(records, versions));
  if (r.ok) throw new Error('expected an error');
  return [r.code, r.seq];
}

describe('format 2 framing', () => {
  it('writes record_crc then link = CRC-32C(prev chain value, record_crc), and chainOf is the last four bytes', () => {
    const r = { ...start(), seq: 0 } as LogRecord;
    const v1 = encodeRecord(r);
    const v2 = encodeRecordV2(r, 0x1234_5678);
    expect(v2.length).toBe(v1.length + 4);
    expect(v2[8]).toBe(2);
    const crc = readU32(v2, v2.length - 8);
    expect(crc).toBe(crc32c(v2, 0, v2.length - 8));
    const pair = new Uint8Array(8);
    new DataView(pair.buffer).setUint32(0, 0x1234_5678, true);
    new DataView(pair.buffer).setUint32(4, crc, true);
    expect(readU32(v2, v2.length - 4)).toBe(crc32c(pair));
    expect(chainOf(v2)).toBe(linkOf(0x1234_5678, crc));
    expect(chainOf(v1)).toBe(readU32(v1, v1.length - 4));
    expect(encodeLog([r])).toEqual(v1); // format 1 stays the default of encodeLog/encodeRecord
    expect(encodeLogV2([r])).toEqual(encodeRecordV2(r, 0));
  });

  it('decodes format 2 and mixed logs, reporting each record\'s format and chain value', () => {
    const records = [start(), done('prep', 'pay'), intent(), attempt(1)];
    const log = logOf(records, [1, 1, 1, 2]);
    const d = decodeLog(log);
    expect(d.error).toBeNull();
    expect(d.versions).toEqual([1, 1, 1, 2]);
    expect(d.records[3]).toMatchObject({ kind: RecordKind.EFFECT_ATTEMPT, attempt: 1 });
    const step = decodeRecordAt(log, d.offsets[3]!, 3, { prevChain: chainOf(log.subarray(0, d.offsets[3])), v2Seen: false });
    expect(step).toMatchObject({ outcome: 'record', version: 2, chain: readU32(log, log.length - 4) });
  });

  it('classifies in the documented order: BAD_CHECKSUM, then BAD_LINK, then BAD_SEQ; format 1 after format 2 is BAD_VERSION', () => {
    const log = logOf([start(), done('prep', 'pay')]);
    const second = offsetsOf(log)[1]!;
    const flip = (pos: number) => { const b = log.slice(); b[pos]! ^= 1; return decodeLog(b).error; };
    expect(flip(second + 14)).toMatchObject({ code: LogErrorCode.BAD_CHECKSUM, seq: 1 });
    expect(flip(log.length - 1)).toMatchObject({ code: LogErrorCode.BAD_LINK, seq: 1, offset: second });
    // A record chained to another predecessor with a wrong seq: the link is checked first.
    const moved = new Uint8Array([...log.subarray(0, second), ...encodeRecordV2({ ...done('prep', 'pay'), seq: 7 } as LogRecord, 99)]);
    expect(decodeLog(moved).error).toMatchObject({ code: LogErrorCode.BAD_LINK, seq: 1 });
    const wrongSeq = new Uint8Array([...log.subarray(0, second), ...encodeRecordV2({ ...done('prep', 'pay'), seq: 7 } as LogRecord, chainOf(log.subarray(0, second)))]);
    expect(decodeLog(wrongSeq).error).toMatchObject({ code: LogErrorCode.BAD_SEQ, seq: 1 });
    expect(err([start(), done('prep', 'pay')], [2, 1])).toEqual([LogErrorCode.BAD_VERSION, 1]);
    expect(decodeLog(frameRecord(0, 1, new Uint8Array(0), 3)).error).toMatchObject({ code: LogErrorCode.BAD_VERSION });
    // Kinds 10 and 11 exist only in format 2; 12 in neither.
    expect(decodeLog(frameRecord(0, 10, new Uint8Array(0))).error).toMatchObject({ code: LogErrorCode.BAD_KIND, kind: 10 });
    expect(decodeLog(frameRecord(0, 12, new Uint8Array(0), 2, 0)).error).toMatchObject({ code: LogErrorCode.BAD_KIND, kind: 12 });
    expect(decodeLog(frameRecord(0, 11, new Uint8Array(0), 2, 0)).error).toMatchObject({ code: LogErrorCode.MALFORMED_PAYLOAD, kind: 11 });
  });

  it('a format-2 record cut anywhere after its header (the link included) is a torn tail', () => {
    const log = logOf([start(), intent('k')].slice(0, 1));
    for (let cut = 12; cut < log.length; cut++) {
      const r = recover(log.subarray(0, cut));
      expect(r).toMatchObject({ ok: true, recordCount: 0, tornLen: cut });
    }
  });

  it('names the first record that does not follow its predecessor: copied from another run, reordered, or after an edited one', () => {
    const records = [start(), done('prep', 'pay'), intent(), attempt(1), effectDone(), done('pay', 'approve'), parked()];
    const a = logOf(records);
    const b = logOf([start('run-2'), ...records.slice(1)]);
    const oa = offsetsOf(a);
    const ob = offsetsOf(b);
    // Record 3 of run-2 at seq 3 of run-1: framing, checksum and seq are all valid.
    const spliced = new Uint8Array([...a.subarray(0, oa[3]), ...b.subarray(ob[3], ob[4]), ...a.subarray(oa[4])]);
    expect(recover(spliced)).toMatchObject({ ok: false, code: LogErrorCode.BAD_LINK, seq: 3, offset: oa[3] });
    // Records 4 and 5 swapped.
    const swapped = new Uint8Array([...a.subarray(0, oa[4]), ...a.subarray(oa[5], oa[6]), ...a.subarray(oa[4], oa[5]), ...a.subarray(oa[6])]);
    expect(recover(swapped)).toMatchObject({ ok: false, code: LogErrorCode.BAD_LINK, seq: 4 });
    // Record 4's result edited, its record_crc and link recomputed: record 5 no longer follows it.
    const forged = encodeRecordV2({ ...effectDone(), result: t('"forged"'), seq: 4 } as LogRecord, chainOf(a.subarray(0, oa[4])));
    const edited = new Uint8Array([...a.subarray(0, oa[4]), ...forged, ...a.subarray(oa[5])]);
    expect(recover(edited)).toMatchObject({ ok: false, code: LogErrorCode.BAD_LINK, seq: 5 });
  });

  it('the link is injective in the predecessor: any other predecessor is detected (property)', () => {
    fc.assert(fc.property(fc.nat(0xffff_ffff), fc.nat(0xffff_ffff), fc.nat(0xffff_ffff), (a, b, c) => {
      fc.pre(a !== b);
      return linkOf(a, c) !== linkOf(b, c);
    }), { numRuns: 2000 });
  });
});

describe('format 2: effect attempts and the fence', () => {
  const base = [start(), done('prep', 'pay'), intent()];

  it('reports INVOKE_EFFECT with the attempt to claim and AWAIT_ATTEMPT with the live one', () => {
    const records = [...base, attempt(1), released(1), attempt(2), attempt(3), effectDone()];
    const log = logOf(records);
    const o = offsetsOf(log);
    expect(ok(records.slice(0, 3)).action).toEqual({ tag: 'INVOKE_EFFECT', node: t('pay'), key: t('k1'), intentSeq: 2, nextAttempt: 1 });
    expect(ok(records.slice(0, 4)).action).toEqual({
      tag: 'AWAIT_ATTEMPT', node: t('pay'), key: t('k1'), intentSeq: 2, attempt: 1, attemptSeq: 3, attemptOffset: o[3],
    });
    expect(ok(records.slice(0, 5)).action).toMatchObject({ tag: 'INVOKE_EFFECT', intentSeq: 2, nextAttempt: 2 });
    expect(ok(records.slice(0, 7)).action).toMatchObject({ tag: 'AWAIT_ATTEMPT', attempt: 3, attemptSeq: 6, attemptOffset: o[6] });
    expect(ok(records).action).toMatchObject({ tag: 'FINISH_EFFECT', doneSeq: 7 });
    expect(ok(records).effects).toEqual([{ node: t('pay'), status: EffectStatus.DONE, doneCount: 1, attempts: 3 }]);
    expect(ok(records.slice(0, 4)).effects[0]).toMatchObject({ status: EffectStatus.INTENT_ONLY, attempts: 1 });
    // A new instance starts again at 0 attempts.
    const again = [...records, done('pay', 'approve'), parked(), { kind: RecordKind.RESUME_CLAIMED, interruptId: t('i1'), value: t('1') } as Rec, done('approve', 'prep'), done('prep', 'pay'), intent('k2')];
    expect(ok(again).effects[0]).toMatchObject({ status: EffectStatus.INTENT_ONLY, doneCount: 1, attempts: 0 });
    expect(ok(again).status).toBe(1);
  });

  it.each([
    ['a format-2 completion without an attempt (the fence)', [effectDone()], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 3]],
    ['attempt 2 first', [attempt(2)], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 3]],
    ['attempt 0', [attempt(0)], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 3]],
    ['the same attempt twice', [attempt(1), attempt(1)], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 4]],
    ['an attempt skipped', [attempt(1), attempt(3)], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 4]],
    ['another key', [attempt(1, 'k9')], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 3]],
    ['another node of the table', [attempt(1, 'k1', 'prep')], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 3]],
    ['an unknown node', [attempt(1, 'k1', 'nope')], undefined, [LogErrorCode.UNKNOWN_NODE, 3]],
    ['a release with no attempt', [released(1)], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 3]],
    ['a release of another attempt', [attempt(1), released(2)], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 4]],
    ['a release twice', [attempt(1), released(1), released(1)], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 5]],
    ['a completion after a release', [attempt(1), released(1), effectDone()], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 5]],
    ['an attempt after the completion', [attempt(1), effectDone(), attempt(2)], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 5]],
    ['a release after the completion', [attempt(1), effectDone(), released(1)], undefined, [LogErrorCode.IMPOSSIBLE_ORDER, 5]],
    ['an attempt in format 1', [attempt(1)], [1, 1, 1, 1], [LogErrorCode.BAD_KIND, 3]],
  ] as Array<[string, Rec[], number[] | undefined, [number, number]]>)('refuses %s', (_name, tail, versions, expected) => {
    expect(err([...base, ...tail], versions)).toEqual(expected);
  });

  it('reads a format-1 run continued in format 2: format-1 completion right after its intent, format-2 only after an attempt', () => {
    expect(ok([...base, effectDone()], [1, 1, 1, 1]).action.tag).toBe('FINISH_EFFECT');
    expect(ok([...base, attempt(1), effectDone()], [1, 1, 1, 2, 2]).action.tag).toBe('FINISH_EFFECT');
    expect(err([...base, effectDone()], [1, 1, 1, 2])).toEqual([LogErrorCode.IMPOSSIBLE_ORDER, 3]);
    expect(ok([...base], [1, 1, 1]).action).toMatchObject({ tag: 'INVOKE_EFFECT', nextAttempt: 1 });
  });

  it('admission sees attempt phases as running: resume refused NOT_PARKED, fork refused at an attempt', () => {
    const records = [...base, attempt(1)];
    const log = logOf(records);
    expect(admit(log, { tag: 'RESUME', interruptId: t('i1') })).toMatchObject({ accepted: false, reason: RefusalReason.NOT_PARKED, seq: 3 });
    expect(admit(log, { tag: 'FORK_AT', seq: 3 })).toMatchObject({ accepted: false, reason: RefusalReason.NOT_A_CHECKPOINT, seq: 3 });
    expect(admit(log, { tag: 'FORK_AT', seq: 1 })).toEqual({ accepted: true, reason: 0, detail: 0, seq: 2, offset: offsetsOf(log)[2] });
    expect(admit(log, { tag: 'CONTINUE_FROM', seq: 3 })).toMatchObject({ accepted: true, seq: 4, offset: log.length });
    const damaged = log.slice();
    damaged[damaged.length - 1]! ^= 4;
    expect(admit(damaged, { tag: 'CONTINUE_FROM', seq: 3 })).toMatchObject({ accepted: false, reason: RefusalReason.LOG_INVALID, detail: LogErrorCode.BAD_LINK, seq: 3 });
  });
});
