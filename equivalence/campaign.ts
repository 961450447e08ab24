/**
 * The long campaign's engine (./fuzz.ts is its command line): history i of a campaign with seed S
 * is a pure function of (S, i), whatever the number of workers, so any history can be replayed
 * alone. It is fast-check's first value of `historyProperty` for the fast-check seed
 * `historySeed(S, i)` and the bias `historyBias(i)`, checked by ./sampled.ts with a sampling PRNG
 * seeded from (S, i). On a divergence `shrinkHistory` re-runs that fast-check seed under fc.check
 * with the full check of ./compare.ts (a superset of the sampled one), so fast-check shrinks it.
 */

import fc from 'fast-check';
import type { RecoveryCore } from 'remit/core';
import { anyLogArb, type LogCase } from './arbitraries.js';
import { CoreComparison, type CompareOptions, type Divergence } from './compare.js';
import { loadExtractedModel, ModelOracle } from './oracle.js';
import { divergenceNote, writeCorpusEntry } from './corpus.js';
import { splitRecords } from './mutations.js';
import { DivergenceError } from './property.js';
import { describeDivergence } from './report.js';
import { Coverage, CUT_KINDS, REQUEST_KINDS, SampledCheck, SamplingRng, type SampledCheckOptions } from './sampled.js';

export interface CampaignOptions {
  seed: number;
  maxSteps: number;
  check: SampledCheckOptions;
  /**
   * Every this many histories (index 0, N, 2N, ...) get the full check of ./compare.ts instead:
   * every request at every boundary, boundary± cuts plus the sampled arbitrary ones. 0 = never.
   */
  fullCheckEvery: number;
  /** Also check every answer the cores agree on against the extracted model (./oracle.ts); it must be built. */
  oracle?: boolean;
}

export const DEFAULT_FULL_CHECK_EVERY = 16;

/** A 32-bit avalanche of (seed, index, stream): independent-looking seeds for neighbouring i. */
export function mix32(seed: number, index: number, stream: number): number {
  let h = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35) ^ Math.imul(stream + 1, 0x27d4eb2f)) | 0;
  for (let round = 0; round < 2; round++) {
    h ^= h >>> 16;
    h = Math.imul(h, 0x7feb352d);
    h ^= h >>> 15;
    h = Math.imul(h, 0x846ca68b);
    h ^= h >>> 16;
    h = (h + Math.imul(index, 0x9e3779b9) + round) | 0;
  }
  return h | 0;
}

/** The fast-check seed of history `index`. */
export const historySeed = (seed: number, index: number) => mix32(seed, index, 0);
/** The seed of the sampling PRNG of history `index` (requests and cuts). */
export const samplingSeed = (seed: number, index: number) => mix32(seed, index, 1);

/**
 * fast-check's bias factor for history `index`: 2 + log10 of (index mod 10 000) + 1, as fast-check
 * itself lowers the bias over a run's first 10 000 values (2 = often small values, 6 = rarely).
 */
export function historyBias(index: number): number {
  return 2 + Math.floor(Math.log10((index % 10_000) + 1));
}

/** An arbitrary that always generates with one bias factor, whatever fast-check's run index. */
class FixedBiasArbitrary<T> extends fc.Arbitrary<T> {
  constructor(private readonly inner: fc.Arbitrary<T>, private readonly bias: number) {
    super();
  }
  generate(mrng: fc.Random): fc.Value<T> {
    return this.inner.generate(mrng, this.bias);
  }
  canShrinkWithoutContext(value: unknown): value is T {
    return this.inner.canShrinkWithoutContext(value);
  }
  shrink(value: T, context: unknown): fc.Stream<fc.Value<T>> {
    return this.inner.shrink(value, context);
  }
}

/** The property whose first value for historySeed(S, i) is history i. */
export function historyProperty(maxSteps: number, bias: number, predicate: (c: LogCase) => void): fc.IPropertyWithHooks<[LogCase]> {
  return fc.property(new FixedBiasArbitrary(anyLogArb(maxSteps), bias), predicate);
}

/** Runs histories by index, keeping what it asked and answered in `coverage`. */
export class CampaignRunner {
  readonly coverage = new Coverage();
  readonly comparison: CoreComparison;
  private readonly check: SampledCheck;
  private readonly properties = new Map<number, fc.IPropertyWithHooks<[LogCase]>>();
  histories = 0;
  logs = 0;

  constructor(readonly a: RecoveryCore, readonly b: RecoveryCore, readonly options: CampaignOptions) {
    this.comparison = new CoreComparison(a, b, options.oracle ? new ModelOracle(loadExtractedModel({ build: false }), b.name) : null);
    this.check = new SampledCheck(this.comparison, options.check, this.coverage);
  }

  private property(bias: number): fc.IPropertyWithHooks<[LogCase]> {
    let p = this.properties.get(bias);
    if (!p) this.properties.set(bias, (p = historyProperty(this.options.maxSteps, bias, () => {})));
    return p;
  }

  historyCase(index: number): LogCase {
    const [value] = fc.sample(this.property(historyBias(index)), { seed: historySeed(this.options.seed, index), numRuns: 1 });
    return value![0];
  }

  /** Check history `index`; its first divergence or null. */
  runHistory(index: number): { divergence: Divergence; source: string } | null {
    const c = this.historyCase(index);
    const rng = new SamplingRng(samplingSeed(this.options.seed, index));
    this.histories++;
    this.coverage.add(`history: ${c.source.startsWith('mutated') ? 'mutated' : c.source}`);
    const full = this.options.fullCheckEvery > 0 && index % this.options.fullCheckEvery === 0;
    if (full) this.coverage.add('history: full check');
    for (const log of c.logs) {
      this.logs++;
      const divergence = full ? this.fullCheck(log, rng) : this.check.run(log, rng);
      if (divergence) return { divergence, source: c.source };
    }
    return null;
  }

  private fullCheck(log: Uint8Array, rng: SamplingRng): Divergence | null {
    const extraCuts = Array.from({ length: this.options.check.arbitraryCutsPerLog }, () => rng.below(log.length + 1));
    return this.comparison.everyPrefix(log, { cuts: this.options.check.cuts === 'all' ? 'all' : 'boundary±', extraCuts });
  }
}

/** The kinds a campaign with these options must have asked at least once (Coverage keys). */
export function expectedKinds(check: SampledCheckOptions): string[] {
  const cuts = check.cuts === 'none' ? [] : CUT_KINDS.filter((k) => k !== 'cut anywhere' || check.arbitraryCutsPerLog > 0);
  if (check.cuts === 'all') return [...REQUEST_KINDS, 'cut at any byte', ...cuts.filter((k) => !k.startsWith('cut at'))];
  return [...REQUEST_KINDS, ...cuts];
}

export interface ShrinkResult {
  message: string;
  divergence: Divergence | null;
  corpusName: string | null;
}

/**
 * Re-run history `index` under fc.check (same fast-check seed and bias, so the same first value)
 * with the full check, and let fast-check shrink it; write the shrunk log to the corpus. The full
 * check asks every request at every boundary, and every byte cut when the divergence was at a cut.
 */
export function shrinkHistory(
  a: RecoveryCore, b: RecoveryCore, options: CampaignOptions, index: number, found: Divergence,
  settings: { writeCorpus: boolean; label: string },
): ShrinkResult {
  const seed = historySeed(options.seed, index);
  const bias = historyBias(index);
  const comparison = new CoreComparison(a, b, options.oracle ? new ModelOracle(loadExtractedModel({ build: false }), b.name) : null);
  const compare: CompareOptions = { cuts: isBoundaryPrefix(found) ? 'none' : 'all' };
  const property = historyProperty(options.maxSteps, bias, (c) => {
    for (const log of c.logs) {
      const d = comparison.everyPrefix(log, compare);
      if (d) throw new DivergenceError(d, c.source);
    }
  });
  const details = fc.check(property, { seed, numRuns: 1 });
  const err = details.errorInstance;
  const shrunk = err instanceof DivergenceError ? err.divergence : found;
  const source = err instanceof DivergenceError ? err.source : 'campaign history';
  const replay = `npm run fuzz -- --seed ${options.seed} --history ${index} --max-steps ${options.maxSteps}`;
  let corpusName: string | null = null;
  if (settings.writeCorpus) {
    corpusName = writeCorpusEntry(shrunk.log, {
      note: `shrunk counterexample of "${settings.label}" (${a.name} vs ${b.name}), history ${index} of campaign seed ${options.seed}`,
      source, seed, path: details.counterexamplePath ?? undefined, divergence: divergenceNote(shrunk),
    });
  }
  const message = [
    `DIVERGENCE in history ${index} of campaign seed ${options.seed} (${source})`,
    `replay: ${replay}`,
    details.failed
      ? `fast-check: seed ${seed}, bias ${bias}, path "${details.counterexamplePath}" (${details.numShrinks} shrinks)`
      : 'fast-check did not reproduce it under the full check: the unshrunk divergence follows',
    corpusName ? `written to equivalence/corpus/${corpusName}.hex` : '',
    describeDivergence(shrunk),
  ].filter(Boolean).join('\n');
  return { message, divergence: shrunk, corpusName };
}

/** Whether a divergence happened at a whole-record prefix (as its length and version bytes say). */
function isBoundaryPrefix(d: Divergence): boolean {
  return splitRecords(d.log).rest.length === 0;
}
