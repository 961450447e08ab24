/**
 * Structural deltas between two JSON states and the snapshot/delta policy (docs/guide.md,
 * "Storage policy").
 *
 * A delta is one of:
 *   { "r": value }                       replace the value
 *   { "a": [items] }                     the old array is a prefix of the new one: append items
 *   { "o": { key: delta }, "d": [keys] } patch an object: change these keys, delete those
 *
 * Why these three: a state of fixed size changes a few keys per step (`o` keeps the delta as
 * small as the change), and a history-carrying state grows an array (`a` keeps the delta as small
 * as the growth), where LangGraph's per-step full snapshot grows quadratically in total.
 */

import { ArgumentInvalidError } from '../errors.js';
import { isPlainObject, jsonEqual, setOwnKey, type Json } from '../json.js';

export type Delta =
  | { r: Json }
  | { a: Json[] }
  | { o: { [key: string]: Delta }; d?: string[] };

/** The delta turning `before` into `after`; `null` when they are equal. */
export function computeDelta(before: Json, after: Json): Delta | null {
  if (before === after) return null;
  // Two objects are compared by the patch itself (one walk): equal exactly when it is empty.
  if (isPlainObject(before) && isPlainObject(after)) return objectDelta(before, after);
  if (jsonEqual(before, after)) return null;
  if (Array.isArray(before) && Array.isArray(after) && after.length > before.length && isPrefix(before, after)) {
    return { a: after.slice(before.length) };
  }
  return { r: after };
}

/**
 * The object patch from `before` to `after`, or null when they are equal (jsonEqual). Keys are
 * the state's own keys, "__proto__" among them (JSON.parse makes it an own key): they are set with
 * setOwnKey, never `changed[key] = ...`, which for "__proto__" would set the patch's prototype and
 * drop the change from the delta.
 */
function objectDelta(before: { [key: string]: Json }, after: { [key: string]: Json }): Delta | null {
  const changed: { [key: string]: Delta } = {};
  let changes = 0;
  let kept = 0;
  for (const key of Object.keys(after)) {
    if (!Object.prototype.hasOwnProperty.call(before, key)) {
      setOwnKey(changed, key, { r: after[key]! });
      changes++;
      continue;
    }
    kept++;
    const inner = computeDelta(before[key]!, after[key]!);
    if (inner !== null) {
      setOwnKey(changed, key, inner);
      changes++;
    }
  }
  // Every key of `after` that `before` has was counted in `kept`; `before` has others iff deleted.
  const deleted = kept === Object.keys(before).length ? [] : Object.keys(before).filter((key) => !Object.prototype.hasOwnProperty.call(after, key));
  if (changes === 0 && deleted.length === 0) return null;
  return deleted.length > 0 ? { o: changed, d: deleted } : { o: changed };
}

function isPrefix(prefix: Json[], whole: Json[]): boolean {
  for (let i = 0; i < prefix.length; i++) if (!jsonEqual(prefix[i]!, whole[i]!)) return false;
  return true;
}

/**
 * Apply `delta` to `before` without modifying it. A key of `delta.o` is set as an own key
 * (setOwnKey: "__proto__" too), in place when `before` has it, else after `before`'s keys, as the
 * assignment of a fresh key would.
 *
 * Public in remit/testing. A delta that is not one, or that does not fit `before`, is refused with
 * ArgumentInvalidError naming the part (`applyDelta(delta)`, `applyDelta(delta.o.items.a)`,
 * `applyDelta(before.items)`), never applied as another change: { "o": 5 } patched nothing, and
 * null or { "q": 1 } were TypeErrors (later a plain Error). A delta read from a log is JSON that
 * computeDelta wrote; the library reads any refusal of one as damage (LogCorruptError
 * UNREADABLE_STATE).
 */
export function applyDelta(before: Json, delta: Delta): Json {
  return applyAt(before, delta, null, false);
}

/**
 * applyDelta that patches `owned` in place (its objects and arrays are changed and reused) and
 * gives the same value, key order included, or the same refusal (`owned` then half patched). Only
 * for a value that nothing else holds: a fold rebuilding a state from its snapshot's fresh decode.
 * Why: applyDelta copies every object and array on the delta's path, so the deltas since a
 * snapshot, each appending to a list that grows with the run, cost their count times the list's
 * length; in place they cost their own size (a resume of a run whose state keeps a growing list
 * rebuilt its head state in time quadratic in the run).
 */
export function applyDeltaInPlace(owned: Json, delta: Delta): Json {
  return applyAt(owned, delta, null, true);
}

/** The keys of `delta.o` from the top delta down to the one being applied (null: the top). */
interface DeltaPath { key: string; parent: DeltaPath | null }

function applyAt(before: Json, delta: Delta, path: DeltaPath | null, inPlace: boolean): Json {
  if (!isPlainObject(delta)) throw refused(path, 'delta', '', 'a delta ({ r }, { a } or { o, d? })', kindOf(delta));
  // One form, with its own keys only: `{ r, a }` took r and dropped a without a word.
  const keys = Object.keys(delta);
  const form = 'r' in delta ? ['r'] : 'a' in delta ? ['a'] : 'o' in delta ? ['o', 'd'] : null;
  if (form !== null && keys.some((key) => !form.includes(key))) {
    throw refused(path, 'delta', '', 'a delta of one form ({ r }, { a } or { o, d? })', `an object with the keys ${keys.join(', ')}`);
  }
  if ('r' in delta) {
    if (delta.r === undefined) throw refused(path, 'delta', '.r', 'a JSON value (the value that replaces the one before)', 'undefined');
    return delta.r;
  }
  if ('a' in delta) {
    if (!Array.isArray(delta.a)) throw refused(path, 'delta', '.a', 'an array (the items an append delta adds)', kindOf(delta.a));
    if (!Array.isArray(before)) throw refused(path, 'before', '', 'an array (the delta appends to it)', kindOf(before));
    if (!inPlace) return [...before, ...delta.a];
    for (const item of delta.a) before.push(item); // no push(...a): a long append would overflow the stack
    return before;
  }
  if (!('o' in delta)) throw refused(path, 'delta', '', 'a delta ({ r }, { a } or { o, d? })', 'an object with neither r, a nor o');
  if (!isPlainObject(delta.o)) throw refused(path, 'delta', '.o', 'an object (the changed keys of an object delta)', kindOf(delta.o));
  if (delta.d !== undefined && !(Array.isArray(delta.d) && delta.d.every((key) => typeof key === 'string'))) {
    throw refused(path, 'delta', '.d', 'an array of strings (the keys an object delta deletes)', Array.isArray(delta.d) ? 'an array holding a non-string' : kindOf(delta.d));
  }
  if (!isPlainObject(before)) throw refused(path, 'before', '', 'an object (the delta patches its keys)', kindOf(before));
  const out: { [key: string]: Json } = inPlace ? before : { ...before };
  // A key both deleted and patched is patched from its value before the delta (then set after the
  // others, being deleted first): in place, that value is kept aside before the delete.
  const deleted = inPlace && delta.d !== undefined && delta.d.length > 0 ? new Map<string, Json>() : NOTHING_DELETED;
  for (const key of delta.d ?? []) {
    if (inPlace && Object.prototype.hasOwnProperty.call(out, key)) deleted.set(key, out[key]!);
    delete out[key];
  }
  for (const [key, inner] of Object.entries(delta.o)) {
    const at = { key, parent: path };
    setOwnKey(out, key, applyAt(valueBefore(before, key, inPlace, deleted), inner, at, inPlace));
  }
  return out;
}

const NOTHING_DELETED: Map<string, Json> = new Map();

/** The value `key` had before the delta (null when it had none); `deleted` holds what an in-place delete took away. */
function valueBefore(before: { [key: string]: Json }, key: string, inPlace: boolean, deleted: ReadonlyMap<string, Json>): Json {
  if (inPlace && deleted.has(key)) return deleted.get(key)!;
  return Object.prototype.hasOwnProperty.call(before, key) ? before[key]! : null;
}

/** ArgumentInvalidError naming the part of `applyDelta(before, delta)` at `path` that is refused. */
function refused(path: DeltaPath | null, which: 'delta' | 'before', suffix: string, expected: string, received: string): ArgumentInvalidError {
  const keys: string[] = [];
  for (let at = path; at !== null; at = at.parent) keys.unshift(at.key);
  const where = which === 'delta' ? keys.map((key) => `.o.${key}`).join('') : keys.map((key) => `.${key}`).join('');
  return new ArgumentInvalidError(`applyDelta(${which}${where}${suffix})`, expected, received);
}

function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The delta of an unchanged state: an empty object patch. */
export const EMPTY_DELTA: Delta = { o: {} };

/**
 * Snapshot or delta for the next checkpoint. A snapshot is written when the deltas since the last
 * snapshot, this one included, would reach the size of a full snapshot. So the delta bytes a
 * rebuild must apply never exceed one snapshot, and every record's state bytes are at most one
 * snapshot: total bytes stay linear in the number of steps.
 */
export function chooseSnapshot(snapshotBytes: number, deltaBytes: number, deltaBytesSinceSnapshot: number): boolean {
  return deltaBytesSinceSnapshot + deltaBytes >= snapshotBytes;
}
