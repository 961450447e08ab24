/**
 * Suite 1, recovery throughput: one realistic log (workloads/log-mix.ts) at 10^3..10^6 records
 * through the Wasm core, the TypeScript reference and the plain-JS framing+CRC walk (the parse
 * limit), side by side in one Bench per size.
 *
 * The JS/Wasm boundary share is estimated, not measured inside Wasm (a Wasm export has no clock):
 * - fixed cost per call: recover() of an empty log (the call, the result lift and its decoding);
 * - cost that grows with the log: recover() of the same bytes with the first header check broken.
 *   The core then reads 12 bytes and stops, so that call costs copying the whole log into Wasm
 *   memory plus the fixed cost. Its median over the full recover()'s median is the boundary share.
 */

import { compareTasks, type TimedTask } from '../lib/measure.js';
import { loadCores } from '../lib/cores.js';
import { row, speedRatio, unavailableRow, type ResultRow } from '../lib/results.js';
import type { SuiteContext, SuiteOutput } from '../lib/context.js';
import { buildMixedLog, prefixCase, MIX } from '../workloads/log-mix.js';
import { walkFraming } from '../workloads/framing-walk.js';

export const FRAMING_WALK = 'framing-crc-walk';
export const WASM_INVALID_AT_0 = 'wasm:copy-in-only';
/** The Wasm core on the same mix written in log format 1 (before the invocation fence), same record count. */
export const WASM_FORMAT_1 = 'wasm:format-1-log';

export async function runRecovery(ctx: SuiteContext): Promise<SuiteOutput> {
  const sizes = ctx.profile.recovery.map((c) => c.records);
  const largest = Math.max(...sizes);
  ctx.log(`recovery: building a ${largest}-record log`);
  const t0 = performance.now();
  const mixed = buildMixedLog(largest, sizes);
  const buildMs = performance.now() - t0;
  const mixedV1 = buildMixedLog(largest, sizes, undefined, 1);
  const cores = await loadCores();
  const rows: ResultRow[] = [];
  const notes: string[] = [
    `Log: one run of a six-node loop (2 effect nodes, 1 interrupt per cycle), deltas ${MIX.deltaBytes.join('-')} B, snapshots ${MIX.snapshotBytes} B, effect results ${MIX.resultBytes.join('-')} B; ${(mixed.bytes.length / largest).toFixed(1)} bytes/record on average; kinds ${JSON.stringify(mixed.kindCounts)} at ${largest} records (built in ${(buildMs / 1000).toFixed(1)} s, not timed).`,
    'Cores are called through RecoveryCore.recover (bytes in, decoded result out), which is what the shell calls.',
    `${WASM_FORMAT_1}: the Wasm core on the same mix written in log format 1, as before the invocation fence (no EFFECT_ATTEMPT records, no links; ${(mixedV1.bytes.length / largest).toFixed(1)} bytes/record), same record count; the wasm row's speed_vs_${WASM_FORMAT_1} is the recovery cost of format 2 per record.`,
  ];
  for (const c of cores) if (!c.core) notes.push(`${c.impl} core unavailable: ${c.unavailable}`);
  const wasm = cores.find((c) => c.impl === 'wasm')?.core ?? null;

  for (const { records, plan } of ctx.profile.recovery) {
    const pc = prefixCase(mixed, records);
    const mb = pc.log.length / 1e6;
    const caseName = `records=${records}`;
    const params = { records, log_bytes: pc.log.length };
    ctx.log(`recovery: ${caseName} (${mb.toFixed(1)} MB)`);
    const tasks: TimedTask[] = [];
    for (const c of cores) {
      if (c.core) {
        const core = c.core;
        tasks.push({ impl: c.impl, fn: () => expectRecovered(core.recover(pc.log), records) });
      }
    }
    if (wasm) tasks.push({ impl: WASM_INVALID_AT_0, fn: () => expectBadAtZero(wasm.recover(pc.invalidAtZero)) });
    const v1 = prefixCase(mixedV1, records).log;
    if (wasm) tasks.push({ impl: WASM_FORMAT_1, fn: () => expectRecovered(wasm.recover(v1), records) });
    tasks.push({ impl: FRAMING_WALK, fn: () => expectWalked(walkFraming(pc.log), records) });
    const outcomes = await compareTasks(`recovery ${caseName}`, tasks, plan);
    const caseRows = outcomes.map((o) =>
      o.time_ms
        ? row({
          suite: 'recovery', case: caseName, params, impl: o.impl,
          role: o.impl === FRAMING_WALK ? 'limit' : 'subject', time_ms: o.time_ms,
          // The copy-in row recovers nothing: only its byte rate means something.
          metrics: o.impl === WASM_INVALID_AT_0
            ? { mb_per_s: mb / (o.time_ms.median / 1000) }
            : {
              records_per_s: records / (o.time_ms.median / 1000),
              mb_per_s: (o.impl === WASM_FORMAT_1 ? v1.length / 1e6 : mb) / (o.time_ms.median / 1000),
              // The fastest sample: what the code does when no other process takes the core away.
              records_per_s_best: records / (o.time_ms.min / 1000),
            },
          ...(o.impl === WASM_INVALID_AT_0 ? { note: 'copy-in + call + error result, no recovery work' } : {}),
        })
        : row({ suite: 'recovery', case: caseName, params, impl: o.impl, role: 'subject', status: 'error', note: o.error }),
    );
    for (const c of cores) if (!c.core) caseRows.push(unavailableRow('recovery', caseName, params, c.impl, 'subject', c.unavailable ?? ''));
    addRecoveryRatios(caseRows);
    rows.push(...caseRows);
  }
  rows.push(...(await fixedCallCost(ctx, cores)));
  return { rows, notes, charts: [recoveryChart(rows, ctx)] };
}

function addRecoveryRatios(caseRows: ResultRow[]): void {
  const by = (impl: string) => caseRows.find((r) => r.impl === impl && r.status === 'measured');
  const walk = by(FRAMING_WALK);
  const reference = by('reference');
  const wasmRow = by('wasm');
  const copyIn = by(WASM_INVALID_AT_0);
  for (const r of caseRows) {
    if (r.status !== 'measured' || r.impl === FRAMING_WALK || r.impl === WASM_INVALID_AT_0) continue;
    const vsWalk = speedRatio(r, walk);
    if (vsWalk !== undefined) r.ratios[`speed_vs_${FRAMING_WALK}`] = vsWalk;
  }
  if (wasmRow) {
    const vsRef = speedRatio(wasmRow, reference);
    if (vsRef !== undefined) wasmRow.ratios.speed_vs_reference = vsRef;
    const vsV1 = speedRatio(wasmRow, by(WASM_FORMAT_1));
    if (vsV1 !== undefined) wasmRow.ratios[`speed_vs_${WASM_FORMAT_1}`] = vsV1;
    if (copyIn?.time_ms && wasmRow.time_ms) {
      wasmRow.metrics.boundary_share = copyIn.time_ms.median / wasmRow.time_ms.median;
      wasmRow.metrics.copy_in_mb_per_s = copyIn.metrics.mb_per_s ?? 0;
    }
  }
}

/** The per-call floor: recover() of an empty log, both cores (reference = no boundary at all). */
async function fixedCallCost(ctx: SuiteContext, cores: Awaited<ReturnType<typeof loadCores>>): Promise<ResultRow[]> {
  const empty = new Uint8Array(0);
  const batch = 100;
  const tasks: TimedTask[] = cores.filter((c) => c.core).map((c) => ({ impl: c.impl, fn: () => c.core!.recover(empty), batch }));
  const encoded = cores.find((c) => c.impl === 'wasm')?.core;
  if (encoded) tasks.push({ impl: 'wasm:recoverEncoded', fn: () => encoded.recoverEncoded(empty), batch });
  if (tasks.length === 0) return [];
  ctx.log('recovery: fixed cost per call (empty log)');
  const outcomes = await compareTasks('recovery empty log', tasks, ctx.profile.boundaryPlan);
  return outcomes.map((o) =>
    row({
      suite: 'recovery', case: 'records=0 (per-call cost)', params: { records: 0, log_bytes: 0 }, impl: o.impl, role: 'subject',
      status: o.time_ms ? 'measured' : 'error',
      ...(o.time_ms ? { time_ms: o.time_ms, metrics: { call_us: o.time_ms.median * 1000 } } : { note: o.error }),
      ...(o.impl === 'wasm:recoverEncoded' ? { note: 'no result decoding: the crossing alone' } : {}),
    }),
  );
}

function expectRecovered(r: { ok: boolean; recordCount?: number }, records: number): number {
  if (!r.ok || r.recordCount !== records) throw new Error(`recovery returned ${JSON.stringify(r).slice(0, 200)} for ${records} records`);
  return r.recordCount;
}

function expectBadAtZero(r: { ok: boolean; offset?: number }): number {
  if (r.ok || r.offset !== 0) throw new Error('expected a BAD_HEADER error at offset 0');
  return 0;
}

function expectWalked(w: { records: number; badOffset: number }, records: number): number {
  if (w.records !== records || w.badOffset !== -1) throw new Error(`framing walk found ${w.records} of ${records} records`);
  return w.records;
}

function recoveryChart(rows: ResultRow[], ctx: SuiteContext) {
  const impls = ['wasm', 'reference', FRAMING_WALK];
  return {
    file: 'recovery-throughput',
    spec: {
      title: 'Recovery throughput vs log size',
      subtitle: `median of samples, ${ctx.profile.name} profile; higher is better`,
      xLabel: 'log size (records)',
      yLabel: 'records per second',
      xLog: true,
      yLog: true,
      series: impls.map((impl) => ({
        name: impl === FRAMING_WALK ? 'framing+CRC walk (limit)' : `${impl} core`,
        dashed: impl === FRAMING_WALK,
        points: rows
          .filter((r) => r.impl === impl && r.status === 'measured' && typeof r.params.records === 'number' && r.params.records > 0)
          .map((r) => ({ x: r.params.records as number, y: r.metrics.records_per_s ?? NaN })),
      })),
    },
  };
}
