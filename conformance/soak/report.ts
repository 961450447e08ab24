/** The soak report: terminal, JSON, Markdown and HTML (with a timeline of faults and throughput). */
import fs from 'node:fs';
import path from 'node:path';
import type { CheckResult } from './checker.js';
import type { Figures } from './figures.js';

export interface StoreReport {
  store: string;
  status: 'run' | 'NOT RUN';
  reason?: string;
  command?: string;
  workers?: number;
  hosts?: string[];
  seed?: number;
  canary?: string | null;
  figures?: Figures;
  check?: Omit<CheckResult, 'violations'> & { violations: CheckResult['violations'] };
  /** Operations completed per second in 1-second buckets, and fault marks (for the timeline). */
  timeline?: { ops_per_s: number[]; faults: Array<{ t_s: number; fault: string; action: string; target: string }>; phases: Array<{ name: string; start_s: number }> };
}

export interface SoakReport {
  format: 'remit-soak-report/1';
  profile: string;
  stores: StoreReport[];
}

const cell = (x: number | null | undefined) => (x === null || x === undefined ? '–' : String(x));

export function headline(s: StoreReport): string {
  if (s.status !== 'run' || s.check === undefined) return `${s.store}: NOT RUN (${s.reason ?? ''})`;
  const c = s.check.counts;
  const over = c['invocations-over-attempts'] + c['invocations-over-bound'];
  const lost = c['lost-acknowledged-write'] + c['record-lost-or-rewritten'];
  return `${s.store}: ${s.check.stats.operations} operations, ${s.check.stats.runs_planned} runs; ${lost} lost acknowledged writes, ${c['duplicate-application']} duplicate applications, ${over} effect keys invoked over the bound, ${c['double-served-interrupt']} double-served interrupts, ${c['stuck-run']} stuck runs, ${c['wrong-end-state'] + c['fork-wrong'] + c['fork-source-changed']} wrong end states; checker ${s.check.ok ? 'PASS' : `FAIL (${s.check.violations.length} violations)`}`;
}

function phaseTable(s: StoreReport): string[] {
  const rows = ['| phase | fault | s | ops done | ops/s | runs ended/s | ambiguous | start p50/p99 ms | resume p50/p99 ms |', '|---|---|---|---|---|---|---|---|---|'];
  for (const p of s.figures?.phases ?? []) {
    rows.push(`| ${p.phase} | ${p.fault} | ${p.duration_s} | ${p.operations_completed} | ${p.ops_per_s} | ${p.runs_per_s} | ${p.ambiguous} | ${cell(p.start_ms_p50)} / ${cell(p.start_ms_p99)} | ${cell(p.resume_ms_p50)} / ${cell(p.resume_ms_p99)} |`);
  }
  return rows;
}

export function renderMarkdown(r: SoakReport): string {
  const out = [`# Soak report (${r.profile})`, ''];
  for (const s of r.stores) {
    out.push(`## ${s.store}`, '', headline(s), '');
    if (s.status !== 'run' || s.check === undefined || s.figures === undefined) continue;
    out.push(`Command: \`${s.command}\`; ${s.workers} workers${s.hosts?.length ? ` on hosts ${s.hosts.join(', ')}` : ' (local processes)'}; seed ${s.seed}${s.canary ? `; canary ${s.canary}` : ''}; wall ${s.figures.wall_s} s, drain ${s.figures.drain_s} s, worker restarts ${s.figures.worker_restarts}.`, '');
    out.push(...phaseTable(s), '');
    out.push(`Faults injected: ${Object.entries(s.figures.faults_injected).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}.`, '');
    const st = s.check.stats;
    out.push(`Runs: ${st.runs_completed} completed, ${st.runs_failed} failed, ${st.runs_parked} parked (as planned). Operations: ${st.ok} ok, ${st.fail} refused, ${st.info} ambiguous. Effects: ${st.effect_invocations} raw invocations, ${st.effects_applied_distinct} distinct keys applied, ${st.effect_reinvocations} re-invocations (within the bound). Resumes: ${st.interrupts_served} served, ${st.resumes_refused} refused, ${st.concurrent_resume_groups} concurrent groups (2 or 3 workers on one park). Forks: ${st.forks}.`, '');
    out.push('| checker count | value |', '|---|---|', ...Object.entries(s.check.counts).map(([k, n]) => `| ${k} | ${n} |`), '');
    if (s.check.violations.length > 0) out.push('First violations:', '', ...s.check.violations.slice(0, 10).map((x) => `- ${x.kind} (${x.run}): ${x.detail}`), '');
  }
  return out.join('\n');
}

export function renderTerminal(r: SoakReport): string {
  const out: string[] = [];
  for (const s of r.stores) {
    out.push(headline(s));
    for (const p of s.figures?.phases ?? []) {
      out.push(`  ${p.phase.padEnd(14)} ${p.fault.padEnd(13)} ${String(p.ops_per_s).padStart(7)} ops/s ${String(p.runs_per_s).padStart(6)} runs/s  start p99 ${cell(p.start_ms_p99)} ms  resume p99 ${cell(p.resume_ms_p99)} ms  ambiguous ${p.ambiguous}`);
    }
    if (s.figures) out.push(`  faults: ${Object.entries(s.figures.faults_injected).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`);
    for (const x of s.check?.violations.slice(0, 5) ?? []) out.push(`  VIOLATION ${x.kind} (${x.run}): ${x.detail}`);
  }
  return out.join('\n');
}

const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function timelineSvg(s: StoreReport): string {
  const tl = s.timeline;
  if (tl === undefined || tl.ops_per_s.length === 0) return '';
  const w = 900, h = 160, n = tl.ops_per_s.length;
  const max = Math.max(1, ...tl.ops_per_s);
  const x = (t: number) => (t / n) * w;
  const points = tl.ops_per_s.map((v, i) => `${x(i + 0.5).toFixed(1)},${(h - 20 - (v / max) * (h - 40)).toFixed(1)}`).join(' ');
  const colours: Record<string, string> = { 'worker-kill': '#c00', 'server-kill': '#806', 'link-throttle': '#c80', 'link-loss': '#08c', partition: '#080' };
  const marks = tl.faults.map((f) => `<line x1="${x(f.t_s).toFixed(1)}" x2="${x(f.t_s).toFixed(1)}" y1="${h - 18}" y2="${f.action === 'inject' ? 8 : h / 2}" stroke="${colours[f.fault] ?? '#444'}" stroke-dasharray="${f.action === 'heal' ? '3,3' : ''}"><title>${esc(`${f.action} ${f.fault} ${f.target} at ${f.t_s} s`)}</title></line>`).join('');
  const phases = tl.phases.map((p) => `<text x="${x(p.start_s).toFixed(1)}" y="${h - 4}" font-size="10">${esc(p.name)}</text><line x1="${x(p.start_s).toFixed(1)}" x2="${x(p.start_s).toFixed(1)}" y1="0" y2="${h}" stroke="#bbb"/>`).join('');
  return `<svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" style="border:1px solid #ccc">${phases}${marks}<polyline fill="none" stroke="#000" points="${points}"/><text x="4" y="12" font-size="10">max ${max} ops/s</text></svg>
<p style="font-size:12px">Black: operations completed per second. Solid lines: faults injected (red worker SIGKILL, purple server SIGKILL, orange throttle, blue loss, green partition); dashed: healed.</p>`;
}

export function renderHtml(r: SoakReport): string {
  const md = renderMarkdown(r);
  const body = r.stores.map((s) => `<h2>${esc(s.store)}</h2><p>${esc(headline(s))}</p>${timelineSvg(s)}`).join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>REMIT soak report</title></head><body style="font-family:sans-serif;max-width:960px">
<h1>Soak report (${esc(r.profile)})</h1>${body}<h2>Details</h2><pre style="white-space:pre-wrap">${esc(md)}</pre></body></html>\n`;
}

export function writeSoakReports(outDir: string, r: SoakReport): { json: string; markdown: string; html: string } {
  fs.mkdirSync(outDir, { recursive: true });
  const json = path.join(outDir, 'soak.json');
  const markdown = path.join(outDir, 'soak.md');
  const html = path.join(outDir, 'soak.html');
  fs.writeFileSync(json, `${JSON.stringify(r, null, 2)}\n`);
  fs.writeFileSync(markdown, `${renderMarkdown(r)}\n`);
  fs.writeFileSync(html, renderHtml(r));
  return { json, markdown, html };
}
