/**
 * Runs one generated scenario on one system through its adapter process and records what happened
 * (no verdicts: ./checkers.ts judges). The schedule:
 *
 * 1. `define` the workflow; arm the fault (its point's n-th occurrence).
 * 2. Near-miss inputs, each a `start` that must be refused, then the main run, driven the way an
 *    operator would: after a fault, read the run through a live process and do what it needs
 *    (start it if nothing is durable, `continue` it if running, `resume` it with the value of the
 *    park it is at, counted by its durable claims); before each park's value, its near misses.
 * 3. With the fault disarmed: a duplicate resume, reading the run twice and from a second process,
 *    continuing from an older checkpoint without a fork, and two forks at a checkpoint, each driven
 *    to the end with the resume values after it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AdapterProcess, RequestResult } from '../driver.js';
import type { FaultMoment, Incident, SinkWindow } from '../observations.js';
import { OutcomeSchema, RunViewSchema, parseResult, type FaultEvent, type Outcome, type Request, type RunView } from '../protocol.js';
import { REQUEST_TIMEOUT_MS, type SystemPool } from '../runner.js';
import { readSink, type SinkLine } from '../sink.js';
import type { GeneratedScenario } from './generator.js';

/** Commands the drive loop may send for one run before it gives up (faults and parks included). */
const MAX_ROUNDS = 40;

export interface Attempt {
  value: unknown;
  outcome: Outcome | null;
  before: RunView | null;
  after: RunView | null;
  window: SinkWindow;
}

export interface DrivenGeneratedRun {
  runId: string;
  /** Every outcome of the run's own commands, in order. */
  outcomes: Outcome[];
  /** The outcome that ended the drive. */
  final: Outcome | null;
  view: RunView | null;
  /** Near misses of each park (by park index), tried before its value. */
  resumeNearMisses: Attempt[][];
  window: SinkWindow;
}

export interface GeneratedCellRun {
  system: string;
  scenario: GeneratedScenario;
  faultsFired: FaultEvent[];
  faults: FaultMoment[];
  nearMissInputs: Attempt[];
  main: DrivenGeneratedRun | null;
  duplicate: Attempt | null;
  recoverTwice: { first: RunView | null; second: RunView | null; otherProcess: RunView | null } | null;
  continueFromOlder: Attempt | null;
  forks: { sourceBefore: RunView | null; sourceAfter: RunView | null; runs: Array<DrivenGeneratedRun | null> } | null;
  sink: SinkLine[];
  incidents: Incident[];
}

class GeneratedCell {
  readonly incidents: Incident[] = [];
  readonly faults: FaultMoment[] = [];
  readonly faultsFired: FaultEvent[] = [];
  private primary: AdapterProcess | null = null;

  constructor(
    readonly pool: SystemPool,
    readonly scenario: GeneratedScenario,
    readonly storePath: string,
    readonly sinkPath: string,
  ) {}

  sinkCount(): number {
    return readSink(this.sinkPath).lines.length;
  }

  window(from: number): SinkWindow {
    return { from, to: this.sinkCount() };
  }

  /** A live, opened process with the workflow defined (a fresh one after a crash). */
  async live(step: string): Promise<AdapterProcess> {
    if (this.primary !== null && this.primary.alive) return this.primary;
    // Two live processes: the primary, and a standby that boots meanwhile (it replaces the primary
    // after a SIGKILL without waiting for a process to start, and reads as the second process).
    const [p] = await this.pool.acquire(2);
    this.primary = p as AdapterProcess;
    await this.prepare(this.primary, step);
    return this.primary;
  }

  async prepare(p: AdapterProcess, step: string): Promise<void> {
    for (const req of [
      { op: 'open', storePath: this.storePath, sinkPath: this.sinkPath },
      { op: 'define', workflow: this.scenario.workflow },
    ] as Request[]) {
      const res = await p.request(req, REQUEST_TIMEOUT_MS);
      if (res.kind !== 'reply') this.incidents.push({ step, what: 'adapter-error', detail: `${req.op} failed: ${res.kind === 'adapter-error' ? res.message : res.kind}` });
    }
  }

  async send(step: string, req: Request): Promise<RequestResult> {
    const p = await this.live(step);
    const res = await p.request(req, REQUEST_TIMEOUT_MS);
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

  outcome(step: string, op: string, res: RequestResult): Outcome | null {
    if (res.kind !== 'reply') return null;
    try {
      return parseResult(OutcomeSchema, this.pool.spec.id, op, res.result);
    } catch (e) {
      this.incidents.push({ step, what: 'adapter-error', detail: String(e) });
      return null;
    }
  }

  async read(step: string, runId: string, via?: AdapterProcess): Promise<RunView | null> {
    const req: Request = { op: 'readStore', runId };
    const res = via === undefined ? await this.send(step, req) : await via.request(req, REQUEST_TIMEOUT_MS);
    if (res.kind !== 'reply') return null;
    try {
      return parseResult(RunViewSchema, this.pool.spec.id, 'readStore', res.result);
    } catch (e) {
      this.incidents.push({ step, what: 'adapter-error', detail: String(e) });
      return null;
    }
  }

  /** A second live process on the same store (null when the system has no process support). */
  async secondary(step: string): Promise<AdapterProcess | null> {
    const processes = this.pool.hello?.concurrency.processes;
    if (processes === undefined || !processes.supported) return null;
    const primary = await this.live(step);
    const all = await this.pool.acquire(2);
    const other = all.find((p) => p !== primary) as AdapterProcess;
    await this.prepare(other, step);
    return other;
  }

  /** Did this command stop at a fault (or crash, or time out)? Records the moment if so. */
  async faultMoment(step: string, runId: string, res: RequestResult, outcome: Outcome | null, firedBefore: number): Promise<boolean> {
    const events = this.faultsFired.slice(firedBefore);
    const errored = outcome?.outcome === 'error' && (outcome.error?.kind === 'injected' || outcome.error?.kind === 'store');
    if (res.kind === 'reply' && !errored && events.length === 0) return false;
    if (res.kind === 'adapter-error') return false;
    if (res.kind === 'crashed' && events.length === 0) this.incidents.push({ step, what: 'unexpected-crash', detail: `signal ${res.signal}, exit ${res.exitCode}` });
    const sinkOffset = this.sinkCount();
    const view = await this.read(step, runId);
    const ending = res.kind === 'crashed' ? 'crashed' : res.kind === 'timeout' ? 'timeout' : 'error-outcome';
    this.faults.push({ step, runId, events, ending, outcome, sinkOffset, view });
    return true;
  }

  /** One value sent to a parked run, with the run read before and after. */
  async attempt(step: string, runId: string, req: Request, before: RunView | null): Promise<Attempt> {
    const from = this.sinkCount();
    const outcome = this.outcome(step, req.op, await this.send(step, req));
    const window = this.window(from);
    const value = req.op === 'start' ? req.input : req.op === 'resume' ? req.value : null;
    return { value, outcome, before, after: await this.read(step, runId), window };
  }

  /**
   * Drive `runId` to its end the way an operator would, starting with `first`. After a fault, and
   * at each park, the run's durable state says what it needs.
   */
  async drive(step: string, runId: string, first: Request): Promise<DrivenGeneratedRun> {
    const from = this.sinkCount();
    const outcomes: Outcome[] = [];
    const resumeNearMisses: Attempt[][] = [];
    let req: Request | null = first;
    let final: Outcome | null = null;
    for (let round = 0; req !== null; round++) {
      if (round >= MAX_ROUNDS) {
        this.incidents.push({ step, what: 'gave-up', detail: `run ${runId} not settled after ${MAX_ROUNDS} commands` });
        break;
      }
      const firedBefore = this.faultsFired.length;
      const res = await this.send(step, req);
      const outcome = this.outcome(step, req.op, res);
      if (outcome !== null) outcomes.push(outcome);
      if (await this.faultMoment(step, runId, res, outcome, firedBefore)) {
        const view = this.faults[this.faults.length - 1]?.view ?? null;
        req = view?.status === 'parked' ? await this.parkedNext(step, runId, view, resumeNearMisses) : this.afterFault(runId, view, first);
        continue;
      }
      final = outcome;
      // Parked: the next park's value (a refusal of it ends the drive, the run still parked).
      req = outcome?.outcome === 'parked' ? await this.parkedNext(step, runId, await this.read(step, runId), resumeNearMisses) : null;
    }
    return { runId, outcomes, final, view: await this.read(step, runId), resumeNearMisses, window: this.window(from) };
  }

  /**
   * A parked run needs the value of the park it is at, counted by its durable claims; the first
   * time at a park, that park's near misses are tried first (each must be refused).
   */
  private async parkedNext(step: string, runId: string, view: RunView | null, nearMisses: Attempt[][]): Promise<Request | null> {
    const park = view?.claims ?? 0;
    const plan = this.scenario.resumes[park];
    if (plan === undefined) return null;
    if (nearMisses[park] === undefined) {
      nearMisses[park] = [];
      let before = view;
      for (const miss of plan.nearMisses) {
        const attempt = await this.attempt(step, runId, { op: 'resume', runId, value: miss, tagged: true }, before);
        nearMisses[park]!.push(attempt);
        before = attempt.after;
      }
    }
    return { op: 'resume', runId, value: plan.value, tagged: true };
  }

  /** What the run needs after a fault, from its durable state. */
  private afterFault(runId: string, view: RunView | null, first: Request): Request | null {
    if (view === null) return null;
    switch (view.status) {
      case 'absent':
        return first.op === 'start' ? first : null;
      case 'running':
        return { op: 'continue', runId };
      default:
        return null;
    }
  }
}

export interface RunGeneratedOptions {
  /** A fresh directory for this cell's store and sink. */
  cellDir: string;
}

export async function runGeneratedScenario(pool: SystemPool, scenario: GeneratedScenario, options: RunGeneratedOptions): Promise<GeneratedCellRun> {
  if (pool.hello === null) await pool.init();
  fs.rmSync(options.cellDir, { recursive: true, force: true });
  fs.mkdirSync(options.cellDir, { recursive: true });
  const cell = new GeneratedCell(pool, scenario, path.join(options.cellDir, 'store.db'), path.join(options.cellDir, 'effects.jsonl'));
  await cell.live('open');
  const main = scenario.runIds.main;
  const run: GeneratedCellRun = {
    system: pool.spec.id, scenario, faultsFired: cell.faultsFired, faults: cell.faults, nearMissInputs: [], main: null, duplicate: null,
    recoverTwice: null, continueFromOlder: null, forks: null, sink: [], incidents: cell.incidents,
  };
  for (const input of scenario.nearMissInputs) {
    run.nearMissInputs.push(await cell.attempt('near-miss-input', main, { op: 'start', runId: main, input, workflow: scenario.workflow.name, tagged: true }, null));
  }
  if (scenario.fault !== null) await cell.send('arm', { op: 'arm', fault: scenario.fault });
  run.main = await cell.drive('main', main, { op: 'start', runId: main, input: scenario.input, workflow: scenario.workflow.name, tagged: true });
  await cell.send('disarm', { op: 'arm', fault: null });

  const last = scenario.resumes[scenario.resumes.length - 1];
  if (scenario.duplicateResume && last !== undefined) {
    const before = await cell.read('duplicate-resume', main);
    run.duplicate = await cell.attempt('duplicate-resume', main, { op: 'resume', runId: main, value: last.value, tagged: true }, before);
  }
  if (scenario.recoverTwice) {
    const first = await cell.read('recover-twice', main);
    const second = await cell.read('recover-twice', main);
    const other = await cell.secondary('recover-twice');
    run.recoverTwice = { first, second, otherProcess: other === null ? null : await cell.read('recover-twice', main, other) };
  }
  if (scenario.continueFromOlder !== null) {
    const before = await cell.read('continue-from-older', main);
    const { after, occurrence } = scenario.continueFromOlder;
    run.continueFromOlder = await cell.attempt('continue-from-older', main, { op: 'continueFrom', runId: main, after, occurrence }, before);
  }
  if (scenario.fork !== null) {
    const sourceBefore = await cell.read('fork-twice', main);
    const runs: Array<DrivenGeneratedRun | null> = [];
    for (const target of scenario.runIds.forks) {
      const { after, occurrence } = scenario.fork;
      const forked = cell.outcome('fork-twice', 'fork', await cell.send('fork-twice', { op: 'fork', sourceRunId: main, after, occurrence, targetRunId: target, intent: { why: 'generated', scenario: scenario.id } }));
      runs.push(forked?.outcome === 'forked' ? await cell.drive('fork-twice', forked.runId ?? target, { op: 'continue', runId: forked.runId ?? target }) : null);
    }
    run.forks = { sourceBefore, sourceAfter: await cell.read('fork-twice', main), runs };
  }
  run.sink = readSink(cell.sinkPath).lines;
  return run;
}
