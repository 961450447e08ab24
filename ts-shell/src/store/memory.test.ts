import { describeStoreContract } from '../testing/store-contract.js';
import { MemoryStore } from './memory.js';

describeStoreContract('memory', () => new MemoryStore(), {
  openSecondHandle: (store) => new MemoryStore({ backing: (store as MemoryStore).backing }),
});
