/**
 * checkWholeRead, the check REMIT makes when a whole read of a run returned fewer records than it
 * knows of: from a store whose reads answer as scripted. What it must do: never hand back a read
 * that misses records a read before it showed (the caller would answer from a run behind the
 * store: an ImplicitForkError at a past head, a node run for a continue that is refused); name a
 * store that leaves records out (StoreError READS_CUT_SHORT at the first seq the latest whole read
 * left out); and let a read stand when the records it missed are gone (a repair removed them).
 */

import { describe, expect, it } from 'vitest';
import type { Store, StoredRecord } from './store.js';
import { checkWholeRead } from './whole-read.js';

const records = (count: number): StoredRecord[] => Array.from({ length: count }, (_, seq) => ({ seq, bytes: new Uint8Array([seq & 0xff]), committedAtMs: 0 }));

/**
 * A store holding `held[i]` records at its i-th read, each whole read returning the first
 * `wholeReads[j]` of them at the j-th whole read (a page limit, a replica behind): a read from a
 * seq is sound. The reads it answered are kept in `reads`.
 */
function scripted(held: number[], wholeReads: number[]) {
  const reads: string[] = [];
  let whole = 0;
  const store = {
    description: 'scripted',
    readRecords: async (_runId: string, fromSeq = 0) => {
      const now = records(held[Math.min(reads.length, held.length - 1)]!);
      reads.push(fromSeq === 0 ? 'whole' : `from ${fromSeq}`);
      return fromSeq === 0 ? now.slice(0, wholeReads[whole++]) : now.slice(fromSeq);
    },
  } as unknown as Store;
  return { store, reads };
}

describe('checkWholeRead', () => {
  it('nothing past the read: null, after one read', async () => {
    const { store, reads } = scripted([30], []);
    await expect(checkWholeRead(store, 'r', 30)).resolves.toBeNull();
    expect(reads).toEqual(['from 30']);
  });

  it('the run grew between the reads (another writer): the second whole read, which holds every record seen', async () => {
    const { store } = scripted([40, 45], [45]);
    expect((await checkWholeRead(store, 'r', 30))?.length).toBe(45);
  });

  it('a second whole read longer than the first and still short of the records seen is refused, not taken (a replica catching up in steps)', async () => {
    const { store, reads } = scripted([40], [31]);
    await expect(checkWholeRead(store, 'r', 30)).rejects.toMatchObject({ name: 'StoreError', storeCode: 'READS_CUT_SHORT', runId: 'r', seq: 31 });
    expect(reads).toEqual(['from 30', 'whole', 'from 31']);
  });

  it('two whole reads stopping at one page: READS_CUT_SHORT at the page\'s end, the message saying both reads', async () => {
    const { store } = scripted([40], [30]);
    const error = await checkWholeRead(store, 'r', 30).then(() => null, (e: unknown) => e as Error);
    expect(error).toMatchObject({ storeCode: 'READS_CUT_SHORT', seq: 30 });
    expect(error!.message).toContain('returned 30 records (twice), and a read from seq 30 returned 10 more (to seq 39)');
  });

  it('a record past the read that is not at its seq (renumbered by hand: damage its diagnosis names) is no read cut short: null', async () => {
    const renumbered = { seq: 100, bytes: new Uint8Array([1]), committedAtMs: 0 };
    const store = { description: 'renumbered', readRecords: async (_runId: string, fromSeq = 0) => [...records(30), renumbered].filter((r) => r.seq >= fromSeq) } as unknown as Store;
    await expect(checkWholeRead(store, 'r', 31)).resolves.toBeNull();
  });

  it('a record missing from the middle (deleted by hand: a gap) is no read cut short: the read stands for its diagnosis to name', async () => {
    // 31 records stored, seq 5 deleted: whole reads return 30, the last at seq 30.
    const gapped = records(31).filter((r) => r.seq !== 5);
    const store = { description: 'gapped', readRecords: async (_runId: string, fromSeq = 0) => gapped.filter((r) => r.seq >= fromSeq) } as unknown as Store;
    await expect(checkWholeRead(store, 'r', 30)).resolves.toBeNull();
  });

  it('the records past the read removed meanwhile (a repair): the read stands, null or the shorter read', async () => {
    const removedToFirst = scripted([31, 30], [30]);
    await expect(checkWholeRead(removedToFirst.store, 'r', 30)).resolves.toBeNull();
    const removedBelow = scripted([31, 29], [29]);
    expect((await checkWholeRead(removedBelow.store, 'r', 30))?.length).toBe(29);
    expect(removedBelow.reads).toEqual(['from 30', 'whole', 'from 29']);
  });
});
