/**
 * The embedded stores' `clock` and the memory store's `backing` options: refused by name when they
 * are not what the store needs, before anything runs; a clock that returns something other than a
 * whole number of milliseconds is refused at the write that reads it, with nothing written, where
 * its value used to be stored and listed as it was ('now', null for NaN) or fail later as a bare
 * TypeError.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { OptionInvalidError, RemitError } from '../errors.js';
import { Remit } from '../remit.js';
import { END, workflow } from '../workflow/workflow.js';
import { MemoryBacking, openMemoryStore } from './memory.js';
import { openSqliteStore } from './sqlite.js';
import type { Store } from './store.js';

const core = await createCore('reference');
const wf = workflow({ name: 'w', version: '1', state: z.object({ n: z.number() }) }).pure('p', { run: () => ({}), next: END }).build();

type Open = (options: { clock?: unknown }) => Store;
const stores: Array<[string, Open]> = [
  ['memory', (o) => openMemoryStore(o as never)],
  ['sqlite', (o) => openSqliteStore(':memory:', o as never)],
];

describe.each(stores)('the %s store\'s clock', (_, open) => {
  it('that is not a function is refused when the store opens', () => {
    for (const clock of [5, 'now', null, {}, [Date.now]]) {
      expect(() => open({ clock })).toThrow(OptionInvalidError);
      expect(() => open({ clock })).toThrow(/clock.*must be a function returning the time in milliseconds/);
    }
  });

  it('that returns something other than whole milliseconds: the write is refused naming the clock, nothing is written', async () => {
    for (const reading of ['now', Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, null, undefined, 10n]) {
      const store = open({ clock: () => reading });
      const remit = new Remit(store, core, [wf]);
      const error = await remit.start(wf, { n: 1 }, { runId: 'r' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RemitError);
      expect(String((error as Error).message) + String(((error as Error).cause as Error | undefined)?.message ?? '')).toMatch(/clock.*not a number of milliseconds since the epoch/);
      expect(await store.readLog('r')).toHaveLength(0);
      expect(await store.listRuns()).toEqual([]);
      await remit.close();
    }
  });

  it('that returns milliseconds is what the listing shows, a fraction dropped', async () => {
    const store = open({ clock: () => 1_700_000_000_000.75 });
    const remit = new Remit(store, core, [wf]);
    await remit.start(wf, { n: 1 }, { runId: 'r' });
    expect(await remit.runs()).toEqual([expect.objectContaining({ runId: 'r', updatedAtMs: 1_700_000_000_000 })]);
    await remit.close();
  });
});

describe('the memory store\'s removeLastRecord with a clock that fails', () => {
  it('refuses before changing anything: the record is still there', async () => {
    let reading: unknown = 1_000;
    const store = openMemoryStore({ clock: (() => reading) as () => number });
    const remit = new Remit(store, core, [wf]);
    await remit.start(wf, { n: 1 }, { runId: 'r' });
    const records = await store.readRecords('r');
    const last = records[records.length - 1]!;
    reading = Number.NaN;
    await expect(store.removeLastRecord('r', last.seq, last.bytes)).rejects.toThrow(/clock/);
    expect(await store.readRecords('r')).toEqual(records);
  });
});

describe('the memory store\'s backing', () => {
  it('that is not a MemoryBacking is refused when the store opens', () => {
    for (const backing of [{}, 5, 'x', [], null, new Map()]) {
      expect(() => openMemoryStore({ backing: backing as never })).toThrow(/backing.*must be a MemoryBacking/);
    }
    const shared = new MemoryBacking();
    expect(openMemoryStore({ backing: shared }).backing).toBe(shared);
  });
});
