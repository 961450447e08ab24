import { describe, expect, it } from 'vitest';
import { decodeLog, decodeRecordAt, encodeLog, encodeRecord, frameRecord, RecordEncodeError } from './codec.js';
import { crc32c } from './crc32c.js';
import { LogErrorCode, RecordKind, type LogRecord } from './types.js';

const t = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const started: LogRecord = {
  kind: RecordKind.RUN_STARTED, seq: 0, runId: t('r1'), workflow: t('wf'), version: t('1'), fingerprint: t('fp'),
  definition: t('{}'), nodes: [{ name: t('a'), kind: 1 }], startNode: t('a'), state: t('{"n":0}'),
};
const completed: LogRecord = { kind: RecordKind.NODE_COMPLETED, seq: 1, node: t('a'), next: new Uint8Array(0), stateForm: 0, state: t('{}') };

describe('encodeRecord', () => {
  it('writes the framing of docs/log-format.md byte by byte', () => {
    const bytes = encodeRecord({ kind: RecordKind.RUN_COMPLETED, seq: 3 });
    expect(bytes.length).toBe(16);
    expect(hex(bytes.subarray(0, 10))).toBe('00000000' + '03000000' + '01' + '08');
    const check = crc32c(bytes, 0, 10) & 0xffff;
    expect(bytes[10]! | (bytes[11]! << 8)).toBe(check);
    expect(Buffer.from(bytes).readUInt32LE(12)).toBe(crc32c(bytes, 0, 12));
  });
  it('writes payload fields in order: bytes = u32 length + data', () => {
    const bytes = encodeRecord({ kind: RecordKind.EFFECT_INTENT, seq: 7, node: t('n'), key: t('kk') });
    expect(hex(bytes.subarray(12, 12 + 11))).toBe('01000000' + '6e' + '02000000' + '6b6b');
    expect(Buffer.from(bytes).readUInt32LE(0)).toBe(11);
  });
  it('refuses values the format cannot hold, naming the field', () => {
    expect(() => encodeRecord({ ...completed, stateForm: 300 } as LogRecord)).toThrow(RecordEncodeError);
    expect(() => encodeRecord({ ...completed, seq: -1 } as LogRecord)).toThrow(/seq/);
    expect(() => encodeRecord({ kind: 99, seq: 0 } as unknown as LogRecord)).toThrow(/kind/);
  });
  it('refuses a node table that is not an array of objects, naming it (it was a bare TypeError)', () => {
    const cases: Array<[unknown, string]> = [[null, 'nodes'], ['ab', 'nodes'], [{}, 'nodes'], [[null], 'nodes[0]'], [[{ name: t('a'), kind: 1 }, 7], 'nodes[1]']];
    for (const [nodes, field] of cases) {
      expect(() => encodeRecord({ ...started, nodes } as unknown as LogRecord)).toThrow(expect.objectContaining({ name: 'RecordEncodeError', field }));
    }
  });
});

describe('decodeLog', () => {
  const log = encodeLog([started, completed]);
  it('decodes what encodeLog wrote', () => {
    const d = decodeLog(log);
    expect(d.error).toBeNull();
    expect(d.records).toEqual([started, completed]);
    expect(d.offsets).toEqual([0, encodeRecord(started).length]);
    expect(d.durableLen).toBe(log.length);
    expect(d.tornLen).toBe(0);
  });
  it('reports a torn tail (header incomplete, or body incomplete) and keeps the records before it', () => {
    const first = encodeRecord(started).length;
    for (const cut of [first + 1, first + 11, first + 12, log.length - 1]) {
      const d = decodeLog(log.subarray(0, cut));
      expect(d.error).toBeNull();
      expect(d.records.length).toBe(1);
      expect(d.tornLen).toBe(cut - first);
    }
  });
  it('classifies damage in the order of the integrity steps', () => {
    const first = encodeRecord(started).length;
    const damaged = (mutate: (b: Uint8Array) => void) => {
      const b = log.slice();
      mutate(b);
      return decodeLog(b).error;
    };
    expect(damaged((b) => (b[first] = b[first]! ^ 1))).toMatchObject({ code: LogErrorCode.BAD_HEADER, seq: 1, offset: first, kind: 0 });
    expect(damaged((b) => (b[first + 20] = b[first + 20]! ^ 1))).toMatchObject({ code: LogErrorCode.BAD_CHECKSUM, seq: 1, offset: first, kind: 2 });
    const wrongSeq = encodeLog([started, { ...completed, seq: 5 }]);
    expect(decodeLog(wrongSeq).error).toMatchObject({ code: LogErrorCode.BAD_SEQ, seq: 1 });
    expect(decodeLog(frameRecord(0, 1, new Uint8Array(0), 3)).error).toMatchObject({ code: LogErrorCode.BAD_VERSION, kind: 1 });
    expect(decodeLog(frameRecord(0, 10, new Uint8Array(0))).error).toMatchObject({ code: LogErrorCode.BAD_KIND, kind: 10 });
    expect(decodeLog(frameRecord(0, 8, new Uint8Array(1))).error).toMatchObject({ code: LogErrorCode.MALFORMED_PAYLOAD, kind: 8 });
  });
  it('says RECORD_TOO_LARGE for a length over 0x3FFFFFFF with a good header check', () => {
    const b = frameRecord(0, 8, new Uint8Array(0));
    b.set([0x00, 0x00, 0x00, 0x40], 0);
    const check = crc32c(b, 0, 10) & 0xffff;
    b[10] = check & 0xff;
    b[11] = check >>> 8;
    expect(decodeLog(b).error).toMatchObject({ code: LogErrorCode.RECORD_TOO_LARGE });
  });
  it('rejects empty and over-long names and a state_form over 1 as malformed', () => {
    const bad = [
      { ...completed, seq: 0, node: new Uint8Array(0) },
      { ...completed, seq: 0, node: new Uint8Array(1025) },
      { ...completed, seq: 0, stateForm: 2 },
    ] as LogRecord[];
    for (const r of bad) expect(decodeLog(encodeRecord(r)).error?.code).toBe(LogErrorCode.MALFORMED_PAYLOAD);
    expect(decodeLog(encodeRecord({ ...completed, seq: 0, node: new Uint8Array(1024) } as LogRecord)).error).toBeNull();
  });
});

describe('decodeRecordAt', () => {
  it('reads one record without a seq check unless asked', () => {
    const bytes = encodeRecord({ ...completed, seq: 9 } as LogRecord);
    expect(decodeRecordAt(bytes, 0)).toMatchObject({ outcome: 'record', end: bytes.length, record: { seq: 9 } });
    expect(decodeRecordAt(bytes, 0, 2)).toMatchObject({ outcome: 'corrupt', error: { code: LogErrorCode.BAD_SEQ, seq: 2 } });
    expect(decodeRecordAt(bytes, bytes.length)).toEqual({ outcome: 'end', offset: bytes.length });
  });
});
