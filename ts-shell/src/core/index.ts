/**
 * `remit/core`: the recovery core on its own, for services that embed it and for equivalence
 * fuzzing. One factory, the types, the codec and the encodings. Both cores implement
 * docs/core-api.md; the Wasm core is the default.
 */

import { ArgumentInvalidError, CoreUnavailableError } from '../errors.js';
import { reference } from './reference-core.js';
import { loadWasmCore } from './wasm-core.js';
import { checkedAdmission, checkedFed, checkedRecovery } from './answer-fields.js';
import { bytesArgument, describe, integerArgument } from './byte-arguments.js';
import * as codec from './codec.js';
import type { ChainContext, DecodeStep, DecodedLog } from './codec.js';
import * as crc from './crc32c.js';
import * as encoding from './encoding.js';
import * as framing from './framing.js';
import { FORMAT_VERSION_1 } from './framing.js';
import type { Admission, AdmissionRequest, Fed, LogRecord, Recovery, RecoveryCore } from './types.js';

export type CoreKind = 'wasm' | 'reference';

/**
 * A recovery core. 'wasm' (default) loads the component from @remit/core-wasm and throws
 * CoreUnavailableError, saying how to fix it, when that fails: it never falls back silently.
 * 'reference' is the pure-TypeScript core.
 */
export async function createCore(kind: CoreKind = 'wasm'): Promise<RecoveryCore> {
  if (kind === 'reference') return reference;
  if (kind === 'wasm') return loadWasmCore();
  // Not a name at all (createRemit refuses such a `core` option the same way, OptionInvalidError):
  // before, a BigInt made the message's JSON.stringify throw a bare TypeError, and an object was
  // "the [object Object] recovery core".
  if (typeof kind !== 'string') throw new ArgumentInvalidError('createCore(kind)', '"wasm" or "reference" (or nothing: "wasm")',
    typeof kind === 'number' || typeof kind === 'boolean' ? String(kind) : describe(kind));
  throw new CoreUnavailableError(String(kind), 'UNKNOWN_CORE', `unknown core kind ${JSON.stringify(kind)}: expected "wasm" or "reference"`);
}

export * from './types.js';
export {
  logDecodeError, LogErrorName, RecordEncodeError, type DecodeStep, type DecodedLog, type LogDecodeError, type ChainContext,
} from './codec.js';
export { isWellFormedRequest, EncodingError, AdmissionRequestError } from './encoding.js';
export {
  MAX_NAME_LEN, MAX_NODE_COUNT, MAX_PAYLOAD_LEN, FORMAT_VERSION, FORMAT_VERSION_1, FORMAT_VERSION_2,
} from './framing.js';
// The errors remit/core's functions throw beside the ones above, so that a user of the core alone
// can catch them by class (the same classes remit exports).
export { ArgumentInvalidError, CoreUnavailableError, OptionInvalidError, RemitError, type CoreUnavailableReason } from '../errors.js';
export { CoreOutOfMemoryError, CoreTrapError } from './wasm-core.js';
export { reference, createReferenceCore, type ReferenceCanary, type ReferenceCoreTestOptions } from './reference-core.js';
export {
  loadWasmCore, wasmCoreFromExports, wasmCoreModuleUrl, RENEW_INSTANCE_ABOVE_BYTES, RENEW_INSTANCE_AFTER_IDLE_MS,
  type WasmBinding, type LoadWasmCoreOptions, type WasmCoreExports,
} from './wasm-core.js';
export { MAX_CORE_ARGUMENT_BYTES } from './byte-arguments.js';

// Every function of remit/core that takes bytes checks them as the cores do (docs/core-api.md):
// anything that is not a genuine Uint8Array (null, a string, an ArrayBuffer, a fake, a view over a
// detached buffer) is refused with ArgumentInvalidError naming the call and parameter, instead of
// an answer about something else (crc32c('123456789') read as no bytes, decodeLog('...') as
// BAD_HEADER, recover('abc') as a torn tail of 3).

const U32_MAX = 0xffff_ffff;

/** Checked bytes for a helper that is not a core call (no MAX_CORE_ARGUMENT_BYTES: it never enters Wasm). */
const bytesOf = (operation: string, argument: string, value: unknown) => bytesArgument(operation, argument, value, Number.POSITIVE_INFINITY);

/** recover(log) of docs/core-api.md, by the reference core (bytes checked: ArgumentInvalidError). */
export function recover(log: Uint8Array): Recovery {
  return reference.recover(log);
}
/** feed(summary, chunk) of docs/core-api.md, by the reference core (bytes checked). */
export function feed(summary: Uint8Array, chunk: Uint8Array): Fed {
  return reference.feed(summary, chunk);
}
/** admit(log, request) of docs/core-api.md, by the reference core (bytes checked). */
export function admit(log: Uint8Array, request: AdmissionRequest): Admission {
  return reference.admit(log, request);
}

export function decodeRecordAt(log: Uint8Array, offset: number, expectedSeq = -1, context?: ChainContext): DecodeStep {
  const bytes = bytesOf('decodeRecordAt', 'log', log);
  integerArgument('decodeRecordAt', 'offset', offset, 0, bytes.length, ' (a byte offset in the log)');
  integerArgument('decodeRecordAt', 'expectedSeq', expectedSeq, -1, U32_MAX, ' (the seq expected at the offset; -1: any)');
  return codec.decodeRecordAt(bytes, offset, expectedSeq, chainContextOf(context));
}
/**
 * decodeRecordAt's context, read once: undefined (no link or format-order check), or a u32
 * prevChain and a boolean v2Seen. Anything else is ArgumentInvalidError: a prevChain of -1 (the
 * codec's "no chain") or a context that is not an object switched the link check off silently,
 * and a prevChain of 2^32 + c was read as c.
 */
function chainContextOf(context: unknown): ChainContext | undefined {
  if (context === undefined) return undefined;
  if (context === null || typeof context !== 'object') {
    throw new ArgumentInvalidError('decodeRecordAt(context)', 'a ChainContext ({ prevChain, v2Seen }) or nothing', describe(context));
  }
  const { prevChain, v2Seen } = context as Partial<ChainContext>;
  integerArgument('decodeRecordAt', 'context.prevChain', prevChain, 0, U32_MAX, ' (the chain value of the record before, chainOf)');
  if (typeof v2Seen !== 'boolean') throw new ArgumentInvalidError('decodeRecordAt(context.v2Seen)', 'a boolean', describe(v2Seen));
  return { prevChain: prevChain as number, v2Seen };
}
export function decodeLog(log: Uint8Array): DecodedLog {
  return codec.decodeLog(bytesOf('decodeLog', 'log', log));
}
export function frameRecord(seq: number, kind: number, payload: Uint8Array, version = FORMAT_VERSION_1, prevChain = 0): Uint8Array {
  integerArgument('frameRecord', 'seq', seq, 0, U32_MAX);
  integerArgument('frameRecord', 'kind', kind, 0, 255, ' (a byte)');
  const bytes = bytesOf('frameRecord', 'payload', payload);
  integerArgument('frameRecord', 'version', version, 0, 255, ' (a byte: 1 or 2, another only to build a BAD_VERSION record)');
  integerArgument('frameRecord', 'prevChain', prevChain, 0, U32_MAX, ' (the chain value of the record before, chainOf)');
  return codec.frameRecord(seq, kind, bytes, version, prevChain);
}
export function chainOf(record: Uint8Array): number {
  const bytes = bytesOf('chainOf', 'record', record);
  // A chain value is a record's last 4 bytes: fewer than 4 were read from before the first byte.
  if (bytes.length < 4) throw new ArgumentInvalidError('chainOf(record)', 'a framed record (at least its 4-byte chain value)', `${bytes.length} bytes`);
  return codec.chainOf(bytes);
}
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (!Array.isArray(parts)) bytesOf('concatBytes', 'parts', parts); // throws: names what it got
  return codec.concatBytes(parts.map((part, i) => bytesOf('concatBytes', `parts[${i}]`, part)));
}
// The encoders check that what they are given is an object (an array of them for a log) with
// ArgumentInvalidError, as the decoders check their bytes: encodeRecord(null) was a bare TypeError
// ("Cannot read properties of null"). What is inside is theirs to refuse (RecordEncodeError,
// AdmissionRequestError).

export function encodeRecord(record: LogRecord): Uint8Array {
  return codec.encodeRecord(objectOf('encodeRecord', 'record', record, A_RECORD));
}
export function encodeRecordV2(record: LogRecord, prevChain: number): Uint8Array {
  return codec.encodeRecordV2(objectOf('encodeRecordV2', 'record', record, A_RECORD), prevChain);
}
export function encodeLog(records: readonly LogRecord[]): Uint8Array {
  return codec.encodeLog(recordsOf('encodeLog', records));
}
export function encodeLogV2(records: readonly LogRecord[], prevChain = 0): Uint8Array {
  return codec.encodeLogV2(recordsOf('encodeLogV2', records), prevChain);
}
export function encodeAdmissionRequest(request: AdmissionRequest): Uint8Array {
  return encoding.encodeAdmissionRequest(objectOf('encodeAdmissionRequest', 'request', request, 'an AdmissionRequest ({ tag, ... })'));
}
// The answers' encoders check every field (answer-fields.ts): a field out of its range or not
// genuine bytes is ArgumentInvalidError naming it, never written masked or as other bytes.
export function encodeRecovery(recovery: Recovery): Uint8Array {
  return encoding.encodeRecovery(checkedRecovery('encodeRecovery', 'recovery', recovery));
}
export function encodeAdmission(admission: Admission): Uint8Array {
  return encoding.encodeAdmission(checkedAdmission('encodeAdmission', admission));
}
export function encodeFed(fed: Fed): Uint8Array {
  return encoding.encodeFed(checkedFed('encodeFed', fed));
}

const A_RECORD = 'a LogRecord ({ kind, seq, ... })';

function objectOf<T>(operation: string, argument: string, value: T, expected: string): T {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ArgumentInvalidError(`${operation}(${argument})`, expected, describe(value));
  return value;
}
function recordsOf(operation: string, records: readonly LogRecord[]): readonly LogRecord[] {
  if (!Array.isArray(records)) throw new ArgumentInvalidError(`${operation}(records)`, 'an array of LogRecords', describe(records));
  records.forEach((record, i) => objectOf(operation, `records[${i}]`, record, A_RECORD));
  return records;
}

export function decodeRecovery(bytes: Uint8Array): Recovery {
  return encoding.decodeRecovery(bytesOf('decodeRecovery', 'bytes', bytes));
}
export function parseAdmissionRequest(bytes: Uint8Array): AdmissionRequest | null {
  return encoding.parseAdmissionRequest(bytesOf('parseAdmissionRequest', 'bytes', bytes));
}
export function decodeAdmission(bytes: Uint8Array): Admission {
  return encoding.decodeAdmission(bytesOf('decodeAdmission', 'bytes', bytes));
}
export function decodeFed(bytes: Uint8Array): Fed {
  return encoding.decodeFed(bytesOf('decodeFed', 'bytes', bytes));
}
export function crc32c(bytes: Uint8Array, start = 0, end?: number): number {
  const checked = bytesOf('crc32c', 'bytes', bytes);
  const [from, to] = byteRange('crc32c', checked, start, end ?? checked.length);
  return crc.crc32c(checked, from, to);
}
export function crc32cUpdate(value: number, bytes: Uint8Array, start: number, end: number): number {
  integerArgument('crc32cUpdate', 'value', value, 0, U32_MAX, ' (0xFFFFFFFF to begin, then what crc32cUpdate returned)');
  const checked = bytesOf('crc32cUpdate', 'bytes', bytes);
  const [from, to] = byteRange('crc32cUpdate', checked, start, end);
  return crc.crc32cUpdate(value, checked, from, to);
}
export function chainValueBefore(log: Uint8Array, recordEnd: number): number {
  const bytes = bytesOf('chainValueBefore', 'log', log);
  // The four bytes before recordEnd are the previous record's trailer: an end of 1 to 3 has none.
  if (recordEnd !== 0 && bytes.length < 4) {
    // No record of the log can end anywhere: "an integer from 4 to 3" said nothing.
    const got = typeof recordEnd === 'number' ? String(recordEnd) : describe(recordEnd);
    throw new ArgumentInvalidError('chainValueBefore(recordEnd)', `0 (the log's ${bytes.length} bytes hold no whole record)`, got);
  }
  if (recordEnd !== 0) integerArgument('chainValueBefore', 'recordEnd', recordEnd, 4, bytes.length, ' (where a record of the log ends; 0 before the first)');
  return framing.chainValueBefore(bytes, recordEnd);
}
/**
 * The format-2 link of a record (docs/log-format.md): both arguments are u32s. Before, anything
 * else was written as some u32 (linkOf('a', 'b') answered a checksum of zeros, -1 was 4294967295).
 */
export function linkOf(prevChain: number, recordCrc: number): number {
  integerArgument('linkOf', 'prevChain', prevChain, 0, U32_MAX, ' (the chain value of the record before, chainOf)');
  integerArgument('linkOf', 'recordCrc', recordCrc, 0, U32_MAX, " (the record's record_crc)");
  return framing.linkOf(prevChain, recordCrc);
}

/** `[start, end)` checked to lie within `bytes` (start <= end), for the CRC helpers. */
function byteRange(operation: string, bytes: Uint8Array, start: unknown, end: unknown): [number, number] {
  const from = integerArgument(operation, 'start', start, 0, bytes.length, ' (a byte offset in bytes)');
  return [from, integerArgument(operation, 'end', end, from, bytes.length, ' (a byte offset in bytes, not before start)')];
}
