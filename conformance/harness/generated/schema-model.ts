/**
 * The harness's own reading of the schema grammar (./spec.ts): what a value validates to, and
 * whether a value written to a log reads back as itself. Written from the grammar's meaning and
 * zod 4's documented behaviour, without zod and without REMIT, so that the expected outcome of a
 * generated workflow never comes from the system under test. Agreement with zod on the grammar is
 * itself tested (conformance/adapters/remit/generated-workflow.test.ts).
 *
 * The rule for written values (docs/guide.md, "Values in the log"), as the contract states it:
 * what the schema returns is written, and it must read back as itself: its JSON round trip is the
 * same value, and validating that again succeeds and returns it unchanged. The first place where a
 * value breaks a rule is named by its path (`items.3.sku`, "(root)"), in the order the fields are
 * declared and elements stored.
 */
import type { RefinementName, SchemaSpec, TransformName } from './spec.js';
import { untag } from './spec.js';

export type Path = Array<string | number>;

export type Evaluation = { ok: true; value: unknown } | { ok: false; path: Path };

export function pathText(path: Path): string {
  return path.length === 0 ? '(root)' : path.join('.');
}

const ISO_DATETIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?Z$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

export function refinementHolds(check: RefinementName, value: unknown): boolean {
  switch (check) {
    case 'even':
      return typeof value === 'number' && Number.isInteger(value) && value % 2 === 0;
    case 'nonEmpty':
      return (typeof value === 'string' || Array.isArray(value)) && value.length > 0;
    case 'lowercase':
      return typeof value === 'string' && value === value.toLowerCase();
    case 'noSpaces':
      return typeof value === 'string' && !/\s/.test(value);
  }
}

export function applyTransform(fn: TransformName, value: unknown): unknown {
  switch (fn) {
    case 'trim':
      return (value as string).trim();
    case 'lower':
      return (value as string).toLowerCase();
    case 'round':
      return Math.round(value as number);
    case 'clamp100':
      return Math.min(100, Math.max(0, value as number));
    case 'sortNumbers':
      return [...(value as number[])].sort((a, b) => a - b);
    case 'times100':
      return (value as number) * 100;
    case 'exclaim':
      return `${value as string}!`;
    case 'inc':
      return (value as number) + 1;
    case 'length':
      return (value as string).length;
    case 'stringify':
      return String(value as number);
  }
}

const fail = (path: Path): Evaluation => ({ ok: false, path });

/** Validate `value` against `schema`: the output, or the path of the first problem. */
export function evaluate(schema: SchemaSpec, value: unknown, path: Path = []): Evaluation {
  switch (schema.t) {
    case 'string':
      if (typeof value !== 'string') return fail(path);
      if (schema.min !== undefined && value.length < schema.min) return fail(path);
      if (schema.max !== undefined && value.length > schema.max) return fail(path);
      return { ok: true, value };
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return fail(path);
      if (schema.int === true && !Number.isSafeInteger(value)) return fail(path);
      if (schema.min !== undefined && value < schema.min) return fail(path);
      if (schema.max !== undefined && value > schema.max) return fail(path);
      return { ok: true, value };
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : fail(path);
    case 'enum':
      return typeof value === 'string' && schema.values.includes(value) ? { ok: true, value } : fail(path);
    case 'literal':
      return value === schema.value ? { ok: true, value } : fail(path);
    case 'isoDate':
      return typeof value === 'string' && ISO_DATETIME.test(value) && !Number.isNaN(Date.parse(value)) ? { ok: true, value } : fail(path);
    case 'date':
      return value instanceof Date && !Number.isNaN(value.getTime()) ? { ok: true, value } : fail(path);
    case 'any':
      return { ok: true, value };
    case 'array': {
      if (!Array.isArray(value)) return fail(path);
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        const item = evaluate(schema.of, value[i], [...path, i]);
        if (!item.ok) return item;
        out.push(item.value);
      }
      return { ok: true, value: out };
    }
    case 'record': {
      if (!isPlainObject(value)) return fail(path);
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        const item = evaluate(schema.of, value[key], [...path, key]);
        if (!item.ok) return item;
        out[key] = item.value;
      }
      return { ok: true, value: out };
    }
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail(path);
      const out: Record<string, unknown> = {};
      for (const [name, field] of schema.fields) {
        const item = evaluate(field, (value as Record<string, unknown>)[name], [...path, name]);
        if (!item.ok) return item;
        if (item.value !== undefined) out[name] = item.value;
      }
      return { ok: true, value: out };
    }
    case 'optional':
      return value === undefined ? { ok: true, value: undefined } : evaluate(schema.of, value, path);
    case 'nullable':
      return value === null ? { ok: true, value: null } : evaluate(schema.of, value, path);
    case 'default':
      return value === undefined ? { ok: true, value: untag(schema.value) } : evaluate(schema.of, value, path);
    case 'union': {
      for (const option of schema.of) {
        const r = evaluate(option, value, path);
        if (r.ok) return r;
      }
      return fail(path);
    }
    case 'refine': {
      const inner = evaluate(schema.of, value, path);
      if (!inner.ok) return inner;
      return refinementHolds(schema.check, inner.value) ? inner : fail(path);
    }
    case 'transform': {
      const inner = evaluate(schema.of, value, path);
      return inner.ok ? { ok: true, value: applyTransform(schema.fn, inner.value) } : inner;
    }
  }
}

/**
 * Where `value` and `readBack` (a JSON value) differ, or null: JSON-faithfulness as a reader of
 * the log sees it. An object property holding undefined is absent in JSON and counts as the same.
 */
export function firstDifference(value: unknown, readBack: unknown, path: Path = []): Path | null {
  if (value === undefined) return path;
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) return path;
    if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') return path;
    return value === readBack ? null : path;
  }
  if (Array.isArray(value)) {
    if (!Array.isArray(readBack) || readBack.length !== value.length) return path;
    for (let i = 0; i < value.length; i++) {
      const d = firstDifference(value[i], readBack[i], [...path, i]);
      if (d !== null) return d;
    }
    return null;
  }
  if (!isPlainObject(value) || !isPlainObject(readBack)) return path;
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v === undefined) continue;
    if (!Object.prototype.hasOwnProperty.call(readBack, key)) return [...path, key];
    const d = firstDifference(v, readBack[key], [...path, key]);
    if (d !== null) return d;
  }
  return null;
}

/** The JSON round trip of a value (what a log gives back). */
export function jsonRoundTrip(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

export type WriteVerdict =
  /** `stored`: the value as it reads back from the log. */
  | { ok: true; stored: unknown }
  | { ok: false; code: 'INVALID'; field: string }
  | { ok: false; code: 'UNFAITHFUL'; reason: 'CHANGED_BY_JSON' | 'FAILS_SCHEMA_AGAIN' | 'TRANSFORM_NOT_IDEMPOTENT'; field: string };

/**
 * What happens when `value` is to be written under `schema` (null: no schema, e.g. an effect
 * result): refused as invalid, refused because it would not read back as itself, or written.
 */
export function writeVerdict(schema: SchemaSpec | null, value: unknown): WriteVerdict {
  let output = value;
  if (schema !== null) {
    const first = evaluate(schema, value);
    if (!first.ok) return { ok: false, code: 'INVALID', field: pathText(first.path) };
    output = first.value;
  }
  const stored = jsonRoundTrip(output);
  const changed = firstDifference(output, stored);
  if (changed !== null) return { ok: false, code: 'UNFAITHFUL', reason: 'CHANGED_BY_JSON', field: pathText(changed) };
  if (schema === null) return { ok: true, stored };
  const again = evaluate(schema, stored);
  if (!again.ok) return { ok: false, code: 'UNFAITHFUL', reason: 'FAILS_SCHEMA_AGAIN', field: pathText(again.path) };
  const moved = firstDifference(again.value, stored);
  if (moved !== null) return { ok: false, code: 'UNFAITHFUL', reason: 'TRANSFORM_NOT_IDEMPOTENT', field: pathText(moved) };
  return { ok: true, stored };
}
