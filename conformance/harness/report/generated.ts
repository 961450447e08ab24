/**
 * The generated-workflow section of the report (harness/generated/campaign.ts), in Markdown, HTML
 * and for the terminal: per system, workflows tried, cells, faults armed and fired, how the runs
 * end per the harness's model, each property's counts, and the violations with their shrunk
 * reproductions (workflow and scenario as data, replayable).
 */
import { PROPERTIES, type PropertyId } from '../checkers/verdict.js';
import type { GeneratedSection, GeneratedSystemSection } from '../generated/campaign.js';
import { PROPERTY_LABELS, PROPERTY_TAGS, reportFile } from './model.js';

export function generatedReproPath(system: string, property: PropertyId): string {
  return `repro/generated/${system}/smallest-${property}.json`;
}

export function generatedReplayCommand(system: string, file: string): string {
  return `npm start -- --system ${system} --generated-scenario ${file}`;
}

export function generatedSummary(s: GeneratedSystemSection, p: PropertyId): string {
  const c = s.properties[p];
  const applicable = c.holds + c.violated;
  if (applicable === 0) return 'n/a';
  return c.violated > 0 ? `VIOLATED ${c.violated}/${applicable}` : `holds ${c.holds}/${applicable}`;
}

function counts(record: Record<string, number>): string {
  return Object.entries(record)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

function faultLine(s: GeneratedSystemSection): string {
  const armed = Object.values(s.faults.armed).reduce((a, b) => a + b, 0);
  const notFired = s.faults.notFired.length === 0 ? '' : `; not reached: ${s.faults.notFired.slice(0, 10).join(', ')}${s.faults.notFired.length > 10 ? ', ...' : ''}`;
  return `${armed} faults armed (${counts(s.faults.armed)}), ${s.faults.fired} fired${notFired}`;
}

export function generatedMarkdown(section: GeneratedSection, reportsDir = 'reports'): string[] {
  const out: string[] = [];
  out.push('## Generated workflows', '');
  out.push(
    `Seed ${section.seed}. Each cell is one generated workflow (pure, effect and interrupt nodes, routes, loops bounded by counters, several interrupts; zod schemas with optional fields, unions, refinements, transforms, defaults, dates, records, nested arrays), run once under one fault at a point it reaches (a workflow whose input is refused reaches none and runs without), and judged against the harness's own interpreter of the workflow.`,
    '',
  );
  out.push(`| Property | ${section.systems.map((s) => `${s.label} (${s.cells} cells)`).join(' | ')} |`);
  out.push(`|---|${section.systems.map(() => '---').join('|')}|`);
  for (const p of PROPERTIES) out.push(`| ${PROPERTY_LABELS[p]} | ${section.systems.map((s) => generatedSummary(s, p)).join(' | ')} |`);
  out.push('');
  for (const s of section.systems) {
    out.push(`### ${s.label} (\`${s.system}\`)`, '');
    out.push(`- ${s.workflows} workflows, one cell each, ${s.faultedCells} of them under a fault; nodes: ${counts(s.nodes)}; ${s.loops} loops.`);
    out.push(`- ${faultLine(s)}.`);
    out.push(`- How the runs end (the model): ${counts(s.ends)}.`);
    out.push(`- Poisons: ${counts(s.poisons)}.`);
    if (s.violations.length > 0) {
      out.push(`- ${s.violations.length} violated cells: ${s.violations.slice(0, 20).map((v) => `${v.id} (${v.properties.map((p) => PROPERTY_TAGS[p]).join(' ')})`).join(', ')}${s.violations.length > 20 ? ', ...' : ''}.`);
    }
    for (const r of s.reproductions) {
      out.push(`- **${PROPERTY_LABELS[r.property]}**, shrunk from ${r.from} in ${r.shrinkRuns} re-runs${r.removed.length > 0 ? ` (removed ${r.removed.join(', ')})` : ''}:`);
      for (const e of r.evidence.slice(0, 4)) out.push(`  - ${e}`);
      out.push(`  - replay: \`${generatedReplayCommand(s.system, reportFile(reportsDir, generatedReproPath(s.system, r.property)))}\``);
    }
    out.push('');
  }
  return out;
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function generatedHtml(section: GeneratedSection, reportsDir = 'reports'): string {
  const head = `<tr><th>Property</th>${section.systems.map((s) => `<th>${esc(s.label)}<br><span class="small">${s.cells} cells</span></th>`).join('')}</tr>`;
  const rows = PROPERTIES.map((p) => {
    const cells = section.systems.map((s) => {
      const text = generatedSummary(s, p);
      const cls = text.startsWith('VIOLATED') ? 'violated' : text.startsWith('holds') ? 'holds' : 'not-applicable';
      return `<td class="${cls}">${esc(text)}</td>`;
    });
    return `<tr><th>${PROPERTY_LABELS[p]}</th>${cells.join('')}</tr>`;
  });
  const systems = section.systems.map((s) => {
    const repros = s.reproductions.map(
      (r) => `<div class="repro"><b>${PROPERTY_LABELS[r.property]}</b>, shrunk from ${esc(r.from)} in ${r.shrinkRuns} re-runs${r.removed.length > 0 ? ` (removed ${esc(r.removed.join(', '))})` : ''}
<ul>${r.evidence.slice(0, 6).map((e) => `<li>${esc(e)}</li>`).join('')}</ul>
<code>${esc(generatedReplayCommand(s.system, reportFile(reportsDir, generatedReproPath(s.system, r.property))))}</code>
<details><summary>Workflow and scenario</summary><pre>${esc(JSON.stringify(r.scenario, null, 2))}</pre></details></div>`,
    );
    return `<h3>${esc(s.label)} <span class="small">(${esc(s.system)})</span></h3>
<p>${s.workflows} workflows, one cell each, ${s.faultedCells} of them under a fault; nodes: ${esc(counts(s.nodes))}; ${s.loops} loops. ${esc(faultLine(s))}.<br>
How the runs end (the model): ${esc(counts(s.ends))}.<br>Poisons: ${esc(counts(s.poisons))}.</p>
${s.violations.length === 0 ? '<p>No violated cell.</p>' : `<p>${s.violations.length} violated cells: ${esc(s.violations.slice(0, 30).map((v) => v.id).join(', '))}</p>`}
${repros.join('\n')}`;
  });
  return `<h2 id="generated">Generated workflows</h2>
<p>Seed ${section.seed}. One generated workflow per cell, one fault each, judged against the harness's own interpreter.</p>
<table>${head}${rows.join('')}</table>
${systems.join('\n')}`;
}

export function generatedTerminal(section: GeneratedSection, reportsDir = 'reports'): string[] {
  const out = ['', `Generated workflows (seed ${section.seed}):`];
  for (const s of section.systems) {
    const props = PROPERTIES.map((p) => `${PROPERTY_TAGS[p]} ${generatedSummary(s, p)}`).join(', ');
    out.push(`  ${s.system}: ${s.workflows} workflows (one cell each, ${s.faultedCells} under a fault), ${faultLine(s)}`);
    out.push(`    ${props}`);
    if (s.violations.length > 0) out.push(`    ${s.violations.length} violated cells; ${s.reproductions.length} shrunk reproduction(s) in ${reportFile(reportsDir, `repro/generated/${s.system}`)}/`);
  }
  return out;
}
