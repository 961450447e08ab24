/**
 * The repeated recoverer experiment (the invocation fence's headline claim): a run of the reference
 * workflow is started by a process that is killed with SIGKILL right after charge's EFFECT_INTENT
 * (for REMIT: its intent and attempt 1, one append) or inside charge's handler after the outside
 * effect; then k recoverers, each a separate process with its own instance id and store
 * connection, continue it at once. Counted at the shared effect sink: charge's raw handler
 * invocations. The claim: 1 in every trial when the crash came before the handler ran, 2 (one more
 * per crash inside the window) when it came inside, whatever k is.
 *
 * It drives the conformance adapters (the same processes and JSON-lines protocol as the harness),
 * on SQLite and, with REMIT_PG_URL, on PostgreSQL. The recoverers are all new replicas: none shares
 * the crashed process's instance id, so each must wait for its lease to expire (the adapter's
 * REMIT_CONFORMANCE_LEASE_MS, set here by --lease-ms) and then all race to append the claim of
 * attempt 2 at one seq. With --restarted, recoverer 0 instead is the crashed replica restarted
 * (its instance id), which takes its own attempt over at once while the others wait for it.
 *
 *   bash scripts/tsx.sh conformance/experiments/recoverers.ts --trials 20 [--k 2,4,8,16] [--stores sqlite,postgres]
 *     [--crash intent,handler] [--lease-ms 1000] [--restarted] [--core wasm|reference] [--json out.json]
 *   ... --system langgraph   (LangGraph.js in the same trials, SQLite only: it records no intent, so
 *     its crash "intent" is right after the checkpoint before charge, as in the conformance cells)
 *
 * Exit code 0 when every trial met the claim, 1 otherwise.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AdapterProcess, type AdapterSpec, type RequestResult } from '../harness/driver.js';
import { readSink } from '../harness/sink.js';
import { REPO_ROOT, TSX_NODE_ARGS } from '../harness/systems.js';
import { RECOVER_POINT_WITHOUT_INTENT } from '../harness/cells.js';

type StoreKind = 'sqlite' | 'postgres';
type Crash = 'intent' | 'handler';

const CRASH_POINT: Record<Crash, string> = {
  intent: 'after-commit:EFFECT_INTENT@charge',
  handler: 'in-handler-after-effect:charge',
};
const REQUEST_TIMEOUT_MS = 60_000;

interface Options {
  trials: number;
  ks: number[];
  stores: StoreKind[];
  crashes: Crash[];
  leaseMs: number;
  restarted: boolean;
  core: 'wasm' | 'reference';
  system: 'remit' | 'langgraph';
  json: string | null;
}

function parseArgs(argv: string[]): Options {
  const value = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = <T extends string>(name: string, fallback: string) => (value(name) ?? fallback).split(',').filter(Boolean) as T[];
  const stores = list<StoreKind>('--stores', process.env['REMIT_PG_URL'] ? 'sqlite,postgres' : 'sqlite');
  if (stores.includes('postgres') && !process.env['REMIT_PG_URL']) throw new Error('--stores postgres needs REMIT_PG_URL');
  return {
    trials: Number(value('--trials') ?? '10'),
    ks: list<string>('--k', '2,4,8,16').map(Number),
    stores,
    crashes: list<Crash>('--crash', 'intent,handler'),
    leaseMs: Number(value('--lease-ms') ?? '1000'),
    restarted: argv.includes('--restarted'),
    core: (value('--core') ?? 'wasm') as 'wasm' | 'reference',
    system: (value('--system') ?? 'remit') as 'remit' | 'langgraph',
    json: value('--json') ?? null,
  };
}

function adapterSpec(store: StoreKind, o: Options): AdapterSpec {
  if (o.system === 'langgraph') {
    if (store !== 'sqlite') throw new Error('LangGraph.js: SQLite only');
    return { id: 'langgraph-js', label: 'LangGraph.js', command: process.execPath, args: [...TSX_NODE_ARGS, path.join(REPO_ROOT, 'conformance/adapters/langgraph/adapter.ts')] };
  }
  return {
    id: `remit-${store}-${o.core}`,
    label: `REMIT ${store}`,
    command: process.execPath,
    args: [...TSX_NODE_ARGS, path.join(REPO_ROOT, 'conformance/adapters/remit/adapter.ts'), '--store', store, '--core', o.core],
    env: { REMIT_CONFORMANCE_LEASE_MS: String(o.leaseMs) },
  };
}

function reply(res: RequestResult, what: string): unknown {
  if (res.kind !== 'reply') throw new Error(`${what}: ${res.kind}${res.kind === 'adapter-error' ? ` ${res.message}` : ''}`);
  return res.result;
}

interface Trial {
  store: StoreKind;
  k: number;
  crash: Crash;
  trial: number;
  invocations: number;
  expected: number;
  outcomes: string[];
  status: string;
  ms: number;
}

async function runTrial(spec: AdapterSpec, recoverers: AdapterProcess[], dir: string, store: StoreKind, k: number, crash: Crash, trial: number, o: Options): Promise<Trial> {
  const t0 = Date.now();
  const storePath = path.join(dir, `${store}-k${k}-${crash}-${trial}.db`);
  const sinkPath = path.join(dir, `${store}-k${k}-${crash}-${trial}.jsonl`);
  const runId = `exp-${crash}-${k}-${trial}`;
  // The process that crashes: its own replica id, armed to SIGKILL itself at the point.
  const primary = AdapterProcess.spawn(spec, REPO_ROOT);
  reply(await primary.request({ op: 'open', storePath, sinkPath, replica: 'crashed' }, REQUEST_TIMEOUT_MS), 'open primary');
  // LangGraph records no intent: its crash 'intent' is right after the checkpoint before charge.
  const point = crash === 'intent' && o.system === 'langgraph' ? RECOVER_POINT_WITHOUT_INTENT : CRASH_POINT[crash];
  reply(await primary.request({ op: 'arm', fault: { point, kind: 'sigkill' } }, REQUEST_TIMEOUT_MS), 'arm');
  const started = await primary.request({ op: 'start', runId, input: { orderId: `o-${runId}`, amountCents: 4200 } }, REQUEST_TIMEOUT_MS);
  if (started.kind !== 'crashed') throw new Error(`the primary did not crash at ${point} (${started.kind})`);
  const before = readSink(sinkPath).lines.filter((l) => l.node === 'charge' && l.t === 'invoke' && l.run === runId).length;
  // k recoverers: opened on this trial's store, idle on stdin; one loop writes the k requests.
  const opened = recoverers.slice(0, k).map((p, i) =>
    p.request({ op: 'open', storePath, sinkPath, replica: o.restarted && i === 0 ? 'crashed' : `recoverer-${i}` }, REQUEST_TIMEOUT_MS),
  );
  for (const res of await Promise.all(opened)) reply(res, 'open recoverer');
  const results = await Promise.all(recoverers.slice(0, k).map((p) => p.request({ op: 'continue', runId }, REQUEST_TIMEOUT_MS)));
  const outcomes = results.map((r) => {
    if (r.kind !== 'reply') return r.kind;
    const out = r.result as { outcome: string; refusal?: { code: string } };
    return out.outcome === 'refused' ? `refused ${out.refusal?.code}` : out.outcome;
  });
  const view = reply(await recoverers[0]!.request({ op: 'readStore', runId }, REQUEST_TIMEOUT_MS), 'readStore') as { status: string };
  const invocations = readSink(sinkPath).lines.filter((l) => l.node === 'charge' && l.t === 'invoke' && l.run === runId).length;
  const expected = crash === 'intent' ? 1 : 2;
  if (crash === 'handler' && before !== 1) throw new Error(`the crashed process invoked charge ${before} times before dying, expected 1`);
  return { store, k, crash, trial, invocations, expected, outcomes, status: view.status, ms: Date.now() - t0 };
}

async function main(): Promise<number> {
  const o = parseArgs(process.argv.slice(2));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'remit-recoverers-'));
  const trials: Trial[] = [];
  const t0 = Date.now();
  try {
    for (const store of o.stores) {
      const spec = adapterSpec(store, o);
      const maxK = Math.max(...o.ks);
      const recoverers = Array.from({ length: maxK }, () => AdapterProcess.spawn(spec, REPO_ROOT));
      try {
        for (const k of o.ks) {
          for (const crash of o.crashes) {
            for (let trial = 0; trial < o.trials; trial++) {
              const t = await runTrial(spec, recoverers, dir, store, k, crash, trial, o);
              trials.push(t);
              const ok = t.invocations === t.expected && t.status === 'parked';
              if (!ok) console.log(`FAILED ${JSON.stringify(t)}`);
            }
            const mine = trials.filter((t) => t.store === store && t.k === k && t.crash === crash);
            const met = mine.filter((t) => t.invocations === t.expected && t.status === 'parked').length;
            const mean = mine.reduce((n, t) => n + t.ms, 0) / mine.length;
            console.log(
              `${store} k=${String(k).padStart(2)} crash ${crash.padEnd(7)}: ${met}/${mine.length} trials with charge invoked exactly ${mine[0]?.expected} time(s) ` +
                `(counts seen: ${[...new Set(mine.map((t) => t.invocations))].join(',')}), mean ${(mean / 1000).toFixed(1)} s per trial`,
            );
          }
        }
      } finally {
        await Promise.all(recoverers.map((p) => p.shutdown()));
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const failed = trials.filter((t) => t.invocations !== t.expected || t.status !== 'parked');
  console.log(
    `${o.system}: ${trials.length} trials in ${((Date.now() - t0) / 1000).toFixed(0)} s (${o.restarted ? 'recoverer 0 is the crashed replica restarted' : 'all recoverers new replicas'}, ` +
      `lease ${o.leaseMs} ms, ${o.core} core): ${failed.length === 0 ? 'every trial met the claim' : `${failed.length} FAILED`}`,
  );
  if (o.json) fs.writeFileSync(o.json, `${JSON.stringify({ options: o, trials }, null, 2)}\n`);
  return failed.length === 0 ? 0 : 1;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e instanceof Error ? e.stack : e);
  process.exit(2);
});
