/**
 * Node code and callers that misbehave in ways JavaScript allows and TypeScript would refuse:
 * throwing values that cannot be turned into text, fail() with a code that is not a string,
 * values whose getters throw while their schema validates them, definitions and option lists
 * with holes. Each must give the library's typed error naming the run, and leave the run able to
 * go on: an effect's attempt released (another instance claims the next one at once), an
 * interrupt not consumed, nothing written for a refused value. Also recoverAll when the store
 * cannot read one run: the others are still recovered and reported.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { RecordKind } from './core/types.js';
import { logFacts } from '../test-support/contract-checks.js';
import { DefinitionInvalidError, HandlerThrewError, OptionInvalidError, RemitError, RouteInvalidError, StoreError, fail } from './errors.js';
import { createRemit, Remit } from './remit.js';
import { MemoryBacking, MemoryStore } from './store/memory.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const EFFECT_RELEASED = RecordKind.EFFECT_RELEASED;

/** Values node code can throw that String() or `.message` cannot turn into text (or only just). */
function hostileThrown(): fc.Arbitrary<() => unknown> {
  return fc.constantFrom<() => unknown>(
    () => Object.create(null),
    () => ({ toString: () => { throw new Error('toString threw'); } }),
    () => { const e = new Error('x'); Object.defineProperty(e, 'message', { get: () => { throw new Error('message getter threw'); } }); return e; },
    () => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy; },
    () => Symbol('thrown'),
    () => 10n,
    () => null,
    () => undefined,
    () => 'a plain string',
    () => new Error('an ordinary error'),
  );
}

const State = z.object({ n: z.number() });

describe('a thrown value that cannot be printed', () => {
  it('from an effect: HandlerThrewError naming the run, EFFECT_RELEASED recorded, another instance claims the next attempt at once', async () => {
    await fc.assert(fc.asyncProperty(hostileThrown(), async (makeThrown) => {
      let throwing = true;
      const wf = workflow({ name: 'fx', version: '1', state: State })
        .effect('charge', { run: () => { if (throwing) throw makeThrown(); return { ok: true }; }, next: END })
        .build();
      const backing = new MemoryBacking();
      const a = new Remit(new MemoryStore({ backing }), core, [wf], undefined, {}, { instanceId: 'a' });
      const error = await a.start(wf, { n: 1 }, { runId: 'r1' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HandlerThrewError);
      expect(error).toMatchObject({ runId: 'r1', node: 'charge' });
      const kinds = logFacts('r1', await a.store.readLog('r1')).records.map((r) => r.kind);
      expect(kinds[kinds.length - 1]).toBe(EFFECT_RELEASED);
      throwing = false;
      const b = new Remit(new MemoryStore({ backing }), core, [wf], undefined, {}, { instanceId: 'b' });
      expect((await b.continueRun('r1')).status).toBe('completed');
    }), { numRuns: 30 });
  });

  it('from a pure node or an apply: HandlerThrewError, nothing recorded for the step, and the run completes once the code stops throwing', async () => {
    await fc.assert(fc.asyncProperty(hostileThrown(), fc.constantFrom('pure', 'apply'), async (makeThrown, where) => {
      let throwing = true;
      const wf = workflow({ name: 'p', version: '1', state: State })
        .pure('step', { run: (s) => { if (throwing && where === 'pure') throw makeThrown(); return { n: s.n + 1 }; }, next: 'send' })
        .effect('send', { run: () => 'sent', apply: () => { if (throwing && where === 'apply') throw makeThrown(); return {}; }, next: END })
        .build();
      const remit = new Remit(new MemoryStore(), core, [wf]);
      const error = await remit.start(wf, { n: 1 }, { runId: 'r2' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HandlerThrewError);
      expect((error as HandlerThrewError).message).toMatch(/^node code threw: /);
      throwing = false;
      expect(await remit.continueRun('r2')).toMatchObject({ status: 'completed', state: { n: 2 } });
    }), { numRuns: 30 });
  });
});

describe('a thrown object that is not an Error', () => {
  it('is described by its string message (a client rejecting with { code, message }), in the error and in EFFECT_RELEASED', async () => {
    let throwing = true;
    const wf = workflow({ name: 'obj', version: '1', state: State })
      .effect('charge', { run: () => { if (throwing) throw { code: 'ECONNRESET', message: 'socket hang up' }; return 'ok'; }, next: END })
      .build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const error = await remit.start(wf, { n: 1 }, { runId: 'r' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HandlerThrewError);
    expect(error).toMatchObject({ runId: 'r', seq: 3, node: 'charge' });
    expect((error as HandlerThrewError).message).toMatch(/^node code threw: socket hang up; EFFECT_RELEASED was recorded/);
    expect((error as HandlerThrewError).cause).toEqual({ code: 'ECONNRESET', message: 'socket hang up' });
    const released = logFacts('r', await remit.store.readLog('r')).records.find((r) => r.kind === EFFECT_RELEASED) as { reason: Uint8Array };
    expect(JSON.parse(new TextDecoder().decode(released.reason))).toEqual({ error: 'socket hang up' });
    throwing = false;
    expect((await remit.continueRun('r')).status).toBe('completed');
  });
});

describe('a hook that throws at the append of EFFECT_RELEASED', () => {
  it('propagates unchanged (an injected fault), not as the handler\'s HandlerThrewError', async () => {
    const wf = workflow({ name: 'h', version: '1', state: State })
      .effect('charge', { run: () => { throw new Error('handler failed'); }, next: END })
      .build();
    const injected = new Error('injected at EFFECT_RELEASED');
    const hooks = { at: (point: string, info: { kinds?: string[] }) => { if (point === 'append.before' && info.kinds?.includes('EFFECT_RELEASED')) throw injected; } };
    const remit = new Remit(new MemoryStore(), core, [wf], hooks);
    await expect(remit.start(wf, { n: 1 }, { runId: 'h1' })).rejects.toBe(injected);
  });
});

describe('fail() with a code or message that is not text', () => {
  const badCodes = fc.oneof(fc.integer(), fc.constant(undefined), fc.constant(null), fc.constant(''), fc.boolean(), fc.constant({}));

  it('in an effect: HandlerThrewError saying what fail() needs, the attempt released, and a later fail() with a string code fails the run', async () => {
    await fc.assert(fc.asyncProperty(badCodes, async (code) => {
      let failWith: unknown = code;
      const wf = workflow({ name: 'f', version: '1', state: State })
        .effect('charge', { run: () => fail(failWith as string, 'payment required'), next: END })
        .build();
      const remit = new Remit(new MemoryStore(), core, [wf]);
      const error = await remit.start(wf, { n: 1 }, { runId: 'r3' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HandlerThrewError);
      expect((error as Error).message).toMatch(/fail\(\): the failure code must be a non-empty string \(got /);
      expect(error).toMatchObject({ runId: 'r3', node: 'charge' });
      const kinds = logFacts('r3', await remit.store.readLog('r3')).records.map((r) => r.kind);
      expect(kinds[kinds.length - 1]).toBe(EFFECT_RELEASED);
      failWith = 'PAYMENT_REQUIRED';
      expect(await remit.continueRun('r3')).toMatchObject({ status: 'failed', failure: { node: 'charge', code: 'PAYMENT_REQUIRED', message: 'payment required' } });
    }), { numRuns: 25 });
  });

  it('in an interrupt\'s apply: refused before the claim, so the interrupt is still parked and a good value resumes it', async () => {
    const wf = workflow({ name: 'i', version: '1', state: State })
      .interrupt('approve', { resume: z.object({ ok: z.boolean(), code: z.unknown() }), apply: (_s, v) => (v.ok ? {} : fail(v.code as string, 'rejected')), next: END })
      .build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const parked = await remit.start(wf, { n: 1 }, { runId: 'r4' });
    const id = parked.interrupt!.id;
    await expect(remit.resume('r4', id, { ok: false, code: 403 })).rejects.toThrow(/fail\(\): the failure code must be a non-empty string \(got the number 403\)/);
    expect((await remit.status('r4')).status).toBe('parked');
    expect(await remit.resume('r4', id, { ok: false, code: 'FORBIDDEN' })).toMatchObject({ status: 'failed', failure: { code: 'FORBIDDEN', message: 'rejected' } });
  });

  it('a message that is not a string is refused too; an empty message is allowed', () => {
    expect(() => fail('CODE', 5 as unknown as string)).toThrow(/fail\(\): the failure message must be a string \(got the number 5\)/);
    expect(() => fail('CODE', '')).toThrow(expect.objectContaining({ failureCode: 'CODE', message: '' }));
  });
});

describe('a value whose getter throws while its schema validates it', () => {
  const throwingGetter = () => Object.defineProperty({}, 'n', { enumerable: true, get: () => { throw new Error('getter threw'); } });

  it('as start input: a typed error, no run created', async () => {
    const wf = workflow({ name: 'g', version: '1', state: State }).pure('p', { run: () => ({}), next: END }).build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const error = await remit.start(wf, throwingGetter() as { n: number }, { runId: 'r5' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemitError);
    expect((error as Error).message).toMatch(/the schema threw while validating the value: getter threw/);
    expect(await remit.store.readLog('r5')).toHaveLength(0);
  });

  it('as a resume value: ResumeValueInvalidError, the interrupt not consumed', async () => {
    const wf = workflow({ name: 'g2', version: '1', state: State })
      .interrupt('ask', { resume: z.object({ n: z.number() }), apply: (_s, v) => ({ n: v.n }), next: END })
      .build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const parked = await remit.start(wf, { n: 1 }, { runId: 'r6' });
    await expect(remit.resume('r6', parked.interrupt!.id, throwingGetter())).rejects.toMatchObject({ code: 'REMIT_RESUME_VALUE_INVALID', runId: 'r6' });
    expect(await remit.resume('r6', parked.interrupt!.id, { n: 7 })).toMatchObject({ status: 'completed', state: { n: 7 } });
  });
});

describe('definitions and registration', () => {
  const build = (tag: string[]) => workflow({ name: 'tenant', version: '1', state: State })
    .effect('e', { run: () => (tag.push('called'), 1), next: END })
    .build();

  it('a sparse workflows list is refused naming the hole', async () => {
    // eslint-disable-next-line no-sparse-arrays
    const workflows = [, build([])] as unknown as ReturnType<typeof build>[];
    await expect(createRemit({ store: new MemoryStore(), workflows, core: 'reference' })).rejects.toThrow(OptionInvalidError);
    await expect(createRemit({ store: new MemoryStore(), workflows, core: 'reference' })).rejects.toThrow(/entry 0 is not a built workflow/);
  });

  it('another object of the same definition replaces the registered one for every run of the name (a run is bound to its definition); another definition is refused', async () => {
    const a: string[] = [];
    const b: string[] = [];
    const remit = new Remit(new MemoryStore(), core, [build(a)]);
    await remit.start(build(b), { n: 1 });
    await remit.start('tenant', { n: 1 });
    expect({ a, b }).toEqual({ a: [], b: ['called', 'called'] });
    const other = workflow({ name: 'tenant', version: '2', state: State }).pure('p', { run: () => ({}), next: END }).build();
    await expect(remit.start(other, { n: 1 })).rejects.toThrow(/start\(\) was given a definition other than the one registered under this name, and did not register it \(version changed from 1 to 2; /);
    expect(() => remit.register(undefined as never)).toThrow(/a built workflow/);
  });

  it('createRemit\'s workflows holds one definition per name: two entries of one name that are not one object are refused, naming both (the same object twice is accepted)', async () => {
    const first = build([]);
    const other = workflow({ name: 'tenant', version: '2', state: State }).pure('p', { run: () => ({}), next: END }).build();
    const refusal = async (workflows: ReturnType<typeof build>[]) => {
      const error = await createRemit({ store: new MemoryStore(), workflows, core: 'reference' }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(DefinitionInvalidError);
      expect(error).toMatchObject({ workflow: 'tenant', field: 'workflows' });
      return (error as Error).message;
    };
    expect(await refusal([first, build([]), other])).toMatch(/workflows\[0\] and workflows\[1\] are two builds of one definition \(the same fingerprint/);
    expect(await refusal([first, other])).toMatch(/workflows\[0\] and workflows\[1\] are two different definitions \(version changed from 1 to 2; .*\); register one definition per name/);
    const remit = await createRemit({ store: new MemoryStore(), workflows: [first, first], core: 'reference' });
    expect(remit.workflowNames()).toEqual(['tenant']);
    await remit.close();
  });

  it('an effect\'s apply that is not a function, and a description that is not a string, are refused when the workflow is defined', () => {
    const builder = workflow({ name: 'd', version: '1', state: State });
    expect(() => builder.effect('e', { run: () => 1, apply: 'r' as never, next: END })).toThrow(/apply of effect e must be a function \(or left out\), got string/);
    expect(() => workflow({ name: 'd', version: '1', state: State, description: 5 as never })).toThrow(/description must be a string, got number/);
    // A refused node name is the error's node.
    expect(() => builder.pure('x'.repeat(300), { run: () => ({}), next: END })).toThrow(expect.objectContaining({ code: 'REMIT_DEFINITION_INVALID', node: 'x'.repeat(300) }));
  });

  it('a route that returns a Promise is named as one', async () => {
    const wf = workflow({ name: 'r', version: '1', state: State })
      .pure('p', { run: () => ({}), next: (async () => END) as never })
      .build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const error = await remit.start(wf, { n: 1 }, { runId: 'r7' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RouteInvalidError);
    expect((error as Error).message).toMatch(/the route returned a Promise \(a route returns a node name or END synchronously\)/);
  });

  it('an apply that returns a Promise, or another thenable, is named as what it returned: StateInvalidError, the interrupt still parked', async () => {
    const thenable = { then: (resolve: (v: unknown) => void) => resolve({ n: 2 }) };
    for (const [returned, named] of [[Promise.resolve({ n: 2 }), 'a Promise'], [thenable, 'a thenable (an object with a then method)']] as const) {
      const wf = workflow({ name: 'a', version: '1', state: State })
        .interrupt('ask', { resume: z.number(), apply: () => returned as never, next: END })
        .build();
      const remit = new Remit(new MemoryStore(), core, [wf]);
      const parked = await remit.start(wf, { n: 1 }, { runId: 'r8' });
      const error = await remit.resume('r8', parked.status === 'parked' ? parked.interrupt.id : '', 1).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'REMIT_STATE_INVALID', runId: 'r8' });
      expect((error as Error).message).toContain(`apply returned ${named}: an effect's or interrupt's apply must return the changed fields synchronously`);
      expect((await remit.status('r8')).status).toBe('parked');
    }
  });

  it('a route function returning the string END is pointed at the END constant', async () => {
    const wf = workflow({ name: 'r', version: '1', state: State }).pure('p', { run: () => ({}), next: (() => 'END') as never }).build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const error = await remit.start(wf, { n: 1 }, { runId: 'r-end' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RouteInvalidError);
    expect((error as Error).message).toMatch(/the route returned "END", which is neither a node of the workflow nor END \(to end the run, route to the END constant remit exports, not the string\)/);
  });

  it('a route whose Promise rejects is refused, and its rejection is handled (an unhandled one would end a service)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const rejecting = (async () => { throw new Error('config lookup failed'); }) as never;
      const pure = workflow({ name: 'r', version: '1', state: State }).pure('p', { run: () => ({}), next: rejecting }).build();
      const asking = workflow({ name: 'ask', version: '1', state: State }).interrupt('i', { resume: z.boolean(), apply: () => ({}), next: rejecting }).build();
      const remit = new Remit(new MemoryStore(), core, [pure, asking]);
      await expect(remit.start(pure, { n: 1 }, { runId: 'r8' })).rejects.toThrow(RouteInvalidError);
      const parked = await remit.start(asking, { n: 1 }, { runId: 'r9' });
      // The resume's check runs the route before the claim: refused, the interrupt still parked.
      await expect(remit.resume('r9', parked.interrupt!.id, true)).rejects.toThrow(RouteInvalidError);
      expect((await remit.status('r9')).status).toBe('parked');
      // Let the rejected Promises settle: Node reports an unhandled one after the microtasks run.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('schemas and node code that make a Promise which rejects (an unhandled rejection would end a service)', () => {
  const rejecting = () => Promise.reject(new Error('lookup failed'));

  async function unhandledDuring(work: () => Promise<void>): Promise<unknown[]> {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await work();
      // Node reports an unhandled rejection after the microtasks run.
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    return unhandled;
  }

  it('an async default, prefault, catch or overwrite, or a default or catch whose plain function rejects, is refused at build(), its rejection handled', async () => {
    const resumes: Record<string, () => z.ZodType> = {
      'an async default': () => z.object({ a: z.string().default((async () => { throw new Error('x'); }) as never) }),
      'an async prefault': () => z.object({ a: z.string().prefault((async () => { throw new Error('x'); }) as never) }),
      'an async catch': () => z.object({ a: z.string().catch((async () => { throw new Error('x'); }) as never) }),
      'an async overwrite': () => z.object({ a: z.string().overwrite((async () => { throw new Error('x'); }) as never) }),
      'a plain default': () => z.object({ a: z.string().default(rejecting as never) }),
      'a plain catch': () => z.object({ a: z.string().catch(rejecting as never) }),
    };
    for (const [what, resume] of Object.entries(resumes)) {
      const unhandled = await unhandledDuring(async () => {
        const build = () => workflow({ name: 'a', version: '1', state: State }).interrupt('ask', { resume: resume(), apply: () => ({}), next: END }).build();
        expect(build, what).toThrow(DefinitionInvalidError);
        expect(build, what).toThrow(/the resume schema of ask is asynchronous/);
        const stateBuild = () => workflow({ name: 'a', version: '1', state: State.extend({ b: resume() }) }).pure('p', { run: () => ({}), next: END }).build();
        expect(stateBuild, what).toThrow(/the state schema is asynchronous/);
      });
      expect(unhandled, what).toEqual([]);
    }
  });

  it('a rejecting Promise left in a field (no await) of a node\'s result, start()\'s input or a resume value: refused or dropped by the schema, its rejection is handled (from a review of own changes: only a field typed z.any() reached the check)', async () => {
    const Typed = z.object({ total: z.number().optional() });
    const unhandled = await unhandledDuring(async () => {
      const typed = workflow({ name: 'typed', version: '1', state: Typed }).pure('sum', { run: () => ({ total: rejecting() as never }), next: END }).build();
      const stripped = workflow({ name: 'stripped', version: '1', state: Typed.strip() }).pure('sum', { run: () => ({ other: rejecting() }) as never, next: END }).build();
      const asking = workflow({ name: 'asking', version: '1', state: Typed })
        .interrupt('ask', { resume: z.object({ n: z.number() }), apply: (_s, v) => ({ total: v.n }), next: END })
        .build();
      const remit = new Remit(new MemoryStore(), core, [typed, stripped, asking]);
      await expect(remit.start(typed, {})).rejects.toThrow(/total/);
      expect((await remit.start(stripped, {})).status).toBe('completed');
      await expect(remit.start(typed, { total: rejecting() as never })).rejects.toThrow(/total/);
      await expect(remit.start(typed, { nested: { deep: rejecting() } } as never)).rejects.toThrow(/nested/);
      const parked = await remit.start(asking, {}, { runId: 'asking' });
      for (const value of [{ n: rejecting() }, { n: 1, extra: { deep: rejecting() } }, rejecting()]) {
        await expect(remit.resume('asking', parked.interrupt!.id, value)).rejects.toMatchObject({ code: 'REMIT_RESUME_VALUE_INVALID' });
      }
      await expect(remit.resume('asking', 'ask@99', { n: rejecting() })).rejects.toMatchObject({ code: 'REMIT_UNKNOWN_INTERRUPT' });
      expect((await remit.status('asking')).status).toBe('parked');
    });
    expect(unhandled).toEqual([]);
  });

  it('a rejecting Promise in start()\'s input or a resume value whose call is refused before it is read (an unknown workflow, a bad run id, a closed instance): its rejection is handled', async () => {
    const unhandled = await unhandledDuring(async () => {
      const asking = workflow({ name: 'asking2', version: '1', state: z.object({ total: z.number().optional() }) })
        .interrupt('ask', { resume: z.object({ n: z.number() }), apply: (_s, v) => ({ total: v.n }), next: END })
        .build();
      const remit = new Remit(new MemoryStore(), core, [asking]);
      const parked = await remit.start(asking, {}, { runId: 'p' });
      await expect(remit.start('nope', { v: rejecting() })).rejects.toMatchObject({ code: 'REMIT_UNKNOWN_WORKFLOW' });
      await expect(remit.start(asking, { v: rejecting() } as never, { runId: '' })).rejects.toMatchObject({ code: 'REMIT_RUN_ID_INVALID' });
      await expect(remit.resume('p', 'ask@9', { a: { b: rejecting() } })).rejects.toMatchObject({ code: 'REMIT_UNKNOWN_INTERRUPT' });
      await remit.close();
      await expect(remit.start(asking, { v: rejecting() } as never)).rejects.toMatchObject({ storeCode: 'CLOSED' });
      await expect(remit.resume('p', parked.interrupt!.id, { n: rejecting() })).rejects.toMatchObject({ storeCode: 'CLOSED' });
    });
    expect(unhandled).toEqual([]);
  });

  it('a plain overwrite in a resume schema, or an apply, that puts a rejecting Promise in a value: ValueUnfaithfulError, nothing written, the rejection handled', async () => {
    const unhandled = await unhandledDuring(async () => {
      const overwriting = workflow({ name: 'o', version: '1', state: State })
        .interrupt('ask', { resume: z.object({ a: z.string().overwrite(rejecting as never) }), apply: () => ({}), next: END })
        .build();
      const applying = workflow({ name: 'p', version: '1', state: State.extend({ later: z.unknown().optional() }) })
        .interrupt('ask', { resume: z.boolean(), apply: () => ({ later: rejecting() }), next: END })
        .build();
      const remit = new Remit(new MemoryStore(), core, [overwriting, applying]);
      for (const [wf, value] of [[overwriting, { a: 'x' }], [applying, true]] as const) {
        const parked = await remit.start(wf, { n: 1 }, { runId: `r-${wf.name}` });
        const error = await remit.resume(`r-${wf.name}`, parked.interrupt!.id, value).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RemitError);
        expect((error as RemitError).code).toBe('REMIT_VALUE_UNFAITHFUL');
        expect((error as Error).message).toMatch(/a Promise \(an async function/);
        expect((await remit.status(`r-${wf.name}`)).status).toBe('parked');
      }
    });
    expect(unhandled).toEqual([]);
  });
});

describe('recoverAll when the store cannot read one run', () => {
  it('reports that run with the store\'s error and still recovers the others', async () => {
    let throwing = true;
    const wf = workflow({ name: 'rec', version: '1', state: State })
      .pure('p', { run: (s) => { if (throwing) throw new Error('crash'); return { n: s.n + 1 }; }, next: END })
      .build();
    const backing = new MemoryBacking();
    const first = new Remit(new MemoryStore({ backing }), core, [wf]);
    for (const runId of ['a', 'b', 'c']) await expect(first.start(wf, { n: 0 }, { runId })).rejects.toThrow(HandlerThrewError);
    throwing = false;
    class UnreadableRunStore extends MemoryStore {
      override async readRecords(runId: string, fromSeq = 0) {
        if (runId === 'b') throw new StoreError(this.description, 'readRecords', 'SQLITE_CORRUPT', { runId });
        return super.readRecords(runId, fromSeq);
      }
    }
    const outcomes = await new Remit(new UnreadableRunStore({ backing }), core, [wf]).recoverAll();
    expect(outcomes.map((o) => o.runId).sort()).toEqual(['a', 'b', 'c']);
    expect(outcomes.find((o) => o.runId === 'b')).toMatchObject({ error: expect.objectContaining({ storeCode: 'SQLITE_CORRUPT' }) });
    for (const runId of ['a', 'c']) expect(outcomes.find((o) => o.runId === runId)).toMatchObject({ result: { status: 'completed' } });
  });
});

describe('a resume whose completion is refused before the claim', () => {
  it('says the interrupt is still parked, whatever refused it (the state schema, the route), and a value that passes resumes it', async () => {
    const Offer = z.object({ n: z.number(), accepted: z.boolean().optional() }).refine((s) => s.accepted !== false, 'a refused offer is not kept');
    const wf = workflow({ name: 'offer', version: '1', state: Offer })
      .interrupt('decide', { resume: z.object({ accept: z.boolean(), to: z.string().optional() }), apply: (_s, v) => ({ accepted: v.accept }), next: ((s: { n: number }) => (s.n > 0 ? 'nowhere' : END)) as never })
      .build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const parked = await remit.start(wf, { n: 0 }, { runId: 'o1' });
    const refusedByState = await remit.resume('o1', parked.interrupt!.id, { accept: false }).catch((e: unknown) => e);
    expect(refusedByState).toMatchObject({ code: 'REMIT_STATE_INVALID', runId: 'o1', node: 'decide' });
    expect((refusedByState as Error).message).toMatch(/a refused offer is not kept; nothing was written: the value was not claimed and the interrupt is still parked \(a value that passes resumes it\) \[run o1/);
    // A value that would not read back (a Date where the schema takes anything) says so too (from a review of an approval inbox).
    const anyMeta = workflow({ name: 'meta', version: '1', state: z.object({ n: z.number() }) })
      .interrupt('decide', { resume: z.object({ meta: z.any() }), apply: () => ({}), next: END })
      .build();
    const metaRemit = new Remit(new MemoryStore(), core, [anyMeta]);
    const metaRun = await metaRemit.start(anyMeta, { n: 0 }, { runId: 'm1' });
    const unfaithful = await metaRemit.resume('m1', metaRun.interrupt!.id, { meta: new Date(0) }).catch((e: unknown) => e);
    expect(unfaithful).toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', field: 'meta' });
    expect((unfaithful as Error).message).toMatch(/the interrupt is still parked/);
    expect((await metaRemit.status('m1')).status).toBe('parked');
    const other = await remit.start(wf, { n: 1 }, { runId: 'o2' });
    const refusedByRoute = await remit.resume('o2', other.interrupt!.id, { accept: true }).catch((e: unknown) => e);
    expect(refusedByRoute).toBeInstanceOf(RouteInvalidError);
    expect((refusedByRoute as Error).message).toMatch(/the interrupt is still parked/);
    expect((await remit.status('o2')).status).toBe('parked');
    expect(await remit.resume('o1', parked.interrupt!.id, { accept: true })).toMatchObject({ status: 'completed', state: { accepted: true } });
  });
});

describe('a node result with getters', () => {
  it('has each getter read once, so every check and the merge see one value (from a review of own changes: read four times, and a getter answering undefined the second time lost its field)', async () => {
    let reads = 0;
    const wf = workflow({ name: 'getters', version: '1', state: z.object({ a: z.number().optional() }) })
      .pure('n', { run: () => ({ get a() { reads += 1; return reads === 1 ? 1 : undefined; } }) as never, next: END })
      .build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    expect(await remit.start(wf, {}, { runId: 'g' })).toMatchObject({ status: 'completed', state: { a: 1 } });
    expect(reads).toBe(1);
  });
});
