#!/usr/bin/env -S node --conditions=remit-source --import tsx
/**
 * `remit-conformance` (`npm start` from the repository): run the resume-contract conformance
 * harness and print the profile table. Default: the quick profile (REMIT on SQLite with the Wasm
 * core, LangGraph.js, and the Python peers LangGraph, CrewAI Flows and pydantic-graph), every cell
 * of both matrices. --full: every system, canaries included, REMIT on PostgreSQL when REMIT_PG_URL
 * is set; the hosts column (network namespaces, conformance/hosts/) as root.
 * Reports (JSON, Markdown, HTML, reproductions) go to --out (default ./reports). The bin runs this
 * file through bin/remit-conformance.mjs, which finds the repository's tsx from any directory.
 * Everything given is checked before anything runs: a usage error (exit 2) says what is wrong.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import cliProgress from 'cli-progress';
import { loadScenario, parseCells, parseSystems, runCampaign, selectSystems, type CampaignOptions, type SystemSelection } from './harness/campaign.js';
import type { Cell } from './harness/cells.js';
import type { Verdict } from './harness/checkers/index.js';
import type { HostsSetting } from './harness/cross-host.js';
import { renderTerminal } from './harness/report/terminal.js';
import { findSystem, systemsWithServerDown, whyNotRunnable, type SystemDef } from './harness/systems.js';
import { loadGeneratedScenario, replayGeneratedScenario, runGeneratedCampaign } from './harness/generated/campaign.js';
import { hostsPrecondition, setUpHosts, type HostsEnvironment } from './hosts/hosts.js';
import { reportJson, writeReports } from './harness/report/write.js';
import { killLiveAdapters } from './harness/driver.js';
import { UsageError } from './harness/usage.js';

/**
 * Exit codes: 0 every REMIT profile holds; 1 a system could not run; 2 usage; 10 a REMIT violation;
 * 130 / 143 interrupted by SIGINT / SIGTERM.
 */
export const ConformanceExit = { OK: 0, UNEXPECTED: 1, USAGE: 2, REMIT_VIOLATED: 10, SIGINT: 130, SIGTERM: 143 } as const;

const EXIT_CODES_HELP = `
Exit codes:
  0    every REMIT profile (remit-*) holds; other systems' violations are results, not failures
  1    a system could not run (its adapter did not start; a named system's server, URL or
       virtual environment is missing), or an unexpected error
  2    usage: an unknown option, system or cell, a value that is not a valid number, a missing or
       invalid scenario file, a selection that would run nothing, an --out that cannot be a folder
  10   a REMIT profile shows a violation (see --out for the reproductions)
  130  interrupted (Ctrl-C, SIGINT); 143: terminated (SIGTERM). The work folder is removed.`;

interface ConformanceFlags {
  full?: boolean;
  /** Generated workflows per system (false: --no-generated). */
  generated?: string | boolean;
  generatedOnly?: boolean;
  generatedScenario?: string;
  seed: string;
  out: string;
  system?: string;
  cell?: string[];
  scenario?: string;
  jobs: string;
  shrink: boolean;
  shrinkBudget: string;
  progress: boolean;
  allowViolations?: boolean;
}

/** The numbers of the command line, checked before anything runs. */
interface Numbers {
  seed: number;
  jobs: number;
  shrinkBudget: number;
  /** --generated <n> when given (null: not given, or --no-generated). */
  generated: number | null;
}

function parseNumbers(flags: ConformanceFlags): Numbers {
  return {
    seed: integer('seed', flags.seed, 0),
    jobs: integer('jobs', flags.jobs, 1),
    shrinkBudget: integer('shrink-budget', flags.shrinkBudget, 0),
    generated: typeof flags.generated === 'string' ? integer('generated', flags.generated, 0) : null,
  };
}

/** Generated cells under a fault per REMIT system: the quick profile's deterministic sample, and --full's campaign. */
export const QUICK_GENERATED = 12;
export const FULL_GENERATED = 2000;
/** The canaries need far fewer cells to show their violation. */
const CANARY_GENERATED = 150;
/** Systems of the generated campaign in --full (those the machine can run) and in the quick profile. */
const FULL_GENERATED_SYSTEMS = ['remit-sqlite-wasm', 'remit-postgres-wasm', 'canary-transform', 'canary-key'];
const QUICK_GENERATED_SYSTEMS = ['remit-sqlite-wasm'];
const REMIT_ADAPTER_FILE = 'conformance/adapters/remit/adapter.ts';

/** Generated workflows run only on REMIT's adapter (REMIT's systems and the canaries). */
function runsGenerated(def: SystemDef): boolean {
  return def.adapter === REMIT_ADAPTER_FILE;
}

interface GeneratedPlan {
  systems: SystemDef[];
  count: (system: SystemDef) => number;
}

/** Which systems run the generated campaign, with how many faulted cells each (null: none). */
function generatedPlan(flags: ConformanceFlags, explicit: number | null, selected: SystemDef[], notRun: ReadonlySet<string>): GeneratedPlan | null {
  if (flags.generated === false) return null;
  if (explicit === 0) return null;
  let systems: SystemDef[];
  let count: number;
  if (flags.system !== undefined) {
    if (explicit === null) {
      const only = selected.filter((s) => s.generatedOnly === true);
      if (only.length > 0) throw new UsageError(`${only.map((s) => s.id).join(', ')} run only the generated campaign: pass --generated <n>`);
      return null;
    }
    systems = selected.filter(runsGenerated);
    count = explicit;
  } else if (flags.full === true) {
    systems = FULL_GENERATED_SYSTEMS.map(findSystem).filter((s) => whyNotRunnable(s) === null && !notRun.has(s.id));
    count = explicit ?? FULL_GENERATED;
  } else {
    systems = QUICK_GENERATED_SYSTEMS.map(findSystem);
    count = explicit ?? QUICK_GENERATED;
  }
  if (systems.length === 0) return null;
  return { systems, count: (s) => (s.canary && flags.system === undefined ? Math.min(count, CANARY_GENERATED) : count) };
}

/** Why a selection runs neither a cell nor a generated workflow (said before refusing it). */
function whyNothingRuns(flags: ConformanceFlags, explicit: number | null, selected: SystemDef[]): string {
  const ids = selected.map((s) => s.id).join(', ');
  if (flags.generatedOnly !== true) return `no system of the selection runs the reference matrices (${ids === '' ? 'none is runnable here' : `${ids} run only the generated campaign`})`;
  if (flags.generated === false) return '--generated-only with --no-generated runs nothing';
  if (explicit === 0) return '--generated-only with --generated 0 runs nothing';
  if (flags.system !== undefined && explicit === null) return '--generated-only with --system runs nothing without --generated <n> (with --system the generated campaign runs only when --generated is given)';
  if (flags.system !== undefined) return `--generated-only runs nothing here: generated workflows run only on REMIT's adapter (remit-*, canary*), and ${ids} ${selected.length === 1 ? 'is not one' : 'are none of them'}`;
  return '--generated-only: no system that runs generated workflows can run here';
}

/**
 * The selection without the systems whose server does not answer (systemsWithServerDown): named
 * ones are refused at once (as a missing REMIT_PG_URL is), the others are NOT RUN with the reason.
 */
async function withServersUp(selection: SystemSelection, named: boolean): Promise<SystemSelection> {
  const down = await systemsWithServerDown(selection.systems);
  if (down.length === 0) return selection;
  if (named) throw new Error(`system ${down[0]!.system} cannot run here: ${down[0]!.reason}`);
  const ids = new Set(down.map((d) => d.system));
  return { systems: selection.systems.filter((s) => !ids.has(s.id)), notRun: [...selection.notRun, ...down] };
}

/** Replay one saved generated scenario on one system and print its verdicts. */
async function replayGenerated(flags: ConformanceFlags, json: boolean): Promise<number> {
  if (flags.system === undefined) throw new UsageError('--generated-scenario replays one scenario: name one --system');
  if (flags.scenario !== undefined) throw new UsageError('--generated-scenario and --scenario replay one scenario each: give one of them');
  const systems = parseSystems(flags.system.split(','));
  if (systems.length !== 1) throw new UsageError(`--generated-scenario replays one scenario: name one --system (got ${systems.map((s) => s.id).join(', ')})`);
  const def = systems[0]!;
  if (!runsGenerated(def)) throw new UsageError(`--generated-scenario: generated workflows run only on REMIT's adapter (remit-*, canary*), not on ${def.id}`);
  const scenario = loadGeneratedScenario(flags.generatedScenario!);
  const why = whyNotRunnable(def);
  if (why !== null) throw new Error(`system ${def.id} cannot run here: ${why}`);
  await withServersUp({ systems, notRun: [] }, true);
  const workDir = makeWorkDir('remit-generated-');
  try {
    const verdicts = await replayGeneratedScenario(def, scenario, workDir);
    if (json) process.stdout.write(`${JSON.stringify({ system: def.id, scenario: scenario.id, verdicts }, null, 2)}\n`);
    else for (const [p, v] of Object.entries(verdicts) as Array<[string, Verdict]>) process.stdout.write(`${p}: ${v.status}${v.status === 'violated' ? `\n  ${v.evidence.join('\n  ')}` : ''}\n`);
    const violated = Object.values(verdicts).some((v) => v.status === 'violated');
    return violated && def.id.startsWith('remit-') && flags.allowViolations !== true ? ConformanceExit.REMIT_VIOLATED : ConformanceExit.OK;
  } finally {
    removeWorkDir(workDir);
  }
}

/** A whole number >= min, written in decimal digits ('' and '1e3' are refused: they are not what a user means). */
function integer(name: string, text: string, min: number): number {
  const trimmed = text.trim();
  const n = /^-?[0-9]+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * The reports folder, made (or found) before the campaign starts: an --out that is a file or
 * cannot be made is refused now, not after minutes of cells.
 */
function prepareOut(out: string): string {
  if (out.trim() === '') throw new UsageError('--out must name a folder, got ""');
  const outDir = path.resolve(out);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(outDir);
  } catch {
    stat = undefined;
  }
  if (stat !== undefined && !stat.isDirectory()) throw new UsageError(`--out ${out} exists and is not a folder`);
  try {
    fs.mkdirSync(outDir, { recursive: true });
    fs.accessSync(outDir, fs.constants.W_OK);
  } catch (error) {
    throw new UsageError(`--out ${out} cannot be made or written: ${error instanceof Error ? error.message : String(error)}`);
  }
  return outDir;
}

/** What an interrupted run must undo: the progress bar (it hides the cursor), the work folders, the hosts. */
const interruptible: { progress: { stop: () => void } | null; workDirs: Set<string>; hosts: HostsEnvironment | null } = {
  progress: null,
  workDirs: new Set(),
  hosts: null,
};

function makeWorkDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  interruptible.workDirs.add(dir);
  return dir;
}

function removeWorkDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  interruptible.workDirs.delete(dir);
}

let interrupted = false;

/**
 * SIGINT (Ctrl-C) and SIGTERM: stop the progress bar (showing the cursor again), end the adapter
 * processes, remove the work folders, take the hosts down, and exit 130 / 143. A second signal
 * exits at once.
 */
function installInterruptHandlers(): void {
  const handle = (signal: 'SIGINT' | 'SIGTERM', code: number) => {
    if (interrupted) process.exit(code);
    interrupted = true;
    void (async () => {
      try {
        interruptible.progress?.stop();
        interruptible.progress = null;
        if (process.stderr.isTTY) process.stderr.write('\u001b[?25h');
        process.stderr.write(`\nremit-conformance: ${signal}: stopping; removing the work folder\n`);
        await killLiveAdapters();
        for (const dir of [...interruptible.workDirs]) {
          try {
            removeWorkDir(dir);
          } catch (e) {
            process.stderr.write(`remit-conformance: could not remove ${dir}: ${String(e)}\n`);
          }
        }
        const hosts = interruptible.hosts;
        if (hosts !== null) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([hosts.teardown(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 20_000)))]).catch((e: unknown) =>
            process.stderr.write(`remit-conformance: ${String(e)}\n`),
          );
          clearTimeout(timer);
        }
      } finally {
        process.exit(code);
      }
    })();
  };
  process.on('SIGINT', () => handle('SIGINT', ConformanceExit.SIGINT));
  process.on('SIGTERM', () => handle('SIGTERM', ConformanceExit.SIGTERM));
}

function progressReporter(total: number, enabled: boolean) {
  if (!enabled) return { tick: (_s: string, _c: string) => {}, note: (_s: string, _t: string) => {}, stop: () => {} };
  if (!process.stderr.isTTY) {
    let done = 0;
    let lastPercent = -1;
    return {
      tick: (system: string, cell: string) => {
        done++;
        const percent = Math.floor((100 * done) / total / 10) * 10;
        if (percent !== lastPercent) process.stderr.write(`[conformance] ${done}/${total} cells (${system} ${cell})\n`);
        lastPercent = percent;
      },
      note: (system: string, text: string) => process.stderr.write(`[conformance] ${system}: ${text}\n`),
      stop: () => {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { format: 'conformance {bar} {value}/{total} cells | {eta_formatted} left | {system} {cell}', stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { system: '', cell: '' });
  let stopped = false;
  return {
    tick: (system: string, cell: string) => bar.increment(1, { system, cell }),
    note: (system: string, text: string) => bar.update({ system, cell: text }),
    stop: () => {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}

/**
 * The hosts column needs namespaces and a server reachable over their link: set them up when a
 * selected system can use them and a hosts cell is selected. Says on stderr what was done, or why not.
 */
async function prepareHosts(systems: SystemDef[], cells: readonly Cell[], notes: string[]): Promise<{ setting: HostsSetting | undefined; env: HostsEnvironment | null }> {
  const wanted = systems.some((s) => s.hostsCapable === true) && cells.some((c) => c.matrix === 'concurrency' && c.mode === 'hosts');
  if (!wanted) return { setting: undefined, env: null };
  const blocked = hostsPrecondition();
  if (blocked !== null) {
    notes.push(`hosts column NOT RUN: ${blocked.reason}`);
    return { setting: { unavailable: blocked.reason }, env: null };
  }
  try {
    const env = await setUpHosts();
    process.stderr.write(`[conformance] hosts column: ${env.summary}\n`);
    return { setting: { plan: env.plan }, env };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    notes.push(`hosts column NOT RUN: setting up the hosts failed: ${reason}`);
    return { setting: { unavailable: `setting up the hosts failed: ${reason.split('\n')[0]}` }, env: null };
  }
}

export async function runConformance(flags: ConformanceFlags, json: boolean): Promise<number> {
  // Everything given is checked first: a usage error must come before anything runs.
  const numbers = parseNumbers(flags);
  if (flags.generatedScenario !== undefined) return replayGenerated(flags, json);
  if (flags.scenario !== undefined && flags.system === undefined) throw new UsageError('--scenario replays one scenario: name one --system');
  const scenario = flags.scenario === undefined ? undefined : loadScenario(flags.scenario);
  const cells = parseCells(flags.cell?.flatMap((c) => c.split(',')));
  const selection = await withServersUp(
    selectSystems({ ...(flags.full === undefined ? {} : { full: flags.full }), ...(flags.system === undefined ? {} : { system: flags.system }) }),
    flags.system !== undefined,
  );
  const generated = generatedPlan(flags, numbers.generated, selection.systems, new Set(selection.notRun.map((u) => u.system)));
  // Systems that exist only for the generated campaign never run the reference matrices.
  const systems = flags.generatedOnly === true ? [] : selection.systems.filter((s) => s.generatedOnly !== true);
  if (scenario !== undefined && systems.length !== 1) throw new UsageError('--scenario replays one scenario: name one --system');
  if (systems.length === 0 && generated === null) throw new UsageError(`nothing to run: ${whyNothingRuns(flags, numbers.generated, selection.systems)}`);
  // Never silent: every system or column left out is named, with the reason.
  const notes: string[] = [];
  if (flags.system !== undefined && generated !== null) {
    const skipped = selection.systems.filter((s) => !runsGenerated(s)).map((s) => s.id);
    if (skipped.length > 0) notes.push(`generated workflows NOT RUN on ${skipped.join(', ')}: they run only on REMIT's adapter`);
  }
  const outDir = prepareOut(flags.out);
  for (const u of selection.notRun) process.stderr.write(`[conformance] NOT RUN ${u.system}: ${u.reason}\n`);
  for (const n of notes) process.stderr.write(`[conformance] ${n}\n`);
  const workDir = makeWorkDir('remit-conformance-');
  try {
    const hosts = await prepareHosts(systems, scenario === undefined ? cells : [], notes);
    interruptible.hosts = hosts.env;
    try {
      return await runPrepared(flags, json, { numbers, scenario, systems, cells, notes, notRun: selection.notRun, hosts: hosts.setting, generated, outDir, workDir });
    } finally {
      await hosts.env?.teardown().catch((e: unknown) => process.stderr.write(`[conformance] ${String(e)}\n`));
      interruptible.hosts = null;
    }
  } finally {
    removeWorkDir(workDir);
  }
}

interface Prepared {
  generated: GeneratedPlan | null;
  numbers: Numbers;
  scenario: ReturnType<typeof loadScenario> | undefined;
  systems: SystemDef[];
  cells: readonly Cell[];
  notes: string[];
  notRun: { system: string; reason: string }[];
  hosts: HostsSetting | undefined;
  /** The reports folder (made already). */
  outDir: string;
  /** The campaign's work folder (stores, sinks), removed at the end or on an interrupt. */
  workDir: string;
}

async function runPrepared(flags: ConformanceFlags, json: boolean, prepared: Prepared): Promise<number> {
  const { numbers, scenario, systems, cells, notes, outDir, workDir } = prepared;
  const seed = numbers.seed;
  const mode: CampaignOptions['mode'] = flags.system !== undefined || flags.cell !== undefined || scenario !== undefined ? 'custom' : flags.full ? 'full' : 'quick';
  const generatedCells = prepared.generated === null ? 0 : prepared.generated.systems.reduce((n, s) => n + prepared.generated!.count(s), 0);
  const total = systems.length * (scenario === undefined ? cells.length : 1) + generatedCells;
  const progress = progressReporter(total, flags.progress && !json);
  interruptible.progress = progress;
  const result = await runCampaign({
    mode,
    systems,
    cells,
    seed,
    jobs: numbers.jobs,
    shrink: flags.shrink,
    shrinkBudget: numbers.shrinkBudget,
    workDir,
    notRun: prepared.notRun,
    ...(scenario === undefined ? {} : { scenario }),
    ...(prepared.hosts === undefined ? {} : { hosts: prepared.hosts }),
    onCellDone: (system, cell) => progress.tick(system, cell),
    onShrink: (system, property) => progress.note(system, `shrinking the ${property} violation`),
  });
  if (prepared.generated !== null) {
    const generatedDir = path.join(workDir, 'generated');
    fs.mkdirSync(generatedDir, { recursive: true });
    const g = await runGeneratedCampaign({
      systems: prepared.generated.systems,
      count: prepared.generated.count,
      seed,
      workDir: generatedDir,
      shrink: flags.shrink,
      shrinkBudget: Math.max(numbers.shrinkBudget, 12),
      jobs: numbers.jobs,
      onCellDone: (system, id) => progress.tick(system, id),
    });
    result.report.generated = g.section;
    result.timing.generated = g.timing;
    result.timing.totalMs = Date.now() - Date.parse(result.timing.startedAt);
  }
  progress.stop();
  interruptible.progress = null;
  // An interrupted campaign writes no reports: the signal handler is cleaning up and exits.
  if (interrupted) await new Promise<never>(() => {});
  const written = writeReports(outDir, result.report, result.timing, flags.out);
  if (json) {
    process.stdout.write(reportJson(result.report));
  } else {
    // NOT RUN systems are part of the report (renderTerminal lists them); the notes are the rest.
    process.stdout.write(`\n${renderTerminal(result.report, result.timing, process.stdout.isTTY === true, outDir)}\n\n`);
    for (const n of notes) process.stdout.write(`${n}\n`);
    process.stdout.write(`Run time ${(result.timing.totalMs / 1000).toFixed(1)} s, seed ${seed}.\n`);
    process.stdout.write(`Reports: ${written.html}\n         ${written.markdown}\n         ${written.json}\n`);
    if (written.reproductions > 0) process.stdout.write(`         ${written.reproductions} reproductions under ${path.join(outDir, 'repro')}\n`);
  }
  if (result.unavailable.length > 0) return ConformanceExit.UNEXPECTED;
  // A measured violation of another system is a result, not a failure; REMIT's own is.
  const remitViolated =
    result.report.systems.some((s) => s.system.startsWith('remit-') && Object.values(s.properties).some((p) => p.status === 'violated')) ||
    (result.report.generated?.systems ?? []).some((s) => s.system.startsWith('remit-') && s.violations.length > 0);
  return remitViolated && flags.allowViolations !== true ? ConformanceExit.REMIT_VIOLATED : ConformanceExit.OK;
}

export function buildConformanceProgram(): Command {
  return new Command('remit-conformance')
    .description('measure the resume contract: fault and concurrency matrices for REMIT and other systems')
    .option('--full', 'every cell of both matrices for every adapter (REMIT variants, REMIT on PostgreSQL if REMIT_PG_URL is set, LangGraph.js, the Python peers, canaries), and 2000 generated workflows under faults on REMIT (SQLite, PostgreSQL)')
    .option('--generated <n>', `generated workflows to run under a fault per REMIT system (default ${QUICK_GENERATED} in the quick profile, ${FULL_GENERATED} with --full; with --system, only when given)`)
    .option('--no-generated', 'skip the generated-workflow campaign')
    .option('--generated-only', 'run only the generated-workflow campaign')
    .option('--generated-scenario <file>', 'replay one saved generated scenario (reports/repro/generated/...) on --system')
    .option('--seed <n>', 'seed of the scenarios (same seed, same report)', '1')
    .option('--out <dir>', 'directory for the reports', 'reports')
    .option('--system <ids>', 'comma-separated system ids (see conformance/README.md)')
    .option('--cell <ids...>', 'only these cells, e.g. "after-commit:EFFECT_INTENT@charge/sigkill"')
    .option('--scenario <file>', 'replay one saved scenario (a reproduction file) on --system')
    .option('--jobs <n>', 'systems run at the same time', '2')
    .option('--no-shrink', 'do not shrink violations to their smallest scenario')
    .option('--shrink-budget <n>', 're-runs allowed per shrunk property', '10')
    .option('--no-progress', 'no progress bar')
    .option('--json', 'print the JSON report instead of the table', false)
    .addOption(new Option('--allow-violations', 'exit 0 even when a REMIT profile shows a violation').hideHelp())
    .addHelpText('after', EXIT_CODES_HELP)
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .action(async (flags: ConformanceFlags & { json: boolean }) => {
      process.exitCode = await runConformance(flags, flags.json);
    });
}

/** Run the CLI; resolves with the exit code (also set on process.exitCode). */
export async function runConformanceCli(argv: string[] = process.argv): Promise<number> {
  installInterruptHandlers();
  try {
    await buildConformanceProgram().parseAsync(argv);
    return (process.exitCode = Number(process.exitCode ?? 0));
  } catch (error) {
    if (error instanceof CommanderError) return (process.exitCode = error.exitCode === 0 ? 0 : ConformanceExit.USAGE);
    if (error instanceof UsageError) {
      process.stderr.write(`remit-conformance: ${error.message}\n(add --help for usage)\n`);
      return (process.exitCode = ConformanceExit.USAGE);
    }
    process.stderr.write(`remit-conformance: ${error instanceof Error ? error.message : String(error)}\n`);
    if (process.env['REMIT_DEBUG'] && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    return (process.exitCode = ConformanceExit.UNEXPECTED);
  }
}

// This file is the harness's entry (npm start, bin remit-conformance): nothing imports it.
await runConformanceCli();
