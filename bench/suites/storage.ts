/**
 * Suite 5, storage growth: bytes on disk after N steps of a workflow whose state grows by a fixed
 * amount per step (one ITEM_BYTES item appended) and of one whose state stays the same size, REMIT
 * vs LangGraph.js, each on a fresh SQLite file measured after the connection closed (WAL folded
 * into the file). Also the payload bytes stored (REMIT: record bytes; LangGraph: checkpoint,
 * metadata and write blobs), which do not depend on SQLite's page allocation.
 *
 * bytes_per_step_fit is the least-squares slope of bytes on disk over N for the series;
 * bytes_per_step_marginal is the slope between this N and the previous one (it stays flat when
 * growth is linear and rises when it is not).
 */

import Database from 'better-sqlite3';
import { dbBytesOnDisk, freshDbPath, type SuiteContext, type SuiteOutput } from '../lib/context.js';
import { row, unavailableRow, type ResultRow } from '../lib/results.js';
import { linearFit } from '../lib/stats.js';
import { langgraphRunGrowth } from '../workloads/langgraph.js';
import { FIXED_PAYLOAD_BYTES, ITEM_BYTES } from '../workloads/shapes.js';

type Impl = 'remit' | 'langgraph';
type StateKind = 'growing' | 'fixed';

function logicalBytes(impl: Impl, file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    const q = (sql: string) => Number((db.prepare(sql).get() as { b: number | null }).b ?? 0);
    if (impl === 'remit') return q('SELECT sum(length(bytes)) AS b FROM remit_records');
    return q('SELECT sum(length(checkpoint) + length(metadata)) AS b FROM checkpoints') + q('SELECT sum(length(value)) AS b FROM writes');
  } finally {
    db.close();
  }
}

export async function runStorage(ctx: SuiteContext): Promise<SuiteOutput> {
  const rows: ResultRow[] = [];
  const notes: string[] = [
    `Growing state: one ${ITEM_BYTES}-byte string appended per step (LangGraph: a list channel with an appending reducer; REMIT: the node returns the longer list and the shell stores a delta). Fixed state: a counter next to a ${FIXED_PAYLOAD_BYTES}-byte string.`,
    'REMIT: SqliteStore. LangGraph: SqliteSaver, durability "sync". Sizes do not depend on timing, so each point is one run.',
  ];
  let remit: typeof import('../workloads/remit.js') | null = null;
  try {
    remit = await import('../workloads/remit.js');
    notes.push((await remit.remitCore()).note);
  } catch (e) {
    notes.push(`REMIT unavailable: ${String((e as Error)?.message ?? e).slice(0, 200)}`);
  }
  for (const state of ['growing', 'fixed'] as StateKind[]) {
    for (const steps of ctx.profile.storage.steps) {
      const caseName = `${state} N=${steps}`;
      const params = { state, steps };
      for (const impl of ['remit', 'langgraph'] as Impl[]) {
        const role = impl === 'remit' ? 'subject' : 'competitor';
        if (impl === 'remit' && !remit) {
          rows.push(unavailableRow('storage', caseName, params, impl, role, 'REMIT workload did not load'));
          continue;
        }
        const file = freshDbPath(ctx.tmpDir, `${impl}-${state}-${steps}.db`);
        ctx.log(`storage: ${impl} ${caseName}`);
        const t0 = performance.now();
        if (impl === 'remit') await remit!.remitRunGrowth(file, steps, state === 'growing', { synchronous: 'NORMAL' });
        else await langgraphRunGrowth(file, steps, state === 'growing');
        const runMs = performance.now() - t0;
        rows.push(row({
          suite: 'storage', case: caseName, params, impl, role,
          metrics: { bytes_on_disk: dbBytesOnDisk(file), logical_bytes: logicalBytes(impl, file), run_ms: runMs },
        }));
      }
    }
  }
  addFits(rows);
  return { rows, notes, charts: [storageChart(rows, ctx)] };
}

function addFits(rows: ResultRow[]): void {
  for (const impl of ['remit', 'langgraph']) {
    for (const state of ['growing', 'fixed']) {
      const series = rows
        .filter((r) => r.impl === impl && r.params.state === state && r.status === 'measured')
        .sort((a, b) => (a.params.steps as number) - (b.params.steps as number));
      if (series.length >= 2) {
        const fit = linearFit(series.map((r) => r.params.steps as number), series.map((r) => r.metrics.bytes_on_disk!));
        for (const r of series) {
          r.metrics.bytes_per_step_fit = fit.slope;
          r.metrics.fit_r2 = fit.r2;
        }
      }
      series.forEach((r, i) => {
        if (i === 0) return;
        const prev = series[i - 1]!;
        const dn = (r.params.steps as number) - (prev.params.steps as number);
        r.metrics.bytes_per_step_marginal = (r.metrics.logical_bytes! - prev.metrics.logical_bytes!) / dn;
      });
    }
  }
  for (const r of rows) {
    if (r.impl !== 'remit' || r.status !== 'measured') continue;
    const lg = rows.find((x) => x.impl === 'langgraph' && x.case === r.case && x.status === 'measured');
    if (lg) r.ratios.bytes_vs_langgraph = r.metrics.bytes_on_disk! / lg.metrics.bytes_on_disk!;
  }
}

function storageChart(rows: ResultRow[], ctx: SuiteContext) {
  const series = (impl: string, state: string, name: string, dashed: boolean) => ({
    name, dashed,
    points: rows.filter((r) => r.impl === impl && r.params.state === state && r.status === 'measured')
      .map((r) => ({ x: r.params.steps as number, y: r.metrics.bytes_on_disk! })),
  });
  return {
    file: 'storage-growth',
    spec: {
      title: 'Bytes on disk vs steps',
      subtitle: `SQLite file after the run, ${ctx.profile.name} profile; lower is better`,
      xLabel: 'steps (N)',
      yLabel: 'bytes on disk',
      xLog: true,
      yLog: true,
      series: [
        series('remit', 'growing', 'REMIT, growing state', false),
        series('langgraph', 'growing', 'LangGraph, growing state', false),
        series('remit', 'fixed', 'REMIT, fixed state', true),
        series('langgraph', 'fixed', 'LangGraph, fixed state', true),
      ],
    },
  };
}
