/**
 * `npm run soak` (about 2 minutes: SQLite with 4 local workers, then PostgreSQL with 4 workers on 4
 * hosts when root and the namespaces work, NOT RUN with the reason otherwise); `-- --long` (about
 * 21 minutes: each phase 14 times longer). Options: --seed N, --out DIR (default reports/soak), --store sqlite|postgres|both,
 * --workers N, --max-ops N, --canary lost-append-reported-committed|unstable-effect-key (test-only).
 * Exit code 0 when the checker passes on every store that ran, 10 otherwise.
 */
import path from 'node:path';
import { Command } from 'commander';
import { REPO_ROOT } from '../harness/systems.js';
import type { SoakCanary } from './campaign.js';
import { postgresPhases, soakStore, sqlitePhases } from './soak.js';
import { renderTerminal, writeSoakReports, type SoakReport, type StoreReport } from './report.js';

const program = new Command()
  .name('remit-soak')
  .option('--long', 'the long profile (each phase 14 times longer, about 21 minutes)', false)
  .option('--seed <n>', 'seed', '1')
  .option('--out <dir>', 'report directory', 'reports/soak')
  .option('--store <s>', 'sqlite, postgres or both', 'both')
  .option('--workers <n>', 'worker processes', '4')
  .option('--max-ops <n>', 'operations at most per store', '200000')
  .option('--scale <x>', 'multiply every phase length by x (the default profile is 1, --long is 14)')
  .option('--canary <name>', 'test-only: a worker with a guard switched off');
program.parse();
const opts = program.opts<{ scale?: string; long: boolean; seed: string; out: string; store: string; workers: string; maxOps: string; canary?: string }>();

const scale = opts.scale !== undefined ? Number(opts.scale) : opts.long ? 14 : 1;
if (!(scale > 0)) throw new Error(`--scale must be a positive number, got ${opts.scale}`);
const outDir = path.resolve(REPO_ROOT, opts.out);
const stores = opts.store === 'both' ? (['sqlite', 'postgres'] as const) : ([opts.store] as Array<'sqlite' | 'postgres'>);
const extra = [opts.long ? '--long' : '', opts.scale !== undefined ? `--scale ${opts.scale}` : '', opts.seed !== '1' ? `--seed ${opts.seed}` : '', opts.store !== 'both' ? `--store ${opts.store}` : '', opts.canary ? `--canary ${opts.canary}` : ''].filter((x) => x.length > 0);
const command = `npm run soak${extra.length > 0 ? ` -- ${extra.join(' ')}` : ''}`;
const results: StoreReport[] = [];
for (const store of stores) {
  if (store !== 'sqlite' && store !== 'postgres') throw new Error(`--store must be sqlite, postgres or both, got ${store}`);
  const t0 = Date.now();
  console.error(`soak: ${store}, ${opts.workers} workers, seed ${opts.seed}${opts.canary ? `, canary ${opts.canary}` : ''}`);
  const r = await soakStore({
    store,
    workers: Number(opts.workers),
    seed: Number(opts.seed),
    phases: store === 'sqlite' ? sqlitePhases(scale) : postgresPhases(scale),
    maxOps: Number(opts.maxOps),
    outDir: path.join(outDir, store),
    ...(opts.canary === undefined ? {} : { canary: opts.canary as SoakCanary }),
    command,
    log: (l) => console.error(`  ${l}`),
  });
  if (r.status !== 'run') console.error(`NOT RUN ${store}: ${r.reason}`);
  console.error(`soak: ${store} took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  results.push(r);
}
const report: SoakReport = { format: 'remit-soak-report/1', profile: opts.long ? 'long' : 'default', stores: results };
const written = writeSoakReports(outDir, report);
console.log(renderTerminal(report));
console.error(`reports: ${written.json}, ${written.markdown}, ${written.html}`);
process.exit(results.every((r) => r.status !== 'run' || r.check?.ok) ? 0 : 10);
