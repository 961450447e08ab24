import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonEqual, type Json } from '../json.js';
import { applyDelta, chooseSnapshot, computeDelta } from './delta.js';

const json = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>;

function isObject(value: Json): value is { [key: string]: Json } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `value` with one key of an object changed, added or removed (or itself when it is no object). */
function editOf(value: Json): fc.Arbitrary<Json> {
  if (!isObject(value)) return fc.constant(value);
  const keys = Object.keys(value);
  return fc.tuple(fc.nat(), json, fc.boolean()).map(([i, replacement, remove]) => {
    const copy = JSON.parse(JSON.stringify(value)) as { [key: string]: Json };
    const key = keys.length === 0 ? 'added' : keys[i % keys.length]!;
    if (remove) delete copy[key];
    else copy[key] = replacement;
    return copy;
  });
}

describe('structural delta', () => {
  it('apply(before, delta(before, after)) equals after, and never changes before', () => {
    fc.assert(
      fc.property(json, json, (before, after) => {
        const frozen = JSON.stringify(before);
        const delta = computeDelta(before, after);
        if (delta === null) {
          expect(jsonEqual(before, after)).toBe(true);
          return;
        }
        expect(jsonEqual(applyDelta(before, delta), after)).toBe(true);
        expect(JSON.stringify(before)).toBe(frozen);
        // A delta survives its JSON encoding (it is stored as JSON).
        expect(jsonEqual(applyDelta(before, JSON.parse(JSON.stringify(delta))), after)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('is null exactly for equal values, and writes the same delta as the rule stated plainly', () => {
    // The rule as docs/guide.md states it, one comparison after another (the implementation
    // compares two objects through the patch itself); their JSON texts must be the same bytes.
    const plainDelta = (before: Json, after: Json): unknown => {
      if (jsonEqual(before, after)) return null;
      if (isObject(before) && isObject(after)) {
        const o: Record<string, unknown> = {};
        for (const key of Object.keys(after)) {
          if (!Object.prototype.hasOwnProperty.call(before, key)) o[key] = { r: after[key] };
          else if (!jsonEqual(before[key]!, after[key]!)) o[key] = plainDelta(before[key]!, after[key]!);
        }
        const d = Object.keys(before).filter((key) => !Object.prototype.hasOwnProperty.call(after, key));
        return d.length > 0 ? { o, d } : { o };
      }
      if (Array.isArray(before) && Array.isArray(after) && after.length > before.length && before.every((x, i) => jsonEqual(x, after[i]!))) {
        return { a: after.slice(before.length) };
      }
      return { r: after };
    };
    // Pairs that share most of their structure, as consecutive states do.
    const similar = json.chain((before) => fc.tuple(fc.constant(before), fc.oneof(fc.constant(JSON.parse(JSON.stringify(before)) as Json), json, editOf(before))));
    fc.assert(
      fc.property(fc.oneof(fc.tuple(json, json), similar), ([before, after]) => {
        const delta = computeDelta(before, after);
        expect(delta === null).toBe(jsonEqual(before, after));
        expect(JSON.stringify(delta)).toBe(JSON.stringify(plainDelta(before, after)));
      }),
      { numRuns: 600 },
    );
  });

  it('object changes are keyed, deletions listed, appends to arrays carry only the new items', () => {
    expect(computeDelta({ a: 1, b: [1, 2], c: 3 }, { a: 2, b: [1, 2, 3, 4] })).toEqual({ o: { a: { r: 2 }, b: { a: [3, 4] } }, d: ['c'] });
    expect(computeDelta([1, 2], [2])).toEqual({ r: [2] });
    expect(computeDelta({ x: 1 }, { x: 1 })).toBeNull();
  });

  it('the policy writes a snapshot once deltas since the last snapshot reach its size', () => {
    expect(chooseSnapshot(100, 10, 80)).toBe(false);
    expect(chooseSnapshot(100, 10, 90)).toBe(true);
    expect(chooseSnapshot(100, 150, 0)).toBe(true);
  });
});
