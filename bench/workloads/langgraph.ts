/**
 * The LangGraph.js side of the resume and storage suites: the same workflow shapes as
 * workloads/remit-workflows.ts, on LangGraph's SQLite checkpointer (SqliteSaver over better-sqlite3),
 * with `durability: 'sync'` so that each super-step's checkpoint is written before the next step
 * runs (the comparable durability to REMIT's commit per step), and `PRAGMA synchronous` set
 * explicitly on the saver's connection (openSaver), so a comparison with REMIT's SqliteStore is at
 * the same synchronous setting (FULL or NORMAL) on both sides.
 *
 * Shapes (both libraries):
 * - parked(N): `work` runs N times (a self-loop on a counter), then `approve` parks on an
 *   interrupt; resuming runs `approve` with the value and `finish`, then the graph ends.
 * - growth(N, growing|fixed): `work` runs N times; each step appends one ITEM_BYTES item to a list
 *   (growing) or bumps a counter next to a fixed FIXED_PAYLOAD_BYTES field (fixed).
 */

import { Annotation, Command, END, START, StateGraph, interrupt } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { ITEM_BYTES, FIXED_PAYLOAD_BYTES, PARKED_PAYLOAD_BYTES, RESUME_VALUE, fillerText } from './shapes.js';

const ParkedState = Annotation.Root({
  step: Annotation<number>(),
  payload: Annotation<string>(),
  approved: Annotation<string>(),
  finished: Annotation<boolean>(),
});

export const LANGGRAPH_THREAD = 'bench-thread';

export function parkedGraph(nodes: number) {
  return new StateGraph(ParkedState)
    .addNode('work', (s) => ({ step: s.step + 1 }))
    .addNode('approve', () => ({ approved: interrupt('approve?') as string }))
    .addNode('finish', () => ({ finished: true }))
    .addEdge(START, 'work')
    .addConditionalEdges('work', (s) => (s.step < nodes ? 'work' : 'approve'), ['work', 'approve'])
    .addEdge('approve', 'finish')
    .addEdge('finish', END);
}

export type Synchronous = 'FULL' | 'NORMAL';
const SYNCHRONOUS_NAMES = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

/** `PRAGMA synchronous` of a connection, by name. */
export function synchronousOf(db: Database.Database): string {
  const v = db.pragma('synchronous', { simple: true }) as number;
  return SYNCHRONOUS_NAMES[v] ?? String(v);
}

export interface OpenedSaver {
  db: Database.Database;
  saver: SqliteSaver;
  /** What SqliteSaver's own setup left on the connection (WAL, and better-sqlite3's WAL default). */
  synchronousDefault: string;
  /** Read back after setting it. */
  synchronous: string;
  journalMode: string;
}

/**
 * Open the file the way SqliteSaver does (its setup() switches the connection to WAL and leaves
 * `synchronous` alone), then set `synchronous` explicitly on that connection and read it back.
 * setup() runs first so that nothing it does later can change the setting.
 */
export function openSaver(file: string, synchronous: Synchronous): OpenedSaver {
  const db = new Database(file);
  const saver = new SqliteSaver(db);
  // setup() is protected in the types; it is what every SqliteSaver method calls first.
  (saver as unknown as { setup(): void }).setup();
  const synchronousDefault = synchronousOf(db);
  db.pragma(`synchronous = ${synchronous}`);
  const readBack = synchronousOf(db);
  if (readBack !== synchronous) throw new Error(`LangGraph's connection reads back synchronous=${readBack} after setting ${synchronous}`);
  return { db, saver, synchronousDefault, synchronous: readBack, journalMode: String(db.pragma('journal_mode', { simple: true })) };
}

function config(steps: number) {
  return { configurable: { thread_id: LANGGRAPH_THREAD }, recursionLimit: steps + 10, durability: 'sync' as const };
}

/**
 * Run parked(N) until it parks; the file then holds N+1 checkpoints and the pending interrupt.
 * Preparing is not timed, so it runs with synchronous=NORMAL (the file's contents are the same).
 */
export async function langgraphPrepareParked(file: string, nodes: number): Promise<void> {
  const { db, saver } = openSaver(file, 'NORMAL');
  try {
    const app = parkedGraph(nodes).compile({ checkpointer: saver });
    const out = await app.invoke({ step: 0, payload: fillerText(PARKED_PAYLOAD_BYTES), approved: '', finished: false }, config(nodes));
    if (!('__interrupt__' in out)) throw new Error('langgraph parked workload did not park');
  } finally {
    db.close();
  }
}

export interface ResumeReport {
  synchronous_read_back: string;
  synchronous_default?: string;
  journal_mode?: string;
  /** REMIT: store appends (durable commits) the resume made. */
  commits?: number;
}

/** What a fresh process does to resume: open the file, build the graph, resume, check the result. */
export async function langgraphResume(file: string, nodes: number, synchronous: Synchronous = 'FULL'): Promise<ResumeReport> {
  const opened = openSaver(file, synchronous);
  const db = opened.db;
  try {
    const app = parkedGraph(nodes).compile({ checkpointer: opened.saver });
    const out = await app.invoke(new Command({ resume: RESUME_VALUE }), config(nodes));
    if (out.step !== nodes || out.approved !== RESUME_VALUE || out.finished !== true) {
      throw new Error(`langgraph resume ended in an unexpected state: step ${out.step}, approved ${out.approved}`);
    }
    return { synchronous_read_back: synchronousOf(db), synchronous_default: opened.synchronousDefault, journal_mode: opened.journalMode };
  } finally {
    db.close();
  }
}

const GrowthState = Annotation.Root({
  step: Annotation<number>(),
  fixed: Annotation<string>(),
  // The idiomatic LangGraph list: a reducer appends each step's item.
  items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export function growthGraph(steps: number, growing: boolean) {
  const item = fillerText(ITEM_BYTES);
  return new StateGraph(GrowthState)
    .addNode('work', (s) => (growing ? { step: s.step + 1, items: [item] } : { step: s.step + 1 }))
    .addEdge(START, 'work')
    .addConditionalEdges('work', (s) => (s.step < steps ? 'work' : END), ['work', END]);
}

/** Run growth(N) to the end on a fresh file (synchronous=NORMAL, as REMIT's side of the storage suite). */
export async function langgraphRunGrowth(file: string, steps: number, growing: boolean, synchronous: Synchronous = 'NORMAL'): Promise<void> {
  const { db, saver } = openSaver(file, synchronous);
  try {
    const app = growthGraph(steps, growing).compile({ checkpointer: saver });
    const out = await app.invoke({ step: 0, fixed: fillerText(FIXED_PAYLOAD_BYTES), items: [] }, config(steps));
    if (out.step !== steps) throw new Error(`langgraph growth run stopped at step ${out.step} of ${steps}`);
  } finally {
    db.close();
  }
}
