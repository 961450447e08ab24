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

type Def = { type?: string; [key: string]: unknown };

const defOf = (schema: unknown): Def | undefined => (schema as { _zod?: { def?: Def } } | null)?._zod?.def;

/** Wrappers whose fields are their inner schema's. */
const INNER = new Set(['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional', 'success']);

const cache = new WeakMap<object, ReadonlySet<string> | 'any'>();

export function declaredFields(schema: unknown): ReadonlySet<string> | 'any' {
  if (schema === null || typeof schema !== 'object') return 'any';
  let known = cache.get(schema);
  if (known === undefined) {
    known = collect(schema, new Set(), new Set());
    cache.set(schema, known);
  }
  return known;
}

/** Adds the fields of `schema` to `into`; 'any' as soon as one part accepts fields it does not name. */
function collect(schema: unknown, into: Set<string>, seen: Set<unknown>): Set<string> | 'any' {
  const def = defOf(schema);
  if (def === undefined) return 'any';
  if (seen.has(schema)) return into; // a recursive schema: its fields are already being collected
  seen.add(schema);
  const parts = partsOf(def);
  if (parts === 'any') return 'any';
  if (Array.isArray(parts)) {
    for (const part of parts) if (collect(part, into, seen) === 'any') return 'any';
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

/** The schemas whose fields make `def`'s, 'object' for an object, or 'any'. */
function partsOf(def: Def): unknown[] | 'object' | 'any' {
  switch (def.type) {
    case 'object': return 'object';
    case 'pipe': return [def.in, def.out];
    case 'transform': return []; // the output side of a .transform(): names nothing itself
    case 'union': return Array.isArray(def.options) ? def.options : 'any';
    case 'intersection': return [def.left, def.right];
    case 'lazy': return typeof def.getter === 'function' ? [(def.getter as () => unknown)()] : 'any';
    default: return INNER.has(def.type ?? '') ? [def.innerType] : 'any';
  }
}
