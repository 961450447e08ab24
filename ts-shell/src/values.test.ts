/**
 * The rule for values that reach the log (docs/guide.md, "Values in the log"): the log holds what
 * the schema returned, and that value must read back as itself (a JSON round trip changes
 * nothing, and validating it again changes nothing). A value that breaks the rule is refused with
 * REMIT_VALUE_UNFAITHFUL, naming the field and why, before anything is appended; a value that was
 * accepted never wedges the run. One regression test per defect of the issue, plus the rule's
 * positive side (idempotent transforms, defaults keep working).
 */

import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValueUnfaithfulError } from './errors.js';
import { durableValue } from './values.js';
import { createCore } from './core/index.js';
import { RecordKind } from './core/types.js';
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
    mode = 'ok';
    expect((await remit.continueRun('eff')).state).toEqual({ at: '1970-01-01T00:00:00.000Z' });
    expect(keys).toEqual(['eff/stamp/1', 'eff/stamp/1']);
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
