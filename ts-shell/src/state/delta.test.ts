import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonEqual, type Json } from '../json.js';
import { applyDelta, chooseSnapshot, computeDelta } from './delta.js';

const json = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>;

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
