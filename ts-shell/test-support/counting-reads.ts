/**
 * A store whose reads of runs are counted, for the tests of what an operation reads: how many read
 * calls it makes, how many records they return, and where each `readRecords` began. Every call
 * goes to the store with all its arguments (a `limit` included); nothing else changes.
 */

import type { Store } from '../src/store/store.js';

/** The store methods that read a run (every one the sequencer or a view may call). */
export const RUN_READS = ['readRun', 'readSummary', 'readRecords', 'readLog'] as const;

export interface ReadCount {
  /** Calls of any of RUN_READS. */
  calls: number;
  /** Records returned by readRun and readRecords (readLog returns bytes; readSummary none). */
  records: number;
  /** The fromSeq of each readRecords call, in order (0 when not given). */
  recordsFrom: number[];
}

export function countingReads(store: Store): { store: Store; count: ReadCount } {
  const count: ReadCount = { calls: 0, records: 0, recordsFrom: [] };
  const counted = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!(RUN_READS as readonly PropertyKey[]).includes(key)) return method.bind(target);
      return async (...args: unknown[]) => {
        count.calls += 1;
        if (key === 'readRecords') count.recordsFrom.push((args[1] as number | undefined) ?? 0);
        const out = (await method.apply(target, args)) as { records?: unknown[] } | unknown[] | null;
        if (key === 'readRecords' && Array.isArray(out)) count.records += out.length;
        if (key === 'readRun' && out !== null && !Array.isArray(out)) count.records += out.records?.length ?? 0;
        return out;
      };
    },
  });
  return { store: counted, count };
}
