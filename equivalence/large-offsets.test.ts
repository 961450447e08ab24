/**
 * Logs longer than 4 GiB - 1 (docs/core-api.md, "Incremental recovery"): a log that large is read
 * through `feed`, a piece at a time, but every offset of the encodings is a u32. Both cores must
 * give the same answer when the absolute offsets cross 2^32 - 1: they saturate at 0xFFFFFFFF.
 * Until this test, the Rust core saturated while the reference wrapped around (a durable_len of
 * 2^32 + 71 was reported as 71), so the two cores disagreed on every feed past 4 GiB.
 *
 * Such a log is not built here (gigabytes). Its summaries are: a summary records where the last
 * durable record ends (durable_len) but not that record's bytes, so the summary of a log whose
 * last record is `extra` bytes longer (its state field; records up to 2^30 - 1 bytes of payload)
 * is the summary fed with `durable_len + extra`, every other field unchanged but the chain value,
 * which format 1 does not check. Feeding record after record, each made larger that way, walks
 * the offsets past 4 GiB exactly as a real log of those records would.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  EMPTY_SUMMARY, MAX_PAYLOAD_LEN, NONE32, RecordKind, concatBytes, decodeFed, encodeAdmissionRequest, encodeRecord, type LogRecord, type RecoveryCore,
} from 'remit/core';
import { hex } from './compare.js';
import { loadCoresUnderTest } from './cores.js';

const cores = await loadCoresUnderTest();
const t = (s: string) => new TextEncoder().encode(s);

const nodes = [{ name: t('step'), kind: 1 }, { name: t('ask'), kind: 3 }];
const started: LogRecord = {
  kind: RecordKind.RUN_STARTED, seq: 0, runId: t('run-big'), workflow: t('wf'), version: t('v1'), fingerprint: t('fp'),
  definition: t('{}'), nodes, startNode: t('step'), state: t('{}'),
};
const step = (seq: number, next = 'step'): LogRecord =>
  ({ kind: RecordKind.NODE_COMPLETED, seq, node: t('step'), next: t(next), stateForm: 0, state: t('{}') });

/** `summary` of the same log with its last durable record `extra` bytes longer. */
function grown(summary: Uint8Array, extra: number): Uint8Array {
  const out = summary.slice();
  const view = new DataView(out.buffer);
  // durable_len, after the version byte and record_count; a core writes at most 0xFFFFFFFF there.
  view.setUint32(5, Math.min(view.getUint32(5, true) + extra, NONE32), true);
  return out;
}

/** Both cores' answers to feeding `chunk` on `summary`, and to admitting from the result. */
function answers(core: RecoveryCore, summary: Uint8Array, chunk: Uint8Array): string[] {
  const fed = core.feedEncoded(summary, chunk);
  const next = decodeFed(fed);
  const after = next.ok && next.recovery.ok ? next.summary : summary;
  const requests = [
    encodeAdmissionRequest({ tag: 'CONTINUE_FROM', seq: 0 }), encodeAdmissionRequest({ tag: 'CONTINUE_FROM', seq: 100 }),
    encodeAdmissionRequest({ tag: 'RESUME', interruptId: t('i') }), encodeAdmissionRequest({ tag: 'FORK_AT', seq: 1000 }),
  ];
  return [hex(fed), ...requests.map((r) => hex(core.admitFromEncoded(after, r)))];
}

/** The summary of the log of RUN_STARTED alone. */
function firstSummary(): Uint8Array {
  const fed = decodeFed(cores.reference.feedEncoded(EMPTY_SUMMARY, encodeRecord(started)));
  if (!fed.ok) throw new Error('the empty summary was refused');
  return fed.summary;
}

const MAX_EXTRA = MAX_PAYLOAD_LEN - 64; // what one record's state can add to its length

type Ending = 'good' | 'torn' | 'corrupt' | 'park';

/**
 * Feed the log piece by piece, piece `i` starting `extras[i]` bytes later than its records say (the
 * record before it that much longer), `perPiece` records a piece, the last piece ending as `ending`
 * says; both cores must answer alike, and offsets are the true ones or 0xFFFFFFFF past it.
 */
function feedGrownPieces(extras: number[], perPiece: number, ending: Ending): void {
  let summary = firstSummary();
  let seq = 1;
  let total = encodeRecord(started).length; // the true length of the log's durable records
  for (const [piece, extra] of extras.entries()) {
    summary = grown(summary, extra);
    total += extra;
    const last = piece === extras.length - 1 ? ending : 'good';
    const records: Uint8Array[] = [];
    for (let i = 0; i < perPiece; i++) records.push(encodeRecord(step(seq++)));
    if (last === 'park') records.push(encodeRecord(step(seq++, 'ask')), encodeRecord({ kind: RecordKind.INTERRUPT_PARKED, seq: seq++, node: t('ask'), interruptId: t('i') }));
    const whole = concatBytes(records);
    // torn: the last record cut short; corrupt: the last payload byte of the last record flipped (BAD_CHECKSUM).
    const chunk = last === 'torn' ? whole.subarray(0, whole.length - 3) : last === 'corrupt' ? whole.map((b, i) => (i === whole.length - 5 ? b ^ 1 : b)) : whole;
    expect(answers(cores.reference, summary, chunk)).toEqual(answers(cores.wasm!, summary, chunk));
    const fed = decodeFed(cores.reference.feedEncoded(summary, chunk));
    if (!fed.ok) throw new Error('a summary a core wrote was refused');
    if (last === 'corrupt') {
      expect(fed.recovery).toMatchObject({ ok: false, offset: Math.min(total + whole.length - records.at(-1)!.length, NONE32) });
    } else if (fed.recovery.ok) {
      // The true end of the durable records, or 0xFFFFFFFF once past it: never a wrapped-around offset.
      const durable = total + whole.length - (last === 'torn' ? records.at(-1)!.length : 0);
      expect(fed.recovery.durableLen).toBe(Math.min(durable, NONE32));
      summary = fed.summary;
      total = durable;
    } else {
      throw new Error(`unexpected recovery error ${fed.recovery.code}`);
    }
  }
}

describe.skipIf(cores.wasm === null)('wasm ≡ reference on a log longer than 4 GiB - 1, fed in pieces', () => {
  it('offsets past 0xFFFFFFFF saturate there in both cores: durable, checkpoint, error and admission offsets alike', () => {
    fc.assert(
      fc.property(
        // Most pieces near the most a record can add, so that most runs cross 4 GiB within 8 pieces.
        fc.array(fc.oneof(fc.integer({ min: 0, max: MAX_EXTRA }), fc.integer({ min: MAX_EXTRA - 4096, max: MAX_EXTRA })), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom<Ending>('good', 'torn', 'corrupt', 'park'),
        feedGrownPieces,
      ),
      { numRuns: 60 },
    );
  });

  it('the counterexample fast-check found first: an interrupt parked past 4 GiB', () => {
    feedGrownPieces([8508, 1073739133, 1073738892, 1073741456, 1073738570], 3, 'park');
  });

  it('the case that showed it: one record past 4 GiB', () => {
    let summary = firstSummary();
    // Four records of 2^30 - 1 bytes end 41 bytes short of 4 GiB; the fifth crosses it (the reference said 38).
    for (let seq = 1; seq <= 5; seq++) {
      summary = grown(summary, MAX_EXTRA);
      const chunk = encodeRecord(step(seq));
      expect(answers(cores.reference, summary, chunk)).toEqual(answers(cores.wasm!, summary, chunk));
      const fed = decodeFed(cores.reference.feedEncoded(summary, chunk));
      if (!fed.ok || !fed.recovery.ok) throw new Error('not recovered');
      expect(fed.recovery.durableLen).toBe(seq < 5 ? new DataView(summary.buffer).getUint32(5, true) + chunk.length : NONE32);
      summary = fed.summary;
    }
  });
});
