/**
 * The split property of incremental recovery (docs/core-api.md, "Incremental recovery"): feeding a
 * log in any split is recovering it whole, on both cores, and the two cores write the same
 * summaries. The single-cut form runs inside every full check (compare.ts: every boundary and cut
 * of the vitest families, the corpus, the enumeration; sampled in the campaign); here: any number
 * of cuts, and the canary that proves a wrong summary field is caught.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createReferenceCore, reference } from 'remit/core';
import { anyLogArb, modelLogArb } from './arbitraries.js';
import { CoreComparison } from './compare.js';
import { loadCoresUnderTest } from './cores.js';
import { enumerateHistories } from './enumerate.js';
import { runEquivalence, scaledRuns, scaleFromEnv, seedFromEnv } from './property.js';
import { describeDivergence } from './report.js';

const cores = await loadCoresUnderTest();
const scale = scaleFromEnv();
const seed = seedFromEnv();

describe.skipIf(cores.wasm === null)('wasm ≡ reference, fed in any number of pieces', () => {
  it('every piece of every generated log (model, mutated, grammar, raw, framed junk)', () => {
    const comparison = new CoreComparison(cores.wasm!, cores.reference);
    fc.assert(
      fc.property(anyLogArb(28), fc.array(fc.nat(), { maxLength: 10 }), (c, rawCuts) => {
        for (const log of c.logs) {
          const cuts = rawCuts.map((x) => x % (log.length + 1)).sort((x, y) => x - y);
          const d = comparison.pieces(log, cuts) ?? comparison.recordByRecord(log);
          if (d) throw new Error(`${c.source}\n${describeDivergence(d)}`);
        }
      }),
      { numRuns: scaledRuns(400, scale), ...(seed === undefined ? {} : { seed }) },
    );
  });
});

describe('canary: a wrong summary field is caught', () => {
  const buggy = createReferenceCore({ canary: 'summary-forgets-prev-kind' });

  it('by the comparison of the two cores (the summaries differ)', () => {
    const result = runEquivalence(reference, buggy, modelLogArb(28), {
      numRuns: 200, seed: 20261201, compare: { cuts: 'none' }, writeCorpus: false, label: 'canary summary-forgets-prev-kind',
    });
    expect(result.details.failed).toBe(true);
    expect(result.divergence?.operation).toBe('feed');
  });

  it('by the split property of one core alone (a FORKED fed after a split at its checkpoint is refused)', () => {
    const result = runEquivalence(buggy, buggy, modelLogArb(28), {
      numRuns: 300, seed: 20261201, compare: { cuts: 'none' }, writeCorpus: false, label: 'canary summary-forgets-prev-kind, alone',
    });
    expect(result.details.failed).toBe(true);
    expect(result.divergence?.operation).toBe('split');
  });

  it('by the exhaustive enumeration within 8 records', () => {
    const result = enumerateHistories(reference, buggy, { maxRecords: 8, cuts: 'edges', wrongExtensions: false });
    expect(result.divergence).not.toBeNull();
  });

  it('the clean reference passes the same runs (the failure is the bug, not noise)', () => {
    const clean = createReferenceCore();
    const result = runEquivalence(clean, clean, modelLogArb(28), {
      numRuns: 100, seed: 20261201, compare: { cuts: 'none' }, writeCorpus: false, label: 'reference alone',
    });
    expect(result.details.failed).toBe(false);
  });
});
