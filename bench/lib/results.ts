/**
 * The results document (bench/results/latest.json). Keys are stable and documented in
 * bench/README.md ("Results JSON"); add keys, never rename them. Times are milliseconds, sizes bytes,
 * rates per second; every rate is derived from a median time measured in the same process run.
 */

import fs from 'node:fs';
import type { Summary } from './stats.js';
import type { MachineDescription } from './machine.js';

export const RESULTS_SCHEMA = 'remit-bench/1';

export type SuiteName = 'recovery' | 'resume' | 'commit' | 'gate' | 'storage' | 'step-cost' | 'wasm-memory';
export const SUITE_NAMES: readonly SuiteName[] = ['recovery', 'resume', 'commit', 'gate', 'storage', 'step-cost', 'wasm-memory'];

/** How a row skipped for its suite's time budget is marked (in its note; its status is unavailable). */
export const NOT_RUN_BUDGET = 'not run (budget)';
/** The commit suite's REMIT task with groupPureSteps: false at NORMAL (one commit per step), beside the grouped one. */
export const ONE_COMMIT_PER_STEP = 'remit:one-commit-per-step';

/** subject: one of ours or a competitor; limit: what the hardware/runtime allows (the yardstick). */
export type Role = 'subject' | 'limit' | 'competitor';

export interface ResultRow {
  suite: SuiteName;
  /** Human-readable case, e.g. "records=10000" or "N=100". */
  case: string;
  /** The workload parameters of the case (numbers where they are counts). */
  params: Record<string, number | string>;
  impl: string;
  role: Role;
  status: 'measured' | 'unavailable' | 'error';
  /** Why a row is unavailable or errored, or what a reader must know to read it. */
  note?: string;
  /** Time per operation (ms) over the pooled samples; absent for size-only rows. */
  time_ms?: Summary;
  /** Derived figures with units in their names (records_per_s, bytes_on_disk, ...). */
  metrics: Record<string, number>;
  /**
   * Ratios to other rows of the same case, named "<metric>_vs_<impl>". For times and rates the
   * ratio is a speed ratio: baseline median time / this median time (above 1 = faster).
   */
  ratios: Record<string, number>;
}

export interface TargetReport {
  id: string;
  goal: string;
  /** The measured figure the goal is about, with its unit in `unit`. */
  measured: number | null;
  unit: string;
  met: boolean | null;
  note: string;
}

/** How and when one suite's rows were measured (a document can merge suites of several runs). */
export interface SuiteRun {
  profile: 'quick' | 'full';
  command: string;
  started_at: string;
  git_commit: string;
  git_dirty: boolean;
  load_avg_at_start: number[];
  load_avg_at_end: number[];
}

export interface SuiteReport {
  name: SuiteName;
  status: 'measured' | 'partial' | 'skipped';
  duration_s: number;
  notes: string[];
  rows: ResultRow[];
  /** The run that measured this suite; absent in documents written before suites were merged. */
  run?: SuiteRun;
}

/**
 * A run of some suites only, merged into the document it would otherwise overwrite: its suites
 * replace those of the same name, the other suites are kept with the run that measured them
 * (filled from the old document's own fields when they have none), in SUITE_NAMES order. A suite
 * that failed (skipped) replaces only a suite that had failed too, or none.
 */
export function mergeSuites(previous: ResultsDocument, current: ResultsDocument): ResultsDocument {
  // A suite that failed in this run does not wipe out the figures an earlier run measured.
  const measuredBefore = new Set(previous.suites.filter((s) => s.status !== 'skipped').map((s) => s.name));
  const replacing = current.suites.filter((s) => s.status !== 'skipped' || !measuredBefore.has(s.name));
  const fresh = new Set(replacing.map((s) => s.name));
  const kept = previous.suites
    .filter((s) => !fresh.has(s.name))
    .map((s) => ({ ...s, run: s.run ?? runOfDocument(previous) }));
  const suites = [...kept, ...replacing].sort((a, b) => SUITE_NAMES.indexOf(a.name) - SUITE_NAMES.indexOf(b.name));
  return { ...current, suites };
}

export function runOfDocument(doc: ResultsDocument): SuiteRun {
  return {
    profile: doc.profile,
    command: doc.command,
    started_at: doc.started_at,
    git_commit: doc.machine.git_commit,
    git_dirty: doc.machine.git_dirty,
    load_avg_at_start: doc.machine.load_avg_at_start,
    load_avg_at_end: doc.machine.load_avg_at_end,
  };
}

export interface ResultsDocument {
  schema: typeof RESULTS_SCHEMA;
  profile: 'quick' | 'full';
  started_at: string;
  finished_at: string;
  duration_s: number;
  command: string;
  machine: MachineDescription;
  suites: SuiteReport[];
  targets: TargetReport[];
}

/** A latest.json that cannot be read as a results document: bench/run.ts prints it on one line and exits 2. */
export class ResultsFileError extends Error {}

/**
 * The results document in `file`, or ResultsFileError saying what is wrong with it (missing, not
 * JSON, another schema): `--render` reads one, and a run of some suites merges into one, so the
 * bench checks it before any suite runs rather than failing after them.
 */
export function readResultsDocument(file: string): ResultsDocument {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new ResultsFileError(missing ? `${file} does not exist (run a suite first, or give --out the folder that holds latest.json)`
      : `${file}: cannot be read (${(e as Error).message.split('\n')[0]})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new ResultsFileError(`${file}: not JSON (${(e as Error).message.split('\n')[0]})`);
  }
  const schema = (doc as { schema?: unknown } | null)?.schema;
  if (schema !== RESULTS_SCHEMA || !Array.isArray((doc as { suites?: unknown }).suites)) {
    throw new ResultsFileError(`${file}: not a results document of schema ${RESULTS_SCHEMA} (schema ${JSON.stringify(schema ?? null)})`);
  }
  return doc as ResultsDocument;
}

export function row(partial: Omit<ResultRow, 'metrics' | 'ratios' | 'status'> & Partial<ResultRow>): ResultRow {
  return { status: 'measured', metrics: {}, ratios: {}, ...partial };
}

export function unavailableRow(
  suite: SuiteName, caseName: string, params: ResultRow['params'], impl: string, role: Role, note: string,
): ResultRow {
  return { suite, case: caseName, params, impl, role, status: 'unavailable', note, metrics: {}, ratios: {} };
}

/** Speed ratio baseline/self from median times; undefined when either is missing. */
export function speedRatio(self: ResultRow | undefined, baseline: ResultRow | undefined): number | undefined {
  const a = self?.time_ms?.median;
  const b = baseline?.time_ms?.median;
  if (a === undefined || b === undefined || a <= 0) return undefined;
  return b / a;
}
