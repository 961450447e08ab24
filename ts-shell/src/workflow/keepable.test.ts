/**
 * build()'s check of a resume schema (keepable.ts) against what the resume path does: for random
 * schemas made of JSON types, types without a JSON form (z.date(), z.bigint(), z.map(), ...) and
 * the ways zod combines them, build() refuses exactly the schemas for which no value resumes a
 * parked run. Each schema comes with candidate values (a value it keeps whenever it has one, and
 * tempting ones that it does not keep: a Date for z.date(), its ISO string, 1n, a Map, ...); each
 * candidate is tried by an actual park and resume.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { DefinitionInvalidError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow, type Workflow } from './workflow.js';

const core = await createCore('reference');
const ISO = '2024-01-01T00:00:00.000Z';

class Account {
  id = 'a';
}

/** A schema, how it is written (for a counterexample's report), and values to resume with. */
interface Arb {
  schema: z.ZodType;
  show: string;
  candidates: unknown[];
  /** Its candidates are JSON a default may hold (z.string().default('a')). */
  json: boolean;
}

const leaf = (show: string, schema: z.ZodType, candidates: unknown[], json = false): Arb => ({ schema, show, candidates, json });

/** Types with a JSON form: each kept value is among its candidates. */
const JSON_LEAVES: Arb[] = [
  leaf('z.string()', z.string(), ['a'], true),
  leaf('z.number()', z.number(), [1], true),
  leaf('z.boolean()', z.boolean(), [true], true),
  leaf('z.null()', z.null(), [null], true),
  leaf("z.enum(['a', 'b'])", z.enum(['a', 'b']), ['b'], true),
  leaf('z.iso.datetime()', z.iso.datetime(), [ISO], true),
  leaf('z.coerce.date().transform(toISOString)', z.coerce.date().transform((d) => d.toISOString()), [ISO], true),
  leaf('z.any()', z.any(), [1], true),
  leaf('z.never().catch(1)', (z.never() as z.ZodType).catch(1), [1]),
  leaf('z.instanceof(Object)', z.instanceof(Object), [{}]),
  leaf('z.string().pipe(z.string().min(1))', z.string().pipe(z.string().min(1)), ['a']),
  leaf("z.union([z.literal('x'), z.number()]).pipe(z.number())", z.union([z.literal('x'), z.number()]).pipe(z.number()), [1]),
];

/** Types without one, with the values a caller would try. */
const NO_JSON_LEAVES: Arb[] = [
  leaf('z.date()', z.date(), [new Date(0), ISO]),
  leaf('z.coerce.date()', z.coerce.date(), [ISO, 0]),
  leaf('z.bigint()', z.bigint(), [1n, '1']),
  leaf('z.coerce.bigint()', z.coerce.bigint(), ['1', 1]),
  leaf('z.nan()', z.nan(), [Number.NaN, null]),
  leaf('z.symbol()', z.symbol(), [Symbol('s')]),
  leaf('z.map(z.string(), z.number())', z.map(z.string(), z.number()), [new Map(), {}]),
  leaf('z.set(z.string())', z.set(z.string()), [new Set(), []]),
  leaf('z.function()', z.function() as unknown as z.ZodType, [() => 1]),
  leaf('z.promise(z.string())', z.promise(z.string()), ['a']),
  leaf('z.file()', z.file(), [{}]),
  leaf('z.instanceof(Account)', z.instanceof(Account), [new Account(), { id: 'a' }]),
  leaf('z.void()', z.void(), [undefined, null]),
  leaf('z.undefined()', z.undefined(), [undefined]),
  leaf('z.never()', z.never(), [null]),
  leaf('z.literal(1n)', z.literal(1n), [1n, 1]),
  leaf('z.date().transform(toISOString)', z.date().transform((d) => d.toISOString()), [new Date(0), ISO]),
  leaf('z.codec(z.iso.datetime(), z.date())', z.codec(z.iso.datetime(), z.date(), { decode: (s) => new Date(s), encode: (d) => d.toISOString() }), [ISO, new Date(0)]),
  // Pipes whose last schema gives a kind of JSON value the first refuses (found by two reviews: built, never resumed).
  leaf('z.stringbool()', z.stringbool(), ['true', true, 'yes']),
  leaf('z.codec(z.string(), z.number())', z.codec(z.string(), z.number(), { decode: Number, encode: String }), ['1', 1]),
  leaf('z.string().pipe(z.coerce.number())', z.string().pipe(z.coerce.number()), ['1', 1]),
  leaf("z.enum(['1', '2']).pipe(z.coerce.number())", z.enum(['1', '2']).pipe(z.coerce.number()), ['1', 1]),
];

const MAX_CANDIDATES = 8;
const few = (values: unknown[]): unknown[] => [...new Set(values)].slice(0, MAX_CANDIDATES);

/** Pairs of candidates, the first ones of both lists first (i + j = 0, 1, 2, ...): every candidate of each is in some pair. */
function pairs<A, B>(as: A[], bs: B[]): Array<[A, B]> {
  const out: Array<[A, B]> = [];
  for (let sum = 0; sum < as.length + bs.length - 1; sum++) {
    for (let i = Math.max(0, sum - bs.length + 1); i <= Math.min(sum, as.length - 1); i++) out.push([as[i]!, bs[sum - i]!]);
  }
  return out;
}

/** Objects of two fields' candidates: `undefined` leaves the field out (an optional one). */
function objects(a: unknown[], b: unknown[]): Record<string, unknown>[] {
  return pairs(a, b).map(([x, y]) => ({ ...(x === undefined ? {} : { a: x }), ...(y === undefined ? {} : { b: y }) }));
}

const { schema: arbTree } = fc.letrec<{ schema: Arb }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: fc.constantFrom(...JSON_LEAVES), weight: 2 },
    { arbitrary: fc.constantFrom(...NO_JSON_LEAVES), weight: 3 },
    tie('schema').map((t): Arb => ({ schema: t.schema.optional(), show: `${t.show}.optional()`, candidates: few([...t.candidates, undefined]), json: false })),
    tie('schema').map((t): Arb => ({ schema: t.schema.nullable(), show: `${t.show}.nullable()`, candidates: few([null, ...t.candidates]), json: false })),
    tie('schema').map((t): Arb => ({ schema: t.schema.readonly(), show: `${t.show}.readonly()`, candidates: t.candidates, json: false })),
    tie('schema').map((t): Arb => ({ schema: z.lazy(() => t.schema), show: `z.lazy(() => ${t.show})`, candidates: t.candidates, json: false })),
    tie('schema').map((t): Arb =>
      t.json
        ? { schema: t.schema.default(t.candidates[0] as never), show: `${t.show}.default(${JSON.stringify(t.candidates[0])})`, candidates: few([undefined, ...t.candidates]), json: false }
        : t),
    tie('schema').map((t): Arb => ({ schema: z.array(t.schema), show: `z.array(${t.show})`, candidates: few([[], ...t.candidates.map((c) => [c])]), json: false })),
    tie('schema').map((t): Arb => ({ schema: z.array(t.schema).min(1), show: `z.array(${t.show}).min(1)`, candidates: few(t.candidates.map((c) => [c])), json: false })),
    tie('schema').map((t): Arb => ({ schema: z.record(z.string(), t.schema), show: `z.record(z.string(), ${t.show})`, candidates: few([{}, ...t.candidates.map((c) => ({ k: c }))]), json: false })),
    tie('schema').map((t): Arb => ({
      schema: z.record(z.enum(['k']), t.schema),
      show: `z.record(z.enum(['k']), ${t.show})`,
      candidates: few([...t.candidates.map((c) => (c === undefined ? {} : { k: c })), {}]),
      json: false,
    })),
    fc.tuple(tie('schema'), tie('schema')).map(([a, b]): Arb => ({
      schema: z.object({ a: a.schema, b: b.schema }),
      show: `z.object({ a: ${a.show}, b: ${b.show} })`,
      candidates: few(objects(a.candidates, b.candidates)),
      json: false,
    })),
    // Not a coercing option: z.union([z.coerce.date(), z.null()]) has no value the log keeps (the
    // first option takes null, true, 1, and gives a Date) and build() accepts it, as it looks at each
    // option on its own (keepable.ts is conservative: it refuses only what it can see).
    fc.tuple(tie('schema'), tie('schema')).filter(([a, b]) => !`${a.show}${b.show}`.includes('z.coerce')).map(([a, b]): Arb => ({
      schema: z.union([a.schema, b.schema]),
      show: `z.union([${a.show}, ${b.show}])`,
      candidates: few(pairs(a.candidates, b.candidates).flat()),
      json: false,
    })),
    fc.tuple(tie('schema'), tie('schema')).map(([a, b]): Arb => ({
      schema: z.tuple([a.schema, b.schema]),
      show: `z.tuple([${a.show}, ${b.show}])`,
      // A trailing undefined is the item left out; one before a given item stays (and is refused).
      candidates: few(pairs(a.candidates, b.candidates).map(([x, y]) => (y === undefined ? [x] : [x, y]))),
      json: false,
    })),
    tie('schema').map((t): Arb => ({
      schema: z.intersection(z.object({ a: t.schema }), z.object({ b: z.string() })),
      show: `z.intersection(z.object({ a: ${t.show} }), z.object({ b: z.string() }))`,
      candidates: few(objects(t.candidates, ['b'])),
      json: false,
    })),
  ),
}));

/** A counterexample is reported as the schema is written. */
const arbSchema = arbTree.map((arb) => ({ ...arb, [fc.toStringMethod]: () => arb.show }));

const State = z.object({ n: z.number() });

function define(resume: z.ZodType): Workflow {
  return workflow({ name: 'keep', version: '1', state: State }).interrupt('ask', { resume, apply: () => ({}), next: END }).build();
}

/**
 * `schema` as build() cannot see into it (a lazy whose first call throws: the check's), the same
 * schema to validate with: the workflow build() would refuse, to try values against.
 */
function hidden(schema: z.ZodType): z.ZodType {
  let calls = 0;
  return z.lazy(() => {
    if (calls++ === 0) throw new Error('hidden from the check');
    return schema;
  });
}

/** Whether a run parked at the interrupt completes when resumed with `value`. */
async function resumes(wf: Workflow, value: unknown, runId: string): Promise<boolean> {
  const remit = new Remit(new MemoryStore(), core, [wf]);
  const parked = await remit.start(wf, { n: 1 }, { runId });
  try {
    return (await remit.resume(runId, parked.interrupt!.id, value)).status === 'completed';
  } catch {
    return false;
  }
}

/**
 * How the workflow with this resume schema is refused: when the interrupt is defined, or, for a
 * pipe whose output its input refuses (built by earlier releases, so with runs in flight), at the
 * start of each new run. Null when neither.
 */
async function refusal(schema: z.ZodType): Promise<DefinitionInvalidError | null> {
  let wf: Workflow;
  try {
    wf = define(schema);
  } catch (error) {
    if (error instanceof DefinitionInvalidError && error.field === 'resume') return error;
    throw error;
  }
  const started = await new Remit(new MemoryStore(), core, [wf]).start(wf, { n: 1 }).then(() => null, (error: unknown) => error);
  if (started instanceof DefinitionInvalidError && started.field === 'resume') return started;
  return null;
}

describe('build() refuses a resume schema exactly when no value resumes a run parked at it', () => {
  it('random schemas: refused by build() if and only if none of its candidate values resumes (an actual park and resume)', async () => {
    let runNo = 0;
    await fc.assert(
      fc.asyncProperty(arbSchema, async (arb) => {
        const refused = await refusal(arb.schema);
        let wf: Workflow;
        try {
          wf = define(hidden(arb.schema));
        } catch (error) {
          // Refused for another reason (a default zod cannot write as JSON Schema): nothing to resume.
          expect(refused, `${arb.show}: ${String(error)}`).not.toBeNull();
          return;
        }
        const kept: unknown[] = [];
        for (const value of arb.candidates) if (await resumes(wf, value, `r${runNo++}`)) kept.push(value);
        if (refused === null) expect(kept.length, `${arb.show} is accepted by build(), but none of ${arb.candidates.length} candidates resumes`).toBeGreaterThan(0);
        else expect(kept, `${arb.show} is refused (${refused.message}), but these resume`).toEqual([]);
      }),
      // A fixed seed by default (REMIT_KEEPABLE_SEED to explore others): this property failed twice
      // early in about fifty runs on 2026-12-06 without its output kept, and has not failed since
      // in 16,000 cases of other seeds; a failure must be one that can be replayed.
      { numRuns: 300, seed: Number(process.env['REMIT_KEEPABLE_SEED'] ?? 20_261_206) },
    );
  });
});

describe('a pipe whose output its input refuses (z.stringbool(), a codec, .pipe(z.coerce.number())): new runs refused, naming what each side takes; runs in flight go on', () => {
  const starting = async (resume: z.ZodType) => {
    const wf = workflow({ name: 'piped', version: '1', state: z.object({}) }).interrupt('ask', { resume, apply: () => ({}), next: END }).build();
    return new Remit(new MemoryStore(), core, [wf]).start(wf, {}).then(() => null, (error: unknown) => error as Error);
  };

  it('as the whole schema or a field, and not when another option or null can be kept', async () => {
    expect((await starting(z.stringbool()))?.message).toMatch(/what it gives \(a boolean\) its first schema refuses \(it takes a string\).*; no new run is started \(runs started before continue, and finish if their route passes ask by\)/);
    expect((await starting(z.object({ ok: z.stringbool() })))?.message).toMatch(/pipe \(a codec, z\.stringbool\(\), \.pipe\(\)\) at ok/);
    expect(await starting(z.codec(z.string(), z.number(), { decode: Number, encode: String }))).toBeInstanceOf(DefinitionInvalidError);
    expect((await starting(z.string().pipe(z.coerce.number())))?.message).toMatch(/gives \(a number\)/);
    for (const keepable of [z.union([z.stringbool(), z.boolean()]), z.stringbool().nullable(), z.string().transform(Number), z.string().pipe(z.email())]) {
      expect(await starting(keepable)).toBeNull();
    }
  });

  it('a run started before (by a release that built the workflow) continues, resumes and finishes when its route passes that interrupt by (from a review of an upgrade: the refusal at build() stranded every run of the workflow)', async () => {
    const gate = (confirm: z.ZodType) => workflow({ name: 'gate', version: '1', state: z.object({ approved: z.boolean().optional() }) })
      .interrupt('review', { resume: z.object({ approved: z.boolean() }), apply: (_s, v) => ({ approved: v.approved }), next: (s) => (s.approved ? 'confirm' : END) })
      .interrupt('confirm', { resume: confirm, apply: () => ({}), next: END })
      .build();
    const current = gate(z.object({ ok: z.stringbool() }));
    // The same definition with the pipe hidden from the check: what an earlier release built (one fingerprint).
    const earlier = gate(hidden(z.object({ ok: z.stringbool() })));
    expect(earlier.fingerprintHex).toBe(current.fingerprintHex);
    const store = new MemoryStore();
    const parked = await new Remit(store, core, [earlier]).start(earlier, {}, { runId: 'in-flight' });
    const upgraded = new Remit(store, core, [current]);
    await expect(upgraded.start(current, {})).rejects.toMatchObject({ code: 'REMIT_DEFINITION_INVALID', node: 'confirm', field: 'resume' });
    expect(await upgraded.resume('in-flight', parked.interrupt!.id, { approved: false })).toMatchObject({ status: 'completed' });
  });
});

describe('what the resume-schema check cannot see is accepted, never an untyped error (found by a review)', () => {
  const interruptWith = (resume: unknown) => () =>
    workflow({ name: 'seen', version: '1', state: z.object({}) }).interrupt('ask', { resume: resume as z.ZodType, apply: () => ({}), next: END });

  it('a shape whose field getter throws: interrupt() does not throw a raw Error from the check', () => {
    // A getter-based shape (how zod 4 writes recursive schemas) whose getter fails, e.g. a const not yet initialised.
    const resume = z.object({ get a(): z.ZodType { throw new Error('boom'); } });
    expect(interruptWith(resume)).not.toThrow();
  });

  it('a key named __proto__ is not checked by zod, so a z.date() there is not a reason to refuse', () => {
    const resume = z.object({ ['__proto__']: z.date() } as unknown as Record<string, z.ZodType>);
    expect(interruptWith(resume)).not.toThrow();
  });

  it('a union of shared options nested 26 deep in a record value: the check reads a bounded number of schema parts', () => {
    // Every path through the unions reaches the same leaf: 2^26 paths. The check whether the
    // record's value may take undefined walked each of them (6.5 s); it shares the walk's visits.
    let reads = 0;
    const leafSchema = z.string();
    const counted = new Proxy(leafSchema, {
      get: (target, key, receiver) => {
        if (key === '_zod') reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    let value: z.ZodType = counted;
    for (let level = 0; level < 26; level++) value = z.union([value, value]);
    const resume = z.record(z.enum(['a']), value);
    expect(interruptWith(resume)).not.toThrow();
    expect(reads).toBeLessThan(20_000);
  });
});
