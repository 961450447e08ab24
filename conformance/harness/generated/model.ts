/**
 * The harness's own interpreter of a generated workflow: from the workflow (./spec.ts), the input
 * and the resume values, what an uninterrupted run must do and end with, under the contract
 * (docs/contract.md) and the rule for values written to a log (docs/guide.md, "Values in the
 * log"). It never calls REMIT or zod: schemas are read by ./schema-model.ts, node operations and
 * routes are interpreted here. Checkers compare what a system did against this.
 *
 * It also lists the fault points a run reaches (the catalogue's names, ../cells.ts: commit points
 * `before-commit:K@node`, code points `inside-pure:node`, `in-handler-*:node`), with how many times
 * each is reached, so a scenario can arm a fault at the n-th occurrence of a point that will fire.
 */
import { firstDifference, jsonRoundTrip, writeVerdict, type WriteVerdict } from './schema-model.js';
import { END_NODE, untag, type EffectResult, type NodeSpec, type Op, type Route, type SchemaSpec, type Tagged, type WorkflowSpec } from './spec.js';

/** A refusal as the contract describes it: invalid for the schema, or a value that would not read back as itself. */
export type Refusal = Exclude<WriteVerdict, { ok: true }>;

export interface ResumePlan {
  /** Values that must be refused first (checkpoint validity: not recorded, interrupt not consumed). */
  nearMisses: Tagged[];
  /** The value that should be claimed (or, with a schema that refuses its own output, refused too). */
  value: Tagged;
}

export interface Checkpoint {
  node: string;
  /** This is the n-th completion of `node` (1-based). */
  occurrence: number;
  /** Resume claims before it, and effect handler runs after it (per node), in the uninterrupted run. */
  claimsBefore: number;
  effectsAfter: Record<string, number>;
}

export type Final =
  | { kind: 'refused-at-start'; refusal: Refusal }
  | { kind: 'completed' }
  | { kind: 'failed'; node: string }
  /** Parked with no resume value left in the scenario. */
  | { kind: 'parked'; node: string }
  /** Parked, and the resume value was refused (a schema that refuses its own output): still resumable. */
  | { kind: 'stuck-parked'; node: string; refusal: Refusal }
  /** A step was refused: nothing of it written, the run stays at its last good state. */
  | { kind: 'stuck'; node: string; at: 'step' | 'effect-result' | 'effect-apply' | 'resume-apply'; refusal: Refusal };

export interface Expectation {
  nearMissInputs: Array<Refusal | null>;
  final: Final;
  /** The state at the head checkpoint, as stored (JSON), or null when no run exists. */
  headState: unknown;
  /** Every stored state in log order (the input, then each completion). */
  states: unknown[];
  completedNodes: string[];
  /** Per effect node, how many times its handler reaches the outside effect (instances, one key each). */
  effectInstances: Record<string, number>;
  /** Per pure node, how many times its body runs. */
  pureRuns: Record<string, number>;
  claims: number;
  parks: Array<{ node: string; nearMisses: Array<Refusal | null>; value: Refusal | null }>;
  /** Fault points reached, with how many times, in a fault-free run. */
  points: Map<string, number>;
  checkpoints: Checkpoint[];
}

/** A run that would go on for longer than this is not generated (the generator draws another). */
export const MAX_STEPS = 120;

export class ModelLimitError extends Error {}

function touch(points: Map<string, number>, name: string): void {
  points.set(name, (points.get(name) ?? 0) + 1);
}

function commit(points: Map<string, number>, ...names: string[]): void {
  for (const n of names) touch(points, `before-commit:${n}`);
  for (const n of names) touch(points, `after-commit:${n}`);
}

function clone<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (value instanceof Map) return new Map(value) as T;
  if (Array.isArray(value)) return value.map(clone) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = clone(v);
  return out as T;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Apply a node's operations to a copy of the state: the changed fields, or a terminal failure. */
export function applyOps(ops: readonly Op[], state: Record<string, unknown>): { update: Record<string, unknown> } | { failed: true } {
  const working = clone(state);
  const touched = new Set<string>();
  for (const op of ops) {
    switch (op.op) {
      case 'failIf':
        if (working[op.field] === op.eq) return { failed: true };
        break;
      case 'inc':
        working[op.field] = (working[op.field] as number) + op.by;
        touched.add(op.field);
        break;
      case 'set':
        working[op.field] = untag(op.value);
        touched.add(op.field);
        break;
      case 'push': {
        const current = working[op.field];
        working[op.field] = [...(Array.isArray(current) ? current : []), untag(op.value)];
        touched.add(op.field);
        break;
      }
      case 'put': {
        const current = working[op.field];
        working[op.field] = { ...(isRecord(current) ? current : {}), [op.key]: untag(op.value) };
        touched.add(op.field);
        break;
      }
      case 'copy':
        working[op.to] = clone(working[op.from]);
        touched.add(op.to);
        break;
    }
  }
  const update: Record<string, unknown> = {};
  for (const field of touched) update[field] = working[field];
  return { update };
}

/** The value an effect's outside call returns for this state. */
export function effectResult(node: string, result: EffectResult, state: Record<string, unknown>): unknown {
  if (result.kind === 'date') return { at: new Date(Date.UTC(2024, 0, 1)) };
  const counter = state[result.counter];
  return { tag: `${node}#${String(counter)}`, n: (typeof counter === 'number' ? counter : 0) * 2 };
}

/** Where a route leads from this (stored) state. */
export function routeTarget(route: Route, state: Record<string, unknown>): string {
  if ('to' in route) return route.to;
  const value = state[route.if.field];
  const taken = 'lt' in route.if ? typeof value === 'number' && value < route.if.lt : value === true;
  return taken ? route.then : route.else;
}

/** The resume schemas a node table declares, by node (for the scenario generator). */
export type PlanSource = (parkIndex: number, node: string, resume: SchemaSpec) => ResumePlan | undefined;

/** Run the workflow in the harness's own model. `plans` gives the resume values of each park in turn. */
export function interpret(spec: WorkflowSpec, input: Tagged, nearMissInputs: readonly Tagged[], plans: PlanSource): Expectation {
  const points = new Map<string, number>();
  const out: Expectation = {
    nearMissInputs: nearMissInputs.map((v) => refusalOf(writeVerdict(spec.state, untag(v)))),
    final: { kind: 'completed' },
    headState: null,
    states: [],
    completedNodes: [],
    effectInstances: {},
    pureRuns: {},
    claims: 0,
    parks: [],
    points,
    checkpoints: [],
  };
  const started = writeVerdict(spec.state, untag(input));
  if (!started.ok) {
    out.final = { kind: 'refused-at-start', refusal: started };
    return out;
  }
  commit(points, 'RUN_STARTED');
  let state = started.stored as Record<string, unknown>;
  out.states.push(state);
  out.headState = state;
  const nodes = new Map(spec.nodes.map((n) => [n.name, n]));
  const completions = new Map<string, number>();
  const effectRuns: string[] = [];
  /** How many effect handler runs came before each checkpoint (parallel to out.checkpoints). */
  const effectRunsBefore: number[] = [];
  let current = spec.nodes[0]!.name;

  /** Validate and record a completion; returns false (and sets `final`) when the step is refused. */
  const complete = (node: NodeSpec, update: Record<string, unknown>, at: 'step' | 'effect-apply' | 'resume-apply'): string | null => {
    const verdict = writeVerdict(spec.state, { ...state, ...update });
    if (!verdict.ok) {
      out.final = { kind: 'stuck', node: node.name, at, refusal: verdict };
      return null;
    }
    state = verdict.stored as Record<string, unknown>;
    const next = routeTarget(node.next, state);
    commit(points, `NODE_COMPLETED@${node.name}`, ...(next === END_NODE ? ['RUN_COMPLETED'] : []));
    const occurrence = (completions.get(node.name) ?? 0) + 1;
    completions.set(node.name, occurrence);
    out.checkpoints.push({ node: node.name, occurrence, claimsBefore: out.claims, effectsAfter: {} });
    effectRunsBefore.push(effectRuns.length);
    out.completedNodes.push(node.name);
    out.states.push(state);
    out.headState = state;
    return next;
  };

  for (let steps = 0; current !== END_NODE; steps++) {
    if (steps >= MAX_STEPS) throw new ModelLimitError(`more than ${MAX_STEPS} steps`);
    const node = nodes.get(current);
    if (node === undefined) throw new Error(`route to unknown node ${current}`);
    let next: string | null;
    if (node.kind === 'pure') {
      touch(points, `inside-pure:${node.name}`);
      out.pureRuns[node.name] = (out.pureRuns[node.name] ?? 0) + 1;
      const applied = applyOps(node.ops, state);
      if ('failed' in applied) {
        commit(points, 'RUN_FAILED');
        out.final = { kind: 'failed', node: node.name };
        break;
      }
      next = complete(node, applied.update, 'step');
    } else if (node.kind === 'effect') {
      commit(points, `EFFECT_INTENT@${node.name}`);
      touch(points, `in-handler-before-effect:${node.name}`);
      touch(points, `in-handler-after-effect:${node.name}`);
      out.effectInstances[node.name] = (out.effectInstances[node.name] ?? 0) + 1;
      effectRuns.push(node.name);
      const result = writeVerdict(null, effectResult(node.name, node.result, state));
      if (!result.ok) {
        out.final = { kind: 'stuck', node: node.name, at: 'effect-result', refusal: result };
        break;
      }
      const applied = applyOps(node.ops, state);
      if ('failed' in applied) {
        commit(points, 'EFFECT_DONE@' + node.name, 'RUN_FAILED');
        out.final = { kind: 'failed', node: node.name };
        break;
      }
      const stored = result.stored as Record<string, unknown>;
      const update = node.resultTo !== null && typeof stored['tag'] === 'string' ? { ...applied.update, [node.resultTo]: stored['tag'] } : applied.update;
      const verdict = writeVerdict(spec.state, { ...state, ...update });
      if (!verdict.ok) {
        commit(points, `EFFECT_DONE@${node.name}`);
        out.final = { kind: 'stuck', node: node.name, at: 'effect-apply', refusal: verdict };
        break;
      }
      touchBatchStart(points, `EFFECT_DONE@${node.name}`);
      next = complete(node, update, 'effect-apply');
    } else {
      commit(points, `INTERRUPT_PARKED@${node.name}`);
      const parkIndex = out.parks.length;
      const plan = plans(parkIndex, node.name, node.resume);
      if (plan === undefined) {
        out.final = { kind: 'parked', node: node.name };
        break;
      }
      const verdict = writeVerdict(node.resume, untag(plan.value));
      out.parks.push({
        node: node.name,
        nearMisses: plan.nearMisses.map((v) => refusalOf(writeVerdict(node.resume, untag(v)))),
        value: refusalOf(verdict),
      });
      if (!verdict.ok) {
        out.final = { kind: 'stuck-parked', node: node.name, refusal: verdict };
        break;
      }
      const applied = applyOps(node.ops, state);
      // A value whose completion the state schema refuses ends the run stuck at resume-apply. A
      // system may claim it first (the run then stays running) or, as REMIT does, refuse it before
      // the claim (the run stays parked, nothing recorded; checkers.ts accepts both): no fault is
      // placed at a claim that the second kind never makes.
      const completionRefused = !('failed' in applied) && !writeVerdict(spec.state, { ...state, ...applied.update, [node.answer]: verdict.stored }).ok;
      if (!completionRefused) commit(points, `RESUME_CLAIMED@${node.name}`);
      out.claims += 1;
      if ('failed' in applied) {
        commit(points, 'RUN_FAILED');
        out.final = { kind: 'failed', node: node.name };
        break;
      }
      next = complete(node, { ...applied.update, [node.answer]: verdict.stored }, 'resume-apply');
    }
    if (next === null) break;
    current = next;
  }
  // Effect handler runs after each checkpoint, per node (what a fork at it runs again).
  out.checkpoints.forEach((cp, i) => {
    for (const name of effectRuns.slice(effectRunsBefore[i])) cp.effectsAfter[name] = (cp.effectsAfter[name] ?? 0) + 1;
  });
  return out;
}

/**
 * The EFFECT_DONE of a completed effect is appended in one batch with the completion: its commit
 * points are reached together with NODE_COMPLETED's (counted here, the completion counts its own).
 */
function touchBatchStart(points: Map<string, number>, name: string): void {
  touch(points, `before-commit:${name}`);
  touch(points, `after-commit:${name}`);
}

function refusalOf(verdict: WriteVerdict): Refusal | null {
  return verdict.ok ? null : verdict;
}

/** Whether two stored (JSON) values are the same. */
export function sameStored(a: unknown, b: unknown): boolean {
  return firstDifference(a, jsonRoundTrip(b)) === null && firstDifference(b, jsonRoundTrip(a)) === null;
}
