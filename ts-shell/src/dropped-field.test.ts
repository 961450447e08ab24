/**
 * A field a node returns that the state schema does not have: zod's default object strips keys it
 * does not name, so a misspelt field (`cuont` for `count`) would vanish from the state without a
 * word, through any kind of node. It is refused (StateInvalidError naming the field, the run, seq
 * and node; nothing written), while a schema that keeps unknown keys keeps it, a field set to
 * undefined still removes an optional one, and a nested value narrowed to its declared fields is
 * not refused (storing the fields the schema names of an API response is a use, not a slip).
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { ResumeValueInvalidError, StateInvalidError } from './errors.js';
import { Remit } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { checkWorkflow } from './testing/check-workflow.js';
import { END, workflow, type Workflow } from './workflow/workflow.js';

const State = z.object({ count: z.number(), note: z.string().optional(), user: z.object({ id: z.string() }).optional() });
type S = z.infer<typeof State>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function runOnce(wf: Workflow<any, any, any>, input: unknown) {
  const store = new MemoryStore();
  const remit = new Remit(store, await createCore('reference'), [wf]);
  const outcome = await remit.start(wf, input, { runId: 'r' }).catch((e: unknown) => e);
  const status = await remit.status('r').catch((e: unknown) => e);
  await remit.close();
  return { outcome, status, store };
}

describe('a returned field the state schema drops', () => {
  const misspelt = (s: S) => (s.count > 0 ? { count: 1 } : { cuont: 2 });
  const kinds = {
    pure: workflow({ name: 'typo-pure', version: '1', state: State }).pure('p', { run: misspelt, next: END }).build(),
    effect: workflow({ name: 'typo-effect', version: '1', state: State })
      .effect('e', { run: () => ({ n: 2 }), apply: (s) => misspelt(s), next: END }).build(),
  };

  for (const [kind, wf] of Object.entries(kinds)) {
    it(`is refused from a ${kind} node: StateInvalidError naming the field, run, seq and node; the run stays where it was`, async () => {
      const { outcome, status } = await runOnce(wf, { count: 0 });
      expect(outcome).toBeInstanceOf(StateInvalidError);
      const error = outcome as StateInvalidError;
      expect(error).toMatchObject({ runId: 'r', node: kind === 'pure' ? 'p' : 'e' });
      expect(error.issues).toEqual([{ path: 'cuont', message: expect.stringMatching(/state schema names nowhere and drops.*misspelt.*fix the node code/) }]);
      expect(error.message).toContain('cuont');
      // Nothing of the step was written: the run is still running at the node.
      expect(status).toMatchObject({ status: 'running', state: { count: 0 } });
    });
  }

  it('is refused from an interrupt\'s apply too', async () => {
    const wf = workflow({ name: 'typo-interrupt', version: '1', state: State })
      .interrupt('ask', { resume: z.object({ note: z.string() }), apply: (_s, v) => ({ nte: v.note }) as Partial<S>, next: END }).build();
    const store = new MemoryStore();
    const remit = new Remit(store, await createCore('reference'), [wf]);
    const parked = await remit.start(wf, { count: 0 }, { runId: 'r' });
    const refused = await remit.resume('r', parked.interrupt!.id, { note: 'hi' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StateInvalidError);
    expect((refused as StateInvalidError).issues[0]!.path).toBe('nte');
    await remit.close();
  });

  it('is reported by checkWorkflow before the workflow ships', async () => {
    const report = await checkWorkflow(kinds.pure, { input: { count: 0 }, core: 'reference' });
    expect(report.problems).toEqual([{ property: 'liveness', node: 'p', message: expect.stringMatching(/StateInvalidError.*cuont: the node returned this field, which the state schema names nowhere/) }]);
  });

  it('is kept, not refused, by a schema that keeps unknown keys; undefined still removes an optional field; a nested value may be narrowed', async () => {
    const Loose = State.loose();
    const loose = workflow({ name: 'loose', version: '1', state: Loose }).pure('p', { run: () => ({ extra: 1 }), next: END }).build();
    expect((await runOnce(loose, { count: 0 })).outcome).toMatchObject({ status: 'completed', state: { count: 0, extra: 1 } });
    const clear = workflow({ name: 'clear', version: '1', state: State }).pure('p', { run: () => ({ note: undefined, user: { id: 'u', email: 'e@x' } as { id: string } }), next: END }).build();
    const cleared = (await runOnce(clear, { count: 0, note: 'n' })).outcome as { status: string; state: S };
    expect(cleared).toMatchObject({ status: 'completed', state: { count: 0, user: { id: 'u' } } });
    expect(cleared.state).not.toHaveProperty('note');
  });

  it('is not refused where the schema names the field (a transform or pipe removing it, another variant of a union), drops unknown fields on purpose (.strip()) or accepts them', async () => {
    const runs = async (name: string, schema: Parameters<typeof workflow>[0]['state'], input: unknown, update: Record<string, unknown>) => {
      const wf = workflow({ name, version: '1', state: schema }).pure('p', { run: () => update as never, next: END }).build();
      return (await runOnce(wf, input)).outcome as { status?: string; state?: unknown };
    };
    const Base = z.object({ count: z.number(), tmp: z.number().optional() });
    expect(await runs('transform', Base.transform(({ tmp: _t, ...rest }) => rest), { count: 0 }, { tmp: 5 })).toMatchObject({ status: 'completed', state: { count: 0 } });
    expect(await runs('pipe', Base.pipe(z.object({ count: z.number() })), { count: 0 }, { tmp: 5 })).toMatchObject({ status: 'completed' });
    const Phase = z.discriminatedUnion('phase', [
      z.object({ phase: z.literal('draft'), draft: z.string() }),
      z.object({ phase: z.literal('sent'), messageId: z.string() }),
    ]);
    expect(await runs('variant', Phase, { phase: 'draft', draft: 'hi' }, { phase: 'sent', messageId: 'm', draft: null })).toMatchObject({ status: 'completed', state: { phase: 'sent', messageId: 'm' } });
    expect(await runs('strip', State.strip(), { count: 0 }, { cuont: 1 })).toMatchObject({ status: 'completed', state: { count: 0 } });
    expect(await runs('catchall', State.catchall(z.number()), { count: 0 }, { extra: 1 })).toMatchObject({ status: 'completed', state: { extra: 1 } });
    expect(await runs('loose-proto', State.loose(), { count: 0 }, JSON.parse('{"__proto__": 1}') as Record<string, unknown>)).toMatchObject({ status: 'completed' });
    // A strict object refuses the unknown key itself (zod's own issue), naming the key as the field (it named "(root)").
    const strict = await runs('strict', State.strict(), { count: 0 }, { cuont: 1 }) as unknown as StateInvalidError;
    expect(strict).toBeInstanceOf(StateInvalidError);
    expect(strict).toMatchObject({ field: 'cuont', issues: [{ path: 'cuont', message: 'an unrecognized key: the schema names no such field' }] });
    const nested = await runs('strict-nested', z.object({ count: z.number(), user: z.strictObject({ id: z.string() }).optional() }), { count: 0 }, { user: { id: 'u', idd: 'v', x: 1 } }) as unknown as StateInvalidError;
    expect(nested.issues?.map((i) => i.path)).toEqual(['user.idd', 'user.x']);
    // A field the schema names nowhere, behind a preprocess that renames an alias, is refused: the
    // returned name is not the state's.
    const Aliased = z.preprocess((v) => v, z.object({ total: z.number() }));
    expect((await runs('alias', Aliased, { total: 0 }, { sum: 5 }) as unknown as StateInvalidError).issues?.[0]?.path).toBe('sum');
  });

  it('refuses exactly the returned keys the schema does not name (fast-check over returned key sets)', async () => {
    const known = ['count', 'note'];
    const key = fc.constantFrom('count', 'note', 'cuont', 'nots', 'extra');
    await fc.assert(fc.asyncProperty(fc.uniqueArray(key, { maxLength: 4 }), async (keys) => {
      const update = Object.fromEntries(keys.map((k) => [k, k === 'count' ? 3 : 'x']));
      const wf = workflow({ name: 'keys', version: '1', state: State }).pure('p', { run: () => update as Partial<S>, next: END }).build();
      const { outcome } = await runOnce(wf, { count: 0 });
      const unknown = keys.filter((k) => !known.includes(k));
      if (unknown.length === 0) expect(outcome).toMatchObject({ status: 'completed' });
      else expect((outcome as StateInvalidError).issues?.[0]?.path).toBe(unknown[0]);
    }), { numRuns: 40 });
  });
});

describe('a field returned as undefined', () => {
  it('is removed before the schema sees the state, so an .exactOptional() field can be cleared (from a review: refused at every retry)', async () => {
    const wf = workflow({ name: 'clear', version: '1', state: z.object({ a: z.string().exactOptional(), b: z.string().optional(), c: z.string() }) })
      .pure('set', { run: () => ({ a: 'x', b: 'y' }), next: 'clear' })
      .pure('clear', { run: () => ({ a: undefined, b: undefined }), next: END })
      .build();
    expect((await runOnce(wf, { c: 'kept' })).outcome).toMatchObject({ status: 'completed', state: { c: 'kept' } });
    // A required field returned as undefined is still refused, naming it.
    const required = workflow({ name: 'required', version: '1', state: z.object({ c: z.string() }) }).pure('p', { run: () => ({ c: undefined }) as never, next: END }).build();
    expect((await runOnce(required, { c: 'x' })).outcome).toMatchObject({ code: 'REMIT_STATE_INVALID', field: 'c' });
  });
});

describe('a field of start()\'s input or of a resume value that its schema drops', () => {
  const Approval = z.object({ approved: z.boolean().default(false), comment: z.string().optional() });
  const approvals = (resume: z.ZodType) => workflow({ name: 'approve', version: '1', state: State.extend({ approved: z.boolean().optional() }) })
    .interrupt('ask', { resume, apply: (_s, v) => ({ approved: (v as { approved: boolean }).approved }), next: END })
    .build();

  it('is refused exactly for the keys the schema names nowhere: start writes nothing, a resume leaves the interrupt open (fast-check over key sets)', async () => {
    const key = fc.constantFrom('approved', 'comment', 'aproved', 'coment', 'count', 'cuont');
    await fc.assert(fc.asyncProperty(fc.uniqueArray(key, { maxLength: 4 }), fc.boolean(), async (keys, atStart) => {
      const wf = approvals(Approval);
      const store = new MemoryStore();
      const remit = new Remit(store, await createCore('reference'), [wf]);
      const given = Object.fromEntries(keys.map((k) => [k, k.startsWith('c') && k !== 'count' && k !== 'cuont' ? 'x' : k === 'count' || k === 'cuont' ? 1 : true]));
      if (atStart) {
        // The state schema names count, note, user and approved.
        const input = { count: 0, ...given };
        const unknown = Object.keys(input).filter((k) => !['count', 'note', 'user', 'approved'].includes(k));
        const outcome = await remit.start(wf, input, { runId: 'r' }).catch((e: unknown) => e);
        if (unknown.length === 0) expect(outcome).toMatchObject({ status: 'parked' });
        else {
          expect(outcome).toBeInstanceOf(StateInvalidError);
          expect((outcome as StateInvalidError).issues?.[0]).toMatchObject({ path: unknown[0], message: expect.stringMatching(/^the input has this field, which the state schema names nowhere/) });
          expect(await store.listRuns()).toEqual([]);
        }
      } else {
        const parked = await remit.start(wf, { count: 0 }, { runId: 'r' });
        const unknown = keys.filter((k) => !['approved', 'comment'].includes(k));
        const outcome = await remit.resume('r', parked.interrupt!.id, given).catch((e: unknown) => e);
        if (unknown.length === 0) expect(outcome).toMatchObject({ status: 'completed' });
        else {
          expect(outcome).toBeInstanceOf(ResumeValueInvalidError);
          expect(outcome).toMatchObject({ runId: 'r', node: 'ask', field: unknown[0] });
          expect((outcome as Error).message).toMatch(/the resume schema names nowhere and drops, so it would be lost .*; the interrupt was not consumed/);
          // Open: the corrected value resumes it.
          expect(await remit.resume('r', parked.interrupt!.id, { approved: true })).toMatchObject({ status: 'completed', state: { approved: true } });
          // Sent again once consumed, the misspelt value is not "the same value" as the claim (from a review of an upgrade).
          expect(await remit.resume('r', parked.interrupt!.id, { approved: true, ...given }).catch((e: unknown) => e)).toMatchObject({ code: 'REMIT_ALREADY_CONSUMED', sameValue: false });
        }
      }
      await remit.close();
    }), { numRuns: 60 });
  });

  it('is refused when the object is one option of a union with a null, a literal, a string or an array (from a review: the other option turned the check off)', async () => {
    for (const resume of [z.union([Approval, z.null()]), Approval.or(z.literal('skip')), z.union([Approval, z.string()]), z.union([Approval, z.array(z.number())]), Approval.nullable()]) {
      const wf = approvals(resume);
      const remit = new Remit(new MemoryStore(), await createCore('reference'), [wf]);
      const parked = await remit.start(wf, { count: 0 }, { runId: 'r' });
      await expect(remit.resume('r', parked.interrupt!.id, { aproved: true })).rejects.toMatchObject({ code: 'REMIT_RESUME_VALUE_INVALID', field: 'aproved' });
      expect((await remit.status('r')).status).toBe('parked');
      await remit.close();
    }
    // A state of an object and a union of an object with null (an intersection): the input's misspelling is refused too.
    const input = workflow({ name: 'and-or-null', version: '1', state: z.object({ a: z.string() }).and(z.union([z.object({ b: z.number().optional() }), z.null()])) })
      .pure('p', { run: () => ({}), next: END }).build();
    expect((await runOnce(input, { a: 'x', aa: 1 })).outcome).toBeInstanceOf(StateInvalidError);
  });

  it('is accepted by a schema that drops (.strip()) or keeps (.loose()) unknown fields, or names the field in another variant', async () => {
    for (const [resume, value, expected] of [
      [Approval.strip(), { aproved: true }, { approved: false }],
      [Approval.loose(), { approved: true, extra: 1 }, { approved: true }],
      [z.union([Approval, z.object({ approved: z.boolean(), reason: z.string() })]), { approved: true, reason: 'r' }, { approved: true }],
    ] as const) {
      const wf = approvals(resume as z.ZodType);
      const remit = new Remit(new MemoryStore(), await createCore('reference'), [wf]);
      const parked = await remit.start(wf, { count: 0 }, { runId: 'r' });
      expect(await remit.resume('r', parked.interrupt!.id, value)).toMatchObject({ status: 'completed', state: expected });
      await remit.close();
    }
    // A preprocess that renames a legacy field, or a catch that takes anything, reads fields no
    // shape names: a value given from outside is not refused for them (from a review of own changes:
    // both were refused at first).
    const renaming = workflow({ name: 'renaming', version: '1', state: z.preprocess((v: unknown) => {
      const given = v as { orderId?: string; order_id?: string };
      return { orderId: given.orderId ?? given.order_id };
    }, z.object({ orderId: z.string() })) }).pure('p', { run: () => ({}), next: END }).build();
    expect((await runOnce(renaming, { order_id: 'o1' })).outcome).toMatchObject({ status: 'completed', state: { orderId: 'o1' } });
    const catching = workflow({ name: 'catching', version: '1', state: z.object({ a: z.number() }).catch({ a: 0 }) }).pure('p', { run: () => ({}), next: END }).build();
    expect((await runOnce(catching, { b: 'junk' })).outcome).toMatchObject({ status: 'completed', state: { a: 0 } });
    // A transform on the output side still reads only the input side's fields: a misspelling there is refused.
    const transformed = workflow({ name: 'transformed', version: '1', state: z.object({ a: z.number() }).transform((s) => ({ a: s.a })) }).pure('p', { run: () => ({}), next: END }).build();
    expect((await runOnce(transformed, { a: 1, aa: 2 })).outcome).toBeInstanceOf(StateInvalidError);
    // What the refusal advises for runs in flight: .strip() is the same definition, .loose() another.
    const defined = (state: z.ZodType) => workflow({ name: 'fp', version: '1', state: state as typeof State }).interrupt('ask', { resume: Approval, apply: () => ({}), next: END }).build().fingerprintHex;
    expect(defined(State.strip())).toBe(defined(State));
    expect(defined(State.loose())).not.toBe(defined(State));
    const loose = workflow({ name: 'loose', version: '1', state: State.loose() }).pure('p', { run: () => ({}), next: END }).build();
    expect((await runOnce(loose, { count: 0, extra: 1 })).outcome).toMatchObject({ status: 'completed', state: { extra: 1 } });
  });
});
