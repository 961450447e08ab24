/**
 * The consume-once gate alone, as resume() runs it (ts-shell/src/remit.ts, resume;
 * sequencer/run-session.ts, reload, admit, flush), in two parts:
 *
 * - `readForClaim`: what resume() reads before it judges the run, the interrupt and the value (a
 *   process that has not opened the run): one read of the run (store.readRun: no stored summary on
 *   these short parked runs, so the whole log), fed to the core from the empty summary.
 * - `claimFromHeld`: the claim itself, from the state that read left: admit from that summary
 *   (admitFrom), append RESUME_CLAIMED at the admitted seq with the run's status hint 'running'. A
 *   lost append reports the records in the way (the AppendOutcome's tail): they are fed to the
 *   summary held and admitFrom is asked again, which refuses (the interrupt is consumed) with no
 *   further read. Without a tail, read again.
 *
 * `claimOnce` is both, as a cold resume() makes them. Shared by the SQLite and PostgreSQL gate suites.
 */

import { EMPTY_SUMMARY, RecordKind, chainValueBefore, concatBytes, encodeRecordV2, type RecoveryCore } from 'remit/core';
import type { Store, StoredRecord } from 'remit';

/** What a racer holds of the run: its log bytes and the core's summary of them. */
export interface Held {
  log: Uint8Array;
  summary: Uint8Array;
}

/** True when this racer's claim committed, false when the core refused it (another racer won). */
export async function claimOnce(store: Store, core: RecoveryCore, runId: string, interruptId: Uint8Array, value: Uint8Array): Promise<boolean> {
  return claimFromHeld(store, core, runId, await readForClaim(store, core, runId), interruptId, value);
}

/** The claim from a read already made: true when it committed, false when the core refused it. */
export async function claimFromHeld(store: Store, core: RecoveryCore, runId: string, held: Held, interruptId: Uint8Array, value: Uint8Array): Promise<boolean> {
  for (;;) {
    const admission = core.admitFrom(held.summary, { tag: 'RESUME', interruptId });
    if (!admission.accepted) return false;
    const claim = encodeRecordV2({ kind: RecordKind.RESUME_CLAIMED, seq: admission.seq, interruptId, value }, chainValueBefore(held.log, admission.offset));
    // The claim moves the run from parked to running: resume() passes that status hint with it.
    const outcome = await store.append(runId, admission.seq, [claim], undefined, 'running');
    if (outcome.committed) return true;
    held = (outcome.tail && catchUp(core, held, outcome.tail)) ?? (await readForClaim(store, core, runId));
  }
}

/** The read resume() makes of a run it has not opened, fed to the core. */
export async function readForClaim(store: Store, core: RecoveryCore, runId: string): Promise<Held> {
  const read = await store.readRun?.(runId);
  // A run with a stored summary is read whole here: the gate suites' parked runs have none.
  const log = read !== undefined && read.found === null ? concatBytes(read.records.map((r) => r.bytes)) : await store.readLog(runId);
  return { log, summary: feedAll(core, runId, EMPTY_SUMMARY, log) };
}

/** Each racer's read of each run (`held[run][racer]`), made before a sample's clock starts. */
export async function readEveryRacer(stores: Store[], core: RecoveryCore, runIds: string[]): Promise<Held[][]> {
  const held: Held[][] = [];
  for (const runId of runIds) held.push(await Promise.all(stores.map((s) => readForClaim(s, core, runId))));
  return held;
}

/** The held state advanced by the records another racer appended; null when they do not recover cleanly. */
function catchUp(core: RecoveryCore, held: Held, tail: StoredRecord[]): Held | null {
  if (tail.length === 0) return null;
  const log = concatBytes([held.log, ...tail.map((r) => r.bytes)]);
  const fed = core.feed(held.summary, log.subarray(held.log.length));
  if (!fed.ok || !fed.recovery.ok || fed.recovery.durableLen !== log.length) return null;
  return { log, summary: fed.summary };
}

function feedAll(core: RecoveryCore, runId: string, summary: Uint8Array, bytes: Uint8Array): Uint8Array {
  const fed = core.feed(summary, bytes);
  if (!fed.ok || !fed.recovery.ok) throw new Error(`run ${runId}: the parked log does not recover`);
  return fed.summary;
}
