/**
 * A campaign: several systems, each over a list of cells, at most `jobs` systems at a time. This
 * is what `remit conformance` runs; it returns the deterministic report and, apart, the timing.
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { ALL_CELLS, findCell, type Cell } from './cells.js';
import type { HostsSetting } from './cross-host.js';
import { runProfile, stepsAreCoherent, type ProfileTiming, type SystemProfile } from './profile.js';
import { buildReport, type Report, type ReportTiming } from './report/model.js';
import { ScenarioSchema, type Scenario } from './scenario.js';
import { SYSTEMS, findSystem, whyNotRunnable, type SystemDef } from './systems.js';
import { UsageError } from './usage.js';

export { UsageError };

export interface CampaignOptions {
  mode: 'quick' | 'full' | 'custom';
  systems: SystemDef[];
  cells: readonly Cell[];
  seed: number;
  jobs: number;
  shrink: boolean;
  shrinkBudget: number;
  /** Replay one saved scenario (one system, the scenario's own cell). */
  scenario?: Scenario;
  workDir?: string;
  /** Hosts for the hosts column, or why there are none (cross-host.ts). */
  hosts?: HostsSetting;
  onCellDone?: (system: string, cellId: string) => void;
  onShrink?: (system: string, property: string) => void;
  onSystemError?: (system: string, error: unknown) => void;
  /** Systems of the selection left out before the campaign (NOT RUN), named in the report with the reason. */
  notRun?: { system: string; reason: string }[];
}

export interface CampaignResult {
  report: Report;
  timing: ReportTiming;
  /** Systems that could not run at all (adapter did not start), with the reason. */
  unavailable: { system: string; reason: string }[];
}

export function quickSystems(): SystemDef[] {
  return SYSTEMS.filter((s) => s.quick);
}

/** Every system this machine can run (systems that need a server are left out without it: see systemsNotRunnable). */
export function allSystems(env: NodeJS.ProcessEnv = process.env): SystemDef[] {
  return SYSTEMS.filter((s) => whyNotRunnable(s, env) === null);
}

/** Each id once, in the order first given (a repeated id would run, and count, twice). */
function distinct(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

/** The cells named by `ids` (all cells when none), each once; an unknown or empty id is a usage error. */
export function parseCells(ids: string[] | undefined): readonly Cell[] {
  if (ids === undefined || ids.length === 0) return ALL_CELLS;
  return distinct(ids.map((id) => id.trim())).map((id) => {
    if (id === '') throw new UsageError('--cell: an empty cell id (cells are listed in conformance/README.md, "Cell catalogue")');
    try {
      return findCell(id);
    } catch (error) {
      throw new UsageError(`--cell: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

/**
 * The systems named by `ids`, each once (two copies of one system would run at once in the same
 * cell folders and see each other's files); an unknown or empty id is a usage error.
 */
export function parseSystems(ids: string[]): SystemDef[] {
  return distinct(ids.map((id) => id.trim())).map((id) => {
    if (id === '') throw new UsageError(`--system: an empty system id; known: ${SYSTEMS.map((s) => s.id).join(', ')}`);
    try {
      return findSystem(id);
    } catch (error) {
      throw new UsageError(`--system: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

export interface SystemSelection {
  systems: SystemDef[];
  /** Systems of the selection that cannot run here, with the reason ("NOT RUN <system>: <reason>"). */
  notRun: { system: string; reason: string }[];
}

/**
 * The systems a run measures. Named systems (`--system`) must all be runnable (an error names the
 * one that is not); the quick profile and `--full` leave out the systems this machine cannot run
 * (a server URL or a Python virtual environment is missing) and list them with the reason.
 */
export function selectSystems(options: { full?: boolean; system?: string }, env: NodeJS.ProcessEnv = process.env): SystemSelection {
  if (options.system !== undefined) {
    const systems = parseSystems(options.system.split(','));
    for (const s of systems) {
      const why = whyNotRunnable(s, env);
      if (why !== null) throw new Error(`system ${s.id} cannot run here: ${why}`);
    }
    return { systems, notRun: [] };
  }
  const wanted = options.full === true ? [...SYSTEMS] : quickSystems();
  const notRun = wanted.flatMap((s) => {
    const reason = whyNotRunnable(s, env);
    return reason === null ? [] : [{ system: s.id, reason }];
  });
  return { systems: wanted.filter((s) => !notRun.some((n) => n.system === s.id)), notRun };
}

/**
 * A saved scenario (a reproduction file), checked before anything runs: a file that cannot be read,
 * is not JSON, does not match the format, names an unknown cell or has no coherent schedule (no
 * steps at all: nothing would run, and every property would "hold") is a usage error naming the file.
 */
export function loadScenario(file: string): Scenario {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`scenario file ${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`scenario file ${file} is not JSON: ${(error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ')}`);
  }
  const parsed = ScenarioSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`scenario file ${file}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  try {
    findCell(parsed.data.cellId);
  } catch (error) {
    throw new UsageError(`scenario file ${file}: cellId: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (parsed.data.steps.length === 0) throw new UsageError(`scenario file ${file}: steps is empty: the scenario would run nothing`);
  if (!stepsAreCoherent(parsed.data.steps)) {
    throw new UsageError(`scenario file ${file}: steps [${parsed.data.steps.join(', ')}] are not a schedule the runner can follow (a step on the main run needs 'start', one on the baseline needs 'baseline', 'resume-duplicate' needs a first resume)`);
  }
  return parsed.data;
}

async function runLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(workers);
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const startedMs = Date.now();
  const workDir = options.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'remit-conformance-'));
  const profiles = new Map<string, SystemProfile>();
  const timings: ProfileTiming[] = [];
  const unavailable: { system: string; reason: string }[] = [];
  // Each system and cell once: two copies of a system would run at once in the same cell folders.
  const systems = options.systems.filter((s, i, all) => all.findIndex((x) => x.id === s.id) === i);
  const cells = options.scenario === undefined ? options.cells.filter((c, i, all) => all.findIndex((x) => x.id === c.id) === i) : [findCell(options.scenario.cellId)];
  try {
    await runLimited(systems, options.jobs, async (def) => {
      try {
        const { profile, timing } = await runProfile(def, cells, {
          seed: options.seed,
          workDir,
          shrink: options.shrink,
          shrinkBudget: options.shrinkBudget,
          ...(options.onCellDone === undefined ? {} : { onCellDone: options.onCellDone }),
          ...(options.onShrink === undefined ? {} : { onShrink: options.onShrink }),
          ...(options.scenario === undefined ? {} : { scenarioOverride: options.scenario }),
          ...(options.hosts === undefined ? {} : { hosts: options.hosts }),
        });
        profiles.set(def.id, profile);
        timings.push(timing);
      } catch (error) {
        unavailable.push({ system: def.id, reason: error instanceof Error ? error.message : String(error) });
        options.onSystemError?.(def.id, error);
      }
    });
  } finally {
    if (options.workDir === undefined) fs.rmSync(workDir, { recursive: true, force: true });
  }
  // Report order follows the system list, not completion order, so reports stay identical.
  const ordered = systems.flatMap((s) => {
    const p = profiles.get(s.id);
    return p === undefined ? [] : [p];
  });
  // Never silent: systems left out before the campaign and those whose adapter could not run are in the report.
  const notRun = [...(options.notRun ?? []), ...systems.flatMap((s) => unavailable.filter((u) => u.system === s.id)).map((u) => ({ system: u.system, reason: u.reason.split('\n')[0] ?? '' }))];
  const report = buildReport(options.seed, options.mode, ordered, notRun);
  const timing: ReportTiming = {
    startedAt: new Date(startedMs).toISOString(),
    totalMs: Date.now() - startedMs,
    systems: systems.flatMap((s) => timings.filter((t) => t.system === s.id)),
  };
  return { report, timing, unavailable };
}
