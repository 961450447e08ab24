/**
 * The canonical descriptor of a workflow definition and its fingerprint. The descriptor is what a
 * run records in RUN_STARTED.definition, so that a later mismatch can be named ("node X added",
 * "state schema: field y changed") rather than only detected.
 *
 * What counts: name, version, start node, node names in order with their kinds and static routes
 * (a function route is "dynamic"), the state schema and each interrupt's resume schema as JSON
 * Schema (zod 4's `z.toJSONSchema`).
 *
 * Format 2 records each schema twice, as what it returns (`io: 'output'`) and as what it
 * accepts (`io: 'input'`: a strict object and a stripping one differ only there, and so do a
 * preprocess or a prefault), each annotated (`x-remit-zod`, zodNotes) with what JSON Schema
 * cannot say: a type it writes as "any" (a date, a custom schema, a transform or pipe), coercion,
 * checks that change a value or run code (`.trim()`, `.refine()`: their kind, not their body),
 * regular-expression flags. Then normalized (normalizeSchema): what does not change which values a
 * schema accepts or what it returns is left out, so that reordering an object's fields or adding a
 * `.describe()` does not refuse every run started before. Not seen, in any format: the body of a
 * function (a transform's, a refinement's, a custom schema's): keep a version bump for those.
 *
 * Format 3 is format 2 with the annotations removed before zod finishes its JSON Schema,
 * and the definitions zod generates for recursive schemas numbered independently of field order
 * (formatThreeSchema): in format 2, a `.describe()` on a member of a nullable, a union or an
 * intersection, or the order of fields holding recursive schemas, changed the fingerprint.
 *
 * Format 4 is format 3 without what is not the schema's own: a default's value (zod
 * calls a function default, `.default(() => randomUUID())`, each time it writes its JSON Schema, so
 * format 3 gave such a definition a new fingerprint at every build and refused every run after a
 * restart), written as a note that the schema has one (`x-remit-zod.defaulted`); and the metadata
 * of zod's global registry (`.meta()`, `.describe()`: two schemas given one `.meta({ id })` made
 * zod throw, and format 3 then described the whole schema by that error's text). A schema zod
 * cannot write at all (a default function that throws) is refused by `build()` instead of being
 * described by its error (describeWorkflow's `onError`).
 *
 * Format 5 (current) is format 4 with three things fixed. The checks: format 4 noted only a
 * change of the value (`overwrite`) and a refinement (`custom`), so a check JSON Schema does not
 * write (`z.property()`), a string format's option it does not write (`z.jwt({ alg })`,
 * `z.url({ normalize })`) and the order of `.trim()` and `.min(1)` went unseen, and so did the
 * notes of a schema under a wrapper that has notes of its own (`.trim().catch('')`): now every
 * check JSON Schema does not fully write is noted with its options, in order, all of them when one
 * changes the value, and a wrapper keeps the notes of what it wraps (formatFiveNotes). The
 * recursion: zod extracts into `$defs` whichever member of a cycle it meets first, which follows
 * the order of the fields, so reordering fields that hold mutually recursive schemas changed the
 * fingerprint; now the recursive part is written in one form (canonicalRecursion). The nodes: they
 * are listed by name, not in the order the builder added them, which no run depends on (records and
 * the core name nodes; the node table a run records is its own). Before any release recorded it,
 * format 5 was changed in place for two cases it wrote by the order of the fields: a clone
 * (`.describe()`, `.refine()`) of an extracted recursive schema that has notes (markCloneOfExtracted),
 * and schemas checks hold that hold each other (HeldSchemas, which also bounds describeWorkflow's work).
 *
 * Format 1 (the first releases) recorded the output JSON Schema as zod wrote it, unannotated, so
 * its fingerprint changed with the order of `required` and with descriptions, and missed what
 * only the input or the annotations show. A workflow keeps its fingerprints of formats 1 to 4
 * too (`formerFingerprints`), so runs started under any of them continue under the same
 * definition after an upgrade.
 */

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DefinitionInvalidError, type ErrorSubject } from '../errors.js';
import { canonicalJson, isPlainObject, utf8, type Json } from '../json.js';
import type { NodeDefinition } from './workflow.js';

/** The descriptor format new runs record (see the header comment for what changed in 2 to 5). */
export const DESCRIPTOR_FORMAT = 5;

/** A descriptor format a run may have recorded: the current one, or one an earlier release wrote. */
export type DescriptorFormat = 1 | 2 | 3 | 4 | 5;

/** The formats whose fingerprints a workflow also accepts (Workflow.formerFingerprints). */
export const FORMER_FORMATS = [1, 2, 3, 4] as const;

export interface NodeDescriptor {
  name: string;
  kind: 'pure' | 'effect' | 'interrupt';
  /** A static next node, null for END, or "dynamic" for a function route. */
  next: string | null | { dynamic: true };
  /** An interrupt's resume schema: what it returns; from format 2, what it accepts in `resumeInput`. */
  resume?: Json;
  resumeInput?: Json;
}

export interface WorkflowDescriptor {
  format: number;
  name: string;
  version: string;
  start: string;
  /** The state schema: what it returns; from format 2, what it accepts in `stateInput`. */
  state: Json;
  stateInput?: Json;
  nodes: NodeDescriptor[];
}

interface DescribableWorkflow {
  name: string;
  version: string;
  start: string;
  stateSchema: z.ZodType;
  nodes: ReadonlyMap<string, NodeDefinition<any>>;
  nodeOrder: readonly string[];
}

/**
 * The workflow's descriptor in `format` (the current one unless a former fingerprint is computed).
 * A schema zod cannot write as JSON Schema (it threw: a default function that throws) is refused
 * in the current format (DefinitionInvalidError naming the schema, from `build()`); a former
 * format describes it by zod's error, as the release that wrote it did, so that a run recorded
 * that way is still recognised.
 */
export function describeWorkflow(wf: DescribableWorkflow, format: DescriptorFormat = DESCRIPTOR_FORMAT): WorkflowDescriptor {
  // One record of the schemas checks hold for the whole definition, each written once whichever
  // schemas hold it (its note is the same wherever it is met); two bounds: one per schema, which
  // names the schema that is large, and one on the whole definition (HeldSchemas.count).
  const held = new HeldSchemas();
  const describe = (schema: z.ZodType, subject: ErrorSubject): SchemaPair => {
    if (format === 1) return { output: formatOneSchema(schema) };
    if (format === 2) return formatTwoSchema(schema);
    if (format === 3) return formatThreeSchema(schema);
    if (format === 4) return formatFourSchema(schema);
    const which = subject.node === undefined ? 'the state schema' : `the resume schema of ${subject.node}`;
    try {
      held.begin(which);
      return formatFiveSchema(schema, held);
    } catch (error) {
      if (error instanceof DefinitionTooLarge) throw new DefinitionInvalidError(wf.name, error.message);
      if (error instanceof DescriptionTooLarge) throw new DefinitionInvalidError(wf.name, `${which} ${error.message}`, subject);
      throw new DefinitionInvalidError(wf.name, `${which} cannot be described for the definition's fingerprint: zod threw while writing its JSON Schema (${errorText(error)}); ${writeFailureCause(error)}`, subject);
    }
  };
  const state = describe(wf.stateSchema, { field: 'state' });
  return {
    format,
    name: wf.name,
    version: wf.version,
    start: wf.start,
    state: state.output,
    ...(state.input === undefined ? {} : { stateInput: state.input }),
    // From format 5 by name: the order the builder added the nodes in changes nothing for a run.
    nodes: (format >= 5 ? [...wf.nodeOrder].sort() : wf.nodeOrder).map((name) => nodeDescriptor(wf.nodes.get(name)!, describe)),
  };
}

/** What likely made zod throw while writing a schema, and what to do. */
function writeFailureCause(error: unknown): string {
  // A stack overflow: zod follows a schema until it meets one it has seen, and a getter that makes
  // a new schema at each call (`.describe()` of the recursive schema inside `z.lazy`) never ends.
  if (error instanceof RangeError && /call stack/i.test(errorText(error))) {
    return 'a z.lazy getter or an object getter that makes a new copy of the recursive schema each time it is called (a .describe(), .meta() or .refine() of it inside the getter) is the usual cause: ' +
      'make the copy once, outside the getter, or describe the field around it (`.optional().describe(...)`); or the schema nests or chains too deeply';
  }
  // zod writes a default's value as JSON: a default of undefined (`() => process.env.X`) fails there.
  if (/"undefined" is not valid JSON/.test(errorText(error))) {
    return 'a default or prefault whose value is undefined (a function returning undefined) is the usual cause: zod cannot write it; leave the default out (an optional field is undefined when absent) or give a JSON value';
  }
  // zod 4 reads each part's `_zod.def`; a zod 3 schema has `_def` instead, and reading fails there.
  if (/reading 'def'/.test(errorText(error))) {
    return 'a zod 3 schema (from zod/v3, or a zod 3 package) inside this zod 4 schema is the usual cause: make every part with zod 4';
  }
  return 'a default, prefault or catch function that throws when called at build() is the usual cause: make it callable then';
}

type SchemaPair = { output: Json; input?: Json };

function nodeDescriptor(def: NodeDefinition<any>, describe: (schema: z.ZodType, subject: ErrorSubject) => SchemaPair): NodeDescriptor {
  const next = def.spec.next;
  const route = typeof next === 'function' ? { dynamic: true as const } : next === '__end__' ? null : next;
  const out: NodeDescriptor = { name: def.name, kind: def.kind, next: route };
  if (def.kind === 'interrupt') {
    const resume = describe(def.spec.resume, { node: def.name, field: 'resume' });
    out.resume = resume.output;
    if (resume.input !== undefined) out.resumeInput = resume.input;
  }
  return out;
}

/** Format 1's schema: the output JSON Schema as zod writes it (kept exactly: its fingerprints are in logs). */
function formatOneSchema(schema: z.ZodType): Json {
  return jsonSchemaOf(schema, { io: 'output' });
}

function formatTwoSchema(schema: z.ZodType): SchemaPair {
  return {
    output: normalizeSchema(jsonSchemaOf(schema, { io: 'output', override: zodNotes })),
    input: normalizeSchema(jsonSchemaOf(schema, { io: 'input', override: zodNotes })),
  };
}

/**
 * Format 3's schema: format 2's, with the annotations removed before zod finishes its JSON Schema
 * (zod writes a union of bare types as a `type` list, and folds an intersection of objects into one
 * object, only when no member carries a description or title: in format 2, `.describe()` on a
 * member of a nullable, a union or an intersection changed the fingerprint), and the definitions
 * zod generates for recursive schemas (`__schema0`, ...) numbered in an order that does not depend
 * on the order of the fields (canonicalDefinitionIds).
 */
function formatThreeSchema(schema: z.ZodType): SchemaPair {
  const override = (ctx: OverrideContext) => {
    for (const key of ANNOTATION_KEYWORDS) delete ctx.jsonSchema[key];
    zodNotes(ctx);
  };
  return {
    output: canonicalDefinitionIds(normalizeSchema(jsonSchemaOf(schema, { io: 'output', override }))),
    input: canonicalDefinitionIds(normalizeSchema(jsonSchemaOf(schema, { io: 'input', override }))),
  };
}

/** An empty metadata registry: format 4 describes a schema without what `.meta()` and `.describe()` add. */
const NO_METADATA = z.registry<z.GlobalMeta>();

/**
 * Format 4's schema: format 3's, described without zod's global registry (metadata: ids, titles,
 * descriptions) and with each default's value left out (defaultNote). zod's error, when it cannot
 * write the schema, is thrown, not described.
 */
function formatFourSchema(schema: z.ZodType): SchemaPair {
  const override = (ctx: OverrideContext) => {
    for (const key of ANNOTATION_KEYWORDS) delete ctx.jsonSchema[key];
    zodNotes(ctx);
    defaultNote(ctx);
  };
  const describe = (io: 'input' | 'output') =>
    canonicalDefinitionIds(normalizeSchema(jsonSchemaOf(schema, { io, override, metadata: NO_METADATA }, 'throw')));
  return { output: describe('output'), input: describe('input') };
}

/** The zod types that give a value when there is none (or, for catch, when it is invalid). */
const DEFAULTING_TYPES = new Set(['default', 'prefault', 'catch']);

/**
 * A default's value (`default`, and the input side's `_prefault`) replaced by a note that there is
 * one (`x-remit-zod.defaulted`: default, prefault or catch). zod computes a function default when it
 * writes the JSON Schema, and its definition does not say whether it holds a function or a value,
 * so no default's value can be part of a fingerprint that must be the same at every build: like a
 * transform's body, changing it calls for a version bump.
 */
function defaultNote(ctx: OverrideContext): void {
  const type = (ctx.zodSchema as { _zod?: { def?: { type?: unknown } } })._zod?.def?.type;
  if (typeof type !== 'string' || !DEFAULTING_TYPES.has(type)) return;
  delete ctx.jsonSchema['default'];
  delete ctx.jsonSchema['_prefault'];
  // A copy: zod gives the wrapper a shallow copy of the wrapped schema's JSON, so the notes object
  // may be the wrapped schema's own, which its other uses (a shared `const Name`) would then carry.
  const notes: Record<string, Json> = { ...((ctx.jsonSchema[ZOD_NOTES_KEY] ?? {}) as Record<string, Json>) };
  notes['defaulted'] = type;
  ctx.jsonSchema[ZOD_NOTES_KEY] = notes;
}

/** The ids zod generates for definitions it extracts (a recursive schema); ids given with `.meta({ id })` are kept. */
const GENERATED_ID = /^__schema\d+$/;
const DEFS_REF_PREFIX = '#/$defs/';

/**
 * `schema` with its generated `$defs` ids renamed `__schema0`, `__schema1`, ... in the order a walk
 * meets their first `$ref`, the walk visiting object keys sorted (a field's name, not its place)
 * and each definition's body (one with an id given by `.meta({ id })` too) when its first
 * reference is met. zod numbers them in the order it
 * meets the schemas, which follows the order of the fields.
 */
function canonicalDefinitionIds(schema: Json): Json {
  if (!isPlainObject(schema) || !isPlainObject(schema['$defs'])) return schema;
  const defs = schema['$defs'];
  const renamed = new Map<string, string>();
  const visited = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isPlainObject(value)) return;
    for (const key of Object.keys(value).sort()) {
      const v = value[key];
      if (key === '$ref' && typeof v === 'string' && v.startsWith(DEFS_REF_PREFIX)) {
        const id = v.slice(DEFS_REF_PREFIX.length);
        if (!visited.has(id) && Object.hasOwn(defs, id)) {
          visited.add(id);
          if (GENERATED_ID.test(id)) renamed.set(id, `__schema${renamed.size}`);
          visit(defs[id]);
        }
      } else if (!(value === schema && key === '$defs')) {
        visit(v);
      }
    }
  };
  visit(schema);
  // Definitions no reference reaches (zod writes none) are numbered after the others, by their ids.
  for (const id of Object.keys(defs).sort()) if (GENERATED_ID.test(id) && !renamed.has(id)) renamed.set(id, `__schema${renamed.size}`);
  if ([...renamed].every(([from, to]) => from === to)) return schema;
  const rewrite = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (!isPlainObject(value)) return value;
    const out: Record<string, Json> = Object.create(null);
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string' && v.startsWith(DEFS_REF_PREFIX)) {
        const id = v.slice(DEFS_REF_PREFIX.length);
        out[key] = DEFS_REF_PREFIX + (renamed.get(id) ?? id);
      } else if (value === schema && key === '$defs' && isPlainObject(v)) {
        const map: Record<string, Json> = Object.create(null);
        for (const [id, body] of Object.entries(v)) map[renamed.get(id) ?? id] = rewrite(body);
        out[key] = map;
      } else {
        out[key] = rewrite(v);
      }
    }
    return out;
  };
  return rewrite(schema);
}

/**
 * Format 5's schema: format 4's (no metadata, no default's value), with the notes of
 * formatFiveNotes and the recursive part written in one form (canonicalRecursion).
 */
function formatFiveSchema(schema: z.ZodType, held: HeldSchemas): SchemaPair {
  const note = (inner: z.ZodType, path?: (string | number)[]) => held.note(inner, path);
  return { output: formatFiveJson(schema, 'output', note, held), input: formatFiveJson(schema, 'input', note, held) };
}

/** How format 5 writes a schema a check holds (`z.property('x', schema)`), in the notes of the check. */
type HeldSchemaNote = (schema: z.ZodType, path?: (string | number)[]) => Json;

function formatFiveJson(schema: z.ZodType, io: 'input' | 'output', note: HeldSchemaNote, held: HeldSchemas): Json {
  return canonicalRecursion(normalizeSchema(jsonSchemaOf(schema, { io, override: formatFiveOverride(note, held), metadata: NO_METADATA }, 'throw')));
}

/** Format 5's override of one z.toJSONSchema call: each schema node counted (the bound), its annotations left out, its notes written. */
function formatFiveOverride(note: HeldSchemaNote, held: HeldSchemas): (ctx: OverrideContext) => void {
  const written = new Map<unknown, Record<string, unknown>>();
  return (ctx) => {
    held.count(ctx.path);
    for (const key of ANNOTATION_KEYWORDS) delete ctx.jsonSchema[key];
    formatFiveNotes(ctx, (inner) => note(inner, ctx.path));
    markCloneOfExtracted(ctx, written);
    written.set(ctx.zodSchema, ctx.jsonSchema);
  };
}

/**
 * Format 5's notes of one schema node (ownNotes), a default's value left out as in format 4. A
 * wrapper (`.optional()`, `.catch()`, a pipe) is written as a copy of what it wraps, notes
 * included: its own notes keep those under `inner` (format 4 replaced them, so `.trim().catch('')`
 * read as `.catch('')`). zod writes a wrapper of a schema it extracted into `$defs` as a `$ref`
 * beside the wrapper's own notes; canonicalRecursion merges the two the same way.
 */
function formatFiveNotes(ctx: OverrideContext, note: HeldSchemaNote): void {
  const own = ownNotes(ctx.zodSchema, note);
  if (own['defaulted'] !== undefined) {
    delete ctx.jsonSchema['default'];
    delete ctx.jsonSchema['_prefault'];
  }
  if (Object.keys(own).length > 0) ctx.jsonSchema[ZOD_NOTES_KEY] = withInnerNotes(own, ctx.jsonSchema[ZOD_NOTES_KEY]);
}

function withInnerNotes(own: Record<string, Json>, inner: unknown): Record<string, Json> {
  return isPlainObject(inner) ? { ...own, inner } : own;
}

/**
 * The mark (CLONE_KEY) of a clone written as a `$ref` to its parent. `.describe()`, `.meta()` and
 * `.refine()` make a clone (`_zod.parent`): the parent's type, holding what the parent holds, its
 * notes all its own (a refinement adds to its parent's checks). When zod extracts the parent
 * (recursive, and met first: that follows the order of the fields and what is shared), it writes
 * the clone as `{ $ref: parent, x-remit-zod: own }`, which is not a wrapper of its parent: marked,
 * mergedWrapper (cloneNotes) keeps the notes the clone has in place. The mark says where the
 * parent's notes keep what both wrap: under `inner` when the parent has notes of its own.
 */
function markCloneOfExtracted(ctx: OverrideContext, written: ReadonlyMap<unknown, Record<string, unknown>>): void {
  const parent = (ctx.zodSchema as { _zod?: { parent?: unknown } })._zod?.parent;
  const ref = ctx.jsonSchema['$ref'];
  if (parent === undefined || typeof ref !== 'string') return;
  // A parent written in place with this `$ref` gave it to the clone: the clone of a wrapper refers to
  // what the parent wraps, unmarked; the clone of a clone (`.refine().describe()`) to the same parent.
  const parentJson = written.get(parent);
  if (parentJson?.['$ref'] === ref) {
    if (parentJson[CLONE_KEY] !== undefined) ctx.jsonSchema[CLONE_KEY] = parentJson[CLONE_KEY];
    return;
  }
  const parentHasOwn = Object.keys(ownNotes(parent, () => null)).length > 0;
  ctx.jsonSchema[CLONE_KEY] = parentHasOwn ? 'inner' : 'whole';
}

/** The key of the mark markCloneOfExtracted writes; canonicalRecursion removes it. */
const CLONE_KEY = 'x-remit-clone-of';

/** What format 5 notes of a schema node: format 4's type and coercion, every check JSON Schema does not fully write (checkNotes), whether it gives a default. */
function ownNotes(zodSchema: unknown, note: HeldSchemaNote): Record<string, Json> {
  const internals = zodInternals(zodSchema);
  if (internals === undefined) return {};
  const def = internals.def;
  const notes = typeNotes(internals);
  const checks = checkNotes(internals, note);
  if (checks.length > 0) notes['checks'] = checks;
  if (DEFAULTING_TYPES.has(def.type)) notes['defaulted'] = def.type;
  return notes;
}

/** A check as format 5 reads it: its kind and the options that may change what it accepts. */
interface CheckReading {
  kind: string;
  options: Record<string, unknown>;
}

/**
 * The checks JSON Schema writes, by the type of the schema that holds them, each with the options
 * it writes (for a string format, those that only shape the pattern it writes). zod folds them
 * into keywords (`minLength`, `pattern`, `minimum`, ...); every other check, and any option of
 * these not listed, is noted: a check kind a later zod adds is noted too.
 */
const SHOWN_CHECKS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  string: {
    min_length: ['minimum'], max_length: ['maximum'], length_equals: ['length'],
    string_format: ['format', 'pattern', 'includes', 'position', 'prefix', 'suffix', 'offset', 'local', 'precision', 'version', 'length', 'delimiter'],
  },
  number: { greater_than: ['value', 'inclusive'], less_than: ['value', 'inclusive'], multiple_of: ['value'], number_format: ['format'] },
  array: { min_length: ['minimum'], max_length: ['maximum'], length_equals: ['length'] },
};

/** The check kinds of this zod that only test a value; any other (an overwrite, a kind a later zod adds) may change it. */
const TESTING_CHECKS = new Set([
  'less_than', 'greater_than', 'multiple_of', 'number_format', 'bigint_format', 'max_size', 'min_size', 'size_equals',
  'max_length', 'min_length', 'length_equals', 'string_format', 'property', 'properties', 'mime_type', 'custom',
]);

/**
 * Keys of a check's definition that do not change what it accepts (how an issue is reported, its
 * kind) or that hold a function (a refinement's `fn`, an overwrite's `tx`, and `when`, which says
 * whether the check runs: not seen, in any format, as no function's body is). zod gives every
 * length and size check a `when` of its own, a new function in some releases, so a `when` given in
 * the options cannot be told from zod's: noting one would give a schema another fingerprint under
 * another copy of zod. A schema that is its own check (`z.url()`, `z.int()`) adds its type's keys.
 */
const UNNOTED_CHECK_KEYS = new Set(['check', 'type', 'error', 'message', 'abort', 'path', 'params', 'fn', 'tx', 'when']);
const SCHEMA_KEYS = new Set(['checks', 'coerce']);

/**
 * The notes of a schema node's checks (a format schema, `z.url()`, is its own first check): each
 * check JSON Schema does not fully write, as its kind or `{ check, ...options }`, in order. When one
 * may change the value (`.trim()`, `z.url()`, a kind this zod does not know), every check is noted,
 * in order: `.min(1).trim()` and `.trim().min(1)` write the same `minLength`, and accept different values.
 */
function checkNotes(internals: { def?: ZodDefinition; traits?: Set<string> }, note: HeldSchemaNote): Json[] {
  const def = internals.def!;
  const checks = (def.checks ?? []).map((c) => checkReading(c?._zod?.def, false));
  const all = internals.traits?.has('$ZodCheck') === true ? [checkReading(def, true), ...checks] : checks;
  const inOrder = all.length > 1 && all.some(changesValue);
  return all.filter((c) => inOrder || !shownBy(def.type, c)).map((c) => checkNote(c, note));
}

function checkReading(checkDef: unknown, isSchema: boolean): CheckReading {
  const source = (checkDef ?? {}) as Record<string, unknown>;
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined || UNNOTED_CHECK_KEYS.has(key) || (isSchema && SCHEMA_KEYS.has(key))) continue;
    options[key] = value;
  }
  return { kind: typeof source['check'] === 'string' ? source['check'] : 'unknown', options };
}

function changesValue(check: CheckReading): boolean {
  return !TESTING_CHECKS.has(check.kind) || (check.kind === 'string_format' && check.options['format'] === 'url');
}

/** Whether zod's JSON Schema of a `type` schema says all of `check`: its kind and each option, written as it is. */
function shownBy(type: string, check: CheckReading): boolean {
  const shown = SHOWN_CHECKS[type]?.[check.kind];
  if (shown === undefined) return false;
  return Object.entries(check.options).every(([key, value]) => shown.includes(key) && writtenAsIs(value, check.kind));
}

/** A value JSON Schema writes as it is: not a regular expression's flags, a number that is not finite, or a divisor of 0 (zod leaves those out). */
function writtenAsIs(value: unknown, kind: string): boolean {
  if (typeof value === 'number') return Number.isFinite(value) && !(kind === 'multiple_of' && value === 0);
  if (value instanceof RegExp) return value.flags === '';
  return typeof value === 'string' || typeof value === 'boolean';
}

function checkNote(check: CheckReading, note: HeldSchemaNote): Json {
  const options = Object.entries(check.options);
  if (options.length === 0) return check.kind;
  return { check: check.kind, ...Object.fromEntries(options.map(([key, value]) => [key, optionJson(value, 0, note)])) };
}

const MAX_OPTION_DEPTH = 8;

/** A check's option as JSON: a regular expression as `/source/flags`, a function as "function", a schema as `note` writes it. */
function optionJson(value: unknown, depth: number, note: HeldSchemaNote): Json {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'function';
  if (value instanceof RegExp) return `/${value.source}/${value.flags}`;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (isZodSchema(value)) return note(value);
  if (value === undefined || typeof value === 'symbol' || depth >= MAX_OPTION_DEPTH) return String(value);
  if (Array.isArray(value)) return value.map((item) => optionJson(item, depth + 1, note));
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return Object.prototype.toString.call(value);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, optionJson(item, depth + 1, note)]));
}

/** A zod 4 schema, of this copy of zod or another (its internals, not its class). */
function isZodSchema(value: unknown): value is z.ZodType {
  const traits = (value as { _zod?: { traits?: unknown } } | null)?._zod?.traits;
  return traits instanceof Set && traits.has('$ZodType');
}

/**
 * The schema nodes zod may write for one schema of a definition (the state schema, or one resume
 * schema), both its forms (output and input) and the schemas its checks hold together: a bound on
 * the work of describeWorkflow, as keepable.ts bounds its walk. Each held schema is written once
 * per definition (HeldSchemas), counted in the schema that meets it first, and its note again in
 * each schema that repeats it; so only a schema as large as this (about 5,000 optional fields), or
 * checks whose held schemas hold checked schemas (notes that double at each link, a getter that
 * makes new checked schemas at each call), reaches it. Per schema: a definition of many small
 * schemas (thousands of interrupt nodes) is described whole, up to MAX_DEFINITION_NODES.
 */
const MAX_SCHEMA_NODES = 20_000;

/**
 * The schema nodes counted for one definition, all its schemas together (MAX_SCHEMA_NODES each):
 * what bounds describeWorkflow's work and the descriptor's size (written in every run's first
 * record) when many schemas each stay under their own bound, as many resume schemas whose checks
 * hold one large schema, its note repeated in each. At this bound, measured: 16,666 interrupt
 * nodes with resume schemas of 4 fields (1.9 s, a descriptor of 7.7 MB), 66 resume schemas
 * holding a ring of 8 recursive checked types (0.65 s, 7.4 MB), 10 schemas of 4,900 fields (1.2 s, 2.5 MB).
 */
const MAX_DEFINITION_NODES = 200_000;

/** A held schema written inside one of the schemas it holds (a cycle of checks): it ends there. */
const HOLDS_THIS_CHECK = 'a schema that holds this check';

/** describeWorkflow's refusal of a schema past MAX_SCHEMA_NODES (its message follows the schema's name). */
class DescriptionTooLarge extends Error {}

/** describeWorkflow's refusal of a definition past MAX_DEFINITION_NODES (its message whole, after the workflow's name). */
class DefinitionTooLarge extends Error {}

/** What the refusals say was counted in each schema node. */
const COUNTED_NODES = 'each field, item and wrapper such as .optional() a node';

/**
 * The schemas checks hold (`z.property('x', schema)`) in one definition, each written once,
 * as what it returns and what it accepts (`{ output, input }`), each schema it holds in turn
 * written the same way, except those on a cycle of checks with it (HOLDS_THIS_CHECK): so a
 * schema's note is the same wherever it is met, whatever the order of the fields or of the
 * schemas (the state schema, the resume schemas) that hold it. Writing a held schema in full
 * inside each schema that holds it took exponential time (a ring of recursive types whose checks
 * hold the next one); writing it again for each schema of the definition, time in proportion to
 * their number. It also counts the nodes, per schema and for the definition (the two bounds).
 */
class HeldSchemas {
  /** The schema nodes counted in the schema being described: those zod writes, and each held schema's again where a note repeats it. */
  private nodes = 0;
  /** Of `nodes`, those of the schemas checks hold: written or read for what they hold, or repeated in a note. */
  private heldNodes = 0;
  /** `nodes` and `heldNodes` of the whole definition: all its schemas described so far. */
  private definitionNodes = 0;
  private definitionHeldNodes = 0;
  /** The schema being described ("the state schema", "the resume schema of ask"), for the refusal's message. */
  private schema = 'the state schema';
  private readonly written = new Map<z.ZodType, { json: Json; nodes: number }>();
  private readonly holds = new Map<z.ZodType, z.ZodType[]>();
  /** The nodes of each held schema being written, innermost last: what its note repeats. */
  private readonly writing: number[] = [];
  /** The held schema being written or read for what it holds, for the refusal's message. */
  private current: string | null = null;

  /** Starts the count of one schema of the definition (`which` names it), the held schemas written so far kept. */
  begin(which: string): void {
    this.schema = which;
    this.nodes = 0;
    this.heldNodes = 0;
  }

  /**
   * Counts `n` schema nodes (a node zod writes, or a held schema's note repeated: `held`); past
   * MAX_SCHEMA_NODES, refuses the schema, and past MAX_DEFINITION_NODES the definition, saying
   * what was counted and, when most of it is the schemas checks hold, that those are the cause.
   */
  count(path: readonly (string | number)[] | undefined, n = 1, held = false): void {
    this.nodes += n;
    this.definitionNodes += n;
    if (held || this.current !== null) {
      this.heldNodes += n;
      this.definitionHeldNodes += n;
    }
    if (this.writing.length > 0) this.writing[this.writing.length - 1]! += n;
    if (this.nodes > MAX_SCHEMA_NODES) this.schemaTooLarge(path);
    if (this.definitionNodes > MAX_DEFINITION_NODES) this.definitionTooLarge(path);
  }

  private where(path: readonly (string | number)[] | undefined): string {
    return path === undefined || path.length === 0 ? 'its root' : path.join('.');
  }

  private schemaTooLarge(path: readonly (string | number)[] | undefined): never {
    const counted =
      `is too large to describe for the definition's fingerprint: it has more than ${MAX_SCHEMA_NODES} schema nodes ` +
      `(the limit per schema; ${this.nodes} counted where the count stopped, at ${this.where(path)} of ${this.current ?? 'the schema'}), ` +
      `counting the JSON Schema of what it gives and of what it accepts, ${COUNTED_NODES}`;
    if (this.heldNodes * 2 > this.nodes) {
      throw new DescriptionTooLarge(
        `${counted}, and the schemas its z.property() checks hold, written in the note of each check that holds them (${this.heldNodes} of the nodes): ` +
          'checks whose schemas hold other checked schemas, or a getter that makes a new checked schema at each call, are the usual cause',
      );
    }
    const heldPart = this.heldNodes > 0 ? `, and the schemas its z.property() checks hold (${this.heldNodes} of the nodes)` : '';
    throw new DescriptionTooLarge(
      `${counted}${heldPart}: a schema of thousands of fields is the usual cause; keep many like values as a z.record() or z.array() of one schema, described once whatever the number of entries`,
    );
  }

  private definitionTooLarge(path: readonly (string | number)[] | undefined): never {
    const counted =
      `the definition is too large to describe for its fingerprint: its schemas together have more than ${MAX_DEFINITION_NODES} schema nodes ` +
      `(the limit per definition, each schema under its own limit of ${MAX_SCHEMA_NODES}; ${this.definitionNodes} counted where the count stopped, ` +
      `at ${this.where(path)} of ${this.current === null ? this.schema : `${this.current} in ${this.schema}`}), ` +
      `counting the JSON Schema of what the state schema and each resume schema give and accept, ${COUNTED_NODES}`;
    if (this.definitionHeldNodes * 2 > this.definitionNodes) {
      throw new DefinitionTooLarge(
        `${counted}, and the schemas their z.property() checks hold, written in the note of each check that holds them, in each schema again (${this.definitionHeldNodes} of the nodes): ` +
          'many schemas whose checks hold one large schema (a recursive one, or one whose checks hold others) are the usual cause; ' +
          'check such a value in a .refine(), whose body is not described, or hold it in fewer schemas',
      );
    }
    const heldPart = this.definitionHeldNodes > 0 ? `, and the schemas their z.property() checks hold (${this.definitionHeldNodes} of the nodes)` : '';
    throw new DefinitionTooLarge(
      `${counted}${heldPart}: tens of thousands of interrupt nodes, or many resume schemas of thousands of fields, are the usual cause; ` +
        'split the definition into several workflows, or let one interrupt node in a loop take what many did',
    );
  }

  /** The note of `schema` (a check holds it), its nodes counted again: the note repeats them. */
  note(schema: z.ZodType, path: readonly (string | number)[] | undefined): Json {
    const { json, nodes } = this.written.get(schema) ?? this.describe(schema);
    this.count(path, nodes, true);
    return json;
  }

  /** `schema`'s note: written once, after the held schemas it holds that are on no cycle with it. */
  private describe(schema: z.ZodType): { json: Json; nodes: number } {
    // Components come after those they hold (Tarjan): what a member notes in full is written before.
    for (const component of stronglyConnected([schema], (s) => this.heldBy(s).filter((h) => !this.written.has(h)))) {
      const members = new Set(component);
      for (const member of component) this.written.set(member, this.write(member, members));
    }
    return this.written.get(schema)!;
  }

  private write(schema: z.ZodType, cycle: ReadonlySet<z.ZodType>): { json: Json; nodes: number } {
    const note = (held: z.ZodType, path?: (string | number)[]): Json => (cycle.has(held) ? HOLDS_THIS_CHECK : this.note(held, path));
    this.writing.push(0);
    try {
      const json = this.inside(schema, () => ({ output: formatFiveJson(schema, 'output', note, this), input: formatFiveJson(schema, 'input', note, this) }));
      return { json, nodes: this.writing[this.writing.length - 1]! };
    } finally {
      this.writing.pop();
    }
  }

  /** The schemas the checks met in writing `schema` hold (read by writing it, each noted as nothing). */
  private heldBy(schema: z.ZodType): z.ZodType[] {
    let held = this.holds.get(schema);
    if (held !== undefined) return held;
    const found = new Set<z.ZodType>();
    const note = (inner: z.ZodType): Json => (found.add(inner), null);
    this.inside(schema, () => {
      for (const io of ['output', 'input'] as const) jsonSchemaOf(schema, { io, override: formatFiveOverride(note, this), metadata: NO_METADATA }, 'throw');
    });
    this.holds.set(schema, (held = [...found]));
    return held;
  }

  private inside<T>(schema: z.ZodType, f: () => T): T {
    const outer = this.current;
    this.current = `a schema a check holds (${schema._zod.def.type})`;
    try {
      return f();
    } finally {
      this.current = outer;
    }
  }
}

/**
 * `schema` (normalized) with its recursive part written in one form, whatever the order of the
 * fields. zod extracts into `$defs` the member of a cycle it meets again on its own path, which
 * follows the order of the fields, and writes the other members in place; and it extracts a
 * recursive schema used in two places once, two equal ones (two `z.lazy` of one shape) twice. Here
 * the schema is read as a graph of its parts (schemaGraph), equal parts made one (equalParts), and
 * written back (writeGraph) with a definition for each part on a cycle that more than one place
 * refers to (every cycle has one), numbered in the order a walk of the keys, sorted, meets them.
 * (`reused: 'ref'`, which extracts every schema zod meets twice, would not do: a schema used twice
 * and two equal ones would still differ, and zod does not fold an intersection with an extracted
 * member.) A schema without `$ref` is a tree, written as it is. One case is left to the order of
 * the fields: zod folds an intersection into one object only when no member is extracted, so an
 * intersection with a member of two mutually recursive schemas is written in two ways.
 */
function canonicalRecursion(schema: Json): Json {
  if (!isPlainObject(schema) || !containsRef(schema)) return schema;
  const vertices = schemaGraph(schema);
  return writeGraph(vertices, equalParts(vertices));
}

function containsRef(value: Json): boolean {
  if (Array.isArray(value)) return value.some(containsRef);
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(([key, v]) => key === '$ref' || containsRef(v));
}

/** A part of a schema: its keywords (`json`), their text with each subschema left out (`label`), and the parts of its subschemas in the order mapSubschemas visits them. */
interface Part {
  json: Record<string, Json>;
  label: string;
  children: number[];
}

/**
 * The parts of `root` (part 0 is the root), each `$ref` followed: a bare `$ref` is the part it
 * refers to, a `$ref` beside keywords (a wrapper of an extracted schema) is what it refers to with
 * those keywords merged in, as zod merges them when it writes the schema in place.
 */
function schemaGraph(root: Record<string, Json>): Part[] {
  const defs = isPlainObject(root['$defs']) ? root['$defs'] : {};
  const body: Record<string, Json> = Object.fromEntries(Object.entries(root).filter(([key]) => key !== '$defs'));
  const parts: Part[] = [];
  const ids = new Map<object, number>();
  const resolved = new Map<object, Record<string, Json>>();
  const resolve = (json: Record<string, Json>): Record<string, Json> => {
    const known = resolved.get(json);
    if (known !== undefined) return known;
    resolved.set(json, json); // a cycle of bare references (zod writes none) stays as written
    const ref = json['$ref'];
    const target = ref === '#' ? body : typeof ref === 'string' && ref.startsWith(DEFS_REF_PREFIX) ? defs[ref.slice(DEFS_REF_PREFIX.length)] : undefined;
    const bare = Object.keys(json).every((key) => key === '$ref' || key === CLONE_KEY);
    const out = !isPlainObject(target) ? json : bare ? resolve(target) : mergedWrapper(resolve(target), json);
    resolved.set(json, out);
    return out;
  };
  const add = (json: Record<string, Json>): number => {
    const part = resolve(json);
    const known = ids.get(part);
    if (known !== undefined) return known;
    const entry: Part = { json: part, label: '', children: [] };
    ids.set(part, parts.push(entry) - 1);
    entry.label = canonicalJson(mapSubschemas(part, (sub) => {
      entry.children.push(add(sub));
      return 0;
    }));
    return ids.get(part)!;
  };
  add(body);
  return parts;
}

/**
 * A wrapper's keywords over the schema it refers to, its notes keeping those of that schema under
 * `inner` (formatFiveNotes); a clone's (marked: markCloneOfExtracted) keep what it wraps (cloneNotes).
 */
function mergedWrapper(target: Record<string, Json>, wrapper: Record<string, Json>): Record<string, Json> {
  const merged: Record<string, Json> = Object.create(null);
  for (const [key, value] of Object.entries(target)) merged[key] = value;
  for (const [key, value] of Object.entries(wrapper)) if (key !== '$ref' && key !== CLONE_KEY) merged[key] = value;
  const own = wrapper[ZOD_NOTES_KEY];
  const mark = wrapper[CLONE_KEY];
  if (isPlainObject(own)) merged[ZOD_NOTES_KEY] = mark === undefined ? withInnerNotes(own, target[ZOD_NOTES_KEY]) : cloneNotes(own, target[ZOD_NOTES_KEY], mark);
  return merged;
}

/**
 * A clone's notes, as written in place: its own, and under `inner` what it wraps, which is what its
 * parent wraps: the parent's `inner` when the parent has notes of its own (mark `inner`), else
 * all the parent's notes. zod wrote them beside the `$ref` (`own.inner`) when what it wraps is not extracted.
 */
function cloneNotes(own: Record<string, Json>, parentNotes: Json | undefined, mark: Json): Record<string, Json> {
  if (own['inner'] !== undefined) return own;
  return withInnerNotes(own, mark === 'inner' && isPlainObject(parentNotes) ? parentNotes['inner'] : parentNotes);
}

/** `json` with each subschema replaced by `f(subschema)`, visited in sorted key order. */
function mapSubschemas(json: Record<string, Json>, f: (sub: Record<string, Json>) => Json): Record<string, Json> {
  const sub = (value: Json): Json => (isPlainObject(value) ? f(value) : value);
  const out: Record<string, Json> = Object.create(null);
  for (const key of Object.keys(json).sort()) {
    const value = json[key]!;
    if (SCHEMA_MAP_KEYWORDS.has(key) && isPlainObject(value)) {
      out[key] = Object.fromEntries(Object.keys(value).sort().map((name) => [name, sub(value[name]!)]));
    } else if (SCHEMA_KEYWORDS.has(key)) {
      out[key] = Array.isArray(value) ? value.map(sub) : sub(value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/**
 * Which parts are equal (the same number): the coarsest partition in which parts in one class have
 * the same label and children of the same classes, refined from the labels until it is stable.
 */
function equalParts(parts: readonly Part[]): number[] {
  let classes = numbered(parts.map((p) => p.label));
  for (;;) {
    const next = numbered(parts.map((p, i) => `${classes.of[i]}:${p.children.map((c) => classes.of[c]).join(',')}`));
    if (next.count === classes.count) return next.of;
    classes = next;
  }
}

function numbered(keys: readonly string[]): { of: number[]; count: number } {
  const ids = new Map<string, number>();
  const of = keys.map((key) => {
    const known = ids.get(key);
    if (known !== undefined) return known;
    ids.set(key, ids.size);
    return ids.size - 1;
  });
  return { of, count: ids.size };
}

/**
 * The schema of the graph of classes of parts. A class on a cycle that more than one place refers
 * to (the root counted once more, for the document) is a definition, `__schemaN` numbered as the
 * walk meets it, the root's class `#`; the others are written in place.
 */
function writeGraph(parts: readonly Part[], classOf: readonly number[]): Json {
  const part = new Map<number, Part>();
  parts.forEach((p, i) => { if (!part.has(classOf[i]!)) part.set(classOf[i]!, p); });
  const children = (c: number) => part.get(c)!.children.map((v) => classOf[v]!);
  const root = classOf[0]!;
  const refs = new Map<number, number>([[root, 1]]);
  for (const c of part.keys()) for (const child of children(c)) refs.set(child, (refs.get(child) ?? 0) + 1);
  const cyclic = onCycles([...part.keys()], children);
  const ids = new Map<number, string>();
  const defs: Record<string, Json> = Object.create(null);
  const write = (c: number, inPlace: boolean): Json => {
    if (!inPlace && cyclic.has(c) && refs.get(c)! > 1) {
      if (c === root) return { $ref: '#' };
      if (!ids.has(c)) {
        ids.set(c, `__schema${ids.size}`);
        defs[ids.get(c)!] = write(c, true);
      }
      return { $ref: DEFS_REF_PREFIX + ids.get(c)! };
    }
    const kids = children(c);
    let next = 0;
    return mapSubschemas(part.get(c)!.json, () => write(kids[next++]!, false));
  };
  const document = write(root, true) as Record<string, Json>;
  return ids.size === 0 ? document : { ...document, $defs: defs };
}

/** The nodes of a graph that lie on a cycle: in a strongly connected component of more than one node, or with an edge to itself. */
function onCycles(nodes: readonly number[], edges: (n: number) => number[]): Set<number> {
  const out = new Set<number>();
  for (const component of stronglyConnected(nodes, edges)) {
    if (component.length > 1 || edges(component[0]!).includes(component[0]!)) for (const m of component) out.add(m);
  }
  return out;
}

/** The strongly connected components of the graph reached from `roots` (Tarjan's), each after every component it reaches. */
function stronglyConnected<T>(roots: readonly T[], edges: (n: T) => readonly T[]): T[][] {
  const index = new Map<T, number>();
  const low = new Map<T, number>();
  const stack: T[] = [];
  const onStack = new Set<T>();
  const out: T[][] = [];
  const visit = (n: T): void => {
    index.set(n, index.size);
    low.set(n, index.get(n)!);
    stack.push(n);
    onStack.add(n);
    for (const m of edges(n)) {
      if (!index.has(m)) visit(m);
      if (onStack.has(m)) low.set(n, Math.min(low.get(n)!, low.get(m)!));
    }
    if (low.get(n) !== index.get(n)) return;
    const component: T[] = [];
    for (let m = stack.pop()!; ; m = stack.pop()!) {
      onStack.delete(m);
      component.push(m);
      if (m === n) break;
    }
    out.push(component);
  };
  for (const n of roots) if (!index.has(n)) visit(n);
  return out;
}

/**
 * The JSON Schema zod writes for `schema`. When zod throws, formats 1 to 3 described the schema by
 * its error (`onError: 'describe'`, kept for their fingerprints); formats 4 and 5 throw it.
 */
function jsonSchemaOf(
  schema: z.ZodType,
  options: { io: 'input' | 'output'; override?: (ctx: OverrideContext) => void; metadata?: z.core.$ZodRegistry<z.GlobalMeta> },
  onError: 'describe' | 'throw' = 'describe',
): Json {
  try {
    const json = z.toJSONSchema(schema, { unrepresentable: 'any', ...options }) as Record<string, Json>;
    delete json['$schema'];
    return json;
  } catch (error) {
    if (onError === 'throw') throw error;
    return { unrepresentable: errorText(error) };
  }
}

function errorText(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'a value that cannot be shown';
  }
}

/** What `toJSONSchema` hands an override: the zod schema and the JSON Schema written for it. */
interface OverrideContext {
  zodSchema: unknown;
  jsonSchema: Record<string, unknown>;
  /** Where zod first met the schema, as a path in the JSON Schema (`properties`, a field's name, ...). */
  path?: (string | number)[];
}

/** The key of the notes zodNotes adds to a JSON Schema node. */
const ZOD_NOTES_KEY = 'x-remit-zod';

/** zod types whose JSON Schema says what they are; any other type is named in the notes. */
const JSON_SCHEMA_TYPES = new Set([
  'string', 'number', 'int', 'boolean', 'null', 'object', 'array', 'literal', 'enum', 'union', 'intersection', 'tuple', 'record',
  'optional', 'nullable', 'default', 'any', 'unknown', 'never', 'lazy', 'readonly', 'template_literal',
]);
/** Check kinds formats 2 to 4 note: they change the value or run code. */
const OPAQUE_CHECKS = new Set(['overwrite', 'custom']);

/**
 * Formats 2 to 4's `x-remit-zod` notes of one schema node (format 5's: formatFiveNotes), kept as
 * they were for the fingerprints runs recorded: what its JSON Schema cannot say, read from zod 4's
 * schema definition (`_zod.def`, the documented internals for libraries that walk schemas): the
 * type when JSON Schema writes it as something else (an exact optional too), coercion, a URL's
 * protocol and hostname patterns, opaque check kinds in order, and the flags of
 * regular-expression checks. Nothing is added when there is nothing to say, so a
 * plain schema's descriptor is its JSON Schema.
 */
function zodNotes(ctx: OverrideContext): void {
  const internals = zodInternals(ctx.zodSchema);
  if (internals === undefined) return;
  const def = internals.def;
  const notes = typeNotes(internals);
  // z.url({ protocol, hostname }): JSON Schema writes only `format: uri`.
  for (const key of ['protocol', 'hostname'] as const) {
    const pattern = def[key];
    if (pattern instanceof RegExp) notes[key] = `/${pattern.source}/${pattern.flags}`;
  }
  const checks: string[] = [];
  for (const check of def.checks ?? []) {
    const checkDef = check._zod?.def;
    if (checkDef === undefined) continue;
    if (OPAQUE_CHECKS.has(checkDef.check)) checks.push(checkDef.check);
    else if (checkDef.pattern instanceof RegExp && checkDef.pattern.flags !== '') checks.push(`${checkDef.check}/${checkDef.pattern.source}/${checkDef.pattern.flags}`);
  }
  if (checks.length > 0) notes['checks'] = checks;
  if (Object.keys(notes).length > 0) ctx.jsonSchema[ZOD_NOTES_KEY] = notes;
}

/** A schema node's zod internals, when it has a definition. */
function zodInternals(zodSchema: unknown): { def: ZodDefinition; traits?: Set<string> } | undefined {
  const internals = (zodSchema as { _zod?: { def?: ZodDefinition; traits?: Set<string> } })._zod;
  return internals?.def === undefined ? undefined : { def: internals.def, ...(internals.traits === undefined ? {} : { traits: internals.traits }) };
}

/** The notes of a node's type (formats 2 on): zod's type where JSON Schema writes none, and coercion. */
function typeNotes(internals: { def: ZodDefinition; traits?: Set<string> }): Record<string, Json> {
  const notes: Record<string, Json> = {};
  // An exact optional refuses a present `undefined`; its definition is an optional's, its class is not.
  if (internals.traits?.has('$ZodExactOptional') === true) notes['type'] = 'exact_optional';
  else if (!JSON_SCHEMA_TYPES.has(internals.def.type)) notes['type'] = internals.def.type;
  if (internals.def.coerce === true) notes['coerce'] = true;
  return notes;
}

interface ZodDefinition {
  type: string;
  coerce?: boolean;
  protocol?: unknown;
  hostname?: unknown;
  checks?: { _zod?: { def?: { check: string; pattern?: unknown } } }[];
}

/** `value` without the `x-remit-zod` notes, at any depth (for messages only: never for a fingerprint). */
function withoutNotes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNotes);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, v] of Object.entries(value)) if (key !== ZOD_NOTES_KEY) out[key] = withoutNotes(v);
  return out;
}

/** Keywords that describe a schema without changing what it accepts or returns. */
const ANNOTATION_KEYWORDS = new Set(['title', 'description', 'examples', '$comment', 'deprecated']);
/** Keywords whose value is a map from names to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is a schema, or an array of schemas. */
const SCHEMA_KEYWORDS = new Set([
  'items', 'prefixItems', 'additionalItems', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems',
  'propertyNames', 'contains', 'not', 'if', 'then', 'else', 'allOf', 'anyOf', 'oneOf', 'contentSchema',
]);
/** Keywords whose value is a set written as an array: its order means nothing. */
const SET_KEYWORDS = new Set(['required', 'enum']);

/**
 * A JSON Schema with its annotations removed and its sets sorted, at every schema position (a
 * property *named* "description" is kept: only keywords are dropped). Every other keyword is kept
 * as it is, so any change that may change what the schema accepts still changes the fingerprint.
 */
export function normalizeSchema(schema: Json): Json {
  if (!isPlainObject(schema)) return schema;
  const out: Record<string, Json> = Object.create(null);
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATION_KEYWORDS.has(key)) continue;
    if (SCHEMA_MAP_KEYWORDS.has(key) && isPlainObject(value)) {
      const map: Record<string, Json> = Object.create(null);
      for (const [name, sub] of Object.entries(value)) map[name] = normalizeSchema(sub);
      out[key] = map;
    } else if (SCHEMA_KEYWORDS.has(key)) {
      out[key] = Array.isArray(value) ? value.map(normalizeSchema) : normalizeSchema(value);
    } else if (SET_KEYWORDS.has(key) && Array.isArray(value)) {
      out[key] = value.map((v) => ({ v, text: canonicalJson(v) })).sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0)).map((e) => e.v);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/**
 * The format to describe a definition in to name its differences from a run recorded in an earlier
 * `format`: that format, except format 1's are read from format 2, which says each schema as that
 * run's record does (diffDescriptors leaves out the notes format 1 did not record).
 */
export function formatToCompare(format: number): DescriptorFormat {
  return format === 3 || format === 4 ? format : 2;
}

/** The canonical text a fingerprint hashes. Format 1 kept the first releases' text: keys named `__proto__` dropped. */
export function canonicalDescriptor(descriptor: WorkflowDescriptor): string {
  return descriptor.format === 1 ? canonicalJson(descriptor, { dropProtoKeys: true }) : canonicalJson(descriptor);
}

export function fingerprintOf(descriptor: WorkflowDescriptor): Uint8Array {
  return new Uint8Array(createHash('sha256').update(utf8(canonicalDescriptor(descriptor))).digest());
}

/** Human-readable differences from `recorded` (the run's) to `current` (the code's). */
export function diffDescriptors(recorded: WorkflowDescriptor, currentDescriptor: WorkflowDescriptor): string[] {
  // Format 1 recorded no zod notes: compared with it, the current ones would read as changes.
  const current = recorded.format === 1 ? (withoutNotes(currentDescriptor) as unknown as WorkflowDescriptor) : currentDescriptor;
  const out: string[] = [];
  if (recorded.name !== current.name) out.push(`workflow name changed from ${recorded.name} to ${current.name}`);
  if (recorded.version !== current.version) out.push(`version changed from ${recorded.version} to ${current.version}`);
  if (recorded.start !== current.start) out.push(`start node changed from ${recorded.start} to ${current.start}`);
  // Appended one by one: a spread of 65,535 renamed nodes' lines overflowed the call stack.
  for (const line of diffNodes(recorded.nodes ?? [], current.nodes ?? [])) out.push(line);
  for (const line of diffSchemaPair('state schema', recorded.state, recorded.stateInput, current.state, current.stateInput)) out.push(line);
  if (out.length > 0) return out;
  if (recorded.format === 1) {
    // Normalized, the two are the same: what changed is what format 1 counted and format 2 does not.
    out.push(
      'the schemas differ only in what this run\'s descriptor format (1, written by an earlier release) counts and the current one does not: ' +
        'the order of fields or enum members, or a description, title or example; restore them as they were when the run started to finish it (a changed definition goes under a new workflow name: docs/guide.md, "Changing a workflow")',
    );
  } else if (canonicalJson(recorded) !== canonicalJson(current)) {
    out.push('the definition descriptor differs');
  }
  return out;
}

function diffNodes(recorded: NodeDescriptor[], current: NodeDescriptor[]): string[] {
  const out: string[] = [];
  const before = new Map(recorded.map((n) => [n.name, n]));
  const after = new Map(current.map((n) => [n.name, n]));
  for (const name of after.keys()) if (!before.has(name)) out.push(`node ${name} added`);
  for (const name of before.keys()) if (!after.has(name)) out.push(`node ${name} removed`);
  for (const [name, old] of before) {
    const now = after.get(name);
    if (!now) continue;
    if (old.kind !== now.kind) out.push(`node ${name} kind changed from ${old.kind} to ${now.kind}`);
    if (canonicalJson(old.next) !== canonicalJson(now.next)) {
      out.push(`node ${name} route changed from ${routeText(old.next)} to ${routeText(now.next)}`);
    }
    if (old.kind === 'interrupt' && now.kind === 'interrupt') {
      for (const line of diffSchemaPair(`resume schema of ${name}`, old.resume ?? null, old.resumeInput, now.resume ?? null, now.resumeInput)) out.push(line);
    }
  }
  // The order of the nodes both keep, whatever else changed (an added or removed node alone moves
  // none). Formats 1 to 4 listed the nodes as the builder added them; format 5 lists them by name.
  const keptBefore = recorded.filter((n) => after.has(n.name));
  const keptAfter = current.filter((n) => before.has(n.name));
  if (keptBefore.some((n, i) => n.name !== keptAfter[i]!.name)) out.push('node order changed');
  return out;
}

function routeText(next: NodeDescriptor['next']): string {
  if (next === null) return 'END';
  return typeof next === 'string' ? next : 'a dynamic route';
}

/**
 * The differences of a schema recorded as what it returns and (format 2) what it accepts: those of
 * the output, then those of the input that the output's do not already say (a strict object made
 * of a stripping one shows only in the input, also when a field changed too). A run recorded in
 * format 1 has no input schema: the input is not compared.
 */
function diffSchemaPair(what: string, recordedOutput: Json, recordedInput: Json | undefined, currentOutput: Json, currentInput: Json | undefined): string[] {
  const output = diffSchema(what, recordedOutput, currentOutput);
  if (recordedInput === undefined || currentInput === undefined) return output;
  const inputWhat = `${what} (the values it accepts)`;
  // "changed" (not an object) and "changed (a constraint, ...)" say the same of the whole schema.
  const sentence = (d: string, subject: string) => d.slice(subject.length).replace(GENERIC_CHANGE, ' changed');
  const said = new Set(output.map((d) => sentence(d, what)));
  return [...output, ...diffSchema(inputWhat, recordedInput, currentInput).filter((d) => !said.has(sentence(d, inputWhat)))];
}

const GENERIC_CHANGE = " changed (a constraint, a check or a type that is not a field's)";

/** Names changed top-level properties of an object schema; otherwise says the schema changed. */
function diffSchema(what: string, recordedSchema: Json, currentSchema: Json): string[] {
  // Compared normalized: a run recorded in format 1 is not told of descriptions or field order.
  const recorded = normalizeSchema(recordedSchema);
  const current = normalizeSchema(currentSchema);
  if (canonicalJson(recorded) === canonicalJson(current)) return [];
  const oldProps = objectProperties(recorded);
  const newProps = objectProperties(current);
  if (!oldProps || !newProps) return [`${what} changed`];
  const out: string[] = [];
  for (const key of Object.keys(newProps)) if (!(key in oldProps)) out.push(`${what}: field ${key} added`);
  for (const key of Object.keys(oldProps)) if (!(key in newProps)) out.push(`${what}: field ${key} removed`);
  const comparable = comparableFields(recorded, current);
  for (const key of Object.keys(oldProps)) {
    if (key in newProps && comparable.before(oldProps[key]!) !== comparable.after(newProps[key]!)) out.push(`${what}: field ${key} changed`);
  }
  const wasRequired = requiredFields(recorded);
  const isRequired = requiredFields(current);
  for (const key of Object.keys(oldProps)) {
    if (!(key in newProps)) continue;
    if (wasRequired.has(key) && !isRequired.has(key)) out.push(`${what}: field ${key} is now optional`);
    if (!wasRequired.has(key) && isRequired.has(key)) out.push(`${what}: field ${key} is now required`);
  }
  if (isPlainObject(recorded) && isPlainObject(current) && canonicalJson(recorded['additionalProperties'] ?? null) !== canonicalJson(current['additionalProperties'] ?? null)) {
    out.push(`${what}: what it does with fields it does not name changed (strict, stripping, passthrough or catchall)`);
  }
  // Anything else of the object (a refinement of the whole, a constraint), beside its fields (and
  // the recursive parts they refer to, compared through them).
  if (out.length === 0 || canonicalJson(besidesFields(recorded)) !== canonicalJson(besidesFields(current))) {
    out.push(`${what}${GENERIC_CHANGE}`);
  }
  return out;
}

/** An object schema without what diffSchema names field by field. */
function besidesFields(schema: Json): Json {
  if (!isPlainObject(schema)) return schema;
  const out: Record<string, Json> = Object.create(null);
  for (const [key, value] of Object.entries(schema)) if (key !== 'properties' && key !== 'required' && key !== 'additionalProperties' && key !== '$defs') out[key] = value;
  return out;
}

/**
 * Each field's schema as a text to compare with the other side's, whatever numbers the descriptor
 * gave the recursive parts (`$defs`): it numbers them in the order its walk meets them, so a change
 * in one field's type renumbered another's references (which then read as changed), and a change
 * inside a part showed in no field's own text. A reference is written as the structure of the part
 * it refers to (partNames); a reference to the whole schema (`#`) stays as it is, so that a field of
 * a recursive state is not named for a change of another field.
 */
function comparableFields(recorded: Json, current: Json): { before: (field: Json) => string; after: (field: Json) => string } {
  const rounds = Math.min(MAX_PART_ROUNDS, Math.max(partsOf(recorded).size, partsOf(current).size));
  const recordedNames = partNames(recorded, rounds);
  const currentNames = partNames(current, rounds);
  return {
    before: (field) => canonicalJson(withRefs(field, (name) => recordedNames.get(name))),
    after: (field) => canonicalJson(withRefs(field, (name) => currentNames.get(name))),
  };
}

/** Rounds of partNames: parts told apart only deeper than this many references are taken as equal. */
const MAX_PART_ROUNDS = 64;

function partsOf(root: Json): Map<string, Json> {
  const defs = isPlainObject(root) ? root['$defs'] : undefined;
  return new Map(isPlainObject(defs) ? Object.entries(defs) : []);
}

/**
 * A name for each recursive part that depends on its structure only: at round 0 the part's text with
 * its references blanked, then, each round, the hash of its text with each reference replaced by
 * the name its target had the round before (so, after n rounds, what is reachable in n references).
 * Both sides take the same number of rounds, so equal structures get equal names. Linear in the
 * parts' size per round.
 */
function partNames(root: Json, rounds: number): Map<string, string> {
  const parts = partsOf(root);
  let names = new Map<string, string>([...parts.keys()].map((name) => [name, '']));
  for (let round = 0; round <= rounds; round++) {
    const previous = names;
    names = new Map([...parts].map(([name, part]) => [name, createHash('sha256').update(canonicalJson(withRefs(part, (target) => previous.get(target)))).digest('hex')]));
  }
  return names;
}

/** `schema` with each `$defs` reference written as its part's name (a reference `name` gives nothing for, and `#`, stay as they are). */
function withRefs(schema: Json, name: (part: string) => string | undefined): Json {
  if (Array.isArray(schema)) return schema.map((item) => withRefs(item, name));
  if (!isPlainObject(schema)) return schema;
  const out: Record<string, Json> = Object.create(null);
  for (const [key, value] of Object.entries(schema)) {
    const named = key === '$ref' && typeof value === 'string' && value.startsWith(DEFS_REF_PREFIX) ? name(value.slice(DEFS_REF_PREFIX.length)) : undefined;
    out[key] = named !== undefined ? `part:${named}` : withRefs(value, name);
  }
  return out;
}

function requiredFields(schema: Json): Set<string> {
  const required = isPlainObject(schema) ? schema['required'] : undefined;
  return new Set(Array.isArray(required) ? required.filter((k): k is string => typeof k === 'string') : []);
}

function objectProperties(schema: Json): Record<string, Json> | null {
  if (!isPlainObject(schema)) return null;
  const props = schema['properties'];
  return isPlainObject(props) ? props : null;
}
