/**
 * Where a fresh process's resume spends its time, cold and warm: the evidence behind "what limits
 * resume at N = 10,000" in bench/README.md.
 *
 *   npx tsx bench/resume-phases.ts [--nodes 10000] [--sync FULL|NORMAL] [--processes 7] [--resumes 3]
 *
 * Each of `processes` fresh children per library (children/resume-child.ts, mode "phases", run as
 * plain JavaScript as in the resume suite) resumes `resumes` copies of the same parked run one after
 * another. The first resume of a process is the one the resume suite times (cold: every function
 * runs for the first time, the Wasm core compiles lazily); the later ones run the same work on code
 * the process has already run (warm; REMIT's core is loaded once per process, so its "core" phase
 * is then zero). Medians over the processes, REMIT by phase (workloads/remit.ts, RESUME_PHASES).
 * Scratch files go to a folder of its own under bench/results/tmp/ (git-ignored), removed at the end.
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileChildren, runJsonChild } from './lib/compile-js.js';
import { choiceOption, readScriptArgs, wholeOption } from './lib/script-args.js';
import { copyDb } from './lib/context.js';
import { summarize } from './lib/stats.js';
import { langgraphPrepareParked } from './workloads/langgraph.js';
import { RESUME_PHASES, remitPrepareParked } from './workloads/remit.js';

const usage = `usage: npx tsx bench/resume-phases.ts [options]
  --nodes N       steps of the parked run, at least 1 (10000)
  --sync S        FULL|NORMAL: PRAGMA synchronous of both libraries (FULL)
  --processes N   fresh processes per library, at least 1 (7)
  --resumes N     resumes per process, the first cold, at least 2 (3)
  --help          this text`;
const values = readScriptArgs('resume-phases', usage, { nodes: '10000', sync: 'FULL', processes: '7', resumes: '3' });
const nodes = wholeOption('resume-phases', 'nodes', values.nodes, 1);
const sync = choiceOption('resume-phases', 'sync', values.sync, ['FULL', 'NORMAL'] as const);
const processes = wholeOption('resume-phases', 'processes', values.processes, 1);
const resumes = wholeOption('resume-phases', 'resumes', values.resumes, 2);

type Impl = 'remit' | 'langgraph';
interface ChildReport { resumes: { resume_ms: number; phases?: Record<string, number> }[] }

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
mkdirSync(join(repoRoot, 'bench', 'results', 'tmp'), { recursive: true });
const dir = mkdtempSync(join(repoRoot, 'bench', 'results', 'tmp', 'resume-phases-'));
try {
  const child = compileChildren(repoRoot, join(dir, 'js'));
  const templates: Record<Impl, string> = { remit: join(dir, 'remit-parked.db'), langgraph: join(dir, 'langgraph-parked.db') };
  process.stdout.write(`preparing parked runs of N = ${nodes} (not timed)\n`);
  await remitPrepareParked(templates.remit, nodes);
  await langgraphPrepareParked(templates.langgraph, nodes);

  // samples[impl][cold|warm][figure] = one value per process (warm: the median of its later resumes).
  const samples: Record<Impl, Record<'cold' | 'warm', Map<string, number[]>>> = {
    remit: { cold: new Map(), warm: new Map() }, langgraph: { cold: new Map(), warm: new Map() },
  };
  const add = (m: Map<string, number[]>, key: string, v: number) => m.set(key, [...(m.get(key) ?? []), v]);
  for (let p = 0; p < processes; p++) {
    // The libraries alternate, the first of each pair switching from process to process.
    for (const impl of (p % 2 === 0 ? ['remit', 'langgraph'] : ['langgraph', 'remit']) as Impl[]) {
      const copies = join(dir, `${impl}-copy.db`);
      for (let i = 0; i < resumes; i++) copyDb(templates[impl], `${copies}.${i}`);
      const { report } = await runJsonChild(repoRoot, child, [impl, 'phases', copies, String(nodes), sync, String(resumes)]);
      const runs = (report as ChildReport).resumes;
      const figures = (r: ChildReport['resumes'][number]) => ({ total: r.resume_ms, ...(r.phases ?? {}) });
      for (const [key, v] of Object.entries(figures(runs[0]!))) add(samples[impl].cold, key, v);
      const later = runs.slice(1).map(figures);
      for (const key of Object.keys(later[0]!)) add(samples[impl].warm, key, summarize(later.map((f) => (f as Record<string, number>)[key]!)).median);
    }
  }

  const med = (impl: Impl, when: 'cold' | 'warm', key: string) => summarize(samples[impl][when].get(key) ?? [NaN]).median;
  const ms = (v: number) => v.toFixed(2).padStart(7);
  process.stdout.write(`\nN = ${nodes}, synchronous=${sync}, ${processes} processes per library, ${resumes} resumes each; medians in ms\n\n`);
  process.stdout.write('| | first resume of a process (cold) | later resumes (warm) |\n|---|---|---|\n');
  for (const phase of RESUME_PHASES) {
    process.stdout.write(`| REMIT ${phase} | ${ms(med('remit', 'cold', `${phase}_ms`))} | ${ms(med('remit', 'warm', `${phase}_ms`))} |\n`);
  }
  for (const impl of ['remit', 'langgraph'] as Impl[]) {
    process.stdout.write(`| ${impl === 'remit' ? 'REMIT' : 'LangGraph.js'} total | ${ms(med(impl, 'cold', 'total'))} | ${ms(med(impl, 'warm', 'total'))} |\n`);
  }
  const ratio = (when: 'cold' | 'warm') => (med('langgraph', when, 'total') / med('remit', when, 'total')).toFixed(2);
  process.stdout.write(`\nLangGraph.js / REMIT: ${ratio('cold')}× cold (the resume suite's figure), ${ratio('warm')}× warm; `
    + `3× cold would be REMIT at ${(med('langgraph', 'cold', 'total') / 3).toFixed(1)} ms\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
