/**
 * A model of executions that produces record sequences (never recoveries): a small workflow node
 * table, a run that steps through it the way the sequencer would, and the environment's choices
 * (which route a node takes, snapshot or delta, fail, fork at a checkpoint, and for effects in log
 * format 2: claim an attempt, give it up, have it taken over). Crashes are prefixes of what this
 * produces (the comparison checks every prefix and byte cut); duplicate and late resumes are
 * admission requests (./requests.ts), which are refused and never recorded; concurrent recoverers
 * are the takeovers and the lost attempt appends (which leave no record).
 *
 * A run is written in log format 1 (as before format 2 existed) or 2, and a format-1 run may be
 * upgraded once (`upgrade`): a format-2 shell continuing a format-1 log. Written from
 * docs/log-format.md and docs/contract.md independently of the cores: it keeps its own small state
 * and never asks a core what to do next.
 */

import { concatBytes, encodeRecord, encodeRecordV2, chainOf } from 'remit/core';
import { RecordKind, type LogRecord } from 'remit/core';

export type ModelNodeKind = 'pure' | 'effect' | 'interrupt';

export interface ModelNode {
  name: string;
  kind: ModelNodeKind;
  /** Where the node may route; null ends the workflow. At least one entry. */
  routes: Array<string | null>;
}

export interface ModelWorkflow {
  name: string;
  version: string;
  nodes: ModelNode[];
  start: string;
  /** 'per-visit': a fresh effect key per node instance; 'per-node': one key reused (allowed). */
  keyScheme: 'per-visit' | 'per-node';
  /** Extra bytes in every state, to vary record sizes. */
  statePadBytes: number;
  /** The log format the run is started in (default 2); a format-1 run may be upgraded later. */
  startFormat?: 1 | 2;
}

type Stage = 'at' | 'intent' | 'attempted' | 'released' | 'done' | 'parked' | 'claimed' | 'ended' | 'completed' | 'failed';

/** The model's own view of a run after some records: enough to say what may come next. */
interface RunState {
  runId: string;
  stage: Stage;
  node: string;
  key: string;
  interruptId: string;
  visits: Record<string, number>;
  step: number;
  forkCount: number;
  /** The latest attempt of the current effect instance (0: none yet). */
  attempt: number;
  /** The format of the next record (1 until an upgrade, when the run started in format 1). */
  format: 1 | 2;
}

/** `upgrade`: switch the run to format 2 before this move (a format-2 shell continues a format-1 log). */
export type Move = (
  | { type: 'complete'; route: number; stateForm: 0 | 1 }
  | { type: 'intent' }
  | { type: 'attempt'; owner: string }
  | { type: 'release' }
  | { type: 'effect-done'; result: string }
  | { type: 'park'; id?: InterruptIdForm }
  | { type: 'claim'; value: string }
  | { type: 'finish' }
  | { type: 'fail'; namesNode: boolean }
  | { type: 'fork'; checkpointIndex: number }
) & { upgrade?: true };

/**
 * How a park names its interrupt id. 'canonical' (the default, what the shell writes):
 * `node@seq`, the park's own seq, a reserved id (docs/core-api.md, "Transitions"); 'free':
 * `run/node#visit`, not reserved (the rule of ids never parked twice); 'wrong-seq' and
 * 'wrong-node': a reserved id naming the park's node at another seq, or another node at its seq
 * (the recovery fails there: DUPLICATE_INTERRUPT).
 */
export type InterruptIdForm = 'canonical' | 'free' | 'wrong-seq' | 'wrong-node';

const te = new TextEncoder();
const bytes = (s: string) => te.encode(s);
const KIND_CODE: Record<ModelNodeKind, number> = { pure: 1, effect: 2, interrupt: 3 };

/** A log's bytes from its records and their formats (format 2 chained record to record). */
export function encodeFramed(records: readonly LogRecord[], versions: readonly number[]): Uint8Array {
  return concatBytes(encodeFramedParts(records, versions));
}

/** Each record's bytes, chained: format-2 records link to the chain value of the one before. */
export function encodeFramedParts(records: readonly LogRecord[], versions: readonly number[], prevChain = 0): Uint8Array[] {
  let chain = prevChain;
  return records.map((r, i) => {
    const bytes = versions[i] === 2 ? encodeRecordV2(r, chain) : encodeRecord(r);
    chain = chainOf(bytes);
    return bytes;
  });
}

/** One run being driven through the model; `states[i]` is the model state after record i. */
export class ModelExecution {
  readonly records: LogRecord[] = [];
  /** The format of each record, parallel to `records`. */
  readonly versions: number[] = [];
  private readonly states: RunState[] = [];
  /** Logs left behind by forks (the source log stays as it was), with their formats. */
  readonly abandonedLogs: Array<{ records: LogRecord[]; versions: number[] }> = [];
  /** The run's format after the last move (an upgrade with no record yet is remembered here). */
  private format: 1 | 2;

  constructor(readonly workflow: ModelWorkflow, runId = 'run-0') {
    this.format = workflow.startFormat ?? 2;
    const state: RunState = {
      runId, stage: 'at', node: workflow.start, key: '', interruptId: '', visits: { [workflow.start]: 1 }, step: 0, forkCount: 0,
      attempt: 0, format: this.format,
    };
    this.push(this.runStarted(state), state);
  }

  /** An independent copy (records and states are immutable values, so sharing them is safe). */
  clone(): ModelExecution {
    const copy = Object.create(ModelExecution.prototype) as ModelExecution;
    Object.assign(copy, {
      workflow: this.workflow, records: this.records.slice(), versions: this.versions.slice(), states: this.states.slice(),
      abandonedLogs: this.abandonedLogs.slice(), format: this.format,
    });
    return copy;
  }

  /** The format the next record is written in. */
  get nextFormat(): 1 | 2 {
    return this.format;
  }

  get state(): RunState {
    return this.states[this.states.length - 1]!;
  }

  private node(name: string): ModelNode {
    const node = this.workflow.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`model: workflow has no node ${name}`);
    return node;
  }

  private stateBytes(step: number): Uint8Array {
    return bytes(JSON.stringify({ step, pad: 'x'.repeat(this.workflow.statePadBytes) }));
  }

  private runStarted(s: RunState): LogRecord {
    const wf = this.workflow;
    return {
      kind: RecordKind.RUN_STARTED, seq: 0, runId: bytes(s.runId), workflow: bytes(wf.name), version: bytes(wf.version),
      fingerprint: bytes(`fp:${wf.name}:${wf.version}`), definition: bytes(JSON.stringify(wf.nodes)),
      nodes: wf.nodes.map((n) => ({ name: bytes(n.name), kind: KIND_CODE[n.kind] })), startNode: bytes(wf.start),
      state: this.stateBytes(0),
    };
  }

  private push(record: LogRecord, state: RunState): void {
    this.records.push({ ...record, seq: this.records.length } as LogRecord);
    this.versions.push(this.format);
    this.states.push({ ...state, format: this.format });
  }

  private isCheckpoint(r: LogRecord): boolean {
    return r.kind === RecordKind.RUN_STARTED || r.kind === RecordKind.NODE_COMPLETED;
  }

  checkpointIndices(): number[] {
    const out: number[] = [];
    this.records.forEach((r, i) => this.isCheckpoint(r) && out.push(i));
    return out;
  }

  /** Whether the last record is a checkpoint (a fork of the head is possible). */
  headIsCheckpoint(): boolean {
    return this.isCheckpoint(this.records[this.records.length - 1]!);
  }

  /** What the sequencer may do next, in a fixed order (fork and fail excluded). */
  stepMoves(): Move[] {
    const s = this.state;
    switch (s.stage) {
      case 'at': {
        const kind = this.node(s.node).kind;
        if (kind === 'effect') return [{ type: 'intent' }];
        if (kind === 'interrupt') return [{ type: 'park' }];
        return this.completeMoves(s.node);
      }
      // Format 1 completes straight after the intent; format 2 claims an attempt first (the fence).
      case 'intent': return this.format === 1 ? [{ type: 'effect-done', result: '{"ok":true}' }] : [{ type: 'attempt', owner: 'a' }];
      // An attempt: its outcome, its owner giving it up (the handler threw), or a takeover.
      case 'attempted': return [{ type: 'effect-done', result: '{"ok":true}' }, { type: 'release' }, { type: 'attempt', owner: 'b' }];
      case 'released': return [{ type: 'attempt', owner: 'a' }];
      case 'done': case 'claimed': return this.completeMoves(s.node);
      case 'parked': return [{ type: 'claim', value: '{"approved":true}' }];
      case 'ended': return [{ type: 'finish' }];
      default: return [];
    }
  }

  private completeMoves(node: string): Move[] {
    const moves: Move[] = [];
    this.node(node).routes.forEach((_, route) => {
      moves.push({ type: 'complete', route, stateForm: 0 }, { type: 'complete', route, stateForm: 1 });
    });
    return moves;
  }

  /** Switch to format 2 for the records that follow (no record is written for it). */
  upgradeFormat(): void {
    this.format = 2;
  }

  canFail(): boolean {
    return this.state.stage !== 'completed' && this.state.stage !== 'failed';
  }

  apply(move: Move): void {
    if (move.upgrade) this.format = 2;
    const s: RunState = { ...this.state, visits: { ...this.state.visits } };
    const seq = this.records.length;
    switch (move.type) {
      case 'complete': {
        const next = this.node(s.node).routes[move.route] ?? null;
        s.step += 1;
        const record: LogRecord = {
          kind: RecordKind.NODE_COMPLETED, seq, node: bytes(s.node), next: bytes(next ?? ''), stateForm: move.stateForm,
          state: move.stateForm === 0 ? this.stateBytes(s.step) : bytes(JSON.stringify({ set: { step: s.step } })),
        };
        if (next === null) {
          s.stage = 'ended';
        } else {
          s.stage = 'at';
          s.node = next;
          s.visits[next] = (s.visits[next] ?? 0) + 1;
        }
        return this.push(record, s);
      }
      case 'intent':
        s.stage = 'intent';
        s.attempt = 0;
        s.key = this.workflow.keyScheme === 'per-node' ? `key:${s.node}` : `${s.runId}/${s.node}#${s.visits[s.node]}`;
        return this.push({ kind: RecordKind.EFFECT_INTENT, seq, node: bytes(s.node), key: bytes(s.key) }, s);
      case 'attempt':
        s.stage = 'attempted';
        s.attempt += 1;
        return this.push({
          kind: RecordKind.EFFECT_ATTEMPT, seq, node: bytes(s.node), key: bytes(s.key), attempt: s.attempt,
          lease: bytes(JSON.stringify({ owner: move.owner, leaseUntilMs: 1_000 * s.attempt })),
        }, s);
      case 'release':
        s.stage = 'released';
        return this.push({
          kind: RecordKind.EFFECT_RELEASED, seq, node: bytes(s.node), key: bytes(s.key), attempt: s.attempt, reason: bytes('{"error":"thrown"}'),
        }, s);
      case 'effect-done':
        s.stage = 'done';
        return this.push({ kind: RecordKind.EFFECT_DONE, seq, node: bytes(s.node), key: bytes(s.key), result: bytes(move.result) }, s);
      case 'park':
        s.stage = 'parked';
        s.interruptId = this.interruptId(move.id ?? 'canonical', s, seq);
        return this.push({ kind: RecordKind.INTERRUPT_PARKED, seq, node: bytes(s.node), interruptId: bytes(s.interruptId) }, s);
      case 'claim':
        s.stage = 'claimed';
        return this.push({ kind: RecordKind.RESUME_CLAIMED, seq, interruptId: bytes(s.interruptId), value: bytes(move.value) }, s);
      case 'finish':
        s.stage = 'completed';
        return this.push({ kind: RecordKind.RUN_COMPLETED, seq }, s);
      case 'fail': {
        const node = move.namesNode && s.stage !== 'ended' ? s.node : '';
        s.stage = 'failed';
        return this.push({ kind: RecordKind.RUN_FAILED, seq, node: bytes(node), code: bytes('E_THROWN'), message: bytes(`failed at ${seq}`) }, s);
      }
      case 'fork':
        return this.fork(move.checkpointIndex);
    }
  }

  /** The id a park at `seq` writes, in the form asked. */
  private interruptId(form: InterruptIdForm, s: RunState, seq: number): string {
    switch (form) {
      case 'canonical': return `${s.node}@${seq}`;
      case 'free': return `${s.runId}/${s.node}#${s.visits[s.node]}`;
      // The seq of the record before (another park's seq after a loop, or a claim's) or after.
      case 'wrong-seq': return `${s.node}@${seq % 2 === 0 ? seq + 1 : seq - 1}`;
      case 'wrong-node': {
        const other = this.workflow.nodes.find((n) => n.name !== s.node)?.name ?? `${s.node}x`;
        return `${other}@${seq}`;
      }
    }
  }

  /** fork(run, checkpoint, intent): copy the prefix up to the checkpoint, then a FORKED record. */
  private fork(checkpoint: number): void {
    const source = this.state;
    this.abandonedLogs.push({ records: this.records.slice(), versions: this.versions.slice() });
    this.records.length = checkpoint + 1;
    this.versions.length = checkpoint + 1;
    this.states.length = checkpoint + 1;
    const s: RunState = { ...this.state, visits: { ...this.state.visits } };
    s.forkCount = source.forkCount + 1;
    s.runId = `${source.runId}~f${s.forkCount}`;
    this.push({
      kind: RecordKind.FORKED, seq: checkpoint + 1, sourceRunId: bytes(source.runId), sourceSeq: checkpoint,
      runId: bytes(s.runId), intent: bytes(JSON.stringify({ reason: 'retry', from: checkpoint })),
    }, s);
  }

  /** Every log this execution produced: the abandoned fork sources and the current log. */
  logs(): Uint8Array[] {
    return [...this.abandonedLogs.map((l) => encodeFramed(l.records, l.versions)), encodeFramed(this.records, this.versions)];
  }

  /** Each record of the current log, encoded and chained. */
  encodedParts(): Uint8Array[] {
    return encodeFramedParts(this.records, this.versions);
  }
}

/**
 * The id form of a park, from the bits of its choice above the four that pick the move: canonical
 * 11 times in 16, free 3 times, a wrong seq or a wrong node once each (canonical instead when
 * `brokenIds` is false).
 */
export function parkIdForm(c: number, brokenIds = true): InterruptIdForm {
  const r = (c >>> 4) % 16;
  if (r >= 14 && !brokenIds) return 'canonical';
  return r < 11 ? 'canonical' : r < 14 ? 'free' : r === 14 ? 'wrong-seq' : 'wrong-node';
}

/**
 * Drive a run by a list of choices (what fast-check generates and shrinks). Most choices pick a
 * sequencer step (a park also its id form: `parkIdForm`; `brokenIds: false` keeps to the ids a
 * valid execution writes); one in 16 picks a failure, a fork of some checkpoint, or (a format-1
 * run) an upgrade to format 2 before the next step instead.
 */
export function runChoices(workflow: ModelWorkflow, choices: readonly number[], options: { brokenIds?: boolean } = {}): ModelExecution {
  const ex = new ModelExecution(workflow);
  for (const c of choices) {
    const steps = ex.stepMoves();
    if (steps.length === 0 && c % 4 !== 0) break; // a finished run mostly stays finished
    const rare = c % 16 === 15 || steps.length === 0;
    if (!rare) {
      const move = steps[c % steps.length]!;
      ex.apply(move.type === 'park' ? { ...move, id: parkIdForm(c, options.brokenIds) } : move);
      continue;
    }
    const checkpoints = ex.checkpointIndices();
    const pick = (c >>> 4) % 3;
    if (pick === 2 && ex.nextFormat === 1) ex.upgradeFormat();
    else if (pick === 0 && ex.canFail()) ex.apply({ type: 'fail', namesNode: (c >>> 5) % 2 === 0 });
    else ex.apply({ type: 'fork', checkpointIndex: checkpoints[(c >>> 6) % checkpoints.length]! });
  }
  return ex;
}

/**
 * Every move available now, for exhaustive enumeration (forks only of the head: see enumerate.ts).
 * A format-1 run also gets each move with an upgrade to format 2 first.
 */
export function allMoves(ex: ModelExecution, options: { upgrades?: boolean } = {}): Move[] {
  const moves = ex.stepMoves();
  if (ex.canFail()) moves.push({ type: 'fail', namesNode: true });
  if (ex.headIsCheckpoint()) {
    moves.push({ type: 'fork', checkpointIndex: ex.records.length - 1 });
  }
  if (ex.nextFormat === 1 && options.upgrades !== false) {
    // After an upgrade the intent stage claims an attempt instead of completing directly.
    const upgraded = ex.clone();
    upgraded.upgradeFormat();
    moves.push(...[...upgraded.stepMoves(), ...moves.filter((m) => m.type === 'fail' || m.type === 'fork')]
      .map((m) => ({ ...m, upgrade: true as const })));
  }
  return moves;
}

/** The small fixed workflow of the enumerator and the fixtures: pure, effect, interrupt, a loop. */
export const SMALL_WORKFLOW: ModelWorkflow = {
  name: 'order',
  version: '1',
  nodes: [
    { name: 'prepare', kind: 'pure', routes: ['charge'] },
    { name: 'charge', kind: 'effect', routes: ['approve'] },
    { name: 'approve', kind: 'interrupt', routes: [null, 'prepare'] },
  ],
  start: 'prepare',
  keyScheme: 'per-visit',
  statePadBytes: 4,
  startFormat: 2,
};

/** SMALL_WORKFLOW started in log format 1 (its runs may be upgraded to format 2). */
export const SMALL_WORKFLOW_V1: ModelWorkflow = { ...SMALL_WORKFLOW, startFormat: 1 };
