/**
 * The rule for values that reach the log (docs/guide.md, "Values in the log"): the log holds what
 * the schema returned, and that value must read back as itself (a JSON round trip changes
 * nothing, and validating it again changes nothing). A value that breaks the rule is refused with
 * REMIT_VALUE_UNFAITHFUL, naming the field and why, before anything is appended; a value that was
 * accepted never wedges the run. One regression test per defect fixed with the rule (2026-12-01,
 * commit a8c3443: each failed before its fix), plus the rule's positive side (idempotent
 * transforms, defaults keep working).
 */

import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { NotJsonError, RemitError, ValueUnfaithfulError } from './errors.js';
import { checkedRoundTrip, durableText, durableValue, JITLESS_PARSES, MAX_VALUE_DEPTH, validate } from './values.js';
import { createCore } from './core/index.js';
import { RecordKind, StateForm } from './core/types.js';
import { Remit } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { logFacts } from '../test-support/contract-checks.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');

function fresh(...wfs: Parameters<Remit['register']>[0][]) {
  const store = new MemoryStore();
  return { store, remit: new Remit(store, core, wfs) };
}

async function kinds(store: MemoryStore, runId: string): Promise<number[]> {
  return logFacts(runId, await store.readLog(runId)).records.map((r) => r.kind);
}

describe('resume values: validated fully before the claim', () => {
  // The defect: the claim held the transformed value, and finishing the interrupt validated it
  // again: "not consumed" while the claim was durable, every continueRun failed, every resume refused.
  const State = z.object({ amount: z.number().optional() });
  const wf = workflow({ name: 'resume-transform', version: '1', state: State })
    .interrupt('ask', {
      resume: z.object({ amount: z.string().transform((s) => Number(s)) }),
      apply: (_s, v) => ({ amount: v.amount }),
      next: END,
    })
    .build();

  it('a resume schema whose output does not pass it again is refused before the claim; the run stays resumable', async () => {
    const { store, remit } = fresh(wf);
    const parked = await remit.start(wf, {}, { runId: 'rt' });
    expect(parked.status).toBe('parked');
    const error = await remit.resume('rt', parked.interrupt!.id, { amount: '12' }).catch((e) => e);
    expect(error).toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', runId: 'rt', node: 'ask', field: 'amount', reason: 'FAILS_SCHEMA_AGAIN' });
    expect(String(error.message)).toMatch(/resume value/);
    // Nothing was claimed: the interrupt is still parked and the log has no RESUME_CLAIMED.
    expect(await kinds(store, 'rt')).not.toContain(RecordKind.RESUME_CLAIMED);
    expect((await remit.status('rt')).status).toBe('parked');
    expect((await remit.continueRun('rt')).status).toBe('parked');
  });

  it('an idempotent resume transform is applied once and the run completes', async () => {
    const trimmed = workflow({ name: 'resume-trim', version: '1', state: z.object({ who: z.string().optional() }) })
      .interrupt('ask', {
        resume: z.object({ who: z.string().transform((s) => s.trim().toLowerCase()) }),
        apply: (_s, v) => ({ who: v.who }),
        next: END,
      })
      .build();
    const { store, remit } = fresh(trimmed);
    const parked = await remit.start(trimmed, {}, { runId: 'trim' });
    const done = await remit.resume('trim', parked.interrupt!.id, { who: '  Kim ' });
    expect(done).toMatchObject({ status: 'completed', state: { who: 'kim' } });
    const claim = logFacts('trim', await store.readLog('trim')).claims[0];
    expect(claim?.value).toEqual({ who: 'kim' });
  });
});

describe('state values JSON does not keep are refused at the boundary, never stored', () => {
  // The defect: the checkpoint was stored in its JSON form, which failed the schema on the next
  // read, so the run wedged at the next step.
  const cases: Array<{ name: string; schema: z.ZodType; input: unknown; field: string; why: RegExp }> = [
    { name: 'a Date', schema: z.object({ at: z.date() }), input: { at: new Date(0) }, field: 'at', why: /Date.*string/ },
    {
      name: 'undefined in an array',
      schema: z.object({ xs: z.array(z.number().optional()) }),
      input: { xs: [1, undefined, 3] },
      field: 'xs.1',
      why: /undefined.*null/,
    },
    { name: 'NaN', schema: z.object({ score: z.any() }), input: { score: Number.NaN }, field: 'score', why: /NaN.*null/ },
    { name: 'a Map under z.any()', schema: z.object({ m: z.any() }), input: { m: new Map([['a', 1]]) }, field: 'm', why: /Map/ },
  ];
  for (const c of cases) {
    it(`${c.name} in the input: refused naming ${c.field}; nothing written`, async () => {
      const wf = workflow({ name: `v-${c.field}`, version: '1', state: c.schema as z.ZodType<Record<string, unknown>> })
        .pure('one', { run: () => ({}), next: 'two' })
        .pure('two', { run: () => ({}), next: END })
        .build();
      const { store, remit } = fresh(wf);
      const error = await remit.start(wf, c.input, { runId: 'in' }).catch((e) => e);
      expect(error).toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', runId: 'in', field: c.field, reason: 'CHANGED_BY_JSON' });
      expect(String(error.message)).toMatch(c.why);
      expect(await store.readRecords('in')).toEqual([]);
    });

    it(`${c.name} produced by a node: that step is refused naming ${c.field}; the head stays the last good state`, async () => {
      const wf = workflow({ name: `n-${c.field}`, version: '1', state: c.schema.optional().or(z.object({})) as z.ZodType<Record<string, unknown>> })
        .pure('make', { run: () => c.input as Record<string, unknown>, next: END })
        .build();
      const { store, remit } = fresh(wf);
      const error = await remit.start(wf, {}, { runId: 'node' }).catch((e) => e);
      expect(error).toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', runId: 'node', node: 'make', seq: 1, field: c.field });
      expect(await kinds(store, 'node')).toEqual([RecordKind.RUN_STARTED]);
      expect((await remit.status('node')).state).toEqual({});
    });
  }
});

describe('transforms in the state schema', () => {
  it('a non-idempotent transform is refused, never applied again at each step', async () => {
    // The defect: amountCents was multiplied by 100 at every step, silently.
    const State = z.object({ amountCents: z.number().transform((n) => n * 100), steps: z.number() });
    const wf = workflow({ name: 'times-100', version: '1', state: State })
      .pure('a', { run: (s) => ({ steps: s.steps + 1 }), next: 'b' })
      .pure('b', { run: (s) => ({ steps: s.steps + 1 }), next: END })
      .build();
    const { store, remit } = fresh(wf);
    const error = await remit.start(wf, { amountCents: 5, steps: 0 }, { runId: 'x100' }).catch((e) => e);
    expect(error).toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', field: 'amountCents', reason: 'TRANSFORM_NOT_IDEMPOTENT' });
    expect(String(error.message)).toMatch(/500.*50000/);
    expect(await store.readRecords('x100')).toEqual([]);
  });

  it('idempotent transforms, defaults and refinements keep working, applied once per value', async () => {
    const State = z.object({
      email: z.string().transform((s) => s.trim().toLowerCase()),
      tags: z.array(z.string().trim()).default([]),
      count: z.number().int().default(0),
      cents: z.number().transform((n) => Math.round(n)).refine((n) => n >= 0, 'must not be negative'),
    });
    const wf = workflow({ name: 'idempotent', version: '1', state: State })
      .pure('a', { run: (s) => ({ count: s.count + 1, tags: [...s.tags, ' new '] }), next: 'b' })
      .pure('b', { run: (s) => ({ count: s.count + 1, cents: s.cents + 0.4 }), next: END })
      .build();
    for (const groupPureSteps of [true, false]) {
      const store = new MemoryStore();
      const remit = new Remit(store, core, [wf], undefined, { groupPureSteps });
      const done = await remit.start(wf, { email: '  Ada@Example.COM ', cents: 10.6 }, { runId: 'ok' });
      expect(done).toMatchObject({ status: 'completed', state: { email: 'ada@example.com', tags: ['new'], count: 2, cents: 11 } });
      const facts = logFacts('ok', await store.readLog('ok'));
      expect(facts.checkpoints.map((c) => c.state)).toEqual([
        { email: 'ada@example.com', tags: [], count: 0, cents: 11 },
        { email: 'ada@example.com', tags: ['new'], count: 1, cents: 11 },
        { email: 'ada@example.com', tags: ['new'], count: 2, cents: 11 },
      ]);
    }
  });
});

describe('effect results', () => {
  it('a result JSON would change is refused before EFFECT_DONE; the attempt is released and the next one reuses the key', async () => {
    let mode: 'date' | 'ok' = 'date';
    const keys: string[] = [];
    const wf = workflow({ name: 'effect-date', version: '1', state: z.object({ at: z.string().optional() }) })
      .effect('stamp', {
        run: (_s, { idempotencyKey }) => {
          keys.push(idempotencyKey);
          return { at: mode === 'date' ? new Date(0) : '1970-01-01T00:00:00.000Z' };
        },
        apply: (_s, r) => ({ at: String(r.at) }),
        next: END,
      })
      .build();
    const { store, remit } = fresh(wf);
    const error = await remit.start(wf, {}, { runId: 'eff' }).catch((e) => e);
    expect(error).toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', node: 'stamp', field: 'at', reason: 'CHANGED_BY_JSON' });
    expect(await kinds(store, 'eff')).toEqual([RecordKind.RUN_STARTED, RecordKind.EFFECT_INTENT, RecordKind.EFFECT_ATTEMPT, RecordKind.EFFECT_RELEASED]);
    // The message says what was recorded: the release, not "nothing was written".
    expect(error.message).toMatch(/would not read back as written: .*; EFFECT_RELEASED was recorded \(attempt 1 is given up: .*same idempotency key\); the node's completion was not recorded \[run eff, seq 3, node stamp, field at\]$/);
    expect(error.message).not.toMatch(/nothing was written/);
    mode = 'ok';
    expect((await remit.continueRun('eff')).state).toEqual({ at: '1970-01-01T00:00:00.000Z' });
    expect(keys).toEqual(['eff/stamp/1', 'eff/stamp/1']);
  });

  it('a result with no JSON form (a BigInt) is NotJsonError, whose message says the attempt was released', async () => {
    const wf = workflow({ name: 'effect-bigint', version: '1', state: z.object({ n: z.number().optional() }) })
      .effect('count', { run: () => ({ n: 10n }), apply: () => ({}), next: END })
      .build();
    const { store, remit } = fresh(wf);
    const error = await remit.start(wf, {}, { runId: 'big' }).catch((e) => e);
    expect(error).toBeInstanceOf(NotJsonError);
    expect(error.message).toMatch(/is not JSON-serialisable: n: .*; EFFECT_RELEASED was recorded \(attempt 1 is given up: .*\); the node's completion was not recorded \[run big, seq 3, node count, field n\]$/);
    expect(error.toJSON()).toMatchObject({ code: 'REMIT_NOT_JSON', runId: 'big', seq: 3, node: 'count', field: 'n', message: error.message });
    expect(await kinds(store, 'big')).toEqual([RecordKind.RUN_STARTED, RecordKind.EFFECT_INTENT, RecordKind.EFFECT_ATTEMPT, RecordKind.EFFECT_RELEASED]);
  });

  it('a BigInt deep in a value is named by its path (JSON.stringify says only that one exists; from a newcomer\'s review)', () => {
    const value = { order: { items: [1, { qty: 5n }], seen: null as unknown } };
    value.order.seen = value.order.items; // a shared object is walked once
    const error = (() => { try { checkedRoundTrip('state', value, { runId: 'r' }); } catch (e) { return e as NotJsonError; } })()!;
    expect(error).toBeInstanceOf(NotJsonError);
    expect(error).toMatchObject({ field: 'order.items.1.qty', message: expect.stringMatching(/^the state is not JSON-serialisable: order\.items\.1\.qty: /) });
    // Another error than the BigInt's (a cycle met first, a toJSON that throws) names no BigInt's path.
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    const exploding = { a: { toJSON: () => { throw new Error('toJSON exploded'); } }, b: 1n };
    for (const value of [{ a: cyclic, b: 1n }, exploding]) {
      const other = (() => { try { checkedRoundTrip('state', value, { runId: 'r' }); } catch (e) { return e as NotJsonError; } })()!;
      expect(other).toBeInstanceOf(NotJsonError);
      expect(other.field).toBeUndefined();
    }
  });

  it('a Proxy whose getPrototypeOf trap throws is refused with a typed error, the attempt released (from a security review: a plain Error escaped)', async () => {
    const hostile = new Proxy({}, { getPrototypeOf: () => { throw new Error('gpo'); } });
    const wf = workflow({ name: 'effect-proxy', version: '1', state: z.object({ n: z.number().optional() }) })
      .effect('count', { run: () => ({ inner: hostile }), apply: () => ({}), next: END })
      .build();
    const { store, remit } = fresh(wf);
    const error = await remit.start(wf, {}, { runId: 'proxy' }).catch((e) => e);
    expect(error).toBeInstanceOf(RemitError);
    expect(error.toJSON()).toMatchObject({ runId: 'proxy', node: 'count' });
    expect(error.message).toMatch(/a Proxy whose traps throw/);
    expect(await kinds(store, 'proxy')).toEqual([RecordKind.RUN_STARTED, RecordKind.EFFECT_INTENT, RecordKind.EFFECT_ATTEMPT, RecordKind.EFFECT_RELEASED]);
  });
});

describe('the read-back check is exact (property)', () => {
  /** The value as a reader of its JSON would have to see it: undefined properties gone, -0 as 0, plain prototypes. */
  function asReadBack(value: unknown): unknown {
    if (typeof value === 'number' && Object.is(value, -0)) return 0;
    if (Array.isArray(value)) return value.map(asReadBack);
    const proto = value !== null && typeof value === 'object' ? (Object.getPrototypeOf(value) as unknown) : undefined;
    if (proto === Object.prototype || proto === null) {
      return Object.fromEntries(Object.entries(value as object).filter(([, v]) => v !== undefined).map(([k, v]) => [k, asReadBack(v)]));
    }
    return value;
  }

  it('accepts exactly the values whose JSON round trip gives them back, and refuses the others with a field', () => {
    fc.assert(
      fc.property(
        fc.anything({ withDate: true, withMap: true, withSet: true, withSparseArray: true, withNullPrototype: true, withBoxedValues: true, withTypedArray: true }),
        (value) => {
          let text: string | undefined;
          try {
            text = JSON.stringify(value);
          } catch {
            text = undefined;
          }
          let result: { value: unknown } | { error: unknown };
          try {
            result = { value: durableValue('value', value, null, {}).value };
          } catch (error) {
            result = { error };
          }
          if (text === undefined) {
            expect('error' in result && (result.error as { code?: string }).code).toMatch(/REMIT_NOT_JSON|REMIT_VALUE_UNFAITHFUL/);
            return;
          }
          const faithful = isDeepStrictEqual(asReadBack(value), asReadBack(JSON.parse(text)));
          if (faithful) {
            expect('value' in result).toBe(true);
            if ('value' in result) expect(isDeepStrictEqual(asReadBack(result.value), asReadBack(value))).toBe(true);
          } else {
            expect('error' in result).toBe(true);
            if ('error' in result) {
              expect(result.error).toBeInstanceOf(ValueUnfaithfulError);
              expect((result.error as ValueUnfaithfulError).field).toBeDefined();
            }
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('validation: jitless for a schema\'s first parses, then zod\'s compiled path', () => {
  // Object schemas of the kinds states use: optional and defaulted fields, transforms,
  // refinements, nested objects and arrays, unknown keys stripped, strict and passthrough objects.
  const schemas = [
    z.object({ n: z.number().int(), s: z.string(), b: z.boolean().optional() }),
    z.object({ n: z.number().default(7), tags: z.array(z.string()).default([]), inner: z.object({ x: z.number(), y: z.string().optional() }).optional() }),
    z.object({ s: z.string().transform((v) => v.trim()), n: z.number().refine((v) => v >= 0, 'must be >= 0') }),
    z.object({ n: z.number() }).strict(),
    z.object({ n: z.number() }).passthrough(),
    z.object({ list: z.array(z.object({ id: z.string(), done: z.boolean() })), count: z.number().int().nonnegative() }),
  ];
  const value = fc.oneof(
    fc.anything({ maxDepth: 2 }),
    fc.record({
      n: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(undefined)),
      s: fc.oneof(fc.string(), fc.integer()),
      b: fc.oneof(fc.boolean(), fc.constant(undefined), fc.string()),
      tags: fc.oneof(fc.array(fc.string(), { maxLength: 3 }), fc.constant(undefined)),
      inner: fc.oneof(fc.record({ x: fc.oneof(fc.integer(), fc.string()), y: fc.string() }, { requiredKeys: ['x'] }), fc.constant(undefined)),
      list: fc.array(fc.record({ id: fc.oneof(fc.string(), fc.integer()), done: fc.boolean() }), { maxLength: 3 }),
      count: fc.oneof(fc.nat(), fc.integer({ min: -5, max: -1 })),
      extra: fc.string(),
    }, { requiredKeys: [] }),
  );

  it('both paths give the same success, output (keys in the same order) and issues (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...schemas.keys()), value, (i, v) => {
        const jitless = schemas[i]!.safeParse(v, { jitless: true });
        const compiled = schemas[i]!.safeParse(v);
        expect(jitless.success).toBe(compiled.success);
        if (jitless.success && compiled.success) {
          expect(isDeepStrictEqual(jitless.data, compiled.data)).toBe(true);
          expect(JSON.stringify(jitless.data)).toBe(JSON.stringify(compiled.data));
        } else {
          expect(jitless.error!.issues).toEqual(compiled.error!.issues);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('validate() asks for jitless parses JITLESS_PARSES times per schema, then the compiled path', () => {
    const seen: (boolean | undefined)[] = [];
    const schema = { safeParse: (_v: unknown, params?: { jitless?: boolean }) => (seen.push(params?.jitless), { success: true as const, data: 1 }) };
    const other = { safeParse: (_v: unknown, params?: { jitless?: boolean }) => (seen.push(params?.jitless), { success: true as const, data: 2 }) };
    for (let i = 0; i < JITLESS_PARSES + 3; i++) expect(validate(schema, i)).toEqual({ success: true, data: 1 });
    expect(seen).toEqual([...Array(JITLESS_PARSES).fill(true), undefined, undefined, undefined]);
    seen.length = 0;
    validate(other, 0);
    expect(seen).toEqual([true]); // counted per schema
  });
});

describe('plain JSON data skips the parse: the copy walk and the checked round trip agree (property)', () => {
  /** The outcome of one path: its text and value, or its error's class, code, field and message. */
  function outcome(run: () => { text: string; value: unknown }): unknown {
    try {
      const { text, value } = run();
      return { text, value, keys: keyOrders(value) };
    } catch (error) {
      const e = error as { name?: string; code?: string; field?: string; message?: string };
      return { error: [e.name, e.code, e.field, e.message] };
    }
  }
  /** Every object's own keys, in order, depth first: isDeepStrictEqual does not compare key order. */
  function keyOrders(value: unknown, out: string[][] = []): string[][] {
    if (value !== null && typeof value === 'object') {
      out.push(Object.keys(value));
      for (const v of Object.values(value)) keyOrders(v, out);
    }
    return out;
  }
  const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const revoked = Proxy.revocable({ a: 1 }, {});
  revoked.revoke();
  const throwing = { get broken(): never { throw new Error('getter failed'); } };
  const special = fc.constantFrom<unknown>(
    -0, NaN, Infinity, undefined, null, 1n, Symbol('s'), () => 1, new Date(0), new Map([[1, 2]]), new Set([1]), new String('boxed'),
    { toJSON: () => 'x' }, [1, , 3], [undefined], Object.assign(Object.create(null), { b: 1, a: 2 }), JSON.parse('{"__proto__":{"x":1},"y":2}'),
    { 2: 'b', 1: 'a', z: 0, y: 1 }, { f: () => 1 }, { s: Symbol('t') }, { u: undefined, v: 1 }, '\ud800', nested(63), nested(64), nested(80),
    cyclic, new (class Point { x = 1 })(), Object.defineProperty({}, 'hidden', { value: 1, enumerable: false }),
    throwing, { nested: throwing }, new Proxy({ b: 2, a: 1 }, {}), new Proxy([1, 2], {}),
  );
  const values = fc.oneof(
    fc.anything({ withDate: true, withMap: true, withSet: true, withSparseArray: true, withNullPrototype: true, withBoxedValues: true, withObjectString: true }),
    fc.jsonValue(),
    special,
    fc.array(special, { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', '__proto__', '0', '10'), special, { maxKeys: 3 }),
  );

  it('gives the text, value and key order of the round trip, or the very same refusal', () => {
    fc.assert(
      fc.property(values, (value) => {
        const fast = outcome(() => durableText('value', value, null, { runId: 'r' }));
        const slow = outcome(() => checkedRoundTrip('value', value, { runId: 'r' }));
        expect(isDeepStrictEqual(fast, slow)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('shares no object or array with the value given (node code may mutate either)', () => {
    const given = { list: [{ n: 1 }], inner: { s: 'x' } };
    const { value } = durableText('value', given, null, {}) as unknown as { value: typeof given };
    expect(value).toEqual(given);
    expect(value).not.toBe(given);
    expect(value.list).not.toBe(given.list);
    expect(value.list[0]).not.toBe(given.list[0]);
    expect(value.inner).not.toBe(given.inner);
  });

  it('a getter or a proxy that throws is a NotJsonError naming the value, as the round trip reports it', () => {
    // A revoked proxy stays out of the property above: fast-check cannot inspect one to clone it.
    const values: unknown[] = [throwing, { nested: throwing }, [throwing], revoked.proxy, { inner: revoked.proxy }];
    values.forEach((value, i) => {
      expect(() => durableText('state', value, null, { runId: 'r' }), `value ${i}`).toThrow(NotJsonError);
      expect(() => checkedRoundTrip('state', value, { runId: 'r' }), `value ${i}`).toThrow(NotJsonError);
    });
  });

  it('reads a getter once, so the text and the value agree', () => {
    let reads = 0;
    const given = { get n() { reads += 1; return reads; } };
    const { text, value } = durableText('value', given, null, {});
    expect(reads).toBe(1);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('values nested deeper than MAX_VALUE_DEPTH are refused before anything is written (TOO_DEEP)', () => {
  // The defect: a state nested 3000 levels deep was accepted by start (RUN_STARTED written), then
  // every step failed with "Maximum call stack size exceeded" inside REMIT's own recursive delta
  // walk, and the run stayed running forever.
  /** `levels` levels of objects (or arrays, or both alternating) around the leaf 1. */
  function deep(levels: number, shape: 'objects' | 'arrays' | 'mixed' = 'objects', leaf: unknown = 1): unknown {
    let value: unknown = leaf;
    for (let i = 0; i < levels; i++) value = shape === 'arrays' || (shape === 'mixed' && i % 2 === 1) ? [value] : { a: value };
    return value;
  }
  const tooDeep = { code: 'REMIT_VALUE_UNFAITHFUL', reason: 'TOO_DEEP' };

  it('accepts exactly MAX_VALUE_DEPTH levels (the text is JSON.stringify\'s) and refuses one more, naming the field', () => {
    expect(MAX_VALUE_DEPTH).toBe(256);
    for (const shape of ['objects', 'arrays', 'mixed'] as const) {
      for (const levels of [1, 63, 64, 65, 100, MAX_VALUE_DEPTH]) {
        const value = deep(levels, shape);
        const fast = durableText('state', value, null, { runId: 'r' });
        expect(fast.text).toBe(JSON.stringify(value));
        expect(checkedRoundTrip('state', value, { runId: 'r' }).text).toBe(JSON.stringify(value));
      }
      for (const levels of [MAX_VALUE_DEPTH + 1, 3000, 100_000]) {
        for (const check of [() => durableText('state', deep(levels, shape), null, { runId: 'r' }), () => checkedRoundTrip('state', deep(levels, shape), { runId: 'r' })]) {
          const error = (() => { try { check(); } catch (e) { return e; } return undefined; })() as ValueUnfaithfulError;
          expect(error).toBeInstanceOf(ValueUnfaithfulError);
          expect(error).toMatchObject({ ...tooDeep, runId: 'r', value: 'state' });
          // The field: the path to the object or array at level MAX_VALUE_DEPTH + 1.
          expect(error.field!.split('.')).toHaveLength(MAX_VALUE_DEPTH);
          expect(error.message).toMatch(/more than 256 levels deep/);
        }
      }
    }
    const error = (() => { try { durableValue('effect result', { ok: [1, { deep: deep(MAX_VALUE_DEPTH) }] }, null, {}); } catch (e) { return e; } return undefined; })();
    expect(error).toMatchObject({ ...tooDeep, field: `ok.1.deep${'.a'.repeat(MAX_VALUE_DEPTH - 3)}` });
    // The depth is that of the JSON form: a deep object whose toJSON is shallow is refused for its toJSON.
    expect(() => durableText('state', { inner: { toJSON: () => 'flat', deep: deep(1000) } }, null, {})).toThrow(
      expect.objectContaining({ reason: 'CHANGED_BY_JSON', field: 'inner' }),
    );
  });

  it('a cycle, a throwing getter or a BigInt stays NotJsonError; deep and unfaithful at once is TOO_DEEP', () => {
    const cyclic: Record<string, unknown> = { a: { b: 1 } };
    (cyclic.a as Record<string, unknown>).self = cyclic;
    expect(() => durableText('state', cyclic, null, {})).toThrow(NotJsonError);
    const throwing = { get x(): never { throw new Error('getter failed'); } };
    expect(() => durableText('state', deep(100, 'objects', throwing), null, {})).toThrow(NotJsonError);
    expect(() => durableText('state', deep(300, 'objects', throwing), null, {})).toThrow(expect.objectContaining(tooDeep));
    expect(() => durableText('state', { n: 1n }, null, {})).toThrow(NotJsonError);
    expect(() => durableText('state', deep(300, 'objects', 1n), null, {})).toThrow(expect.objectContaining(tooDeep));
    expect(() => durableText('state', deep(300, 'objects', new Date(0)), null, {})).toThrow(expect.objectContaining(tooDeep));
  });

  const Deep = z.object({ bag: z.any(), n: z.number() });

  it('an input nested 3000 levels deep (the defect) is refused by start: no run is created', async () => {
    const wf = workflow({ name: 'deep-input', version: '1', state: Deep })
      .pure('a', { run: (s) => ({ n: s.n + 1 }), next: END })
      .build();
    for (const levels of [MAX_VALUE_DEPTH, 3000, 100_000]) {
      const { store, remit } = fresh(wf);
      const error = await remit.start(wf, { bag: deep(levels), n: 0 }, { runId: 'in' }).catch((e) => e);
      expect(error).toBeInstanceOf(ValueUnfaithfulError);
      expect(error).toMatchObject({ ...tooDeep, runId: 'in', seq: 0, value: 'input' });
      expect(error.field).toMatch(/^bag(\.a)+$/);
      expect(await store.readRecords('in')).toEqual([]);
      expect(await store.listRuns()).toEqual([]);
    }
  });

  it('under a recursive schema (z.lazy) that overflows while validating, a deep input is StateInvalidError naming where, not a RangeError', async () => {
    type Tree = { a?: Tree };
    const TreeSchema: z.ZodType<Tree> = z.lazy(() => z.object({ a: TreeSchema.optional() }));
    const wf = workflow({ name: 'deep-lazy', version: '1', state: z.object({ tree: TreeSchema, n: z.number() }) })
      .pure('a', { run: (s) => ({ n: s.n + 1 }), next: END })
      .build();
    const { store, remit } = fresh(wf);
    const error = await remit.start(wf, { tree: deep(100_000) as Tree, n: 0 }, { runId: 'lazy' }).catch((e) => e);
    expect(error).toMatchObject({ code: 'REMIT_STATE_INVALID', runId: 'lazy', seq: 0 });
    expect(error.field).toMatch(/^tree(\.a)+$/);
    expect(error.message).toMatch(/nested more than 256 levels deep/);
    expect(await store.listRuns()).toEqual([]);
  });

  it('a node returning a too-deep state fails with the typed error; the log holds nothing new; the fixed node continues the run', async () => {
    let levels = 3000;
    const build = () =>
      workflow({ name: 'deep-node', version: '1', state: Deep })
        .pure('grow', { run: (s) => ({ bag: deep(levels), n: s.n + 1 }), next: 'more' })
        .pure('more', { run: (s) => ({ n: s.n + 1 }), next: END })
        .build();
    const { store, remit } = fresh(build());
    const error = await remit.start('deep-node', { bag: null, n: 0 }, { runId: 'node' }).catch((e) => e);
    expect(error).toMatchObject({ ...tooDeep, runId: 'node', node: 'grow', seq: 1, value: 'state' });
    expect(error.field).toMatch(/^bag(\.a)+$/);
    expect(await kinds(store, 'node')).toEqual([RecordKind.RUN_STARTED]);
    expect(await remit.status('node')).toMatchObject({ status: 'running', state: { bag: null, n: 0 } });
    // The same refusal on every attempt, and still nothing written.
    await expect(remit.continueRun('node')).rejects.toMatchObject(tooDeep);
    expect(await kinds(store, 'node')).toEqual([RecordKind.RUN_STARTED]);
    // The node fixed (the same definition: its code changed, not its shape): the run goes on.
    levels = 10;
    const fixed = new Remit(store, core, [build()]);
    const done = await fixed.continueRun('node');
    expect(done).toMatchObject({ status: 'completed', state: { bag: deep(10), n: 2 } });
  });

  it('an effect result, a resume value and a fork intent too deep are refused; nothing is recorded for them', async () => {
    let result: unknown = deep(MAX_VALUE_DEPTH + 1);
    const wf = workflow({ name: 'deep-others', version: '1', state: Deep })
      .effect('call', { run: () => result, apply: (s, r) => ({ bag: r, n: s.n + 1 }), next: 'ask' })
      .interrupt('ask', { resume: z.any(), apply: (s, v) => ({ bag: v, n: s.n + 1 }), next: END })
      .build();
    const { store, remit } = fresh(wf);
    await expect(remit.start(wf, { bag: null, n: 0 }, { runId: 'o' })).rejects.toMatchObject({ ...tooDeep, value: 'effect result', node: 'call' });
    expect(await kinds(store, 'o')).not.toContain(RecordKind.EFFECT_DONE);
    result = deep(MAX_VALUE_DEPTH - 1);
    const parked = await remit.continueRun('o');
    expect(parked.status).toBe('parked');
    const before = await kinds(store, 'o');
    await expect(remit.resume('o', parked.interrupt!.id, deep(MAX_VALUE_DEPTH + 1))).rejects.toMatchObject({ ...tooDeep, value: 'resume value' });
    await expect(remit.fork('o', 0, { newRunId: 'o2', intent: { why: deep(MAX_VALUE_DEPTH) } })).rejects.toMatchObject({ ...tooDeep, value: 'fork intent' });
    expect(await kinds(store, 'o')).toEqual(before);
    expect((await store.listRuns()).map((r) => r.runId)).toEqual(['o']);
    const done = await remit.resume('o', parked.interrupt!.id, deep(MAX_VALUE_DEPTH - 1));
    expect(done).toMatchObject({ status: 'completed', state: { n: 2 } });
  });

  it('a state at exactly the limit runs to completion through several delta steps, and reads back alike', async () => {
    /** The state's `bag` (level 1) holds a value of MAX_VALUE_DEPTH - 1 levels: MAX_VALUE_DEPTH in all. */
    const at = (leaf: unknown, shape: 'objects' | 'arrays' | 'mixed') => deep(MAX_VALUE_DEPTH - 1, shape, leaf);
    for (const shape of ['objects', 'arrays', 'mixed'] as const) {
      const pad = 'p'.repeat(50_000);
      const wf = workflow({ name: `limit-${shape}`, version: '1', state: Deep.extend({ pad: z.string() }) })
        .pure('one', { run: (s) => ({ bag: at(s.n + 1, shape), n: s.n + 1 }), next: 'two' })
        .pure('two', { run: (s) => ({ bag: at(s.n + 1, shape), n: s.n + 1 }), next: 'three' })
        .pure('three', { run: (s) => ({ bag: at(s.n + 1, shape), n: s.n + 1 }), next: END })
        .build();
      for (const groupPureSteps of [true, false]) {
        const store = new MemoryStore();
        const remit = new Remit(store, core, [wf], undefined, { groupPureSteps });
        const done = await remit.start(wf, { bag: at(0, shape), n: 0, pad }, { runId: 'limit' });
        expect(done.status).toBe('completed');
        expect(JSON.stringify(done.state)).toBe(JSON.stringify({ bag: at(3, shape), n: 3, pad }));
        const facts = logFacts('limit', await store.readLog('limit'));
        const completions = facts.records.filter((r) => r.kind === RecordKind.NODE_COMPLETED) as Array<{ stateForm: number }>;
        expect(completions.map((r) => r.stateForm)).toEqual([StateForm.DELTA, StateForm.DELTA, StateForm.DELTA]);
        // Another Remit on the same store rebuilds the head from the log (snapshot plus deltas).
        const again = new Remit(store, core, [wf]);
        expect(JSON.stringify((await again.status('limit')).state)).toBe(JSON.stringify(done.state));
        expect((await again.continueRun('limit')).status).toBe('completed');
        expect((await again.inspect('limit')).status).toBe('completed');
        const fork = await again.fork('limit', 1, { newRunId: 'limit-fork' });
        expect(JSON.stringify((await again.continueRun(fork.runId)).state)).toBe(JSON.stringify(done.state));
      }
    }
  });
});
