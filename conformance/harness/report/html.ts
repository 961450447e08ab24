/**
 * A self-contained HTML page: the profile table and, per system, both matrices coloured by
 * verdict. Every violated cell links to its reproduction on the same page (evidence, scenario
 * JSON, the command that reruns that one cell). No scripts, no external files.
 */
import { CONCURRENCY_COLUMNS, CONCURRENCY_KS, CONCURRENCY_MODES, FAULT_KINDS, FAULT_POINTS, concurrencyCellId, faultCellId } from '../cells.js';
import type { CellResult, SystemProfile } from '../profile.js';
import { cellSlug } from '../runner.js';
import { generatedHtml } from './generated.js';
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

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function anchor(system: string, cellId: string): string {
  return `repro-${system}-${cellSlug(cellId)}`;
}

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#1d1d1f;max-width:1400px}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.6em 0}
th,td{border:1px solid #bbb;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f2f2f2}
td.holds{background:#c9f0cf}td.violated{background:#f7c1c1}td.not-applicable{background:#e8e8e8;color:#777}
td.violated a{color:#8a0000;font-weight:600}
td.agree{background:#c9f0cf}td.disagree{background:#f7d9a8}td.unmeasured{background:#e8e8e8;color:#555}
code,pre{font:12px/1.35 ui-monospace,monospace}
pre{background:#f6f6f6;padding:.6em;overflow:auto;max-height:24em}
.small{color:#555;font-size:12px}
.repro{border-left:4px solid #d33;padding-left:1em;margin:1em 0}
`;

function verdictCell(system: string, cell: CellResult | undefined): string {
  if (cell === undefined) return '<td class="not-applicable">·</td>';
  const verdict = cellVerdict(cell);
  const sat = saturationText(cell);
  const satHtml = sat === '' ? '' : ` <span class="small">${sat}</span>`;
  if (verdict === 'holds') return `<td class="holds" title="every property holds">✓${satHtml}</td>`;
  if (verdict === 'not-applicable') return `<td class="not-applicable" title="${esc(cell.reason ?? 'not applicable')}">n/a</td>`;
  const tags = violatedProperties(cell).map((p) => PROPERTY_TAGS[p]).join(' ');
  return `<td class="violated"><a href="#${anchor(system, cell.cellId)}">✗ ${tags}</a>${satHtml}</td>`;
}

function faultMatrix(s: SystemProfile): string {
  const head = `<tr><th>point</th>${FAULT_KINDS.map((k) => `<th>${k}</th>`).join('')}</tr>`;
  const rows = FAULT_POINTS.map((p) => {
    const cells = FAULT_KINDS.map((k) => {
      const id = faultCellId(p.name, k);
      const exists = s.cells.find((c) => c.cellId === id);
      return exists === undefined ? '<td class="not-applicable">—</td>' : verdictCell(s.system, exists);
    });
    return `<tr><th title="${esc(p.description)}"><code>${esc(p.name)}</code></th>${cells.join('')}</tr>`;
  });
  return `<table>${head}${rows.join('')}</table>`;
}

function concurrencyMatrix(s: SystemProfile): string {
  const columns = CONCURRENCY_MODES.flatMap((m) => CONCURRENCY_COLUMNS.map((v) => [m, v] as const));
  const head = `<tr><th>k</th>${columns.map(([m, v]) => `<th>${m}<br>${v === 'recover' ? 'recoverers' : `${v} values`}</th>`).join('')}</tr>`;
  const rows = CONCURRENCY_KS.map(
    (k) => `<tr><th>${k}</th>${columns.map(([m, v]) => verdictCell(s.system, s.cells.find((c) => c.cellId === concurrencyCellId(k, m, v)))).join('')}</tr>`,
  );
  return `<table>${head}${rows.join('')}</table><p>${esc(RECOVER_LABEL)}</p>`;
}

function reproduction(report: Report, s: SystemProfile, cell: CellResult): string {
  const items = violatedProperties(cell).map((p) => {
    const v = cell.verdicts[p];
    const evidence = v.status === 'violated' ? v.evidence : [];
    return `<li><b>${PROPERTY_LABELS[p]}</b><ul>${evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul></li>`;
  });
  return `<div class="repro" id="${anchor(s.system, cell.cellId)}">
<h4><code>${esc(cell.cellId)}</code> on ${esc(s.label)}</h4>
<ul>${items.join('')}</ul>
<p>Rerun this cell: <code>${esc(rerunCommand(s.system, cell.cellId, report.seed))}</code></p>
<details><summary>Scenario (seed ${cell.scenario.seed})</summary><pre>${esc(JSON.stringify(cell.scenario, null, 2))}</pre></details>
</div>`;
}

function smallest(s: SystemProfile, report: Report, reportsDir: string): string {
  const rows = report.properties
    .filter((p) => s.properties[p].smallest !== null)
    .map((p) => {
      const r = s.properties[p].smallest!;
      const fault = r.scenario.fault === null ? 'no fault' : `fault ${r.scenario.fault.point}/${r.scenario.fault.kind}`;
      return `<li><b>${PROPERTY_LABELS[p]}</b>: from <a href="#${anchor(s.system, r.cellId)}"><code>${esc(r.cellId)}</code></a>: ${esc(fault)}, steps ${esc(r.scenario.steps.join(' → '))}${r.scenario.concurrency ? `, k=${r.scenario.concurrency.k}` : ''}
<span class="small">(shrunk in ${r.shrinkRuns} re-runs${r.removed.length ? `; removed ${esc(r.removed.join(', '))}` : ''})</span>
<ul>${r.evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul>
<code>${esc(replayCommand(s.system, reportFile(reportsDir, smallestPath(s.system, p))))}</code>
<details><summary>Smallest scenario</summary><pre>${esc(JSON.stringify(r.scenario, null, 2))}</pre></details></li>`;
    });
  return rows.length === 0 ? '' : `<h3>Smallest reproductions</h3><ul>${rows.join('')}</ul>`;
}

/** `reportsDir`: the folder the reports are written to (--out, as given), for the replay commands. */
export function renderHtml(report: Report, reportsDir = 'reports'): string {
  const profileHead = `<tr><th>Property</th>${report.systems.map((s) => `<th>${esc(s.label)}</th>`).join('')}</tr>`;
  const profileRows = report.properties.map((p) => {
    const cells = report.systems.map((s) => {
      const status = s.properties[p].status;
      return `<td class="${status}">${esc(summaryText(s, p))}</td>`;
    });
    return `<tr><th>${PROPERTY_LABELS[p]}</th>${cells.join('')}</tr>`;
  });
  const systems = report.systems.map((s) => {
    const violated = s.cells.filter((c) => cellVerdict(c) === 'violated');
    return `<h2 id="system-${esc(s.system)}">${esc(s.label)} <span class="small">(${esc(s.system)})</span></h2>
<p class="small">Versions: ${esc(Object.entries(s.versions).map(([k, v]) => `${k} ${v}`).join(', '))}</p>
<h3>Fault matrix</h3>${faultMatrix(s)}
<h3>Concurrency matrix</h3><p class="small">k/k after a mark: the gated effect's fire count over k (saturation).</p>${concurrencyMatrix(s)}
${smallest(s, report, reportsDir)}
${violated.length === 0 ? '<p>No violated cell.</p>' : `<h3>Reproductions (${violated.length} violated cells)</h3>${violated.map((c) => reproduction(report, s, c)).join('\n')}`}`;
  });
  const legend = Object.entries(PROPERTY_TAGS).map(([p, t]) => `${t} = ${p}`).join(', ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Resume-contract conformance report</title><style>${STYLE}</style></head>
<body>
<h1>Resume-contract conformance report</h1>
<p>Seed ${report.seed}, mode ${esc(report.mode)}. ${report.catalogue.faultCells} fault cells, ${report.catalogue.concurrencyCells} concurrency cells per system. Same seed, same report.</p>
<h2>Profiles</h2>
<table>${profileHead}${profileRows.join('')}</table>
${report.notRun.length === 0 ? '' : `<p><b>Not run</b> (${report.notRun.length}):</p><ul>${report.notRun.map((u) => `<li><code>${esc(u.system)}</code>: ${esc(u.reason)}</li>`).join('')}</ul>`}
<p class="small">Cells: ✓ every property holds; ✗ with the violated properties (${esc(legend)}), linked to the reproduction; n/a not applicable (hover for the reason).</p>
${studySection(report)}
${systems.join('\n')}
${report.generated === undefined ? '' : generatedHtml(report.generated, reportsDir)}
</body></html>
`;
}

function agreementClass(status: string): string {
  return status === 'agree' ? 'agree' : status === 'disagree' ? 'disagree' : 'unmeasured';
}

/** Our verdicts next to the study's published findings. */
function studySection(report: Report): string {
  const study = report.study;
  const head = `<tr><th>Property</th>${report.systems.map((s) => `<th>${esc(s.system)}</th>`).join('')}</tr>`;
  const rows = report.properties.map((p) => {
    const cells = report.systems.map((s) => {
      const mark = studyMark(report, s.system, p);
      return `<td class="${agreementClass(mark)}">${esc(summaryText(s, p))}<br><span class="small">${esc(mark)}</span></td>`;
    });
    return `<tr><th>${PROPERTY_LABELS[p]}</th>${cells.join('')}</tr>`;
  });
  const findingRows = study.findings.flatMap((f) =>
    (f.results.length === 0 ? [{ system: 'none of its systems ran', status: 'not measured here', measured: '', reproduction: [] as string[] }] : f.results).map(
      (r) => `<tr><td>${esc(f.claim)}<br><code class="small">${esc(f.id)}</code></td><td>${esc(r.system)}</td><td class="${agreementClass(r.status)}"><b>${esc(r.status)}</b></td><td>${esc(r.measured)}${r.reproduction.map((c) => `<br><code>${esc(c)}</code>`).join('')}</td></tr>`,
    ),
  );
  return `<h2 id="study">Compared with the study</h2>
<p>${esc(study.citation)}. Each verdict against the study's published finding for that framework: agree, disagree, not measured here (the finding concerns cells this system cannot run), or not measured by the study. Every disagreement carries the command that reproduces our side.</p>
<table>${head}${rows.join('')}</table>
<table><tr><th>Finding of the study</th><th>System</th><th>Here</th><th>What this run measured</th></tr>${findingRows.join('')}</table>`;
}
