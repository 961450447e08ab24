/**
 * fast-check commands for the model-based test, one class per command with a readable toString
 * (a failing sequence prints as a script one can replay by seed and path).
 *
 * Faults: a command may carry a fault spec (testing/fault-spec.ts); the hook throws InjectedFault
 * there, which stops the sequencer mid-transition the way a crash would (what is durable stays,
 * nothing else). A later Crash reopens the store; a later Continue must finish the run.
 */

import fc from 'fast-check';
import { bytesEqual, jsonEqual, type Json } from '../../src/json.js';
import {
  AlreadyConsumedError, BeyondHeadError, ConflictError, EffectInFlightError, ImplicitForkError, ResumeValueInvalidError, RunNotFoundError,
} from '../../src/errors.js';
import { NO_HOOKS, type SequencerHooks } from '../../src/faults.js';
import type { RunResult } from '../../src/sequencer/sequencer.js';
import { checkFork, logFacts } from '../contract-checks.js';
import { hooksFor, InjectedFault, parseFaultSpec } from '../../src/testing/fault-spec.js';
import {
  checkAll, expectedFinalState, MAIN_INSTANCE, observeClaims, expectedSettledStatus, modelRefund, pathFor, type Model, type ModelRun,
  type RealSystem, type RefundInput,
} from './system.js';

type Cmd = fc.AsyncCommand<Model, RealSystem>;

export class ModelViolation extends Error {
  constructor(command: string, violations: string[]) {
    super(`after ${command}:\n  ${violations.join('\n  ')}`);
    this.name = 'ModelViolation';
  }
}

function assertThat(condition: boolean, command: string, what: string): void {
  if (!condition) throw new ModelViolation(command, [what]);
}

async function settle(model: Model, real: RealSystem, command: string): Promise<void> {
  const violations = await checkAll(model, real);
  if (violations.length > 0) throw new ModelViolation(command, violations);
}

function parkedOn(run: ModelRun): string | undefined {
  const facts = logFacts(run.runId, run.lastLog);
  const last = facts.records[facts.records.length - 1];
  const lastPark = facts.parks[facts.parks.length - 1];
  return last && lastPark && last.seq === lastPark.seq ? lastPark.id : undefined;
}

function faultHooks(fault: string | null): SequencerHooks {
  if (!fault) return NO_HOOKS;
  return hooksFor(parseFaultSpec(fault), (point, info) => {
    throw new InjectedFault(point, info);
  });
}

/** Run a drive with an optional fault; `faulted` when the injected fault fired. */
async function withFault<T>(fault: string | null, drive: (hooks: SequencerHooks) => Promise<T>): Promise<{ result?: T; faulted: boolean }> {
  try {
    return { result: await drive(faultHooks(fault)), faulted: false };
  } catch (error) {
    if (error instanceof InjectedFault) return { faulted: true };
    throw error;
  }
}

/** A fault-free drive ended: the run is where the model says, with the state the model computes. */
async function expectSettled(run: ModelRun, real: RealSystem, result: RunResult, command: string): Promise<void> {
  const log = await real.store.readLog(run.runId);
  const facts = logFacts(run.runId, log);
  observeClaims(run, facts);
  const expected = expectedSettledStatus(run);
  assertThat(result.status === expected, command, `${run.runId} is ${result.status}, the model expects ${expected}`);
  if (expected === 'completed') {
    assertThat(facts.terminal === 'completed', command, `${run.runId}: log does not end in RUN_COMPLETED`);
    const want = expectedFinalState(run, facts);
    assertThat(jsonEqual(result.state as Json, want), command, `${run.runId} final state ${JSON.stringify(result.state)} != model ${JSON.stringify(want)}`);
  } else {
    const id = parkedOn({ ...run, lastLog: log });
    assertThat(result.interrupt?.id === id && id !== undefined, command, `${run.runId}: parked on ${result.interrupt?.id}, log says ${id}`);
    assertThat(!run.consumedIds.includes(id!), command, `${run.runId}: parked on an already consumed id ${id}`);
  }
}

// ------------------------------------------------------------------ commands

export class StartCommand implements Cmd {
  constructor(readonly input: Omit<RefundInput, 'orderId' | 'customerEmail'>, readonly fault: string | null) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.length < 4;
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const runId = `run-${m.nextRunNo++}`;
    const input: RefundInput = { orderId: `order-${runId}`, customerEmail: 'ada@example.com', ...this.input };
    const run: ModelRun = { runId, input, expectedPath: pathFor(input), lastLog: new Uint8Array(), approval: undefined, consumedIds: [], settled: false };
    m.runs.push(run);
    const { result, faulted } = await withFault(this.fault, (hooks) => r.remit(hooks).start(r.workflow, input, { runId }));
    if (!faulted) await expectSettled(run, r, result!, String(this));
    await settle(m, r, String(this));
  }
  toString(): string {
    return `Start(${this.input.reason} ${this.input.amountCents}c → refund ${modelRefund({ ...this.input, orderId: '', customerEmail: '' })}${this.fault ? `, fault ${this.fault}` : ''})`;
  }
}

export class ContinueCommand implements Cmd {
  constructor(readonly pick: number, readonly fault: string | null) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.length > 0;
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const run = m.pick(this.pick)!;
    if (run.lastLog.length === 0) {
      // Its start was stopped before RUN_STARTED was durable: the run does not exist.
      let error: unknown;
      await r.remit().continueRun(run.runId).catch((e) => (error = e));
      assertThat(error instanceof RunNotFoundError, String(this), `continuing a run that never started: expected RunNotFoundError, got ${String(error)}`);
      await settle(m, r, String(this));
      return;
    }
    const { result, faulted } = await withFault(this.fault, (hooks) => r.remit(hooks).continueRun(run.runId));
    if (!faulted) await expectSettled(run, r, result!, String(this));
    await settle(m, r, String(this));
  }
  toString(): string {
    return `Continue(#${this.pick}${this.fault ? `, fault ${this.fault}` : ''})`;
  }
}

/** Exactly one transition: drive the run and stop right after its next append commits. */
export class StepCommand implements Cmd {
  constructor(readonly pick: number) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.some((run) => run.lastLog.length > 0);
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const run = m.pick(this.pick, (x) => x.lastLog.length > 0)!;
    const before = await r.store.readRecords(run.runId);
    const { result, faulted } = await withFault('append.after', (hooks) => r.remit(hooks).continueRun(run.runId));
    const after = await r.store.readRecords(run.runId);
    if (faulted) assertThat(after.length > before.length, String(this), 'a step committed nothing');
    else assertThat(after.length === before.length, String(this), `a settled run (${result!.status}) changed without a step`);
    if (!faulted) await expectSettled(run, r, result!, String(this));
    await settle(m, r, String(this));
  }
  toString(): string {
    return `Step(#${this.pick})`;
  }
}

export class CrashCommand implements Cmd {
  check(): boolean {
    return true;
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const before = await Promise.all(m.runs.map((run) => r.store.readLog(run.runId)));
    await r.crash();
    const after = await Promise.all(m.runs.map((run) => r.store.readLog(run.runId)));
    m.runs.forEach((run, i) => assertThat(bytesEqual(before[i]!, after[i]!), String(this), `${run.runId}: durable log changed across the crash`));
    await settle(m, r, String(this));
  }
  toString(): string {
    return 'Crash(drop the sequencer and memory, reopen the store)';
  }
}

export class ResumeCommand implements Cmd {
  constructor(readonly pick: number, readonly approved: boolean, readonly fault: string | null) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.some((run) => parkedOn(run) !== undefined);
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const run = m.pick(this.pick, (x) => parkedOn(x) !== undefined)!;
    const id = parkedOn(run)!;
    const value = { approved: this.approved, approver: 'kim' };
    const { result, faulted } = await withFault(this.fault, (hooks) => r.remit(hooks).resume(run.runId, id, value));
    const facts = logFacts(run.runId, await r.store.readLog(run.runId));
    const claim = facts.claims.find((c) => c.id === id);
    if (claim) assertThat(JSON.stringify(claim.value) === JSON.stringify(value), String(this), `claimed value ${JSON.stringify(claim.value)} is not the one sent`);
    if (!faulted) {
      assertThat(claim !== undefined, String(this), `${run.runId}: resume returned but no claim of ${id} is durable`);
      await expectSettled(run, r, result!, String(this));
    }
    await settle(m, r, String(this));
  }
  toString(): string {
    return `Resume(#${this.pick}, approved=${this.approved}${this.fault ? `, fault ${this.fault}` : ''})`;
  }
}

export class InvalidResumeCommand implements Cmd {
  constructor(readonly pick: number, readonly value: unknown) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.some((run) => parkedOn(run) !== undefined);
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const run = m.pick(this.pick, (x) => parkedOn(x) !== undefined)!;
    const id = parkedOn(run)!;
    const before = await r.store.readLog(run.runId);
    let error: unknown;
    await r.remit().resume(run.runId, id, this.value).catch((e) => (error = e));
    assertThat(error instanceof ResumeValueInvalidError, String(this), `expected ResumeValueInvalidError, got ${String(error)}`);
    assertThat(bytesEqual(before, await r.store.readLog(run.runId)), String(this), 'an invalid resume changed the log');
    await settle(m, r, String(this));
    assertThat(parkedOn(run) === id, String(this), 'the interrupt is no longer parked after an invalid resume');
  }
  toString(): string {
    return `InvalidResume(#${this.pick}, ${JSON.stringify(this.value)})`;
  }
}

export class DuplicateResumeCommand implements Cmd {
  constructor(readonly pick: number, readonly approved: boolean) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.some((run) => run.consumedIds.length > 0);
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const run = m.pick(this.pick, (x) => x.consumedIds.length > 0)!;
    const id = run.consumedIds[run.consumedIds.length - 1]!;
    const before = await r.store.readLog(run.runId);
    let error: unknown;
    await r.remit().resume(run.runId, id, { approved: this.approved, approver: 'late' }).catch((e) => (error = e));
    assertThat(error instanceof AlreadyConsumedError, String(this), `expected AlreadyConsumedError, got ${String(error)}`);
    assertThat(bytesEqual(before, await r.store.readLog(run.runId)), String(this), 'a duplicate resume changed the log');
    await settle(m, r, String(this));
  }
  toString(): string {
    return `DuplicateResume(#${this.pick}, approved=${this.approved})`;
  }
}

export class ConcurrentResumeCommand implements Cmd {
  constructor(readonly pick: number, readonly approvals: boolean[]) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.some((run) => parkedOn(run) !== undefined);
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const run = m.pick(this.pick, (x) => parkedOn(x) !== undefined)!;
    const id = parkedOn(run)!;
    const resumers = this.approvals.map(() => r.remit(NO_HOOKS, r.extraStore()));
    const outcomes = await Promise.allSettled(
      resumers.map((remit, i) => remit.resume(run.runId, id, { approved: this.approvals[i]!, approver: `resumer-${i}` })),
    );
    const served = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    assertThat(served.length === 1, String(this), `${served.length} resumers were served, expected exactly 1`);
    for (const o of refused) assertThat(o.reason instanceof AlreadyConsumedError, String(this), `a losing resumer got ${String(o.reason)}`);
    const winner = outcomes.indexOf(served[0]!);
    const facts = logFacts(run.runId, await r.store.readLog(run.runId));
    assertThat(facts.claims.filter((c) => c.id === id).length === 1, String(this), `${id} claimed ${facts.claims.length} times`);
    assertThat((facts.claims.find((c) => c.id === id)?.value as { approver?: string })?.approver === `resumer-${winner}`, String(this), 'the claim is not the served resumer\'s value');
    await expectSettled(run, r, (served[0] as PromiseFulfilledResult<RunResult>).value, String(this));
    await settle(m, r, String(this));
  }
  toString(): string {
    return `ConcurrentResume(#${this.pick}, ${this.approvals.length} resumers)`;
  }
}

/**
 * Several sequencers (the main replica and others, each its own instance id and store handle)
 * drive one run at once. Without waiting each finishes, or stops with ConflictError (it lost a
 * race) or EffectInFlightError (an attempt of another is live), writing nothing; with a wait each
 * finishes. The fence checks (checkAll, GuardedSink) hold throughout: a handler runs only under
 * its own claimed attempt.
 */
export class ConcurrentContinueCommand implements Cmd {
  constructor(readonly pick: number, readonly sequencers: number, readonly wait: boolean) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.some((run) => run.lastLog.length > 0);
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const run = m.pick(this.pick, (x) => x.lastLog.length > 0)!;
    const remits = Array.from({ length: this.sequencers }, (_, i) => r.remit(NO_HOOKS, r.extraStore(), i === 0 ? MAIN_INSTANCE : `replica-${i}`));
    const options = this.wait ? { waitForEffectMs: 10_000 } : {};
    const outcomes = await Promise.allSettled(remits.map((remit) => remit.continueRun(run.runId, options)));
    const finished = outcomes.filter((o): o is PromiseFulfilledResult<RunResult> => o.status === 'fulfilled');
    for (const o of outcomes) {
      if (o.status !== 'rejected') continue;
      const expected = this.wait ? false : o.reason instanceof ConflictError || o.reason instanceof EffectInFlightError;
      assertThat(expected, String(this), `a sequencer failed with ${String(o.reason)}`);
    }
    if (this.wait) assertThat(finished.length === this.sequencers, String(this), `${finished.length} of ${this.sequencers} waiting sequencers finished`);
    for (const f of finished) await expectSettled(run, r, f.value, String(this));
    await settle(m, r, String(this));
  }
  toString(): string {
    return `ConcurrentContinue(#${this.pick}, ${this.sequencers} sequencers${this.wait ? ', waiting' : ''})`;
  }
}

/**
 * The fence's headline case: a run is started by a sequencer that dies right after charge's intent
 * and attempt 1 are durable (or inside its handler, after the outside effect), then k recoverers
 * (other instance ids, their own store handles) continue it at once, waiting for the dead
 * sequencer's lease. charge's handler must be invoked exactly once by them all: once in total
 * when the crash came before the handler, twice (1 + the crash inside the window) when after.
 */
export class RecoverersCommand implements Cmd {
  constructor(readonly input: Omit<RefundInput, 'orderId' | 'customerEmail'>, readonly recoverers: number, readonly crashInHandler: boolean) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.length < 4 && modelRefund({ ...this.input, orderId: '', customerEmail: '' }) > 0;
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const runId = `run-${m.nextRunNo++}`;
    const input: RefundInput = { orderId: `order-${runId}`, customerEmail: 'ada@example.com', ...this.input };
    const run: ModelRun = { runId, input, expectedPath: pathFor(input), lastLog: new Uint8Array(), approval: undefined, consumedIds: [], settled: false };
    m.runs.push(run);
    const fault = this.crashInHandler ? 'effect.after-handler@chargeCard' : 'append.after:EFFECT_INTENT';
    // The crashed sequencer: an id nobody uses again (its process is gone), a short lease.
    const { faulted } = await withFault(fault, (hooks) => r.remit(hooks, r.store, `crashed-${runId}`).start(r.workflow, input, { runId }));
    assertThat(faulted, String(this), `the crash at ${fault} did not happen`);
    const remits = Array.from({ length: this.recoverers }, (_, i) => r.remit(NO_HOOKS, r.extraStore(), `recoverer-${i}`, 10_000));
    const outcomes = await Promise.allSettled(remits.map((remit) => remit.continueRun(runId, { waitForEffectMs: 10_000 })));
    for (const o of outcomes) assertThat(o.status === 'fulfilled', String(this), `a recoverer failed: ${o.status === 'rejected' ? String(o.reason) : ''}`);
    for (const o of outcomes) await expectSettled(run, r, (o as PromiseFulfilledResult<RunResult>).value, String(this));
    const facts = logFacts(runId, await r.store.readLog(runId));
    const key = facts.intents.find((i) => i.node === 'chargeCard')?.key ?? '(no intent)';
    const invocations = (await r.sink.counts()).byKey[key]?.invocations ?? 0;
    const expected = this.crashInHandler ? 2 : 1;
    assertThat(invocations === expected, String(this), `chargeCard (${key}) invoked ${invocations} times by the crashed sequencer and ${this.recoverers} recoverers, expected ${expected}`);
    await settle(m, r, String(this));
  }
  toString(): string {
    return `Recoverers(${this.recoverers} at once after a crash ${this.crashInHandler ? 'inside the handler' : 'right after the intent'})`;
  }
}

export class ForkCommand implements Cmd {
  constructor(readonly pick: number, readonly checkpointPick: number) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.length > 0 && m.runs.length < 6 && m.runs.some((run) => logFacts(run.runId, run.lastLog).checkpoints.length > 0);
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const source = m.pick(this.pick, (x) => logFacts(x.runId, x.lastLog).checkpoints.length > 0)!;
    const checkpoints = logFacts(source.runId, source.lastLog).checkpoints;
    const checkpointSeq = checkpoints[this.checkpointPick % checkpoints.length]!.seq;
    const newRunId = `${source.runId}.f${m.nextRunNo++}`;
    const before = await r.store.readLog(source.runId);
    const fork = await r.remit().fork(source.runId, checkpointSeq, { intent: { test: 'fork', checkpointSeq }, newRunId });
    assertThat(fork.runId === newRunId && fork.forkSeq === checkpointSeq + 1, String(this), `fork result ${JSON.stringify(fork)}`);
    const violations = checkFork(before, await r.store.readLog(source.runId), await r.store.readLog(newRunId), checkpointSeq, newRunId);
    if (violations.length > 0) throw new ModelViolation(String(this), violations);
    m.runs.push({
      runId: newRunId, input: source.input, expectedPath: source.expectedPath, lastLog: new Uint8Array(),
      approval: undefined, consumedIds: [], settled: false, forkedFrom: { runId: source.runId, checkpointSeq },
    });
    await settle(m, r, String(this));
  }
  toString(): string {
    return `Fork(#${this.pick}, checkpoint #${this.checkpointPick})`;
  }
}

export class ContinueFromOldCommand implements Cmd {
  constructor(readonly pick: number, readonly back: number, readonly beyond: boolean) {}
  check(m: Readonly<Model>): boolean {
    return m.runs.some((run) => logFacts(run.runId, run.lastLog).records.length >= 2);
  }
  async run(m: Model, r: RealSystem): Promise<void> {
    const run = m.pick(this.pick, (x) => logFacts(x.runId, x.lastLog).records.length >= 2)!;
    const before = await r.store.readLog(run.runId);
    const head = logFacts(run.runId, before).records.length - 1;
    const fromSeq = this.beyond ? head + 1 + this.back : this.back % head;
    let error: unknown;
    await r.remit().continueRun(run.runId, { fromSeq }).catch((e) => (error = e));
    const expected = this.beyond ? BeyondHeadError : ImplicitForkError;
    assertThat(error instanceof expected, String(this), `continue from ${fromSeq} (head ${head}): expected ${expected.name}, got ${String(error)}`);
    assertThat(bytesEqual(before, await r.store.readLog(run.runId)), String(this), 'a refused continue changed the log');
    await settle(m, r, String(this));
  }
  toString(): string {
    return `ContinueFromOld(#${this.pick}, ${this.beyond ? `head+1+${this.back}` : `back ${this.back}`})`;
  }
}

// ------------------------------------------------------------------ arbitraries

export const FAULTS = [
  'append.before', 'append.before#2', 'append.before#3', 'append.after', 'append.after#2', 'append.after#4',
  'append.after:EFFECT_INTENT', 'append.after:EFFECT_DONE', 'append.before:EFFECT_DONE',
  'effect.before-handler', 'effect.after-handler@chargeCard', 'effect.after-handler@notifyCustomer',
  'pure.before-return', 'resume.after-claim', 'append.after:RESUME_CLAIMED',
] as const;

const faultArb = fc.option(fc.constantFrom(...FAULTS), { freq: 2, nil: null });

export const inputArb = fc.record({
  amountCents: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 50_000 })),
  reason: fc.constantFrom('damaged' as const, 'late' as const, 'changed-mind' as const),
});

export const invalidApprovalArb = fc.constantFrom<unknown>(
  { approved: 'yes', approver: 'kim' },
  { approved: true },
  { approved: true, approver: '' },
  null,
  'approve',
  { approved: true, approver: 'kim', note: 'x'.repeat(501) },
);

/** A run always begins with a fault-free Start, so the commands after it have something to act on. */
export function modelScript(maxCommands: number): fc.Arbitrary<Cmd[]> {
  return fc
    .tuple(inputArb, fc.commands(allCommands(), { maxCommands, size: 'large' }))
    .map(([input, commands]) => [new StartCommand(input, null), ...commands]);
}

export function allCommands(): fc.Arbitrary<Cmd>[] {
  const start = fc.tuple(inputArb, faultArb).map(([input, fault]) => new StartCommand(input, fault));
  const resume = fc.tuple(fc.nat(), fc.boolean(), faultArb).map(([pick, ok, fault]) => new ResumeCommand(pick, ok, fault));
  return [
    start,
    start,
    resume,
    fc.tuple(fc.nat(), faultArb).map(([pick, fault]) => new ContinueCommand(pick, fault)),
    fc.constant(new CrashCommand()),
    fc.nat().map((pick) => new StepCommand(pick)),
    resume,
    fc.tuple(fc.nat(), invalidApprovalArb).map(([pick, value]) => new InvalidResumeCommand(pick, value)),
    fc.tuple(fc.nat(), fc.boolean()).map(([pick, ok]) => new DuplicateResumeCommand(pick, ok)),
    fc.tuple(fc.nat(), fc.array(fc.boolean(), { minLength: 2, maxLength: 4 })).map(([pick, oks]) => new ConcurrentResumeCommand(pick, oks)),
    fc.tuple(fc.nat(), fc.integer({ min: 2, max: 4 }), fc.boolean()).map(([pick, k, wait]) => new ConcurrentContinueCommand(pick, k, wait)),
    fc.tuple(inputArb, fc.integer({ min: 2, max: 5 }), fc.boolean()).map(([input, k, inHandler]) => new RecoverersCommand(input, k, inHandler)),
    fc.tuple(fc.nat(), fc.nat()).map(([pick, cp]) => new ForkCommand(pick, cp)),
    fc.tuple(fc.nat(), fc.nat({ max: 20 }), fc.boolean()).map(([pick, back, beyond]) => new ContinueFromOldCommand(pick, back, beyond)),
  ];
}
