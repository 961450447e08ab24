/**
 * The equivalence property and its runner: for every generated case, every log it holds is
 * compared at every prefix (./compare.ts). A failure names the seed and path (to replay with
 * fast-check), prints the shrunk divergence, and writes its log to the corpus.
 */

import fc from 'fast-check';
import type { RecoveryCore } from 'remit/core';
import type { LogCase } from './arbitraries.js';
import { CoreComparison, type CompareOptions, type Divergence } from './compare.js';
import { divergenceNote, writeCorpusEntry } from './corpus.js';
import type { ModelOracle } from './oracle.js';
import { describeDivergence } from './report.js';

export class DivergenceError extends Error {
  override readonly name = 'DivergenceError';
  constructor(readonly divergence: Divergence, readonly source: string) {
    super(`${source}: ${describeDivergence(divergence)}`);
  }
}

export function equivalenceProperty(
  comparison: CoreComparison,
  cases: fc.Arbitrary<LogCase>,
  compare: CompareOptions = {},
  onCase: () => void = () => {},
): fc.IPropertyWithHooks<[LogCase, number[]]> {
  return fc.property(cases, fc.array(fc.nat(), { maxLength: 6 }), (c, extraCuts) => {
    onCase();
    for (const log of c.logs) {
      const d = comparison.everyPrefix(log, { ...compare, extraCuts });
      if (d) throw new DivergenceError(d, c.source);
    }
  });
}

export interface EquivalenceRun {
  details: fc.RunDetails<[LogCase, number[]]>;
  divergence: Divergence | null;
  corpusName: string | null;
  message: string | null;
}

/** The seed of a run: REMIT_EQ_SEED when set (seedFromEnv), else one from the clock and the process id. */
export function defaultSeed(env: NodeJS.ProcessEnv = process.env): number {
  return seedFromEnv(env) ?? (Date.now() ^ (process.pid << 8)) | 0;
}

/**
 * REMIT_EQ_SEED, the seed a failure printed, or undefined when it is not set: a 32-bit signed
 * integer, as the fuzzer's --seed; any other text is refused by name, never read as NaN or 0.
 */
export function seedFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const fromEnv = env['REMIT_EQ_SEED'];
  if (fromEnv === undefined) return undefined;
  const seed = /^[+-]?\d+$/.test(fromEnv.trim()) ? Number(fromEnv) : NaN;
  if (!Number.isSafeInteger(seed) || seed < -(2 ** 31) || seed > 2 ** 31 - 1) {
    throw new RangeError(`REMIT_EQ_SEED wants an integer from -2147483648 to 2147483647, got ${JSON.stringify(fromEnv)}`);
  }
  return seed;
}

/**
 * REMIT_EQ_SCALE, the multiplier of the property tests' run counts (default 1): a positive finite
 * number; any other text is refused by name (`Number('abc')` is NaN, and fast-check runs no case
 * at all for a NaN or 0 count, so a typo passed every test without testing anything).
 */
export function scaleFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = env['REMIT_EQ_SCALE'];
  if (fromEnv === undefined) return 1;
  const scale = /^\s*[+]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(fromEnv) ? Number(fromEnv) : NaN;
  if (!Number.isFinite(scale) || scale <= 0) {
    throw new RangeError(`REMIT_EQ_SCALE wants a positive number (the multiplier of the run counts, e.g. 10), got ${JSON.stringify(fromEnv)}`);
  }
  return scale;
}

/** A run count `n` times the scale: at least one run. */
export function scaledRuns(n: number, scale: number): number {
  return Math.max(1, Math.round(n * scale));
}

/** Run the property; on failure, write the shrunk divergence to the corpus (unless told not to). */
export function runEquivalence(
  a: RecoveryCore,
  b: RecoveryCore,
  cases: fc.Arbitrary<LogCase>,
  options: {
    numRuns: number; seed?: number; compare?: CompareOptions; writeCorpus?: boolean; label: string; onCase?: () => void;
    /** Also compare with the extracted model (./oracle.ts). */
    oracle?: ModelOracle | null;
  },
): EquivalenceRun {
  const seed = options.seed ?? defaultSeed();
  const comparison = new CoreComparison(a, b, options.oracle ?? null);
  const details = fc.check(equivalenceProperty(comparison, cases, options.compare, options.onCase), { numRuns: options.numRuns, seed });
  if (!details.failed) return { details, divergence: null, corpusName: null, message: null };
  const err = details.errorInstance;
  const divergence = err instanceof DivergenceError ? err.divergence : null;
  let corpusName: string | null = null;
  if (divergence && options.writeCorpus !== false) {
    corpusName = writeCorpusEntry(divergence.log, {
      note: `shrunk counterexample of "${options.label}" (${a.name} vs ${b.name})`,
      source: err instanceof DivergenceError ? err.source : 'unknown',
      seed: details.seed, path: details.counterexamplePath ?? undefined,
      divergence: divergenceNote(divergence),
    });
  }
  const message = [
    `equivalence "${options.label}" failed after ${details.numRuns} runs (${details.numShrinks} shrinks)`,
    `replay: seed ${details.seed}, path "${details.counterexamplePath}"`,
    corpusName ? `written to equivalence/corpus/${corpusName}.hex` : '',
    err instanceof Error ? err.message : String(err),
  ].filter(Boolean).join('\n');
  return { details, divergence, corpusName, message };
}
