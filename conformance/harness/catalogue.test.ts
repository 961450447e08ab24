/**
 * The catalogue drift test: the TypeScript harness and the Python adapters must read the same
 * fault points and workflow rules (conformance/catalogue.json), and the Python side's strict
 * pydantic mirrors must accept and reject exactly what the zod schemas do, field by field, on
 * generated values. Each Python virtual environment is checked (their pydantic versions differ).
 * A canary runs the same comparison in pydantic's lax mode and must find differences.
 */
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PYTHON_ADAPTERS_DIR, venvPython, whyVenvUnavailable } from './availability.js';
import { CATALOGUE } from './catalogue.js';
import { FAULT_KINDS, FAULT_POINTS } from './cells.js';
import { ApprovalValueSchema, chargeResult, EFFECT_NODES, NODE_PATH, notifyResult, refundFor, RefundInputSchema, RefundStateSchema } from './workflow.js';

const VENVS = ['langgraph-py', 'crewai', 'pydantic-graph'] as const;
const SCHEMAS = { approvalValue: ApprovalValueSchema, refundInput: RefundInputSchema, refundState: RefundStateSchema } as const;
type SchemaName = keyof typeof SCHEMAS;

function python(venv: string, requests: unknown[]): unknown[] {
  const res = spawnSync(venvPython(venv), ['-m', 'remit_conformance.selfcheck'], {
    input: requests.map((r) => JSON.stringify(r)).join('\n') + '\n',
    env: { ...process.env, PYTHONPATH: PYTHON_ADAPTERS_DIR, PYTHONNOUSERSITE: '1' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) throw new Error(`selfcheck in ${venv} failed (${res.status}): ${res.stderr.slice(-2000)}`);
  return res.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown);
}

function zodResult(schema: SchemaName, value: unknown): { ok: boolean; paths: string[] } {
  const r = SCHEMAS[schema].safeParse(value);
  if (r.success) return { ok: true, paths: [] };
  return { ok: false, paths: [...new Set(r.error.issues.map((i) => JSON.stringify(i.path)))].sort() };
}

/** Python's json.dumps(list(loc)) spaces its separators; compare paths as parsed values. */
function normalizePaths(paths: string[]): string[] {
  return paths.map((p) => JSON.stringify(JSON.parse(p))).sort();
}

// Strings of characters of 1 and 2 UTF-16 code units, many of them right at a schema's bound.
const unit = fc.constantFrom('a', 'é', '😀', ' ', '"');
const nearBound = (bound: number) =>
  fc.tuple(fc.integer({ min: Math.max(0, bound - 2), max: bound + 2 }), fc.array(unit, { minLength: bound + 2, maxLength: bound + 2 })).map(([units, chars]) => {
    let out = '';
    for (const c of chars) if (out.length + c.length <= units) out += c;
    return out.length < units ? out + 'a'.repeat(units - out.length) : out;
  });
const text = (maxLength: number) => fc.oneof(fc.string({ maxLength, unit }), nearBound(maxLength > 100 ? 200 : maxLength > 10 ? 64 : 1));
const weird = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(2 ** 53 - 1, 2 ** 53, 1.5, -0.5, 'yes', '3', 'true', '', [], {}),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  text(3),
  fc.array(fc.oneof(text(2), fc.integer()), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('approved', 'note', 'x'), fc.oneof(fc.boolean(), text(3))),
);
const approval = fc.record({ approved: fc.boolean(), note: text(205) });
const input = fc.record({ orderId: text(66), amountCents: fc.oneof(fc.nat(), fc.integer({ min: -2, max: 2 })) });
const state = fc.record({
  orderId: text(66),
  amountCents: fc.nat(),
  refundCents: fc.option(fc.integer({ min: -2, max: 1_000_000 }), { nil: null }),
  chargeId: fc.option(text(5), { nil: null }),
  decision: fc.option(approval, { nil: null }),
  notificationId: fc.option(text(5), { nil: null }),
  visited: fc.array(fc.constantFrom(...NODE_PATH), { maxLength: 5 }),
});

/** A valid-looking value with some fields replaced by odd values, deleted, or extra keys added. */
function mutated<T extends Record<string, unknown>>(base: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.tuple(base, fc.array(fc.tuple(fc.nat(), fc.oneof(weird, fc.constant('<delete>'))), { maxLength: 3 }), fc.boolean()).map(([value, edits, extra]) => {
    const out: Record<string, unknown> = { ...value };
    const keys = Object.keys(value);
    for (const [i, v] of edits) {
      const key = keys[i % keys.length] as string;
      if (v === '<delete>') delete out[key];
      else out[key] = v;
    }
    if (extra) out.extraField = 1;
    return out;
  });
}

const cases = (schema: SchemaName, base: fc.Arbitrary<Record<string, unknown>>, n: number, seed: number) =>
  fc.sample(fc.oneof(base, mutated(base), weird), { numRuns: n, seed }).map((value) => ({ schema, value }));

describe('the catalogue', () => {
  it('is what the TypeScript side uses: zod schemas, fault points, kinds, nodes', () => {
    const strip = (s: object) => Object.fromEntries(Object.entries(s).filter(([k]) => k !== '$schema'));
    expect(strip(z.toJSONSchema(ApprovalValueSchema))).toEqual(CATALOGUE.schemas.approvalValue);
    expect(strip(z.toJSONSchema(RefundInputSchema))).toEqual(CATALOGUE.schemas.refundInput);
    expect(strip(z.toJSONSchema(RefundStateSchema))).toEqual(CATALOGUE.schemas.refundState);
    expect(FAULT_POINTS.map((p) => p.name)).toEqual(CATALOGUE.faultPoints.map((p) => p.name));
    expect([...FAULT_KINDS]).toEqual(CATALOGUE.faultKinds);
    expect(Object.keys(RefundStateSchema.shape)).toEqual(CATALOGUE.workflow.stateFields);
  });

  it('pairs every before-commit point with an after-commit point and names only known nodes', () => {
    const names = FAULT_POINTS.map((p) => p.name);
    for (const n of names.filter((x) => x.startsWith('before-commit:'))) expect(names).toContain(n.replace('before-commit:', 'after-commit:'));
    for (const n of names) {
      const node = n.split('@')[1] ?? (n.split(':')[0]?.startsWith('in') ? n.split(':')[1] : undefined);
      if (node !== undefined) expect(NODE_PATH as readonly string[]).toContain(node);
    }
  });
});

for (const venv of VENVS) {
  const unavailable = whyVenvUnavailable(venv);
  describe.skipIf(unavailable !== null)(`the Python side in ${venv}${unavailable === null ? '' : ` (NOT RUN: ${unavailable})`}`, () => {
    it('reads the same fault points, kinds, nodes and state fields', () => {
      const [cat] = python(venv, [{ op: 'catalogue' }]) as Record<string, unknown>[];
      expect(cat?.faultPoints).toEqual(FAULT_POINTS.map((p) => p.name));
      expect(cat?.faultKinds).toEqual([...FAULT_KINDS]);
      expect(cat?.nodePath).toEqual([...NODE_PATH]);
      expect(cat?.effectNodes).toEqual([...EFFECT_NODES]);
      expect(cat?.schemaFields).toEqual({
        approvalValue: Object.keys(ApprovalValueSchema.shape),
        refundInput: Object.keys(RefundInputSchema.shape),
        refundState: Object.keys(RefundStateSchema.shape),
      });
    });

    it('accepts and rejects exactly what zod does, naming the same fields, on generated values', () => {
      const requests = [
        ...cases('approvalValue', approval, 400, 11),
        ...cases('refundInput', input, 400, 12),
        ...cases('refundState', state, 600, 13),
      ];
      const answers = python(venv, requests.map((r) => ({ op: 'validate', ...r }))) as { ok: boolean; paths: string[] }[];
      const drift = requests.flatMap((r, i) => {
        const want = zodResult(r.schema, r.value);
        const got = answers[i] as { ok: boolean; paths: string[] };
        const same = want.ok === got.ok && JSON.stringify(want.paths) === JSON.stringify(normalizePaths(got.paths));
        return same ? [] : [{ ...r, zod: want, pydantic: { ok: got.ok, paths: normalizePaths(got.paths) } }];
      });
      expect(drift.slice(0, 3)).toEqual([]);
      // Both outcomes occur, so the comparison is not vacuous.
      expect(answers.filter((a) => a.ok).length).toBeGreaterThan(100);
      expect(answers.filter((a) => !a.ok).length).toBeGreaterThan(100);
    });

    it('computes the same workflow rules', () => {
      const inputs = fc.sample(fc.record({ orderId: fc.string({ minLength: 1, maxLength: 12 }), amountCents: fc.nat({ max: 10_000_000 }) }), { numRuns: 200, seed: 5 });
      const answers = python(venv, inputs.map((inp, i) => ({ op: 'rules', input: inp, approved: i % 2 === 0 }))) as Record<string, unknown>[];
      inputs.forEach((inp, i) => {
        const refund = refundFor(inp.amountCents);
        expect(answers[i]).toEqual({ refundCents: refund, chargeId: chargeResult(inp.orderId, refund), notificationId: notifyResult(inp.orderId, i % 2 === 0) });
      });
    });

    it('canary: pydantic in its default lax mode drifts from zod, and the comparison sees it', () => {
      const values = [{ approved: 'yes', note: 'x' }, { approved: 1, note: 'x' }, { approved: true, note: 7 }];
      const answers = python(venv, values.map((value) => ({ op: 'validate', schema: 'approvalValue', value, lax: true }))) as { ok: boolean }[];
      const drifted = values.filter((v, i) => zodResult('approvalValue', v).ok !== answers[i]?.ok);
      expect(drifted.length).toBeGreaterThan(0);
    });
  });
}
