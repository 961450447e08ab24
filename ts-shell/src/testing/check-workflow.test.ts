/**
 * checkWorkflow (remit/testing): it passes sound workflows on both cores, covers every fault point
 * the run reaches with a spec that reproduces that very crash, and fails the workflows that break
 * the contract's assumptions (canaries: a pure node, a route and an apply that are not
 * deterministic); its effect and prefix checks fail on the histories they exist to catch.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { encodeRecordV2, concatBytes } from '../core/codec.js';
import { chainValueBefore } from '../core/framing.js';
import { RecordKind } from '../core/types.js';
import { utf8 } from '../json.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';
import { ArgumentInvalidError, fail, OptionInvalidError, ResumeValueInvalidError, StateInvalidError } from '../errors.js';
import { checkWorkflow, effectProblems, MissingResumeValueError, prefixProblem, ResumeFunctionThrewError } from './check-workflow.js';
import { MemoryEffectSink } from './effect-sink.js';
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
  });
});

describe('checkWorkflow fails the workflows the contract cannot hold on (canaries)', () => {
  const base = () => workflow({ name: 'canary', version: '1', state: State });

  it('a pure node reading Math.random: determinism, naming the state', async () => {
    const wf = base().pure('roll', { run: () => ({ r: Math.random() }), next: 'charge' }).effect('charge', { run: () => ({}), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems.map((p) => p.property)).toEqual(['determinism']);
    expect(report.problems[0]!.message).toMatch(/final state .* a pure node, a route or an apply is not deterministic/);
  });

  it('a route that is not a function of the state: determinism, naming the node path', async () => {
    let flip = false;
    const wf = base()
      .pure('a', { run: () => ({}), next: () => ((flip = !flip) ? 'b' : 'c') })
      .pure('b', { run: () => ({ n: 1 }), next: END })
      .pure('c', { run: () => ({ n: 2 }), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems[0]).toMatchObject({ property: 'determinism', message: expect.stringMatching(/node path \["a","b"\] against \["a","c"\]/) });
  });

  it('an effect apply that counts its calls: recovered runs differ where it runs again', async () => {
    let applied = 0;
    const wf = base().effect('charge', { run: () => ({ id: 'x' }), apply: () => ({ n: ++applied }), next: END }).build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems.some((p) => p.property === 'determinism')).toBe(true);
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
    expect(effectProblems(['k1'], new Set(), done)).toEqual([]);
    expect(effectProblems(['k1', 'k1'], new Set(['k1']), done)).toEqual([]);
    expect(effectProblems(['k1', 'k1'], new Set(), done)).toEqual([expect.stringMatching(/^the handler of k1 was called 2 times \(at most 1: /)]);
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
    expect(report.problems).toEqual([{ property: 'liveness', message: expect.stringMatching(/did not reach its end: HandlerThrewError: node code threw: down/) }]);
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
    expect(report.problems).toEqual([{ property: 'liveness', message: expect.stringMatching(/still parked after 20 resumes/) }]);
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
    ['resume naming a node that is not an interrupt', { resume: { ask: { ok: true }, aks: { ok: true } } }, OptionInvalidError],
    ['an input the state schema refuses', { input: { n: 'one' } }, StateInvalidError],
    ['a resume value its schema refuses', { resume: { ask: { ok: 'yes' } } }, ResumeValueInvalidError],
    ['a resume function that throws', { resume: { ask: () => { throw new Error('no'); } } }, ResumeFunctionThrewError],
    ['no resume value', { resume: {} }, MissingResumeValueError],
  ])('%s', async (_label, options, errorClass) => {
    const error = await checkWorkflow(asking, { input: { n: 0 }, core: 'reference', resume: { ask: { ok: true } }, ...options } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errorClass);
  });

  it('a builder instead of a built workflow, and no options', async () => {
    await expect(checkWorkflow(base() as never, { input: { n: 0 } } as never)).rejects.toBeInstanceOf(ArgumentInvalidError);
    await expect(checkWorkflow(asking, undefined as never)).rejects.toBeInstanceOf(ArgumentInvalidError);
  });
});
