/**
 * Simulated hosts for the hosts column: network namespaces made by scripts/netns.sh, and a
 * PostgreSQL cluster of the project's own (scripts/pg.sh, port 54349, the "hosts cluster") that
 * listens on 127.0.0.1 and on the bridge address 10.213.0.1 and admits clients from 10.213.0.0/24.
 * The main test cluster (port 54329) stays on loopback: other test files use it at the same time,
 * and restarting it with other listen addresses would cut their connections.
 *
 * Set-up checks what the column claims, from inside every namespace (conformance/hosts/probe.ts):
 * the loopback URL fails there (127.0.0.1 is the namespace's own loopback) and the bridge URL works,
 * with the server seeing the host's own address as the client. Nothing else is contacted.
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HostsPlan } from '../harness/cross-host.js';
import { TSX_NODE_ARGS } from '../harness/systems.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const HOSTS_PG_PORT = 54349;
export const BRIDGE_ADDRESS = '10.213.0.1';
export const BRIDGE_NETWORK = '10.213.0.0/24';
export const DEFAULT_HOST_COUNT = 4;

export function namespaceOf(host: number): string {
  return `remit-h${host}`;
}

export function hostAddressOf(host: number): string {
  return `10.213.0.${10 + host}`;
}

/** Why hosts cannot be made here (null: they can). `skip` means the caller asked to skip them. */
export function hostsPrecondition(env: NodeJS.ProcessEnv = process.env): { reason: string; skip: boolean } | null {
  if (env.REMIT_SKIP_NETNS === '1') return { reason: 'REMIT_SKIP_NETNS=1 asked to skip the hosts column', skip: true };
  if (process.platform !== 'linux') return { reason: `network namespaces need Linux (this is ${process.platform})`, skip: false };
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return {
      reason: 'network namespaces need root: run as root, or set REMIT_SKIP_NETNS=1 to skip the hosts column explicitly',
      skip: false,
    };
  }
  return null;
}

export interface ProbeResult {
  url: string;
  ok: boolean;
  clientAddr?: string | null;
  serverAddr?: string | null;
  error?: string;
}

export interface HostCheck {
  namespace: string;
  loopback: ProbeResult;
  bridge: ProbeResult;
}

export interface HostsEnvironment {
  plan: HostsPlan;
  namespaces: string[];
  /** The hosts cluster from the root namespace, and from inside a host. */
  loopbackUrl: string;
  bridgeUrl: string;
  checks: HostCheck[];
  /** One line for a terminal: what was set up. */
  summary: string;
  teardown(): Promise<void>;
}

function hostsClusterEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    REMIT_PG_PORT: String(HOSTS_PG_PORT),
    REMIT_PG_LISTEN: `127.0.0.1,${BRIDGE_ADDRESS}`,
    REMIT_PG_ALLOW: BRIDGE_NETWORK,
    ...extra,
  };
}

function run(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  const res = spawnSync('bash', [path.join(REPO_ROOT, 'scripts', script), ...args], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 180_000 });
  if (res.status !== 0) {
    const tail = `${res.stderr ?? ''}${res.stdout ?? ''}`.trim().split('\n').slice(-8).join('\n');
    throw new Error(`scripts/${script} ${args.join(' ')} failed (exit ${res.status ?? res.signal}): ${tail}`);
  }
  return res.stdout.trim();
}

function namespaceExists(ns: string): boolean {
  const res = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return res.status === 0 && res.stdout.split('\n').some((line) => line.split(' ')[0] === ns);
}

/** Probes `urls` from inside namespace `ns` with the same node binary (and tsx) the adapters use. */
export function probeFrom(ns: string, urls: string[]): Promise<ProbeResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, ...TSX_NODE_ARGS, path.join(REPO_ROOT, 'conformance/hosts/probe.ts'), ...urls], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => {
      const lines = out.trim().split('\n').filter((l) => l.length > 0);
      if (code !== 0 || lines.length !== urls.length) {
        reject(new Error(`probe in ${ns} failed (exit ${code}): ${err.trim().split('\n').slice(-5).join(' | ')}`));
        return;
      }
      resolve(lines.map((l) => JSON.parse(l) as ProbeResult));
    });
  });
}

async function checkHosts(namespaces: string[], loopbackUrl: string, bridgeUrl: string): Promise<HostCheck[]> {
  return Promise.all(
    namespaces.map(async (ns) => {
      const [loopback, bridge] = await probeFrom(ns, [loopbackUrl, bridgeUrl]);
      return { namespace: ns, loopback: loopback!, bridge: bridge! };
    }),
  );
}

/** What is wrong with the checks, or null: loopback must fail and the bridge work, from the host's own address. */
export function checkProblems(checks: HostCheck[]): string | null {
  const problems: string[] = [];
  checks.forEach((c, i) => {
    if (c.loopback.ok) problems.push(`${c.namespace}: the loopback URL worked from inside the namespace (it must not)`);
    if (!c.bridge.ok) problems.push(`${c.namespace}: the bridge URL failed: ${c.bridge.error ?? ''}`);
    else if (c.bridge.clientAddr !== hostAddressOf(i + 1)) problems.push(`${c.namespace}: the server saw client ${c.bridge.clientAddr}, expected ${hostAddressOf(i + 1)}`);
  });
  return problems.length === 0 ? null : problems.join('; ');
}

export interface SetUpHostsOptions {
  hosts?: number;
  /** Remove the namespaces at teardown even if they existed before (tests: yes; the CLI: only its own). */
  alwaysRemoveNamespaces?: boolean;
}

/**
 * Brings up `hosts` namespaces and the hosts cluster, checks the link from every namespace, and
 * returns the plan the harness needs. Throws with the reason if any of it fails (after undoing it).
 */
export async function setUpHosts(options: SetUpHostsOptions = {}): Promise<HostsEnvironment> {
  const count = options.hosts ?? DEFAULT_HOST_COUNT;
  const namespaces = Array.from({ length: count }, (_, i) => namespaceOf(i + 1));
  const existed = namespaces.every(namespaceExists);
  const teardown = async () => {
    const errors: string[] = [];
    try {
      run('pg.sh', ['stop'], hostsClusterEnv());
    } catch (e) {
      errors.push(String(e));
    }
    if (options.alwaysRemoveNamespaces === true || !existed) {
      try {
        run('netns.sh', ['down']);
      } catch (e) {
        errors.push(String(e));
      }
    }
    if (errors.length > 0) throw new Error(`hosts teardown: ${errors.join('; ')}`);
  };
  try {
    run('netns.sh', ['up', String(count)]);
    // The cluster must start after the bridge address exists, or it cannot listen on it.
    run('pg.sh', ['start'], hostsClusterEnv());
    const loopbackUrl = run('pg.sh', ['url'], hostsClusterEnv({ REMIT_PG_URL_HOST: '127.0.0.1' }));
    const bridgeUrl = run('pg.sh', ['url'], hostsClusterEnv({ REMIT_PG_URL_HOST: BRIDGE_ADDRESS }));
    let checks = await checkHosts(namespaces, loopbackUrl, bridgeUrl);
    if (checkProblems(checks) !== null) {
      // A server that was already running when the bridge was re-made may hold a stale listener.
      run('pg.sh', ['restart'], hostsClusterEnv());
      checks = await checkHosts(namespaces, loopbackUrl, bridgeUrl);
    }
    const problems = checkProblems(checks);
    if (problems !== null) throw new Error(`the hosts are not connected as required: ${problems}`);
    const plan: HostsPlan = { namespaces, rootEnv: { REMIT_PG_URL: loopbackUrl }, hostEnv: { REMIT_PG_URL: bridgeUrl } };
    const summary =
      `${count} hosts (${namespaces[0]}..${namespaces[count - 1]}, ${hostAddressOf(1)}..${hostAddressOf(count)}) on bridge remit-br0 ${BRIDGE_ADDRESS}; ` +
      `PostgreSQL hosts cluster on 127.0.0.1 and ${BRIDGE_ADDRESS} port ${HOSTS_PG_PORT}; from every host the loopback URL fails and the bridge URL works`;
    return { plan, namespaces, loopbackUrl, bridgeUrl, checks, summary, teardown };
  } catch (e) {
    await teardown().catch(() => undefined);
    throw e;
  }
}
