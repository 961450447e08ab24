/**
 * Suite "wasm-memory": the Wasm core's linear memory before and after recovering one large log
 * (workloads/log-mix.ts, 10^6 records by default) in a fresh process (children/wasm-memory-child.ts,
 * which sees the core's instance by wrapping WebAssembly.instantiate). Sizes, not times: one
 * process per sample; the figures do not depend on timing, so a few samples only confirm that.
 */

import path from 'node:path';
import type { SuiteContext, SuiteOutput } from '../lib/context.js';
import { row, type ResultRow } from '../lib/results.js';
import { summarize } from '../lib/stats.js';
import { compileChildren, runJsonChild } from '../lib/compile-js.js';

const SAMPLES = 2;

interface ChildReport {
  records: number;
  log_bytes: number;
  instances: number;
  memories: number;
  at_load_bytes: number;
  before_bytes: number;
  peak_bytes: number;
  after_bytes: number;
  idle_ms_before_after?: number;
  gc_exposed: boolean;
  recover_ms: number;
}

/** The two ways a log reaches the core: one whole-log recover, and the sequencer's 1 MiB pieces. */
const MODES = [
  { mode: 'recover', impl: 'wasm:recover' },
  { mode: 'feed-1mib', impl: 'wasm:feed-1mib' },
] as const;

async function runChild(ctx: SuiteContext, child: string, records: number, mode: string): Promise<ChildReport> {
  const { report } = await runJsonChild(ctx.repoRoot, child, [String(records), mode], ['--expose-gc']);
  return report as ChildReport;
}

export async function runWasmMemory(ctx: SuiteContext): Promise<SuiteOutput> {
  const { records } = ctx.profile.wasmMemory;
  const outDir = path.join(ctx.codeDir, 'js');
  compileChildren(ctx.repoRoot, outDir);
  const child = path.join(outDir, 'bench', 'children', 'wasm-memory-child.js');
  const byMode = new Map<string, ChildReport[]>(MODES.map((m) => [m.mode, []]));
  // Alternate the modes, one fresh process each (linear memory never shrinks within a process).
  for (let i = 0; i < SAMPLES; i++) {
    for (const { mode } of MODES) {
      ctx.log(`wasm-memory: ${mode} of ${records} records in a fresh process (${i + 1}/${SAMPLES})`);
      byMode.get(mode)!.push(await runChild(ctx, child, records, mode));
    }
  }
  const rows: ResultRow[] = MODES.map(({ mode, impl }) => memoryRow(records, impl, mode, byMode.get(mode)!));
  const last = byMode.get('recover')!.at(-1)!;
  const notes = [
    `One fresh process per sample and row (${SAMPLES} each, alternating): load the Wasm core through the public factory (createCore('wasm')), recover an empty log, then the ${records}-record log of the recovery suite (${(last.log_bytes / 1e6).toFixed(1)} MB), then run the garbage collector twice. wasm:recover hands it to core.recover whole; wasm:feed-1mib feeds it from the empty summary in 1 MiB pieces with core.feed, as the sequencer reloads a run (its feedCore loop, copied into the child); the time column is that call or loop.`,
    `Memory = byte length of the linear memory of every core instance created in the process and still alive (the child wraps WebAssembly.instantiate and the WebAssembly.Instance constructor and holds the memories weakly). before: after the empty recovery; peak: right after the large recovery, of the instances that existed when it began (linear memory never shrinks, so this is the largest it was); after: once the process was idle for ${last.idle_ms_before_after ?? 0} ms (the binding gives back memory a call grew past 16 MiB when no large call came for 3 s) and the garbage collector ran. Medians; instances: how many the process made (2: the binding renewed one).`,
  ];
  return { rows, notes, charts: [] };
}

function memoryRow(records: number, impl: string, mode: string, reports: ChildReport[]): ResultRow {
  const med = (k: keyof ChildReport) => summarize(reports.map((r) => Number(r[k]))).median;
  const last = reports[reports.length - 1]!;
  return row({
    suite: 'wasm-memory', case: `records=${records}`, params: { records, log_bytes: last.log_bytes, mode }, impl, role: 'subject',
    time_ms: summarize(reports.map((r) => r.recover_ms)),
    metrics: {
      at_load_bytes: med('at_load_bytes'),
      before_bytes: med('before_bytes'),
      peak_bytes: med('peak_bytes'),
      after_bytes: med('after_bytes'),
      peak_over_log_bytes: med('peak_bytes') - last.log_bytes,
      instances: last.instances,
    },
    ...(last.gc_exposed ? {} : { note: 'gc() not exposed: "after" is before any collection' }),
  });
}
