/**
 * What checkWorkflow compares between two runs of one workflow from one input, and how: the
 * outcome of a run read from its log (status, node path, what came from outside, checkpoints), and
 * the first way two outcomes differ, or the comparison that could not be made and why.
 *
 * What may legitimately differ between two sound runs is what came from outside: an effect's
 * result (a crash or a retry that added attempt records gives later effects other keys, and a
 * result may come from the key, a receipt id; a test double may answer a repeated key otherwise)
 * and a resume value (a resume function of the interrupt id, `node@seq`, whose seq moves the same
 * way). A workflow whose node code is deterministic is a function of its input and of those: up to
 * the first of them that differs, the two runs must take the same path; beyond it nothing can be
 * said, and the comparison left is listed as unchecked.
 */

import { RecordKind, type LogRecord } from '../core/types.js';
import { fromUtf8, jsonEqual, type Json } from '../json.js';
import type { RunResult } from '../sequencer/run-result.js';
import { advanceHead, type HeadState } from '../sequencer/log-view.js';

/** One value a run took from outside, in log order. */
export interface RunInput {
  kind: 'effect' | 'resume';
  /** The index in the node path of the node it went to (the node completed with it). */
  step: number;
  node: string;
  /** The effect's idempotency key, or the interrupt id. */
  id: string;
  /** The effect's result or the resume value, as recorded (JSON text). */
  value: string;
  /** A resume value as the check gave it, before its schema read it (JSON text), when known. */
  given?: string;
}

/** What a run came to, as compared between runs. */
export interface Outcome {
  /** 'completed', 'failed', or 'not-ended' for a run that did not reach its end. */
  status: string;
  /** A failed run's failure: node, code and message. */
  failure?: { node: string; code: string; message: string };
  /** The node of each NODE_COMPLETED, in order. */
  path: string[];
  inputs: RunInput[];
  state: unknown;
  /** The run's records, read again only to find the first checkpoint that differs. */
  records: readonly LogRecord[];
}

export const NOT_ENDED: Outcome = { status: 'not-ended', path: [], inputs: [], state: undefined, records: [] };

/** The compared outcome of an ended run, from its records. */
export function outcomeOf(records: readonly LogRecord[], result: RunResult): Outcome {
  const outcome: Outcome = { status: result.status, path: [], inputs: [], state: result.state, records };
  if (result.failure !== undefined) outcome.failure = { ...result.failure };
  const parkedAt = new Map<string, string>();
  for (const r of records) {
    if (r.kind === RecordKind.NODE_COMPLETED) outcome.path.push(fromUtf8(r.node));
    if (r.kind === RecordKind.INTERRUPT_PARKED) parkedAt.set(fromUtf8(r.interruptId), fromUtf8(r.node));
    if (r.kind === RecordKind.EFFECT_DONE) {
      outcome.inputs.push({ kind: 'effect', step: outcome.path.length, node: fromUtf8(r.node), id: fromUtf8(r.key), value: fromUtf8(r.result) });
    }
    if (r.kind === RecordKind.RESUME_CLAIMED) {
      const id = fromUtf8(r.interruptId);
      outcome.inputs.push({ kind: 'resume', step: outcome.path.length, node: parkedAt.get(id) ?? nodeOfInterruptId(id), id, value: fromUtf8(r.value) });
    }
  }
  return outcome;
}

/** The two runs compared, as the messages name them ("the recovered run", "the fault-free run"). */
export interface Sides {
  /** The run compared against: the fault-free reference, or the first fault-free run. */
  a: string;
  b: string;
}

export interface Difference {
  message: string;
  /** The node the difference points at, when one is known. */
  node?: string;
}

export interface Comparison {
  difference: Difference | null;
  unchecked: string | null;
}

/**
 * The first way run `b` differs from run `a` (null: none), and the comparison that could not be
 * made (null: none). The initial state must be the same (the same input read by the same schema);
 * up to the first value from outside that differs (module comment), the node
 * path and the state after each node must be the same; with no such value, the status (a failed
 * run's failing node too) and the final state too.
 */
export function compareOutcomes(a: Outcome, b: Outcome, sides: Sides): Comparison {
  const initial = initialDifference(a, b, sides);
  if (initial !== null) return { difference: initial, unchecked: null };
  const divergence = firstDivergence(a.inputs, b.inputs);
  const limit = divergence === null ? Infinity : divergence.a.step + 1;
  const path = pathDifference(a, b, limit, sides);
  if (path !== null) return { difference: path, unchecked: null };
  // The state after every node before the first outside value that differs must be the same too:
  // a random value a later node overwrites still reaches an effect's arguments or a route.
  const early = firstDifferentCheckpoint(a, b, divergence === null ? Infinity : divergence.a.step);
  // Two failed runs end alike only at the same node: on the same path, a failure at another node
  // is a route that chose another node, which failed before completing (not in the path).
  const sameEnd = a.status === b.status && a.failure?.node === b.failure?.node;
  if (early !== null && (divergence !== null || !sameEnd || jsonEqual(a.state as Json, b.state as Json))) {
    return {
      difference: {
        message: `the state after node ${early.node} (step ${early.step}) is ${short(early.b)} in ${sides.b}, ${short(early.a)} in ${sides.a}: ` +
          'with the same node path, effect results and resume values up to there, a pure node or an apply is not deterministic',
        node: early.node,
      },
      unchecked: null,
    };
  }
  if (divergence !== null) return { difference: null, unchecked: divergenceText(divergence, b.path.length, sides) };
  if (!sameEnd) {
    const failure = b.failure ?? a.failure;
    const route = a.status === b.status ? a.path[a.path.length - 1] : undefined;
    const why = route === undefined ? '' : `: the route out of ${route} chose differently (a route, or a pure node or an apply before it, is not deterministic)`;
    const node = route ?? failure?.node;
    return {
      difference: { message: `${sides.b} ended ${statusText(b)}, ${sides.a} ${statusText(a)}, on the same node path${why}`, ...(node === undefined ? {} : { node }) },
      unchecked: null,
    };
  }
  if (jsonEqual(a.state as Json, b.state as Json)) return { difference: null, unchecked: failureUnchecked(a, b, sides) };
  const checkpoint = firstDifferentCheckpoint(a, b);
  const last = checkpoint !== null && checkpoint.step === a.path.length - 1;
  const where = checkpoint === null ? '' : `; the checkpoints first differ at step ${checkpoint.step}, after node ${checkpoint.node}${last ? '' : ` (${short(checkpoint.b)} against ${short(checkpoint.a)})`}`;
  return {
    difference: {
      message: `the final state of ${sides.b} is ${short(stateText(b.state))}, of ${sides.a} ${short(stateText(a.state))}${where}: ` +
        'with the same node path, effect results and resume values, a pure node, a route or an apply is not deterministic',
      ...(checkpoint === null ? {} : { node: checkpoint.node }),
    },
    unchecked: null,
  };
}

/**
 * Two runs that failed at the same node with another code or message: not a difference (a
 * handler's failure is an outside answer, which may rightly differ), but said, since a pure node
 * or an apply whose failure changes from run to run changes what a crash before RUN_FAILED leaves.
 */
function failureUnchecked(a: Outcome, b: Outcome, sides: Sides): string | null {
  if (a.failure === undefined || b.failure === undefined) return null;
  if (a.failure.code === b.failure.code && a.failure.message === b.failure.message) return null;
  return `the failures at ${a.failure.node} were not compared: ${sides.b} failed with ${a.failure.code === b.failure.code ? 'the same code and another message' : `${b.failure.code}, ${sides.a} with ${a.failure.code}`} ` +
    '(an effect handler\'s failure may differ, as outside answers may; a pure node\'s or an apply\'s should not)';
}

interface Divergence {
  a: RunInput;
  b: RunInput;
}

/** The first value from outside that differs between the runs, at the same place in both (else null: the paths differ there, or nothing differs). */
function firstDivergence(a: readonly RunInput[], b: readonly RunInput[]): Divergence | null {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [x, y] = [a[i]!, b[i]!];
    if (x.kind !== y.kind || x.node !== y.node || x.step !== y.step) return null;
    if (x.value !== y.value) return { a: x, b: y };
  }
  return null;
}

function divergenceText({ a, b }: Divergence, pathLength: number, sides: Sides): string {
  const rest = a.step + 1 < pathLength ? `the rest of the run (its node path after step ${a.step}, ${a.node}; its status; its final state) was` : "the run's status and final state were";
  if (a.kind === 'resume' && a.given !== undefined && a.given === b.given) {
    // The same value given: what differs is what the resume schema made of it. The value claimed is
    // recorded, so recovery reads it back; but the runs' outcomes cannot be compared past it.
    return `interrupt ${a.node} was given the same value in both runs (${short(a.given)}), recorded as ${short(b.value)} in ${sides.b}, ${short(a.value)} in ${sides.a}: ` +
      `its resume schema is not deterministic (a default or a transform reading a clock or Math.random), so ${rest} not compared`;
  }
  if (a.kind === 'resume') {
    return `interrupt ${a.node} was resumed with another value (${short(b.value)} for ${b.id} in ${sides.b}, ${short(a.value)} for ${a.id} in ${sides.a}: ` +
      `a resume function of the interrupt id or of the state), so ${rest} not compared`;
  }
  const why = a.id === b.id ? `an effect answered the same key differently (${a.node}, key ${a.id}: ${short(b.value)} in ${sides.b}, ${short(a.value)} in ${sides.a})` :
    `effect ${a.node} returned another result under another key (${b.id}: ${short(b.value)} in ${sides.b}, ${a.id}: ${short(a.value)} in ${sides.a}; ` +
      'a crash or a retry that added attempt records moves later keys, and a result may come from its key, a receipt id)';
  return `${why}, so ${rest} not compared`;
}

/**
 * The states the runs started with (RUN_STARTED: the input read by the state schema), when both
 * have one and they differ. The input is the same, so a difference is the schema's own (a default
 * or a transform reading a clock or Math.random), before any node ran: no node is named.
 */
function initialDifference(a: Outcome, b: Outcome, sides: Sides): Difference | null {
  const [x, y] = [initialState(a.records), initialState(b.records)];
  if (x === undefined || y === undefined || jsonEqual(x, y)) return null;
  return {
    message: `the initial state (the input as the state schema read it, before any node) is ${short(stateText(y))} in ${sides.b}, ${short(stateText(x))} in ${sides.a}: ` +
      'from the same input, the state schema is not deterministic (a default or a transform reading a clock or Math.random)',
  };
}

function initialState(records: readonly LogRecord[]): Json | undefined {
  const started = records.find((r) => r.kind === RecordKind.RUN_STARTED);
  return started === undefined ? undefined : advanceHead(null, started)!.state;
}

/** The first step (below `limit`) where the node paths differ, as a message naming both sides. */
function pathDifference(a: Outcome, b: Outcome, limit: number, sides: Sides): Difference | null {
  const end = Math.min(limit, Math.max(a.path.length, b.path.length));
  let step = -1;
  for (let i = 0; i < end; i++) {
    if (a.path[i] !== b.path[i]) {
      step = i;
      break;
    }
  }
  if (step < 0) return null;
  const failedThere = failedWhereCompleted(a, b, step, sides);
  if (failedThere !== null) return failedThere;
  const statuses = a.status === b.status ? '' : ` (${sides.b} ${statusText(b)}, ${sides.a} ${statusText(a)})`;
  const message = `${sides.b} took ${pathText(b.path, step)}, ${sides.a} ${pathText(a.path, step)}, from step ${step}${statuses}`;
  if (step === 0) return { message };
  const after = a.path[step - 1]!;
  const ended = a.path[step] === undefined || b.path[step] === undefined ? ' or the run ended there in one of them' : '';
  return {
    message: `${message}: the route out of ${after} chose differently${ended} (a route, or a pure node or an apply before it, is not deterministic)`,
    node: after,
  };
}

/**
 * One run failed at the very node the other completed at `step`: no route chose differently (the
 * message blamed the route before it); that node's own code ended otherwise. For an effect whose
 * handler failed under the key it answered in the other run, the handler (or its test double)
 * refuses a key it has seen, where an idempotent API replays its first answer.
 */
function failedWhereCompleted(a: Outcome, b: Outcome, step: number, sides: Sides): Difference | null {
  const bFailed = b.path.length === step && b.failure !== undefined && b.failure.node === a.path[step];
  const aFailed = a.path.length === step && a.failure !== undefined && a.failure.node === b.path[step];
  if (!bFailed && !aFailed) return null;
  const [failed, other, failedSide, otherSide] = bFailed ? [b, a, sides.b, sides.a] : [a, b, sides.a, sides.b];
  const node = failed.failure!.node;
  const why = failureCause(answerAt(failed, step, node), answerAt(other, step, node), lastIntentKey(failed.records, node), failedSide, otherSide, node);
  const { code, message } = failed.failure!;
  return { message: `${failedSide} failed at ${node} (${code}: ${short(message)}), which ${otherSide} completed, at step ${step}: ${why}`, node };
}

function answerAt(outcome: Outcome, step: number, node: string): RunInput | undefined {
  return outcome.inputs.find((input) => input.kind === 'effect' && input.step === step && input.node === node);
}

/** Why a node failed in one run and completed in the other: its handler, its apply, or its code. */
function failureCause(failedAnswer: RunInput | undefined, otherAnswer: RunInput | undefined, failedKey: string | undefined, failedSide: string, otherSide: string, node: string): string {
  if (otherAnswer === undefined) return `the code of ${node} is not deterministic (it fails in one run only)`;
  if (failedAnswer !== undefined) {
    return failedAnswer.value === otherAnswer.value ? `its apply failed on the same result, ${short(otherAnswer.value)}: the apply is not deterministic` :
      `its apply failed on the result ${short(failedAnswer.value)}, where ${otherSide} got ${short(otherAnswer.value)}: the effect answered otherwise`;
  }
  if (failedKey !== otherAnswer.id) return `its handler failed under key ${failedKey ?? '?'} in ${failedSide}, and returned ${short(otherAnswer.value)} under key ${otherAnswer.id} in ${otherSide}`;
  return `its handler failed for key ${otherAnswer.id}, for which it returned ${short(otherAnswer.value)} in ${otherSide}: a handler must answer a key it has seen as it did the first time ` +
    '(after a crash inside its call it is called again with the same key; treat the outside system\'s "already done" or "duplicate" answer for the key as success and return the first result)';
}

/** The key of the last EFFECT_INTENT of `node` in a run's records (searched from the end: the check asks at every handler call). */
export function lastIntentKey(records: readonly LogRecord[], node: string): string | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (r.kind === RecordKind.EFFECT_INTENT && fromUtf8(r.node) === node) return fromUtf8(r.key);
  }
  return undefined;
}

/** A node path for a message: whole when short, else around `step`. */
function pathText(path: readonly string[], step: number): string {
  const shown = 12;
  if (path.length <= shown) return JSON.stringify(path);
  const from = Math.max(0, step - 4);
  const to = Math.min(path.length, from + shown - 4);
  const inner = path.slice(from, to).map((node) => JSON.stringify(node));
  return `[${from > 0 ? `…${from} more, ` : ''}${inner.join(',')}${to < path.length ? `, …${path.length - to} more` : ''}] (${path.length} steps)`;
}

function statusText(outcome: Outcome): string {
  if (outcome.status === 'not-ended') return 'without reaching its end';
  if (outcome.failure !== undefined) return `failed (${outcome.failure.code} at ${outcome.failure.node}: ${short(outcome.failure.message)})`;
  return outcome.status;
}

/** The first checkpoint (NODE_COMPLETED) below step `limit` whose state differs between the runs, read from their logs. */
function firstDifferentCheckpoint(a: Outcome, b: Outcome, limit = Infinity): { step: number; node: string; a: string; b: string } | null {
  const [sa, sb] = [checkpoints(a.records), checkpoints(b.records)];
  for (let step = 0; step < limit; step++) {
    const [x, y] = [sa.next(), sb.next()];
    if (x.done === true || y.done === true) return null;
    if (!jsonEqual(x.value.state, y.value.state)) return { step, node: x.value.node, a: stateText(x.value.state), b: stateText(y.value.state) };
  }
  return null;
}

function* checkpoints(records: readonly LogRecord[]): Generator<{ node: string; state: Json }> {
  let head: HeadState | null = null;
  for (const record of records) {
    head = advanceHead(head, record);
    if (record.kind === RecordKind.NODE_COMPLETED && head !== null) yield { node: fromUtf8(record.node), state: head.state };
  }
}

/** `node@seq` → node (an interrupt id whose INTERRUPT_PARKED was not read). */
export function nodeOfInterruptId(id: string): string {
  const at = id.lastIndexOf('@');
  return at < 0 ? id : id.slice(0, at);
}

function stateText(state: unknown): string {
  return JSON.stringify(state) ?? String(state);
}

/** A value for a message: at most 200 characters. */
export function short(text: string): string {
  return text.length <= 200 ? text : `${text.slice(0, 200)}… (${text.length} characters)`;
}
