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
 * Apply `delta` to `before` without modifying it. Throws on a delta that does not fit. A key of
 * `delta.o` is set as an own key (setOwnKey: "__proto__" too), in place when `before` has it,
 * else after `before`'s keys, as the assignment of a fresh key would.
 */
export function applyDelta(before: Json, delta: Delta): Json {
  // A delta read from a log is JSON that computeDelta wrote; anything else (a record whose
  // checksums were recomputed over other text) is refused here, never applied as another change:
  // { "o": 5 } patched nothing, and null or { "q": 1 } were TypeErrors.
  if (!isPlainObject(delta)) throw new Error(`not a delta (got ${delta === null ? 'null' : Array.isArray(delta) ? 'an array' : typeof delta})`);
  if ('r' in delta) return delta.r;
  if ('a' in delta) {
    if (!Array.isArray(delta.a)) throw new Error('append delta whose items are not an array');
    if (!Array.isArray(before)) throw new Error('append delta applied to a non-array');
    return [...before, ...delta.a];
  }
  if (!('o' in delta) || !isPlainObject(delta.o)) throw new Error('not a delta: neither r, a nor an object patch o');
  if (delta.d !== undefined && !(Array.isArray(delta.d) && delta.d.every((key) => typeof key === 'string'))) {
    throw new Error('object delta whose deleted keys d are not an array of strings');
  }
  if (!isPlainObject(before)) throw new Error('object delta applied to a non-object');
  const out: { [key: string]: Json } = { ...before };
  for (const key of delta.d ?? []) delete out[key];
  for (const [key, inner] of Object.entries(delta.o)) {
    setOwnKey(out, key, Object.prototype.hasOwnProperty.call(before, key) ? applyDelta(before[key]!, inner) : applyDelta(null, inner));
  }
  return out;
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
