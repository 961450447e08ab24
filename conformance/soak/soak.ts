/**
 * One store's soak: set-up (for PostgreSQL: the project's namespaces and the soak's own server),
 * the driver, the checker, the figures. Used by the CLI (./cli.ts) and the smoke test.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, TSX_NODE_ARGS } from '../harness/systems.js';
import { readHistory } from './history.js';
import { SoakDriver, type SoakOptions } from './campaign.js';
import { checkSoak } from './checker.js';
import { figuresOf } from './figures.js';
import { LinkFaults, ServerFaults, type Phase } from './nemesis.js';
import type { StoreReport } from './report.js';

export const SOAK_PG_PORT = 55431;
export const SOAK_HOSTS = 4;
const BRIDGE_ADDRESS = '10.213.0.1';

/** One store's soak: the campaign's own options, with the drain deadline optional, and the command line it reports. */
export interface StoreSoakOptions
  extends Pick<SoakOptions, 'store' | 'workers' | 'seed' | 'phases' | 'maxOps' | 'outDir' | 'canary' | 'log'>,
    Partial<Pick<SoakOptions, 'drainDeadlineMs'>> {
  command: string;
}

export function sqlitePhases(scale: number): Phase[] {
  return [
    { name: 'quiet', fault: null, duration_ms: 8_000 * scale },
    { name: 'worker-kill', fault: 'worker-kill', duration_ms: 16_000 * scale },
    { name: 'quiet-after', fault: null, duration_ms: 8_000 * scale },
  ];
}

export function postgresPhases(scale: number): Phase[] {
  const d = 6_000 * scale;
  return [
    { name: 'quiet', fault: null, duration_ms: d },
    { name: 'worker-kill', fault: 'worker-kill', duration_ms: d },
    { name: 'server-kill', fault: 'server-kill', duration_ms: d + 6_000 },
    { name: 'link-throttle', fault: 'link-throttle', duration_ms: d },
    { name: 'link-loss', fault: 'link-loss', duration_ms: d },
    { name: 'partition', fault: 'partition', duration_ms: d + 6_000 },
    { name: 'quiet-after', fault: null, duration_ms: d },
  ];
}

/** Why the PostgreSQL soak cannot run here (null: it can). */
export function postgresPrecondition(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.REMIT_SKIP_NETNS === '1') return 'REMIT_SKIP_NETNS=1 asked to skip network namespaces';
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'network namespaces, link faults and the server kill need root';
  const deps = spawnSync('bash', [path.join(REPO_ROOT, 'scripts/soak-deps.sh')], { encoding: 'utf8', timeout: 300_000 });
  if (deps.status !== 0) return `scripts/soak-deps.sh failed: ${`${deps.stdout}${deps.stderr}`.trim().slice(-300)}`;
  return LinkFaults.precondition();
}

function sh(args: string[], env: Record<string, string>): void {
  const r = spawnSync('bash', args, { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`bash ${args.join(' ')} failed: ${`${r.stdout}${r.stderr}`.trim().slice(-600)}`);
}

function pgEnv(): Record<string, string> {
  return { REMIT_PG_PORT: String(SOAK_PG_PORT), REMIT_PG_LISTEN: `127.0.0.1,${BRIDGE_ADDRESS}`, REMIT_PG_ALLOW: '10.213.0.0/24', REMIT_PG_URL_HOST: '127.0.0.1' };
}

export async function soakStore(o: StoreSoakOptions): Promise<StoreReport> {
  let postgres: ConstructorParameters<typeof SoakDriver>[0]['postgres'];
  if (o.store === 'postgres') {
    const why = postgresPrecondition();
    if (why !== null) return { store: 'postgres', status: 'NOT RUN', reason: why };
    sh(['scripts/netns.sh', 'up', String(SOAK_HOSTS)], {});
    sh(['scripts/pg.sh', 'start'], pgEnv());
    const url = (h: string) => `postgres://remit:remit@${h}:${SOAK_PG_PORT}/remit_test`;
    postgres = {
      rootEnv: { REMIT_PG_URL: url('127.0.0.1') },
      hostEnv: { REMIT_PG_URL: url(BRIDGE_ADDRESS) },
      hosts: SOAK_HOSTS,
      server: new ServerFaults(REPO_ROOT, pgEnv(), `/var/tmp/remit-pg-${SOAK_PG_PORT}/data`),
    };
  }
  const driver = new SoakDriver({
    store: o.store,
    workers: o.workers,
    seed: o.seed,
    phases: o.phases,
    maxOps: o.maxOps,
    outDir: o.outDir,
    adapter: { command: process.execPath, args: [...TSX_NODE_ARGS, path.join(REPO_ROOT, 'conformance/adapters/remit/adapter.ts')], cwd: REPO_ROOT },
    ...(postgres === undefined ? {} : { postgres }),
    ...(o.canary === undefined ? {} : { canary: o.canary }),
    drainDeadlineMs: o.drainDeadlineMs ?? 45_000,
    requestTimeoutMs: 25_000,
    generatedPool: 12,
    ...(o.log === undefined ? {} : { log: o.log }),
  });
  try {
    const soak = await driver.run();
    const check = checkSoak(soak.files, soak.drain.unfinished);
    const figures = figuresOf(soak.files.history, soak);
    return {
      store: o.store,
      status: 'run',
      command: o.command,
      workers: o.workers,
      hosts: postgres === undefined ? [] : Array.from({ length: SOAK_HOSTS }, (_, i) => `remit-h${i + 1}`),
      seed: o.seed,
      canary: o.canary ?? null,
      figures,
      check,
      timeline: timelineOf(soak.files.history, soak),
    };
  } finally {
    if (o.store === 'postgres') {
      for (const args of [['scripts/pg.sh', 'stop'], ['scripts/netns.sh', 'down']]) {
        try {
          sh(args, args[0] === 'scripts/pg.sh' ? pgEnv() : {});
        } catch (e) {
          o.log?.(String(e));
        }
      }
    }
  }
}

function timelineOf(historyPath: string, soak: Awaited<ReturnType<SoakDriver['run']>>): StoreReport['timeline'] {
  const h = readHistory(historyPath);
  const end = soak.drain.end_ms;
  const buckets = new Array<number>(Math.max(1, Math.ceil(end / 1000))).fill(0);
  const faults: NonNullable<StoreReport['timeline']>['faults'] = [];
  for (const l of h) {
    if (l.k === 'op' && l.type !== 'invoke' && l.type !== 'info') {
      const i = Math.floor(l.t_ms / 1000);
      if (i < buckets.length) buckets[i]!++;
    } else if (l.k === 'nemesis') faults.push({ t_s: Math.round(l.t_ms / 100) / 10, fault: l.fault, action: l.action, target: l.target });
  }
  return { ops_per_s: buckets, faults, phases: [...soak.phases.map((p) => ({ name: p.name, start_s: Math.round(p.start_ms / 100) / 10 })), { name: 'drain', start_s: Math.round(soak.drain.start_ms / 100) / 10 }] };
}
