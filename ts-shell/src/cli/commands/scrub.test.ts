import { describe, expect, it } from 'vitest';
import { StoreError } from '../../errors.js';
import { runsToScrub } from './scrub.js';

describe('scrub --all: the runs it scrubs', () => {
  it('takes every listed run, then every unlisted one, even 200,000 of them (more than a call takes arguments)', async () => {
    const unlisted = Array.from({ length: 200_000 }, (_, i) => `unlisted-${i}`);
    const store = {
      listRuns: async () => [{ runId: 'listed', nextSeq: 1, createdAtMs: 0, updatedAtMs: 0 }],
      listUnlistedRuns: async () => unlisted,
    };
    const { runIds: ids, unlistedSearch } = await runsToScrub(store);
    expect(unlistedSearch).toBeNull();
    expect(ids).toHaveLength(200_001);
    expect(ids[0]).toBe('listed');
    expect(ids[200_000]).toBe('unlisted-199999');
  });

  it('takes only the listed runs from a store that cannot list unlisted ones', async () => {
    expect(await runsToScrub({ listRuns: async () => [{ runId: 'a', nextSeq: 1, createdAtMs: 0, updatedAtMs: 0 }] })).toEqual({ runIds: ['a'], unlistedSearch: null });
  });

  it('a search for unlisted runs that fails with a store error still gives the listed runs, and the error beside them', async () => {
    const corrupt = new StoreError('sqlite', 'listUnlistedRuns', 'SQLITE_CORRUPT', {}, new Error('database disk image is malformed'));
    const found = await runsToScrub({
      listRuns: async () => [{ runId: 'a', nextSeq: 1, createdAtMs: 0, updatedAtMs: 0 }],
      listUnlistedRuns: async () => { throw corrupt; },
    });
    expect(found).toEqual({ runIds: ['a'], unlistedSearch: corrupt });
  });
});
