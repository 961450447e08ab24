/**
 * Each checker holds on a good hand-made observation and fails on one that breaks its property,
 * so every checker is shown able to fail. Every sub-check (each `f.expect` / `f.fail` of every
 * checker) is shown able to fail in checkers-subchecks.test.ts, which enumerates them from the
 * checkers' sources. Checkers never see an adapter here.
 */
import { describe, expect, it } from 'vitest';
import type { CellRun } from '../observations.js';
import { checkAll, CHECKERS, PROPERTIES, type PropertyId } from './index.js';
import { clone, goodConcurrentRun, goodFaultRun } from './testing.js';

function verdictOf(run: CellRun, property: PropertyId) {
  return (CHECKERS.find((c) => c.property === property) as (typeof CHECKERS)[number]).check(run);
}

function expectViolated(run: CellRun, property: PropertyId, evidence: RegExp): void {
  const v = verdictOf(run, property);
  expect(v.status, JSON.stringify(v)).toBe('violated');
  if (v.status === 'violated') expect(v.evidence.join('\n')).toMatch(evidence);
}

describe('checkers on good observations', () => {
  it('every property holds on the good fault-cell run', () => {
    const verdicts = checkAll(goodFaultRun());
    for (const p of PROPERTIES) expect(verdicts[p].status, `${p}: ${JSON.stringify(verdicts[p])}`).toBe('holds');
  });

  it('every property holds on the good concurrency-cell run', () => {
    const verdicts = checkAll(goodConcurrentRun());
    for (const p of PROPERTIES) expect(verdicts[p].status, `${p}: ${JSON.stringify(verdicts[p])}`).toBe('holds');
  });

  it('a run whose store failed throughout (no outcome, no state, no view) is judged, not a crash: every finding is text', () => {
    // Found running against a server that was down: the baseline ended without a state, and the
    // finding that names the state crashed the checker (canonical(undefined) was not a string).
    const run = goodFaultRun();
    const failed = { outcome: 'error' as const, error: { kind: 'store' as const, message: 'connect ECONNREFUSED' } };
    run.steps.baseline = { ...run.steps.baseline!, outcomes: [failed], final: failed as never, view: null };
    run.mainView = null;
    const verdicts = checkAll(run);
    expect(verdicts['prefix-continuation'].status).toBe('violated');
    for (const p of PROPERTIES) {
      const v = verdicts[p];
      if (v.status === 'violated') for (const line of v.evidence) expect(typeof line).toBe('string');
    }
  });

  it('there is exactly one checker per property', () => {
    expect(CHECKERS.map((c) => c.property).sort()).toEqual([...PROPERTIES].sort());
  });
});

describe('each checker fails when its property is broken', () => {
  it('prefix continuation: a wrong final state', () => {
    const run = clone(goodFaultRun());
    (run.mainView!.headState as { refundCents: number }).refundCents += 1;
    expectViolated(run, 'prefix-continuation', /final state .* differs/);
  });

  it('prefix continuation: a node durable at the fault runs again', () => {
    const run = clone(goodFaultRun());
    run.sink.splice(8, 0, { t: 'pure', node: 'compute', run: run.scenario.runIds.main, pid: 1 });
    run.steps.resume!.window = { from: 8, to: 11 };
    expectViolated(run, 'prefix-continuation', /compute ran again/);
  });

  it('prefix continuation: a record durable at the fault was rewritten', () => {
    const run = clone(goodFaultRun());
    run.mainView!.records[2] = { id: '2', hex: 'different' };
    expectViolated(run, 'prefix-continuation', /lost or rewritten/);
  });

  it('effect exactly-once: charge invoked again after its completion was durable', () => {
    const run = clone(goodFaultRun());
    const main = run.scenario.runIds.main;
    run.sink.splice(8, 0, { t: 'invoke', node: 'charge', run: main, pid: 2, key: 'm:charge:2' }, { t: 'apply', node: 'charge', run: main, pid: 2, key: 'm:charge:2' });
    run.steps.resume!.window = { from: 8, to: 12 };
    expectViolated(run, 'effect-exactly-once', /charge: handler invoked 1 more time/);
  });

  it('effect exactly-once: an effect applied under two keys', () => {
    const run = clone(goodFaultRun());
    run.sink.splice(10, 0, { ...run.sink[9]!, key: 'another-key' });
    run.steps.resume!.window = { from: 8, to: 11 };
    expectViolated(run, 'effect-exactly-once', /notify: applied under 2 distinct key/);
  });

  it('fork determinism: the source changed', () => {
    const run = clone(goodFaultRun());
    run.steps.forkTwice!.sourceAfter = { ...run.mainView!, records: [...run.mainView!.records, { id: '12', hex: 'extra' }] };
    expectViolated(run, 'fork-determinism', /not byte-identical/);
  });

  it('fork determinism: the two forks differ', () => {
    const run = clone(goodFaultRun());
    run.steps.forkTwice!.forks[1]!.view!.normalized = [{ kind: 'FORKED', runId: 'something else' }];
    expectViolated(run, 'fork-determinism', /forks' logs differ/);
  });

  it('fork determinism: a fork re-runs an inherited effect', () => {
    const run = clone(goodFaultRun());
    run.sink[10] = { ...run.sink[10]!, node: 'charge' };
    expectViolated(run, 'fork-determinism', /charge \(before the fork point\) ran again/);
  });

  it('checkpoint validity: a stored state violates the schema', () => {
    const run = clone(goodFaultRun());
    run.mainView!.states.push({ ...(run.mainView!.headState as object), refundCents: -1 });
    expectViolated(run, 'checkpoint-validity', /violates the schema at refundCents/);
  });

  it('checkpoint validity: an invalid resume value is accepted', () => {
    const run = clone(goodFaultRun());
    run.steps.probeInvalidResume!.invalid = { outcome: 'completed' };
    expectViolated(run, 'checkpoint-validity', /invalid resume value was not rejected/);
  });

  it('checkpoint validity: a corrupted record is loaded silently', () => {
    const run = clone(goodFaultRun());
    run.steps.probeCorruption = { ...run.steps.probeCorruption!, detected: false };
    expectViolated(run, 'checkpoint-validity', /loaded silently/);
  });

  it('consume-once: a second resume is served', () => {
    const run = clone(goodFaultRun());
    run.steps.resumeDuplicate!.outcome = { outcome: 'completed' };
    expectViolated(run, 'consume-once', /second resume .* was not refused/);
  });

  it('consume-once: two concurrent resumers are served and the gated effect fires twice', () => {
    const run = clone(goodConcurrentRun());
    const main = run.scenario.runIds.main;
    run.steps.resumeConcurrent!.outcomes[1] = { outcome: 'completed' };
    run.sink.splice(10, 0, { t: 'invoke', node: 'notify', run: main, pid: 3, key: 'm:notify:8' });
    run.steps.resumeConcurrent!.window = { from: 8, to: 11 };
    expectViolated(run, 'consume-once', /2 of 2 concurrent resumers were served[\s\S]*fired 2 times/);
  });

  it('recovery determinism: a second process recovers differently', () => {
    const run = clone(goodFaultRun());
    run.steps.recoverTwice!.otherProcess = { ...run.mainView!, nextAction: 'RUN_PURE compute' };
    expectViolated(run, 'recovery-determinism', /second process recovers differently, in nextAction/);
  });

  it('recovery determinism: the two cores disagree', () => {
    const run = clone(goodFaultRun());
    run.steps.recoverTwice!.first = { ...run.mainView!, recoveries: { wasm: 'a', reference: 'b' } };
    run.steps.recoverTwice!.second = run.steps.recoverTwice!.first;
    expectViolated(run, 'recovery-determinism', /recovery implementations disagree/);
  });

  it('fork intent: continuing from an older checkpoint is accepted', () => {
    const run = clone(goodFaultRun());
    run.steps.continueFromOlder!.outcome = { outcome: 'parked' };
    expectViolated(run, 'fork-intent', /was not refused: parked/);
  });

  it('fork intent: not applicable, with the reason, when the system cannot continue from an older checkpoint', () => {
    const run = clone(goodFaultRun());
    run.hello.continueFrom = { supported: false, reason: 'no API continues a run from an older snapshot' };
    const v = verdictOf(run, 'fork-intent');
    expect(v).toEqual({ status: 'not-applicable', reason: 'the system cannot continue a run from an older checkpoint: no API continues a run from an older snapshot' });
  });

  it('liveness: a command timed out', () => {
    const run = clone(goodFaultRun());
    run.incidents.push({ step: 'resume', what: 'timeout', detail: 'resume did not answer' });
    expectViolated(run, 'liveness', /timeout in step resume/);
  });

  it('liveness: a changed definition is replayed instead of refused', () => {
    const run = clone(goodFaultRun());
    run.steps.probeDefinitionChange!.outcome = { outcome: 'completed' };
    expectViolated(run, 'liveness', /continued under a changed one/);
  });
});

describe('not applicable when the schedule lacks what a property needs', () => {
  it('says why', () => {
    const run = clone(goodFaultRun());
    run.steps = {};
    run.mainView = null;
    for (const p of ['prefix-continuation', 'effect-exactly-once', 'fork-determinism', 'consume-once', 'recovery-determinism', 'fork-intent', 'liveness'] as const) {
      const v = verdictOf(run, p);
      expect(v.status, p).toBe('not-applicable');
    }
  });
});
