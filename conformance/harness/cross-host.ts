/**
 * The hosts column of the concurrency matrix, and the recover race.
 *
 * A host is a network namespace (made by scripts/netns.sh, set up by conformance/hosts/) in which
 * adapter processes run (`ip netns exec <ns> node ...`) and from which the store is reachable only
 * over a veth link. The campaign gets a HostsPlan: the namespaces, and the environment an adapter
 * needs in the root namespace and inside a host (for PostgreSQL: the server's URL over loopback and
 * over the bridge address).
 *
 * Resumers on different hosts are released by a barrier the store's server keeps (adapter op
 * `barrier`, answered by the cell's primary process): the primary closes it, every resumer gets its
 * request, connects and waits in the server, the harness polls until all k are waiting, then the
 * primary opens it. Nothing here sleeps to let a race happen; the only waiting is for a counted
 * condition, bounded by the request timeout.
 */
import { randomInt } from 'node:crypto';
import type { AdapterProcess, AdapterSpec, RequestResult } from './driver.js';
import type { StepObservations } from './observations.js';
import { BarrierCountSchema, parseResult, type Outcome, type Request } from './protocol.js';
import type { CellContext, SystemPool } from './runner.js';

export interface HostsPlan {
  /** One network namespace per host, e.g. ["remit-h1", ..., "remit-h4"]. */
  namespaces: string[];
  /** Environment of the cell's adapter processes in the root namespace (for PostgreSQL: REMIT_PG_URL over loopback). */
  rootEnv: Record<string, string>;
  /** Environment of adapter processes inside a host (for PostgreSQL: REMIT_PG_URL over the bridge address). */
  hostEnv: Record<string, string>;
}

/** Either a plan, or why there are no hosts in this run (reported as the cells' "not applicable" reason). */
export type HostsSetting = { plan: HostsPlan } | { unavailable: string };

export const NO_HOSTS: HostsSetting = {
  unavailable:
    'no hosts were set up for this run: the hosts column needs root and network namespaces (remit conformance --full as root with REMIT_PG_URL, or conformance/cross-host.test.ts)',
};

/** The adapter processes of one system for hosts cells: a root-namespace pool and one pool per host. */
export interface HostsPools {
  plan: HostsPlan;
  root: SystemPool;
  hosts: SystemPool[];
}

/** The adapter command run inside namespace `ns` (the same node binary and arguments). */
export function hostSpec(spec: AdapterSpec, ns: string, env: Record<string, string>): AdapterSpec {
  return {
    ...spec,
    command: 'ip',
    args: ['netns', 'exec', ns, spec.command, ...spec.args],
    env: { ...spec.env, ...env },
  };
}

export function rootSpec(spec: AdapterSpec, env: Record<string, string>): AdapterSpec {
  return { ...spec, env: { ...spec.env, ...env } };
}

interface Worker {
  process: AdapterProcess;
  host: string;
}

/** k workers spread round-robin over min(k, hosts) hosts: worker i runs on host i mod n. */
export async function placeWorkers(pools: HostsPools, k: number): Promise<Worker[]> {
  const n = Math.min(k, pools.hosts.length);
  if (n === 0) throw new Error('the hosts plan has no namespaces');
  const perHost = await Promise.all(
    pools.hosts.slice(0, n).map((pool, h) => pool.acquire(Math.ceil((k - h) / n))),
  );
  return Array.from({ length: k }, (_, i) => ({
    process: perHost[i % n]![Math.floor(i / n)]!,
    host: pools.plan.namespaces[i % n]!,
  }));
}

function newBarrierKey(): number {
  return randomInt(1, 0x7fff_ffff);
}

async function barrierOp(primary: AdapterProcess, action: 'hold' | 'count' | 'release', key: number, timeoutMs: number): Promise<RequestResult> {
  return primary.request({ op: 'barrier', action, key }, timeoutMs);
}

function describe(res: RequestResult): string {
  if (res.kind === 'reply') return 'reply';
  if (res.kind === 'adapter-error') return res.message;
  if (res.kind === 'crashed') return `crashed (signal ${res.signal}, exit ${res.exitCode})`;
  return `timeout after ${res.timeoutMs} ms`;
}

const POLL_MS = 5;

/**
 * Polls the barrier until `expected` sessions wait at it. Returns early (with the count so far)
 * when a worker already answered (it will never wait) or the deadline passed.
 */
async function awaitWaiters(
  ctx: CellContext,
  primary: AdapterProcess,
  key: number,
  expected: number,
  answered: () => number,
  deadlineMs: number,
  timeoutMs: number,
): Promise<number> {
  for (;;) {
    const res = await barrierOp(primary, 'count', key, timeoutMs);
    if (res.kind !== 'reply') {
      ctx.incidents.push({ step: 'barrier', what: 'adapter-error', detail: `counting waiters: ${describe(res)}` });
      return 0;
    }
    const waiting = parseResult(BarrierCountSchema, ctx.system, 'barrier count', res.result).waiting;
    if (waiting >= expected || answered() > 0 || Date.now() > deadlineMs) return waiting;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Sends `requests[i]` to `workers[i]` with the barrier(s) closed, opens them in order once every
 * worker waits at each, and returns the replies and the waiter counts seen when each was opened.
 */
async function releaseTogether(
  ctx: CellContext,
  step: string,
  workers: Worker[],
  requests: (barriers: number[]) => Request[],
  barrierCount: number,
  timeoutMs: number,
): Promise<{ results: RequestResult[]; waiting: number[] }> {
  const primary = await ctx.livePrimary(step);
  const keys = Array.from({ length: barrierCount }, newBarrierKey);
  for (const key of keys) {
    const held = await barrierOp(primary, 'hold', key, timeoutMs);
    if (held.kind !== 'reply') ctx.incidents.push({ step, what: 'adapter-error', detail: `closing the barrier: ${describe(held)}` });
  }
  let answered = 0;
  const reqs = requests(keys);
  const pending = workers.map((w, i) =>
    w.process.request(reqs[i]!, timeoutMs).then((r) => {
      answered++;
      return r;
    }),
  );
  const deadlineMs = Date.now() + timeoutMs;
  const waiting: number[] = [];
  for (const key of keys) {
    waiting.push(await awaitWaiters(ctx, primary, key, workers.length, () => answered, deadlineMs, timeoutMs));
    const opened = await barrierOp(primary, 'release', key, timeoutMs);
    if (opened.kind !== 'reply') ctx.incidents.push({ step, what: 'adapter-error', detail: `opening the barrier: ${describe(opened)}` });
  }
  const results = await Promise.all(pending);
  results.forEach((res, i) => {
    const who = `worker ${i} on ${workers[i]!.host}`;
    if (res.kind === 'timeout') ctx.incidents.push({ step, what: 'timeout', detail: `${who}: ${reqs[i]!.op}` });
    if (res.kind === 'crashed') ctx.incidents.push({ step, what: 'unexpected-crash', detail: who });
  });
  return { results, waiting };
}

/** k resumers of one parked interrupt, on min(k, hosts) hosts, released together. */
export async function resumeAcrossHosts(
  ctx: CellContext,
  pools: HostsPools,
  runId: string,
  values: unknown[],
  timeoutMs: number,
): Promise<(Outcome | null)[]> {
  const step = 'resume-concurrent';
  const workers = await placeWorkers(pools, values.length);
  const opened = await Promise.all(workers.map((w, i) => ctx.open(w.process, step, `worker-${i}`)));
  if (opened.includes(false)) ctx.incidents.push({ step, what: 'adapter-error', detail: 'a resumer on a host could not open the store' });
  const { results, waiting } = await releaseTogether(
    ctx,
    step,
    workers,
    ([key]) => values.map((value) => ({ op: 'resume', runId, value, barrier: { key: key! } })),
    1,
    timeoutMs,
  );
  if (waiting[0] !== values.length) {
    ctx.incidents.push({ step, what: 'adapter-error', detail: `the barrier opened with ${waiting[0]} of ${values.length} resumers waiting` });
  }
  return results.map((res) => ctx.outcomeOf(step, 'resume', res));
}

/**
 * The recoverer cells on hosts: k recoverers on min(k, hosts) hosts continue the crashed run `runId`
 * at once. Each waits at a first barrier (all connected), then recovers the log and runs what it
 * names, then waits at a second barrier just before its first append; when all are there, they
 * append at the same seq (for REMIT: the claim of the next attempt, once the crashed replica's
 * lease has expired; only the winner calls the handler).
 */
export async function raceRecoverers(
  ctx: CellContext,
  pools: HostsPools,
  runId: string,
  k: number,
  timeoutMs: number,
): Promise<NonNullable<StepObservations['recoverConcurrent']>> {
  const step = 'recover-race';
  const before = await ctx.read(step, runId);
  const from = ctx.sinkCount();
  const workers = await placeWorkers(pools, k);
  const opened = await Promise.all(workers.map((w, i) => ctx.open(w.process, step, `recoverer-${i}`)));
  if (opened.includes(false)) ctx.incidents.push({ step, what: 'adapter-error', detail: 'a recoverer on a host could not open the store' });
  const { results, waiting } = await releaseTogether(
    ctx,
    step,
    workers,
    ([start, append]) => workers.map(() => ({ op: 'continue', runId, barrier: { key: start! }, holdBeforeAppend: { key: append! } })),
    2,
    timeoutMs,
  );
  const outcomes = results.map((res) => ctx.outcomeOf(step, 'continue', res));
  if (waiting[0] !== k || waiting[1] !== k) {
    ctx.incidents.push({
      step,
      what: 'adapter-error',
      detail: `the race was not set up: ${waiting[0]} of ${k} recoverers waited at the start and ${waiting[1]} at the append`,
    });
  }
  const window = ctx.window(from);
  return {
    mode: 'hosts',
    hosts: workers.map((w) => w.host),
    outcomes,
    waiting: { start: waiting[0] ?? 0, append: waiting[1] ?? 0 },
    before,
    after: await ctx.read(step, runId),
    window,
  };
}
