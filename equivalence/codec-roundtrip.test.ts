/** Codec and encodings round-trip on arbitrary values of every kind. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeLog, decodeRecordAt, encodeLog, encodeRecord } from 'remit/core';
import { decodeAdmission, decodeRecovery, encodeAdmission, encodeRecovery } from 'remit/core';
import { reference } from 'remit/core';
import { RecordKind, type LogRecord } from 'remit/core';
import { anyLogArb, recordArb } from './arbitraries.js';
import { planRequests, requestsAtPrefix } from './requests.js';

describe('record codec', () => {
  it('decode(encode(r)) = r for records of every kind', () => {
    const seen = new Set<number>();
    fc.assert(
      fc.property(recordArb, (r) => {
        seen.add(r.kind);
        const bytes = encodeRecord(r);
        const step = decodeRecordAt(bytes, 0);
        expect(step).toEqual({ outcome: 'record', record: r, offset: 0, end: bytes.length });
      }),
      { numRuns: 600 },
    );
    expect([...seen].sort()).toEqual(Object.values(RecordKind).sort());
  });

  it('decodeLog(encodeLog(rs)) = rs when seqs are positions', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 6 }), (rs) => {
        const records = rs.map((r, seq) => ({ ...r, seq }) as LogRecord);
        const d = decodeLog(encodeLog(records));
        expect(d.error).toBeNull();
        expect(d.records).toEqual(records);
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
            expect(encodeRecord(r)).toEqual(log.subarray(start, end));
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
