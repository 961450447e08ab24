/**
 * The generated-workflow harness without any system: the generator repeats from its seed and
 * covers the grammar, the model gives the outcomes the contract states on hand-written workflows,
 * and every checker fails on an observation that breaks its property (and holds on one that
 * follows the model).
 */
import { describe, expect, it } from 'vitest';
import { PROPERTIES, type PropertyId } from '../checkers/verdict.js';
import type { RunView } from '../protocol.js';
import { checkGenerated } from './checkers.js';
import { expectationOf, generateScenario, POISONS, type GeneratedScenario } from './generator.js';
import { interpret, type Expectation } from './model.js';
import type { DrivenGeneratedRun, GeneratedCellRun } from './run.js';
import { evaluate, writeVerdict } from './schema-model.js';
import { END_NODE, GENERATED_WORKFLOW_FORMAT, REFINEMENTS, TRANSFORMS, tag, untag, type SchemaSpec, type WorkflowSpec } from './spec.js';

function kinds(schema: SchemaSpec, out: Set<string>): void {
  out.add(schema.t);
  if (schema.t === 'transform') out.add(`transform:${schema.fn}`);
  if (schema.t === 'refine') out.add(`refine:${schema.check}`);
  if (schema.t === 'array' && schema.of.t === 'array') out.add('nested-array');
  if ('of' in schema) {
    if (Array.isArray(schema.of)) schema.of.forEach((s) => kinds(s, out));
    else kinds(schema.of, out);
  }
  if (schema.t === 'object') for (const [, f] of schema.fields) kinds(f, out);
}

describe('the generator', () => {
  it('is a pure function of seed, index and fault kind', () => {
    const a = generateScenario(7, 3, 'sigkill');
    expect(generateScenario(7, 3, 'sigkill')).toEqual(a);
    expect(generateScenario(7, 4, 'sigkill').scenario).not.toEqual(a.scenario);
    expect(generateScenario(8, 3, 'sigkill').scenario).not.toEqual(a.scenario);
    expect(JSON.parse(JSON.stringify(a.scenario))).toEqual(a.scenario);
  });

  it('covers the grammar, the node kinds, loops, several interrupts and every poison over 400 workflows', () => {
    const seen = new Set<string>();
    const poisons = new Set<string>();
    let loops = 0;
    let multiInterrupt = 0;
    const ends = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const { scenario, expectation, poison } = generateScenario(1, i, 'throw');
      if (poison !== null) poisons.add(poison);
      kinds(scenario.workflow.state, seen);
      for (const node of scenario.workflow.nodes) {
        seen.add(`node:${node.kind}`);
        if (node.kind === 'interrupt') kinds(node.resume, seen);
        if ('if' in node.next) seen.add('lt' in node.next.if ? 'route:loop' : 'route:branch');
      }
      if (scenario.workflow.nodes.some((n) => 'if' in n.next && 'lt' in n.next.if)) loops++;
      if (scenario.workflow.nodes.filter((n) => n.kind === 'interrupt').length >= 2) multiInterrupt++;
      ends.add(expectation.final.kind);
    }
    for (const t of ['string', 'number', 'boolean', 'enum', 'isoDate', 'date', 'any', 'array', 'nested-array', 'record', 'object', 'optional', 'nullable', 'default', 'union', 'refine', 'transform']) {
      expect(seen, t).toContain(t);
    }
    for (const fn of TRANSFORMS) expect(seen, fn).toContain(`transform:${fn}`);
    for (const check of REFINEMENTS) expect(seen, check).toContain(`refine:${check}`);
    for (const n of ['node:pure', 'node:effect', 'node:interrupt', 'route:loop', 'route:branch']) expect(seen, n).toContain(n);
    expect([...poisons].sort()).toEqual([...POISONS].sort());
    expect(loops).toBeGreaterThan(100);
    expect(multiInterrupt).toBeGreaterThan(40);
    expect([...ends].sort()).toEqual(['completed', 'failed', 'refused-at-start', 'stuck', 'stuck-parked']);
  });

  it('arms faults only at points the model\'s run reaches, and keeps only near misses the model refuses', () => {
    for (let i = 0; i < 150; i++) {
      const { scenario, expectation } = generateScenario(2, i, (['sigkill', 'throw', 'store-error'] as const)[i % 3]!);
      if (scenario.fault !== null) expect(expectation.points.get(scenario.fault.point) ?? 0).toBeGreaterThanOrEqual(scenario.fault.occurrence);
      if (scenario.fault?.kind === 'store-error') expect(scenario.fault.point).toMatch(/^(before|after)-commit:/);
      for (const r of expectation.nearMissInputs) expect(r).not.toBeNull();
      for (const park of expectation.parks) for (const r of park.nearMisses) expect(r).not.toBeNull();
      expect(expectationOf(scenario)).toEqual(expectation);
    }
  });
});

function spec(fields: Array<[string, SchemaSpec]>, nodes: WorkflowSpec['nodes']): WorkflowSpec {
  return { format: GENERATED_WORKFLOW_FORMAT, name: 'hand', version: '1', state: { t: 'object', fields: [...fields, ['c0', { t: 'default', of: { t: 'number', int: true, min: 0 }, value: 0 }]] }, nodes };
}

describe('the model', () => {
  it('refuses a transform that is not idempotent, and one whose output its schema rejects, naming the field', () => {
    const times = writeVerdict({ t: 'object', fields: [['amount', { t: 'transform', of: { t: 'number' }, fn: 'times100' }]] }, { amount: 5 });
    expect(times).toEqual({ ok: false, code: 'UNFAITHFUL', reason: 'TRANSFORM_NOT_IDEMPOTENT', field: 'amount' });
    const length = writeVerdict({ t: 'object', fields: [['n', { t: 'transform', of: { t: 'string' }, fn: 'length' }]] }, { n: 'abc' });
    expect(length).toEqual({ ok: false, code: 'UNFAITHFUL', reason: 'FAILS_SCHEMA_AGAIN', field: 'n' });
    const trim = writeVerdict({ t: 'object', fields: [['s', { t: 'transform', of: { t: 'string' }, fn: 'trim' }]] }, { s: ' a ' });
    expect(trim).toEqual({ ok: true, stored: { s: 'a' } });
  });

  it('refuses values JSON does not keep, naming where', () => {
    const any: SchemaSpec = { t: 'object', fields: [['x', { t: 'optional', of: { t: 'any' } }]] };
    expect(writeVerdict(any, { x: Number.NaN })).toMatchObject({ reason: 'CHANGED_BY_JSON', field: 'x' });
    expect(writeVerdict(any, { x: new Map() })).toMatchObject({ reason: 'CHANGED_BY_JSON', field: 'x' });
    expect(writeVerdict(any, { x: [1, undefined] })).toMatchObject({ reason: 'CHANGED_BY_JSON', field: 'x.1' });
    expect(writeVerdict({ t: 'object', fields: [['d', { t: 'date' }]] }, { d: new Date(0) })).toMatchObject({ reason: 'CHANGED_BY_JSON', field: 'd' });
    expect(writeVerdict(any, { x: { y: 1 } })).toEqual({ ok: true, stored: { x: { y: 1 } } });
    expect(untag(tag({ d: new Date(0), m: new Map([['k', 1]]), n: Number.NaN, a: [1, undefined] }))).toEqual({ d: new Date(0), m: new Map([['k', 1]]), n: Number.NaN, a: [1, undefined] });
  });

  it('reads unions, defaults and refinements as zod 4 documents them', () => {
    expect(evaluate({ t: 'union', of: [{ t: 'transform', of: { t: 'string' }, fn: 'exclaim' }, { t: 'string' }] }, 'a')).toEqual({ ok: true, value: 'a!' });
    expect(evaluate({ t: 'default', of: { t: 'transform', of: { t: 'number' }, fn: 'times100' }, value: 5 }, undefined)).toEqual({ ok: true, value: 5 });
    expect(evaluate({ t: 'refine', of: { t: 'number', int: true }, check: 'even' }, 3)).toEqual({ ok: false, path: [] });
    expect(evaluate({ t: 'object', fields: [['a', { t: 'array', of: { t: 'object', fields: [['x', { t: 'number' }]] } }]] }, { a: [{ x: 1 }, { x: 'no' }] })).toEqual({ ok: false, path: ['a', 1, 'x'] });
  });

  it('runs loops to their bound, parks at each interrupt with its value, and stops at a refused step', () => {
    const wf = spec(
      [['log', { t: 'default', of: { t: 'array', of: { t: 'string' } }, value: [] }], ['a_ask', { t: 'optional', of: { t: 'object', fields: [['ok', { t: 'boolean' }]] } }]],
      [
        { kind: 'pure', name: 'p', ops: [{ op: 'push', field: 'log', value: 'p' }, { op: 'inc', field: 'c0', by: 1 }], next: { if: { field: 'c0', lt: 3 }, then: 'p', else: 'ask' } },
        { kind: 'interrupt', name: 'ask', resume: { t: 'object', fields: [['ok', { t: 'boolean' }]] }, answer: 'a_ask', ops: [], next: { to: 'e' } },
        { kind: 'effect', name: 'e', result: { kind: 'echo', counter: 'c0' }, resultTo: null, ops: [], next: { to: 'bad' } },
        { kind: 'pure', name: 'bad', ops: [{ op: 'push', field: 'log', value: 7 }], next: { to: END_NODE } },
      ],
    );
    const e = interpret(wf, {}, [], (i) => (i === 0 ? { value: { ok: true }, nearMisses: [{ ok: 'yes' }] } : undefined));
    expect(e.completedNodes).toEqual(['p', 'p', 'p', 'ask', 'e']);
    expect(e.final).toEqual({ kind: 'stuck', node: 'bad', at: 'step', refusal: { ok: false, code: 'INVALID', field: 'log.3' } });
    expect(e.parks).toEqual([{ node: 'ask', nearMisses: [{ ok: false, code: 'INVALID', field: 'ok' }], value: null }]);
    expect(e.effectInstances).toEqual({ e: 1 });
    expect(e.points.get('inside-pure:p')).toBe(3);
    expect(e.points.get('after-commit:NODE_COMPLETED@p')).toBe(3);
    expect(e.headState).toEqual({ log: ['p', 'p', 'p'], c0: 3, a_ask: { ok: true } });
    expect(e.checkpoints.map((c) => [c.node, c.occurrence, c.claimsBefore, c.effectsAfter])).toEqual([
      ['p', 1, 0, { e: 1 }], ['p', 2, 0, { e: 1 }], ['p', 3, 0, { e: 1 }], ['ask', 1, 1, { e: 1 }], ['e', 1, 1, {}],
    ]);
  });
});

describe('a resume value whose completion the state schema refuses', () => {
  const wf = spec(
    [['n', { t: 'number', max: 10 } as SchemaSpec], ['a_ask', { t: 'optional', of: { t: 'number' } }]],
    [
      { kind: 'interrupt', name: 'ask', resume: { t: 'number' }, answer: 'a_ask', ops: [{ op: 'inc', field: 'n', by: 50 }], next: { to: END_NODE } },
    ],
  );

  it('ends stuck at resume-apply, and no fault is armed at a claim a system may refuse to make', () => {
    const e = interpret(wf, { n: 1 }, [], (i) => (i === 0 ? { value: 3, nearMisses: [] } : undefined));
    expect(e.final).toMatchObject({ kind: 'stuck', node: 'ask', at: 'resume-apply', refusal: { ok: false, field: 'n' } });
    expect(e.claims).toBe(1);
    expect([...e.points.keys()].some((p) => p.includes('RESUME_CLAIMED'))).toBe(false);
  });
});

// ---------------------------------------------------------------- checkers on hand-made observations

const VIEW_BASE = { normalized: [], integrity: { ok: true as const }, effectsDone: [], recoveries: { a: 'x', b: 'x' }, nextAction: 'NONE' };

function view(runId: string, e: Expectation, records: number): RunView {
  return {
    ...VIEW_BASE, runId, exists: true, records: Array.from({ length: records }, (_, i) => ({ id: String(i), hex: `r${i}` })),
    status: 'completed', completedNodes: e.completedNodes, claims: e.claims, states: e.states, headState: e.headState, effectKeysDone: [],
  };
}

/** A completed scenario with a fault fired, and the observation a faithful system leaves. */
function faithful(): { scenario: GeneratedScenario; expected: Expectation; run: GeneratedCellRun } {
  for (let i = 0; ; i++) {
    const { scenario, expectation } = generateScenario(5, i, 'sigkill');
    const effects = Object.keys(expectation.effectInstances).length;
    if (expectation.final.kind !== 'completed' || expectation.claims === 0 || effects === 0 || scenario.fork === null || scenario.fault === null) continue;
    const main = scenario.runIds.main;
    const sink = [
      ...Object.entries(expectation.pureRuns).flatMap(([node, n]) => Array.from({ length: n }, () => ({ t: 'pure' as const, node, run: main, pid: 1 }))),
      ...Object.entries(expectation.effectInstances).flatMap(([node, n]) =>
        Array.from({ length: n }, (_, k) => [
          { t: 'invoke' as const, node, key: `${main}:${node}:${k}`, run: main, pid: 1 },
          { t: 'apply' as const, node, key: `${main}:${node}:${k}`, run: main, pid: 1 },
        ]).flat(),
      ),
    ];
    const checkpoint = expectation.checkpoints.find((c) => c.node === scenario.fork!.after && c.occurrence === scenario.fork!.occurrence)!;
    const forkRuns = scenario.runIds.forks.map((id, f) => {
      const from = sink.length;
      for (const [node, n] of Object.entries(checkpoint.effectsAfter)) {
        for (let k = 0; k < n; k++) {
          sink.push({ t: 'invoke', node, key: `${id}:${node}:${k}`, run: id, pid: 1 }, { t: 'apply', node, key: `${id}:${node}:${k}`, run: id, pid: 1 });
        }
      }
      const driven: DrivenGeneratedRun = { runId: id, outcomes: [], final: { outcome: 'completed' }, view: { ...view(id, expectation, 9), normalized: [{ f }] }, resumeNearMisses: [], window: { from, to: sink.length } };
      return driven;
    });
    const full = view(main, expectation, 8);
    const run: GeneratedCellRun = {
      system: 'hand', scenario, faultsFired: [{ event: 'fault', point: scenario.fault.point, kind: 'sigkill' }],
      faults: [{ step: 'main', runId: main, events: [{ event: 'fault', point: scenario.fault.point, kind: 'sigkill' }], ending: 'crashed', outcome: null, sinkOffset: 0, view: { ...full, status: 'running', records: full.records.slice(0, 2), completedNodes: [], nextAction: 'RUN_PURE x' } }],
      nearMissInputs: [], main: { runId: main, outcomes: [], final: { outcome: 'completed' }, view: full, resumeNearMisses: [], window: { from: 0, to: sink.filter((l) => l.run === main).length } },
      duplicate: { value: null, outcome: { outcome: 'refused', refusal: { code: 'ALREADY_CONSUMED', message: 'consumed' } }, before: full, after: full, window: { from: 0, to: 0 } },
      recoverTwice: { first: full, second: full, otherProcess: full },
      continueFromOlder: { value: null, outcome: { outcome: 'refused', refusal: { code: 'IMPLICIT_FORK', message: 'fork it' } }, before: full, after: full, window: { from: 0, to: 0 } },
      forks: { sourceBefore: full, sourceAfter: full, runs: forkRuns }, sink, incidents: [],
    };
    // Fork logs equal apart from ids.
    for (const r of forkRuns) r.view = { ...r.view!, normalized: [] };
    return { scenario, expected: expectation, run };
  }
}

describe('the generated checkers', () => {
  it('hold on an observation that follows the model', () => {
    const { run, expected } = faithful();
    const verdicts = checkGenerated(run, expected);
    for (const p of PROPERTIES) expect(verdicts[p].status, `${p}: ${JSON.stringify(verdicts[p])}`).toBe('holds');
  });

  const breaks: Array<[PropertyId, string, (run: GeneratedCellRun, e: Expectation) => void]> = [
    ['prefix-continuation', 'a node completed twice', (run) => (run.main!.view = { ...run.main!.view!, completedNodes: [...run.main!.view!.completedNodes, run.main!.view!.completedNodes[0]!] })],
    ['prefix-continuation', 'a record durable at the fault rewritten', (run) => (run.main!.view = { ...run.main!.view!, records: [{ id: '0', hex: 'changed' }, ...run.main!.view!.records.slice(1)] })],
    ['prefix-continuation', 'a transform applied again to a stored state', (run) => {
      const states = run.main!.view!.states.map((s) => ({ ...(s as object), c0: 99 }));
      run.main!.view = { ...run.main!.view!, states };
    }],
    ['effect-exactly-once', 'an effect applied under a second key', (run) => {
      const line = run.sink.find((l) => l.t === 'apply')!;
      run.sink.splice(0, 0, { ...line, t: 'invoke', key: 'other' }, { ...line, key: 'other' });
      run.main!.window.to += 2;
    }],
    ['fork-determinism', 'a fork reusing the source\'s key', (run) => {
      const fork = run.forks!.runs[0]!;
      const mainKey = run.sink.find((l) => l.t === 'apply' && l.run === run.scenario.runIds.main)!.key;
      const line = run.sink.slice(fork.window.from, fork.window.to).find((l) => l.t === 'apply');
      if (line !== undefined) line.key = mainKey;
      else run.forks!.sourceAfter = { ...run.forks!.sourceAfter!, records: [] };
    }],
    ['checkpoint-validity', 'a stored state that fails its schema', (run) => (run.main!.view = { ...run.main!.view!, states: [...run.main!.view!.states, { c0: 'not a number' }] })],
    ['consume-once', 'a duplicate resume accepted', (run) => (run.duplicate = { ...run.duplicate!, outcome: { outcome: 'completed' } })],
    ['recovery-determinism', 'a second process recovering differently', (run) => (run.recoverTwice = { ...run.recoverTwice!, otherProcess: { ...run.recoverTwice!.first!, nextAction: 'RUN_PURE p' } })],
    ['fork-intent', 'continuing from an older checkpoint accepted', (run) => (run.continueFromOlder = { ...run.continueFromOlder!, outcome: { outcome: 'completed' } })],
    ['liveness', 'a timeout', (run) => run.incidents.push({ step: 'main', what: 'timeout', detail: 'no answer' })],
  ];
  /**
   * The faithful observation turned into a run whose last resume value the state schema refused:
   * the model's end is stuck at resume-apply; `status` and `claims` are what the system left.
   */
  function refusedResume(status: 'running' | 'parked', claimsMade: (expected: number) => number) {
    const { run, expected } = faithful();
    const refusal = { ok: false as const, code: 'INVALID' as const, field: 'n' };
    const stuck: Expectation = { ...expected, final: { kind: 'stuck', node: 'ask', at: 'resume-apply', refusal } };
    run.main!.final = { outcome: 'error', error: { kind: 'validation', message: 'state invalid at n', field: 'n' } };
    run.main!.view = { ...run.main!.view!, status, claims: claimsMade(expected.claims) };
    return { run, expected: stuck };
  }

  it('accept either end of a refused resume completion: claimed and stuck running, or refused before the claim and still parked', () => {
    for (const [status, made] of [['running', (c: number) => c], ['parked', (c: number) => c - 1]] as const) {
      const { run, expected } = refusedResume(status, made);
      const verdicts = checkGenerated(run, expected);
      for (const p of ['prefix-continuation', 'consume-once', 'checkpoint-validity'] as const) expect(verdicts[p].status, `${status} ${p}: ${JSON.stringify(verdicts[p])}`).toBe('holds');
    }
  });

  it('but a run still parked with the claim recorded violates consume-once', () => {
    const { run, expected } = refusedResume('parked', (c) => c);
    expect(checkGenerated(run, expected)['consume-once'].status).toBe('violated');
  });

  for (const [property, what, mutate] of breaks) {
    it(`${property} is violated by ${what}`, () => {
      const { run, expected } = faithful();
      mutate(run, expected);
      expect(checkGenerated(run, expected)[property].status).toBe('violated');
    });
  }
});
