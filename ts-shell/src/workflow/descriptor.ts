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
 * Format 4 (current) is format 3 without what is not the schema's own: a default's value (zod
 * calls a function default, `.default(() => randomUUID())`, each time it writes its JSON Schema, so
 * format 3 gave such a definition a new fingerprint at every build and refused every run after a
 * restart), written as a note that the schema has one (`x-remit-zod.defaulted`); and the metadata
 * of zod's global registry (`.meta()`, `.describe()`: two schemas given one `.meta({ id })` made
 * zod throw, and format 3 then described the whole schema by that error's text). A schema zod
 * cannot write at all (a default function that throws) is refused by `build()` instead of being
 * described by its error (describeWorkflow's `onError`).
 *
 * Format 1 (the first releases) recorded the output JSON Schema as zod wrote it, unannotated, so
 * its fingerprint changed with the order of `required` and with descriptions, and missed what
 * only the input or the annotations show. A workflow keeps its format-1, format-2 and format-3
 * fingerprints too (`formerFingerprints`), so runs started under any of them continue under the
 * same definition after an upgrade.
 */

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DefinitionInvalidError, type ErrorSubject } from '../errors.js';
import { canonicalJson, isPlainObject, utf8, type Json } from '../json.js';
import type { NodeDefinition } from './workflow.js';

/** The descriptor format new runs record (see the header comment for what changed in 2, 3 and 4). */
export const DESCRIPTOR_FORMAT = 4;

/** A descriptor format a run may have recorded: the current one, or one an earlier release wrote. */
export type DescriptorFormat = 1 | 2 | 3 | 4;

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
  const describe = (schema: z.ZodType, subject: ErrorSubject): SchemaPair => {
    if (format === 1) return { output: formatOneSchema(schema) };
    if (format === 2) return formatTwoSchema(schema);
    if (format === 3) return formatThreeSchema(schema);
    try {
      return formatFourSchema(schema);
    } catch (error) {
      const which = subject.node === undefined ? 'the state schema' : `the resume schema of ${subject.node}`;
      const text = errorText(error);
      // zod writes a default's value as JSON: a default of undefined (`() => process.env.X`) fails there.
      const cause = /"undefined" is not valid JSON/.test(text)
        ? 'a default or prefault whose value is undefined (a function returning undefined) is the usual cause: zod cannot write it; leave the default out (an optional field is undefined when absent) or give a JSON value'
        : 'a default, prefault or catch function that throws when called at build() is the usual cause: make it callable then';
      throw new DefinitionInvalidError(wf.name, `${which} cannot be described for the definition's fingerprint: zod threw while writing its JSON Schema (${text}); ${cause}`, subject);
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
    nodes: wf.nodeOrder.map((name) => nodeDescriptor(wf.nodes.get(name)!, describe)),
  };
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
 * The JSON Schema zod writes for `schema`. When zod throws, formats 1 to 3 described the schema by
 * its error (`onError: 'describe'`, kept for their fingerprints); format 4 throws it.
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
}

/** The key of the notes zodNotes adds to a JSON Schema node. */
const ZOD_NOTES_KEY = 'x-remit-zod';

/** zod types whose JSON Schema says what they are; any other type is named in the notes. */
const JSON_SCHEMA_TYPES = new Set([
  'string', 'number', 'int', 'boolean', 'null', 'object', 'array', 'literal', 'enum', 'union', 'intersection', 'tuple', 'record',
  'optional', 'nullable', 'default', 'any', 'unknown', 'never', 'lazy', 'readonly', 'template_literal',
]);
/** Check kinds JSON Schema does not show: they change the value or run code. */
const OPAQUE_CHECKS = new Set(['overwrite', 'custom']);

/**
 * The `x-remit-zod` notes of one schema node (what its JSON Schema cannot say), read from zod 4's
 * schema definition (`_zod.def`, the documented internals for libraries that walk schemas): the
 * type when JSON Schema writes it as something else (an exact optional too), coercion, a URL's
 * protocol and hostname patterns, opaque check kinds in order, and the flags of
 * regular-expression checks. Nothing is added when there is nothing to say, so a
 * plain schema's descriptor is its JSON Schema.
 */
function zodNotes(ctx: OverrideContext): void {
  const internals = (ctx.zodSchema as { _zod?: { def?: ZodDefinition; traits?: Set<string> } })._zod;
  const def = internals?.def;
  if (def === undefined) return;
  const notes: Record<string, Json> = {};
  // An exact optional refuses a present `undefined`; its definition is an optional's, its class is not.
  if (internals?.traits?.has('$ZodExactOptional') === true) notes['type'] = 'exact_optional';
  else if (!JSON_SCHEMA_TYPES.has(def.type)) notes['type'] = def.type;
  if (def.coerce === true) notes['coerce'] = true;
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
  out.push(...diffNodes(recorded.nodes ?? [], current.nodes ?? []));
  out.push(...diffSchemaPair('state schema', recorded.state, recorded.stateInput, current.state, current.stateInput));
  if (out.length > 0) return out;
  if (recorded.format === 1) {
    // Normalized, the two are the same: what changed is what format 1 counted and format 2 does not.
    out.push(
      'the schemas differ only in what this run\'s descriptor format (1, written by an earlier release) counts and the current one does not: ' +
        'the order of fields or enum members, or a description, title or example; restore them as they were when the run started, or bump the version and start new runs',
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
      out.push(...diffSchemaPair(`resume schema of ${name}`, old.resume ?? null, old.resumeInput, now.resume ?? null, now.resumeInput));
    }
  }
  // The order of the nodes both keep, whatever else changed (an added or removed node alone moves none).
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
  for (const key of Object.keys(oldProps)) {
    if (key in newProps && canonicalJson(oldProps[key]) !== canonicalJson(newProps[key])) out.push(`${what}: field ${key} changed`);
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
  // Anything else of the object (a refinement of the whole, a constraint), beside its fields.
  if (out.length === 0 || canonicalJson(besidesFields(recorded)) !== canonicalJson(besidesFields(current))) {
    out.push(`${what}${GENERIC_CHANGE}`);
  }
  return out;
}

/** An object schema without what diffSchema names field by field. */
function besidesFields(schema: Json): Json {
  if (!isPlainObject(schema)) return schema;
  const out: Record<string, Json> = Object.create(null);
  for (const [key, value] of Object.entries(schema)) if (key !== 'properties' && key !== 'required' && key !== 'additionalProperties') out[key] = value;
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
