import { framedJunkArb, grammarLogArb, modelLogArb, mutatedLogArb, rawBytesArb } from '../arbitraries.js';
import { runEquivalence } from '../property.js';
import { reference, createReferenceCore } from '../../ts-shell/src/core/reference-core.js';
const b = createReferenceCore();
const fams = [['model', modelLogArb(28), 160, 'boundary±'], ['model-all', modelLogArb(12), 40, 'all'], ['mut', mutatedLogArb(20), 200, 'boundary±'], ['grammar', grammarLogArb, 200, 'boundary±'], ['raw', rawBytesArb, 200, 'all'], ['framed', framedJunkArb, 150, 'all']] as const;
for (const [l, arb, n, cuts] of fams) {
  const t = performance.now();
  const r = runEquivalence(reference, b, arb as any, { numRuns: n, compare: { cuts }, label: l, seed: 5 });
  console.log(l, (performance.now() - t).toFixed(0), 'ms', r.details.failed);
}
