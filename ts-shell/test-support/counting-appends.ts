/**
 * A memory store whose appends are counted, for the tests of the summary-writing cadence: the
 * record bytes and the stored summaries (how many, their bytes, the largest) of every append.
 * Every call goes to the store as it is; nothing else changes.
 */

import type { MemoryStore } from '../src/store/memory.js';
import type { Store } from '../src/store/store.js';

export interface AppendCount {
  /** Record bytes appended. */
  records: number;
  /** Appends that stored a recovery summary. */
  summaries: number;
  /** Bytes of the core summaries stored (RecoverySummary.summary). */
  summaryBytes: number;
  /** The largest core summary stored. */
  largest: number;
}

export function countingAppends(store: MemoryStore): { store: Store; written: AppendCount } {
  const written: AppendCount = { records: 0, summaries: 0, summaryBytes: 0, largest: 0 };
  const view = Object.create(store) as MemoryStore;
  view.append = async (runId, expectedSeq, records, summary, status) => {
    for (const r of records) written.records += r.length;
    if (summary !== undefined) {
      written.summaries += 1;
      written.summaryBytes += summary.summary.length;
      written.largest = Math.max(written.largest, summary.summary.length);
    }
    return store.append(runId, expectedSeq, records, summary, status);
  };
  return { store: view, written };
}
