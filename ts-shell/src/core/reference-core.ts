/**
 * The TypeScript reference recovery core: docs/core-api.md written out as a fold over the records
 * of docs/log-format.md. It is the equivalence suite's oracle for the Wasm core and a shipped
 * alternative to it, so it favours the document's wording over cleverness.
 *
 * Guarantees (checked by ./reference-core.test.ts and ../../../equivalence/):
 * - total: every byte string and every request gets an answer; nothing throws;
 * - pure: the result depends only on the bytes given; no I/O, clock or randomness;
 * - single pass over the log; names are compared as byte ranges, never decoded.
 */

import { ArgumentInvalidError, OptionInvalidError } from '../errors.js';
import { notKnown, unknownKey } from '../known-keys.js';
import { describe, withByteArguments } from './byte-arguments.js';
import { ByteRangeMap } from './byte-range-map.js';
import { ByteWriter, encodeAdmission, encodeFed, encodeRecovery, isWellFormedRequest, parseAdmissionRequest } from './encoding.js';
import {
  Frame, FrameOutcome, FRAME_OVERHEAD, FRAME_OVERHEAD_V2, FORMAT_VERSION_1, FORMAT_VERSION_2, HEADER_LEN, MAX_NODE_COUNT, NO_CHAIN, PayloadFields,
  parsePayload, rangesEqual, readFrame, readU32,
} from './framing.js';
import {
  EffectStatus, LogErrorCode, NodeKind, NONE32, RecordKind, RefusalReason, RunStatus,
  type Admission, type AdmissionRequest, type EffectNodeStatus, type Fed, type ForkLink, type NextAction, type Recovery,
  type RecoveredRun, type RecoveryCore,
} from './types.js';

/** The phases of docs/core-api.md, "Recovery as a state machine over records". */
const Phase = {
  EMPTY: 0, AT: 1, INTENT: 2, DONE: 3, PARKED: 4, CLAIMED: 5, ENDED: 6, COMPLETED: 7, FAILED: 8, ATTEMPTED: 9, RELEASED: 10,
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

const STATUS_OF_PHASE: Record<Phase, RunStatus> = {
  [Phase.EMPTY]: RunStatus.EMPTY,
  [Phase.AT]: RunStatus.RUNNING,
  [Phase.INTENT]: RunStatus.RUNNING,
  [Phase.DONE]: RunStatus.RUNNING,
  [Phase.PARKED]: RunStatus.PARKED,
  [Phase.CLAIMED]: RunStatus.RUNNING,
  [Phase.ENDED]: RunStatus.RUNNING,
  [Phase.COMPLETED]: RunStatus.COMPLETED,
  [Phase.FAILED]: RunStatus.FAILED,
  [Phase.ATTEMPTED]: RunStatus.RUNNING,
  [Phase.RELEASED]: RunStatus.RUNNING,
};

/**
 * Bugs that tests can switch on to prove the equivalence suite catches them (a canary must make
 * the suite fail). Never reachable from createCore (./index.ts).
 */
export type ReferenceCanary =
  /** Consume-once broken: a claimed interrupt accepts another resume, and a second claim record. */
  | 'accept-second-claim'
  /** A delta NODE_COMPLETED moves the snapshot pointer as if it were a snapshot. */
  | 'snapshot-on-delta'
  /** The fence off: a format-2 EFFECT_DONE is accepted straight after its intent, with no attempt. */
  | 'done-without-attempt'
  /** The chain off: a format-2 record's link is not checked (no BAD_LINK). */
  | 'link-unchecked'
  /** A wrong summary field: the summary forgets the previous record's kind (FORKED after a split is refused). */
  | 'summary-forgets-prev-kind';

interface LineageEntry {
  sourceRunIdStart: number; sourceRunIdEnd: number; sourceSeq: number;
  runIdStart: number; runIdEnd: number; forkSeq: number;
  intentStart: number; intentEnd: number;
}

const NO_ERROR = 0;
type StepResult = typeof NO_ERROR | LogErrorCode;

/** One recovery of one log: walk, fold, report. Fields are byte ranges into `log`. */
class RecoveryFold {
  private readonly frame = new Frame();
  private readonly f = new PayloadFields();

  // Framing.
  recordCount = 0;
  durableLen = 0;
  tornLen = 0;
  errorCode: StepResult = NO_ERROR;
  errorKind = 0;
  /** Kind of the record at seq - 1 while folding (FORKED needs it). */
  private previousKind = 0;
  /** Chain value of the record at seq - 1 (0 before the first): what a format-2 record's link covers. */
  private previousChain = 0;
  /** A format-2 record was folded: a format-1 record may not follow. */
  private v2Seen = false;

  // The run, from RUN_STARTED (run id replaced by each FORKED).
  runIdStart = 0; runIdEnd = 0;
  workflowStart = 0; workflowEnd = 0;
  versionStart = 0; versionEnd = 0;
  fingerprintStart = 0; fingerprintEnd = 0;
  nodeNameStart: number[] = [];
  nodeNameEnd: number[] = [];
  nodeKind: number[] = [];
  nodeByName: ByteRangeMap;
  effectStatus: number[] = [];
  effectDoneCount: number[] = [];
  effectAttempts: number[] = [];

  // The phase and its parameters (node is an index into the node table). phaseSeq/phaseOffset are
  // the position of the record the phase is named after (intent, attempt, done, park, claim).
  phase: Phase = Phase.EMPTY;
  phaseNode = -1;
  phaseKeyStart = 0; phaseKeyEnd = 0;
  phaseIdStart = 0; phaseIdEnd = 0;
  phaseSeq = 0;
  phaseOffset = 0;
  /** INTENT, ATTEMPTED, RELEASED: the seq of the instance's EFFECT_INTENT. */
  phaseIntentSeq = 0;
  /** ATTEMPTED, RELEASED: the latest attempt number. */
  phaseAttempt = 0;

  checkpointSeq = NONE32; checkpointOffset = NONE32;
  snapshotSeq = NONE32; snapshotOffset = NONE32;

  parkedIds: ByteRangeMap;
  /**
   * Entries 0..parkedSortedCount-1 of parkedIds are in ascending bytewise order (those a summary
   * listed); the ones parked since follow in log order. The summary sorts only those and merges,
   * so a fold resumed from a summary of n ids does not sort all n again.
   */
  private parkedSortedCount = 0;
  /**
   * Where in `log` the summary's interrupt entries are, while the fold holds exactly those (no
   * park or claim since): the next summary copies them (the Rust core does the same).
   */
  private interruptEntriesStart = -1;
  private interruptEntriesEnd = -1;
  /** Claimed interrupt ids that are not reserved; value = the claim's seq, value2 = its offset. */
  claimedIds: ByteRangeMap;
  /**
   * The latest RESUME_CLAIMED's id (a range of `log`; start -1 when none) and position: a second
   * resume of the interrupt claimed last is refused from a summary without the log.
   */
  lastClaimIdStart = -1; lastClaimIdEnd = -1;
  lastClaimSeq = 0; lastClaimOffset = 0;
  interruptsParked = 0;
  interruptsClaimed = 0;
  lineage: LineageEntry[] = [];
  failedNodeStart = 0; failedNodeEnd = 0;
  failureCodeStart = 0; failureCodeEnd = 0;
  failureMessageStart = 0; failureMessageEnd = 0;

  /** Index in `log` of the first byte to fold: 0, or after the summary a fold resumed from. */
  private start = 0;
  /** Absolute log offset = index in `log` + shift (0 unless resumed from a summary). */
  private shift = 0;

  constructor(readonly log: Uint8Array, private readonly canary: ReferenceCanary | null) {
    this.nodeByName = new ByteRangeMap(log);
    this.parkedIds = new ByteRangeMap(log);
    this.claimedIds = new ByteRangeMap(log);
  }

  /** Fold every durable record; on corruption stop with errorCode, recordCount = the bad seq. */
  run(): this {
    const log = this.log;
    let offset = this.start;
    for (;;) {
      const prevChain = this.canary === 'link-unchecked' ? NO_CHAIN : this.previousChain;
      const outcome = readFrame(log, offset, this.recordCount, this.frame, prevChain, this.v2Seen);
      if (outcome === FrameOutcome.END) break;
      if (outcome === FrameOutcome.TORN) {
        this.tornLen = log.length - offset;
        break;
      }
      this.errorKind = this.frame.kind;
      if (outcome === FrameOutcome.CORRUPT) return this.fail(this.frame.errorCode);
      const kind = this.frame.kind;
      if (!parsePayload(log, kind, this.frame.payloadStart, this.frame.payloadEnd, this.f)) {
        return this.fail(LogErrorCode.MALFORMED_PAYLOAD);
      }
      const code = this.apply(kind, this.recordCount, this.absolute(offset), this.frame.version);
      if (code !== NO_ERROR) return this.fail(code);
      this.previousKind = kind;
      this.previousChain = this.frame.chain;
      this.v2Seen ||= this.frame.version === FORMAT_VERSION_2;
      offset = this.frame.recordEnd;
      this.recordCount++;
      this.durableLen = this.absolute(offset);
    }
    return this;
  }

  /**
   * The absolute log offset of `offset` in `log`. Offsets are u32s: past 0xFFFFFFFF (a log over
   * 4 GiB - 1, fed in pieces) they stay at 0xFFFFFFFF, as the Rust core's do (saturating), never
   * wrapped around to a small number (docs/core-api.md, "Incremental recovery").
   */
  private absolute(offset: number): number {
    return Math.min(offset + this.shift, NONE32);
  }

  private fail(code: LogErrorCode): this {
    this.errorCode = code;
    return this;
  }

  /**
   * docs/core-api.md, "Transitions", steps 2 and 3 (step 1, parsing, is done by the caller), for a
   * record of format `version`.
   */
  private apply(kind: number, seq: number, offset: number, version: number): StepResult {
    if (this.phase === Phase.COMPLETED || this.phase === Phase.FAILED) return LogErrorCode.IMPOSSIBLE_ORDER;
    // "s = 0 must be RUN_STARTED": read as applying to every kind, before any kind-specific rule.
    if ((seq === 0) !== (kind === RecordKind.RUN_STARTED)) return LogErrorCode.IMPOSSIBLE_ORDER;
    switch (kind) {
      case RecordKind.RUN_STARTED: return this.runStarted(offset);
      case RecordKind.NODE_COMPLETED: return this.nodeCompleted(seq, offset);
      case RecordKind.EFFECT_INTENT: return this.effectIntent(seq);
      case RecordKind.EFFECT_DONE: return this.effectDone(seq, offset, version);
      case RecordKind.EFFECT_ATTEMPT: return this.effectAttempt(seq, offset);
      case RecordKind.EFFECT_RELEASED: return this.effectReleased();
      case RecordKind.INTERRUPT_PARKED: return this.interruptParked(seq);
      case RecordKind.RESUME_CLAIMED: return this.resumeClaimed(seq, offset);
      case RecordKind.FORKED: return this.forked(seq);
      case RecordKind.RUN_COMPLETED: return this.runCompleted();
      default: return this.runFailed();
    }
  }

  private findNode(start: number, end: number): number {
    return this.nodeByName.find(this.log, start, end);
  }

  private runStarted(offset: number): StepResult {
    const f = this.f;
    const log = this.log;
    if (f.nodeCount < 1 || f.nodeCount > MAX_NODE_COUNT) return LogErrorCode.BAD_NODE_TABLE;
    this.nodeByName = new ByteRangeMap(log, f.nodeCount);
    let pos = f.tableStart;
    for (let i = 0; i < f.nodeCount; i++) {
      const nameEnd = pos + 4 + readU32(log, pos); // the payload parsed, so the entry is whole
      const kind = log[nameEnd]!;
      if (kind < NodeKind.PURE || kind > NodeKind.INTERRUPT) return LogErrorCode.BAD_NODE_TABLE;
      if (this.findNode(pos + 4, nameEnd) >= 0) return LogErrorCode.BAD_NODE_TABLE;
      this.nodeByName.add(pos + 4, nameEnd, i);
      this.nodeNameStart.push(pos + 4);
      this.nodeNameEnd.push(nameEnd);
      this.nodeKind.push(kind);
      this.effectStatus.push(EffectStatus.FRESH);
      this.effectDoneCount.push(0);
      this.effectAttempts.push(0);
      pos = nameEnd + 1;
    }
    const start = this.findNode(f.startNodeStart, f.startNodeEnd);
    if (start < 0) return LogErrorCode.UNKNOWN_NODE;
    this.runIdStart = f.runIdStart; this.runIdEnd = f.runIdEnd;
    this.workflowStart = f.workflowStart; this.workflowEnd = f.workflowEnd;
    this.versionStart = f.versionStart; this.versionEnd = f.versionEnd;
    this.fingerprintStart = f.fingerprintStart; this.fingerprintEnd = f.fingerprintEnd;
    this.enterAt(start);
    this.checkpointSeq = 0; this.checkpointOffset = offset;
    this.snapshotSeq = 0; this.snapshotOffset = offset;
    return NO_ERROR;
  }

  private enterAt(node: number): void {
    this.phase = Phase.AT;
    this.phaseNode = node;
  }

  private atNodeOfKind(node: number, kind: number): boolean {
    return this.phase === Phase.AT && this.phaseNode === node && this.nodeKind[node] === kind;
  }

  private nodeCompleted(seq: number, offset: number): StepResult {
    const f = this.f;
    const node = this.findNode(f.nodeStart, f.nodeEnd);
    if (node < 0) return LogErrorCode.UNKNOWN_NODE;
    const routesToEnd = f.nextEnd === f.nextStart;
    const next = routesToEnd ? -1 : this.findNode(f.nextStart, f.nextEnd);
    if (!routesToEnd && next < 0) return LogErrorCode.UNKNOWN_NODE;
    const allowed =
      this.atNodeOfKind(node, NodeKind.PURE) ||
      ((this.phase === Phase.DONE || this.phase === Phase.CLAIMED) && this.phaseNode === node);
    if (!allowed) return LogErrorCode.IMPOSSIBLE_ORDER;
    if (routesToEnd) {
      this.phase = Phase.ENDED;
      this.phaseNode = -1;
    } else {
      this.enterAt(next);
    }
    this.checkpointSeq = seq; this.checkpointOffset = offset;
    if (f.stateForm === 0 || this.canary === 'snapshot-on-delta') {
      this.snapshotSeq = seq; this.snapshotOffset = offset;
    }
    return NO_ERROR;
  }

  private effectIntent(seq: number): StepResult {
    const f = this.f;
    const node = this.findNode(f.nodeStart, f.nodeEnd);
    if (node < 0) return LogErrorCode.UNKNOWN_NODE;
    if (!this.atNodeOfKind(node, NodeKind.EFFECT)) return LogErrorCode.IMPOSSIBLE_ORDER;
    this.phase = Phase.INTENT;
    this.phaseKeyStart = f.keyStart; this.phaseKeyEnd = f.keyEnd;
    this.phaseSeq = seq;
    this.phaseIntentSeq = seq;
    this.effectStatus[node] = EffectStatus.INTENT_ONLY;
    this.effectAttempts[node] = 0;
    return NO_ERROR;
  }

  /** Whether the record's key equals the key of the phase's effect instance. */
  private sameKey(): boolean {
    const f = this.f;
    return rangesEqual(this.log, this.phaseKeyStart, this.phaseKeyEnd, this.log, f.keyStart, f.keyEnd);
  }

  /**
   * EFFECT_ATTEMPT(node, key, a): a = 1 right after the intent; a = latest + 1 after an attempt
   * (a takeover) or a release (a retry). Same node and key as the intent.
   */
  private effectAttempt(seq: number, offset: number): StepResult {
    const f = this.f;
    const node = this.findNode(f.nodeStart, f.nodeEnd);
    if (node < 0) return LogErrorCode.UNKNOWN_NODE;
    let expected: number;
    if (this.phase === Phase.INTENT) expected = 1;
    else if (this.phase === Phase.ATTEMPTED || this.phase === Phase.RELEASED) expected = this.phaseAttempt + 1;
    else return LogErrorCode.IMPOSSIBLE_ORDER;
    if (this.phaseNode !== node || !this.sameKey() || f.attempt !== expected) return LogErrorCode.IMPOSSIBLE_ORDER;
    this.phase = Phase.ATTEMPTED;
    this.phaseAttempt = f.attempt;
    this.phaseSeq = seq;
    this.phaseOffset = offset;
    this.effectAttempts[node] = f.attempt;
    return NO_ERROR;
  }

  /** EFFECT_RELEASED(node, key, a): only the latest attempt, while it has no outcome. */
  private effectReleased(): StepResult {
    const f = this.f;
    const node = this.findNode(f.nodeStart, f.nodeEnd);
    if (node < 0) return LogErrorCode.UNKNOWN_NODE;
    const latest = this.phase === Phase.ATTEMPTED && this.phaseNode === node && this.sameKey() && f.attempt === this.phaseAttempt;
    if (!latest) return LogErrorCode.IMPOSSIBLE_ORDER;
    this.phase = Phase.RELEASED;
    return NO_ERROR;
  }

  /**
   * EFFECT_DONE: in format 2 only while an attempt of the instance is recorded without an outcome
   * (the fence); in format 1 right after its intent (format 1 had no attempts).
   */
  private effectDone(seq: number, offset: number, version: number): StepResult {
    const f = this.f;
    const node = this.findNode(f.nodeStart, f.nodeEnd);
    if (node < 0) return LogErrorCode.UNKNOWN_NODE;
    const phaseAllows =
      (this.phase === Phase.INTENT && (version === FORMAT_VERSION_1 || this.canary === 'done-without-attempt')) ||
      (this.phase === Phase.ATTEMPTED && version === FORMAT_VERSION_2);
    if (!phaseAllows || this.phaseNode !== node || !this.sameKey()) return LogErrorCode.IMPOSSIBLE_ORDER;
    this.phase = Phase.DONE;
    this.phaseSeq = seq;
    this.phaseOffset = offset;
    this.effectStatus[node] = EffectStatus.DONE;
    this.effectDoneCount[node]! += 1;
    return NO_ERROR;
  }

  private interruptParked(seq: number): StepResult {
    const f = this.f;
    const node = this.findNode(f.nodeStart, f.nodeEnd);
    if (node < 0) return LogErrorCode.UNKNOWN_NODE;
    if (!this.atNodeOfKind(node, NodeKind.INTERRUPT)) return LogErrorCode.IMPOSSIBLE_ORDER;
    // An id reading `name@s` may be parked only by node `name` at seq s: unique by its seq, it is
    // not listed (docs/core-api.md, "Transitions"); the table keeps the other ids.
    const reserved = reservedInterruptId(this.log, f.interruptIdStart, f.interruptIdEnd);
    if (reserved !== null) {
      if (!this.namesItsPark(reserved, node, seq)) return LogErrorCode.DUPLICATE_INTERRUPT;
    } else {
      if (this.parkedIds.find(this.log, f.interruptIdStart, f.interruptIdEnd) >= 0) return LogErrorCode.DUPLICATE_INTERRUPT;
      this.parkedIds.add(f.interruptIdStart, f.interruptIdEnd);
      this.interruptEntriesStart = -1;
    }
    this.phase = Phase.PARKED;
    this.phaseIdStart = f.interruptIdStart; this.phaseIdEnd = f.interruptIdEnd;
    this.phaseSeq = seq;
    this.interruptsParked += 1;
    return NO_ERROR;
  }

  private resumeClaimed(seq: number, offset: number): StepResult {
    const f = this.f;
    const log = this.log;
    const sameId = rangesEqual(log, this.phaseIdStart, this.phaseIdEnd, log, f.interruptIdStart, f.interruptIdEnd);
    const secondClaimCanary = this.canary === 'accept-second-claim' && this.phase === Phase.CLAIMED && sameId;
    if (!(this.phase === Phase.PARKED && sameId) && !secondClaimCanary) return LogErrorCode.IMPOSSIBLE_ORDER;
    if (!secondClaimCanary && reservedInterruptId(log, f.interruptIdStart, f.interruptIdEnd) === null) {
      this.claimedIds.add(f.interruptIdStart, f.interruptIdEnd, seq, offset);
      this.interruptEntriesStart = -1;
    }
    this.phase = Phase.CLAIMED;
    this.phaseIdStart = f.interruptIdStart; this.phaseIdEnd = f.interruptIdEnd;
    this.phaseSeq = seq;
    this.phaseOffset = offset;
    this.lastClaimIdStart = f.interruptIdStart; this.lastClaimIdEnd = f.interruptIdEnd;
    this.lastClaimSeq = seq; this.lastClaimOffset = offset;
    this.interruptsClaimed += 1;
    return NO_ERROR;
  }

  private forked(seq: number): StepResult {
    const f = this.f;
    const afterCheckpoint =
      this.previousKind === RecordKind.RUN_STARTED || this.previousKind === RecordKind.NODE_COMPLETED;
    if (!afterCheckpoint || f.sourceSeq !== seq - 1) return LogErrorCode.IMPOSSIBLE_ORDER;
    this.runIdStart = f.runIdStart; this.runIdEnd = f.runIdEnd;
    this.lineage.push({
      sourceRunIdStart: f.sourceRunIdStart, sourceRunIdEnd: f.sourceRunIdEnd, sourceSeq: f.sourceSeq,
      runIdStart: f.runIdStart, runIdEnd: f.runIdEnd, forkSeq: seq,
      intentStart: f.intentStart, intentEnd: f.intentEnd,
    });
    return NO_ERROR;
  }

  private runCompleted(): StepResult {
    if (this.phase !== Phase.ENDED) return LogErrorCode.IMPOSSIBLE_ORDER;
    this.phase = Phase.COMPLETED;
    return NO_ERROR;
  }

  private runFailed(): StepResult {
    const f = this.f;
    if (this.phase === Phase.EMPTY) return LogErrorCode.IMPOSSIBLE_ORDER;
    this.phase = Phase.FAILED;
    this.failedNodeStart = f.nodeStart; this.failedNodeEnd = f.nodeEnd;
    this.failureCodeStart = f.codeStart; this.failureCodeEnd = f.codeEnd;
    this.failureMessageStart = f.messageStart; this.failureMessageEnd = f.messageEnd;
    return NO_ERROR;
  }

  // ------------------------------------------------------------ the summary (docs/core-api.md, "Summary encoding")

  /**
   * Take the fold's state from the summary encoding in `log[0..summaryLen)`; the records to fold
   * follow it in `log`. Byte fields stay ranges into `log`. False when the bytes are not a summary
   * encoding (the decoding rules of the document, which the Rust core applies the same way).
   */
  resumeFrom(summaryLen: number): boolean {
    this.start = summaryLen;
    if (summaryLen === 0) return true;
    const r = new SummaryReader(this.log, summaryLen);
    const version = r.u8();
    if (version !== SUMMARY_VERSION && version !== SUMMARY_VERSION_LISTING_EVERY_ID) return false;
    const seq = r.u32();
    const durableLen = r.u32();
    this.previousChain = r.u32();
    const v2 = r.u8();
    this.previousKind = r.u8();
    if (r.failed || seq === 0 || v2 > 1) return false;
    this.v2Seen = v2 === 1;
    if (!this.readPhase(r)) return false;
    [this.runIdStart, this.runIdEnd] = r.bytes();
    [this.workflowStart, this.workflowEnd] = r.bytes();
    [this.versionStart, this.versionEnd] = r.bytes();
    [this.fingerprintStart, this.fingerprintEnd] = r.bytes();
    this.checkpointSeq = r.u32(); this.checkpointOffset = r.u32();
    this.snapshotSeq = r.u32(); this.snapshotOffset = r.u32();
    if (r.failed || !this.readNodes(r)) return false;
    if (this.phaseNode >= this.nodeKind.length) return false;
    this.interruptsParked = r.u32();
    this.interruptsClaimed = r.u32();
    if (version === SUMMARY_VERSION_LISTING_EVERY_ID) {
      // What version 2 requires of what it keeps holds of what version 1 gave too (a CLAIMED
      // phase's claim is the last claim), or the summary written from it would be refused.
      if (r.failed || !this.readListingEveryId(r) || !this.lastClaimAgrees()) return false;
    } else {
      if (r.failed || !this.readInterrupts(r) || !this.phaseAgreesWithInterrupts()) return false;
      const lastClaim = r.u8();
      if (lastClaim > 1) return false;
      if (lastClaim === 1) {
        [this.lastClaimIdStart, this.lastClaimIdEnd] = r.bytes();
        this.lastClaimSeq = r.u32(); this.lastClaimOffset = r.u32();
      }
      if (r.failed || !this.lastClaimAgrees()) return false;
    }
    const forks = r.u32();
    for (let i = 0; i < forks && !r.failed; i++) {
      const [sourceRunIdStart, sourceRunIdEnd] = r.bytes();
      const sourceSeq = r.u32();
      const [runIdStart, runIdEnd] = r.bytes();
      const forkSeq = r.u32();
      const [intentStart, intentEnd] = r.bytes();
      this.lineage.push({ sourceRunIdStart, sourceRunIdEnd, sourceSeq, runIdStart, runIdEnd, forkSeq, intentStart, intentEnd });
    }
    if (this.phase === Phase.FAILED) {
      [this.failedNodeStart, this.failedNodeEnd] = r.bytes();
      [this.failureCodeStart, this.failureCodeEnd] = r.bytes();
      [this.failureMessageStart, this.failureMessageEnd] = r.bytes();
    }
    if (r.failed || r.pos !== summaryLen) return false;
    this.recordCount = seq;
    this.durableLen = durableLen;
    this.shift = durableLen - summaryLen;
    return true;
  }

  private readPhase(r: SummaryReader): boolean {
    const tag = r.u8();
    const phase = SUMMARY_PHASE[tag];
    if (phase === undefined) return false;
    this.phase = phase;
    this.phaseNode = -1;
    if (phase === Phase.ENDED || phase === Phase.COMPLETED || phase === Phase.FAILED) return !r.failed;
    this.phaseNode = r.u32();
    switch (phase) {
      case Phase.INTENT:
        [this.phaseKeyStart, this.phaseKeyEnd] = r.bytes();
        this.phaseSeq = this.phaseIntentSeq = r.u32();
        break;
      case Phase.ATTEMPTED:
        [this.phaseKeyStart, this.phaseKeyEnd] = r.bytes();
        this.phaseIntentSeq = r.u32(); this.phaseAttempt = r.u32(); this.phaseSeq = r.u32(); this.phaseOffset = r.u32();
        break;
      case Phase.RELEASED:
        [this.phaseKeyStart, this.phaseKeyEnd] = r.bytes();
        this.phaseIntentSeq = r.u32(); this.phaseAttempt = r.u32();
        break;
      case Phase.DONE:
        [this.phaseKeyStart, this.phaseKeyEnd] = r.bytes();
        this.phaseSeq = r.u32(); this.phaseOffset = r.u32();
        break;
      case Phase.PARKED:
        [this.phaseIdStart, this.phaseIdEnd] = r.bytes();
        this.phaseSeq = r.u32();
        break;
      case Phase.CLAIMED:
        [this.phaseIdStart, this.phaseIdEnd] = r.bytes();
        this.phaseSeq = r.u32(); this.phaseOffset = r.u32();
        break;
      default:
        break;
    }
    return !r.failed;
  }

  /** The node table: 1..65535 entries, kinds 1..3, names pairwise distinct; effect status 0..2. */
  private readNodes(r: SummaryReader): boolean {
    const count = r.u32();
    if (r.failed || count < 1 || count > MAX_NODE_COUNT) return false;
    this.nodeByName = new ByteRangeMap(this.log, count);
    for (let i = 0; i < count; i++) {
      const [start, end] = r.bytes();
      const kind = r.u8();
      if (r.failed || kind < NodeKind.PURE || kind > NodeKind.INTERRUPT || this.findNode(start, end) >= 0) return false;
      const status = r.u8();
      if (r.failed || status > EffectStatus.DONE) return false;
      this.nodeByName.add(start, end, i);
      this.nodeNameStart.push(start);
      this.nodeNameEnd.push(end);
      this.nodeKind.push(kind);
      this.effectStatus.push(status);
      this.effectDoneCount.push(r.u32());
      this.effectAttempts.push(r.u32());
    }
    return !r.failed;
  }

  /** Parked interrupt ids in strictly ascending bytewise order, each with its claim if claimed. */
  private readInterrupts(r: SummaryReader): boolean {
    const count = r.u32();
    // Room for every listed id at once, capped so that a damaged count cannot reserve memory the
    // bytes cannot hold (each entry takes at least 5 bytes: an empty id's length and its flag).
    const plausible = Math.min(count, Math.floor(Math.max(0, this.start - r.pos) / 5));
    this.parkedIds.reserve(plausible);
    const entriesStart = r.pos;
    let prevStart = -1, prevEnd = -1;
    for (let i = 0; i < count; i++) {
      const [start, end] = r.bytes();
      const claimed = r.u8();
      if (r.failed || claimed > 1) return false;
      // A reserved id (`name@s`) is never listed.
      if (reservedInterruptId(this.log, start, end) !== null) return false;
      if (prevStart >= 0 && compareRanges(this.log, prevStart, prevEnd, start, end) >= 0) return false;
      prevStart = start; prevEnd = end;
      this.parkedIds.add(start, end);
      if (claimed === 1) {
        const seq = r.u32();
        const offset = r.u32();
        this.claimedIds.add(start, end, seq, offset);
      }
    }
    this.parkedSortedCount = this.parkedIds.size;
    this.interruptEntriesStart = entriesStart;
    this.interruptEntriesEnd = r.pos;
    return !r.failed;
  }

  /**
   * Version 1's interrupt list (every parked id, reserved or not, ascending, each with its claim),
   * checked by version 1's rule (a PARKED phase's id listed unclaimed, a CLAIMED phase's id listed
   * with that claim) and kept as a fold of the same log keeps it now: the ids that are not reserved,
   * and the latest claim, the listed claim of the greatest seq (the Rust core does the same).
   */
  private readListingEveryId(r: SummaryReader): boolean {
    const log = this.log;
    const count = r.u32();
    let prevStart = -1, prevEnd = -1;
    let phaseListed = this.phase !== Phase.PARKED && this.phase !== Phase.CLAIMED;
    // Two claims at one seq: no log holds them, and which is "the last" would be the cores' choice.
    let lastClaimTied = false;
    for (let i = 0; i < count; i++) {
      const [start, end] = r.bytes();
      const claimed = r.u8();
      if (r.failed || claimed > 1) return false;
      if (prevStart >= 0 && compareRanges(log, prevStart, prevEnd, start, end) >= 0) return false;
      prevStart = start; prevEnd = end;
      const seq = claimed === 1 ? r.u32() : 0;
      const offset = claimed === 1 ? r.u32() : 0;
      if (r.failed) return false;
      if (!phaseListed && rangesEqual(log, start, end, log, this.phaseIdStart, this.phaseIdEnd)) {
        phaseListed = this.phase === Phase.PARKED ? claimed === 0 : claimed === 1 && seq === this.phaseSeq && offset === this.phaseOffset;
        if (!phaseListed) return false;
      }
      if (claimed === 1 && this.lastClaimIdStart >= 0 && seq === this.lastClaimSeq) lastClaimTied = true;
      if (claimed === 1 && (this.lastClaimIdStart < 0 || seq > this.lastClaimSeq)) {
        this.lastClaimIdStart = start; this.lastClaimIdEnd = end;
        this.lastClaimSeq = seq; this.lastClaimOffset = offset;
        lastClaimTied = false;
      }
      if (reservedInterruptId(log, start, end) !== null) continue;
      this.parkedIds.add(start, end);
      if (claimed === 1) this.claimedIds.add(start, end, seq, offset);
    }
    this.parkedSortedCount = this.parkedIds.size;
    return phaseListed && !lastClaimTied;
  }

  /** The summary encoding of the fold as it stands (empty when no record is durable). */
  summary(): Uint8Array {
    if (this.recordCount === 0) return new Uint8Array(0);
    const log = this.log;
    const w = new ByteWriter(256);
    w.u8(SUMMARY_VERSION).u32(this.recordCount).u32(this.durableLen).u32(this.previousChain).u8(this.v2Seen ? 1 : 0);
    w.u8(this.canary === 'summary-forgets-prev-kind' ? 0 : this.previousKind);
    this.writePhase(w);
    w.bytesRange(log, this.runIdStart, this.runIdEnd).bytesRange(log, this.workflowStart, this.workflowEnd);
    w.bytesRange(log, this.versionStart, this.versionEnd).bytesRange(log, this.fingerprintStart, this.fingerprintEnd);
    w.u32(this.checkpointSeq).u32(this.checkpointOffset).u32(this.snapshotSeq).u32(this.snapshotOffset);
    w.u32(this.nodeKind.length);
    for (let i = 0; i < this.nodeKind.length; i++) {
      w.bytesRange(log, this.nodeNameStart[i]!, this.nodeNameEnd[i]!).u8(this.nodeKind[i]!).u8(this.effectStatus[i]!);
      w.u32(this.effectDoneCount[i]!).u32(this.effectAttempts[i]!);
    }
    w.u32(this.interruptsParked).u32(this.interruptsClaimed);
    this.writeInterrupts(w);
    if (this.lastClaimIdStart < 0) w.u8(0);
    else w.u8(1).bytesRange(log, this.lastClaimIdStart, this.lastClaimIdEnd).u32(this.lastClaimSeq).u32(this.lastClaimOffset);
    w.u32(this.lineage.length);
    for (const l of this.lineage) {
      w.bytesRange(log, l.sourceRunIdStart, l.sourceRunIdEnd).u32(l.sourceSeq).bytesRange(log, l.runIdStart, l.runIdEnd);
      w.u32(l.forkSeq).bytesRange(log, l.intentStart, l.intentEnd);
    }
    if (this.phase === Phase.FAILED) {
      w.bytesRange(log, this.failedNodeStart, this.failedNodeEnd).bytesRange(log, this.failureCodeStart, this.failureCodeEnd);
      w.bytesRange(log, this.failureMessageStart, this.failureMessageEnd);
    }
    return w.finish();
  }

  private writeInterrupts(w: ByteWriter): void {
    const log = this.log;
    const p = this.parkedIds;
    w.u32(p.size);
    if (this.interruptEntriesStart >= 0) {
      w.raw(log.subarray(this.interruptEntriesStart, this.interruptEntriesEnd));
      return;
    }
    for (const e of this.parkedIdsAscending()) {
      const start = p.keyStart(e), end = p.keyEnd(e);
      w.bytesRange(log, start, end);
      const claim = this.claimedIds.find(log, start, end);
      if (claim < 0) w.u8(0);
      else w.u8(1).u32(this.claimedIds.value(claim)).u32(this.claimedIds.value2(claim));
    }
  }

  /** Whether the reserved id `reserved` names the park of `node` at `parkSeq`. */
  private namesItsPark(reserved: ReservedId, node: number, parkSeq: number): boolean {
    return reserved.seq === parkSeq && rangesEqual(this.log, reserved.nameStart, reserved.nameEnd, this.log, this.nodeNameStart[node]!, this.nodeNameEnd[node]!);
  }

  /**
   * A parked phase's id is listed unclaimed; a claimed phase's id is listed with that very claim;
   * unless the id is reserved (`name@s`), when it names the phase's node and park seq and is not
   * listed (what every summary a core writes holds: docs/core-api.md, "Summary encoding").
   */
  private phaseAgreesWithInterrupts(): boolean {
    if (this.phase !== Phase.PARKED && this.phase !== Phase.CLAIMED) return true;
    const log = this.log;
    const reserved = reservedInterruptId(log, this.phaseIdStart, this.phaseIdEnd);
    if (reserved !== null) return this.namesItsPark(reserved, this.phaseNode, this.phase === Phase.PARKED ? this.phaseSeq : this.phaseSeq - 1);
    if (this.parkedIds.find(log, this.phaseIdStart, this.phaseIdEnd) < 0) return false;
    const claim = this.claimedIds.find(log, this.phaseIdStart, this.phaseIdEnd);
    if (this.phase === Phase.PARKED) return claim < 0;
    return claim >= 0 && this.claimedIds.value(claim) === this.phaseSeq && this.claimedIds.value2(claim) === this.phaseOffset;
  }

  /**
   * A CLAIMED phase's claim is the latest claim; a latest claim of an id that is not reserved is
   * that id's listed claim (what every summary a core writes holds).
   */
  private lastClaimAgrees(): boolean {
    const log = this.log;
    const has = this.lastClaimIdStart >= 0;
    if (this.phase === Phase.CLAIMED) {
      const same = has && rangesEqual(log, this.lastClaimIdStart, this.lastClaimIdEnd, log, this.phaseIdStart, this.phaseIdEnd);
      if (!same || this.lastClaimSeq !== this.phaseSeq || this.lastClaimOffset !== this.phaseOffset) return false;
    }
    if (!has || reservedInterruptId(log, this.lastClaimIdStart, this.lastClaimIdEnd) !== null) return true;
    const claim = this.claimedIds.find(log, this.lastClaimIdStart, this.lastClaimIdEnd);
    return claim >= 0 && this.claimedIds.value(claim) === this.lastClaimSeq && this.claimedIds.value2(claim) === this.lastClaimOffset;
  }

  /** Entry indexes of parkedIds in ascending bytewise order of their ids. */
  private parkedIdsAscending(): number[] {
    const log = this.log;
    const p = this.parkedIds;
    const before = (a: number, b: number) => compareRanges(log, p.keyStart(a), p.keyEnd(a), p.keyStart(b), p.keyEnd(b));
    const added: number[] = [];
    for (let e = this.parkedSortedCount; e < p.size; e++) added.push(e);
    added.sort(before);
    const out: number[] = [];
    let i = 0, j = 0;
    while (i < this.parkedSortedCount || j < added.length) {
      if (j >= added.length || (i < this.parkedSortedCount && before(i, added[j]!) < 0)) out.push(i++);
      else out.push(added[j++]!);
    }
    return out;
  }

  private writePhase(w: ByteWriter): void {
    const log = this.log;
    const key = (): ByteWriter => w.bytesRange(log, this.phaseKeyStart, this.phaseKeyEnd);
    const id = (): ByteWriter => w.bytesRange(log, this.phaseIdStart, this.phaseIdEnd);
    switch (this.phase) {
      case Phase.AT: w.u8(1).u32(this.phaseNode); return;
      case Phase.INTENT: w.u8(2).u32(this.phaseNode); key().u32(this.phaseIntentSeq); return;
      case Phase.ATTEMPTED:
        w.u8(3).u32(this.phaseNode); key().u32(this.phaseIntentSeq).u32(this.phaseAttempt).u32(this.phaseSeq).u32(this.phaseOffset);
        return;
      case Phase.RELEASED: w.u8(4).u32(this.phaseNode); key().u32(this.phaseIntentSeq).u32(this.phaseAttempt); return;
      case Phase.DONE: w.u8(5).u32(this.phaseNode); key().u32(this.phaseSeq).u32(this.phaseOffset); return;
      case Phase.PARKED: w.u8(6).u32(this.phaseNode); id().u32(this.phaseSeq); return;
      case Phase.CLAIMED: w.u8(7).u32(this.phaseNode); id().u32(this.phaseSeq).u32(this.phaseOffset); return;
      case Phase.ENDED: w.u8(8); return;
      case Phase.COMPLETED: w.u8(9); return;
      default: w.u8(10); return; // FAILED (EMPTY has no summary)
    }
  }

  // ------------------------------------------------------------ reporting

  private bytes(start: number, end: number): Uint8Array {
    return this.log.slice(start, end);
  }

  private nodeName(node: number): Uint8Array {
    return this.bytes(this.nodeNameStart[node]!, this.nodeNameEnd[node]!);
  }

  action(): NextAction {
    const node = this.phaseNode;
    switch (this.phase) {
      case Phase.AT: {
        const kind = this.nodeKind[node];
        if (kind === NodeKind.PURE) return { tag: 'RUN_PURE', node: this.nodeName(node) };
        if (kind === NodeKind.EFFECT) return { tag: 'BEGIN_EFFECT', node: this.nodeName(node) };
        return { tag: 'PARK', node: this.nodeName(node) };
      }
      case Phase.INTENT:
        return {
          tag: 'INVOKE_EFFECT', node: this.nodeName(node), key: this.bytes(this.phaseKeyStart, this.phaseKeyEnd),
          intentSeq: this.phaseIntentSeq, nextAttempt: 1,
        };
      case Phase.RELEASED:
        // attempt + 1 stays a u32: attempt a needs a records before it in the log.
        return {
          tag: 'INVOKE_EFFECT', node: this.nodeName(node), key: this.bytes(this.phaseKeyStart, this.phaseKeyEnd),
          intentSeq: this.phaseIntentSeq, nextAttempt: Math.min(this.phaseAttempt + 1, 0xffff_ffff),
        };
      case Phase.ATTEMPTED:
        return {
          tag: 'AWAIT_ATTEMPT', node: this.nodeName(node), key: this.bytes(this.phaseKeyStart, this.phaseKeyEnd),
          intentSeq: this.phaseIntentSeq, attempt: this.phaseAttempt, attemptSeq: this.phaseSeq, attemptOffset: this.phaseOffset,
        };
      case Phase.DONE:
        return {
          tag: 'FINISH_EFFECT', node: this.nodeName(node), key: this.bytes(this.phaseKeyStart, this.phaseKeyEnd),
          doneSeq: this.phaseSeq, doneOffset: this.phaseOffset,
        };
      case Phase.PARKED:
        return { tag: 'AWAIT_RESUME', node: this.nodeName(node), interruptId: this.bytes(this.phaseIdStart, this.phaseIdEnd), parkedSeq: this.phaseSeq };
      case Phase.CLAIMED:
        return {
          tag: 'FINISH_INTERRUPT', node: this.nodeName(node), interruptId: this.bytes(this.phaseIdStart, this.phaseIdEnd),
          claimSeq: this.phaseSeq, claimOffset: this.phaseOffset,
        };
      case Phase.ENDED:
        return { tag: 'FINISH_RUN' };
      default:
        return { tag: 'NONE' };
    }
  }

  private effects(): EffectNodeStatus[] {
    const out: EffectNodeStatus[] = [];
    for (let i = 0; i < this.nodeKind.length; i++) {
      if (this.nodeKind[i] !== NodeKind.EFFECT) continue;
      out.push({
        node: this.nodeName(i), status: this.effectStatus[i] as EffectStatus, doneCount: this.effectDoneCount[i]!,
        attempts: this.effectAttempts[i]!,
      });
    }
    return out;
  }

  private forkLinks(): ForkLink[] {
    return this.lineage.map((l) => ({
      sourceRunId: this.bytes(l.sourceRunIdStart, l.sourceRunIdEnd), sourceSeq: l.sourceSeq,
      runId: this.bytes(l.runIdStart, l.runIdEnd), forkSeq: l.forkSeq, intent: this.bytes(l.intentStart, l.intentEnd),
    }));
  }

  report(): Recovery {
    if (this.errorCode !== NO_ERROR) {
      return { ok: false, code: this.errorCode, seq: this.recordCount, offset: this.durableLen, kind: this.errorKind };
    }
    const status = STATUS_OF_PHASE[this.phase];
    const run: RecoveredRun = {
      ok: true, status, recordCount: this.recordCount, durableLen: this.durableLen, tornLen: this.tornLen,
      runId: this.bytes(this.runIdStart, this.runIdEnd),
      workflow: this.bytes(this.workflowStart, this.workflowEnd),
      version: this.bytes(this.versionStart, this.versionEnd),
      fingerprint: this.bytes(this.fingerprintStart, this.fingerprintEnd),
      checkpointSeq: this.checkpointSeq, checkpointOffset: this.checkpointOffset,
      snapshotSeq: this.snapshotSeq, snapshotOffset: this.snapshotOffset,
      action: this.action(), effects: this.effects(),
      interruptsParked: this.interruptsParked, interruptsClaimed: this.interruptsClaimed,
      lineage: this.forkLinks(),
    };
    if (status === RunStatus.FAILED) {
      run.failure = {
        node: this.bytes(this.failedNodeStart, this.failedNodeEnd),
        code: this.bytes(this.failureCodeStart, this.failureCodeEnd),
        message: this.bytes(this.failureMessageStart, this.failureMessageEnd),
      };
    }
    return run;
  }
}

// ------------------------------------------------------------------ admission

function refuse(reason: RefusalReason, seq: number, offset: number, detail = 0): Admission {
  return { accepted: false, reason, detail, seq, offset };
}

function accept(seq: number, offset: number): Admission {
  return { accepted: true, reason: 0, detail: 0, seq, offset };
}

/** Header and trailer bytes of the record at `offset`, by its version byte. */
function overheadAt(log: Uint8Array, offset: number): number {
  return log[offset + 8] === FORMAT_VERSION_2 ? FRAME_OVERHEAD_V2 : FRAME_OVERHEAD;
}

/** Start offset of record `seq` in a log whose framing up to that record is known to be valid. */
function recordOffset(log: Uint8Array, seq: number): number {
  let offset = 0;
  for (let i = 0; i < seq; i++) offset += overheadAt(log, offset) + readU32(log, offset);
  return offset;
}

/** docs/core-api.md, "Admission". `request` null means it did not parse (BAD_REQUEST). */
function admitRequest(log: Uint8Array, request: AdmissionRequest | null, canary: ReferenceCanary | null): Admission {
  const fold = new RecoveryFold(log, canary).run();
  if (fold.errorCode !== NO_ERROR) return refuse(RefusalReason.LOG_INVALID, fold.recordCount, fold.durableLen, fold.errorCode);
  if (fold.phase === Phase.EMPTY) return refuse(RefusalReason.NO_RUN, 0, 0);
  if (request === null) return refuse(RefusalReason.BAD_REQUEST, 0, 0);
  const head = fold.recordCount - 1;
  switch (request.tag) {
    case 'RESUME':
      return admitResume(fold, request.interruptId, head, canary, log);
    case 'FORK_AT': {
      const n = request.seq;
      if (n > head) return refuse(RefusalReason.BEYOND_HEAD, head, fold.durableLen);
      const offset = recordOffset(log, n);
      const kind = log[offset + 9];
      if (kind === RecordKind.RUN_STARTED || kind === RecordKind.NODE_COMPLETED) {
        return accept(n + 1, offset + overheadAt(log, offset) + readU32(log, offset));
      }
      return refuse(RefusalReason.NOT_A_CHECKPOINT, n, offset);
    }
    case 'CONTINUE_FROM':
      return admitContinue(fold, request.seq, head);
  }
}

function admitContinue(fold: RecoveryFold, n: number, head: number): Admission {
  if (n === head) return accept(fold.recordCount, fold.durableLen);
  if (n > head) return refuse(RefusalReason.BEYOND_HEAD, head, fold.durableLen);
  return refuse(RefusalReason.IMPLICIT_FORK, head, fold.durableLen);
}

/**
 * admission of RESUME(id). `log` is the whole log, or null when judged from a summary, which lists
 * no reserved id (`name@s`): the claim of such an id parked before the phase is then in the log only
 * (record s + 1), and the answer is NEEDS_LOG.
 */
function admitResume(fold: RecoveryFold, id: Uint8Array, head: number, canary: ReferenceCanary | null, log: Uint8Array | null): Admission {
  const onThisId = rangesEqual(fold.log, fold.phaseIdStart, fold.phaseIdEnd, id, 0, id.length);
  const secondClaimCanary = canary === 'accept-second-claim' && fold.phase === Phase.CLAIMED && onThisId;
  if (secondClaimCanary) return accept(fold.recordCount, fold.durableLen);
  if (fold.lastClaimIdStart >= 0 && rangesEqual(fold.log, fold.lastClaimIdStart, fold.lastClaimIdEnd, id, 0, id.length)) {
    return refuse(RefusalReason.ALREADY_CONSUMED, fold.lastClaimSeq, fold.lastClaimOffset);
  }
  const claim = fold.claimedIds.find(id, 0, id.length);
  if (claim >= 0) return refuse(RefusalReason.ALREADY_CONSUMED, fold.claimedIds.value(claim), fold.claimedIds.value2(claim));
  const parkedHere = fold.phase === Phase.PARKED && onThisId;
  const reserved = parkedHere ? null : reservedInterruptId(id, 0, id.length);
  if (reserved !== null && reserved.seq < head) {
    const claimSeq = reserved.seq + 1;
    if (log === null) return refuse(RefusalReason.NEEDS_LOG, claimSeq, 0);
    const offset = claimInLog(log, id, claimSeq);
    if (offset !== null) return refuse(RefusalReason.ALREADY_CONSUMED, claimSeq, offset);
  }
  if (parkedHere) return accept(fold.recordCount, fold.durableLen);
  if (fold.phase !== Phase.PARKED) return refuse(RefusalReason.NOT_PARKED, head, fold.durableLen);
  return refuse(RefusalReason.UNKNOWN_INTERRUPT, head, fold.durableLen);
}

/**
 * The start offset of record `seq` of a recovered `log` when it is the claim of `id`, else null.
 * In a log that recovers a claim follows the park of its id, so the claim of the park of a
 * reserved id at s is record s + 1 or none.
 */
function claimInLog(log: Uint8Array, id: Uint8Array, seq: number): number | null {
  const offset = recordOffset(log, seq);
  if (log[offset + 9] !== RecordKind.RESUME_CLAIMED) return null;
  const payloadStart = offset + HEADER_LEN;
  const f = new PayloadFields();
  if (!parsePayload(log, RecordKind.RESUME_CLAIMED, payloadStart, payloadStart + readU32(log, offset), f)) return null;
  return rangesEqual(log, f.interruptIdStart, f.interruptIdEnd, id, 0, id.length) ? offset : null;
}

/** The node name (a range of `bytes`) and seq a reserved interrupt id names. */
interface ReservedId { nameStart: number; nameEnd: number; seq: number }

/**
 * The node name and seq an interrupt id `bytes[start..end)` names when it reads `name@seq`: a
 * non-empty name, the last `@`, the seq in decimal without leading zeros (a u32). docs/core-api.md,
 * "Transitions": only node `name` may park it, at seq `seq`. Null for any other id.
 */
function reservedInterruptId(bytes: Uint8Array, start: number, end: number): ReservedId | null {
  let at = end - 1;
  while (at >= start && bytes[at] !== 0x40) at--;
  const digits = end - at - 1;
  if (at <= start || digits < 1 || digits > 10 || (digits > 1 && bytes[at + 1] === 0x30)) return null;
  let seq = 0;
  for (let i = at + 1; i < end; i++) {
    const d = bytes[i]! - 0x30;
    if (d < 0 || d > 9) return null;
    seq = seq * 10 + d;
  }
  return seq <= 0xffff_ffff ? { nameStart: start, nameEnd: at, seq } : null;
}

// ------------------------------------------------------------------ the summary encoding

/** Version byte of the summary encoding this core writes. */
const SUMMARY_VERSION = 2;
/**
 * The layout written before reserved interrupt ids (until 2026-12-07): every parked id listed, no
 * last claim. Still read (readListingEveryId), never written.
 */
const SUMMARY_VERSION_LISTING_EVERY_ID = 1;

/** Summary phase tags (docs/core-api.md, "Summary encoding") -> fold phases. */
const SUMMARY_PHASE: Record<number, Phase> = {
  1: Phase.AT, 2: Phase.INTENT, 3: Phase.ATTEMPTED, 4: Phase.RELEASED, 5: Phase.DONE, 6: Phase.PARKED,
  7: Phase.CLAIMED, 8: Phase.ENDED, 9: Phase.COMPLETED, 10: Phase.FAILED,
};

/** Bytewise order of two ranges of `bytes` (a shorter prefix first), as Rust orders byte slices. */
function compareRanges(bytes: Uint8Array, aStart: number, aEnd: number, bStart: number, bEnd: number): number {
  const aLen = aEnd - aStart, bLen = bEnd - bStart;
  const n = Math.min(aLen, bLen);
  for (let i = 0; i < n; i++) {
    const d = bytes[aStart + i]! - bytes[bStart + i]!;
    if (d !== 0) return d;
  }
  return aLen - bLen;
}

/** Reads summary fields inside `bytes[0..end)`; past the end it sets `failed` and returns zeros. */
class SummaryReader {
  pos = 0;
  failed = false;
  constructor(private readonly buf: Uint8Array, private readonly end: number) {}
  u8(): number {
    if (this.pos + 1 > this.end) return this.fail();
    return this.buf[this.pos++]!;
  }
  u32(): number {
    if (this.pos + 4 > this.end) return this.fail();
    const v = readU32(this.buf, this.pos);
    this.pos += 4;
    return v;
  }
  /** A `bytes` field as a range [start, end) of the buffer. */
  bytes(): [number, number] {
    const len = this.u32();
    if (this.failed || this.pos + len > this.end) {
      this.fail();
      return [0, 0];
    }
    const start = this.pos;
    this.pos += len;
    return [start, this.pos];
  }
  private fail(): number {
    this.failed = true;
    this.pos = this.end;
    return 0;
  }
}

/** feed(summary, chunk) of docs/core-api.md, "Incremental recovery". */
function feedWith(summary: Uint8Array, chunk: Uint8Array, canary: ReferenceCanary | null): Fed {
  const fold = resumedFold(summary, chunk, canary);
  if (fold === null) return { ok: false, reason: 'BAD_SUMMARY' };
  fold.run();
  const recovery = fold.report();
  return { ok: true, recovery, summary: recovery.ok ? fold.summary() : summary.slice() };
}

/** A fold over (summary ++ chunk) resumed from the summary, or null when it does not decode. */
function resumedFold(summary: Uint8Array, chunk: Uint8Array, canary: ReferenceCanary | null): RecoveryFold | null {
  let buffer = chunk;
  if (summary.length > 0) {
    buffer = new Uint8Array(summary.length + chunk.length);
    buffer.set(summary, 0);
    buffer.set(chunk, summary.length);
  }
  const fold = new RecoveryFold(buffer, canary);
  return fold.resumeFrom(summary.length) ? fold : null;
}

/** admit-from(summary, request): admission from the summary's fold state alone. */
function admitFromWith(summary: Uint8Array, request: AdmissionRequest | null, canary: ReferenceCanary | null): Admission {
  const fold = resumedFold(summary, new Uint8Array(0), canary);
  if (fold === null) return refuse(RefusalReason.BAD_SUMMARY, 0, 0);
  if (fold.recordCount === 0) return refuse(RefusalReason.NO_RUN, 0, 0);
  if (request === null) return refuse(RefusalReason.BAD_REQUEST, 0, 0);
  const head = fold.recordCount - 1;
  switch (request.tag) {
    case 'RESUME':
      return admitResume(fold, request.interruptId, head, canary, null);
    case 'CONTINUE_FROM':
      return admitContinue(fold, request.seq, head);
    case 'FORK_AT':
      // The summary keeps the latest checkpoint only, not which records are checkpoints.
      if (request.seq > head) return refuse(RefusalReason.BEYOND_HEAD, head, fold.durableLen);
      return refuse(RefusalReason.NEEDS_LOG, request.seq, 0);
  }
}

// ------------------------------------------------------------------ the RecoveryCore

/** recover(log) of docs/core-api.md. Total: never throws. */
export function recover(log: Uint8Array): Recovery {
  return new RecoveryFold(log, null).run().report();
}

/** feed(summary, chunk) of docs/core-api.md, "Incremental recovery". Total: never throws. */
export function feed(summary: Uint8Array, chunk: Uint8Array): Fed {
  return feedWith(summary, chunk, null);
}

/** admit(log, request) of docs/core-api.md. A request the encoding could not carry is BAD_REQUEST. */
export function admit(log: Uint8Array, request: AdmissionRequest): Admission {
  return admitRequest(log, isWellFormedRequest(request) ? request : null, null);
}

export interface ReferenceCoreTestOptions {
  /** Inject one known bug. Tests only: refused unless running under vitest or REMIT_ALLOW_CANARY=1. */
  canary?: ReferenceCanary;
}

function canaryAllowed(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  return env['VITEST'] !== undefined || env['REMIT_ALLOW_CANARY'] === '1';
}

const REFERENCE_CORE_OPTIONS: readonly (keyof ReferenceCoreTestOptions & string)[] = ['canary'] satisfies (keyof ReferenceCoreTestOptions)[];
/** Every ReferenceCanary: the compiler checks the object has each one and no other. */
const REFERENCE_CANARIES = Object.keys({
  'accept-second-claim': true, 'snapshot-on-delta': true, 'done-without-attempt': true, 'link-unchecked': true, 'summary-forgets-prev-kind': true,
} satisfies Record<ReferenceCanary, true>) as readonly ReferenceCanary[];

/**
 * The canary of createReferenceCore's options, or null. Options that are not an object are
 * ArgumentInvalidError; a key it does not know, own or inherited, or a canary it does not have is
 * OptionInvalidError: before, `{ bogus: 1 }` or a misspelt canary made a core without the bug a
 * must-fail test meant to inject, and the test passed for the wrong reason.
 */
function checkedCanary(options: ReferenceCoreTestOptions): ReferenceCanary | null {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ArgumentInvalidError('createReferenceCore(options)', 'an object of createReferenceCore options ({ canary }) or nothing', describe(options));
  }
  const unknown = unknownKey(options, REFERENCE_CORE_OPTIONS);
  if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as Record<string, unknown>)[unknown], notKnown('an option of createReferenceCore', REFERENCE_CORE_OPTIONS));
  const canary = options.canary;
  if (canary === undefined) return null;
  if (!REFERENCE_CANARIES.includes(canary)) {
    throw new OptionInvalidError('canary', canary, `must be ${REFERENCE_CANARIES.map((c) => JSON.stringify(c)).join(', ')} or undefined`);
  }
  return canary;
}

/**
 * A reference core. The shell uses createCore('reference') from ./index.ts, which passes no
 * options; `canary` exists for the equivalence suite's must-fail tests.
 */
export function createReferenceCore(options: ReferenceCoreTestOptions = {}): RecoveryCore {
  const canary = checkedCanary(options);
  if (canary !== null && !canaryAllowed()) {
    throw new OptionInvalidError('canary', canary, 'is for tests only (set REMIT_ALLOW_CANARY=1 outside vitest)');
  }
  const recoverWith = (log: Uint8Array): Recovery => new RecoveryFold(log, canary).run().report();
  return withByteArguments({
    name: 'reference',
    recover: recoverWith,
    admit: (log, request) => admitRequest(log, isWellFormedRequest(request) ? request : null, canary),
    recoverEncoded: (log) => encodeRecovery(recoverWith(log)),
    admitEncoded: (log, request) => encodeAdmission(admitRequest(log, parseAdmissionRequest(request), canary)),
    feed: (summary, chunk) => feedWith(summary, chunk, canary),
    feedEncoded: (summary, chunk) => encodeFed(feedWith(summary, chunk, canary)),
    admitFrom: (summary, request) => admitFromWith(summary, isWellFormedRequest(request) ? request : null, canary),
    admitFromEncoded: (summary, request) => encodeAdmission(admitFromWith(summary, parseAdmissionRequest(request), canary)),
  });
}

/** The reference core without canaries. */
export const reference: RecoveryCore = createReferenceCore();
