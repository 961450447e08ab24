/**
 * The long equivalence campaign: `npm run fuzz -- --runs N --seed S`. Generates histories (model
 * runs, mutated logs, vocabulary sequences, raw and framed junk) and compares the Wasm core with
 * the reference at every record-boundary prefix, with sampled requests and byte cuts (./sampled.ts),
 * in worker threads. History i depends only on (S, i) (./campaign.ts), so the result does not depend
 * on --workers. On a divergence it shrinks it under fast-check, prints it with the seed, history
 * index and fast-check path, writes it to equivalence/corpus/ and exits 1.
 *
 * Options: --runs N (10000)  --seed S (random)  --max-steps N (28)  --cuts boundary±|all|none
 *          --full-every N (16: histories 0, N, 2N, ... get the full check; 0 = none)
 *          --workers N (2, or the cores available; 0 = this thread)
 *          --history I (replay one history of --seed S, which it needs; --runs, --workers ignored)
 *          --against wasm|reference (wasm)  --binding canonical-abi|jco (canonical-abi)
 *          --oracle (also compare every answer with the model extracted from proofs/coq,
 *          ./oracle.ts; builds it with proofs/extract/build.sh when missing or stale)
 *          --canary NAME (compare the reference with a canary: shows what a caught bug looks
 *          like; nothing is written to the corpus)
 */

import cliProgress from 'cli-progress';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { UsageError, choiceOption, intOption, parseStrict } from './cli-args.js';
import type { ReferenceCanary } from 'remit/core';
import type { WasmBinding } from 'remit/core';
import { CampaignRunner, DEFAULT_FULL_CHECK_EVERY, expectedKinds, shrinkHistory } from './campaign.js';
import { loadExtractedModel, modelStamp } from './oracle.js';
import { defaultSeed } from './property.js';
import { Coverage, DEFAULT_SAMPLED_CHECK } from './sampled.js';
import { coresFor, startWorker, type CampaignStats, type FromWorker, type ToWorker, type WorkerOptions } from './fuzz-worker.js';

interface FuzzOptions extends WorkerOptions {
  runs: number;
  workers: number;
  history: number | null;
  /** Things to tell the user before running (options given that this run ignores). */
  notes: string[];
}

/**
 * A worker thread does not inherit tsx's module hooks (Node 20), so it registers them before
 * importing the TypeScript worker module.
 */
const WORKER_BOOTSTRAP = `
  const { register } = await import('tsx/esm/api');
  register();
  await import(${JSON.stringify(new URL('./fuzz-worker.ts', import.meta.url).href)});
`;

/** Histories handed to a worker at a time: small enough to balance two busy cores. */
const CHUNK = 128;
/** With fewer histories a kind of request or cut may be missed by chance; only report it. */
const COVERAGE_REQUIRED_FROM_RUNS = 2000;

/** The canaries of the reference core (ReferenceCanary in ts-shell/src/core/reference-core.ts). */
export const CANARIES = [
  'accept-second-claim', 'snapshot-on-delta', 'done-without-attempt', 'link-unchecked', 'summary-forgets-prev-kind',
] as const satisfies readonly ReferenceCanary[];
// A canary added to ReferenceCanary but not to CANARIES is a type error here.
const everyCanaryListed: Exclude<ReferenceCanary, (typeof CANARIES)[number]> extends never ? true : never = true;
void everyCanaryListed;

const CUTS = ['boundary±', 'all', 'none'] as const;
const AGAINST = ['wasm', 'reference'] as const;
const BINDINGS = ['canonical-abi', 'jco'] as const satisfies readonly WasmBinding[];
const DEFAULT_RUNS = 10_000;
const DEFAULT_MAX_STEPS = 28;

export { UsageError };

export const USAGE = `usage: npm run fuzz -- [options]
  --runs N          histories to run (10000)
  --seed S          campaign seed, a 32-bit signed integer (random)
  --max-steps N     longest model run (${DEFAULT_MAX_STEPS})
  --cuts K          ${CUTS.join('|')} (boundary±)
  --full-every N    histories 0, N, 2N, ... get the full check (${DEFAULT_FULL_CHECK_EVERY}; 0 = none)
  --workers N       worker threads (2, or the cores available; 0 = this thread)
  --history I       replay (and shrink) history I of campaign --seed S only, in this thread
                    (needs the --seed that printed it; --runs and --workers are ignored)
  --against A       ${AGAINST.join('|')} (wasm)
  --binding B       ${BINDINGS.join('|')} (canonical-abi)
  --oracle          also compare with the model extracted from proofs/coq
  --canary NAME     compare the reference with a canary: ${CANARIES.join(', ')}
  --help            this text`;

/** Parse the fuzzer's command line (without node and the script); throws UsageError on anything wrong. */
export function parseFuzzArgs(argv: string[], defaults: { seed: () => number; workers: () => number } = {
  seed: defaultSeed, workers: () => Math.min(2, availableParallelism()),
}): FuzzOptions | 'help' {
  const values = parseStrict(argv, {
    runs: { type: 'string' }, seed: { type: 'string' }, 'max-steps': { type: 'string' }, cuts: { type: 'string' },
    'full-every': { type: 'string' }, workers: { type: 'string' }, history: { type: 'string' },
    against: { type: 'string' }, binding: { type: 'string' }, oracle: { type: 'boolean' }, canary: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values['help']) return 'help';
  const runs = intOption(values, 'runs', { min: 1 }, DEFAULT_RUNS, 'a positive integer');
  const workers = intOption(values, 'workers', { min: 0 }, NaN, 'a non-negative integer (0 = this thread)');
  const history = values['history'] === undefined ? null : intOption(values, 'history', { min: 0 }, 0, 'a non-negative integer (a history index)');
  // The campaign mixes the seed as a 32-bit integer (campaign.ts, mix32): a wider seed would alias a
  // narrower one (2^32 + 5 ran the campaign of 5), so only the 32-bit signed range is accepted.
  const seed = intOption(values, 'seed', { min: -(2 ** 31), max: 2 ** 31 - 1 }, NaN, 'an integer from -2147483648 to 2147483647');
  const maxSteps = intOption(values, 'max-steps', { min: 1 }, DEFAULT_MAX_STEPS, 'a positive integer');
  const fullCheckEvery = intOption(values, 'full-every', { min: 0 }, DEFAULT_FULL_CHECK_EVERY, 'a non-negative integer (0 = never)');
  const cuts = choiceOption(values, 'cuts', CUTS, 'boundary±');
  const against = choiceOption(values, 'against', AGAINST, 'wasm');
  const binding = choiceOption<WasmBinding, WasmBinding>(values, 'binding', BINDINGS, 'canonical-abi');
  const canary = choiceOption<ReferenceCanary, null>(values, 'canary', CANARIES, null);
  if (canary !== null && values['against'] !== undefined) throw new UsageError('--canary compares the reference with a canary: it does not take --against');
  // A history index means something only in the campaign that printed it (history i depends on the seed and i).
  if (history !== null && Number.isNaN(seed)) throw new UsageError('--history needs the --seed of the campaign that printed the index (a history index means nothing under another seed)');
  const ignored = history === null ? [] : ['--runs', '--workers'].filter((o) => values[o.slice(2)] !== undefined);
  return {
    notes: ignored.length > 0 ? [`${ignored.join(' and ')} ignored: --history replays one history, in this thread`] : [],
    runs,
    workers: Number.isNaN(workers) ? defaults.workers() : workers,
    history,
    campaign: {
      seed: Number.isNaN(seed) ? defaults.seed() : seed, maxSteps, check: { ...DEFAULT_SAMPLED_CHECK, cuts },
      fullCheckEvery,
      oracle: values['oracle'] === true,
    },
    against,
    binding,
    canary,
  };
}

/**
 * The command that re-runs history `index` of this campaign alone: every option that changes what
 * runs (seed, steps, cuts, full-check period, cores, binding, oracle, canary); not --runs or --workers.
 */
export function replayCommand(o: FuzzOptions, index: number): string {
  const c = o.campaign;
  const args = ['--seed', String(c.seed), '--history', String(index), '--max-steps', String(c.maxSteps)];
  if (c.check.cuts !== 'boundary±') args.push('--cuts', c.check.cuts);
  if (c.fullCheckEvery !== DEFAULT_FULL_CHECK_EVERY) args.push('--full-every', String(c.fullCheckEvery));
  if (o.canary) args.push('--canary', o.canary);
  else if (o.against !== 'wasm') args.push('--against', o.against);
  if (o.binding !== 'canonical-abi') args.push('--binding', o.binding);
  if (c.oracle) args.push('--oracle');
  return `npm run fuzz -- ${args.join(' ')}`;
}

/** A shrunk divergence's message with its replay line (campaign.ts writes seed, history and steps only) made whole. */
export function withReplay(message: string, o: FuzzOptions, index: number): string {
  return message.replace(/^replay: .*$/m, `replay: ${replayCommand(o, index)}`);
}

interface Campaign {
  stats: CampaignStats[];
  /** Each worker stops at its first divergence, so there may be one per worker. */
  divergences: string[];
}

/** Hand out chunks of history indices to workers until `runs` are done or one diverges. */
async function runCampaign(o: FuzzOptions, onProgress: (histories: number) => void): Promise<Campaign> {
  let next = 0;
  let stopping = false;
  const stats: CampaignStats[] = [];
  const divergences: string[] = [];
  const nextMessage = (): ToWorker => {
    if (stopping || next >= o.runs) return { type: 'finish' };
    const start = next;
    next = Math.min(o.runs, next + CHUNK);
    return { type: 'chunk', start, end: next };
  };
  const onMessage = (m: FromWorker, send: (m: ToWorker) => void) => {
    switch (m.type) {
      case 'ready': case 'chunk-done': return send(nextMessage());
      case 'progress': return onProgress(m.histories);
      case 'divergence': stopping = true; return;
      case 'shrunk': divergences.push(withReplay(m.message, o, m.index)); return;
      case 'finished': stats.push(m.stats); return;
    }
  };
  if (o.workers === 0) {
    // This thread: a direct loop over the same protocol (for profiling with --cpu-prof).
    const queue: ToWorker[] = [];
    const handle = await startWorker(o, (m) => onMessage(m, (r) => queue.push(r)));
    for (let m = queue.shift(); m; m = queue.shift()) handle(m);
    return { stats, divergences };
  }
  await Promise.all(Array.from({ length: o.workers }, () => new Promise<void>((resolve, reject) => {
    const worker = new Worker(WORKER_BOOTSTRAP, { eval: true, workerData: { remitFuzzWorker: o satisfies WorkerOptions } });
    worker.on('message', (m: FromWorker) => onMessage(m, (r) => worker.postMessage(r)));
    worker.on('error', reject);
    worker.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`a fuzz worker exited with code ${code}`))));
  })));
  return { stats, divergences };
}

function mergeStats(all: CampaignStats[]): { total: Omit<CampaignStats, 'coverage'>; coverage: Coverage } {
  const coverage = new Coverage();
  const total = { histories: 0, logs: 0, recoverCalls: 0, admitCalls: 0 };
  for (const s of all) {
    total.histories += s.histories; total.logs += s.logs; total.recoverCalls += s.recoverCalls; total.admitCalls += s.admitCalls;
    coverage.merge(s.coverage);
  }
  return { total, coverage };
}

/** What was asked and answered; the kinds never asked (an error for a long enough campaign). */
function reportCoverage(o: FuzzOptions, coverage: Coverage): string[] {
  const groups = new Map<string, string[]>();
  for (const [k, n] of [...coverage.counts].sort(([x], [y]) => x.localeCompare(y))) {
    const group = k.startsWith('recover:') ? 'recover' : k.startsWith('admit:') ? 'admit' : k.startsWith('history:') ? 'histories'
      : k.startsWith('cut') ? 'cuts' : 'requests';
    groups.set(group, [...(groups.get(group) ?? []), `${k.replace(/^(recover|admit|history): /, '')} ${n}`]);
  }
  for (const [group, items] of groups) console.log(`  ${group}: ${items.join(' · ')}`);
  return o.canary ? [] : expectedKinds(o.campaign.check).filter((k) => coverage.get(k) === 0);
}

/** --history I: run one history in this thread (and shrink it if it diverges). */
async function replayOne(o: FuzzOptions, index: number): Promise<number> {
  const [a, b] = await coresFor(o);
  const runner = new CampaignRunner(a, b, o.campaign);
  const c = runner.historyCase(index);
  console.log(`history ${index} of seed ${o.campaign.seed}: ${c.source}, ${c.logs.length} log(s) of ${c.logs.map((l) => l.length).join(', ')} bytes`);
  const found = runner.runHistory(index);
  if (!found) {
    console.log(`no divergence (${runner.comparison.stats.recoverCalls} recover + ${runner.comparison.stats.admitCalls} admit calls)`);
    return 0;
  }
  console.error(withReplay(shrinkHistory(a, b, o.campaign, index, found.divergence, { writeCorpus: o.canary === null, label: 'fuzz replay' }).message, o, index));
  return 1;
}

async function main(): Promise<number> {
  const parsed = parseFuzzArgs(process.argv.slice(2));
  if (parsed === 'help') {
    console.log(USAGE);
    return 0;
  }
  const o = parsed;
  for (const note of o.notes) console.log(`fuzz: ${note}`);
  // Build (or check) the extracted model once here; the workers only load it.
  if (o.campaign.oracle) console.log(`oracle: the extracted Coq model (stamp ${(loadExtractedModel(), modelStamp()).slice(0, 12)})`);
  if (o.history !== null) return replayOne(o, o.history);
  if (o.canary) process.env['REMIT_ALLOW_CANARY'] = '1'; // the workers copy this environment
  const c = o.campaign;
  const against = o.canary ? `reference (canary ${o.canary})` : o.against === 'wasm' ? `wasm (${o.binding})` : 'reference';
  console.log(`fuzz: ${against} vs reference, ${o.runs} histories, seed ${c.seed}, max ${c.maxSteps} steps, cuts ${c.check.cuts}, `
    + `full check every ${c.fullCheckEvery || 'never'}, ${o.workers || 'no'} workers`);
  const bar = new cliProgress.SingleBar(
    {
      format: 'fuzz [{bar}] {value}/{total} histories | {rate} histories/s | {duration_formatted}',
      hideCursor: true,
      noTTYOutput: true, // still report progress (every 10 s) when the output is a log file
      notTTYSchedule: 10_000,
    },
    cliProgress.Presets.shades_classic,
  );
  const t0 = performance.now();
  let done = 0;
  bar.start(o.runs, 0, { rate: '0' });
  const result = await runCampaign(o, (histories) => {
    done += histories;
    bar.update(Math.min(done, o.runs), { rate: (done / ((performance.now() - t0) / 1000)).toFixed(0) });
  });
  bar.stop();
  const elapsedS = (performance.now() - t0) / 1000;
  const { total, coverage } = mergeStats(result.stats);
  console.log(`coverage (calls per core):`);
  const missing = reportCoverage(o, coverage);
  console.log(`${total.histories} histories, ${total.logs} logs, ${total.recoverCalls} recover + ${total.admitCalls} admit calls per core`);
  if (result.divergences.length > 0) {
    console.error(result.divergences.join('\n\n'));
    return 1;
  }
  if (missing.length > 0) {
    console.log(`NOT EXERCISED: ${missing.join(', ')}`);
    if (o.runs >= COVERAGE_REQUIRED_FROM_RUNS) return 1;
  }
  console.log(`no divergence: ${total.histories} histories in ${elapsedS.toFixed(1)} s, ${(total.histories / elapsedS).toFixed(1)} histories/s (seed ${c.seed}, ${o.workers} workers)`);
  return total.histories === o.runs ? 0 : 1;
}

// Run only as the entry point (the tests import parseFuzzArgs and replayCommand).
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().then((code) => process.exit(code), (e) => {
    if (e instanceof UsageError) console.error(`fuzz: ${e.message}`);
    else console.error(e instanceof Error ? (e.stack ?? e.message) : e);
    process.exit(2);
  });
}
