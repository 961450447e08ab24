/** The terminal table: one row per property, one column per system. */
import { CONCURRENCY_KS, CONCURRENCY_MODES, CONCURRENCY_VALUES, concurrencyCellId } from '../cells.js';
import type { Report, ReportTiming } from './model.js';
import { PROPERTY_LABELS, cellsOf, summaryText } from './model.js';
import { generatedTerminal } from './generated.js';

const ANSI = { red: '\u001b[31m', green: '\u001b[32m', dim: '\u001b[2m', bold: '\u001b[1m', reset: '\u001b[0m' };

function colour(text: string, useColour: boolean): string {
  if (!useColour) return text;
  if (text.startsWith('VIOLATED')) return `${ANSI.red}${text}${ANSI.reset}`;
  if (text.startsWith('holds')) return `${ANSI.green}${text}${ANSI.reset}`;
  return `${ANSI.dim}${text}${ANSI.reset}`;
}

/** `reportsDir`: the folder the reports are written to (--out), for the paths printed. */
export function renderTerminal(report: Report, timing: ReportTiming | null, useColour: boolean, reportsDir = 'reports'): string {
  const headers = ['Property', ...report.systems.map((s) => s.system)];
  const rows = report.properties.map((p) => [PROPERTY_LABELS[p], ...report.systems.map((s) => summaryText(s, p))]);
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[], paint: boolean) =>
    cells.map((c, i) => (i > 0 && paint ? colour(c, useColour) : c) + ' '.repeat((widths[i] as number) - c.length)).join('  ');
  const out: string[] = [];
  if (report.systems.length > 0) {
    out.push(line(headers, false));
    out.push(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) out.push(line(r, true));
    out.push('');
  }
  for (const s of report.systems) {
    const fault = cellsOf(s, 'fault');
    const conc = cellsOf(s, 'concurrency');
    const applicable = (cells: typeof fault) => cells.filter((c) => c.applicable).length;
    const sat = CONCURRENCY_MODES.flatMap((m) =>
      CONCURRENCY_VALUES.map((v) => {
        const row = CONCURRENCY_KS.map((k) => conc.find((c) => c.cellId === concurrencyCellId(k, m, v))?.saturation);
        return row.some((x) => x != null) ? `${m}/${v} ${row.map((x) => (x == null ? '-' : `${x.fires}/${x.k}`)).join(' ')}` : '';
      }),
    ).filter((x) => x !== '');
    const t = timing?.systems.find((x) => x.system === s.system);
    out.push(
      `${s.system} (${s.label}): ${applicable(fault)}/${fault.length} fault cells and ${applicable(conc)}/${conc.length} concurrency cells applicable` +
        (t === undefined ? '' : `, ${(t.durationMs / 1000).toFixed(1)} s, ${t.processesSpawned} adapter processes`),
    );
    const versions = Object.entries(s.versions).map(([k, v]) => `${k} ${v}`).join(', ');
    out.push(`  versions: ${versions}`);
    if (sat.length > 0) out.push(`  gated-effect fires/k for k = ${CONCURRENCY_KS.join(', ')}: ${sat.join(' | ')}`);
    const recover = CONCURRENCY_MODES.map((m) => {
      const row = CONCURRENCY_KS.map((k) => conc.find((c) => c.cellId === concurrencyCellId(k, m, 'recover'))?.race);
      return row.some((x) => x !== undefined) ? `${m} ${row.map((x) => (x === undefined ? '-' : `${x.handlerCalls}/${x.k}`)).join(' ')}` : '';
    }).filter((x) => x !== '');
    if (recover.length > 0) out.push(`  recoverers: charge handler calls/k for k = ${CONCURRENCY_KS.join(', ')}: ${recover.join(' | ')}`);
    const hostsCells = conc.filter((c) => c.cellId.includes('/hosts/'));
    if (hostsCells.length > 0 && hostsCells.every((c) => !c.applicable)) out.push(`  hosts column not run: ${hostsCells[0]?.reason ?? ''}`);
  }
  out.push('', ...studyLines(report, useColour));
  if (report.generated !== undefined) {
    out.push(...generatedTerminal(report.generated, reportsDir));
    for (const t of timing?.generated ?? []) out.push(`  ${t.system}: ${t.cells} generated cells in ${(t.durationMs / 1000).toFixed(1)} s, ${t.processesSpawned} adapter processes`);
  }
  if (report.notRun.length > 0) {
    out.push('');
    for (const u of report.notRun) out.push(`NOT RUN ${u.system}: ${u.reason}`);
  }
  return out.join('\n');
}

/** The study's findings, one line per (finding, system), with our agreement. */
function studyLines(report: Report, useColour: boolean): string[] {
  const paint = (status: string) => {
    if (!useColour) return status;
    const c = status === 'agree' ? ANSI.green : status === 'disagree' ? ANSI.red : ANSI.dim;
    return `${c}${status}${ANSI.reset}`;
  };
  const out = [`Compared with the study (${report.study.citation}):`];
  for (const f of report.study.findings) {
    if (f.results.length === 0) out.push(`  ${f.id}: not measured here (none of its systems ran)`);
    for (const r of f.results) {
      out.push(`  ${f.id} · ${r.system}: ${paint(r.status)} — ${r.measured}`);
      for (const c of r.reproduction) out.push(`      reproduce: ${c}`);
    }
  }
  return out;
}
