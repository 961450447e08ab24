/**
 * The contract's properties (docs/contract.md) judged on a generated cell, against the harness's
 * own model of the workflow (./model.ts): the same eight properties and the same notions as the
 * reference checkers (../checkers/), with the model in place of the reference workflow's fixed
 * expectations. They read only the observations of ./run.ts; each can fail on a hand-made
 * observation (./checkers.test.ts), and the reapply-transform canary shows it on real runs.
 */
import { PROPERTIES, type PropertyId, type Verdict } from '../checkers/verdict.js';
import { Findings, canonical, clip, describeChanges, notApplicable, outcomeText, recordChanges, unchanged } from '../checkers/verdict.js';
import type { Outcome, RunView } from '../protocol.js';
import type { SinkLine } from '../sink.js';
import type { Expectation, Refusal } from './model.js';
import { sameStored } from './model.js';
import type { Attempt, DrivenGeneratedRun, GeneratedCellRun } from './run.js';
import { writeVerdict } from './schema-model.js';

type Check = (run: GeneratedCellRun, expected: Expectation) => Verdict;

function linesOf(run: GeneratedCellRun, driven: DrivenGeneratedRun | null): Array<{ line: SinkLine; index: number }> {
  if (driven === null) return [];
  const out: Array<{ line: SinkLine; index: number }> = [];
  for (let i = driven.window.from; i < driven.window.to; i++) {
    const line = run.sink[i];
    if (line !== undefined && line.run === driven.runId) out.push({ line, index: i });
  }
  return out;
}

function count(list: readonly string[], item: string): number {
  return list.filter((x) => x === item).length;
}

/**
 * Whether the main run took the second of the two ends the model allows for a resume value whose
 * completion the state schema refuses (model.ts): refused before its claim, so the run is still
 * parked and the claim the model counts was never made.
 */
function refusedBeforeClaim(run: GeneratedCellRun, expected: Expectation): boolean {
  const final = expected.final;
  return final.kind === 'stuck' && final.at === 'resume-apply' && run.main?.view?.status === 'parked';
}

/** The status a run must have when it stops where the model says. */
function expectedStatus(expected: Expectation): RunView['status'] {
  switch (expected.final.kind) {
    case 'refused-at-start':
      return 'absent';
    case 'completed':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'parked':
    case 'stuck-parked':
      return 'parked';
    case 'stuck':
      return 'running';
  }
}

function describeRefusal(r: Refusal): string {
  return r.code === 'INVALID' ? `invalid at ${r.field}` : `${r.reason} at ${r.field}`;
}

/**
 * Whether an outcome is the refusal the model predicts: a validation error (or an INVALID_VALUE
 * refusal) naming the field, and, when the system names its own code and reason, the same kind.
 */
function refusedAs(outcome: Outcome | null, refusal: Refusal, what: 'state' | 'resume'): string | null {
  const detail = outcome?.refusal ?? outcome?.error;
  const typed = (outcome?.outcome === 'error' && outcome.error?.kind === 'validation') || (outcome?.outcome === 'refused' && outcome.refusal?.code === 'INVALID_VALUE');
  if (!typed || detail === undefined) return `expected a refusal (${describeRefusal(refusal)}), got ${outcomeText(outcome)}`;
  if (detail.field !== refusal.field && !detail.message.includes(refusal.field)) return `the refusal names ${detail.field ?? 'no field'}, expected ${refusal.field}: ${clip(detail.message)}`;
  if (detail.systemCode !== undefined) {
    const code = refusal.code === 'UNFAITHFUL' ? 'REMIT_VALUE_UNFAITHFUL' : what === 'resume' ? 'REMIT_RESUME_VALUE_INVALID' : 'REMIT_STATE_INVALID';
    if (detail.systemCode !== code) return `refused with ${detail.systemCode}, expected ${code} (${describeRefusal(refusal)})`;
    if (refusal.code === 'UNFAITHFUL' && detail.reason !== undefined && detail.reason !== refusal.reason) return `refused for ${detail.reason}, expected ${refusal.reason} at ${refusal.field}`;
  }
  return null;
}

const prefixContinuation: Check = (run, expected) => {
  const main = run.main;
  if (main === null) return notApplicable('the main run was not driven');
  const f = new Findings();
  const view = main.view;
  if (view === null) {
    f.fail('the main run could not be read after its steps');
    return f.verdict();
  }
  const wantedStatus = refusedBeforeClaim(run, expected) ? 'parked' : expectedStatus(expected);
  f.expect(view.status === wantedStatus, `the main run ended ${view.status} (next ${view.nextAction}), the model says ${expected.final.kind} (${expectedStatus(expected)})`);
  f.expect(canonical(view.completedNodes) === canonical(expected.completedNodes), `completed nodes ${clip(JSON.stringify(view.completedNodes))}, the model's ${clip(JSON.stringify(expected.completedNodes))}`);
  if (view.exists) {
    f.expect(view.states.length === expected.states.length && view.states.every((s, i) => sameStored(s, expected.states[i])), `stored states differ from the model's: ${clip(canonical(view.states), 240)} vs ${clip(canonical(expected.states), 240)}`);
    f.expect(sameStored(view.headState, expected.headState), `head state ${clip(canonical(view.headState), 200)}, the model's ${clip(canonical(expected.headState), 200)}`);
  }
  const scenario = run.scenario;
  if (scenario.fault !== null && !run.faultsFired.some((e) => e.point === scenario.fault!.point)) {
    f.fail(`the run never reached ${scenario.fault.point} #${scenario.fault.occurrence}, which the model's uninterrupted run reaches`);
  }
  const lines = linesOf(run, main);
  run.faults.forEach((fault, i) => {
    const at = fault.events[0]?.point ?? fault.ending;
    if (fault.view === null) {
      f.fail(`after the fault at ${at} the run could not be read`);
      return;
    }
    const changes = recordChanges(fault.view, view);
    f.expect(changes.missing.length === 0 && changes.changed.length === 0, `records durable at the fault at ${at} were lost or rewritten: ${describeChanges(changes)}`);
    const durable = fault.view.completedNodes;
    f.expect(canonical(view.completedNodes.slice(0, durable.length)) === canonical(durable), `nodes durable at the fault at ${at} are not a prefix of the final ones`);
    const laterFaults = run.faults.length - i - 1;
    for (const node of new Set([...Object.keys(expected.pureRuns), ...Object.keys(expected.effectInstances)])) {
      const isPure = node in expected.pureRuns;
      const wanted = (isPure ? expected.pureRuns[node] : expected.effectInstances[node]) ?? 0;
      const left = Math.max(0, wanted - count(durable, node));
      const again = lines.filter(({ line, index }) => index >= fault.sinkOffset && line.node === node && line.t === (isPure ? 'pure' : 'invoke')).length;
      f.expect(again <= left * (1 + laterFaults), `${node} ran ${again} more time(s) after the fault at ${at}, when ${durable.filter((n) => n === node).length} of its ${wanted} completion(s) were durable`);
    }
  });
  if (run.faults.length > 0) f.note(`${run.faults.length} fault(s); continued from the durable prefix`);
  return f.verdict();
};

const effectExactlyOnce: Check = (run, expected) => {
  if (run.main === null) return notApplicable('the main run was not driven');
  const f = new Findings();
  const lines = linesOf(run, run.main);
  const faults = run.faults.length;
  const nodes = new Set([...Object.keys(expected.effectInstances), ...lines.filter(({ line }) => line.t !== 'pure').map(({ line }) => line.node)]);
  if (nodes.size === 0) return notApplicable('the run has no effect');
  for (const node of nodes) {
    const wanted = expected.effectInstances[node] ?? 0;
    const applied = new Set(lines.filter(({ line }) => line.t === 'apply' && line.node === node).map(({ line }) => line.key));
    const invocations = lines.filter(({ line }) => line.t === 'invoke' && line.node === node).length;
    f.expect(applied.size === wanted, `${node}: applied under ${applied.size} distinct key(s), the model runs it ${wanted} time(s)`);
    f.expect(invocations <= wanted + faults, `${node}: handler invoked ${invocations} times for ${wanted} instance(s) with ${faults} fault(s)`);
    f.note(`${node}: ${invocations} raw invocation(s), ${applied.size} applied`);
  }
  for (const fault of run.faults) {
    for (const key of fault.view?.effectKeysDone ?? []) {
      const again = lines.filter(({ line, index }) => index >= fault.sinkOffset && line.t === 'invoke' && line.key === key).length;
      f.expect(again === 0, `the handler for key ${key} was invoked ${again} more time(s) after its completion was durable`);
    }
  }
  return f.verdict();
};

const forkDeterminism: Check = (run, expected) => {
  const forks = run.forks;
  if (forks === null) return notApplicable('the scenario has no fork (the run did not complete)');
  const f = new Findings();
  const at = run.scenario.fork!;
  const checkpoint = expected.checkpoints.find((c) => c.node === at.after && c.occurrence === at.occurrence);
  if (forks.sourceBefore === null || forks.sourceAfter === null) f.fail('the source run could not be read around the forks');
  else f.expect(unchanged(recordChanges(forks.sourceBefore, forks.sourceAfter)), `the source run changed: ${describeChanges(recordChanges(forks.sourceBefore, forks.sourceAfter))}`);
  const mainKeys = new Set(linesOf(run, run.main).filter(({ line }) => line.t === 'apply').map(({ line }) => line.key));
  const keysOfForks: string[] = [];
  forks.runs.forEach((fork, i) => {
    const label = `fork ${i + 1} at ${at.after} #${at.occurrence}`;
    if (fork === null) {
      f.fail(`${label} was not created`);
      return;
    }
    f.expect(fork.view?.status === 'completed', `${label} did not complete: ${outcomeText(fork.final)}`);
    f.expect(sameStored(fork.view?.headState, expected.headState), `${label} ended in ${clip(canonical(fork.view?.headState), 200)}, the model's ${clip(canonical(expected.headState), 200)}`);
    const lines = linesOf(run, fork);
    for (const [node, wanted] of Object.entries(checkpoint?.effectsAfter ?? {})) {
      const invocations = lines.filter(({ line }) => line.t === 'invoke' && line.node === node).length;
      const keys = [...new Set(lines.filter(({ line }) => line.t === 'apply' && line.node === node).map(({ line }) => line.key ?? ''))];
      f.expect(invocations === wanted && keys.length === wanted, `${label}: ${node} invoked ${invocations} time(s) under ${keys.length} key(s), ${wanted} after the fork point`);
      for (const key of keys) {
        f.expect(!mainKeys.has(key), `${label}: ${node} reused the source's key ${key}`);
        keysOfForks.push(key);
      }
    }
    const inherited = lines.filter(({ line }) => line.t === 'invoke' && !(line.node in (checkpoint?.effectsAfter ?? {}))).length;
    f.expect(inherited === 0, `${label}: ${inherited} invocation(s) of effects that ran only before the fork point`);
  });
  f.expect(new Set(keysOfForks).size === keysOfForks.length, 'the two forks share an idempotency key');
  const [a, b] = forks.runs;
  if (a?.view != null && b?.view != null) {
    f.expect(canonical(a.view.normalized) === canonical(b.view.normalized), `the two forks' logs differ apart from ids (${a.view.normalized.length} vs ${b.view.normalized.length} records)`);
  }
  return f.verdict();
};

function checkAttempts(f: Findings, attempts: readonly Attempt[], refusals: ReadonlyArray<Refusal | null>, label: string, what: 'state' | 'resume'): void {
  attempts.forEach((attempt, i) => {
    const refusal = refusals[i];
    if (refusal === null || refusal === undefined) return;
    const wrong = refusedAs(attempt.outcome, refusal, what);
    if (wrong !== null) f.fail(`${label} #${i + 1}: ${wrong}`);
    if (what === 'state') f.expect(attempt.after?.exists === false, `${label} #${i + 1} was refused but the run exists`);
    if (attempt.before !== null && attempt.after !== null) {
      f.expect(unchanged(recordChanges(attempt.before, attempt.after)), `${label} #${i + 1} reached the store: ${describeChanges(recordChanges(attempt.before, attempt.after))}`);
      if (what === 'resume') f.expect(attempt.after.status === 'parked', `${label} #${i + 1} consumed or moved the interrupt (${attempt.after.status})`);
    }
  });
}

const checkpointValidity: Check = (run, expected) => {
  const f = new Findings();
  const schema = run.scenario.workflow.state;
  const views: Array<[string, RunView | null | undefined]> = [['main run', run.main?.view], ...(run.forks?.runs ?? []).map((r, i): [string, RunView | null | undefined] => [`fork ${i + 1}`, r?.view])];
  for (const [label, view] of views) {
    if (view == null) continue;
    if (!view.integrity.ok) f.fail(`${label}: the store failed its integrity check at ${view.integrity.record}`);
    view.states.forEach((state, i) => {
      const verdict = writeVerdict(schema, state);
      if (!verdict.ok) f.fail(`${label}: stored state #${i} does not read back under the state schema (${describeRefusal(verdict)})`);
      else if (!sameStored(verdict.stored, state)) f.fail(`${label}: stored state #${i} is not what its schema returns for it`);
    });
  }
  checkAttempts(f, run.nearMissInputs, expected.nearMissInputs, 'near-miss input', 'state');
  (run.main?.resumeNearMisses ?? []).forEach((attempts, park) => {
    checkAttempts(f, attempts, expected.parks[park]?.nearMisses ?? [], `near-miss resume value of park ${park + 1}`, 'resume');
  });
  const final = expected.final;
  if (final.kind === 'refused-at-start' || final.kind === 'stuck' || final.kind === 'stuck-parked') {
    const wrong = refusedAs(run.main?.final ?? null, final.refusal, final.kind === 'stuck-parked' ? 'resume' : 'state');
    if (wrong !== null) f.fail(`${final.kind === 'refused-at-start' ? 'the input' : `node ${final.node}`}: ${wrong}`);
    else f.note(`refused as the model says: ${describeRefusal(final.refusal)}`);
  }
  return f.verdict();
};

const consumeOnce: Check = (run, expected) => {
  const dup = run.duplicate;
  if (dup === null && expected.claims === 0) return notApplicable('the run has no claimed interrupt');
  const f = new Findings();
  const claims = expected.claims - (refusedBeforeClaim(run, expected) ? 1 : 0);
  if (run.main?.view != null) f.expect(run.main.view.claims === claims, `${run.main.view.claims} claims are durable, the model claims ${claims}`);
  if (dup !== null) {
    const code = dup.outcome?.refusal?.code ?? '';
    // Refused before its claim, the interrupt was never consumed: the same value is refused again as it was.
    const refusedAgain = refusedBeforeClaim(run, expected) && refusedAs(dup.outcome, (expected.final as { refusal: Refusal }).refusal, 'state') === null;
    f.expect(refusedAgain || (dup.outcome?.outcome === 'refused' && ['ALREADY_CONSUMED', 'NOT_PARKED'].includes(code)), `a second resume of a consumed interrupt was not refused with a distinct error: ${outcomeText(dup.outcome)}`);
    if (dup.before !== null && dup.after !== null) f.expect(unchanged(recordChanges(dup.before, dup.after)), `the second resume was recorded: ${describeChanges(recordChanges(dup.before, dup.after))}`);
    f.expect(dup.window.to === dup.window.from, `the second resume ran node code (${dup.window.to - dup.window.from} sink line(s))`);
  }
  return f.verdict();
};

function recovered(view: RunView): string {
  const { status, nextAction, completedNodes, effectsDone, headState, recoveries, records, claims } = view;
  return canonical({ status, nextAction, completedNodes, effectsDone, headState, recoveries, records, claims });
}

const recoveryDeterminism: Check = (run) => {
  const r = run.recoverTwice;
  if (r === null) return notApplicable('the scenario does not recover twice');
  const f = new Findings();
  if (r.first === null || r.second === null) {
    f.fail('the run could not be recovered twice');
    return f.verdict();
  }
  f.expect(recovered(r.first) === recovered(r.second), 'recovering twice in one process gives different results');
  if (r.otherProcess !== null) f.expect(recovered(r.first) === recovered(r.otherProcess), 'a second process recovers differently');
  for (const view of [r.first, r.otherProcess]) {
    if (view === null) continue;
    const digests = new Set(Object.values(view.recoveries));
    f.expect(digests.size <= 1, `recovery implementations disagree: ${Object.keys(view.recoveries).join(', ')}`);
  }
  for (const fault of run.faults) if (fault.view?.status === 'invalid') f.fail(`recovery failed after the fault in ${fault.step}`);
  return f.verdict();
};

const forkIntent: Check = (run) => {
  const c = run.continueFromOlder;
  if (c === null) return notApplicable('the scenario does not continue from an older checkpoint');
  const f = new Findings();
  f.expect(c.outcome?.outcome === 'refused' && c.outcome.refusal?.code === 'IMPLICIT_FORK', `continuing from an older checkpoint without a fork was not refused: ${outcomeText(c.outcome)}`);
  if (c.before !== null && c.after !== null) f.expect(unchanged(recordChanges(c.before, c.after)), `continuing from an older checkpoint wrote: ${describeChanges(recordChanges(c.before, c.after))}`);
  f.expect(c.window.to === c.window.from, 'continuing from an older checkpoint ran node code');
  return f.verdict();
};

const liveness: Check = (run, expected) => {
  const f = new Findings();
  for (const incident of run.incidents) f.fail(`${incident.what} in ${incident.step}: ${clip(incident.detail)}`);
  for (const fault of run.faults) {
    const at = fault.events[0]?.point ?? fault.ending;
    if (fault.view === null) f.fail(`after the fault at ${at}, recovery gave no answer`);
    else f.expect(fault.view.nextAction !== 'STUCK' && fault.view.status !== 'invalid', `after the fault at ${at}, recovery named no next action (${fault.view.status})`);
  }
  const status = run.main?.view?.status;
  const wanted = expectedStatus(expected);
  if (expected.final.kind === 'completed' || expected.final.kind === 'failed') {
    f.expect(status === wanted, `the main run did not reach its end (${status ?? 'unreadable'}, the model says ${wanted})`);
  }
  for (const [i, fork] of (run.forks?.runs ?? []).entries()) {
    if (fork !== null) f.expect(fork.view?.status === 'completed', `fork ${i + 1} did not reach its end (${fork.view?.status ?? 'unreadable'})`);
  }
  return f.verdict();
};

const CHECKS: Record<PropertyId, Check> = {
  'prefix-continuation': prefixContinuation,
  'effect-exactly-once': effectExactlyOnce,
  'fork-determinism': forkDeterminism,
  'checkpoint-validity': checkpointValidity,
  'consume-once': consumeOnce,
  'recovery-determinism': recoveryDeterminism,
  'fork-intent': forkIntent,
  liveness,
};

/** Every property's verdict on one generated cell. */
export function checkGenerated(run: GeneratedCellRun, expected: Expectation): Record<PropertyId, Verdict> {
  const out = {} as Record<PropertyId, Verdict>;
  for (const p of PROPERTIES) out[p] = CHECKS[p](run, expected);
  return out;
}
