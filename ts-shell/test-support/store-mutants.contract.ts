/**
 * The store contract suite on the memory store (the control, which must pass) and on every broken
 * store of `store-mutants.ts` (each of which must fail it). Not a `*.test.ts` file: the normal test
 * run does not pick it up (its mutants fail by design); `src/testing/store-contract-mutants.test.ts`
 * runs it in a vitest of its own (`store-mutants.vitest.config.ts`) and reads the outcome.
 * `REMIT_STORE_MUTANT=<name>` runs the suite on the control and that one mutant only.
 */

import type { MemoryStore } from '../src/store/memory.js';
import type { RunStatusHint } from '../src/store/store.js';
import { describeStoreContract } from '../src/testing/store-contract.js';
import { CONTROL_NAME, CONTROL_STORE, mutantSuiteName, STORE_MUTANTS } from './store-mutants.js';

const only = process.env['REMIT_STORE_MUTANT'];
const stores = [
  { name: CONTROL_NAME, Store: CONTROL_STORE },
  ...STORE_MUTANTS.filter((m) => only === undefined || m.name === only).map((m) => ({ name: mutantSuiteName(m.name), Store: m.Store })),
];

for (const { name, Store } of stores) {
  describeStoreContract(name, () => new Store(), {
    openSecondHandle: (store) => new Store({ backing: (store as MemoryStore).backing }),
    writeStatusHint: async (store, runId, value) => {
      (store as MemoryStore).backing.runs.get(runId)!.status = value as RunStatusHint;
    },
  });
}
