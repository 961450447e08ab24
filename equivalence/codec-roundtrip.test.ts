/** Codec and encodings round-trip on arbitrary values of every kind. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { chainValueBefore, decodeLog, decodeRecordAt, encodeLog, encodeLogV2, encodeRecord, encodeRecordV2 } from 'remit/core';
import { decodeAdmission, decodeRecovery, encodeAdmission, encodeRecovery } from 'remit/core';
import { reference } from 'remit/core';
import { RecordKind, type LogRecord } from 'remit/core';
import { anyLogArb, recordArb } from './arbitraries.js';
import { planRequests, requestsAtPrefix } from './requests.js';

describe('record codec', () => {
  it('decode(encode(r)) = r for records of every kind, in both formats (10 and 11 are format 2 only)', () => {
    const seen = new Set<number>();
    fc.assert(
      fc.property(recordArb, fc.nat(0xffff_ffff), (r, prevChain) => {
        seen.add(r.kind);
        const v2 = encodeRecordV2(r, prevChain);
        const chain = chainValueBefore(v2, v2.length);
        expect(decodeRecordAt(v2, 0, -1, { prevChain, v2Seen: true })).toEqual({ outcome: 'record', record: r, offset: 0, end: v2.length, version: 2, chain });
        const v1 = encodeRecord(r);
        const step = decodeRecordAt(v1, 0);
        if (r.kind <= RecordKind.RUN_FAILED) {
          expect(step).toEqual({ outcome: 'record', record: r, offset: 0, end: v1.length, version: 1, chain: chainValueBefore(v1, v1.length) });
        } else {
          expect(step).toMatchObject({ outcome: 'corrupt', error: { codeName: 'BAD_KIND', kind: r.kind } });
        }
      }),
      { numRuns: 800 },
    );
    expect([...seen].sort()).toEqual(Object.values(RecordKind).sort());
  });

  it('decodeLog(encodeLogV2(rs)) = rs when seqs are positions; likewise format 1 for kinds 1..9', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 6 }), (rs) => {
        const records = rs.map((r, seq) => ({ ...r, seq }) as LogRecord);
        const d = decodeLog(encodeLogV2(records));
        expect(d.error).toBeNull();
        expect(d.records).toEqual(records);
        expect(d.versions).toEqual(records.map(() => 2));
        const v1 = records.filter((r) => r.kind <= RecordKind.RUN_FAILED).map((r, seq) => ({ ...r, seq }) as LogRecord);
        expect(decodeLog(encodeLog(v1)).records).toEqual(v1);
      }),
      { numRuns: 150 },
    );
  });

  it('encode(decode(bytes)) = bytes for every record that decodes (one encoding per record)', () => {
    fc.assert(
      fc.property(anyLogArb(16), (c) => {
        for (const log of c.logs) {
          const d = decodeLog(log);
          d.records.forEach((r, i) => {
            const start = d.offsets[i]!;
            const end = i + 1 < d.offsets.length ? d.offsets[i + 1]! : d.durableLen;
            const again = d.versions[i] === 2 ? encodeRecordV2(r, chainValueBefore(log, start)) : encodeRecord(r);
            expect(again).toEqual(log.subarray(start, end));
          });
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('recovery and admission encodings', () => {
  it('encode(decode(x)) = x for every encoding the reference produces', () => {
    fc.assert(
      fc.property(anyLogArb(16), (c) => {
        for (const log of c.logs) {
          const enc = reference.recoverEncoded(log);
          expect(encodeRecovery(decodeRecovery(enc))).toEqual(enc);
          for (const req of requestsAtPrefix(planRequests(log), 2)) {
            const a = reference.admitEncoded(log, req);
            expect(encodeAdmission(decodeAdmission(a))).toEqual(a);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('decoders reject bytes that are not an encoding, with a typed error', () => {
    expect(() => decodeRecovery(Uint8Array.of(2))).toThrow(/ok byte/);
    expect(() => decodeRecovery(Uint8Array.of(0, 4, 0))).toThrow(/u32/);
    expect(() => decodeAdmission(Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))).toThrow(/trailing/);
    expect(() => decodeAdmission(Uint8Array.of(1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0))).toThrow(/reason/);
  });
});
