/**
 * The exhaustive small-scope check at the bound `npm test` affords (REMIT_ENUM_MAX_RECORDS raises
 * it; README.md lists bounds and counts). Also: the enumerator finds both canaries.
 */
import { describe, expect, it } from 'vitest';
import { createReferenceCore, reference } from 'remit/core';
import { loadCoresUnderTest } from './cores.js';
import { describeEnumeration, enumerateHistories } from './enumerate.js';
import { describeDivergence } from './report.js';

const cores = await loadCoresUnderTest();
const maxRecords = Number(process.env['REMIT_ENUM_MAX_RECORDS'] ?? '12');

describe('exhaustive enumeration', () => {
  it.skipIf(cores.wasm === null)(`wasm ≡ reference on every history up to ${maxRecords} records`, () => {
    const result = enumerateHistories(cores.wasm!, cores.reference, { maxRecords, cuts: 'edges' });
    console.log(`[enumerate] ${describeEnumeration(result)}`);
    if (result.divergence) throw new Error(describeDivergence(result.divergence));
    // Every (status, next action) pair of docs/core-api.md's phase table is reached.
    const pairs = ['0/NONE', '1/RUN_PURE', '1/BEGIN_EFFECT', '1/INVOKE_EFFECT', '1/FINISH_EFFECT', '1/PARK', '2/AWAIT_RESUME',
      '1/FINISH_INTERRUPT', '1/FINISH_RUN', '3/NONE', '4/NONE'];
    expect(result.outcomes).toEqual(expect.arrayContaining(pairs));
  });

  it.each(['accept-second-claim', 'snapshot-on-delta'] as const)('finds the %s canary within 8 records', (canary) => {
    const result = enumerateHistories(reference, createReferenceCore({ canary }), { maxRecords: 8, cuts: 'edges' });
    expect(result.divergence).not.toBeNull();
  });
});
