import fc from 'fast-check';
import { historyArb, historyLogs } from '../arbitraries.js';
import { runChoices } from '../model.js';
import { describeLog } from '../report.js';
import { reference } from '../../ts-shell/src/core/reference-core.js';
const hs = fc.sample(historyArb(30), { numRuns: 300, seed: 2 });
const counts: number[] = [];
const statuses: Record<string, number> = {};
for (const h of hs) {
  const ex = runChoices(h.workflow, h.choices);
  counts.push(ex.records.length);
  for (const l of ex.logs()) { const r = reference.recover(l); const k = r.ok ? `status${r.status}/${r.action.tag}` : `err${r.code}`; statuses[k] = (statuses[k] ?? 0) + 1; }
}
counts.sort((a, b) => a - b);
console.log('records p10/p50/p90/max', counts[30], counts[150], counts[270], counts[299]);
console.log(statuses);
console.log(describeLog(runChoices(hs[5]!.workflow, hs[5]!.choices).logs().at(-1)!));
