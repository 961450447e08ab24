/**
 * The canonical descriptor of a workflow definition and its fingerprint. The descriptor is what a
 * run records in RUN_STARTED.definition, so that a later mismatch can be named ("node X added",
 * "state schema: field y changed") rather than only detected.
 *
 * What counts: name, version, start node, node names in order with their kinds and static routes
 * (a function route is "dynamic"), the state schema and each interrupt's resume schema as JSON
 * Schema (zod 4's `z.toJSONSchema`; a schema it cannot represent is recorded as unrepresentable,
 * so changes inside it go unnoticed: keep a version bump for those).
 */

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson, isPlainObject, utf8, type Json } from '../json.js';
import type { NodeDefinition } from './workflow.js';

export const DESCRIPTOR_FORMAT = 1;

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

export function describeWorkflow(wf: DescribableWorkflow): WorkflowDescriptor {
  return {
    format: DESCRIPTOR_FORMAT,
    name: wf.name,
    version: wf.version,
    start: wf.start,
    state: schemaDescriptor(wf.stateSchema),
    nodes: wf.nodeOrder.map((name) => nodeDescriptor(wf.nodes.get(name)!)),
  };
}

function nodeDescriptor(def: NodeDefinition<any>): NodeDescriptor {
  const next = def.spec.next;
  const route = typeof next === 'function' ? { dynamic: true as const } : next === '__end__' ? null : next;
  const out: NodeDescriptor = { name: def.name, kind: def.kind, next: route };
  if (def.kind === 'interrupt') out.resume = schemaDescriptor(def.spec.resume);
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

export function canonicalDescriptor(descriptor: WorkflowDescriptor): string {
  return canonicalJson(descriptor);
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
  if (out.length === 0 && canonicalJson(recorded) !== canonicalJson(current)) out.push('the definition descriptor differs');
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
function diffSchema(what: string, recorded: Json, current: Json): string[] {
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
