import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import * as zcore from 'zod/v4/core';
import { createCore, MAX_NODE_COUNT as CORE_MAX_NODE_COUNT } from '../core/index.js';
import { DefinitionInvalidError, NotParkedError, StateInvalidError } from '../errors.js';
import { createRemit, Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { diffDescriptors } from './descriptor.js';
import { END, MAX_NODE_COUNT, workflow, type StateOf, type Workflow } from './workflow.js';

const State = z.object({ n: z.number().int(), log: z.array(z.string()).default([]) });

function counter(version = '1', extra = false) {
  let b = workflow({ name: 'counter', version, state: State })
    .pure('inc', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n >= 3 ? 'ask' : 'inc') })
    .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ log: [String(v.ok)] }), next: extra ? 'tell' : END });
  if (extra) b = b.effect('tell', { run: async () => ({ sent: true }), next: END });
  return b.build();
}

describe('workflow definitions', () => {
  it('infers the state type from the schema and the resume value type from its schema', () => {
    const wf = workflow({ name: 't', version: '1', state: State })
      .interrupt('ask', {
        resume: z.object({ ok: z.boolean() }),
        apply: (s, v) => {
          expectTypeOf(s.n).toEqualTypeOf<number>();
          expectTypeOf(v).toEqualTypeOf<{ ok: boolean }>();
          return {};
        },
        next: END,
      })
      .build();
    expectTypeOf<StateOf<typeof wf>>().toEqualTypeOf<{ n: number; log: string[] }>();
    expect(wf.start).toBe('ask');
  });

  it('gives apply the handler\'s result as recorded: null where the handler returned nothing (the type stays the handler\'s, so that generic code wrapping .effect compiles)', async () => {
    const seen: unknown[] = [];
    const wf = workflow({ name: 'results', version: '1', state: State })
      .effect('nothing', {
        run: async () => {},
        apply: (_s, r) => { expectTypeOf(r).toEqualTypeOf<void>(); seen.push(r); return {}; },
        next: 'maybe',
      })
      .effect('maybe', {
        run: (): string | undefined => undefined,
        apply: (_s, r) => { expectTypeOf(r).toEqualTypeOf<string | undefined>(); seen.push(r); return {}; },
        next: 'some',
      })
      .effect('some', {
        run: () => ({ id: 'x' }),
        apply: (_s, r) => { expectTypeOf(r).toEqualTypeOf<{ id: string }>(); seen.push(r); return {}; },
        next: END,
      })
      .build();
    // A wrapper generic in the handler's result: apply's parameter is that result type.
    const withFetch = <R extends { id: string }>(run: () => Promise<R>) =>
      workflow({ name: 'generic', version: '1', state: State }).effect('fetch', { run, apply: (_s, r) => ({ log: [r.id] }), next: END }).build();
    expect(withFetch(async () => ({ id: 'y', extra: 1 })).start).toBe('fetch');
    const remit = new Remit(new MemoryStore(), await createCore('reference'), [wf]);
    expect(await remit.start(wf, { n: 0, log: [] })).toMatchObject({ status: 'completed' });
    expect(seen).toEqual([null, null, { id: 'x' }]);
    await remit.close();
  });

  it('createRemit takes a readonly list of workflows; a listed run\'s status is one runs() gives (no "empty": an exhaustive switch compiles)', async () => {
    const wf = counter();
    const workflows: readonly Workflow[] = [wf];
    const remit = await createRemit({ store: new MemoryStore(), workflows, core: 'reference' });
    await remit.start(wf, { n: 0 });
    const seen = (await remit.runs()).map((run) => {
      switch (run.status) {
        case 'running': case 'parked': case 'completed': case 'failed': case 'damaged': return run.status;
        default: return expectTypeOf(run.status).toEqualTypeOf<never>();
      }
    });
    expect(seen).toEqual(['parked']);
    expectTypeOf<NotParkedError['status']>().toEqualTypeOf<'empty' | 'running' | 'completed' | 'failed'>();
    await remit.close();
  });

  it('a run\'s result is narrowed by its status: a parked run has its interrupt, a failed one its failure, no other status either', async () => {
    const wf = counter();
    const remit = new Remit(new MemoryStore(), await createCore('reference'), [wf]);
    const parked = await remit.start(wf, { n: 0 });
    expect(parked.status).toBe('parked');
    if (parked.status === 'parked') {
      expectTypeOf(parked.interrupt).toEqualTypeOf<{ id: string; node: string; parkedSeq: number }>();
      expect(parked.interrupt).toEqual({ id: `ask@${parked.headSeq}`, node: 'ask', parkedSeq: parked.headSeq });
      expect(parked.failure).toBeUndefined();
    }
    // @ts-expect-error: not narrowed by status, the interrupt may be undefined
    expect(parked.interrupt.node).toBe('ask');
    const done = await remit.resume(parked.runId, `ask@${parked.headSeq}`, { ok: true });
    expect(done).not.toHaveProperty('interrupt');
    expect(done).not.toHaveProperty('failure');
    if (done.status === 'completed') expectTypeOf(done.interrupt).toEqualTypeOf<undefined>();
    if (done.status === 'failed') expectTypeOf(done.failure).toEqualTypeOf<{ node: string; code: string; message: string }>();
  });

  it('started by name, a run\'s input and state are unknown to the types, not any (found by a review)', async () => {
    const wf = counter();
    const remit = new Remit(new MemoryStore(), await createCore('reference'), [wf]);
    const byName = await remit.start('counter', { n: 0 });
    expectTypeOf(byName.state).toEqualTypeOf<unknown>();
    // @ts-expect-error: the state of a run started by name must be narrowed before use
    expect(byName.state.n).toBe(3);
    const byObject = await remit.start(wf, { n: 0 });
    expectTypeOf(byObject.state).toEqualTypeOf<{ n: number; log: string[] }>();
    // @ts-expect-error: a built workflow's input is checked by the types
    await expect(remit.start(wf, { n: 'zero' })).rejects.toThrow();
  });

  it('refuses bad definitions with a typed error naming the node', () => {
    const base = () => workflow({ name: 'bad', version: '1', state: State });
    expect(() => base().build()).toThrow(DefinitionInvalidError);
    expect(() => base().pure('a', { run: () => ({}), next: 'nowhere' }).build()).toThrow(/unknown node nowhere \[node a, field next\]$/);
    // A schema of another flavour: zod 3 (shipped in zod 4 as zod/v3) and zod/v4/core's classes, which have no safeParse, are named as such.
    const state = (schema: unknown) => () => workflow({ name: 'flavour', version: '1', state: schema as z.ZodObject }).pure('a', { run: () => ({}), next: END }).build();
    expect(state(z3.object({ a: z3.string() }))).toThrow(/state must be a zod schema \(zod 4, e\.g\. z\.object\(\{ \.\.\. \}\)\), got a zod 3 schema/);
    expect(state(new zcore.$ZodObject({ type: 'object', shape: { a: new zcore.$ZodString({ type: 'string' }) } }))).toThrow(/got a zod 4 core schema without a safeParse method .*make it with zod or zod\/mini/);
    // Nested inside a zod 4 schema (plain JavaScript: TypeScript refuses it), the cause is named too.
    expect(state(z.object({ a: z3.string() as never }))).toThrow(/a zod 3 schema \(from zod\/v3, or a zod 3 package\) inside this zod 4 schema is the usual cause/);
    // The string a newcomer writes for the END constant is pointed at it.
    for (const end of ['END', 'end', 'End']) {
      expect(() => base().pure('a', { run: () => ({}), next: end }).build()).toThrow(`unknown node ${end} (to end the run, route to the END constant remit exports, not the string)`);
    }
    expect(() => base().pure('a', { run: () => ({}), next: END }).pure('a', { run: () => ({}), next: END })).toThrow(/defined twice/);
    expect(() => base().pure(END, { run: () => ({}), next: END })).toThrow(/reserved/);
    expect(() => base().pure('a', { run: () => ({}), next: END }).startAt('b').build()).toThrow(/start node b/);
    expect(() => workflow({ name: 'v', version: '', state: State })).toThrow(/version/);
  });

  it('names the field of a refused workflow name (name) and of a start node that is not a string (startAt)', () => {
    // Before, the workflow name's refusal had no field, and startAt(Symbol()) was a bare TypeError
    // ("Cannot convert a Symbol value to a string") from the message that quoted it.
    const refusal = (define: () => unknown) => {
      try {
        define();
      } catch (error) {
        return { error: (error as Error).constructor.name, field: (error as DefinitionInvalidError).field, node: (error as DefinitionInvalidError).node };
      }
      return undefined;
    };
    for (const name of ['', 5, null, '\ud800'] as unknown[]) {
      expect(refusal(() => workflow({ name: name as string, version: '1', state: State }))).toEqual({ error: 'DefinitionInvalidError', field: 'name', node: undefined });
    }
    const one = () => workflow({ name: 'bad', version: '1', state: State }).pure('a', { run: () => ({}), next: END });
    for (const start of [Symbol('a'), 5, null, {}] as unknown[]) {
      expect(refusal(() => one().startAt(start as string).build())).toEqual({ error: 'DefinitionInvalidError', field: 'startAt', node: undefined });
    }
    expect(refusal(() => one().startAt('b').build())).toEqual({ error: 'DefinitionInvalidError', field: undefined, node: 'b' });
    expect(refusal(() => workflow({ name: 'bad', version: '1', state: State }).pure('', { run: () => ({}), next: END }))).toEqual({ error: 'DefinitionInvalidError', field: undefined, node: '' });
  });

  it('has a stable fingerprint that changes with the definition', () => {
    expect(counter().fingerprintHex).toBe(counter().fingerprintHex);
    expect(counter('2').fingerprintHex).not.toBe(counter().fingerprintHex);
    expect(counter('1', true).fingerprintHex).not.toBe(counter().fingerprintHex);
  });

  it('names the differences between two definitions', () => {
    const diff = diffDescriptors(counter().descriptor, counter('2', true).descriptor);
    expect(diff).toContain('version changed from 1 to 2');
    expect(diff).toContain('node tell added');
    expect(diff).toContain('node ask route changed from END to tell');
    const otherState = workflow({ name: 'counter', version: '1', state: State.extend({ extra: z.string() }) })
      .pure('inc', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n >= 3 ? 'ask' : 'inc') })
      .interrupt('ask', { resume: z.object({ ok: z.string() }), apply: () => ({}), next: END })
      .build();
    const diff2 = diffDescriptors(counter().descriptor, otherState.descriptor);
    expect(diff2).toContain('state schema: field extra added');
    expect(diff2).toContain('resume schema of ask: field ok changed');
  });
});

const core = await createCore('reference');

describe('what build() refuses, and what a built workflow refuses when it validates', () => {
  const one = <T extends z.ZodType>(state: T, name = 'w') => workflow({ name, version: '1', state }).pure('a', { run: () => ({}), next: END });
  const definitionError = (f: () => unknown) => {
    try {
      f();
    } catch (error) {
      expect(error).toBeInstanceOf(DefinitionInvalidError);
      return error as DefinitionInvalidError;
    }
    throw new Error('expected DefinitionInvalidError');
  };

  it('refuses a state or resume schema that is not a zod 4 schema (field state / resume)', () => {
    for (const state of [{}, null, undefined, 'z.object()', { safeParse: () => ({ success: true, data: {} }) }, { _def: {}, safeParse: () => ({}) }]) {
      const error = definitionError(() => workflow({ name: 'w', version: '1', state: state as unknown as z.ZodType }));
      expect(error).toMatchObject({ code: 'REMIT_DEFINITION_INVALID', field: 'state', workflow: 'w' });
    }
    const base = () => workflow({ name: 'w', version: '1', state: State });
    const error = definitionError(() => base().interrupt('ask', { resume: {} as unknown as z.ZodType, apply: () => ({}), next: END }));
    expect(error).toMatchObject({ field: 'resume', node: 'ask' });
    expect(definitionError(() => base().interrupt('ask', { resume: z.boolean(), apply: 5 as never, next: END }))).toMatchObject({ field: 'apply', node: 'ask' });
    expect(definitionError(() => base().pure('p', undefined as never))).toMatchObject({ node: 'p' });
    expect(definitionError(() => workflow(null as never))).toMatchObject({ code: 'REMIT_DEFINITION_INVALID' });
  });

  it('accepts the object schemas people write: refined, transformed, intersections, discriminated unions, preprocessed', async () => {
    const A = z.object({ kind: z.literal('a'), n: z.number() });
    const B = z.object({ kind: z.literal('b'), s: z.string() });
    const schemas: Array<[string, z.ZodType, unknown]> = [
      ['refine', z.object({ n: z.number() }).refine((s) => s.n >= 0), { n: 1 }],
      ['transform', z.object({ n: z.number() }).transform((s) => ({ n: Math.abs(s.n) })), { n: 1 }],
      ['intersection', z.intersection(z.object({ n: z.number() }), z.object({ m: z.number().optional() })), { n: 1 }],
      ['discriminatedUnion', z.discriminatedUnion('kind', [A, B]), { kind: 'b', s: 'x' }],
      ['preprocess', z.preprocess((v) => (typeof v === 'string' ? { s: v } : v), z.object({ s: z.string() })), 'hello'],
      ['record', z.record(z.string(), z.number()), { x: 1 }],
    ];
    for (const [label, schema, input] of schemas) {
      const wf = one(schema, `ok-${label}`).build();
      const remit = new Remit(new MemoryStore(), core, [wf]);
      const result = await remit.start(wf, input as never, { runId: label });
      expect(result.status, label).toBe('completed');
    }
  });

  it('refuses a state that is not a JSON object at start with StateInvalidError, writing nothing', async () => {
    for (const [label, schema, input] of [
      ['string', z.string(), 'hello'],
      ['array', z.array(z.number()), [1]],
      ['null', z.null(), null],
      ['number', z.number(), 7],
      ['a transform to a string', z.object({ s: z.string() }).transform((v) => v.s), { s: 'x' }],
    ] as Array<[string, z.ZodType, unknown]>) {
      const store = new MemoryStore();
      const wf = one(schema).build();
      const error = await new Remit(store, core, [wf]).start(wf, input as never, { runId: 'r' }).catch((e: unknown) => e);
      expect(error, label).toBeInstanceOf(StateInvalidError);
      expect(error, label).toMatchObject({ code: 'REMIT_STATE_INVALID', runId: 'r', seq: 0, field: '(root)' });
      expect((error as Error).message, label).toMatch(/must be a JSON object/);
      expect(await store.listRuns(), label).toEqual([]);
    }
  });

  it('refuses a node result whose state is not an object as StateInvalidError, recording no step', async () => {
    // The schema turns the state into a string once n is positive: the state after the node.
    const Odd = z.object({ n: z.number() }).transform((v) => (v.n > 0 ? 'positive' : v));
    const wf = workflow({ name: 'w', version: '1', state: Odd }).pure('a', { run: () => ({ n: 1 }), next: END }).build();
    expect(wf.stateSchema.safeParse({ n: 1 }).success).toBe(false);
    expect(wf.stateSchema.safeParse({ n: 0 }).success).toBe(true);
    const store = new MemoryStore();
    const error = await new Remit(store, core, [wf]).start(wf, { n: 0 }, { runId: 'r' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateInvalidError);
    expect(error).toMatchObject({ runId: 'r', node: 'a', field: '(root)' });
    expect((await store.readRecords('r')).length).toBe(1); // RUN_STARTED only
  });

  it('a function declared async in a schema is refused at build(), naming the workflow and the schema (field state, or the node and resume)', () => {
    const refusedAt = (build: () => unknown) => {
      const error = definitionError(build);
      expect((error as Error).message).toMatch(/is asynchronous \(an async .*\): REMIT validates values synchronously/);
      return error;
    };
    // Anywhere a value can reach: the root, an optional field, a union's variant, an array's items, a lazy schema's target.
    const Tree: z.ZodType<{ kids: unknown[] }> = z.lazy(() => z.object({ kids: z.array(Tree).refine(async () => true) }));
    const asyncStates = [
      z.object({ n: z.number() }).refine(async () => true),
      z.object({ n: z.number(), x: z.string().refine(async () => true).optional() }),
      z.object({ n: z.number(), u: z.union([z.string(), z.number().refine(async () => true)]).optional() }),
      z.object({ n: z.number(), list: z.array(z.string().transform(async (v) => v)).optional() }),
      z.object({ n: z.number(), pre: z.preprocess(async (v: unknown) => v, z.string()).optional() }),
      z.object({ n: z.number(), c: z.custom<string>(async () => true).optional() }),
      z.object({ n: z.number(), tree: Tree.optional() }),
    ];
    for (const [i, state] of asyncStates.entries()) {
      expect(refusedAt(() => one(state, `async-state-${i}`).build())).toMatchObject({ workflow: `async-state-${i}`, field: 'state' });
    }
    const resume = z.object({ ok: z.boolean() }).transform(async (v) => v);
    const asking = workflow({ name: 'async-resume', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .interrupt('ask', { resume, apply: (_s, v) => ({ ok: (v as { ok: boolean }).ok }), next: END });
    expect(refusedAt(() => asking.build())).toMatchObject({ workflow: 'async-resume', node: 'ask', field: 'resume' });
    // Synchronous functions, recursive schemas and zod's own checks are not refused.
    expect(() => one(z.object({ n: z.number(), tree: z.lazy(() => z.object({ kids: z.array(z.string()) })).optional() }).refine(() => true), 'sync').build()).not.toThrow();
  });

  it('a plain function returning a Promise in a schema is a DefinitionInvalidError where it is met, before anything is written', async () => {
    const promising = () => Promise.resolve(true);
    const asyncState = z.object({ n: z.number() }).refine(promising);
    const store = new MemoryStore();
    const wf = one(asyncState, 'async-state').build();
    const error = await new Remit(store, core, [wf]).start(wf, { n: 1 }, { runId: 'r' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DefinitionInvalidError);
    // It names the run of the call, as the call's other errors do (the schema is found asynchronous only when it validates).
    expect(error).toMatchObject({ code: 'REMIT_DEFINITION_INVALID', workflow: 'async-state', field: 'state', runId: 'r', seq: 0 });
    expect((error as Error).message).toMatch(/asynchronous \(a refine or transform that returned a Promise\).*\[run r, seq 0, field state\]$/);
    expect(await store.listRuns()).toEqual([]);

    // A state schema asynchronous only for some values: found at the step that produced one, naming the run and that step's seq.
    const later = workflow({ name: 'async-later', version: '1', state: z.object({ n: z.number(), x: z.string().refine(promising).optional() }) })
      .pure('a', { run: () => ({ x: 'now' }), next: END })
      .build();
    const atStep = await new Remit(store, core, [later]).start(later, { n: 1 }, { runId: 'l' }).catch((e: unknown) => e);
    expect(atStep).toBeInstanceOf(DefinitionInvalidError);
    expect(atStep).toMatchObject({ workflow: 'async-later', field: 'state', runId: 'l', seq: 1 });

    // A resume schema whose transform returns a Promise: refused before the claim; the run stays parked on the same interrupt.
    const asking = workflow({ name: 'async-resume', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .interrupt('ask', { resume: z.object({ ok: z.boolean() }).transform((v) => Promise.resolve(v)), apply: (_s, v) => ({ ok: (v as unknown as { ok: boolean }).ok }), next: END })
      .build();
    const remit = new Remit(store, core, [asking]);
    const parked = await remit.start(asking, {}, { runId: 'p' });
    expect(parked.status).toBe('parked');
    const before = await store.readLog('p');
    const refused = await remit.resume('p', parked.interrupt!.id, { ok: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DefinitionInvalidError);
    expect(refused).toMatchObject({ workflow: 'async-resume', node: 'ask', field: 'resume', runId: 'p' });
    expect(await store.readLog('p')).toEqual(before);
    expect((await remit.status('p')).interrupt?.id).toBe(parked.interrupt!.id);
  });

  it('refuses a version that is not well-formed Unicode (field version)', () => {
    for (const version of ['2024\udc00', '\ud800', 'v\ud83d']) {
      expect(definitionError(() => workflow({ name: 'w', version, state: State }))).toMatchObject({ field: 'version' });
    }
    expect(() => workflow({ name: 'w', version: '2024-🦀', state: State })).not.toThrow();
  });

  it(`builds ${MAX_NODE_COUNT} nodes and refuses ${MAX_NODE_COUNT + 1} (the log's node table)`, () => {
    expect(MAX_NODE_COUNT).toBe(CORE_MAX_NODE_COUNT);
    const chain = (count: number) => {
      const b = workflow({ name: 'big', version: '1', state: State });
      const run = () => ({});
      for (let i = 0; i < count; i++) b.pure(`n${i}`, { run, next: i + 1 < count ? `n${i + 1}` : END });
      return b;
    };
    const started = Date.now();
    expect(chain(MAX_NODE_COUNT).build().nodeOrder.length).toBe(MAX_NODE_COUNT);
    expect(definitionError(() => chain(MAX_NODE_COUNT + 1).build())).toMatchObject({ workflow: 'big', field: 'nodes' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
