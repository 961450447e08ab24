// Usage: tsx mutrun.ts <mutant module path>
import { anyLogArb } from '../arbitraries.js';
import { runEquivalence } from '../property.js';
import { enumerateHistories } from '../enumerate.js';
import { reference } from '../../ts-shell/src/core/reference-core.js';
const mod = await import(process.argv[2]!);
const mutant = mod.createReferenceCore();
const r = runEquivalence(mutant, reference, anyLogArb(28), { numRuns: 1500, seed: 11, compare: { cuts: 'boundary±' }, writeCorpus: false, label: 'mutant' });
const e = enumerateHistories(mutant, reference, { maxRecords: 12, cuts: 'edges' });
console.log(process.argv[3], 'fuzz:', r.details.failed ? `CAUGHT after ${r.details.numRuns}` : 'missed', '| enum:', e.divergence ? 'CAUGHT' : 'missed');
