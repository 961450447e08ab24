/**
 * What build() accepts and what a built workflow lets change: a resume schema no JSON value can
 * satisfy is refused (a run parked there could never be resumed), and a built workflow is
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
  ] as const)('%s is refused by build(), naming the node and the field, and saying to use z.null()', (_name, schema, type) => {
    expect(withResume(schema as z.ZodType)).toThrow(expect.objectContaining({
      code: 'REMIT_DEFINITION_INVALID', node: 'confirm', field: 'resume', message: expect.stringContaining(`accepts no JSON value (it holds a z.${type}()`),
    }));
    expect(withResume(schema as z.ZodType)).toThrow(/use z\.null\(\)/);
  });

  it('schemas that accept some JSON value are accepted, and z.null() resumes with null', async () => {
    const accepting = [
      z.never().nullable(), z.any(), z.undefined().or(z.null()), z.object({ x: z.never().optional(), y: z.string() }), z.object({ x: (z.never() as z.ZodType).default(1) }),
      (z.never() as z.ZodType).catch(1), z.array(z.never()), z.lazy(() => z.string()), z.string().refine(() => false),
    ];
    for (const schema of accepting) expect(withResume(schema as z.ZodType)).not.toThrow();
    const wf = withResume(z.null())();
    const remit = new Remit(new MemoryStore(), await createCore('reference'), [wf]);
    const parked = await remit.start(wf, {}, { runId: 'r' });
    expect((await remit.resume('r', parked.interrupt!.id, null)).status).toBe('completed');
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
