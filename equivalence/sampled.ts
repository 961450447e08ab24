/**
 * The campaign's per-log check: the full check of ./compare.ts (`everyPrefix`) asks every request
 * at every record boundary, which costs O(records²) calls per log; the campaign instead samples the
 * requests and byte cuts from a seeded PRNG, so one history costs O(records) calls and a million
 * histories fit in well under an hour. Per log it asks:
 *
 * - at EVERY record boundary (and the whole log when it ends in a partial record): recover, one
 *   RESUME (1 in 4 a reserved id no park of the log uses, when there are such probes; else an id
 *   the log names, 3 in 4 when it names any, else one of the four special ids), one
 *   FORK_AT and one CONTINUE_FROM (seq below the head, the head, one past it, or 0xFFFFFFFF), and
 *   at one boundary in `malformedEvery` one of the 15 malformed requests;
 * - at ONE boundary chosen at random: every request of the full check (./requests.ts);
 * - at `cutsPerLog` byte cuts (a boundary +1/4/11/12/13/17 or -1/4/5; any byte with cuts 'all')
 *   and `arbitraryCutsPerLog` uniform cuts: recover and two of the four cut requests;
 * - the split property (incremental recovery): the log fed in two pieces cut at one random
 *   boundary (with three of that boundary's requests admitted from the summary) and at one random
 *   byte, and fed record by record.
 *
 * Every sampled request is one the full check asks at that point, so the full check is a superset
 * (the shrinker relies on this). `Coverage` counts what was asked and answered, so a campaign shows
 * that every kind of request, cut and outcome was exercised.
 */

import { RunStatus } from 'remit/core';
import { LogErrorName } from 'remit/core';
import { recordBoundaries, type CoreComparison, type Divergence } from './compare.js';
import {
  continueFrom, forkAt, MALFORMED_REQUESTS, planRequests, requestsAtCut, requestsAtPrefix, SPECIAL_RESUMES, type RequestPlan,
} from './requests.js';

const MAX_SEQ = 0xffff_ffff;

/** A small seeded PRNG (mulberry32): fast, and the same sequence on every platform. */
export class SamplingRng {
  private state: number;
  constructor(seed: number) {
    this.state = seed | 0;
  }
  next32(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** Uniform in 0..n-1 (n ≥ 1). */
  below(n: number): number {
    return Math.floor((this.next32() / 0x1_0000_0000) * n);
  }
}

/** Counts by name of what the campaign asked and what the cores answered. */
export class Coverage {
  readonly counts = new Map<string, number>();
  add(key: string, n = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + n);
  }
  merge(entries: Iterable<[string, number]>): void {
    for (const [k, n] of entries) this.add(k, n);
  }
  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}

export interface SampledCheckOptions {
  cuts: 'boundary±' | 'all' | 'none';
  /** Cuts drawn from the systematic set (boundary± offsets, or every byte with 'all'). */
  cutsPerLog: number;
  /** Uniform cuts anywhere in the log (asked with every `cuts` setting, as the old extra cuts were). */
  arbitraryCutsPerLog: number;
  /** A malformed request at one boundary in this many. */
  malformedEvery: number;
}

export const DEFAULT_SAMPLED_CHECK: SampledCheckOptions = { cuts: 'boundary±', cutsPerLog: 8, arbitraryCutsPerLog: 2, malformedEvery: 2 };

/**
 * The boundary± offsets of the full check (compare.ts). (Its cut at the log's end never happens:
 * the end is always a boundary there, a partial record's end included.)
 */
export const CUT_OFFSETS = [1, 4, 11, 12, 13, 17, -1, -4, -5, -8, -9] as const;

/** The split-property checks of one log (./compare.ts, `split` and `recordByRecord`). */
const SPLIT_KINDS: readonly string[] = ['split at a boundary (3 requests from the summary)', 'split inside a record', 'fed record by record'];

/** A RESUME of one of `RequestPlan.reservedResumes`. */
const RESERVED_PROBE_KIND = 'RESUME of a reserved id no park uses';

/** The kinds of request the campaign must ask (Coverage keys), for the end-of-campaign check. */
export const REQUEST_KINDS: readonly string[] = [
  'RESUME of an id the log names', RESERVED_PROBE_KIND, ...SPECIAL_RESUMES.map((r) => `RESUME of ${r.name}`),
  'FORK_AT below the head', 'FORK_AT the head', 'FORK_AT one past the head', 'FORK_AT 0xFFFFFFFF',
  'CONTINUE_FROM below the head', 'CONTINUE_FROM the head', 'CONTINUE_FROM one past the head', 'CONTINUE_FROM 0xFFFFFFFF',
  ...MALFORMED_REQUESTS.map((_, i) => `malformed request #${i}`),
  'every request at one boundary',
  ...SPLIT_KINDS,
];

export const CUT_KINDS: readonly string[] = [
  ...CUT_OFFSETS.map((d) => `cut at a boundary ${d > 0 ? '+' : ''}${d}`), 'cut anywhere',
  'cut: RESUME', 'cut: CONTINUE_FROM the head', 'cut: FORK_AT the head', 'cut: CONTINUE_FROM one past the head',
];

const CUT_REQUEST_KINDS = CUT_KINDS.slice(-4);
const REFUSAL_NAMES = ['accepted', 'ALREADY_CONSUMED', 'NOT_PARKED', 'UNKNOWN_INTERRUPT', 'NOT_A_CHECKPOINT', 'BEYOND_HEAD',
  'IMPLICIT_FORK', 'LOG_INVALID', 'NO_RUN', 'BAD_REQUEST'];
const STATUS_NAMES: Record<number, string> = Object.fromEntries(Object.entries(RunStatus).map(([k, v]) => [v, k]));
const ACTION_NAMES = ['NONE', 'RUN_PURE', 'BEGIN_EFFECT', 'INVOKE_EFFECT', 'FINISH_EFFECT', 'PARK', 'AWAIT_RESUME',
  'FINISH_INTERRUPT', 'FINISH_RUN', 'AWAIT_ATTEMPT'];

const u32At = (b: Uint8Array, i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;

/** Outcome names by code, built once (the campaign counts a few hundred thousand a second). */
const recoveryNames = new Map<number, string>();
const ADMISSION_NAMES = REFUSAL_NAMES.map((n) => `admit: ${n}`);

/** "recover: RUNNING/RUN_PURE" or "recover: error BAD_CHECKSUM", read from the agreed encoding. */
function recoveryOutcome(enc: Uint8Array): string {
  let code: number;
  if (enc[0] === 0) code = enc[1]!;
  else {
    let at = 14; // tag, status, record_count, durable_len, torn_len
    for (let field = 0; field < 4; field++) at += 4 + u32At(enc, at); // run_id, workflow, version, fingerprint
    at += 16; // checkpoint and snapshot seq/offset
    code = 0x10000 | (enc[1]! << 8) | enc[at]!;
  }
  let name = recoveryNames.get(code);
  if (name === undefined) {
    name = code < 0x10000
      ? `recover: error ${LogErrorName[code as 1] ?? code}`
      : `recover: ${STATUS_NAMES[(code >> 8) & 0xff] ?? (code >> 8) & 0xff}/${ACTION_NAMES[code & 0xff] ?? code & 0xff}`;
    recoveryNames.set(code, name);
  }
  return name;
}

function admissionOutcome(enc: Uint8Array): string {
  return ADMISSION_NAMES[enc[1]!] ?? `admit: ${enc[1]}`;
}

const SEQ_KINDS = ['0xFFFFFFFF', 'one past the head', 'the head', 'below the head'] as const;
const FORK_KINDS = SEQ_KINDS.map((k) => `FORK_AT ${k}`);
const CONTINUE_KINDS = SEQ_KINDS.map((k) => `CONTINUE_FROM ${k}`);
const MALFORMED_KINDS = MALFORMED_REQUESTS.map((_, i) => `malformed request #${i}`);
const SPECIAL_KINDS = SPECIAL_RESUMES.map((r) => `RESUME of ${r.name}`);
const BOUNDARY_CUT_KINDS = CUT_OFFSETS.map((d) => `cut at a boundary ${d > 0 ? '+' : ''}${d}`);

/**
 * Where a FORK_AT / CONTINUE_FROM seq falls relative to the head (-1 for an empty prefix), as an
 * index into SEQ_KINDS: the answers change exactly at these places.
 */
function pickSeqKind(rng: SamplingRng, head: number): number {
  const r = rng.below(8);
  if (r === 0) return 0;
  if (r <= 2 || head < 0) return 1;
  if (r <= 4 || head === 0) return 2;
  return 3;
}

function seqOfKind(kind: number, head: number, rng: SamplingRng): number {
  return kind === 0 ? MAX_SEQ : kind === 1 ? head + 1 : kind === 2 ? head : rng.below(head);
}

/** One log's sampled check; the first divergence (shortest prefix first, then cuts), or null. */
export class SampledCheck {
  constructor(
    private readonly comparison: CoreComparison,
    private readonly options: SampledCheckOptions,
    readonly coverage: Coverage,
  ) {}

  run(log: Uint8Array, rng: SamplingRng): Divergence | null {
    const plan = planRequests(log);
    const bounds = recordBoundaries(log);
    if (bounds[bounds.length - 1] !== log.length) bounds.push(log.length); // a partial record at the end
    const everyRequestAt = rng.below(bounds.length);
    for (let k = 0; k < bounds.length; k++) {
      const prefix = log.subarray(0, bounds[k]);
      const d = this.recover(prefix) ?? (k === everyRequestAt ? this.everyRequest(prefix, plan, k) : this.someRequests(prefix, plan, k, rng));
      if (d) return d;
    }
    return this.splits(log, bounds, plan, rng) ?? this.cuts(log, bounds, plan, rng);
  }

  private splits(log: Uint8Array, bounds: number[], plan: RequestPlan, rng: SamplingRng): Divergence | null {
    const k = rng.below(bounds.length);
    const all = requestsAtPrefix(plan, k);
    const picked = [0, 1, 2].map(() => all[rng.below(all.length)]!);
    this.coverage.add(SPLIT_KINDS[0]!);
    const d = this.comparison.split(log, bounds[k]!, picked);
    if (d) return d;
    this.coverage.add(SPLIT_KINDS[1]!);
    return this.comparison.split(log, rng.below(log.length + 1)) ?? (this.coverage.add(SPLIT_KINDS[2]!), this.comparison.recordByRecord(log, bounds));
  }

  private recover(prefix: Uint8Array): Divergence | null {
    const d = this.comparison.recover(prefix);
    if (!d) this.coverage.add(recoveryOutcome(this.comparison.lastAgreed));
    return d;
  }

  private admit(prefix: Uint8Array, request: Uint8Array, kind: string): Divergence | null {
    this.coverage.add(kind);
    const d = this.comparison.admit(prefix, request);
    if (!d) this.coverage.add(admissionOutcome(this.comparison.lastAgreed));
    return d;
  }

  private everyRequest(prefix: Uint8Array, plan: RequestPlan, recordCount: number): Divergence | null {
    this.coverage.add('every request at one boundary');
    for (const r of requestsAtPrefix(plan, recordCount)) {
      const d = this.comparison.admit(prefix, r);
      if (d) return d;
      this.coverage.add(admissionOutcome(this.comparison.lastAgreed));
    }
    return null;
  }

  /** One resume, one FORK_AT, one CONTINUE_FROM, sometimes one malformed request. */
  private someRequests(prefix: Uint8Array, plan: RequestPlan, recordCount: number, rng: SamplingRng): Divergence | null {
    const head = recordCount - 1;
    const fork = pickSeqKind(rng, head);
    const cont = pickSeqKind(rng, head);
    let d = this.admitResume(prefix, plan, rng)
      ?? this.admit(prefix, forkAt(seqOfKind(fork, head, rng)), FORK_KINDS[fork]!)
      ?? this.admit(prefix, continueFrom(seqOfKind(cont, head, rng)), CONTINUE_KINDS[cont]!);
    if (!d && rng.below(this.options.malformedEvery) === 0) {
      const m = rng.below(MALFORMED_REQUESTS.length);
      d = this.admit(prefix, MALFORMED_REQUESTS[m]!, MALFORMED_KINDS[m]!);
    }
    return d;
  }

  private admitResume(prefix: Uint8Array, plan: RequestPlan, rng: SamplingRng): Divergence | null {
    if (plan.reservedResumes.length > 0 && rng.below(4) === 0) {
      return this.admit(prefix, plan.reservedResumes[rng.below(plan.reservedResumes.length)]!, RESERVED_PROBE_KIND);
    }
    if (plan.idResumes.length > 0 && rng.below(4) !== 0) {
      return this.admit(prefix, plan.idResumes[rng.below(plan.idResumes.length)]!, 'RESUME of an id the log names');
    }
    const s = rng.below(SPECIAL_RESUMES.length);
    return this.admit(prefix, SPECIAL_RESUMES[s]!.request, SPECIAL_KINDS[s]!);
  }

  private cuts(log: Uint8Array, bounds: number[], plan: RequestPlan, rng: SamplingRng): Divergence | null {
    const n = log.length;
    const isBoundary = (x: number) => bounds.includes(x);
    const tries = this.options.cuts === 'none' ? 0 : this.options.cutsPerLog;
    const cuts: Array<[number, string]> = [];
    for (let i = 0; i < tries; i++) {
      const cut = this.options.cuts === 'all' ? this.anyCut(n, isBoundary, rng, 'cut at any byte') : this.boundaryCut(n, bounds, isBoundary, rng);
      if (cut) cuts.push(cut);
    }
    for (let i = 0; i < this.options.arbitraryCutsPerLog; i++) {
      const cut = this.anyCut(n, isBoundary, rng, 'cut anywhere');
      if (cut) cuts.push(cut);
    }
    for (const [cut, kind] of cuts) {
      this.coverage.add(kind);
      const prefix = log.subarray(0, cut);
      let recordsBefore = -1;
      for (const b of bounds) if (b < cut) recordsBefore++;
      const requests = requestsAtCut(plan, recordsBefore);
      const first = rng.below(4);
      const second = (first + 1 + rng.below(3)) % 4;
      const d = this.recover(prefix)
        ?? this.admit(prefix, requests[first]!, CUT_REQUEST_KINDS[first]!)
        ?? this.admit(prefix, requests[second]!, CUT_REQUEST_KINDS[second]!);
      if (d) return d;
    }
    return null;
  }

  private boundaryCut(n: number, bounds: number[], isBoundary: (x: number) => boolean, rng: SamplingRng): [number, string] | null {
    for (let attempt = 0; attempt < 4; attempt++) {
      const which = rng.below(CUT_OFFSETS.length);
      const d = CUT_OFFSETS[which]!;
      const cut = bounds[rng.below(bounds.length)]! + d;
      if (cut >= 0 && cut <= n && !isBoundary(cut)) return [cut, BOUNDARY_CUT_KINDS[which]!];
    }
    return null;
  }

  private anyCut(n: number, isBoundary: (x: number) => boolean, rng: SamplingRng, kind: string): [number, string] | null {
    for (let attempt = 0; attempt < 4; attempt++) {
      const cut = rng.below(n + 1);
      if (!isBoundary(cut)) return [cut, kind];
    }
    return null;
  }
}
