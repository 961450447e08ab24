/** The Markdown report: profile table, both matrices per system, smallest reproductions. */
import { CONCURRENCY_COLUMNS, CONCURRENCY_KS, CONCURRENCY_MODES, FAULT_KINDS, FAULT_POINTS, concurrencyCellId, faultCellId } from '../cells.js';
import type { SystemProfile } from '../profile.js';
import { generatedMarkdown } from './generated.js';
import {
  PROPERTY_LABELS,
  PROPERTY_TAGS,
  RECOVER_LABEL,
  cellVerdict,
  replayCommand,
  reportFile,
  rerunCommand,
  saturationText,
  smallestPath,
  studyMark,
  summaryText,
  violatedProperties,
  type Report,
} from './model.js';

function cellMark(profile: SystemProfile, cellId: string): string {
  const cell = profile.cells.find((c) => c.cellId === cellId);
  if (cell === undefined) return '·';
  const verdict = cellVerdict(cell);
  const sat = saturationText(cell);
  const suffix = sat === '' ? '' : ` ${sat}`;
  if (verdict === 'holds') return `✓${suffix}`;
  if (verdict === 'not-applicable') return 'n/a';
  return `✗ ${violatedProperties(cell).map((p) => PROPERTY_TAGS[p]).join(' ')}${suffix}`;
}

function faultMatrix(profile: SystemProfile): string[] {
  const out = [`| point | ${FAULT_KINDS.join(' | ')} |`, `|---|${FAULT_KINDS.map(() => '---').join('|')}|`];
  for (const point of FAULT_POINTS) {
    const marks = FAULT_KINDS.map((kind) => cellMark(profile, faultCellId(point.name, kind)));
    out.push(`| \`${point.name}\` | ${marks.join(' | ')} |`);
  }
  return out;
}

function concurrencyMatrix(profile: SystemProfile): string[] {
  const columns = CONCURRENCY_MODES.flatMap((m) => CONCURRENCY_COLUMNS.map((v) => [m, v] as const));
  const head = ([m, v]: readonly [string, string]) => (v === 'recover' ? `${m}, recoverers` : `${m}, ${v} values`);
  const out = [`| k | ${columns.map(head).join(' | ')} |`, `|---|${columns.map(() => '---').join('|')}|`];
  for (const k of CONCURRENCY_KS) {
    out.push(`| ${k} | ${columns.map(([m, v]) => cellMark(profile, concurrencyCellId(k, m, v))).join(' | ')} |`);
  }
  out.push('', `Recoverer columns: ${RECOVER_LABEL}.`);
  return out;
}

/** `reportsDir`: the folder the reports are written to (--out, as given), for the replay commands. */
export function renderMarkdown(report: Report, reportsDir = 'reports'): string {
  const out: string[] = [];
  out.push('# Resume-contract conformance report', '');
  out.push(`Seed ${report.seed}, mode ${report.mode}. Catalogue: ${report.catalogue.faultCells} fault cells, ${report.catalogue.concurrencyCells} concurrency cells.`);
  out.push('Same seed, same report: this file holds no times or machine-specific values.', '');
  out.push('## Profiles', '');
  out.push(`| Property | ${report.systems.map((s) => s.label).join(' | ')} |`);
  out.push(`|---|${report.systems.map(() => '---').join('|')}|`);
  for (const p of report.properties) out.push(`| ${PROPERTY_LABELS[p]} | ${report.systems.map((s) => summaryText(s, p)).join(' | ')} |`);
  out.push('');
  if (report.notRun.length > 0) {
    out.push(`**Not run** (${report.notRun.length}):`, '');
    for (const u of report.notRun) out.push(`- \`${u.system}\`: ${u.reason}`);
    out.push('');
  }
  out.push('Counts are cells: "holds 86/86" means the property held in all 86 cells where it applied.');
  out.push(`Matrix marks: ✓ every property holds; ✗ followed by the violated properties (${Object.entries(PROPERTY_TAGS).map(([p, t]) => `${t} ${p}`).join(', ')}); n/a not applicable; k/k after a resumer mark is the gated effect's fire count over k; "c charge call(s) by k recoverers" after a recoverer mark is how many times charge's handler ran in all.`, '');
  out.push(...studySection(report));
  for (const s of report.systems) {
    out.push(`## ${s.label} (\`${s.system}\`)`, '');
    out.push(`Versions: ${Object.entries(s.versions).map(([k, v]) => `${k} ${v}`).join(', ')}.`, '');
    const na = s.cells.filter((c) => !c.applicable);
    if (na.length > 0) {
      const reasons = [...new Set(na.map((c) => c.reason ?? ''))];
      out.push(`Not applicable: ${na.length} cells (${reasons.join('; ')}).`, '');
    }
    out.push('### Fault matrix', '', ...faultMatrix(s), '');
    out.push('### Concurrency matrix', '', ...concurrencyMatrix(s), '');
    const smallest = report.properties.filter((p) => s.properties[p].smallest !== null);
    if (smallest.length > 0) {
      out.push('### Smallest reproductions', '');
      for (const p of smallest) {
        const r = s.properties[p].smallest!;
        const fault = r.scenario.fault === null ? 'no fault' : `fault ${r.scenario.fault.point}/${r.scenario.fault.kind}`;
        out.push(`- **${PROPERTY_LABELS[p]}**: from cell \`${r.cellId}\`: ${fault}, steps ${r.scenario.steps.join(' → ')}${r.scenario.concurrency ? `, k=${r.scenario.concurrency.k}` : ''} (shrunk in ${r.shrinkRuns} re-runs${r.removed.length ? `: removed ${r.removed.join(', ')}` : ''}).`);
        for (const e of r.evidence) out.push(`  - ${e}`);
        out.push(`  - replay: \`${replayCommand(s.system, reportFile(reportsDir, smallestPath(s.system, p)))}\``);
      }
      out.push('');
    }
    const violated = s.cells.filter((c) => cellVerdict(c) === 'violated');
    if (violated.length > 0) {
      out.push(`### Violated cells (${violated.length})`, '');
      for (const c of violated) {
        out.push(`- \`${c.cellId}\`: ${violatedProperties(c).map((p) => PROPERTY_TAGS[p]).join(', ')} — rerun \`${rerunCommand(s.system, c.cellId, report.seed)}\``);
      }
      out.push('');
    }
  }
  if (report.generated !== undefined) out.push(...generatedMarkdown(report.generated, reportsDir));
  return out.join('\n');
}

/** Our verdicts next to the study's published findings. */
export function studySection(report: Report): string[] {
  const study = report.study;
  const out: string[] = [`## Compared with the study (${study.citation})`, ''];
  out.push('Each verdict of the profile table against the study\'s published finding for that framework: agree, disagree, not measured here (the finding is about cells this system cannot run), or not measured by the study.', '');
  out.push(`| Property | ${report.systems.map((s) => s.system).join(' | ')} |`);
  out.push(`|---|${report.systems.map(() => '---').join('|')}|`);
  for (const p of report.properties) out.push(`| ${PROPERTY_LABELS[p]} | ${report.systems.map((s) => `${summaryText(s, p)}: ${studyMark(report, s.system, p)}`).join(' | ')} |`);
  out.push('', '| Finding of the study | System | Here | What this run measured |', '|---|---|---|---|');
  for (const f of study.findings) {
    if (f.results.length === 0) {
      out.push(`| ${f.claim} (\`${f.id}\`) | none of its systems ran | not measured here | |`);
      continue;
    }
    for (const r of f.results) out.push(`| ${f.claim} (\`${f.id}\`) | ${r.system} | **${r.status}** | ${r.measured.replace(/\|/g, '\\|')} |`);
  }
  const disagreements = study.findings.flatMap((f) => f.results.filter((r) => r.status === 'disagree').map((r) => ({ f, r })));
  if (disagreements.length > 0) {
    out.push('', '### Disagreements: reproductions', '');
    for (const { f, r } of disagreements) {
      out.push(`- \`${f.id}\` on ${r.system}: ${r.measured}`);
      for (const c of r.reproduction) out.push(`  - \`${c}\``);
    }
  }
  out.push('');
  return out;
}
