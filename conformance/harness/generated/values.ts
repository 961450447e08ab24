/**
 * Values drawn from a schema of the grammar: valid ones (what a user would pass: inputs, resume
 * values, values nodes write), values JSON does not keep (a Date, NaN, a Map, undefined in an
 * array, where the schema lets them through), and near misses (one place changed so that the
 * schema should refuse it). Every draw is checked with the harness's own schema reading
 * (./schema-model.ts); a near miss the schema accepts after all is dropped by the caller.
 */
import type { Prng } from '../prng.js';
import { evaluate, refinementHolds } from './schema-model.js';
import type { SchemaSpec } from './spec.js';

const WORDS = ['ada', 'kim', 'order', 'refund', 'ok', 'late', 'blue', 'x', 'zeta', 'Mixed Case', ' padded ', 'UPPER'];

function word(prng: Prng, schema: Extract<SchemaSpec, { t: 'string' }>): string {
  const min = schema.min ?? 0;
  const max = schema.max ?? 12;
  let s = prng.pick(WORDS);
  if (prng.int(0, 3) === 0) s = `${s}-${prng.hex(prng.int(1, 4))}`;
  while (s.length < min) s += prng.pick(['a', 'b', 'q']);
  return s.slice(0, Math.max(min, Math.min(max, s.length)));
}

function number(prng: Prng, schema: Extract<SchemaSpec, { t: 'number' }>): number {
  const min = schema.min ?? -50;
  const max = schema.max ?? 150;
  if (schema.int === true) return prng.int(Math.ceil(min), Math.floor(max));
  return Math.round((min + (prng.int(0, 10_000) / 10_000) * (max - min)) * 10) / 10;
}

/** A value JSON does not keep as it is, for `any`. */
export function unfaithfulValue(prng: Prng): unknown {
  switch (prng.int(0, 3)) {
    case 0:
      return new Date(Date.UTC(2024, prng.int(0, 11), prng.int(1, 28)));
    case 1:
      return Number.NaN;
    case 2:
      return new Map([['k', prng.int(0, 9)]]);
    default:
      return [1, undefined, 3];
  }
}

function isoDate(prng: Prng): string {
  return new Date(Date.UTC(2020 + prng.int(0, 6), prng.int(0, 11), prng.int(1, 28), prng.int(0, 23), prng.int(0, 59), prng.int(0, 59))).toISOString();
}

/** One attempt at a value `schema` accepts; `poison` allows values JSON does not keep where the schema lets them through. */
function draw(schema: SchemaSpec, prng: Prng, poison: boolean, depth: number): unknown {
  switch (schema.t) {
    case 'string':
      return word(prng, schema);
    case 'number':
      return number(prng, schema);
    case 'boolean':
      return prng.int(0, 1) === 1;
    case 'enum':
      return prng.pick(schema.values);
    case 'literal':
      return schema.value;
    case 'isoDate':
      return isoDate(prng);
    case 'date':
      return new Date(Date.parse(isoDate(prng)));
    case 'any':
      return poison && prng.int(0, 1) === 0 ? unfaithfulValue(prng) : prng.pick<unknown>([1, 'x', true, null, [1, 2], { a: 1 }]);
    case 'array': {
      const n = prng.int(0, depth > 2 ? 1 : 3);
      return Array.from({ length: n }, () => draw(schema.of, prng, poison, depth + 1));
    }
    case 'record': {
      const out: Record<string, unknown> = {};
      for (let i = prng.int(0, 2); i > 0; i--) out[`k${prng.int(0, 9)}`] = draw(schema.of, prng, poison, depth + 1);
      return out;
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, field] of schema.fields) {
        const v = draw(field, prng, poison, depth + 1);
        if (v !== undefined) out[name] = v;
      }
      return out;
    }
    case 'optional':
      if (poison && depth > 0 && schema.of.t === 'any' && prng.int(0, 2) === 0) return undefined;
      return prng.int(0, 3) === 0 ? undefined : draw(schema.of, prng, poison, depth);
    case 'nullable':
      return prng.int(0, 4) === 0 ? null : draw(schema.of, prng, poison, depth);
    case 'default':
      return prng.int(0, 2) === 0 ? undefined : draw(schema.of, prng, poison, depth);
    case 'union':
      return draw(prng.pick(schema.of), prng, poison, depth);
    case 'refine': {
      for (let i = 0; i < 12; i++) {
        const v = draw(schema.of, prng, poison, depth);
        const inner = evaluate(schema.of, v);
        if (inner.ok && refinementHolds(schema.check, inner.value)) return v;
      }
      return refinementExample(schema);
    }
    case 'transform':
      return draw(schema.of, prng, poison, depth);
  }
}

function refinementExample(schema: Extract<SchemaSpec, { t: 'refine' }>): unknown {
  const base = schema.of.t === 'transform' ? schema.of.of : schema.of;
  switch (schema.check) {
    case 'even':
      return base.t === 'number' ? Math.max(base.min ?? 0, 0) + ((Math.max(base.min ?? 0, 0) % 2) === 0 ? 0 : 1) : 2;
    case 'nonEmpty':
      return base.t === 'array' ? [] : 'a';
    default:
      return 'a';
  }
}

/** A value `schema` accepts (checked with the harness's schema reading), or undefined if none was found. */
export function validValue(schema: SchemaSpec, prng: Prng, poison = false): unknown {
  for (let attempt = 0; attempt < 16; attempt++) {
    const v = draw(schema, prng, poison, 0);
    if (evaluate(schema, v).ok) return v;
  }
  return undefined;
}

/** Paths of the places in `value` a near miss may change, each with its schema. */
function places(schema: SchemaSpec, value: unknown, path: Array<string | number>, out: Array<{ path: Array<string | number>; schema: SchemaSpec }>): void {
  out.push({ path, schema });
  switch (schema.t) {
    case 'object':
      if (value !== null && typeof value === 'object') {
        for (const [name, field] of schema.fields) places(field, (value as Record<string, unknown>)[name], [...path, name], out);
      }
      return;
    case 'array':
      if (Array.isArray(value)) value.forEach((v, i) => places(schema.of, v, [...path, i], out));
      return;
    case 'record':
      if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) places(schema.of, v, [...path, k], out);
      return;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'refine':
    case 'transform':
      if (value !== undefined && value !== null) places(schema.of, value, path, out);
      return;
    default:
      return;
  }
}

/** A value that breaks `schema` at one place. */
function breaking(schema: SchemaSpec, prng: Prng): unknown {
  switch (schema.t) {
    case 'string':
      return schema.max !== undefined && prng.int(0, 1) === 0 ? 'y'.repeat(schema.max + 1) : prng.pick<unknown>([42, null, true]);
    case 'number':
      if (schema.max !== undefined && prng.int(0, 1) === 0) return schema.max + 1;
      if (schema.int === true && prng.int(0, 1) === 0) return 1.5;
      return prng.pick<unknown>(['12', null, Number.NaN, false]);
    case 'enum':
      return 'not-an-option';
    case 'isoDate':
      return prng.pick(['yesterday', '2024-13-01T10:00:00Z', '10:00']);
    case 'refine':
      return schema.check === 'even' ? 3 : schema.check === 'nonEmpty' ? '' : schema.check === 'lowercase' ? 'Upper' : 'has space';
    case 'array':
    case 'record':
    case 'object':
      return prng.pick<unknown>(['not an object', 7]);
    default:
      return { unexpected: true };
  }
}

function setAt(root: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy: unknown = Array.isArray(root) ? [...root] : { ...(root as Record<string, unknown>) };
  const [head, ...rest] = path;
  (copy as Record<string | number, unknown>)[head!] = setAt((root as Record<string | number, unknown>)[head!], rest, replacement);
  return copy;
}

/** A near miss of `valid`: one place replaced by a value its schema refuses, or a required field left out. */
export function nearMiss(schema: SchemaSpec, valid: unknown, prng: Prng): unknown {
  const candidates: Array<{ path: Array<string | number>; schema: SchemaSpec }> = [];
  places(schema, valid, [], candidates);
  const inner = candidates.filter((c) => c.path.length > 0);
  const target = prng.pick(inner.length > 0 ? inner : candidates);
  // Sometimes leave the value out instead (a required field missing).
  if (target.path.length > 0 && prng.int(0, 4) === 0) return setAt(valid, target.path, undefined);
  return setAt(valid, target.path, breaking(target.schema, prng));
}
