/**
 * The build-time search for functions declared `async` in a schema (async-functions.ts): where it
 * finds them (and defaults whose function gives a Promise), that it finds none in zod's own schemas, and that it ends on recursive and very
 * wide schemas without overflowing the stack (a large enum's values, a union's many options).
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { asyncFunctionIn } from './async-functions.js';

describe('asyncFunctionIn', () => {
  it('names the kind of function found, keyed on where zod keeps it', () => {
    expect(asyncFunctionIn(z.string().refine(async () => true))).toBe('an async refine or custom check');
    expect(asyncFunctionIn(z.custom<string>(async () => true))).toBe('an async refine or custom check');
    expect(asyncFunctionIn(z.string().transform(async (v) => v))).toBe('an async transform, preprocess or codec');
    expect(asyncFunctionIn(z.preprocess(async (v: unknown) => v, z.string()))).toBe('an async transform, preprocess or codec');
    expect(asyncFunctionIn(z.codec(z.string(), z.number(), { decode: async (s) => Number(s), encode: (n) => String(n) }))).toBe('an async transform, preprocess or codec');
  });

  it('finds none in zod\'s own schemas and checks, nor in synchronous functions', () => {
    const plain = [
      z.email(), z.url(), z.iso.datetime(), z.stringbool(), z.json(), z.string().trim().min(1), z.number().int().positive(),
      z.object({ a: z.string().refine((s) => s.length > 0), b: z.number().transform((n) => n * 2).optional() }),
      z.preprocess((v) => v, z.string()), z.string().default('x'), z.string().catch('y'), z.array(z.boolean()).max(3),
      z.record(z.string(), z.number()), z.discriminatedUnion('k', [z.object({ k: z.literal('a') }), z.object({ k: z.literal('b') })]),
    ];
    for (const schema of plain) expect(asyncFunctionIn(schema)).toBeUndefined();
  });

  it('ends on a recursive schema, finding nothing or what is inside it', () => {
    interface Tree { kids: Tree[] }
    const Tree: z.ZodType<Tree> = z.lazy(() => z.object({ kids: z.array(Tree).refine((k) => k.length < 10) }));
    const Node = z.object({ name: z.string(), get children() { return z.array(Node); } });
    expect(asyncFunctionIn(z.object({ tree: Tree, node: Node }))).toBeUndefined();
    const Deep: z.ZodType<Tree> = z.lazy(() => z.object({ kids: z.array(Deep).refine(async () => true) }));
    expect(asyncFunctionIn(z.object({ tree: Deep.optional() }))).toBe('an async refine or custom check');
  });

  it('walks a very large enum and a union of many options without overflowing the stack (regression: a spread of them did)', () => {
    const values = Array.from({ length: 200_000 }, (_, i) => `v${i}`);
    expect(asyncFunctionIn(z.object({ e: z.enum(values as [string, ...string[]]).optional() }))).toBeUndefined();
    expect(asyncFunctionIn(z.literal(values))).toBeUndefined();
    const options = Array.from({ length: 150_000 }, (_, i) => z.literal(i));
    expect(asyncFunctionIn(z.union(options as unknown as [z.ZodLiteral<number>, z.ZodLiteral<number>]))).toBeUndefined();
  });

  it('finds an async overwrite and catch, and a default, prefault or catch whose function gives a Promise (async or not)', () => {
    const rejected = () => { const p = Promise.reject(new Error('x')); p.catch(() => undefined); return p; };
    expect(asyncFunctionIn(z.string().overwrite((async (v: string) => v) as never))).toBe('an async overwrite');
    expect(asyncFunctionIn(z.string().catch((async () => 'y') as never))).toBe('an async catch');
    expect(asyncFunctionIn(z.object({ a: z.string().default((async () => 'x') as never) }))).toBe('a default whose function gives a Promise');
    expect(asyncFunctionIn(z.object({ a: z.string().prefault(rejected as never) }))).toBe('a prefault whose function gives a Promise');
    expect(asyncFunctionIn(z.object({ a: z.string().catch(rejected as never) }))).toBe('a catch whose function gives a Promise');
  });

  it('calls a default\'s or catch\'s function once, as zod\'s JSON Schema of the fingerprint does, and a function that throws is zod\'s to report', () => {
    let calls = 0;
    const schema = z.object({
      at: z.number().default(() => { calls += 1; return 1; }),
      or: z.number().catch(() => { calls += 1; return 2; }),
      bad: z.number().default(() => { throw new Error('no default'); }),
    });
    expect(asyncFunctionIn(schema)).toBeUndefined();
    expect(calls).toBe(2);
  });
});
