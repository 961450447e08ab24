/**
 * The soak driver: W worker processes (the REMIT conformance adapter; on PostgreSQL each in a
 * network namespace, a host) drive many runs of the reference workflow and of generated workflows
 * at once, while the nemesis (./nemesis.ts) injects faults on a seeded schedule. Every operation
 * goes to the history (./history.ts), every effect to the fsync'd sink. Bounded in time and in
 * operations: each phase ends on the clock, the whole soak after `maxOps`, the drain after its
 * deadline. Ends with a final read of every run by a fresh process (in the root namespace).
 *
 * The driver decides what to do next from replies and reads, as an operator would; it never judges
 * (./checker.ts does, from the files alone).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { AdapterProcess, type AdapterSpec, type RequestResult } from '../harness/driver.js';
import { OutcomeSchema, RunViewSchema, type Outcome, type Request, type RunView } from '../harness/protocol.js';
import { Prng } from '../harness/prng.js';
import { generateScenario, type GeneratedScenario } from '../harness/generated/generator.js';
import { HistoryWriter, type OutcomeSummary, type ReadSummary, type RunPlanLine, type CompletionType } from './history.js';
import { LinkFaults, ServerFaults, planPhase, type Phase, type PlannedFault } from './nemesis.js';

export type SoakCanary = 'lost-append-reported-committed' | 'unstable-effect-key';

export interface SoakOptions {
  store: 'sqlite' | 'postgres';
  workers: number;
  seed: number;
  phases: Phase[];
  maxOps: number;
  outDir: string;
  /** The adapter command (node + tsx + adapter.ts) and its base arguments. */
  adapter: { command: string; args: string[]; cwd: string };
  /** PostgreSQL: the env of processes in the root namespace and inside hosts; the server's faults. */
  postgres?: { rootEnv: Record<string, string>; hostEnv: Record<string, string>; hosts: number; server: ServerFaults };
  /** Test-only: run the workers with a guard switched off (the checker must catch it). */
  canary?: SoakCanary;
  drainDeadlineMs: number;
  requestTimeoutMs: number;
  /** Generated workflows in the mix (a pool drawn from the seed). */
  generatedPool: number;
  log?: (line: string) => void;
}

export interface SoakFiles {
  history: string;
  sink: string;
  scenarios: string;
  final: string;
}

export interface SoakRun {
  files: SoakFiles;
  phases: Array<Phase & { start_ms: number; end_ms: number }>;
  drain: { start_ms: number; end_ms: number; unfinished: string[] };
  wall_ms: number;
}

interface Slot {
  index: number;
  host: string;
  proc: AdapterProcess | null;
  ready: Promise<AdapterProcess> | null;
  restarts: number;
}

type RunState = 'new' | 'parked' | 'doubt' | 'done';
interface DriverRun {
  plan: RunPlanLine;
  state: RunState;
  busy: boolean;
  started: boolean;
  attempts: number;
  forked: boolean;
}

/** How long the final reader keeps asking a store that is unavailable (a server restarting). */
const FINAL_READ_RETRY_MS = 30_000;

const digest = (hex: string) => createHash('sha256').update(hex).digest('hex').slice(0, 16);

export function readSummary(view: RunView): ReadSummary {
  return { exists: view.exists, status: view.status, claims: view.claims, records: view.records.map((r) => digest(r.hex)) };
}

/** The pool of generated workflows: non-poisoned, ending completed or failed, few parks. */
export function generatedPool(seed: number, size: number): GeneratedScenario[] {
  const out: GeneratedScenario[] = [];
  for (let i = 0; out.length < size && i < size * 20; i++) {
    const g = generateScenario(seed, i, null);
    if (g.poison !== null) continue;
    if (g.expectation.final.kind !== 'completed' && g.expectation.final.kind !== 'failed') continue;
    if (g.expectation.claims > 6 || g.expectation.nearMissInputs.some((r) => r === null)) continue;
    out.push(g.scenario);
  }
  return out;
}

export class SoakDriver {
  readonly files: SoakFiles;
  readonly history: HistoryWriter;
  private readonly slots: Slot[] = [];
  private readonly runs = new Map<string, DriverRun>();
  private readonly prng: Prng;
  private readonly scenarios: GeneratedScenario[];
  private readonly links = new LinkFaults();
  private opsIssued = 0;
  private groupIds = 0;
  private runCounter = 0;
  private stopAt = 0;
  private readonly storePath: string;

  constructor(readonly o: SoakOptions) {
    fs.mkdirSync(o.outDir, { recursive: true });
    this.files = {
      history: path.join(o.outDir, 'history.jsonl'),
      sink: path.join(o.outDir, 'sink.jsonl'),
      scenarios: path.join(o.outDir, 'scenarios.json'),
      final: path.join(o.outDir, 'final.json'),
    };
    for (const f of Object.values(this.files)) fs.rmSync(f, { force: true });
    this.storePath = path.join(o.outDir, o.store === 'sqlite' ? 'store.db' : 'store.pg.json');
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${this.storePath}${suffix}`, { force: true });
    this.history = new HistoryWriter(this.files.history);
    this.prng = new Prng(o.seed).fork('workload');
    this.scenarios = generatedPool(o.seed, o.generatedPool);
    fs.writeFileSync(this.files.scenarios, `${JSON.stringify(this.scenarios)}\n`);
    for (let i = 0; i < o.workers; i++) {
      const host = o.postgres === undefined ? 'local' : `remit-h${(i % o.postgres.hosts) + 1}`;
      this.slots.push({ index: i, host, proc: null, ready: null, restarts: 0 });
    }
  }

  private log(line: string): void {
    this.o.log?.(line);
  }

  private spec(slot: Slot): AdapterSpec {
    const storeArgs = ['--store', this.o.store, '--core', 'wasm', ...(this.o.canary === undefined ? [] : ['--canary', this.o.canary])];
    const base: AdapterSpec = { id: 'remit-soak', label: 'REMIT soak worker', command: this.o.adapter.command, args: [...this.o.adapter.args, ...storeArgs], startupMs: 60_000 };
    if (this.o.postgres === undefined || slot.host === 'root') return { ...base, env: this.o.postgres?.rootEnv ?? {} };
    return { ...base, command: 'ip', args: ['netns', 'exec', slot.host, base.command, ...base.args], env: this.o.postgres.hostEnv };
  }

  // ------------------------------------------------------------------ workers

  private worker(slot: Slot): Promise<AdapterProcess> {
    if (slot.proc !== null && slot.proc.alive) return Promise.resolve(slot.proc);
    slot.ready ??= this.spawnWorker(slot).finally(() => {
      slot.ready = null;
    });
    return slot.ready;
  }

  private async spawnWorker(slot: Slot): Promise<AdapterProcess> {
    const restart = slot.proc !== null;
    for (let attempt = 0; attempt < 5; attempt++) {
      const proc = AdapterProcess.spawn(this.spec(slot), this.o.adapter.cwd);
      const opened = await proc.request({ op: 'open', storePath: this.storePath, sinkPath: this.files.sink, replica: `worker-${slot.index}` }, 60_000);
      if (opened.kind !== 'reply') {
        this.log(`worker ${slot.index} (${slot.host}) did not open: ${JSON.stringify(opened)} ${proc.stderr.slice(-300)}`);
        proc.kill();
        await proc.exited;
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      for (const s of this.scenarios) await proc.request({ op: 'define', workflow: s.workflow }, 30_000);
      slot.proc = proc;
      this.history.write({ k: 'worker', t_ms: this.history.now(), worker: slot.index, pid: proc.pid, event: 'spawned', host: slot.host });
      void proc.exited.then(() => this.history.write({ k: 'worker', t_ms: this.history.now(), worker: slot.index, pid: proc.pid, event: 'exited', host: slot.host }));
      if (restart) {
        slot.restarts++;
        await this.op(slot, { op: 'recoverAll', waitForEffectMs: 0 }, undefined, undefined, proc);
      }
      return proc;
    }
    throw new Error(`worker ${slot.index} on ${slot.host} could not be started 5 times in a row`);
  }

  /** One operation: its invoke line, the request, its completion line (ok, fail or info). */
  private async op(slot: Slot, req: Request, run?: string, group?: number, given?: AdapterProcess): Promise<{ type: CompletionType; outcome: Outcome | null; view: RunView | null; raw: RequestResult }> {
    const proc = given ?? (await this.worker(slot));
    const opId = this.history.newOpId();
    const t0 = this.history.now();
    const { op, ...args } = req as { op: string } & Record<string, unknown>;
    delete args.runId;
    this.opsIssued++;
    this.history.write({ k: 'op', type: 'invoke', op_id: opId, t_ms: t0, worker: slot.index, pid: proc.pid, op, ...(run === undefined ? {} : { run }), args, ...(group === undefined ? {} : { group }) });
    // recoverAll reads every run of the store: it gets longer than one run's operations.
    const timeoutMs = op === 'recoverAll' ? this.o.requestTimeoutMs * 6 : this.o.requestTimeoutMs;
    const raw = await proc.request(req, timeoutMs);
    const t1 = this.history.now();
    let type: CompletionType = 'info';
    let summary: OutcomeSummary;
    let outcome: Outcome | null = null;
    let view: RunView | null = null;
    let read: ReadSummary | undefined;
    if (raw.kind === 'reply') {
      if (op === 'readStore') {
        view = RunViewSchema.parse(raw.result);
        read = readSummary(view);
        type = 'ok';
        summary = { outcome: 'read' };
      } else if (op === 'recoverAll') {
        const runs = (raw.result as { outcomes: Array<Outcome & { runId: string }> }).outcomes.map((o) => ({ runId: o.runId, outcome: o.outcome, ...(o.refusal ? { refusal: o.refusal.code } : {}) }));
        type = 'ok';
        summary = { outcome: 'recovered', runs };
      } else {
        outcome = OutcomeSchema.parse(raw.result);
        summary = { outcome: outcome.outcome, ...(outcome.refusal ? { refusal: outcome.refusal.code } : {}), ...(outcome.error ? { error: outcome.error.message.slice(0, 200) } : {}), ...(outcome.state === undefined ? {} : { state: outcome.state }) };
        type = outcome.outcome === 'refused' ? 'fail' : outcome.outcome === 'error' ? 'info' : 'ok';
      }
    } else {
      summary = { outcome: raw.kind, ...(raw.kind === 'adapter-error' ? { error: raw.message.slice(0, 200) } : {}) };
      if (raw.kind === 'timeout') {
        // A worker stuck past the request timeout is restarted, as an operator would.
        this.log(`worker ${slot.index}: ${op} timed out after ${timeoutMs} ms; restarting it`);
        proc.kill();
      }
    }
    this.history.write({ k: 'op', type, op_id: opId, t_ms: t1, worker: slot.index, pid: proc.pid, op, ...(run === undefined ? {} : { run }), outcome: summary, ...(read ? { read } : {}), latency_ms: Math.round((t1 - t0) * 1000) / 1000, ...(group === undefined ? {} : { group }) });
    return { type, outcome, view, raw };
  }

  // ------------------------------------------------------------------ workload

  private newRun(slot: Slot): DriverRun {
    const n = this.runCounter++;
    const useGenerated = this.scenarios.length > 0 && this.prng.int(0, 9) < 3;
    let plan: RunPlanLine;
    if (useGenerated) {
      const s = this.prng.pick(this.scenarios);
      plan = { runId: `g-${s.id}-${n}`, kind: 'generated', scenario: s.id };
    } else {
      plan = { runId: `r-${n}`, kind: 'reference', input: { orderId: `order-${n}-w${slot.index}`, amountCents: this.prng.int(1000, 99_999) }, leaveParked: this.prng.int(0, 9) === 0 };
    }
    const run: DriverRun = { plan, state: 'new', busy: false, started: false, attempts: 0, forked: false };
    this.runs.set(plan.runId, run);
    this.history.write({ k: 'plan', t_ms: this.history.now(), plan });
    return run;
  }

  private scenarioOf(run: DriverRun): GeneratedScenario {
    if (run.plan.kind !== 'generated') throw new Error('not a generated run');
    const id = run.plan.scenario;
    const s = this.scenarios.find((x) => x.id === id);
    if (s === undefined) throw new Error(`no scenario ${id}`);
    return s;
  }

  private startRequest(run: DriverRun): Request {
    if (run.plan.kind === 'generated') {
      const s = this.scenarioOf(run);
      return { op: 'start', runId: run.plan.runId, input: s.input, workflow: s.workflow.name, tagged: true };
    }
    if (run.plan.kind !== 'reference') throw new Error('a fork is not started');
    return { op: 'start', runId: run.plan.runId, input: run.plan.input };
  }

  /** After a reply or a read: where the run stands. */
  private settleFrom(run: DriverRun, outcome: Outcome | null, view: RunView | null): void {
    const status = view?.status ?? outcome?.outcome;
    if (status === 'parked') {
      run.state = run.plan.kind === 'reference' && run.plan.leaveParked ? 'done' : 'parked';
    } else if (status === 'completed' || status === 'failed' || status === 'invalid') {
      run.state = 'done';
    } else {
      run.state = 'doubt';
    }
  }

  private async start(slot: Slot): Promise<void> {
    const run = this.newRun(slot);
    run.busy = true;
    const r = await this.op(slot, this.startRequest(run), run.plan.runId);
    run.started = true;
    this.settleFrom(run, r.type === 'ok' ? r.outcome : null, null);
    run.busy = false;
  }

  private resumeValue(run: DriverRun, parkIndex: number, tag: string): { value: unknown; tagged?: boolean } {
    if (run.plan.kind === 'generated') {
      const plan = this.scenarioOf(run).resumes[parkIndex];
      return { value: plan?.value ?? {}, tagged: true };
    }
    return { value: { approved: this.prng.int(0, 1) === 1, note: tag } };
  }

  /** Resume a parked run by k workers at once (k = 1 mostly; 2 or 3 sometimes, on different workers). */
  private async resume(slot: Slot, run: DriverRun, k: number, parkIndex: number): Promise<void> {
    run.busy = true;
    const group = k > 1 ? ++this.groupIds : undefined;
    const others = this.slots.filter((s) => s !== slot);
    const chosen = [slot, ...others.sort(() => this.prng.int(0, 2) - 1).slice(0, k - 1)];
    const results = await Promise.all(
      chosen.map((s, i) => {
        const v = this.resumeValue(run, parkIndex, `w${s.index}-p${parkIndex}-${i}`);
        return this.op(s, { op: 'resume', runId: run.plan.runId, value: v.value, park: parkIndex, ...(v.tagged ? { tagged: true } : {}) }, run.plan.runId, group);
      }),
    );
    const served = results.filter((r) => r.type === 'ok');
    if (served.length === 1 && results.every((r) => r.type !== 'info')) this.settleFrom(run, served[0]!.outcome, null);
    else run.state = 'doubt';
    run.busy = false;
  }

  /** A doubtful run: read it, then do what it needs (start, continue, or nothing). */
  private async settle(slot: Slot, run: DriverRun): Promise<void> {
    run.busy = true;
    run.attempts++;
    const read = await this.op(slot, { op: 'readStore', runId: run.plan.runId }, run.plan.runId);
    const view = read.view;
    if (view === null) {
      run.busy = false;
      return;
    }
    if (view.status === 'absent' || view.status === 'empty') {
      if (run.plan.kind === 'fork') {
        const f = await this.op(slot, { op: 'fork', sourceRunId: run.plan.source, after: run.plan.after, targetRunId: run.plan.runId, intent: { soak: 'fork' } }, run.plan.runId);
        run.state = 'doubt';
        if (f.type === 'fail') run.state = 'doubt';
      } else {
        const r = await this.op(slot, this.startRequest(run), run.plan.runId);
        this.settleFrom(run, r.type === 'ok' ? r.outcome : null, null);
      }
    } else if (view.status === 'running') {
      const r = await this.op(slot, { op: 'continue', runId: run.plan.runId }, run.plan.runId);
      this.settleFrom(run, r.type === 'ok' ? r.outcome : null, null);
    } else {
      this.settleFrom(run, null, view);
    }
    run.busy = false;
  }

  private async fork(slot: Slot, source: DriverRun): Promise<void> {
    source.forked = true;
    source.busy = true;
    if (source.plan.kind !== 'reference') throw new Error('only reference runs are forked');
    const before = await this.op(slot, { op: 'readStore', runId: source.plan.runId }, source.plan.runId);
    if (before.view?.status !== 'completed') {
      source.busy = false;
      return;
    }
    const plan: RunPlanLine = { runId: `${source.plan.runId}-fork`, kind: 'fork', source: source.plan.runId, after: 'charge', input: source.plan.input };
    const run: DriverRun = { plan, state: 'doubt', busy: true, started: true, attempts: 0, forked: true };
    this.runs.set(plan.runId, run);
    this.history.write({ k: 'plan', t_ms: this.history.now(), plan });
    await this.op(slot, { op: 'fork', sourceRunId: source.plan.runId, after: 'charge', targetRunId: plan.runId, intent: { soak: 'fork' } }, plan.runId);
    source.busy = false;
    run.busy = false;
  }

  private pick(state: RunState, extra: (r: DriverRun) => boolean = () => true): DriverRun | null {
    const candidates: DriverRun[] = [];
    for (const r of this.runs.values()) if (r.state === state && !r.busy && extra(r)) candidates.push(r);
    return candidates.length === 0 ? null : this.prng.pick(candidates);
  }

  private async parkIndexOf(slot: Slot, run: DriverRun): Promise<number | null> {
    if (run.plan.kind !== 'generated') return 0;
    const read = await this.op(slot, { op: 'readStore', runId: run.plan.runId }, run.plan.runId);
    if (read.view === null || read.view.status !== 'parked') {
      run.state = 'doubt';
      return null;
    }
    return read.view.claims;
  }

  private async step(slot: Slot, draining: boolean): Promise<boolean> {
    const doubt = this.pick('doubt', (r) => r.attempts < 40);
    if (doubt !== null) {
      await this.settle(slot, doubt);
      return true;
    }
    const parked = this.pick('parked');
    const r = this.prng.int(0, 99);
    if (parked !== null && (draining || r < 45)) {
      parked.busy = true;
      const parkIndex = await this.parkIndexOf(slot, parked);
      parked.busy = false;
      if (parkIndex === null) return true;
      const k = draining ? 1 : this.prng.int(0, 9) < 3 ? this.prng.int(2, Math.min(3, this.slots.length)) : 1;
      await this.resume(slot, parked, k, parkIndex);
      return true;
    }
    if (draining) return false;
    const forkable = r < 55 ? this.pick('done', (x) => x.plan.kind === 'reference' && !x.forked && !x.plan.leaveParked) : null;
    if (forkable !== null) {
      await this.fork(slot, forkable);
      return true;
    }
    await this.start(slot);
    return true;
  }

  private async loop(slot: Slot, untilMs: number): Promise<void> {
    while (this.history.now() < untilMs && this.opsIssued < this.o.maxOps) {
      try {
        await this.step(slot, false);
      } catch (e) {
        this.log(`worker ${slot.index}: ${String(e)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  // ------------------------------------------------------------------ nemesis

  private async inject(f: PlannedFault): Promise<void> {
    const t = () => this.history.now();
    if (f.kind === 'worker-kill') {
      const slot = this.slots[f.target]!;
      const proc = slot.proc;
      if (proc === null || !proc.alive) return;
      this.history.write({ k: 'nemesis', t_ms: t(), action: 'inject', fault: 'worker-kill', target: `worker-${slot.index}`, pid: proc.pid });
      proc.kill();
      // Restarted at once; the new process calls recoverAll first.
      await proc.exited;
      void this.worker(slot).catch((e) => this.log(String(e)));
    } else if (f.kind === 'server-kill') {
      const server = this.o.postgres!.server;
      const pid = server.kill();
      this.history.write({ k: 'nemesis', t_ms: t(), action: 'inject', fault: 'server-kill', target: 'postgres', pid });
      await new Promise((r) => setTimeout(r, 1000));
      server.start();
      this.history.write({ k: 'nemesis', t_ms: t(), action: 'heal', fault: 'server-kill', target: 'postgres', pid: server.postmasterPid() ?? -1 });
    } else {
      const detail = this.links.inject(f.kind, f.target);
      this.history.write({ k: 'nemesis', t_ms: t(), action: 'inject', fault: f.kind, target: `remit-h${f.target}`, detail });
    }
  }

  private heal(f: PlannedFault): void {
    if (f.kind === 'worker-kill' || f.kind === 'server-kill') return;
    this.links.heal(f.target);
    this.history.write({ k: 'nemesis', t_ms: this.history.now(), action: 'heal', fault: f.kind, target: `remit-h${f.target}` });
  }

  private async nemesis(plan: PlannedFault[], phaseStart: number): Promise<void> {
    const events = plan.flatMap((f) => [{ at: f.at_ms, f, heal: false }, ...(f.heal_ms === null ? [] : [{ at: f.heal_ms, f, heal: true }])]).sort((a, b) => a.at - b.at);
    for (const e of events) {
      const wait = phaseStart + e.at - this.history.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      try {
        if (e.heal) this.heal(e.f);
        else await this.inject(e.f);
      } catch (err) {
        this.log(`nemesis ${e.f.kind}: ${String(err)}`);
        this.history.write({ k: 'nemesis', t_ms: this.history.now(), action: 'inject', fault: `${e.f.kind}-failed`, target: String(e.f.target), detail: String(err).slice(0, 300) });
      }
    }
  }

  // ------------------------------------------------------------------ the soak

  async run(): Promise<SoakRun> {
    const t0 = this.history.now();
    const phases: SoakRun['phases'] = [];
    try {
      await Promise.all(this.slots.map((s) => this.worker(s)));
      for (const [i, phase] of this.o.phases.entries()) {
        const start = this.history.now();
        this.history.write({ k: 'phase', t_ms: start, phase: phase.name });
        this.log(`phase ${phase.name} (${phase.fault ?? 'no fault'}, ${phase.duration_ms / 1000} s)`);
        const plan = planPhase(this.o.seed, phase, i, this.slots.length, this.o.postgres?.hosts ?? 0);
        this.stopAt = start + phase.duration_ms;
        await Promise.all([...this.slots.map((s) => this.loop(s, this.stopAt)), this.nemesis(plan, start)]);
        this.healAll();
        phases.push({ ...phase, start_ms: start, end_ms: this.history.now() });
      }
      const drain = await this.drain();
      await this.finalRead();
      return { files: this.files, phases, drain, wall_ms: this.history.now() - t0 };
    } finally {
      this.healAll();
      this.links.removeAll();
      await Promise.all(this.slots.map((s) => s.proc?.shutdown(5_000)));
      this.history.close();
    }
  }

  private healAll(): void {
    for (let h = 1; h <= (this.o.postgres?.hosts ?? 0); h++) this.links.heal(h);
  }

  /** After the nemesis has healed: drive every unfinished run to its end, within the deadline. */
  private async drain(): Promise<SoakRun['drain']> {
    const start = this.history.now();
    this.history.write({ k: 'phase', t_ms: start, phase: 'drain' });
    const deadline = start + this.o.drainDeadlineMs;
    await Promise.all(
      this.slots.map(async (slot) => {
        while (this.history.now() < deadline) {
          let progressed = false;
          try {
            progressed = await this.step(slot, true);
          } catch (e) {
            this.log(`drain, worker ${slot.index}: ${String(e)}`);
          }
          if (!progressed) {
            if ([...this.runs.values()].every((r) => r.state === 'done' || r.state === 'new')) return;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      }),
    );
    const unfinished = [...this.runs.values()].filter((r) => r.state !== 'done').map((r) => r.plan.runId);
    return { start_ms: start, end_ms: this.history.now(), unfinished };
  }

  /**
   * One run's final read. A store that is unavailable for a moment (a PostgreSQL server still
   * restarting after the last server kill on a loaded machine) is asked again, as an operator
   * would, for up to FINAL_READ_RETRY_MS; any other answer is the answer.
   */
  private async readOnce(proc: AdapterProcess, runId: string): Promise<RequestResult> {
    const deadline = this.history.now() + FINAL_READ_RETRY_MS;
    for (;;) {
      const r = await proc.request({ op: 'readStore', runId }, 30_000);
      const unavailable = r.kind === 'adapter-error' && r.message.includes('(UNAVAILABLE)');
      if (!unavailable || this.history.now() >= deadline) return r;
      this.log(`final read of ${runId}: the store is unavailable; asking again`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  /** Every run read by a fresh process in the root namespace: the checker's final state. */
  private async finalRead(): Promise<void> {
    const reader: Slot = { index: -1, host: 'root', proc: null, ready: null, restarts: 0 };
    const proc = AdapterProcess.spawn(this.spec(reader), this.o.adapter.cwd);
    try {
      const opened = await proc.request({ op: 'open', storePath: this.storePath, sinkPath: `${this.files.sink}.reader`, replica: 'final-reader' }, 60_000);
      if (opened.kind !== 'reply') throw new Error(`final reader did not open: ${JSON.stringify(opened)} ${proc.stderr}`);
      for (const s of this.scenarios) await proc.request({ op: 'define', workflow: s.workflow }, 30_000);
      const views: Record<string, RunView> = {};
      for (const runId of this.runs.keys()) {
        const r = await this.readOnce(proc, runId);
        if (r.kind !== 'reply') throw new Error(`final read of ${runId}: ${JSON.stringify(r)}`);
        views[runId] = RunViewSchema.parse(r.result);
      }
      fs.writeFileSync(this.files.final, `${JSON.stringify(views)}\n`);
    } finally {
      await proc.shutdown(5_000);
      fs.rmSync(`${this.files.sink}.reader`, { force: true });
    }
  }
}
