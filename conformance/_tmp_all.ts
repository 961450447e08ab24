import { runProfile } from './harness/profile.js';
import { findSystem } from './harness/systems.js';
import { ALL_CELLS, FAULT_CELLS, CONCURRENCY_CELLS } from './harness/cells.js';
const which = process.argv[3] ?? 'all';
const cells = which === 'fault' ? FAULT_CELLS : which === 'conc' ? CONCURRENCY_CELLS : ALL_CELLS;
const t0 = Date.now();
const { profile, timing } = await runProfile(findSystem(process.argv[2]!), cells, { seed: 1, workDir: '/tmp/cfw-' + process.argv[2], shrink: false, shrinkBudget: 0 });
let viol = 0;
for (const c of profile.cells) {
  const bad = Object.entries(c.verdicts).filter(([, v]) => v.status === 'violated');
  if (!c.applicable) { console.log('NA', c.cellId, c.reason); continue; }
  const na = Object.entries(c.verdicts).filter(([, v]) => v.status === 'not-applicable').map(([p, v]) => p + ':' + (v as any).reason);
  if (bad.length || na.length) console.log(c.cellId, c.saturation ? JSON.stringify(c.saturation) : '', JSON.stringify(bad.map(([p, v]) => [p, (v as any).evidence])), na.join(' | '));
  viol += bad.length;
}
for (const [p, s] of Object.entries(profile.properties)) console.log(p, s.status, s.holds, s.violated, s.notApplicable);
console.log(timing, Date.now() - t0, 'violations', viol);
