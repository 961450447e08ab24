/**
 * Fault specs a test can rely on: a spec that could never fire (an unknown point, a kind that is
 * not a record kind, a kind at a point that carries none) is refused when it is parsed, so a test
 * cannot pass without its fault having happened.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { FAULT_POINTS } from '../faults.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';
import { fail } from '../errors.js';
import { FaultSpecInvalidError, TestingErrorCode } from './errors.js';
import { checkSpecNode, faultMatches, formatFaultSpec, hooksFor, parseFaultSpec } from './fault-spec.js';

describe('parseFaultSpec', () => {
  it('parses every point, and the kinds each point carries, and formats them back', () => {
    for (const point of FAULT_POINTS) expect(formatFaultSpec(parseFaultSpec(point))).toBe(point);
    for (const text of ['append.after:EFFECT_INTENT#2', 'append.before:EFFECT_DONE@chargeCard', 'resume.after-claim:RESUME_CLAIMED', 'fork.after-store:FORKED', 'effect.after-handler@chargeCard']) {
      expect(formatFaultSpec(parseFaultSpec(text))).toBe(text);
    }
  });

  it.each([
    ['nope.point', /point one of/],
    ['append.after:EFFECT_INTNET', /record kinds: RUN_STARTED/],
    ['effect.after-handler:EFFECT_INTENT', /effect\.after-handler carries no record kinds/],
    ['resume.after-claim:NODE_COMPLETED', /carries only RESUME_CLAIMED/],
    // A fork's record is written by the store's fork (fork.before-store, fork.after-store), never appended.
    ['append.after:FORKED', /append\.after carries only .*, so :FORKED would never match$/],
    ['append.before:FORKED@a', /append\.before carries only .*, so :FORKED would never match$/],
    ['append.after#0', /occurrence counts from 1/],
    // A fork point carries no node: refused without the workflow (from a review of testing: it was accepted and never fired).
    ['fork.before-store@x', /fork\.before-store is reached at no node, so @x would never match/],
  ])('refuses %s, which could never fire, with FaultSpecInvalidError (its code, the spec as given); so does hooksFor given the string', (text, message) => {
    const error = thrown(() => parseFaultSpec(text));
    expect(error).toBeInstanceOf(FaultSpecInvalidError);
    expect(error).toMatchObject({ code: 'REMIT_TESTING_FAULT_SPEC_INVALID', spec: text, name: 'FaultSpecInvalidError', message: expect.stringMatching(message) });
    expect(error.message.startsWith(`bad fault spec ${JSON.stringify(text)}: `)).toBe(true);
    // The same error, word for word, from hooksFor.
    const fromHooks = thrown(() => hooksFor(text, () => {}));
    expect(fromHooks).toBeInstanceOf(FaultSpecInvalidError);
    expect(fromHooks.message).toBe(error.message);
  });

  it('hooksFor takes the string form, as checkWorkflow reports faults, and fires as the parsed spec does', async () => {
    const wf = workflow({ name: 'one', version: '1', state: z.object({ n: z.number() }) })
      .pure('a', { run: (s) => ({ n: s.n + 1 }), next: 'b' })
      .pure('b', { run: (s) => ({ n: s.n + 1 }), next: END })
      .build();
    const core = await createCore('reference');
    for (const text of ['pure.before-return@b', 'append.after#2', 'append.before:NODE_COMPLETED@a', 'pure.before-return#9']) {
      const fromString = hooksFor(text, () => {}, { workflow: wf });
      const fromSpec = hooksFor(parseFaultSpec(text), () => {}, { workflow: wf });
      for (const hooks of [fromString, fromSpec]) await new Remit(new MemoryStore(), core, [wf], hooks, { groupPureSteps: false }).start(wf, { n: 0 });
      expect(fromString.fired, text).toBe(fromSpec.fired);
      expect(fromString.fired, text).toBe(text !== 'pure.before-return#9');
    }
  });

  it('hooksFor refuses what is neither a spec string nor a FaultSpec that could fire', () => {
    for (const given of [undefined, null, 42, {}, { point: 'nope', occurrence: 1 }, { point: 'append.after', occurrence: 0 }, { point: 'append.after' }, { point: 'append.after', occurrence: 1, kind: 'EFFECT_INTNET' }, { point: 'append.after', occurrence: 1, node: '' }]) {
      const error = thrown(() => hooksFor(given as never, () => {}));
      expect(error, JSON.stringify(given)).toBeInstanceOf(FaultSpecInvalidError);
      expect(error.code).toBe(TestingErrorCode.FAULT_SPEC_INVALID);
    }
    expect(thrown(() => hooksFor(42 as never, () => {})).message).toMatch(/hooksFor needs a "point\[:KIND\]\[@node\]\[#n\]" string or a FaultSpec/);
    // From a review of testing: a misspelt key left the spec firing at the first point of any node; a missing occurrence was "counts from 1".
    expect(thrown(() => hooksFor({ point: 'append.after', occurrence: 1, nodee: 'charge' } as never, () => {})).message).toMatch(/"nodee" is not a key of a FaultSpec \(known: point, kind, node, occurrence\)/);
    expect(thrown(() => formatFaultSpec({ point: 'append.after', occurrence: 1, nodee: 'charge' } as never)).message).toMatch(/"nodee" is not a key/);
    expect(thrown(() => hooksFor({ point: 'append.after' } as never, () => {})).message).toMatch(/occurrence counts from 1 \(the n-th time the point is reached: a whole number\), got none/);
    // An occurrence that cannot be turned into a string is described, not a TypeError (review of own changes).
    expect(thrown(() => hooksFor({ point: 'pure.before-return', occurrence: Object.create(null) } as never, () => {})).message).toMatch(/got an object$/);
    expect(thrown(() => hooksFor({ point: 'pure.before-return', occurrence: '2' } as never, () => {})).message).toMatch(/got a string$/);
  });
});

/** The error `run` throws (it must throw one). */
function thrown(run: () => unknown): FaultSpecInvalidError {
  try {
    run();
  } catch (error) {
    return error as FaultSpecInvalidError;
  }
  throw new Error('expected it to throw');
}

describe('hooksFor with the workflow it is for', () => {
  const wf = workflow({ name: 'shop', version: '1', state: z.object({ n: z.number() }) })
    .pure('price', { run: (s) => ({ n: s.n + 1 }), next: 'charge' })
    .effect('charge', { run: () => ({}), next: 'approve' })
    .interrupt('approve', { resume: z.object({}), apply: () => ({}), next: END })
    .build();
  const never = () => {};

  it.each([
    ['append.before@nope', /workflow shop has no node nope \(its nodes: price, charge, approve\)/],
    ['pure.before-return@charge', /reached only at pure nodes, and charge is an effect node/],
    ['effect.after-handler@price', /reached only at effect nodes, and price is a pure node/],
    ['resume.after-claim@charge', /reached only at interrupt nodes/],
    ['fork.after-store@price', /fork\.after-store is reached at no node/],
  ])('refuses %s, which could never fire in it', (text, message) => {
    expect(() => hooksFor(parseFaultSpec(text), never, { workflow: wf })).toThrow(message);
    expect(thrown(() => hooksFor(text, never, { workflow: wf }))).toMatchObject({ code: 'REMIT_TESTING_FAULT_SPEC_INVALID', spec: text });
  });

  it.each([
    ['append.after:EFFECT_DONE@price', /EFFECT_DONE is appended only at effect nodes, and price is a pure node/],
    ['append.before:EFFECT_ATTEMPT@approve', /EFFECT_ATTEMPT is appended only at effect nodes, and approve is an interrupt node/],
    ['append.after:INTERRUPT_PARKED@charge', /INTERRUPT_PARKED is appended only at interrupt nodes, and charge is an effect node/],
    ['append.before:RESUME_CLAIMED@price', /RESUME_CLAIMED is appended only at interrupt nodes/],
    ['append.after:RUN_STARTED@price', /RUN_STARTED is appended at no node/],
  ])('refuses %s, a record kind at a node it is never appended at', (text, message) => {
    expect(() => hooksFor(text, never, { workflow: wf })).toThrow(message);
    expect(thrown(() => checkSpecNode(parseFaultSpec(text), wf))).toMatchObject({ code: 'REMIT_TESTING_FAULT_SPEC_INVALID', spec: text });
  });

  it('accepts every record kind at every node the append points carry it at, as runs of every kind of step show them', async () => {
    const core = await createCore('reference');
    const kindOf = (node: string | undefined) => (node === undefined ? 'none' : wf.nodes.get(node)?.kind ?? loud.nodes.get(node)!.kind);
    const seen = new Set<string>();
    const record = { at(point: string, info: { kinds?: string[]; node?: string }) {
      if (point === 'append.before' || point === 'append.after') for (const kind of info.kinds ?? []) seen.add(`${point}:${kind}@${info.node ?? ''}`);
    } };
    // Every step: a grouped or single pure step, an effect that completes, releases or fails, a park, a claim, a failure at each kind of node.
    let calls = 0;
    const loud = workflow({ name: 'loud', version: '1', state: z.object({ n: z.number() }) })
      .pure('tick', { run: (s) => (s.n === 9 ? fail('P', 'pure') : { n: s.n + 1 }), next: 'call' })
      .effect('call', { run: () => { calls += 1; if (calls === 1) throw new Error('flaky'); return {}; }, apply: (s) => (s.n === 8 ? fail('E', 'effect') : {}), next: 'wait' })
      .interrupt('wait', { resume: z.object({ stop: z.boolean() }), apply: (_s, v) => (v.stop ? fail('I', 'interrupt') : {}), next: END })
      .build();
    for (const groupPureSteps of [true, false]) {
      const remit = new Remit(new MemoryStore(), core, [wf, loud], record, { groupPureSteps });
      const parked = await remit.start(wf, { n: 0 }, { runId: `shop-${groupPureSteps}` });
      await remit.resume(parked.runId, parked.interrupt!.id, {});
      calls = 0;
      await expect(remit.start(loud, { n: 0 }, { runId: `loud-${groupPureSteps}` })).rejects.toThrow('flaky');
      const waiting = await remit.continueRun(`loud-${groupPureSteps}`);
      await remit.resume(waiting.runId, waiting.interrupt!.id, { stop: true });
      await remit.start(loud, { n: 9 }, { runId: `fails-pure-${groupPureSteps}` });
      calls = 1;
      await remit.start(loud, { n: 7 }, { runId: `fails-effect-${groupPureSteps}` });
    }
    expect([...seen].some((s) => s.includes(':RUN_FAILED@call'))).toBe(true);
    expect([...seen].some((s) => s.includes(':EFFECT_RELEASED@call'))).toBe(true);
    for (const spec of seen) {
      const node = spec.slice(spec.indexOf('@') + 1);
      const text = node === '' ? spec.slice(0, -1) : spec;
      const workflowOf = wf.nodes.has(node) || node === '' ? wf : loud;
      expect(() => hooksFor(text, never, { workflow: workflowOf }), `${text} (a ${kindOf(node || undefined)} node) was reached`).not.toThrow();
    }
  });

  it('accepts the specs that can fire, and `fired` says whether the fault happened', async () => {
    for (const text of ['append.after@charge', 'pure.before-return@price', 'effect.before-handler@charge', 'resume.after-claim@approve', 'append.before#2']) {
      expect(() => hooksFor(parseFaultSpec(text), never, { workflow: wf }), text).not.toThrow();
    }
    const core = await createCore('reference');
    const reached = hooksFor(parseFaultSpec('effect.before-handler@charge'), never, { workflow: wf });
    const missed = hooksFor(parseFaultSpec('append.after@price#5'), never, { workflow: wf });
    for (const hooks of [reached, missed]) await new Remit(new MemoryStore(), core, [wf], hooks).start(wf, { n: 0 });
    expect(reached.fired).toBe(true);
    expect(missed.fired).toBe(false);
  });
});

describe('hooksFor and its other arguments', () => {
  const wf = workflow({ name: 'shop', version: '1', state: z.object({ n: z.number() }) })
    .pure('price', { run: (s) => ({ n: s.n + 1 }), next: END })
    .build();

  it('refuses an onFault that is not a function, and options it cannot use, when it is called, not when the fault fires', async () => {
    // Before, hooksFor('append.before', 5) was accepted and the run failed at the fault point with
    // "onFault is not a function"; { wf: ... } (a misspelt workflow) was ignored, leaving the spec's
    // node unchecked, and options null threw a bare TypeError.
    for (const onFault of [undefined, null, 5, 'throw', {}]) {
      expect(thrown(() => hooksFor('append.before', onFault as never))).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', argument: 'hooksFor(onFault)' });
    }
    expect(thrown(() => hooksFor('append.before@nope', () => {}, { wf } as never))).toMatchObject({ code: 'REMIT_OPTION_INVALID', field: 'wf' });
    expect(thrown(() => hooksFor('append.before', () => {}, null as never))).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', argument: 'hooksFor(options)' });
    expect(thrown(() => hooksFor('append.before', () => {}, { workflow: {} } as never))).toMatchObject({ code: 'REMIT_OPTION_INVALID', field: 'workflow' });
    // The spec is still checked first: its own error, as before.
    expect(thrown(() => hooksFor('nope.point', 5 as never))).toMatchObject({ code: 'REMIT_TESTING_FAULT_SPEC_INVALID' });
    const hooks = hooksFor('append.before', () => {}, { workflow: wf });
    await new Remit(new MemoryStore(), await createCore('reference'), [wf], hooks).start(wf, { n: 0 });
    expect(hooks.fired).toBe(true);
    expect(hooksFor('append.before', () => {}).fired).toBe(false);
  });
});

describe('formatFaultSpec, faultMatches and checkSpecNode given what is not a FaultSpec', () => {
  it('refuse it as hooksFor does (FaultSpecInvalidError), and take a parsed spec as before', () => {
    // Before, formatFaultSpec({}) was "undefined#undefined", and faultMatches(null, ...) and
    // checkSpecNode(null, wf) were bare TypeErrors.
    const wf = workflow({ name: 'shop', version: '1', state: z.object({}) }).pure('price', { run: () => ({}), next: END }).build();
    const info = { runId: 'r', seq: 1, node: 'price' };
    for (const bad of [{}, null, 'append.before', { point: 'nope', occurrence: 1 }, { point: 'append.before', occurrence: 0 }, { point: 'append.before', occurrence: 1, node: 5 }]) {
      for (const call of [() => formatFaultSpec(bad as never), () => faultMatches(bad as never, 'append.before', info), () => checkSpecNode(bad as never, wf)]) {
        expect(thrown(call)).toMatchObject({ code: TestingErrorCode.FAULT_SPEC_INVALID });
      }
    }
    expect(thrown(() => formatFaultSpec({} as never)).message).toMatch(/formatFaultSpec needs a FaultSpec/);
    expect(thrown(() => checkSpecNode(parseFaultSpec('append.before'), {} as never))).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', argument: 'checkSpecNode(workflow)' });
    expect(thrown(() => faultMatches(parseFaultSpec('append.before'), 'append.before', null as never))).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', argument: 'faultMatches(info)' });
    const spec = parseFaultSpec('pure.before-return@price#2');
    expect(formatFaultSpec(spec)).toBe('pure.before-return@price#2');
    expect(faultMatches(spec, 'pure.before-return', info)).toBe(true);
    expect(faultMatches(spec, 'append.before', info)).toBe(false);
    expect(() => checkSpecNode(spec, wf)).not.toThrow();
    expect(thrown(() => checkSpecNode(parseFaultSpec('effect.after-handler@price'), wf)).message).toMatch(/reached only at effect nodes/);
  });
});

describe('formatFaultSpec and parseFaultSpec', () => {
  it('property: every spec reads back as written, whatever its node name holds ("#", "@", ":", spaces)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FAULT_POINTS),
        fc.option(fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('charge#2', 'charge ', ' charge', 'a@b', 'x:Y', '#', '1#2#3')), { nil: undefined }),
        fc.integer({ min: 1, max: 40 }),
        (point, node, occurrence) => {
          // A fork point carries no node (such a spec is refused: it could never fire).
          const spec = { point, occurrence, ...(node !== undefined && !point.startsWith('fork.') ? { node } : {}) };
          expect(parseFaultSpec(formatFaultSpec(spec))).toEqual(spec);
        },
      ),
      { numRuns: 300 },
    );
  });
});
