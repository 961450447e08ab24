/**
 * The third implementation: the functions proved in proofs/coq (recover, next action, admit),
 * extracted to OCaml and compiled to JavaScript by proofs/extract/build.sh, compared with a core.
 *
 * The bridge has two halves, both plain conversions (no rule of recovery or admission is there; the
 * one rule added to the model's answers is below):
 *  - log bytes -> the model's records: the shipped codec (`decodeLog`) decodes framing and
 *    payloads; names are interned as naturals in order of first appearance, one numbering per
 *    namespace (node names, keys, interrupt ids, run ids, payloads); a FORK_AT or CONTINUE_FROM seq
 *    past the log is sent as the log's length + 1 (Admission.admit_seq_beyond: the same answer);
 *    a format-2 EFFECT_DONE is the
 *    model's EffectDoneFenced, a format-1 one EffectDone; the first framing or payload error
 *    (BAD_HEADER ... MALFORMED_PAYLOAD, BAD_LINK) becomes the model's `Corrupt` record after the
 *    records before it; a torn tail is dropped (it is not durable, and not a record).
 *  - a core's result -> the comparable parts, in the same naturals: status, record count, next
 *    action (tag, node, key, seqs, attempt; no offsets), run id, checkpoint and snapshot seqs,
 *    effect tallies (status, completions), parked and claimed counts, lineage, failure; for an
 *    error, its code and seq; for an admission, verdict, reason, detail and seq (no offsets).
 *
 * One rule of recovery is added on top of the model, because the model lacks it: its interrupt ids
 * are abstract numbers, so it cannot read an id as `name@seq` (a reserved id, docs/core-api.md,
 * "Transitions": only node `name` may park it, at seq `seq`). The bridge finds the first
 * INTERRUPT_PARKED whose reserved id names another node or seq (`reservedViolation`); where the
 * model's recovery gets past that record (recovers, or fails later), the expected answer is
 * DUPLICATE_INTERRUPT at that record and LOG_INVALID (detail DUPLICATE_INTERRUPT, that seq) for
 * every admission; where it fails at or before it, the model's answer stands. Everything else is
 * the model's (`OracleStats.reservedRule` counts the answers the rule changed).
 *
 * What the model does not represent is compared between the two cores only (equivalence/README.md,
 * "The extracted model"). Inputs it cannot represent are not sent and are counted
 * (`OracleStats.unrepresentable`): a node-table kind byte other than 1..3, an attempt number or a
 * FORKED source seq above MAX_EXACT (Peano naturals: exact, but linear in size), a malformed
 * request (BAD_REQUEST: the model's requests are well-typed).
 */

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import {
  decodeAdmission, decodeLog, decodeRecovery, FORMAT_VERSION_2, LogErrorCode, NONE32, parseAdmissionRequest, RecordKind, RefusalReason, RunStatus,
  type LogRecord, type Recovery,
} from 'remit/core';
import type { Divergence } from './compare.js';
import { breaksReservedRule } from './reserved.js';

export const EXTRACT_DIR = fileURLToPath(new URL('../proofs/extract/', import.meta.url));
export const MODEL_MODULE = `${EXTRACT_DIR}build/remit-model.cjs`;

/** Largest number sent to the model as a Peano natural (names are interned, so only attempts and request seqs can be larger). */
export const MAX_EXACT = 4096;

/** The extracted module's interface (proofs/extract/oracle.ml). */
export interface ExtractedModel {
  recover(log: string): string;
  admit(log: string, tag: number, arg: number): string;
}

/**
 * Load the extracted model; build it first when build/ is missing or stale (build.sh --check).
 * Throws when it cannot be built: a test that needs the oracle fails, it never skips.
 */
export function loadExtractedModel(options: { build?: boolean } = {}): ExtractedModel {
  const script = `${EXTRACT_DIR}build.sh`;
  if (options.build !== false) {
    let fresh = false;
    try {
      execFileSync('bash', [script, '--check'], { stdio: 'pipe' });
      fresh = true;
    } catch {
      fresh = false;
    }
    if (!fresh) execFileSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  }
  if (!existsSync(MODEL_MODULE)) throw new Error(`the extracted model is not built: run bash proofs/extract/build.sh (${MODEL_MODULE})`);
  const loaded = createRequire(import.meta.url)(MODEL_MODULE) as { remitModel?: ExtractedModel };
  if (typeof loaded.remitModel?.recover !== 'function') throw new Error(`${MODEL_MODULE} does not export remitModel.recover`);
  return loaded.remitModel;
}

// ------------------------------------------------------------------ log bytes -> model records

const hexOf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');

/** Naturals for byte strings, in order of first appearance; one instance per namespace. */
class Interner {
  private readonly ids = new Map<string, number>();
  id(bytes: Uint8Array): number {
    const k = hexOf(bytes);
    let v = this.ids.get(k);
    if (v === undefined) this.ids.set(k, (v = this.ids.size));
    return v;
  }
}

export class Names {
  readonly node = new Interner();
  readonly key = new Interner();
  readonly interrupt = new Interner();
  readonly run = new Interner();
  readonly payload = new Interner();
}

/** Tags of proofs/extract/oracle.ml's input: one per model record constructor. */
const Tag = {
  RUN_STARTED: 1, NODE_COMPLETED: 2, EFFECT_INTENT: 3, EFFECT_DONE: 4, INTERRUPT_PARKED: 5, RESUME_CLAIMED: 6,
  FORKED: 7, RUN_COMPLETED: 8, RUN_FAILED: 9, EFFECT_ATTEMPT: 10, EFFECT_RELEASED: 11, EFFECT_DONE_FENCED: 12, CORRUPT: 13,
} as const;

/** Framing and payload errors: the model's `Corrupt` constructor (frame_error in Log.v). */
const FRAME_ERRORS = new Set([1, 2, 3, 4, 5, 6, 7, 12]);

export interface BridgedLog {
  /** The model's input: record count, then each record's tag and fields. */
  text: string;
  records: number;
  names: Names;
  /** Why the log cannot be sent, or null. */
  unrepresentable: string | null;
  /** The seq of the first INTERRUPT_PARKED whose reserved id names another node or seq, or null. */
  reservedViolation: number | null;
}

/** Whether record `seq` (an INTERRUPT_PARKED) breaks the reserved-id rule: its id is reserved and names another node or seq. */
function parkBreaksReservedRule(r: LogRecord, seq: number): boolean {
  return r.kind === RecordKind.INTERRUPT_PARKED && breaksReservedRule(r.node, r.interruptId, seq);
}

function recordNumbers(r: LogRecord, version: number, n: Names): number[] | string {
  const opt = (b: Uint8Array, ns: Interner) => (b.length === 0 ? [0, 0] : [1, ns.id(b)]);
  switch (r.kind) {
    case RecordKind.RUN_STARTED: {
      const table: number[] = [];
      for (const e of r.nodes) {
        if (e.kind < 1 || e.kind > 3) return `node-table kind byte ${e.kind}`;
        table.push(n.node.id(e.name), e.kind);
      }
      return [Tag.RUN_STARTED, n.run.id(r.runId), r.nodes.length, ...table, n.node.id(r.startNode), n.payload.id(r.state)];
    }
    case RecordKind.NODE_COMPLETED:
      return [Tag.NODE_COMPLETED, n.node.id(r.node), ...opt(r.next, n.node), r.stateForm === 0 ? 0 : 1, n.payload.id(r.state)];
    case RecordKind.EFFECT_INTENT:
      return [Tag.EFFECT_INTENT, n.node.id(r.node), n.key.id(r.key)];
    case RecordKind.EFFECT_DONE:
      return [version === FORMAT_VERSION_2 ? Tag.EFFECT_DONE_FENCED : Tag.EFFECT_DONE, n.node.id(r.node), n.key.id(r.key), n.payload.id(r.result)];
    case RecordKind.INTERRUPT_PARKED:
      return [Tag.INTERRUPT_PARKED, n.node.id(r.node), n.interrupt.id(r.interruptId)];
    case RecordKind.RESUME_CLAIMED:
      return [Tag.RESUME_CLAIMED, n.interrupt.id(r.interruptId), n.payload.id(r.value)];
    case RecordKind.FORKED:
      if (r.sourceSeq > MAX_EXACT) return `FORKED source seq ${r.sourceSeq}`;
      return [Tag.FORKED, n.run.id(r.sourceRunId), r.sourceSeq, n.run.id(r.runId), n.payload.id(r.intent)];
    case RecordKind.RUN_COMPLETED:
      return [Tag.RUN_COMPLETED];
    case RecordKind.RUN_FAILED:
      return [Tag.RUN_FAILED, ...opt(r.node, n.node), n.payload.id(r.code), n.payload.id(r.message)];
    case RecordKind.EFFECT_ATTEMPT:
    case RecordKind.EFFECT_RELEASED:
      if (r.attempt > MAX_EXACT) return `attempt ${r.attempt}`;
      return [r.kind === RecordKind.EFFECT_ATTEMPT ? Tag.EFFECT_ATTEMPT : Tag.EFFECT_RELEASED, n.node.id(r.node), n.key.id(r.key), r.attempt];
  }
}

/** Decode `log` with the shipped codec and write it as the model's records. */
export function bridgeLog(log: Uint8Array): BridgedLog {
  const names = new Names();
  const decoded = decodeLog(log);
  const parts: number[] = [];
  let records = 0;
  let reservedViolation: number | null = null;
  for (let i = 0; i < decoded.records.length; i++) {
    const record = decoded.records[i]!;
    const nums = recordNumbers(record, decoded.versions[i]!, names);
    if (typeof nums === 'string') return { text: '', records, names, unrepresentable: nums, reservedViolation: null };
    // The codec stops at a wrong stored seq (BAD_SEQ), so record i has seq i.
    if (reservedViolation === null && parkBreaksReservedRule(record, i)) reservedViolation = i;
    parts.push(...nums);
    records++;
  }
  if (decoded.error) {
    if (!FRAME_ERRORS.has(decoded.error.code)) throw new Error(`the codec reported ${decoded.error.code}, not a framing error`);
    parts.push(Tag.CORRUPT, decoded.error.code);
    records++;
  }
  return { text: `${records} ${parts.join(' ')}`, records, names, unrepresentable: null, reservedViolation };
}

// ------------------------------------------------------------------ results -> comparable parts

/** The parts of a recovery both the model and a core report, in the model's naturals. */
export type ComparableRecovery =
  | { ok: false; code: number; seq: number }
  | {
      ok: true; count: number; status: number; action: number[]; run: number; checkpoint: number; snapshot: number;
      effects: number[][]; parked: number; claimed: number; lineage: number[][]; failure: number[] | null;
    };

export interface ComparableAdmission {
  accepted: boolean;
  reason: number;
  detail: number;
  seq: number;
}

/** The model's recovery JSON (oracle.ml), as the comparable parts (claims become their count). */
export function modelRecovery(json: string): ComparableRecovery {
  const m = JSON.parse(json) as Record<string, unknown>;
  if ('input_error' in m) throw new Error(`the extracted model refused its input: ${String(m['input_error'])}`);
  if (m['ok'] === false) return { ok: false, code: m['code'] as number, seq: m['seq'] as number };
  const r = m as Omit<Extract<ComparableRecovery, { ok: true }>, 'claimed'> & { claimed: number[][] };
  // Same keys in the same order as coreRecovery: the two are compared as JSON text.
  return {
    ok: true, count: r.count, status: r.status, action: r.action, run: r.run, checkpoint: r.checkpoint, snapshot: r.snapshot,
    effects: r.effects, parked: r.parked, claimed: r.claimed.length, lineage: r.lineage, failure: r.failure,
  };
}

/** A core's recovery, as the comparable parts. Offsets, lengths, torn tails and byte payloads are left out. */
export function coreRecovery(r: Recovery, n: Names): ComparableRecovery {
  if (!r.ok) return { ok: false, code: r.code, seq: r.seq };
  const a = r.action;
  let action: number[];
  switch (a.tag) {
    case 'NONE': action = [0]; break;
    case 'RUN_PURE': action = [1, n.node.id(a.node)]; break;
    case 'BEGIN_EFFECT': action = [2, n.node.id(a.node)]; break;
    case 'INVOKE_EFFECT': action = [3, n.node.id(a.node), n.key.id(a.key), a.intentSeq, a.nextAttempt]; break;
    case 'FINISH_EFFECT': action = [4, n.node.id(a.node), n.key.id(a.key), a.doneSeq]; break;
    case 'PARK': action = [5, n.node.id(a.node)]; break;
    case 'AWAIT_RESUME': action = [6, n.node.id(a.node), n.interrupt.id(a.interruptId), a.parkedSeq]; break;
    case 'FINISH_INTERRUPT': action = [7, n.node.id(a.node), n.interrupt.id(a.interruptId), a.claimSeq]; break;
    case 'FINISH_RUN': action = [8]; break;
    case 'AWAIT_ATTEMPT':
      action = [9, n.node.id(a.node), n.key.id(a.key), a.intentSeq, a.attempt, a.attemptSeq]; break;
  }
  const none = (seq: number) => (seq === NONE32 ? -1 : seq);
  const f = r.failure;
  return {
    ok: true, count: r.recordCount, status: r.status, action,
    // An empty log has no run id; the model's is 0 then, which is also the first interned id.
    run: r.recordCount === 0 ? 0 : n.run.id(r.runId),
    checkpoint: none(r.checkpointSeq), snapshot: none(r.snapshotSeq),
    effects: r.effects.map((e) => [e.status, e.doneCount]),
    parked: r.interruptsParked, claimed: r.interruptsClaimed,
    lineage: r.lineage.map((l) => [n.run.id(l.sourceRunId), l.sourceSeq, n.run.id(l.runId), l.forkSeq, n.payload.id(l.intent)]),
    failure: r.status === RunStatus.FAILED && f
      ? [f.node.length === 0 ? -1 : n.node.id(f.node), n.payload.id(f.code), n.payload.id(f.message)]
      : null,
  };
}

// ------------------------------------------------------------------ the comparison

export interface OracleStats {
  recoverCalls: number;
  admitCalls: number;
  /** Answers of the model replaced by the reserved-id rule (DUPLICATE_INTERRUPT where the model got past a violating park). */
  reservedRule: number;
  /** Calls not sent to the model, by reason. */
  unrepresentable: Map<string, number>;
}

/** Optional wrong rules, to show the comparison can fail (tests only). */
export type OracleCanary =
  /** The bridge sends a format-2 EFFECT_DONE as a format-1 one (a mutated model input). */
  'done-format-swapped';

/**
 * Compares a core's answers (already agreed by the two cores) with the extracted model's. A
 * divergence is reported like the two cores' ones, with the core names ['model', core].
 */
export class ModelOracle {
  readonly stats: OracleStats = { recoverCalls: 0, admitCalls: 0, reservedRule: 0, unrepresentable: new Map() };
  private cachedLog: Uint8Array | null = null;
  private cachedBridge: BridgedLog | null = null;

  constructor(readonly model: ExtractedModel, readonly coreName: string, private readonly canary: OracleCanary | null = null) {}

  private bridge(log: Uint8Array): BridgedLog {
    if (this.cachedLog !== log || this.cachedBridge === null || this.cachedLog.length !== log.length) {
      let b = bridgeLog(log);
      if (this.canary === 'done-format-swapped') b = { ...b, text: swapDoneFormat(b.text) };
      this.cachedLog = log;
      this.cachedBridge = b;
    }
    return this.cachedBridge;
  }

  private skip(reason: string): null {
    this.stats.unrepresentable.set(reason, (this.stats.unrepresentable.get(reason) ?? 0) + 1);
    return null;
  }

  /** `encoded`: the cores' agreed recovery encoding of `log`. */
  checkRecover(log: Uint8Array, encoded: Uint8Array): Divergence | null {
    const b = this.bridge(log);
    if (b.unrepresentable) return this.skip(b.unrepresentable.replace(/[0-9]+/g, 'N'));
    this.stats.recoverCalls++;
    const model = this.withReservedRule(modelRecovery(this.model.recover(b.text)), b.reservedViolation);
    const core = coreRecovery(decodeRecovery(encoded), b.names);
    return this.compare('recover', log, null, model, core);
  }

  /** `encoded`: the cores' agreed admission encoding of `request` on `log`. */
  checkAdmit(log: Uint8Array, request: Uint8Array, encoded: Uint8Array): Divergence | null {
    const b = this.bridge(log);
    if (b.unrepresentable) return this.skip(b.unrepresentable.replace(/[0-9]+/g, 'N'));
    const q = parseAdmissionRequest(request);
    if (q === null) return this.skip('malformed request');
    let tag: number;
    let arg: number;
    if (q.tag === 'RESUME') [tag, arg] = [1, b.names.interrupt.id(q.interruptId)];
    // Every seq past the model log's length is answered alike (Admission.admit_seq_beyond), so
    // 0xFFFFFFFF is sent as length + 1, a small Peano number.
    else [tag, arg] = [q.tag === 'FORK_AT' ? 2 : 3, Math.min(q.seq, b.records + 1)];
    this.stats.admitCalls++;
    const m = JSON.parse(this.model.admit(b.text, tag, arg)) as ComparableAdmission & { input_error?: string };
    if (m.input_error) throw new Error(`the extracted model refused its input: ${m.input_error}`);
    const c = decodeAdmission(encoded);
    const core: ComparableAdmission = { accepted: c.accepted, reason: c.reason, detail: c.detail, seq: c.seq };
    const expected = this.withReservedRuleAdmit({ accepted: m.accepted, reason: m.reason, detail: m.detail, seq: m.seq }, b.reservedViolation);
    return this.compare('admit', log, request, expected, core);
  }

  /**
   * The reserved-id rule the model lacks (see the head of this file): a park at `violation` whose
   * reserved id names another node or seq fails the recovery there with DUPLICATE_INTERRUPT,
   * unless the model already failed at or before it.
   */
  private withReservedRule(model: ComparableRecovery, violation: number | null): ComparableRecovery {
    if (violation === null || (!model.ok && model.seq <= violation)) return model;
    this.stats.reservedRule++;
    return { ok: false, code: LogErrorCode.DUPLICATE_INTERRUPT, seq: violation };
  }

  /** The same for an admission: the log is invalid (LOG_INVALID, detail the error code, seq the error's). */
  private withReservedRuleAdmit(model: ComparableAdmission, violation: number | null): ComparableAdmission {
    if (violation === null || (!model.accepted && model.reason === RefusalReason.LOG_INVALID && model.seq <= violation)) return model;
    this.stats.reservedRule++;
    return { accepted: false, reason: RefusalReason.LOG_INVALID, detail: LogErrorCode.DUPLICATE_INTERRUPT, seq: violation };
  }

  private compare(operation: 'recover' | 'admit', log: Uint8Array, request: Uint8Array | null, model: unknown, core: unknown): Divergence | null {
    const x = JSON.stringify(model);
    const y = JSON.stringify(core);
    if (x === y) return null;
    return { operation, coreNames: ['model', this.coreName], log: log.slice(), request, outputs: [x, y] };
  }
}

/** The canary's mutation of the model's input: every fenced EFFECT_DONE sent as a format-1 one. */
function swapDoneFormat(text: string): string {
  // Only the record tag changes; the bridge's text is "count tag fields... tag fields...".
  const nums = text.trim().split(' ').map(Number);
  const widths: Record<number, (i: number) => number> = {
    [Tag.RUN_STARTED]: (i) => 3 + 2 * nums[i + 2]! + 2, [Tag.NODE_COMPLETED]: () => 6, [Tag.EFFECT_INTENT]: () => 3,
    [Tag.EFFECT_DONE]: () => 4, [Tag.INTERRUPT_PARKED]: () => 3, [Tag.RESUME_CLAIMED]: () => 3, [Tag.FORKED]: () => 5,
    [Tag.RUN_COMPLETED]: () => 1, [Tag.RUN_FAILED]: () => 5, [Tag.EFFECT_ATTEMPT]: () => 4, [Tag.EFFECT_RELEASED]: () => 4,
    [Tag.EFFECT_DONE_FENCED]: () => 4, [Tag.CORRUPT]: () => 2,
  };
  for (let i = 1, r = 0; r < nums[0]!; r++, i += widths[nums[i]!]!(i)) if (nums[i] === Tag.EFFECT_DONE_FENCED) nums[i] = Tag.EFFECT_DONE;
  return nums.join(' ');
}

/** For reports: read the stamp of the built module (the digest of its inputs). */
export function modelStamp(): string {
  const stamp = `${EXTRACT_DIR}build/stamp`;
  return existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '(not built)';
}
