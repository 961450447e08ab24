/**
 * The invocation fence's shell side (docs/guide.md, "Concurrent sequencers"): a handler is called
 * only by the sequencer whose conditional append of EFFECT_ATTEMPT committed. This module holds what
 * that takes besides the log: the lease written into each attempt, the registry of effect calls
 * this thread is making, and the takeover rule applied to an attempt that has no
 * outcome yet (the core's AWAIT_ATTEMPT). The core stays a pure function of the log: every
 * decision that needs a clock is made here.
 */

import { assert } from '../assert.js';
import { describeThrown, OptionInvalidError, type ErrorSubject } from '../errors.js';
import { decodeJson, encodeJson } from '../json.js';

/** Default effect lease (createRemit({ effectLeaseMs })): 30 s. */
export const DEFAULT_EFFECT_LEASE_MS = 30_000;

/** What a sequencer needs to claim and judge attempts (the Remit instance's settings). */
export interface FenceSettings {
  /** Written as the owner of every attempt this instance claims. Two live processes must never share it. */
  readonly instanceId: string;
  /** Lease of an attempt, unless its effect node sets `leaseMs`. */
  readonly effectLeaseMs: number;
  /** The clock leases are read against (epoch ms). Date.now outside tests. */
  readonly now: () => number;
  /**
   * Test-only: 'off' switches the fence off (a taken-over attempt is invoked without claiming a
   * new one), so the model-based tests can show their checks catch it. Never set by createRemit.
   */
  readonly canary?: 'off';
}

/** The lease an EFFECT_ATTEMPT carries (opaque bytes to the core): UTF-8 JSON. */
export interface Lease {
  owner: string;
  leaseUntilMs: number;
}

/** The greatest time a Date holds, either side of the epoch (ECMA-262's time value range). */
const MAX_DATE_MS = 8.64e15;

/**
 * The lease clock (the fence's `now`: Date.now outside tests) read once, for a decision or for a
 * lease `aheadMs` long. A reading that is not a number of milliseconds since the epoch that a Date
 * can hold, `aheadMs` later too, is refused with OptionInvalidError naming the run, the seq and
 * the node, before anything is written: a stub of Date.now without a return value answers
 * undefined, and a lease stamped with it was stored as `"leaseUntilMs": null`, which reads as
 * unreadable, and so as taken over at once by any other instance, its handler still running.
 */
export function readLeaseClock(settings: FenceSettings, subject: ErrorSubject, aheadMs = 0): number {
  const reading: unknown = settings.now();
  if (typeof reading !== 'number' || !Number.isFinite(reading) || Math.abs(reading) > MAX_DATE_MS || Math.abs(reading + aheadMs) > MAX_DATE_MS) {
    throw new OptionInvalidError(
      'now', reading,
      `(the clock effect leases are read against: Date.now) returned something that is not a number of milliseconds since the epoch within a Date's range${aheadMs > 0 ? `, ${aheadMs} ms (the lease) later too` : ''} ` +
        '(a stub of Date.now without a return value?); no attempt was claimed or taken over, no handler was called and nothing was written',
      subject,
    );
  }
  return reading;
}

export function encodeLease(lease: Lease): Uint8Array {
  return encodeJson({ owner: lease.owner, leaseUntilMs: lease.leaseUntilMs }).bytes;
}

/**
 * The lease of an attempt record, or null when it is not one the shell writes (the core does not
 * look inside it). An unreadable lease is treated as expired, unless a call of this thread is
 * running the effect (step.ts looks the effect up in the registry whatever its lease reads as): this
 * library no longer writes one (readLeaseClock refuses a reading that is not a time; an older
 * version stamped a stubbed Date.now's undefined as null), and refusing to ever take it over would
 * wedge the run.
 */
export function decodeLease(bytes: Uint8Array): Lease | null {
  let value: unknown;
  try {
    value = decodeJson(bytes);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { owner, leaseUntilMs } = value as { owner?: unknown; leaseUntilMs?: unknown };
  if (typeof owner !== 'string' || typeof leaseUntilMs !== 'number' || !Number.isFinite(leaseUntilMs)) return null;
  return { owner, leaseUntilMs };
}

/** EFFECT_RELEASED's reason (opaque to the core): UTF-8 JSON `{"error": message}`. */
export function encodeReleaseReason(cause: unknown): Uint8Array {
  const message = describeThrown(cause);
  return encodeJson({ error: message.length > 1000 ? `${message.slice(0, 1000)}…` : message }).bytes;
}

/**
 * Effect calls this thread is making, keyed by (instance id, run id, idempotency key, the run's
 * record 0: `id` below). An entry is
 * added BEFORE the attempt's conditional append and removed when the call ends however it ends, so
 * a sequencer of this instance that finds the instance's own attempt without an outcome knows
 * whether that attempt is being executed right now (entry present) or was abandoned (a crash, a
 * thrown hook, a lost connection: no entry). JavaScript runs this synchronously, so checking and
 * adding are one step.
 */
class InFlightCalls {
  constructor(private readonly calls: Set<string>) {}

  /**
   * `run` tells apart runs of one id kept in different stores (a tenant's database each, one
   * instance id for the process): it is a digest of the run's record 0, which a store never
   * rewrites, so every handle on the same data gives the same one. Two stores whose runs share an
   * id and record 0 share entries: a call then waits for the other, never calls twice.
   */
  private static id(instanceId: string, runId: string, key: string, run: string): string {
    return JSON.stringify([instanceId, runId, key, run]);
  }

  /** Register a call; null when one is registered already (another call of this instance has it). */
  enter(instanceId: string, runId: string, key: string, run: string): { leave(): void } | null {
    const id = InFlightCalls.id(instanceId, runId, key, run);
    if (this.calls.has(id)) return null;
    this.calls.add(id);
    let left = false;
    return {
      leave: () => {
        assert(!left, () => `effect call ${id} left twice`);
        left = true;
        this.calls.delete(id);
      },
    };
  }

  has(instanceId: string, runId: string, key: string, run: string): boolean {
    return this.calls.has(InFlightCalls.id(instanceId, runId, key, run));
  }

  /**
   * Whether a call of this thread, under any instance id, is claiming or executing this effect: for
   * an attempt whose lease is unreadable, which names no owner to look up. Goes through every
   * entry, on that rare path only.
   */
  hasAnyOwner(runId: string, key: string, run: string): boolean {
    for (const id of this.calls) {
      const [, entryRunId, entryKey, entryRun] = JSON.parse(id) as string[];
      if (entryRunId === runId && entryKey === key && entryRun === run) return true;
    }
    return false;
  }
}

/**
 * The registry's entries, one set per thread, kept on globalThis: two copies of the library loaded
 * in one process (two installed versions, a bundle beside the package) would otherwise each have
 * their own, and one copy would take over an attempt the other is executing under the same id.
 */
const CALLS_KEY = Symbol.for('remit.fence.inFlightCalls');

function sharedCalls(): Set<string> {
  const holder = globalThis as { [CALLS_KEY]?: Set<string> };
  return (holder[CALLS_KEY] ??= new Set<string>());
}

/**
 * One registry per thread (globalThis is a thread's): instances of one thread that share an id
 * (one replica, several Remit objects) share it too. Another thread is another instance
 * (`pod-1#thread-3`), which this registry does not see: its attempts are waited for by their leases.
 */
export const inFlightCalls = new InFlightCalls(sharedCalls());

/** Whether a sequencer may claim the next attempt of an attempt that has no outcome yet, and why. */
export type TakeoverDecision =
  | { takeover: true; reason: 'lease-expired' | 'own-idle' | 'lease-unreadable' }
  | { takeover: false; owner: string; leaseExpiresAtMs: number; retryAfterMs: number; runningHere: boolean };

/**
 * How long to wait before looking again at an attempt a call of this very process is running: a
 * poll interval, not the lease's remaining time, since that call ends whenever its handler returns
 * (and keeps the attempt past its lease if the handler is slow).
 */
export const OWN_CALL_RETRY_MS = 50;

/**
 * The takeover rule (docs/guide.md, "Concurrent sequencers"). Attempt a of an effect has no outcome;
 * the caller may claim attempt a + 1 only if no call of this thread is executing attempt a
 * (`runningHere`: the owner's entry in the registry, or any entry for the effect when the lease is
 * unreadable; such a call is known to be alive, whatever its lease says) and:
 * - its owner is this instance (a crash, a thrown hook or a lost connection left it idle: the owner
 *   itself is the only one that could be running it, and it is not), or
 * - its lease has expired by the caller's clock, or
 * - its lease is unreadable (not written by this library).
 * Otherwise the attempt is in flight: the caller writes nothing and calls nothing.
 */
export function decideTakeover(lease: Lease | null, settings: FenceSettings, runningHere: boolean, subject: ErrorSubject = {}): TakeoverDecision {
  // Read first, whatever the decision: a clock that gives no time is refused, never judged by.
  const now = readLeaseClock(settings, subject);
  if (runningHere) {
    return { takeover: false, owner: lease?.owner ?? '', leaseExpiresAtMs: lease?.leaseUntilMs ?? now, retryAfterMs: OWN_CALL_RETRY_MS, runningHere: true };
  }
  if (lease === null) return { takeover: true, reason: 'lease-unreadable' };
  if (lease.owner === settings.instanceId) return { takeover: true, reason: 'own-idle' };
  if (now >= lease.leaseUntilMs) return { takeover: true, reason: 'lease-expired' };
  const retryAfterMs = Math.max(1, Math.ceil(lease.leaseUntilMs - now));
  return { takeover: false, owner: lease.owner, leaseExpiresAtMs: lease.leaseUntilMs, retryAfterMs, runningHere: false };
}
