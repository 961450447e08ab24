/**
 * The cell catalogue: named fault points of the reference workflow crossed with fault kinds (the
 * fault matrix), and concurrent resumers (the concurrency matrix). Names are system-neutral; each
 * adapter says which points it can reach and how (`hello` reply), and cells on points it has no
 * equivalent for are reported "not applicable" with the adapter's reason.
 *
 * Record kinds are those of docs/log-format.md. A point `before-commit:K@n` fires just before the
 * record of kind K for node n is made durable, `after-commit:K@n` just after the store confirmed it.
 * The names come from conformance/catalogue.json, which the Python adapters read too.
 */
import { CATALOGUE, assertSameList } from './catalogue.js';

export const FAULT_KINDS = ['sigkill', 'throw', 'store-error'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
assertSameList('FAULT_KINDS', FAULT_KINDS, CATALOGUE.faultKinds);

/** Which command of the schedule reaches the point: the first run, the resume, or a fork. */
export type PointPhase = 'start' | 'resume' | 'fork';

export interface FaultPointSpec {
  name: string;
  phase: PointPhase;
  /** commit points can also get store errors; code points (inside a node or handler) cannot. */
  place: 'commit' | 'code';
  description: string;
}

/** Every persistence point of the reference workflow, in the order a run reaches them (from the catalogue). */
export const FAULT_POINTS: readonly FaultPointSpec[] = CATALOGUE.faultPoints;

export function faultKindsFor(point: FaultPointSpec): readonly FaultKind[] {
  return CATALOGUE.faultKindsByPlace[point.place] as FaultKind[];
}

export interface FaultCell {
  matrix: 'fault';
  id: string;
  point: string;
  kind: FaultKind;
  phase: PointPhase;
}

export const CONCURRENCY_KS = [2, 4, 8, 16] as const;
/** hosts: adapter processes in separate network namespaces that reach the store over a link (cross-host.ts). */
export const CONCURRENCY_MODES = ['in-process', 'processes', 'hosts'] as const;
export const CONCURRENCY_VALUES = ['same', 'different'] as const;
assertSameList('CONCURRENCY_KS', CONCURRENCY_KS, CATALOGUE.concurrency.ks);
assertSameList('CONCURRENCY_MODES', CONCURRENCY_MODES, CATALOGUE.concurrency.modes);
assertSameList('CONCURRENCY_VALUES', CONCURRENCY_VALUES, CATALOGUE.concurrency.values);
export type ConcurrencyMode = (typeof CONCURRENCY_MODES)[number];
/** The concurrency matrix's columns per mode: resumers with the same or different values, and recoverers. */
export const CONCURRENCY_COLUMNS = ['same', 'different', 'recover'] as const;
export type ConcurrencyValues = (typeof CONCURRENCY_VALUES)[number];

export interface ConcurrencyCell {
  matrix: 'concurrency';
  id: string;
  k: number;
  mode: ConcurrencyMode;
  /** recover: not k resumers but k recoverers of one crashed run (RECOVER_CELLS). */
  values: ConcurrencyValues | 'recover';
}

/**
 * The recoverer cells: the main run is crashed (SIGKILL) just after charge's intent is durable
 * (for REMIT: its intent and attempt 1, one append), then k recoverers continue it at once: k
 * calls in one process (the crashed replica restarted), k processes, or k processes on hosts.
 * None of them may call charge's handler more than once in total (the crash came before the
 * handler ran), and the run continues once from its durable prefix.
 */
export const RECOVER_POINT = 'after-commit:EFFECT_INTENT@charge';
/**
 * Where the recoverer cells crash a system that records no effect intent (LangGraph persists
 * nothing before a node runs): right after the checkpoint before charge. Either way the recoverers
 * find a run whose next step is charge and whose handler has not run.
 */
export const RECOVER_POINT_WITHOUT_INTENT = 'after-commit:NODE_COMPLETED@compute';
/**
 * The `hello.concurrency` key an adapter declares when it answers `continueMany` (k concurrent
 * continue calls in one process): the in-process recoverer cells need it.
 */
export const RECOVERERS_IN_PROCESS = 'recoverers-in-process';
export const RECOVER_CELLS: readonly ConcurrencyCell[] = CONCURRENCY_KS.flatMap((k) =>
  CONCURRENCY_MODES.map((mode) => ({ matrix: 'concurrency' as const, id: `k=${k}/${mode}/recover`, k, mode, values: 'recover' as const })),
);

export type Cell = FaultCell | ConcurrencyCell;

export function faultCellId(point: string, kind: FaultKind): string {
  return `${point}/${kind}`;
}

export function concurrencyCellId(k: number, mode: ConcurrencyMode, values: ConcurrencyValues | 'recover'): string {
  return `k=${k}/${mode}/${values}`;
}

export const FAULT_CELLS: readonly FaultCell[] = FAULT_POINTS.flatMap((point) =>
  faultKindsFor(point).map((kind) => ({
    matrix: 'fault' as const,
    id: faultCellId(point.name, kind),
    point: point.name,
    kind,
    phase: point.phase,
  })),
);

export const CONCURRENCY_CELLS: readonly ConcurrencyCell[] = [
  ...CONCURRENCY_KS.flatMap((k) =>
    CONCURRENCY_MODES.flatMap((mode) =>
      CONCURRENCY_VALUES.map((values) => ({
        matrix: 'concurrency' as const,
        id: concurrencyCellId(k, mode, values),
        k,
        mode,
        values,
      })),
    ),
  ),
  ...RECOVER_CELLS,
];

export const ALL_CELLS: readonly Cell[] = [...FAULT_CELLS, ...CONCURRENCY_CELLS];

export function findCell(id: string): Cell {
  const cell = ALL_CELLS.find((c) => c.id === id);
  if (cell === undefined) {
    throw new Error(`unknown cell "${id}"; cells are listed in conformance/README.md ("Cell catalogue")`);
  }
  return cell;
}

export function findPoint(name: string): FaultPointSpec {
  const point = FAULT_POINTS.find((p) => p.name === name);
  if (point === undefined) throw new Error(`unknown fault point "${name}"`);
  return point;
}
