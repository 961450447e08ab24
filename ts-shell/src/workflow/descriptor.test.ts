/**
 * What the definition fingerprint counts. A change that cannot change which values a schema
 * accepts or returns (the order of an object's fields, a `.describe()`) must leave the fingerprint
 * as it is: a changed fingerprint refuses every run started before (DefinitionMismatchError). A
 * change that can (a field's type, a field made optional, a constraint) must change it. Runs
 * recorded under descriptor format 1, whose fingerprint counted both, continue after the upgrade.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { DESCRIPTOR_FORMAT, describeWorkflow, diffDescriptors, fingerprintOf, normalizeSchema } from './descriptor.js';
import { END, workflow, type Workflow } from './workflow.js';
import { canonicalJson } from '../json.js';

const LEAVES = [() => z.string(), () => z.number(), () => z.boolean(), () => z.string().min(2), () => z.array(z.number())] as const;

interface FieldSpec {
  name: string;
  leaf: number;
  optional: boolean;
  description: string | null;
}

const fieldSpec = fc.record({
  // "description" and "title" are also field names: a field is never taken for an annotation.
  name: fc.oneof(fc.constantFrom('description', 'title', 'required', 'enum', 'a', 'b', 'c'), fc.string({ minLength: 1, maxLength: 6 })),
  leaf: fc.nat({ max: LEAVES.length - 1 }),
  optional: fc.boolean(),
  description: fc.option(fc.string({ maxLength: 10 })),
});
const fieldSpecs = fc.uniqueArray(fieldSpec, { minLength: 1, maxLength: 6, selector: (f) => f.name });

function objectOf(fields: readonly FieldSpec[], withDescriptions: boolean): z.ZodObject {
  const shape: Record<string, z.ZodType> = Object.create(null);
  for (const f of fields) {
    let leaf: z.ZodType = LEAVES[f.leaf]!();
    if (withDescriptions && f.description !== null) leaf = leaf.describe(f.description);
    shape[f.name] = f.optional ? leaf.optional() : leaf;
  }
  return z.object(shape);
}

function flowOf(state: z.ZodObject, resume: z.ZodType = z.object({ ok: z.boolean() })): Workflow {
  return workflow({ name: 'shape', version: '1', state })
    .interrupt('ask', { resume, apply: () => ({}), next: 'done' })
    .pure('done', { run: () => ({}), next: END })
    .build();
}

/** The same fields in another order. */
const permuted = <T>(items: readonly T[]) => fc.shuffledSubarray([...items], { minLength: items.length, maxLength: items.length });

describe('the fingerprint counts what a schema accepts, not how it is written', () => {
  it('property: reordering fields and adding descriptions (state and resume schemas) keep the fingerprint', () => {
    fc.assert(
      fc.property(fieldSpecs.chain((fields) => fc.tuple(fc.constant(fields), permuted(fields), fc.string())), ([fields, reordered, note]) => {
        const plain = flowOf(objectOf(fields, false), objectOf(fields, false));
        const written = flowOf(objectOf(reordered, true).describe(note), objectOf(reordered, true));
        expect(written.fingerprintHex).toBe(plain.fingerprintHex);
      }),
    );
  });

  it('property: changing one field\'s type or optionality changes the fingerprint', () => {
    fc.assert(
      fc.property(fieldSpecs, fc.nat(), fc.boolean(), (fields, which, flipOptional) => {
        const i = which % fields.length;
        const f = fields[i]!;
        const changed = { ...f, ...(flipOptional ? { optional: !f.optional } : { leaf: (f.leaf + 1) % LEAVES.length }) };
        const other = fields.map((g, j) => (j === i ? changed : g));
        expect(flowOf(objectOf(other, false)).fingerprintHex).not.toBe(flowOf(objectOf(fields, false)).fingerprintHex);
      }),
    );
  });

  it('keeps a field named "description" and the members of an enum as a set', () => {
    const a = flowOf(z.object({ description: z.string() }));
    const b = flowOf(z.object({ description: z.number() }));
    expect(a.fingerprintHex).not.toBe(b.fingerprintHex);
    expect(flowOf(z.object({ k: z.enum(['x', 'y']) })).fingerprintHex).toBe(flowOf(z.object({ k: z.enum(['y', 'x']) })).fingerprintHex);
    expect(flowOf(z.object({ k: z.enum(['x', 'y']) })).fingerprintHex).not.toBe(flowOf(z.object({ k: z.enum(['x', 'z']) })).fingerprintHex);
  });

  it('keeps a key named __proto__ (the first releases\' canonical text dropped it)', () => {
    const withProto = JSON.parse('{"__proto__": {"type": "string"}, "a": 1}');
    expect(canonicalJson(withProto)).toBe('{"__proto__":{"type":"string"},"a":1}');
    expect(canonicalJson(withProto, { dropProtoKeys: true })).toBe('{"a":1}');
    const normalized = normalizeSchema({ properties: withProto }) as { properties: object };
    expect(Object.keys(normalized.properties)).toEqual(['__proto__', 'a']);
  });

  it('records format 5, and keeps the fingerprints of formats 1 to 4 of the same definition', () => {
    const state = () => z.object({ n: z.number().describe('a count').default(1), s: z.string().describe('a name').nullable() });
    const wf = flowOf(state());
    expect(wf.descriptor.format).toBe(DESCRIPTOR_FORMAT);
    expect(DESCRIPTOR_FORMAT).toBe(5);
    const former = ([1, 2, 3, 4] as const).map((format) => describeWorkflow({ ...wf, stateSchema: state() }, format));
    expect(former.map((d) => d.format)).toEqual([1, 2, 3, 4]);
    expect(wf.formerFingerprints).toEqual(former.map((d) => Buffer.from(fingerprintOf(d)).toString('hex')));
    expect(wf.formerFingerprints).not.toContain(wf.fingerprintHex);
  });

  /** Schemas whose JSON Schema zod writes in another form when a member carries a description. */
  const NESTED: readonly ((note: string | null) => z.ZodType)[] = [
    (note) => (note === null ? z.string() : z.string().describe(note)).nullable(),
    (note) => z.union([note === null ? z.number() : z.number().meta({ title: note }), z.boolean()]),
    (note) => z.intersection(note === null ? z.object({ p: z.string() }) : z.object({ p: z.string().describe(note) }).describe(note), z.object({ q: z.number() })),
    (note) => z.array((note === null ? z.string() : z.string().describe(note)).nullable()),
    (note) => {
      // A recursive schema: zod writes it in $defs, under an id numbered in the order it meets it.
      const tree: z.ZodType = z.lazy(() => z.object({ label: note === null ? z.string() : z.string().describe(note), kids: z.array(tree) }));
      return tree;
    },
    (note) => {
      const list: z.ZodType = z.lazy(() => z.object({ head: note === null ? z.number() : z.number().describe(note), tail: list.nullable() }));
      return list;
    },
  ];

  it('numbers recursive schemas inside a schema given an id (.meta({ id })) independently of field order', () => {
    const tree = (label: string) => {
      const node: z.ZodType = z.lazy(() => z.object({ [label]: z.number(), kids: z.array(node) }));
      return node;
    };
    const holder = (tFirst: boolean) => {
      const t = tree('x');
      const u = tree('y');
      return z.object(tFirst ? { t, u } : { u, t }).meta({ id: 'Holder' });
    };
    expect(flowOf(z.object({ h: holder(false) })).fingerprintHex).toBe(flowOf(z.object({ h: holder(true) })).fingerprintHex);
  });

  it('property: descriptions inside a nullable, a union, an intersection or a recursive schema, and the order of such fields, keep the fingerprint', () => {
    const fields = fc.uniqueArray(fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), kind: fc.nat({ max: NESTED.length - 1 }), note: fc.string({ minLength: 1, maxLength: 8 }) }),
      { minLength: 1, maxLength: 5, selector: (f) => f.name });
    const objectOfNested = (specs: readonly { name: string; kind: number; note: string }[], described: boolean) =>
      z.object(Object.fromEntries(specs.map((f) => [f.name, NESTED[f.kind]!(described ? f.note : null)])));
    fc.assert(
      fc.property(fields.chain((specs) => fc.tuple(fc.constant(specs), permuted(specs))), ([specs, reordered]) => {
        const plain = flowOf(objectOfNested(specs, false), objectOfNested(specs, false));
        const written = flowOf(objectOfNested(reordered, true), objectOfNested(reordered, true));
        expect(written.fingerprintHex).toBe(plain.fingerprintHex);
      }),
      { numRuns: 150 },
    );
  });
});

/**
 * Fields holding members of one cycle of mutually recursive schemas (`z.lazy`, or getters): zod
 * extracts into $defs the member it meets first, which follows the order of the fields.
 */
type CycleStyle = 'lazy' | 'getter';
interface CycleField { name: string; member: number; wrap: number; note: string }

/** Three schemas, each holding the next (optional) and a list of the first: a cycle made anew at each call. */
function cycleOf(style: CycleStyle): z.ZodType[] {
  const leaf = (i: number) => [z.string(), z.number(), z.boolean()][i]!;
  const members: z.ZodType[] = [];
  for (let i = 0; i < 3; i++) {
    const next = () => members[(i + 1) % 3]!.optional();
    const list = () => z.array(members[0]!);
    members.push(style === 'lazy'
      ? z.lazy(() => z.object({ [`v${i}`]: leaf(i), next: next(), list: list() }))
      : z.object({ [`v${i}`]: leaf(i), get next() { return next(); }, get list() { return list(); } }));
  }
  return members;
}

/** How a field holds its member: as it is, or in a wrapper zod writes with it (a $ref beside keywords when it is extracted). */
const WRAPS: readonly ((s: z.ZodType) => z.ZodType)[] = [
  (s) => s,
  (s) => s.optional(),
  (s) => s.nullable(),
  (s) => z.array(s),
  (s) => s.readonly(),
  (s) => s.catch(() => null as never),
  (s) => z.string().trim().pipe(z.string()).or(s),
];

describe('recursive schemas: field order, a shared schema and equal copies keep the fingerprint', () => {
  const cycleFields = fc.uniqueArray(
    fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd', 'e'), member: fc.nat({ max: 2 }), wrap: fc.nat({ max: WRAPS.length - 1 }), note: fc.string({ minLength: 1, maxLength: 6 }) }),
    { minLength: 1, maxLength: 5, selector: (f) => f.name },
  );
  const stateOf = (style: CycleStyle, fields: readonly CycleField[], described: boolean) => {
    const members = cycleOf(style);
    return z.object(Object.fromEntries(fields.map((f) => {
      const member = described ? members[f.member]!.describe(f.note) : members[f.member]!;
      return [f.name, WRAPS[f.wrap]!(member)];
    })));
  };

  it('property (found by a review): fields holding mutually recursive schemas (lazy or getters, wrapped or not) reordered and described, their cycle made anew, keep the fingerprint', () => {
    fc.assert(
      fc.property(fc.constantFrom<CycleStyle>('lazy', 'getter'), cycleFields.chain((fields) => fc.tuple(fc.constant(fields), permuted(fields))), (style, [fields, reordered]) => {
        const plain = flowOf(stateOf(style, fields, false), stateOf(style, fields, false));
        const written = flowOf(stateOf(style, reordered, true), stateOf(style, reordered, true));
        expect(written.fingerprintHex).toBe(plain.fingerprintHex);
      }),
      { numRuns: 150 },
    );
  });

  it('property: a schema used in several fields and equal schemas, one per field, have one fingerprint (recursive or not)', () => {
    const spellings = [
      () => z.object({ id: z.string().trim(), n: z.number().int().optional() }),
      () => { const tree: z.ZodType = z.lazy(() => z.object({ label: z.string(), kids: z.array(tree) })); return tree; },
      () => cycleOf('getter')[1]!,
    ];
    fc.assert(
      fc.property(fc.nat({ max: spellings.length - 1 }), fc.integer({ min: 2, max: 4 }), (which, count) => {
        const names = Array.from({ length: count }, (_, i) => `f${i}`);
        const one = spellings[which]!();
        const shared = flowOf(z.object(Object.fromEntries(names.map((n) => [n, one]))));
        const copies = flowOf(z.object(Object.fromEntries(names.map((n) => [n, spellings[which]!()]))));
        expect(copies.fingerprintHex).toBe(shared.fingerprintHex);
      }),
      { numRuns: 30 },
    );
  });

  it('reordered mutually recursive fields (z.lazy, the review\'s case): one fingerprint, and a run parked under one order resumes under the other', async () => {
    const org = (personFirst: boolean) => {
      const Person: z.ZodType = z.lazy(() => z.object({ name: z.string(), employer: Company.optional() }));
      const Company: z.ZodType = z.lazy(() => z.object({ title: z.string(), ceo: Person.optional() }));
      return z.object(personFirst ? { person: Person.optional(), company: Company.optional() } : { company: Company.optional(), person: Person.optional() });
    };
    expect(flowOf(org(false)).fingerprintHex).toBe(flowOf(org(true)).fingerprintHex);
    const core = await createCore('reference');
    const store = new MemoryStore();
    const parked = await new Remit(store, core, [flowOf(org(true))]).start('shape', {}, { runId: 'r' });
    expect((await new Remit(store, core, [flowOf(org(false))]).resume('r', parked.interrupt!.id, { ok: true })).status).toBe('completed');
  });

  it('a real change inside a cycle, or which member a field holds, still changes it', () => {
    const [a, b] = cycleOf('lazy');
    const [a2, b2] = cycleOf('getter');
    expect(flowOf(o({ x: a!, y: b! })).fingerprintHex).toBe(flowOf(o({ y: b2!, x: a2! })).fingerprintHex);
    expect(flowOf(o({ x: a! })).fingerprintHex).not.toBe(flowOf(o({ x: b! })).fingerprintHex);
    const B: z.ZodType = z.lazy(() => z.object({ v1: z.string(), next: C.optional(), list: z.array(A) }));
    const C: z.ZodType = z.lazy(() => z.object({ v2: z.boolean(), next: A.optional(), list: z.array(A) }));
    const A: z.ZodType = z.lazy(() => z.object({ v0: z.string(), next: B.optional(), list: z.array(A) }));
    expect(flowOf(o({ x: A, y: B })).fingerprintHex).not.toBe(flowOf(o({ x: a!, y: b! })).fingerprintHex);
  });
});

/**
 * Pairs of schemas that accept or return different values, and so must have different
 * fingerprints (a run must not continue under the other). Many of them JSON Schema alone does
 * not tell apart: the input side (strict, preprocess, prefault) or the zod notes (coercion,
 * checks that change a value or run code, regular-expression flags, types written as "any").
 */
const o = z.object;
const DIFFERENT: [string, z.ZodType, z.ZodType][] = [
  ['strict vs stripping object', o({ a: z.string() }).strict(), o({ a: z.string() })],
  ['nested strict object', o({ n: z.strictObject({ a: z.string() }) }), o({ n: o({ a: z.string() }) })],
  ['passthrough vs stripping', o({ a: z.string() }).passthrough(), o({ a: z.string() })],
  ['coerced number', o({ a: z.coerce.number() }), o({ a: z.number() })],
  ['coerced boolean', o({ a: z.coerce.boolean() }), o({ a: z.boolean() })],
  // Optional: a resume schema a required stringbool or string-to-number codec is part of has no value the log can keep (build() refuses it).
  ['stringbool vs boolean', o({ a: z.stringbool().optional() }), o({ a: z.boolean().optional() })],
  ['prefault vs default', o({ a: z.number().prefault(0) }), o({ a: z.number().default(0) })],
  ['preprocess added', o({ a: z.preprocess((v) => Number(v), z.number()) }), o({ a: z.number() })],
  ['codec added', o({ a: z.codec(z.string(), z.number(), { decode: Number, encode: String }).optional() }), o({ a: z.number().optional() })],
  ['trim added', o({ a: z.string().trim() }), o({ a: z.string() })],
  ['toLowerCase added', o({ a: z.string().toLowerCase() }), o({ a: z.string() })],
  ['refine added', o({ a: z.string().refine((v) => v.length > 2) }), o({ a: z.string() })],
  ['transform added', o({ a: z.string().transform((v) => v) }), o({ a: z.string() })],
  ['regex flags', o({ a: z.string().regex(/abc/) }), o({ a: z.string().regex(/abc/i) })],
  ['url protocol', o({ a: z.url({ protocol: /^https$/ }) }), o({ a: z.url() })],
  ['exact optional vs optional', o({ a: z.string().exactOptional() }), o({ a: z.string().optional() })],
  // Optional: a resume schema a required Date or Map is part of has no value the log can keep (build() refuses it).
  ['date vs map', o({ a: z.date().optional() }), o({ a: z.map(z.string(), z.string()).optional() })],
  ['date vs any', o({ a: z.date().optional() }), o({ a: z.any() })],
  ['custom vs any', o({ a: z.custom<string>((v) => typeof v === 'string') }), o({ a: z.any() })],
  ['optional vs nullable', o({ a: z.string().optional() }), o({ a: z.string().nullable() })],
  ['default added', o({ a: z.number().default(0) }), o({ a: z.number() })],
  ['catch vs default', o({ a: z.number().catch(0) }), o({ a: z.number().default(0) })],
  ['union order (the first match wins)', o({ a: z.union([z.string(), z.number()]) }), o({ a: z.union([z.number(), z.string()]) })],
  ['record vs partial record', o({ a: z.record(z.enum(['x', 'y']), z.number()) }), o({ a: z.partialRecord(z.enum(['x', 'y']), z.number()) })],
  ['catchall types', o({ a: z.string() }).catchall(z.number()), o({ a: z.string() }).catchall(z.string())],
  ['tuple rest', o({ a: z.tuple([z.string()], z.number()) }), o({ a: z.tuple([z.string()]) })],
];

describe('schemas that accept or return different values have different fingerprints', () => {
  it.each(DIFFERENT)('%s (state and resume schemas)', (_name, a, b) => {
    expect(flowOf(a as z.ZodObject).fingerprintHex).not.toBe(flowOf(b as z.ZodObject).fingerprintHex);
    expect(flowOf(o({}), a).fingerprintHex).not.toBe(flowOf(o({}), b).fingerprintHex);
  });

  it('a resume value the run\'s schema refused is still refused after a change JSON Schema alone does not show', async () => {
    const core = await createCore('reference');
    const store = new MemoryStore();
    const strictResume = o({ code: z.string().regex(/^[A-Z]+$/), amount: z.number() });
    const looseResume = o({ code: z.string().regex(/^[A-Z]+$/i), amount: z.coerce.number() });
    const parked = await new Remit(store, core, [flowOf(o({}), strictResume)]).start('shape', {}, { runId: 'r' });
    const refused = await new Remit(store, core, [flowOf(o({}), looseResume)]).resume('r', parked.interrupt!.id, { code: 'lower', amount: '5' }).then(() => null, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'REMIT_DEFINITION_MISMATCH', runId: 'r' });
    expect((refused as { differences: string[] }).differences).toEqual(['resume schema of ask: field amount changed', 'resume schema of ask: field code changed']);
  });
});

/** A check of a kind this zod does not have (a later zod may add one): it refuses "x". */
function futureCheck(): z.core.$ZodCheck<string> {
  const check = new z.core.$ZodCheck({ check: 'future_kind' as never, level: 2 } as never) as z.core.$ZodCheck<string>;
  check._zod.check = (payload) => {
    if (payload.value === 'x') payload.issues.push({ code: 'custom', message: 'no x', input: payload.value, inst: check } as never);
  };
  return check;
}

const jwtHs512 = `${Buffer.from('{"alg":"HS512","typ":"JWT"}').toString('base64url')}.e30.sig`;

/**
 * Edits that change which values a schema accepts, or what it returns, and that zod's JSON Schema
 * does not show (format 4 gave both sides one fingerprint): each with a value the two treat differently.
 */
const ACCEPT_CHANGING: [string, z.ZodType, z.ZodType, unknown][] = [
  ['a z.property() check added', z.string(), z.string().check(z.property('length', z.number().min(3))), 'ab'],
  ['the schema of a z.property() check changed', z.string().check(z.property('length', z.number().min(2))), z.string().check(z.property('length', z.number().min(3))), 'ab'],
  ['a z.properties() check changed', o({ a: z.string() }).check(z.properties({ a: z.string().min(2) } as never)), o({ a: z.string() }).check(z.properties({ a: z.string().min(3) } as never)), { a: 'ab' }],
  ['z.jwt() given an alg', z.jwt(), z.jwt({ alg: 'HS256' }), jwtHs512],
  ['z.url() normalizing', z.url(), z.url({ normalize: true }), 'HTTP://EXAMPLE.com:80/a/../b'],
  ['.min(1).trim() made .trim().min(1)', z.string().min(1).trim(), z.string().trim().min(1), ' '],
  ['.min(1).trim().min(3) made .min(3).trim().min(1)', z.string().min(1).trim().min(3), z.string().min(3).trim().min(1), ' ab '],
  ['.trim() under .catch()', z.string().catch(''), z.string().trim().catch(''), ' a '],
  ['.trim() in what a pipe accepts', z.string().pipe(z.string()), z.string().trim().pipe(z.string()), ' a '],
  ['coercion under .catch()', z.number().catch(0), z.coerce.number().catch(0), '5'],
  ['.trim() under .nonoptional()', z.string().optional().nonoptional(), z.string().trim().optional().nonoptional(), ' a '],
  ['a date\'s minimum', z.date().min(new Date(0)).optional(), z.date().min(new Date(1000)).optional(), new Date(500)],
  ['a divisor of 0 (JSON Schema cannot write it)', z.number(), z.number().multipleOf(0), 4],
  ['a check of a kind this zod does not know', z.string(), z.string().check(futureCheck()), 'x'],
];

describe('an edit that changes what a schema accepts or returns changes the fingerprint, also where JSON Schema does not show it', () => {
  const outcome = (schema: z.ZodType, value: unknown) => canonicalJson(schema.safeParse(value).success ? { data: schema.safeParse(value).data ?? null } : 'refused');

  it.each(ACCEPT_CHANGING)('%s (found by a review; state and resume schemas)', (_name, before, after, value) => {
    expect(outcome(after, value)).not.toBe(outcome(before, value));
    expect(flowOf(o({ f: after })).fingerprintHex).not.toBe(flowOf(o({ f: before })).fingerprintHex);
    expect(flowOf(o({}), o({ f: after })).fingerprintHex).not.toBe(flowOf(o({}), o({ f: before })).fingerprintHex);
  });

  it('a parked run is refused at resume, naming the field, rather than continued and then refused by the state schema (the review\'s case)', async () => {
    const core = await createCore('reference');
    const store = new MemoryStore();
    const base = { orderId: z.string(), amount: z.number() };
    const parked = await new Remit(store, core, [flowOf(o(base))]).start('shape', { orderId: 'o1', amount: 5 }, { runId: 'r' });
    const checked = flowOf(o(base).check(z.property('orderId', z.string().min(5))) as unknown as z.ZodObject);
    await expect(new Remit(store, core, [checked]).resume('r', parked.interrupt!.id, { ok: true })).rejects.toMatchObject({ code: 'REMIT_DEFINITION_MISMATCH' });
  });

  it('spellings that accept the same values keep one fingerprint (a format schema or its check; options that only say how an issue is reported)', () => {
    const same: [z.ZodType, z.ZodType][] = [
      [z.email(), z.string().email()],
      [z.url(), z.string().url()],
      [z.int(), z.number().int()],
      [z.iso.datetime(), z.string().datetime()],
      [z.string().min(1).max(5), z.string().max(5).min(1)],
      [z.string().min(3, { abort: true, error: 'short' }), z.string().min(3)],
      [z.string().trim().describe('a name'), z.string().trim()],
      [z.string().refine(() => true, { path: ['x'], message: 'no' }), z.string().refine(() => true)],
    ];
    for (const [a, b] of same) expect(flowOf(o({ f: a })).fingerprintHex).toBe(flowOf(o({ f: b })).fingerprintHex);
  });

  it('a length check\'s `when` is not noted: zod gives each its own, a new function in some releases (another copy of zod keeps the fingerprint)', () => {
    const otherCopy = z.string().min(1);
    (otherCopy._zod.def.checks![0]!._zod.def as { when?: unknown }).when = () => true;
    expect(flowOf(o({ f: otherCopy })).fingerprintHex).toBe(flowOf(o({ f: z.string().min(1) })).fingerprintHex);
  });
});

describe('a changed schema is named field by field', () => {
  const diff = (a: z.ZodObject, b: z.ZodObject) => diffDescriptors(flowOf(a).descriptor, flowOf(b).descriptor);

  it('names a field made optional or required, and a change of what happens to fields the schema does not name', () => {
    expect(diff(o({ a: z.string(), b: z.number() }), o({ a: z.string().optional(), b: z.number() }))).toEqual(['state schema: field a is now optional']);
    expect(diff(o({ a: z.string().optional() }), o({ a: z.string() }))).toEqual(['state schema: field a is now required']);
    expect(diff(o({ a: z.string() }), o({ a: z.string() }).passthrough())).toEqual([
      'state schema: what it does with fields it does not name changed (strict, stripping, passthrough or catchall)',
    ]);
    // Strict and stripping differ only in what the schema accepts.
    expect(diff(o({ a: z.string() }), o({ a: z.string() }).strict())).toEqual([
      'state schema (the values it accepts): what it does with fields it does not name changed (strict, stripping, passthrough or catchall)',
    ]);
    expect(diff(o({ a: z.string() }), o({ a: z.string() }).refine(() => true))).toEqual(['state schema changed (a constraint, a check or a type that is not a field\'s)']);
    // A transform of the whole is one change, said once (not again for the values it accepts).
    expect(diff(o({ a: z.string() }), o({ a: z.string() }).transform((s) => s) as unknown as z.ZodObject)).toEqual(['state schema changed']);
  });

  // From a review of deploys: the descriptor numbers the recursive parts in the order its walk
  // meets them, and fields were compared by their own text, references and all: a change inside
  // one field's recursive type renumbered another's references and named that field, never the
  // one that changed, and a change inside a part showed as "not a field's".
  it('names the field whose recursive type changed, and no other (regression)', () => {
    const tree = (extra: boolean) => {
      const T: z.ZodType = z.object({ name: z.string(), ...(extra ? { size: z.number() } : {}), get kids(): z.ZodArray<z.ZodType> { return z.array(T); } });
      return T;
    };
    const before = tree(false);
    const after = tree(true);
    expect(diff(o({ t: before, u: before }), o({ t: after, u: before }))).toEqual(['state schema: field t changed']);
    expect(diff(o({ id: z.string(), t: before }), o({ id: z.string(), t: after }))).toEqual(['state schema: field t changed']);
    expect(diff(o({ u: before }), o({ t: before, u: before }))).toEqual(['state schema: field t added']);
    // Unchanged, however the parts are numbered: nothing named.
    expect(diff(o({ t: before, u: tree(false) }), o({ t: tree(false), u: before }))).toEqual([]);
  });

  it('names only the changed field of a recursive state (a field holding the whole state is not named for it), and a field named $defs', () => {
    const state = (nameType: z.ZodType) => {
      const R: z.ZodObject = o({ name: nameType, get kids() { return z.array(R); } });
      return R;
    };
    expect(diff(state(z.string()), state(z.number()))).toEqual(['state schema: field name changed']);
    expect(diff(o({ meta: o({ $defs: z.string() }) }), o({ meta: o({ $defs: z.number() }) }))).toEqual(['state schema: field meta changed']);
  });

  it('names the one changed field among many that refer to mutually recursive parts, and nothing else (from a review: a budgeted expansion took seconds and added a false line)', () => {
    const parts = (count: number) => {
      const made: z.ZodObject[] = [];
      for (let i = 0; i < count; i++) {
        const shape: Record<string, z.ZodType> = { [`x${i}`]: z.string() };
        for (let j = 0; j < count; j++) Object.defineProperty(shape, `r${j}`, { get: () => made[j]!.optional(), enumerable: true });
        made.push(o(shape));
      }
      return made;
    };
    const state = (z2: z.ZodType) => {
      const made = parts(8);
      const shape: Record<string, z.ZodType> = {};
      for (let f = 0; f < 200; f++) shape[`f${f}`] = made[f % 8]!;
      return o({ ...shape, z: z2 });
    };
    expect(diff(state(z.string()), state(z.number()))).toEqual(['state schema: field z changed']);
  });
});

/** `wf` as earlier releases built it: the descriptor and fingerprint of `format` (1 to 4). */
function asFormatOne(wf: Workflow, state: z.ZodObject, format: 1 | 2 | 3 | 4 = 1): Workflow {
  const descriptor = describeWorkflow({ ...wf, stateSchema: state }, format);
  const fingerprint = fingerprintOf(descriptor);
  return { ...wf, descriptor, fingerprint, fingerprintHex: Buffer.from(fingerprint).toString('hex'), formerFingerprints: [] };
}

describe('runs across the descriptor format change', async () => {
  const core = await createCore('reference');
  const State = () => z.object({ a: z.string().describe('first'), b: z.number() });

  async function parkedUnder(wf: Workflow) {
    const store = new MemoryStore();
    const parked = await new Remit(store, core, [wf]).start(wf, { a: 'x', b: 1 }, { runId: 'r' });
    expect(parked.status).toBe('parked');
    return { store, interruptId: parked.interrupt!.id };
  }

  it('a run started under the current format is resumed without computing the former fingerprints', async () => {
    const built = flowOf(State());
    let reads = 0;
    const counted: Workflow = Object.freeze({ ...built, get formerFingerprints() { reads++; return built.formerFingerprints; } });
    const { store, interruptId } = await parkedUnder(counted);
    expect((await new Remit(store, core, [counted]).resume('r', interruptId, { ok: true })).status).toBe('completed');
    expect(reads).toBe(0);
  });

  it('a run started under format 1 resumes under the same definition, built by this release', async () => {
    const current = flowOf(State());
    const { store, interruptId } = await parkedUnder(asFormatOne(current, State()));
    const done = await new Remit(store, core, [current]).resume('r', interruptId, { ok: true });
    expect(done.status).toBe('completed');
  });

  it('a run started under format 2 resumes under the same definition, built by this release', async () => {
    const state = () => z.object({ a: z.string().describe('first').nullable(), b: z.number() });
    const current = flowOf(state());
    const { store, interruptId } = await parkedUnder(asFormatOne(current, state(), 2));
    const done = await new Remit(store, core, [current]).resume('r', interruptId, { ok: true });
    expect(done.status).toBe('completed');
  });

  it('a run started under format 2 is told only of the real change, not of what format 3 writes differently', async () => {
    const state = () => z.object({ a: z.string().describe('first').nullable(), b: z.number() });
    const { store, interruptId } = await parkedUnder(asFormatOne(flowOf(state()), state(), 2));
    const bumped = workflow({ name: 'shape', version: '2', state: state() })
      .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: () => ({}), next: 'done' })
      .pure('done', { run: () => ({}), next: END })
      .build();
    const refused = await new Remit(store, core, [bumped]).resume('r', interruptId, { ok: true }).then(() => null, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'REMIT_DEFINITION_MISMATCH', differences: ['version changed from 1 to 2'] });
  });

  it('a run started under format 3 resumes after its fields were reordered and described', async () => {
    const { store, interruptId } = await parkedUnder(flowOf(State()));
    const rewritten = flowOf(z.object({ b: z.number().describe('second'), a: z.string() }).describe('the state'));
    const done = await new Remit(store, core, [rewritten]).resume('r', interruptId, { ok: true });
    expect(done.status).toBe('completed');
  });

  it('a run started under format 4 resumes under the same definition, built by this release (whose format-5 descriptor differs)', async () => {
    // A trimmed field under a default, and fields holding mutually recursive schemas: format 5 writes both otherwise.
    const state = () => {
      const Person: z.ZodType = z.lazy(() => z.object({ name: z.string(), employer: Company.optional() }));
      const Company: z.ZodType = z.lazy(() => z.object({ title: z.string(), ceo: Person.optional() }));
      return z.object({ a: z.string().trim().default('x'), b: z.number(), person: Person.optional(), company: Company.optional() });
    };
    const current = flowOf(state());
    const asFour = asFormatOne(current, state(), 4);
    expect(asFour.descriptor.format).toBe(4);
    expect(canonicalJson({ ...asFour.descriptor, format: 5 })).not.toBe(canonicalJson(current.descriptor));
    expect(current.formerFingerprints).toContain(asFour.fingerprintHex);
    const { store, interruptId } = await parkedUnder(asFour);
    expect((await new Remit(store, core, [current]).resume('r', interruptId, { ok: true })).status).toBe('completed');
  });

  it('a run started under format 4 is told of a change as format 4 says it, node order included (format 4 counted it)', async () => {
    const { store, interruptId } = await parkedUnder(asFormatOne(flowOf(State()), State(), 4));
    const changed = flowOf(z.object({ a: z.string(), b: z.string() }));
    await expect(new Remit(store, core, [changed]).resume('r', interruptId, { ok: true })).rejects.toMatchObject({ differences: ['state schema: field b changed'] });
    const reordered = workflow({ name: 'shape', version: '1', state: State() })
      .pure('done', { run: () => ({}), next: END })
      .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: () => ({}), next: 'done' })
      .startAt('ask')
      .build();
    const refused = await new Remit(store, core, [reordered]).resume('r', interruptId, { ok: true }).then(() => null, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'REMIT_DEFINITION_MISMATCH', differences: ['node order changed'] });
  });

  it('a run recorded in a descriptor format newer than this release reads (the review\'s case) is refused saying a newer release started it, not that the definition differs', async () => {
    const current = flowOf(State());
    const descriptor = { ...current.descriptor, format: DESCRIPTOR_FORMAT + 1 };
    const fingerprint = fingerprintOf(descriptor);
    const newer: Workflow = { ...current, descriptor, fingerprint, fingerprintHex: Buffer.from(fingerprint).toString('hex'), formerFingerprints: [] };
    const { store, interruptId } = await parkedUnder(newer);
    const refused = await new Remit(store, core, [current]).resume('r', interruptId, { ok: true }).then(() => null, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'REMIT_DEFINITION_MISMATCH', runId: 'r', workflow: 'shape' });
    const { message, differences } = refused as { message: string; differences: string[] };
    expect(differences).toEqual([`started by a newer REMIT release: its definition is recorded in descriptor format ${DESCRIPTOR_FORMAT + 1}, and this release reads formats up to ${DESCRIPTOR_FORMAT}`]);
    expect(message).toMatch(/^run of workflow shape was started by a newer REMIT release: .*; continue it with that release or a later one/);
    expect(message).not.toMatch(/descriptor differs|register the definition it was started under/);
  });

  it('a run started under format 1 is refused after a reorder, with a difference that says why', async () => {
    const { store, interruptId } = await parkedUnder(asFormatOne(flowOf(State()), State()));
    const reordered = flowOf(z.object({ b: z.number(), a: z.string().describe('first') }));
    const refused = await new Remit(store, core, [reordered]).resume('r', interruptId, { ok: true }).then(() => null, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'REMIT_DEFINITION_MISMATCH', runId: 'r' });
    expect((refused as { differences: string[] }).differences.join(' ')).toMatch(/descriptor format \(1, written by an earlier release\)/);
    expect((refused as { differences: string[] }).differences.join(' ')).not.toMatch(/fork/);
  });

  it('a real change is still refused, and named, whatever the format the run was started under', async () => {
    const changed = flowOf(z.object({ a: z.string(), b: z.string() }));
    for (const wf of [flowOf(State()), asFormatOne(flowOf(State()), State()), asFormatOne(flowOf(State()), State(), 2)]) {
      const { store, interruptId } = await parkedUnder(wf);
      const refused = await new Remit(store, core, [changed]).resume('r', interruptId, { ok: true }).then(() => null, (e: unknown) => e);
      expect(refused).toMatchObject({ code: 'REMIT_DEFINITION_MISMATCH', differences: ['state schema: field b changed'] });
    }
  });
});

describe('every change between two definitions is named, and nothing else', () => {
  /** The changes a deploy may combine, each with the one difference that names it. */
  const CHANGES = {
    version: 'version changed from 1 to 2',
    addNode: 'node extra added',
    removeNode: 'node b removed',
    route: 'node a route changed from ask to END',
    addField: 'state schema: field extra added',
    strict: 'state schema (the values it accepts): what it does with fields it does not name changed (strict, stripping, passthrough or catchall)',
    refine: 'state schema changed (a constraint, a check or a type that is not a field\'s)',
    resumeAddField: 'resume schema of ask: field by added',
    resumeStrict: 'resume schema of ask (the values it accepts): what it does with fields it does not name changed (strict, stripping, passthrough or catchall)',
  } as const;
  type Change = keyof typeof CHANGES;

  function definition(changes: ReadonlySet<Change>): Workflow {
    const has = (c: Change) => changes.has(c);
    const fields = { id: z.string(), n: z.number().optional(), ...(has('addField') ? { extra: z.string().optional() } : {}) };
    const object = has('strict') ? z.strictObject(fields) : z.object(fields);
    const state = has('refine') ? object.refine((s) => s.id !== '') : object;
    const resumeFields = { ok: z.boolean(), ...(has('resumeAddField') ? { by: z.string() } : {}) };
    const resume = has('resumeStrict') ? z.strictObject(resumeFields) : z.object(resumeFields);
    const adders: Record<string, (b: any) => any> = {
      a: (b) => b.pure('a', { run: () => ({}), next: has('route') ? END : 'ask' }),
      b: (b) => b.pure('b', { run: () => ({}), next: () => END }),
      ask: (b) => b.interrupt('ask', { resume, apply: () => ({}), next: () => END }),
    };
    const order = ['a', ...(has('removeNode') ? [] : ['b']), 'ask'];
    let builder: any = workflow({ name: 'deploy', version: has('version') ? '2' : '1', state: state as z.ZodObject });
    for (const name of order) builder = adders[name]!(builder);
    if (has('addNode')) builder = builder.pure('extra', { run: () => ({}), next: () => END });
    return builder.startAt('a').build();
  }

  it('property (found by a review): the order the builder adds the nodes in changes neither the fingerprint nor the differences (runs name nodes, never their place)', () => {
    const build = (order: readonly string[]) => {
      const adders: Record<string, (b: any) => any> = {
        p: (b) => b.pure('p', { run: () => ({}), next: 'charge' }),
        charge: (b) => b.effect('charge', { run: () => null, next: 'ask' }),
        ask: (b) => b.interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: () => ({}), next: END }),
        other: (b) => b.pure('other', { run: () => ({}), next: () => END }),
      };
      let builder: any = workflow({ name: 'order', version: '1', state: o({}) });
      for (const name of order) builder = adders[name]!(builder);
      return (builder.startAt('p').build() as Workflow);
    };
    const names = ['p', 'charge', 'ask', 'other'];
    fc.assert(
      fc.property(permuted(names), (order) => {
        expect(build(order).fingerprintHex).toBe(build(names).fingerprintHex);
        expect(diffDescriptors(build(names).descriptor, build(order).descriptor)).toEqual([]);
      }),
      { numRuns: 24 },
    );
  });

  it('a run parked under one node order resumes under another (the review\'s case)', async () => {
    const core = await createCore('reference');
    const state = o({ a: z.string() });
    const store = new MemoryStore();
    const v1 = workflow({ name: 'w', version: '1', state })
      .pure('p', { run: () => ({}), next: 'charge' }).effect('charge', { run: () => null, next: 'ask' })
      .interrupt('ask', { resume: z.null(), apply: () => ({}), next: END }).build();
    const parked = await new Remit(store, core, [v1]).start(v1, { a: 'x' }, { runId: 'n' });
    expect(parked.status).toBe('parked');
    const reordered = workflow({ name: 'w', version: '1', state })
      .interrupt('ask', { resume: z.null(), apply: () => ({}), next: END }).effect('charge', { run: () => null, next: 'ask' })
      .pure('p', { run: () => ({}), next: 'charge' }).startAt('p').build();
    expect((await new Remit(store, core, [reordered]).resume('n', parked.interrupt!.id, null)).status).toBe('completed');
  });

  it('property: the differences from the first definition to the changed one are exactly the changes made', () => {
    const changes = fc.uniqueArray(fc.constantFrom(...(Object.keys(CHANGES) as Change[])), { maxLength: 10 });
    fc.assert(
      fc.property(changes, (made) => {
        const differences = diffDescriptors(definition(new Set()).descriptor, definition(new Set(made)).descriptor);
        expect([...differences].sort()).toEqual(made.map((c) => CHANGES[c]).sort());
      }),
      { numRuns: 200 },
    );
  });
});

describe('a default\'s value is not described (format 4): the fingerprint is the same at every build', () => {
  /** Schemas whose defaults zod computes each time it writes their JSON Schema. */
  const calledDefaults = () => {
    let calls = 0;
    return o({
      id: z.string().default(() => `id-${++calls}`),
      at: z.string().default(() => new Date(Date.now() + ++calls).toISOString()),
      tags: z.array(z.string()).prefault(() => [`t${++calls}`]),
      level: z.number().catch(() => ++calls),
    });
  };

  it('function defaults, prefaults and catches, in the state and in a resume schema: one fingerprint for every build', () => {
    const state = calledDefaults();
    const resume = o({ ok: z.boolean(), note: z.string().default(() => String(Math.random())) });
    const builds = Array.from({ length: 4 }, () => flowOf(state, resume).fingerprintHex);
    expect(new Set(builds).size).toBe(1);
    // Schemas made anew (another process's build) too.
    expect(flowOf(calledDefaults(), resume).fingerprintHex).toBe(builds[0]);
  });

  it('a run parked under one build is resumed by another instance with its own build (a restarted service)', async () => {
    const core = await createCore('reference');
    const store = new MemoryStore();
    const resume = o({ ok: z.boolean(), note: z.string().default(() => String(Math.random())) });
    const parked = await new Remit(store, core, [flowOf(calledDefaults(), resume)]).start('shape', {}, { runId: 'r' });
    expect(parked.status).toBe('parked');
    const done = await new Remit(store, core, [flowOf(calledDefaults(), resume)]).resume('r', parked.interrupt!.id, { ok: true });
    expect(done.status).toBe('completed');
  });

  it('a constant default changed keeps the fingerprint (a value, like a transform\'s body, is not described); one added or removed changes it', () => {
    expect(flowOf(o({ a: z.number().default(0) })).fingerprintHex).toBe(flowOf(o({ a: z.number().default(1) })).fingerprintHex);
    expect(flowOf(o({ a: z.number().catch(0) })).fingerprintHex).toBe(flowOf(o({ a: z.number().catch(() => 1) })).fingerprintHex);
    expect(flowOf(o({ a: z.number().default(0) })).fingerprintHex).not.toBe(flowOf(o({ a: z.number() })).fingerprintHex);
    const described = flowOf(o({ a: z.number().default(7) })).descriptor;
    expect(JSON.stringify(described)).not.toContain('7');
    expect(JSON.stringify(described)).toContain('"defaulted":"default"');
  });

  it('a default that throws when zod calls it: build() refuses the workflow, naming the schema (it cannot be described)', () => {
    const config: { region?: string; missing?: string } = {};
    const throwing = o({ region: z.string().default(() => config.region!.toUpperCase()) });
    expect(() => flowOf(throwing)).toThrow(expect.objectContaining({ code: 'REMIT_DEFINITION_INVALID', field: 'state', message: expect.stringContaining('the state schema cannot be described') }));
    expect(() => flowOf(o({}), o({ ok: z.boolean(), when: z.string().prefault(() => config.region!) }))).toThrow(
      expect.objectContaining({ code: 'REMIT_DEFINITION_INVALID', node: 'ask', field: 'resume' }),
    );
    config.region = 'eu';
    expect(flowOf(throwing).descriptor.format).toBe(DESCRIPTOR_FORMAT);
    // A default of undefined, which zod cannot write either: the message says so.
    expect(() => flowOf(o({ region: z.string().optional().default((() => config.missing) as () => string) }))).toThrow(/a default or prefault whose value is undefined/);
  });

  it('a default on one use of a shared schema marks that use alone (the notes of the schema it wraps are not changed)', () => {
    const Name = z.string().trim();
    const shared = flowOf(o({ first: Name, nick: Name.default('anon') }));
    const separate = flowOf(o({ first: z.string().trim(), nick: z.string().trim().default('anon') }));
    expect(shared.fingerprintHex).toBe(separate.fingerprintHex);
    expect(JSON.stringify((shared.descriptor.state as { properties: { first: unknown } }).properties.first)).not.toContain('defaulted');
    // A default on the items of one array, not on the other field's: different definitions.
    const N = z.string().trim();
    expect(flowOf(o({ list: z.array(N), nick: N.default('a') })).fingerprintHex).not.toBe(flowOf(o({ list: z.array(N.default('b')), nick: N.default('a') })).fingerprintHex);
  });

  it('.meta() is not described: two schemas given one id (zod cannot write them) are told apart, and meta keys do not count', () => {
    const money = (note: z.ZodType) => o({ price: o({ cents: z.number().int() }).meta({ id: 'Money' }), fee: o({ cents: z.number().int() }).meta({ id: 'Money' }), note });
    const a = flowOf(money(z.string()));
    const b = flowOf(money(z.number()));
    expect(a.fingerprintHex).not.toBe(b.fingerprintHex);
    expect(JSON.stringify(a.descriptor)).not.toContain('unrepresentable');
    expect(flowOf(o({ n: z.number().meta({ id: 'N', owner: 'billing' }) })).fingerprintHex).toBe(flowOf(o({ n: z.number() })).fingerprintHex);
  });

  it('a run recorded under format 3 resumes under the same definition, and a change in it is named as format 3 says it', async () => {
    const core = await createCore('reference');
    const State = () => o({ a: z.string().default('x'), b: z.number() });
    const current = flowOf(State());
    const asFormatThree = (wf: Workflow): Workflow => {
      const descriptor = describeWorkflow({ ...wf, stateSchema: State() }, 3);
      const fingerprint = fingerprintOf(descriptor);
      return { ...wf, descriptor, fingerprint, fingerprintHex: Buffer.from(fingerprint).toString('hex'), formerFingerprints: [] };
    };
    const store = new MemoryStore();
    const parked = await new Remit(store, core, [asFormatThree(current)]).start('shape', { b: 1 }, { runId: 'r' });
    expect((await new Remit(store, core, [current]).resume('r', parked.interrupt!.id, { ok: true })).status).toBe('completed');
    const changed = flowOf(o({ a: z.string().default('x'), b: z.string() }));
    const other = await new Remit(store, core, [asFormatThree(current)]).start('shape', { b: 1 }, { runId: 'r2' });
    await expect(new Remit(store, core, [changed]).resume('r2', other.interrupt!.id, { ok: true })).rejects.toMatchObject({
      code: 'REMIT_DEFINITION_MISMATCH', differences: ['state schema: field b changed'],
    });
  });
});

describe('fixes from a review of format 5 (each test fails before its fix)', () => {
  /** Counts each time zod meets `schema` while writing a JSON Schema; past `limit`, stops zod (a run that would not end fails instead). */
  function counted<T extends z.ZodType>(schema: T, counter: { n: number }, limit: number): T {
    (schema._zod as { toJSONSchema?: () => undefined }).toJSONSchema = () => {
      if (++counter.n > limit) throw new Error(`met more than ${limit} times`);
      return undefined;
    };
    return schema;
  }

  /** A ring of `n` recursive types, each with a z.property check holding the next (the review's case: exponential before). */
  function ring(n: number, counter: { n: number }): z.ZodObject {
    const types: z.ZodType[] = [];
    for (let i = 0; i < n; i++) {
      const next = () => types[(i + 1) % n]!.optional();
      types.push(counted(z.lazy(() => z.object({ [`v${i}`]: z.string(), next: next() }).check(z.property('next', next()))), counter, 5_000));
    }
    return o({ a: types[0]! });
  }

  it('checks whose schemas hold other checked schemas: a ring of 8 recursive types is described with little work, each held schema once', () => {
    const counter = { n: 0 };
    // Before: each held schema written again inside each schema it holds (hours for 8; stopped here past the limit).
    const built = flowOf(ring(8, counter));
    // Each type is met once per z.toJSONSchema call: the state's two, and four per held schema (8).
    expect(counter.n).toBeLessThanOrEqual(8 * (2 + 8 * 4));
    const again = { n: 0 };
    expect(flowOf(ring(8, again)).fingerprintHex).toBe(built.fingerprintHex);
    // Within the ring, a held schema notes those on its cycle of checks as that, not in full again.
    expect(JSON.stringify(built.descriptor)).toContain('a schema that holds this check');
  });

  it('a chain of checks each holding the next, whose notes would double at each link, is refused by build() at once, naming the bound', () => {
    const counter = { n: 0 };
    let s: z.ZodType = z.number();
    for (let i = 0; i < 30; i++) s = counted(z.any().check(z.property('a', s)), counter, 20_000);
    expect(() => flowOf(o({ s }))).toThrow(expect.objectContaining({ code: 'REMIT_DEFINITION_INVALID', field: 'state', message: expect.stringMatching(/is too large to describe .* more than 20000 schema nodes/) }));
    expect(counter.n).toBeLessThan(10_000);
    // A short chain, and a checked schema that holds itself, are described.
    let short: z.ZodType = z.number();
    for (let i = 0; i < 3; i++) short = z.any().check(z.property('a', short));
    expect(flowOf(o({ short })).descriptor.format).toBe(DESCRIPTOR_FORMAT);
    const Tree: z.ZodType = z.lazy(() => o({ kids: z.array(Tree) }).check(z.property('kids', z.array(Tree).max(3))));
    expect(JSON.stringify(flowOf(o({ t: Tree })).descriptor)).toContain('a schema that holds this check');
  });

  it('a .describe(), .meta() or .refine() of a recursive schema with notes of its own: one fingerprint whatever zod extracts (field order, shared or copies)', () => {
    const refinedTree = () => {
      const T: z.ZodType = z.object({ v: z.string(), get kids() { return z.array(T).optional(); } }).refine(() => true);
      return T;
    };
    const describedInside = (describe: boolean) => {
      const T: z.ZodType = z.object({ v: z.string(), get kids() { return z.array(describe ? T.describe('child') : T).optional(); } }).refine(() => true);
      return T;
    };
    const refinedLazy = () => {
      const T: z.ZodType = z.lazy(() => o({ v: z.string(), kids: z.array(T).optional() })).refine(() => true);
      return T;
    };
    const caught = () => {
      const C: z.ZodType = z.lazy(() => o({ name: z.string(), next: C.optional() })).catch(() => ({ name: '' }));
      return C;
    };
    const T1 = refinedTree();
    const T2 = refinedLazy();
    const C = caught();
    const [C1, C2] = [caught(), caught()];
    const same: [string, z.ZodObject, z.ZodObject][] = [
      ['refined tree, described', o({ t: T1 }), o({ t: T1.describe('the tree') })],
      ['refined tree, meta', o({ t: T1 }), o({ t: T1.meta({ title: 'x' }) })],
      ['refined tree, described under optional', o({ t: refinedTree().optional() }), o({ t: refinedTree().describe('the tree').optional() })],
      ['described inside the cycle', o({ t: describedInside(false) }), o({ t: describedInside(true) })],
      ['refined lazy, described', o({ t: T2 }), o({ t: T2.describe('x') })],
      ['a refined caught lazy beside it, fields reordered', o({ x: C, y: C.refine(() => true) }), o({ y: C2.refine(() => true), x: C2 })],
      ['a refined caught lazy beside it, shared or copies', o({ x: C, y: C.refine(() => true) }), o({ x: C1, y: caught().refine(() => true) })],
      ['a refined and described clone, shared or copies', o({ x: C, y: C.refine(() => true).describe('r') }), o({ y: caught().refine(() => true).describe('r'), x: caught() })],
    ];
    for (const [what, a, b] of same) expect(flowOf(b).fingerprintHex, what).toBe(flowOf(a).fingerprintHex);
    // The refinement itself still counts.
    expect(flowOf(o({ x: C, y: C })).fingerprintHex).not.toBe(flowOf(o({ x: C, y: C.refine(() => true) })).fingerprintHex);
  });

  it('a parked run resumes after a .describe() on a refined recursive field (the review\'s case: refused, "field t changed")', async () => {
    const core = await createCore('reference');
    const tree = () => {
      const T: z.ZodType = z.object({ v: z.string(), get kids() { return z.array(T).optional(); } }).refine(() => true);
      return T;
    };
    const store = new MemoryStore();
    const parked = await new Remit(store, core, [flowOf(o({ t: tree().optional() }))]).start('shape', {}, { runId: 'r' });
    const described = flowOf(o({ t: tree().describe('the tree').optional() }));
    expect((await new Remit(store, core, [described]).resume('r', parked.interrupt!.id, { ok: true })).status).toBe('completed');
  });

  it('a stack overflow in zod (a .describe() of the recursive schema inside its z.lazy getter): build() says what is likely, not a throwing default', () => {
    const Category: z.ZodType = z.lazy(() => o({ name: z.string(), parent: Category.describe('the parent category').optional() }));
    expect(() => flowOf(o({ c: Category }))).toThrow(/Maximum call stack size exceeded.*a new copy of the recursive schema each time it is called.*outside the getter/);
    expect(() => flowOf(o({ c: Category }))).not.toThrow(/a default, prefault or catch function/);
    // What the message advises: the field described around the recursive schema.
    const Fixed: z.ZodType = z.lazy(() => o({ name: z.string(), parent: Fixed.optional().describe('the parent category') }));
    expect(flowOf(o({ c: Fixed })).descriptor.format).toBe(DESCRIPTOR_FORMAT);
  });

  it('a run recorded under format 4 of a state schema that refers to itself at its root is told only of the real change (not of an unchanged field)', async () => {
    const core = await createCore('reference');
    const State = () => {
      const S: z.ZodObject = z.object({ n: z.number(), get self() { return S.optional(); } });
      return S;
    };
    const build = (extra: boolean) => {
      const b = workflow({ name: 'shape', version: '1', state: State() })
        .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: () => ({}), next: 'done' })
        .pure('done', { run: () => ({}), next: END });
      return (extra ? b.pure('extra', { run: () => ({}), next: END }) : b).build();
    };
    const asFour = asFormatOne(build(false), State(), 4);
    const store = new MemoryStore();
    const parked = await new Remit(store, core, [asFour]).start('shape', { n: 1 }, { runId: 'r' });
    await expect(new Remit(store, core, [build(true)]).resume('r', parked.interrupt!.id, { ok: true })).rejects.toMatchObject({
      code: 'REMIT_DEFINITION_MISMATCH', differences: ['node extra added'],
    });
    expect((await new Remit(store, core, [build(false)]).resume('r', parked.interrupt!.id, { ok: true })).status).toBe('completed');
  });
});

describe('the bound on schema nodes is per schema, and its refusal says what it counted (each test fails before its fix)', () => {
  const resume = () => z.object({ approved: z.boolean(), approver: z.string(), note: z.string().optional(), at: z.number() });
  /** A chain of `n` interrupt nodes, each with its own small resume schema. */
  function interrupts(n: number): Workflow {
    let b: any = workflow({ name: 'asks', version: '1', state: z.object({ i: z.number() }) });
    for (let k = 0; k < n; k++) b = b.interrupt(`ask-${k}`, { resume: resume(), apply: () => ({}), next: k + 1 < n ? `ask-${k + 1}` : END });
    return b.build() as Workflow;
  }
  const optionalFields = (n: number) => z.object(Object.fromEntries(Array.from({ length: n }, (_, f) => [`f${f}`, z.string().optional()])));

  it('a definition of 2,000 interrupt nodes, each with a resume schema of 4 fields, is described (the whole definition has more than 20,000 schema nodes)', () => {
    // Before: one budget for the whole definition, refused from 1,667 such nodes, naming a small resume schema.
    const built = interrupts(2_000);
    expect(built.descriptor.nodes).toHaveLength(2_000);
    expect(built.descriptor.nodes.every((n) => n.resume !== undefined)).toBe(true);
  });

  it('a schema of 5,000 optional fields is refused naming that schema and what was counted, not z.property checks it does not have', () => {
    const asState = () => flowOf(optionalFields(5_000));
    expect(asState).toThrow(expect.objectContaining({ code: 'REMIT_DEFINITION_INVALID', field: 'state' }));
    const message = (() => { try { asState(); } catch (error) { return (error as Error).message; } return ''; })();
    expect(message).toMatch(/the state schema is too large to describe .* more than 20000 schema nodes \(the limit per schema; \d+ counted/);
    expect(message).toContain('counting the JSON Schema of what it gives and of what it accepts');
    expect(message).toContain('a schema of thousands of fields is the usual cause');
    expect(message).not.toContain('z.property');
    // As a resume schema beside a small state: that resume schema is named, with its node.
    expect(() => flowOf(z.object({ n: z.number() }), optionalFields(5_000))).toThrow(expect.objectContaining({
      node: 'ask', field: 'resume', message: expect.stringMatching(/the resume schema of ask is too large to describe .* more than 20000 schema nodes/),
    }));
    // Just under the bound (4,999 fields, both forms counted): described.
    expect(flowOf(optionalFields(4_999)).descriptor.format).toBe(DESCRIPTOR_FORMAT);
  });

  it('a large schema is named, not a small one described after it', () => {
    // 4,000 optional fields (about 16,000 nodes) in the state, then small resume schemas: before, the
    // budget of the whole definition ran out in one of those, which the refusal named.
    let b: any = workflow({ name: 'mixed', version: '1', state: optionalFields(4_000) });
    for (let k = 0; k < 400; k++) b = b.interrupt(`ask-${k}`, { resume: resume(), apply: () => ({}), next: k + 1 < 400 ? `ask-${k + 1}` : END });
    expect((b.build() as Workflow).descriptor.nodes).toHaveLength(400);
  });

  it('a chain of z.property checks past the bound is refused, its message naming the checks as the cause', () => {
    let s: z.ZodType = z.number();
    for (let i = 0; i < 30; i++) s = z.any().check(z.property('a', s));
    expect(() => flowOf(o({ s }))).toThrow(expect.objectContaining({
      field: 'state', message: expect.stringMatching(/more than 20000 schema nodes .*the schemas its z\.property\(\) checks hold, written in the note of each check that holds them \(\d+ of the nodes\): checks whose schemas hold other checked schemas/),
    }));
  });
});

describe('the schemas checks hold are written once for the whole definition, whose schema nodes are bounded too (the refusals of a definition fail before the fix; the fingerprints are those before it)', () => {
  /** A ring of `n` recursive types, each with a z.property check holding the next (optional). */
  function ringOf(n: number, seen?: (schema: z.ZodType) => z.ZodType): z.ZodType[] {
    const types: z.ZodType[] = [];
    for (let i = 0; i < n; i++) {
      const next = () => types[(i + 1) % n]!.optional();
      const type = z.lazy(() => z.object({ [`v${i}`]: z.string(), next: next() }).check(z.property('next', next())));
      types.push(seen === undefined ? type : seen(type));
    }
    return types;
  }
  /** Counts each time zod meets `schema` while writing a JSON Schema. */
  const counting = (counter: { n: number }) => <T extends z.ZodType>(schema: T): T => {
    (schema._zod as { toJSONSchema?: () => undefined }).toJSONSchema = () => {
      counter.n++;
      return undefined;
    };
    return schema;
  };
  /** A definition whose `k` interrupt nodes each have a resume schema whose check holds `held(k)`. */
  function holders(k: number, held: (i: number) => z.ZodType, state: z.ZodObject = o({ n: z.number() })): Workflow {
    let b: any = workflow({ name: 'holders', version: '1', state });
    for (let i = 0; i < k; i++) b = b.interrupt(`ask-${i}`, { resume: o({ x: z.any() }).check(z.property('x', held(i))), apply: () => ({}), next: i + 1 < k ? `ask-${i + 1}` : END });
    return b.build() as Workflow;
  }
  const message = (f: () => unknown): string => {
    try {
      f();
    } catch (error) {
      return (error as Error).message;
    }
    return 'built';
  };
  const optionalFields = (n: number) => o(Object.fromEntries(Array.from({ length: n }, (_, f) => [`f${f}`, z.string().optional()])));

  it('100 resume schemas whose checks hold a shared ring of 8 recursive types: refused past the bound of the definition, each type written once (the review\'s case: 12 s and 11 MB before)', () => {
    const counter = { n: 0 };
    const ring = ringOf(8, counting(counter));
    // Eight such schemas (each about 3,000 nodes with its note) are described.
    expect(holders(8, (i) => ring[i % 8]!).descriptor.nodes).toHaveLength(8);
    const eight = counter.n;
    counter.n = 0;
    const refusal = message(() => holders(100, (i) => ring[i % 8]!));
    expect(refusal).toMatch(/^workflow holders: the definition is too large to describe for its fingerprint: its schemas together have more than 200000 schema nodes \(the limit per definition, each schema under its own limit of 20000; \d+ counted where the count stopped, at .* of the resume schema of ask-\d+\)/);
    expect(refusal).toMatch(/the schemas their z\.property\(\) checks hold, written in the note of each check that holds them, in each schema again \(\d+ of the nodes\): many schemas whose checks hold one large schema/);
    // Before, each resume schema wrote the ring again: zod met its types about 12 times as often.
    expect(counter.n).toBeLessThanOrEqual(eight);
    expect(() => holders(100, (i) => ring[i % 8]!)).toThrow(expect.objectContaining({ code: 'REMIT_DEFINITION_INVALID', workflow: 'holders', node: undefined, field: undefined }));
  });

  it('schemas each under their own bound, past the bound of the definition together, are refused saying what was counted, not z.property checks they do not have', () => {
    // The state and 10 resume schemas of 4,900 optional fields: about 19,600 nodes each.
    let b: any = workflow({ name: 'wide', version: '1', state: optionalFields(4_900) });
    for (let k = 0; k < 10; k++) b = b.interrupt(`ask-${k}`, { resume: optionalFields(4_900), apply: () => ({}), next: k + 1 < 10 ? `ask-${k + 1}` : END });
    const refusal = message(() => b.build());
    expect(refusal).toMatch(/^workflow wide: the definition is too large to describe for its fingerprint: its schemas together have more than 200000 schema nodes \(the limit per definition, each schema under its own limit of 20000; 200001 counted where the count stopped, at properties\.f\d+ of the resume schema of ask-9\)/);
    expect(refusal).toContain('counting the JSON Schema of what the state schema and each resume schema give and accept, each field, item and wrapper such as .optional() a node: ');
    expect(refusal).toContain('split the definition into several workflows');
    expect(refusal).not.toContain('z.property');
  });

  it('a large schema met before the bound of the definition is reached is still named, in a definition past that bound too', () => {
    let b: any = workflow({ name: 'wide', version: '1', state: optionalFields(4_900) });
    for (let k = 0; k < 10; k++) b = b.interrupt(`ask-${k}`, { resume: optionalFields(k === 0 ? 5_000 : 4_900), apply: () => ({}), next: k + 1 < 10 ? `ask-${k + 1}` : END });
    expect(() => b.build()).toThrow(expect.objectContaining({ node: 'ask-0', field: 'resume', message: expect.stringMatching(/the resume schema of ask-0 is too large to describe .* more than 20000 schema nodes \(the limit per schema;/) }));
  });

  /**
   * Definitions whose schemas hold the same schemas through their checks, entered at different
   * places, and their fingerprints as the release before this change computed them (each schema
   * with its own record of held schemas): a held schema's note is the same whichever schema of the
   * definition wrote it first, so sharing the record changes no fingerprint.
   */
  const SHARED_HELD: [string, () => Workflow, string][] = [
    ['a checked schema held by the state and two resume schemas', () => {
      const H = o({ x: z.number() }).check(z.property('x', z.number().min(0)));
      return workflow({ name: 'p', version: '1', state: o({ h: z.any() }).check(z.property('h', H)) })
        .interrupt('i', { resume: o({ h: z.any() }).check(z.property('h', H)), apply: () => ({}), next: 'j' })
        .interrupt('j', { resume: o({ k: z.any() }).check(z.property('k', H)), apply: () => ({}), next: END }).build();
    }, 'd638208158294135adf61550af841d0af6202fbcacfaca5871aeb370ee0a4456'],
    ['a ring of 4 held at different members by the state (as a field) and two resume schemas (as fields)', () => {
      const t = ringOf(4);
      return workflow({ name: 'r', version: '1', state: o({ a: t[0]!.optional() }) })
        .interrupt('i', { resume: o({ b: t[2]! }), apply: () => ({}), next: 'j' })
        .interrupt('j', { resume: o({ c: t[1]!, d: t[3]! }), apply: () => ({}), next: END }).build();
    }, 'a0ef27b7f39ea6334a12f42b4a48a53f9a021799d1930a91f62edf107aebb9f0'],
    ['a ring of 3, a resume schema entering it where the state only reaches inside the cycle', () => {
      const t = ringOf(3);
      const X = o({ q: z.any() }).check(z.property('q', t[1]!));
      return workflow({ name: 'r2', version: '1', state: o({ a: z.any() }).check(z.property('a', t[0]!)) })
        .interrupt('i', { resume: X, apply: () => ({}), next: 'j' })
        .interrupt('j', { resume: o({ z: z.any() }).check(z.property('z', X)), apply: () => ({}), next: END }).build();
    }, '15f798a6c6c7888af41874f04b188bd2f86d0e13abdd8c8251667a891785cbb3'],
    ['a chain of 8 checks in the state and a resume schema', () => {
      let s: z.ZodType = z.number();
      for (let i = 0; i < 8; i++) s = z.any().check(z.property('a', s));
      return workflow({ name: 'c', version: '1', state: o({ s }) }).interrupt('i', { resume: o({ s }), apply: () => ({}), next: END }).build();
    }, 'e2a9e1f9fa2964572096e79cec40b38df142e50e2d708e6f3aadeb155bdac798'],
    ['a held schema holding another, the inner one held alone by a resume schema described first', () => {
      const inner = o({ v: z.string() }).check(z.property('v', z.string().min(2)));
      const outer = o({ w: z.any() }).check(z.property('w', inner));
      return workflow({ name: 'n', version: '1', state: o({ n: z.number() }) })
        .interrupt('a', { resume: o({ x: z.any() }).check(z.property('x', inner)), apply: () => ({}), next: 'b' })
        .interrupt('b', { resume: o({ y: z.any() }).check(z.property('y', outer)), apply: () => ({}), next: END }).build();
    }, '08d6c10436d5bafb63cd28ff2c2133182455d56af6cdbf95e7bc2d67e2153922'],
    ['the same, the outer one described first', () => {
      const inner = o({ v: z.string() }).check(z.property('v', z.string().min(2)));
      const outer = o({ w: z.any() }).check(z.property('w', inner));
      return workflow({ name: 'n', version: '1', state: o({ n: z.number() }) })
        .interrupt('b', { resume: o({ x: z.any() }).check(z.property('x', inner)), apply: () => ({}), next: 'a' })
        .interrupt('a', { resume: o({ y: z.any() }).check(z.property('y', outer)), apply: () => ({}), next: END }).build();
    }, '984af4fad3d446e7cfff99b3556afee12136588a1bc95239e2faa70045c594ff'],
    ['8 resume schemas whose checks hold a shared ring of 8, each at another member', () => holders(8, (() => { const t = ringOf(8); return (i: number) => t[i]!; })()), 'db423fe65d6bfe857c566a6aaab62ca639b7b954fa8ca735f783d680fe90943d'],
    ['the same ring held by the state at one member, in the order the resume schemas are described', () => holders(8, (() => { const t = ringOf(8); return (i: number) => t[7 - i]!; })(), o({ s: z.any() }).check(z.property('s', ringOf(8)[5]!))), 'e07a8d22f6bc6f4216d0aa8ee13ee7a589edc60de50429af1d4476c9f5317e1f'],
  ];

  it.each(SHARED_HELD)('table: %s has the fingerprint it had before', (_, build, fingerprint) => {
    expect(build().fingerprintHex).toBe(fingerprint);
  });

  it('property: each schema of a definition is described as it is alone, whichever of the definition\'s schemas hold the same schemas through their checks, in whichever order', () => {
    /** Held schemas made anew: a ring of 3, a chain of checks, a checked object holding a ring member. */
    const pool = (): z.ZodType[] => {
      const t = ringOf(3);
      let chain: z.ZodType = z.string();
      for (let i = 0; i < 3; i++) chain = z.any().check(z.property('a', chain));
      const holdsRing = o({ r: z.any() }).check(z.property('r', t[1]!));
      return [...t, chain, holdsRing, o({ c: z.any() }).check(z.property('c', chain))];
    };
    const holding = fc.uniqueArray(fc.nat({ max: 5 }), { minLength: 1, maxLength: 3 });
    const schemaOf = (held: z.ZodType[], picks: readonly number[], asField: boolean) => {
      const fields = Object.fromEntries(picks.map((p, f) => [`h${f}`, asField ? held[p]!.optional() : z.any()]));
      let schema: z.ZodType = o(fields);
      if (!asField) picks.forEach((p, f) => (schema = (schema as z.ZodObject).check(z.property(`h${f}`, held[p]!))));
      return schema as z.ZodObject;
    };
    fc.assert(
      fc.property(
        fc.record({ picks: holding, asField: fc.boolean() }),
        fc.uniqueArray(fc.record({ name: fc.stringMatching(/^[a-z]{1,3}$/), picks: holding, asField: fc.boolean() }), { minLength: 1, maxLength: 4, selector: (r) => r.name }),
        (state, resumes) => {
          const held = pool();
          const stateSchema = schemaOf(held, state.picks, state.asField);
          let b: any = workflow({ name: 'shared', version: '1', state: stateSchema });
          resumes.forEach((r, i) => (b = b.interrupt(r.name, { resume: schemaOf(held, r.picks, r.asField), apply: () => ({}), next: i + 1 < resumes.length ? resumes[i + 1]!.name : END })));
          const whole = (b.build() as Workflow).descriptor;
          // Each schema alone, made anew with held schemas of its own: no record of the others' held schemas.
          const stateAlone = workflow({ name: 'shared', version: '1', state: schemaOf(pool(), state.picks, state.asField) }).pure('p', { run: () => ({}), next: END }).build();
          expect(canonicalJson(whole.state)).toBe(canonicalJson(stateAlone.descriptor.state));
          expect(canonicalJson(whole.stateInput ?? null)).toBe(canonicalJson(stateAlone.descriptor.stateInput ?? null));
          for (const r of resumes) {
            const resumeAlone = flowOf(o({ n: z.number() }), schemaOf(pool(), r.picks, r.asField)).descriptor.nodes.find((n) => n.name === 'ask')!;
            const inWhole = whole.nodes.find((n) => n.name === r.name)!;
            expect(canonicalJson(inWhole.resume ?? null)).toBe(canonicalJson(resumeAlone.resume ?? null));
            expect(canonicalJson(inWhole.resumeInput ?? null)).toBe(canonicalJson(resumeAlone.resumeInput ?? null));
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('the differences of very large definitions', () => {
  it('two definitions of 70,000 nodes whose names all differ are compared (the lines were spread into one call, which overflowed the stack)', () => {
    const nodes = (prefix: string) => Array.from({ length: 70_000 }, (_, i) => ({ name: `${prefix}${i}`, kind: 'pure' }));
    const recorded = { format: DESCRIPTOR_FORMAT, name: 'w', version: '1', start: 'a0', nodes: nodes('a'), state: {} } as unknown as Parameters<typeof diffDescriptors>[0];
    const current = { ...recorded, start: 'b0', nodes: nodes('b') } as Parameters<typeof diffDescriptors>[0];
    const lines = diffDescriptors(recorded, current);
    expect(lines.length).toBeGreaterThan(70_000);
  });
});
