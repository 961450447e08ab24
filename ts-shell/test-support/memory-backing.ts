/**
 * Copies of a memory store's backing for tests that damage or replace what is stored in one copy
 * and compare it with another.
 */

import { MemoryBacking } from '../src/store/memory.js';

/** A deep copy of `from`: every run's records (their bytes copied) and stored summary. */
export function copyBacking(from: MemoryBacking): MemoryBacking {
  const to = new MemoryBacking();
  for (const [runId, run] of from.runs) {
    const copy = { ...run, records: run.records.map((r) => ({ ...r, bytes: r.bytes.slice() })) };
    if (run.summary !== undefined) copy.summary = { ...run.summary, summary: run.summary.summary.slice() };
    to.runs.set(runId, copy);
  }
  return to;
}
