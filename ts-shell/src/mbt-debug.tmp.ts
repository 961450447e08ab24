import fc from 'fast-check';
import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
import { createCore } from './core/index.js';
import { modelScript } from './testing/model/commands.js';
import { Model, RealSystem } from './testing/model/system.js';
const reference = await createCore('reference');
const counts: Record<string, number> = {};
let total = 0;
await fc.assert(fc.asyncProperty(modelScript(20), async (cmds) => {
  const real = new RealSystem('memory', reference, [reference], mkdtempSync(join(tmpdir(), 'x')));
  const wrapped = [...cmds].map((c) => ({ check: (m: any) => c.check(m), run: async (m: any, r: any) => { const k = String(c).split('(')[0]!; counts[k] = (counts[k] ?? 0) + 1; total++; await c.run(m, r); }, toString: () => String(c) }));
  await fc.asyncModelRun(() => ({ model: new Model(), real }), wrapped as any);
}), { numRuns: 25, seed: 42 });
console.log(total, counts);
