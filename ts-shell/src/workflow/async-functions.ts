/**
 * Finds, in a zod schema, a function declared `async` that zod would call while validating: a
 * refinement's (`.refine`), a transform's or a preprocess's, a custom schema's (`z.custom`), an
 * overwrite's (`.overwrite`), a catch's (`.catch(fn)`); and a default, prefault or catch
 * (`.default(fn)`, `.prefault(fn)`, `.catch(fn)`) whose function gives a Promise, async or not. REMIT
 * validates synchronously, so such a schema is refused; found here at build(), not only when a
 * value first reaches it, because the Promise the function returns is created inside
 * zod's synchronous parse, where REMIT cannot handle its rejection: a resume value reaching a
 * rejecting refinement would end the process (Node's default for an unhandled rejection).
 *
 * A plain function that returns a Promise looks like any other until it runs, and so does an async
 * function zod keeps only inside a closure of its own (`.superRefine`, `.check`): those are still
 * refused where they are met (guardedSchema), and a rejection there is still unhandled (docs/guide.md).
 *
 * It walks what a schema's definition holds (fields, options, items, wrapped and piped schemas, a
 * lazy schema's target), each schema once: recursive schemas end. Only zod's own structure is read,
 * and the value of a default, prefault or catch, which zod computes by calling the user's function
 * (as zod's JSON Schema, the workflow's fingerprint, does at build() anyway): a function's kind
 * cannot be read through the getter zod wraps a default in, nor a plain function's that returns a
 * Promise, its result can. build() runs this walk before the fingerprint's, so that such a Promise
 * is handled, never left to reject unhandled.
 */

import { types } from 'node:util';
import { lazyTargetOf, zodInternalsOf, type ZodInternals } from './zod-internals.js';

/**
 * The most schemas one walk reads. A getter that makes a new schema at each call (a function that
 * builds its recursive schema anew) never ends; past this many the walk stops, finding nothing, and
 * such a function is refused where a value meets it. (The definition's descriptor is bounded too.)
 */
const MAX_SCHEMAS_WALKED = 200_000;

function isAsyncFunction(value: unknown): boolean {
  if (typeof value !== 'function') return false;
  const tag = (value as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag];
  return tag === 'AsyncFunction' || tag === 'AsyncGeneratorFunction';
}

/** The definition keys that hold functions zod calls on a value, and what each is to a user. */
const FUNCTION_KEYS = {
  fn: 'refine or custom check',
  transform: 'transform, preprocess or codec',
  tx: 'overwrite',
  catchValue: 'catch',
} as const;

/**
 * Whether the value zod's JSON Schema writes for a default, prefault or catch is a Promise: read as
 * zod reads it there (a default's getter, which calls its function; a catch's function called with
 * undefined), with the same argument zod gives it there; build() so calls it once more than zod's
 * JSON Schema passes do (twice for the fingerprint). A Promise's rejection is handled.
 */
function writtenValueIsPromise(def: Record<string, unknown>): boolean {
  let value: unknown;
  try {
    const catchValue = def['catchValue'];
    if (def['type'] === 'catch' && typeof catchValue !== 'function') return false;
    value = def['type'] === 'catch' ? (catchValue as (ctx: undefined) => unknown)(undefined) : def['defaultValue'];
  } catch {
    return false; // a function that throws: zod's to report when its value is used
  }
  if (!types.isPromise(value)) return false;
  Promise.prototype.then.call(value, undefined, () => undefined);
  return true;
}

/** The definition types whose value zod's JSON Schema computes by calling the user's function. */
const COMPUTED_VALUES = new Set(['default', 'prefault', 'catch']);

/** What kind of place an async function was found in, for the refusal's message; undefined when none. */
export function asyncFunctionIn(schema: unknown): string | undefined {
  const seen = new Set<object>();
  const pending: unknown[] = [schema];
  while (pending.length > 0 && seen.size < MAX_SCHEMAS_WALKED) {
    const value = pending.pop();
    const internals = zodInternalsOf(value);
    if (internals === undefined || seen.has(value as object)) continue;
    seen.add(value as object);
    const def = internals.def ?? {};
    for (const [key, kind] of Object.entries(FUNCTION_KEYS)) {
      if (isAsyncFunction(def[key])) return `an async ${kind}`;
    }
    if (COMPUTED_VALUES.has(def['type'] as string) && writtenValueIsPromise(def)) {
      return `a ${def['type']} whose function gives a Promise`;
    }
    // One at a time: a spread of a large enum's values or a union's options would overflow the stack.
    for (const held of heldSchemas(internals, def)) pending.push(held);
  }
  return undefined;
}

/** The schemas and checks a definition holds, one level down. */
function heldSchemas(internals: ZodInternals, def: Record<string, unknown>): unknown[] {
  const held: unknown[] = [];
  for (const key of Object.keys(def)) {
    // A default's value is read only for its kind (writtenValueIsPromise): it is a value, not a schema.
    if (key === 'defaultValue') continue;
    const value = def[key];
    if (key === 'getter' && typeof value === 'function') {
      // A lazy schema: its target as zod keeps it.
      held.push(lazyTargetOf(internals));
    } else if (Array.isArray(value)) {
      for (const item of value) if (zodInternalsOf(item) !== undefined) held.push(item);
    } else if (zodInternalsOf(value) !== undefined) {
      held.push(value);
    } else if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      // An object's shape: its fields' schemas (an enum's values are not schemas, and are skipped).
      for (const field of Object.values(value)) if (zodInternalsOf(field) !== undefined) held.push(field);
    }
  }
  return held;
}
