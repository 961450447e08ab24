/**
 * Wasm core ≡ reference core: byte-identical recovery and admission encodings at every prefix of
 * every generated log. Run counts are bounded for `npm test` (REMIT_EQ_SCALE multiplies them; the
 * long campaign is `npm run fuzz`). The seed is random per run and printed on failure;
 * REMIT_EQ_SEED=n replays one.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  framedJunkArb, grammarLogArb, modelLogArb, mutatedLogArb, rawBytesArb, type LogCase,
} from './arbitraries.js';
import { loadCoresUnderTest, NO_WASM_HELP } from './cores.js';
import { ACTION_TAGS, ADMISSION_VERDICTS, countingCore, OutcomeTally } from './coverage.js';
import { runEquivalence, scaledRuns, scaleFromEnv } from './property.js';

const cores = await loadCoresUnderTest();
const scale = scaleFromEnv();
const runs = (n: number) => scaledRuns(n, scale);

describe('the Wasm core', () => {
  it('is built (REMIT_ALLOW_NO_WASM=1 skips the Wasm comparisons, loudly)', () => {
    if (cores.wasm === null && !cores.allowNoWasm) throw new Error(`${NO_WASM_HELP}\n${cores.wasmMissing}`);
  });
});

const families: Array<[string, fc.Arbitrary<LogCase>, number, 'all' | 'boundary±']> = [
  ['model histories (forks, failures, every crash point)', modelLogArb(28), 160, 'boundary±'],
  ['model histories, every byte cut', modelLogArb(12), 40, 'all'],
  ['mutated model logs (bit flips, truncation, duplicated/reordered/spliced records)', mutatedLogArb(20), 200, 'boundary±'],
  ['raw random bytes', rawBytesArb, 200, 'all'],
  ['framed random payloads of every kind byte', framedJunkArb, 150, 'all'],
];

describe.skipIf(cores.wasm === null)('wasm ≡ reference', () => {
  it.each(families)('%s', (label, arb, numRuns, cuts) => {
    const result = runEquivalence(cores.wasm!, cores.reference, arb, { numRuns: runs(numRuns), compare: { cuts }, label });
    if (result.message) throw new Error(result.message);
    expect(result.details.numRuns).toBe(runs(numRuns));
  });

  // The grammar family is there to reach deep states and every ordering rule: over its runs, every
  // next action and both verdicts of every request kind must occur (its answers are counted on the
  // reference side of the comparison), and so must recovery errors (its damaged records).
  it('protocol walks over a small vocabulary (one record damaged in two) reach every next action and verdict', () => {
    const tally = new OutcomeTally();
    const label = 'protocol walks over a small vocabulary (coverage counted)';
    const result = runEquivalence(cores.wasm!, countingCore(cores.reference, tally), grammarLogArb, {
      numRuns: runs(200), compare: { cuts: 'boundary±' }, label,
    });
    if (result.message) throw new Error(result.message);
    const missing = tally.missing([...ACTION_TAGS, ...ADMISSION_VERDICTS, 'recovery errors']);
    if (missing.length > 0) throw new Error(`the grammar family never reached: ${missing.join(', ')}\n(counts: ${tally})`);
    console.log(`[equivalence] grammar family, ${result.details.numRuns} runs: ${tally}`);
  });
});
