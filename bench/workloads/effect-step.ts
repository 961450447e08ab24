/**
 * The cost of the invocation fence on an effect step (commit suite): REMIT's effect step as it is
 * now, and the effect step of the sequencer before the fence, side by side in one run.
 *
 * The sequencer before the fence no longer exists in the library, so its effect step is replayed
 * here at the level it worked at, with the same store and core calls in the same order, in log
 * format 1: recover the log; append EFFECT_INTENT; recover again (the next loop turn, INVOKE_EFFECT);
 * read the store once more (the check that no other sequencer moved on); call the handler; append
 * EFFECT_DONE + NODE_COMPLETED. The fenced step is replayed the same way, so the two differ only by
 * the fence: recover; append EFFECT_INTENT + EFFECT_ATTEMPT (one append, format 2); call the
 * handler; append EFFECT_DONE + NODE_COMPLETED. REMIT itself (the public API, the whole sequencer)
 * runs beside them.
 *
 * Contention: k sequencers recover a run whose log ends with the intent (and, fenced, attempt 1 of
 * a dead sequencer whose lease has expired) at once, each on its own store connection. Before the
 * fence each one calls the handler and one of them records the result; with it each one appends a
 * claim of attempt 2 and only the winner calls the handler.
 */

import { z } from 'zod';
import { createRemit, END, openSqliteStore, workflow, type Remit, type SequencerHooks, type Store } from 'remit';
import { chainOf, encodeRecord, encodeRecordV2, RecordKind, type LogRecord, type RecoveryCore } from 'remit/core';
import { remitCore } from './remit.js';

export type EffectPath = 'previous' | 'fenced';

const te = new TextEncoder();
const NODE = te.encode('send');
const RESULT = te.encode('{"ok":true}');

function state(i: number): Uint8Array {
  return te.encode(JSON.stringify({ i, note: 'x'.repeat(60) }));
}

function runStarted(runId: string): LogRecord {
  return {
    kind: RecordKind.RUN_STARTED, seq: 0, runId: te.encode(runId), workflow: te.encode('bench-effects'), version: te.encode('1'),
    fingerprint: new Uint8Array(32), definition: te.encode('{}'), nodes: [{ name: NODE, kind: 2 }], startNode: NODE, state: state(0),
  };
}

/** The handler: what the outside call costs is not what this measures, so it does nothing. */
let handlerCalls = 0;
async function handler(): Promise<Uint8Array> {
  handlerCalls++;
  return RESULT;
}

export function takeHandlerCalls(): number {
  const n = handlerCalls;
  handlerCalls = 0;
  return n;
}

/** A replayed sequencer: its log in memory (as the session keeps it), appends through a Store. */
class Replayed {
  private parts: Uint8Array[] = [];
  private length = 0;

  constructor(private readonly store: Store, private readonly core: RecoveryCore, readonly runId: string, readonly path: EffectPath) {}

  private get log(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    this.parts = [out];
    return out;
  }

  /** The next record's chain value (format 2) is the last four bytes of the log. */
  private encode(records: LogRecord[]): Uint8Array[] {
    if (this.path === 'previous') return records.map((r) => encodeRecord(r));
    let chain = this.length === 0 ? 0 : chainOf(this.log);
    return records.map((r) => {
      const bytes = encodeRecordV2(r, chain);
      chain = chainOf(bytes);
      return bytes;
    });
  }

  async append(seq: number, records: LogRecord[]): Promise<boolean> {
    const encoded = this.encode(records);
    const outcome = await this.store.append(this.runId, seq, encoded);
    if (!outcome.committed) return false;
    for (const e of encoded) {
      this.parts.push(e);
      this.length += e.length;
    }
    return true;
  }

  async load(): Promise<void> {
    const bytes = await this.store.readLog(this.runId);
    this.parts = [bytes];
    this.length = bytes.length;
  }

  recover(): { recordCount: number; tag: string } {
    const r = this.core.recover(this.log);
    if (!r.ok) throw new Error(`replayed log does not recover: error ${r.code} at seq ${r.seq}`);
    return { recordCount: r.recordCount, tag: r.action.tag };
  }

  /** One effect step of the chosen path at seq `seq`, ending at `next` ('' = the end). */
  async effectStep(i: number, last: boolean): Promise<void> {
    const at = this.recover();
    if (at.tag !== 'BEGIN_EFFECT') throw new Error(`expected BEGIN_EFFECT, the core says ${at.tag}`);
    const seq = at.recordCount;
    const key = te.encode(`${this.runId}/send/${seq}`);
    const intent: LogRecord = { kind: RecordKind.EFFECT_INTENT, seq, node: NODE, key };
    let doneSeq: number;
    if (this.path === 'previous') {
      if (!(await this.append(seq, [intent]))) throw new Error('lost the intent append');
      if (this.recover().tag !== 'INVOKE_EFFECT') throw new Error('expected INVOKE_EFFECT');
      if ((await this.store.readRecords(this.runId, seq + 1)).length > 0) throw new Error('another sequencer moved on');
      doneSeq = seq + 1;
    } else {
      const attempt: LogRecord = {
        kind: RecordKind.EFFECT_ATTEMPT, seq: seq + 1, node: NODE, key, attempt: 1,
        lease: te.encode(JSON.stringify({ owner: 'bench', leaseUntilMs: Date.now() + 30_000 })),
      };
      if (!(await this.append(seq, [intent, attempt]))) throw new Error('lost the intent append');
      doneSeq = seq + 2;
    }
    const result = await handler();
    const records: LogRecord[] = [
      { kind: RecordKind.EFFECT_DONE, seq: doneSeq, node: NODE, key, result },
      { kind: RecordKind.NODE_COMPLETED, seq: doneSeq + 1, node: NODE, next: last ? new Uint8Array() : NODE, stateForm: 0, state: state(i + 1) },
    ];
    if (last) records.push({ kind: RecordKind.RUN_COMPLETED, seq: doneSeq + 2 });
    if (!(await this.append(doneSeq, records))) throw new Error('lost the completion append');
  }
}

/** A run of `steps` effect steps replayed on `store` (one new run id per call). */
export async function replayedEffectRun(store: Store, runId: string, steps: number, path: EffectPath): Promise<void> {
  const { core } = await remitCore();
  const r = new Replayed(store, core, runId, path);
  if (!(await r.append(0, [runStarted(runId)]))) throw new Error('run exists');
  for (let i = 0; i < steps; i++) await r.effectStep(i, i === steps - 1);
}

// ------------------------------------------------------------------ REMIT itself

const EffectState = z.object({ i: z.number().int(), note: z.string() });

/** REMIT: a run of `steps` effect steps (one effect node looping). */
export function effectWorkflow(steps: number) {
  return workflow({ name: `bench-effects-${steps}`, version: '1', state: EffectState })
    .effect('send', {
      run: async () => {
        handlerCalls++;
        return { ok: true };
      },
      apply: (s) => ({ i: s.i + 1 }),
      next: (s) => (s.i < steps ? 'send' : END),
    })
    .build();
}

export async function remitEffectRun(remit: Remit, wf: ReturnType<typeof effectWorkflow>, runId: string): Promise<void> {
  const run = await remit.start(wf, { i: 0, note: 'x'.repeat(60) }, { runId });
  if (run.status !== 'completed') throw new Error(`REMIT effect run ended ${run.status}`);
}

export async function remitOpenEffects(
  file: string, steps: number, synchronous: 'FULL' | 'NORMAL', fence: { instanceId?: string; effectLeaseMs?: number } = {}, hooks?: SequencerHooks,
) {
  const { core } = await remitCore();
  const wf = effectWorkflow(steps);
  const remit = await createRemit({ store: openSqliteStore(file, { synchronous }), workflows: [wf], core, ...fence, ...(hooks ? { hooks } : {}) });
  return { remit, wf };
}

// ------------------------------------------------------------------ contention

/**
 * Prepare a run whose log ends with the intent of its one effect step (the previous path) or with
 * the intent and attempt 1 of a dead sequencer whose lease has expired (fenced).
 */
export async function prepareCrashedRun(store: Store, runId: string, path: EffectPath): Promise<void> {
  const { core } = await remitCore();
  const r = new Replayed(store, core, runId, path);
  if (!(await r.append(0, [runStarted(runId)]))) throw new Error('run exists');
  const key = te.encode(`${runId}/send/1`);
  const records: LogRecord[] = [{ kind: RecordKind.EFFECT_INTENT, seq: 1, node: NODE, key }];
  if (path === 'fenced') {
    records.push({ kind: RecordKind.EFFECT_ATTEMPT, seq: 2, node: NODE, key, attempt: 1, lease: te.encode('{"owner":"dead","leaseUntilMs":0}') });
  }
  if (!(await r.append(1, records))) throw new Error('prepare failed');
}

/** One replayed recoverer: recover, decide as the path does, act; false when it lost a race. */
async function replayedRecoverer(store: Store, runId: string, path: EffectPath): Promise<boolean> {
  const { core } = await remitCore();
  const r = new Replayed(store, core, runId, path);
  await r.load();
  const at = r.recover();
  const key = te.encode(`${runId}/send/1`);
  let doneSeq = at.recordCount;
  if (path === 'previous') {
    if (at.tag !== 'INVOKE_EFFECT') return false;
    if ((await store.readRecords(runId, at.recordCount)).length > 0) return false;
  } else {
    if (at.tag !== 'AWAIT_ATTEMPT') return false;
    const claim: LogRecord = {
      kind: RecordKind.EFFECT_ATTEMPT, seq: at.recordCount, node: NODE, key, attempt: 2,
      lease: te.encode(JSON.stringify({ owner: 'recoverer', leaseUntilMs: Date.now() + 30_000 })),
    };
    if (!(await r.append(at.recordCount, [claim]))) return false;
    doneSeq = at.recordCount + 1;
  }
  const result = await handler();
  return r.append(doneSeq, [
    { kind: RecordKind.EFFECT_DONE, seq: doneSeq, node: NODE, key, result },
    { kind: RecordKind.NODE_COMPLETED, seq: doneSeq + 1, node: NODE, next: new Uint8Array(), stateForm: 0, state: state(1) },
    { kind: RecordKind.RUN_COMPLETED, seq: doneSeq + 2 },
  ]);
}

/** k replayed recoverers at once, each on its own store; resolves when all have settled. */
export async function replayedRecoverers(stores: Store[], runId: string, path: EffectPath): Promise<number> {
  const won = await Promise.all(stores.map((s) => replayedRecoverer(s, runId, path).catch(() => false)));
  return won.filter(Boolean).length;
}

/** REMIT: k Remit instances (own ids, own connections) continue a run crashed after attempt 1 at once. */
export async function remitRecoverers(remits: Remit[], runId: string): Promise<number> {
  const outcomes = await Promise.allSettled(remits.map((r) => r.continueRun(runId)));
  return outcomes.filter((o) => o.status === 'fulfilled').length;
}

/** REMIT: start a one-effect run and stop it right after its intent and attempt 1 are durable. */
export async function remitCrashAfterIntent(file: string, runId: string, synchronous: 'FULL' | 'NORMAL'): Promise<void> {
  const stop: SequencerHooks = {
    at(point, info) {
      if (point === 'append.after' && info.kinds?.includes('EFFECT_INTENT')) throw new Error('crash');
    },
  };
  const { remit, wf } = await remitOpenEffects(file, 1, synchronous, { instanceId: `dead-${runId}`, effectLeaseMs: 1 }, stop);
  await remit.start(wf, { i: 0, note: 'x'.repeat(60) }, { runId }).then(
    () => { throw new Error('the crash did not happen'); },
    (e: Error) => { if (e.message !== 'crash') throw e; },
  );
  await remit.close();
  // The dead sequencer's lease (1 ms) has expired by the time anyone reads it.
  await new Promise((resolve) => setTimeout(resolve, 2));
}
