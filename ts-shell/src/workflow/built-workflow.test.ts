/**
 * What build() accepts and what a built workflow lets change: a resume schema no JSON value can
 * satisfy, or none whose output the log can keep (a z.date(), a z.bigint(), ... every value must
 * pass), is refused (a run parked there could never be resumed), and a built workflow is
 * immutable (its spec objects copied, its node table and descriptor closed to changes).
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow, type Workflow } from './workflow.js';

const State = z.object({ n: z.number().optional(), done: z.boolean().optional() });

function withResume(resume: z.ZodType) {
  return () => workflow({ name: 'confirm', version: '1', state: State }).interrupt('confirm', { resume, apply: () => ({ done: true }), next: END }).build();
}

describe('a resume schema that accepts no JSON value', () => {
  it.each([
    ['z.void()', z.void(), 'void'],
    ['z.undefined()', z.undefined(), 'undefined'],
    ['z.never()', z.never(), 'never'],
    ['z.void().optional()', z.void().optional(), 'void'],
    ['z.undefined().readonly()', z.undefined().readonly(), 'undefined'],
    ['z.literal(undefined)', z.literal(undefined), 'undefined'],
    ['z.lazy(() => z.void())', z.lazy(() => z.void()), 'void'],
    ['z.union([z.undefined(), z.never()])', z.union([z.undefined(), z.never()]), 'undefined'],
    ['z.undefined().pipe(z.undefined())', z.undefined().pipe(z.undefined()), 'undefined'],
    ['z.object({ x: z.never() })', z.object({ x: z.never() }), 'never'],
    ['z.never().default(1)', (z.never() as z.ZodType).default(1), 'never'],
    ['an intersection with z.never()', z.intersection(z.object({ a: z.string() }), z.object({ b: z.never() })), 'never'],
    // Its output always has x: 1, which z.never() refuses when the log reads it back.
    ['z.object({ x: z.never().default(1) })', z.object({ x: (z.never() as z.ZodType).default(1) }), 'never'],
  ] as const)('%s is refused by build(), naming the node and the field, and saying to use z.null()', (_name, schema, type) => {
    expect(withResume(schema as z.ZodType)).toThrow(expect.objectContaining({
      code: 'REMIT_DEFINITION_INVALID', node: 'confirm', field: 'resume', message: expect.stringContaining(`accepts no JSON value (it holds a z.${type}()`),
    }));
    expect(withResume(schema as z.ZodType)).toThrow(/use z\.null\(\)/);
  });

  it('schemas that accept some JSON value are accepted, and z.null() resumes with null', async () => {
    const accepting = [
      z.never().nullable(), z.any(), z.undefined().or(z.null()), z.object({ x: z.never().optional(), y: z.string() }),
      (z.never() as z.ZodType).catch(1), z.array(z.never()), z.lazy(() => z.string()), z.string().refine(() => false),
    ];
    for (const schema of accepting) expect(withResume(schema as z.ZodType)).not.toThrow();
    const wf = withResume(z.null())();
    const remit = new Remit(new MemoryStore(), await createCore('reference'), [wf]);
    const parked = await remit.start(wf, {}, { runId: 'r' });
    expect((await remit.resume('r', parked.interrupt!.id, null)).status).toBe('completed');
  });
});

class Approval {
  approvedAt = new Date(0);
}

const ISO = '2024-01-01T00:00:00.000Z';

describe('a resume schema with no value the log can keep (its values have no JSON form)', () => {
  // Each builds a workflow a run could park in but never leave: every resume is refused
  // (ValueUnfaithfulError for a Date, ResumeValueInvalidError for its ISO string), and changing the
  // schema changes the fingerprint. `at`: the path of the part named; `use`: what the message says instead.
  const DATE = /use z\.iso\.datetime\(\)/;
  const BIGINT = /use z\.string\(\) for a big integer .*z\.number\(\)\.int\(\)/;
  it.each([
    ['z.date()', z.date(), 'z.date()', '', DATE],
    ['z.coerce.date() (takes a string, gives a Date)', z.coerce.date(), 'z.coerce.date()', '', DATE],
    ['z.bigint()', z.bigint(), 'z.bigint()', '', BIGINT],
    ['z.coerce.bigint()', z.coerce.bigint(), 'z.coerce.bigint()', '', BIGINT],
    ['z.nan()', z.nan(), 'z.nan()', '', /use z\.null\(\) for "no number", or z\.number\(\)/],
    ['z.symbol()', z.symbol(), 'z.symbol()', '', /use z\.string\(\) or z\.enum/],
    ['z.map(...)', z.map(z.string(), z.number()), 'z.map(...)', '', /use z\.record\(/],
    ['z.set(...)', z.set(z.string()), 'z.set(...)', '', /use z\.array\(/],
    ['z.function()', z.function() as unknown as z.ZodType, 'z.function()', '', /use data that says what to do/],
    ['z.promise(...)', z.promise(z.string()), 'z.promise(...)', '', /use the schema of the value it resolves to/],
    ['z.file()', z.file(), 'z.file()', '', /use z\.string\(\) for where the file is kept/],
    ['z.instanceof(Approval)', z.instanceof(Approval), 'z.instanceof(Approval)', '', /use z\.object\(\{ \.\.\. \}\) with the fields it needs \(a new Approval in apply\)/],
    ['z.object({ approvedAt: z.date() }) (a required field)', z.object({ approvedAt: z.date() }), 'z.date()', 'approvedAt', DATE],
    ['a deep required field', z.object({ a: z.object({ b: z.array(z.object({ c: z.bigint() })).min(1) }) }), 'z.bigint()', 'a.b.0.c', BIGINT],
    ['z.date().transform(toISOString) (the log gives the string back to z.date())', z.date().transform((d) => d.toISOString()), 'z.date()', '', DATE],
    ['a codec to a Date', z.codec(z.iso.datetime(), z.date(), { decode: (s) => new Date(s), encode: (d) => d.toISOString() }), 'z.date()', '', DATE],
    ['z.string().pipe(z.coerce.date())', z.string().pipe(z.coerce.date()), 'z.coerce.date()', '', DATE],
    ['z.array(z.date()).nonempty()', z.array(z.date()).nonempty(), 'z.date()', '0', DATE],
    ["z.record(z.enum(['a', 'b']), z.date()) (every key required)", z.record(z.enum(['a', 'b']), z.date()), 'z.date()', 'a', DATE],
    ['z.tuple([z.string(), z.date()])', z.tuple([z.string(), z.date()]), 'z.date()', '1', DATE],
    ['z.literal(1n)', z.literal(1n), 'z.literal(1n)', '', BIGINT],
    ['an intersection one side of which gives a Date', z.intersection(z.object({ a: z.string() }), z.object({ at: z.coerce.date() })), 'z.coerce.date()', 'at', DATE],
    ['z.lazy(() => z.date()).readonly()', z.lazy(() => z.date()).readonly(), 'z.date()', '', DATE],
    ['z.date().default(() => new Date())', z.date().default(() => new Date()), 'z.date()', '', DATE],
  ] as const)('%s is refused by build(), naming the node, the part and what to use instead', (_name, schema, held, at, use) => {
    expect(withResume(schema as z.ZodType)).toThrow(expect.objectContaining({
      code: 'REMIT_DEFINITION_INVALID', node: 'confirm', field: 'resume',
      message: expect.stringContaining(`the resume schema of interrupt confirm accepts no value the log can keep (it holds a ${held}${at === '' ? '' : ` at ${at}`} that every value must pass`),
    }));
    expect(withResume(schema as z.ZodType)).toThrow(/so a run parked there could never be resumed; use /);
    expect(withResume(schema as z.ZodType)).toThrow(use);
  });

  it('a union none of whose options has such a value is refused naming each option', () => {
    expect(withResume(z.union([z.date(), z.bigint()]))).toThrow(expect.objectContaining({
      code: 'REMIT_DEFINITION_INVALID', node: 'confirm', field: 'resume',
      message: expect.stringMatching(/no option of its union has one: z\.date\(\), as a Date reads back from JSON as a string; z\.bigint\(\), as a bigint has no JSON form;.*use z\.iso\.datetime\(\).*; or z\.string\(\)/),
    }));
  });

  it("the reviewer's repro: the run it would have wedged is never started, as build() refuses the workflow", () => {
    const mk = (resume: z.ZodType) => () =>
      workflow({ name: 'x', version: '1', state: z.object({ n: z.number() }) }).interrupt('approve', { resume, apply: () => ({}), next: END }).build();
    expect(mk(z.object({ approvedAt: z.date() }))).toThrow(/interrupt approve accepts no value the log can keep \(it holds a z\.date\(\) at approvedAt/);
    expect(mk(z.object({ approvedAt: z.iso.datetime() }))).not.toThrow();
  });

  // Each has a value the log keeps (the sample), so build() accepts it and a run parked there resumes with it.
  it.each([
    ['a union with one JSON branch', z.union([z.date(), z.iso.datetime()]), ISO],
    ['z.date().nullable() (accepts null)', z.date().nullable(), null],
    ['z.array(z.date()) (accepts [])', z.array(z.date()), []],
    ['an optional field of such a type', z.object({ approvedAt: z.date().optional(), by: z.string() }), { by: 'kim' }],
    ['z.record(z.string(), z.date()) (accepts {})', z.record(z.string(), z.date()), {}],
    ["z.partialRecord(z.enum(['a']), z.date())", z.partialRecord(z.enum(['a']), z.date()), {}],
    ["z.record(z.enum(['a']), z.date().optional())", z.record(z.enum(['a']), z.date().optional()), {}],
    ['z.tuple([z.string(), z.date().optional()]) (the last item left out)', z.tuple([z.string(), z.date().optional()]), ['a']],
    ['z.coerce.date().transform(toISOString) (gives a string it takes again)', z.coerce.date().transform((d) => d.toISOString()), ISO],
    ['z.union([z.string(), z.date()]).transform(...)', z.union([z.string(), z.date()]).transform((d) => (typeof d === 'string' ? d : d.toISOString())), ISO],
    ['z.bigint().optional() in an object', z.object({ big: z.bigint().optional() }), {}],
    ['z.instanceof(Object)', z.instanceof(Object), { a: 1 }],
    ['a custom check build() cannot see into', z.custom<string>((v) => typeof v === 'string'), 'a'],
  ] as const)('%s is accepted, and a run parked there resumes with a sample value', async (_name, schema, sample) => {
    const wf = withResume(schema as z.ZodType)();
    const remit = new Remit(new MemoryStore(), await createCore('reference'), [wf]);
    const parked = await remit.start(wf, {}, { runId: 'r' });
    expect((await remit.resume('r', parked.interrupt!.id, sample)).status).toBe('completed');
  });
});

describe('a built workflow is immutable', () => {
  it('a spec object changed after build() changes nothing the workflow does', async () => {
    const spec: { run: () => { n: number }; next: string } = { run: () => ({ n: 1 }), next: 'b' };
    const wf = workflow({ name: 'specs', version: '1', state: State }).pure('a', spec).pure('b', { run: () => ({ done: true }), next: END }).build();
    spec.next = END;
    spec.run = () => ({ n: 99 });
    const done = await new Remit(new MemoryStore(), await createCore('reference'), [wf]).start(wf, {}, { runId: 'r' });
    expect(done).toMatchObject({ status: 'completed', state: { n: 1, done: true } });
  });

  it('a spec whose fields are inherited (a class instance, Object.create(template)) is copied with them', async () => {
    class Bump {
      next = END;
      run(s: { n?: number }) {
        return { n: (s.n ?? 0) + 2 };
      }
    }
    const template = { run: (s: { n?: number }) => ({ n: (s.n ?? 0) + 11 }), next: END };
    for (const [spec, n] of [[new Bump(), 2], [Object.create(template) as typeof template, 11]] as const) {
      const wf = workflow({ name: 'inherited', version: '1', state: State }).pure('bump', spec).build();
      expect(Object.keys(wf.nodes.get('bump')!.spec).sort()).toEqual(['next', 'run']);
      const done = await new Remit(new MemoryStore(), await createCore('reference'), [wf]).start(wf, {}, { runId: 'r' });
      expect(done).toMatchObject({ status: 'completed', state: { n } });
    }
  });

  it('a spec object changed between the node\'s add and build() changes nothing either', () => {
    const spec: { run: () => object; next: string } = { run: () => ({}), next: END };
    const builder = workflow({ name: 'specs', version: '1', state: State }).pure('a', spec);
    spec.next = 'ghost';
    expect(() => builder.build()).not.toThrow();
  });

  it('its node table, node order, descriptor and fingerprint cannot be changed through it', () => {
    const wf: Workflow = workflow({ name: 'table', version: '1', state: State }).pure('a', { run: () => ({}), next: 'b' }).pure('b', { run: () => ({}), next: END }).build();
    const nodes = wf.nodes as Map<string, unknown>;
    expect(() => nodes.delete('b')).toThrow(/cannot be changed/);
    expect(() => nodes.set('c', {})).toThrow(/cannot be changed/);
    expect(() => nodes.clear()).toThrow(/cannot be changed/);
    expect([...wf.nodes.keys()]).toEqual(['a', 'b']);
    expect(wf.nodes instanceof Map).toBe(true);
    expect(() => (wf.nodeOrder as string[]).push('c')).toThrow(TypeError);
    expect(() => { (wf.nodes.get('a')!.spec as { next: unknown }).next = END; }).toThrow(TypeError);
    expect(() => { (wf.descriptor.nodes[0] as { next: unknown }).next = null; }).toThrow(TypeError);
    const hex = wf.fingerprintHex;
    const bytes = wf.fingerprint;
    bytes[0] = bytes[0]! ^ 0xff;
    expect(Buffer.from(wf.fingerprint).toString('hex')).toBe(hex);
  });
});
