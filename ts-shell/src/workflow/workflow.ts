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

import type { z } from 'zod';
import { DefinitionInvalidError } from '../errors.js';
import { isWellFormedUnicode, utf8 } from '../json.js';
import { describeWorkflow, fingerprintOf, type WorkflowDescriptor } from './descriptor.js';

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
  /** Folds the (JSON round-tripped) result into the state; pure. Default: the state is unchanged. */
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

export interface InterruptNodeSpec<S, V extends z.ZodType> {
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

export interface WorkflowOptions<Schema extends z.ZodType> {
  name: string;
  version: string;
  /** The state schema; the state type is inferred from it. Its output must be a JSON object. */
  state: Schema;
  description?: string;
}

/** A built, immutable workflow definition. */
export interface Workflow<S = any, Input = any> {
  readonly name: string;
  readonly version: string;
  readonly description: string | undefined;
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
}

export type StateOf<W> = W extends Workflow<infer S, any> ? S : never;
export type InputOf<W> = W extends Workflow<any, infer I> ? I : never;

export class WorkflowBuilder<S, Input> {
  private readonly definitions: NodeDefinition<S>[] = [];
  private startNode: string | undefined;

  constructor(private readonly options: WorkflowOptions<z.ZodType<S, Input>>) {
    checkName(options.name, options.name, 'workflow name');
    if (typeof options.version !== 'string' || options.version.length === 0) {
      throw new DefinitionInvalidError(options.name, 'version must be a non-empty string', { field: 'version' });
    }
  }

  pure(name: string, spec: PureNodeSpec<S>): this {
    return this.add({ kind: 'pure', name, spec });
  }

  effect<R>(name: string, spec: EffectNodeSpec<S, R>): this {
    return this.add({ kind: 'effect', name, spec: spec as EffectNodeSpec<S, unknown> });
  }

  interrupt<V extends z.ZodType>(name: string, spec: InterruptNodeSpec<S, V>): this {
    return this.add({ kind: 'interrupt', name, spec: spec as unknown as InterruptNodeSpec<S, z.ZodType> });
  }

  /** The first node to run (default: the first node added). */
  startAt(name: string): this {
    this.startNode = name;
    return this;
  }

  build(): Workflow<S, Input> {
    const wf = this.options.name;
    if (this.definitions.length === 0) throw new DefinitionInvalidError(wf, 'a workflow needs at least one node');
    const nodes = new Map(this.definitions.map((d) => [d.name, d]));
    const start = this.startNode ?? this.definitions[0]!.name;
    if (!nodes.has(start)) throw new DefinitionInvalidError(wf, `start node ${start} is not a node of the workflow`, { node: start });
    for (const def of this.definitions) {
      const next = def.spec.next;
      if (typeof next === 'string' && next !== END && !nodes.has(next)) {
        throw new DefinitionInvalidError(wf, `route of ${def.name} names unknown node ${next}`, { node: def.name, field: 'next' });
      }
      if (typeof next !== 'string' && typeof next !== 'function') {
        throw new DefinitionInvalidError(wf, `next of ${def.name} must be a node name, END or a function`, { node: def.name, field: 'next' });
      }
    }
    const partial = {
      name: wf,
      version: this.options.version,
      description: this.options.description,
      stateSchema: this.options.state,
      start,
      nodes,
      nodeOrder: this.definitions.map((d) => d.name),
    };
    const descriptor = describeWorkflow(partial);
    const fingerprint = fingerprintOf(descriptor);
    return Object.freeze({ ...partial, descriptor, fingerprint, fingerprintHex: Buffer.from(fingerprint).toString('hex') });
  }

  private add(def: NodeDefinition<S>): this {
    const wf = this.options.name;
    checkName(wf, def.name, 'node name');
    if (def.name === END) throw new DefinitionInvalidError(wf, `${END} is reserved for the end of the workflow`, { node: def.name });
    if (this.definitions.some((d) => d.name === def.name)) {
      throw new DefinitionInvalidError(wf, `node ${def.name} is defined twice`, { node: def.name });
    }
    if (def.kind !== 'interrupt' && typeof def.spec?.run !== 'function') {
      throw new DefinitionInvalidError(wf, `node ${def.name} needs a run function`, { node: def.name, field: 'run' });
    }
    if (def.kind === 'interrupt' && (typeof def.spec.apply !== 'function' || typeof def.spec.resume?.safeParse !== 'function')) {
      throw new DefinitionInvalidError(wf, `interrupt ${def.name} needs a zod resume schema and an apply function`, { node: def.name });
    }
    if (def.kind === 'effect' && def.spec.leaseMs !== undefined && !isLeaseMs(def.spec.leaseMs)) {
      throw new DefinitionInvalidError(wf, `leaseMs of ${def.name} must be a whole number of milliseconds from 1 to ${MAX_LEASE_MS}, got ${String(def.spec.leaseMs)}`, {
        node: def.name, field: 'leaseMs',
      });
    }
    this.definitions.push(def);
    return this;
  }
}

/** The longest lease accepted (a day): longer ones are a unit mistake more often than a choice. */
export const MAX_LEASE_MS = 86_400_000;

export function isLeaseMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_LEASE_MS;
}

function checkName(workflowName: string, name: string, what: string): void {
  if (typeof name !== 'string' || name.length === 0) {
    throw new DefinitionInvalidError(String(workflowName), `${what} must be a non-empty string`);
  }
  if (!isWellFormedUnicode(name)) {
    throw new DefinitionInvalidError(String(workflowName), `${what} ${JSON.stringify(name.slice(0, 40))} is not well-formed Unicode (a lone UTF-16 surrogate)`);
  }
  if (utf8(name).length > MAX_NODE_NAME_BYTES) {
    throw new DefinitionInvalidError(workflowName, `${what} ${name.slice(0, 40)}... is over ${MAX_NODE_NAME_BYTES} bytes`);
  }
}

/** Start a workflow definition; the state type is inferred from `options.state`. */
export function workflow<Schema extends z.ZodType>(options: WorkflowOptions<Schema>): WorkflowBuilder<z.output<Schema>, z.input<Schema>> {
  return new WorkflowBuilder(options as unknown as WorkflowOptions<z.ZodType<z.output<Schema>, z.input<Schema>>>);
}
