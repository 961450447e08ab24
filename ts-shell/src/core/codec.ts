/**
 * The record codec of docs/log-format.md: LogRecord objects to bytes and back, in format 1
 * (`encodeRecord`, `encodeLog`: the same bytes as before format 2 existed) and format 2
 * (`encodeRecordV2`, `encodeLogV2`: each record chained to the one before by its link). Encoding is faithful (it writes
 * whatever the record holds, so tests can build invalid records) and throws a RecordEncodeError
 * only for values the format cannot represent. Decoding reports problems as LogDecodeError values,
 * never by throwing.
 */

import { genuineBytes } from './byte-arguments.js';
import { crc32c } from './crc32c.js';
import {
  chainValueBefore, Frame, FrameOutcome, HEADER_LEN, MAX_PAYLOAD_LEN, FORMAT_VERSION_1, FORMAT_VERSION_2, NO_CHAIN,
  PayloadFields, FRAME_OVERHEAD, TRAILER_LEN_V2, linkOf, parsePayload, readFrame, readU32, writeU32,
} from './framing.js';
import { LogErrorCode, RecordKind, type LogRecord, type NodeEntry } from './types.js';

export const LogErrorName: Record<LogErrorCode, string> = {
  1: 'BAD_HEADER', 2: 'BAD_VERSION', 3: 'RECORD_TOO_LARGE', 4: 'BAD_CHECKSUM', 5: 'BAD_SEQ',
  6: 'BAD_KIND', 7: 'MALFORMED_PAYLOAD', 8: 'IMPOSSIBLE_ORDER', 9: 'UNKNOWN_NODE',
  10: 'DUPLICATE_INTERRUPT', 11: 'BAD_NODE_TABLE', 12: 'BAD_LINK',
};

/**
 * A damaged record, named by its position (the expected seq; 0 when decodeRecordAt was not given
 * one) and byte offset.
 */
export interface LogDecodeError {
  code: LogErrorCode;
  codeName: string;
  seq: number;
  offset: number;
  /** The kind byte when the header check passed, else 0. */
  kind: number;
  message: string;
}

export function logDecodeError(code: LogErrorCode, seq: number, offset: number, kind: number): LogDecodeError {
  const codeName = LogErrorName[code] ?? `code ${code}`;
  return { code, codeName, seq, offset, kind, message: `${codeName} at seq ${seq} (byte offset ${offset})` };
}

/** Thrown by encodeRecord for a value the format cannot hold; names the field. */
export class RecordEncodeError extends Error {
  override readonly name = 'RecordEncodeError';
  constructor(readonly seq: number, readonly field: string, readonly problem: string) {
    super(`cannot encode record seq ${seq}: field ${field}: ${problem}`);
  }
}

export type DecodeStep =
  /** `version`: the record's format (1 or 2); `chain`: its chain value (link if v2, record_crc if v1). */
  | { outcome: 'record'; record: LogRecord; offset: number; end: number; version: number; chain: number }
  | { outcome: 'end'; offset: number }
  /** The header or body is incomplete: not durable. */
  | { outcome: 'torn'; offset: number; tornLen: number }
  | { outcome: 'corrupt'; error: LogDecodeError };

export interface DecodedLog {
  records: LogRecord[];
  /** Start offset of each record, parallel to `records`. */
  offsets: number[];
  /** Format (1 or 2) of each record, parallel to `records`. */
  versions: number[];
  durableLen: number;
  tornLen: number;
  /** The first bad record, if any; nothing after it is decoded. */
  error: LogDecodeError | null;
}

// ---------------------------------------------------------------- encoding

/**
 * Writes a payload in two passes over the same writePayload call: the first (no target) checks
 * every field and adds up the length, the second writes the fields straight into the record's
 * buffer. No intermediate parts: a step's record costs one allocation, its own.
 */
class PayloadWriter {
  length = 0;
  private out: Uint8Array | null = null;
  private pos = 0;
  constructor(private readonly seq: number) {}

  /** Switch to writing: the fields go into `out` from `pos` (the lengths were checked already). */
  target(out: Uint8Array, pos: number): void {
    this.out = out;
    this.pos = pos;
  }

  u8(field: string, value: number): this {
    if (this.out === null) {
      if (!Number.isInteger(value) || value < 0 || value > 0xff) this.fail(field, `u8 out of range: ${value}`);
      this.length += 1;
    } else {
      this.out[this.pos++] = value;
    }
    return this;
  }
  u32(field: string, value: number): this {
    if (this.out === null) {
      if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) this.fail(field, `u32 out of range: ${value}`);
      this.length += 4;
    } else {
      writeU32(this.out, this.pos, value);
      this.pos += 4;
    }
    return this;
  }
  bytes(field: string, value: Uint8Array): this {
    // The bytes it really has, read as the cores read their arguments (byte-arguments.ts): a
    // detached or out-of-bounds view was a bare TypeError, or no bytes when empty; a subclass whose
    // length lies wrote its claimed length, padded with zeros.
    const bytes = genuineBytes(value);
    if (typeof bytes === 'string') this.fail(field, bytes);
    this.u32(field, bytes.length);
    if (this.out === null) {
      this.length += bytes.length;
    } else {
      this.out.set(bytes, this.pos);
      this.pos += bytes.length;
    }
    return this;
  }
  fail(field: string, problem: string): never {
    throw new RecordEncodeError(this.seq, field, problem);
  }
}

function writePayload(r: LogRecord, w: PayloadWriter): void {
  switch (r.kind) {
    case RecordKind.RUN_STARTED:
      w.bytes('runId', r.runId).bytes('workflow', r.workflow).bytes('version', r.version).bytes('fingerprint', r.fingerprint).bytes('definition', r.definition);
      // The node table is read as an array of objects: null, a string or [null] were bare TypeErrors.
      if (!Array.isArray(r.nodes)) w.fail('nodes', `not an array of { name, kind }: ${r.nodes === null ? 'null' : typeof r.nodes}`);
      w.u32('nodes.length', r.nodes.length);
      r.nodes.forEach((n: NodeEntry, i) => {
        if (n === null || typeof n !== 'object') w.fail(`nodes[${i}]`, `not a { name, kind }: ${n === null ? 'null' : typeof n}`);
        w.bytes(`nodes[${i}].name`, n.name).u8(`nodes[${i}].kind`, n.kind);
      });
      w.bytes('startNode', r.startNode).bytes('state', r.state);
      return;
    case RecordKind.NODE_COMPLETED:
      w.bytes('node', r.node).bytes('next', r.next).u8('stateForm', r.stateForm).bytes('state', r.state);
      return;
    case RecordKind.EFFECT_INTENT:
      w.bytes('node', r.node).bytes('key', r.key);
      return;
    case RecordKind.EFFECT_DONE:
      w.bytes('node', r.node).bytes('key', r.key).bytes('result', r.result);
      return;
    case RecordKind.INTERRUPT_PARKED:
      w.bytes('node', r.node).bytes('interruptId', r.interruptId);
      return;
    case RecordKind.RESUME_CLAIMED:
      w.bytes('interruptId', r.interruptId).bytes('value', r.value);
      return;
    case RecordKind.FORKED:
      w.bytes('sourceRunId', r.sourceRunId).u32('sourceSeq', r.sourceSeq).bytes('runId', r.runId).bytes('intent', r.intent);
      return;
    case RecordKind.RUN_COMPLETED:
      return;
    case RecordKind.RUN_FAILED:
      w.bytes('node', r.node).bytes('code', r.code).bytes('message', r.message);
      return;
    case RecordKind.EFFECT_ATTEMPT:
      w.bytes('node', r.node).bytes('key', r.key).u32('attempt', r.attempt).bytes('lease', r.lease);
      return;
    case RecordKind.EFFECT_RELEASED:
      w.bytes('node', r.node).bytes('key', r.key).u32('attempt', r.attempt).bytes('reason', r.reason);
      return;
    default:
      w.fail('kind', `unknown record kind ${(r as { kind: unknown }).kind}`);
  }
}

/**
 * Frame a payload: header (length, seq, version, kind, header check), payload, record CRC, and in
 * format 2 the link. `version` other than 1 or 2 is allowed only so tests can build BAD_VERSION
 * records (framed like format 1).
 */
export function frameRecord(seq: number, kind: number, payload: Uint8Array, version = FORMAT_VERSION_1, prevChain = 0): Uint8Array {
  const v2 = version === FORMAT_VERSION_2;
  const out = new Uint8Array((v2 ? HEADER_LEN + TRAILER_LEN_V2 : FRAME_OVERHEAD) + payload.length);
  writeHeader(out, seq, kind, payload.length, version);
  out.set(payload, HEADER_LEN);
  sealRecord(out, HEADER_LEN + payload.length, v2 ? prevChain : null);
  return out;
}

function writeHeader(out: Uint8Array, seq: number, kind: number, payloadLen: number, version: number): void {
  writeU32(out, 0, payloadLen);
  writeU32(out, 4, seq);
  out[8] = version;
  out[9] = kind;
  const check = crc32c(out, 0, 10) & 0xffff;
  out[10] = check & 0xff;
  out[11] = check >>> 8;
}

/** Write the record CRC after `bodyEnd`, and the link after it when `prevChain` is not null. */
function sealRecord(out: Uint8Array, bodyEnd: number, prevChain: number | null): void {
  const recordCrc = crc32c(out, 0, bodyEnd);
  writeU32(out, bodyEnd, recordCrc);
  if (prevChain !== null) writeU32(out, bodyEnd + 4, linkOf(prevChain, recordCrc));
}

function isU32(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 0xffff_ffff;
}

/**
 * The bytes of one format-1 record (as before format 2 existed; tests and tools build format-1
 * logs with it). Throws RecordEncodeError for a value the format cannot represent.
 */
export function encodeRecord(r: LogRecord): Uint8Array {
  return encodeFramed(r, null);
}

/**
 * The bytes of one format-2 record chained to `prevChain`: the chain value of the record before
 * it (its link if format 2, its record_crc if format 1; 0 at seq 0). What the shell writes.
 */
export function encodeRecordV2(r: LogRecord, prevChain: number): Uint8Array {
  if (!isU32(prevChain)) throw new RecordEncodeError(r.seq, 'prevChain', `u32 out of range: ${String(prevChain)}`);
  return encodeFramed(r, prevChain);
}

function encodeFramed(r: LogRecord, prevChain: number | null): Uint8Array {
  const w = new PayloadWriter(r.seq);
  if (!isU32(r.seq)) w.fail('seq', `u32 out of range: ${r.seq}`);
  writePayload(r, w);
  if (w.length > MAX_PAYLOAD_LEN) w.fail('payload', `${w.length} bytes is over the ${MAX_PAYLOAD_LEN} limit`);
  const v2 = prevChain !== null;
  const out = new Uint8Array((v2 ? HEADER_LEN + TRAILER_LEN_V2 : FRAME_OVERHEAD) + w.length);
  w.target(out, HEADER_LEN);
  writePayload(r, w);
  writeHeader(out, r.seq, r.kind, w.length, v2 ? FORMAT_VERSION_2 : FORMAT_VERSION_1);
  sealRecord(out, HEADER_LEN + w.length, prevChain);
  return out;
}

/** The chain value of one encoded record (its last four bytes): what the next record chains from. */
export function chainOf(record: Uint8Array): number {
  return chainValueBefore(record, record.length);
}

/** The bytes of a whole format-1 log: the records' encodings concatenated (their seqs are not checked). */
export function encodeLog(records: readonly LogRecord[]): Uint8Array {
  return concatBytes(records.map((r) => encodeRecord(r)));
}

/**
 * The bytes of a format-2 log: each record chained to the one before, the first to `prevChain`
 * (default 0: a log from seq 0; the chain value of the last record when extending a log).
 */
export function encodeLogV2(records: readonly LogRecord[], prevChain = 0): Uint8Array {
  let chain = prevChain;
  return concatBytes(records.map((r) => {
    const bytes = encodeRecordV2(r, chain);
    chain = chainOf(bytes);
    return bytes;
  }));
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let pos = 0;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}

// ---------------------------------------------------------------- decoding

function copyRange(log: Uint8Array, start: number, end: number): Uint8Array {
  return log.slice(start, end);
}

function recordFromFields(log: Uint8Array, kind: number, seq: number, f: PayloadFields): LogRecord {
  const b = (start: number, end: number) => copyRange(log, start, end);
  switch (kind) {
    case RecordKind.RUN_STARTED: {
      const nodes: NodeEntry[] = [];
      let pos = f.tableStart;
      for (let i = 0; i < f.nodeCount; i++) {
        const nameEnd = pos + 4 + readU32(log, pos);
        nodes.push({ name: b(pos + 4, nameEnd), kind: log[nameEnd]! });
        pos = nameEnd + 1;
      }
      return {
        kind, seq, runId: b(f.runIdStart, f.runIdEnd), workflow: b(f.workflowStart, f.workflowEnd),
        version: b(f.versionStart, f.versionEnd), fingerprint: b(f.fingerprintStart, f.fingerprintEnd),
        definition: b(f.definitionStart, f.definitionEnd), nodes, startNode: b(f.startNodeStart, f.startNodeEnd),
        state: b(f.stateStart, f.stateEnd),
      };
    }
    case RecordKind.NODE_COMPLETED:
      return { kind, seq, node: b(f.nodeStart, f.nodeEnd), next: b(f.nextStart, f.nextEnd), stateForm: f.stateForm, state: b(f.stateStart, f.stateEnd) };
    case RecordKind.EFFECT_INTENT:
      return { kind, seq, node: b(f.nodeStart, f.nodeEnd), key: b(f.keyStart, f.keyEnd) };
    case RecordKind.EFFECT_DONE:
      return { kind, seq, node: b(f.nodeStart, f.nodeEnd), key: b(f.keyStart, f.keyEnd), result: b(f.resultStart, f.resultEnd) };
    case RecordKind.INTERRUPT_PARKED:
      return { kind, seq, node: b(f.nodeStart, f.nodeEnd), interruptId: b(f.interruptIdStart, f.interruptIdEnd) };
    case RecordKind.RESUME_CLAIMED:
      return { kind, seq, interruptId: b(f.interruptIdStart, f.interruptIdEnd), value: b(f.valueStart, f.valueEnd) };
    case RecordKind.FORKED:
      return { kind, seq, sourceRunId: b(f.sourceRunIdStart, f.sourceRunIdEnd), sourceSeq: f.sourceSeq, runId: b(f.runIdStart, f.runIdEnd), intent: b(f.intentStart, f.intentEnd) };
    case RecordKind.RUN_COMPLETED:
      return { kind, seq };
    case RecordKind.EFFECT_ATTEMPT:
      return { kind, seq, node: b(f.nodeStart, f.nodeEnd), key: b(f.keyStart, f.keyEnd), attempt: f.attempt, lease: b(f.tailStart, f.tailEnd) };
    case RecordKind.EFFECT_RELEASED:
      return { kind, seq, node: b(f.nodeStart, f.nodeEnd), key: b(f.keyStart, f.keyEnd), attempt: f.attempt, reason: b(f.tailStart, f.tailEnd) };
    default:
      return { kind: RecordKind.RUN_FAILED, seq, node: b(f.nodeStart, f.nodeEnd), code: b(f.codeStart, f.codeEnd), message: b(f.messageStart, f.messageEnd) };
  }
}

/** Where a record sits in its log, for the link and format-order checks of decodeRecordAt. */
export interface ChainContext {
  /** The chain value of the record before (0 at seq 0). */
  prevChain: number;
  /** A format-2 record came before (a format-1 record may not follow). */
  v2Seen: boolean;
}

/**
 * Decode the record at `offset`. With `expectedSeq` (its position in the log) the stored seq is
 * checked (BAD_SEQ); without it, any stored seq is accepted. With `context` the link and the
 * format order are checked (BAD_LINK, BAD_VERSION); without it, a record is read on its own. The
 * record's own stored seq is what the returned LogRecord carries. Damaged bytes are reported,
 * never thrown; only an offset outside 0..log.length (a caller bug) throws a RangeError.
 */
export function decodeRecordAt(log: Uint8Array, offset: number, expectedSeq = -1, context?: ChainContext): DecodeStep {
  const frame = new Frame();
  const position = expectedSeq >= 0 ? expectedSeq : 0;
  if (!Number.isInteger(offset) || offset < 0 || offset > log.length) {
    throw new RangeError(`decodeRecordAt: offset ${offset} is outside the ${log.length}-byte log`);
  }
  switch (readFrame(log, offset, expectedSeq, frame, context?.prevChain ?? NO_CHAIN, context?.v2Seen ?? false)) {
    case FrameOutcome.END:
      return { outcome: 'end', offset };
    case FrameOutcome.TORN:
      return { outcome: 'torn', offset, tornLen: log.length - offset };
    case FrameOutcome.CORRUPT:
      return { outcome: 'corrupt', error: logDecodeError(frame.errorCode, position, offset, frame.kind) };
  }
  const fields = new PayloadFields();
  if (!parsePayload(log, frame.kind, frame.payloadStart, frame.payloadEnd, fields)) {
    return { outcome: 'corrupt', error: logDecodeError(LogErrorCode.MALFORMED_PAYLOAD, position, offset, frame.kind) };
  }
  const record = recordFromFields(log, frame.kind, readU32(log, offset + 4), fields);
  return { outcome: 'record', record, offset, end: frame.recordEnd, version: frame.version, chain: frame.chain };
}

/**
 * Decode a whole log: framing and payloads of docs/log-format.md (integrity steps 1-9, the links
 * and the format order included). Ordering rules (step 10) belong to the recovery core, not the
 * codec. Never throws.
 */
export function decodeLog(log: Uint8Array): DecodedLog {
  const records: LogRecord[] = [];
  const offsets: number[] = [];
  const versions: number[] = [];
  const context: ChainContext = { prevChain: 0, v2Seen: false };
  let offset = 0;
  for (;;) {
    const step = decodeRecordAt(log, offset, records.length, context);
    switch (step.outcome) {
      case 'record':
        records.push(step.record);
        offsets.push(offset);
        versions.push(step.version);
        context.prevChain = step.chain;
        context.v2Seen ||= step.version === FORMAT_VERSION_2;
        offset = step.end;
        continue;
      case 'end':
        return { records, offsets, versions, durableLen: offset, tornLen: 0, error: null };
      case 'torn':
        return { records, offsets, versions, durableLen: offset, tornLen: step.tornLen, error: null };
      case 'corrupt':
        return { records, offsets, versions, durableLen: offset, tornLen: 0, error: step.error };
    }
  }
}
