/**
 * Runs cells for one system, judges each with every checker, and folds the verdicts into the
 * system's conformance profile. A violated property gets its smallest reproducing scenario by
 * shrinking the first violated cell's scenario (fewer steps, smaller k), re-running each candidate.
 */
import path from 'node:path';
import type { Cell } from './cells.js';
import { CHECKERS, checkAll, PROPERTIES, type PropertyId, type Verdict } from './checkers/index.js';
import { NO_HOSTS, hostSpec, rootSpec, type HostsPools, type HostsSetting } from './cross-host.js';
import type { CellRun } from './observations.js';
import type { HelloResult } from './protocol.js';
import { applicability, armedFault, cellSlug, runScenario, SystemPool } from './runner.js';
import { cellSeed, generateScenario, type Scenario, type StepName } from './scenario.js';
import { adapterSpec, REPO_ROOT, type SystemDef } from './systems.js';
import { GATED_EFFECT_NODE } from './workflow.js';

export interface Saturation {
  fires: number;
  k: number;
}

export interface CellResult {
  cellId: string;
  matrix: 'fault' | 'concurrency';
  applicable: boolean;
  /** Why the whole cell is not applicable (the system has no such point, kind or mode). */
  reason: string | null;
  verdicts: Record<PropertyId, Verdict>;
  saturation: Saturation | null;
  /** Recoverer cells only: how many of the k recoverers got the run's status back, and how many times charge's handler ran while they did. */
  race?: { progressed: number; k: number; handlerCalls: number };
  scenario: Scenario;
}

export interface Reproduction {
  cellId: string;
  scenario: Scenario;
  /** How many re-runs shrinking took, and what it removed. */
  shrinkRuns: number;
  removed: string[];
  evidence: string[];
}

export interface PropertySummary {
  status: 'holds' | 'violated' | 'not-applicable';
  holds: number;
  violated: number;
  notApplicable: number;
  smallest: Reproduction | null;
}

export interface SystemProfile {
  system: string;
  label: string;
  canary: boolean;
  variant: string;
  versions: Record<string, string>;
  cells: CellResult[];
  properties: Record<PropertyId, PropertySummary>;
}

export interface ProfileTiming {
  system: string;
  durationMs: number;
  processesSpawned: number;
  cells: number;
}

export interface ProfileOptions {
  seed: number;
  workDir: string;
  shrink: boolean;
  /** At most this many re-runs per shrunk property. */
  shrinkBudget: number;
  onCellDone?: (system: string, cellId: string) => void;
  /** Shrinking a violated property to its smallest scenario has started. */
  onShrink?: (system: string, property: PropertyId) => void;
  /** Replace the generated scenario of a cell (replaying a saved reproduction). */
  scenarioOverride?: Scenario;
  /** Hosts for the hosts column, or why there are none (default: none, with NO_HOSTS's reason). */
  hosts?: HostsSetting;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Evidence must not carry ids that change from run to run, or the same seed gives another report. */
function stable(text: string, workDir: string): string {
  return text.split(workDir).join('<work>').replace(UUID, '<id>').replace(/\bpid \d+/g, 'pid <n>');
}

function stabilize(verdict: Verdict, workDir: string): Verdict {
  if (verdict.status === 'violated') return { status: 'violated', evidence: verdict.evidence.map((e) => stable(e, workDir)) };
  if (verdict.status === 'holds') return { status: 'holds', notes: verdict.notes.map((e) => stable(e, workDir)) };
  return { status: 'not-applicable', reason: stable(verdict.reason, workDir) };
}

function allNotApplicable(reason: string): Record<PropertyId, Verdict> {
  return Object.fromEntries(PROPERTIES.map((p) => [p, { status: 'not-applicable', reason }])) as Record<PropertyId, Verdict>;
}

function raceOf(run: CellRun): { progressed: number; k: number; handlerCalls: number } | null {
  const r = run.steps.recoverConcurrent;
  if (r === undefined) return null;
  const progressed = r.outcomes.filter((o) => o?.outcome === 'parked' || o?.outcome === 'completed').length;
  const handlerCalls = run.sink.slice(r.window.from, r.window.to).filter((l) => l.t === 'invoke' && l.node === 'charge').length;
  return { progressed, k: r.outcomes.length, handlerCalls };
}

function saturationOf(run: CellRun): Saturation | null {
  const c = run.steps.resumeConcurrent;
  if (c === undefined) return null;
  const fires = run.sink.slice(c.window.from, c.window.to).filter((l) => l.t === 'invoke' && l.node === GATED_EFFECT_NODE).length;
  return { fires, k: c.outcomes.length };
}

export function judge(run: CellRun, workDir: string): Record<PropertyId, Verdict> {
  const fault = armedFault(run.scenario, run.hello);
  if (fault !== null && !run.faultsFired.some((e) => e.point === fault.point)) {
    return allNotApplicable(`the armed fault point ${fault.point} was never reached in this schedule`);
  }
  const verdicts = checkAll(run);
  for (const p of PROPERTIES) verdicts[p] = stabilize(verdicts[p], workDir);
  return verdicts;
}

export class SystemRunner {
  readonly pool: SystemPool;
  readonly hosts: HostsPools | null;
  private readonly hostsUnavailable: string | null;
  private hello: HelloResult | null = null;

  constructor(
    readonly def: SystemDef,
    readonly options: ProfileOptions,
  ) {
    const spec = adapterSpec(def, path.join(options.workDir, def.id));
    this.pool = new SystemPool(spec, REPO_ROOT);
    const hosts = options.hosts ?? NO_HOSTS;
    if ('plan' in hosts) {
      const { plan } = hosts;
      this.hosts = {
        plan,
        root: new SystemPool(rootSpec(spec, plan.rootEnv), REPO_ROOT),
        hosts: plan.namespaces.map((ns) => new SystemPool(hostSpec(spec, ns, plan.hostEnv), REPO_ROOT)),
      };
      this.hostsUnavailable = null;
    } else {
      this.hosts = null;
      this.hostsUnavailable = hosts.unavailable;
    }
  }

  /** Adapter processes started for this system, on every host. */
  get spawned(): number {
    return this.pool.spawned + (this.hosts === null ? 0 : this.hosts.root.spawned + this.hosts.hosts.reduce((n, p) => n + p.spawned, 0));
  }

  async init(): Promise<HelloResult> {
    this.hello ??= await this.pool.init();
    return this.hello;
  }

  async runCell(cell: Cell, scenario: Scenario): Promise<{ result: CellResult; run: CellRun | null }> {
    const hello = await this.init();
    const app = applicability(hello, cell, this.hostsUnavailable);
    if (!app.applicable) {
      const result = { cellId: cell.id, matrix: cell.matrix, applicable: false, reason: app.reason, verdicts: allNotApplicable(app.reason), saturation: null, scenario };
      return { result, run: null };
    }
    const cellDir = path.join(this.options.workDir, this.def.id, cellSlug(cell.id));
    const run = await runScenario(this.pool, scenario, { cellDir, hosts: this.hosts });
    const verdicts = judge(run, this.options.workDir);
    const race = raceOf(run);
    const result: CellResult = { cellId: cell.id, matrix: cell.matrix, applicable: true, reason: null, verdicts, saturation: saturationOf(run), ...(race === null ? {} : { race }), scenario };
    return { result, run };
  }

  async close(): Promise<void> {
    const pools = [this.pool, ...(this.hosts === null ? [] : [this.hosts.root, ...this.hosts.hosts])];
    await Promise.all(pools.map((p) => p.closeAll()));
  }
}

/** The steps a property's checker reads; shrinking tries this subset first. */
const RELEVANT_STEPS: Record<PropertyId, StepName[][]> = {
  'prefix-continuation': [['baseline', 'start', 'resume', 'resume-concurrent'], ['start', 'resume', 'resume-concurrent']],
  'effect-exactly-once': [['start', 'resume', 'resume-concurrent']],
  'fork-determinism': [['start', 'resume', 'fork-twice']],
  'checkpoint-validity': [['probe-invalid-resume'], ['probe-invalid-state'], ['baseline', 'probe-corruption'], ['start', 'resume', 'resume-concurrent']],
  'consume-once': [['start', 'resume-concurrent'], ['start', 'resume', 'resume-duplicate']],
  'recovery-determinism': [['start', 'resume', 'resume-concurrent', 'recover-twice']],
  'fork-intent': [['baseline', 'continue-from-older']],
  liveness: [['probe-definition-change'], ['start', 'resume', 'resume-concurrent']],
};

function withSteps(scenario: Scenario, keep: (step: StepName, index: number) => boolean): Scenario {
  return { ...scenario, steps: scenario.steps.filter(keep) };
}

/** Steps that act on the main run need it started; steps on the baseline run need the baseline. */
export function stepsAreCoherent(steps: readonly StepName[]): boolean {
  const needsStart: StepName[] = ['resume', 'resume-concurrent', 'resume-duplicate', 'recover-twice', 'fork-twice'];
  const needsBaseline: StepName[] = ['continue-from-older', 'probe-corruption'];
  if (steps.some((s) => needsStart.includes(s)) && !steps.includes('start')) return false;
  if (steps.some((s) => needsBaseline.includes(s)) && !steps.includes('baseline')) return false;
  // A duplicate resume is only a duplicate after a first one.
  if (steps.includes('resume-duplicate') && !steps.includes('resume') && !steps.includes('resume-concurrent')) return false;
  return steps.length > 0;
}

/** Evidence with numbers blanked: a shrunk run must fail the same way, not some other way. */
function signature(evidence: string): string {
  return evidence.replace(/\d+(\.\d+)?/g, '#');
}

export function sameFailure(original: readonly string[], candidate: readonly string[]): boolean {
  const wanted = new Set(original.map(signature));
  return candidate.some((e) => wanted.has(signature(e)));
}

/** Candidate reductions, biggest first: smaller k, the property's own steps, halves, quarters, single steps. */
function reductions(scenario: Scenario, property: PropertyId): { scenario: Scenario; removed: string }[] {
  const out: { scenario: Scenario; removed: string }[] = [];
  // The most telling reduction: the violation needs no fault at all.
  if (scenario.fault !== null) out.push({ scenario: { ...scenario, fault: null }, removed: 'the fault' });
  const c = scenario.concurrency;
  if (c !== null) {
    for (const k of [2, 4, 8].filter((k) => k < c.k)) {
      out.push({ scenario: { ...scenario, concurrency: { ...c, k, values: c.values.slice(0, k) } }, removed: `k ${c.k} -> ${k}` });
    }
  }
  const steps = scenario.steps;
  for (const relevant of RELEVANT_STEPS[property]) {
    const kept = steps.filter((s) => relevant.includes(s));
    if (kept.length > 0 && kept.length < steps.length) {
      out.push({ scenario: withSteps(scenario, (s) => relevant.includes(s)), removed: `steps other than ${kept.join(', ')}` });
    }
  }
  for (const parts of [2, 4]) {
    const size = Math.ceil(steps.length / parts);
    if (size <= 1) continue;
    for (let from = 0; from < steps.length; from += size) {
      const chunk = steps.slice(from, from + size);
      out.push({ scenario: withSteps(scenario, (_s, i) => i < from || i >= from + size), removed: `steps ${chunk.join(', ')}` });
    }
  }
  for (const step of [...steps].reverse()) {
    out.push({ scenario: withSteps(scenario, (s) => s !== step), removed: `step ${step}` });
  }
  return out;
}

export async function shrink(
  runner: SystemRunner,
  cell: Cell,
  property: PropertyId,
  start: Scenario,
  budget: number,
): Promise<Reproduction> {
  let current = start;
  let evidence: string[] = [];
  const original = await runner.runCell(cell, start);
  const originalVerdict = original.result.verdicts[property];
  const originalEvidence = originalVerdict.status === 'violated' ? originalVerdict.evidence : [];
  const removed: string[] = [];
  let runs = 1;
  let improved = originalEvidence.length > 0;
  while (improved && runs < budget) {
    improved = false;
    for (const candidate of reductions(current, property)) {
      if (runs >= budget) break;
      if (!stepsAreCoherent(candidate.scenario.steps)) continue;
      runs++;
      const { result } = await runner.runCell(cell, candidate.scenario);
      const verdict = result.verdicts[property];
      if (verdict.status === 'violated' && sameFailure(originalEvidence, verdict.evidence)) {
        current = candidate.scenario;
        evidence = verdict.evidence;
        removed.push(candidate.removed);
        improved = true;
        break;
      }
    }
  }
  if (evidence.length === 0) {
    evidence = originalEvidence.length > 0 ? originalEvidence : [`not reproduced on re-run: ${originalVerdict.status}`];
  }
  return { cellId: cell.id, scenario: current, shrinkRuns: runs, removed, evidence };
}

export function summarize(cells: CellResult[]): Record<PropertyId, PropertySummary> {
  const out = {} as Record<PropertyId, PropertySummary>;
  for (const property of PROPERTIES) {
    const verdicts = cells.map((c) => c.verdicts[property]);
    const holds = verdicts.filter((v) => v.status === 'holds').length;
    const violated = verdicts.filter((v) => v.status === 'violated').length;
    const notApplicable = verdicts.length - holds - violated;
    const status = violated > 0 ? 'violated' : holds > 0 ? 'holds' : 'not-applicable';
    out[property] = { status, holds, violated, notApplicable, smallest: null };
  }
  return out;
}

export async function runProfile(def: SystemDef, cells: readonly Cell[], options: ProfileOptions): Promise<{ profile: SystemProfile; timing: ProfileTiming }> {
  const startedMs = Date.now();
  const runner = new SystemRunner(def, options);
  try {
    const hello = await runner.init();
    const results: CellResult[] = [];
    for (const cell of cells) {
      const scenario = options.scenarioOverride ?? generateScenario(cell.id, cellSeed(options.seed, cell.id));
      const { result } = await runner.runCell(cell, scenario);
      results.push(result);
      options.onCellDone?.(def.id, cell.id);
    }
    const properties = summarize(results);
    if (options.shrink) {
      for (const property of PROPERTIES) {
        const first = results.find((r) => r.verdicts[property].status === 'violated');
        const cell = cells.find((c) => c.id === first?.cellId);
        if (first === undefined || cell === undefined) continue;
        options.onShrink?.(def.id, property);
        properties[property].smallest = await shrink(runner, cell, property, first.scenario, options.shrinkBudget);
        const reproduction = properties[property].smallest;
        if (reproduction !== null) reproduction.evidence = reproduction.evidence.map((e) => stable(e, options.workDir));
      }
    }
    const profile: SystemProfile = {
      system: def.id,
      label: def.label,
      canary: def.canary,
      variant: hello.variant,
      versions: hello.versions,
      cells: results,
      properties,
    };
    return { profile, timing: { system: def.id, durationMs: Date.now() - startedMs, processesSpawned: runner.spawned, cells: cells.length } };
  } finally {
    await runner.close();
  }
}

export { CHECKERS };
