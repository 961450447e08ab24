/**
 * The canonical descriptor of a workflow definition and its fingerprint. The descriptor is what a
 * run records in RUN_STARTED.definition, so that a later mismatch can be named ("node X added",
 * "state schema: field y changed") rather than only detected.
 *
 * What counts: name, version, start node, node names in order with their kinds and static routes
 * (a function route is "dynamic"), the state schema and each interrupt's resume schema as JSON
 * Schema (zod 4's `z.toJSONSchema`; a schema it cannot represent is recorded as unrepresentable,
 * so changes inside it go unnoticed: keep a version bump for those).
 *
 * Format 2 (current) records each schema normalized (normalizeSchema): what does not change which
 * values a schema accepts or what it returns is left out, so that reordering an object's fields or
 * adding a `.describe()` does not refuse every run started before. Format 1 (the first releases)
 * recorded the JSON Schema as zod wrote it, so its fingerprint changed with the order of `required`
 * and with descriptions; a workflow keeps that fingerprint too (`formerFingerprints`), so runs
 * started under format 1 continue under the same definition after an upgrade.
 */

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson, isPlainObject, utf8, type Json } from '../json.js';
import type { NodeDefinition } from './workflow.js';

/** The descriptor format new runs record (see the header comment for what changed in 2). */
export const DESCRIPTOR_FORMAT = 2;

export interface NodeDescriptor {
  name: string;
  kind: 'pure' | 'effect' | 'interrupt';
  /** A static next node, null for END, or "dynamic" for a function route. */
  next: string | null | { dynamic: true };
  resume?: Json;
}

export interface WorkflowDescriptor {
  format: number;
  name: string;
  version: string;
  start: string;
  state: Json;
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

/** The workflow's descriptor in `format` (the current one unless a former fingerprint is computed). */
export function describeWorkflow(wf: DescribableWorkflow, format: 1 | 2 = DESCRIPTOR_FORMAT): WorkflowDescriptor {
  const describe = (schema: z.ZodType): Json => (format === 1 ? schemaDescriptor(schema) : normalizeSchema(schemaDescriptor(schema)));
  return {
    format,
    name: wf.name,
    version: wf.version,
    start: wf.start,
    state: describe(wf.stateSchema),
    nodes: wf.nodeOrder.map((name) => nodeDescriptor(wf.nodes.get(name)!, describe)),
  };
}

function nodeDescriptor(def: NodeDefinition<any>, describe: (schema: z.ZodType) => Json): NodeDescriptor {
  const next = def.spec.next;
  const route = typeof next === 'function' ? { dynamic: true as const } : next === '__end__' ? null : next;
  const out: NodeDescriptor = { name: def.name, kind: def.kind, next: route };
  if (def.kind === 'interrupt') out.resume = describe(def.spec.resume);
  return out;
}

function schemaDescriptor(schema: z.ZodType): Json {
  try {
    const json = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'output' }) as Record<string, Json>;
    delete json['$schema'];
    return json;
  } catch (error) {
    return { unrepresentable: error instanceof Error ? error.message : String(error) };
  }
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
export function diffDescriptors(recorded: WorkflowDescriptor, current: WorkflowDescriptor): string[] {
  const out: string[] = [];
  if (recorded.name !== current.name) out.push(`workflow name changed from ${recorded.name} to ${current.name}`);
  if (recorded.version !== current.version) out.push(`version changed from ${recorded.version} to ${current.version}`);
  if (recorded.start !== current.start) out.push(`start node changed from ${recorded.start} to ${current.start}`);
  out.push(...diffNodes(recorded.nodes ?? [], current.nodes ?? []));
  out.push(...diffSchema('state schema', recorded.state, current.state));
  if (out.length > 0) return out;
  if (recorded.format === 1) {
    // Normalized, the two are the same: what changed is what format 1 counted and format 2 does not.
    out.push('the order of required fields or a schema description changed, and this run was started under descriptor format 1, which counts them: restore them as they were, or fork the run');
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
    if (old.kind === 'interrupt' && now.kind === 'interrupt') out.push(...diffSchema(`resume schema of ${name}`, old.resume ?? null, now.resume ?? null));
  }
  const sameNames = recorded.length === current.length && recorded.every((n) => after.has(n.name));
  if (out.length === 0 && sameNames && recorded.some((n, i) => n.name !== current[i]!.name)) out.push('node order changed');
  return out;
}

function routeText(next: NodeDescriptor['next']): string {
  if (next === null) return 'END';
  return typeof next === 'string' ? next : 'a dynamic route';
}

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
  return out.length > 0 ? out : [`${what} changed (required fields or constraints)`];
}

function objectProperties(schema: Json): Record<string, Json> | null {
  if (!isPlainObject(schema)) return null;
  const props = schema['properties'];
  return isPlainObject(props) ? props : null;
}
