/**
 * The REMIT side of the resume, commit, gate and storage suites, through the public API only
 * (ts-shell/src/index.ts, what `import ... from 'remit'` gives a user). Same shapes as
 * workloads/langgraph.ts (see there).
 *
 * Core: the Wasm core by default; REMIT_BENCH_CORE=reference selects the TypeScript reference.
 * If the Wasm core is not built the reference is used and `remitCoreInUse()` says so (the suites
 * put it in their notes), so the bench still runs on a machine without the Rust toolchain.
 */

import { z } from 'zod';
import {
  createRemit, END, openSqliteStore, workflow, type CoreKind, type RecoveryCore, type Remit,
} from 'remit';
import { createCore } from 'remit/core';
import { countingStore, type CallCounter } from '../lib/counting.js';
import type { ResumeReport } from './langgraph.js';
import { FIXED_PAYLOAD_BYTES, ITEM_BYTES, PARKED_PAYLOAD_BYTES, RESUME_VALUE, fillerText } from './shapes.js';

export const REMIT_RUN_ID = 'bench-run';

let chosenCore: { kind: CoreKind; core: RecoveryCore; note: string } | undefined;

/** The core every REMIT workload uses in this process (loaded once). */
export async function remitCore(): Promise<{ kind: CoreKind; core: RecoveryCore; note: string }> {
  if (chosenCore) return chosenCore;
  const wanted = process.env.REMIT_BENCH_CORE === 'reference' ? 'reference' : 'wasm';
  try {
    chosenCore = { kind: wanted, core: await createCore(wanted), note: `REMIT rows use the ${wanted} core` };
  } catch (e) {
    chosenCore = {
      kind: 'reference',
      core: await createCore('reference'),
      note: `REMIT rows use the TypeScript reference core: the Wasm core did not load (${String((e as Error)?.message ?? e).slice(0, 160)})`,
    };
  }
  return chosenCore;
}

const ParkedState = z.object({ step: z.number().int(), payload: z.string(), approved: z.string(), finished: z.boolean() });

export function parkedWorkflow(nodes: number) {
  return workflow({ name: 'bench-parked', version: '1', state: ParkedState })
    .pure('work', { run: (s) => ({ step: s.step + 1 }), next: (s) => (s.step < nodes ? 'work' : 'approve') })
    .interrupt('approve', { resume: z.string(), apply: (_s, v) => ({ approved: v }), next: 'finish' })
    .pure('finish', { run: () => ({ finished: true }), next: END })
    .build();
}

/** The interrupt id of parked(N): RUN_STARTED is seq 0, the N completions 1..N, the park N+1. */
export function parkedInterruptId(nodes: number): string {
  return `approve@${nodes + 1}`;
}

async function open(
  file: string, wf: ReturnType<typeof parkedWorkflow> | ReturnType<typeof growthWorkflow>, synchronous: 'FULL' | 'NORMAL' = 'FULL',
  groupPureSteps = true,
): Promise<Remit> {
  const { core } = await remitCore();
  return createRemit({ store: openSqliteStore(file, { synchronous }), workflows: [wf], core, groupPureSteps });
}

/** Preparing is not timed, so it runs with synchronous=NORMAL (the file's contents are the same). */
export async function remitPrepareParked(file: string, nodes: number, runId = REMIT_RUN_ID, remit?: Remit): Promise<void> {
  const wf = parkedWorkflow(nodes);
  const r = remit ?? (await open(file, wf, 'NORMAL'));
  try {
    const run = await r.start(wf, { step: 0, payload: fillerText(PARKED_PAYLOAD_BYTES), approved: '', finished: false }, { runId });
    if (run.status !== 'parked' || run.interrupt?.id !== parkedInterruptId(nodes)) {
      throw new Error(`REMIT parked workload ended ${run.status} on ${run.interrupt?.id ?? 'no interrupt'}`);
    }
  } finally {
    if (!remit) await r.close();
  }
}

/**
 * `PRAGMA synchronous` and `journal_mode` of the store's connection, read back. The store does not
 * expose its connection; the bench reads the (TypeScript-private) field so the table can show both
 * sides' settings as SQLite reports them. A store without that field throws: the comparison at
 * equal durability must not pass on a setting nobody read.
 */
function storePragmas(store: object): { synchronous: string; journalMode: string } {
  const db = (store as { db?: { pragma?: (p: string, o: { simple: boolean }) => unknown } }).db;
  if (typeof db?.pragma !== 'function') throw new Error('the REMIT SQLite store has no `db` connection to read its PRAGMA synchronous back from (bench/workloads/remit.ts, storePragmas)');
  const v = db.pragma('synchronous', { simple: true }) as number;
  return { synchronous: ['OFF', 'NORMAL', 'FULL', 'EXTRA'][v] ?? String(v), journalMode: String(db.pragma('journal_mode', { simple: true })) };
}

/** The phases of remitResume, in order; each ends where the next begins. */
export const RESUME_PHASES = ['workflow', 'core', 'open', 'create', 'resume', 'close'] as const;
export type ResumePhase = (typeof RESUME_PHASES)[number];

/**
 * What a fresh process does to resume: build the workflow, load the core, open the file, register
 * the workflow, resume, check, close. Counts the store's appends (each one durable commit) through
 * a Proxy. `ended(phase)` is called as each phase of RESUME_PHASES ends (bench/resume-phases.ts
 * times them; the resume suite passes nothing).
 */
export async function remitResume(
  file: string, nodes: number, synchronous: 'FULL' | 'NORMAL' = 'FULL', ended: (phase: ResumePhase) => void = () => {},
): Promise<ResumeReport> {
  const wf = parkedWorkflow(nodes);
  ended('workflow');
  const { core } = await remitCore();
  ended('core');
  const store = openSqliteStore(file, { synchronous });
  const { synchronous: readBack, journalMode } = storePragmas(store);
  if (readBack !== synchronous) throw new Error(`REMIT's store reads back synchronous=${readBack} after asking for ${synchronous}`);
  ended('open');
  const counter: CallCounter = { calls: {} };
  const remit = await createRemit({ store: countingStore(store, counter), workflows: [wf], core });
  ended('create');
  try {
    const run = await remit.resume(REMIT_RUN_ID, parkedInterruptId(nodes), RESUME_VALUE);
    const s = run.state as z.infer<typeof ParkedState>;
    if (run.status !== 'completed' || s.step !== nodes || s.approved !== RESUME_VALUE || !s.finished) {
      throw new Error(`REMIT resume ended ${run.status} at step ${s.step}`);
    }
    ended('resume');
    return { synchronous_read_back: readBack, journal_mode: journalMode, commits: (counter.calls['append'] ?? 0) + (counter.calls['fork'] ?? 0) };
  } finally {
    await remit.close();
    ended('close');
  }
}

const GrowthState = z.object({ step: z.number().int(), fixed: z.string(), items: z.array(z.string()) });

/** One definition per shape, built once: a service defines its workflows at start-up, not per run. */
const growthWorkflows = new Map<string, ReturnType<typeof buildGrowthWorkflow>>();

export function growthWorkflow(steps: number, growing: boolean) {
  const key = `${steps}:${growing}`;
  let wf = growthWorkflows.get(key);
  if (wf === undefined) growthWorkflows.set(key, (wf = buildGrowthWorkflow(steps, growing)));
  return wf;
}

function buildGrowthWorkflow(steps: number, growing: boolean) {
  const item = fillerText(ITEM_BYTES);
  return workflow({ name: `bench-growth-${growing ? 'growing' : 'fixed'}`, version: '1', state: GrowthState })
    .pure('work', {
      run: (s) => (growing ? { step: s.step + 1, items: [...s.items, item] } : { step: s.step + 1 }),
      next: (s) => (s.step < steps ? 'work' : END),
    })
    .build();
}

/** Run growth(N) to completion as `runId` on an open Remit (or a fresh one on `file`). */
export async function remitRunGrowth(
  file: string, steps: number, growing: boolean,
  options: { runId?: string; remit?: Remit; synchronous?: 'FULL' | 'NORMAL'; fixedBytes?: number } = {},
): Promise<void> {
  const wf = growthWorkflow(steps, growing);
  const r = options.remit ?? (await open(file, wf, options.synchronous));
  try {
    const run = await r.start(wf, { step: 0, fixed: fillerText(options.fixedBytes ?? FIXED_PAYLOAD_BYTES), items: [] }, { runId: options.runId ?? REMIT_RUN_ID });
    if (run.status !== 'completed' || (run.state as { step: number }).step !== steps) throw new Error(`REMIT growth run ended ${run.status}`);
  } finally {
    if (!options.remit) await r.close();
  }
}

/** An open Remit on `file` for a workload that runs many runs on one connection. */
export async function remitOpen(
  file: string, wf: Parameters<typeof open>[1], synchronous: 'FULL' | 'NORMAL' = 'FULL', options: { groupPureSteps?: boolean } = {},
): Promise<Remit> {
  return open(file, wf, synchronous, options.groupPureSteps ?? true);
}
