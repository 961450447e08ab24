/**
 * The one rule for values that reach the log (docs/guide.md, "Values in the log"): the log holds
 * what the schema returned (its output), and that value must read back as itself:
 *
 * 1. JSON-faithful: its JSON form, parsed again, is the same value (a Date would come back as a
 *    string, undefined in an array as null, NaN as null, a Map as {}: all refused);
 * 2. a fixed point of its schema: validating the stored form again succeeds and changes nothing
 *    (a transform that is not idempotent, or whose output its own schema rejects, is refused);
 * 3. nested at most MAX_VALUE_DEPTH levels deep (docs/guide.md, "Limits"): REMIT's later walks
 *    over a value (deltas, copies, comparisons, rebuilding the head) are recursive, and this bound
 *    keeps each within a fraction of Node's default stack (reason TOO_DEEP).
 *
 * So reading a value back (after a crash, in another process) never re-applies a transform to an
 * already transformed value, never fails a schema it passed and never overflows the stack in
 * REMIT's own code: a value accepted once can never wedge the run. Checked before anything is
 * appended; a refusal is a ValueUnfaithfulError naming the field and why. Values without a schema
 * (effect results, fork intents) get rules 1 and 3 only.
 */

import {
  MAX_ISSUE_MESSAGE_CHARS, MAX_QUOTED_CHARS, MAX_THROWN_CHARS, NotJsonError, RemitError, ValueUnfaithfulError, cutForMessage, describeThrown, isInstanceOf,
  namingRun, toValidationIssues, type ErrorSubject,
} from './errors.js';
import { encodeJsonText, setOwnKey, utf8, utf8Length, type Json } from './json.js';
import { constants } from 'node:buffer';
import { types } from 'node:util';
import { MAX_LOG_BYTES, MAX_PAYLOAD_LEN } from './core/framing.js';
import { encodeRecordV2, RecordEncodeError } from './core/codec.js';
import type { LogRecord } from './core/types.js';
import { kindName } from './sequencer/log-view.js';

/** What a schema must offer here: zod's safeParse (any zod type has it). */
export interface ReadBackSchema {
  safeParse(value: unknown, params?: { jitless?: boolean }): SafeParseOutcome;
}

type SafeParseOutcome = { success: true; data: unknown } | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } };

/**
 * How many validations a schema gets without zod's JIT before it uses it. At an object schema's
 * first parse zod compiles a fast path for it (generated code): about a millisecond, on the
 * critical path of a fresh process that resumes one run and validates a few values. The fast path
 * pays back only over many parses (warm, a small object takes about 3 us jitless against 0.1 us
 * compiled), so a schema's first parses go jitless and a schema used more often switches to the
 * compiled path. Both paths give the same result (zod's `jitless` parse option only turns the
 * generated code off); values.test.ts checks it.
 */
export const JITLESS_PARSES = 32;
const JITLESS = { jitless: true } as const;
const parsesSoFar = new WeakMap<ReadBackSchema, number>();

/** `schema.safeParse(value)`, jitless for the schema's first JITLESS_PARSES validations (above). */
export function validate(schema: ReadBackSchema, value: unknown, subject: ErrorSubject = {}): SafeParseOutcome {
  const count = parsesSoFar.get(schema) ?? 0;
  try {
    if (count >= JITLESS_PARSES) return schema.safeParse(value);
    parsesSoFar.set(schema, count + 1);
    return schema.safeParse(value, JITLESS);
  } catch (error) {
    // A recursive schema (z.lazy) walks a deep value recursively and can overflow the stack
    // before REMIT's own depth check sees the value: the value is refused as one the schema
    // cannot validate, naming where it is too deep.
    const path = error instanceof RangeError ? tooDeepAt(value, false) : null;
    if (path !== null) {
      const message = `nested more than ${MAX_VALUE_DEPTH} levels deep, deeper than REMIT keeps a value (docs/guide.md, "Limits"); the schema could not validate it`;
      return { success: false, error: { issues: [{ path, message }] } };
    }
    // REMIT's own refusals (a guarded schema that is asynchronous: DefinitionInvalidError) as they are.
    if (isInstanceOf(error, RemitError)) throw namingRun(error, subject);
    // Anything else thrown while validating (a getter or a Proxy trap of the value, a refinement
    // of the schema) means the value could not be validated: refused like an invalid one, so the
    // caller gets its typed error naming the run and the value, and nothing is written.
    return { success: false, error: { issues: [{ path: [], message: `the schema threw while validating the value: ${describeThrown(error)}` }] } };
  }
}

export interface DurableValue {
  /** The UTF-8 JSON bytes to write. */
  bytes: Uint8Array;
  /** The value as it reads back (equal to the validated output by rule 1). */
  value: Json;
}

/** A durable value before its UTF-8 encoding: the JSON text to write and the value it reads back as. */
export interface DurableText {
  text: string;
  value: Json;
}

/**
 * Encode `output` (a schema's output, or a schemaless value) for the log, checking that it reads
 * back as itself. `what` names the value in messages ("input", "state", "resume value", ...).
 * Throws NotJsonError (no JSON form at all) or ValueUnfaithfulError; returns the bytes and the
 * value as it reads back.
 */
export function durableValue(what: string, output: unknown, schema: ReadBackSchema | null, subject: ErrorSubject, input?: unknown): DurableValue {
  const checked = durableText(what, output, schema, subject, input);
  return { bytes: utf8(checked.text), value: checked.value };
}

/**
 * durableValue with the same checks, without the UTF-8 encoding: for a caller that writes the
 * bytes only sometimes (a step's state, written as a snapshot only when the policy says so).
 */
export function durableText(what: string, output: unknown, schema: ReadBackSchema | null, subject: ErrorSubject, input?: unknown): DurableText {
  const encoded = readBack(what, output, subject);
  if (schema === null) return encoded;
  // When the schema returned exactly what it was given (no transform, default or stripped key
  // changed it), validating the stored form is validating that input again: it returns the same.
  // Schemas must be deterministic, as node code must be. This skips the second validation on
  // the common path (a step that changed a few fields of a plain state).
  if (input !== undefined && isExactly(input, encoded.value)) return encoded;
  const again = validate(schema, encoded.value, subject);
  if (!again.success) {
    const issue = toValidationIssues(again.error.issues)[0]!;
    throw new ValueUnfaithfulError(
      what,
      'FAILS_SCHEMA_AGAIN',
      `${cutForMessage(issue.path, MAX_QUOTED_CHARS)}: the schema rejects its own output when it reads it back (${cutForMessage(issue.message, MAX_ISSUE_MESSAGE_CHARS)}); ` +
        'use a schema whose output it also accepts, or convert the value in node code',
      { ...subject, field: issue.path },
    );
  }
  const moved = jsonChange(again.data, encoded.value, []);
  if (moved !== null) {
    const field = pathText(moved.path);
    throw new ValueUnfaithfulError(
      what,
      'TRANSFORM_NOT_IDEMPOTENT',
      `${shownPath(moved.path)}: the schema turns the stored ${render(valueAt(encoded.value, moved.path))} into ${render(valueAt(again.data, moved.path))} ` +
        'when it reads it back (a transform that is not idempotent would be applied again at every read)',
      { ...subject, field },
    );
  }
  return encoded;
}

/**
 * How deeply objects and arrays may nest in a value written to the log: `1`, `"x"` and `null` nest
 * 0 levels, `{}` and `[]` 1, `{"a":[1]}` 2. A deeper value is refused (ValueUnfaithfulError,
 * TOO_DEEP) before anything is written. Why this bound: REMIT's walks over values are recursive
 * (computeDelta, applyDelta, jsonEqual, the copies node code gets and of its deltas, this module's
 * checks; JSON.stringify itself gives up at about 4000 levels). At 256 levels they take an eighth
 * of Node's default stack (about 1 MB) at most, measured before the JIT compiles them, a delta of
 * such a state (two levels per level of the state) included; state/delta.test.ts runs them at the
 * limit with three quarters of the stack already in use. Real documents nest a few dozen levels.
 */
export const MAX_VALUE_DEPTH = 256;

/**
 * `output`'s JSON text and the value it reads back as (rules 1 and 3 checked): from plainJsonCopy
 * when the value is plain JSON data (it nests at most MAX_PLAIN_DEPTH levels, well within
 * MAX_VALUE_DEPTH), else from the round trip itself, compared with the original.
 */
function readBack(what: string, output: unknown, subject: ErrorSubject): DurableText {
  let copy: Json | typeof NOT_PLAIN;
  try {
    copy = plainJsonCopy(output, 0);
  } catch {
    // A getter or a proxy threw: the round trip meets it again and reports it as NotJsonError.
    copy = NOT_PLAIN;
  }
  const encoded = copy !== NOT_PLAIN ? { text: stringifyPlain(what, copy, subject), value: copy } : checkedRoundTrip(what, output, subject);
  checkSize(what, encoded.text, subject);
  return encoded;
}

function stringifyPlain(what: string, copy: Json, subject: ErrorSubject): string {
  try {
    return JSON.stringify(copy);
  } catch (error) {
    if (isStringTooLong(error)) throw textTooLong(what, subject);
    throw error;
  }
}

/** V8's RangeError for a string over its maximum length (JSON.stringify's result, a concatenation). */
function isStringTooLong(error: unknown): boolean {
  return isInstanceOf(error, RangeError) && /Invalid string length/.test(describeThrown(error));
}

/**
 * The most UTF-8 bytes a value's JSON text may have. A record's payload holds MAX_PAYLOAD_LEN (1
 * GiB), but Node's TextDecoder reads back no input longer than V8's longest string
 * (MAX_STRING_LENGTH, 2^29 - 24 on 64-bit) whatever characters it holds: a text of 600 MB of
 * two-byte characters (300 M of them, a string JavaScript holds) would be written, and then every
 * read of its record would fail, wedging the run (an effect's result: after the effect happened).
 */
export const MAX_VALUE_TEXT_BYTES = Math.min(MAX_PAYLOAD_LEN, constants.MAX_STRING_LENGTH);

/**
 * The UTF-8 length of `text` when it is over MAX_VALUE_TEXT_BYTES (a text the log could not read
 * back), else undefined. UTF-8 takes at most 3 bytes per UTF-16 unit, so only a text of more than
 * a third of the limit in length is measured.
 */
export function textBytesOverLimit(text: string): number | undefined {
  if (text.length <= MAX_VALUE_TEXT_BYTES / 3) return undefined;
  const bytes = utf8Length(text);
  return bytes > MAX_VALUE_TEXT_BYTES ? bytes : undefined;
}

/** A value's JSON text must be one the log can hold and read back (MAX_VALUE_TEXT_BYTES of UTF-8). */
function checkSize(what: string, text: string, subject: ErrorSubject): void {
  const bytes = textBytesOverLimit(text);
  if (bytes !== undefined) {
    throw tooLarge(
      what,
      `its JSON text is ${bytes} bytes of UTF-8, over the ${MAX_VALUE_TEXT_BYTES} bytes a value's text may have (the longest text JavaScript reads back as one string; a record holds ${MAX_PAYLOAD_LEN})`,
      subject,
    );
  }
}

/**
 * `record` in log format 2, chained to `chain`. Its values were checked against the payload limit
 * on their own (checkSize); the record's other fields can still take it over: ValueUnfaithfulError
 * TOO_LARGE naming the record, before anything is written. Any other RecordEncodeError is REMIT's bug.
 */
export function encodeRecordWithinLimits(record: LogRecord, chain: number, subject: ErrorSubject): Uint8Array {
  try {
    return encodeRecordV2(record, chain);
  } catch (error) {
    if (!(error instanceof RecordEncodeError) || error.field !== 'payload') throw error;
    throw tooLarge(`${kindName(record.kind)} record`, error.problem, { ...subject, seq: record.seq });
  }
}

/**
 * Whether `added` more bytes after a log of `logBytes` stay within MAX_LOG_BYTES; if not,
 * ValueUnfaithfulError TOO_LARGE naming the first record's kind and seq, before anything is
 * written. Past it the cores' offsets saturate and no longer say where a record is.
 */
export function checkLogRoom(logBytes: number, added: number, first: LogRecord, subject: ErrorSubject): void {
  if (added <= MAX_LOG_BYTES - logBytes) return;
  const why = `the run's log holds ${logBytes} bytes and this step's records ${added} more, over the ${MAX_LOG_BYTES} bytes a log's offsets address`;
  throw tooLarge(`${kindName(first.kind)} record`, why, { ...subject, seq: first.seq });
}

/** TOO_LARGE for a value whose JSON text JSON.stringify could not build (isStringTooLong). */
function textTooLong(what: string, subject: ErrorSubject): ValueUnfaithfulError {
  return tooLarge(what, 'its JSON text is longer than the longest string JavaScript can hold (about 2^29 characters)', subject);
}

/** ValueUnfaithfulError TOO_LARGE: the value cannot be recorded at all (docs/guide.md, "Limits"). */
function tooLarge(what: string, why: string, subject: ErrorSubject): ValueUnfaithfulError {
  return new ValueUnfaithfulError(what, 'TOO_LARGE', `${why} (docs/guide.md, "Limits"); keep large data outside the run (a reference to it in the state)`, subject);
}

/**
 * Rules 1 and 3 by the round trip: stringify, parse, check the depth of what was parsed (before
 * any recursive walk over it), and compare the parsed value with the original, naming the first
 * field that differs. Any value; what plainJsonCopy declines comes here.
 */
export function checkedRoundTrip(what: string, output: unknown, subject: ErrorSubject): DurableText {
  let encoded: DurableText;
  try {
    encoded = encodeJsonText(output);
  } catch (error) {
    // JSON.stringify overflows the stack on a value nested a few thousand levels deep: say so.
    let deep: Path | null = null;
    try {
      deep = tooDeepAt(output, false);
    } catch {
      // A getter or a proxy threw: the stringify error is the one to report.
    }
    if (deep !== null) throw tooDeep(what, deep, subject);
    if (isStringTooLong(error)) throw textTooLong(what, subject);
    // Only for JSON.stringify's own BigInt refusal: a cycle's or a toJSON's error is another value's.
    const at = error instanceof Error && /BigInt/.test(error.message) ? bigintAt(output) : null;
    if (at !== null) throw new NotJsonError(`the ${what}`, `${shownPath(at)}: ${(error as Error).message}`, { ...subject, field: pathText(at) });
    // JSON.stringify's text may quote a caller's key (a cycle's path) or be a toJSON's own message.
    throw new NotJsonError(`the ${what}`, cutForMessage(describeThrown(error), MAX_THROWN_CHARS), subject);
  }
  const deep = tooDeepAt(encoded.value, true);
  if (deep !== null) throw tooDeep(what, deep, subject);
  const changed = jsonChange(output, encoded.value, []);
  if (changed !== null) {
    throw new ValueUnfaithfulError(what, 'CHANGED_BY_JSON', `${shownPath(changed.path)}: ${changed.why}`, { ...subject, field: pathText(changed.path) });
  }
  return encoded;
}

/**
 * The path to the first object or array nested deeper than MAX_VALUE_DEPTH in `value`, or null.
 * Iterative (it must not overflow the stack it protects), over own enumerable keys and array
 * items as JSON sees them. `parsed`: the value is JSON.parse's output, a tree. Otherwise (a value
 * JSON.stringify refused) an object met again is not walked again: a cycle is not depth (JSON's
 * own refusal names it) and a shared object costs one walk; each property is read once.
 */
function tooDeepAt(value: unknown, parsed: boolean): Path | null {
  if (value === null || typeof value !== 'object') return null;
  interface Frame { node: object; keys: string[] | null; next: number; end: number }
  const open = (node: object): Frame => {
    if (Array.isArray(node)) return { node, keys: null, next: 0, end: node.length };
    const keys = Object.keys(node);
    return { node, keys, next: 0, end: keys.length };
  };
  const frames: Frame[] = [open(value)];
  const seen = parsed ? null : new Set<object>([value]);
  while (frames.length > 0) {
    const top = frames[frames.length - 1]!;
    if (top.next === top.end) {
      frames.pop();
      continue;
    }
    const key = top.keys === null ? top.next : top.keys[top.next]!;
    top.next++;
    const child = (top.node as Record<string | number, unknown>)[key];
    if (child === null || typeof child !== 'object') continue;
    if (seen !== null) {
      if (seen.has(child)) continue;
      seen.add(child);
    }
    if (frames.length >= MAX_VALUE_DEPTH) return frames.map((frame) => (frame.keys === null ? frame.next - 1 : frame.keys[frame.next - 1]!));
    frames.push(open(child));
  }
  return null;
}

/**
 * The path to the first BigInt in a value (JSON.stringify throws on one without saying where),
 * or null. Read on a refusal only: own enumerable keys, each object once; a getter or Proxy that
 * throws ends the search (the stringify error is then reported as it is).
 */
function bigintAt(value: unknown): Path | null {
  const seen = new Set<object>();
  const walk = (node: unknown, path: Path): Path | null => {
    if (typeof node === 'bigint') return path;
    if (node === null || typeof node !== 'object' || seen.has(node) || path.length > MAX_VALUE_DEPTH) return null;
    seen.add(node);
    for (const key of Array.isArray(node) ? node.keys() : Object.keys(node)) {
      const found = walk((node as Record<string | number, unknown>)[key], [...path, key]);
      if (found !== null) return found;
    }
    return null;
  };
  try {
    return walk(value, []);
  } catch {
    return null;
  }
}

function tooDeep(what: string, path: Path, subject: ErrorSubject): ValueUnfaithfulError {
  const field = pathText(path);
  const shown = cutForMessage(path.length <= 6 ? field : `${path.slice(0, 3).join('.')}.(${path.length - 5} more).${path.slice(-2).join('.')}`, MAX_QUOTED_CHARS);
  return new ValueUnfaithfulError(
    what,
    'TOO_DEEP',
    `${shown}: objects and arrays nest more than ${MAX_VALUE_DEPTH} levels deep here, deeper than REMIT keeps a value ` +
      '(docs/guide.md, "Limits"); flatten the value, or keep its deep part as a JSON string',
    { ...subject, field },
  );
}

/** plainJsonCopy's answer for a value that is not plain JSON data. */
const NOT_PLAIN: unique symbol = Symbol('not plain JSON');
/**
 * Deeper values take the round trip (a cycle among plain objects ends here too). At most
 * MAX_VALUE_DEPTH, so that a value this walk copies needs no depth check (readBack).
 */
const MAX_PLAIN_DEPTH = 64;

/**
 * A copy of `value` made of fresh objects and arrays (strings, numbers and booleans shared),
 * when `value` is plain JSON data: finite numbers, strings, booleans, null, arrays without holes
 * or undefined items, and objects whose prototype is Object.prototype or null, without toJSON,
 * whose properties are such values or undefined (left out, as JSON leaves them). Then the copy
 * is exactly what JSON.parse(JSON.stringify(value)) gives (the same keys in the same order, -0 as
 * 0, "__proto__" as an own key) and the text is stringified from the copy, so text and value agree
 * even if a getter would answer differently when read again. Anything else is NOT_PLAIN and takes
 * checkedRoundTrip, which names what JSON would change. Why: a step's state goes through here;
 * parsing its text again cost more than the walk (bench/README.md, commit suite); values.test.ts
 * checks that both give the same text and value, or the same refusal.
 */
function plainJsonCopy(value: unknown, depth: number): Json | typeof NOT_PLAIN {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : NOT_PLAIN;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth >= MAX_PLAIN_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const out: Json[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return NOT_PLAIN;
      const item = plainJsonCopy(value[i], depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    if (field === undefined) continue;
    const item = plainJsonCopy(field, depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    setOwnKey(out, key, item);
  }
  return out;
}

type Path = Array<string | number>;

/**
 * Whether `value` is exactly the JSON value `json`: the same plain objects with the same own keys
 * (a property holding undefined counts as a difference here: a schema may tell it from absence),
 * arrays without holes, finite numbers, strings, booleans and null.
 */
function isExactly(value: unknown, json: Json): boolean {
  if (value === null || typeof value !== 'object') {
    return value === json && (typeof value !== 'number' || Number.isFinite(value));
  }
  if (Array.isArray(value)) {
    if (!Array.isArray(json) || json.length !== value.length) return false;
    for (let i = 0; i < value.length; i++) if (!(i in value) || !isExactly(value[i], json[i]!)) return false;
    return true;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json) || !isPlain(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== Object.keys(json).length) return false;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(json, key) || !isExactly((value as Record<string, unknown>)[key], json[key]!)) return false;
  }
  return true;
}

/** The zod-style path: `items.3.sku`, or "(root)". */
function pathText(path: Path): string {
  return path.length === 0 ? '(root)' : path.join('.');
}

/** A path as a message shows it: its keys are a caller's, which may be megabytes (the field keeps it whole). */
function shownPath(path: Path): string {
  return cutForMessage(pathText(path), MAX_QUOTED_CHARS);
}

/**
 * Where `value` differs from `readBack` (its JSON round trip), and how, or null when they are the
 * same value. An object property holding undefined is left out by JSON and reads back as
 * undefined, so it counts as the same; -0 reads back as 0, which compares equal. `path` is the
 * walk's own stack (pushed and popped on the way, copied into a result), so a value that reads
 * back as itself costs no allocation per field.
 */
function jsonChange(value: unknown, readBack: Json | undefined, path: Path): { path: Path; why: string } | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value === readBack ? null : { path: [...path], why: `${render(value)} reads back as ${render(readBack)}` };
    case 'number':
      if (!Number.isFinite(value)) return { path: [...path], why: `${String(value)} becomes null in JSON` };
      return value === readBack ? null : { path: [...path], why: `${render(value)} reads back as ${render(readBack)}` };
    case 'undefined':
      return { path: [...path], why: path.length > 0 && typeof path[path.length - 1] === 'number' ? 'undefined in an array becomes null in JSON' : 'undefined has no JSON form' };
    case 'function':
    case 'symbol':
    case 'bigint':
      return { path: [...path], why: `a ${typeof value} has no JSON form` };
  }
  if (value === null) return readBack === null ? null : { path: [...path], why: `null reads back as ${render(readBack)}` };
  const object = value as object;
  if (Array.isArray(object)) return arrayChange(object, readBack, path);
  const kind = nonPlainKind(object);
  if (kind === 'a Date') return { path: [...path], why: `a Date becomes the string ${render(readBack)} in JSON` };
  if (kind !== null) return { path: [...path], why: `${kind} becomes ${render(readBack)} in JSON` };
  if (readBack === null || typeof readBack !== 'object' || Array.isArray(readBack)) {
    return { path: [...path], why: `an object reads back as ${render(readBack)}` };
  }
  for (const key of Object.keys(object)) {
    const item = (object as Record<string, unknown>)[key];
    if (item === undefined) continue;
    if (typeof item === 'function' || typeof item === 'symbol') return { path: [...path, key], why: `a ${typeof item} property is dropped by JSON` };
    path.push(key);
    const change = jsonChange(item, Object.prototype.hasOwnProperty.call(readBack, key) ? readBack[key] : undefined, path);
    path.pop();
    if (change !== null) return change;
  }
  return null;
}

function arrayChange(array: unknown[], readBack: Json | undefined, path: Path): { path: Path; why: string } | null {
  if (!Array.isArray(readBack) || readBack.length !== array.length) return { path: [...path], why: `an array reads back as ${render(readBack)}` };
  for (let i = 0; i < array.length; i++) {
    if (!(i in array)) return { path: [...path, i], why: 'a hole in an array becomes null in JSON' };
    path.push(i);
    const change = jsonChange(array[i], readBack[i], path);
    path.pop();
    if (change !== null) return change;
  }
  return null;
}

/** nonPlainKind(object) === null, decided first for the common object literal (prototype Object). */
function isPlain(object: object): boolean {
  try {
    if (Object.getPrototypeOf(object) === Object.prototype && typeof (object as { toJSON?: unknown }).toJSON !== 'function') return true;
  } catch {
    // A Proxy whose getPrototypeOf or toJSON trap throws: nonPlainKind names it.
  }
  return nonPlainKind(object) === null;
}

/**
 * Handles the rejection of a Promise node code or a schema put where REMIT refuses or drops it:
 * nothing else will ever hold it, and an unhandled rejection ends a Node process by default, so a
 * refused value could take a service down. Attaching a handler reads a native Promise's
 * `constructor` and calls another thenable's `then`; either can throw, and then there is nothing
 * to attach to (the refusal stands).
 */
export function ignoreRejection(thenable: PromiseLike<unknown>): void {
  try {
    Promise.resolve(thenable).catch(() => undefined);
  } catch {
    // See above.
  }
}

/**
 * Handles the rejection of every Promise `value` holds (a field set without `await`): `deep`
 * false looks at the value and its own fields (cheap enough for every step: a zod schema that
 * refuses or strips such a field never hands it on), true at all it holds, each object once (on
 * a refusal, where the whole value is dropped). It reads the value's fields, so a getter runs
 * (step.ts hands it a node result's fields read once); only native Promises are handled (no
 * `then` of node code is called), and a Proxy whose traps throw ends the search.
 */
export function handleRejectionsIn(value: unknown, deep: boolean): void {
  const seen = new Set<object>();
  const visit = (node: unknown, depth: number): void => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return;
    if (types.isPromise(node)) return ignoreRejection(node);
    seen.add(node);
    if (depth === 0 || depth > MAX_VALUE_DEPTH) return;
    for (const key of Object.keys(node)) visit((node as Record<string, unknown>)[key], depth + 1);
  };
  try {
    if (deep) visit(value, 1);
    else if (types.isPromise(value)) ignoreRejection(value);
    else if (value !== null && typeof value === 'object') for (const key of Object.keys(value)) visit((value as Record<string, unknown>)[key], 0);
  } catch {
    // A getter or a Proxy trap threw: the value's own checks report it.
  }
}

/** What kind of non-plain object this is (it does not survive JSON as itself), or null for a plain one. */
function nonPlainKind(object: object): string | null {
  try {
    return readNonPlainKind(object);
  } catch {
    // A Proxy whose traps throw (getPrototypeOf, get of toJSON): not a value JSON keeps as itself.
    return 'an object whose prototype or toJSON cannot be read (a Proxy whose traps throw)';
  }
}

function readNonPlainKind(object: object): string | null {
  if (types.isPromise(object)) {
    ignoreRejection(object);
    return 'a Promise (an async function: a transform, default, catch or overwrite of the schema, or node code that returned without await)';
  }
  if (object instanceof Date) return 'a Date';
  if (object instanceof Map) return `a Map (${object.size} entries)`;
  if (object instanceof Set) return `a Set (${object.size} values)`;
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function') return 'an object with a toJSON method';
  const proto = Object.getPrototypeOf(object) as object | null;
  if (proto === null || proto === Object.prototype) return null;
  const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
  return `an instance of ${typeof name === 'string' && name.length > 0 ? name : 'a class'}`;
}

function valueAt(value: unknown, path: Path): unknown {
  let current = value;
  for (const key of path) current = current === null || typeof current !== 'object' ? undefined : (current as Record<string | number, unknown>)[key];
  return current;
}

/** A short printable form of a value for messages. */
function render(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value instanceof Date) return `a Date`;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) return typeof value;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
