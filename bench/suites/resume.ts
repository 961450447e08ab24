/**
 * Suite 2, resume latency end to end: a run with N completed `work` steps parked on an interrupt,
 * in a SQLite file, resumed by a fresh process (children/resume-child.ts) that opens the file,
 * resumes with a value, runs the rest of the workflow and exits. REMIT vs LangGraph.js with its
 * SQLite checkpointer; same shape and state size (workloads/shapes.ts).
 *
 * Three figures per case: spawn-to-exit time (what a user waits for); that time minus the time of
 * an import-only child of the same library started right after it (the resume work itself,
 * without Node start-up and module loading; median of the paired differences); and the resume
 * time the child measures itself after its imports.
 * Each sample resumes its own copy of the parked file, made before the clock starts. Children run
 * as plain JavaScript (lib/compile-js.ts), not under the tsx loader.
 */

import { spawn } from 'node:child_process';
import path from 'node:path';
import { copyDb, freshDbPath, type SuiteContext, type SuiteOutput } from '../lib/context.js';
import { row, unavailableRow, type ResultRow } from '../lib/results.js';
import { summarize } from '../lib/stats.js';
import { langgraphPrepareParked } from '../workloads/langgraph.js';
import { PARKED_PAYLOAD_BYTES } from '../workloads/shapes.js';
import { compileChildren } from '../lib/compile-js.js';

type Impl = 'remit' | 'langgraph';

interface ChildRun {
  wallMs: number;
  /** Measured by the child: from its first line to the end of its imports, and the resume itself. */
  importMs: number | undefined;
  resumeMs: number | undefined;
}

function runChild(ctx: SuiteContext, child: string, args: string[]): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, [child, ...args], { cwd: ctx.repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => {
      const wallMs = performance.now() - t0;
      if (code !== 0) return reject(new Error(`child ${args.join(' ')} exited ${code}: ${err.trim().slice(-400)}`));
      const last = out.trim().split('\n').pop() ?? '{}';
      const parsed = JSON.parse(last) as { resume_ms?: number; import_ms?: number };
      resolve({ wallMs, resumeMs: parsed.resume_ms, importMs: parsed.import_ms });
    });
  });
}

async function prepare(impl: Impl, file: string, nodes: number): Promise<void> {
  if (impl === 'langgraph') return langgraphPrepareParked(file, nodes);
  const { remitPrepareParked } = await import('../workloads/remit.js');
  return remitPrepareParked(file, nodes);
}

export async function runResume(ctx: SuiteContext): Promise<SuiteOutput> {
  const { nodes: sizes, samples } = ctx.profile.resume;
  const rows: ResultRow[] = [];
  const notes: string[] = [
    `Workflow: \`work\` ×N (self-loop on a counter), then \`approve\` (interrupt), then \`finish\`; state = counter + a ${PARKED_PAYLOAD_BYTES}-byte string. REMIT: SqliteStore (synchronous=FULL). LangGraph: SqliteSaver, durability "sync".`,
    'Each child is `node resume-child.js`: the child and its imports (REMIT\'s shell included) are transpiled to plain JavaScript first (lib/compile-js.ts), as a deployed service would run them; under tsx each cold start would also pay the loader\'s transforms. Children run one after another, alternating libraries. Resume = load the core, open the file, build the workflow, resume with a value, run to the end, close.',
  ];
  const impls: Impl[] = ['remit', 'langgraph'];
  const available = new Map<Impl, string | null>();
  for (const impl of impls) available.set(impl, null);
  try {
    await import('../workloads/remit.js');
  } catch (e) {
    available.set('remit', `REMIT workload unavailable: ${String((e as Error)?.message ?? e).slice(0, 200)}`);
  }
  const live = impls.filter((i) => available.get(i) === null);

  // Every resume child is paired with an import-only child of the same library started right
  // after it; the pair's difference is one sample of the resume work. Pairing cancels slow drifts
  // of machine load that a separately sampled baseline would fold into the difference.
  ctx.log('resume: compiling the child and its imports to plain JavaScript');
  const child = compileChildren(ctx.repoRoot, path.join(ctx.tmpDir, 'js'));
  const importWall = new Map<Impl, number[]>(live.map((i) => [i, []]));
  const importInChild = new Map<Impl, number[]>(live.map((i) => [i, []]));
  for (const nodes of sizes) {
    const caseName = `N=${nodes}`;
    const params = { nodes, state_payload_bytes: PARKED_PAYLOAD_BYTES };
    const templates = new Map<Impl, string>();
    for (const impl of live) {
      const file = freshDbPath(ctx.tmpDir, `${impl}-parked-${nodes}.db`);
      ctx.log(`resume: preparing ${impl} parked run with N=${nodes}`);
      await prepare(impl, file, nodes);
      templates.set(impl, file);
    }
    const wall = new Map<Impl, number[]>(live.map((i) => [i, []]));
    const overImport = new Map<Impl, number[]>(live.map((i) => [i, []]));
    const inChild = new Map<Impl, number[]>(live.map((i) => [i, []]));
    ctx.log(`resume: ${caseName}, ${samples} fresh resume processes (+ ${samples} import-only) per library`);
    for (let s = 0; s < samples; s++) {
      for (const impl of live) {
        const copy = path.join(ctx.tmpDir, `${impl}-resume-copy.db`);
        copyDb(templates.get(impl)!, copy);
        const run = await runChild(ctx, child, [impl, 'resume', copy, String(nodes)]);
        const base = await runChild(ctx, child, [impl, 'import', '-', '0']);
        if (base.importMs !== undefined) importInChild.get(impl)!.push(base.importMs);
        wall.get(impl)!.push(run.wallMs);
        importWall.get(impl)!.push(base.wallMs);
        overImport.get(impl)!.push(run.wallMs - base.wallMs);
        if (run.resumeMs !== undefined) inChild.get(impl)!.push(run.resumeMs);
      }
    }
    const caseRows: ResultRow[] = [];
    for (const impl of impls) {
      const why = available.get(impl);
      if (why) {
        caseRows.push(unavailableRow('resume', caseName, params, impl, impl === 'remit' ? 'subject' : 'competitor', why));
        continue;
      }
      const over = summarize(overImport.get(impl)!);
      const inChildSummary = summarize(inChild.get(impl)!);
      caseRows.push(row({
        suite: 'resume', case: caseName, params, impl, role: impl === 'remit' ? 'subject' : 'competitor', time_ms: summarize(wall.get(impl)!),
        metrics: {
          resume_over_import_ms: over.median, resume_over_import_p25_ms: over.p25, resume_over_import_p75_ms: over.p75,
          in_child_resume_ms: inChildSummary.median, in_child_resume_p25_ms: inChildSummary.p25, in_child_resume_p75_ms: inChildSummary.p75,
        },
      }));
    }
    const remit = caseRows.find((r) => r.impl === 'remit' && r.status === 'measured');
    const lg = caseRows.find((r) => r.impl === 'langgraph' && r.status === 'measured');
    if (remit && lg) {
      remit.ratios.spawn_to_exit_vs_langgraph = lg.time_ms!.median / remit.time_ms!.median;
      remit.ratios.resume_over_import_vs_langgraph = lg.metrics.resume_over_import_ms! / remit.metrics.resume_over_import_ms!;
      remit.ratios.in_child_vs_langgraph = lg.metrics.in_child_resume_ms! / remit.metrics.in_child_resume_ms!;
    }
    rows.push(...caseRows);
  }
  for (const impl of live) {
    rows.push(row({
      suite: 'resume', case: 'import only', params: { nodes: 0 }, impl: `${impl}:import-only`, role: impl === 'remit' ? 'subject' : 'competitor',
      time_ms: summarize(importWall.get(impl)!), note: 'node start + library import, no resume (all sizes pooled)',
      metrics: { in_child_import_ms: summarize(importInChild.get(impl)!).median },
    }));
  }
  return { rows, notes, charts: [resumeChart(rows, ctx)] };
}

function resumeChart(rows: ResultRow[], ctx: SuiteContext) {
  const pick = (impl: string, value: (r: ResultRow) => number | undefined) =>
    rows.filter((r) => r.impl === impl && r.status === 'measured' && (r.params.nodes as number) > 0)
      .map((r) => ({ x: r.params.nodes as number, y: value(r) ?? NaN }));
  const wall = (r: ResultRow) => r.time_ms?.median;
  const inChild = (r: ResultRow) => r.metrics.in_child_resume_ms;
  return {
    file: 'resume-latency',
    spec: {
      title: 'Resume latency vs completed nodes N',
      subtitle: `fresh process, SQLite file; medians, ${ctx.profile.name} profile; lower is better`,
      xLabel: 'completed nodes before the interrupt (N)',
      yLabel: 'milliseconds',
      xLog: true,
      yLog: true,
      series: [
        { name: 'REMIT spawn→exit', points: pick('remit', wall) },
        { name: 'LangGraph spawn→exit', points: pick('langgraph', wall) },
        { name: 'REMIT resume in child', points: pick('remit', inChild), dashed: true },
        { name: 'LangGraph resume in child', points: pick('langgraph', inChild), dashed: true },
      ],
    },
  };
}
