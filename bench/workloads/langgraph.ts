/**
 * The LangGraph.js side of the resume and storage suites: the same workflow shapes as
 * workloads/remit-workflows.ts, on LangGraph's SQLite checkpointer (SqliteSaver over better-sqlite3),
 * with `durability: 'sync'` so that each super-step's checkpoint is written before the next step
 * runs (the comparable durability to REMIT's commit per step).
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

function config(steps: number) {
  return { configurable: { thread_id: LANGGRAPH_THREAD }, recursionLimit: steps + 10, durability: 'sync' as const };
}

/** Run parked(N) until it parks; the file then holds N+1 checkpoints and the pending interrupt. */
export async function langgraphPrepareParked(file: string, nodes: number): Promise<void> {
  const db = new Database(file);
  try {
    const app = parkedGraph(nodes).compile({ checkpointer: new SqliteSaver(db) });
    const out = await app.invoke({ step: 0, payload: fillerText(PARKED_PAYLOAD_BYTES), approved: '', finished: false }, config(nodes));
    if (!('__interrupt__' in out)) throw new Error('langgraph parked workload did not park');
  } finally {
    db.close();
  }
}

/** What a fresh process does to resume: open the file, build the graph, resume, check the result. */
export async function langgraphResume(file: string, nodes: number): Promise<void> {
  const db = new Database(file);
  try {
    const app = parkedGraph(nodes).compile({ checkpointer: new SqliteSaver(db) });
    const out = await app.invoke(new Command({ resume: RESUME_VALUE }), config(nodes));
    if (out.step !== nodes || out.approved !== RESUME_VALUE || out.finished !== true) {
      throw new Error(`langgraph resume ended in an unexpected state: step ${out.step}, approved ${out.approved}`);
    }
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

/** Run growth(N) to the end on a fresh file. */
export async function langgraphRunGrowth(file: string, steps: number, growing: boolean): Promise<void> {
  const db = new Database(file);
  try {
    const app = growthGraph(steps, growing).compile({ checkpointer: new SqliteSaver(db) });
    const out = await app.invoke({ step: 0, fixed: fillerText(FIXED_PAYLOAD_BYTES), items: [] }, config(steps));
    if (out.step !== steps) throw new Error(`langgraph growth run stopped at step ${out.step} of ${steps}`);
  } finally {
    db.close();
  }
}
