/**
 * The record codec of docs/log-format.md: LogRecord objects to bytes and back. Encoding is
 * faithful (it writes whatever the record holds, so tests can build invalid records) and throws a
 * RecordEncodeError only for values the format cannot represent. Decoding reports problems as
 * LogDecodeError values, never by throwing.
 */

import { crc32c } from './crc32c.js';
import {
  Frame, FrameOutcome, HEADER_LEN, MAX_PAYLOAD_LEN, FORMAT_VERSION, PayloadFields, FRAME_OVERHEAD,
  parsePayload, readFrame, readU32, writeU32,
} from './framing.js';
import { LogErrorCode, RecordKind, type LogRecord, type NodeEntry } from './types.js';

export const LogErrorName: Record<LogErrorCode, string> = {
  1: 'BAD_HEADER', 2: 'BAD_VERSION', 3: 'RECORD_TOO_LARGE', 4: 'BAD_CHECKSUM', 5: 'BAD_SEQ',
  6: 'BAD_KIND', 7: 'MALFORMED_PAYLOAD', 8: 'IMPOSSIBLE_ORDER', 9: 'UNKNOWN_NODE',
  10: 'DUPLICATE_INTERRUPT', 11: 'BAD_NODE_TABLE',
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
  | { outcome: 'record'; record: LogRecord; offset: number; end: number }
  | { outcome: 'end'; offset: number }
  /** The header or body is incomplete: not durable. */
  | { outcome: 'torn'; offset: number; tornLen: number }
  | { outcome: 'corrupt'; error: LogDecodeError };

export interface DecodedLog {
  records: LogRecord[];
  /** Start offset of each record, parallel to `records`. */
  offsets: number[];
  durableLen: number;
  tornLen: number;
  /** The first bad record, if any; nothing after it is decoded. */
  error: LogDecodeError | null;
}

// ---------------------------------------------------------------- encoding

class PayloadWriter {
  private readonly parts: Array<Uint8Array | number[]> = [];
  length = 0;
  constructor(private readonly seq: number) {}

  u8(field: string, value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xff) this.fail(field, `u8 out of range: ${value}`);
    this.parts.push([value]);
    this.length += 1;
    return this;
  }
  u32(field: string, value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) this.fail(field, `u32 out of range: ${value}`);
    this.parts.push([value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff]);
    this.length += 4;
    return this;
  }
  bytes(field: string, value: Uint8Array): this {
    if (!(value instanceof Uint8Array)) this.fail(field, 'not a Uint8Array');
    this.u32(field, value.length);
    this.parts.push(value);
    this.length += value.length;
    return this;
  }
  writeInto(out: Uint8Array, pos: number): void {
    for (const part of this.parts) {
      out.set(part, pos);
      pos += part.length;
    }
  }
  fail(field: string, problem: string): never {
    throw new RecordEncodeError(this.seq, field, problem);
  }
}

function writePayload(r: LogRecord, w: PayloadWriter): void {
  switch (r.kind) {
    case RecordKind.RUN_STARTED:
      w.bytes('runId', r.runId).bytes('workflow', r.workflow).bytes('version', r.version)
        .bytes('fingerprint', r.fingerprint).bytes('definition', r.definition).u32('nodes.length', r.nodes.length);
      r.nodes.forEach((n: NodeEntry, i) => w.bytes(`nodes[${i}].name`, n.name).u8(`nodes[${i}].kind`, n.kind));
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
    default:
      w.fail('kind', `unknown record kind ${(r as { kind: unknown }).kind}`);
  }
}

/**
 * Frame a payload: header (length, seq, version, kind, header check), payload, record CRC.
 * `version` is a parameter only so tests can build BAD_VERSION records.
 */
export function frameRecord(seq: number, kind: number, payload: Uint8Array, version = FORMAT_VERSION): Uint8Array {
  const out = new Uint8Array(FRAME_OVERHEAD + payload.length);
  writeHeader(out, seq, kind, payload.length, version);
  out.set(payload, HEADER_LEN);
  sealRecord(out);
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

function sealRecord(out: Uint8Array): void {
  const crcPos = out.length - 4;
  writeU32(out, crcPos, crc32c(out, 0, crcPos));
}

/** The bytes of one record. Throws RecordEncodeError for a value the format cannot represent. */
export function encodeRecord(r: LogRecord): Uint8Array {
  const w = new PayloadWriter(r.seq);
  if (!Number.isInteger(r.seq) || r.seq < 0 || r.seq > 0xffff_ffff) w.fail('seq', `u32 out of range: ${r.seq}`);
  writePayload(r, w);
  if (w.length > MAX_PAYLOAD_LEN) w.fail('payload', `${w.length} bytes is over the ${MAX_PAYLOAD_LEN} limit`);
  const out = new Uint8Array(FRAME_OVERHEAD + w.length);
  w.writeInto(out, HEADER_LEN);
  writeHeader(out, r.seq, r.kind, w.length, FORMAT_VERSION);
  sealRecord(out);
  return out;
}

/** The bytes of a whole log: the records' encodings concatenated (their seqs are not checked). */
export function encodeLog(records: readonly LogRecord[]): Uint8Array {
  return concatBytes(records.map(encodeRecord));
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
    default:
      return { kind: RecordKind.RUN_FAILED, seq, node: b(f.nodeStart, f.nodeEnd), code: b(f.codeStart, f.codeEnd), message: b(f.messageStart, f.messageEnd) };
  }
}

/**
 * Decode the record at `offset`. With `expectedSeq` (its position in the log) the stored seq is
 * checked (BAD_SEQ); without it, any stored seq is accepted. The record's own stored seq is what
 * the returned LogRecord carries. Damaged bytes are reported, never thrown; only an offset outside
 * 0..log.length (a caller bug) throws a RangeError.
 */
export function decodeRecordAt(log: Uint8Array, offset: number, expectedSeq = -1): DecodeStep {
  const frame = new Frame();
  const position = expectedSeq >= 0 ? expectedSeq : 0;
  if (!Number.isInteger(offset) || offset < 0 || offset > log.length) {
    throw new RangeError(`decodeRecordAt: offset ${offset} is outside the ${log.length}-byte log`);
  }
  switch (readFrame(log, offset, expectedSeq, frame)) {
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
  return { outcome: 'record', record, offset, end: frame.recordEnd };
}

/**
 * Decode a whole log: framing and payloads of docs/log-format.md (integrity steps 1-8). Ordering
 * rules (step 9) belong to the recovery core, not the codec. Never throws.
 */
export function decodeLog(log: Uint8Array): DecodedLog {
  const records: LogRecord[] = [];
  const offsets: number[] = [];
  let offset = 0;
  for (;;) {
    const step = decodeRecordAt(log, offset, records.length);
    switch (step.outcome) {
      case 'record':
        records.push(step.record);
        offsets.push(offset);
        offset = step.end;
        continue;
      case 'end':
        return { records, offsets, durableLen: offset, tornLen: 0, error: null };
      case 'torn':
        return { records, offsets, durableLen: offset, tornLen: step.tornLen, error: null };
      case 'corrupt':
        return { records, offsets, durableLen: offset, tornLen: 0, error: step.error };
    }
  }
}
