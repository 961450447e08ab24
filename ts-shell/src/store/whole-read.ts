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
 * has `read` records.
 */
export async function checkWholeRead(store: Store, runId: string, read: number): Promise<StoredRecord[] | null> {
  // Checked as every read is (BAD_READ for an answer that is not records, never a bare TypeError).
  const past = checkedRecords(store, 'readRecords', runId, await store.readRecords(runId, read));
  if (past.length === 0) return null;
  const again = checkedRecords(store, 'readRecords', runId, await store.readRecords(runId));
  if (again.length > read) return again; // it grew: another process wrote meanwhile
  throw new StoreError(store.description, 'readRecords', 'READS_CUT_SHORT', { runId, seq: read }, new Error(
    `a read of the whole run returned ${read} records (twice), and a read from seq ${read} returned ${past.length} more: ` +
      'the store leaves records out of a whole read (a page or size limit?); nothing was changed; fix the store (its contract suite, remit/testing/store-contract, tests this)',
  ));
}
