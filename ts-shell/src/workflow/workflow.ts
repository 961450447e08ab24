/**
 * The workflow definition API. A workflow is a name, a version, a zod schema for its state, and
 * named nodes of three kinds wired by routes:
 *
 *   const refund = workflow({ name: 'refund', version: '1', state: RefundState })
 *     .pure('computeRefund', { run: (s) => ({ refundCents: ... }), next: 'chargeCard' })
 *     .effect('chargeCard', { run: (s, { idempotencyKey }) => gateway.refund(...), apply: (s, r) => ({ chargeId: r.id }), next: 'managerApproval' })
 *     .interrupt('managerApproval', { resume: Approval, apply: (s, v) => ({ approval: v }), next: (s) => (s.approval?.approved ? 'notifyCustomer' : END) })
 *     .effect('notifyCustomer', { run: ..., next: END })
 *     .build();
 *
 * Nodes return the fields they change (merged shallowly into the state, like LangGraph's default
 * reducer) or nothing. Routing is a pure function of the state. The first node added is the start
 * node unless `startAt` names another. No decorators, no classes to extend.
 */

import { z } from 'zod';
import { MAX_NODE_COUNT } from '../core/framing.js';
import { DefinitionInvalidError, endMeant } from '../errors.js';
import { allKeysOf, notKnown, unknownKey } from '../known-keys.js';
import { isPlainObject, isWellFormedUnicode, utf8, type Json } from '../json.js';
import { asyncFunctionIn } from './async-functions.js';
import { describeWorkflow, fingerprintOf, FORMER_FORMATS, type DescriptorFormat, type WorkflowDescriptor } from './descriptor.js';
import { resumeWithoutKeptValue } from './keepable.js';

/** A workflow has at most this many nodes: the core accepts a RUN_STARTED node table of 1 to 65535 entries (docs/log-format.md). */
export { MAX_NODE_COUNT };

/** The route target that ends the workflow (LangGraph spells it the same way). */
export const END = '__end__' as const;
export type End = typeof END;

/** Node names and run ids are limited so that an effect key (`run/node/seq`) fits a log name. */
export const MAX_NODE_NAME_BYTES = 200;

export type NodeKindName = 'pure' | 'effect' | 'interrupt';

/** Fields a node changes, merged into the state; `void` for "nothing changed". */
export type StateUpdate<S> = Partial<S> | void | undefined;

/** A static next node, END, or a pure function of the state returning one of those. */
export type Route<S> = string | ((state: Readonly<S>) => string);

export interface NodeContext {
  readonly runId: string;
  readonly node: string;
}

export interface EffectContext extends NodeContext {
  /**
   * `${runId}/${node}/${intentSeq}` ("%" and "/" inside the run id and node name written as "%25"
   * and "%2F", so two effects never share a key): the same on every attempt of this effect
   * instance (it comes from the durable intent record), different after a fork (the fork has a new
   * run id). Pass it to the outside system so it applies the effect once.
   */
  readonly idempotencyKey: string;
  /**
   * Which attempt of this effect instance this call is: 1, then 2, 3, ... after a crash, a thrown
   * error or an expired lease (docs/guide.md, "Concurrent sequencers"). The key does not change.
   */
  readonly attempt: number;
}

export interface PureNodeSpec<S> {
  /** Must be deterministic: it may run again after a crash before its completion is durable. */
  run: (state: Readonly<S>, ctx: NodeContext) => StateUpdate<S> | Promise<StateUpdate<S>>;
  next: Route<S>;
}

export interface EffectNodeSpec<S, R> {
  /** Touches the outside world. Its result must be JSON; it is recorded durably once returned. */
  run: (state: Readonly<S>, ctx: EffectContext) => R | Promise<R>;
  /**
   * Folds the (JSON round-tripped) result into the state; pure. Default: the state is unchanged.
   * A result of `undefined` (a handler that returns nothing) is recorded and given as `null`,
   * which the type, the handler's own, does not say: a conditional type that did broke generic
   * code wrapping `.effect` (a deferred type the compiler cannot narrow).
   */
  apply?: (state: Readonly<S>, result: R) => StateUpdate<S>;
  next: Route<S>;
  /**
   * This effect's lease in milliseconds (default: createRemit's `effectLeaseMs`, 30 s): how long
   * other sequencers leave an attempt of it alone before they may take it over. It must exceed the
   * handler's longest run plus the clock skew between hosts. A runtime setting: not part of the
   * definition's fingerprint.
   */
  leaseMs?: number;
}

/**
 * A zod 4 schema as REMIT's types take it: what zod 4 declares of every schema for inference, its
 * output and input types (`_zod.output`, `_zod.input`, read by `z.output` and `z.input`). Not
 * `z.ZodType`, the class of the zod copy the package pins (its fingerprints depend on what zod
 * writes): a schema made by the application's own zod 4 of another release is not assignable to
 * that class (their methods differ), and the state type would be lost. At run time
 * `isZodSchema` checks it structurally the same way.
 */
export interface ZodSchemaLike<O = unknown, I = unknown> {
  readonly _zod: { readonly output: O; readonly input: I };
}

export interface InterruptNodeSpec<S, V extends ZodSchemaLike> {
  /** The schema of the resume value; checked before the interrupt is claimed. */
  resume: V;
  /** Folds the validated resume value into the state; pure. */
  apply: (state: Readonly<S>, value: z.output<V>) => StateUpdate<S>;
  next: Route<S>;
}

export type NodeDefinition<S> =
  | { kind: 'pure'; name: string; spec: PureNodeSpec<S> }
  | { kind: 'effect'; name: string; spec: EffectNodeSpec<S, unknown> }
  | { kind: 'interrupt'; name: string; spec: InterruptNodeSpec<S, z.ZodType> };

export interface WorkflowOptions<Schema extends ZodSchemaLike> {
  name: string;
  version: string;
  /** The state schema; the state type is inferred from it. Its output must be a JSON object. */
  state: Schema;
  description?: string;
}

/** The key of Workflow's type-only record of its interrupt nodes' resume values (never set). */
declare const resumeValueTypes: unique symbol;

/**
 * A built, immutable workflow definition. `Resumes` maps each interrupt node's name to the value
 * its resume schema accepts (built by `.interrupt()`; type-only, so checkWorkflow's `resume`
 * option can name the nodes and their values); any workflow is a `Workflow`.
 */
export interface Workflow<S = any, Input = any, Resumes extends object = Record<string, unknown>> {
  /** Type-only: never present at run time. */
  readonly [resumeValueTypes]?: Resumes;
  readonly name: string;
  readonly version: string;
  readonly description: string | undefined;
  /**
   * The state schema as given, guarded (guardedSchema): its safeParse refuses an output that is
   * not a JSON object and names the schema when it is asynchronous. Interrupt nodes' resume
   * schemas in `nodes` are guarded the same way (without the object rule).
   */
  readonly stateSchema: z.ZodType<S, Input>;
  readonly start: string;
  readonly nodes: ReadonlyMap<string, NodeDefinition<S>>;
  /** Node names in definition order (the node table of RUN_STARTED). */
  readonly nodeOrder: readonly string[];
  /** The canonical descriptor recorded in RUN_STARTED.definition. */
  readonly descriptor: WorkflowDescriptor;
  /** SHA-256 of the canonical descriptor (32 bytes), and its hex form. */
  readonly fingerprint: Uint8Array;
  readonly fingerprintHex: string;
  /**
   * The hex fingerprints of this same definition under earlier descriptor formats (formats 1 to 4):
   * a run whose RUN_STARTED records one of them was started by an earlier release under this
   * definition, and continues.
   */
  readonly formerFingerprints: readonly string[];
}

export type StateOf<W> = W extends Workflow<infer S, any> ? S : never;
export type InputOf<W> = W extends Workflow<any, infer I> ? I : never;
/** Each interrupt node of W by name, with the value its resume schema accepts. */
export type ResumesOf<W> = W extends Workflow<any, any, infer R> ? R : never;

const WORKFLOW_OPTIONS = allKeysOf<WorkflowOptions<z.ZodType>>()('name', 'version', 'state', 'description');

/** The fields each kind of node spec has; any other is refused (a misspelt `apply` would never apply). */
const SPEC_KEYS: Record<NodeKindName, readonly string[]> = {
  pure: allKeysOf<PureNodeSpec<unknown>>()('run', 'next'),
  effect: allKeysOf<EffectNodeSpec<unknown, unknown>>()('run', 'apply', 'next', 'leaseMs'),
  interrupt: allKeysOf<InterruptNodeSpec<unknown, z.ZodType>>()('resume', 'apply', 'next'),
};

/** The built workflows with an interrupt no value can resume (a refused pipe), and which. */
const UNRESUMABLE = new WeakMap<object, { node: string; why: string }>();

/**
 * The interrupt of a built workflow that no value can resume, as a pipe whose output its input
 * refuses leaves it (`z.stringbool()`, a codec from a string to a number), and why; start()
 * refuses new runs of such a workflow (keepable.ts), its runs in flight continue. Undefined for
 * every other workflow.
 */
export function unresumableInterrupt(wf: Workflow): { node: string; why: string } | undefined {
  return UNRESUMABLE.get(wf);
}

export class WorkflowBuilder<S, Input, Resumes extends object = {}> {
  private readonly definitions: NodeDefinition<S>[] = [];
  /** The names in `definitions`, so that adding a node costs the same at the 60 000th as at the first. */
  private readonly names = new Set<string>();
  private startNode: string | undefined;
  /** The first interrupt whose resume schema only a refused pipe leaves without a kept value, and why (unresumableInterrupt). */
  private unresumable: { node: string; why: string } | undefined;

  constructor(private readonly options: WorkflowOptions<z.ZodType<S, Input>>) {
    if (options === null || typeof options !== 'object') {
      throw new DefinitionInvalidError('?', 'workflow() needs its options: { name, version, state }');
    }
    checkName(options.name, options.name, 'workflow name');
    const unknown = unknownKey(options, WORKFLOW_OPTIONS);
    if (unknown !== undefined) throw new DefinitionInvalidError(options.name, `${unknown} ${notKnown('an option of workflow()', WORKFLOW_OPTIONS)}`, { field: unknown });
    if (typeof options.version !== 'string' || options.version.length === 0) {
      throw new DefinitionInvalidError(options.name, 'version must be a non-empty string', { field: 'version' });
    }
    // RUN_STARTED records the version as UTF-8, which cannot hold a lone surrogate: the version
    // would read back altered (U+FFFD) after a reopen.
    if (!isWellFormedUnicode(options.version)) {
      throw new DefinitionInvalidError(options.name, `version ${JSON.stringify(options.version.slice(0, 40))} is not well-formed Unicode (a lone UTF-16 surrogate)`, { field: 'version' });
    }
    if (!isZodSchema(options.state)) {
      throw new DefinitionInvalidError(options.name, `state must be a zod schema (zod 4, e.g. z.object({ ... })), got ${describeNonSchema(options.state)}`, { field: 'state' });
    }
    if (options.description !== undefined && typeof options.description !== 'string') {
      throw new DefinitionInvalidError(options.name, `description must be a string, got ${options.description === null ? 'null' : typeof options.description}`, { field: 'description' });
    }
  }

  pure(name: string, spec: PureNodeSpec<S>): this {
    return this.add({ kind: 'pure', name, spec });
  }

  effect<R>(name: string, spec: EffectNodeSpec<S, R>): this {
    return this.add({ kind: 'effect', name, spec: spec as EffectNodeSpec<S, unknown> });
  }

  interrupt<N extends string, V extends ZodSchemaLike>(name: N, spec: InterruptNodeSpec<S, V>): WorkflowBuilder<S, Input, Resumes & { [K in N]: z.input<V> }> {
    this.add({ kind: 'interrupt', name, spec: spec as unknown as InterruptNodeSpec<S, z.ZodType> });
    // The same builder, its type now knowing this node's resume value.
    return this as unknown as WorkflowBuilder<S, Input, Resumes & { [K in N]: z.input<V> }>;
  }

  /** The first node to run (default: the first node added). */
  startAt(name: string): this {
    this.startNode = name;
    return this;
  }

  build(): Workflow<S, Input, Resumes> {
    const wf = this.options.name;
    if (this.definitions.length === 0) throw new DefinitionInvalidError(wf, 'a workflow needs at least one node');
    if (this.definitions.length > MAX_NODE_COUNT) {
      throw new DefinitionInvalidError(wf, `a workflow has at most ${MAX_NODE_COUNT} nodes (the log's node table), this one has ${this.definitions.length}`, { field: 'nodes' });
    }
    const nodes = new Map(this.definitions.map((d) => [d.name, d]));
    const start = this.startNode === undefined ? this.definitions[0]!.name : this.startNode;
    // Checked before the message below quotes it: a Symbol made it a bare TypeError (and null
    // was taken as "the first node").
    if (typeof start !== 'string') {
      throw new DefinitionInvalidError(wf, `startAt() takes the name of a node (a string), got ${start === null ? 'null' : typeof start}`, { field: 'startAt' });
    }
    if (!nodes.has(start)) throw new DefinitionInvalidError(wf, `start node ${start} is not a node of the workflow`, { node: start });
    for (const def of this.definitions) {
      const next = def.spec.next;
      if (typeof next === 'string' && next !== END && !nodes.has(next)) {
        throw new DefinitionInvalidError(wf, `route of ${def.name} names unknown node ${next}${endMeant(next)}`, { node: def.name, field: 'next' });
      }
      if (typeof next !== 'string' && typeof next !== 'function') {
        throw new DefinitionInvalidError(wf, `next of ${def.name} must be a node name, END or a function`, { node: def.name, field: 'next' });
      }
    }
    const nodeOrder = this.definitions.map((d) => d.name);
    const version = this.options.version;
    // Before the descriptor: its JSON Schema calls a default's function, and a Promise it gave
    // must be found (and its rejection handled) by this walk first.
    refuseAsyncSchema(this.options.state, wf, { field: 'state' });
    for (const def of this.definitions) if (def.kind === 'interrupt') refuseAsyncSchema(def.spec.resume, wf, { node: def.name, field: 'resume' });
    // The descriptor describes the schemas as written; the workflow validates with guarded ones.
    const descriptor = describeWorkflow({ name: wf, version, start, stateSchema: this.options.state, nodes, nodeOrder });
    const fingerprint = fingerprintOf(descriptor);
    // Needed only when a run's fingerprint is not the current one: computed then, once (a cold
    // process pays for every z.toJSONSchema before its first resume).
    const stateSchema = this.options.state;
    let former: readonly string[] | undefined;
    const describeIn = (format: DescriptorFormat): WorkflowDescriptor => describeWorkflow({ name: wf, version, start, stateSchema, nodes, nodeOrder }, format);
    const formerFingerprints = (): readonly string[] =>
      (former ??= Object.freeze(FORMER_FORMATS.map((format) => Buffer.from(fingerprintOf(describeIn(format))).toString('hex'))));
    const guardedNodes = new Map<string, NodeDefinition<S>>();
    for (const def of this.definitions) {
      guardedNodes.set(def.name, def.kind === 'interrupt'
        ? Object.freeze({ ...def, spec: Object.freeze({ ...def.spec, resume: guardedSchema(def.spec.resume, wf, { node: def.name, field: 'resume' }) }) })
        : def);
    }
    const built: Workflow<S, Input, Resumes> = Object.freeze({
      name: wf,
      version,
      description: this.options.description,
      stateSchema: guardedSchema(this.options.state, wf, { field: 'state' }),
      start,
      nodes: readOnlyMap(guardedNodes),
      nodeOrder: Object.freeze(nodeOrder),
      descriptor: deepFreeze(descriptor),
      // A copy at each read: bytes changed through it would no longer be the descriptor's hash.
      get fingerprint() {
        return fingerprint.slice();
      },
      fingerprintHex: Buffer.from(fingerprint).toString('hex'),
      get formerFingerprints() {
        return formerFingerprints();
      },
    });
    describers.set(built, describeIn);
    if (this.unresumable !== undefined) UNRESUMABLE.set(built, this.unresumable);
    return built;
  }

  private add(given: NodeDefinition<S>): this {
    const wf = this.options.name;
    let def = given;
    checkName(wf, def.name, 'node name');
    if (def.name === END) throw new DefinitionInvalidError(wf, `${END} is reserved for the end of the workflow`, { node: def.name });
    if (this.names.has(def.name)) {
      throw new DefinitionInvalidError(wf, `node ${def.name} is defined twice`, { node: def.name });
    }
    if (def.spec === null || typeof def.spec !== 'object') {
      throw new DefinitionInvalidError(wf, `node ${def.name} needs its spec (an object with ${def.kind === 'interrupt' ? 'resume, apply' : 'run'} and next)`, { node: def.name });
    }
    const known = SPEC_KEYS[def.kind];
    const unknown = unknownKey(def.spec, known);
    if (unknown !== undefined) {
      throw new DefinitionInvalidError(wf, `${unknown} ${notKnown(`a field of ${def.kind === 'pure' ? 'a' : 'an'} ${def.kind} node's spec`, known)}`, { node: def.name, field: unknown });
    }
    // A copy of the spec's fields, read once (through its prototype too: a class instance's methods
    // count) and checked below, then frozen: the caller's object (a template shared by several
    // builders, say) changed after this would otherwise change a built workflow behind its fingerprint.
    def = { ...def, spec: specFields(def.spec, known) } as NodeDefinition<S>;
    if (def.kind !== 'interrupt' && typeof def.spec.run !== 'function') {
      throw new DefinitionInvalidError(wf, `node ${def.name} needs a run function`, { node: def.name, field: 'run' });
    }
    if (def.kind === 'interrupt' && !isZodSchema(def.spec.resume)) {
      throw new DefinitionInvalidError(wf, `interrupt ${def.name} needs a zod resume schema (zod 4), got ${describeNonSchema(def.spec.resume)}`, { node: def.name, field: 'resume' });
    }
    if (def.kind === 'interrupt') {
      // A resume schema without a value the log can keep would wedge a run parked there (keepable.ts).
      const refusal = resumeWithoutKeptValue(def.spec.resume, def.name);
      // A pipe whose output its input refuses was built by earlier releases: the workflow is built,
      // so that its runs in flight finish, and its new runs are refused (unresumableInterrupt).
      if (refusal?.onlyPipes === true) this.unresumable ??= { node: def.name, why: refusal.message };
      else if (refusal !== null) throw new DefinitionInvalidError(wf, refusal.message, { node: def.name, field: 'resume' });
    }
    if (def.kind === 'interrupt' && typeof def.spec.apply !== 'function') {
      throw new DefinitionInvalidError(wf, `interrupt ${def.name} needs an apply function`, { node: def.name, field: 'apply' });
    }
    // Checked here, not when the effect has run: an apply that cannot be called would fail the
    // node only after the outside effect happened (its EFFECT_DONE recorded), at every continue.
    if (def.kind === 'effect' && def.spec.apply !== undefined && typeof def.spec.apply !== 'function') {
      throw new DefinitionInvalidError(wf, `apply of effect ${def.name} must be a function (or left out), got ${def.spec.apply === null ? 'null' : typeof def.spec.apply}`, { node: def.name, field: 'apply' });
    }
    if (def.kind === 'effect' && def.spec.leaseMs !== undefined && !isLeaseMs(def.spec.leaseMs)) {
      const got = typeof def.spec.leaseMs === 'string' ? JSON.stringify(def.spec.leaseMs) : String(def.spec.leaseMs);
      throw new DefinitionInvalidError(wf, `leaseMs of ${def.name} must be a whole number of milliseconds from 1 to ${MAX_LEASE_MS}, got ${got}`, {
        node: def.name, field: 'leaseMs',
      });
    }
    this.definitions.push(Object.freeze({ ...def, spec: Object.freeze(def.spec) }) as NodeDefinition<S>);
    this.names.add(def.name);
    return this;
  }
}

/** The fields of `spec` a node kind has (`known`), each read once, own or inherited; the others were refused. */
function specFields<T extends object>(spec: T, known: readonly string[]): T {
  const fields: Record<string, unknown> = {};
  for (const key of known) if (key in spec) fields[key] = (spec as Record<string, unknown>)[key];
  return fields as T;
}

/**
 * `map` that cannot be changed through its own methods (`set`, `delete` and `clear` throw): a
 * built workflow's node table, which its fingerprint describes. Still a Map (isBuiltWorkflow).
 */
function readOnlyMap<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  const refuse = (): never => {
    throw new TypeError("a built workflow's nodes cannot be changed: define the workflow again with workflow()");
  };
  for (const method of ['set', 'delete', 'clear']) Object.defineProperty(map, method, { value: refuse });
  return Object.freeze(map);
}

/** `value` with every object and array in it frozen. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The longest lease accepted (a day): longer ones are a unit mistake more often than a choice. */
export const MAX_LEASE_MS = 86_400_000;

export function isLeaseMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_LEASE_MS;
}

function checkName(workflowName: string, name: string, what: 'node name' | 'workflow name'): void {
  // A refused node name is the error's node when it is a string (the field a caller looks it up by).
  // A refused workflow name is the field `name` of workflow()'s options.
  const subject = what === 'workflow name' ? { field: 'name' } : typeof name === 'string' ? { node: name } : {};
  if (typeof name !== 'string' || name.length === 0) {
    throw new DefinitionInvalidError(String(workflowName), `${what} must be a non-empty string`, subject);
  }
  if (!isWellFormedUnicode(name)) {
    throw new DefinitionInvalidError(String(workflowName), `${what} ${JSON.stringify(name.slice(0, 40))} is not well-formed Unicode (a lone UTF-16 surrogate)`, subject);
  }
  if (utf8(name).length > MAX_NODE_NAME_BYTES) {
    throw new DefinitionInvalidError(workflowName, `${what} ${name.slice(0, 40)}... is over ${MAX_NODE_NAME_BYTES} bytes`, subject);
  }
}

/** Start a workflow definition; the state type is inferred from `options.state`. */
export function workflow<Schema extends ZodSchemaLike>(options: WorkflowOptions<Schema>): WorkflowBuilder<z.output<Schema>, z.input<Schema>> {
  return new WorkflowBuilder(options as unknown as WorkflowOptions<z.ZodType<z.output<Schema>, z.input<Schema>>>);
}

/**
 * Whether `value` is a zod 4 schema REMIT can validate with: an object with zod's internals
 * (`_zod.def`) and its `safeParse` method. Structural, so that a schema made by another copy of
 * zod 4 (the application's own) counts too.
 */
export function isZodSchema(value: unknown): value is z.ZodType {
  if (value === null || typeof value !== 'object') return false;
  const internals = (value as { _zod?: unknown })._zod;
  return typeof (value as { safeParse?: unknown }).safeParse === 'function' &&
    internals !== null && typeof internals === 'object' && typeof (internals as { def?: unknown }).def === 'object';
}

function describeNonSchema(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object' && typeof (value as { _def?: unknown })._def === 'object') return 'a zod 3 schema';
  // zod/v4/core's classes ($ZodObject, ...) have no methods: REMIT validates with the schema's own safeParse.
  if (typeof value === 'object' && typeof (value as { _zod?: { def?: unknown } })._zod?.def === 'object') {
    return 'a zod 4 core schema without a safeParse method (zod/v4/core\'s classes have none: make it with zod or zod/mini, whose schemas have it)';
  }
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object that is not a zod schema' : typeof value;
}

/** Whether `error` is zod's "Encountered Promise during synchronous parse" (from any copy of zod 4). */
function isZodAsyncError(error: unknown): boolean {
  return error instanceof z.core.$ZodAsyncError || (error instanceof Error && error.constructor?.name === '$ZodAsyncError');
}

/**
 * The schema a built workflow validates with: `schema` itself (a Proxy: every property and method
 * is the schema's), but its `safeParse`
 *
 * - throws DefinitionInvalidError naming the workflow and the schema (`field` 'state', or the
 *   node and 'resume') when the schema is asynchronous (an async refine or transform): REMIT
 *   validates synchronously before it writes, and zod's own error would say nothing of where; it
 *   is thrown before anything is written (a resume value: before the interrupt is claimed);
 * - for the state schema, fails (zod's result, so a StateInvalidError where REMIT validates)
 *   unless the schema's output is a JSON object: the state is an object of fields that node
 *   updates merge into (docs/guide.md, "Concepts"). Checked on the value, not on the schema's
 *   kind, so z.object(...).refine(...), .transform(...), intersections and discriminated unions
 *   of objects all count.
 */
type SchemaPlace = { field: 'state' } | { node: string; field: 'resume' };

function asynchronousSchema(workflowName: string, where: SchemaPlace, found: string): DefinitionInvalidError {
  const what = where.field === 'state' ? 'the state schema' : `the resume schema of ${where.node}`;
  return new DefinitionInvalidError(workflowName,
    `${what} is asynchronous (${found}): REMIT validates values synchronously before it writes them; ` +
      'use a synchronous schema and do asynchronous checks in node code', where);
}

/**
 * A function declared async (or a default giving a Promise) is refused at build(): met only while
 * validating, the Promise it made would reject unhandled (async-functions.ts).
 */
function refuseAsyncSchema(schema: unknown, workflowName: string, where: SchemaPlace): void {
  const declaredAsync = asyncFunctionIn(schema);
  if (declaredAsync !== undefined) throw asynchronousSchema(workflowName, where, declaredAsync);
}

function guardedSchema<T extends z.ZodType>(schema: T, workflowName: string, where: SchemaPlace): T {
  const asynchronous = (found: string) => asynchronousSchema(workflowName, where, found);
  const safeParse = (value: unknown, params?: z.core.ParseContext<z.core.$ZodIssue>) => {
    let outcome: z.ZodSafeParseResult<unknown>;
    try {
      outcome = schema.safeParse(value, params);
    } catch (error) {
      if (!isZodAsyncError(error)) throw error;
      throw asynchronous('a refine or transform that returned a Promise');
    }
    if (where.field === 'state' && outcome.success && !isPlainObject(outcome.data as Json)) {
      const got = outcome.data === null ? 'null' : Array.isArray(outcome.data) ? 'an array' : typeof outcome.data;
      return {
        success: false as const,
        error: new z.ZodError([{ code: 'custom', path: [], input: outcome.data, message: `the state must be a JSON object (an object of fields), but the state schema gives ${got}` }]),
      };
    }
    return outcome;
  };
  return new Proxy(schema, {
    get: (target, key) => (key === 'safeParse' ? safeParse : Reflect.get(target, key, target)),
  });
}

/** How each workflow `build()` returned describes its schemas as written (not guarded), in a given format. */
const describers = new WeakMap<object, (format: DescriptorFormat) => WorkflowDescriptor>();

/**
 * `wf`'s descriptor in `format`, to name its differences from a run recorded in that format. A
 * built workflow's schemas are guarded (a Proxy of each): described through them, zod meets the
 * root of a state schema that refers to itself as two schemas (the Proxy, then the schema), so a
 * run recorded under a former format was told of a field that had not changed. Built by this
 * copy of the package, `wf` is described as `formerFingerprints` describes it, from the schemas as
 * written; otherwise (another copy's, or an object made from one) as it is.
 */
export function describeInFormat(wf: Workflow, format: DescriptorFormat): WorkflowDescriptor {
  return describers.get(wf)?.(format) ?? describeWorkflow(wf, format);
}

/**
 * Whether `value` is a workflow built by `build()` (structurally, so that one built by another
 * copy of this package, such as a workflow module's own, counts too).
 */
export function isBuiltWorkflow(value: unknown): value is Workflow {
  if (value === null || typeof value !== 'object' || value instanceof WorkflowBuilder) return false;
  const w = value as Partial<Record<keyof Workflow, unknown>>;
  return typeof w.name === 'string' && typeof w.version === 'string' && typeof w.start === 'string' && w.nodes instanceof Map &&
    Array.isArray(w.nodeOrder) && w.fingerprint instanceof Uint8Array && typeof w.fingerprintHex === 'string' &&
    w.descriptor !== null && typeof w.descriptor === 'object' && isZodSchema(w.stateSchema);
}
