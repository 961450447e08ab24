/**
 * The nemesis: faults on a seeded schedule, and their healing. It touches only what the soak owns:
 * its own worker processes (by pid), its own PostgreSQL server (the postmaster of the soak's data
 * directory and that postmaster's children, by pid), and the links of the project's own network
 * namespaces (scripts/netns.sh: remit-hK, eth0 toward the bridge 10.213.0.1), through rules inside
 * those namespaces only. Every fault is healed by `healAll`, which the driver also calls on exit.
 *
 * Link faults: this kernel has no `netem` qdisc (`tc qdisc add ... netem` answers "Specified qdisc
 * kind is unknown"), so delay is a token-bucket throttle (`tc qdisc ... tbf`, queueing delay on the
 * host's egress) and loss is iptables' `statistic` match (random drops in both directions).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Prng } from '../harness/prng.js';

export const FAULT_KINDS = ['worker-kill', 'server-kill', 'link-throttle', 'link-loss', 'partition'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** A phase of the schedule: `none` (no fault) or one fault kind, for `duration_ms`. */
export interface Phase {
  name: string;
  fault: FaultKind | null;
  duration_ms: number;
}

/** One planned injection: at `at_ms` from the phase's start; healed at `heal_ms` (link faults). */
export interface PlannedFault {
  kind: FaultKind;
  at_ms: number;
  heal_ms: number | null;
  /** Worker slot (worker-kill) or host index (link faults). */
  target: number;
}

/** The seeded plan of one phase. Pure: the same (seed, phase, workers, hosts) gives the same plan. */
export function planPhase(seed: number, phase: Phase, index: number, workers: number, hosts: number): PlannedFault[] {
  if (phase.fault === null) return [];
  const prng = new Prng(seed).fork(`nemesis/${index}/${phase.name}`);
  const out: PlannedFault[] = [];
  const d = phase.duration_ms;
  if (phase.fault === 'worker-kill') {
    for (let at = prng.int(300, 1500); at < d - 500; at += prng.int(1500, 3500)) out.push({ kind: 'worker-kill', at_ms: at, heal_ms: null, target: prng.int(0, workers - 1) });
  } else if (phase.fault === 'server-kill') {
    for (let at = prng.int(500, 1500); at < d - 2000; at += prng.int(4000, 7000)) out.push({ kind: 'server-kill', at_ms: at, heal_ms: null, target: 0 });
  } else {
    // One host at a time, faulted for most of the phase, healed before its end (partitions: two shorter ones).
    const count = phase.fault === 'partition' ? 2 : 1;
    const slot = d / count;
    for (let i = 0; i < count; i++) {
      const at = Math.round(i * slot + prng.int(200, 600));
      const heal = Math.round((i + 1) * slot - prng.int(600, 1200));
      out.push({ kind: phase.fault, at_ms: at, heal_ms: Math.max(at + 500, heal), target: prng.int(1, hosts) });
    }
  }
  return out;
}

function run(cmd: string, args: string[], timeoutMs = 15_000): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

const CHAIN = 'REMIT_SOAK';
const BRIDGE_ADDRESS = '10.213.0.1';

/** Only the project's own namespaces: remit-h1..remit-h32. */
function namespaceOf(host: number): string {
  if (!Number.isInteger(host) || host < 1 || host > 32) throw new RangeError(`host must be 1..32, got ${host}`);
  return `remit-h${host}`;
}

function inHost(host: number, cmd: string[]): { ok: boolean; out: string } {
  return run('ip', ['netns', 'exec', namespaceOf(host), ...cmd]);
}

/** Link faults inside host namespaces, all in one iptables chain of the soak's own, and a tbf qdisc. */
export class LinkFaults {
  private readonly prepared = new Set<number>();

  /** Why link faults cannot run here (null: they can). */
  static precondition(): string | null {
    if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'link faults need root';
    if (!run('iptables', ['--version']).ok) return 'iptables is not installed (as root, bash scripts/soak-deps.sh installs it from Debian)';
    if (!run('tc', ['-V']).ok) return 'tc (iproute2) is not installed';
    return null;
  }

  private prepare(host: number): void {
    if (this.prepared.has(host)) return;
    inHost(host, ['iptables', '-N', CHAIN]); // exists already after an earlier soak: fine
    inHost(host, ['iptables', '-F', CHAIN]);
    for (const [hook, dir] of [['OUTPUT', '-d'], ['INPUT', '-s']] as const) {
      if (!inHost(host, ['iptables', '-C', hook, dir, BRIDGE_ADDRESS, '-j', CHAIN]).ok) {
        const r = inHost(host, ['iptables', '-I', hook, '1', dir, BRIDGE_ADDRESS, '-j', CHAIN]);
        if (!r.ok) throw new Error(`iptables in ${namespaceOf(host)}: ${r.out}`);
      }
    }
    this.prepared.add(host);
  }

  inject(kind: 'link-throttle' | 'link-loss' | 'partition', host: number): string {
    this.prepare(host);
    if (kind === 'link-throttle') {
      const r = inHost(host, ['tc', 'qdisc', 'replace', 'dev', 'eth0', 'root', 'tbf', 'rate', '256kbit', 'burst', '4kb', 'latency', '800ms']);
      if (!r.ok) throw new Error(`tc in ${namespaceOf(host)}: ${r.out}`);
      return 'tbf rate 256kbit burst 4kb latency 800ms on eth0';
    }
    const rule = kind === 'link-loss' ? ['-m', 'statistic', '--mode', 'random', '--probability', '0.2', '-j', 'DROP'] : ['-j', 'DROP'];
    const r = inHost(host, ['iptables', '-A', CHAIN, ...rule]);
    if (!r.ok) throw new Error(`iptables in ${namespaceOf(host)}: ${r.out}`);
    return kind === 'link-loss' ? 'drop 20% of packets to and from 10.213.0.1' : 'drop every packet to and from 10.213.0.1';
  }

  heal(host: number): void {
    if (!this.prepared.has(host)) return;
    inHost(host, ['iptables', '-F', CHAIN]);
    inHost(host, ['tc', 'qdisc', 'del', 'dev', 'eth0', 'root']); // absent when none was added: fine
  }

  /** Heal and remove the chain from every host it was made in. */
  removeAll(): void {
    for (const host of this.prepared) {
      this.heal(host);
      for (const [hook, dir] of [['OUTPUT', '-d'], ['INPUT', '-s']] as const) inHost(host, ['iptables', '-D', hook, dir, BRIDGE_ADDRESS, '-j', CHAIN]);
      inHost(host, ['iptables', '-X', CHAIN]);
    }
    this.prepared.clear();
  }
}

/** The soak's own PostgreSQL server: SIGKILL of its postmaster and children (by pid), then start. */
export class ServerFaults {
  constructor(
    readonly repoRoot: string,
    readonly env: Record<string, string>,
    readonly dataDir: string,
  ) {}

  postmasterPid(): number | null {
    try {
      const pid = Number(fs.readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 1 ? pid : null;
    } catch {
      return null;
    }
  }

  /** kill -9 of the postmaster and of its children; returns the postmaster's pid. */
  kill(): number {
    const pid = this.postmasterPid();
    if (pid === null) throw new Error(`no postmaster.pid in ${this.dataDir}`);
    const children = run('ps', ['-o', 'pid=', '--ppid', String(pid)]).out.split(/\s+/).filter((s) => /^\d+$/.test(s)).map(Number);
    process.kill(pid, 'SIGKILL');
    for (const c of children) {
      try {
        process.kill(c, 'SIGKILL');
      } catch {
        // already gone with its postmaster
      }
    }
    return pid;
  }

  /** Start it again (pg.sh start clears a stale socket; a few bounded tries while old backends exit). */
  start(): void {
    let last = '';
    for (let attempt = 0; attempt < 5; attempt++) {
      const r = spawnSync('bash', [path.join(this.repoRoot, 'scripts/pg.sh'), 'start'], { encoding: 'utf8', env: { ...process.env, ...this.env }, timeout: 90_000 });
      if (r.status === 0) return;
      last = `${r.stdout}${r.stderr}`.trim().slice(-400);
      spawnSync('sleep', ['1']);
    }
    throw new Error(`PostgreSQL did not start again after SIGKILL: ${last}`);
  }
}
