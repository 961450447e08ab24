/**
 * Three readings of the generated schemas must agree, on the schemas and values the generator
 * draws (valid ones, values JSON does not keep, near misses):
 * - the adapter's zod schema (./generated-workflow.ts) and the harness's own model
 *   (harness/generated/schema-model.ts): accepted or not, the same output, the same first path;
 * - REMIT starting a run with that value, and the model's rule for written values: stored as the
 *   model says, or refused with the model's code, reason and field.
 * The harness judges REMIT with the model; this test shows the model reads zod as zod does, and
 * REMIT's value rule as the contract states it.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createRemit, END, openMemoryStore, RemitError, ValueUnfaithfulError, workflow } from 'remit';
import { Prng } from '../../harness/prng.js';
import { generateScenario } from '../../harness/generated/generator.js';
import { evaluate, pathText, writeVerdict } from '../../harness/generated/schema-model.js';
import { untag, type SchemaSpec } from '../../harness/generated/spec.js';
import { nearMiss, validValue } from '../../harness/generated/values.js';
import { zodSchemaOf } from './generated-workflow.js';

/** The same value with object properties holding undefined left out (JSON leaves them out too). */
function withoutUndefinedProps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefinedProps);
  if (value === null || typeof value !== 'object' || value instanceof Date || value instanceof Map) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, withoutUndefinedProps(v)]));
}

/** Values to try on a schema: drawn valid (with and without values JSON does not keep) and near misses. */
function valuesFor(schema: SchemaSpec, prng: Prng, extra: unknown[]): unknown[] {
  const out = [...extra];
  for (let i = 0; i < 3; i++) {
    const valid = validValue(schema, prng, i === 2);
    if (valid === undefined) continue;
    out.push(valid, nearMiss(schema, valid, prng));
  }
  return out;
}

function schemasOf(seed: number): Array<{ schema: SchemaSpec; extra: unknown[] }> {
  const { scenario } = generateScenario(seed, 0, null);
  const out: Array<{ schema: SchemaSpec; extra: unknown[] }> = [{ schema: scenario.workflow.state, extra: [untag(scenario.input), ...scenario.nearMissInputs.map(untag)] }];
  for (const node of scenario.workflow.nodes) if (node.kind === 'interrupt') out.push({ schema: node.resume, extra: [] });
  for (const [, field] of scenario.workflow.state.fields) out.push({ schema: field, extra: [] });
  return out;
}

describe('generated schemas: zod, the harness model and REMIT agree', () => {
  it('zod and the model accept the same values, with the same output and the same first path', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
        const prng = new Prng(seed);
        for (const { schema, extra } of schemasOf(seed)) {
          const zod = zodSchemaOf(schema);
          for (const value of valuesFor(schema, prng, extra)) {
            const z = zod.safeParse(value);
            const m = evaluate(schema, value);
            const where = `${JSON.stringify(schema)} on ${String(JSON.stringify(value))}`;
            expect(z.success, where).toBe(m.ok);
            if (z.success && m.ok) expect(isDeepStrictEqual(withoutUndefinedProps(z.data), withoutUndefinedProps(m.value)), where).toBe(true);
            if (!z.success && !m.ok) expect(z.error.issues[0]!.path.join('.') || '(root)', where).toBe(pathText(m.path));
          }
        }
      }),
      { numRuns: 150, seed: 20_260_101 },
    );
  });

  it('REMIT stores a start value exactly as the model says, or refuses it with the model\'s code, reason and field', async () => {
    const store = openMemoryStore();
    const remit = await createRemit({ store, core: 'reference' });
    let runs = 0;
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (seed) => {
        const prng = new Prng(seed);
        const { scenario } = generateScenario(seed, 0, null);
        const schema = scenario.workflow.state;
        const wf = workflow({ name: `check-${seed}`, version: '1', state: zodSchemaOf(schema) as z.ZodType<Record<string, unknown>> }).pure('noop', { run: () => undefined, next: END }).build();
        for (const value of valuesFor(schema, prng, [untag(scenario.input)])) {
          const runId = `r${runs++}`;
          const verdict = writeVerdict(schema, value);
          const outcome = await remit.start(wf, value as never, { runId }).then(
            (r) => ({ ok: true as const, state: r.state }),
            (e: unknown) => ({ ok: false as const, error: e }),
          );
          const where = `${JSON.stringify(schema)} on ${String(JSON.stringify(value))}`;
          const key = verdict.ok ? 'stored' : verdict.code === 'INVALID' ? 'invalid' : verdict.reason;
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
          if (verdict.ok) {
            expect(outcome.ok, `${where}: ${outcome.ok ? '' : String(outcome.error)}`).toBe(true);
            if (outcome.ok) expect(outcome.state, where).toEqual(verdict.stored);
            continue;
          }
          expect(outcome.ok, where).toBe(false);
          if (outcome.ok) continue;
          const error = outcome.error as RemitError;
          expect(error, where).toBeInstanceOf(RemitError);
          expect(error.field, where).toBe(verdict.field);
          if (verdict.code === 'INVALID') expect(error.code, where).toBe('REMIT_STATE_INVALID');
          else {
            expect(error, where).toBeInstanceOf(ValueUnfaithfulError);
            expect((error as ValueUnfaithfulError).reason, where).toBe(verdict.reason);
          }
          expect(await store.readRecords(runId), where).toEqual([]);
        }
      }),
      { numRuns: 120, seed: 20_260_102 },
    );
    console.log(`value rule outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`);
    // The sample reaches every outcome, so the agreement is not vacuous.
    expect([...outcomes.keys()].sort()).toEqual(['CHANGED_BY_JSON', 'FAILS_SCHEMA_AGAIN', 'TRANSFORM_NOT_IDEMPOTENT', 'invalid', 'stored']);
    expect(outcomes.get('stored')).toBeGreaterThan(50);
    expect(outcomes.get('invalid')).toBeGreaterThan(20);
    await remit.close();
  });
});
