/**
 * describeStoreContract (remit/testing/store-contract) refuses, when the suite is declared, the
 * arguments it cannot use: a misspelt option would leave the tests that need it passing without
 * testing anything. The suite itself runs on the stores (memory.test.ts, sqlite.test.ts, ...).
 */

import { describe, expect, it } from 'vitest';
import { ArgumentInvalidError, OptionInvalidError } from '../errors.js';
import { MemoryStore } from '../store/memory.js';
import { describeStoreContract, type OpenStore } from './store-contract.js';

const open: OpenStore = () => new MemoryStore();

describe('describeStoreContract refuses arguments it cannot use, before declaring any test', () => {
  it('an option it does not know (own or inherited), naming it: a misspelt openSecondHandle skipped the durability test', () => {
    const misspelt = { openSecondhandle: (store: unknown) => new MemoryStore({ backing: (store as MemoryStore).backing }) };
    const error = (() => {
      try {
        describeStoreContract('mine', open, misspelt as never);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OptionInvalidError);
    expect(error).toMatchObject({ code: 'REMIT_OPTION_INVALID', option: 'openSecondhandle', field: 'openSecondhandle' });
    expect((error as Error).message).toMatch(/is not an option of describeStoreContract \(known: openSecondHandle, writeStatusHint\)/);
    expect(() => describeStoreContract('mine', open, Object.create({ writeStatushint: () => {} }))).toThrow(OptionInvalidError);
  });

  it('an option that is not a function', () => {
    expect(() => describeStoreContract('mine', open, { openSecondHandle: true } as never)).toThrow(/option openSecondHandle must be a function \(got true\)/);
    expect(() => describeStoreContract('mine', open, { writeStatusHint: 'x' } as never)).toThrow(OptionInvalidError);
  });

  it('a name that is not a string, an openStore that is not a function, options that are not an object', () => {
    expect(() => describeStoreContract(5 as never, open)).toThrow(ArgumentInvalidError);
    expect(() => describeStoreContract('mine', new MemoryStore() as never)).toThrow(/describeStoreContract\(openStore\) must be a function .* got object/);
    expect(() => describeStoreContract('mine', open, null as never)).toThrow(/describeStoreContract\(options\) must be .* got null/);
    expect(() => describeStoreContract('mine', open, [] as never)).toThrow(ArgumentInvalidError);
  });
});
