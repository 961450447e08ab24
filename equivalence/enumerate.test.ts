/**
 * The exhaustive small-scope check at the bound `npm test` affords (REMIT_ENUM_MAX_RECORDS and
 * REMIT_ENUM_V1_MAX_RECORDS raise it; README.md lists bounds and counts): runs in format 2 and
 * format-1 runs upgraded to format 2 at any point, and format-1 runs alone to a deeper bound (what
 * the format-1 enumeration covered before format 2). Also: the enumerator finds every canary.
 */
import { describe, expect, it } from 'vitest';
import { createReferenceCore, reference } from 'remit/core';
import { loadCoresUnderTest } from './cores.js';
import { describeEnumeration, enumerateHistories } from './enumerate.js';
import { describeDivergence } from './report.js';

const cores = await loadCoresUnderTest();
const maxRecords = Number(process.env['REMIT_ENUM_MAX_RECORDS'] ?? '8');
const v1MaxRecords = Number(process.env['REMIT_ENUM_V1_MAX_RECORDS'] ?? '12');

describe('exhaustive enumeration', () => {
  it.skipIf(cores.wasm === null)(`wasm ≡ reference on every format-2 and upgraded history up to ${maxRecords} records`, () => {
    const result = enumerateHistories(cores.wasm!, cores.reference, { maxRecords, cuts: 'edges' });
    console.log(`[enumerate] ${describeEnumeration(result)}`);
    if (result.divergence) throw new Error(describeDivergence(result.divergence));
    // Every (status, next action) pair of docs/core-api.md's phase table is reached, and the
    // chain and format-order errors.
    const pairs = ['0/NONE', '1/RUN_PURE', '1/BEGIN_EFFECT', '1/INVOKE_EFFECT', '1/AWAIT_ATTEMPT', '1/FINISH_EFFECT', '1/PARK',
      '2/AWAIT_RESUME', '1/FINISH_INTERRUPT', '1/FINISH_RUN', '3/NONE', '4/NONE', 'error 2', 'error 8', 'error 9', 'error 12'];
    expect(result.outcomes).toEqual(expect.arrayContaining(pairs));
  });

  it.skipIf(cores.wasm === null)(`wasm ≡ reference on every format-1 history up to ${v1MaxRecords} records`, () => {
    const result = enumerateHistories(cores.wasm!, cores.reference, { maxRecords: v1MaxRecords, cuts: 'edges', formats: [1], upgrades: false });
    console.log(`[enumerate format 1] ${describeEnumeration(result)}`);
    if (result.divergence) throw new Error(describeDivergence(result.divergence));
    expect(result.outcomes).toEqual(expect.arrayContaining(['1/INVOKE_EFFECT', '1/FINISH_EFFECT', 'error 10']));
    expect(result.outcomes).not.toContain('1/AWAIT_ATTEMPT');
  });

  it.each(['accept-second-claim', 'snapshot-on-delta', 'done-without-attempt', 'link-unchecked'] as const)('finds the %s canary within 8 records', (canary) => {
    const result = enumerateHistories(reference, createReferenceCore({ canary }), { maxRecords: 8, cuts: 'edges' });
    expect(result.divergence).not.toBeNull();
  });
});
