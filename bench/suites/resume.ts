/**
 * Suite 2, resume latency end to end: a run with N completed `work` steps parked on an interrupt,
 * in a SQLite file, resumed by a fresh process (children/resume-child.ts) that opens the file,
 * resumes with a value, runs the rest of the workflow and exits. REMIT vs LangGraph.js with its
 * SQLite checkpointer; same shape and state size (workloads/shapes.ts); at equal durability:
 * every case runs both at synchronous=FULL and both at NORMAL, each read back from the resuming
 * connection. Sizes run in order under a time budget (lib/profile.ts).
 *
 * Three figures per case: spawn-to-exit time (what a user waits for); that time minus the time of
 * an import-only child of the same library started right after it (the resume work itself,
 * without Node start-up and module loading; median of the paired differences); and the resume
 * time the child measures itself after its imports.
 * Each sample resumes its own copy of the parked file, made before the clock starts. Children run
 * as plain JavaScript (lib/compile-js.ts), not under the tsx loader.
 */

import path from 'node:path';
import { copyDb, freshDbPath, removeDb, type SuiteContext, type SuiteOutput } from '../lib/context.js';
import { NOT_RUN_BUDGET, row, unavailableRow, type ResultRow } from '../lib/results.js';
import { summarize } from '../lib/stats.js';
import { langgraphPrepareParked } from '../workloads/langgraph.js';
import { PARKED_PAYLOAD_BYTES } from '../workloads/shapes.js';
import { compileChildren, runJsonChild } from '../lib/compile-js.js';

type Impl = 'remit' | 'langgraph';

interface ChildRun {
  wallMs: number;
  /** Measured by the child: from its first line to the end of its imports, and the resume itself. */
  importMs: number | undefined;
  resumeMs: number | undefined;
  /** `PRAGMA synchronous` read back on the resuming connection; LangGraph: also what its setup left. */
  synchronousReadBack?: string;
  synchronousDefault?: string;
  journalMode?: string;
  /** REMIT: store appends (durable commits) the resume made. */
  commits?: number;
}

async function runChild(ctx: SuiteContext, child: string, args: string[]): Promise<ChildRun> {
  const { report, wallMs } = await runJsonChild(ctx.repoRoot, child, args);
  const parsed = report as {
    resume_ms?: number; import_ms?: number; synchronous_read_back?: string; synchronous_default?: string; journal_mode?: string; commits?: number;
  };
  return {
    wallMs, resumeMs: parsed.resume_ms, importMs: parsed.import_ms, synchronousReadBack: parsed.synchronous_read_back,
    synchronousDefault: parsed.synchronous_default, journalMode: parsed.journal_mode, commits: parsed.commits,
  };
}

async function prepare(impl: Impl, file: string, nodes: number): Promise<void> {
  if (impl === 'langgraph') return langgraphPrepareParked(file, nodes);
  const { remitPrepareParked } = await import('../workloads/remit.js');
  return remitPrepareParked(file, nodes);
}

type Sync = 'FULL' | 'NORMAL';
const role = (impl: Impl) => (impl === 'remit' ? 'subject' : 'competitor');

/** Samples of one (impl, synchronous) series at one N. */
interface Series {
  wall: number[];
  overImport: number[];
  inChild: number[];
  readBack: Set<string>;
  defaults: Set<string>;
  journal: Set<string>;
  commits: number[];
}
const newSeries = (): Series => ({ wall: [], overImport: [], inChild: [], readBack: new Set(), defaults: new Set(), journal: new Set(), commits: [] });

export async function runResume(ctx: SuiteContext): Promise<SuiteOutput> {
  const { nodes: sizes, samples, syncModes, budgetS } = ctx.profile.resume;
  const suiteStart = performance.now();
  const rows: ResultRow[] = [];
  const notes: string[] = [
    `Workflow: \`work\` ×N (self-loop on a counter), then \`approve\` (interrupt), then \`finish\`; state = counter + a ${PARKED_PAYLOAD_BYTES}-byte string. Equal durability: each case runs both libraries at the same \`PRAGMA synchronous\` (${syncModes.join(' and ')}), set explicitly on each resuming connection and read back from it (the column shows the value read back). REMIT: SqliteStore({ synchronous }). LangGraph: SqliteSaver on a better-sqlite3 connection; its setup() switches the file to WAL and leaves synchronous at better-sqlite3's WAL default (the "LangGraph default" note), then the bench sets it; durability "sync". Parked files are prepared once per N (not timed) and every sample resumes its own copy, flushed to disk (fsync) before the child starts, as a run parked long ago would be (lib/context.ts, copyDb).`,
    'Each child is `node resume-child.js`: the child and its imports (REMIT\'s shell included) are transpiled to plain JavaScript first (lib/compile-js.ts), as a deployed service would run them; under tsx each cold start would also pay the loader\'s transforms. Children run one after another, alternating libraries and synchronous settings. Resume = load the core, open the file, build the workflow, resume with a value, run to the end, close. Both children load better-sqlite3\'s JavaScript module before the clock starts (LangGraph\'s workload imports it at the top, REMIT\'s shell only when a SQLite store opens), so neither timed part includes it; opening the database (and with it the native addon) is timed for both.',
    `Budget: sizes run in order while the suite's time stays under ${budgetS} s; a size whose predicted time (the previous size's child start-ups, plus its preparation and resume times scaled linearly in N) would exceed it is "not run (budget)", and so is every larger size.`,
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
  // after it (one per library and sample, shared by its synchronous settings); the pair's
  // difference is one sample of the resume work. Pairing cancels slow drifts
  // of machine load that a separately sampled baseline would fold into the difference.
  ctx.log('resume: compiling the child and its imports to plain JavaScript');
  const child = compileChildren(ctx.repoRoot, path.join(ctx.codeDir, 'js'));
  const importWall = new Map<Impl, number[]>(live.map((i) => [i, []]));
  const importInChild = new Map<Impl, number[]>(live.map((i) => [i, []]));
  let previous: { nodes: number; fixedMs: number; scaledMs: number } | undefined;
  let overBudget = false;
  for (const nodes of sizes) {
    const elapsedMs = performance.now() - suiteStart;
    // Spawning children costs the same at every N; preparing the parked runs and the resumes
    // themselves may grow with N (linearly assumed; a quadratic preparation would be underestimated).
    const predictedMs = previous ? previous.fixedMs + (previous.scaledMs * nodes) / previous.nodes : 0;
    if (overBudget || elapsedMs + predictedMs > budgetS * 1000) {
      overBudget = true;
      const why = `${NOT_RUN_BUDGET}: ${(elapsedMs / 1000).toFixed(0)} s spent, about ${(predictedMs / 1000).toFixed(0)} s predicted for N=${nodes}, budget ${budgetS} s`;
      ctx.log(`resume: N=${nodes} ${why}`);
      for (const sync of syncModes) {
        for (const impl of impls) rows.push(unavailableRow('resume', `N=${nodes} synchronous=${sync}`, { nodes, synchronous: sync, state_payload_bytes: PARKED_PAYLOAD_BYTES }, impl, role(impl), why));
      }
      continue;
    }
    const caseStart = performance.now();
    const templates = new Map<Impl, string>();
    for (const impl of live) {
      const file = freshDbPath(ctx.tmpDir, `${impl}-parked-${nodes}.db`);
      ctx.log(`resume: preparing ${impl} parked run with N=${nodes}`);
      await prepare(impl, file, nodes);
      templates.set(impl, file);
    }
    const prepareMs = performance.now() - caseStart;
    let resumeMsSum = 0;
    const key = (impl: Impl, sync: Sync) => `${impl}/${sync}`;
    const series = new Map<string, Series>();
    for (const impl of live) for (const sync of syncModes) series.set(key(impl, sync), newSeries());
    ctx.log(`resume: N=${nodes}, ${samples} fresh resume processes per library and synchronous setting (+ ${samples} import-only per library)`);
    for (let s = 0; s < samples; s++) {
      for (const impl of live) {
        // One import-only child per library and sample, right after its resumes, pairs with both.
        const runs: { sync: Sync; run: ChildRun }[] = [];
        // The settings' order alternates from sample to sample, so neither always runs first.
        for (const sync of s % 2 === 0 ? syncModes : [...syncModes].reverse()) {
          const copy = path.join(ctx.tmpDir, `${impl}-resume-copy.db`);
          copyDb(templates.get(impl)!, copy);
          runs.push({ sync, run: await runChild(ctx, child, [impl, 'resume', copy, String(nodes), sync]) });
        }
        const base = await runChild(ctx, child, [impl, 'import', '-', '0']);
        if (base.importMs !== undefined) importInChild.get(impl)!.push(base.importMs);
        importWall.get(impl)!.push(base.wallMs);
        for (const { sync, run } of runs) {
          const ser = series.get(key(impl, sync))!;
          ser.wall.push(run.wallMs);
          ser.overImport.push(run.wallMs - base.wallMs);
          if (run.resumeMs !== undefined) {
            ser.inChild.push(run.resumeMs);
            resumeMsSum += run.resumeMs;
          }
          if (run.synchronousReadBack) ser.readBack.add(run.synchronousReadBack);
          if (run.synchronousDefault) ser.defaults.add(run.synchronousDefault);
          if (run.journalMode) ser.journal.add(run.journalMode);
          if (run.commits !== undefined) ser.commits.push(run.commits);
        }
      }
    }
    for (const f of templates.values()) removeDb(f);
    for (const sync of syncModes) {
      const caseName = `N=${nodes} synchronous=${sync}`;
      const caseRows: ResultRow[] = [];
      for (const impl of impls) {
        const params: ResultRow['params'] = { nodes, synchronous: sync, state_payload_bytes: PARKED_PAYLOAD_BYTES };
        const why = available.get(impl);
        if (why) {
          caseRows.push(unavailableRow('resume', caseName, params, impl, role(impl), why));
          continue;
        }
        const ser = series.get(key(impl, sync))!;
        params.synchronous_read_back = [...ser.readBack].join('/') || '?';
        if (ser.defaults.size > 0) params.synchronous_default = [...ser.defaults].join('/');
        if (ser.journal.size > 0) params.journal_mode = [...ser.journal].join('/');
        const over = summarize(ser.overImport);
        const inChildSummary = summarize(ser.inChild);
        const metrics: Record<string, number> = {
          resume_over_import_ms: over.median, resume_over_import_p25_ms: over.p25, resume_over_import_p75_ms: over.p75,
          in_child_resume_ms: inChildSummary.median, in_child_resume_p25_ms: inChildSummary.p25, in_child_resume_p75_ms: inChildSummary.p75,
        };
        if (ser.commits.length > 0) metrics.commits_per_resume = summarize(ser.commits).median;
        caseRows.push(row({ suite: 'resume', case: caseName, params, impl, role: role(impl), time_ms: summarize(ser.wall), metrics }));
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
    const caseMs = performance.now() - caseStart;
    previous = { nodes, fixedMs: caseMs - prepareMs - resumeMsSum, scaledMs: prepareMs + resumeMsSum };
  }
  for (const impl of live) {
    rows.push(row({
      suite: 'resume', case: 'import only', params: { nodes: 0 }, impl: `${impl}:import-only`, role: role(impl),
      time_ms: summarize(importWall.get(impl)!), note: 'node start + library import, no resume (all sizes pooled)',
      metrics: { in_child_import_ms: summarize(importInChild.get(impl)!).median },
    }));
  }
  const lgDefault = rows.find((r) => r.impl === 'langgraph' && r.params.synchronous_default !== undefined)?.params.synchronous_default;
  if (lgDefault !== undefined) notes.push(`LangGraph default: after SqliteSaver's setup() its connection reads back journal_mode=${rows.find((r) => r.params.journal_mode)?.params.journal_mode ?? '?'}, synchronous=${lgDefault} (before the bench sets it).`);
  return { rows, notes, charts: [resumeChart(rows, ctx)] };
}

function resumeChart(rows: ResultRow[], ctx: SuiteContext) {
  const pick = (impl: string, sync: string, value: (r: ResultRow) => number | undefined) =>
    rows.filter((r) => r.impl === impl && r.status === 'measured' && r.params.synchronous === sync && (r.params.nodes as number) > 0)
      .map((r) => ({ x: r.params.nodes as number, y: value(r) ?? NaN }));
  const wall = (r: ResultRow) => r.time_ms?.median;
  const inChild = (r: ResultRow) => r.metrics.in_child_resume_ms;
  return {
    file: 'resume-latency',
    spec: {
      title: 'Resume latency vs completed nodes N',
      subtitle: `fresh process, SQLite file, equal synchronous; medians, ${ctx.profile.name} profile; lower is better`,
      xLabel: 'completed nodes before the interrupt (N)',
      yLabel: 'milliseconds',
      xLog: true,
      yLog: true,
      series: [
        { name: 'REMIT spawn→exit, FULL', points: pick('remit', 'FULL', wall) },
        { name: 'LangGraph spawn→exit, FULL', points: pick('langgraph', 'FULL', wall) },
        { name: 'REMIT in child, FULL', points: pick('remit', 'FULL', inChild), dashed: true },
        { name: 'LangGraph in child, FULL', points: pick('langgraph', 'FULL', inChild), dashed: true },
        { name: 'REMIT in child, NORMAL', points: pick('remit', 'NORMAL', inChild), dashed: true },
        { name: 'LangGraph in child, NORMAL', points: pick('langgraph', 'NORMAL', inChild), dashed: true },
      ],
    },
  };
}
