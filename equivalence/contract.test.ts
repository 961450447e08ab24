/**
 * Properties of the reference core that follow from the contract rather than from a second
 * implementation: model histories (valid executions: `validOnly`, no interrupt id that breaks the
 * reserved-id rule) always recover; crashes are prefixes; an
 * accepted resume, once recorded, consumes the interrupt; an accepted fork yields a log that
 * recovers. These keep the oracle honest while the Wasm core is compared with it.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { chainValueBefore, concatBytes, encodeRecordV2 } from 'remit/core';
import { reference as core } from 'remit/core';
import { RecordKind, RefusalReason, RunStatus, type Recovery } from 'remit/core';
import { historyArb, historyLogs } from './arbitraries.js';
import { recordBoundaries } from './compare.js';
import { interruptIdsIn } from './requests.js';

function ok(r: Recovery) {
  if (!r.ok) throw new Error(`expected recovery, got error code ${r.code} at seq ${r.seq}`);
  return r;
}

describe('reference core on model histories', () => {
  it('every record-boundary prefix recovers; every byte cut is that prefix plus a torn tail', () => {
    fc.assert(
      fc.property(historyArb(20, { validOnly: true }), (h) => {
        for (const log of historyLogs(h)) {
          const bounds = recordBoundaries(log);
          expect(bounds[bounds.length - 1]).toBe(log.length);
          bounds.forEach((b, k) => {
            const r = ok(core.recover(log.subarray(0, b)));
            expect([r.recordCount, r.durableLen, r.tornLen]).toEqual([k, b, 0]);
            expect(r.status === RunStatus.EMPTY).toBe(k === 0);
            const next = bounds[k + 1];
            if (next === undefined) return;
            for (const cut of [b + 1, b + 11, b + 12, next - 1]) {
              if (cut <= b || cut >= next) continue;
              const t = ok(core.recover(log.subarray(0, cut)));
              expect([t.recordCount, t.durableLen, t.tornLen]).toEqual([k, b, cut - b]);
              expect(core.recoverEncoded(log.subarray(0, cut)).subarray(14)).toEqual(core.recoverEncoded(log.subarray(0, b)).subarray(14));
            }
          });
        }
      }),
      { numRuns: 150 },
    );
  });

  it('an accepted resume, once recorded, consumes the interrupt; every other id is refused', () => {
    fc.assert(
      fc.property(historyArb(20, { validOnly: true }), (h) => {
        for (const log of historyLogs(h)) {
          for (const b of recordBoundaries(log).slice(1)) {
            const prefix = log.subarray(0, b);
            for (const id of interruptIdsIn(log)) {
              const a = core.admit(prefix, { tag: 'RESUME', interruptId: id });
              if (!a.accepted) continue;
              expect(ok(core.recover(prefix)).status).toBe(RunStatus.PARKED);
              // As the shell writes it: format 2, chained to the log's last record.
              const claim = encodeRecordV2(
                { kind: RecordKind.RESUME_CLAIMED, seq: a.seq, interruptId: id, value: new Uint8Array(0) }, chainValueBefore(prefix, prefix.length),
              );
              const after = concatBytes([prefix, claim]);
              expect(ok(core.recover(after)).action.tag).toBe('FINISH_INTERRUPT');
              expect(core.admit(after, { tag: 'RESUME', interruptId: id })).toMatchObject({
                accepted: false, reason: RefusalReason.ALREADY_CONSUMED, seq: a.seq, offset: a.offset,
              });
            }
          }
        }
      }),
      { numRuns: 120 },
    );
  });

  it('an accepted fork gives a log (prefix + FORKED) that recovers with one more lineage entry', () => {
    fc.assert(
      fc.property(historyArb(16, { validOnly: true }), (h) => {
        const log = historyLogs(h).at(-1)!;
        const before = ok(core.recover(log));
        for (let n = 0; n < before.recordCount; n++) {
          const a = core.admit(log, { tag: 'FORK_AT', seq: n });
          if (!a.accepted) continue;
          const forked = encodeRecordV2({
            kind: RecordKind.FORKED, seq: a.seq, sourceRunId: before.runId, sourceSeq: n, runId: Uint8Array.of(0x78), intent: new Uint8Array(0),
          }, chainValueBefore(log, a.offset));
          const child = ok(core.recover(concatBytes([log.subarray(0, a.offset), forked])));
          expect(child.recordCount).toBe(n + 2);
          expect(child.lineage.at(-1)).toMatchObject({ sourceSeq: n, forkSeq: n + 1 });
          expect(child.checkpointSeq).toBe(n);
        }
      }),
      { numRuns: 120 },
    );
  });

  it('continuing is allowed from the head only', () => {
    fc.assert(
      fc.property(historyArb(16, { validOnly: true }), (h) => {
        const log = historyLogs(h).at(-1)!;
        const head = ok(core.recover(log)).recordCount - 1;
        for (let n = 0; n <= head + 1; n++) {
          expect(core.admit(log, { tag: 'CONTINUE_FROM', seq: n }).accepted).toBe(n === head);
        }
      }),
      { numRuns: 100 },
    );
  });
});
