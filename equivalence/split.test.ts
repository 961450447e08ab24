/**
 * The split property of incremental recovery (docs/core-api.md, "Incremental recovery"): feeding a
 * log in any split is recovering it whole, on both cores, and the two cores write the same
 * summaries. The single-cut form runs inside every full check (compare.ts: every boundary and cut
 * of the vitest families, the corpus, the enumeration; sampled in the campaign); here: any number
 * of cuts, and the canary that proves a wrong summary field is caught.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createReferenceCore, EMPTY_SUMMARY, reference, RefusalReason } from 'remit/core';
import { anyLogArb, modelLogArb } from './arbitraries.js';
import { CoreComparison, fedParts, hex, recordBoundaries } from './compare.js';
import { loadCoresUnderTest } from './cores.js';
import { enumerateHistories } from './enumerate.js';
import { ModelExecution, type InterruptIdForm } from './model.js';
import { planRequests } from './requests.js';
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

describe.skipIf(cores.wasm === null)('reserved interrupt ids (`node@parkSeq`) and the summary', () => {
  /** An interrupt node that routes to itself: park, claim, complete, `cycles` times, ids in `form`. */
  const loop = (cycles: number, form: InterruptIdForm): Uint8Array => {
    const ex = new ModelExecution({
      name: 'w', version: '1', nodes: [{ name: 'i', kind: 'interrupt', routes: ['i', null] }], start: 'i', keyScheme: 'per-visit', statePadBytes: 0,
    });
    for (let c = 0; c < cycles; c++) {
      ex.apply({ type: 'park', id: form });
      ex.apply({ type: 'claim', value: '1' });
      ex.apply({ type: 'complete', route: 0, stateForm: 1 });
    }
    return ex.logs()[0]!;
  };
  /** Each core's summary length after every record, fed record by record (the two cores' summaries byte-identical). */
  const summaryLengths = (log: Uint8Array): number[] => {
    let summary: Uint8Array = EMPTY_SUMMARY;
    let from = 0;
    const lengths: number[] = [];
    for (const end of recordBoundaries(log).slice(1)) {
      const fed = [cores.wasm!, cores.reference].map((core) => fedParts(core.feedEncoded(summary, log.subarray(from, end)), from)!);
      expect(hex(fed[0]!.summary)).toBe(hex(fed[1]!.summary));
      expect(fed[0]!.recovery[0], 'recovered').toBe(1);
      summary = fed[0]!.summary.slice();
      from = fed[0]!.next;
      lengths.push(summary.length);
    }
    return lengths;
  };

  it('a loop parking its canonical ids 200 times has a summary of constant size; free ids make it grow', () => {
    const canonical = summaryLengths(loop(200, 'canonical'));
    // No id is listed: a summary holds the phase's id and the last claim's only, whose seqs grow by
    // digits (i@4 .. i@598). Record 3k + 1 is a park, 3k + 2 a claim, 3k a completion: after the
    // first cycle, the summaries of each kind differ by those digits at most.
    for (const kind of [0, 1, 2]) {
      const lengths = canonical.filter((_, i) => i >= 3 && i % 3 === kind);
      expect(Math.max(...lengths) - Math.min(...lengths), `records 3k + ${kind}`).toBeLessThanOrEqual(2 * 2);
    }
    const free = summaryLengths(loop(200, 'free'));
    expect(free[free.length - 1]!).toBeGreaterThan(free[3]! + 200 * 8);
  });

  it('fed in two pieces at every boundary, admitting its ids from the summary (NEEDS_LOG for the ids parked before the head)', () => {
    const log = loop(40, 'canonical');
    const comparison = new CoreComparison(cores.wasm!, cores.reference);
    const plan = planRequests(log);
    const requests = [...plan.idResumes.filter((_, i) => i % 7 === 0), ...plan.reservedResumes];
    let needsLog = 0;
    for (const cut of recordBoundaries(log)) {
      const d = comparison.split(log, cut, requests);
      if (d) throw new Error(describeDivergence(d));
      const summary = fedParts(cores.reference.feedEncoded(EMPTY_SUMMARY, log.subarray(0, cut)), 0)!.summary;
      for (const r of requests) if (summary.length > 0 && cores.reference.admitFromEncoded(summary, r)[1] === RefusalReason.NEEDS_LOG) needsLog++;
    }
    expect(needsLog).toBeGreaterThan(100);
    // Both cores, each: admitFrom's NEEDS_LOG where admit answered from the log, allowed by the split check.
    expect(comparison.stats.reservedNeedsLog).toBeGreaterThan(2 * 100);
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
