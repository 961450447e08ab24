import fc from 'fast-check';
import { anyLogArb, modelLogArb } from '../arbitraries.ts';
import { CoreComparison } from '../compare.ts';
import { reference, createReferenceCore } from '../../ts-shell/src/core/reference-core.ts';
const b = createReferenceCore();
const samples = fc.sample(anyLogArb(30), { numRuns: 200, seed: 1 });
let bytes = 0, logs = 0;
for (const s of samples) for (const l of s.logs) { bytes += l.length; logs++; }
console.log('logs', logs, 'avg bytes', bytes / logs);
for (const cuts of ['none', 'boundary±', 'all'] as const) {
  const cmp = new CoreComparison(reference, b);
  const t = performance.now();
  for (const s of samples) for (const l of s.logs) { const d = cmp.everyPrefix(l, { cuts }); if (d) throw new Error('div'); }
  console.log(cuts, (performance.now() - t).toFixed(0), 'ms', cmp.stats);
}
const src: Record<string, number> = {};
for (const s of samples) src[s.source.split('(')[0]!] = (src[s.source.split('(')[0]!] ?? 0) + 1;
console.log(src);
