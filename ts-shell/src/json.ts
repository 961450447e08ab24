/**
 * JSON and UTF-8 helpers. Everything the shell writes into a payload is UTF-8 JSON; a value goes
 * through `toJsonValue` (stringify + parse) before anyone uses it, so a fresh run and a recovered
 * run see the very same value (a Date becomes a string in both, an undefined field is gone in both).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Strings up to this many UTF-16 units are encoded into a scratch buffer and copied out: for the
 * short texts of a step (a delta, a name) that is a fraction of the cost of `encode`, which
 * allocates through the runtime. Three bytes per unit is the most UTF-8 needs.
 */
const SCRATCH_UNITS = 16 * 1024;
const utf8Scratch = new Uint8Array(SCRATCH_UNITS * 3);

export function utf8(text: string): Uint8Array {
  if (text.length > SCRATCH_UNITS) return utf8Encoder.encode(text);
  const { written } = utf8Encoder.encodeInto(text, utf8Scratch);
  return utf8Scratch.slice(0, written);
}

/** The length of `utf8(text)`, without encoding it. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * True when `text` holds no lone UTF-16 surrogate, so UTF-8 (the log, SQLite TEXT, PostgreSQL text)
 * keeps it exactly. String.prototype.isWellFormed (ES2024, in every Node the package supports):
 * native, where a `/\p{Cs}/u` test first compiles the Unicode tables (about a millisecond).
 */
export function isWellFormedUnicode(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * `out[key] = value` as JSON.parse does it: "__proto__" too becomes an own key (a plain assignment
 * would set the object's prototype instead). For the shell's copies of JSON values.
 */
export function setOwnKey<T>(out: { [key: string]: T }, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

export function fromUtf8(bytes: Uint8Array): string {
  return utf8Decoder.decode(bytes);
}

/** The UTF-8 JSON bytes of `value` and its round-tripped copy; throws a plain Error when not JSON. */
export function encodeJson(value: unknown): { bytes: Uint8Array; text: string; value: Json } {
  const encoded = encodeJsonText(value);
  return { bytes: utf8(encoded.text), text: encoded.text, value: encoded.value };
}

/** encodeJson without the bytes (for a caller that may not need them). */
export function encodeJsonText(value: unknown): { text: string; value: Json } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new Error(error instanceof Error ? error.message : String(error));
  }
  if (text === undefined) throw new Error(value === undefined ? 'undefined has no JSON form (pass null for "no value", with a schema that accepts null)' : `${typeof value} has no JSON form`);
  return { text, value: JSON.parse(text) as Json };
}

/** The JSON text of a value that is JSON already (no check, no round trip), as UTF-8. */
export function jsonBytes(value: Json): Uint8Array {
  return utf8(JSON.stringify(value));
}

export function decodeJson(bytes: Uint8Array): Json {
  return JSON.parse(fromUtf8(bytes)) as Json;
}

/**
 * JSON with object keys sorted at every depth: the same value always gives the same text. A key
 * named `__proto__` is kept like any other (`dropProtoKeys` reproduces the first releases' text,
 * which lost it: the fingerprints of descriptor format 1 were computed from that text).
 */
export function canonicalJson(value: unknown, options: { dropProtoKeys?: boolean } = {}): string {
  return JSON.stringify(sortKeys(value, options.dropProtoKeys === true));
}

function sortKeys(value: unknown, dropProtoKeys: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => sortKeys(v, dropProtoKeys));
  if (value !== null && typeof value === 'object') {
    // A null prototype: assigning `__proto__` makes an own key instead of setting the prototype.
    const out: Record<string, unknown> = Object.create(null);
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined || (dropProtoKeys && key === '__proto__')) continue;
      out[key] = sortKeys(v, dropProtoKeys);
    }
    return out;
  }
  return value;
}

export function isPlainObject(value: unknown): value is { [key: string]: Json } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Structural equality of two JSON values. */
export function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i]!, b[i]!)) return false;
    return true;
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const keysA = Object.keys(a);
    if (keysA.length !== Object.keys(b).length) return false;
    for (const key of keysA) {
      if (!Object.prototype.hasOwnProperty.call(b, key) || !jsonEqual(a[key]!, b[key]!)) return false;
    }
    return true;
  }
  return false;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
