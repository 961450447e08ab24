/**
 * Fault specifications for child processes and tests: "point[:KIND][@node][#n]" picks the n-th
 * time (default 1st) the sequencer reaches `point` with a batch containing KIND and/or at `node`.
 * Examples: "effect.after-handler@chargeCard", "append.after:EFFECT_INTENT#2", "pure.before-return".
 */

import { RecordKind } from '../core/types.js';
import { assert } from '../assert.js';
import { withArticle } from '../display.js';
import { ArgumentInvalidError, OptionInvalidError } from '../errors.js';
import { FAULT_POINTS, isFaultPoint, type FaultInfo, type FaultPoint, type SequencerHooks } from '../faults.js';
import { allKeysOf, notKnown, unknownKey } from '../known-keys.js';
import { isBuiltWorkflow, type NodeKindName, type Workflow } from '../workflow/workflow.js';
import { FaultSpecInvalidError } from './errors.js';

/**
 * The record kinds each point's `info.kinds` can hold (faults.ts): a spec naming another kind, or a
 * kind at a point that carries none, could never fire, and a test would pass without its fault.
 */
const ALL_KINDS: readonly string[] = Object.keys(RecordKind);
/** A FORKED record is never appended: the store's fork writes it, at the fork points. */
const APPENDED_KINDS: readonly string[] = ALL_KINDS.filter((kind) => kind !== 'FORKED');
const KINDS_AT: Readonly<Record<FaultPoint, readonly string[]>> = {
  'append.before': APPENDED_KINDS,
  'append.after': APPENDED_KINDS,
  'pure.before-return': [],
  'effect.before-handler': [],
  'effect.after-handler': [],
  'resume.after-claim': ['RESUME_CLAIMED'],
  'fork.before-store': ['FORKED'],
  'fork.after-store': ['FORKED'],
};

export interface FaultSpec {
  point: FaultPoint;
  kind?: string;
  node?: string;
  occurrence: number;
}

const SPEC_FORM = `expected point[:KIND][@node][#n], point one of ${FAULT_POINTS.join(', ')}`;

/** The spec a `point[:KIND][@node][#n]` text names; FaultSpecInvalidError for one that could never fire. */
export function parseFaultSpec(text: string): FaultSpec {
  if (typeof text !== 'string') throw new FaultSpecInvalidError(String(text), `${SPEC_FORM} (got ${text === null ? 'null' : typeof text}, not a string)`);
  // The node is everything between "@" and a final "#n": a node name may hold "#" and spaces
  // (formatFaultSpec then always writes the "#n", so that the spec reads back as written).
  const match = /^([a-z.-]+)(?::([A-Z_]+))?(?:@(.+?))?(?:#(\d+))?$/s.exec(text.trim());
  if (!match || !isFaultPoint(match[1]!)) throw new FaultSpecInvalidError(text, SPEC_FORM);
  const spec: FaultSpec = { point: match[1] as FaultPoint, occurrence: match[4] ? Number(match[4]) : 1 };
  if (match[2]) spec.kind = match[2];
  if (match[3]) spec.node = match[3];
  const problem = specProblem(spec);
  if (problem !== null) throw new FaultSpecInvalidError(text, problem);
  return spec;
}

/** Why a spec's kind or occurrence could never match (null: they can). */
function specProblem(spec: FaultSpec): string | null {
  if (spec.kind !== undefined) {
    const possible = KINDS_AT[spec.point];
    if (!possible.includes(spec.kind)) {
      return `${spec.point} ${possible.length === 0 ? 'carries no record kinds' : `carries only ${possible.join(', ')}`}, ` +
        `so :${spec.kind} would never match${ALL_KINDS.includes(spec.kind) ? '' : ` (record kinds: ${ALL_KINDS.join(', ')})`}`;
    }
  }
  if (spec.kind !== undefined && spec.node !== undefined && APPENDED_AT[spec.kind]?.length === 0 && (spec.point === 'append.before' || spec.point === 'append.after')) {
    return `${spec.kind} is appended at no node, so :${spec.kind}@${spec.node} would never match`;
  }
  // Known without the workflow, as the kinds above: checked here, not only when hooksFor has one.
  if (spec.node !== undefined && NODE_KIND_AT[spec.point] === 'none') return `${spec.point} is reached at no node, so @${spec.node} would never match`;
  if (!Number.isSafeInteger(spec.occurrence) || spec.occurrence < 1) {
    const given = spec.occurrence as unknown;
    return `occurrence counts from 1 (the n-th time the point is reached: a whole number), got ${given === undefined ? 'none' : typeof given === 'number' ? String(given) : withArticle(typeof given)}`;
  }
  return null;
}

/**
 * The kinds of node at which the append points carry a record kind (`info.node`: the step's node),
 * for the kinds bound to one: a spec pairing such a kind with a node of another kind could never
 * fire. RUN_STARTED is appended at no node. The others (NODE_COMPLETED, RUN_COMPLETED, RUN_FAILED)
 * are appended at nodes of every kind.
 */
const APPENDED_AT: Readonly<Record<string, readonly NodeKindName[]>> = {
  RUN_STARTED: [],
  EFFECT_INTENT: ['effect'],
  EFFECT_ATTEMPT: ['effect'],
  EFFECT_DONE: ['effect'],
  EFFECT_RELEASED: ['effect'],
  INTERRUPT_PARKED: ['interrupt'],
  RESUME_CLAIMED: ['interrupt'],
};

/**
 * The `point[:KIND][@node][#n]` text of a spec, which parseFaultSpec reads back as it is. A value
 * that is not a FaultSpec that could fire is refused (FaultSpecInvalidError), as hooksFor refuses
 * it: `formatFaultSpec({})` was "undefined#undefined".
 */
export function formatFaultSpec(spec: FaultSpec): string {
  return formatSpec(checkedSpec(spec, 'formatFaultSpec'));
}

function formatSpec(spec: FaultSpec): string {
  // "#1" is written when the node alone would not read back: it holds "#" or ends in white space.
  const needsOccurrence = spec.occurrence !== 1 || (spec.node !== undefined && /#|\s$/.test(spec.node));
  return `${spec.point}${spec.kind ? `:${spec.kind}` : ''}${spec.node ? `@${spec.node}` : ''}${needsOccurrence ? `#${spec.occurrence}` : ''}`;
}

/** Whether a fault point reached (`point`, `info`: as `hooks.at` gets them) is one `spec` picks, occurrence aside. */
export function faultMatches(spec: FaultSpec, point: FaultPoint, info: FaultInfo): boolean {
  const checked = checkedSpec(spec, 'faultMatches');
  if (info === null || typeof info !== 'object') throw new ArgumentInvalidError('faultMatches(info)', 'the FaultInfo hooks.at(point, info) is given ({ runId, seq, ... })', describeArgument(info));
  return matches(checked, point, info);
}

function matches(spec: FaultSpec, point: FaultPoint, info: FaultInfo): boolean {
  if (point !== spec.point) return false;
  if (spec.kind && !(info.kinds ?? []).includes(spec.kind)) return false;
  if (spec.node && info.node !== spec.node) return false;
  return true;
}

/** Hooks that fire one fault; `fired` says whether they did (a test can assert its fault happened). */
export interface FaultHooks extends SequencerHooks {
  readonly fired: boolean;
}

/**
 * The kind of node each point is reached at (`info.node`): a spec naming a node of another kind, or
 * a node at a point that names none, could never fire. undefined: any node.
 */
const NODE_KIND_AT: Readonly<Record<FaultPoint, NodeKindName | 'none' | undefined>> = {
  'append.before': undefined,
  'append.after': undefined,
  'pure.before-return': 'pure',
  'effect.before-handler': 'effect',
  'effect.after-handler': 'effect',
  'resume.after-claim': 'interrupt',
  'fork.before-store': 'none',
  'fork.after-store': 'none',
};

/**
 * Hooks that call `onFault` the `occurrence`-th time the spec matches, and never again. `spec`: a
 * `point[:KIND][@node][#n]` string (as checkWorkflow's report gives faults; parsed by
 * parseFaultSpec, whose error a bad one throws) or a parsed FaultSpec. A spec that could never
 * fire is refused (FaultSpecInvalidError), and, with `workflow`, one that names a node the
 * workflow does not have, or a node of a kind the point is never reached at (the test would pass
 * without its fault).
 */
export function hooksFor(spec: FaultSpec | string, onFault: (point: FaultPoint, info: FaultInfo) => void | Promise<void>, options: HooksForOptions = {}): FaultHooks {
  const parsed = typeof spec === 'string' ? parseFaultSpec(spec) : checkedSpec(spec);
  // Checked here, not when the fault fires: a call with something else in place of onFault failed
  // only inside the run, at the fault point, with "onFault is not a function", and a misspelt
  // option ({ wf }) left the spec's node unchecked.
  if (typeof onFault !== 'function') {
    throw new ArgumentInvalidError('hooksFor(onFault)', 'a function (point, info) => void, called when the fault fires', describeArgument(onFault));
  }
  return hooksForSpec(parsed, onFault, checkedHooksOptions(options));
}

/** The options of hooksFor. */
export interface HooksForOptions {
  /** The workflow the hooks are for: a spec naming a node it lacks, or of a kind the point never reaches, is refused. */
  workflow?: Workflow;
}

const HOOKS_FOR_OPTIONS = allKeysOf<HooksForOptions>()('workflow');

function checkedHooksOptions(options: unknown): HooksForOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ArgumentInvalidError('hooksFor(options)', 'an object of hooksFor options ({ workflow }) or nothing', describeArgument(options));
  }
  const unknown = unknownKey(options, HOOKS_FOR_OPTIONS);
  if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as Record<string, unknown>)[unknown], notKnown('an option of hooksFor', HOOKS_FOR_OPTIONS));
  const { workflow } = options as HooksForOptions;
  if (workflow !== undefined && !isBuiltWorkflow(workflow)) {
    throw new OptionInvalidError('workflow', workflow, 'must be a built workflow (workflow(...)....build())');
  }
  return options as HooksForOptions;
}

/** An argument that is not what it should be, for a message: `null`, `an array`, or its type. */
function describeArgument(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

const FAULT_SPEC_KEYS = allKeysOf<FaultSpec>()('point', 'kind', 'node', 'occurrence');

/** A FaultSpec object given to `caller` (hooksFor, ...), checked as parseFaultSpec checks a string. */
function checkedSpec(spec: unknown, caller = 'hooksFor'): FaultSpec {
  const given = spec as Partial<FaultSpec> | null;
  if (given === null || typeof given !== 'object' || typeof given.point !== 'string' || !isFaultPoint(given.point)) {
    const wants = caller === 'hooksFor' ? 'a "point[:KIND][@node][#n]" string or a FaultSpec' : 'a FaultSpec (parseFaultSpec gives one)';
    throw new FaultSpecInvalidError(describeGiven(spec), `${caller} needs ${wants} ({ point, occurrence, kind?, node? }) whose point is one of ${FAULT_POINTS.join(', ')}`);
  }
  const text = describeGiven(spec);
  // A misspelt key (`nodee`) would leave the spec firing at the first such point of any node.
  const unknown = unknownKey(given, FAULT_SPEC_KEYS);
  if (unknown !== undefined) throw new FaultSpecInvalidError(text, `${JSON.stringify(unknown)} ${notKnown('a key of a FaultSpec', FAULT_SPEC_KEYS)}`);
  if (given.kind !== undefined && typeof given.kind !== 'string') throw new FaultSpecInvalidError(text, 'kind must be a record kind (a string)');
  if (given.node !== undefined && (typeof given.node !== 'string' || given.node === '')) throw new FaultSpecInvalidError(text, 'node must be a non-empty string');
  const problem = specProblem(given as FaultSpec);
  if (problem !== null) throw new FaultSpecInvalidError(text, problem);
  return given as FaultSpec;
}

/** A value given as a spec, for a message: a FaultSpec as its string form, anything else as JSON. */
function describeGiven(spec: unknown): string {
  const given = spec as Partial<FaultSpec> | null;
  if (given !== null && typeof given === 'object' && typeof given.point === 'string' && isFaultPoint(given.point) && typeof given.occurrence === 'number') {
    return formatSpec(given as FaultSpec);
  }
  try {
    return JSON.stringify(spec) ?? String(spec);
  } catch {
    return typeof spec;
  }
}

function hooksForSpec(spec: FaultSpec, onFault: (point: FaultPoint, info: FaultInfo) => void | Promise<void>, options: HooksForOptions): FaultHooks {
  if (options.workflow !== undefined) checkNode(spec, options.workflow);
  let seen = 0;
  return {
    get fired() {
      return seen >= spec.occurrence;
    },
    async at(point, info) {
      if (!matches(spec, point, info)) return;
      seen += 1;
      if (seen === spec.occurrence) await onFault(point, info);
    },
  };
}

/** Throws FaultSpecInvalidError unless the spec's node is one `workflow` has, of a kind its point is reached at. */
export function checkSpecNode(spec: FaultSpec, workflow: Workflow): void {
  const checked = checkedSpec(spec, 'checkSpecNode');
  if (!isBuiltWorkflow(workflow)) throw new ArgumentInvalidError('checkSpecNode(workflow)', 'a built workflow (workflow(...)....build())', describeArgument(workflow));
  checkNode(checked, workflow);
}

function checkNode(spec: FaultSpec, workflow: Workflow): void {
  if (spec.node === undefined) return;
  const expected = NODE_KIND_AT[spec.point];
  const text = formatSpec(spec);
  // specProblem, which every spec given here went through, refused a node at a point reached at none.
  assert(expected !== 'none', () => `fault spec ${text}: a node at a point reached at no node passed specProblem`);
  const node = workflow.nodes.get(spec.node);
  if (node === undefined) {
    throw new FaultSpecInvalidError(text, `workflow ${workflow.name} has no node ${spec.node} (its nodes: ${workflow.nodeOrder.join(', ')}), so it would never fire`);
  }
  const article = node.kind === 'pure' ? 'a' : 'an';
  if (expected !== undefined && node.kind !== expected) {
    throw new FaultSpecInvalidError(text, `${spec.point} is reached only at ${expected} nodes, and ${spec.node} is ${article} ${node.kind} node, so it would never fire`);
  }
  const appendedAt = spec.kind === undefined || expected !== undefined ? undefined : APPENDED_AT[spec.kind];
  if (appendedAt !== undefined && appendedAt.length > 0 && !appendedAt.includes(node.kind)) {
    throw new FaultSpecInvalidError(text, `${spec.kind} is appended only at ${appendedAt.join(' and ')} nodes, and ${spec.node} is ${article} ${node.kind} node, so it would never fire`);
  }
}

/** The error a thrown-fault hook throws; tests recognise it by class. */
export class InjectedFault extends Error {
  constructor(readonly point: FaultPoint, readonly info: FaultInfo) {
    super(`injected fault at ${point} (run ${info.runId}, seq ${info.seq}${info.node ? `, node ${info.node}` : ''})`);
    this.name = 'InjectedFault';
  }
}
