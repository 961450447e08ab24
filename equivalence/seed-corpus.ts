/**
 * Writes the hand-made part of the corpus (entries named edge-*): logs at the corners of
 * docs/log-format.md and docs/core-api.md where two careful readings could differ. Run with
 * `npx tsx equivalence/seed-corpus.ts`; found-* entries come from failing properties and the fuzzer.
 */

import { chainOf, concatBytes, encodeLogV2, encodeRecord, encodeRecordV2, frameRecord } from 'remit/core';
import { crc32c } from 'remit/core';
import { RecordKind, type LogRecord } from 'remit/core';
import { writeCorpusEntry } from './corpus.js';

const t = (s: string) => new TextEncoder().encode(s);
const E = new Uint8Array(0);
type Body = LogRecord extends infer R ? (R extends LogRecord ? Omit<R, 'seq'> : never) : never;
const logOf = (...bodies: Body[]) => concatBytes(bodies.map((b, seq) => encodeRecord({ ...b, seq } as LogRecord)));

const start: Body = {
  kind: RecordKind.RUN_STARTED, runId: t('r'), workflow: t('w'), version: t('1'), fingerprint: E, definition: E,
  nodes: [{ name: t('p'), kind: 1 }, { name: t('e'), kind: 2 }, { name: t('i'), kind: 3 }], startNode: t('p'), state: t('{}'),
};
const done = (node: string, next: string, stateForm = 0): Body => ({ kind: RecordKind.NODE_COMPLETED, node: t(node), next: t(next), stateForm, state: E });
const intent = (key = 'k'): Body => ({ kind: RecordKind.EFFECT_INTENT, node: t('e'), key: t(key) });
const effectDone = (key = 'k', node = 'e'): Body => ({ kind: RecordKind.EFFECT_DONE, node: t(node), key: t(key), result: E });
const parked = (id = 'x'): Body => ({ kind: RecordKind.INTERRUPT_PARKED, node: t('i'), interruptId: t(id) });
const claimed = (id = 'x'): Body => ({ kind: RecordKind.RESUME_CLAIMED, interruptId: t(id), value: E });
const forked = (sourceSeq: number): Body => ({ kind: RecordKind.FORKED, sourceRunId: t('r'), sourceSeq, runId: t('r2'), intent: E });
const failed: Body = { kind: RecordKind.RUN_FAILED, node: E, code: E, message: E };
const completed: Body = { kind: RecordKind.RUN_COMPLETED };
const attempt = (a: number, key = 'k'): Body => ({ kind: RecordKind.EFFECT_ATTEMPT, node: t('e'), key: t(key), attempt: a, lease: t('{}') });
const released = (a: number, key = 'k'): Body => ({ kind: RecordKind.EFFECT_RELEASED, node: t('e'), key: t(key), attempt: a, reason: E });
/** A format-2 log: every record chained to the one before. */
const logV2 = (...bodies: Body[]) => encodeLogV2(bodies.map((b, seq) => ({ ...b, seq }) as LogRecord));
/** Format 1 for the first `v1` records, format 2 after (a format-1 run continued in format 2). */
const mixed = (v1: number, ...bodies: Body[]) => {
  const head = logOf(...bodies.slice(0, v1));
  return concatBytes([head, encodeLogV2(bodies.slice(v1).map((b, i) => ({ ...b, seq: v1 + i }) as LogRecord), head.length ? chainOf(head) : 0)]);
};

/** A header with a correct check over whatever fields are given (no payload or CRC after it). */
function header(payloadLen: number, seq: number, version: number, kind: number): Uint8Array {
  const h = new Uint8Array(12);
  new DataView(h.buffer).setUint32(0, payloadLen, true);
  new DataView(h.buffer).setUint32(4, seq, true);
  h[8] = version;
  h[9] = kind;
  const check = crc32c(h, 0, 10) & 0xffff;
  h[10] = check & 0xff;
  h[11] = check >>> 8;
  return h;
}

const entries: Array<[string, string, Uint8Array]> = [
  ['s0-node-completed-unknown-node', 's = 0 is NODE_COMPLETED naming no node: the s = 0 rule (IMPOSSIBLE_ORDER) or the table lookup (UNKNOWN_NODE) first?', logOf(done('zz', ''))],
  ['s0-run-failed', 'RUN_FAILED at s = 0 (phase EMPTY)', logOf(failed)],
  ['s0-forked', 'FORKED at s = 0 (no record at s - 1)', logOf(forked(0))],
  ['s0-completed', 'RUN_COMPLETED at s = 0', logOf(completed)],
  ['node-count-zero', 'RUN_STARTED with an empty node table and start node not in it', logOf({ ...start, nodes: [] } as Body)],
  ['node-kind-zero-and-unknown-start', 'bad node kind and unknown start node together: BAD_NODE_TABLE comes first', logOf({ ...start, nodes: [{ name: t('p'), kind: 0 }], startNode: t('q') } as Body)],
  ['long-next', 'NODE_COMPLETED whose next is 2000 bytes: next is bytes, not name, so UNKNOWN_NODE, not MALFORMED', logOf(start, { ...done('p', ''), next: new Uint8Array(2000).fill(0x61) } as Body)],
  ['unknown-next-wrong-order', 'NODE_COMPLETED of the wrong node routing to an unknown node: UNKNOWN_NODE before IMPOSSIBLE_ORDER', logOf(start, done('e', 'nope'))],
  ['failed-after-ended', 'RUN_FAILED in phase ENDED', logOf(start, done('p', ''), failed)],
  ['fork-after-ended', 'FORKED after a NODE_COMPLETED that ended the workflow, then RUN_COMPLETED', logOf(start, done('p', ''), forked(1), completed)],
  ['fork-then-fork', 'two FORKED in a row (the second does not follow a checkpoint)', logOf(start, forked(0), forked(1))],
  ['effect-done-unknown-node', 'EFFECT_DONE naming an unknown node while in INTENT', logOf(start, done('p', 'e'), intent(), effectDone('k', 'nope'))],
  ['effect-done-other-key', 'EFFECT_DONE with another key', logOf(start, done('p', 'e'), intent('k1'), effectDone('k2'))],
  ['delta-then-snapshot', 'checkpoint and snapshot pointers across delta and snapshot checkpoints', logOf(start, done('p', 'e', 1), intent(), effectDone(), done('e', 'i', 0), parked(), claimed(), done('i', 'p', 1))],
  ['duplicate-interrupt-after-loop', 'the same interrupt id parked again after a loop', logOf(start, done('p', 'i'), parked('x'), claimed('x'), done('i', 'p'), done('p', 'i'), parked('x'))],
  ['torn-only', 'five bytes, no whole header: empty with torn_len 5 (admission: NO_RUN)', Uint8Array.of(1, 2, 3, 4, 5)],
  ['header-claims-beyond-end', 'a good header whose payload runs past the end: torn tail, not corruption', concatBytes([logOf(start), header(100, 1, 1, 2), new Uint8Array(10)])],
  ['record-too-large', 'a good header check with payload_len 0x40000000', concatBytes([logOf(start), header(0x4000_0000, 1, 1, 2)])],
  ['bad-version-3-and-too-large', 'version 3 and payload_len too large: BAD_VERSION is checked first', header(0xffff_ffff, 0, 3, 1)],
  ['bad-version-3-torn', 'version 3 with a payload that is not all there: BAD_VERSION (checked before the torn test)', concatBytes([header(50, 0, 3, 1), new Uint8Array(4)])],
  ['v2-too-large', 'version 2 (valid) and payload_len too large: RECORD_TOO_LARGE', header(0xffff_ffff, 0, 2, 1)],
  ['v2-torn-without-link', 'a format-2 record whose record_crc is there but whose link is cut: torn, not corruption', logV2(start).subarray(0, logV2(start).length - 2)],
  ['v2-attempt-in-format-1', 'EFFECT_ATTEMPT in a format-1 record: BAD_KIND', logOf(start, done('p', 'e'), intent(), attempt(1))],
  ['v2-format-1-after-2', 'a format-1 record after a format-2 one: BAD_VERSION', concatBytes([logV2(start, done('p', 'e')), encodeRecord({ ...intent(), seq: 2 } as LogRecord)])],
  ['v2-link-before-seq', 'a format-2 record with a wrong predecessor and a wrong seq: BAD_LINK is checked first', concatBytes([logV2(start), encodeRecordV2({ ...done('p', 'e'), seq: 9 } as LogRecord, 1234)])],
  ['v2-copied-record', 'record 1 of another run (another run id) at seq 1: BAD_LINK', (() => {
    const mine = logV2(start, done('p', 'e'));
    const other = logV2({ ...start, runId: t('other') } as Body, done('p', 'e'));
    return concatBytes([mine.subarray(0, logV2(start).length), other.subarray(logV2({ ...start, runId: t('other') } as Body).length)]);
  })()],
  ['v2-done-without-attempt', 'a format-2 EFFECT_DONE straight after its intent: IMPOSSIBLE_ORDER (the fence)', logV2(start, done('p', 'e'), intent(), effectDone())],
  ['v2-attempt-after-release-same-number', 'EFFECT_ATTEMPT 1 again after EFFECT_RELEASED 1: IMPOSSIBLE_ORDER (the next is 2)', logV2(start, done('p', 'e'), intent(), attempt(1), released(1), attempt(1))],
  ['v2-attempt-max', 'attempt 0xFFFFFFFF right after the intent: IMPOSSIBLE_ORDER', logV2(start, done('p', 'e'), intent(), attempt(0xffff_ffff))],
  ['v2-failed-while-attempted', 'RUN_FAILED while an attempt is live', logV2(start, done('p', 'e'), intent(), attempt(1), failed)],
  ['v2-takeover-then-done', 'attempt 1, takeover attempt 2, completion: 2 attempts', logV2(start, done('p', 'e'), intent(), attempt(1), attempt(2), effectDone(), done('e', ''), completed)],
  ['v2-release-then-retry', 'attempt 1 released, INVOKE_EFFECT names attempt 2', logV2(start, done('p', 'e'), intent(), attempt(1), released(1))],
  ['mixed-upgrade-at-intent', 'format-1 intent, format-2 attempt and completion (a format-1 run continued)', mixed(3, start, done('p', 'e'), intent(), attempt(1), effectDone(), done('e', ''), completed)],
  ['mixed-format-1-done-after-upgrade', 'format-1 intent, then a format-2 EFFECT_DONE without an attempt: IMPOSSIBLE_ORDER', mixed(3, start, done('p', 'e'), intent(), effectDone())],
  ['bad-kind-zero', 'kind 0 with a good CRC', frameRecord(0, 0, E)],
  ['bad-seq-before-bad-kind', 'stored seq 3 at position 0 and kind 12: BAD_SEQ is checked before BAD_KIND', frameRecord(3, 12, E)],
  ['malformed-before-order', 'RUN_COMPLETED with one payload byte after a terminal record: parsing comes first', concatBytes([logOf(start, failed), frameRecord(2, 8, Uint8Array.of(0))])],
  ['claim-empty-value', 'RESUME_CLAIMED with an empty value', logOf(start, done('p', 'i'), parked('x'), claimed('x'))],
  ['name-1024', 'an interrupt id of exactly 1024 bytes', logOf(start, done('p', 'i'), { kind: RecordKind.INTERRUPT_PARKED, node: t('i'), interruptId: new Uint8Array(1024).fill(0x7a) })],
  ['name-1025', 'an interrupt id of 1025 bytes: MALFORMED_PAYLOAD', logOf(start, done('p', 'i'), { kind: RecordKind.INTERRUPT_PARKED, node: t('i'), interruptId: new Uint8Array(1025).fill(0x7a) })],
  ...reservedIdEntries(),
  ['state-form-2', 'state_form 2: MALFORMED_PAYLOAD', concatBytes([logOf(start), (() => { const r = encodeRecord({ ...done('p', ''), seq: 1 } as LogRecord); r[12 + 5 + 4] = 2; return resealed(r); })()])],
];

/**
 * Reserved interrupt ids (docs/core-api.md, "Transitions"): an id reading `name@seq` (a non-empty
 * name before the last `@`, the seq in decimal without leading zeros, a u32) may be parked only by
 * node `name` at seq `seq`; the shell writes every id so (`node@parkSeq`).
 */
function reservedIdEntries(): Array<[string, string, Uint8Array]> {
  const parkedBy = (node: string, id: string): Body => ({ kind: RecordKind.INTERRUPT_PARKED, node: t(node), interruptId: t(id) });
  const startWith = (nodes: Array<[string, number]>, startNode: string): Body =>
    ({ ...start, nodes: nodes.map(([name, kind]) => ({ name: t(name), kind })), startNode: t(startNode) }) as Body;
  /** An interrupt node `i` that routes to itself `cycles` times: park i@s, claim, complete (3 records a cycle), then the end. */
  const loop = (cycles: number): Body[] => {
    const bodies: Body[] = [startWith([['p', 1], ['i', 3]], 'p'), done('p', 'i')];
    for (let c = 0; c < cycles; c++) {
      const id = `i@${bodies.length}`;
      bodies.push(parkedBy('i', id), claimed(id), done('i', c === cycles - 1 ? '' : 'i'));
    }
    return [...bodies, completed];
  };
  return [
    ['reserved-canonical-loop-30', 'node i parks its canonical id i@<seq> 30 times in a loop, each claimed, then the run ends (format 2): valid; the summary lists no id (30, not more: the corpus is checked at every byte cut, O(length²))', logV2(...loop(30))],
    ['reserved-canonical-parked', 'a canonical id i@2 parked (format 1): AWAIT_RESUME; RESUME(i@2) accepted', logOf(start, done('p', 'i'), parked('i@2'))],
    ['reserved-canonical-claimed-then-fork', 'i@2 parked and claimed, a fork at the checkpoint after it: RESUME(i@2) is ALREADY_CONSUMED at 3 from the log (the summary needs the log)',
      logOf(start, done('p', 'i'), parked('i@2'), claimed('i@2'), done('i', 'p'), forked(4), done('p', 'e'))],
    ['reserved-wrong-seq', 'node i parks i@3 at seq 2: a reserved id at another seq, DUPLICATE_INTERRUPT at 2', logOf(start, done('p', 'i'), parked('i@3'), claimed('i@3'))],
    ['reserved-wrong-seq-earlier', 'i@2 parked and claimed, then parked again at seq 6 (format 2): DUPLICATE_INTERRUPT at 6',
      logV2(start, done('p', 'i'), parked('i@2'), claimed('i@2'), done('i', 'p'), done('p', 'i'), parked('i@2'))],
    ['reserved-wrong-node', 'node i parks p@2 at seq 2 (p is a node of the table): DUPLICATE_INTERRUPT at 2', logOf(start, done('p', 'i'), parked('p@2'))],
    ['reserved-unknown-node', 'node i parks zz@2 at seq 2 (no node zz): DUPLICATE_INTERRUPT at 2', logOf(start, done('p', 'i'), parked('zz@2'))],
    ['reserved-max-seq', 'node i parks i@4294967295 at seq 2 (reserved, the largest seq): DUPLICATE_INTERRUPT at 2', logOf(start, done('p', 'i'), parked('i@4294967295'))],
    ['reserved-over-u32', 'node i parks i@4294967296 (10 digits, over a u32: not reserved), claimed: valid', logOf(start, done('p', 'i'), parked('i@4294967296'), claimed('i@4294967296'))],
    ['reserved-11-digits', 'node i parks i@00000000002 and then i@10000000002 after a loop (not reserved: a leading zero, 11 digits): valid',
      logOf(start, done('p', 'i'), parked('i@00000000002'), claimed('i@00000000002'), done('i', 'i'), parked('i@10000000002'))],
    ['reserved-empty-name', 'node i parks @2 (no name before the @: not reserved), claimed: valid', logOf(start, done('p', 'i'), parked('@2'), claimed('@2'))],
    ['reserved-node-with-at', 'node a@1 parks a@1@1 at seq 1, claimed, routes to itself, parks a@1@4 at 4, claimed, the run completes: valid (the name is before the last @)',
      logOf(startWith([['a@1', 3]], 'a@1'), parkedBy('a@1', 'a@1@1'), claimed('a@1@1'), done('a@1', 'a@1'), parkedBy('a@1', 'a@1@4'), claimed('a@1@4'), done('a@1', ''), completed)],
    ['reserved-node-with-at-own-name', 'node i@1 parks i@1 at seq 1: the id names node i (before its last @), not i@1: DUPLICATE_INTERRUPT at 1',
      logOf(startWith([['i@1', 3], ['i', 3]], 'i@1'), parkedBy('i@1', 'i@1'))],
    ['reserved-leading-zero-twice', 'node n parks n@05 (a leading zero: not reserved) at 2, claimed, loops, parks n@05 again at 5: DUPLICATE_INTERRUPT at 5 as before',
      logOf(startWith([['p', 1], ['n', 3]], 'p'), done('p', 'n'), parkedBy('n', 'n@05'), claimed('n@05'), done('n', 'n'), parkedBy('n', 'n@05'))],
  ];
}

function resealed(r: Uint8Array): Uint8Array {
  const crc = crc32c(r, 0, r.length - 4);
  new DataView(r.buffer, r.byteOffset).setUint32(r.length - 4, crc, true);
  return r;
}

for (const [name, note, log] of entries) {
  writeCorpusEntry(log, { note, source: 'hand-made (equivalence/seed-corpus.ts)' }, { prefix: `edge-${name}` });
}
console.log(`wrote ${entries.length} edge entries`);
