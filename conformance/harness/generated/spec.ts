/**
 * Generated workflows as data: the language the generator writes, adapters build into their own
 * system (the REMIT adapter: conformance/adapters/remit/generated-workflow.ts) and the harness's
 * own interpreter runs (./model.ts). Shared by both sides the way the reference workflow's
 * description is (../workflow.ts), so it holds only types and the encoding of values.
 *
 * - A **schema** is a tree drawn from a small grammar of zod's common features: strings, numbers,
 *   booleans, enums, literals, ISO date strings, dates, `any`, arrays (nested), records, objects,
 *   optional, nullable, defaults, unions, refinements and transforms (idempotent ones, and some
 *   that are not, or whose output their own schema rejects).
 * - A **workflow** is a state schema (an object) and nodes: pure nodes apply small operations to the
 *   state; effect nodes call an outside effect whose result is a function of the state and fold it
 *   in; interrupt nodes park until a value of their resume schema arrives and store it. Routes are
 *   a node, the end, or a condition on a counter (bounded loops) or on a boolean field.
 * - **Values** travel as JSON with tags for what JSON cannot carry (a Date, a Map, NaN, undefined
 *   in an array), so that the harness can hand an adapter exactly the JavaScript value a user would.
 */

export const GENERATED_WORKFLOW_FORMAT = 'remit-generated-workflow/1';
export const END_NODE = '__end__';

/** Named refinements: predicates a value must also satisfy. */
export const REFINEMENTS = ['even', 'nonEmpty', 'lowercase', 'noSpaces'] as const;
export type RefinementName = (typeof REFINEMENTS)[number];

/**
 * Named transforms. Idempotent: applying them to their own output changes nothing. The others:
 * `times100`, `exclaim` and `inc` change their own output again; `length` and `stringify` return
 * a type their own schema rejects.
 */
export const TRANSFORMS = ['trim', 'lower', 'round', 'clamp100', 'sortNumbers', 'times100', 'exclaim', 'inc', 'length', 'stringify'] as const;
export type TransformName = (typeof TRANSFORMS)[number];
export const IDEMPOTENT_TRANSFORMS: readonly TransformName[] = ['trim', 'lower', 'round', 'clamp100', 'sortNumbers'];

export type SchemaSpec =
  | { t: 'string'; min?: number; max?: number }
  | { t: 'number'; int?: boolean; min?: number; max?: number }
  | { t: 'boolean' }
  | { t: 'enum'; values: string[] }
  | { t: 'literal'; value: string | number | boolean }
  /** z.iso.datetime(): a date kept as an ISO string. */
  | { t: 'isoDate' }
  /** z.date(): a Date object, which JSON turns into a string. */
  | { t: 'date' }
  | { t: 'any' }
  | { t: 'array'; of: SchemaSpec }
  /** z.record(z.string(), of). */
  | { t: 'record'; of: SchemaSpec }
  | { t: 'object'; fields: Array<[string, SchemaSpec]> }
  | { t: 'optional'; of: SchemaSpec }
  | { t: 'nullable'; of: SchemaSpec }
  /** `of.default(value)`: an absent value becomes `value` as it is (zod 4 does not parse a default). */
  | { t: 'default'; of: SchemaSpec; value: Tagged }
  /** z.union(options): the first option that accepts the value. */
  | { t: 'union'; of: SchemaSpec[] }
  | { t: 'refine'; of: SchemaSpec; check: RefinementName }
  | { t: 'transform'; of: SchemaSpec; fn: TransformName };

export type ObjectSchemaSpec = Extract<SchemaSpec, { t: 'object' }>;

/** An operation of a node on the state (applied in order to the node's copy of the state). */
export type Op =
  /** An integer field += by. */
  | { op: 'inc'; field: string; by: number }
  /** field = value. */
  | { op: 'set'; field: string; value: Tagged }
  /** An array field gets `value` appended. */
  | { op: 'push'; field: string; value: Tagged }
  /** A record field gets key `key` set to `value`. */
  | { op: 'put'; field: string; key: string; value: Tagged }
  /** to = from (fields with the same schema). */
  | { op: 'copy'; from: string; to: string }
  /** The run fails (a terminal failure, code GEN_FAIL) when the integer field equals `eq`. */
  | { op: 'failIf'; field: string; eq: number };

export type Route =
  | { to: string }
  /** Loops: `then` while the integer field is below `lt`, else `else`. */
  | { if: { field: string; lt: number }; then: string; else: string }
  /** Branches: `then` when the boolean field is true, else `else`. */
  | { if: { field: string; isTrue: true }; then: string; else: string };

/**
 * What an effect's outside call returns, as a function of the state: `echo` returns
 * `{ tag: "<node>#<value of counter>", n: <counter> * 2 }`; `date` returns `{ at: <a Date> }`, which
 * JSON would turn into a string.
 */
export type EffectResult = { kind: 'echo'; counter: string } | { kind: 'date' };

export type NodeSpec =
  | { kind: 'pure'; name: string; ops: Op[]; next: Route }
  | {
      kind: 'effect';
      name: string;
      result: EffectResult;
      /** A string field that receives the result's `tag` (when the result has one). */
      resultTo: string | null;
      ops: Op[];
      next: Route;
    }
  | {
      kind: 'interrupt';
      name: string;
      resume: SchemaSpec;
      /** The field (schema: optional(resume)) that receives the validated resume value. */
      answer: string;
      ops: Op[];
      next: Route;
    };

export interface WorkflowSpec {
  format: typeof GENERATED_WORKFLOW_FORMAT;
  name: string;
  version: string;
  state: ObjectSchemaSpec;
  /** The first node is the start node. */
  nodes: NodeSpec[];
}

// ---------------------------------------------------------------- tagged values

/** JSON with tags for what JSON cannot hold: `{"$date": iso}`, `{"$map": [[k, v], ...]}`, `{"$nan": 1}`, `{"$undef": 1}`. */
export type Tagged = null | boolean | number | string | Tagged[] | { [key: string]: Tagged };

const TAGS = new Set(['$date', '$map', '$nan', '$undef']);

function tagOf(value: { [key: string]: Tagged }): string | null {
  const keys = Object.keys(value);
  return keys.length === 1 && TAGS.has(keys[0]!) ? keys[0]! : null;
}

/** The JavaScript value a tagged JSON value stands for (a Date, a Map, NaN, undefined where tagged). */
export function untag(value: Tagged): unknown {
  if (Array.isArray(value)) return value.map(untag);
  if (value === null || typeof value !== 'object') return value;
  switch (tagOf(value)) {
    case '$date':
      return new Date(value['$date'] as string);
    case '$map':
      return new Map((value['$map'] as Tagged[]).map((pair) => [untag((pair as Tagged[])[0]!), untag((pair as Tagged[])[1]!)]));
    case '$nan':
      return Number.NaN;
    case '$undef':
      return undefined;
    default: {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = untag(v);
      return out;
    }
  }
}

/** The tagged JSON form of a JavaScript value built from JSON, Dates, Maps, NaN and undefined. */
export function tag(value: unknown): Tagged {
  if (value === undefined) return { $undef: 1 };
  if (typeof value === 'number' && Number.isNaN(value)) return { $nan: 1 };
  if (value instanceof Date) return { $date: value.toISOString() };
  if (value instanceof Map) return { $map: [...value.entries()].map(([k, v]) => [tag(k), tag(v)]) };
  if (Array.isArray(value)) return value.map(tag);
  if (value !== null && typeof value === 'object') {
    const out: { [key: string]: Tagged } = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = tag(v);
    return out;
  }
  return value as Tagged;
}
