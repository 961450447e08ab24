/**
 * Whether a store's read of a whole run was cut short: a page or size limit of a custom store,
 * which returns the first records and leaves the rest out. The sequencer and repair meet it as a
 * contradiction (a stored summary covering more records than were read, a status hint counting
 * more): without this check they took it for a bad summary (deleted by repair) or for another
 * process writing (a ConflictError at every append). Used only where such a contradiction was
 * seen, so a sound read pays nothing.
 */

import { StoreError } from '../errors.js';
import { checkedRecords } from './answers.js';
import type { Store, StoredRecord } from './store.js';

/**
 * Throws StoreError `READS_CUT_SHORT` (naming the run and the first seq left out) when the store
 * holds records past a whole read of `read` records that a second whole read does not return
 * either; otherwise resolves to that second whole read when the run grew between the reads
 * (another process wrote to it: the second read shows its records), or null when the run really
 * has `read` records. The second read must hold every record the read from seq `read` found:
 * one that is longer than the first and still short of them is behind the store too, never taken
 * as the run. Only when a read from its end finds nothing were those records removed meanwhile (a
 * repair), and it stands. At most four reads, all on a contradiction a sound store never shows.
 */
export async function checkWholeRead(store: Store, runId: string, read: number): Promise<StoredRecord[] | null> {
  // Each read checked as every read is (BAD_READ for an answer that is not records, never a bare TypeError).
  const past = checkedRecords(store, 'readRecords', runId, await store.readRecords(runId, read));
  // None past the read, or none at seq `read` (a record renumbered by hand past the end: damage
  // the read's own diagnosis names, BAD_RECORD_SEQ), is no read cut short.
  if (past[0]?.seq !== read) return null;
  const held = read + past.length;
  const again = checkedRecords(store, 'readRecords', runId, await store.readRecords(runId));
  if (again.length >= held) return again; // it grew: another process wrote meanwhile
  // A record missing from the middle (deleted or renumbered by hand: a gap) leaves the count
  // short and the last record at the seq a cut-short read would give next: damage the read's own
  // diagnosis names (BAD_RECORD_SEQ), not a read cut short. A cut-short read is the run's first
  // records, at seqs 0, 1, 2, ...
  if (!fromSeqZero(again)) return again.length === read ? null : again;
  const stillPast = checkedRecords(store, 'readRecords', runId, await store.readRecords(runId, again.length));
  if (stillPast[0]?.seq !== again.length) return again.length === read ? null : again;
  const returned = again.length === read ? `${read} records (twice)` : `${read} records, a second read ${again.length}`;
  throw new StoreError(store.description, 'readRecords', 'READS_CUT_SHORT', { runId, seq: again.length }, new Error(
    `a read of the whole run returned ${returned}, and a read from seq ${read} returned ${past.length} more (to seq ${held - 1}): ` +
      'the store leaves records out of a whole read (a page or size limit?); nothing was changed; fix the store (its contract suite, remit/testing/store-contract, tests this)',
  ));
}

/** Whether `rows` are at seqs 0, 1, 2, ... in order. */
function fromSeqZero(rows: readonly StoredRecord[]): boolean {
  return rows.every((row, i) => row.seq === i);
}
