/**
 * The seeded generator of workflows and of scenarios to run them under (a pure function of the
 * seed). A workflow is a spine of 2 to 7 nodes (pure, effect, interrupt; at most three interrupts),
 * with up to two loops bounded by counters, a forward branch on a boolean field, and now and then
 * a node that fails the run. Its state schema has counters, answer fields for the interrupts,
 * result fields for the effects, and 2 to 5 data fields drawn from the schema grammar: optional
 * fields, unions, refinements, idempotent transforms, defaults, ISO dates, records, nested arrays.
 *
 * About one workflow in three carries one "poison" a user could write: a z.date() field, a z.any()
 * field holding a value JSON does not keep, a transform that is not idempotent or whose output its
 * own schema rejects (in the state or in a resume schema), an array that may hold undefined, an
 * effect returning a Date, a node writing a value its schema refuses. The harness's model
 * (./model.ts) says what must happen with each; the generator does not need to know.
 *
 * A scenario adds the input (and near-miss inputs), the resume values of each park in turn (and
 * near misses), one fault (a point the run reaches, its n-th occurrence, and a kind), and which of
 * the optional steps to run (duplicate resume, recover twice, continue from an older checkpoint,
 * two forks at a checkpoint).
 */
import { Prng } from '../prng.js';
import { interpret, ModelLimitError, type Expectation, type ResumePlan } from './model.js';
import { writeVerdict } from './schema-model.js';
import { END_NODE, GENERATED_WORKFLOW_FORMAT, tag, untag, type NodeSpec, type Op, type Route, type SchemaSpec, type Tagged, type WorkflowSpec } from './spec.js';
import { nearMiss, unfaithfulValue, validValue } from './values.js';

export const GENERATED_SCENARIO_FORMAT = 'remit-generated-scenario/1';
export const GENERATED_FAULT_KINDS = ['sigkill', 'throw', 'store-error'] as const;
export type GeneratedFaultKind = (typeof GENERATED_FAULT_KINDS)[number];

export interface GeneratedScenario {
  format: typeof GENERATED_SCENARIO_FORMAT;
  /** `g<index>` of the campaign, and the seed it was drawn from. */
  id: string;
  seed: number;
  workflow: WorkflowSpec;
  input: Tagged;
  nearMissInputs: Tagged[];
  resumes: ResumePlan[];
  fault: { point: string; kind: GeneratedFaultKind; occurrence: number } | null;
  duplicateResume: boolean;
  recoverTwice: boolean;
  continueFromOlder: { after: string; occurrence: number } | null;
  fork: { after: string; occurrence: number } | null;
  runIds: { main: string; forks: [string, string] };
}

/** The poisons a workflow may carry (see the header). */
export const POISONS = [
  'date-field', 'any-unfaithful', 'transform-not-idempotent', 'transform-type-change', 'array-undefined',
  'effect-date', 'invalid-write', 'resume-transform',
] as const;
export type Poison = (typeof POISONS)[number];

// ---------------------------------------------------------------- schemas

function stringSchema(prng: Prng): SchemaSpec {
  let s: SchemaSpec = { t: 'string', ...(prng.int(0, 3) === 0 ? { min: 1 } : {}), ...(prng.int(0, 3) === 0 ? { max: 24 } : {}) };
  if (prng.int(0, 4) === 0) s = { t: 'refine', of: s, check: prng.pick(['nonEmpty', 'noSpaces', 'lowercase'] as const) };
  if (prng.int(0, 3) === 0) s = { t: 'transform', of: s, fn: prng.pick(['trim', 'lower'] as const) };
  return s;
}

function numberSchema(prng: Prng): SchemaSpec {
  const int = prng.int(0, 1) === 0;
  let s: SchemaSpec = { t: 'number', ...(int ? { int: true } : {}), ...(prng.int(0, 2) === 0 ? { min: 0 } : {}), ...(prng.int(0, 3) === 0 ? { max: 1000 } : {}) };
  if (int && prng.int(0, 4) === 0) s = { t: 'refine', of: s, check: 'even' };
  if (prng.int(0, 3) === 0) s = { t: 'transform', of: s, fn: prng.pick(['round', 'clamp100'] as const) };
  return s;
}

/** A leaf or nested schema of the grammar, free of poison. */
function dataSchema(prng: Prng, depth: number): SchemaSpec {
  const choice = prng.int(0, depth >= 2 ? 6 : 11);
  switch (choice) {
    case 0:
    case 1:
      return stringSchema(prng);
    case 2:
    case 3:
      return numberSchema(prng);
    case 4:
      return { t: 'boolean' };
    case 5:
      return { t: 'enum', values: ['red', 'green', 'blue'].slice(0, prng.int(2, 3)) };
    case 6:
      return { t: 'isoDate' };
    case 7:
      return { t: 'array', of: dataSchema(prng, depth + 1) };
    case 8:
      return prng.int(0, 1) === 0
        ? { t: 'transform', of: { t: 'array', of: { t: 'number' } }, fn: 'sortNumbers' }
        : { t: 'array', of: { t: 'array', of: numberSchema(prng) } };
    case 9:
      return { t: 'record', of: dataSchema(prng, depth + 1) };
    case 10:
      return { t: 'object', fields: [['p', dataSchema(prng, depth + 1)], ['q', wrap(prng, dataSchema(prng, depth + 1))]] };
    default:
      return { t: 'union', of: [stringSchema(prng), numberSchema(prng), ...(prng.int(0, 1) === 0 ? [{ t: 'boolean' } as SchemaSpec] : [])] };
  }
}

/** Sometimes optional, nullable or defaulted. */
function wrap(prng: Prng, schema: SchemaSpec): SchemaSpec {
  switch (prng.int(0, 5)) {
    case 0:
    case 1:
      return { t: 'optional', of: schema };
    case 2:
      return { t: 'nullable', of: schema };
    case 3: {
      const value = validValue(schema, prng);
      const verdict = value === undefined ? null : writeVerdict(schema, value);
      return verdict !== null && verdict.ok ? { t: 'default', of: schema, value: tag(verdict.stored) } : schema;
    }
    default:
      return schema;
  }
}

function resumeSchema(prng: Prng): Extract<SchemaSpec, { t: 'object' }> {
  const fields: Array<[string, SchemaSpec]> = [['ok', { t: 'boolean' }]];
  for (let i = prng.int(0, 2); i > 0; i--) fields.push([`v${fields.length}`, wrap(prng, dataSchema(prng, 1))]);
  return { t: 'object', fields };
}

// ---------------------------------------------------------------- workflows

interface Draft {
  fields: Array<[string, SchemaSpec]>;
  nodes: NodeSpec[];
  counters: string[];
  data: string[];
}

function route(to: string): Route {
  return { to };
}

/** A value op on a data field: set, push, put or copy, with a valid value. */
function dataOp(prng: Prng, draft: Draft): Op | null {
  if (draft.data.length === 0) return null;
  const field = prng.pick(draft.data);
  const schema = draft.fields.find(([n]) => n === field)![1];
  const base = schema.t === 'optional' || schema.t === 'nullable' || schema.t === 'default' ? schema.of : schema;
  if (base.t === 'array' && prng.int(0, 1) === 0) {
    const item = validValue(base.of, prng);
    if (item !== undefined) return { op: 'push', field, value: tag(item) };
  }
  if (base.t === 'record' && prng.int(0, 1) === 0) {
    const item = validValue(base.of, prng);
    if (item !== undefined) return { op: 'put', field, key: `k${prng.int(0, 9)}`, value: tag(item) };
  }
  const same = draft.data.filter((d) => d !== field && JSON.stringify(draft.fields.find(([n]) => n === d)![1]) === JSON.stringify(schema));
  if (same.length > 0 && prng.int(0, 3) === 0) return { op: 'copy', from: prng.pick(same), to: field };
  const value = validValue(schema, prng);
  return value === undefined ? null : { op: 'set', field, value: tag(value) };
}

export function generateWorkflow(prng: Prng, name: string): { workflow: WorkflowSpec; poison: Poison | null } {
  const draft: Draft = { fields: [], nodes: [], counters: [], data: [] };
  for (let i = prng.int(2, 5); i > 0; i--) {
    const field = `d${draft.data.length}`;
    draft.fields.push([field, wrap(prng, dataSchema(prng, 0))]);
    draft.data.push(field);
  }
  draft.fields.push(['flag', { t: 'optional', of: { t: 'boolean' } }]);
  const length = prng.int(2, 7);
  // Kinds first (at most three interrupts), so every node knows the name of the next one.
  let interrupts = 0;
  const kinds = Array.from({ length }, () => {
    const roll = prng.int(0, 99);
    const kind = roll < 45 || (roll >= 75 && interrupts >= 3) ? 'pure' : roll < 75 ? 'effect' : 'interrupt';
    if (kind === 'interrupt') interrupts++;
    return kind;
  });
  const names = kinds.map((kind, i) => `${kind === 'pure' ? 'p' : kind === 'effect' ? 'e' : 'i'}${i}`);
  for (let i = 0; i < length; i++) {
    const kind = kinds[i]!;
    const nodeName = names[i]!;
    const next = route(names[i + 1] ?? END_NODE);
    const ops: Op[] = [];
    for (let k = prng.int(kind === 'pure' ? 1 : 0, 2); k > 0; k--) {
      const op = dataOp(prng, draft);
      if (op !== null) ops.push(op);
    }
    if (kind === 'pure' && prng.int(0, 4) === 0) ops.push({ op: 'set', field: 'flag', value: prng.int(0, 1) === 1 });
    if (kind === 'pure') {
      draft.nodes.push({ kind, name: nodeName, ops, next });
    } else if (kind === 'effect') {
      const resultTo = `r_${nodeName}`;
      draft.fields.push([resultTo, { t: 'optional', of: { t: 'string' } }]);
      draft.nodes.push({ kind, name: nodeName, result: { kind: 'echo', counter: 'c0' }, resultTo: prng.int(0, 3) === 0 ? null : resultTo, ops, next });
    } else {
      const answer = `a_${nodeName}`;
      const resume = resumeSchema(prng);
      draft.fields.push([answer, { t: 'optional', of: resume }]);
      draft.nodes.push({ kind, name: nodeName, resume, answer, ops, next });
    }
  }
  // Loops and a branch over the spine.
  const counters = ['c0', 'c1'];
  for (const c of counters) draft.fields.push([c, { t: 'default', of: { t: 'number', int: true, min: 0 }, value: 0 }]);
  const special = new Set<number>();
  for (let loop = 0; loop < 2 && prng.int(0, 9) < (loop === 0 ? 5 : 2); loop++) {
    const closer = prng.int(0, length - 1);
    if (special.has(closer)) continue;
    special.add(closer);
    const start = prng.int(0, closer);
    const node = draft.nodes[closer]!;
    node.ops.push({ op: 'inc', field: counters[loop]!, by: 1 });
    const exit = 'to' in node.next ? node.next.to : END_NODE;
    node.next = { if: { field: counters[loop]!, lt: prng.int(1, 3) }, then: draft.nodes[start]!.name, else: exit };
  }
  if (length >= 3 && prng.int(0, 2) === 0) {
    const at = prng.int(0, length - 3);
    if (!special.has(at)) {
      special.add(at);
      draft.nodes[at]!.next = { if: { field: 'flag', isTrue: true }, then: draft.nodes[at + 2]!.name, else: draft.nodes[at + 1]!.name };
    }
  }
  if (prng.int(0, 14) === 0) {
    const pure = draft.nodes.filter((n) => n.kind === 'pure');
    if (pure.length > 0) prng.pick(pure).ops.unshift({ op: 'failIf', field: 'c0', eq: prng.int(0, 1) });
  }
  const poison = prng.int(0, 2) === 0 ? prng.pick(POISONS) : null;
  if (poison !== null) addPoison(prng, draft, poison);
  return {
    workflow: { format: GENERATED_WORKFLOW_FORMAT, name, version: '1', state: { t: 'object', fields: draft.fields }, nodes: draft.nodes },
    poison,
  };
}

/** Add one poison: a field or a node doing something a user could write and the value rule refuses. */
function addPoison(prng: Prng, draft: Draft, poison: Poison): void {
  const someNode = () => prng.pick(draft.nodes);
  const addField = (schema: SchemaSpec, value: unknown): void => {
    const field = `x${draft.fields.length}`;
    draft.fields.push([field, schema]);
    const node = someNode();
    node.ops.push({ op: 'set', field, value: tag(value) });
  };
  switch (poison) {
    case 'date-field':
      addField({ t: 'optional', of: { t: 'date' } }, new Date(Date.UTC(2024, prng.int(0, 11), 5)));
      return;
    case 'any-unfaithful':
      addField({ t: 'optional', of: { t: 'any' } }, unfaithfulValue(prng));
      return;
    case 'transform-not-idempotent': {
      const fn = prng.pick(['times100', 'exclaim', 'inc'] as const);
      addField({ t: 'optional', of: { t: 'transform', of: fn === 'exclaim' ? { t: 'string' } : { t: 'number' }, fn } }, fn === 'exclaim' ? 'hi' : 5);
      return;
    }
    case 'transform-type-change': {
      const fn = prng.pick(['length', 'stringify'] as const);
      addField({ t: 'optional', of: { t: 'transform', of: fn === 'length' ? { t: 'string' } : { t: 'number' }, fn } }, fn === 'length' ? 'abc' : 7);
      return;
    }
    case 'array-undefined': {
      const field = `x${draft.fields.length}`;
      draft.fields.push([field, { t: 'default', of: { t: 'array', of: { t: 'optional', of: { t: 'number' } } }, value: [] }]);
      someNode().ops.push({ op: 'push', field, value: { $undef: 1 } });
      return;
    }
    case 'effect-date': {
      const effects = draft.nodes.filter((n): n is Extract<NodeSpec, { kind: 'effect' }> => n.kind === 'effect');
      if (effects.length > 0) prng.pick(effects).result = { kind: 'date' };
      return;
    }
    case 'invalid-write': {
      const field = `x${draft.fields.length}`;
      draft.fields.push([field, { t: 'optional', of: { t: 'string', max: 3 } }]);
      someNode().ops.push({ op: 'set', field, value: 'far too long' });
      return;
    }
    case 'resume-transform': {
      const interrupts = draft.nodes.filter((n): n is Extract<NodeSpec, { kind: 'interrupt' }> => n.kind === 'interrupt');
      if (interrupts.length === 0) return;
      const node = prng.pick(interrupts);
      const fn = prng.pick(['times100', 'stringify'] as const);
      node.resume = { t: 'object', fields: [['ok', { t: 'boolean' }], ['amount', { t: 'transform', of: { t: 'number', int: true }, fn }]] };
      const answer = draft.fields.find(([n]) => n === node.answer)!;
      answer[1] = { t: 'optional', of: node.resume };
      return;
    }
  }
}

// ---------------------------------------------------------------- scenarios

/** Near misses of `valid` that the model refuses (the others are dropped). */
function refusedNearMisses(schema: SchemaSpec, valid: unknown, prng: Prng, count: number): Tagged[] {
  const out: Tagged[] = [];
  for (let attempt = 0; attempt < count * 3 && out.length < count; attempt++) {
    const miss = nearMiss(schema, valid, prng);
    if (!writeVerdict(schema, untag(tag(miss))).ok) out.push(tag(miss));
  }
  return out;
}

function inputFor(prng: Prng, workflow: WorkflowSpec): unknown {
  const value = validValue(workflow.state, prng, prng.int(0, 5) === 0) as Record<string, unknown> | undefined;
  const input = { ...(value ?? {}) };
  // Counters start at their default mostly, so that loops run.
  if (prng.int(0, 5) !== 0) {
    delete input['c0'];
    delete input['c1'];
  }
  for (const key of Object.keys(input)) if (key.startsWith('a_') || key.startsWith('r_')) delete input[key];
  return input;
}

export interface Generated {
  scenario: GeneratedScenario;
  expectation: Expectation;
  poison: Poison | null;
}

/**
 * Scenario number `index` of a campaign with seed `seed`: a workflow, values, one fault of kind
 * `kind` (null: no fault), and the optional steps. A workflow whose run would be too long is drawn
 * again from the next sub-seed.
 */
export function generateScenario(seed: number, index: number, kind: GeneratedFaultKind | null): Generated {
  for (let attempt = 0; ; attempt++) {
    const prng = new Prng(seed).fork(`generated/${index}/${attempt}`);
    const tagHex = prng.hex(8);
    const { workflow, poison } = generateWorkflow(prng.fork('workflow'), `gen_${index}`);
    const values = prng.fork('values');
    const input = tag(inputFor(values, workflow));
    const nearMissInputs = values.int(0, 2) === 0 ? refusedNearMisses(workflow.state, untag(input), values, values.int(1, 2)) : [];
    const resumes: ResumePlan[] = [];
    let expectation: Expectation;
    try {
      expectation = interpret(workflow, input, nearMissInputs, (parkIndex, _node, schema) => {
        if (parkIndex >= 8) return undefined;
        const valid = validValue(schema, values) ?? {};
        const plan: ResumePlan = { value: tag(valid), nearMisses: values.int(0, 2) === 0 ? refusedNearMisses(schema, valid, values, 1) : [] };
        resumes[parkIndex] = plan;
        return plan;
      });
    } catch (error) {
      if (error instanceof ModelLimitError && attempt < 20) continue;
      throw error;
    }
    if (expectation.final.kind === 'parked' && attempt < 20) continue;
    const scenario: GeneratedScenario = {
      format: GENERATED_SCENARIO_FORMAT,
      id: `g${index}`,
      seed,
      workflow,
      input,
      nearMissInputs,
      resumes,
      fault: kind === null ? null : pickFault(prng.fork('fault'), expectation, kind),
      duplicateResume: expectation.final.kind === 'completed' && expectation.claims > 0,
      recoverTwice: true,
      continueFromOlder: null,
      fork: null,
      runIds: { main: `gm-${index}-${tagHex}`, forks: [`gfa-${index}-${tagHex}`, `gfb-${index}-${tagHex}`] },
    };
    if (expectation.final.kind === 'completed' && expectation.checkpoints.length > 0) {
      const steps = prng.fork('steps');
      const older = expectation.checkpoints[0]!;
      scenario.continueFromOlder = { after: older.node, occurrence: older.occurrence };
      const at = steps.pick(expectation.checkpoints);
      scenario.fork = { after: at.node, occurrence: at.occurrence };
    }
    return { scenario, expectation, poison };
  }
}

/** A fault of `kind` at the n-th occurrence of a point the run reaches (code points take no store errors). */
function pickFault(prng: Prng, expectation: Expectation, kind: GeneratedFaultKind): GeneratedScenario['fault'] {
  const eligible: Array<{ point: string; occurrence: number }> = [];
  for (const [point, count] of expectation.points) {
    const isCommit = point.startsWith('before-commit:') || point.startsWith('after-commit:');
    if (kind === 'store-error' && !isCommit) continue;
    for (let n = 1; n <= count; n++) eligible.push({ point, occurrence: n });
  }
  if (eligible.length === 0) return null;
  eligible.sort((a, b) => (a.point < b.point ? -1 : a.point > b.point ? 1 : a.occurrence - b.occurrence));
  const chosen = prng.pick(eligible);
  return { point: chosen.point, kind, occurrence: chosen.occurrence };
}

/** The expectation of a saved scenario: the model run again with its own values. */
export function expectationOf(scenario: GeneratedScenario): Expectation {
  return interpret(scenario.workflow, scenario.input, scenario.nearMissInputs, (parkIndex) => scenario.resumes[parkIndex]);
}
