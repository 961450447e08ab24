import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { DefinitionInvalidError } from '../errors.js';
import { diffDescriptors } from './descriptor.js';
import { END, workflow, type StateOf } from './workflow.js';

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

  it('refuses bad definitions with a typed error naming the node', () => {
    const base = () => workflow({ name: 'bad', version: '1', state: State });
    expect(() => base().build()).toThrow(DefinitionInvalidError);
    expect(() => base().pure('a', { run: () => ({}), next: 'nowhere' }).build()).toThrow(/unknown node nowhere/);
    expect(() => base().pure('a', { run: () => ({}), next: END }).pure('a', { run: () => ({}), next: END })).toThrow(/defined twice/);
    expect(() => base().pure(END, { run: () => ({}), next: END })).toThrow(/reserved/);
    expect(() => base().pure('a', { run: () => ({}), next: END }).startAt('b').build()).toThrow(/start node b/);
    expect(() => workflow({ name: 'v', version: '', state: State })).toThrow(/version/);
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
