/**
 * The recover race on hand-made observations: the checkers hold when one recoverer continues the
 * crashed run and the other is refused with CONFLICT, and fail when the race goes any other way.
 */
import { describe, expect, it } from 'vitest';
import type { CellRun } from '../observations.js';
import { checkAll, CHECKERS, PROPERTIES, type PropertyId } from './index.js';
import { clone, goodFaultRun, view } from './testing.js';

/** Shifts every sink window of `run` that starts at or after `at` by `by` lines. */
function shiftWindows(value: unknown, at: number, by: number): void {
  if (value === null || typeof value !== 'object') return;
  const w = value as { from?: unknown; to?: unknown };
  if (typeof w.from === 'number' && typeof w.to === 'number') {
    if (w.from >= at) w.from += by;
    if (w.to >= at) w.to += by;
    return;
  }
  for (const v of Object.values(value)) shiftWindows(v, at, by);
}

/**
 * goodFaultRun, crashed instead just after charge's intent was durable, then raced by two
 * recoverers: both invoke charge with the intent's key, one appends its completion, the other
 * is refused with CONFLICT.
 */
function goodRaceRun(): CellRun {
  const run = goodFaultRun();
  const ids = run.scenario.runIds;
  const point = 'after-commit:EFFECT_INTENT@charge';
  const fault = run.faults[0]!;
  fault.events = [{ event: 'fault', point, kind: 'sigkill' }];
  run.faultsFired = [...fault.events];
  fault.sinkOffset = 6;
  fault.view = { ...fault.view!, records: fault.view!.records.slice(0, 3), completedNodes: ['compute'], effectsDone: [], nextAction: 'INVOKE_EFFECT charge' };
  // The losing recoverer's invocation and application, with the same key, inside the start window.
  shiftWindows(run.steps, 8, 2);
  run.sink.splice(
    8,
    0,
    { t: 'invoke', node: 'charge', run: ids.main, pid: 2, key: 'm:charge:2' },
    { t: 'apply', node: 'charge', run: ids.main, pid: 2, key: 'm:charge:2' },
  );
  const after = view(ids.main, { records: run.mainView!.records.slice(0, 7), status: 'parked', completedNodes: ['compute', 'charge'], claims: 0 });
  run.steps.recoverConcurrent = {
    hosts: ['remit-h1', 'remit-h2'],
    outcomes: [
      { outcome: 'parked' },
      { outcome: 'refused', refusal: { code: 'CONFLICT', message: 'ConflictError: another sequencer appended first' } },
    ],
    waiting: { start: 2, append: 2 },
    before: fault.view,
    after,
    window: { from: 6, to: 10 },
  };
  return run;
}

function verdictOf(run: CellRun, property: PropertyId) {
  return (CHECKERS.find((c) => c.property === property) as (typeof CHECKERS)[number]).check(run);
}

function expectViolated(run: CellRun, property: PropertyId, evidence: RegExp): void {
  const v = verdictOf(run, property);
  expect(v.status, JSON.stringify(v)).toBe('violated');
  if (v.status === 'violated') expect(v.evidence.join('\n')).toMatch(evidence);
}

describe('the recover race (two recoverers of one crashed run on two hosts)', () => {
  it('every property holds when one continues and the other is refused with CONFLICT', () => {
    const verdicts = checkAll(goodRaceRun());
    for (const p of PROPERTIES) expect(verdicts[p].status, `${p}: ${JSON.stringify(verdicts[p])}`).toBe('holds');
    const pc = verdicts['prefix-continuation'];
    expect(pc.status === 'holds' && pc.notes.join(' ')).toMatch(/1\/2 recoverers progressed \(on remit-h1, remit-h2\)/);
  });

  it('violated when both recoverers continue the run', () => {
    const run = clone(goodRaceRun());
    run.steps.recoverConcurrent!.outcomes[1] = { outcome: 'parked' };
    expectViolated(run, 'prefix-continuation', /2 of 2 concurrent recoverers \(on remit-h1, remit-h2\) continued the crashed run, expected exactly 1/);
  });

  it('violated when the loser is refused without the typed conflict', () => {
    const run = clone(goodRaceRun());
    run.steps.recoverConcurrent!.outcomes[1] = { outcome: 'refused', refusal: { code: 'OTHER', message: 'some error' } };
    expectViolated(run, 'prefix-continuation', /0 of 2 concurrent recoverers were refused with a typed conflict/);
  });

  it('violated when neither progresses', () => {
    const run = clone(goodRaceRun());
    run.steps.recoverConcurrent!.outcomes[0] = { outcome: 'error', error: { kind: 'store', message: 'lost' } };
    expectViolated(run, 'prefix-continuation', /0 of 2 concurrent recoverers .* continued/);
  });

  it('violated when the race rewrote a durable record', () => {
    const run = clone(goodRaceRun());
    run.steps.recoverConcurrent!.after!.records[2] = { id: '2', hex: 'rewritten' };
    expectViolated(run, 'prefix-continuation', /before the recover race were lost or rewritten: 0 missing, 1 changed/);
  });

  it('effect exactly-once allows one more raw invocation per extra recoverer, and no more', () => {
    const run = clone(goodRaceRun());
    const ok = verdictOf(run, 'effect-exactly-once');
    expect(ok.status === 'holds' && ok.notes.join(' ')).toMatch(/charge: 2 raw invocation\(s\), 1 applied/);
    // Two more invocations inside the race: 4 > 1 + 1 fault + 1 extra recoverer.
    const more = { t: 'invoke' as const, node: 'charge', run: run.scenario.runIds.main, pid: 3, key: 'm:charge:2' };
    shiftWindows(run.steps, 10, 2);
    run.sink.splice(10, 0, more, more);
    expectViolated(run, 'effect-exactly-once', /charge: handler invoked 4 times with 1 fault\(s\) on the run and 2 concurrent recoverers/);
  });
});
