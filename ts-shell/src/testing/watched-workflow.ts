/**
 * The copy of a workflow checkWorkflow runs, its node code watched. Lost updates: node code that
 * changes the state it was given instead of returning the change.
 * REMIT gives node code a copy of the state (a pure node's run, an effect's handler and apply, an
 * interrupt's apply, a route), so such a change is dropped in every run alike: the runs agree and
 * the contract's checks all hold, yet the run goes on without it (`apply: (s, r) => {
 * s.receipts.push(r.id) }` records nothing). checkWorkflow runs the workflow through a copy of it
 * whose node code is watched: after each call, a field of the given state that differs from what
 * it was, and that the returned update does not set, is reported once per node and kind of code.
 * Only functions are wrapped; the descriptor and fingerprint are the workflow's own, so the
 * sequencer sees the same definition. The watch also notes the effect nodes whose handler never
 * read its idempotency key: such a handler cannot pass it on, and the check, which counts handler
 * calls, cannot see whether the outside system applied a repeated call twice. And it keeps the
 * first state each route was asked about, and its answer, to ask again once the runs are over
 * (reaskRoutes): a route must be a function of the state, and one that samples (Math.random() <
 * 0.1 ? 'audit' : 'ship') rarely answers otherwise in the few runs of a check. Asked afterwards,
 * not during the runs, so that what the runs do (a route that counts its calls) is not changed.
 */

import { cloneJson } from '../sequencer/log-view.js';
import { isThenable } from '../errors.js';
import { jsonEqual, type Json } from '../json.js';
import type { EffectContext, NodeDefinition, Route, Workflow } from '../workflow/workflow.js';

/** Which node code changed the state it was given. */
type CodeKind = 'run' | 'handler' | 'apply' | 'route';

export interface LostUpdate {
  node: string;
  message: string;
}

/** The lost updates met while a check ran, one per node and kind of code (the first one met). */
export class LostUpdates {
  private readonly found = new Map<string, LostUpdate>();
  /** Effect nodes whose handler was called, and whether any call read its idempotency key. */
  readonly keyRead = new Map<string, boolean>();
  /** The first state each route was asked about (a copy), and its answer. */
  readonly routeSamples = new Map<string, { route: (state: never) => string; state: Record<string, Json>; chosen: string }>();

  /** The effect nodes whose handler was called and never read its idempotency key, in the order first called. */
  keyNeverRead(): string[] {
    return [...this.keyRead].filter(([, read]) => !read).map(([node]) => node);
  }

  note(node: string, code: CodeKind, fields: readonly string[]): void {
    const id = `${code}\u0000${node}`;
    if (!this.found.has(id)) this.found.set(id, { node, message: messageFor(node, code, fields) });
  }

  all(): LostUpdate[] {
    return [...this.found.values()];
  }
}

function messageFor(node: string, code: CodeKind, fields: readonly string[]): string {
  const list = fields.map((f) => JSON.stringify(f)).join(', ');
  const changed = `changed field${fields.length > 1 ? 's' : ''} ${list} of the state it was given`;
  // Node code gets a copy of the state: what it changes in place never reaches the log.
  if (code === 'handler') {
    return `the handler of effect ${node} ${changed}: the change is lost (a handler gets a copy of the state); return what it learnt in its result and set the fields in apply`;
  }
  if (code === 'route') return `the route out of ${node} ${changed}: the change is lost (a route only picks the next node); make the change in the node's code and return it`;
  const who = code === 'run' ? `pure node ${node}` : `the apply of ${node}`;
  const fix = fields.map((f) => `${JSON.stringify(f)}: ...`).join(', ');
  return `${who} ${changed} and did not return ${fields.length > 1 ? 'them' : 'it'}: the change is lost (node code gets a copy of the state); return the changed fields ({ ${fix} }), or copy before changing ([...s.list].sort())`;
}

/** A copy of `workflow` whose node code reports to `found` the fields it changed and did not return. */
export function watchedWorkflow<W extends Workflow>(workflow: W, found: LostUpdates): W {
  const nodes = new Map<string, NodeDefinition<unknown>>();
  for (const [name, def] of workflow.nodes) nodes.set(name, watchedNode(def, found));
  const descriptors = Object.getOwnPropertyDescriptors(workflow);
  return Object.freeze(Object.defineProperties({}, { ...descriptors, nodes: { ...descriptors.nodes, value: nodes } })) as W;
}

function watchedNode(def: NodeDefinition<unknown>, found: LostUpdates): NodeDefinition<unknown> {
  const node = def.name;
  const next = watchedRoute(def.spec.next, node, found);
  if (def.kind === 'pure') return { ...def, spec: { ...def.spec, run: watched(def.spec.run, def.spec, node, 'run', found, true), next } };
  if (def.kind === 'interrupt') return { ...def, spec: { ...def.spec, apply: watched(def.spec.apply, def.spec, node, 'apply', found, true), next } };
  const apply = def.spec.apply === undefined ? {} : { apply: watched(def.spec.apply, def.spec, node, 'apply', found, true) };
  // A handler's return value is its result, not an update: whatever it changed is lost.
  const handler = watched(def.spec.run, def.spec, node, 'handler', found, false);
  const run = (state: Readonly<unknown>, ctx: EffectContext) => handler(state, keyWatched(ctx, node, found));
  return { ...def, spec: { ...def.spec, run, ...apply, next } };
}

/**
 * The handler's context, noting whether the handler reads its idempotency key (destructured,
 * spread or passed on and read): a copy whose key is a getter, not a Proxy, which
 * structuredClone (a logger, a worker's postMessage) would refuse.
 */
function keyWatched(ctx: EffectContext, node: string, found: LostUpdates): EffectContext {
  if (!found.keyRead.has(node)) found.keyRead.set(node, false);
  const descriptors = Object.getOwnPropertyDescriptors(ctx);
  const key = ctx.idempotencyKey;
  const read = () => (found.keyRead.set(node, true), key);
  return Object.create(Object.getPrototypeOf(ctx), { ...descriptors, idempotencyKey: { get: read, enumerable: true, configurable: true } }) as EffectContext;
}

function watchedRoute(route: Route<unknown>, node: string, found: LostUpdates): Route<unknown> {
  if (typeof route !== 'function') return route;
  return (state) => {
    const before = copyOf(state);
    const chosen = route(state);
    check(before, state, undefined, node, 'route', found);
    if (before !== undefined && typeof chosen === 'string' && !found.routeSamples.has(node)) found.routeSamples.set(node, { route, state: before, chosen });
    return chosen;
  };
}

/**
 * How often each route is asked again after the runs, on copies of the state of its sample. A
 * route that takes its rarer answer one time in 10 at random is missed by all of them about once
 * in 700,000 checks (0.9^128); one in 100, about once in four (0.99^128). Routes are cheap to ask.
 */
export const ROUTE_REASKS = 128;

/** The routes that answered otherwise, asked again about the state of their sample: node and message. */
export function reaskRoutes(found: LostUpdates): LostUpdate[] {
  const unstable: LostUpdate[] = [];
  for (const [node, { route, state, chosen }] of found.routeSamples) {
    const again = otherAnswer(route, state, chosen);
    if (again === undefined) continue;
    unstable.push({
      node,
      message: `the route out of ${node} answered ${JSON.stringify(chosen)} for a state, and ${again} when asked again about the same state after the runs: ` +
        'a route must be a function of the state alone (not of Math.random, a clock, a counter or a variable outside the state); its answer is recorded, but a crash before the record asks it again',
    });
  }
  return unstable;
}

function otherAnswer(route: (state: never) => string, state: Record<string, Json>, chosen: string): string | undefined {
  for (let i = 0; i < ROUTE_REASKS; i++) {
    try {
      const again = route(cloneJson(state) as never);
      if (again !== chosen) return JSON.stringify(again) ?? String(again);
    } catch (error) {
      return `a throw (${error instanceof Error ? error.message : String(error)})`;
    }
  }
  return undefined;
}

/**
 * `fn` (called as the library calls it, on `spec`), checked after it returns, or after its Promise
 * settles (an async node may change its state after an await). A synchronous result stays
 * synchronous, and what it returns or throws is passed on unchanged.
 */
function watched<F extends (...args: any[]) => unknown>(fn: F, spec: object, node: string, code: CodeKind, found: LostUpdates, returnsUpdate: boolean): F {
  return ((state: unknown, ...rest: unknown[]) => {
    const before = copyOf(state);
    const out = fn.call(spec, state, ...rest);
    if (!isThenable(out)) {
      check(before, state, returnsUpdate ? out : undefined, node, code, found);
      return out;
    }
    return Promise.resolve(out).then((update) => {
      check(before, state, returnsUpdate ? update : undefined, node, code, found);
      return update;
    });
  }) as unknown as F;
}

/** A copy of the state given, to compare with after the call (undefined: not one to watch). */
function copyOf(state: unknown): Record<string, Json> | undefined {
  if (state === null || typeof state !== 'object' || Array.isArray(state)) return undefined;
  return cloneJson(state as Record<string, Json>);
}

function check(before: Record<string, Json> | undefined, after: unknown, update: unknown, node: string, code: CodeKind, found: LostUpdates): void {
  if (before === undefined || after === null || typeof after !== 'object') return;
  let lost: string[];
  try {
    const returned = update !== null && typeof update === 'object' && !Array.isArray(update) && !isThenable(update) ? update : {};
    lost = changedFields(before, after as Record<string, unknown>).filter((field) => !Object.hasOwn(returned, field));
  } catch {
    // A getter that throws, a revoked Proxy: the watch must never make node code fail (the
    // sequencer would record that as the node's failure); such a value is the library's to refuse.
    return;
  }
  if (lost.length > 0) found.note(node, code, lost);
}

/** The top-level fields whose value differs between the copy taken before and the state after (a field set to undefined is one absent, as in JSON). */
function changedFields(before: Record<string, Json>, after: Record<string, unknown>): string[] {
  const fields = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...fields].filter((field) => !sameJson(Object.hasOwn(before, field) ? before[field] : undefined, Object.hasOwn(after, field) ? after[field] : undefined));
}

/** jsonEqual, where a value node code left that is not JSON (a Date, a cycle) counts as changed. */
function sameJson(a: Json | undefined, b: unknown): boolean {
  try {
    return jsonEqual(a as Json, b as Json);
  } catch {
    return false; // a cycle (s.self = s) overflows the walk: it was surely not there before
  }
}
