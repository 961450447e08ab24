/**
 * The top-level field names a state schema declares anywhere in it (input or output side of a
 * pipe or transform, every branch of a union or intersection), or `'any'` when it keeps or
 * accepts fields it does not name (`.loose()`, `.passthrough()`, `.catchall()`, a record) or says
 * it drops them on purpose (`.strip()`), or when its shape is not one read here (`z.custom`, ...).
 *
 * Why: a node's returned field that the parsed state lacks was dropped by the schema; when the
 * schema never named it, that is most likely a misspelling and is refused. A field the schema
 * names somewhere (a transform that removes it, the other variant of a union) is the schema's
 * own doing, and a schema that keeps unknown fields would not have dropped it. Read from zod 4's
 * `_zod.def` structurally, as `isZodSchema` does, so that another zod 4 copy's schemas work too.
 */

import { lazyTargetOf, zodDefOf as defOf, zodInternalsOf, type ZodDef as Def } from './zod-internals.js';

/**
 * Kinds of schema that accept no object with fields of its own (a primitive, an array, a Map):
 * as an option of a union beside an object (`z.union([approval, z.null()])`) they name no field,
 * and so leave the object's check on, where reading them as 'any' turned the whole check off.
 */
const NO_FIELDS = new Set([
  'null', 'undefined', 'void', 'never', 'literal', 'string', 'number', 'int', 'boolean', 'bigint', 'symbol', 'nan', 'enum',
  'template_literal', 'date', 'array', 'tuple', 'set', 'map', 'file', 'function', 'promise',
]);

/** Wrappers whose fields are their inner schema's. */
const INNER = new Set(['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional', 'success']);

/**
 * Which fields count as named. 'either': a node's returned fields, merged into the state and then
 * parsed, named on the input or output side of a pipe or transform. 'input': a value given from
 * outside (start's input, a resume value), read by the schema's input side only, where a function
 * (a preprocess that renames a legacy field, a catch that takes anything) may read any field.
 */
type Side = 'either' | 'input';

const caches: Record<Side, WeakMap<object, ReadonlySet<string> | 'any'>> = { either: new WeakMap(), input: new WeakMap() };

export function declaredFields(schema: unknown, side: Side = 'either'): ReadonlySet<string> | 'any' {
  if (schema === null || typeof schema !== 'object') return 'any';
  let known = caches[side].get(schema);
  if (known === undefined) {
    known = collect(schema, side, new Set(), new Set());
    caches[side].set(schema, known);
  }
  return known;
}

/** Adds the fields of `schema` to `into`; 'any' as soon as one part accepts fields it does not name. */
function collect(schema: unknown, side: Side, into: Set<string>, seen: Set<unknown>): Set<string> | 'any' {
  const def = defOf(schema);
  if (def === undefined) return 'any';
  if (seen.has(schema)) return into; // a recursive schema: its fields are already being collected
  seen.add(schema);
  const parts = side === 'input' ? inputPartsOf(def, schema) : partsOf(def, schema);
  if (parts === 'any') return 'any';
  if (Array.isArray(parts)) {
    for (const part of parts) if (collect(part, side, into, seen) === 'any') return 'any';
    return into;
  }
  // An object: its shape's keys, unless it keeps, accepts or drops on purpose other keys.
  if ('catchall' in def) {
    const catchall = defOf(def.catchall);
    if (catchall?.type !== 'never') return 'any';
  }
  for (const key of Object.keys((def.shape ?? {}) as object)) into.add(key);
  return into;
}

/** partsOf for a value given from outside: a pipe's input side only; a transform or a catch reads any field. */
function inputPartsOf(def: Def, schema: unknown): unknown[] | 'object' | 'any' {
  switch (def.type) {
    case 'pipe': return [def.in];
    case 'transform': return 'any';
    case 'catch': return 'any';
    default: return partsOf(def, schema);
  }
}

/** The schemas whose fields make `def`'s, 'object' for an object, or 'any'. */
function partsOf(def: Def, schema: unknown): unknown[] | 'object' | 'any' {
  switch (def.type) {
    case 'object': return 'object';
    case 'pipe': return [def.in, def.out];
    case 'transform': return []; // the output side of a .transform(): names nothing itself
    case 'union': return Array.isArray(def.options) ? def.options : 'any';
    case 'intersection': return [def.left, def.right];
    // zod's own target, made once (a getter that throws reads as undefined, and so as 'any').
    case 'lazy': return [lazyTargetOf(zodInternalsOf(schema) ?? {})];
    default: return INNER.has(def.type ?? '') ? [def.innerType] : NO_FIELDS.has(def.type ?? '') ? [] : 'any';
  }
}

/**
 * The first top-level field of `given` (with a value) that the parsed output does not have and
 * the schema names nowhere: a schema that strips keys it does not name (zod's default) would drop
 * a misspelt field without a word. A field the schema names (a transform that removes it, another
 * variant of a union) is the schema's doing, and a schema that keeps or accepts unknown fields, or
 * drops them on purpose (`.strip()`), is not checked (declaredFields). Only the top-level fields
 * are, not what they hold: a nested object may be narrowed to its declared fields on purpose.
 * Checked where a value enters a run: a node's returned fields (side 'either'), start's input and
 * a resume value (side 'input': a preprocess or a catch on the way in may read any field).
 */
export function droppedField(schema: unknown, given: unknown, parsed: unknown, side: Side = 'either'): string | undefined {
  if (given === null || typeof given !== 'object' || Array.isArray(given) || parsed === null || typeof parsed !== 'object') return undefined;
  const declared = declaredFields(schema, side);
  if (declared === 'any') return undefined;
  try {
    for (const key of Object.keys(given)) {
      if ((given as Record<string, unknown>)[key] !== undefined && !Object.hasOwn(parsed, key) && !declared.has(key)) return key;
    }
  } catch {
    // A Proxy whose traps throw: not checked here; the value's read-back check refuses it.
  }
  return undefined;
}

/** How to keep fields a schema does not name, said wherever one is refused as dropped. */
export const ON_PURPOSE = 'to drop unknown fields on purpose, end the object schema with .strip(), which keeps the fingerprint, so runs in flight accept it; ' +
  '.loose() keeps them but changes the fingerprint, which runs started before refuse';
