import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RecordKind, StateForm } from '../core/types.js';
import { createRemit, END, openMemoryStore, workflow } from '../index.js';
import { jsonEqual, type Json } from '../json.js';
import { cloneJson } from '../sequencer/log-view.js';
import { durableText, MAX_VALUE_DEPTH } from '../values.js';
import { logFacts } from '../../test-support/contract-checks.js';
import { applyDelta, applyDeltaInPlace, chooseSnapshot, computeDelta, type Delta } from './delta.js';

const json = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>;

function isObject(value: Json): value is { [key: string]: Json } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `value` with one key of an object changed, added or removed (or itself when it is no object). */
function editOf(value: Json): fc.Arbitrary<Json> {
  if (!isObject(value)) return fc.constant(value);
  const keys = Object.keys(value);
  return fc.tuple(fc.nat(), json, fc.boolean()).map(([i, replacement, remove]) => {
    const copy = JSON.parse(JSON.stringify(value)) as { [key: string]: Json };
    const key = keys.length === 0 ? 'added' : keys[i % keys.length]!;
    if (remove) delete copy[key];
    else copy[key] = replacement;
    return copy;
  });
}

describe('structural delta', () => {
  it('apply(before, delta(before, after)) equals after, and never changes before', () => {
    fc.assert(
      fc.property(json, json, (before, after) => {
        const frozen = JSON.stringify(before);
        const delta = computeDelta(before, after);
        if (delta === null) {
          expect(jsonEqual(before, after)).toBe(true);
          return;
        }
        expect(jsonEqual(applyDelta(before, delta), after)).toBe(true);
        expect(JSON.stringify(before)).toBe(frozen);
        // A delta survives its JSON encoding (it is stored as JSON).
        expect(jsonEqual(applyDelta(before, JSON.parse(JSON.stringify(delta))), after)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('is null exactly for equal values, and writes the same delta as the rule stated plainly', () => {
    // The rule as docs/guide.md states it, one comparison after another (the implementation
    // compares two objects through the patch itself); their JSON texts must be the same bytes.
    const plainDelta = (before: Json, after: Json): unknown => {
      if (jsonEqual(before, after)) return null;
      if (isObject(before) && isObject(after)) {
        // A null prototype: `o["__proto__"] = …` must make an own key, as in the delta itself.
        const o: Record<string, unknown> = Object.create(null);
        for (const key of Object.keys(after)) {
          if (!Object.prototype.hasOwnProperty.call(before, key)) o[key] = { r: after[key] };
          else if (!jsonEqual(before[key]!, after[key]!)) o[key] = plainDelta(before[key]!, after[key]!);
        }
        const d = Object.keys(before).filter((key) => !Object.prototype.hasOwnProperty.call(after, key));
        return d.length > 0 ? { o, d } : { o };
      }
      if (Array.isArray(before) && Array.isArray(after) && after.length > before.length && before.every((x, i) => jsonEqual(x, after[i]!))) {
        return { a: after.slice(before.length) };
      }
      return { r: after };
    };
    // Pairs that share most of their structure, as consecutive states do.
    const similar = json.chain((before) => fc.tuple(fc.constant(before), fc.oneof(fc.constant(JSON.parse(JSON.stringify(before)) as Json), json, editOf(before))));
    fc.assert(
      fc.property(fc.oneof(fc.tuple(json, json), similar), ([before, after]) => {
        const delta = computeDelta(before, after);
        expect(delta === null).toBe(jsonEqual(before, after));
        expect(JSON.stringify(delta)).toBe(JSON.stringify(plainDelta(before, after)));
      }),
      // The shrunk counterexample of a CI run (seed -143204508): a "__proto__" key added, which
      // the plain rule above wrote as the prototype until it built its object without one.
      { numRuns: 600, examples: [[[{}, JSON.parse('{"__proto__":""}') as Json]]] },
    );
  });

  it('object changes are keyed, deletions listed, appends to arrays carry only the new items', () => {
    expect(computeDelta({ a: 1, b: [1, 2], c: 3 }, { a: 2, b: [1, 2, 3, 4] })).toEqual({ o: { a: { r: 2 }, b: { a: [3, 4] } }, d: ['c'] });
    expect(computeDelta([1, 2], [2])).toEqual({ r: [2] });
    expect(computeDelta({ x: 1 }, { x: 1 })).toBeNull();
  });

  it('the policy writes a snapshot once deltas since the last snapshot reach its size', () => {
    expect(chooseSnapshot(100, 10, 80)).toBe(false);
    expect(chooseSnapshot(100, 10, 90)).toBe(true);
    expect(chooseSnapshot(100, 150, 0)).toBe(true);
  });
});

/**
 * Keys that name something on Object.prototype or on arrays and functions. "__proto__" is the one
 * an assignment (`out[key] = v`) gets wrong: it sets the prototype and the key is gone. JSON.parse
 * makes it an own key, so a state may hold it; a delta must carry it like any other key.
 */
const TRICKY_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'length', 'hasOwnProperty', 'valueOf', '0', 'a'] as const;

/** JSON text of an object with these entries (keys unique), so that JSON.parse makes every key an own key. */
function objectText(entries: ReadonlyArray<readonly [string, string]>): string {
  return `{${entries.map(([key, text]) => `${JSON.stringify(key)}:${text}`).join(',')}}`;
}

/** JSON values with tricky keys at every depth, built as text and parsed (fc.jsonValue at the leaves). */
const trickyText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
    fc
      .uniqueArray(fc.tuple(fc.oneof(fc.constantFrom(...TRICKY_KEYS), fc.string({ maxLength: 3 })), tie('value')), { selector: ([key]) => key, maxLength: 4 })
      .map(objectText),
  ),
})).value;
const tricky = trickyText.map((text) => JSON.parse(text) as Json);

/** An object's own key and value, "__proto__" too, as JSON.parse would define it. */
function defineKey(out: { [key: string]: Json }, key: string, value: Json): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * `value` with edits at any depth that keep the key order a delta keeps: a changed key stays where
 * it is, a deleted one goes, a new one comes last, and an object is never replaced by another
 * object (a delta patches it, keeping its keys' order), only changed inside or replaced by a
 * non-object.
 */
function orderKeepingEdit(value: Json): fc.Arbitrary<Json> {
  const replacement = tricky.filter((v) => !isObject(v));
  if (Array.isArray(value)) {
    return fc.oneof(
      replacement,
      tricky.map((item) => [...value, item]),
      value.length === 0 ? fc.constant(value) : fc.nat(value.length - 1).chain((i) => orderKeepingEdit(value[i]!).map((item) => value.map((v, j) => (j === i ? item : v)))),
    );
  }
  if (!isObject(value)) return tricky;
  const keys = Object.keys(value);
  const rebuilt = (change: (key: string, out: { [key: string]: Json }) => void, extra?: [string, Json]) => {
    const out: { [key: string]: Json } = {};
    for (const key of keys) change(key, out);
    if (extra !== undefined && !Object.prototype.hasOwnProperty.call(out, extra[0])) defineKey(out, extra[0], extra[1]);
    return out;
  };
  const edits: fc.Arbitrary<Json>[] = [
    replacement,
    fc.tuple(fc.oneof(fc.constantFrom(...TRICKY_KEYS), fc.string({ maxLength: 3 })), tricky).map(([key, item]) =>
      rebuilt((k, out) => defineKey(out, k, value[k]!), Object.prototype.hasOwnProperty.call(value, key) ? undefined : [key, item]),
    ),
  ];
  if (keys.length > 0) {
    edits.push(
      fc.nat(keys.length - 1).map((i) => rebuilt((k, out) => k !== keys[i] && defineKey(out, k, value[k]!))),
      fc.nat(keys.length - 1).chain((i) =>
        orderKeepingEdit(value[keys[i]!]!).map((item) => rebuilt((k, out) => defineKey(out, k, k === keys[i] ? item : value[k]!))),
      ),
    );
  }
  return fc.oneof(...edits);
}

/** A text of `value` that is the same for the same value whatever its key order, every own key included. */
function sortedText(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(sortedText).join(',')}]`;
  if (isObject(value)) return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${sortedText(value[key]!)}`).join(',')}}`;
  return JSON.stringify(value);
}

describe('structural delta: keys that name prototype members ("__proto__" among them)', () => {
  it('the generator makes "__proto__" an own key at depth', () => {
    const value = JSON.parse(objectText([['__proto__', objectText([['__proto__', '1'], ['length', '2']])]])) as { [key: string]: Json };
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(JSON.stringify(value)).toBe('{"__proto__":{"__proto__":1,"length":2}}');
  });

  it('apply(before, delta(before, after)) is after, every own key kept, and the delta survives its JSON (property)', () => {
    const pairs = fc.oneof(
      fc.tuple(tricky, tricky),
      tricky.chain((before) => fc.tuple(fc.constant(before), orderKeepingEdit(before))),
    );
    fc.assert(
      fc.property(pairs, ([before, after]) => {
        const frozen = JSON.stringify(before);
        const delta = computeDelta(before, after);
        expect(delta === null).toBe(sortedText(before) === sortedText(after));
        const applied = delta === null ? before : applyDelta(before, delta);
        expect(sortedText(applied)).toBe(sortedText(after));
        expect(jsonEqual(applied, after)).toBe(true);
        expect(JSON.stringify(before)).toBe(frozen);
        if (delta !== null) {
          // Stored as JSON and read back as JSON.parse gives it; the head cache folds a copy of it.
          const stored = JSON.parse(JSON.stringify(delta)) as Delta;
          expect(JSON.stringify(stored)).toBe(JSON.stringify(delta));
          expect(sortedText(applyDelta(before, stored))).toBe(sortedText(after));
          expect(sortedText(applyDelta(before, cloneJson(delta as unknown as Json) as unknown as Delta))).toBe(sortedText(after));
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('edits that keep the key order give the very same JSON text, key order included (property)', () => {
    fc.assert(
      fc.property(tricky.chain((before) => fc.tuple(fc.constant(before), orderKeepingEdit(before))), ([before, after]) => {
        const delta = computeDelta(before, after);
        const applied = delta === null ? before : applyDelta(before, JSON.parse(JSON.stringify(delta)) as Delta);
        expect(JSON.stringify(applied)).toBe(JSON.stringify(after));
      }),
      { numRuns: 1500 },
    );
  });

  it('a "__proto__" key is carried as a key: added, changed inside, deleted', () => {
    const before = JSON.parse('{"bag":{"x":1}}') as Json;
    const added = JSON.parse('{"bag":{"x":1,"__proto__":{"admin":true}}}') as Json;
    expect(JSON.stringify(computeDelta(before, added))).toBe('{"o":{"bag":{"o":{"__proto__":{"r":{"admin":true}}}}}}');
    const changed = JSON.parse('{"bag":{"x":1,"__proto__":{"admin":false}}}') as Json;
    expect(JSON.stringify(computeDelta(added, changed))).toBe('{"o":{"bag":{"o":{"__proto__":{"o":{"admin":{"r":false}}}}}}}');
    expect(JSON.stringify(computeDelta(added, before))).toBe('{"o":{"bag":{"o":{},"d":["__proto__"]}}}');
    for (const [from, to] of [[before, added], [added, changed], [changed, before]] as const) {
      const applied = applyDelta(from, JSON.parse(JSON.stringify(computeDelta(from, to))) as Delta);
      expect(JSON.stringify(applied)).toBe(JSON.stringify(to));
      expect(Object.getPrototypeOf((applied as { bag: object }).bag)).toBe(Object.prototype);
    }
  });
});

describe('a "__proto__" key in a state survives the sequencer (regression)', () => {
  it('the repro: a node returns {"x":1,"__proto__":{...}} parsed from JSON; the next node, the result and the log keep the key', async () => {
    for (const core of ['wasm', 'reference'] as const) {
      const payload = JSON.parse('{"x":1,"__proto__":{"admin":true}}') as unknown;
      const seen: string[] = [];
      const build = () =>
        workflow({ name: 'p', version: '1', state: z.object({ bag: z.any() }) })
          .pure('a', { run: () => ({ bag: payload }), next: 'b' })
          .pure('b', { run: (s) => { seen.push(JSON.stringify(s)); }, next: END })
          .build();
      const w = build();
      const store = openMemoryStore();
      const remit = await createRemit({ store, workflows: [w], core });
      const r = await remit.start(w, { bag: { x: 1 } }, { runId: 'r1' });
      const expected = '{"bag":{"x":1,"__proto__":{"admin":true}}}';
      expect(r.status).toBe('completed');
      expect(JSON.stringify(r.state)).toBe(expected);
      expect(seen).toEqual([expected]);
      const facts = logFacts('r1', await store.readLog('r1'));
      expect(facts.checkpoints.map((cp) => JSON.stringify(cp.state))).toEqual(['{"bag":{"x":1}}', expected, expected]);
      // Another process (a fresh Remit on the same store) rebuilds the same state from the log.
      const again = await createRemit({ store, workflows: [build()], core });
      expect(JSON.stringify((await again.status('r1')).state)).toBe(expected);
    }
  });

  it('written as deltas (a state large enough for them): added, changed inside, deleted; rebuilt from the log alike', async () => {
    const pad = 'p'.repeat(400);
    const texts = ['{"bag":{"x":1,"__proto__":{"admin":true}}}', '{"bag":{"x":1,"__proto__":{"admin":false,"constructor":[]}}}', '{"bag":{"x":1}}'];
    const build = () =>
      workflow({ name: 'p-delta', version: '1', state: z.object({ bag: z.any(), pad: z.string() }) })
        .pure('add', { run: () => ({ bag: JSON.parse(texts[0]!).bag }), next: 'change' })
        .pure('change', { run: () => ({ bag: JSON.parse(texts[1]!).bag }), next: 'remove' })
        .pure('remove', { run: () => ({ bag: JSON.parse(texts[2]!).bag }), next: END })
        .build();
    for (const groupPureSteps of [true, false]) {
      const store = openMemoryStore();
      const remit = await createRemit({ store, workflows: [build()], core: 'reference', groupPureSteps });
      const r = await remit.start('p-delta', { bag: { x: 1 }, pad }, { runId: 'rd' });
      expect(JSON.stringify(r.state)).toBe(`${texts[2]!.slice(0, -1)},"pad":"${pad}"}`);
      const facts = logFacts('rd', await store.readLog('rd'));
      const completions = facts.records.filter((rec) => rec.kind === RecordKind.NODE_COMPLETED) as Array<{ stateForm: number; state: Uint8Array }>;
      expect(completions.map((rec) => rec.stateForm)).toEqual([StateForm.DELTA, StateForm.DELTA, StateForm.DELTA]);
      expect(new TextDecoder().decode(completions[0]!.state)).toContain('"__proto__"');
      expect(facts.checkpoints.map((cp) => JSON.stringify((cp.state as { bag: Json }).bag))).toEqual(
        ['{"x":1}', ...texts.map((t) => JSON.stringify((JSON.parse(t) as { bag: Json }).bag))],
      );
    }
  });
});

/** Frames of `dive` that fit on the stack from here (measured a few times, so that it is warm). */
function diveCapacity(): number {
  let capacity = 0;
  for (let round = 0; round < 3; round++) {
    let reached = 0;
    try {
      dive(Number.POSITIVE_INFINITY, () => 0, (d) => { reached = d; });
    } catch {
      // The stack is full: `reached` frames fit.
    }
    capacity = reached;
  }
  return capacity;
}

function dive<T>(frames: number, then: () => T, reached?: (depth: number) => void, depth = 0): T {
  reached?.(depth);
  if (depth >= frames) return then();
  const result = dive(frames, then, reached, depth + 1);
  return result;
}

/** `fn` called with three quarters of the stack (from here) already in use, as from a deep caller. */
function withDeepStack<T>(fn: () => T): T {
  return dive(Math.floor(diveCapacity() * 0.75), fn);
}

/** A value nested exactly `levels` levels (objects, arrays or both, alternating), with a leaf. */
function nestedValue(levels: number, shape: 'objects' | 'arrays' | 'mixed', leaf: Json = 1): Json {
  let value: Json = leaf;
  for (let i = 0; i < levels; i++) {
    const asArray = shape === 'arrays' || (shape === 'mixed' && i % 2 === 1);
    value = asArray ? [value] : { k: value, n: i };
  }
  return value;
}

describe('the walks over a value are safe at MAX_VALUE_DEPTH, from a deep caller', () => {
  it(`computeDelta, applyDelta, jsonEqual, the copies and the read-back check at ${MAX_VALUE_DEPTH} levels, with 3/4 of the stack in use`, () => {
    const schema = z.object({ deep: z.any(), list: z.array(z.number()) });
    for (const shape of ['objects', 'arrays', 'mixed'] as const) {
      // MAX_VALUE_DEPTH levels each: the state, MAX_VALUE_DEPTH - 2 levels, and the array at the bottom.
      const before = { deep: nestedValue(MAX_VALUE_DEPTH - 2, shape, [1]), list: [1] };
      const after = { deep: nestedValue(MAX_VALUE_DEPTH - 2, shape, [3]), list: [1, 2] };
      const grown = { deep: nestedValue(MAX_VALUE_DEPTH - 2, shape, [1, 2]), list: [1] };
      withDeepStack(() => {
        for (const [from, to] of [[before, after], [after, before], [before, grown], [grown, before]] as const) {
          const delta = computeDelta(from, to);
          expect(delta).not.toBeNull();
          const text = JSON.stringify(delta);
          const stored = JSON.parse(text) as Delta;
          const applied = applyDelta(from, stored);
          expect(jsonEqual(applied, to)).toBe(true);
          expect(jsonEqual(applyDelta(from, cloneJson(stored as unknown as Json) as unknown as Delta), to)).toBe(true);
          expect(JSON.stringify(cloneJson(applied))).toBe(JSON.stringify(to));
          expect(computeDelta(applied, to)).toBeNull();
        }
        expect(jsonEqual(before, JSON.parse(JSON.stringify(before)) as Json)).toBe(true);
        // values.ts: the round trip, its comparison, the fast path's exactness check, the depth check.
        for (const value of [before, after, grown]) {
          expect(durableText('state', value, null, {}).text).toBe(JSON.stringify(value));
          expect(durableText('state', schema.parse(value), schema, {}, value).text).toBe(JSON.stringify(value));
        }
        expect(() => durableText('state', { deep: nestedValue(MAX_VALUE_DEPTH - 2, shape, [[1]]) }, null, {})).toThrow(
          expect.objectContaining({ code: 'REMIT_VALUE_UNFAITHFUL', reason: 'TOO_DEEP' }),
        );
      });
    }
  });
});

describe('applyDelta (public in remit/testing) on what is not a delta, or one that does not fit', () => {
  // Before, each of these was a plain Error ("not a delta (got null)") that named neither the call nor the part.
  const CASES: Array<[Json, unknown, string, string]> = [
    [{}, null, 'applyDelta(delta)', 'null'],
    [{}, 5, 'applyDelta(delta)', 'a number'],
    [{}, [], 'applyDelta(delta)', 'an array'],
    [{}, { q: 1 }, 'applyDelta(delta)', 'an object with neither r, a nor o'],
    [{}, { o: 5 }, 'applyDelta(delta.o)', 'a number'],
    [{}, { o: {}, d: ['a', 1] }, 'applyDelta(delta.d)', 'an array holding a non-string'],
    [[], { a: 'x' }, 'applyDelta(delta.a)', 'a string'],
    [5, { a: [1] }, 'applyDelta(before)', 'a number'],
    ['s', { o: {} }, 'applyDelta(before)', 'a string'],
    [{ items: { list: 1 } }, { o: { items: { o: { list: { a: [2] } } } } }, 'applyDelta(before.items.list)', 'a number'],
    [{ items: {} }, { o: { items: { o: { x: undefined } } } }, 'applyDelta(delta.o.items.o.x)', 'undefined'],
    // From a review of testing: two forms at once took the first, and a replacement by undefined gave a value that is not JSON.
    [{}, { r: 1, a: [2] }, 'applyDelta(delta)', 'an object with the keys r, a'],
    [{ x: {} }, { o: { x: { o: {}, r: 3 } } }, 'applyDelta(delta.o.x)', 'an object with the keys o, r'],
    [{}, { r: undefined }, 'applyDelta(delta.r)', 'undefined'],
  ];
  it.each(CASES)('applyDelta(%j, %j) is ArgumentInvalidError naming %s', (before, delta, argument, received) => {
    let caught: unknown;
    try {
      applyDelta(before, delta as Delta);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ name: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', argument, received });
  });

  it('a delta that fits is applied as before', () => {
    expect(applyDelta({ items: { list: [1] }, gone: 1 }, { o: { items: { o: { list: { a: [2] } } } }, d: ['gone'] })).toEqual({ items: { list: [1, 2] } });
    expect(applyDelta(null, { r: { a: 1 } })).toEqual({ a: 1 });
  });
});

/** Deltas over a few keys, so that deletes and patches meet on one key, with junk among them. */
const FEW_KEYS = ['a', 'b', '__proto__', 'length'] as const;
const someDelta: fc.Arbitrary<unknown> = fc.letrec<{ delta: unknown }>((tie) => ({
  delta: fc.oneof(
    { depthSize: 'small' },
    fc.record({ r: json }),
    fc.record({ a: fc.array(json, { maxLength: 3 }) }),
    fc.record(
      { o: fc.dictionary(fc.constantFrom(...FEW_KEYS), tie('delta'), { maxKeys: 3 }), d: fc.array(fc.constantFrom(...FEW_KEYS), { maxLength: 3 }) },
      { requiredKeys: ['o'] },
    ),
    fc.jsonValue({ maxDepth: 2 }),
  ),
})).delta;
/** Values over the same keys ("__proto__" an own key, as JSON.parse makes it). */
const someValue: fc.Arbitrary<Json> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 1 }).map((v) => JSON.stringify(v)),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
    fc.uniqueArray(fc.tuple(fc.constantFrom(...FEW_KEYS), tie('value')), { selector: ([key]) => key, maxLength: 4 }).map((entries) => objectText(entries)),
  ),
})).value.map((text) => JSON.parse(text) as Json);

/** What folding `deltas` over `start` gives: each state's text (key order included) and own keys, or the refusal's message. */
function foldOutcome(start: Json, deltas: readonly unknown[], apply: (before: Json, delta: Delta) => Json): string[] {
  const seen: string[] = [];
  let state = start;
  for (const delta of deltas) {
    try {
      state = apply(state, delta as Delta);
    } catch (error) {
      seen.push(`refused: ${(error as Error).message}`);
      return seen;
    }
    seen.push(`${JSON.stringify(state)} ${sortedText(state)}`);
  }
  return seen;
}

describe('applyDeltaInPlace: what a fold that owns its state uses (headState)', () => {
  it('gives what applyDelta gives, key order and "__proto__" keys included, or the same refusal, over any sequence of deltas (property)', () => {
    const chains = fc.oneof(
      fc.tuple(someValue, fc.array(someDelta, { maxLength: 6 })),
      // Deltas computeDelta writes for a sequence of edits, read back from their JSON as a log gives them.
      tricky.chain((first) => fc.array(orderKeepingEdit(first), { minLength: 1, maxLength: 5 }).map((states) => {
        const deltas: unknown[] = [];
        let before = first;
        for (const after of states) {
          const delta = computeDelta(before, after);
          if (delta !== null) deltas.push(JSON.parse(JSON.stringify(delta)));
          before = after;
        }
        return [first, deltas] as [Json, unknown[]];
      })),
    );
    fc.assert(
      fc.property(chains, ([start, deltas]) => {
        const text = JSON.stringify(start);
        const immutable = foldOutcome(start, deltas, applyDelta);
        expect(JSON.stringify(start)).toBe(text);
        // In place on a copy of its own (JSON.parse: "__proto__" stays an own key), deltas copied too.
        const inPlace = foldOutcome(JSON.parse(text) as Json, JSON.parse(JSON.stringify(deltas)) as unknown[], applyDeltaInPlace);
        expect(inPlace).toEqual(immutable);
      }),
      { numRuns: 3000 },
    );
  });

  it('a key both deleted and patched is patched from its value before the delta, and set last', () => {
    const before = JSON.parse('{"a":{"x":[1]},"b":2}') as Json;
    const delta = JSON.parse('{"o":{"a":{"o":{"y":{"r":3}}}},"d":["a"]}') as Delta;
    const expected = '{"b":2,"a":{"x":[1],"y":3}}';
    expect(JSON.stringify(applyDelta(before, delta))).toBe(expected);
    expect(JSON.stringify(applyDeltaInPlace(JSON.parse(JSON.stringify(before)) as Json, delta))).toBe(expected);
  });

  it('appends in place, to a list of any length (no spread of the items as arguments)', () => {
    const long = Array.from({ length: 200_000 }, (_, i) => i);
    const owned = { list: [0] } as Json;
    const after = applyDeltaInPlace(owned, { o: { list: { a: long } } } as unknown as Delta) as { list: number[] };
    expect(after).toBe(owned);
    expect(after.list).toHaveLength(200_001);
  });
});
