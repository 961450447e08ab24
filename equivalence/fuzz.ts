/**
 * The long equivalence campaign: `npm run fuzz -- --runs N --seed S`. Generates histories (model
 * runs, mutated logs, vocabulary sequences, raw and framed junk), compares the Wasm core with the
 * reference at every prefix, byte cut and request, and on a divergence shrinks it, prints it with
 * the seed and path, writes it to equivalence/corpus/ and exits 1.
 *
 * Options: --runs N (10000)  --seed S (random)  --max-steps N (28)  --cuts boundary±|all|none
 *          --against wasm|reference (wasm)  --canary NAME (compare the reference with a canary:
 *          shows what a caught bug looks like; nothing is written to the corpus)
 */

import cliProgress from 'cli-progress';
import { createReferenceCore, reference, type ReferenceCanary } from '../ts-shell/src/core/reference-core.js';
import type { RecoveryCore } from '../ts-shell/src/core/types.js';
import { loadWasmCore } from '../ts-shell/src/core/wasm-core.js';
import { anyLogArb } from './arbitraries.js';
import { defaultSeed, runEquivalence } from './property.js';

interface FuzzOptions {
  runs: number;
  seed: number;
  maxSteps: number;
  cuts: 'boundary±' | 'all' | 'none';
  against: 'wasm' | 'reference';
  canary: ReferenceCanary | null;
}

function parseArgs(argv: string[]): FuzzOptions {
  const value = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const num = (name: string, fallback: number) => {
    const v = value(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n)) throw new Error(`${name} wants an integer, got ${v}`);
    return n;
  };
  const cuts = (value('--cuts') ?? 'boundary±') as FuzzOptions['cuts'];
  if (!['boundary±', 'all', 'none'].includes(cuts)) throw new Error(`--cuts wants boundary±, all or none, got ${cuts}`);
  const against = (value('--against') ?? 'wasm') as FuzzOptions['against'];
  if (against !== 'wasm' && against !== 'reference') throw new Error(`--against wants wasm or reference, got ${against}`);
  return {
    runs: num('--runs', 10_000), seed: num('--seed', defaultSeed()), maxSteps: num('--max-steps', 28), cuts, against,
    canary: (value('--canary') as ReferenceCanary | undefined) ?? null,
  };
}

async function coresFor(o: FuzzOptions): Promise<[RecoveryCore, RecoveryCore]> {
  if (o.canary) {
    process.env['REMIT_ALLOW_CANARY'] = '1';
    return [createReferenceCore({ canary: o.canary }), reference];
  }
  return [o.against === 'wasm' ? await loadWasmCore() : createReferenceCore(), reference];
}

async function main(): Promise<number> {
  const o = parseArgs(process.argv.slice(2));
  const [a, b] = await coresFor(o);
  console.log(`fuzz: ${a.name}${o.canary ? ` (canary ${o.canary})` : ''} vs ${b.name}, ${o.runs} histories, seed ${o.seed}, max ${o.maxSteps} steps, cuts ${o.cuts}`);
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
  const onCase = () => {
    done++;
    if (done % 25 === 0 || done === o.runs) {
      bar.update(Math.min(done, o.runs), { rate: (done / ((performance.now() - t0) / 1000)).toFixed(0) });
    }
  };
  const result = runEquivalence(a, b, anyLogArb(o.maxSteps), {
    numRuns: o.runs, seed: o.seed, compare: { cuts: o.cuts }, label: 'fuzz campaign', onCase, writeCorpus: o.canary === null,
  });
  bar.stop();
  const elapsedS = (performance.now() - t0) / 1000;
  const generated = result.details.numRuns;
  console.log(`${generated} histories in ${elapsedS.toFixed(1)} s: ${(generated / elapsedS).toFixed(1)} histories/s (seed ${o.seed})`);
  if (result.message) {
    console.error(result.message);
    return 1;
  }
  console.log('no divergence');
  return 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(2);
});
