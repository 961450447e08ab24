/**
 * The shapes of a store's answers, checked where the sequencer takes them: a custom store that
 * answers `undefined` or an object of another shape is a StoreError naming the store, the
 * operation and the run (`BAD_APPEND_OUTCOME`, `BAD_FORK_OUTCOME`, `BAD_READ`), never a bare
 * TypeError from deep inside the sequencer, and never taken for a lost race. Only the shape is
 * checked here; what the records say is the core's to judge.
 */

import { describeValue, StoreError } from '../errors.js';
import type { AppendOutcome, ForkOutcome, RunListing, RunRead, Store, StoredRecord } from './store.js';

const isWhole = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** Why `outcome` is not an AppendOutcome, or null. */
export function appendOutcomeProblem(outcome: unknown): string | null {
  if (outcome === null || typeof outcome !== 'object') return `${describeValue(outcome)}, not an outcome ({ committed, nextSeq })`;
  const { committed, nextSeq, tail } = outcome as Partial<Record<keyof AppendOutcome | 'tail', unknown>>;
  if (typeof committed !== 'boolean') return `an outcome whose committed is ${describeValue(committed)}, not true or false`;
  if (!isWhole(nextSeq)) return `an outcome whose nextSeq is ${describeValue(nextSeq)}, not a whole number`;
  if (tail !== undefined && !Array.isArray(tail)) return `an outcome whose tail is ${describeValue(tail)}, not an array of records`;
  return null;
}

/** `outcome` as a ForkOutcome, or StoreError BAD_FORK_OUTCOME naming the target run. */
export function checkedForkOutcome(store: Store, targetRunId: string, seq: number, outcome: unknown): ForkOutcome {
  const reason = (outcome as { reason?: unknown } | null)?.reason;
  const committed = (outcome as { committed?: unknown } | null)?.committed;
  if (committed === true || (committed === false && (reason === 'TARGET_EXISTS' || reason === 'SOURCE_TOO_SHORT'))) return outcome as ForkOutcome;
  throw new StoreError(store.description, 'fork', 'BAD_FORK_OUTCOME', { runId: targetRunId, seq }, new Error(
    `the store answered the fork with ${describeValue(outcome)}, not { committed: true } or { committed: false, reason: 'TARGET_EXISTS' | 'SOURCE_TOO_SHORT' }`,
  ));
}

/** `rows` as a run's records read by `operation`, or StoreError BAD_READ naming the run. */
export function checkedRecords(store: Store, operation: string, runId: string, rows: unknown): StoredRecord[] {
  if (!Array.isArray(rows)) throw badRead(store, operation, runId, `${describeValue(rows)}, not an array of records`);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Partial<StoredRecord> | null;
    if (row === null || typeof row !== 'object' || !isWhole(row.seq)) {
      throw badRead(store, operation, runId, `an array whose item ${i} is ${describeValue(row)}, not a record ({ seq, bytes, committedAtMs })`);
    }
  }
  return rows as StoredRecord[];
}

/** `read` as readRun's answer (undefined: the store has no readRun), or StoreError BAD_READ. */
export function checkedRunRead(store: Store, runId: string, read: unknown): RunRead | undefined {
  if (read === undefined) return undefined;
  const found = (read as { found?: unknown } | null)?.found;
  if (read === null || typeof read !== 'object' || (found !== null && (typeof found !== 'object' || found === undefined))) {
    throw badRead(store, 'readRun', runId, `${describeValue(read)}, not a run read ({ found, records })`);
  }
  checkedRecords(store, 'readRun', runId, (read as { records?: unknown }).records);
  return read as RunRead;
}

/** `listings` as listRuns' answer, or StoreError BAD_READ. */
export function checkedListings(store: Store, listings: unknown): RunListing[] {
  if (!Array.isArray(listings)) throw badRead(store, 'listRuns', undefined, `${describeValue(listings)}, not an array of run listings`);
  for (let i = 0; i < listings.length; i++) {
    const listing = listings[i] as Partial<RunListing> | null;
    if (listing === null || typeof listing !== 'object' || typeof listing.runId !== 'string') {
      throw badRead(store, 'listRuns', undefined, `an array whose item ${i} is ${describeValue(listing)}, not a listing ({ runId, nextSeq, createdAtMs, ... })`);
    }
  }
  return listings as RunListing[];
}

/** `runIds` as listRunsToRecover's answer, or StoreError BAD_READ. */
export function checkedRunIds(store: Store, runIds: unknown): string[] {
  if (!Array.isArray(runIds) || runIds.some((id) => typeof id !== 'string')) {
    throw badRead(store, 'listRunsToRecover', undefined, `${describeValue(runIds)}, not an array of run ids`);
  }
  return runIds as string[];
}

function badRead(store: Store, operation: string, runId: string | undefined, what: string): StoreError {
  return new StoreError(store.description, operation, 'BAD_READ', runId === undefined ? {} : { runId }, new Error(`the store answered ${what}`));
}
