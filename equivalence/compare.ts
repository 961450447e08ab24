/**
 * The equivalence check: two cores must return byte-identical encodings for a log at every record
 * boundary (recover + every request of ./requests.ts) and at byte cut points (recover + a few
 * requests). Exceptions count as outputs ("threw: ..."), so a trap is a divergence, not a crash;
 * both cores must be total, so a throw fails the check even when both threw.
 *
 * The split property (incremental recovery, docs/core-api.md): at the same points, each core fed
 * the log in two pieces (the prefix from the empty summary, then the rest from the prefix's
 * summary) must answer what it answers recovering the prefix and the whole log, end with the
 * summary of the whole log, and admit from the prefix's summary as it admits from the prefix; and
 * the two cores' fed encodings (summaries included) must be byte-identical.
 */

import { decodeLog, EMPTY_SUMMARY, RecordKind, RefusalReason, type RecoveryCore } from 'remit/core';
import { splitRecords } from './mutations.js';
import type { ModelOracle } from './oracle.js';
import { planRequests, requestsAtCut, requestsAtPrefix } from './requests.js';
import { reservedInterruptId } from './reserved.js';

export interface Divergence {
  /** 'feed' / 'admitFrom': the two cores differ; 'split': one core fed in pieces differs from itself whole. */
  operation: 'recover' | 'admit' | 'feed' | 'admitFrom' | 'split';
  /** For the split property: where the log was cut. */
  cut?: number;
  coreNames: [string, string];
  log: Uint8Array;
  request: Uint8Array | null;
  outputs: [string, string];
}

export interface CompareOptions {
  /** 'all': recover at every byte length; 'boundary±': a few cuts around each record boundary. */
  cuts?: 'all' | 'boundary±' | 'none';
  /** Extra cut points (arbitrary, e.g. from fast-check), taken modulo the log length + 1. */
  extraCuts?: readonly number[];
  /** Check the split property at every boundary and cut too (default true). */
  splits?: boolean;
}

export interface CompareStats {
  recoverCalls: number;
  admitCalls: number;
  /** Split-property checks (each: two feeds per core, the admissions from the summary). */
  splitChecks: number;
  /** admitFrom answers NEEDS_LOG to a RESUME of a reserved id where admit answers from the log (`reservedResumeNeedsLog`). */
  reservedNeedsLog: number;
}

/** A fed encoding split into its parts (null: the summary was refused, or not a fed encoding). */
export interface FedParts {
  recovery: Uint8Array;
  summary: Uint8Array;
  /** Where the next chunk starts: the recovery's durable_len, or (on a recovery error) `from`. */
  next: number;
}

const u32At = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** Parts of a fed encoding; the chunk fed started at `from`. */
export function fedParts(fed: Uint8Array, from: number): FedParts | null {
  if (fed.length < 5 || fed[0] !== 1) return null;
  const len = u32At(fed, 1);
  if (5 + len > fed.length) return null;
  const recovery = fed.subarray(5, 5 + len);
  const next = recovery[0] === 1 ? u32At(recovery, 6) : from;
  return { recovery, summary: fed.subarray(5 + len), next };
}

export const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');

/** What a core call gave: its bytes, or the message of what it threw. */
type Outcome = Uint8Array | { threw: string };

function outcome(f: () => Uint8Array): Outcome {
  try {
    return f();
  } catch (e) {
    return { threw: String((e as Error)?.message ?? e) };
  }
}

function bytesEqual(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** Equal bytes, neither a throw: both cores are total, so a throw fails even when both threw. */
function same(x: Outcome, y: Outcome): boolean {
  return x instanceof Uint8Array && y instanceof Uint8Array && bytesEqual(x, y);
}

/** The printable form of an outcome (hex, or "threw: ..."), only built for a divergence. */
function shown(o: Outcome): string {
  return o instanceof Uint8Array ? hex(o) : `threw: ${o.threw}`;
}

/** Record boundaries as the length fields say (0, end of each record, ...). */
export function recordBoundaries(log: Uint8Array): number[] {
  const bounds = [0];
  for (const c of splitRecords(log).chunks) bounds.push(bounds[bounds.length - 1]! + c.length);
  return bounds;
}

function cutPoints(log: Uint8Array, bounds: number[], options: CompareOptions): number[] {
  const n = log.length;
  const cuts = new Set<number>();
  if (options.cuts === 'all') for (let i = 0; i <= n; i++) cuts.add(i);
  else if (options.cuts !== 'none') {
    for (const b of bounds) for (const d of [1, 4, 11, 12, 13, 17, -1, -4, -5, -8, -9]) if (b + d >= 0 && b + d <= n) cuts.add(b + d);
    cuts.add(n);
  }
  for (const x of options.extraCuts ?? []) cuts.add(x % (n + 1));
  for (const b of bounds) cuts.delete(b);
  return [...cuts].sort((a, b) => a - b);
}

const RESUME_TAG = 1;

/** The seq of the last RESUME_CLAIMED of a log that recovers (the summary's last claim), or -1. */
function lastClaimSeq(log: Uint8Array): number {
  const records = decodeLog(log).records;
  for (let i = records.length - 1; i >= 0; i--) if (records[i]!.kind === RecordKind.RESUME_CLAIMED) return i;
  return -1;
}

/**
 * Whether NEEDS_LOG from a summary is the answer to `request` (docs/core-api.md, "Admission from a
 * summary"): a RESUME of a reserved id `name@s` (./reserved.ts) with s below the head, which the
 * summary does not list (its claim, if any, is record s + 1 of the log), answered NEEDS_LOG at
 * seq s + 1, offset 0; and the log's own answer is one the summary cannot give: ALREADY_CONSUMED by
 * a claim at s + 1 that is not the log's last claim (the summary keeps the last claim, which is
 * also a CLAIMED phase's), or the refusals of an id not in the table (NOT_PARKED, UNKNOWN_INTERRUPT).
 */
function reservedResumeNeedsLog(request: Uint8Array, prefix: Uint8Array, summary: Uint8Array, fromSummary: Uint8Array, logAnswer: Uint8Array): boolean {
  if (request.length < 5 || request[0] !== RESUME_TAG || u32At(request, 1) !== request.length - 5) return false;
  const reserved = reservedInterruptId(request.subarray(5));
  if (reserved === null || summary.length < 5) return false;
  const head = u32At(summary, 1) - 1;
  const claimSeq = reserved.seq + 1;
  if (!(reserved.seq < head) || u32At(fromSummary, 3) !== claimSeq || u32At(fromSummary, 7) !== 0) return false;
  if (logAnswer[0] !== 2) return false;
  const reason = logAnswer[1];
  if (reason === RefusalReason.ALREADY_CONSUMED) return u32At(logAnswer, 3) === claimSeq && lastClaimSeq(prefix) !== claimSeq;
  return reason === RefusalReason.NOT_PARKED || reason === RefusalReason.UNKNOWN_INTERRUPT;
}

export class CoreComparison {
  readonly stats: CompareStats = { recoverCalls: 0, admitCalls: 0, splitChecks: 0, reservedNeedsLog: 0 };
  /** The agreed encoding of the last call that agreed (for outcome counts). */
  lastAgreed: Uint8Array = new Uint8Array(0);
  /** With an oracle, every answer the two cores agree on is also checked against the extracted model. */
  constructor(readonly a: RecoveryCore, readonly b: RecoveryCore, readonly oracle: ModelOracle | null = null) {}

  recover(log: Uint8Array): Divergence | null {
    this.stats.recoverCalls++;
    const x = outcome(() => this.a.recoverEncoded(log));
    const y = outcome(() => this.b.recoverEncoded(log));
    if (!this.agreed(x, y)) return this.divergence('recover', log, null, x, y);
    return this.oracle ? this.oracle.checkRecover(log, this.lastAgreed) : null;
  }

  admit(log: Uint8Array, request: Uint8Array): Divergence | null {
    this.stats.admitCalls++;
    const x = outcome(() => this.a.admitEncoded(log, request));
    const y = outcome(() => this.b.admitEncoded(log, request));
    if (!this.agreed(x, y)) return this.divergence('admit', log, request, x, y);
    return this.oracle ? this.oracle.checkAdmit(log, request, this.lastAgreed) : null;
  }

  private agreed(x: Outcome, y: Outcome): boolean {
    if (!same(x, y)) return false;
    this.lastAgreed = y as Uint8Array;
    return true;
  }

  private divergence(operation: Divergence['operation'], log: Uint8Array, request: Uint8Array | null, x: Outcome, y: Outcome): Divergence {
    return { operation, coreNames: [this.a.name, this.b.name], log: log.slice(), request, outputs: [shown(x), shown(y)] };
  }

  /**
   * The split property at `cut` (any byte position of `log`), for `requests` from the prefix's
   * summary too. Returns the first divergence: between the cores (feed, admitFrom), or of one core
   * with itself (split: fed in pieces vs recovered whole, or admitted from the summary vs the log).
   */
  split(log: Uint8Array, cut: number, requests: readonly Uint8Array[] = []): Divergence | null {
    this.stats.splitChecks++;
    const prefix = log.subarray(0, cut);
    const fa = outcome(() => this.a.feedEncoded(EMPTY_SUMMARY, prefix));
    const fb = outcome(() => this.b.feedEncoded(EMPTY_SUMMARY, prefix));
    if (!same(fa, fb)) return { ...this.divergence('feed', prefix, null, fa, fb), cut };
    const first = fedParts(fa as Uint8Array, 0);
    if (first === null) return { ...this.divergence('feed', prefix, null, fa, fb), cut };
    const rest = log.subarray(first.next);
    const ga = outcome(() => this.a.feedEncoded(first.summary, rest));
    const gb = outcome(() => this.b.feedEncoded(first.summary, rest));
    if (!same(ga, gb)) return { ...this.divergence('feed', log, null, ga, gb), cut };
    const second = fedParts(ga as Uint8Array, first.next);
    if (second === null) return { ...this.divergence('feed', log, null, ga, gb), cut };
    for (const core of [this.a, this.b]) {
      // A summary stands for its log only when that log recovered (on an error feed returns the
      // summary it was given, the empty one here).
      const admitted = first.recovery[0] === 1 ? this.admitFromSummary(core, prefix, first.summary, requests, cut) : null;
      const d = this.selfSplit(core, log, cut, first, second) ?? admitted;
      if (d) return d;
    }
    for (const r of requests) {
      const xa = outcome(() => this.a.admitFromEncoded(first.summary, r));
      const xb = outcome(() => this.b.admitFromEncoded(first.summary, r));
      if (!same(xa, xb)) return { ...this.divergence('admitFrom', prefix, r, xa, xb), cut };
    }
    return null;
  }

  /** One core: the two feeds equal recover(prefix) and recover(log); the last summary is the whole log's. */
  private selfSplit(core: RecoveryCore, log: Uint8Array, cut: number, first: FedParts, second: FedParts): Divergence | null {
    const prefix = log.subarray(0, cut);
    const self = (what: string, x: Outcome, y: Outcome, on: Uint8Array): Divergence => ({
      operation: 'split', cut, coreNames: [`${core.name} fed split at ${cut}`, `${core.name} ${what}`], log: on.slice(), request: null,
      outputs: [shown(x), shown(y)],
    });
    const wholePrefix = outcome(() => core.recoverEncoded(prefix));
    if (!same(first.recovery, wholePrefix)) return self('recover(prefix)', first.recovery, wholePrefix, prefix);
    const { whole, wholeSummary } = this.wholeOf(core, log);
    if (!same(second.recovery, whole)) return self('recover(log)', second.recovery, whole, log);
    if (second.recovery[0] !== 1) return null;
    if (!same(second.summary, wholeSummary)) return self('summary of the whole log', second.summary, wholeSummary, log);
    return null;
  }

  /** Per core: recover(log) and the summary of feeding it whole, computed once per log (every cut asks). */
  private wholeCache: { log: Uint8Array; answers: Map<RecoveryCore, { whole: Outcome; wholeSummary: Outcome }> } | null = null;

  private wholeOf(core: RecoveryCore, log: Uint8Array): { whole: Outcome; wholeSummary: Outcome } {
    if (this.wholeCache?.log !== log) this.wholeCache = { log, answers: new Map() };
    let answer = this.wholeCache.answers.get(core);
    if (answer === undefined) {
      const whole = outcome(() => core.recoverEncoded(log));
      const fed = outcome(() => core.feedEncoded(EMPTY_SUMMARY, log));
      answer = { whole, wholeSummary: fed instanceof Uint8Array ? fedParts(fed, 0)?.summary ?? fed : fed };
      this.wholeCache.answers.set(core, answer);
    }
    return answer;
  }

  /**
   * admitFrom(summary of prefix) = admit(prefix), except NEEDS_LOG, which only FORK_AT at or before
   * the head and RESUME of a reserved id parked before the head may give (`reservedResumeNeedsLog`).
   */
  private admitFromSummary(core: RecoveryCore, prefix: Uint8Array, summary: Uint8Array, requests: readonly Uint8Array[], cut: number): Divergence | null {
    for (const r of requests) {
      const fromSummary = outcome(() => core.admitFromEncoded(summary, r));
      const fromLog = outcome(() => core.admitEncoded(prefix, r));
      if (same(fromSummary, fromLog)) continue;
      const needsLog = fromSummary instanceof Uint8Array && fromSummary[1] === RefusalReason.NEEDS_LOG;
      const logAnswer = fromLog instanceof Uint8Array ? fromLog : null;
      // A fork request the log accepts or refuses as NOT_A_CHECKPOINT: the summary cannot tell which.
      const forkAtOrBeforeHead = r.length === 5 && r[0] === 2 && logAnswer !== null &&
        (logAnswer[0] === 1 || logAnswer[1] === RefusalReason.NOT_A_CHECKPOINT);
      if (needsLog && forkAtOrBeforeHead) continue;
      if (needsLog && logAnswer !== null && reservedResumeNeedsLog(r, prefix, summary, fromSummary, logAnswer)) {
        this.stats.reservedNeedsLog++;
        continue;
      }
      return {
        operation: 'split', cut, coreNames: [`${core.name} admitFrom(summary)`, `${core.name} admit(prefix)`], log: prefix.slice(), request: r,
        outputs: [shown(fromSummary), shown(fromLog)],
      };
    }
    return null;
  }

  /**
   * Any number of cuts: feed the pieces between ascending `cuts` (then the rest), each from the
   * summary the last feed returned and from its durable length (a torn tail is fed again). Each
   * feed must be byte-identical between the cores and equal to that core's recover() of the log so
   * far; the last summary must be the whole log's.
   */
  pieces(log: Uint8Array, cuts: readonly number[]): Divergence | null {
    let summary: Uint8Array = EMPTY_SUMMARY;
    let from = 0;
    let last: FedParts | null = null;
    for (const cut of [...cuts, log.length]) {
      const end = Math.max(cut, from);
      const fa = outcome(() => this.a.feedEncoded(summary, log.subarray(from, end)));
      const fb = outcome(() => this.b.feedEncoded(summary, log.subarray(from, end)));
      if (!same(fa, fb)) return { ...this.divergence('feed', log.subarray(0, end), null, fa, fb), cut: from };
      last = fedParts(fa as Uint8Array, from);
      if (last === null) return { ...this.divergence('feed', log.subarray(0, end), null, fa, fb), cut: from };
      for (const core of [this.a, this.b]) {
        const whole = outcome(() => core.recoverEncoded(log.subarray(0, end)));
        if (!same(last.recovery, whole)) {
          return {
            operation: 'split', cut: end, coreNames: [`${core.name} fed in pieces [${cuts.join(', ')}]`, `${core.name} recover`],
            log: log.slice(0, end), request: null, outputs: [shown(last.recovery), shown(whole)],
          };
        }
      }
      summary = last.summary;
      from = last.next;
    }
    if (last !== null && last.recovery[0] === 1) {
      const whole = outcome(() => this.a.feedEncoded(EMPTY_SUMMARY, log));
      const wholeSummary = whole instanceof Uint8Array ? fedParts(whole, 0)?.summary ?? whole : whole;
      if (!same(summary, wholeSummary)) {
        return {
          operation: 'split', coreNames: [`${this.a.name} fed in pieces [${cuts.join(', ')}]`, `${this.a.name} fed whole`], log: log.slice(),
          request: null, outputs: [shown(summary), shown(wholeSummary)],
        };
      }
    }
    return null;
  }

  /**
   * The sequencer's way: feed the log one record at a time from the running summary; each step
   * must be byte-identical between the cores, and the last must equal each core's recover(log).
   */
  recordByRecord(log: Uint8Array, bounds: readonly number[] = recordBoundaries(log)): Divergence | null {
    let summary: Uint8Array = EMPTY_SUMMARY;
    let from = 0;
    let last: Uint8Array | null = null;
    const ends = [...bounds.slice(1), log.length];
    for (const end of ends) {
      if (end < from) continue;
      const chunk = log.subarray(from, end);
      const fa = outcome(() => this.a.feedEncoded(summary, chunk));
      const fb = outcome(() => this.b.feedEncoded(summary, chunk));
      if (!same(fa, fb)) return { ...this.divergence('feed', log.subarray(0, end), null, fa, fb), cut: from };
      const parts = fedParts(fa as Uint8Array, from);
      if (parts === null) return { ...this.divergence('feed', log.subarray(0, end), null, fa, fb), cut: from };
      summary = parts.summary;
      from = parts.next;
      last = parts.recovery;
    }
    for (const core of [this.a, this.b]) {
      const whole = outcome(() => core.recoverEncoded(log));
      if (last !== null && !same(last, whole)) {
        return {
          operation: 'split', coreNames: [`${core.name} fed record by record`, `${core.name} recover(log)`], log: log.slice(), request: null,
          outputs: [shown(last), shown(whole)],
        };
      }
    }
    return null;
  }

  /** The full check of one log; the first divergence found (shortest prefix first), or null. */
  everyPrefix(log: Uint8Array, options: CompareOptions = {}): Divergence | null {
    const plan = planRequests(log);
    const bounds = recordBoundaries(log);
    const end = bounds[bounds.length - 1]!;
    if (end !== log.length) bounds.push(log.length); // trailing bytes that are not a whole record
    const splits = options.splits !== false;
    for (let k = 0; k < bounds.length; k++) {
      const prefix = log.subarray(0, bounds[k]);
      const requests = requestsAtPrefix(plan, k);
      const d = this.recover(prefix) ?? this.admitAll(prefix, requests) ?? (splits ? this.split(log, bounds[k]!, requests) : null);
      if (d) return d;
    }
    for (const cut of cutPoints(log, bounds, options)) {
      const prefix = log.subarray(0, cut);
      const recordsBefore = bounds.filter((b) => b < cut).length - 1;
      const requests = requestsAtCut(plan, recordsBefore);
      const d = this.recover(prefix) ?? this.admitAll(prefix, requests) ?? (splits ? this.split(log, cut, requests) : null);
      if (d) return d;
    }
    return splits ? this.recordByRecord(log, bounds) : null;
  }

  private admitAll(log: Uint8Array, requests: Uint8Array[]): Divergence | null {
    for (const r of requests) {
      const d = this.admit(log, r);
      if (d) return d;
    }
    return null;
  }
}
