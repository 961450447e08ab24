#!/usr/bin/env -S node --conditions=remit-source --import tsx
/**
 * `remit-conformance` (`npm start` from the repository): run the resume-contract conformance
 * harness and print the profile table. Default: the quick profile (REMIT on SQLite with the Wasm
 * core, LangGraph.js, and the Python peers LangGraph, CrewAI Flows and pydantic-graph), every cell
 * of both matrices. --full: every system, canaries included, REMIT on PostgreSQL when REMIT_PG_URL
 * is set; the hosts column (network namespaces, conformance/hosts/) as root.
 * Reports (JSON, Markdown, HTML, reproductions) go to --out (default ./reports).
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

/** Exit codes: 0 every REMIT profile holds; 1 a system could not run; 2 usage; 10 a REMIT violation. */
export const ConformanceExit = { OK: 0, UNEXPECTED: 1, USAGE: 2, REMIT_VIOLATED: 10 } as const;

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

/** Generated cells under a fault per REMIT system: the quick profile's deterministic sample, and --full's campaign. */
export const QUICK_GENERATED = 12;
export const FULL_GENERATED = 2000;
/** The canaries need far fewer cells to show their violation. */
const CANARY_GENERATED = 150;
/** Systems of the generated campaign in --full (those the machine can run) and in the quick profile. */
const FULL_GENERATED_SYSTEMS = ['remit-sqlite-wasm', 'remit-postgres-wasm', 'canary-transform', 'canary-key'];
const QUICK_GENERATED_SYSTEMS = ['remit-sqlite-wasm'];
const REMIT_ADAPTER_FILE = 'conformance/adapters/remit/adapter.ts';

interface GeneratedPlan {
  systems: SystemDef[];
  count: (system: SystemDef) => number;
}

/** Which systems run the generated campaign, with how many faulted cells each (null: none). */
function generatedPlan(flags: ConformanceFlags, selected: SystemDef[], notRun: ReadonlySet<string>): GeneratedPlan | null {
  if (flags.generated === false) return null;
  const explicit = typeof flags.generated === 'string' ? integer('generated', flags.generated, 0) : null;
  if (explicit === 0) return null;
  let systems: SystemDef[];
  let count: number;
  if (flags.system !== undefined) {
    if (explicit === null) {
      const only = selected.filter((s) => s.generatedOnly === true);
      if (only.length > 0) throw new Error(`${only.map((s) => s.id).join(', ')} run only the generated campaign: pass --generated <n>`);
      return null;
    }
    systems = selected.filter((s) => s.adapter === REMIT_ADAPTER_FILE);
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
  const systems = flags.system === undefined ? [] : parseSystems(flags.system.split(','));
  if (systems.length !== 1) throw new Error('--generated-scenario replays one scenario: name one --system');
  await withServersUp({ systems, notRun: [] }, true);
  const def = systems[0]!;
  const scenario = loadGeneratedScenario(flags.generatedScenario!);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'remit-generated-'));
  try {
    const verdicts = await replayGeneratedScenario(def, scenario, workDir);
    if (json) process.stdout.write(`${JSON.stringify({ system: def.id, scenario: scenario.id, verdicts }, null, 2)}\n`);
    else for (const [p, v] of Object.entries(verdicts) as Array<[string, Verdict]>) process.stdout.write(`${p}: ${v.status}${v.status === 'violated' ? `\n  ${v.evidence.join('\n  ')}` : ''}\n`);
    const violated = Object.values(verdicts).some((v) => v.status === 'violated');
    return violated && def.id.startsWith('remit-') && flags.allowViolations !== true ? ConformanceExit.REMIT_VIOLATED : ConformanceExit.OK;
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

function integer(name: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
  return n;
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
  return {
    tick: (system: string, cell: string) => bar.increment(1, { system, cell }),
    note: (system: string, text: string) => bar.update({ system, cell: text }),
    stop: () => bar.stop(),
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
  const seed = integer('seed', flags.seed, 0);
  if (flags.generatedScenario !== undefined) return replayGenerated(flags, json);
  const scenario = flags.scenario === undefined ? undefined : loadScenario(flags.scenario);
  const selection = await withServersUp(
    selectSystems({ ...(flags.full === undefined ? {} : { full: flags.full }), ...(flags.system === undefined ? {} : { system: flags.system }) }),
    flags.system !== undefined,
  );
  const generated = generatedPlan(flags, selection.systems, new Set(selection.notRun.map((u) => u.system)));
  // Systems that exist only for the generated campaign never run the reference matrices.
  const systems = flags.generatedOnly === true ? [] : selection.systems.filter((s) => s.generatedOnly !== true);
  if (scenario !== undefined && systems.length !== 1) throw new Error('--scenario replays one scenario: name one --system');
  const cells = parseCells(flags.cell?.flatMap((c) => c.split(',')));
  // Never silent: every system or column left out is named, with the reason.
  const notes: string[] = selection.notRun.map((u) => `NOT RUN ${u.system}: ${u.reason}`);
  for (const n of notes) process.stderr.write(`[conformance] ${n}\n`);
  const hosts = await prepareHosts(systems, scenario === undefined ? cells : [], notes);
  try {
    return await runPrepared(flags, json, { seed, scenario, systems, cells, notes, hosts: hosts.setting, generated });
  } finally {
    await hosts.env?.teardown().catch((e: unknown) => process.stderr.write(`[conformance] ${String(e)}\n`));
  }
}

interface Prepared {
  generated: GeneratedPlan | null;
  seed: number;
  scenario: ReturnType<typeof loadScenario> | undefined;
  systems: SystemDef[];
  cells: readonly Cell[];
  notes: string[];
  hosts: HostsSetting | undefined;
}

async function runPrepared(flags: ConformanceFlags, json: boolean, prepared: Prepared): Promise<number> {
  const { seed, scenario, systems, cells, notes } = prepared;
  const mode: CampaignOptions['mode'] = flags.system !== undefined || flags.cell !== undefined || scenario !== undefined ? 'custom' : flags.full ? 'full' : 'quick';
  const generatedCells = prepared.generated === null ? 0 : prepared.generated.systems.reduce((n, s) => n + prepared.generated!.count(s), 0);
  const total = systems.length * (scenario === undefined ? cells.length : 1) + generatedCells;
  const progress = progressReporter(total, flags.progress && !json);
  const result = await runCampaign({
    mode,
    systems,
    cells,
    seed,
    jobs: integer('jobs', flags.jobs, 1),
    shrink: flags.shrink,
    shrinkBudget: integer('shrink-budget', flags.shrinkBudget, 0),
    ...(scenario === undefined ? {} : { scenario }),
    ...(prepared.hosts === undefined ? {} : { hosts: prepared.hosts }),
    onCellDone: (system, cell) => progress.tick(system, cell),
    onShrink: (system, property) => progress.note(system, `shrinking the ${property} violation`),
  });
  if (prepared.generated !== null) {
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'remit-generated-'));
    try {
      const g = await runGeneratedCampaign({
        systems: prepared.generated.systems,
        count: prepared.generated.count,
        seed,
        workDir,
        shrink: flags.shrink,
        shrinkBudget: Math.max(integer('shrink-budget', flags.shrinkBudget, 0), 12),
        jobs: integer('jobs', flags.jobs, 1),
        onCellDone: (system, id) => progress.tick(system, id),
      });
      result.report.generated = g.section;
      result.timing.generated = g.timing;
      result.timing.totalMs = Date.now() - Date.parse(result.timing.startedAt);
    } finally {
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  }
  progress.stop();
  const outDir = path.resolve(flags.out);
  const written = writeReports(outDir, result.report, result.timing);
  if (json) {
    process.stdout.write(reportJson(result.report));
  } else {
    process.stdout.write(`\n${renderTerminal(result.report, result.timing, process.stdout.isTTY === true)}\n\n`);
    for (const u of result.unavailable) process.stdout.write(`NOT RUN ${u.system}: ${u.reason.split('\n')[0]}\n`);
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
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .action(async (flags: ConformanceFlags & { json: boolean }) => {
      process.exitCode = await runConformance(flags, flags.json);
    });
}

/** Run the CLI; resolves with the exit code (also set on process.exitCode). */
export async function runConformanceCli(argv: string[] = process.argv): Promise<number> {
  try {
    await buildConformanceProgram().parseAsync(argv);
    return (process.exitCode = Number(process.exitCode ?? 0));
  } catch (error) {
    if (error instanceof CommanderError) return (process.exitCode = error.exitCode === 0 ? 0 : ConformanceExit.USAGE);
    process.stderr.write(`remit-conformance: ${error instanceof Error ? error.message : String(error)}\n`);
    if (process.env['REMIT_DEBUG'] && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    return (process.exitCode = ConformanceExit.UNEXPECTED);
  }
}

// This file is the harness's entry (npm start, bin remit-conformance): nothing imports it.
await runConformanceCli();
