/**
 * Hand-made observations for the checkers' tests: `goodFaultRun()` is a cell run in which every
 * property holds (a SIGKILL after charge's effect result was committed, then a clean continuation);
 * tests break one thing at a time and expect exactly the matching checker to fail.
 */
import type { CellRun, SinkWindow } from '../observations.js';
import type { Outcome, RunView } from '../protocol.js';
import { generateScenario } from '../scenario.js';
import type { SinkLine } from '../sink.js';
import { expectedFinalState, initialState, invalidStateInput, NODE_PATH } from '../workflow.js';

export function view(runId: string, overrides: Partial<RunView> = {}): RunView {
  return {
    runId,
    exists: true,
    records: Array.from({ length: 12 }, (_, i) => ({ id: String(i), hex: `${runId}-${i}` })),
    normalized: [{ kind: 'RUN_STARTED' }, { kind: 'NODE_COMPLETED' }],
    status: 'completed',
    integrity: { ok: true },
    completedNodes: [...NODE_PATH],
    effectsDone: ['charge', 'notify'],
    claims: 1,
    states: [],
    headState: null,
    nextAction: 'NONE',
    recoveries: { wasm: 'r1', reference: 'r1' },
    ...overrides,
  };
}

function line(t: SinkLine['t'], node: string, run: string, key?: string): SinkLine {
  return { t, node, run, pid: 1, ...(key === undefined ? {} : { key }) };
}

const completed = (state: unknown): Outcome => ({ outcome: 'completed', state });

export function goodFaultRun(): CellRun {
  const scenario = generateScenario('after-commit:EFFECT_DONE@charge/sigkill', 1);
  const ids = scenario.runIds;
  const final = expectedFinalState(scenario.input, scenario.resumeValue);
  const states = [initialState(scenario.input), final];
  const w = (from: number, to: number): SinkWindow => ({ from, to });
  const sink: SinkLine[] = [
    line('pure', 'compute', ids.baseline),
    line('invoke', 'charge', ids.baseline, 'b:charge:2'),
    line('apply', 'charge', ids.baseline, 'b:charge:2'),
    line('invoke', 'notify', ids.baseline, 'b:notify:8'),
    line('apply', 'notify', ids.baseline, 'b:notify:8'),
    // start: 5..8, the fault after charge's result was committed
    line('pure', 'compute', ids.main),
    line('invoke', 'charge', ids.main, 'm:charge:2'),
    line('apply', 'charge', ids.main, 'm:charge:2'),
    // resume: 8..10
    line('invoke', 'notify', ids.main, 'm:notify:8'),
    line('apply', 'notify', ids.main, 'm:notify:8'),
    // forks: 10..12 and 12..14
    line('invoke', 'notify', ids.forks[0], 'fa:notify:9'),
    line('apply', 'notify', ids.forks[0], 'fa:notify:9'),
    line('invoke', 'notify', ids.forks[1], 'fb:notify:9'),
    line('apply', 'notify', ids.forks[1], 'fb:notify:9'),
  ];
  const mainView = view(ids.main, { headState: final, states });
  const faultView = view(ids.main, {
    records: mainView.records.slice(0, 5),
    status: 'running',
    completedNodes: ['compute', 'charge'],
    effectsDone: ['charge'],
    claims: 0,
    headState: states[0],
    nextAction: 'PARK approval',
  });
  const baselineView = view(ids.baseline, { headState: final, states });
  const forkView = (runId: string) => view(runId, { headState: final, states, normalized: [{ kind: 'FORKED', runId: '<run>' }] });
  const sideParked = view(ids.sideInvalidResume, { status: 'parked', completedNodes: ['compute', 'charge'], claims: 0 });
  return {
    system: 'hand-made',
    scenario,
    hello: {
      protocol: 1,
      system: 'hand-made',
      variant: 'test',
      versions: {},
      points: {},
      faultKinds: {},
      concurrency: {},
      fork: { supported: true, where: 'test' },
    },
    faultsFired: [{ event: 'fault', point: 'after-commit:EFFECT_DONE@charge', kind: 'sigkill' }],
    faults: [
      {
        step: 'start',
        runId: ids.main,
        events: [{ event: 'fault', point: 'after-commit:EFFECT_DONE@charge', kind: 'sigkill' }],
        ending: 'crashed',
        outcome: null,
        sinkOffset: 8,
        view: faultView,
      },
    ],
    steps: {
      baseline: { runId: ids.baseline, outcomes: [completed(final)], final: completed(final), view: baselineView, window: w(0, 5) },
      start: { runId: ids.main, outcomes: [{ outcome: 'parked', state: states[0] }], final: { outcome: 'parked' }, view: faultView, window: w(5, 8) },
      resume: { runId: ids.main, outcomes: [completed(final)], final: completed(final), view: mainView, window: w(8, 10) },
      resumeDuplicate: {
        outcome: { outcome: 'refused', refusal: { code: 'ALREADY_CONSUMED', message: 'already resumed' } },
        before: mainView,
        after: mainView,
        window: w(10, 10),
      },
      recoverTwice: { first: mainView, second: mainView, otherProcess: mainView, otherProcessReason: null },
      forkTwice: {
        sourceBefore: mainView,
        sourceAfter: mainView,
        forks: [
          { runId: ids.forks[0], outcomes: [completed(final)], final: completed(final), view: forkView(ids.forks[0]), window: w(10, 12) },
          { runId: ids.forks[1], outcomes: [completed(final)], final: completed(final), view: forkView(ids.forks[1]), window: w(12, 14) },
        ],
        window: w(10, 14),
      },
      continueFromOlder: {
        outcome: { outcome: 'refused', refusal: { code: 'IMPLICIT_FORK', message: 'needs a fork' } },
        before: baselineView,
        after: baselineView,
        window: w(14, 14),
      },
      probeInvalidResume: {
        parked: { outcome: 'parked' },
        invalid: { outcome: 'refused', refusal: { code: 'INVALID_VALUE', message: 'bad value', field: 'approved' } },
        before: sideParked,
        after: sideParked,
        valid: { runId: ids.sideInvalidResume, outcomes: [], final: completed({ decision: scenario.resumeValue }), view: null },
        window: w(14, 14),
      },
      probeInvalidState: {
        outcome: { outcome: 'error', error: { kind: 'validation', message: 'refundCents too small', field: 'refundCents' } },
        view: view(ids.sideInvalidState, {
          status: 'running',
          completedNodes: [],
          headState: initialState(invalidStateInput(ids.sideInvalidState)),
          states: [initialState(invalidStateInput(ids.sideInvalidState))],
        }),
      },
      probeCorruption: {
        detected: true,
        message: 'log record is invalid',
        corruptedRunId: ids.baseline,
        corruptedRecord: '3',
        reportedRunId: ids.baseline,
        reportedRecord: '3',
      },
      probeDefinitionChange: {
        change: 'renamed notify',
        changedNode: 'notify',
        outcome: { outcome: 'refused', refusal: { code: 'DEFINITION_MISMATCH', message: 'node notify removed' } },
      },
    },
    mainView,
    sink,
    incidents: [],
  };
}

/** A concurrency cell run (k = 2) in which one resumer is served and one refused. */
export function goodConcurrentRun(): CellRun {
  const run = goodFaultRun();
  const scenario = generateScenario('k=2/in-process/same', 1);
  const ids = run.scenario.runIds;
  const { resume: _resume, ...steps } = run.steps;
  void _resume;
  return {
    ...run,
    scenario: { ...scenario, runIds: ids, resumeValue: run.scenario.resumeValue, input: run.scenario.input },
    faultsFired: [],
    faults: [],
    steps: {
      ...steps,
      resumeConcurrent: {
        mode: 'in-process',
        outcomes: [
          { outcome: 'completed', state: run.mainView?.headState },
          { outcome: 'refused', refusal: { code: 'ALREADY_CONSUMED', message: 'lost the race' } },
        ],
        values: [run.scenario.resumeValue, run.scenario.resumeValue],
        view: run.mainView,
        window: { from: 8, to: 10 },
      },
    },
  };
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}
