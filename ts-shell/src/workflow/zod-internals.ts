/**
 * Reading a zod 4 schema's structure (`_zod`, the internals zod documents for libraries that walk
 * schemas), structurally, so that another zod 4 copy's schemas are read too. Shared by the walks
 * that look inside a schema without validating with it (async-functions.ts, declared-fields.ts).
 */

/** A schema definition: its kind (`type`) and what it holds, keyed as zod keys it. */
export type ZodDef = { type?: string; [key: string]: unknown };

export interface ZodInternals {
  def?: ZodDef;
  /** A lazy schema's target, made once by zod from its getter and kept. */
  innerType?: unknown;
}

/** The internals of a zod schema (or of a check), or undefined for anything else. */
export function zodInternalsOf(value: unknown): ZodInternals | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  const zod = (value as { _zod?: unknown })._zod;
  return zod !== null && typeof zod === 'object' ? (zod as ZodInternals) : undefined;
}

/** A schema's definition, or undefined for a value that is not a zod schema. */
export function zodDefOf(value: unknown): ZodDef | undefined {
  return zodInternalsOf(value)?.def;
}

/**
 * A lazy schema's target as zod keeps it (its getter called once, by zod), or undefined when the
 * getter throws: that is zod's to report when the schema is used.
 */
export function lazyTargetOf(internals: ZodInternals): unknown {
  try {
    return internals.innerType;
  } catch {
    return undefined;
  }
}
