/**
 * The generated-workflow campaign: for each system, generated workflows, each run as one cell
 * under one fault (kinds in turn: SIGKILL, a thrown error, a store error; at a point the run
 * reaches, chosen at random among its occurrences), judged by ./checkers.ts against the model,
 * until `count` cells had a fault. A workflow whose input is refused reaches no fault point: it is
 * run and judged too (the refusal is checked), but not counted among the faulted cells.
 * The first violation of each property is shrunk (fault removed, optional steps dropped, loops and
 * operations removed) to a smaller scenario that still fails the same way, kept as data.
 *
 * The section it returns is deterministic (no times, pids or paths); wall time goes to the timing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROPERTIES, type PropertyId, type Verdict } from '../checkers/verdict.js';
import { sameFailure } from '../profile.js';
import { cellSlug, SystemPool } from '../runner.js';
import { adapterSpec, REPO_ROOT, type SystemDef } from '../systems.js';
import { UsageError } from '../usage.js';
import { checkGenerated } from './checkers.js';
import { expectationOf, GENERATED_FAULT_KINDS, GENERATED_SCENARIO_FORMAT, generateScenario, type GeneratedFaultKind, type GeneratedScenario, type Poison } from './generator.js';
import { ModelLimitError, type Expectation, type Final } from './model.js';
import { runGeneratedScenario, type GeneratedCellRun } from './run.js';
import { GENERATED_WORKFLOW_FORMAT, type Route } from './spec.js';

export const GENERATED_SECTION_FORMAT = 'remit-generated-campaign/1';

export interface GeneratedViolation {
  id: string;
  properties: PropertyId[];
  evidence: string[];
}

export interface GeneratedReproduction {
  property: PropertyId;
  /** The cell it was shrunk from. */
  from: string;
  scenario: GeneratedScenario;
  shrinkRuns: number;
  removed: string[];
  evidence: string[];
}

export interface GeneratedSystemSection {
  system: string;
  label: string;
  canary: boolean;
  /** Workflows tried, one cell each. */
  workflows: number;
  cells: number;
  /** Cells that ran under a fault (the campaign's count). */
  faultedCells: number;
  nodes: { pure: number; effect: number; interrupt: number };
  loops: number;
  faults: { armed: Record<string, number>; fired: number; notFired: string[] };
  /** How the model says the runs end, by kind (refusals included). */
  ends: Record<string, number>;
  poisons: Record<string, number>;
  properties: Record<PropertyId, { holds: number; violated: number; notApplicable: number }>;
  violations: GeneratedViolation[];
  reproductions: GeneratedReproduction[];
}

export interface GeneratedSection {
  format: typeof GENERATED_SECTION_FORMAT;
  seed: number;
  count: number;
  systems: GeneratedSystemSection[];
}

export interface GeneratedTiming {
  system: string;
  durationMs: number;
  cells: number;
  processesSpawned: number;
}

export interface GeneratedCampaignOptions {
  systems: SystemDef[];
  /** Faulted cells per system (a system may have its own count). */
  count: number | ((system: SystemDef) => number);
  seed: number;
  workDir: string;
  shrink: boolean;
  shrinkBudget: number;
  jobs?: number;
  onCellDone?: (system: string, id: string) => void;
}

/** The fault kind of cell `index` on a system that supports `kinds` (in turn, so each kind gets a third). */
export function faultKindFor(index: number, kinds: readonly GeneratedFaultKind[]): GeneratedFaultKind | null {
  return kinds.length === 0 ? null : kinds[index % kinds.length]!;
}

function finalKey(final: Final): string {
  return final.kind === 'stuck' ? `stuck (${final.at}, ${final.refusal.code === 'INVALID' ? 'invalid' : final.refusal.reason})` : final.kind === 'refused-at-start' ? `refused at start (${final.refusal.code === 'INVALID' ? 'invalid' : final.refusal.reason})` : final.kind;
}

class GeneratedRunner {
  readonly pool: SystemPool;
  constructor(readonly def: SystemDef, readonly workDir: string) {
    this.pool = new SystemPool(adapterSpec(def, path.join(workDir, def.id)), REPO_ROOT);
  }

  async run(scenario: GeneratedScenario, expected: Expectation): Promise<{ run: GeneratedCellRun; verdicts: Record<PropertyId, Verdict> }> {
    const run = await runGeneratedScenario(this.pool, scenario, { cellDir: path.join(this.workDir, this.def.id, cellSlug(scenario.id)) });
    return { run, verdicts: checkGenerated(run, expected) };
  }
}

export async function runGeneratedCampaign(options: GeneratedCampaignOptions): Promise<{ section: GeneratedSection; timing: GeneratedTiming[] }> {
  const sections = new Map<string, GeneratedSystemSection>();
  const timing: GeneratedTiming[] = [];
  const queue = [...options.systems];
  const workers = Array.from({ length: Math.max(1, Math.min(options.jobs ?? 1, queue.length)) }, async () => {
    for (let def = queue.shift(); def !== undefined; def = queue.shift()) {
      const started = Date.now();
      const count = typeof options.count === 'function' ? options.count(def) : options.count;
      const runner = new GeneratedRunner(def, options.workDir);
      try {
        sections.set(def.id, await runSystem(runner, count, options));
      } finally {
        await runner.pool.closeAll();
      }
      timing.push({ system: def.id, durationMs: Date.now() - started, cells: sections.get(def.id)?.cells ?? 0, processesSpawned: runner.pool.spawned });
    }
  });
  await Promise.all(workers);
  const systems = options.systems.flatMap((s) => {
    const section = sections.get(s.id);
    return section === undefined ? [] : [section];
  });
  const ordered = options.systems.flatMap((s) => timing.filter((t) => t.system === s.id));
  return { section: { format: GENERATED_SECTION_FORMAT, seed: options.seed, count: systems[0]?.faultedCells ?? 0, systems }, timing: ordered };
}

async function runSystem(runner: GeneratedRunner, count: number, options: GeneratedCampaignOptions): Promise<GeneratedSystemSection> {
  const hello = await runner.pool.init();
  const kinds = GENERATED_FAULT_KINDS.filter((k) => hello.faultKinds[k]?.supported === true);
  const section: GeneratedSystemSection = {
    system: runner.def.id, label: runner.def.label, canary: runner.def.canary, workflows: 0, cells: 0, faultedCells: 0,
    nodes: { pure: 0, effect: 0, interrupt: 0 }, loops: 0,
    faults: { armed: {}, fired: 0, notFired: [] }, ends: {}, poisons: {},
    properties: Object.fromEntries(PROPERTIES.map((p) => [p, { holds: 0, violated: 0, notApplicable: 0 }])) as GeneratedSystemSection['properties'],
    violations: [], reproductions: [],
  };
  const firstViolation = new Map<PropertyId, { scenario: GeneratedScenario; evidence: string[] }>();
  for (let index = 0; section.faultedCells < count && (kinds.length > 0 || index < count); index++) {
    const { scenario, expectation, poison } = generateScenario(options.seed, index, faultKindFor(index, kinds));
    section.workflows++;
    if (scenario.fault !== null) section.faultedCells++;
    tally(section, scenario, expectation, poison);
    const { run, verdicts } = await runner.run(scenario, expectation);
    section.cells++;
    if (scenario.fault !== null) {
      if (run.faultsFired.some((e) => e.point === scenario.fault!.point)) section.faults.fired++;
      else section.faults.notFired.push(scenario.id);
    }
    const violated: PropertyId[] = [];
    const evidence: string[] = [];
    for (const p of PROPERTIES) {
      const v = verdicts[p];
      if (v.status === 'holds') section.properties[p].holds++;
      else if (v.status === 'not-applicable') section.properties[p].notApplicable++;
      else {
        section.properties[p].violated++;
        violated.push(p);
        evidence.push(...v.evidence.map((e) => `${p}: ${e}`));
        if (!firstViolation.has(p)) firstViolation.set(p, { scenario, evidence: v.evidence });
      }
    }
    if (violated.length > 0) section.violations.push({ id: scenario.id, properties: violated, evidence: evidence.slice(0, 6) });
    options.onCellDone?.(runner.def.id, scenario.id);
  }
  if (options.shrink) {
    for (const [property, first] of firstViolation) {
      section.reproductions.push(await shrinkGenerated(runner, property, first.scenario, first.evidence, options.shrinkBudget));
    }
  }
  return section;
}

function tally(section: GeneratedSystemSection, scenario: GeneratedScenario, expectation: Expectation, poison: Poison | null): void {
  for (const node of scenario.workflow.nodes) section.nodes[node.kind]++;
  section.loops += scenario.workflow.nodes.filter((n) => 'if' in n.next && 'lt' in (n.next as Extract<Route, { if: unknown }>).if).length;
  if (scenario.fault !== null) section.faults.armed[scenario.fault.kind] = (section.faults.armed[scenario.fault.kind] ?? 0) + 1;
  const end = finalKey(expectation.final);
  section.ends[end] = (section.ends[end] ?? 0) + 1;
  const p = poison ?? 'none';
  section.poisons[p] = (section.poisons[p] ?? 0) + 1;
}

// ---------------------------------------------------------------- shrinking

function withoutLoops(scenario: GeneratedScenario): GeneratedScenario | null {
  let changed = false;
  const nodes = scenario.workflow.nodes.map((n) => {
    if ('if' in n.next && 'lt' in n.next.if) {
      changed = true;
      return { ...n, next: { to: n.next.else } };
    }
    return n;
  });
  return changed ? { ...scenario, workflow: { ...scenario.workflow, nodes } } : null;
}

/** A changed workflow gets a name of its own: an adapter process keeps the workflows it was given by name. */
function renamed(scenario: GeneratedScenario, serial: number): GeneratedScenario {
  const base = scenario.workflow.name.split('~')[0]!;
  return { ...scenario, workflow: { ...scenario.workflow, name: `${base}~${serial}` } };
}

/** Candidate reductions, biggest first. */
function reductions(scenario: GeneratedScenario): Array<{ scenario: GeneratedScenario; removed: string }> {
  const out: Array<{ scenario: GeneratedScenario; removed: string }> = [];
  let serial = Number(scenario.workflow.name.split('~')[1] ?? 0) * 100;
  if (scenario.fault !== null) out.push({ scenario: { ...scenario, fault: null }, removed: 'the fault' });
  if (scenario.fork !== null) out.push({ scenario: { ...scenario, fork: null }, removed: 'the forks' });
  if (scenario.continueFromOlder !== null) out.push({ scenario: { ...scenario, continueFromOlder: null }, removed: 'continue-from-older' });
  if (scenario.duplicateResume) out.push({ scenario: { ...scenario, duplicateResume: false }, removed: 'the duplicate resume' });
  if (scenario.recoverTwice) out.push({ scenario: { ...scenario, recoverTwice: false }, removed: 'recover-twice' });
  if (scenario.nearMissInputs.length > 0) out.push({ scenario: { ...scenario, nearMissInputs: [] }, removed: 'the near-miss inputs' });
  if (scenario.resumes.some((r) => r.nearMisses.length > 0)) {
    out.push({ scenario: { ...scenario, resumes: scenario.resumes.map((r) => ({ ...r, nearMisses: [] })) }, removed: 'the near-miss resume values' });
  }
  const flat = withoutLoops(scenario);
  if (flat !== null) out.push({ scenario: renamed(flat, ++serial), removed: 'the loops' });
  scenario.workflow.nodes.forEach((node, i) => {
    node.ops.forEach((op, j) => {
      if (op.op === 'inc' && op.field.startsWith('c')) return; // a loop's counter
      const nodes = scenario.workflow.nodes.map((n, k) => (k === i ? { ...n, ops: n.ops.filter((_, m) => m !== j) } : n));
      out.push({ scenario: renamed({ ...scenario, workflow: { ...scenario.workflow, nodes } }, ++serial), removed: `operation ${op.op} of ${node.name}` });
    });
  });
  return out;
}

/** Keep the fault on the run if its point is still reached; else the candidate is not comparable. */
function coherent(scenario: GeneratedScenario): Expectation | null {
  let expected: Expectation;
  try {
    expected = expectationOf(scenario);
  } catch (error) {
    if (error instanceof ModelLimitError) return null;
    throw error;
  }
  const fault = scenario.fault;
  if (fault !== null && (expected.points.get(fault.point) ?? 0) < fault.occurrence) return null;
  if (scenario.fork !== null && !expected.checkpoints.some((c) => c.node === scenario.fork!.after && c.occurrence === scenario.fork!.occurrence)) return null;
  if (scenario.continueFromOlder !== null && !expected.checkpoints.some((c) => c.node === scenario.continueFromOlder!.after && c.occurrence === scenario.continueFromOlder!.occurrence)) return null;
  if (scenario.fork !== null && expected.final.kind !== 'completed') return null;
  return expected;
}

export async function shrinkGenerated(
  runner: GeneratedRunner,
  property: PropertyId,
  start: GeneratedScenario,
  originalEvidence: string[],
  budget: number,
): Promise<GeneratedReproduction> {
  let current = start;
  let evidence = originalEvidence;
  const removed: string[] = [];
  let runs = 0;
  let improved = true;
  while (improved && runs < budget) {
    improved = false;
    for (const candidate of reductions(current)) {
      if (runs >= budget) break;
      const expected = coherent(candidate.scenario);
      if (expected === null) continue;
      runs++;
      const { verdicts } = await runner.run(candidate.scenario, expected);
      const v = verdicts[property];
      if (v.status === 'violated' && sameFailure(originalEvidence, v.evidence)) {
        current = candidate.scenario;
        evidence = v.evidence;
        removed.push(candidate.removed);
        improved = true;
        break;
      }
    }
  }
  return { property, from: start.id, scenario: current, shrinkRuns: runs, removed, evidence };
}

export type { GeneratedRunner };

/** A saved generated scenario (a reproduction file), checked for its format. */
export function loadGeneratedScenario(file: string): GeneratedScenario {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`generated scenario file ${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  let parsed: Partial<GeneratedScenario> | null;
  try {
    parsed = JSON.parse(text) as Partial<GeneratedScenario> | null;
  } catch (error) {
    throw new UsageError(`generated scenario file ${file} is not JSON: ${(error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ')}`);
  }
  if (parsed === null || typeof parsed !== 'object' || parsed.format !== GENERATED_SCENARIO_FORMAT || parsed.workflow?.format !== GENERATED_WORKFLOW_FORMAT) {
    throw new UsageError(`${file} is not a generated scenario (${GENERATED_SCENARIO_FORMAT} with a ${GENERATED_WORKFLOW_FORMAT} workflow)`);
  }
  return parsed as GeneratedScenario;
}

/** Run one saved generated scenario on `def` and judge it against the model. */
export async function replayGeneratedScenario(def: SystemDef, scenario: GeneratedScenario, workDir: string): Promise<Record<PropertyId, Verdict>> {
  const runner = new GeneratedRunner(def, workDir);
  try {
    await runner.pool.init();
    return (await runner.run(scenario, expectationOf(scenario))).verdicts;
  } finally {
    await runner.pool.closeAll();
  }
}
