/**
 * Entry point of `npm run bench` (quick profile) and `npm run bench -- --full`.
 *
 *   --full               every size, more samples (resume and step cost up to N = 100k)
 *   --suite NAME[,NAME]  run only these suites: recovery, resume, commit, gate, storage, step-cost, wasm-memory
 *   --out DIR            where results go (default bench/results): latest.json, latest.md, *.svg
 *   --pg URL             also run the commit and gate suites on PostgreSQL (default: $REMIT_PG_URL)
 *   --render             run nothing: re-evaluate the targets of DIR/latest.json and rewrite its Markdown
 *
 * The command line is checked first (lib/args.ts; one-line message, exit 2), --out is created and
 * the PostgreSQL server tried once before any suite runs. Scratch files go to a folder of this
 * run's own (under --out when given, else bench/results/tmp/).
 *
 * Writes the JSON document (keys: bench/README.md), the Markdown table and the SVG charts, and
 * prints the Markdown. Profile with: node --cpu-prof --import tsx bench/run.ts --suite recovery
 */

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { describeMachine } from './lib/machine.js';
import { FULL, QUICK } from './lib/profile.js';
import { renderMarkdown } from './lib/markdown.js';
import { removeLeftBehind, runFolderPrefix } from './lib/scratch.js';
import { lineChartSvg } from './lib/svg.js';
import { evaluateTargets } from './lib/targets.js';
import { RESULTS_SCHEMA, ResultsFileError, SUITE_NAMES, mergeSuites, readResultsDocument, runOfDocument, type ResultsDocument, type SuiteName, type SuiteReport } from './lib/results.js';
import type { SuiteContext, SuiteOutput } from './lib/context.js';
import os from 'node:os';
import { PG_SUITES, UsageError, checkPgConnection, parseBenchArgs, type BenchArgs } from './lib/args.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const SUITES: Record<SuiteName, () => Promise<(ctx: SuiteContext) => Promise<SuiteOutput>>> = {
  recovery: async () => (await import('./suites/recovery.js')).runRecovery,
  resume: async () => (await import('./suites/resume.js')).runResume,
  commit: async () => (await import('./suites/commit.js')).runCommit,
  gate: async () => (await import('./suites/gate.js')).runGate,
  storage: async () => (await import('./suites/storage.js')).runStorage,
  'step-cost': async () => (await import('./suites/step-cost.js')).runStepCostSuite,
  'wasm-memory': async () => (await import('./suites/wasm-memory.js')).runWasmMemory,
};

/** The PostgreSQL half of the commit and gate suites (bench/postgres.ts), run here so that its failure keeps the SQLite rows. */
async function postgresPart(name: SuiteName, ctx: SuiteContext): Promise<SuiteOutput | null> {
  if (!PG_SUITES.includes(name) || !ctx.pgUrl) return null;
  const pgMod = await import('./postgres.js');
  const run = name === 'commit' ? pgMod.runPostgresCommitSuite : pgMod.runPostgresGateSuite;
  try {
    return await run(ctx);
  } catch (e) {
    const reason = `PostgreSQL unavailable: ${String((e as Error)?.message ?? e).split('\n')[0]!.slice(0, 200)}`;
    ctx.log(`${name}: ${reason}`);
    // The same rows as without a URL (every PostgreSQL implementation, status unavailable), with the reason.
    const none = await run({ ...ctx, pgUrl: undefined });
    return { rows: none.rows.map((r) => ({ ...r, note: reason })), notes: [reason], charts: [] };
  }
}

async function runSuite(name: SuiteName, ctx: SuiteContext): Promise<{ report: SuiteReport; output: SuiteOutput | null }> {
  const t0 = performance.now();
  fs.rmSync(ctx.tmpDir, { recursive: true, force: true });
  fs.mkdirSync(ctx.tmpDir, { recursive: true });
  try {
    // The suite runs its SQLite cases only; the PostgreSQL rows come from postgresPart.
    const output = await (await SUITES[name]())(PG_SUITES.includes(name) ? { ...ctx, pgUrl: undefined } : ctx);
    const pg = await postgresPart(name, ctx);
    if (pg) {
      output.rows.push(...pg.rows);
      output.notes.push(...pg.notes);
      output.charts.push(...pg.charts);
    }
    const partial = output.rows.some((r) => r.status !== 'measured');
    return {
      report: { name, status: partial ? 'partial' : 'measured', duration_s: (performance.now() - t0) / 1000, notes: output.notes, rows: output.rows },
      output,
    };
  } catch (e) {
    const message = (e as Error)?.stack ?? String(e);
    ctx.log(`${name}: FAILED ${message}`);
    return {
      report: { name, status: 'skipped', duration_s: (performance.now() - t0) / 1000, notes: [`suite failed: ${String((e as Error)?.message ?? e)}`], rows: [] },
      output: null,
    };
  } finally {
    fs.rmSync(ctx.tmpDir, { recursive: true, force: true });
  }
}

/** Refuse an --out the bench cannot write to, naming it. */
function notWritable(out: string, e: unknown): UsageError {
  return new UsageError(`--out ${out}: not a writable folder (${(e as Error).message.split('\n')[0]})`);
}

/** Create --out (or fail now, before any suite runs) and a scratch folder of this run's own inside it (or in bench/results/tmp/). */
function prepareFolders(args: BenchArgs): string {
  try {
    fs.mkdirSync(args.out, { recursive: true });
    fs.accessSync(args.out, fs.constants.W_OK);
    // A run of some suites merges into latest.json at the end: a damaged one is refused now, not after the suites.
    const latest = path.join(args.out, 'latest.json');
    if (args.suites.length < SUITE_NAMES.length && fs.existsSync(latest)) readResultsDocument(latest);
    const parent = args.outGiven ? args.out : path.join(repoRoot, 'bench', 'results', 'tmp');
    fs.mkdirSync(parent, { recursive: true });
    const prefix = args.outGiven ? '.bench-scratch-' : 'run-';
    removeLeftBehind(parent, prefix);
    // Unique per run: concurrent runs never delete each other's scratch files.
    return fs.mkdtempSync(path.join(parent, runFolderPrefix(prefix)));
  } catch (e) {
    if (e instanceof ResultsFileError) throw e;
    throw notWritable(args.out, e);
  }
}

async function main(): Promise<void> {
  const parsed = parseBenchArgs(process.argv, repoRoot);
  if (parsed === 'help') return;
  const args = parsed;
  for (const n of args.notes) process.stderr.write(`bench: note: ${n}\n`);
  if (args.render) return renderOnly(args.out);
  const scratch = prepareFolders(args);
  removeAtExit(scratch);
  try {
    await runAll(args, scratch);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The suites that compile children into their codeDir (which must be inside the repository: compile-js.test.ts). */
const SUITES_WITH_CHILDREN: readonly SuiteName[] = ['resume', 'wasm-memory'];

/**
 * The parent of every suite's codeDir (SuiteContext): inside the repository, unique per run,
 * removed when the process exits; made only for a run with a suite that compiles children, so
 * that a run with --out of the others leaves the repository alone.
 */
function codeScratchFolder(suites: readonly SuiteName[]): string | null {
  if (!suites.some((s) => SUITES_WITH_CHILDREN.includes(s))) return null;
  const parent = path.join(repoRoot, 'bench', 'results', 'tmp');
  fs.mkdirSync(parent, { recursive: true });
  removeLeftBehind(parent, 'code-');
  const folder = fs.mkdtempSync(path.join(parent, runFolderPrefix('code-')));
  removeAtExit(folder);
  return folder;
}


/**
 * Remove `folder` when the process exits, also on Ctrl-C or a kill: the signal is taken, the
 * folder removed, and the signal raised again, so that the exit status still says which (130 for
 * SIGINT). Without this, a Ctrl-C left the scratch and code folders behind.
 */
function removeAtExit(folder: string): void {
  const remove = () => fs.rmSync(folder, { recursive: true, force: true });
  process.once('exit', remove);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      remove();
      // Raised again once every folder's handler has run (each takes the signal once).
      setImmediate(() => {
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
    });
  }
}

async function runAll(args: BenchArgs, scratch: string): Promise<void> {
  if (args.pgUrl && args.pgFrom) await checkPgConnection(args.pgUrl, args.pgFrom);
  const profile = args.full ? FULL : QUICK;
  const startedAt = new Date();
  const t0 = performance.now();
  const sqliteVersion = String(new Database(':memory:').prepare('select sqlite_version() as v').pluck().get());
  const machine = describeMachine(repoRoot, sqliteVersion);
  const log = (m: string) => process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${m}\n`);
  log(`profile ${profile.name}; suites ${args.suites.join(', ')}; load average ${machine.load_avg_at_start.join(' ')}`);
  if (!args.pgUrl) log('PostgreSQL columns not run: pass --pg URL or set REMIT_PG_URL (bash scripts/pg.sh start && bash scripts/pg.sh url)');
  const reports: SuiteReport[] = [];
  const charts: SuiteOutput['charts'] = [];
  const codeScratch = codeScratchFolder(args.suites);
  for (const name of args.suites) {
    // A suite without children gets a codeDir it never makes (under the scratch folder).
    const codeDir = path.join(codeScratch ?? path.join(scratch, 'code'), name);
    const ctx: SuiteContext = { profile, repoRoot, tmpDir: path.join(scratch, name), codeDir, pgUrl: args.pgUrl, log };
    const { report, output } = await runSuite(name, ctx).finally(() => fs.rmSync(ctx.codeDir, { recursive: true, force: true }));
    reports.push(report);
    if (output) charts.push(...output.charts);
    log(`${name}: ${report.status} in ${report.duration_s.toFixed(1)} s`);
  }
  machine.load_avg_at_end = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const doc: ResultsDocument = {
    schema: RESULTS_SCHEMA,
    profile: profile.name,
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    duration_s: (performance.now() - t0) / 1000,
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    machine,
    suites: reports,
    targets: [],
  };
  for (const s of doc.suites) s.run = runOfDocument(doc);
  const merged = mergeWithPrevious(doc, args.out, args.suites.length < SUITE_NAMES.length);
  merged.targets = evaluateTargets(merged);
  writeResults(merged, charts, args.out, log);
}

/** Targets and Markdown of an existing document again (after a change to the targets or the report). */
/** --render: nothing to render without a latest.json, refused (ResultsFileError) without creating --out. */
function renderOnly(out: string): void {
  const doc = readResultsDocument(path.join(out, 'latest.json'));
  try {
    fs.accessSync(out, fs.constants.W_OK);
  } catch (e) {
    throw notWritable(out, e);
  }
  doc.targets = evaluateTargets(doc);
  writeResults(doc, [], out, (m) => process.stderr.write(`[bench] ${m}\n`), 'rendered');
}

/**
 * A run of some suites merges into the latest.json already in --out (its other suites and their
 * runs stay), so `--suite X` never throws away the committed figures of the other suites.
 */
function mergeWithPrevious(doc: ResultsDocument, out: string, partial: boolean): ResultsDocument {
  const file = path.join(out, 'latest.json');
  if (!partial || !fs.existsSync(file)) return doc;
  const previous = readResultsDocument(file);
  const merged = mergeSuites(previous, doc);
  for (const s of doc.suites) {
    if (!merged.suites.includes(s)) process.stderr.write(`bench: ${s.name} failed in this run; ${file} keeps its earlier figures for it\n`);
  }
  return merged;
}

function writeResults(doc: ResultsDocument, charts: SuiteOutput['charts'], out: string, log: (m: string) => void, how: 'measured' | 'rendered' = 'measured'): void {
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'latest.json'), JSON.stringify(doc, null, 2) + '\n');
  const markdown = renderMarkdown(doc);
  fs.writeFileSync(path.join(out, 'latest.md'), markdown);
  for (const c of charts) fs.writeFileSync(path.join(out, `${c.file}.svg`), lineChartSvg(c.spec) + '\n');
  if (path.resolve(out) === path.join(repoRoot, 'bench', 'results')) updateReadme(markdown, charts.map((c) => c.file));
  process.stdout.write(markdown + '\n');
  log(how === 'rendered'
    ? `rendered ${path.relative(repoRoot, out)}/latest.{json,md} again from the run of ${doc.finished_at} (nothing measured)`
    : `wrote ${path.relative(repoRoot, out)}/latest.{json,md} and ${charts.length} chart(s) in ${doc.duration_s.toFixed(0)} s`);
}

const README_BEGIN = '<!-- latest-results:begin (written by bench/run.ts; edits inside are overwritten) -->';
const README_END = '<!-- latest-results:end -->';

/** Put the latest table and charts into bench/README.md between its markers (default --out only). */
function updateReadme(markdown: string, chartFiles: string[]): void {
  const readme = path.join(repoRoot, 'bench', 'README.md');
  if (!fs.existsSync(readme)) return;
  const text = fs.readFileSync(readme, 'utf8');
  const begin = text.indexOf(README_BEGIN);
  const end = text.indexOf(README_END);
  if (begin < 0 || end < begin) return;
  // One heading level down: the README's own section is the level-2 heading.
  const body = markdown.replace(/^# .*\n/, '').replace(/^(#+) /gm, '$1# ');
  const known = ['recovery-throughput', 'resume-latency', 'storage-growth', 'step-cost'].filter((f) => chartFiles.includes(f) || fs.existsSync(path.join(repoRoot, 'bench', 'results', `${f}.svg`)));
  const images = known.map((f) => `![${f}](results/${f}.svg)`).join('\n\n');
  const block = `${README_BEGIN}\n${body.trim()}\n\n${images}\n${README_END}`;
  fs.writeFileSync(readme, text.slice(0, begin) + block + text.slice(end + README_END.length));
}

try {
  await main();
} catch (e) {
  if (!(e instanceof UsageError || e instanceof ResultsFileError)) throw e;
  process.stderr.write(`bench: ${e.message}\n`);
  process.exitCode = 2;
}
