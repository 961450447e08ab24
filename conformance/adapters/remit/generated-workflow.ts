/**
 * Generated workflows (conformance/harness/generated/spec.ts) built in REMIT's workflow API, the
 * way a user would write them: zod schemas for the state and the resume values, node code that
 * applies the operations, effect handlers that call the outside effect with REMIT's idempotency
 * key. Node bodies and handlers carry the fault points the shell cannot place itself (inside a
 * pure node, inside a handler around the outside effect), as the reference workflow does.
 *
 * This is the adapter's own reading of the spec (zod and plain code); the harness judges it with
 * its own model (conformance/harness/generated/model.ts), which shares nothing with this file.
 *
 * Canary `reapply-transform` (test-only): REMIT gets the schemas without their transforms and the
 * node code applies them again to the state it reads, at every step, as a sequencer that validated
 * stored values again on every read would. A transform that is not idempotent then changes the
 * state at every step instead of being refused: the generated campaign must catch it.
 */
import { z } from 'zod';
import { fail, workflow, type Workflow } from 'remit';
import { END_NODE, untag, type NodeSpec, type Op, type Route, type SchemaSpec, type WorkflowSpec } from '../../harness/generated/spec.js';
import type { WorkflowDeps } from './workflow.js';

export type GeneratedCanary = 'reapply-transform' | null;

const REFINE: Record<string, (v: unknown) => boolean> = {
  even: (v) => typeof v === 'number' && v % 2 === 0,
  nonEmpty: (v) => (typeof v === 'string' || Array.isArray(v)) && v.length > 0,
  lowercase: (v) => typeof v === 'string' && v.toLowerCase() === v,
  noSpaces: (v) => typeof v === 'string' && !/\s/.test(v),
};

const TRANSFORM: Record<string, (v: never) => unknown> = {
  trim: (v: string) => v.trim(),
  lower: (v: string) => v.toLowerCase(),
  round: (v: number) => Math.round(v),
  clamp100: (v: number) => Math.max(0, Math.min(100, v)),
  sortNumbers: (v: number[]) => v.slice().sort((a, b) => a - b),
  times100: (v: number) => v * 100,
  exclaim: (v: string) => `${v}!`,
  inc: (v: number) => v + 1,
  length: (v: string) => v.length,
  stringify: (v: number) => `${v}`,
};

/** The zod schema a user would write for `spec`; `stripTransforms` leaves transforms out (the canary). */
export function zodSchemaOf(spec: SchemaSpec, stripTransforms = false): z.ZodType {
  const of = (s: SchemaSpec) => zodSchemaOf(s, stripTransforms);
  switch (spec.t) {
    case 'string': {
      let s = z.string();
      if (spec.min !== undefined) s = s.min(spec.min);
      if (spec.max !== undefined) s = s.max(spec.max);
      return s;
    }
    case 'number': {
      let n = z.number();
      if (spec.int === true) n = n.int();
      if (spec.min !== undefined) n = n.min(spec.min);
      if (spec.max !== undefined) n = n.max(spec.max);
      return n;
    }
    case 'boolean':
      return z.boolean();
    case 'enum':
      return z.enum(spec.values as [string, ...string[]]);
    case 'literal':
      return z.literal(spec.value);
    case 'isoDate':
      return z.iso.datetime();
    case 'date':
      return z.date();
    case 'any':
      return z.any();
    case 'array':
      return z.array(of(spec.of));
    case 'record':
      return z.record(z.string(), of(spec.of));
    case 'object':
      return z.object(Object.fromEntries(spec.fields.map(([name, field]) => [name, of(field)])));
    case 'optional':
      return of(spec.of).optional();
    case 'nullable':
      return of(spec.of).nullable();
    case 'default':
      return (of(spec.of) as z.ZodType<unknown>).default(untag(spec.value));
    case 'union':
      return z.union(spec.of.map(of) as [z.ZodType, z.ZodType, ...z.ZodType[]]);
    case 'refine':
      return of(spec.of).refine(REFINE[spec.check]!, `fails ${spec.check}`);
    case 'transform':
      return stripTransforms ? of(spec.of) : of(spec.of).transform((v) => TRANSFORM[spec.fn]!(v as never));
  }
}

type State = Record<string, unknown>;

function copyValue(value: unknown): unknown {
  return value === undefined ? undefined : structuredClone(value);
}

/** The fields a node changes, or a terminal failure of the run (GEN_FAIL). */
function runOps(node: string, ops: readonly Op[], state: Readonly<State>): State {
  const changed: State = {};
  const read = (field: string) => (field in changed ? changed[field] : state[field]);
  for (const op of ops) {
    if (op.op === 'failIf') {
      if (read(op.field) === op.eq) fail('GEN_FAIL', `node ${node}: ${op.field} is ${op.eq}`);
    } else if (op.op === 'inc') {
      changed[op.field] = (read(op.field) as number) + op.by;
    } else if (op.op === 'set') {
      changed[op.field] = untag(op.value);
    } else if (op.op === 'push') {
      const list = read(op.field);
      changed[op.field] = Array.isArray(list) ? [...list, untag(op.value)] : [untag(op.value)];
    } else if (op.op === 'put') {
      const record = read(op.field);
      const base = record !== null && typeof record === 'object' && !Array.isArray(record) ? (record as State) : {};
      changed[op.field] = { ...base, [op.key]: untag(op.value) };
    } else {
      changed[op.to] = copyValue(read(op.from));
    }
  }
  return changed;
}

function routeOf(route: Route): string | ((s: Readonly<State>) => string) {
  if ('to' in route) return route.to;
  const cond = route.if;
  return (s) => {
    const v = s[cond.field];
    const yes = 'lt' in cond ? typeof v === 'number' && v < cond.lt : v === true;
    return yes ? route.then : route.else;
  };
}

let unstableCounter = 0;

function callOutside(deps: WorkflowDeps, node: string, runId: string, idempotencyKey: string): void {
  const key = deps.unstableKeys ? `${idempotencyKey}#${process.pid}-${++unstableCounter}` : idempotencyKey;
  deps.sink().invoke(node, key, runId);
  deps.faults.hit(`in-handler-before-effect:${node}`);
  deps.sink().apply(node, key, runId);
  deps.faults.hit(`in-handler-after-effect:${node}`);
}

function resultOf(node: Extract<NodeSpec, { kind: 'effect' }>, s: Readonly<State>): unknown {
  if (node.result.kind === 'date') return { at: new Date(Date.UTC(2024, 0, 1)) };
  const c = s[node.result.counter];
  return { tag: `${node.name}#${c}`, n: typeof c === 'number' ? c * 2 : 0 };
}

/** The REMIT workflow for a generated spec. */
export function buildGeneratedWorkflow(spec: WorkflowSpec, deps: WorkflowDeps, canary: GeneratedCanary = null): Workflow {
  const strip = canary === 'reapply-transform';
  const fullState = zodSchemaOf(spec.state);
  // The canary's missing guard: stored values validated (so transformed) again at every read.
  const read = (s: Readonly<State>): State => (strip ? (fullState.parse(s) as State) : (s as State));
  const changes = (s: Readonly<State>, update: State): State => (strip ? { ...read(s), ...update } : update);
  let builder = workflow({ name: spec.name, version: spec.version, state: zodSchemaOf(spec.state, strip) as z.ZodType<State> });
  for (const node of spec.nodes) {
    const next = routeOf(node.next);
    if (node.kind === 'pure') {
      builder = builder.pure(node.name, {
        run: (s, ctx) => {
          deps.sink().pure(node.name, ctx.runId);
          deps.faults.hit(`inside-pure:${node.name}`);
          return changes(s, runOps(node.name, node.ops, read(s)));
        },
        next,
      });
    } else if (node.kind === 'effect') {
      builder = builder.effect(node.name, {
        run: (s, ctx) => {
          callOutside(deps, node.name, ctx.runId, ctx.idempotencyKey);
          return resultOf(node, s);
        },
        apply: (s, result) => {
          const update = runOps(node.name, node.ops, read(s));
          const tag = (result as { tag?: unknown } | null)?.tag;
          if (node.resultTo !== null && typeof tag === 'string') update[node.resultTo] = tag;
          return changes(s, update);
        },
        next,
      });
    } else {
      const fullResume = zodSchemaOf(node.resume);
      builder = builder.interrupt(node.name, {
        resume: zodSchemaOf(node.resume, strip),
        apply: (s, value) => changes(s, { ...runOps(node.name, node.ops, read(s)), [node.answer]: strip ? fullResume.parse(value) : value }),
        next,
      });
    }
  }
  return builder.build();
}

export { END_NODE };
