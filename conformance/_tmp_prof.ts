import { runProfile } from './harness/profile.js';
import { findSystem } from './harness/systems.js';
import { findCell } from './harness/cells.js';
const cells = process.argv.slice(3).map(findCell);
const t0 = Date.now();
const { profile, timing } = await runProfile(findSystem(process.argv[2]!), cells, { seed: 1, workDir: '/tmp/cfw', shrink: false, shrinkBudget: 0 });
for (const c of profile.cells) {
  console.log('==', c.cellId, c.applicable ? '' : c.reason, c.saturation);
  for (const [p, v] of Object.entries(c.verdicts)) console.log('  ', p, v.status, JSON.stringify(v.status === 'violated' ? v.evidence : v.status === 'holds' ? v.notes : v.reason));
}
console.log(timing, Date.now() - t0);
