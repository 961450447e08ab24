/**
 * Conformance adapter for LangGraph.js: @langchain/langgraph with the SQLite checkpointer
 * (@langchain/langgraph-checkpoint-sqlite), every invocation with `durability: "sync"`.
 * Run: node --import tsx conformance/adapters/langgraph/adapter.ts  (speaks JSON lines on stdio)
 *
 * Persistence points are reached by wrapping the checkpointer's `put` and `putWrites`; the point a
 * write corresponds to is read from what is being written (metadata.source, the written channels,
 * the last node in `visited`), never from timing.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { Command } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { Checkpoint, CheckpointMetadata, PendingWrite } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { EffectSinkWriter } from '../../harness/sink.js';
import { EFFECT_NODES, FAULT_POINTS_LANGGRAPH, initialState, invalidStateInput, RefundInputSchema, RefundStateSchema, type RefundState } from './points.js';
import { FaultSwitch, InjectedFault, hex, serve, stringArg, type ArmedFault } from '../common/serve.js';
import { installedVersion } from '../common/versions.js';
import { ApprovalValueError, buildGraph } from './workflow.js';

const INJECTED_STORE_ERROR = 'injected store error: disk I/O error';
const NULL_TASK_ID = '00000000-0000-0000-0000-000000000000';
const STATE_KEYS = Object.keys(RefundStateSchema.shape) as (keyof RefundState)[];

const faults = new FaultSwitch();
let sink: EffectSinkWriter | null = null;
let session: Session | null = null;

function storeError(): Error {
  return new Database.SqliteError(INJECTED_STORE_ERROR, 'SQLITE_IOERR');
}

function lastVisited(values: Record<string, unknown> | undefined): string | null {
  const visited = values?.visited;
  return Array.isArray(visited) && visited.length > 0 ? String(visited[visited.length - 1]) : null;
}

/** The checkpointer with the fault points of the catalogue around its two writes. */
class FaultingSaver extends SqliteSaver {
  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    const point = this.pointOfPut(checkpoint, metadata);
    if (point !== null) faults.hit(`before-commit:${point}`, storeError);
    const result = await super.put(config, checkpoint, metadata);
    if (point !== null) faults.hit(`after-commit:${point}`, storeError);
    return result;
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const point = this.pointOfWrites(writes, taskId);
    if (point !== null) faults.hit(`before-commit:${point}`, storeError);
    await super.putWrites(config, writes, taskId);
    if (point !== null) faults.hit(`after-commit:${point}`, storeError);
  }

  ensureSetup(): void {
    this.setup();
  }

  private pointOfPut(checkpoint: Checkpoint, metadata: CheckpointMetadata): string | null {
    if (metadata?.source === 'input') return 'RUN_STARTED';
    if (metadata?.source === 'update') return 'FORKED';
    if (metadata?.source !== 'loop') return null;
    const node = lastVisited(checkpoint.channel_values as Record<string, unknown>);
    return node === null ? null : `NODE_COMPLETED@${node}`;
  }

  private pointOfWrites(writes: PendingWrite[], taskId: string): string | null {
    const channels = writes.map(([channel]) => channel);
    if (channels.includes('__interrupt__')) return 'INTERRUPT_PARKED@approval';
    if (taskId === NULL_TASK_ID && channels.includes('__resume__')) return 'RESUME_CLAIMED@approval';
    const visited = writes.find(([channel]) => channel === 'visited')?.[1];
    const node = Array.isArray(visited) && visited.length > 0 ? String(visited[visited.length - 1]) : null;
    return node !== null && (EFFECT_NODES as readonly string[]).includes(node) ? `EFFECT_DONE@${node}` : null;
  }
}

class Session {
  readonly db: Database.Database;
  readonly saver: FaultingSaver;
  readonly app: ReturnType<typeof buildGraph>;

  constructor(readonly storePath: string) {
    this.db = new Database(storePath);
    this.saver = new FaultingSaver(this.db);
    this.app = buildGraph({ sink: currentSink, faults }, this.saver);
  }

  /** A fork is addressed as "<thread>@<checkpoint id of the fork>": it lives in its source's thread. */
  threadOf(runId: string): string {
    return runId.split('@')[0] as string;
  }

  forkCheckpointOf(runId: string): string | null {
    return runId.split('@')[1] ?? null;
  }
}

function currentSink(): EffectSinkWriter {
  if (sink === null) throw new Error('no effect sink: "open" was not called');
  return sink;
}

function currentSession(): Session {
  if (session === null) throw new Error('no store: "open" was not called');
  return session;
}

function runConfig(thread: string, checkpointId?: string) {
  const configurable: Record<string, string> = { thread_id: thread };
  if (checkpointId !== undefined) configurable.checkpoint_id = checkpointId;
  return { configurable, durability: 'sync' as const };
}

function stateOf(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(STATE_KEYS.filter((k) => k in values).map((k) => [k, values[k]]));
}

function outcomeOfResult(result: Record<string, unknown>) {
  const parked = Array.isArray(result.__interrupt__) && result.__interrupt__.length > 0;
  return { outcome: parked ? ('parked' as const) : ('completed' as const), state: stateOf(result) };
}

function outcomeOfError(e: unknown) {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  if (e instanceof InjectedFault) return { outcome: 'error' as const, error: { kind: 'injected' as const, message } };
  if (e instanceof Error && e.message.includes(INJECTED_STORE_ERROR)) {
    return { outcome: 'error' as const, error: { kind: 'store' as const, message } };
  }
  if (e instanceof ApprovalValueError) {
    return { outcome: 'error' as const, error: { kind: 'validation' as const, message, field: e.field } };
  }
  const issues = (e as { issues?: { path?: unknown[] }[] } | null)?.issues;
  if (Array.isArray(issues)) {
    const field = String(issues[0]?.path?.[0] ?? '');
    return { outcome: 'error' as const, error: { kind: 'validation' as const, message, field } };
  }
  return { outcome: 'error' as const, error: { kind: 'other' as const, message } };
}

async function invoke(input: unknown, thread: string, checkpointId?: string) {
  try {
    const result = await currentSession().app.invoke(input as never, runConfig(thread, checkpointId));
    return outcomeOfResult(result as Record<string, unknown>);
  } catch (e) {
    return outcomeOfError(e);
  }
}

interface CheckpointRow {
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string | null;
  checkpoint: Buffer;
  metadata: Buffer;
}
interface WriteRow {
  checkpoint_id: string;
  task_id: string;
  idx: number;
  channel: string;
  type: string | null;
  value: Buffer | null;
}

function rowsOf(db: Database.Database, thread: string): { checkpoints: CheckpointRow[]; writes: WriteRow[] } {
  const checkpoints = db
    .prepare(`SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id`)
    .all(thread) as CheckpointRow[];
  const writes = db
    .prepare(`SELECT checkpoint_id, task_id, idx, channel, type, value FROM writes WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id, task_id, idx`)
    .all(thread) as WriteRow[];
  return { checkpoints, writes };
}

/** The rows of one run: a whole thread, or for a fork the fork checkpoint and its descendants. */
function branchRows(db: Database.Database, thread: string, forkCheckpointId: string | null) {
  const all = rowsOf(db, thread);
  if (forkCheckpointId === null) return all;
  const keep = new Set([forkCheckpointId]);
  for (const row of all.checkpoints) {
    if (row.parent_checkpoint_id !== null && keep.has(row.parent_checkpoint_id)) keep.add(row.checkpoint_id);
  }
  return {
    checkpoints: all.checkpoints.filter((r) => keep.has(r.checkpoint_id)),
    writes: all.writes.filter((w) => keep.has(w.checkpoint_id)),
  };
}

function bytesHex(...parts: (string | Buffer | null | number)[]): string {
  const chunks = parts.map((p) => (p === null ? Buffer.alloc(0) : Buffer.isBuffer(p) ? p : Buffer.from(String(p), 'utf8')));
  return hex(Buffer.concat(chunks.flatMap((c) => [Buffer.from(`${c.length}:`), c])));
}

function parseBlob(type: string | null, blob: Buffer | null): unknown {
  if (blob === null) return null;
  if (type !== null && type !== 'json') return `<${type} ${blob.length} bytes>`;
  return JSON.parse(blob.toString('utf8'));
}

function maskInterruptIds(channel: string, value: unknown): unknown {
  if (channel !== '__interrupt__' || !Array.isArray(value)) return value;
  return value.map((i) => (i !== null && typeof i === 'object' ? { ...(i as object), id: '<id>' } : i));
}

/** Decoded rows with checkpoint ids, task ids and timestamps masked, in branch order. */
function normalizeRows(rows: { checkpoints: CheckpointRow[]; writes: WriteRow[] }): unknown[] {
  return rows.checkpoints.map((row) => {
    const cp = parseBlob(row.type, row.checkpoint) as { channel_values?: Record<string, unknown> };
    const md = parseBlob(row.type, row.metadata) as { source?: string; step?: number };
    // Task ids and interrupt ids derive from checkpoint ids, so they are masked, and writes are
    // ordered by what they write rather than by task id.
    const writes = rows.writes
      .filter((w) => w.checkpoint_id === row.checkpoint_id)
      .map((w) => ({ channel: w.channel, task: w.task_id === NULL_TASK_ID ? 'null' : 'task', idx: w.idx, value: maskInterruptIds(w.channel, parseBlob(w.type, w.value)) }))
      .sort((a, b) => (JSON.stringify([a.task, a.idx, a.channel]) < JSON.stringify([b.task, b.idx, b.channel]) ? -1 : 1));
    return { source: md?.source, values: stateOf(cp?.channel_values ?? {}), writes };
  });
}

function statesOf(rows: { checkpoints: CheckpointRow[] }): unknown[] {
  return rows.checkpoints.map((row) => {
    const cp = parseBlob(row.type, row.checkpoint) as { channel_values?: Record<string, unknown> };
    const values = cp?.channel_values ?? {};
    const start = values.__start__;
    return start !== null && typeof start === 'object' ? stateOf(start as Record<string, unknown>) : stateOf(values);
  });
}

async function headOf(thread: string, forkCheckpointId: string | null) {
  const s = currentSession();
  if (forkCheckpointId === null) return s.app.getState(runConfig(thread));
  const rows = branchRows(s.db, thread, forkCheckpointId).checkpoints;
  const last = rows[rows.length - 1];
  return s.app.getState(runConfig(thread, last?.checkpoint_id ?? forkCheckpointId));
}

async function readStore(runId: string) {
  const s = currentSession();
  const thread = s.threadOf(runId);
  const forkCheckpointId = s.forkCheckpointOf(runId);
  const rows = branchRows(s.db, thread, forkCheckpointId);
  const records = [
    ...rows.checkpoints.map((r) => ({ id: `checkpoint:${r.checkpoint_id}`, hex: bytesHex(r.parent_checkpoint_id, r.type, r.checkpoint, r.metadata) })),
    ...rows.writes.map((w) => ({ id: `write:${w.checkpoint_id}:${w.task_id}:${w.idx}`, hex: bytesHex(w.channel, w.type, w.value) })),
  ];
  const base = { runId, exists: rows.checkpoints.length > 0, records, claims: rows.writes.filter((w) => w.task_id === NULL_TASK_ID && w.channel === '__resume__').length };
  if (rows.checkpoints.length === 0) {
    return { ...base, normalized: [], status: 'absent', integrity: { ok: true }, completedNodes: [], effectsDone: [], states: [], headState: null, nextAction: 'NONE', recoveries: {} };
  }
  try {
    const head = await headOf(thread, forkCheckpointId);
    const values = head.values as Record<string, unknown>;
    const completedNodes = Array.isArray(values.visited) ? values.visited.map(String) : [];
    const interrupted = head.tasks.some((t) => (t.interrupts?.length ?? 0) > 0);
    const pendingDone = (head.tasks ?? [])
      .filter((t) => t.result !== undefined && (EFFECT_NODES as readonly string[]).includes(t.name))
      .map((t) => t.name);
    const status = head.next.length === 0 ? 'completed' : interrupted ? 'parked' : 'running';
    const nextAction = head.next.length === 0 ? 'NONE' : `${interrupted ? 'AWAIT_RESUME' : 'RUN'} ${head.next.join(',')}`;
    const recovered = JSON.stringify({ values: stateOf(values), next: head.next, tasks: head.tasks.map((t) => [t.name, t.interrupts?.map((i) => i.value)]) });
    return {
      ...base,
      normalized: normalizeRows(rows),
      status,
      integrity: { ok: true },
      completedNodes,
      effectsDone: [...new Set([...completedNodes.filter((n) => (EFFECT_NODES as readonly string[]).includes(n)), ...pendingDone])],
      states: statesOf(rows),
      headState: stateOf(values),
      nextAction,
      recoveries: { langgraph: crypto.createHash('sha256').update(recovered).digest('hex') },
    };
  } catch (e) {
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return { ...base, normalized: [], status: 'invalid', integrity: { ok: false, record: '?', message }, completedNodes: [], effectsDone: [], states: [], headState: null, nextAction: 'STUCK', recoveries: {} };
  }
}

/** The oldest loop checkpoint of the thread whose last completed node is `after`. */
function checkpointAfter(thread: string, after: string): string {
  const rows = rowsOf(currentSession().db, thread).checkpoints;
  for (const row of rows) {
    const md = parseBlob(row.type, row.metadata) as { source?: string };
    const cp = parseBlob(row.type, row.checkpoint) as { channel_values?: Record<string, unknown> };
    if (md?.source === 'loop' && lastVisited(cp?.channel_values) === after) return row.checkpoint_id;
  }
  throw new Error(`thread ${thread} has no checkpoint after node ${after}`);
}

async function fork(args: Record<string, unknown>) {
  const s = currentSession();
  const source = stringArg(args, 'sourceRunId');
  const thread = s.threadOf(source);
  const from = checkpointAfter(thread, stringArg(args, 'after'));
  try {
    // LangGraph's time travel: updating an older checkpoint writes a new checkpoint whose parent
    // is that one; the thread's next invocation continues from it.
    const forked = await s.app.updateState(runConfig(thread, from), {}, stringArg(args, 'after'));
    const checkpointId = String(forked.configurable?.checkpoint_id);
    return { outcome: 'forked', runId: `${thread}@${checkpointId}` };
  } catch (e) {
    return outcomeOfError(e);
  }
}

async function probeCorruption(args: Record<string, unknown>) {
  const s = currentSession();
  const thread = s.threadOf(stringArg(args, 'runId'));
  const pick = Number(args.pick ?? 0);
  const copyPath = `${s.storePath}.corrupt-${process.pid}.db`;
  fs.rmSync(copyPath, { force: true });
  s.db.exec(`VACUUM INTO '${copyPath.replaceAll("'", "''")}'`);
  const copy = new Database(copyPath);
  try {
    const candidates = rowsOf(copy, thread).checkpoints.filter((r) => r.checkpoint.includes('"amountCents":'));
    const target = candidates[pick % candidates.length];
    if (target === undefined) throw new Error(`thread ${thread} has no checkpoint to corrupt`);
    // A one-bit flip in a stored value: the low bit of amountCents's last digit. The JSON stays
    // well-formed, the case a store without record checksums cannot tell from a real value.
    const blob = Buffer.from(target.checkpoint);
    let at = blob.indexOf('"amountCents":') + '"amountCents":'.length;
    while (at + 1 < blob.length && (blob[at + 1] as number) >= 0x30 && (blob[at + 1] as number) <= 0x39) at++;
    blob[at] = (blob[at] as number) ^ 0x01;
    copy.prepare(`UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?`).run(blob, thread, target.checkpoint_id);
    const reader = buildGraph({ sink: currentSink, faults: new FaultSwitch() }, new SqliteSaver(copy));
    const corruptedRecord = `checkpoint:${target.checkpoint_id}`;
    try {
      for await (const _ of reader.getStateHistory(runConfig(thread))) void _;
      await reader.getState(runConfig(thread));
      return { detected: false, message: 'history and state loaded without an error', corruptedRunId: thread, corruptedRecord, reportedRunId: null, reportedRecord: null };
    } catch (e) {
      const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      return { detected: true, message, corruptedRunId: thread, corruptedRecord, reportedRunId: null, reportedRecord: null };
    }
  } finally {
    copy.close();
    fs.rmSync(copyPath, { force: true });
  }
}

async function probeInvalidState(args: Record<string, unknown>) {
  const runId = stringArg(args, 'runId');
  const input = RefundInputSchema.parse(args.input ?? invalidStateInput(runId));
  const outcome = await invoke(initialState(input), runId);
  return { outcome, view: await readStore(runId) };
}

async function probeDefinitionChange(args: Record<string, unknown>) {
  const s = currentSession();
  const runId = stringArg(args, 'runId');
  const input = RefundInputSchema.parse(args.input);
  const parked = await invoke(initialState(input), runId);
  if (parked.outcome !== 'parked') throw new Error(`definition-change probe: side run ${runId} did not park (${parked.outcome})`);
  // Version 2 of the workflow renames its last node; the parked run was started under version 1.
  const changed = buildGraph({ sink: currentSink, faults: new FaultSwitch() }, s.saver, 'notify_customer');
  let outcome;
  try {
    const result = await changed.invoke(new Command({ resume: { approved: true, note: 'v2' } }) as never, runConfig(runId));
    outcome = outcomeOfResult(result as Record<string, unknown>);
  } catch (e) {
    outcome = outcomeOfError(e);
  }
  return { change: 'node "notify" renamed to "notify_customer"', changedNode: 'notify', outcome };
}

function hello() {
  const points: Record<string, unknown> = {};
  for (const [name, support] of Object.entries(FAULT_POINTS_LANGGRAPH)) points[name] = support;
  const supported = (where: string) => ({ supported: true, where });
  return {
    protocol: 1,
    system: 'langgraph-js',
    variant: 'sqlite',
    versions: Object.fromEntries(
      ['@langchain/langgraph', '@langchain/langgraph-checkpoint-sqlite', '@langchain/langgraph-checkpoint', '@langchain/core', 'better-sqlite3'].map(
        (p) => [p, installedVersion(p)],
      ),
    ),
    points,
    faultKinds: {
      sigkill: supported('process.kill(process.pid, "SIGKILL") at the point'),
      throw: supported('an Error thrown at the point'),
      'store-error': supported('a better-sqlite3 SqliteError (SQLITE_IOERR) from the checkpointer before or after its write'),
    },
    concurrency: {
      'in-process': supported('k concurrent invoke(Command({resume})) calls on one compiled graph'),
      'recoverers-in-process': supported('continueMany: k concurrent invoke(null) calls on one compiled graph'),
      processes: supported('k processes, each with its own SqliteSaver on the same file'),
    },
    fork: supported('updateState on an older checkpoint (time travel); the fork lives in the same thread'),
  };
}

serve({
  hello: async () => hello(),
  open: async (args) => {
    sink?.close();
    session?.db.close();
    faults.arm(null);
    sink = new EffectSinkWriter(stringArg(args, 'sinkPath'));
    session = new Session(stringArg(args, 'storePath'));
    session.saver.ensureSetup();
    return {};
  },
  arm: async (args) => {
    faults.arm((args.fault ?? null) as ArmedFault | null);
    return {};
  },
  start: async (args) => invoke(initialState(RefundInputSchema.parse(args.input)), stringArg(args, 'runId')),
  resume: async (args) => invoke(new Command({ resume: args.value }), currentSession().threadOf(stringArg(args, 'runId'))),
  resumeMany: async (args) => {
    const thread = currentSession().threadOf(stringArg(args, 'runId'));
    const values = Array.isArray(args.values) ? args.values : [];
    return { outcomes: await Promise.all(values.map((value) => invoke(new Command({ resume: value }), thread))) };
  },
  continue: async (args) => invoke(null, currentSession().threadOf(stringArg(args, 'runId'))),
  continueMany: async (args) => {
    const thread = currentSession().threadOf(stringArg(args, 'runId'));
    const count = Number(args.count);
    if (!Number.isInteger(count) || count < 1 || count > 64) throw new Error(`continueMany: count must be 1..64, got ${String(args.count)}`);
    return { outcomes: await Promise.all(Array.from({ length: count }, () => invoke(null, thread))) };
  },
  continueFrom: async (args) => {
    const thread = currentSession().threadOf(stringArg(args, 'runId'));
    return invoke(null, thread, checkpointAfter(thread, stringArg(args, 'after')));
  },
  fork,
  readStore: async (args) => readStore(stringArg(args, 'runId')),
  probe: async (args) => {
    if (args.kind === 'corruption') return probeCorruption(args);
    if (args.kind === 'invalid-state') return probeInvalidState(args);
    if (args.kind === 'definition-change') return probeDefinitionChange(args);
    throw new Error(`unknown probe kind "${String(args.kind)}"`);
  },
});
