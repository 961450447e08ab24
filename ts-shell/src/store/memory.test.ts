import { describeStoreContract } from '../testing/store-contract.js';
import { MemoryStore } from './memory.js';
import type { RunStatusHint } from './store.js';

describeStoreContract('memory', () => new MemoryStore(), {
  openSecondHandle: (store) => new MemoryStore({ backing: (store as MemoryStore).backing }),
  // The backing is reachable: a program may write anything into it.
  writeStatusHint: async (store, runId, value) => {
    (store as MemoryStore).backing.runs.get(runId)!.status = value as RunStatusHint;
  },
});
