/**
 * Scenarios are data: the workflow input and resume values, at most one fault, the concurrency
 * shape, and the schedule of steps. A scenario is a pure function of (cell, seed), so a run of a
 * cell is reproducible from its seed; a shrunk scenario is saved as JSON and replayed as is.
 */
import { z } from 'zod';
import { CONCURRENCY_MODES, findCell, FAULT_KINDS, RECOVER_POINT, type Cell } from './cells.js';
import { Prng, hashString } from './prng.js';
import { ApprovalValueSchema, RefundInputSchema } from './workflow.js';

export const STEP_NAMES = [
  'baseline',
  'start',
  'resume',
  'resume-concurrent',
  'resume-duplicate',
  'recover-twice',
  'fork-twice',
  'continue-from-older',
  'probe-invalid-resume',
  'probe-invalid-state',
  'probe-corruption',
  'probe-definition-change',
] as const;
export type StepName = (typeof STEP_NAMES)[number];

export const ScenarioSchema = z.object({
  format: z.literal('remit-conformance-scenario/1'),
  cellId: z.string(),
  seed: z.number().int().min(0),
  input: RefundInputSchema,
  resumeValue: ApprovalValueSchema,
  /** A different valid value, for the duplicate resume. */
  secondValue: ApprovalValueSchema,
  fault: z.object({ point: z.string(), kind: z.enum(FAULT_KINDS) }).nullable(),
  concurrency: z
    .object({
      k: z.number().int().min(1).max(64),
      mode: z.enum(CONCURRENCY_MODES),
      values: z.array(ApprovalValueSchema),
      /** recover: k recoverers continue the run at once after the fault (no resume values). */
      race: z.literal('recover').optional(),
    })
    .nullable(),
  steps: z.array(z.enum(STEP_NAMES)),
  runIds: z.object({
    baseline: z.string(),
    main: z.string(),
    forks: z.tuple([z.string(), z.string()]),
    sideInvalidResume: z.string(),
    sideInvalidState: z.string(),
    sideDefinition: z.string(),
  }),
  forkIntent: z.object({ reason: z.string(), requestedBy: z.string() }),
  /** Which record the corruption probe damages (index, taken modulo the candidates). */
  corruptionPick: z.number().int().min(0),
});
export type Scenario = z.infer<typeof ScenarioSchema>;

const WORDS = ['ok', 'approved', 'per policy', 'late delivery', 'damaged', 'goodwill', 'checked', 'escalated'];

function approvalValue(prng: Prng, index: number) {
  return { approved: prng.int(0, 3) !== 0, note: `${prng.pick(WORDS)} #${index}-${prng.hex(4)}` };
}

/** The steps of a cell's schedule, in order; concurrency cells race resumers instead of one resume. */
export function defaultSteps(cell: Cell): StepName[] {
  const racesResumers = cell.matrix === 'concurrency' && cell.values !== 'recover';
  const resume: StepName = racesResumers ? 'resume-concurrent' : 'resume';
  return [
    'baseline',
    'start',
    resume,
    'resume-duplicate',
    'recover-twice',
    'fork-twice',
    'continue-from-older',
    'probe-invalid-resume',
    'probe-invalid-state',
    'probe-corruption',
    'probe-definition-change',
  ];
}

/** The seed of one cell, from the run's seed; the same for every system so inputs match. */
export function cellSeed(runSeed: number, cellId: string): number {
  return (hashString(`${runSeed}/${cellId}`) ^ Math.floor(runSeed % 0x1_0000_0000)) >>> 0;
}

export function generateScenario(cellId: string, seed: number): Scenario {
  const cell = findCell(cellId);
  const prng = new Prng(seed);
  const tag = prng.hex(10);
  const resumeValue = approvalValue(prng, 0);
  const secondValue = { approved: !resumeValue.approved, note: `second ${prng.hex(4)}` };
  let concurrency: Scenario['concurrency'] = null;
  let fault: Scenario['fault'] = cell.matrix === 'fault' ? { point: cell.point, kind: cell.kind } : null;
  if (cell.matrix === 'concurrency' && cell.values === 'recover') {
    concurrency = { k: cell.k, mode: cell.mode, values: [], race: 'recover' };
    fault = { point: RECOVER_POINT, kind: 'sigkill' };
  } else if (cell.matrix === 'concurrency') {
    const values = Array.from({ length: cell.k }, (_, i) => (cell.values === 'same' ? resumeValue : approvalValue(prng, i + 1)));
    concurrency = { k: cell.k, mode: cell.mode, values };
  }
  return {
    format: 'remit-conformance-scenario/1',
    cellId,
    seed,
    input: { orderId: `o-${tag}`, amountCents: prng.int(100, 500_000) },
    resumeValue,
    secondValue,
    fault,
    concurrency,
    steps: defaultSteps(cell),
    runIds: {
      baseline: `base-${tag}`,
      main: `run-${tag}`,
      forks: [`fork-a-${tag}`, `fork-b-${tag}`],
      sideInvalidResume: `side-ir-${tag}`,
      sideInvalidState: `side-is-${tag}`,
      sideDefinition: `side-dc-${tag}`,
    },
    forkIntent: { reason: `what-if ${prng.pick(WORDS)}`, requestedBy: 'conformance-harness' },
    corruptionPick: prng.int(0, 1_000),
  };
}

export function hasStep(scenario: Scenario, step: StepName): boolean {
  return scenario.steps.includes(step);
}
