/**
 * The exhaustive small-scope check at the bound `npm test` affords (REMIT_ENUM_MAX_RECORDS raises
 * it; README.md lists bounds and counts). Also: the enumerator finds both canaries.
 */
import { describe, expect, it } from 'vitest';
import { createReferenceCore, reference } from '../ts-shell/src/core/reference-core.js';
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
    expect(result.distinctPhases).toBe(11); // every (status, action) pair of docs/core-api.md
  });

  it.each(['accept-second-claim', 'snapshot-on-delta'] as const)('finds the %s canary within 8 records', (canary) => {
    const result = enumerateHistories(reference, createReferenceCore({ canary }), { maxRecords: 8, cuts: 'edges' });
    expect(result.divergence).not.toBeNull();
  });
});
