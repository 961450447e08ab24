/**
 * The admission requests asked at every prefix of a log: resumes of every interrupt id the log
 * mentions (parked, claimed, or only parked later: an unknown id at earlier prefixes), of reserved
 * ids (`name@seq`) it never parks, an id it never mentions, ids at and past the length limit; FORK_AT and CONTINUE_FROM at every seq up to
 * one past the head and at the largest u32; and malformed request bytes.
 */

import { decodeRecordAt } from 'remit/core';
import { encodeAdmissionRequest } from 'remit/core';
import { RecordKind } from 'remit/core';
import { splitRecords } from './mutations.js';

const te = new TextEncoder();

export const MALFORMED_REQUESTS: readonly Uint8Array[] = [
  [], [0], [4], [255], [1], [1, 0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 0x61, 0x62],
  [1, 0xff, 0xff, 0xff, 0xff, 0x61], [2], [2, 0, 0, 0], [2, 0, 0, 0, 0, 0], [3, 1, 0, 0], [3, 1, 0, 0, 0, 9],
].map((b) => Uint8Array.from(b));

const resume = (id: Uint8Array) => encodeAdmissionRequest({ tag: 'RESUME', interruptId: id });

/** FORK_AT / CONTINUE_FROM request bytes by seq, built once (the cores never write to a request). */
const forkAtBySeq: Uint8Array[] = [];
const continueFromBySeq: Uint8Array[] = [];
const MAX_SEQ = 0xffff_ffff;
const FORK_AT_MAX = encodeAdmissionRequest({ tag: 'FORK_AT', seq: MAX_SEQ });
const CONTINUE_FROM_MAX = encodeAdmissionRequest({ tag: 'CONTINUE_FROM', seq: MAX_SEQ });

export function forkAt(seq: number): Uint8Array {
  if (seq === MAX_SEQ) return FORK_AT_MAX;
  return (forkAtBySeq[seq] ??= encodeAdmissionRequest({ tag: 'FORK_AT', seq }));
}

export function continueFrom(seq: number): Uint8Array {
  if (seq === MAX_SEQ) return CONTINUE_FROM_MAX;
  return (continueFromBySeq[seq] ??= encodeAdmissionRequest({ tag: 'CONTINUE_FROM', seq }));
}

/** Resumes of ids that no log names, at and past the length limits (docs/core-api.md). */
export const SPECIAL_RESUMES: ReadonlyArray<{ name: string; request: Uint8Array }> = [
  { name: 'an id never parked', request: resume(te.encode('never-parked')) },
  { name: 'a 1024-byte id', request: resume(new Uint8Array(1024).fill(0x69)) },
  { name: 'an empty id', request: resume(new Uint8Array(0)) }, // refused BAD_REQUEST (empty id), after the log checks
  { name: 'a 1025-byte id', request: resume(new Uint8Array(1025).fill(0x69)) }, // over-long id
];

/** Interrupt ids named by any record of the log that decodes on its own (even after damage). */
export function interruptIdsIn(log: Uint8Array): Uint8Array[] {
  const seen = new Map<string, Uint8Array>();
  for (const chunk of splitRecords(log).chunks) {
    const step = decodeRecordAt(chunk, 0);
    if (step.outcome !== 'record') continue;
    const r = step.record;
    if (r.kind === RecordKind.INTERRUPT_PARKED || r.kind === RecordKind.RESUME_CLAIMED) {
      seen.set(Buffer.from(r.interruptId).toString('hex'), r.interruptId);
    }
  }
  return [...seen.values()];
}

/** The largest seq a reserved id can name (10 digits, a u32). */
const MAX_RESERVED_SEQ = 0xffff_ffff;
/** How many parks of a log get their own probes (a loop parks many times; the first few suffice). */
const PROBED_PARKS = 4;

/**
 * Reserved interrupt ids (`name@seq`, docs/core-api.md "Transitions") that no park of the log
 * uses, and two that only look reserved: a RESUME of them is answered from the record at seq + 1
 * by `admit` (ALREADY_CONSUMED when it is the claim of that id, else as an unknown id) and
 * NEEDS_LOG by `admitFrom` when seq < head, as an unknown id when seq >= head. With N the node of
 * the first park (else of the node table's first interrupt node, else its first node): N@0 (the
 * RUN_STARTED record), N@<record count> (past the head at every prefix), N@4294967295 (the
 * largest); for each of the first parks (node n at s): n@(s+1) (the record after the park, its
 * claim in a valid log), m@s for another node m (a park's seq, another name); and N@0<s> (a
 * leading zero) and N@4294967296 (over a u32), which are not reserved. Ids the log names are left
 * out (they are asked as `idResumes`).
 */
export function reservedProbeIds(log: Uint8Array): Uint8Array[] {
  const chunks = splitRecords(log).chunks;
  const parks: Array<{ node: Uint8Array; seq: number }> = [];
  let table: Array<{ name: Uint8Array; kind: number }> = [];
  chunks.forEach((chunk, seq) => {
    const step = decodeRecordAt(chunk, 0);
    if (step.outcome !== 'record') return;
    const r = step.record;
    if (r.kind === RecordKind.RUN_STARTED && table.length === 0) table = r.nodes;
    if (r.kind === RecordKind.INTERRUPT_PARKED) parks.push({ node: r.node, seq });
  });
  if (parks.length === 0 && table.length === 0) return [];
  const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');
  const first = parks[0]?.node ?? (table.find((e) => e.kind === 3) ?? table[0]!).name;
  const concat = (name: Uint8Array, suffix: string) => {
    const tail = te.encode(suffix);
    const out = new Uint8Array(name.length + tail.length);
    out.set(name);
    out.set(tail, name.length);
    return out;
  };
  const ids = [concat(first, '@0'), concat(first, `@${chunks.length}`), concat(first, `@${MAX_RESERVED_SEQ}`), concat(first, `@${MAX_RESERVED_SEQ + 1}`)];
  for (const { node, seq } of parks.slice(0, PROBED_PARKS)) {
    const other = table.find((e) => hexOf(e.name) !== hexOf(node))?.name ?? concat(node, 'x');
    ids.push(concat(node, `@${seq + 1}`), concat(other, `@${seq}`), concat(first, `@0${seq}`));
  }
  const named = new Set(interruptIdsIn(log).map(hexOf));
  const out = new Map<string, Uint8Array>();
  for (const id of ids) if (id.length <= 1024 && !named.has(hexOf(id))) out.set(hexOf(id), id);
  return [...out.values()];
}

export interface RequestPlan {
  /** Requests that do not depend on the prefix: resumes and malformed bytes. */
  fixed: Uint8Array[];
  /** RESUME of each interrupt id the log names. */
  idResumes: Uint8Array[];
  /** RESUME of reserved ids (and two look-alikes) no park of the log uses (`reservedProbeIds`). */
  reservedResumes: Uint8Array[];
  /** A resume that is likely to matter at cut points (the first id, or an unknown one). */
  sampleResume: Uint8Array;
}

/** A few malformed requests (one per way to be malformed that matters most), for big sweeps. */
export const FEW_MALFORMED_REQUESTS: readonly Uint8Array[] = [[0], [1, 0, 0, 0, 0], [2, 0, 0, 0]].map((b) => Uint8Array.from(b));

export function planRequests(log: Uint8Array, malformed: readonly Uint8Array[] = MALFORMED_REQUESTS): RequestPlan {
  const idResumes = interruptIdsIn(log).map(resume);
  const reservedResumes = reservedProbeIds(log).map(resume);
  const resumes = [...idResumes, ...reservedResumes, ...SPECIAL_RESUMES.map((r) => r.request)];
  return { fixed: [...resumes, ...malformed], idResumes, reservedResumes, sampleResume: idResumes[0] ?? SPECIAL_RESUMES[0]!.request };
}

/** Every request for a prefix of `recordCount` records: fork and continue at 0..recordCount. */
export function requestsAtPrefix(plan: RequestPlan, recordCount: number): Uint8Array[] {
  const out = plan.fixed.slice();
  for (let seq = 0; seq <= recordCount; seq++) out.push(forkAt(seq), continueFrom(seq));
  out.push(FORK_AT_MAX, CONTINUE_FROM_MAX);
  return out;
}

/** The few requests asked at byte cut points (torn tails). */
export function requestsAtCut(plan: RequestPlan, recordCount: number): Uint8Array[] {
  const head = Math.max(recordCount - 1, 0);
  return [plan.sampleResume, continueFrom(head), forkAt(head), continueFrom(recordCount)];
}
