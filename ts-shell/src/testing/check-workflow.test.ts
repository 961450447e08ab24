/**
 * checkWorkflow (remit/testing): it passes sound workflows on both cores, covers every fault point
 * the run reaches with a spec that reproduces that very crash, and fails the workflows that break
 * the contract's assumptions (canaries: a pure node, a route and an apply that are not
 * deterministic); its effect and prefix checks fail on the histories they exist to catch.
 */

import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { createReferenceCore } from '../core/reference-core.js';
import { encodeRecordV2, concatBytes } from '../core/codec.js';
import { chainValueBefore } from '../core/framing.js';
import { RecordKind } from '../core/types.js';
import { utf8 } from '../json.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow, type ResumesOf } from '../workflow/workflow.js';
import { ArgumentInvalidError, CoreUnavailableError, fail, NotJsonError, OptionInvalidError, ResumeValueInvalidError, StateInvalidError } from '../errors.js';
import { checkWorkflow, effectProblems as effectProblemsOf, MissingResumeValueError, prefixProblem, ResumeFunctionThrewError } from './check-workflow.js';
import { MemoryEffectSink } from './effect-sink.js';
import { TestingErrorCode } from './errors.js';
import { hooksFor, InjectedFault, parseFaultSpec } from './fault-spec.js';

const State = z.object({ n: z.number(), id: z.string().optional(), ok: z.boolean().optional(), r: z.number().optional() });

/** Every kind of node, a routed loop and two effects: a workflow the contract holds on. */
const refund = workflow({ name: 'refund', version: '1', state: State })
  .pure('prepare', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n < 3 ? 'prepare' : 'charge') })
  .effect('charge', { run: (_s, { idempotencyKey }) => ({ id: `ch-${idempotencyKey}` }), apply: (_s, r) => ({ id: r.id }), next: 'approve' })
  .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: (s) => (s.ok ? 'notify' : END) })
  .effect('notify', { run: () => ({ sent: true }), next: 'finish' })
  .pure('finish', { run: (s) => ({ n: s.n * 10 }), next: END })
  .build();

describe('checkWorkflow on a sound workflow', () => {
  it.each(['reference', 'wasm'] as const)('finds no problem on the %s core and checks a crash at every fault point the run reaches', async (core) => {
    const report = await checkWorkflow(refund, { input: { n: 0 }, resume: { approve: { ok: true } }, core });
    expect(report.problems).toEqual([]);
    expect(report.reference).toMatchObject({ status: 'completed', path: ['prepare', 'prepare', 'prepare', 'charge', 'approve', 'notify', 'finish'], effectCalls: 2 });
    expect(report.reference.state).toMatchObject({ n: 30, ok: true, id: 'ch-checked-run/charge/4' });
    const points = new Set(report.faults.map((f) => f.replace(/[@#].*$/, '')));
    expect([...points].sort()).toEqual(['append.after', 'append.before', 'effect.after-handler', 'effect.before-handler', 'pure.before-return', 'resume.after-claim']);
    expect(new Set(report.faults).size).toBe(report.faults.length);
  });

  it('the report has the fields docs/guide.md lists, and no others; a run that did not end has path [] and state undefined', async () => {
    const report = await checkWorkflow(refund, { input: { n: 0 }, resume: { approve: { ok: true } }, core: 'reference', maxScenarios: 3 });
    expect(Object.keys(report).sort()).toEqual(['faults', 'problems', 'reference', 'unchecked', 'workflow']);
    expect(report.workflow).toBe('refund');
    expect(Object.keys(report.reference).sort()).toEqual(['effectCalls', 'path', 'retries', 'state', 'status', 'steps']);
    const looping = workflow({ name: 'looping', version: '1', state: State }).pure('spin', { run: (s) => ({ n: s.n + 1 }), next: 'spin' }).build();
    const stopped = await checkWorkflow(looping, { input: { n: 0 }, core: 'reference', maxSteps: 5 });
    expect(stopped.reference).toEqual({ status: 'not-ended', path: [], state: undefined, effectCalls: 0, retries: 0, steps: 6 });
    expect(stopped.faults).toEqual([]);
    // A problem of the fault-free runs has no fault; each has property, node when known, message.
    expect(stopped.problems).toEqual([{ property: 'liveness', node: 'spin', message: expect.stringMatching(/^the run did not reach its end: still running after 5 node steps/) }]);
  });

  it('each fault it reports is a spec that fires, in a run of the workflow, at the point it names', async () => {
    const core = await createCore('reference');
    const { faults } = await checkWorkflow(refund, { input: { n: 0 }, resume: { approve: { ok: true } }, core });
    for (const fault of faults) {
      const spec = parseFaultSpec(fault);
      const hooks = hooksFor(spec, (point, info) => { throw new InjectedFault(point, info); }, { workflow: refund });
      const remit = new Remit(new MemoryStore(), core, [refund], hooks);
      const run = async () => {
        const parked = await remit.start(refund, { n: 0 }, { runId: 'r' });
        await remit.resume('r', parked.interrupt!.id, { ok: true });
      };
      await expect(run(), fault).rejects.toBeInstanceOf(InjectedFault);
      expect(hooks.fired, fault).toBe(true);
    }
  });

  it('every fault a report prints, in report.faults and in its problems, is given to hooksFor as printed and fires there (docs/guide.md: "give it to hooksFor to replay it")', async () => {
    const core = await createCore('reference');
    // A pure node that counts its calls since the run began: a crash that runs it again changes the
    // recovered run's final state, a problem that names its fault.
    let calls = 0;
    const counting = workflow({ name: 'counting', version: '1', state: State })
      .pure('begin', { run: () => ((calls = 0), {}), next: 'charge' })
      .effect('charge', { run: () => ({ id: 'x' }), apply: (_s, r) => ({ id: r.id }), next: 'count' })
      .pure('count', { run: () => ({ n: ++calls }), next: 'approve' })
      .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: END })
      .build();
    for (const wf of [refund, counting]) {
      const report = await checkWorkflow(wf, { input: { n: 0 }, resume: { approve: { ok: true } }, core });
      const printed = [...report.faults, ...report.problems.flatMap((p) => (p.fault === undefined ? [] : [p.fault]))];
      expect(printed.length, wf.name).toBeGreaterThan(5);
      if (wf === counting) expect(report.problems.filter((p) => p.fault !== undefined).map((p) => p.property)).toContain('recovered-run');
      for (const fault of printed) {
        expect(typeof fault).toBe('string');
        const hooks = hooksFor(fault, (point, info) => { throw new InjectedFault(point, info); }, { workflow: wf });
        const remit = new Remit(new MemoryStore(), core, [wf], hooks);
        const run = async () => {
          const parked = await remit.start(wf, { n: 0 }, { runId: 'r' });
          await remit.resume('r', parked.interrupt!.id, { ok: true });
        };
        await expect(run(), fault).rejects.toBeInstanceOf(InjectedFault);
        expect(hooks.fired, fault).toBe(true);
      }
    }
  });

  it('maxScenarios spreads fewer crashes over the run; a run that ends before its interrupt needs no resume value', async () => {
    const all = await checkWorkflow(refund, { input: { n: 0 }, resume: { approve: { ok: false } }, core: 'reference' });
    const some = await checkWorkflow(refund, { input: { n: 0 }, resume: { approve: { ok: false } }, core: 'reference', maxScenarios: 5 });
    expect(some.faults).toHaveLength(5);
    expect(some.faults.every((f) => all.faults.includes(f))).toBe(true);
    expect(some.problems).toEqual([]);
    const noInterrupt = workflow({ name: 'short', version: '1', state: State }).pure('only', { run: (s) => ({ n: s.n + 1 }), next: END }).build();
    expect((await checkWorkflow(noInterrupt, { input: { n: 1 }, core: 'reference' })).problems).toEqual([]);
  });

  it('refuses options without the resume value of an interrupt the run reaches', async () => {
    await expect(checkWorkflow(refund, { input: { n: 0 }, core: 'reference' })).rejects.toBeInstanceOf(MissingResumeValueError);
    await expect(checkWorkflow(refund, { input: { n: 0 }, core: 'reference' })).rejects.toThrow(/parked at interrupt approve, and options.resume has no value for it/);
    await expect(checkWorkflow(refund, { input: { n: 0 }, core: 'reference' })).rejects.toMatchObject({ code: 'REMIT_TESTING_MISSING_RESUME_VALUE', workflow: 'refund', node: 'approve' });
  });

  it('resume is typed by the workflow\'s interrupt nodes: a name that is not one, or a value its schema does not take, does not compile (and is refused at run time)', async () => {
    // @ts-expect-error aks is not an interrupt node of refund
    const misspelt = await checkWorkflow(refund, { input: { n: 0 }, core: 'reference', resume: { aks: { ok: true } } }).catch((e: unknown) => e);
    expect(misspelt).toBeInstanceOf(OptionInvalidError);
    // @ts-expect-error approve's resume schema takes { ok: boolean }
    const wrong = await checkWorkflow(refund, { input: { n: 0 }, core: 'reference', resume: { approve: { ok: 'yes' } } }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(ResumeValueInvalidError);
    const report = await checkWorkflow(refund, {
      input: { n: 0 }, core: 'reference', maxScenarios: 1,
      resume: {
        approve: (state, interruptId) => {
          expectTypeOf(state.n).toEqualTypeOf<number>();
          expectTypeOf(interruptId).toEqualTypeOf<string>();
          return { ok: true };
        },
      },
    });
    expect(report.problems).toEqual([]);
    expectTypeOf<ResumesOf<typeof refund>>().toEqualTypeOf<{ approve: { ok: boolean } }>();
  });

  it('resume by interrupt node: a value, or a function of the parked state and the interrupt id', async () => {
    const seen: [unknown, string][] = [];
    const report = await checkWorkflow(refund, {
      input: { n: 0 }, core: 'reference', maxScenarios: 3,
      resume: { approve: (state: unknown, interruptId: string) => (seen.push([state, interruptId]), { ok: true }) },
    });
    expect(report.problems).toEqual([]);
    expect(report.reference.status).toBe('completed');
    expect(seen[0]).toEqual([expect.objectContaining({ n: 3, id: 'ch-checked-run/charge/4' }), expect.stringMatching(/^approve@\d+$/)]);
  });

  it('one function for every interrupt node is refused: the option is an object by node (its type, its message, the guide)', async () => {
    // @ts-expect-error resume is an object by interrupt node name, not a function
    const error = await checkWorkflow(refund, { input: { n: 0 }, core: 'reference', resume: () => ({ ok: true }) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OptionInvalidError);
    expect(error).toMatchObject({ option: 'resume', message: expect.stringMatching(/^option resume must be an object of resume values by interrupt node name, each a value or a function \(state, interruptId\) => value: resume: \{ "approve": <value or \(state, interruptId\) => value> \}, not one function for every node \(got function\) \[field resume\]$/) });
    await expect(checkWorkflow(refund, { input: { n: 0 }, core: 'reference', resume: [] as never })).rejects.toBeInstanceOf(OptionInvalidError);
  });
});

describe('checkWorkflow fails the workflows the contract cannot hold on (canaries)', () => {
  const base = () => workflow({ name: 'canary', version: '1', state: State });

  it('a pure node reading Math.random: determinism, naming the state', async () => {
    const wf = base().pure('roll', { run: () => ({ r: Math.random() }), next: 'charge' }).effect('charge', { run: () => ({}), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems.map((p) => p.property)).toEqual(['determinism']);
    expect(report.problems[0]!.message).toMatch(/final state .* a pure node, a route or an apply is not deterministic/);
    // The first checkpoint that differed, read from the logs, names the node.
    expect(report.problems[0]).toMatchObject({ node: 'roll', message: expect.stringMatching(/the checkpoints first differ at step 0, after node roll/) });
  });

  it('a route that is not a function of the state: determinism, naming the node path', async () => {
    let flip = false;
    const wf = base()
      .pure('a', { run: () => ({}), next: () => ((flip = !flip) ? 'b' : 'c') })
      .pure('b', { run: () => ({ n: 1 }), next: END })
      .pure('c', { run: () => ({ n: 2 }), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    // Which side is which, from which step, and the node whose route chose differently.
    expect(report.problems[0]).toMatchObject({
      property: 'determinism', node: 'a',
      message: expect.stringMatching(/the second fault-free run took \["a","c"\], the first fault-free run \["a","b"\], from step 1: the route out of a chose differently \(a route, or a pure node or an apply before it, is not deterministic\)$/),
    });
  });

  it('an effect apply that counts its calls: recovered runs differ where it runs again', async () => {
    let applied = 0;
    const wf = base().effect('charge', { run: () => ({ id: 'x' }), apply: () => ({ n: ++applied }), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems.some((p) => p.property === 'determinism')).toBe(true);
  });

  it('a state schema whose default is not deterministic: determinism at the initial state, blaming no node', async () => {
    let made = 0;
    const Stamped = z.object({ n: z.number(), at: z.number().default(() => ++made) });
    const wf = workflow({ name: 'stamped', version: '1', state: Stamped }).effect('charge', { run: () => ({}), next: 'done' }).pure('done', { run: () => ({}), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, maxScenarios: 2, core: 'reference' });
    expect(report.problems).toHaveLength(1);
    // It was "the checkpoints first differ at step 0, after node charge", naming a node that never read it.
    expect(report.problems[0]).toEqual({
      property: 'determinism',
      message: expect.stringMatching(/^two fault-free runs from the same input differ: the initial state \(the input as the state schema read it, before any node\) is \{"n":0,"at":\d+\} in the second fault-free run, \{"n":0,"at":\d+\} in the first fault-free run: from the same input, the state schema is not deterministic/),
    });
  });
});

describe('checkWorkflow fails a core that breaks the contract (canary cores)', () => {
  it('a core that admits a second claim of an open interrupt: consume-once, at each crash with the claim durable, naming the node and the fault (it was reported clean: the second resume was tried only after recovery had completed the run)', async () => {
    const report = await checkWorkflow(refund, { input: { n: 0 }, resume: { approve: { ok: true } }, core: createReferenceCore({ canary: 'accept-second-claim' }) });
    const consumeOnce = report.problems.filter((p) => p.property === 'consume-once');
    expect(consumeOnce.length).toBeGreaterThan(0);
    for (const p of consumeOnce) {
      expect(p).toMatchObject({ node: 'approve', fault: expect.stringMatching(/^(resume\.after-claim|append\.after)@approve/) });
      // This core writes the second claim, and the shell then refuses the log it made.
      expect(p.message).toMatch(/^a second resume of approve@\d+, after its claim was durable, before recovery, was refused with InvariantViolation: .*, not AlreadyConsumedError$/);
      const hooks = hooksFor(p.fault!, (point, info) => { throw new InjectedFault(point, info); }, { workflow: refund });
      expect(hooks.fired).toBe(false);
    }
    // The sound core, at the same crashes: no problem.
    expect((await checkWorkflow(refund, { input: { n: 0 }, resume: { approve: { ok: true } }, core: 'reference' })).problems).toEqual([]);
  });
});

describe('the effect and prefix checks fail on the histories they exist to catch', () => {
  const logOf = (keys: string[]) => {
    const records: Uint8Array[] = [];
    keys.forEach((key, seq) => {
      const log = concatBytes(records);
      records.push(encodeRecordV2({ kind: RecordKind.EFFECT_DONE, seq, node: utf8('charge'), key: utf8(key), result: utf8('{}') }, chainValueBefore(log, log.length)));
    });
    return records;
  };

  it('a handler called twice outside the crash window, or under a key the run never completed', () => {
    const done = logOf(['k1']);
    const effectProblems = (...args: Parameters<typeof effectProblemsOf>) => effectProblemsOf(...args).map((p) => p.message);
    expect(effectProblems(['k1'], new Set(), done)).toEqual([]);
    expect(effectProblems(['k1', 'k1'], new Set(['k1']), done)).toEqual([]);
    expect(effectProblems(['k1', 'k1'], new Set(), done)).toEqual([expect.stringMatching(/^the handler of k1 was called 2 times \(at most 1: /)]);
    expect(effectProblemsOf(['k1', 'k1'], new Set(), done)).toEqual([{ key: 'k1', node: 'charge', message: expect.any(String) }]);
    expect(effectProblems(['k1', 'k1', 'k1'], new Set(['k1']), done)[0]).toMatch(/called 3 times \(at most 2/);
    expect(effectProblems(['k1', 'k2'], new Set(), done)).toEqual([expect.stringMatching(/key k2, for which the run recorded no outcome/)]);
    // An attempt released after its handler threw allows one more call, and only one.
    const released = [encodeRecordV2({ kind: RecordKind.EFFECT_RELEASED, seq: 0, node: utf8('charge'), key: utf8('k1'), attempt: 1, reason: utf8('{}') }, 0)];
    const log = concatBytes(released);
    released.push(encodeRecordV2({ kind: RecordKind.EFFECT_DONE, seq: 1, node: utf8('charge'), key: utf8('k1'), result: utf8('{}') }, chainValueBefore(log, log.length)));
    expect(effectProblems(['k1', 'k1'], new Set(), released)).toEqual([]);
    expect(effectProblems(['k1', 'k1', 'k1'], new Set(), released)[0]).toMatch(/called 3 times \(at most 2/);
  });

  it('a durable record changed or lost by recovery', () => {
    const [a, b] = [utf8('first'), utf8('second')];
    expect(prefixProblem([a], [a, b])).toBeNull();
    expect(prefixProblem([a, b], [a])).toMatch(/record 1, durable at the crash, is missing/);
    expect(prefixProblem([a], [b])).toMatch(/record 0, durable at the crash, is different/);
  });
});

describe('checkWorkflow on what a correct workflow may do', () => {
  const base = () => workflow({ name: 'may', version: '1', state: State });

  it('a handler that calls fail(): the run fails at that node, and no problem is reported', async () => {
    const wf = base().effect('charge', { run: () => fail('DECLINED', 'card declined'), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.reference.status).toBe('failed');
    expect(report.problems).toEqual([]);
    expect(report.faults.length).toBeGreaterThan(2);
  });

  it('a handler that throws once is retried by continuing the run; one that always throws is one liveness problem, no scenario', async () => {
    let calls = 0;
    const flaky = base().effect('charge', { run: () => { if (calls++ % 2 === 0) throw new Error('transient'); return { ok: true }; }, next: END }).build();
    expect((await checkWorkflow(flaky, { input: { n: 0 }, core: 'reference' })).problems).toEqual([]);
    const broken = base().effect('charge', { run: () => { throw new Error('down'); }, next: END }).build();
    const report = await checkWorkflow(broken, { input: { n: 0 }, core: 'reference' });
    expect(report.problems).toEqual([{ property: 'liveness', node: 'charge', message: expect.stringMatching(/did not reach its end: node code still threw after 3 retries \(maxRetries, counted per sequencer\): HandlerThrewError: node code threw: down/) }]);
    expect(report.faults).toEqual([]);
  });

  it('a deduplicating fake that answers a repeated key differently: not a problem, and the comparison it prevents is listed in unchecked', async () => {
    const sink = new MemoryEffectSink();
    const wf = base().effect('charge', { run: (_s, { idempotencyKey }) => sink.apply('charge', idempotencyKey, {}), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems).toEqual([]);
    expect(report.unchecked[0]).toMatch(/^the two fault-free runs: an effect answered the same key differently/);
  });

  it('a run that never ends is one liveness problem, found at once (no scenario runs it again)', async () => {
    const wf = base().interrupt('ask', { resume: z.object({}), apply: () => ({}), next: 'ask' }).build();
    const started = Date.now();
    const report = await checkWorkflow(wf, { input: { n: 0 }, resume: { ask: {} }, core: 'reference', maxResumes: 20 });
    expect(report.problems).toEqual([{ property: 'liveness', node: 'ask', message: expect.stringMatching(/still parked after 20 resumes/) }]);
    expect(report.faults).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a pure node reading a millisecond clock: determinism', async () => {
    const wf = base().pure('stamp', { run: () => ({ r: Date.now() }), next: END }).build();
    expect((await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' })).problems.map((p) => p.property)).toContain('determinism');
  });

  it('maxScenarios: 1 crashes in the middle of the run, not before anything is durable', async () => {
    const report = await checkWorkflow(refund, { input: { n: 0 }, resume: { approve: { ok: true } }, core: 'reference', maxScenarios: 1 });
    expect(report.faults).toHaveLength(1);
    expect(report.faults[0]).not.toBe('append.before');
  });
});

describe('checkWorkflow refuses options it cannot use, before running anything', () => {
  const base = () => workflow({ name: 'opts', version: '1', state: State });
  const asking = base().interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: END }).build();

  it.each([
    ['maxScenarios 0', { maxScenarios: 0 }, OptionInvalidError],
    ['maxScenarios -1', { maxScenarios: -1 }, OptionInvalidError],
    ['maxScenarios NaN', { maxScenarios: Number.NaN }, OptionInvalidError],
    ['maxScenarios 3.7', { maxScenarios: 3.7 }, OptionInvalidError],
    ['maxScenarios "4"', { maxScenarios: '4' }, OptionInvalidError],
    ['maxResumes NaN', { maxResumes: Number.NaN }, OptionInvalidError],
    ['a misspelt option', { maxScenario: 1 }, OptionInvalidError],
    ['core null', { core: null }, OptionInvalidError],
    // As createRemit refuses them, before a run starts (not a liveness problem from inside one).
    ['core {}, an object without the RecoveryCore functions', { core: {} }, OptionInvalidError],
    ['core 5', { core: 5 }, OptionInvalidError],
    ['core "bogus", an unknown core name', { core: 'bogus' }, CoreUnavailableError],
    ['maxSteps 0', { maxSteps: 0 }, OptionInvalidError],
    ['maxSteps 1.5', { maxSteps: 1.5 }, OptionInvalidError],
    ['maxSteps "10"', { maxSteps: '10' }, OptionInvalidError],
    ['maxSteps over 10 000 000', { maxSteps: 10_000_001 }, OptionInvalidError],
    ['stallLimitMs 0', { stallLimitMs: 0 }, OptionInvalidError],
    ['stallLimitMs 2.5', { stallLimitMs: 2.5 }, OptionInvalidError],
    ['stallLimitMs Infinity', { stallLimitMs: Number.POSITIVE_INFINITY }, OptionInvalidError],
    ['stallLimitMs over the longest timer (2^31 ms)', { stallLimitMs: 2 ** 31 }, OptionInvalidError],
    ['stallLimitMs "100"', { stallLimitMs: '100' }, OptionInvalidError],
    ['resume null', { resume: null }, OptionInvalidError],
    ['resume []', { resume: [] }, OptionInvalidError],
    ['a resume value that is a Promise', { resume: { ask: Promise.resolve({ ok: true }) } }, OptionInvalidError],
    ['an async resume function that rejects', { resume: { ask: async () => { throw new Error('no'); } } }, ResumeFunctionThrewError],
    ['resume naming a node that is not an interrupt', { resume: { ask: { ok: true }, aks: { ok: true } } }, OptionInvalidError],
    ['an input the state schema refuses', { input: { n: 'one' } }, StateInvalidError],
    ['a resume value its schema refuses', { resume: { ask: { ok: 'yes' } } }, ResumeValueInvalidError],
    ['a resume function that throws', { resume: { ask: () => { throw new Error('no'); } } }, ResumeFunctionThrewError],
    ['no resume value', { resume: {} }, MissingResumeValueError],
  ])('%s', async (_label, options, errorClass) => {
    const error = await checkWorkflow(asking, { input: { n: 0 }, core: 'reference', resume: { ask: { ok: true } }, ...options } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errorClass);
  });

  it('its own errors have a code of remit/testing (docs/errors.md, "remit/testing"): MissingResumeValueError, ResumeFunctionThrewError', async () => {
    const cause = new Error('no');
    const threw = await checkWorkflow(asking, { input: { n: 0 }, core: 'reference', resume: { ask: () => { throw cause; } } }).catch((e: unknown) => e);
    expect(threw).toMatchObject({ code: TestingErrorCode.RESUME_FUNCTION_THREW, name: 'ResumeFunctionThrewError', node: 'ask', cause });
    const missing = await checkWorkflow(asking, { input: { n: 0 }, core: 'reference', resume: {} }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: TestingErrorCode.MISSING_RESUME_VALUE, name: 'MissingResumeValueError' });
    expect(Object.values(TestingErrorCode)).toEqual(['REMIT_TESTING_FAULT_SPEC_INVALID', 'REMIT_TESTING_MISSING_RESUME_VALUE', 'REMIT_TESTING_RESUME_FUNCTION_THREW']);
  });

  it('the refusals say what to give instead: core as createRemit says it, resume null or [], a Promise as a value', async () => {
    const refusal = (options: object) => checkWorkflow(asking, { input: { n: 0 }, core: 'reference', resume: { ask: { ok: true } }, ...options } as never).catch((e: unknown) => e);
    expect(await refusal({ core: {} })).toMatchObject({ option: 'core', message: expect.stringMatching(/^option core is not a RecoveryCore: it lacks recover\(\), /) });
    expect(await refusal({ core: 5 })).toMatchObject({ option: 'core', message: expect.stringMatching(/^option core must be "wasm", "reference" or a RecoveryCore \(got 5\)/) });
    expect(await refusal({ resume: null })).toMatchObject({ option: 'resume', message: expect.stringMatching(/must be an object of resume values by interrupt node name.*\(got null\)/) });
    expect(await refusal({ resume: [] })).toMatchObject({ option: 'resume', message: expect.stringMatching(/, not an array/) });
    expect(await refusal({ resume: { ask: Promise.resolve({ ok: true }) } })).toMatchObject({ option: 'resume', message: expect.stringMatching(/gives "ask" a Promise: give the value itself, or a function \(state, interruptId\) => value, which may be async/) });
    expect(await refusal({ maxSteps: 0 })).toMatchObject({ option: 'maxSteps', message: expect.stringMatching(/must be a whole number from 1 to 10000000/) });
  });

  it('a resume value its schema takes but the log cannot hold (undefined, a Date, a BigInt): the library\'s error, thrown, not a liveness problem of the workflow', async () => {
    const Any = z.object({ n: z.number(), v: z.string().optional() });
    const anyValue = workflow({ name: 'any-value', version: '1', state: Any })
      .interrupt('ask', { resume: z.any(), apply: (_s, v) => ({ v: String(v) }), next: END })
      .build();
    const check = (value: unknown) => checkWorkflow(anyValue, { input: { n: 0 }, core: 'reference', resume: { ask: value } }).catch((e: unknown) => e);
    // Each was reported as `liveness: the run did not reach its end: NotJsonError: ...`.
    expect(await check(undefined)).toBeInstanceOf(NotJsonError);
    expect(await check(() => 1n)).toBeInstanceOf(NotJsonError);
    expect(await check(new Date(0))).toMatchObject({ name: 'ValueUnfaithfulError', reason: 'CHANGED_BY_JSON', value: 'resume value', node: 'ask' });
    // What the schema makes of the value is what is logged: a Date it turns into text is no mistake.
    const dated = workflow({ name: 'dated', version: '1', state: Any })
      .interrupt('ask', { resume: z.union([z.string(), z.date()]).transform((d) => (typeof d === 'string' ? d : d.toISOString())), apply: (_s, v) => ({ v }), next: END })
      .build();
    const report = await checkWorkflow(dated, { input: { n: 0 }, core: 'reference', resume: { ask: new Date(0) }, maxScenarios: 3 });
    expect(report.problems).toEqual([]);
    expect(report.reference.state).toEqual({ n: 0, v: '1970-01-01T00:00:00.000Z' });
  });

  it('an input its state schema takes but the log cannot hold (a Date, a BigInt): the error start would throw, before anything runs (docs/guide.md)', async () => {
    const Dated = z.object({ at: z.date().optional(), big: z.bigint().optional() });
    const dated = workflow({ name: 'dated', version: '1', state: Dated }).pure('p', { run: () => ({}), next: END }).build();
    const check = (input: object) => checkWorkflow(dated, { input, core: 'reference' }).catch((e: unknown) => e);
    expect(await check({ at: new Date(0) })).toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', field: 'at' });
    expect(await check({ big: 1n })).toBeInstanceOf(NotJsonError);
  });

  it('a builder instead of a built workflow, and no options', async () => {
    await expect(checkWorkflow(base() as never, { input: { n: 0 } } as never)).rejects.toBeInstanceOf(ArgumentInvalidError);
    await expect(checkWorkflow(asking, undefined as never)).rejects.toBeInstanceOf(ArgumentInvalidError);
  });
});

describe('checkWorkflow checks that run at once do not disturb each other', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  // Effects that await: while one check's handler is in flight, the other check's sequencer runs.
  const slow = (name: string) =>
    workflow({ name, version: '1', state: State })
      .effect('charge', { run: async (_s, { idempotencyKey }) => (await sleep(5), { id: `ch-${idempotencyKey}` }), apply: (_s, r) => ({ id: r.id }), next: 'notify' })
      .effect('notify', { run: async () => (await sleep(5), { sent: true }), next: END })
      .build();

  it('two checks of two workflows at once: no problem in either, as when run one after the other', async () => {
    const [one, two] = await Promise.all([checkWorkflow(slow('w1'), { input: { n: 0 }, core: 'reference' }), checkWorkflow(slow('w2'), { input: { n: 0 }, core: 'reference' })]);
    for (const report of [one, two]) {
      expect(report.problems).toEqual([]);
      expect(report.reference).toMatchObject({ status: 'completed', path: ['charge', 'notify'] });
      expect(report.faults.length).toBeGreaterThan(10);
    }
  });

  it('the same workflow checked twice at once: the same reports (effect keys still hold the one run id checked-run)', async () => {
    const wf = slow('same');
    const reports = await Promise.all([checkWorkflow(wf, { input: { n: 0 }, core: 'reference' }), checkWorkflow(wf, { input: { n: 0 }, core: 'reference' })]);
    for (const report of reports) {
      expect(report.problems).toEqual([]);
      expect(report.reference.state).toMatchObject({ id: 'ch-checked-run/charge/1' });
    }
    expect(reports[1]!.faults).toEqual(reports[0]!.faults);
  });
});

describe('checkWorkflow with resume values, handlers that fail once, and runs that never end', () => {
  const base = () => workflow({ name: 'more', version: '1', state: z.object({ n: z.number(), approvedBy: z.string().optional(), id: z.string().optional() }) });

  it('a resume function of the interrupt id: a crash that moves the park seq gives another value, listed in unchecked, not a problem', async () => {
    const wf = base()
      .effect('charge', { run: () => ({}), next: 'ask' })
      .interrupt('ask', { resume: z.object({ token: z.string() }), apply: (_s, v) => ({ approvedBy: v.token }), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference', resume: { ask: (_s: unknown, id: string) => ({ token: `approval-for-${id}` }) } });
    expect(report.problems).toEqual([]);
    expect(report.reference.state).toEqual({ n: 0, approvedBy: 'approval-for-ask@5' });
    expect(report.unchecked.length).toBeGreaterThan(0);
    // Its handler ignores its key: the note saying so comes first (check-workflow-review.test.ts).
    expect(report.unchecked[0]).toMatch(/^effect charge: its handler never read its idempotencyKey/);
    for (const line of report.unchecked.slice(1)) expect(line).toMatch(/: interrupt ask was resumed with another value \(\{"token":"approval-for-ask@6"\} for ask@6 in the recovered run, .*so the run's status and final state were not compared$/);
  });

  it('with the same resume values, a state that differs after recovery is still a problem (the comparison is skipped only when they differ)', async () => {
    let calls = 0;
    const wf = base()
      .pure('begin', { run: () => ((calls = 0), {}), next: 'charge' })
      .effect('charge', { run: () => ((calls += 1), {}), next: 'ask' })
      .interrupt('ask', { resume: z.object({ token: z.string() }), apply: (_s, v) => ({ approvedBy: `${v.token}-${calls}` }), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference', resume: { ask: { token: 'kim' } } });
    // A crash inside charge's call calls it again: the apply reads the count, not its arguments.
    const problem = report.problems.find((p) => p.fault === 'effect.after-handler@charge');
    expect(problem).toMatchObject({ property: 'recovered-run', node: 'ask', message: expect.stringMatching(/the final state of the recovered run is .*"kim-2".*, of the fault-free run .*"kim-1".*the checkpoints first differ at step 2, after node ask/) });
  });

  it('an async resume function is awaited', async () => {
    const wf = base().interrupt('ask', { resume: z.object({ token: z.string() }), apply: (_s, v) => ({ approvedBy: v.token }), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference', resume: { ask: async () => ({ token: 'kim' }) } });
    expect(report.problems).toEqual([]);
    expect(report.reference.state).toEqual({ n: 0, approvedBy: 'kim' });
  });

  it.each([
    ['a handler whose first call throws ETIMEDOUT', () => {
      let calls = 0;
      return base().effect('charge', { run: () => { if (calls++ === 0) throw new Error('ETIMEDOUT'); return { ok: 1 }; }, next: 'notify' }).effect('notify', { run: () => ({}), next: END }).build();
    }],
    ['an apply that throws on its first call', () => {
      let calls = 0;
      return base().effect('charge', { run: () => ({}), apply: () => { if (calls++ === 0) throw new Error('once'); return {}; }, next: 'notify' }).effect('notify', { run: () => ({}), next: END }).build();
    }],
  ])('%s: no problem, and report.faults are crashes that happened, at the points of the run that did not retry', async (_label, make) => {
    const wf = make();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems).toEqual([]);
    // The first fault-free run retried; the second did not, and the scenarios follow it.
    expect(report.reference).toMatchObject({ retries: 0, path: ['charge', 'notify'] });
    const stable = base().effect('charge', { run: () => ({ ok: 1 }), next: 'notify' }).effect('notify', { run: () => ({}), next: END }).build();
    expect(report.faults).toEqual((await checkWorkflow(stable, { input: { n: 0 }, core: 'reference' })).faults);
  });

  it('a handler that throws on its first attempt in every run: its retry path is crashed at too, each fault replays with hooksFor', async () => {
    const core = await createCore('reference');
    const wf = base().effect('charge', { run: (_s, { attempt }) => { if (attempt === 1) throw new Error('ETIMEDOUT'); return { ok: 1 }; }, next: 'notify' }).effect('notify', { run: () => ({}), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core });
    expect(report.problems).toEqual([]);
    expect(report.reference.retries).toBe(1);
    expect(report.faults).toContain('effect.before-handler@charge#2');
    for (const fault of report.faults) {
      const hooks = hooksFor(fault, (point, info) => { throw new InjectedFault(point, info); }, { workflow: wf });
      const remit = new Remit(new MemoryStore(), core, [wf], hooks);
      // Continued after node code threw, as checkWorkflow does, until the fault fires. (A throw
      // at the EFFECT_RELEASED append is not seen as such: releasing is best effort, the caller
      // gets the handler's HandlerThrewError; the spec fired all the same.)
      for (let retry = 0; retry < 3 && !hooks.fired; retry++) {
        await (retry === 0 ? remit.start(wf, { n: 0 }, { runId: 'r' }) : remit.continueRun('r')).catch((e: unknown) => e);
      }
      expect(hooks.fired, fault).toBe(true);
    }
  });

  it('a handler that failed in both fault-free runs and never again: the points of their retry are listed in unchecked, not called nondeterminism', async () => {
    let calls = 0;
    const wf = base().effect('charge', { run: () => { const call = calls++; if (call === 0 || call === 2) throw new Error('ETIMEDOUT'); return {}; }, next: 'notify' }).effect('notify', { run: () => ({}), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems).toEqual([]);
    expect(report.reference.retries).toBe(1);
    const notReached = report.unchecked.filter((l) => l.includes('not crashed at'));
    expect(notReached.map((l) => l.slice(0, l.indexOf(': ')))).toEqual(['append.before@charge#3', 'append.after@charge#3', 'effect.before-handler@charge#2', 'append.before@charge#4', 'append.after@charge#4']);
    for (const line of notReached) {
      expect(line).toMatch(/not crashed at: this run did not reach it \((the fault-free run|this run) retried node code that threw/);
      expect(report.faults).not.toContain(line.slice(0, line.indexOf(': ')));
    }
  });

  it('a route that never reaches END: one liveness problem naming the last steps, returned at once (maxSteps)', async () => {
    const wf = base().pure('a', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n < 1e12 ? 'a' : END) }).build();
    const started = Date.now();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(report.problems).toEqual([{
      property: 'liveness', node: 'a',
      message: expect.stringMatching(/^the run did not reach its end: still running after 10000 node steps \(maxSteps\), its last ones a → a → a → a → a → a: a loop whose route never reaches END\?/),
    }]);
    expect(report.faults).toEqual([]);
    const small = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference', maxSteps: 50 });
    expect(small.problems).toEqual([expect.objectContaining({ property: 'liveness', message: expect.stringMatching(/after 50 node steps/) })]);
  });

  it('a loop through an effect stops at maxSteps too', async () => {
    const wf = base().effect('poll', { run: () => ({}), next: 'poll' }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference', maxSteps: 200 });
    expect(report.problems).toEqual([expect.objectContaining({ property: 'liveness', node: 'poll', message: expect.stringMatching(/still running after 200 node steps \(maxSteps\), its last ones poll → poll/) })]);
  });

  it('a recovered run that loops where the fault-free one ended: stopped at twice its steps, a liveness problem of that crash', async () => {
    let calls = 0;
    const wf = base()
      .pure('begin', { run: () => ((calls = 0), {}), next: 'charge' })
      .effect('charge', { run: () => ((calls += 1), {}), next: () => (calls > 1 ? 'spin' : END) })
      .pure('spin', { run: (s) => ({ n: s.n + 1 }), next: 'spin' })
      .build();
    const started = Date.now();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(report.problems).toContainEqual({
      property: 'liveness', fault: 'effect.after-handler@charge', node: 'spin',
      message: expect.stringMatching(/still running after 132 node steps \(twice the fault-free run's 2 and 128 more\)/),
    });
  });

  it('a recovered run that takes another path: which side took which, from which step, the route that chose', async () => {
    let calls = 0;
    const wf = base()
      .pure('begin', { run: () => ((calls = 0), {}), next: 'charge' })
      .effect('charge', { run: () => ((calls += 1), {}), next: 'check' })
      .pure('check', { run: () => ({}), next: () => (calls > 1 ? 'again' : 'once') })
      .pure('again', { run: () => ({}), next: END })
      .pure('once', { run: () => ({}), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems).toContainEqual({
      property: 'recovered-run', fault: 'effect.after-handler@charge', node: 'check',
      message: 'after recovery the run differs from the fault-free one: the recovered run took ["begin","charge","check","again"], the fault-free run ["begin","charge","check","once"], from step 3: ' +
        'the route out of check chose differently (a route, or a pure node or an apply before it, is not deterministic)',
    });
  });
});

/**
 * Regressions from a review of checkWorkflow on users' workflows (each was reported wrongly before):
 * an outside value that differs explains a fault point a run did not reach; a retried resume is one
 * resume; scenarios are bounded by the fault-free run, not by the option it met; equal retries do
 * not excuse a route that chose differently; a random value a later node overwrites is caught at
 * the checkpoint it reached.
 */
describe('checkWorkflow: false reports found by review', () => {
  const Flags = z.object({ applied: z.boolean().optional(), n: z.number().optional(), note: z.string().optional(), amount: z.number().optional() });

  it('a deduplicating fake whose answer a route reads: the other way is explained by the answer (unchecked), not called nondeterminism', async () => {
    const sink = new MemoryEffectSink();
    const wf = workflow({ name: 'sinkroute', version: '1', state: Flags })
      .effect('charge', { run: (_s, { idempotencyKey }) => sink.apply('charge', idempotencyKey, {}), apply: (_s, r) => ({ applied: r.applied }), next: (s) => (s.applied ? 'celebrate' : 'done') })
      .pure('celebrate', { run: () => ({ note: 'new charge' }), next: 'done' })
      .pure('done', { run: () => ({}), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: {}, core: 'reference' });
    expect(report.problems).toEqual([]);
    expect(report.unchecked.some((u) => /did not reach it after an effect answered the same key differently/.test(u))).toBe(true);
  });

  it('an interrupt whose apply throws once, at any call: the retried resume is the same resume, never maxResumes', async () => {
    for (let k = 1; k <= 30; k++) {
      let calls = 0;
      const wf = workflow({ name: `rr${k}`, version: '1', state: Flags })
        .interrupt('approve', { resume: z.number(), apply: (s, v) => { if (++calls === k) throw new Error('ETIMEDOUT'); return { n: (s.n ?? 0) + v }; }, next: (s) => ((s.n ?? 0) >= 2 ? END : 'approve') })
        .build();
      const report = await checkWorkflow(wf, { input: { n: 0 }, resume: { approve: 1 }, core: 'reference' });
      expect(report.problems, `apply throwing at call ${k}`).toEqual([]);
    }
  });

  it('a run exactly as long as maxSteps: its recovered runs re-run what their crash lost and are not stopped by the option', async () => {
    const wf = workflow({ name: 'ten', version: '1', state: Flags })
      .pure('a', { run: (s) => ({ n: (s.n ?? 0) + 1 }), next: (s) => ((s.n ?? 0) < 10 ? 'a' : END) })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, maxSteps: 10, core: 'reference' });
    expect(report.reference.steps).toBe(10);
    expect(report.problems).toEqual([]);
    expect(report.faults.length).toBeGreaterThan(10);
  });

  it('a route that chooses differently at its k-th call, in runs that all retry an effect once: determinism, as without the retry', async () => {
    const found: number[] = [];
    for (let k = 14; k <= 26; k++) {
      let calls = 0;
      const wf = workflow({ name: `hide${k}`, version: '1', state: Flags })
        .effect('e', { run: (_s, { attempt }) => { if (attempt === 1) throw new Error('ETIMEDOUT'); return 1; }, next: 'a' })
        .pure('a', { run: () => ({}), next: () => (++calls === k ? 'c' : 'b') })
        .pure('b', { run: () => ({}), next: END })
        .pure('c', { run: () => ({}), next: END })
        .build();
      const report = await checkWorkflow(wf, { input: {}, core: 'reference' });
      if (report.problems.length > 0) found.push(k);
      expect(report.problems.every((p) => p.property === 'determinism' || p.property === 'recovered-run')).toBe(true);
      // The bug this pins: such a k (17, 21 and 24, when the check grouped pure steps) was listed
      // as unchecked only ("the fault-free run retried"), though both runs retried once.
      if (report.problems.length === 0) expect(report.unchecked.filter((u) => /retried/.test(u)), `k = ${k}`).toEqual([]);
    }
    // One k may be missed for another reason, which no check can see: the call whose answer differs
    // is made in a crashed sequencer and never recorded, and the recovered run asks again (which k
    // that is depends on where the crashes fall: 19 with group commit, 17 without).
    expect(found.length).toBeGreaterThanOrEqual(12);
  });

  it('a route that chooses another node in one run, where both nodes fail: determinism naming the route, not a pass (the path of completed nodes is the same)', async () => {
    let calls = 0;
    const wf = workflow({ name: 'failover', version: '1', state: Flags })
      .pure('prepare', { run: () => ({ n: 1 }), next: () => (++calls === 2 ? 'chargeB' : 'chargeA') })
      .effect('chargeA', { run: () => fail('DECLINED', 'card declined'), next: END })
      .effect('chargeB', { run: () => fail('DECLINED', 'card declined'), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: {}, core: 'reference' });
    expect(report.reference).toMatchObject({ status: 'failed', path: ['prepare'] });
    expect(report.problems).toEqual([{
      property: 'determinism', node: 'prepare',
      message: 'two fault-free runs from the same input differ: the second fault-free run ended failed (DECLINED at chargeB: card declined), the first fault-free run failed (DECLINED at chargeA: card declined), ' +
        'on the same node path: the route out of prepare chose differently (a route, or a pure node or an apply before it, is not deterministic)',
    }]);
    // The same failure at the same node, with another message from outside: no problem.
    let declines = 0;
    const same = workflow({ name: 'declines', version: '1', state: Flags })
      .pure('prepare', { run: () => ({ n: 1 }), next: 'charge' })
      .effect('charge', { run: () => fail('DECLINED', `declined (${++declines})`), next: END })
      .build();
    expect((await checkWorkflow(same, { input: {}, core: 'reference' })).problems).toEqual([]);
  });

  it('a pure node whose answer changes per call, overwritten by a later node: determinism at the checkpoint it reached', async () => {
    // A call counter, not Math.random: a random price in 0..999 repeats in the second fault-free run
    // one time in a thousand, and the checker then (rightly) reports the recovered run instead, which
    // failed CI once. The counter never repeats, so the test asserts the first report every time.
    let calls = 0;
    const wf = workflow({ name: 'overwritten', version: '1', state: Flags })
      .pure('price', { run: () => ({ amount: 100 + calls++ }), next: 'charge' })
      .effect('charge', { run: (s) => ({ charged: s.amount }), next: 'cleanup' })
      .pure('cleanup', { run: () => ({ amount: 0 }), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: {}, maxScenarios: 2, core: 'reference' });
    expect(report.problems[0]).toMatchObject({ property: 'determinism', node: 'price' });
    expect(report.problems[0]!.message).toMatch(/the state after node price \(step 0\) is \{"amount":\d+\} in the second fault-free run/);
  });

  it('maxResumes, maxRetries and maxSteps given as null are refused like other values that are not whole numbers', async () => {
    for (const option of ['maxResumes', 'maxRetries', 'maxSteps'] as const) {
      await expect(checkWorkflow(refund, { input: { n: 0 }, resume: { approve: { ok: true } }, [option]: null as never })).rejects.toThrow(OptionInvalidError);
    }
    await expect(checkWorkflow(null as never, { input: {} } as never)).rejects.toThrow(/got null/);
  });
});

describe('checkWorkflow reports code that never settles as a liveness problem (stallLimitMs), instead of waiting for the test runner', () => {
  const never = () => new Promise<never>(() => {});
  const limit = { stallLimitMs: 100 };
  // The tests that need the run to progress up to a given point before it hangs: a slow moment of
  // a loaded machine (100 ms between two fault points) would be reported as an earlier stall.
  const patient = { stallLimitMs: 1_000 };

  it('a pure node: the fault-free run is one liveness problem, naming the stall and the last point reached; no scenario is run', async () => {
    const hangs = workflow({ name: 'hangs-pure', version: '1', state: State })
      .pure('first', { run: (s) => ({ n: s.n + 1 }), next: 'stuck' })
      .pure('stuck', { run: async () => never(), next: END })
      .build();
    const began = Date.now();
    const report = await checkWorkflow(hangs, { input: { n: 0 }, core: 'reference', ...limit });
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatchObject({ property: 'liveness' });
    expect(report.problems[0]!.message).toMatch(/no progress for 100 ms \(stallLimitMs\) since (fault point|the run began)/);
    expect(report.faults).toEqual([]);
  });

  it('an effect handler: the problem names its node', async () => {
    const hangs = workflow({ name: 'hangs-effect', version: '1', state: State })
      .pure('first', { run: (s) => ({ n: s.n + 1 }), next: 'call' })
      .effect('call', { run: () => never(), next: END })
      .build();
    const report = await checkWorkflow(hangs, { input: { n: 0 }, core: 'reference', ...patient });
    expect(report.problems).toEqual([expect.objectContaining({ property: 'liveness', node: 'call', message: expect.stringContaining('since fault point effect.before-handler@call') })]);
  });

  it('a resume function of the options that never settles', async () => {
    const asks = workflow({ name: 'hangs-resume', version: '1', state: State })
      .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: END })
      .build();
    const report = await checkWorkflow(asks, { input: { n: 0 }, core: 'reference', resume: { ask: () => never() }, ...limit });
    expect(report.problems).toEqual([expect.objectContaining({ property: 'liveness', message: expect.stringContaining('stallLimitMs') })]);
  });

  it('node code that hangs only in a crash scenario: that scenario is a liveness problem with its fault, and the scenarios after it are listed as not run', async () => {
    let calls = 0;
    const later = workflow({ name: 'hangs-in-scenarios', version: '1', state: State })
      .pure('p', { run: async (s) => (++calls >= 3 ? never() : { n: s.n + 1 }), next: 'q' })
      .pure('q', { run: (s) => ({ n: s.n + 1 }), next: END })
      .build();
    const report = await checkWorkflow(later, { input: { n: 0 }, core: 'reference', ...patient });
    expect(report.reference.status).toBe('completed'); // the two fault-free runs call p twice
    expect(report.problems).toEqual([expect.objectContaining({ property: 'liveness', fault: expect.any(String), message: expect.stringContaining('stallLimitMs') })]);
    const stalledAt = report.problems[0]!.fault!;
    expect(report.unchecked.length).toBeGreaterThan(0);
    for (const line of report.unchecked) expect(line).toMatch(new RegExp(`: not run: the scenario ${stalledAt.replace(/[.@#]/g, '\\$&')} stalled \\(stallLimitMs\\)$`));
  });

  it('is a limit on idleness, not on the run: a run slower in total than the limit, progressing, passes', async () => {
    // Three handlers of 200 ms each: 600 ms in all, over the 500 ms limit, and each 300 ms under it
    // (40 ms handlers under a 90 ms limit left 50 ms for a slow moment of a loaded machine).
    const handler = (r: number) => async () => { await new Promise((resolve) => setTimeout(resolve, 200)); return { r }; };
    const slow = workflow({ name: 'slow-but-moving', version: '1', state: State })
      .effect('a', { run: handler(1), apply: (_s, r) => r, next: 'b' })
      .effect('b', { run: handler(2), apply: (_s, r) => r, next: 'c' })
      .effect('c', { run: handler(3), apply: (_s, r) => r, next: END })
      .build();
    const report = await checkWorkflow(slow, { input: { n: 0 }, core: 'reference', stallLimitMs: 500, maxScenarios: 2 });
    expect(report.problems).toEqual([]);
    expect(report.reference.status).toBe('completed');
  });

  it('a handler that never settles in the second fault-free run only: the liveness problem says it is that run\'s', async () => {
    let calls = 0;
    const wf = workflow({ name: 'second-hangs', version: '1', state: State }).effect('charge', { run: () => (++calls === 2 ? new Promise(() => {}) : {}), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference', ...patient });
    expect(report.reference.status).toBe('completed');
    // It read "the run did not reach its end", as the first run's would, with no fault to tell them apart.
    expect(report.problems[0]).toEqual({ property: 'liveness', node: 'charge', message: expect.stringMatching(/^the second fault-free run did not reach its end: no progress for 1000 ms \(stallLimitMs\)/) });
  });

  it('defaults to 2000 ms: a handler that never settles is reported without the option', async () => {
    const hangs = workflow({ name: 'hangs-default', version: '1', state: State }).effect('call', { run: () => never(), next: END }).build();
    const began = Date.now();
    const report = await checkWorkflow(hangs, { input: { n: 0 }, core: 'reference' });
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_900);
    expect(report.problems[0]!.message).toContain('no progress for 2000 ms');
  }, 10_000);
});

