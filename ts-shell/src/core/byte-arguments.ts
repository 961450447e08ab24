/**
 * Both cores take bytes (Uint8Array, Buffer) and are total on them. Anything else is refused the
 * same way by both, before either runs, with an ArgumentInvalidError naming the argument: null, a
 * string, an ArrayBuffer, a plain array, an object that only looks like a Uint8Array
 * (`Object.create(Uint8Array.prototype)`, a forged Symbol.toStringTag), a view over a detached or
 * out-of-bounds buffer, and bytes too many for the Wasm core's linear memory (over
 * MAX_CORE_ARGUMENT_BYTES in one call). The Wasm core would otherwise fail in its copy into linear
 * memory, and the two cores would answer such inputs differently.
 *
 * What a core receives is a fresh Uint8Array over the argument's bytes, its buffer, offset and
 * length read by the intrinsic %TypedArray% getters, never by the object's own (possibly
 * overridden) `length`, `byteOffset` or `buffer`: a subclass cannot lie about its size. Bytes in a
 * SharedArrayBuffer are copied once: another thread may rewrite them during the call, and the
 * reference core reads its input more than once (it re-read bytes it had validated, and could loop
 * for minutes on a log rewritten under it); the Wasm core copies into linear memory anyway.
 */

import { ArgumentInvalidError } from '../errors.js';
import type { AdmissionRequest, RecoveryCore } from './types.js';

/**
 * The most bytes one call of a core takes, all its byte arguments together: 2 GiB. The Wasm core
 * (wasm32) has at most 4 GiB of linear memory, which must hold the arguments, the core's own data
 * and the encoded result; 2 GiB leaves it room. Both cores refuse more with ArgumentInvalidError
 * (the reference could answer, but the two must not differ). Every log REMIT writes is far smaller:
 * a store hands the core its log in chunks through feed.
 */
export const MAX_CORE_ARGUMENT_BYTES = 2 ** 31;

const typedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype) as object;
function intrinsicGetter(name: string | symbol): (this: unknown) => unknown {
  const get = Object.getOwnPropertyDescriptor(typedArrayPrototype, name)?.get;
  if (get === undefined) throw new Error(`%TypedArray%.prototype.${String(name)} has no getter`);
  return get;
}
/** The internal [[TypedArrayName]]: 'Uint8Array' for a genuine one (subclasses too), undefined for a fake. */
const tagOf = intrinsicGetter(Symbol.toStringTag);
const bufferOf = intrinsicGetter('buffer') as (this: Uint8Array) => ArrayBufferLike;
const byteOffsetOf = intrinsicGetter('byteOffset') as (this: Uint8Array) => number;
const lengthOf = intrinsicGetter('length') as (this: Uint8Array) => number;
/**
 * %TypedArray%.prototype.at: it validates its receiver first (ValidateTypedArray), throwing a
 * TypeError for a view over a detached buffer or out of the bounds of a shrunk resizable one,
 * which the getters above do not: they read such a view as 0 bytes at offset 0. It allocates nothing.
 */
const validatedAt = (typedArrayPrototype as { at: (this: Uint8Array, index: number) => unknown }).at;

const NOT_A_UINT8ARRAY = 'not a Uint8Array';
const DETACHED = 'a Uint8Array over a detached or out-of-bounds buffer';

/**
 * A fresh view over the bytes `value` really has (its buffer, offset and length read by the
 * intrinsic getters: a subclass cannot lie about them), or what is wrong with it: not a genuine
 * Uint8Array, or one over a detached or out-of-bounds buffer. Never a copy: shared bytes stay shared.
 * For the encoders' byte fields (codec.ts, encoding.ts) and, through bytesArgument, the cores.
 */
export function genuineBytes(value: unknown): Uint8Array | typeof NOT_A_UINT8ARRAY | typeof DETACHED {
  if (tagOf.call(value) !== 'Uint8Array') return NOT_A_UINT8ARRAY;
  const view = value as Uint8Array;
  try {
    // Throws on a detached view and on one out of bounds of a shrunk resizable buffer (TypeError):
    // both read as 0 bytes at offset 0 below, so `new Uint8Array(buffer, 0, 0)` alone took an
    // out-of-bounds view for an empty log. The constructor throws on a detached buffer too.
    validatedAt.call(view, 0);
    return new Uint8Array(bufferOf.call(view), byteOffsetOf.call(view), lengthOf.call(view));
  } catch {
    return DETACHED;
  }
}

/** `word` after "a", or "an" before a vowel sound (as display.ts's withArticle; the core imports only itself and errors.ts). */
function withArticle(word: string): string {
  return `${/^(?:[aeio]|u(?!ni|int|s[eu]))/i.test(word) ? 'an' : 'a'} ${word}`;
}

/** What an argument is, for the message of an ArgumentInvalidError (`null`, `a bigint`, `an array`, `a Map`). */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value !== 'object') return withArticle(typeof value);
  let looksLikeOne = false;
  let name: unknown;
  try {
    looksLikeOne = value instanceof Uint8Array;
    name = (value as object).constructor?.name;
  } catch {
    name = undefined;
  }
  if (looksLikeOne) return 'an object that only looks like a Uint8Array (no typed array behind it)';
  return withArticle(typeof name === 'string' && name !== '' ? name : 'object');
}

/**
 * `value` as a genuine Uint8Array (a fresh view over the same bytes, a copy only of shared ones), or an
 * ArgumentInvalidError naming `operation(argument)`. `budget` is what is left of the call's
 * MAX_CORE_ARGUMENT_BYTES.
 */
export function bytesArgument(operation: string, argument: string, value: unknown, budget = MAX_CORE_ARGUMENT_BYTES): Uint8Array {
  const name = `${operation}(${argument})`;
  const fresh = genuineBytes(value);
  if (fresh === NOT_A_UINT8ARRAY) throw new ArgumentInvalidError(name, 'a Uint8Array', describe(value));
  if (fresh === DETACHED) throw new ArgumentInvalidError(name, 'a Uint8Array', DETACHED);
  const length = fresh.length;
  const buffer = fresh.buffer;
  if (length > budget) {
    throw new ArgumentInvalidError(name, `a Uint8Array of at most ${MAX_CORE_ARGUMENT_BYTES} bytes (all the call's byte arguments together)`,
      `${length} bytes${budget < MAX_CORE_ARGUMENT_BYTES ? ` with ${MAX_CORE_ARGUMENT_BYTES - budget} in the arguments before it` : ''}`);
  }
  return isShared(buffer) ? fresh.slice() : fresh;
}

/**
 * `value` when it is an integer from `min` to `max`, else an ArgumentInvalidError naming
 * `operation(argument)`: an offset, seq or byte given to a helper of remit/core beside its bytes
 * (`crc32c(bytes, start, end)`, `frameRecord(seq, kind, ...)`), which would otherwise be read as
 * another number (a seq of -1 written as 4294967295, a kind of 300 as 44) or past the bytes' end.
 */
export function integerArgument(operation: string, argument: string, value: unknown, min: number, max: number, meaning = ''): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  const got = typeof value === 'number' ? String(value) : typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : describe(value);
  throw new ArgumentInvalidError(`${operation}(${argument})`, `an integer from ${min} to ${max}${meaning}`, got);
}

function isShared(buffer: ArrayBufferLike): boolean {
  return typeof SharedArrayBuffer === 'function' && buffer instanceof SharedArrayBuffer;
}

/**
 * A typed request read once into a fresh object, its interruptId a genuine Uint8Array or, when it
 * is not one (a fake, a detached view), null: a request every core refuses as BAD_REQUEST, the
 * same way. Anything else is passed on for the core to judge.
 */
function requestArgument(request: AdmissionRequest): AdmissionRequest {
  if (request === null || typeof request !== 'object') return request;
  const tag = (request as { tag?: unknown }).tag;
  if (tag === 'RESUME') {
    let interruptId: Uint8Array | null;
    try {
      interruptId = bytesArgument('admit', 'request.interruptId', (request as { interruptId?: unknown }).interruptId);
    } catch {
      interruptId = null;
    }
    return { tag, interruptId: interruptId as Uint8Array };
  }
  if (tag === 'FORK_AT' || tag === 'CONTINUE_FROM') return { tag, seq: (request as { seq: number }).seq };
  return request;
}

/**
 * `core` with its byte arguments checked, and given as genuine Uint8Arrays (requests given as
 * objects are the core's to judge, read once by requestArgument).
 */
export function withByteArguments(core: RecoveryCore): RecoveryCore {
  const one = (operation: string, argument: string, value: unknown) => bytesArgument(operation, argument, value);
  const two = (operation: string, first: string, a: unknown, second: string, b: unknown): [Uint8Array, Uint8Array] => {
    const x = bytesArgument(operation, first, a);
    return [x, bytesArgument(operation, second, b, MAX_CORE_ARGUMENT_BYTES - x.length)];
  };
  return {
    name: core.name,
    recover: (log) => core.recover(one('recover', 'log', log)),
    // The request first: reading it runs the caller's getters, which could detach or shrink the
    // log's buffer after its check (the Wasm core's copy then failed as a CoreTrapError while the
    // reference read no bytes). After the bytes are checked no code of the caller runs.
    admit: (log, request) => {
      const checked = requestArgument(request);
      return core.admit(one('admit', 'log', log), checked);
    },
    recoverEncoded: (log) => core.recoverEncoded(one('recoverEncoded', 'log', log)),
    admitEncoded: (log, request) => core.admitEncoded(...two('admitEncoded', 'log', log, 'request', request)),
    feed: (summary, chunk) => core.feed(...two('feed', 'summary', summary, 'chunk', chunk)),
    admitFrom: (summary, request) => {
      const checked = requestArgument(request);
      return core.admitFrom(one('admitFrom', 'summary', summary), checked);
    },
    feedEncoded: (summary, chunk) => core.feedEncoded(...two('feedEncoded', 'summary', summary, 'chunk', chunk)),
    admitFromEncoded: (summary, request) => core.admitFromEncoded(...two('admitFromEncoded', 'summary', summary, 'request', request)),
  };
}
