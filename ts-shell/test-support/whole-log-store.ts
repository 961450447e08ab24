/**
 * A view of a store without the summary capability: every open reads the run's whole log and no
 * append stores a summary, as on a custom store that keeps none. For the tests that compare an
 * answer read from a stored summary with the whole log's, or need a whole-log read.
 */

import type { Store } from '../src/store/store.js';

export function wholeLogStore(store: Store): Store {
  return {
    description: store.description,
    readLog: (runId, fromSeq) => store.readLog(runId, fromSeq),
    readRecords: (runId, fromSeq, limit) => store.readRecords(runId, fromSeq, limit),
    append: (runId, expectedSeq, records, _summary, status) => store.append(runId, expectedSeq, records, undefined, status),
    fork: (...args) => store.fork(...args),
    listRuns: () => store.listRuns(),
    close: async () => {},
  };
}
