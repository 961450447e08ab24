/** The Markdown report (bench/results/latest.md): machine, one table per suite, targets, notes. */

import type { ResultRow, ResultsDocument, SuiteName, SuiteRun } from './results.js';

interface Column {
  header: string;
  cell: (r: ResultRow) => string;
}

export function fmt(v: number | undefined, digits = 3): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a >= 1e9) return `${(v / 1e9).toPrecision(digits)} G`;
  if (a >= 1e6) return `${(v / 1e6).toPrecision(digits)} M`;
  if (a >= 1e4) return `${(v / 1e3).toPrecision(digits)} k`;
  if (a >= 100) return Math.round(v).toString();
  return v.toPrecision(digits);
}

const ratio = (v: number | undefined) => (v === undefined ? '–' : `${fmt(v)}×`);
const pct = (v: number | undefined) => (v === undefined ? '–' : `${(v * 100).toFixed(1)} %`);
/** Bytes in MB (10^6 bytes): the unit of the memory targets (lib/targets.ts). */
const mb = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '–' : `${(v / 1e6).toFixed(1)} MB`);
const ms = (r: ResultRow) => fmt(r.time_ms?.median);
const spread = (r: ResultRow) => (r.time_ms ? `${fmt(r.time_ms.p25)}–${fmt(r.time_ms.p75)}` : '–');
const samples = (r: ResultRow) => (r.time_ms ? String(r.time_ms.samples) : '–');
const implCell = (r: ResultRow) => (r.status === 'measured' ? r.impl : `${r.impl} (${r.status}${r.note ? `: ${r.note.slice(0, 80)}` : ''})`);

const COLUMNS: Record<SuiteName, Column[]> = {
  recovery: [
    { header: 'case', cell: (r) => r.case },
    { header: 'impl', cell: implCell },
    { header: 'median ms', cell: ms },
    { header: 'p25–p75 ms', cell: spread },
    { header: 'n', cell: samples },
    { header: 'records/s', cell: (r) => fmt(r.metrics.records_per_s) },
    { header: 'records/s (fastest sample)', cell: (r) => fmt(r.metrics.records_per_s_best) },
    { header: 'MB/s', cell: (r) => fmt(r.metrics.mb_per_s) },
    { header: 'speed vs framing walk', cell: (r) => ratio(r.ratios['speed_vs_framing-crc-walk']) },
    { header: 'wasm / reference', cell: (r) => ratio(r.ratios.speed_vs_reference) },
    { header: 'format 2 / format 1 (wasm)', cell: (r) => ratio(r.ratios['speed_vs_wasm:format-1-log']) },
    { header: 'boundary share', cell: (r) => pct(r.metrics.boundary_share) },
  ],
  resume: [
    { header: 'N', cell: (r) => String(r.params.nodes ?? '–') },
    { header: 'synchronous (read back)', cell: (r) => (r.params.synchronous === undefined ? '–' : r.status !== 'measured' ? String(r.params.synchronous) : `${r.params.synchronous} (${r.params.synchronous_read_back ?? '?'})`) },
    { header: 'impl', cell: implCell },
    { header: 'spawn→exit median ms', cell: ms },
    { header: 'p25–p75 ms', cell: spread },
    { header: 'n', cell: samples },
    { header: 'minus import-only child ms', cell: (r) => fmt(r.metrics.resume_over_import_ms) },
    { header: 'in-child resume ms', cell: (r) => fmt(r.metrics.in_child_resume_ms) },
    { header: 'in-child import ms', cell: (r) => fmt(r.metrics.in_child_import_ms) },
    { header: 'speedup vs LangGraph (minus import / in-child)', cell: (r) => `${ratio(r.ratios['resume_over_import_vs_langgraph'])} / ${ratio(r.ratios['in_child_vs_langgraph'])}` },
    { header: 'durable commits per resume', cell: (r) => fmt(r.metrics.commits_per_resume) },
  ],
  commit: [
    { header: 'case', cell: (r) => r.case },
    { header: 'impl', cell: implCell },
    { header: 'ms per step median', cell: ms },
    { header: 'p25–p75 ms', cell: spread },
    { header: 'n', cell: samples },
    { header: 'steps/s', cell: (r) => fmt(r.metrics.steps_per_s ?? r.metrics.effect_steps_per_s) },
    { header: 'share of raw rate', cell: (r) => pct(r.ratios['speed_vs_raw-insert-commit']) },
    { header: 'share of fdatasync rate', cell: (r) => pct(r.ratios['rate_vs_fdatasync']) },
    { header: 'speed vs previous effect step', cell: (r) => ratio(r.ratios['speed_vs_previous-effect-step (replayed)']) },
    { header: 'handler calls per effect step (max)', cell: (r) => fmt(r.metrics.handler_calls_per_step_max) },
  ],
  gate: [
    { header: 'racers k', cell: (r) => String(r.params.racers ?? '–') },
    { header: 'impl', cell: implCell },
    { header: 'ms per claim median', cell: ms },
    { header: 'p25–p75 ms', cell: spread },
    { header: 'n', cell: samples },
    { header: 'claims/s', cell: (r) => fmt(r.metrics.claims_per_s) },
    { header: 'share of raw rate', cell: (r) => pct(r.ratios['speed_vs_raw-on-conflict']) },
  ],
  'step-cost': [
    { header: 'case', cell: (r) => r.case },
    { header: 'status', cell: (r) => (r.status === 'measured' ? (r.metrics.stopped_by_budget ? `stopped by budget at ${r.metrics.steps_run}` : 'ran to N') : (r.note ?? r.status)) },
    { header: 'µs/step mean', cell: (r) => fmt(r.metrics.step_us_mean) },
    { header: 'µs/step by decile (1 … 10)', cell: (r) => (r.status === 'measured' ? Array.from({ length: 10 }, (_, i) => fmt(r.metrics[`step_us_decile_${i + 1}`])).join(' ') : '–') },
    { header: 'last / first decile', cell: (r) => ratio(r.metrics.last_over_first_decile) },
    { header: 'bytes to core', cell: (r) => fmt(r.metrics.bytes_to_core) },
    { header: 'log bytes', cell: (r) => fmt(r.metrics.log_bytes) },
    { header: 'bytes to core / log', cell: (r) => ratio(r.metrics.bytes_to_core_over_log) },
    { header: 'core calls', cell: (r) => fmt(r.metrics.core_calls) },
  ],
  'wasm-memory': [
    { header: 'case', cell: (r) => r.case },
    { header: 'impl', cell: implCell },
    { header: 'log bytes', cell: (r) => mb(r.params.log_bytes as number) },
    { header: 'linear memory at load', cell: (r) => mb(r.metrics.at_load_bytes) },
    { header: 'before', cell: (r) => mb(r.metrics.before_bytes) },
    { header: 'peak', cell: (r) => mb(r.metrics.peak_bytes) },
    { header: 'after (gc)', cell: (r) => mb(r.metrics.after_bytes) },
    { header: 'peak − log size', cell: (r) => mb(r.metrics.peak_over_log_bytes) },
    { header: 'recover ms median', cell: ms },
  ],
  storage: [
    { header: 'state', cell: (r) => String(r.params.state ?? '–') },
    { header: 'steps N', cell: (r) => String(r.params.steps ?? '–') },
    { header: 'impl', cell: implCell },
    { header: 'bytes on disk', cell: (r) => fmt(r.metrics.bytes_on_disk) },
    { header: 'stored payload bytes', cell: (r) => fmt(r.metrics.logical_bytes) },
    { header: 'bytes/step (disk, linear fit)', cell: (r) => fmt(r.metrics.bytes_per_step_fit) },
    { header: 'stored bytes/step since previous N', cell: (r) => fmt(r.metrics.bytes_per_step_marginal) },
    { header: 'REMIT / LangGraph bytes', cell: (r) => ratio(r.ratios.bytes_vs_langgraph) },
  ],
};

const TITLES: Record<SuiteName, string> = {
  recovery: '1. Recovery throughput',
  resume: '2. Resume latency, fresh process (SQLite file)',
  commit: '3. Durable step commit (SQLite)',
  gate: '4. Consume-once gate',
  storage: '5. Storage growth',
  'step-cost': '6. Step cost vs run length',
  'wasm-memory': '7. Wasm linear memory around a large recovery',
};

function table(rows: ResultRow[], columns: Column[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const lines = [`| ${columns.map((c) => c.header).join(' | ')} |`, `|${columns.map(() => '---').join('|')}|`];
  for (const r of rows) lines.push(`| ${columns.map((c) => esc(c.cell(r))).join(' | ')} |`);
  return lines.join('\n');
}

export function machineLine(doc: ResultsDocument): string {
  const m = doc.machine;
  return `${m.cpu_model}, ${m.cpu_cores} cores, ${(m.memory_bytes / 2 ** 30).toFixed(0)} GiB; ${m.os_platform} ${m.os_release}; Node ${m.node_version} (V8 ${m.v8_version}); SQLite ${m.sqlite_version}; load average at start ${m.load_avg_at_start.join(' / ')}, at end ${m.load_avg_at_end.join(' / ')}; git ${m.git_commit.slice(0, 10)}${m.git_dirty ? ' (uncommitted changes)' : ''}`;
}

/** Shown above a suite merged from an earlier run than the document's own. */
function runLine(r: SuiteRun): string {
  return `Measured by an earlier run: ${r.started_at}, ${r.profile} profile, \`${r.command}\`, git ${r.git_commit.slice(0, 10)}${r.git_dirty ? ' (uncommitted changes)' : ''}, load average ${r.load_avg_at_start.join(' / ')} at start, ${r.load_avg_at_end.join(' / ')} at end.`;
}

export function renderMarkdown(doc: ResultsDocument): string {
  const out: string[] = [];
  const earlierSuites = doc.suites.filter((x) => x.run && x.run.started_at !== doc.started_at);
  const earlier = earlierSuites.map((x) => x.name);
  // A document merged from runs of other profiles says so in its title, not only above each table.
  const otherProfiles = earlierSuites.filter((x) => x.run!.profile !== doc.profile);
  const title = otherProfiles.length === 0 ? `${doc.profile} profile` : `${doc.profile} profile; ${otherProfiles.map((x) => `${x.name}: ${x.run!.profile}`).join(', ')}`;
  out.push(`# REMIT benchmarks (${title})`, '');
  out.push(`Run ${doc.started_at}, ${doc.duration_s.toFixed(0)} s, \`${doc.command}\`.`, '');
  if (earlier.length > 0) out.push(`This run measured ${doc.suites.filter((x) => !earlier.includes(x.name)).map((x) => x.name).join(', ') || 'no suite'}; the other suites were measured by earlier runs (${earlierSuites.map((x) => `${x.name}: ${x.run!.started_at}, ${x.run!.profile} profile, git ${x.run!.git_commit.slice(0, 10)}`).join('; ')}), each also named above its table. A target is judged on the rows of its suite, so on that suite's run. The machine line is this run's.`, '');
  out.push(`Machine: ${machineLine(doc)}.`, '');
  out.push('Packages: ' + Object.entries(doc.machine.packages).map(([k, v]) => `${k} ${v}`).join(', ') + '.', '');
  out.push('Times are medians over pooled samples (p25–p75 shown); rates are derived from the medians. Ratios compare rows of the same case measured in this run; a speed ratio above 1 means faster than the row named.', '');
  if (doc.targets.length > 0) {
    out.push('## Targets', '', '| target | goal | measured | met |', '|---|---|---|---|');
    for (const t of doc.targets) {
      const met = t.met === null ? (t.measured === null ? 'not measured' : 'not shown (see note)') : t.met ? 'met' : 'missed';
      out.push(`| ${t.id} | ${t.goal} | ${t.measured === null ? '–' : `${fmt(t.measured)} ${t.unit}`} | ${met} |`);
    }
    out.push('');
    for (const t of doc.targets) if (t.note) out.push(`- **${t.id}**: ${t.note}`);
    out.push('');
  }
  for (const suite of doc.suites) {
    out.push(`## ${TITLES[suite.name]}`, '');
    if (suite.run && suite.run.started_at !== doc.started_at) out.push(runLine(suite.run), '');
    if (suite.status === 'skipped') {
      out.push(`Skipped. ${suite.notes.join(' ')}`, '');
      continue;
    }
    out.push(table(suite.rows, COLUMNS[suite.name]), '');
    for (const n of suite.notes) out.push(`- ${n}`);
    out.push(`- Suite time: ${suite.duration_s.toFixed(1)} s.`, '');
  }
  return out.join('\n');
}
