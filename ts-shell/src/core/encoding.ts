/**
 * The canonical byte encodings of docs/core-api.md, "Encodings": recovery, admission request and
 * admission, to and from the types of types.ts. Both cores' `*Encoded` functions produce exactly
 * these bytes; the Wasm adapter decodes them with this module.
 */

import { genuineBytes } from './byte-arguments.js';
import { MAX_NAME_LEN, readU32 } from './framing.js';
import {
  ActionTag, AdmissionRequestTag, RunStatus,
  type Admission, type AdmissionRequest, type EffectNodeStatus, type ForkLink, type LogErrorCode,
  type NextAction, type Recovery, type RecoveredRun, type RefusalReason, type RunFailure, type RunStatus as RunStatusT,
  type EffectStatus, type Fed,
} from './types.js';

/** Bytes that are not a valid encoding; names what and where. */
export class EncodingError extends Error {
  override readonly name = 'EncodingError';
  constructor(readonly encoding: string, readonly offset: number, readonly problem: string) {
    super(`invalid ${encoding} encoding at byte ${offset}: ${problem}`);
  }
}

// ---------------------------------------------------------------- writer / reader

/** A growable little-endian writer (also used by the reference core's summary encoder). */
export class ByteWriter {
  private buf: Uint8Array;
  length = 0;
  constructor(initialCapacity = 256) {
    this.buf = new Uint8Array(initialCapacity);
  }
  private reserve(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.length + extra) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }
  u8(v: number): this {
    this.reserve(1);
    this.buf[this.length++] = v & 0xff;
    return this;
  }
  u32(v: number): this {
    this.reserve(4);
    const b = this.buf;
    let i = this.length;
    b[i++] = v & 0xff; b[i++] = (v >>> 8) & 0xff; b[i++] = (v >>> 16) & 0xff; b[i++] = (v >>> 24) & 0xff;
    this.length = i;
    return this;
  }
  bytes(v: Uint8Array): this {
    this.u32(v.length);
    this.reserve(v.length);
    this.buf.set(v, this.length);
    this.length += v.length;
    return this;
  }
  /** A `bytes` field whose content is `src[start..end)`. */
  bytesRange(src: Uint8Array, start: number, end: number): this {
    return this.bytes(src.subarray(start, end));
  }
  /** Raw bytes, no length prefix. */
  raw(v: Uint8Array): this {
    this.reserve(v.length);
    this.buf.set(v, this.length);
    this.length += v.length;
    return this;
  }
  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

class ByteReader {
  pos = 0;
  constructor(private readonly bytes: Uint8Array, private readonly encoding: string) {}
  fail(problem: string): never {
    throw new EncodingError(this.encoding, this.pos, problem);
  }
  u8(): number {
    if (this.pos + 1 > this.bytes.length) this.fail('ends inside a u8');
    return this.bytes[this.pos++]!;
  }
  u32(): number {
    if (this.pos + 4 > this.bytes.length) this.fail('ends inside a u32');
    const v = readU32(this.bytes, this.pos);
    this.pos += 4;
    return v;
  }
  bytesField(): Uint8Array {
    const len = this.u32();
    if (this.pos + len > this.bytes.length) this.fail(`bytes of length ${len} run past the end`);
    const v = this.bytes.slice(this.pos, this.pos + len);
    this.pos += len;
    return v;
  }
  end(): void {
    if (this.pos !== this.bytes.length) this.fail(`${this.bytes.length - this.pos} trailing bytes`);
  }
}

// ---------------------------------------------------------------- recovery

function writeAction(w: ByteWriter, a: NextAction): void {
  w.u8(ActionTag[a.tag]);
  switch (a.tag) {
    case 'NONE': case 'FINISH_RUN': return;
    case 'RUN_PURE': case 'BEGIN_EFFECT': case 'PARK': w.bytes(a.node); return;
    case 'INVOKE_EFFECT': w.bytes(a.node).bytes(a.key).u32(a.intentSeq).u32(a.nextAttempt); return;
    case 'FINISH_EFFECT': w.bytes(a.node).bytes(a.key).u32(a.doneSeq).u32(a.doneOffset); return;
    case 'AWAIT_RESUME': w.bytes(a.node).bytes(a.interruptId).u32(a.parkedSeq); return;
    case 'FINISH_INTERRUPT': w.bytes(a.node).bytes(a.interruptId).u32(a.claimSeq).u32(a.claimOffset); return;
    case 'AWAIT_ATTEMPT':
      w.bytes(a.node).bytes(a.key).u32(a.intentSeq).u32(a.attempt).u32(a.attemptSeq).u32(a.attemptOffset);
      return;
  }
}

export function encodeRecovery(r: Recovery): Uint8Array {
  if (!r.ok) return new ByteWriter(11).u8(0).u8(r.code).u32(r.seq).u32(r.offset).u8(r.kind).finish();
  const w = new ByteWriter();
  w.u8(1).u8(r.status).u32(r.recordCount).u32(r.durableLen).u32(r.tornLen);
  w.bytes(r.runId).bytes(r.workflow).bytes(r.version).bytes(r.fingerprint);
  w.u32(r.checkpointSeq).u32(r.checkpointOffset).u32(r.snapshotSeq).u32(r.snapshotOffset);
  writeAction(w, r.action);
  w.u32(r.effects.length);
  for (const e of r.effects) w.bytes(e.node).u8(e.status).u32(e.doneCount).u32(e.attempts);
  w.u32(r.interruptsParked).u32(r.interruptsClaimed);
  w.u32(r.lineage.length);
  for (const l of r.lineage) w.bytes(l.sourceRunId).u32(l.sourceSeq).bytes(l.runId).u32(l.forkSeq).bytes(l.intent);
  if (r.status === RunStatus.FAILED) {
    const f = r.failure ?? { node: new Uint8Array(0), code: new Uint8Array(0), message: new Uint8Array(0) };
    w.bytes(f.node).bytes(f.code).bytes(f.message);
  }
  return w.finish();
}

function readAction(rd: ByteReader): NextAction {
  const tag = rd.u8();
  switch (tag) {
    case ActionTag.NONE: return { tag: 'NONE' };
    case ActionTag.RUN_PURE: return { tag: 'RUN_PURE', node: rd.bytesField() };
    case ActionTag.BEGIN_EFFECT: return { tag: 'BEGIN_EFFECT', node: rd.bytesField() };
    case ActionTag.INVOKE_EFFECT:
      return { tag: 'INVOKE_EFFECT', node: rd.bytesField(), key: rd.bytesField(), intentSeq: rd.u32(), nextAttempt: rd.u32() };
    case ActionTag.FINISH_EFFECT:
      return { tag: 'FINISH_EFFECT', node: rd.bytesField(), key: rd.bytesField(), doneSeq: rd.u32(), doneOffset: rd.u32() };
    case ActionTag.PARK: return { tag: 'PARK', node: rd.bytesField() };
    case ActionTag.AWAIT_RESUME:
      return { tag: 'AWAIT_RESUME', node: rd.bytesField(), interruptId: rd.bytesField(), parkedSeq: rd.u32() };
    case ActionTag.FINISH_INTERRUPT:
      return { tag: 'FINISH_INTERRUPT', node: rd.bytesField(), interruptId: rd.bytesField(), claimSeq: rd.u32(), claimOffset: rd.u32() };
    case ActionTag.FINISH_RUN: return { tag: 'FINISH_RUN' };
    case ActionTag.AWAIT_ATTEMPT:
      return {
        tag: 'AWAIT_ATTEMPT', node: rd.bytesField(), key: rd.bytesField(), intentSeq: rd.u32(), attempt: rd.u32(),
        attemptSeq: rd.u32(), attemptOffset: rd.u32(),
      };
    default: return rd.fail(`unknown action tag ${tag}`);
  }
}

/** Decode a recovery encoding. Throws EncodingError when the bytes are not one. */
export function decodeRecovery(bytes: Uint8Array): Recovery {
  const rd = new ByteReader(bytes, 'recovery');
  const ok = rd.u8();
  if (ok === 0) {
    const code = rd.u8();
    if (code < 1 || code > 12) rd.fail(`unknown error code ${code}`);
    const err = { ok: false as const, code: code as LogErrorCode, seq: rd.u32(), offset: rd.u32(), kind: rd.u8() };
    rd.end();
    return err;
  }
  if (ok !== 1) rd.fail(`ok byte ${ok} is neither 0 nor 1`);
  const status = rd.u8();
  if (status > RunStatus.FAILED) rd.fail(`unknown status ${status}`);
  const run: RecoveredRun = {
    ok: true, status: status as RunStatusT, recordCount: rd.u32(), durableLen: rd.u32(), tornLen: rd.u32(),
    runId: rd.bytesField(), workflow: rd.bytesField(), version: rd.bytesField(), fingerprint: rd.bytesField(),
    checkpointSeq: rd.u32(), checkpointOffset: rd.u32(), snapshotSeq: rd.u32(), snapshotOffset: rd.u32(),
    action: readAction(rd), effects: [], interruptsParked: 0, interruptsClaimed: 0, lineage: [],
  };
  const effectCount = rd.u32();
  for (let i = 0; i < effectCount; i++) {
    const node = rd.bytesField();
    const st = rd.u8();
    if (st > 2) rd.fail(`unknown effect status ${st}`);
    run.effects.push({ node, status: st as EffectStatus, doneCount: rd.u32(), attempts: rd.u32() } satisfies EffectNodeStatus);
  }
  run.interruptsParked = rd.u32();
  run.interruptsClaimed = rd.u32();
  const lineageCount = rd.u32();
  for (let i = 0; i < lineageCount; i++) {
    run.lineage.push({
      sourceRunId: rd.bytesField(), sourceSeq: rd.u32(), runId: rd.bytesField(), forkSeq: rd.u32(), intent: rd.bytesField(),
    } satisfies ForkLink);
  }
  if (status === RunStatus.FAILED) {
    run.failure = { node: rd.bytesField(), code: rd.bytesField(), message: rd.bytesField() } satisfies RunFailure;
  }
  rd.end();
  return run;
}

// ---------------------------------------------------------------- admission requests

/** Thrown by encodeAdmissionRequest for a request the encoding cannot hold. */
export class AdmissionRequestError extends Error {
  override readonly name = 'AdmissionRequestError';
  constructor(readonly field: string, readonly problem: string) {
    super(`invalid admission request: ${field}: ${problem}`);
  }
}

function isU32(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 0xffff_ffff;
}

/**
 * A request's canonical bytes. Throws AdmissionRequestError for a seq that is not a u32 or an id
 * that is not a Uint8Array (an empty or over-long id is encodable; the core refuses it).
 */
export function encodeAdmissionRequest(req: AdmissionRequest): Uint8Array {
  switch (req.tag) {
    case 'RESUME':
    {
      // As the encoders' fields (codec.ts): the bytes it really has; a detached view was a bare TypeError.
      const id = genuineBytes(req.interruptId);
      if (typeof id === 'string') throw new AdmissionRequestError('interruptId', id);
      return new ByteWriter(5 + id.length).u8(AdmissionRequestTag.RESUME).bytes(id).finish();
    }
    case 'FORK_AT':
    case 'CONTINUE_FROM':
      if (!isU32(req.seq)) throw new AdmissionRequestError('seq', `not a u32: ${String(req.seq)}`);
      return new ByteWriter(5).u8(AdmissionRequestTag[req.tag]).u32(req.seq).finish();
    default:
      throw new AdmissionRequestError('tag', `unknown tag ${String((req as { tag: unknown }).tag)}`);
  }
}

/**
 * Parse request bytes the way the core does; null when the core would refuse BAD_REQUEST
 * (unknown tag, short, trailing bytes, empty or over-long id).
 */
export function parseAdmissionRequest(bytes: Uint8Array): AdmissionRequest | null {
  if (bytes.length < 1) return null;
  const tag = bytes[0];
  if (tag === AdmissionRequestTag.RESUME) {
    if (bytes.length < 5) return null;
    const len = readU32(bytes, 1);
    if (len < 1 || len > MAX_NAME_LEN || bytes.length !== 5 + len) return null;
    return { tag: 'RESUME', interruptId: bytes.slice(5) };
  }
  if (tag === AdmissionRequestTag.FORK_AT || tag === AdmissionRequestTag.CONTINUE_FROM) {
    if (bytes.length !== 5) return null;
    const seq = readU32(bytes, 1);
    return tag === AdmissionRequestTag.FORK_AT ? { tag: 'FORK_AT', seq } : { tag: 'CONTINUE_FROM', seq };
  }
  return null;
}

/**
 * Whether the core accepts this typed request's shape: what parseAdmissionRequest(encode(req))
 * would say, without throwing for unencodable values.
 */
export function isWellFormedRequest(req: AdmissionRequest): boolean {
  if (req === null || typeof req !== 'object') return false;
  switch (req.tag) {
    case 'RESUME':
      return req.interruptId instanceof Uint8Array && req.interruptId.length >= 1 && req.interruptId.length <= MAX_NAME_LEN;
    case 'FORK_AT':
    case 'CONTINUE_FROM':
      return isU32(req.seq);
    default:
      return false;
  }
}

/** Request bytes that every core refuses as BAD_REQUEST (an unknown tag). */
export const MALFORMED_REQUEST_BYTES: Uint8Array = Uint8Array.of(0);

// ---------------------------------------------------------------- admission

export const ADMISSION_LEN = 11;

export function encodeAdmission(a: Admission): Uint8Array {
  return new ByteWriter(ADMISSION_LEN).u8(a.accepted ? 1 : 2).u8(a.reason).u8(a.detail).u32(a.seq).u32(a.offset).finish();
}

export function decodeAdmission(bytes: Uint8Array): Admission {
  const rd = new ByteReader(bytes, 'admission');
  const verdict = rd.u8();
  if (verdict !== 1 && verdict !== 2) rd.fail(`verdict ${verdict} is neither 1 nor 2`);
  const reason = rd.u8();
  if (verdict === 1 ? reason !== 0 : reason < 1 || reason > 11) rd.fail(`reason ${reason} does not fit verdict ${verdict}`);
  const detail = rd.u8();
  const a: Admission = { accepted: verdict === 1, reason: reason as 0 | RefusalReason, detail, seq: rd.u32(), offset: rd.u32() };
  rd.end();
  return a;
}


// ---------------------------------------------------------------- fed (incremental recovery)

/**
 * The fed encoding of docs/core-api.md ("Incremental recovery"): `1`, the recovery encoding as a
 * `bytes` field, then the new summary (the rest); or the single byte `0` when the summary given
 * to feed is not a summary encoding.
 */
export function encodeFed(fed: Fed): Uint8Array {
  if (!fed.ok) return Uint8Array.of(0);
  return new ByteWriter(16 + fed.summary.length).u8(1).bytes(encodeRecovery(fed.recovery)).raw(fed.summary).finish();
}

/** Decode a fed encoding. Throws EncodingError when the bytes are not one. */
export function decodeFed(bytes: Uint8Array): Fed {
  const rd = new ByteReader(bytes, 'fed');
  const ok = rd.u8();
  if (ok === 0) {
    rd.end();
    return { ok: false, reason: 'BAD_SUMMARY' };
  }
  if (ok !== 1) rd.fail(`ok byte ${ok} is neither 0 nor 1`);
  const recovery = decodeRecovery(rd.bytesField());
  return { ok: true, recovery, summary: bytes.slice(rd.pos) };
}
