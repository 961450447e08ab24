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
  ['random record sequences over a small vocabulary', grammarLogArb, 200, 'boundary±'],
  ['raw random bytes', rawBytesArb, 200, 'all'],
  ['framed random payloads of every kind byte', framedJunkArb, 150, 'all'],
];

describe.skipIf(cores.wasm === null)('wasm ≡ reference', () => {
  it.each(families)('%s', (label, arb, numRuns, cuts) => {
    const result = runEquivalence(cores.wasm!, cores.reference, arb, { numRuns: runs(numRuns), compare: { cuts }, label });
    if (result.message) throw new Error(result.message);
    expect(result.details.numRuns).toBe(runs(numRuns));
  });
});
