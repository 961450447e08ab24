/**
 * The equivalence check: two cores must return byte-identical encodings for a log at every record
 * boundary (recover + every request of ./requests.ts) and at byte cut points (recover + a few
 * requests). Exceptions count as outputs ("threw: ..."), so a trap is a divergence, not a crash;
 * both cores must be total, so a throw fails the check even when both threw.
 */

import type { RecoveryCore } from 'remit/core';
import { splitRecords } from './mutations.js';
import type { ModelOracle } from './oracle.js';
import { planRequests, requestsAtCut, requestsAtPrefix } from './requests.js';

export interface Divergence {
  operation: 'recover' | 'admit';
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
}

export interface CompareStats {
  recoverCalls: number;
  admitCalls: number;
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

export class CoreComparison {
  readonly stats: CompareStats = { recoverCalls: 0, admitCalls: 0 };
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

  private divergence(operation: 'recover' | 'admit', log: Uint8Array, request: Uint8Array | null, x: Outcome, y: Outcome): Divergence {
    return { operation, coreNames: [this.a.name, this.b.name], log: log.slice(), request, outputs: [shown(x), shown(y)] };
  }

  /** The full check of one log; the first divergence found (shortest prefix first), or null. */
  everyPrefix(log: Uint8Array, options: CompareOptions = {}): Divergence | null {
    const plan = planRequests(log);
    const bounds = recordBoundaries(log);
    const end = bounds[bounds.length - 1]!;
    if (end !== log.length) bounds.push(log.length); // trailing bytes that are not a whole record
    for (let k = 0; k < bounds.length; k++) {
      const prefix = log.subarray(0, bounds[k]);
      const d = this.recover(prefix) ?? this.admitAll(prefix, requestsAtPrefix(plan, k));
      if (d) return d;
    }
    for (const cut of cutPoints(log, bounds, options)) {
      const prefix = log.subarray(0, cut);
      const recordsBefore = bounds.filter((b) => b < cut).length - 1;
      const d = this.recover(prefix) ?? this.admitAll(prefix, requestsAtCut(plan, recordsBefore));
      if (d) return d;
    }
    return null;
  }

  private admitAll(log: Uint8Array, requests: Uint8Array[]): Divergence | null {
    for (const r of requests) {
      const d = this.admit(log, r);
      if (d) return d;
    }
    return null;
  }
}
