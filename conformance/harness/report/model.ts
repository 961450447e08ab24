/**
 * The report: profiles of every system run, plus what is needed to reproduce each violation.
 * Deterministic by construction (no times, pids or paths): the same seed gives the same report.
 * Run times are kept apart (timing.json, the terminal) for that reason.
 */
import { CONCURRENCY_CELLS, FAULT_CELLS, FAULT_KINDS, FAULT_POINTS, type Cell } from '../cells.js';
import { PROPERTIES, type PropertyId } from '../checkers/index.js';
import type { CellResult, ProfileTiming, SystemProfile } from '../profile.js';
import type { GeneratedSection } from '../generated/campaign.js';
import { cellSlug } from '../runner.js';
import { compareWithStudy, type StudyComparison } from './study.js';

export const REPORT_FORMAT = 'remit-conformance-report/2';

export interface Report {
  format: typeof REPORT_FORMAT;
  seed: number;
  mode: string;
  properties: readonly PropertyId[];
  catalogue: { faultCells: number; concurrencyCells: number; faultPoints: string[]; faultKinds: readonly string[] };
  systems: SystemProfile[];
  /** Our verdicts next to the study's published findings (report/study.ts). */
  study: StudyComparison;
  /** The generated-workflow campaign (harness/generated/), when it ran. */
  generated?: GeneratedSection;
  /** Systems of the selection that did not run, with the reason (never left out silently). */
  notRun: NotRunSystem[];
}

export interface NotRunSystem {
  system: string;
  reason: string;
}

export interface ReportTiming {
  startedAt: string;
  totalMs: number;
  systems: ProfileTiming[];
  /** Wall time of the generated-workflow campaign, per system. */
  generated?: Array<{ system: string; durationMs: number; cells: number; processesSpawned: number }>;
}

export function buildReport(seed: number, mode: string, systems: SystemProfile[], notRun: NotRunSystem[] = []): Report {
  return {
    format: REPORT_FORMAT,
    seed,
    mode,
    properties: PROPERTIES,
    catalogue: {
      faultCells: FAULT_CELLS.length,
      concurrencyCells: CONCURRENCY_CELLS.length,
      faultPoints: FAULT_POINTS.map((p) => p.name),
      faultKinds: FAULT_KINDS,
    },
    systems,
    study: compareWithStudy(systems, seed, rerunCommand),
    notRun,
  };
}

export type CellVerdict = 'holds' | 'violated' | 'not-applicable';

/** A cell's overall verdict: violated if any property is, holds if any holds and none is violated. */
export function cellVerdict(cell: CellResult): CellVerdict {
  const statuses = Object.values(cell.verdicts).map((v) => v.status);
  if (statuses.includes('violated')) return 'violated';
  if (statuses.includes('holds')) return 'holds';
  return 'not-applicable';
}

export function violatedProperties(cell: CellResult): PropertyId[] {
  return PROPERTIES.filter((p) => cell.verdicts[p].status === 'violated');
}

export function reproPath(system: string, cellId: string): string {
  return `repro/${system}/${cellSlug(cellId)}.json`;
}

export function smallestPath(system: string, property: PropertyId): string {
  return `repro/${system}/smallest-${property}.json`;
}

/** A file of the reports folder as a command names it: `reportsDir` (--out as given) joined with its relative path. */
export function reportFile(reportsDir: string, relative: string): string {
  const dir = reportsDir.replace(/\/+$/, '');
  return dir === '' || dir === '.' ? relative : `${dir}/${relative}`;
}

export function rerunCommand(system: string, cellId: string, seed: number): string {
  return `npm start -- --system ${system} --cell '${cellId}' --seed ${seed}`;
}

export function replayCommand(system: string, scenarioFile: string): string {
  return `npm start -- --system ${system} --scenario ${scenarioFile}`;
}

export const PROPERTY_LABELS: Record<PropertyId, string> = {
  'prefix-continuation': 'Prefix continuation',
  'effect-exactly-once': 'Effect exactly-once',
  'fork-determinism': 'Fork determinism',
  'checkpoint-validity': 'Checkpoint validity',
  'consume-once': 'Consume-once',
  'recovery-determinism': 'Recovery determinism',
  'fork-intent': 'Fork-intent obligation',
  liveness: 'Liveness',
};

/** Short tags for matrix cells. */
export const PROPERTY_TAGS: Record<PropertyId, string> = {
  'prefix-continuation': 'PC',
  'effect-exactly-once': 'EO',
  'fork-determinism': 'FD',
  'checkpoint-validity': 'CV',
  'consume-once': 'CO',
  'recovery-determinism': 'RD',
  'fork-intent': 'FI',
  liveness: 'LV',
};

export function summaryText(profile: SystemProfile, property: PropertyId): string {
  const s = profile.properties[property];
  const applicable = s.holds + s.violated;
  if (s.status === 'not-applicable') return 'n/a';
  if (s.status === 'holds') return `holds ${s.holds}/${applicable}`;
  return `VIOLATED ${s.violated}/${applicable}`;
}

export function cellsOf(profile: SystemProfile, matrix: Cell['matrix']): CellResult[] {
  return profile.cells.filter((c) => c.matrix === matrix);
}

export function saturationText(cell: CellResult): string {
  if (cell.race !== undefined) return `${cell.race.handlerCalls} charge call(s) by ${cell.race.k} recoverers`;
  return cell.saturation === null ? '' : `${cell.saturation.fires}/${cell.saturation.k}`;
}

export const RECOVER_LABEL = 'recover: k recoverers of one run crashed right after its EFFECT_INTENT, at once';

/** The study comparison's mark for one (system, property) verdict of the profile table. */
export function studyMark(report: Report, system: string, property: PropertyId): string {
  const v = report.study.verdicts.find((x) => x.system === system && x.property === property);
  return v === undefined ? 'not measured by the study' : v.status;
}
