import { describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
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

describe('memory store, closed', () => {
  it('refuses every call with a StoreError CLOSED naming the run, and the seq of a write', async () => {
    const store = new MemoryStore();
    await store.close();
    const append = await store.append('r', 3, []).catch((e: unknown) => e);
    expect(append).toBeInstanceOf(StoreError);
    expect(append).toMatchObject({ code: 'REMIT_STORE', storeCode: 'CLOSED', operation: 'append', runId: 'r', seq: 3 });
    expect(await store.removeLastRecord('r', 2, new Uint8Array()).catch((e: unknown) => e)).toMatchObject({ storeCode: 'CLOSED', runId: 'r', seq: 2 });
    expect(await store.readRecords('r').catch((e: unknown) => e)).toMatchObject({ storeCode: 'CLOSED', runId: 'r' });
  });
});
