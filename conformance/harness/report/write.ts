/** Writes every report format and the reproduction files into one directory. */
import fs from 'node:fs';
import path from 'node:path';
import { PROPERTIES } from '../checkers/index.js';
import { renderHtml } from './html.js';
import { renderMarkdown } from './markdown.js';
import { generatedReproPath } from './generated.js';
import { cellVerdict, reproPath, smallestPath, type Report, type ReportTiming } from './model.js';

export interface WrittenReports {
  json: string;
  markdown: string;
  html: string;
  timing: string;
  reproductions: number;
}

export function reportJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** `reportsDir`: how the commands in the reports name `outDir` (--out as given; default `outDir`). */
export function writeReports(outDir: string, report: Report, timing: ReportTiming, reportsDir: string = outDir): WrittenReports {
  fs.mkdirSync(outDir, { recursive: true });
  const json = path.join(outDir, 'conformance.json');
  const markdown = path.join(outDir, 'conformance.md');
  const html = path.join(outDir, 'conformance.html');
  const timingFile = path.join(outDir, 'timing.json');
  fs.writeFileSync(json, reportJson(report));
  fs.writeFileSync(markdown, `${renderMarkdown(report, reportsDir)}\n`);
  fs.writeFileSync(html, renderHtml(report, reportsDir));
  fs.writeFileSync(timingFile, `${JSON.stringify(timing, null, 2)}\n`);
  let reproductions = 0;
  for (const s of report.systems) {
    fs.rmSync(path.join(outDir, 'repro', s.system), { recursive: true, force: true });
    for (const cell of s.cells.filter((c) => cellVerdict(c) === 'violated')) {
      const file = path.join(outDir, reproPath(s.system, cell.cellId));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${JSON.stringify(cell.scenario, null, 2)}\n`);
      reproductions++;
    }
    for (const p of PROPERTIES) {
      const smallest = s.properties[p].smallest;
      if (smallest === null) continue;
      const file = path.join(outDir, smallestPath(s.system, p));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${JSON.stringify(smallest.scenario, null, 2)}\n`);
    }
  }
  fs.rmSync(path.join(outDir, 'repro', 'generated'), { recursive: true, force: true });
  for (const s of report.generated?.systems ?? []) {
    for (const r of s.reproductions) {
      const file = path.join(outDir, generatedReproPath(s.system, r.property));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${JSON.stringify(r.scenario, null, 2)}\n`);
      reproductions++;
    }
  }
  return { json, markdown, html, timing: timingFile, reproductions };
}
