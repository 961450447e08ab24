/**
 * Small pieces every store shares. A store never interprets a record beyond its sequence number
 * (bytes 4..8 of its frame, docs/log-format.md); it does check that one field, because a record
 * stored at the wrong position would make the whole log unreadable later.
 */

import { describeThrown, describeValue, OptionInvalidError, StoreError } from '../errors.js';
import { isWellFormedUnicode } from '../json.js';
import type { RunListing, RunStatusCorrection, RunStatusHint, StoredRecord } from './store.js';

export type StoreClock = () => number;

/**
 * A store's `clock` option checked (OptionInvalidError unless a function), and wrapped so that
 * each reading is checked too: the times are stored (createdAtMs, updatedAtMs) and listed, so a
 * clock that returns a string, NaN or Infinity is refused at the write that asks for it
 * (OptionInvalidError naming the value; nothing written) instead of being stored as it is; a
 * fraction of a millisecond is dropped. The default reads Date.now() at each call, checked the
 * same way: a test's stub (sinon's `stub(Date, 'now')` answers undefined) or fake timers installed
 * after the store was opened are what it reads, and a stub's undefined is refused, never stored.
 */
export function checkedClock(clock: unknown): StoreClock {
  if (clock === undefined) return checkedReadings(() => Date.now(), '(not given: Date.now) returned something that is not a number of milliseconds since the epoch (a stub of Date.now without a return value?)');
  if (typeof clock !== 'function') throw new OptionInvalidError('clock', clock, 'must be a function returning the time in milliseconds since the epoch (default Date.now)');
  return checkedReadings(clock as () => unknown, 'returned something that is not a number of milliseconds since the epoch');
}

/** `read` wrapped so that a reading that is not milliseconds since the epoch is refused: OptionInvalidError naming `clock`, saying `problem`. */
function checkedReadings(read: () => unknown, problem: string): StoreClock {
  return () => {
    const now = read();
    if (!isEpochMs(now)) throw new OptionInvalidError('clock', now, problem);
    // A fraction (performance.timeOrigin + performance.now()) is kept to the millisecond.
    return Math.floor(now);
  };
}

/** Whether a clock's reading is a number of milliseconds since the epoch a store can keep: finite, a safe integer once its fraction is dropped. */
export function isEpochMs(reading: unknown): reading is number {
  return typeof reading === 'number' && Number.isFinite(reading) && Number.isSafeInteger(Math.floor(reading));
}

/** The smallest frame: a 12-byte header and a 4-byte checksum around an empty payload. */
export const MIN_RECORD_BYTES = 16;

export function recordSeqField(bytes: Uint8Array): number {
  return (bytes[4]! | (bytes[5]! << 8) | (bytes[6]! << 16) | (bytes[7]! << 24)) >>> 0;
}

/** Throws StoreError BAD_RECORD_SEQ unless record i carries seq firstSeq + i. Writes nothing. */
export function checkBatchSeqs(store: string, runId: string, firstSeq: number, records: readonly Uint8Array[], operation: 'append' | 'fork' = 'append'): void {
  if (!Number.isInteger(firstSeq) || firstSeq < 0) {
    // The seq field of an error holds a seq: a value that is not one is named in the message only.
    const seq = typeof firstSeq === 'number' ? { seq: firstSeq } : {};
    throw new StoreError(store, operation, 'BAD_EXPECTED_SEQ', { runId, ...seq }, new Error(`${operation === 'fork' ? 'prefixRecords' : 'expectedSeq'} must be a whole number from 0, got ${describeValue(firstSeq)}`));
  }
  if (!Array.isArray(records)) {
    throw new StoreError(store, operation, 'BAD_RECORDS', { runId, seq: firstSeq }, new Error(`the records must be an array of Uint8Array, got ${describeValue(records)}`));
  }
  records.forEach((bytes, i) => {
    if (!(bytes instanceof Uint8Array)) {
      throw new StoreError(store, operation, 'BAD_RECORDS', { runId, seq: firstSeq + i }, new Error(`record ${i} of the batch must be a Uint8Array, got ${describeValue(bytes)}`));
    }
    if (bytes.length < MIN_RECORD_BYTES || recordSeqField(bytes) !== firstSeq + i) {
      throw new StoreError(store, operation, 'BAD_RECORD_SEQ', { runId, seq: firstSeq + i });
    }
  });
}

/**
 * Throws StoreError BAD_FROM_SEQ unless `fromSeq` (of readRecords / readLog) is a whole number
 * from 0: the stores read -1 or 1.5 each in its own way (the memory store from 0, SQLite by
 * comparison), and 'x' gave different records on each.
 */
export function checkFromSeq(store: string, operation: string, runId: string, fromSeq: unknown): void {
  if (typeof fromSeq !== 'number' || !Number.isInteger(fromSeq) || fromSeq < 0) {
    throw new StoreError(store, operation, 'BAD_FROM_SEQ', { runId, field: 'fromSeq' }, new Error(`fromSeq must be a whole number from 0, got ${describeValue(fromSeq)}`));
  }
}

/** A read's arguments (readRecords, readLog), checked as every store checks them: the run id, then fromSeq, then readRecords' limit. */
export function checkReadArguments(store: string, operation: string, runId: string, fromSeq: unknown, limit?: unknown): void {
  checkStoredRunId(store, operation, runId);
  checkFromSeq(store, operation, runId, fromSeq);
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) {
    throw new StoreError(store, operation, 'BAD_LIMIT', { runId, field: 'limit' }, new Error(`limit must be a whole number from 1, or left out, got ${describeValue(limit)}`));
  }
}

/**
 * listRunsPage's arguments, checked as every store checks them: `limit` a whole number from 1
 * (StoreError BAD_LIMIT), `after` a string or undefined (BAD_RUN_ID). A string no store can keep
 * as a run id (empty, a NUL, a lone surrogate) is not refused: it names no listed run, and the
 * store answers null, as runs() refuses an unknown cursor (checked here, not by the driver: SQLite
 * would read a lone surrogate as U+FFFD, and so find the run of that name).
 */
export function checkPageArguments(store: string, after: unknown, limit: unknown): void {
  if (after !== undefined && typeof after !== 'string') {
    throw new StoreError(store, 'listRunsPage', 'BAD_RUN_ID', { field: 'after' }, new Error(`after must be a run id or left out, got ${describeValue(after)}`));
  }
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new StoreError(store, 'listRunsPage', 'BAD_LIMIT', { field: 'limit' }, new Error(`limit must be a whole number from 1, got ${describeValue(limit)}`));
  }
}

/** Whether a store can hold a run of this id (checkStoredRunId's rule): one that cannot names no listed run. */
export function isStorableRunId(runId: string): boolean {
  return runId !== '' && !runId.includes('\u0000') && isWellFormedUnicode(runId);
}

/**
 * The order runs() pages in (RunsOptions.after; docs/guide.md, "Recovery at start-up"): creation
 * time, then run id as JavaScript compares strings, by UTF-16 code units. Not the order of a store's `ORDER BY run_id`:
 * SQLite (BINARY) and PostgreSQL (collation "C") compare UTF-8 bytes, by which a character above
 * U+FFFF ('\u{1F600}') sorts after one in U+E000..U+FFFF ('\uFFFD'), and UTF-16 puts it before
 * (its surrogates are 0xD800..0xDFFF); another collation orders by language rules.
 */
export function compareListings(a: Pick<RunListing, 'createdAtMs' | 'runId'>, b: Pick<RunListing, 'createdAtMs' | 'runId'>): number {
  return a.createdAtMs - b.createdAtMs || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
}

/** A listing with its place in a store's own order of its listing (`key`: its index entry, e.g. created_at and run_id). */
export interface KeyedListing<K> {
  listing: RunListing;
  key: K;
}

/**
 * A read listRunsPage asks of a store: up to `count` listings next to the one at `from` in the
 * store's own order (by creation time, then run id as the store compares them), the nearest first:
 * those after it, or before it; the first ones when `from` is undefined.
 */
export interface ListingScan<K> {
  direction: 'after' | 'before';
  from: K | undefined;
  count: number;
}

/** How many listings before the cursor the first read of its millisecond asks for (each next read twice as many). */
const CURSOR_MILLISECOND_READ = 8;

/** The most listings one read of a page asks for: an int32, which SQLite and PostgreSQL both bind. */
const MAX_PAGE_READ = 2 ** 31 - 1;

/**
 * One page of listRunsPage, from a store that reads its listing through an index in an order of
 * its own: by creation time (as runs() orders), then run id as the store compares them, which is
 * not runs()'s order (compareListings). The two orders differ only among the runs of one creation
 * time, so those are read whole where a page starts and ends, and ordered here. Yields each read
 * (ListingScan), is given its listings, and returns the page: at most `limit` listings after
 * `cursor` (from the first without one) in runs()'s order. What it reads: `limit` + 1 listings,
 * and the runs of the cursor's creation time before it in the store's order (usually none), and
 * more only while the last listing read shares its creation time with the page's last.
 * Exact for any store order along which createdAtMs never decreases.
 */
export function* pageReads<K>(cursor: KeyedListing<K> | undefined, limit: number): Generator<ListingScan<K>, RunListing[], KeyedListing<K>[]> {
  const read: RunListing[] = cursor === undefined ? [] : yield* sameMillisecondBefore(cursor);
  let from = cursor?.key;
  // A limit past what any store holds (runs({ limit: 2 ** 63 })) asks for a count SQL can bind.
  for (let count = Math.min(limit, MAX_PAGE_READ) + 1; ; count = Math.min(count * 2, MAX_PAGE_READ)) {
    const rows = yield { direction: 'after', from, count };
    read.push(...rows.map((row) => row.listing));
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < count) break; // the end of the listing
    from = last.key;
    if (settledAfter(read, cursor?.listing, last.listing.createdAtMs) >= limit) break;
  }
  return read.filter((listing) => cursor === undefined || compareListings(listing, cursor.listing) > 0).sort(compareListings).slice(0, limit);
}

/**
 * The runs created in the cursor's millisecond that come before it in the store's order: in
 * runs()'s order they may come after it. Read backwards from the cursor until another creation
 * time (createdAtMs never decreases along the store's order, so the rest are older).
 */
function* sameMillisecondBefore<K>(cursor: KeyedListing<K>): Generator<ListingScan<K>, RunListing[], KeyedListing<K>[]> {
  const found: RunListing[] = [];
  let from = cursor.key;
  for (let count = CURSOR_MILLISECOND_READ; ; count *= 2) {
    const rows = yield { direction: 'before', from, count };
    for (const row of rows) {
      if (row.listing.createdAtMs !== cursor.listing.createdAtMs) return found;
      found.push(row.listing);
    }
    if (rows.length < count) return found;
    from = rows[rows.length - 1]!.key;
  }
}

/**
 * How many listings read follow the cursor in runs()'s order and were created before `lastMs`, the
 * creation time of the last listing read: every such run has been read (no later one is older),
 * so once they are `limit` the page is among them.
 */
function settledAfter(read: readonly RunListing[], cursor: RunListing | undefined, lastMs: number): number {
  let settled = 0;
  for (const listing of read) {
    if (listing.createdAtMs < lastMs && (cursor === undefined || compareListings(listing, cursor) > 0)) settled += 1;
  }
  return settled;
}

/** pageReads driven by a store whose reads are synchronous (SQLite, inside one read transaction). */
export function readPageNow<K>(cursor: KeyedListing<K> | undefined, limit: number, scan: (read: ListingScan<K>) => KeyedListing<K>[]): RunListing[] {
  const reads = pageReads(cursor, limit);
  let step = reads.next();
  while (step.done !== true) step = reads.next(scan(step.value));
  return step.value;
}

/** pageReads driven by a store whose reads are asynchronous (PostgreSQL). */
export async function readPage<K>(cursor: KeyedListing<K> | undefined, limit: number, scan: (read: ListingScan<K>) => Promise<KeyedListing<K>[]>): Promise<RunListing[]> {
  const reads = pageReads(cursor, limit);
  let step = reads.next();
  while (step.done !== true) step = reads.next(await scan(step.value));
  return step.value;
}

/**
 * StoreError CLOCK_FAILED for a store clock that threw (not one whose reading is not milliseconds:
 * checkedClock's OptionInvalidError), naming the operation and the run, what it threw as the cause;
 * every store reads its clock before it changes anything, so nothing was written.
 */
export function clockFailed(store: string, operation: string, subject: { runId?: string; seq?: number }, thrown: unknown): StoreError {
  return new StoreError(store, operation, 'CLOCK_FAILED', subject, new Error(`the store's clock threw, so nothing was written: ${describeThrown(thrown)}`, { cause: thrown }));
}

const RUN_STATUS_HINTS: ReadonlySet<unknown> = new Set<RunStatusHint>(['running', 'parked', 'completed', 'failed']);

/**
 * Throws StoreError BAD_RUN_STATUS unless `runStatus` is absent or one of the four hints: a store
 * must never keep a value `listRunsToRecover` would misread.
 */
export function checkRunStatus(store: string, operation: string, runId: string, runStatus: unknown): void {
  if (runStatus !== undefined && !RUN_STATUS_HINTS.has(runStatus)) {
    throw new StoreError(store, operation, 'BAD_RUN_STATUS', { runId, field: 'runStatus' }, new Error(`runStatus must be running, parked, completed or failed, got ${String(runStatus)}`));
  }
}

/**
 * The SQL condition of a recovery candidate, shared by the SQLite and PostgreSQL partial indexes
 * and the queries that read them (a planner uses a partial index only for a query whose condition
 * matches the index's): a hint that is not parked, completed or failed, so that NULL (unknown)
 * and any value that is not one of the four statuses list the run. Changing it changes the
 * indexes: a new SQLite schema version and a new PostgreSQL migration (migration 4 spells this
 * condition out, as a published migration must never change).
 */
export const RECOVERY_CANDIDATE_SQL = `status IS NULL OR status NOT IN ('parked', 'completed', 'failed')`;

/** The longest stored hint value a store reports as it is (longer ones are cut, with "..."). */
const MAX_REPORTED_HINT_CHARS = 80;

/**
 * A stored hint as a store reports it (listings, `readStatusHint`): one of the four as it is;
 * NULL as unknown; any other value (a hand edit, another program) as unknown too, with the value
 * described in `statusHintInvalid`, never passed on as if it were a status.
 */
export function statusHintOf(stored: unknown): { statusHint: RunStatusHint | null; statusHintInvalid?: string } {
  if (stored === null || stored === undefined) return { statusHint: null };
  if (RUN_STATUS_HINTS.has(stored)) return { statusHint: stored as RunStatusHint };
  return { statusHint: null, statusHintInvalid: describeStoredValue(stored) };
}

function describeStoredValue(value: unknown): string {
  if (value instanceof Uint8Array) {
    const hex = Buffer.from(value.subarray(0, MAX_REPORTED_HINT_CHARS / 2)).toString('hex');
    return `x'${hex}'${value.length > MAX_REPORTED_HINT_CHARS / 2 ? '...' : ''} (${value.length} bytes)`;
  }
  const chars = [...String(value)]; // code points: a cut never splits a surrogate pair
  return chars.length > MAX_REPORTED_HINT_CHARS ? `${chars.slice(0, MAX_REPORTED_HINT_CHARS).join('')}...` : chars.join('');
}

/** Checks every correction's run id and hint (StoreError naming the run) before anything is written. */
export function checkCorrections(store: string, corrections: readonly RunStatusCorrection[]): void {
  for (const c of corrections) {
    checkStoredRunId(store, 'correctRunStatuses', c.runId);
    checkRunStatus(store, 'correctRunStatuses', c.runId, c.runStatus);
  }
}

/**
 * Throws StoreError BAD_RUN_ID unless `runId` is a string a store keeps exactly: no NUL (PostgreSQL
 * text cannot hold it) and no lone surrogate (UTF-8 cannot). The library checks the full rule
 * first (ids.ts); this guards stores used directly.
 */
export function checkStoredRunId(store: string, operation: string, runId: string): void {
  if (typeof runId !== 'string' || runId === '' || runId.includes('\u0000') || !isWellFormedUnicode(runId)) {
    throw new StoreError(store, operation, 'BAD_RUN_ID', { field: 'runId' }, new Error('a run id must be a non-empty, well-formed Unicode string without NUL characters'));
  }
}

/** A stored record that is not bytes, in the store's words: what it is, how that can happen, what to do. */
export interface NotBytes {
  found: string;
  cause: string;
  remedy: string;
}

/**
 * A record's stored bytes as the driver returned them (copied), or StoreError RECORD_NOT_BYTES
 * naming the run and the seq. A value that is not bytes (SQLite TEXT, INTEGER or REAL in the
 * blob column: a hand edit such as `UPDATE ... SET bytes = CAST(bytes AS TEXT)`) is store damage,
 * and is reported as such: read as `new Uint8Array(value)` it would be an empty record (a string)
 * or that many zero bytes (a number), which recovery calls torn or empty, and which `repair`
 * would remove. `describe` says what the value is.
 */
export function storedRecordBytes(
  store: string, operation: string, runId: string, seq: number, value: unknown, describe: (value: unknown) => NotBytes,
): Uint8Array {
  if (value instanceof Uint8Array) return new Uint8Array(value);
  throw recordNotBytes(store, operation, runId, seq, describe(value));
}

/** StoreError RECORD_NOT_BYTES: record `seq` of `runId` is stored as something that is not bytes. */
export function recordNotBytes(store: string, operation: string, runId: string, seq: number, what: NotBytes): StoreError {
  return new StoreError(store, operation, 'RECORD_NOT_BYTES', { runId, seq }, new Error(
    `run ${runId}, seq ${seq}: the stored record is ${what.found}, not bytes (${what.cause}); nothing was read as the record and nothing was changed: ${what.remedy}`,
  ));
}

/**
 * A stored recovery summary's bytes as the driver returned them (copied). A value that is not
 * bytes is a damaged summary like any other: it is read as no bytes, which never passes the
 * summary's checksum, so a fresh process ignores it and reads the whole log, `scrub` reports it
 * as disagreeing and `repair` deletes it (a summary is derived from the records: always safe).
 */
export function storedSummaryBytes(value: unknown): Uint8Array {
  return value instanceof Uint8Array ? new Uint8Array(value) : new Uint8Array(0);
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function concatRecords(records: readonly StoredRecord[]): Uint8Array {
  let total = 0;
  for (const r of records) total += r.bytes.length;
  const out = new Uint8Array(total);
  let pos = 0;
  for (const r of records) {
    out.set(r.bytes, pos);
    pos += r.bytes.length;
  }
  return out;
}
