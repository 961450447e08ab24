/**
 * A store `clock` that throws (a time service timing out): the SQLite store reported StoreError
 * SQLITE_ERROR, or the thrown error's own code (ETIMEDOUT) as if it were SQLite's, and the memory
 * store let the plain Error through. Both now report StoreError CLOCK_FAILED naming the operation
 * and the run, with what the clock threw as the cause, and write nothing. (A reading that is not
 * milliseconds stays OptionInvalidError: store-clock.test.ts.)
 */

import { describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { testRecord } from '../testing/store-contract.js';
import { openMemoryStore } from './memory.js';
import { openSqliteStore } from './sqlite.js';
import type { Store } from './store.js';

const failing = (thrown: unknown) => () => {
  throw thrown;
};
const timedOut = Object.assign(new Error('time service timed out'), { code: 'ETIMEDOUT' });

const stores: Array<[string, (clock: () => number) => Store]> = [
  ['memory', (clock) => openMemoryStore({ clock })],
  ['sqlite', (clock) => openSqliteStore(':memory:', { clock })],
];

describe.each(stores)('the %s store with a clock that throws', (_, open) => {
  it.each([['an Error with a code', timedOut], ['a plain Error', new Error('no clock')], ['a string', 'clock broke']])(
    'append and fork: StoreError CLOCK_FAILED naming the operation and the run, nothing written (%s)',
    async (_kind, thrown) => {
      let fail = false;
      const store = open(() => {
        if (fail) return failing(thrown)();
        return 1_000;
      });
      await store.append('r', 0, [testRecord(0), testRecord(1)]);
      fail = true;
      const attempts: Array<[string, { runId: string; seq: number }, () => Promise<unknown>]> = [
        ['append', { runId: 'new', seq: 0 }, () => store.append('new', 0, [testRecord(0)])],
        ['append', { runId: 'r', seq: 2 }, () => store.append('r', 2, [testRecord(2)])],
        ['append', { runId: 'r', seq: 2 }, () => store.append('r', 2, [testRecord(2), testRecord(3)])],
        ['fork', { runId: 'r', seq: 1 }, () => store.fork('r', 1, 'f', testRecord(1, 'fork'))],
      ];
      for (const [operation, subject, attempt] of attempts) {
        const error = await attempt().then(() => undefined, (e: unknown) => e);
        expect(error, operation).toBeInstanceOf(StoreError);
        expect(error).toMatchObject({ code: 'REMIT_STORE', storeCode: 'CLOCK_FAILED', operation, ...subject });
        expect((error as Error).message).toMatch(/clock threw, so nothing was written/);
        expect(((error as Error).cause as Error).cause).toBe(thrown);
      }
      expect((await store.listRuns()).map((r) => [r.runId, r.nextSeq])).toEqual([['r', 2]]);
      expect(await store.readRecords('new')).toEqual([]);
      expect(await store.readRecords('f')).toEqual([]);
      await store.close();
    },
  );
});
