/**
 * The admission requests asked at every prefix of a log: resumes of every interrupt id the log
 * mentions (parked, claimed, or only parked later: an unknown id at earlier prefixes), an id it
 * never mentions, ids at and past the length limit; FORK_AT and CONTINUE_FROM at every seq up to
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

export interface RequestPlan {
  /** Requests that do not depend on the prefix: resumes and malformed bytes. */
  fixed: Uint8Array[];
  /** RESUME of each interrupt id the log names. */
  idResumes: Uint8Array[];
  /** A resume that is likely to matter at cut points (the first id, or an unknown one). */
  sampleResume: Uint8Array;
}

/** A few malformed requests (one per way to be malformed that matters most), for big sweeps. */
export const FEW_MALFORMED_REQUESTS: readonly Uint8Array[] = [[0], [1, 0, 0, 0, 0], [2, 0, 0, 0]].map((b) => Uint8Array.from(b));

export function planRequests(log: Uint8Array, malformed: readonly Uint8Array[] = MALFORMED_REQUESTS): RequestPlan {
  const idResumes = interruptIdsIn(log).map(resume);
  const resumes = [...idResumes, ...SPECIAL_RESUMES.map((r) => r.request)];
  return { fixed: [...resumes, ...malformed], idResumes, sampleResume: idResumes[0] ?? SPECIAL_RESUMES[0]!.request };
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
