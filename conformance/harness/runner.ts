/**
 * Runs one scenario against one system and records observations (no verdicts: checkers judge).
 * Faults are reached by the adapter at named points; when one stops a command, the runner reads
 * the durable state through a live process, then continues the run the way an operator would:
 * `continue` after a crash or error, the same resume again if the run is still parked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AdapterProcess, DEFAULT_STARTUP_MS, type AdapterSpec, type RequestResult } from './driver.js';
import { RECOVER_POINT, RECOVER_POINT_WITHOUT_INTENT, RECOVERERS_IN_PROCESS, type Cell } from './cells.js';
import { raceRecoverers, resumeAcrossHosts, type HostsPools } from './cross-host.js';
import type { CellRun, DrivenRun, FaultMoment, Incident, SinkWindow, StepObservations } from './observations.js';
import {
  ContinueManySchema,
  CorruptionProbeSchema,
  DefinitionChangeProbeSchema,
  HelloResultSchema,
  OutcomeSchema,
  ResumeManySchema,
  RunViewSchema,
  parseResult,
  type FaultEvent,
  type HelloResult,
  type Outcome,
  type Request,
  type RunView,
} from './protocol.js';
import { hasStep, type Scenario } from './scenario.js';
import { readSink } from './sink.js';
import { INVALID_RESUME_VALUE, invalidStateInput } from './workflow.js';

export const REQUEST_TIMEOUT_MS = 20_000;
const MAX_RECOVERIES = 4;

/** The live adapter processes of one system, reused across cells (each cell `open`s its own files). */
export class SystemPool {
  private readonly processes: AdapterProcess[] = [];
  hello: HelloResult | null = null;
  spawned = 0;

  constructor(
    readonly spec: AdapterSpec,
    readonly repoRoot: string,
  ) {}

  /** How long one request may take once its process is up. */
  get requestTimeoutMs(): number {
    return this.spec.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  async init(): Promise<HelloResult> {
    const [p] = await this.acquire(1);
    const res = await (p as AdapterProcess).request({ op: 'hello' }, this.requestTimeoutMs);
    if (res.kind !== 'reply') {
      throw new Error(`adapter ${this.spec.id} did not answer hello (${res.kind}): ${(p as AdapterProcess).stderr.slice(-2000)}`);
    }
    this.hello = parseResult(HelloResultSchema, this.spec.id, 'hello', res.result);
    return this.hello;
  }

  /**
   * `n` live processes, each ready (it has answered `hello`, so its imports are done); dead ones
   * are dropped and replaced. New processes start together and get the system's start-up
   * allowance, scaled by how many start at once per core. One that does not start in time is an
   * error naming the system, never a silent gap.
   */
  async acquire(n: number): Promise<AdapterProcess[]> {
    for (let i = this.processes.length - 1; i >= 0; i--) {
      if (!(this.processes[i] as AdapterProcess).alive) this.processes.splice(i, 1);
    }
    const started: AdapterProcess[] = [];
    while (this.processes.length < n) {
      const p = AdapterProcess.spawn(this.spec, this.repoRoot);
      this.processes.push(p);
      started.push(p);
      this.spawned++;
    }
    if (started.length > 0) {
      const perCore = Math.ceil(started.length / Math.max(1, os.availableParallelism()));
      const allowanceMs = (this.spec.startupMs ?? DEFAULT_STARTUP_MS) * perCore;
      const replies = await Promise.all(started.map((p) => p.request({ op: 'hello' }, allowanceMs)));
      replies.forEach((res, i) => {
        if (res.kind === 'reply') return;
        const p = started[i] as AdapterProcess;
        p.kill();
        throw new Error(
          `adapter ${this.spec.id} did not start (${res.kind}${res.kind === 'timeout' ? ` after ${allowanceMs} ms, ${started.length} starting at once` : ''}): ${p.stderr.slice(-1500)}`,
        );
      });
    }
    return this.processes.slice(0, n);
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.shutdown()));
    this.processes.length = 0;
  }
}

export type Applicability = { applicable: true } | { applicable: false; reason: string };

/**
 * Where a recoverer cell crashes the main run for this adapter: right after charge's EFFECT_INTENT,
 * or, for a system with no intent record, right after the checkpoint before charge; null if neither.
 */
export function recoverPointFor(hello: HelloResult): string | null {
  for (const point of [RECOVER_POINT, RECOVER_POINT_WITHOUT_INTENT]) if (hello.points[point]?.supported === true) return point;
  return null;
}

/** The fault a cell arms in this adapter: the scenario's, with a recoverer cell's point as recoverPointFor says. */
export function armedFault(scenario: Scenario, hello: HelloResult): Scenario['fault'] {
  if (scenario.fault === null || scenario.concurrency?.race !== 'recover') return scenario.fault;
  return { ...scenario.fault, point: recoverPointFor(hello) ?? scenario.fault.point };
}

/** `hostsUnavailable`: why this run has no hosts (hosts cells are then not applicable), or null. */
export function applicability(hello: HelloResult, cell: Cell, hostsUnavailable: string | null = null): Applicability {
  if (cell.matrix === 'fault') {
    const point = hello.points[cell.point];
    if (point === undefined) return { applicable: false, reason: `the adapter does not know point ${cell.point}` };
    if (!point.supported) return { applicable: false, reason: point.reason };
    const kind = hello.faultKinds[cell.kind];
    if (kind === undefined || !kind.supported) {
      return { applicable: false, reason: kind?.supported === false ? kind.reason : `fault kind ${cell.kind} unsupported` };
    }
    return { applicable: true };
  }
  const mode = hello.concurrency[cell.mode];
  if (mode === undefined || !mode.supported) {
    return { applicable: false, reason: mode?.supported === false ? mode.reason : `the adapter does not declare ${cell.mode} concurrency` };
  }
  if (cell.mode === 'hosts' && hostsUnavailable !== null) return { applicable: false, reason: hostsUnavailable };
  if (cell.values === 'recover') {
    if (hello.faultKinds.sigkill?.supported !== true) {
      return { applicable: false, reason: 'the recoverer cells crash the run with SIGKILL, which the adapter does not support' };
    }
    if (recoverPointFor(hello) === null) {
      return { applicable: false, reason: `the adapter supports neither ${RECOVER_POINT} nor ${RECOVER_POINT_WITHOUT_INTENT}` };
    }
    // k continue calls at once in one process need the continueMany request; an adapter that does
    // not declare it answers only the process and hosts recoverer cells (plain continue requests).
    const many = hello.concurrency[RECOVERERS_IN_PROCESS];
    if (cell.mode === 'in-process' && (many === undefined || !many.supported)) {
      return { applicable: false, reason: many?.supported === false ? many.reason : `the adapter does not declare "${RECOVERERS_IN_PROCESS}" (continueMany)` };
    }
  }
  return { applicable: true };
}

export function cellSlug(cellId: string): string {
  return cellId.replace(/[^a-zA-Z0-9._-]+/g, '_');
}

export class CellContext {
  readonly incidents: Incident[] = [];
  readonly faults: FaultMoment[] = [];
  readonly faultsFired: FaultEvent[] = [];
  readonly steps: StepObservations = {};
  primary: AdapterProcess | null = null;

  constructor(
    readonly pool: SystemPool,
    readonly scenario: Scenario,
    readonly storePath: string,
    readonly sinkPath: string,
    /** Hosts cells: the hosts' processes (the recover race, a second reader on another host). */
    readonly hosts: HostsPools | null = null,
  ) {}

  get system(): string {
    return this.pool.spec.id;
  }

  sinkCount(): number {
    return readSink(this.sinkPath).lines.length;
  }

  get timeoutMs(): number {
    return this.pool.requestTimeoutMs;
  }

  /** `replica`: the role this process plays (protocol.ts, `open`); a restarted primary is the same replica. */
  async open(p: AdapterProcess, step: string, replica = 'primary'): Promise<boolean> {
    const res = await p.request({ op: 'open', storePath: this.storePath, sinkPath: this.sinkPath, replica }, this.timeoutMs);
    if (res.kind === 'reply') return true;
    this.incidents.push({ step, what: 'adapter-error', detail: `open failed: ${describe(res)}` });
    return false;
  }

  async livePrimary(step: string): Promise<AdapterProcess> {
    if (this.primary !== null && this.primary.alive) return this.primary;
    const [p] = await this.pool.acquire(1);
    this.primary = p as AdapterProcess;
    await this.open(this.primary, step);
    return this.primary;
  }

  /** A live process other than the primary, opened on this cell's store (hosts cells: on a host). */
  async secondary(step: string): Promise<AdapterProcess> {
    if (this.hosts !== null) {
      const [onHost] = await (this.hosts.hosts[0] as SystemPool).acquire(1);
      await this.open(onHost as AdapterProcess, step, 'secondary');
      return onHost as AdapterProcess;
    }
    const primary = await this.livePrimary(step);
    const all = await this.pool.acquire(2);
    const other = all.find((p) => p !== primary) as AdapterProcess;
    await this.open(other, step, 'secondary');
    return other;
  }

  async send(step: string, req: Request): Promise<RequestResult> {
    const p = await this.livePrimary(step);
    const res = await p.request(req, this.timeoutMs);
    this.faultsFired.push(...p.takeFaultEvents());
    if (res.kind === 'timeout') {
      this.incidents.push({ step, what: 'timeout', detail: `${req.op} did not answer within ${res.timeoutMs} ms` });
      p.kill();
      await p.exited;
    } else if (res.kind === 'adapter-error') {
      this.incidents.push({ step, what: 'adapter-error', detail: `${req.op}: ${res.message}` });
    }
    return res;
  }

  outcomeOf(step: string, op: string, res: RequestResult): Outcome | null {
    if (res.kind !== 'reply') return null;
    try {
      return parseResult(OutcomeSchema, this.system, op, res.result);
    } catch (e) {
      this.incidents.push({ step, what: 'adapter-error', detail: String(e) });
      return null;
    }
  }

  async read(step: string, runId: string, via?: AdapterProcess): Promise<RunView | null> {
    const req: Request = { op: 'readStore', runId };
    const res = via === undefined ? await this.send(step, req) : await via.request(req, this.timeoutMs);
    if (res.kind !== 'reply') return null;
    try {
      return parseResult(RunViewSchema, this.system, 'readStore', res.result);
    } catch (e) {
      this.incidents.push({ step, what: 'adapter-error', detail: String(e) });
      return null;
    }
  }

  /** Did this command stop at a fault (or crash, or time out)? Record the moment if so. */
  async faultMoment(step: string, runId: string, res: RequestResult, outcome: Outcome | null, firedBefore: number): Promise<boolean> {
    const events = this.faultsFired.slice(firedBefore);
    const errored = outcome?.outcome === 'error' && (outcome.error?.kind === 'injected' || outcome.error?.kind === 'store');
    if (res.kind === 'reply' && !errored && events.length === 0) return false;
    if (res.kind === 'adapter-error') return false;
    if (res.kind === 'crashed' && events.length === 0) {
      this.incidents.push({ step, what: 'unexpected-crash', detail: `signal ${res.signal}, exit ${res.exitCode}` });
    }
    const sinkOffset = this.sinkCount();
    const view = await this.read(step, runId);
    const ending = res.kind === 'crashed' ? 'crashed' : res.kind === 'timeout' ? 'timeout' : 'error-outcome';
    this.faults.push({ step, runId, events, ending, outcome, sinkOffset, view });
    return true;
  }

  /**
   * Send `first`; after a fault, continue the run; if it is still parked and `first` was a resume,
   * resume again with the same value. Ends when no fault stops the command.
   */
  async drive(step: string, runId: string, first: Request, wantCompleted: boolean): Promise<DrivenRun> {
    const outcomes: Outcome[] = [];
    let req = first;
    for (let round = 0; round <= MAX_RECOVERIES; round++) {
      const firedBefore = this.faultsFired.length;
      const res = await this.send(step, req);
      const outcome = this.outcomeOf(step, req.op, res);
      if (outcome !== null) outcomes.push(outcome);
      if (await this.faultMoment(step, runId, res, outcome, firedBefore)) {
        await this.raceRecoverersOnce(runId);
        // Nothing durable yet (the fault hit before the run's first record): start it again.
        const nothingDurable = this.faults[this.faults.length - 1]?.view?.exists === false;
        req = first.op === 'start' && nothingDurable ? first : { op: 'continue', runId };
        continue;
      }
      if (outcome === null) break;
      if (wantCompleted && outcome.outcome === 'parked' && req.op === 'continue' && first.op === 'resume') {
        req = first;
        continue;
      }
      return { runId, outcomes, final: outcome, view: await this.read(step, runId) };
    }
    this.incidents.push({ step, what: 'gave-up', detail: `run ${runId} still not settled after ${MAX_RECOVERIES} recoveries` });
    return { runId, outcomes, final: outcomes[outcomes.length - 1] ?? null, view: await this.read(step, runId) };
  }

  window(from: number): SinkWindow {
    return { from, to: this.sinkCount() };
  }

  /** The recoverer cells: after the main run's first fault, k recoverers continue it at once. */
  private async raceRecoverersOnce(runId: string): Promise<void> {
    const c = this.scenario.concurrency;
    if (c?.race !== 'recover' || runId !== this.scenario.runIds.main || this.steps.recoverConcurrent !== undefined) return;
    if (c.mode === 'in-process') {
      this.steps.recoverConcurrent = await recoverInOneProcess(this, runId, c.k);
    } else if (c.mode === 'processes') {
      this.steps.recoverConcurrent = await recoverInProcesses(this, runId, c.k);
    } else if (this.hosts === null) {
      this.incidents.push({ step: 'recover-race', what: 'adapter-error', detail: 'the scenario races recoverers on hosts, but this run has no hosts' });
    } else {
      this.steps.recoverConcurrent = await raceRecoverers(this, this.hosts, runId, c.k, REQUEST_TIMEOUT_MS);
    }
  }
}

function describe(res: RequestResult): string {
  switch (res.kind) {
    case 'reply':
      return 'reply';
    case 'adapter-error':
      return res.message;
    case 'crashed':
      return `crashed (signal ${res.signal}, exit ${res.exitCode})`;
    case 'timeout':
      return `timeout after ${res.timeoutMs} ms`;
  }
}

export interface RunScenarioOptions {
  /** A fresh directory for this cell's store and sink. */
  cellDir: string;
  /** The hosts' processes, for hosts cells (the whole cell then runs on `hosts.root` and the hosts). */
  hosts?: HostsPools | null;
}

export async function runScenario(systemPool: SystemPool, scenario: Scenario, options: RunScenarioOptions): Promise<CellRun> {
  const hosts = scenario.concurrency?.mode === 'hosts' ? (options.hosts ?? null) : null;
  const pool = hosts === null ? systemPool : hosts.root;
  if (pool.hello === null) await pool.init();
  fs.rmSync(options.cellDir, { recursive: true, force: true });
  fs.mkdirSync(options.cellDir, { recursive: true });
  const ctx = new CellContext(pool, scenario, path.join(options.cellDir, 'store.db'), path.join(options.cellDir, 'effects.jsonl'), hosts);
  await ctx.livePrimary('open');
  const ids = scenario.runIds;
  const s = ctx.steps;
  let mainView: RunView | null = null;

  if (hasStep(scenario, 'baseline')) {
    const from = ctx.sinkCount();
    const started = await ctx.drive('baseline', ids.baseline, { op: 'start', runId: ids.baseline, input: scenario.input }, false);
    const resumed = await ctx.drive('baseline', ids.baseline, { op: 'resume', runId: ids.baseline, value: scenario.resumeValue }, true);
    s.baseline = { ...resumed, outcomes: [...started.outcomes, ...resumed.outcomes], window: ctx.window(from) };
  }
  // A recoverer cell names the intent point; a system without intent records crashes just before charge.
  const fault = armedFault(scenario, pool.hello as HelloResult);
  if (fault !== null) await ctx.send('arm', { op: 'arm', fault });

  if (hasStep(scenario, 'start')) {
    const from = ctx.sinkCount();
    const run = await ctx.drive('start', ids.main, { op: 'start', runId: ids.main, input: scenario.input }, false);
    s.start = { ...run, window: ctx.window(from) };
  }
  if (hasStep(scenario, 'resume')) {
    const from = ctx.sinkCount();
    const run = await ctx.drive('resume', ids.main, { op: 'resume', runId: ids.main, value: scenario.resumeValue }, true);
    s.resume = { ...run, window: ctx.window(from) };
  }
  if (hasStep(scenario, 'resume-concurrent') && scenario.concurrency !== null) {
    s.resumeConcurrent = await resumeConcurrently(ctx, scenario);
  }
  if (hasStep(scenario, 'resume-duplicate')) {
    const before = await ctx.read('resume-duplicate', ids.main);
    const from = ctx.sinkCount();
    const res = await ctx.send('resume-duplicate', { op: 'resume', runId: ids.main, value: scenario.secondValue });
    const outcome = ctx.outcomeOf('resume-duplicate', 'resume', res);
    const window = ctx.window(from);
    s.resumeDuplicate = { outcome, before, after: await ctx.read('resume-duplicate', ids.main), window };
  }
  if (hasStep(scenario, 'recover-twice')) {
    s.recoverTwice = await recoverTwice(ctx, ids.main);
  }
  mainView = await ctx.read('main', ids.main);

  // A system without a fork (or without a way to continue from an older checkpoint) says so in
  // `hello`; the step is then not run and its property is not applicable, with that reason.
  if (hasStep(scenario, 'fork-twice') && pool.hello?.fork.supported === true) s.forkTwice = await forkTwice(ctx, scenario);
  // Probes run on side runs with the fault disarmed: they test validity, not recovery.
  await ctx.send('disarm', { op: 'arm', fault: null });
  if (hasStep(scenario, 'continue-from-older') && pool.hello?.continueFrom?.supported !== false) {
    const before = await ctx.read('continue-from-older', ids.baseline);
    const from = ctx.sinkCount();
    const res = await ctx.send('continue-from-older', { op: 'continueFrom', runId: ids.baseline, after: 'compute' });
    const outcome = ctx.outcomeOf('continue-from-older', 'continueFrom', res);
    const window = ctx.window(from);
    s.continueFromOlder = { outcome, before, after: await ctx.read('continue-from-older', ids.baseline), window };
  }
  if (hasStep(scenario, 'probe-invalid-resume')) s.probeInvalidResume = await probeInvalidResume(ctx, scenario);
  if (hasStep(scenario, 'probe-invalid-state')) {
    const res = await ctx.send('probe-invalid-state', {
      op: 'probe',
      kind: 'invalid-state',
      runId: ids.sideInvalidState,
      input: invalidStateInput(ids.sideInvalidState),
    });
    const outcome = res.kind === 'reply' ? ((res.result as { outcome?: unknown }).outcome ?? null) : null;
    const view = res.kind === 'reply' ? ((res.result as { view?: unknown }).view ?? null) : null;
    s.probeInvalidState = {
      outcome: outcome === null ? null : parseResult(OutcomeSchema, ctx.system, 'probe invalid-state', outcome),
      view: view === null ? null : parseResult(RunViewSchema, ctx.system, 'probe invalid-state', view),
    };
  }
  if (hasStep(scenario, 'probe-corruption')) {
    const res = await ctx.send('probe-corruption', { op: 'probe', kind: 'corruption', runId: ids.baseline, pick: scenario.corruptionPick });
    s.probeCorruption = res.kind === 'reply' ? parseResult(CorruptionProbeSchema, ctx.system, 'probe corruption', res.result) : null;
  }
  if (hasStep(scenario, 'probe-definition-change')) {
    const res = await ctx.send('probe-definition-change', {
      op: 'probe',
      kind: 'definition-change',
      runId: ids.sideDefinition,
      input: { ...scenario.input, orderId: `${scenario.input.orderId}-dc` },
    });
    s.probeDefinitionChange =
      res.kind === 'reply' ? parseResult(DefinitionChangeProbeSchema, ctx.system, 'probe definition-change', res.result) : null;
  }

  return {
    system: ctx.system,
    scenario,
    hello: pool.hello as HelloResult,
    faultsFired: ctx.faultsFired,
    faults: ctx.faults,
    steps: s,
    mainView,
    sink: readSink(ctx.sinkPath).lines,
    incidents: ctx.incidents,
  };
}

async function resumeConcurrently(ctx: CellContext, scenario: Scenario): Promise<NonNullable<StepObservations['resumeConcurrent']>> {
  const c = scenario.concurrency as NonNullable<Scenario['concurrency']>;
  const runId = scenario.runIds.main;
  const from = ctx.sinkCount();
  let outcomes: (Outcome | null)[];
  if (c.mode === 'in-process') {
    const res = await ctx.send('resume-concurrent', { op: 'resumeMany', runId, values: c.values });
    outcomes =
      res.kind === 'reply'
        ? parseResult(ResumeManySchema, ctx.system, 'resumeMany', res.result).outcomes
        : c.values.map(() => null);
  } else if (c.mode === 'hosts') {
    if (ctx.hosts === null) {
      ctx.incidents.push({ step: 'resume-concurrent', what: 'adapter-error', detail: 'a hosts cell ran without hosts' });
      outcomes = c.values.map(() => null);
    } else {
      outcomes = await resumeAcrossHosts(ctx, ctx.hosts, runId, c.values, REQUEST_TIMEOUT_MS);
    }
  } else {
    const workers = await ctx.pool.acquire(c.k);
    const opened = await Promise.all(workers.map((w, i) => ctx.open(w, 'resume-concurrent', `worker-${i}`)));
    if (opened.includes(false)) ctx.incidents.push({ step: 'resume-concurrent', what: 'adapter-error', detail: 'a worker could not open the store' });
    // The barrier: every worker is loaded and idle on its stdin; one synchronous loop releases all.
    const pending = workers.map((w, i) => w.request({ op: 'resume', runId, value: c.values[i] }, ctx.timeoutMs));
    const results = await Promise.all(pending);
    outcomes = results.map((res, i) => {
      if (res.kind === 'timeout') ctx.incidents.push({ step: 'resume-concurrent', what: 'timeout', detail: `worker ${i}: resume` });
      if (res.kind === 'crashed') ctx.incidents.push({ step: 'resume-concurrent', what: 'unexpected-crash', detail: `worker ${i}` });
      return ctx.outcomeOf('resume-concurrent', 'resume', res);
    });
  }
  const window = ctx.window(from);
  return { mode: c.mode, outcomes, values: c.values, view: await ctx.read('resume-concurrent', runId), window };
}

type RecoverObservation = NonNullable<StepObservations['recoverConcurrent']>;

/**
 * Recoverers in one process: k concurrent continue calls in the primary, which is the crashed
 * replica restarted (for REMIT: the same instance id, so its own unfinished attempt is its to take
 * over, once, however many calls ask).
 */
async function recoverInOneProcess(ctx: CellContext, runId: string, k: number): Promise<RecoverObservation> {
  const step = 'recover-race';
  const before = await ctx.read(step, runId);
  const from = ctx.sinkCount();
  const res = await ctx.send(step, { op: 'continueMany', runId, count: k });
  const outcomes = res.kind === 'reply' ? parseResult(ContinueManySchema, ctx.system, 'continueMany', res.result).outcomes : Array.from({ length: k }, () => null);
  const window = ctx.window(from);
  return { mode: 'in-process', hosts: outcomes.map((_, i) => `call ${i}`), outcomes, waiting: { start: k, append: k }, before, after: await ctx.read(step, runId), window };
}

/**
 * Recoverers in k processes (none of them the crashed replica): each is opened on the store and
 * idle on its stdin; one synchronous loop writes the k continue requests (the barrier).
 */
async function recoverInProcesses(ctx: CellContext, runId: string, k: number): Promise<RecoverObservation> {
  const step = 'recover-race';
  const before = await ctx.read(step, runId);
  const from = ctx.sinkCount();
  const workers = await ctx.pool.acquire(k);
  const opened = await Promise.all(workers.map((w, i) => ctx.open(w, step, `recoverer-${i}`)));
  if (opened.includes(false)) ctx.incidents.push({ step, what: 'adapter-error', detail: 'a recoverer could not open the store' });
  const pending = workers.map((w) => w.request({ op: 'continue', runId }, REQUEST_TIMEOUT_MS));
  const results = await Promise.all(pending);
  const outcomes = results.map((res, i) => {
    if (res.kind === 'timeout') ctx.incidents.push({ step, what: 'timeout', detail: `recoverer ${i}: continue` });
    if (res.kind === 'crashed') ctx.incidents.push({ step, what: 'unexpected-crash', detail: `recoverer ${i}` });
    return ctx.outcomeOf(step, 'continue', res);
  });
  const window = ctx.window(from);
  return { mode: 'processes', hosts: workers.map((_, i) => `process ${i}`), outcomes, waiting: { start: k, append: k }, before, after: await ctx.read(step, runId), window };
}

async function recoverTwice(ctx: CellContext, runId: string): Promise<NonNullable<StepObservations['recoverTwice']>> {
  const first = await ctx.read('recover-twice', runId);
  const second = await ctx.read('recover-twice', runId);
  const processes = ctx.pool.hello?.concurrency.processes;
  if (processes === undefined || !processes.supported) {
    return { first, second, otherProcess: null, otherProcessReason: processes?.supported === false ? processes.reason : 'no process support' };
  }
  const other = await ctx.secondary('recover-twice');
  return { first, second, otherProcess: await ctx.read('recover-twice', runId, other), otherProcessReason: null };
}

async function forkOnce(ctx: CellContext, scenario: Scenario, target: string): Promise<string | null> {
  const req: Request = { op: 'fork', sourceRunId: scenario.runIds.main, after: 'charge', targetRunId: target, intent: scenario.forkIntent };
  for (let round = 0; round <= MAX_RECOVERIES; round++) {
    const firedBefore = ctx.faultsFired.length;
    const res = await ctx.send('fork-twice', req);
    const outcome = ctx.outcomeOf('fork-twice', 'fork', res);
    if (await ctx.faultMoment('fork-twice', scenario.runIds.main, res, outcome, firedBefore)) {
      // The fork may have been committed before the fault: use it if the target exists.
      const existing = await ctx.read('fork-twice', target);
      if (existing?.exists === true) return target;
      continue;
    }
    if (outcome?.outcome === 'forked') return outcome.runId ?? target;
    return null;
  }
  return null;
}

async function forkTwice(ctx: CellContext, scenario: Scenario): Promise<NonNullable<StepObservations['forkTwice']>> {
  const sourceBefore = await ctx.read('fork-twice', scenario.runIds.main);
  const from = ctx.sinkCount();
  const forks: (DrivenRun & { window: SinkWindow })[] = [];
  for (const target of scenario.runIds.forks) {
    const forkFrom = ctx.sinkCount();
    const runId = await forkOnce(ctx, scenario, target);
    if (runId === null) {
      forks.push({ runId: null, outcomes: [], final: null, view: null, window: ctx.window(forkFrom) });
      continue;
    }
    const parked = await ctx.drive('fork-twice', runId, { op: 'continue', runId }, false);
    const done = await ctx.drive('fork-twice', runId, { op: 'resume', runId, value: scenario.resumeValue }, true);
    forks.push({ ...done, outcomes: [...parked.outcomes, ...done.outcomes], window: ctx.window(forkFrom) });
  }
  const window = ctx.window(from);
  return { sourceBefore, sourceAfter: await ctx.read('fork-twice', scenario.runIds.main), forks, window };
}

async function probeInvalidResume(ctx: CellContext, scenario: Scenario): Promise<NonNullable<StepObservations['probeInvalidResume']>> {
  const runId = scenario.runIds.sideInvalidResume;
  const step = 'probe-invalid-resume';
  const from = ctx.sinkCount();
  const input = { ...scenario.input, orderId: `${scenario.input.orderId}-ir` };
  const parked = ctx.outcomeOf(step, 'start', await ctx.send(step, { op: 'start', runId, input }));
  const before = await ctx.read(step, runId);
  const invalid = ctx.outcomeOf(step, 'resume', await ctx.send(step, { op: 'resume', runId, value: INVALID_RESUME_VALUE }));
  const after = await ctx.read(step, runId);
  const valid = await ctx.drive(step, runId, { op: 'resume', runId, value: scenario.resumeValue }, true);
  return { parked, invalid, before, after, valid, window: ctx.window(from) };
}
