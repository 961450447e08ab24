/**
 * The summary decoding rules of docs/core-api.md ("Summary encoding": "Decoding rules ... refuse
 * exactly these"), one directed case per rule: a summary built from the documented layout (not
 * taken from a core), accepted by both cores, then changed so that it breaks that rule and no
 * other. Both cores must refuse it: `feed` answers `ok = 0`, `admitFrom` answers `BAD_SUMMARY`
 * (reason 11), byte for byte alike. Reserved interrupt ids (`name@seq`, docs/core-api.md
 * "Transitions"): never listed, and a PARKED or CLAIMED phase holding one must name its node and
 * park seq; RESUME of one is answered from the summary as the document says (NEEDS_LOG at seq + 1
 * below the head unless it is the phase's or the last claim's). And summaries whose u32 fields sit at 0xFFFF_FFFF (a RELEASED
 * phase at attempt 0xFFFF_FFFF, whose next attempt saturates) are fed and admitted from by both
 * cores with byte-identical answers.
 *
 * The reference core's assertions run without the Wasm core too; the byte comparisons need it.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeAdmission, decodeFed, encodeAdmissionRequest, RecordKind, RefusalReason, reference, type RecoveryCore,
} from 'remit/core';
import { hex } from './compare.js';
import { loadCoresUnderTest } from './cores.js';

const cores = await loadCoresUnderTest();
const te = new TextEncoder();
const MAX = 0xffff_ffff;

// ---------------------------------------------------------------- the documented layout, written out

type Field = number | Uint8Array;

interface SummaryFields {
  version: number;
  recordCount: number;
  durableLen: number;
  chainPrev: number;
  v2Seen: number;
  prevKind: number;
  /** The phase tag, then its fields in order (u32 or bytes), node first. */
  phase: [number, ...Field[]];
  runId: Uint8Array; workflow: Uint8Array; version_: Uint8Array; fingerprint: Uint8Array;
  checkpointSeq: number; checkpointOffset: number; snapshotSeq: number; snapshotOffset: number;
  nodes: Array<{ name: Uint8Array; kind: number; status: number; doneCount: number; attempts: number }>;
  parked: number; claimed: number;
  /** Each id with its claimed byte (`flag`, default 0/1 from `claim`) and claim position. */
  interrupts: Array<{ id: Uint8Array; claim?: [number, number]; flag?: number }>;
  /** The log's latest RESUME_CLAIMED (id, claim seq, claim offset), or null; `flag` overrides the byte written (default 0/1). */
  lastClaim: { id: Uint8Array; seq: number; offset: number; flag?: number } | null;
  lineage: Array<{ sourceRunId: Uint8Array; sourceSeq: number; runId: Uint8Array; forkSeq: number; intent: Uint8Array }>;
  /** Only written when the phase is FAILED (10). */
  failure: [Uint8Array, Uint8Array, Uint8Array];
}

class Writer {
  private readonly parts: number[] = [];
  u8(n: number): this { this.parts.push(n & 255); return this; }
  u32(n: number): this { for (let i = 0; i < 4; i++) this.parts.push((n >>> (8 * i)) & 255); return this; }
  bytes(b: Uint8Array): this { this.u32(b.length); this.parts.push(...b); return this; }
  field(f: Field): this { return typeof f === 'number' ? this.u32(f) : this.bytes(f); }
  finish(): Uint8Array { return Uint8Array.from(this.parts); }
}

function encodeSummary(s: SummaryFields): Uint8Array {
  const w = new Writer();
  w.u8(s.version).u32(s.recordCount).u32(s.durableLen).u32(s.chainPrev).u8(s.v2Seen).u8(s.prevKind);
  const [tag, ...fields] = s.phase;
  w.u8(tag);
  for (const f of fields) w.field(f);
  w.bytes(s.runId).bytes(s.workflow).bytes(s.version_).bytes(s.fingerprint);
  w.u32(s.checkpointSeq).u32(s.checkpointOffset).u32(s.snapshotSeq).u32(s.snapshotOffset);
  w.u32(s.nodes.length);
  for (const n of s.nodes) w.bytes(n.name).u8(n.kind).u8(n.status).u32(n.doneCount).u32(n.attempts);
  w.u32(s.parked).u32(s.claimed);
  w.u32(s.interrupts.length);
  for (const e of s.interrupts) {
    w.bytes(e.id).u8(e.flag ?? (e.claim ? 1 : 0));
    if (e.claim) w.u32(e.claim[0]).u32(e.claim[1]);
  }
  // Version 1 (before reserved interrupt ids) has no last-claim field.
  if (s.version === 1) { /* none */ } else if (s.lastClaim === null) w.u8(0);
  else w.u8(s.lastClaim.flag ?? 1).bytes(s.lastClaim.id).u32(s.lastClaim.seq).u32(s.lastClaim.offset);
  w.u32(s.lineage.length);
  for (const l of s.lineage) w.bytes(l.sourceRunId).u32(l.sourceSeq).bytes(l.runId).u32(l.forkSeq).bytes(l.intent);
  if (tag === 10) for (const b of s.failure) w.bytes(b);
  return w.finish();
}

const b = (s: string) => te.encode(s);
const NODES = [
  { name: b('a'), kind: 1, status: 0, doneCount: 0, attempts: 0 },
  { name: b('b'), kind: 2, status: 2, doneCount: 1, attempts: 1 },
  { name: b('i'), kind: 3, status: 0, doneCount: 0, attempts: 0 },
];

/** At the pure node `a` after a claimed interrupt `i1`, an effect done, a fork: every section has content. */
const BASE: SummaryFields = {
  version: 2, recordCount: 9, durableLen: 400, chainPrev: 0x1234_5678, v2Seen: 1, prevKind: RecordKind.NODE_COMPLETED,
  phase: [1, 0],
  runId: b('r~1'), workflow: b('w'), version_: b('1'), fingerprint: b('fp'),
  checkpointSeq: 8, checkpointOffset: 350, snapshotSeq: 8, snapshotOffset: 350,
  nodes: NODES,
  parked: 1, claimed: 1,
  interrupts: [{ id: b('i1'), claim: [6, 280] }],
  lastClaim: { id: b('i1'), seq: 6, offset: 280 },
  lineage: [{ sourceRunId: b('r'), sourceSeq: 1, runId: b('r~1'), forkSeq: 2, intent: b('{}') }],
  failure: [b('a'), b('E'), b('m')],
};
const with_ = (over: Partial<SummaryFields>): SummaryFields => ({ ...BASE, ...over });

/** A summary of each phase (and of an interrupt list in ascending order, a shorter prefix first). */
const BASES: Record<string, SummaryFields> = {
  'AT, ids i < i1 < i2': with_({
    interrupts: [{ id: b('i'), claim: [3, 100] }, { id: b('i1'), claim: [6, 280] }, { id: b('i2'), claim: [7, 320] }],
    lastClaim: { id: b('i2'), seq: 7, offset: 320 }, parked: 3, claimed: 3,
  }),
  'PARKED on i2': with_({
    phase: [6, 2, b('i2'), 8], prevKind: RecordKind.INTERRUPT_PARKED, parked: 2, claimed: 1,
    interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i2') }],
  }),
  'CLAIMED i2': with_({
    phase: [7, 2, b('i2'), 9, 380], prevKind: RecordKind.RESUME_CLAIMED, recordCount: 10, parked: 2, claimed: 2,
    interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i2'), claim: [9, 380] }], lastClaim: { id: b('i2'), seq: 9, offset: 380 },
  }),
  // A reserved id (`node@parkSeq`, docs/core-api.md "Transitions", what the shell writes) names
  // the phase's node and park seq and is not listed.
  'PARKED on i@8': with_({ phase: [6, 2, b('i@8'), 8], prevKind: RecordKind.INTERRUPT_PARKED, parked: 2, claimed: 1 }),
  'CLAIMED i@8': with_({
    phase: [7, 2, b('i@8'), 9, 380], prevKind: RecordKind.RESUME_CLAIMED, recordCount: 10, parked: 2, claimed: 2,
    lastClaim: { id: b('i@8'), seq: 9, offset: 380 },
  }),
  // Claimed last, then completed (AT): the summary keeps the last claim, reserved or not.
  'AT after claiming i@8': with_({ recordCount: 11, lastClaim: { id: b('i@8'), seq: 9, offset: 380 }, parked: 2, claimed: 2 }),
  'no claim': with_({ interrupts: [], lastClaim: null, parked: 0, claimed: 0 }),
  // Not reserved (a leading zero): listed as any other id.
  'PARKED on i@08': with_({
    phase: [6, 2, b('i@08'), 8], prevKind: RecordKind.INTERRUPT_PARKED, parked: 2, claimed: 1,
    interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i@08') }],
  }),
  ENDED: with_({ phase: [8] }),
  COMPLETED: with_({ phase: [9], prevKind: RecordKind.RUN_COMPLETED }),
  FAILED: with_({ phase: [10], prevKind: RecordKind.RUN_FAILED }),
};

/** A summary with its bytes changed after encoding. */
const patched = (s: SummaryFields, f: (bytes: Uint8Array) => Uint8Array): Uint8Array => f(encodeSummary(s));
const at = (bytes: Uint8Array, offset: number, value: number) => { const out = bytes.slice(); out[offset] = value; return out; };
/** Offsets of the fixed header (docs/core-api.md): version 0, record_count 1, v2_seen 13, prev_kind 14, phase 15. */
const V2_SEEN = 13, PHASE = 15;

/** 65535 or 65536 nodes with distinct two-byte names (the node count bounds). */
const manyNodes = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ name: Uint8Array.of(i & 255, i >>> 8), kind: 1, status: 0, doneCount: 0, attempts: 0 }));

/** Each decoding rule, as the document words it, with summaries that break that rule alone. */
const RULES: Array<{ rule: string; cases: Array<[string, Uint8Array]> }> = [
  { rule: 'a version byte other than 1 and 2', cases: [
    ['version 0', encodeSummary(with_({ version: 0 }))],
    ['version 3', encodeSummary(with_({ version: 3 }))],
    // Version 1's layout has no last-claim byte: this layout under version 1 does not decode.
    ['version 1 over version 2\'s layout', patched(BASE, (s) => at(s, 0, 1))],
  ] },
  { rule: 'record_count 0 in a non-empty summary', cases: [['record_count 0', encodeSummary(with_({ recordCount: 0 }))]] },
  { rule: 'v2_seen not 0 or 1', cases: [
    ['v2_seen 2', encodeSummary(with_({ v2Seen: 2 }))],
    ['v2_seen 255', patched(BASE, (s) => at(s, V2_SEEN, 255))],
  ] },
  { rule: 'claimed not 0 or 1', cases: [
    // Followed by a claim position, so a decoder reading any non-zero byte as "claimed" would parse on.
    ['claimed 2', encodeSummary(with_({ interrupts: [{ id: b('i1'), claim: [6, 280], flag: 2 }] }))],
  ] },
  { rule: 'an unknown phase tag', cases: [
    // ENDED has no phase fields, so only the tag changes.
    ['phase 0', patched(BASES['ENDED']!, (s) => at(s, PHASE, 0))],
    ['phase 11', patched(BASES['ENDED']!, (s) => at(s, PHASE, 11))],
    ['phase 255', patched(BASES['ENDED']!, (s) => at(s, PHASE, 255))],
  ] },
  { rule: 'a node table with 0 entries', cases: [
    // COMPLETED names no node, so no phase node is out of the (empty) table.
    ['no node', encodeSummary(with_({ phase: [9], prevKind: RecordKind.RUN_COMPLETED, nodes: [] }))],
  ] },
  { rule: 'a node table with more than 65535 entries', cases: [
    ['65536 nodes', encodeSummary(with_({ phase: [9], prevKind: RecordKind.RUN_COMPLETED, nodes: manyNodes(65536) }))],
  ] },
  { rule: 'a node kind outside 1..3', cases: [
    ['kind 0', encodeSummary(with_({ nodes: [NODES[0]!, { ...NODES[1]!, kind: 0, status: 0, doneCount: 0, attempts: 0 }, NODES[2]!] }))],
    ['kind 4', encodeSummary(with_({ nodes: [NODES[0]!, NODES[1]!, { ...NODES[2]!, kind: 4 }] }))],
  ] },
  { rule: 'duplicate names', cases: [
    ['a, b, i, a', encodeSummary(with_({ nodes: [...NODES, { ...NODES[0]! }] }))],
  ] },
  { rule: 'an effect status over 2', cases: [
    ['status 3', encodeSummary(with_({ nodes: [NODES[0]!, { ...NODES[1]!, status: 3 }, NODES[2]!] }))],
    ['status 255', encodeSummary(with_({ nodes: [NODES[0]!, { ...NODES[1]!, status: 255 }, NODES[2]!] }))],
  ] },
  { rule: 'a phase node not below node_count', cases: [
    ['AT node 3 of 3', encodeSummary(with_({ phase: [1, 3] }))],
    ['AT node 0xFFFF_FFFF', encodeSummary(with_({ phase: [1, MAX] }))],
    ['DONE node 3 of 3', encodeSummary(with_({ phase: [5, 3, b('k'), 8, 350], prevKind: RecordKind.EFFECT_DONE }))],
  ] },
  { rule: 'interrupt ids not in strictly ascending order', cases: [
    ['an id listed twice', encodeSummary(with_({
      interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i1'), claim: [6, 280] }], parked: 2, claimed: 2,
    }))],
    ['an id listed twice, unclaimed then claimed', encodeSummary(with_({
      interrupts: [{ id: b('i1') }, { id: b('i1'), claim: [6, 280] }], parked: 2, claimed: 1,
    }))],
    ['descending', encodeSummary(with_({
      interrupts: [{ id: b('i2'), claim: [7, 320] }, { id: b('i1'), claim: [6, 280] }], parked: 2, claimed: 2,
    }))],
    ['a longer id before its prefix', encodeSummary(with_({
      interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i'), claim: [3, 100] }], parked: 2, claimed: 2,
    }))],
  ] },
  { rule: 'a PARKED phase whose interrupt id is not listed unclaimed', cases: [
    ['PARKED id not listed', encodeSummary(with_({ ...BASES['PARKED on i2']!, interrupts: [{ id: b('i1'), claim: [6, 280] }] }))],
    ['PARKED id i@08 (not reserved: a leading zero) not listed', encodeSummary(with_({
      ...BASES['PARKED on i@08']!, interrupts: [{ id: b('i1'), claim: [6, 280] }],
    }))],
    ['PARKED id listed claimed', encodeSummary(with_({
      ...BASES['PARKED on i2']!, interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i2'), claim: [8, 360] }],
    }))],
  ] },
  { rule: 'a CLAIMED phase whose id is not listed claimed at the phase\'s claim_seq and claim_offset', cases: [
    ['CLAIMED id not listed', encodeSummary(with_({ ...BASES['CLAIMED i2']!, interrupts: [{ id: b('i1'), claim: [6, 280] }] }))],
    ['CLAIMED id listed unclaimed', encodeSummary(with_({
      ...BASES['CLAIMED i2']!, interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i2') }],
    }))],
    ['CLAIMED id listed at another claim_seq', encodeSummary(with_({
      ...BASES['CLAIMED i2']!, interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i2'), claim: [8, 380] }],
    }))],
    ['CLAIMED id listed at another claim_offset', encodeSummary(with_({
      ...BASES['CLAIMED i2']!, interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i2'), claim: [9, 381] }],
    }))],
  ] },
  { rule: 'a reserved interrupt id (name@seq) listed', cases: [
    ['i@6 listed, claimed', encodeSummary(with_({
      interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i@6'), claim: [7, 320] }], parked: 2, claimed: 2,
    }))],
    ['the PARKED phase id i@8 listed unclaimed', encodeSummary(with_({
      ...BASES['PARKED on i@8']!, interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i@8') }],
    }))],
    ['the CLAIMED phase id i@8 listed at its claim', encodeSummary(with_({
      ...BASES['CLAIMED i@8']!, interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i@8'), claim: [9, 380] }],
    }))],
    ['another node\'s a@1 and the largest seq x@4294967295 listed', encodeSummary(with_({
      interrupts: [{ id: b('a@1') }, { id: b('i1'), claim: [6, 280] }, { id: b('x@4294967295') }], parked: 3, claimed: 1,
    }))],
  ] },
  { rule: 'a PARKED or CLAIMED phase whose reserved id names another node or seq', cases: [
    ['PARKED on i@7 at seq 8', encodeSummary(with_({ ...BASES['PARKED on i@8']!, phase: [6, 2, b('i@7'), 8] }))],
    ['PARKED on a@8 at node i', encodeSummary(with_({ ...BASES['PARKED on i@8']!, phase: [6, 2, b('a@8'), 8] }))],
    ['PARKED on i@8 at node a', encodeSummary(with_({ ...BASES['PARKED on i@8']!, phase: [6, 0, b('i@8'), 8] }))],
    // The last claim is the phase's claim (another rule), so it changes with it.
    ['CLAIMED i@9 at claim seq 9 (parked at 8)', encodeSummary(with_({
      ...BASES['CLAIMED i@8']!, phase: [7, 2, b('i@9'), 9, 380], lastClaim: { id: b('i@9'), seq: 9, offset: 380 },
    }))],
    ['CLAIMED a@8 at node i', encodeSummary(with_({
      ...BASES['CLAIMED i@8']!, phase: [7, 2, b('a@8'), 9, 380], lastClaim: { id: b('a@8'), seq: 9, offset: 380 },
    }))],
    ['CLAIMED i@0 at claim seq 0', encodeSummary(with_({
      ...BASES['CLAIMED i@8']!, phase: [7, 2, b('i@0'), 0, 380], lastClaim: { id: b('i@0'), seq: 0, offset: 380 },
    }))],
  ] },
  { rule: 'last_claim not 0 or 1', cases: [
    ['last_claim 2', encodeSummary(with_({ lastClaim: { id: b('i1'), seq: 6, offset: 280, flag: 2 } }))],
    ['last_claim 255', encodeSummary(with_({ lastClaim: { id: b('i1'), seq: 6, offset: 280, flag: 255 } }))],
  ] },
  { rule: 'a CLAIMED phase whose id, claim_seq and claim_offset are not the last claim\'s', cases: [
    ['CLAIMED i@8, no last claim', encodeSummary(with_({ ...BASES['CLAIMED i@8']!, lastClaim: null }))],
    ['CLAIMED i@8, last claim i1', encodeSummary(with_({ ...BASES['CLAIMED i@8']!, lastClaim: { id: b('i1'), seq: 6, offset: 280 } }))],
    ['CLAIMED i@8, last claim i@8 at another offset', encodeSummary(with_({ ...BASES['CLAIMED i@8']!, lastClaim: { id: b('i@8'), seq: 9, offset: 381 } }))],
    ['CLAIMED i@8, last claim i@8 at another seq', encodeSummary(with_({ ...BASES['CLAIMED i@8']!, lastClaim: { id: b('i@8'), seq: 8, offset: 380 } }))],
    ['CLAIMED i2, last claim i1', encodeSummary(with_({ ...BASES['CLAIMED i2']!, lastClaim: { id: b('i1'), seq: 6, offset: 280 } }))],
  ] },
  { rule: 'a last claim of an id that is not reserved and not listed claimed at the same position', cases: [
    ['last claim i1 at another offset', encodeSummary(with_({ lastClaim: { id: b('i1'), seq: 6, offset: 281 } }))],
    ['last claim i1 at another seq', encodeSummary(with_({ lastClaim: { id: b('i1'), seq: 7, offset: 280 } }))],
    ['last claim of an id not listed', encodeSummary(with_({ lastClaim: { id: b('zz'), seq: 6, offset: 280 } }))],
    ['last claim of i@08 (not reserved), not listed', encodeSummary(with_({ lastClaim: { id: b('i@08'), seq: 6, offset: 280 } }))],
    ['last claim of i2, listed unclaimed (PARKED on i2)', encodeSummary(with_({ ...BASES['PARKED on i2']!, lastClaim: { id: b('i2'), seq: 6, offset: 280 } }))],
  ] },
  { rule: 'a field that runs past the end', cases: [
    ...Object.entries(BASES).flatMap(([name, s]): Array<[string, Uint8Array]> => {
      const bytes = encodeSummary(s);
      return Array.from({ length: bytes.length - 1 }, (_, n) => [`${name} cut to ${n + 1} of ${bytes.length} bytes`, bytes.subarray(0, n + 1)]);
    }),
    ['run_id length 0xFFFF_FFFF', patched(BASE, (s) => { const out = s.slice(); out.set([255, 255, 255, 255], 16 + 4); return out; })],
  ] },
  // Version 1 (docs/core-api.md, "Version 1"): its own rules, and what version 2 requires of the
  // last claim it gives.
  { rule: 'version 1: two claims at one seq (which is the last would be the cores\' choice)', cases: [
    ['two ids claimed at seq 7', encodeSummary(with_({
      version: 1, parked: 2, claimed: 2, interrupts: [{ id: b('i1'), claim: [7, 280] }, { id: b('i2'), claim: [7, 320] }],
    }))],
  ] },
  { rule: 'version 1: a CLAIMED phase whose claim is not the greatest listed', cases: [
    ['CLAIMED i1 at 9, i2 claimed at 12', encodeSummary(with_({
      version: 1, phase: [7, 2, b('i1'), 9, 380], prevKind: RecordKind.RESUME_CLAIMED, recordCount: 10, parked: 2, claimed: 2,
      interrupts: [{ id: b('i1'), claim: [9, 380] }, { id: b('i2'), claim: [12, 420] }],
    }))],
    ['CLAIMED i@8 not listed (version 1 lists every id)', encodeSummary(with_({
      version: 1, phase: [7, 2, b('i@8'), 9, 380], prevKind: RecordKind.RESUME_CLAIMED, recordCount: 10, parked: 2, claimed: 2,
    }))],
  ] },
  { rule: 'any byte after the last field', cases: Object.entries(BASES).flatMap(([name, s]): Array<[string, Uint8Array]> => [
    [`${name} + 0x00`, concat(encodeSummary(s), Uint8Array.of(0))],
    [`${name} + 5 bytes`, concat(encodeSummary(s), Uint8Array.of(1, 2, 3, 4, 5))],
  ]) },
];

function concat(x: Uint8Array, y: Uint8Array): Uint8Array {
  const out = new Uint8Array(x.length + y.length);
  out.set(x);
  out.set(y, x.length);
  return out;
}

/** What each case is fed with and admitted for: no chunk, one junk byte; RESUME of a listed id and of another, CONTINUE_FROM, FORK_AT past the head. */
const CHUNKS = [new Uint8Array(0), Uint8Array.of(0)];
const REQUESTS = [
  encodeAdmissionRequest({ tag: 'RESUME', interruptId: b('i2') }),
  encodeAdmissionRequest({ tag: 'RESUME', interruptId: b('x') }),
  encodeAdmissionRequest({ tag: 'RESUME', interruptId: b('i@8') }),
  encodeAdmissionRequest({ tag: 'RESUME', interruptId: b('i@3') }),
  encodeAdmissionRequest({ tag: 'CONTINUE_FROM', seq: 0 }),
  encodeAdmissionRequest({ tag: 'CONTINUE_FROM', seq: MAX }),
  encodeAdmissionRequest({ tag: 'FORK_AT', seq: MAX }),
];

const coresToCheck = (): RecoveryCore[] => (cores.wasm === null ? [reference] : [reference, cores.wasm]);

/** Both cores answer alike (when the Wasm core is there); the reference's answers, for assertions. */
function answers(summary: Uint8Array, chunks: Uint8Array[], requests: Uint8Array[]): { fed: Uint8Array[]; admitted: Uint8Array[] } {
  const fed = chunks.map((c) => reference.feedEncoded(summary, c));
  const admitted = requests.map((q) => reference.admitFromEncoded(summary, q));
  if (cores.wasm !== null) {
    chunks.forEach((c, i) => expect(hex(cores.wasm!.feedEncoded(summary, c)), `wasm feed, chunk ${hex(c)}`).toBe(hex(fed[i]!)));
    requests.forEach((q, i) => expect(hex(cores.wasm!.admitFromEncoded(summary, q)), `wasm admitFrom ${hex(q)}`).toBe(hex(admitted[i]!)));
  }
  return { fed, admitted };
}

describe('summary decoding rules: each broken alone, refused by both cores', () => {
  it('the summaries they are built from are accepted', () => {
    const controls: Array<[string, Uint8Array]> = [
      ...Object.entries(BASES).map(([name, s]): [string, Uint8Array] => [name, encodeSummary(s)]),
      ['65535 nodes', encodeSummary(with_({ phase: [9], prevKind: RecordKind.RUN_COMPLETED, nodes: manyNodes(65535) }))],
      ['v2_seen 0', encodeSummary(with_({ v2Seen: 0 }))],
      ['effect status 1', encodeSummary(with_({ nodes: [NODES[0]!, { ...NODES[1]!, status: 1 }, NODES[2]!] }))],
      // Version 1, as an earlier release wrote it: every id listed, reserved ones too.
      ['version 1', encodeSummary(with_({ version: 1 }))],
      ['version 1, CLAIMED i@8 listed', encodeSummary(with_({
        version: 1, phase: [7, 2, b('i@8'), 9, 380], prevKind: RecordKind.RESUME_CLAIMED, recordCount: 10, parked: 2, claimed: 2,
        interrupts: [{ id: b('i1'), claim: [6, 280] }, { id: b('i@8'), claim: [9, 380] }],
      }))],
    ];
    for (const [name, summary] of controls) {
      const { fed, admitted } = answers(summary, CHUNKS.slice(0, 1), REQUESTS);
      for (const core of coresToCheck()) {
        expect(core.feedEncoded(summary, CHUNKS[0]!)[0], `${core.name}: ${name} is a summary`).toBe(1);
      }
      expect(decodeFed(fed[0]!).ok, name).toBe(true);
      for (const a of admitted) expect(decodeAdmission(a).reason, name).not.toBe(RefusalReason.BAD_SUMMARY);
    }
  });

  it.each(RULES)('$rule', ({ cases }) => {
    expect(cases.length).toBeGreaterThan(0);
    for (const [name, summary] of cases) {
      const { fed, admitted } = answers(summary, CHUNKS, REQUESTS);
      for (const core of coresToCheck()) {
        for (const chunk of CHUNKS) expect(core.feedEncoded(summary, chunk)[0], `${core.name} feed of "${name}"`).toBe(0);
      }
      for (const f of fed) expect(decodeFed(f).ok, name).toBe(false);
      for (const a of admitted) {
        const d = decodeAdmission(a);
        expect([d.accepted, d.reason, d.seq, d.offset], `admitFrom "${name}"`).toEqual([false, RefusalReason.BAD_SUMMARY, 0, 0]);
      }
    }
  });
});

describe('admission of reserved ids from a summary (docs/core-api.md, "Admission from a summary")', () => {
  const resume = (id: string) => encodeAdmissionRequest({ tag: 'RESUME', interruptId: b(id) });
  /** [base, id, [accepted, reason, seq, offset]]: the summary lists no reserved id, so one parked before the head needs the log. */
  const CASES: Array<[string, string, [boolean, number, number, number]]> = [
    ['PARKED on i@8', 'i@8', [true, 0, 9, 400]],
    ['PARKED on i@8', 'i@3', [false, RefusalReason.NEEDS_LOG, 4, 0]],
    ['PARKED on i@8', 'i@7', [false, RefusalReason.NEEDS_LOG, 8, 0]],
    ['PARKED on i@8', 'a@8', [false, RefusalReason.UNKNOWN_INTERRUPT, 8, 400]],
    ['PARKED on i@8', 'i@9', [false, RefusalReason.UNKNOWN_INTERRUPT, 8, 400]],
    ['PARKED on i@8', 'i@03', [false, RefusalReason.UNKNOWN_INTERRUPT, 8, 400]],
    ['CLAIMED i@8', 'i@8', [false, RefusalReason.ALREADY_CONSUMED, 9, 380]],
    ['CLAIMED i@8', 'i@3', [false, RefusalReason.NEEDS_LOG, 4, 0]],
    ['CLAIMED i@8', 'i@9', [false, RefusalReason.NOT_PARKED, 9, 400]],
    ['CLAIMED i@8', 'i@4294967295', [false, RefusalReason.NOT_PARKED, 9, 400]],
    ['AT after claiming i@8', 'i@8', [false, RefusalReason.ALREADY_CONSUMED, 9, 380]],
    ['AT after claiming i@8', 'i@7', [false, RefusalReason.NEEDS_LOG, 8, 0]],
    ['AT after claiming i@8', 'i@10', [false, RefusalReason.NOT_PARKED, 10, 400]],
    ['AT, ids i < i1 < i2', 'i1', [false, RefusalReason.ALREADY_CONSUMED, 6, 280]],
    ['AT, ids i < i1 < i2', 'a@0', [false, RefusalReason.NEEDS_LOG, 1, 0]],
  ];
  it.each(CASES)('%s: RESUME(%s)', (base, id, expected) => {
    const { admitted } = answers(encodeSummary(BASES[base]!), [], [resume(id)]);
    const d = decodeAdmission(admitted[0]!);
    expect([d.accepted, d.reason, d.seq, d.offset]).toEqual(expected);
  });
});

describe('summary fields at their u32 limits: both cores alike', () => {
  const limits = (phase: [number, ...Field[]], prevKind: number): SummaryFields => with_({
    phase, prevKind, recordCount: MAX, durableLen: MAX, chainPrev: MAX,
    checkpointSeq: MAX, checkpointOffset: MAX, snapshotSeq: MAX, snapshotOffset: MAX,
    nodes: [NODES[0]!, { ...NODES[1]!, status: 1, doneCount: MAX, attempts: MAX }, NODES[2]!],
    parked: MAX, claimed: MAX,
    interrupts: [{ id: b('i1'), claim: [MAX, MAX] }], lastClaim: { id: b('i1'), seq: MAX, offset: MAX },
    lineage: [{ sourceRunId: b('r'), sourceSeq: MAX, runId: b('r~1'), forkSeq: MAX, intent: b('{}') }],
  });
  const LIMITS: Array<[string, SummaryFields]> = [
    ['RELEASED at attempt 0xFFFF_FFFF', limits([4, 1, b('k'), MAX - 1, MAX], RecordKind.EFFECT_RELEASED)],
    ['RELEASED at attempt 0xFFFF_FFFE', limits([4, 1, b('k'), MAX - 1, MAX - 1], RecordKind.EFFECT_RELEASED)],
    ['ATTEMPTED at attempt 0xFFFF_FFFF', limits([3, 1, b('k'), MAX - 2, MAX, MAX - 1, MAX], RecordKind.EFFECT_ATTEMPT)],
    ['INTENT', limits([2, 1, b('k'), MAX], RecordKind.EFFECT_INTENT)],
    ['DONE', limits([5, 1, b('k'), MAX, MAX], RecordKind.EFFECT_DONE)],
    ['PARKED', limits([6, 2, b('i2'), MAX], RecordKind.INTERRUPT_PARKED)],
    ['AT', limits([1, 0], RecordKind.NODE_COMPLETED)],
  ];
  // PARKED lists its id unclaimed (decoding rule), after i1.
  LIMITS[5]![1].interrupts = [{ id: b('i1'), claim: [MAX, MAX] }, { id: b('i2') }];
  LIMITS.push(['CLAIMED', {
    ...limits([7, 2, b('i2'), MAX, MAX], RecordKind.RESUME_CLAIMED),
    interrupts: [{ id: b('i1'), claim: [MAX - 1, MAX - 1] }, { id: b('i2'), claim: [MAX, MAX] }], lastClaim: { id: b('i2'), seq: MAX, offset: MAX },
  }]);
  LIMITS.push(['CLAIMED a reserved id', {
    ...limits([7, 2, b('i@4294967294'), MAX, MAX], RecordKind.RESUME_CLAIMED), lastClaim: { id: b('i@4294967294'), seq: MAX, offset: MAX },
  }]);

  const requests = [
    ...['i1', 'i2', 'x'].map((id) => encodeAdmissionRequest({ tag: 'RESUME', interruptId: b(id) })),
    ...[0, MAX - 1, MAX].flatMap((seq) => [
      encodeAdmissionRequest({ tag: 'CONTINUE_FROM', seq }), encodeAdmissionRequest({ tag: 'FORK_AT', seq }),
    ]),
  ];

  it.each(LIMITS)('%s', (name, fields) => {
    const summary = encodeSummary(fields);
    const { fed } = answers(summary, CHUNKS, requests);
    const result = decodeFed(fed[0]!);
    if (!result.ok) throw new Error(`${name}: the summary was refused`);
    const r = result.recovery;
    if (!r.ok) throw new Error(`${name}: the recovery is an error`);
    expect([r.recordCount, r.durableLen]).toEqual([MAX, MAX]);
    if (name.startsWith('RELEASED')) {
      // attempt + 1, saturated at the largest u32 (next_attempt is a u32): 0xFFFF_FFFF for both.
      expect(r.action).toMatchObject({ tag: 'INVOKE_EFFECT', nextAttempt: MAX });
      expect(r.action.tag === 'INVOKE_EFFECT' && r.action.intentSeq).toBe(MAX - 1);
    }
    if (name.startsWith('ATTEMPTED')) expect(r.action).toMatchObject({ tag: 'AWAIT_ATTEMPT', attempt: MAX, attemptSeq: MAX - 1, attemptOffset: MAX });
  });
});
