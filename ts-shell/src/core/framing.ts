/**
 * The low layer of docs/log-format.md shared by the codec and the reference core: record framing
 * (integrity classification steps 1-9, the format-2 link included) and payload field parsing into
 * byte ranges. Nothing here allocates per record: results go into caller-owned mutable structs, so
 * recovery can walk a million records without creating a million objects.
 */

import { crc32c } from './crc32c.js';
import { LogErrorCode, RecordKind } from './types.js';

export const HEADER_LEN = 12;
/** Trailer of a format-1 record: record_crc. */
export const TRAILER_LEN = 4;
/** Trailer of a format-2 record: record_crc, link. */
export const TRAILER_LEN_V2 = 8;
/** Header and trailer bytes of a format-1 record. */
export const FRAME_OVERHEAD = HEADER_LEN + TRAILER_LEN;
/** Header and trailer bytes of a format-2 record. */
export const FRAME_OVERHEAD_V2 = HEADER_LEN + TRAILER_LEN_V2;
export const MAX_PAYLOAD_LEN = 0x3fff_ffff;
/** The most bytes a run's log may hold: offsets are u32s (docs/core-api.md; past it both cores saturate them). */
export const MAX_LOG_BYTES = 0xffff_ffff;
export const FORMAT_VERSION_1 = 1;
export const FORMAT_VERSION_2 = 2;
/** The format the shell writes (format-1 records are still read). */
export const FORMAT_VERSION = FORMAT_VERSION_2;
export const MAX_NAME_LEN = 1024;
export const MAX_NODE_COUNT = 65535;

export function readU32(bytes: Uint8Array, pos: number): number {
  return (bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16) | (bytes[pos + 3]! << 24)) >>> 0;
}

export function writeU32(bytes: Uint8Array, pos: number, value: number): void {
  bytes[pos] = value & 0xff;
  bytes[pos + 1] = (value >>> 8) & 0xff;
  bytes[pos + 2] = (value >>> 16) & 0xff;
  bytes[pos + 3] = (value >>> 24) & 0xff;
}

/** The low 16 bits of CRC-32C over header bytes 0..10 of the record at `offset`. */
export function headerCheck(bytes: Uint8Array, offset: number): number {
  return crc32c(bytes, offset, offset + 10) & 0xffff;
}

const linkScratch = new Uint8Array(8);

/** The format-2 link: CRC-32C over (previous chain value, this record's record_crc), u32 LE each. */
export function linkOf(prevChain: number, recordCrc: number): number {
  writeU32(linkScratch, 0, prevChain);
  writeU32(linkScratch, 4, recordCrc);
  return crc32c(linkScratch, 0, 8);
}

/**
 * The chain value of the record that ends at `recordEnd`: its last four bytes (the link of a
 * format-2 record, the record_crc of a format-1 one); 0 when `recordEnd` is 0 (no record). What
 * the next format-2 record chains from.
 */
export function chainValueBefore(log: Uint8Array, recordEnd: number): number {
  return recordEnd === 0 ? 0 : readU32(log, recordEnd - 4);
}

export const FrameOutcome = { RECORD: 0, END: 1, TORN: 2, CORRUPT: 3 } as const;
export type FrameOutcome = (typeof FrameOutcome)[keyof typeof FrameOutcome];

/** Where one record's parts are; filled by readFrame. */
export class Frame {
  /** Meaningful when the outcome is CORRUPT. */
  errorCode: LogErrorCode = LogErrorCode.BAD_HEADER;
  /** The kind byte once the header check passed, else 0 (what a recovery error reports). */
  kind = 0;
  /** The version byte (1 or 2) of a RECORD. */
  version = 0;
  payloadStart = 0;
  payloadEnd = 0;
  recordEnd = 0;
  /** The chain value of a RECORD: its link (format 2) or its record_crc (format 1). */
  chain = 0;
}

/** Read a record on its own: no link or format-order check (the record is known to be sound). */
export const NO_CHAIN = -1;

/**
 * Classify the bytes at `offset` as the record numbered `expectedSeq` (docs/log-format.md,
 * "Integrity classification", steps 1 to 9 up to BAD_KIND; payload parsing is separate), read
 * after a record whose chain value is `prevChain` (0 before the first record) and, with
 * `v2Seen`, after a format-2 record. `expectedSeq` < 0 skips the BAD_SEQ check and `prevChain`
 * = NO_CHAIN the BAD_LINK and format-order checks (for tools that read a record on its own).
 */
export function readFrame(
  log: Uint8Array, offset: number, expectedSeq: number, frame: Frame, prevChain = NO_CHAIN, v2Seen = false,
): FrameOutcome {
  const remaining = log.length - offset;
  frame.kind = 0;
  if (remaining === 0) return FrameOutcome.END;
  if (remaining < HEADER_LEN) return FrameOutcome.TORN;
  const storedCheck = log[offset + 10]! | (log[offset + 11]! << 8);
  if (headerCheck(log, offset) !== storedCheck) return corrupt(frame, LogErrorCode.BAD_HEADER);
  frame.kind = log[offset + 9]!;
  const version = log[offset + 8]!;
  const v2 = version === FORMAT_VERSION_2;
  if (!v2 && !(version === FORMAT_VERSION_1 && !v2Seen)) return corrupt(frame, LogErrorCode.BAD_VERSION);
  const payloadLen = readU32(log, offset);
  if (payloadLen > MAX_PAYLOAD_LEN) return corrupt(frame, LogErrorCode.RECORD_TOO_LARGE);
  const trailer = v2 ? TRAILER_LEN_V2 : TRAILER_LEN;
  if (HEADER_LEN + payloadLen + trailer > remaining) return FrameOutcome.TORN;
  const payloadEnd = offset + HEADER_LEN + payloadLen;
  const recordCrc = readU32(log, payloadEnd);
  if (crc32c(log, offset, payloadEnd) !== recordCrc) return corrupt(frame, LogErrorCode.BAD_CHECKSUM);
  const chain = v2 ? readU32(log, payloadEnd + 4) : recordCrc;
  if (v2 && prevChain !== NO_CHAIN && linkOf(prevChain, recordCrc) !== chain) return corrupt(frame, LogErrorCode.BAD_LINK);
  if (expectedSeq >= 0 && readU32(log, offset + 4) !== expectedSeq) return corrupt(frame, LogErrorCode.BAD_SEQ);
  const lastKind = v2 ? RecordKind.EFFECT_RELEASED : RecordKind.RUN_FAILED;
  if (frame.kind < RecordKind.RUN_STARTED || frame.kind > lastKind) {
    return corrupt(frame, LogErrorCode.BAD_KIND);
  }
  frame.version = version;
  frame.chain = chain;
  frame.payloadStart = offset + HEADER_LEN;
  frame.payloadEnd = payloadEnd;
  frame.recordEnd = payloadEnd + trailer;
  return FrameOutcome.RECORD;
}

function corrupt(frame: Frame, code: LogErrorCode): FrameOutcome {
  frame.errorCode = code;
  return FrameOutcome.CORRUPT;
}

/**
 * One record's payload fields as byte ranges `[xStart, xEnd)` into the log. Which fields are
 * meaningful depends on the kind (docs/log-format.md, "Record kinds"); `node` serves every kind
 * with a node field, `runId` both RUN_STARTED and FORKED (the new run's id).
 */
export class PayloadFields {
  runIdStart = 0; runIdEnd = 0;
  workflowStart = 0; workflowEnd = 0;
  versionStart = 0; versionEnd = 0;
  fingerprintStart = 0; fingerprintEnd = 0;
  definitionStart = 0; definitionEnd = 0;
  /** RUN_STARTED: offset of the first (name, kind) entry, and how many there are. */
  tableStart = 0; nodeCount = 0;
  startNodeStart = 0; startNodeEnd = 0;
  stateStart = 0; stateEnd = 0;
  nodeStart = 0; nodeEnd = 0;
  nextStart = 0; nextEnd = 0;
  stateForm = 0;
  keyStart = 0; keyEnd = 0;
  resultStart = 0; resultEnd = 0;
  interruptIdStart = 0; interruptIdEnd = 0;
  valueStart = 0; valueEnd = 0;
  sourceRunIdStart = 0; sourceRunIdEnd = 0;
  sourceSeq = 0;
  intentStart = 0; intentEnd = 0;
  codeStart = 0; codeEnd = 0;
  messageStart = 0; messageEnd = 0;
  /** EFFECT_ATTEMPT / EFFECT_RELEASED: the attempt number, and the lease (attempt) or reason (release). */
  attempt = 0;
  tailStart = 0; tailEnd = 0;
}

/** End of a `bytes` field starting at `pos` (its data starts at pos + 4), or -1 past `end`. */
export function bytesFieldEnd(log: Uint8Array, pos: number, end: number): number {
  if (pos < 0 || pos + 4 > end) return -1;
  const fieldEnd = pos + 4 + readU32(log, pos);
  return fieldEnd > end ? -1 : fieldEnd;
}

/** Like bytesFieldEnd, and -1 also for an empty name or one over MAX_NAME_LEN bytes. */
export function nameFieldEnd(log: Uint8Array, pos: number, end: number): number {
  const fieldEnd = bytesFieldEnd(log, pos, end);
  if (fieldEnd < 0) return -1;
  const len = fieldEnd - pos - 4;
  return len >= 1 && len <= MAX_NAME_LEN ? fieldEnd : -1;
}

/**
 * Parse the payload `log[start..end)` of a record of `kind` (1..11) into `f`. False when it does not
 * parse exactly (MALFORMED_PAYLOAD): a field past the end, bytes left over, a bad name, or a
 * state_form other than 0/1. Node kinds and table sizes are not checked here (BAD_NODE_TABLE is a
 * transition rule, checked after parsing).
 */
export function parsePayload(log: Uint8Array, kind: number, start: number, end: number, f: PayloadFields): boolean {
  switch (kind) {
    case RecordKind.RUN_STARTED: return parseRunStarted(log, start, end, f);
    case RecordKind.NODE_COMPLETED: return parseNodeCompleted(log, start, end, f);
    case RecordKind.EFFECT_INTENT: {
      const nodeEnd = nameFieldEnd(log, start, end);
      const keyEnd = nameFieldEnd(log, nodeEnd, end);
      if (keyEnd !== end) return false;
      f.nodeStart = start + 4; f.nodeEnd = nodeEnd;
      f.keyStart = nodeEnd + 4; f.keyEnd = keyEnd;
      return true;
    }
    case RecordKind.EFFECT_DONE: {
      const nodeEnd = nameFieldEnd(log, start, end);
      const keyEnd = nameFieldEnd(log, nodeEnd, end);
      const resultEnd = bytesFieldEnd(log, keyEnd, end);
      if (resultEnd !== end) return false;
      f.nodeStart = start + 4; f.nodeEnd = nodeEnd;
      f.keyStart = nodeEnd + 4; f.keyEnd = keyEnd;
      f.resultStart = keyEnd + 4; f.resultEnd = resultEnd;
      return true;
    }
    case RecordKind.INTERRUPT_PARKED: {
      const nodeEnd = nameFieldEnd(log, start, end);
      const idEnd = nameFieldEnd(log, nodeEnd, end);
      if (idEnd !== end) return false;
      f.nodeStart = start + 4; f.nodeEnd = nodeEnd;
      f.interruptIdStart = nodeEnd + 4; f.interruptIdEnd = idEnd;
      return true;
    }
    case RecordKind.RESUME_CLAIMED: {
      const idEnd = nameFieldEnd(log, start, end);
      const valueEnd = bytesFieldEnd(log, idEnd, end);
      if (valueEnd !== end) return false;
      f.interruptIdStart = start + 4; f.interruptIdEnd = idEnd;
      f.valueStart = idEnd + 4; f.valueEnd = valueEnd;
      return true;
    }
    case RecordKind.FORKED: return parseForked(log, start, end, f);
    case RecordKind.RUN_COMPLETED: return start === end;
    case RecordKind.RUN_FAILED: {
      const nodeEnd = bytesFieldEnd(log, start, end);
      const codeEnd = bytesFieldEnd(log, nodeEnd, end);
      const messageEnd = bytesFieldEnd(log, codeEnd, end);
      if (messageEnd !== end) return false;
      f.nodeStart = start + 4; f.nodeEnd = nodeEnd;
      f.codeStart = nodeEnd + 4; f.codeEnd = codeEnd;
      f.messageStart = codeEnd + 4; f.messageEnd = messageEnd;
      return true;
    }
    case RecordKind.EFFECT_ATTEMPT:
    case RecordKind.EFFECT_RELEASED: {
      const nodeEnd = nameFieldEnd(log, start, end);
      const keyEnd = nameFieldEnd(log, nodeEnd, end);
      if (keyEnd < 0 || keyEnd + 4 > end) return false;
      const tailEnd = bytesFieldEnd(log, keyEnd + 4, end);
      if (tailEnd !== end) return false;
      f.nodeStart = start + 4; f.nodeEnd = nodeEnd;
      f.keyStart = nodeEnd + 4; f.keyEnd = keyEnd;
      f.attempt = readU32(log, keyEnd);
      f.tailStart = keyEnd + 8; f.tailEnd = tailEnd;
      return true;
    }
    default: return false;
  }
}

function parseRunStarted(log: Uint8Array, start: number, end: number, f: PayloadFields): boolean {
  const runIdEnd = nameFieldEnd(log, start, end);
  const workflowEnd = nameFieldEnd(log, runIdEnd, end);
  const versionEnd = bytesFieldEnd(log, workflowEnd, end);
  const fingerprintEnd = bytesFieldEnd(log, versionEnd, end);
  const definitionEnd = bytesFieldEnd(log, fingerprintEnd, end);
  if (definitionEnd < 0 || definitionEnd + 4 > end) return false;
  const nodeCount = readU32(log, definitionEnd);
  const tableStart = definitionEnd + 4;
  let pos = tableStart;
  // Each entry needs at least 6 bytes, so this loop ends within (end - start) / 6 iterations.
  for (let i = 0; i < nodeCount; i++) {
    const nameEnd = nameFieldEnd(log, pos, end);
    if (nameEnd < 0 || nameEnd + 1 > end) return false;
    pos = nameEnd + 1;
  }
  const startNodeEnd = nameFieldEnd(log, pos, end);
  const stateEnd = bytesFieldEnd(log, startNodeEnd, end);
  if (stateEnd !== end) return false;
  f.runIdStart = start + 4; f.runIdEnd = runIdEnd;
  f.workflowStart = runIdEnd + 4; f.workflowEnd = workflowEnd;
  f.versionStart = workflowEnd + 4; f.versionEnd = versionEnd;
  f.fingerprintStart = versionEnd + 4; f.fingerprintEnd = fingerprintEnd;
  f.definitionStart = fingerprintEnd + 4; f.definitionEnd = definitionEnd;
  f.tableStart = tableStart; f.nodeCount = nodeCount;
  f.startNodeStart = pos + 4; f.startNodeEnd = startNodeEnd;
  f.stateStart = startNodeEnd + 4; f.stateEnd = stateEnd;
  return true;
}

function parseNodeCompleted(log: Uint8Array, start: number, end: number, f: PayloadFields): boolean {
  const nodeEnd = nameFieldEnd(log, start, end);
  const nextEnd = bytesFieldEnd(log, nodeEnd, end);
  if (nextEnd < 0 || nextEnd + 1 > end) return false;
  const stateForm = log[nextEnd]!;
  if (stateForm > 1) return false;
  const stateEnd = bytesFieldEnd(log, nextEnd + 1, end);
  if (stateEnd !== end) return false;
  f.nodeStart = start + 4; f.nodeEnd = nodeEnd;
  f.nextStart = nodeEnd + 4; f.nextEnd = nextEnd;
  f.stateForm = stateForm;
  f.stateStart = nextEnd + 5; f.stateEnd = stateEnd;
  return true;
}

function parseForked(log: Uint8Array, start: number, end: number, f: PayloadFields): boolean {
  const sourceEnd = nameFieldEnd(log, start, end);
  if (sourceEnd < 0 || sourceEnd + 4 > end) return false;
  const runIdEnd = nameFieldEnd(log, sourceEnd + 4, end);
  const intentEnd = bytesFieldEnd(log, runIdEnd, end);
  if (intentEnd !== end) return false;
  f.sourceRunIdStart = start + 4; f.sourceRunIdEnd = sourceEnd;
  f.sourceSeq = readU32(log, sourceEnd);
  f.runIdStart = sourceEnd + 8; f.runIdEnd = runIdEnd;
  f.intentStart = runIdEnd + 4; f.intentEnd = intentEnd;
  return true;
}

/** Byte-range equality: `a[aStart..aEnd)` versus `b[bStart..bEnd)`. */
export function rangesEqual(
  a: Uint8Array, aStart: number, aEnd: number,
  b: Uint8Array, bStart: number, bEnd: number,
): boolean {
  const len = aEnd - aStart;
  if (len !== bEnd - bStart) return false;
  for (let i = 0; i < len; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
}
