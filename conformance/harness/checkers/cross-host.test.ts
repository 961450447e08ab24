/**
 * The recoverer cells on hand-made observations: the checkers hold when the recoverers continue
 * the crashed run (one does the work; the others are refused with CONFLICT, or wait and get the
 * run's status back) with charge invoked once, and fail when the race goes any other way, in
 * particular when each recoverer invokes the handler (what a system without a fence does).
 */
import { describe, expect, it } from 'vitest';
import type { CellRun } from '../observations.js';
import { checkAll, CHECKERS, PROPERTIES, type PropertyId } from './index.js';
import { clone } from './testing.js';
import { goodRaceRun, shiftWindows } from './testing-subchecks.js';

function verdictOf(run: CellRun, property: PropertyId) {
  return (CHECKERS.find((c) => c.property === property) as (typeof CHECKERS)[number]).check(run);
}

function expectViolated(run: CellRun, property: PropertyId, evidence: RegExp): void {
  const v = verdictOf(run, property);
  expect(v.status, JSON.stringify(v)).toBe('violated');
  if (v.status === 'violated') expect(v.evidence.join('\n')).toMatch(evidence);
}

describe('the recoverer cells (two recoverers of one crashed run on two hosts)', () => {
  it('every property holds when one continues and the other is refused with CONFLICT, charge invoked once', () => {
    const verdicts = checkAll(goodRaceRun());
    for (const p of PROPERTIES) expect(verdicts[p].status, `${p}: ${JSON.stringify(verdicts[p])}`).toBe('holds');
    const pc = verdicts['prefix-continuation'];
    expect(pc.status === 'holds' && pc.notes.join(' ')).toMatch(/recoverers: 1\/2 got the run's status back, 1 refused with a conflict \(hosts: remit-h1, remit-h2\)/);
    const eo = verdicts['effect-exactly-once'];
    expect(eo.status === 'holds' && eo.notes.join(' ')).toMatch(/charge: 1 raw invocation\(s\), 1 applied/);
  });

  it('holds when both get the run back (one waited for the other\'s attempt)', () => {
    const run = clone(goodRaceRun());
    run.steps.recoverConcurrent!.outcomes[1] = { outcome: 'parked' };
    expect(verdictOf(run, 'prefix-continuation').status).toBe('holds');
  });

  it('violated when a recoverer is refused without the typed conflict', () => {
    const run = clone(goodRaceRun());
    run.steps.recoverConcurrent!.outcomes[1] = { outcome: 'refused', refusal: { code: 'OTHER', message: 'some error' } };
    expectViolated(run, 'prefix-continuation', /1 of 2 concurrent recoverers neither continued the run nor were refused with a typed conflict/);
  });

  it('violated when neither progresses', () => {
    const run = clone(goodRaceRun());
    run.steps.recoverConcurrent!.outcomes[0] = { outcome: 'error', error: { kind: 'store', message: 'lost' } };
    expectViolated(run, 'prefix-continuation', /0 of 2 concurrent recoverers \(hosts: .*\) continued the crashed run, expected at least 1/);
  });

  it('violated when the race rewrote a durable record', () => {
    const run = clone(goodRaceRun());
    run.steps.recoverConcurrent!.after!.records[2] = { id: '2', hex: 'rewritten' };
    expectViolated(run, 'prefix-continuation', /before the recoverers ran were lost or rewritten: 0 missing, 1 changed/);
  });

  it('effect exactly-once: a crash before the handler ran allows no second invocation, whatever the number of recoverers', () => {
    const run = clone(goodRaceRun());
    // The losing recoverer invokes charge too (no fence): 2 invocations, the crash was outside the window.
    shiftWindows(run.steps, 8, 1);
    run.sink.splice(8, 0, { t: 'invoke', node: 'charge', run: run.scenario.runIds.main, pid: 3, key: 'm/charge/2' });
    expectViolated(run, 'effect-exactly-once', /charge: handler invoked 2 times with 0 of 1 fault\(s\) inside its window \(invoked, completion not durable\) and 2 concurrent recoverers/);
  });

  it('effect exactly-once: a crash inside the window allows exactly one more', () => {
    const run = clone(goodRaceRun());
    // The crash came after charge's handler ran (the fault's sink offset is after its first invocation).
    run.faults[0]!.sinkOffset = 7;
    shiftWindows(run.steps, 8, 1);
    run.sink.splice(8, 0, { t: 'invoke', node: 'charge', run: run.scenario.runIds.main, pid: 3, key: 'm/charge/2' });
    expect(verdictOf(run, 'effect-exactly-once').status).toBe('holds');
    shiftWindows(run.steps, 9, 1);
    run.sink.splice(9, 0, { t: 'invoke', node: 'charge', run: run.scenario.runIds.main, pid: 4, key: 'm/charge/2' });
    expectViolated(run, 'effect-exactly-once', /charge: handler invoked 3 times with 1 of 1 fault\(s\) inside its window/);
  });
});
