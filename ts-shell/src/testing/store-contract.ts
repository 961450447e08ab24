/**
 * The store contract as a reusable vitest suite: every Store implementation (memory, SQLite,
 * PostgreSQL) runs `describeStoreContract(name, openStore)` and must pass all of it.
 *
 * The records here are real frames (docs/log-format.md) with an opaque payload, built locally:
 * the contract is about bytes and sequence numbers, not about what the records mean.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { concatBytes as concat } from '../core/codec.js';
import { ArgumentInvalidError, OptionInvalidError, StoreError } from '../errors.js';
import { allKeysOf, notKnown, unknownKey } from '../known-keys.js';
import { sleepInternally } from '../timers.js';
import { compareListings } from '../store/common.js';
import type { AppendOutcome, Store } from '../store/store.js';
import { testRecord } from './test-record.js';

export { testRecord };

/** Opens a fresh, empty store (a new database, schema, or memory backing) for one test. */
export type OpenStore = () => Store | Promise<Store>;

export interface StoreContractOptions {
  /**
   * Opens a second handle on the same data as `store` (another connection or view), if possible.
   * Also called after `store` and its other handles are closed, to reopen the data: what was
   * committed must still be there (the tests of concurrent writers and of durability need it).
   */
  openSecondHandle?: (store: Store) => Store | Promise<Store>;
  /**
   * Writes run `runId`'s stored status hint as `value` exactly, past the store's own checks, as a
   * hand edit (sqlite3, psql) or another program would: one of the four statuses, or any other
   * text. For the tests of hints the sequencer did not write; they are skipped without it.
   */
  writeStatusHint?: (store: Store, runId: string, value: string) => Promise<void>;
}

/** An append's outcome without commit times (the store's clock), for exact comparison. */
export function outcomeOf(outcome: AppendOutcome): { committed: boolean; nextSeq: number; tail?: { seq: number; bytes: Uint8Array }[] } {
  if (outcome.committed || outcome.tail === undefined) return { committed: outcome.committed, nextSeq: outcome.nextSeq };
  return { committed: false, nextSeq: outcome.nextSeq, tail: outcome.tail.map(({ seq, bytes }) => ({ seq, bytes })) };
}

/**
 * The refusal a store must report: nextSeq, and the records in the way (seq and bytes) when it
 * reports them (`tail` is optional: a store that leaves it out makes the caller read the run).
 */
function expectRefused(outcome: AppendOutcome, nextSeq: number, firstSeq: number, inTheWay: Uint8Array[]): void {
  const tail = inTheWay.map((bytes, i) => ({ seq: firstSeq + i, bytes }));
  expect(outcomeOf(outcome)).toEqual(!outcome.committed && outcome.tail === undefined ? { committed: false, nextSeq } : { committed: false, nextSeq, tail });
}

/**
 * Byte for byte, compared at once and reported briefly (toEqual walks a large array element by
 * element, and its diff of two large arrays takes minutes).
 */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array, what: string): void {
  expect(actual, what).toBeInstanceOf(Uint8Array);
  if (Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected)) return;
  let at = 0;
  while (at < actual.length && at < expected.length && actual[at] === expected[at]) at += 1;
  expect.fail(`${what}: ${actual.length} bytes where ${expected.length} were stored, differing from byte ${at} on`);
}

function records(firstSeq: number, count: number, tag = 'r'): Uint8Array[] {
  return Array.from({ length: count }, (_, i) => testRecord(firstSeq + i, `${tag}-${firstSeq + i}`));
}


const CONTRACT_OPTIONS = allKeysOf<StoreContractOptions>()('openSecondHandle', 'writeStatusHint');

// Why a test of a capability the store does not have is skipped (reported as skipped, not passed).
const NO_SECOND_HANDLE = 'no openSecondHandle option: what one handle commits and another reads is not tested';
const NO_REMOVE = 'the store has no removeLastRecord (repair cannot remove a torn record)';
const NO_READ_RUN = 'the store has no readRun';
const NO_SUMMARIES = 'the store keeps no recovery summaries (readSummary, deleteSummary)';
const NO_HINTS = 'the store keeps no status hints (listRunsToRecover, correctRunStatuses, readStatusHint)';
const NO_HINT_EDIT = 'the store keeps no status hints, or no writeStatusHint option (a hand edit of a hint)';

/**
 * The arguments checked when the suite is declared, before any test: a misspelt option
 * (`{ openSecondhandle }`) was ignored, and the tests that need it passed without testing
 * anything (the durability test returned at once; the concurrent writers shared one handle).
 */
function checkContractArguments(name: unknown, openStore: unknown, options: unknown): void {
  if (typeof name !== 'string') throw new ArgumentInvalidError('describeStoreContract(name)', 'a string naming the store', describeArgument(name));
  if (typeof openStore !== 'function') {
    throw new ArgumentInvalidError('describeStoreContract(openStore)', 'a function () => Store opening a fresh, empty store', describeArgument(openStore));
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ArgumentInvalidError('describeStoreContract(options)', 'an object of store contract options ({ openSecondHandle, writeStatusHint }) or nothing', describeArgument(options));
  }
  const unknown = unknownKey(options, CONTRACT_OPTIONS);
  if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as Record<string, unknown>)[unknown], notKnown('an option of describeStoreContract', CONTRACT_OPTIONS));
  for (const key of CONTRACT_OPTIONS) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined && typeof value !== 'function') throw new OptionInvalidError(key, value, 'must be a function');
  }
}

function describeArgument(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/** What a handle answers, besides the log, about run-a (undefined for a read the store does not have). */
async function otherReads(store: Store) {
  return {
    listed: (await store.listRuns()).find((r) => r.runId === 'run-a'),
    toRecover: await store.listRunsToRecover?.(),
    hint: await store.readStatusHint?.('run-a'),
    summary: (await store.readSummary?.('run-a')) ?? undefined,
    run: await store.readRun?.('run-a'),
  };
}

export function describeStoreContract(name: string, openStore: OpenStore, options: StoreContractOptions = {}): void {
  checkContractArguments(name, openStore, options);
  describe(`store contract: ${name}`, () => {
    const opened: Store[] = [];
    const open = async () => {
      const store = await openStore();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close().catch(() => {});
    });

    it('an unknown run reads as empty and lists nothing', async () => {
      const store = await open();
      expect(await store.readLog('nope')).toEqual(new Uint8Array());
      expect(await store.readRecords('nope')).toEqual([]);
      expect((await store.listRuns()).find((r) => r.runId === 'nope')).toBeUndefined();
    });

    it('appends a batch at the expected seq and reads it back byte for byte', async () => {
      const store = await open();
      const batch = records(0, 3);
      expect(await store.append('run-a', 0, batch)).toEqual({ committed: true, nextSeq: 3 });
      expect(await store.readLog('run-a')).toEqual(concat(batch));
      const stored = await store.readRecords('run-a');
      expect(stored.map((r) => r.seq)).toEqual([0, 1, 2]);
      expect(stored.map((r) => r.bytes)).toEqual(batch);
      for (const r of stored) expect(r.committedAtMs).toBeGreaterThan(0);
    });

    it('reads from a sequence number', async () => {
      const store = await open();
      const batch = records(0, 5);
      await store.append('run-a', 0, batch);
      expect(await store.readLog('run-a', 3)).toEqual(concat(batch.slice(3)));
      expect((await store.readRecords('run-a', 4)).map((r) => r.seq)).toEqual([4]);
      expect(await store.readLog('run-a', 5)).toEqual(new Uint8Array());
    });

    it('reads with a limit: at least the first records from fromSeq, in order (a store may give more than the limit)', async () => {
      const store = await open();
      const batch = records(0, 5);
      await store.append('run-a', 0, batch);
      const one = await store.readRecords('run-a', 2, 1);
      expect(one.length).toBeGreaterThanOrEqual(1);
      expect(one.map((r) => r.seq)).toEqual([2, 3, 4].slice(0, one.length));
      expect(one[0]!.bytes).toEqual(batch[2]);
      expect((await store.readRecords('run-a', 5, 1)).map((r) => r.seq)).toEqual([]);
    });

    it('refuses an append at a stale or future seq and writes nothing', async () => {
      const store = await open();
      await store.append('run-a', 0, records(0, 2));
      const before = await store.readLog('run-a');
      expectRefused(await store.append('run-a', 1, records(1, 1, 'other')), 2, 1, records(1, 1));
      expectRefused(await store.append('run-a', 0, records(0, 3, 'other')), 2, 0, records(0, 2));
      expectRefused(await store.append('run-a', 5, records(5, 1)), 2, 5, []);
      expectRefused(await store.append('run-b', 1, records(1, 1)), 0, 1, []);
      expect(await store.readLog('run-a')).toEqual(before);
      expect(await store.readLog('run-b')).toEqual(new Uint8Array());
      expect((await store.listRuns()).map((r) => r.runId)).toEqual(['run-a']);
      expect(await store.readStatusHint?.('run-b')).toEqual(store.readStatusHint === undefined ? undefined : null);
    });

    it('rejects a batch whose records carry the wrong seqs, writing none of it', async () => {
      const store = await open();
      await store.append('run-a', 0, records(0, 1));
      const bad = [testRecord(1), testRecord(3)];
      await expect(store.append('run-a', 1, bad)).rejects.toBeInstanceOf(StoreError);
      await expect(store.append('run-a', 1, [new Uint8Array(3)])).rejects.toBeInstanceOf(StoreError);
      expect((await store.readRecords('run-a')).map((r) => r.seq)).toEqual([0]);
    });

    it('of concurrent appends at one seq exactly one commits', async () => {
      const store = await open();
      await store.append('run-a', 0, records(0, 1));
      const second = options.openSecondHandle ? await options.openSecondHandle(store) : store;
      if (second !== store) opened.push(second);
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : second).append('run-a', 1, records(1, 2, `writer${i}`))),
      );
      expect(outcomes.filter((o) => o.committed)).toHaveLength(1);
      for (const o of outcomes) expect(o.nextSeq).toBe(3);
      expect((await store.readRecords('run-a')).map((r) => r.seq)).toEqual([0, 1, 2]);
      // Every loser is told exactly what won: the winner's records, from the seq it tried on.
      const winner = outcomes.findIndex((o) => o.committed);
      for (const o of outcomes.filter((x) => !x.committed)) expectRefused(o, 3, 1, records(1, 2, `writer${winner}`));
    });

    it('of concurrent first appends of one new run exactly one commits, and the run is its records', async () => {
      const store = await open();
      const second = options.openSecondHandle ? await options.openSecondHandle(store) : store;
      if (second !== store) opened.push(second);
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : second).append('new-run', 0, records(0, 2, `creator${i}`))),
      );
      expect(outcomes.filter((o) => o.committed)).toHaveLength(1);
      const winner = outcomes.findIndex((o) => o.committed);
      expect(await store.readLog('new-run')).toEqual(concat(records(0, 2, `creator${winner}`)));
      expect((await store.listRuns()).filter((r) => r.runId === 'new-run').map((r) => r.nextSeq)).toEqual([2]);
      for (const o of outcomes.filter((x) => !x.committed)) expectRefused(o, 2, 0, records(0, 2, `creator${winner}`));
    });

    it('a refused append reports the records in the way (if the store reports them) as they stand after the refusal, with their commit times', async () => {
      const store = await open();
      await store.append('run-a', 0, records(0, 1));
      await store.append('run-a', 1, records(1, 1, 'first'));
      await store.append('run-a', 2, records(2, 2, 'then'));
      const outcome = await store.append('run-a', 1, records(1, 1, 'late'));
      expectRefused(outcome, 4, 1, [...records(1, 1, 'first'), ...records(2, 2, 'then')]);
      if (outcome.committed || outcome.tail === undefined) return;
      const stored = await store.readRecords('run-a', 1);
      expect(!outcome.committed && outcome.tail?.map((r) => r.committedAtMs)).toEqual(stored.map((r) => r.committedAtMs));
      // Copies: changing them does not change the store.
      if (!outcome.committed) outcome.tail![0]!.bytes[12] = 0xee;
      expect((await store.readRecords('run-a', 1))[0]!.bytes).toEqual(records(1, 1, 'first')[0]);
    });

    it('readRun (if the store has it) is readSummary with the records from its snapshot seq, or the whole log', async (ctx) => {
      const store = await open();
      if (store.readRun === undefined) return ctx.skip(NO_READ_RUN);
      expect(await store.readRun('nope')).toEqual({ found: null, records: [] });
      await store.append('run-a', 0, records(0, 3));
      const whole = await store.readRun('run-a');
      expect(whole.found).toBeNull();
      expect(whole.records).toEqual(await store.readRecords('run-a'));
      const summary = { recordCount: 4, byteLength: 40, snapshotSeq: 2, summary: new Uint8Array([1, 2]) };
      await store.append('run-a', 3, records(3, 2), summary);
      const fromSummary = await store.readRun('run-a');
      expect(fromSummary.found).toEqual(await store.readSummary?.('run-a'));
      expect(fromSummary.records).toEqual(await store.readRecords('run-a', 2));
    });

    it('keeps runs apart', async () => {
      const store = await open();
      await store.append('run-a', 0, records(0, 2, 'a'));
      await store.append('run-b', 0, records(0, 1, 'b'));
      expect(await store.readLog('run-a')).toEqual(concat(records(0, 2, 'a')));
      expect(await store.readLog('run-b')).toEqual(concat(records(0, 1, 'b')));
      const listed = (await store.listRuns()).filter((r) => r.runId === 'run-a' || r.runId === 'run-b');
      expect(listed.map((r) => [r.runId, r.nextSeq]).sort()).toEqual([['run-a', 2], ['run-b', 1]]);
      for (const r of listed) expect(r.updatedAtMs).toBeGreaterThanOrEqual(r.createdAtMs);
    });

    it('forks: copies the prefix and the fork record atomically, leaves the source byte-identical', async () => {
      const store = await open();
      await store.append('src', 0, records(0, 4, 's'));
      const sourceBefore = await store.readLog('src');
      const forkRecord = testRecord(2, 'fork');
      expect(await store.fork('src', 2, 'dst', forkRecord)).toEqual({ committed: true });
      expect(await store.readLog('src')).toEqual(sourceBefore);
      expect(await store.readLog('dst')).toEqual(concat([...records(0, 2, 's'), forkRecord]));
      expect(await store.append('dst', 3, records(3, 1, 'd'))).toEqual({ committed: true, nextSeq: 4 });
      expect(await store.readLog('src')).toEqual(sourceBefore);
      expect((await store.listRuns()).some((r) => r.runId === 'dst' && r.nextSeq === 4)).toBe(true);
      // A fork of every record of the source (at its head) is a fork like any other.
      expect(await store.fork('src', 4, 'whole', testRecord(4, 'fork'))).toEqual({ committed: true });
      expect(await store.readLog('whole')).toEqual(concat([...records(0, 4, 's'), testRecord(4, 'fork')]));
    });

    it('refuses a fork into an existing run or from a short source, writing nothing', async () => {
      const store = await open();
      await store.append('src', 0, records(0, 2, 's'));
      await store.append('taken', 0, records(0, 1, 't'));
      const takenBefore = await store.readLog('taken');
      expect(await store.fork('src', 1, 'taken', testRecord(1, 'fork'))).toEqual({ committed: false, reason: 'TARGET_EXISTS' });
      expect(await store.readLog('taken')).toEqual(takenBefore);
      expect(await store.fork('src', 5, 'dst', testRecord(5, 'fork'))).toEqual({ committed: false, reason: 'SOURCE_TOO_SHORT' });
      expect(await store.fork('src', 3, 'dst', testRecord(3, 'fork'))).toEqual({ committed: false, reason: 'SOURCE_TOO_SHORT' });
      expect(await store.fork('missing', 1, 'dst2', testRecord(1, 'fork'))).toEqual({ committed: false, reason: 'SOURCE_TOO_SHORT' });
      expect(await store.readLog('dst')).toEqual(new Uint8Array());
      expect(await store.readLog('dst2')).toEqual(new Uint8Array());
      await expect(store.fork('src', 1, 'dst3', testRecord(7, 'fork'))).rejects.toBeInstanceOf(StoreError);
      expect(await store.readLog('dst3')).toEqual(new Uint8Array());
      expect((await store.listRuns()).map((r) => r.runId).sort()).toEqual(['src', 'taken']);
    });

    it('of concurrent forks into one target exactly one commits', async () => {
      const store = await open();
      await store.append('src', 0, records(0, 3, 's'));
      const outcomes = await Promise.all(
        Array.from({ length: 4 }, (_, i) => store.fork('src', 2, 'dst', testRecord(2, `fork${i}`))),
      );
      expect(outcomes.filter((o) => o.committed)).toHaveLength(1);
      expect((await store.readRecords('dst')).map((r) => r.seq)).toEqual([0, 1, 2]);
    });

    it('returns copies: changing returned or appended bytes does not change the store', async () => {
      const store = await open();
      const batch = records(0, 1);
      await store.append('run-a', 0, batch);
      batch[0]![12] = 0xff; // the payload's first byte (a test record is 19 bytes long)
      const read = await store.readLog('run-a');
      read[12] = 0xee;
      const [record] = await store.readRecords('run-a');
      record!.bytes[13] = 0xdd;
      expect(await store.readLog('run-a')).toEqual(concat(records(0, 1)));
      expect((await store.readRecords('run-a')).map((r) => r.bytes)).toEqual(records(0, 1));
    });

    it('bytes a read returned stay as they were: later reads, appends and removals do not change them; a summary passed to append is copied', async () => {
      const store = await open();
      await store.append('run-a', 0, records(0, 2, 'a'));
      await store.append('run-b', 0, records(0, 3, 'b'));
      const log = await store.readLog('run-a');
      const stored = await store.readRecords('run-a');
      await store.readLog('run-b');
      await store.readRecords('run-b');
      expect(log).toEqual(concat(records(0, 2, 'a')));
      expect(stored.map((r) => r.bytes)).toEqual(records(0, 2, 'a'));
      await store.append('run-a', 2, records(2, 1, 'other'));
      await store.readLog('run-a');
      await store.removeLastRecord?.('run-a', 2, records(2, 1, 'other')[0]!);
      expect(log).toEqual(concat(records(0, 2, 'a')));
      expect(stored.map((r) => r.bytes)).toEqual(records(0, 2, 'a'));
      if (store.readSummary === undefined) return;
      const summary = { recordCount: 3, byteLength: 30, snapshotSeq: 1, summary: new Uint8Array([1, 2, 3]) };
      expect((await store.append('run-b', 3, records(3, 1, 'b'), summary)).committed).toBe(true);
      summary.summary[0] = 99;
      const found = await store.readSummary('run-b');
      expect(found?.summary.summary).toEqual(new Uint8Array([1, 2, 3]));
      found!.runStarted.bytes[12] = 0xee;
      expect((await store.readSummary('run-b'))?.runStarted.bytes).toEqual(records(0, 1, 'b')[0]);
    });

    it('keeps any bytes exactly, a large record and a large batch whole, and reads a long run to its end from any seq', async () => {
      const store = await open();
      // Every byte value, in a record far past 64 KiB: bytes, not text, and no column limit.
      const large = testRecord(0, Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7 + (i >> 11)) & 0xff));
      expect(await store.append('run-a', 0, [large])).toEqual({ committed: true, nextSeq: 1 });
      const batch = records(1, 150, 'batch');
      expect(await store.append('run-a', 1, batch)).toEqual({ committed: true, nextSeq: 151 });
      const singles = records(151, 20, 'single');
      for (const [i, record] of singles.entries()) expect(await store.append('run-a', 151 + i, [record])).toEqual({ committed: true, nextSeq: 152 + i });
      const all = [large, ...batch, ...singles];
      expectSameBytes(await store.readLog('run-a'), concat(all), 'readLog');
      const stored = await store.readRecords('run-a');
      expect(stored.map((r) => r.seq)).toEqual(all.map((_, i) => i));
      expectSameBytes(stored[0]!.bytes, large, 'readRecords: record 0');
      expect(stored.slice(1).map((r) => r.bytes)).toEqual(all.slice(1));
      for (const from of [1, 17, 100, 150, 151, 165, 170, 171]) {
        expect(await store.readLog('run-a', from), `readLog from ${from}`).toEqual(concat(all.slice(from)));
        expect((await store.readRecords('run-a', from)).map((r) => r.seq), `readRecords from ${from}`).toEqual(all.map((_, i) => i).slice(from));
      }
      expect((await store.listRuns()).find((r) => r.runId === 'run-a')?.nextSeq).toBe(171);
      expectRefused(await store.append('run-a', 169, records(169, 1, 'late')), 171, 169, singles.slice(-2));
    });

    it('what one handle commits another reads, and it is still there after both are closed (if a second handle can be opened)', async (ctx) => {
      if (options.openSecondHandle === undefined) return ctx.skip(NO_SECOND_HANDLE);
      const store = await open();
      await store.append('run-a', 0, records(0, 2), undefined, 'running');
      // Read by this handle before the other writes: a handle's reads see what another committed
      // after them (a cache that only its own writes refresh passed this test without it).
      expect(await store.readLog('run-a')).toEqual(concat(records(0, 2)));
      expect((await store.readRecords('run-a')).map((r) => r.seq)).toEqual([0, 1]);
      // The same for every other read a handle may answer from what it saw: the listing, the
      // candidates for recovery, the status hint, the summary and readRun.
      const before = await otherReads(store);
      expect(before.listed?.nextSeq).toBe(2);
      const second = await options.openSecondHandle(store);
      opened.push(second);
      expect(await second.readLog('run-a')).toEqual(concat(records(0, 2)));
      const summary = { recordCount: 3, byteLength: 30, snapshotSeq: 2, summary: new Uint8Array([7, 7]) };
      expect(await second.append('run-a', 2, records(2, 1), summary, 'parked')).toEqual({ committed: true, nextSeq: 3 });
      expect(await store.readLog('run-a')).toEqual(concat(records(0, 3)));
      expect((await store.readRecords('run-a')).map((r) => r.seq)).toEqual([0, 1, 2]);
      expect((await store.readRecords('run-a', 2)).map((r) => r.bytes)).toEqual(records(2, 1));
      const after = await otherReads(store);
      expect(after.listed?.nextSeq, 'listRuns after the other handle\'s append').toBe(3);
      if (store.listRunsToRecover !== undefined) {
        expect(before.toRecover, 'listRunsToRecover of a running run').toContain('run-a');
        expect(after.toRecover, 'listRunsToRecover after the other handle parked the run').not.toContain('run-a');
      }
      if (store.readStatusHint !== undefined) expect(after.hint, 'readStatusHint').toEqual({ statusHint: 'parked', recordCount: 3 });
      if (store.readSummary !== undefined) expect(after.summary?.summary, 'readSummary').toEqual(summary);
      if (store.readRun !== undefined) {
        expect(after.run?.found?.summary, 'readRun: the summary').toEqual(summary);
        expect(after.run?.records.map((r) => r.seq), 'readRun: the records from the snapshot seq').toEqual([2]);
      }
      expect(await store.append('run-a', 3, records(3, 1), undefined, 'parked')).toEqual({ committed: true, nextSeq: 4 });
      await store.close();
      await second.close();
      const reopened = await options.openSecondHandle(store);
      opened.push(reopened);
      expect(await reopened.readLog('run-a')).toEqual(concat(records(0, 4)));
      expect((await reopened.listRuns()).find((r) => r.runId === 'run-a')?.nextSeq).toBe(4);
      expect(await reopened.readStatusHint?.('run-a')).toEqual(reopened.readStatusHint === undefined ? undefined : { statusHint: 'parked', recordCount: 4 });
    });

    it('a record\'s commit time is when it was committed: the same at every read', async () => {
      const store = await open();
      await store.append('run-a', 0, records(0, 1));
      const [first] = await store.readRecords('run-a');
      await sleepInternally(25); // the timer REMIT loaded with: a suite run under fake timers still waits
      await store.append('run-a', 1, records(1, 1));
      const [again] = await store.readRecords('run-a');
      expect(again!.committedAtMs).toBe(first!.committedAtMs);
    });

    it('an empty batch at the expected seq commits nothing and changes nothing (no listing); at another seq it is refused', async () => {
      const store = await open();
      expect(await store.append('run-a', 0, [])).toEqual({ committed: true, nextSeq: 0 });
      expect(await store.readLog('run-a')).toEqual(new Uint8Array());
      // No listing either: a run without records is not created by writing none.
      expect((await store.listRuns()).find((r) => r.runId === 'run-a')).toBeUndefined();
      expect(await store.readStatusHint?.('run-a')).toEqual(store.readStatusHint === undefined ? undefined : null);
      // It is conditional like any append: at another seq it is refused.
      expectRefused(await store.append('run-a', 1, []), 0, 1, []);
      await store.append('run-b', 0, records(0, 2));
      expectRefused(await store.append('run-b', 1, []), 2, 1, records(1, 1));
      expect(await store.append('run-b', 2, [])).toEqual({ committed: true, nextSeq: 2 });
      expect(await store.readLog('run-b')).toEqual(concat(records(0, 2)));
    });

    it('keeps well-formed run ids exactly and refuses ones it could not keep (a lone surrogate, NUL)', async () => {
      const store = await open();
      for (const id of ['emoji-🦀', 'été №7', '注文']) {
        expect(await store.append(id, 0, records(0, 1))).toEqual({ committed: true, nextSeq: 1 });
        expect((await store.readRecords(id)).map((r) => r.seq)).toEqual([0]);
      }
      expect((await store.listRuns()).map((r) => r.runId).sort()).toEqual(['emoji-🦀', 'été №7', '注文'].sort());
      for (const id of ['lone-\ud800', 'nul-\u0000']) {
        await expect(store.append(id, 0, records(0, 1))).rejects.toBeInstanceOf(StoreError);
      }
      expect(await store.listRuns()).toHaveLength(3);
    });

    it('keeps ids that differ only in case, normalisation or spacing apart: an id is stored, listed and read exactly as given', async () => {
      const store = await open();
      const ids = ['Order-1', 'order-1', 'ORDER-1', '\u00e9t\u00e9', 'e\u0301te\u0301', 'x', 'x ', ' x', 'ﬁ', 'fi'];
      for (const [i, id] of ids.entries()) expect(await store.append(id, 0, [testRecord(0, `run-${i}`)])).toEqual({ committed: true, nextSeq: 1 });
      expect((await store.listRuns()).map((r) => r.runId).sort()).toEqual([...ids].sort());
      for (const [i, id] of ids.entries()) expect((await store.readRecords(id)).map((r) => r.bytes)).toEqual([testRecord(0, `run-${i}`)]);
    });

    it('lists every run, however many and however long (no page limit, no run left out)', async () => {
      const store = await open();
      const ids = Array.from({ length: 150 }, (_, i) => `many-${String(i).padStart(3, '0')}`);
      for (const [i, id] of ids.entries()) {
        const count = i % 10 === 0 ? 40 : i % 3 === 0 ? 5 : 1;
        expect((await store.append(id, 0, records(0, count, id))).committed).toBe(true);
      }
      const listed = await store.listRuns();
      expect(listed.map((r) => r.runId).sort()).toEqual(ids);
      expect(new Set(listed.map((r) => r.runId)).size).toBe(listed.length);
    });

    it('listRunsPage (if the store has it) pages the listing in runs()\'s order: the pages joined are every run once; an unlisted cursor is null', async (ctx) => {
      const store = await open();
      if (store.listRunsPage === undefined) return ctx.skip();
      // Many runs in few milliseconds, with ids whose UTF-8 and UTF-16 orders differ.
      const ids = Array.from({ length: 60 }, (_, i) => `${i % 2 === 0 ? '\uFFFD' : '\u{1F600}'}page-${String(59 - i).padStart(2, '0')}`);
      for (const id of ids) expect((await store.append(id, 0, records(0, 1, id))).committed).toBe(true);
      const all = [...(await store.listRuns())].sort(compareListings).map((r) => r.runId);
      for (const limit of [1, 7, 60, 61]) {
        const paged: string[] = [];
        for (let after: string | undefined; ;) {
          const page = await store.listRunsPage(after, limit);
          expect(page, `a page after ${after ?? 'the start'}`).not.toBeNull();
          expect(page!.length).toBeLessThanOrEqual(limit);
          paged.push(...page!.map((r) => r.runId));
          if (page!.length < limit) break;
          after = page![page!.length - 1]!.runId;
        }
        expect(paged, `pages of ${limit}`).toEqual(all);
      }
      expect(await store.listRunsPage('never-listed', 5)).toBeNull();
    });

    it('an append carrying a recovery summary commits its records whether or not the store keeps summaries', async () => {
      const store = await open();
      const summary = { recordCount: 2, byteLength: 10, snapshotSeq: 1, summary: new Uint8Array([9, 8, 7]) };
      expect(await store.append('run-a', 0, records(0, 2), summary)).toEqual({ committed: true, nextSeq: 2 });
      expectRefused(await store.append('run-a', 1, records(1, 1, 'late'), summary), 2, 1, records(1, 1));
      expect(await store.append('run-a', 2, records(2, 1), summary)).toEqual({ committed: true, nextSeq: 3 });
      expect((await store.readRecords('run-a')).map((r) => r.bytes)).toEqual(records(0, 3));
    });

    it('readSummary (if the store has it) returns the last summary an append committed, with record 0', async (ctx) => {
      const store = await open();
      if (store.readSummary === undefined) return ctx.skip(NO_SUMMARIES);
      expect(await store.readSummary('run-a')).toBeNull();
      await store.append('run-a', 0, records(0, 3));
      expect(await store.readSummary('run-a')).toBeNull();
      const first = { recordCount: 3, byteLength: 30, snapshotSeq: 1, summary: new Uint8Array([1, 2, 3]) };
      await store.append('run-a', 3, records(3, 1), first);
      const found = await store.readSummary('run-a');
      expect(found?.summary).toEqual(first);
      expect(found?.runStarted.seq).toBe(0);
      expect(found?.runStarted.bytes).toEqual(records(0, 1)[0]);
      // A losing append leaves the summary; a summary past the records is not kept; a later one replaces it.
      expect((await store.append('run-a', 2, records(2, 1), { ...first, recordCount: 4 })).committed).toBe(false);
      expect((await store.readSummary('run-a'))?.summary).toEqual(first);
      await store.append('run-a', 4, records(4, 1), { ...first, recordCount: 9 });
      expect((await store.readSummary('run-a'))?.summary).toEqual(first);
      const second = { recordCount: 5, byteLength: 50, snapshotSeq: 4, summary: new Uint8Array([4, 5]) };
      await store.append('run-a', 5, records(5, 2), second);
      expect((await store.readSummary('run-a'))?.summary).toEqual(second);
      // Returned bytes are copies; other runs and fork targets have none.
      found!.summary.summary[0] = 99;
      expect((await store.readSummary('run-a'))?.summary.summary).toEqual(new Uint8Array([4, 5]));
      expect(await store.fork('run-a', 3, 'run-b', testRecord(3, 'forked'))).toEqual({ committed: true });
      expect(await store.readSummary('run-b')).toBeNull();
      if (store.removeLastRecord === undefined) return;
      const last = (await store.readRecords('run-a', 6))[0]!;
      expect(await store.removeLastRecord('run-a', 6, last.bytes)).toBe(true);
      expect(await store.readSummary('run-a')).toBeNull();
    });

    it('deleteSummary (if the store has it) forgets the summary and nothing else; later appends store new ones', async (ctx) => {
      const store = await open();
      if (store.readSummary === undefined || store.deleteSummary === undefined) return ctx.skip(NO_SUMMARIES);
      await store.deleteSummary('run-a'); // no such run: nothing to do
      const summary = { recordCount: 3, byteLength: 30, snapshotSeq: 1, summary: new Uint8Array([1, 2, 3]) };
      await store.append('run-a', 0, records(0, 3), summary);
      await store.append('run-b', 0, records(0, 3), summary);
      const log = await store.readLog('run-a');
      await store.deleteSummary('run-a');
      await store.deleteSummary('run-a');
      expect(await store.readSummary('run-a')).toBeNull();
      expect(await store.readLog('run-a')).toEqual(log);
      expect((await store.readSummary('run-b'))?.summary).toEqual(summary);
      const next = { ...summary, recordCount: 4 };
      expect((await store.append('run-a', 3, records(3, 1), next)).committed).toBe(true);
      expect((await store.readSummary('run-a'))?.summary).toEqual(next);
    });

    it('removeLastRecord (if the store has it) removes only the last record holding the expected bytes', async (ctx) => {
      const store = await open();
      if (store.removeLastRecord === undefined) return ctx.skip(NO_REMOVE);
      await store.append('run-a', 0, records(0, 3));
      const [, middle, last] = records(0, 3);
      expect(await store.removeLastRecord('run-a', 1, middle!)).toBe(false);
      expect(await store.removeLastRecord('run-a', 2, testRecord(2, 'other bytes'))).toBe(false);
      expect(await store.removeLastRecord('missing', 0, testRecord(0))).toBe(false);
      expect((await store.readRecords('run-a')).map((r) => r.seq)).toEqual([0, 1, 2]);
      expect(await store.removeLastRecord('run-a', 2, last!)).toBe(true);
      expect((await store.readRecords('run-a')).map((r) => r.seq)).toEqual([0, 1]);
      expect((await store.listRuns()).find((r) => r.runId === 'run-a')?.nextSeq).toBe(2);
      expect(await store.append('run-a', 2, records(2, 1, 'again'))).toEqual({ committed: true, nextSeq: 3 });
      expect(await store.removeLastRecord('run-a', 2, last!)).toBe(false);
    });

    it('removeLastRecord (if the store has it) never removes record 0: the run stays as it was and can go on', async (ctx) => {
      const store = await open();
      if (store.removeLastRecord === undefined) return ctx.skip(NO_REMOVE);
      await store.append('run-a', 0, records(0, 1));
      expect(await store.removeLastRecord('run-a', 0, records(0, 1)[0]!)).toBe(false);
      expect((await store.readRecords('run-a')).map((r) => r.seq)).toEqual([0]);
      expect((await store.listRuns()).find((r) => r.runId === 'run-a')?.nextSeq).toBe(1);
      expectRefused(await store.append('run-a', 0, records(0, 1, 'again')), 1, 0, records(0, 1));
      expect(await store.append('run-a', 1, records(1, 1))).toEqual({ committed: true, nextSeq: 2 });
    });

    it('an append or fork carrying a status hint commits like any other, whether or not the store keeps hints', async () => {
      const store = await open();
      expect(await store.append('run-a', 0, records(0, 2), undefined, 'running')).toEqual({ committed: true, nextSeq: 2 });
      expectRefused(await store.append('run-a', 1, records(1, 1, 'late'), undefined, 'completed'), 2, 1, records(1, 1));
      const summary = { recordCount: 3, byteLength: 10, snapshotSeq: 1, summary: new Uint8Array([1]) };
      expect(await store.append('run-a', 2, records(2, 1), summary, 'parked')).toEqual({ committed: true, nextSeq: 3 });
      expect(await store.fork('run-a', 2, 'run-b', testRecord(2, 'forked'), 'running')).toEqual({ committed: true });
      expect((await store.readRecords('run-a')).map((r) => r.bytes)).toEqual(records(0, 3));
    });

    it('a handle refuses an append at a seq another handle filled since it last wrote (the condition is checked in the store, not in a cache of the handle)', async (ctx) => {
      if (options.openSecondHandle === undefined) return ctx.skip(NO_SECOND_HANDLE);
      const store = await open();
      expect(await store.append('run-a', 0, records(0, 2))).toEqual({ committed: true, nextSeq: 2 });
      const second = await options.openSecondHandle(store);
      opened.push(second);
      expect(await second.append('run-a', 2, records(2, 1, 'second'))).toEqual({ committed: true, nextSeq: 3 });
      // The first handle's last write left the run at 2: a store that trusted that would overwrite seq 2.
      expectRefused(await store.append('run-a', 2, records(2, 1, 'first')), 3, 2, records(2, 1, 'second'));
      expect((await store.readRecords('run-a')).map((r) => r.bytes)).toEqual([...records(0, 2), ...records(2, 1, 'second')]);
      expect((await second.readRecords('run-a')).map((r) => r.bytes)).toEqual([...records(0, 2), ...records(2, 1, 'second')]);
    });

    it('lists past 1,000 runs (a page size of many list APIs), and lists to recover past 1,000 candidates', async () => {
      const store = await open();
      const ids = Array.from({ length: 1_030 }, (_, i) => `page-${String(i).padStart(4, '0')}`);
      for (const id of ids) expect((await store.append(id, 0, records(0, 1, id), undefined, 'running')).committed).toBe(true);
      const listed = await store.listRuns();
      expect(listed.map((r) => r.runId).sort()).toEqual(ids);
      if (store.listRunsToRecover !== undefined) expect((await store.listRunsToRecover()).sort()).toEqual(ids);
    });

    it('lists every run whatever its status hint: running, parked, completed, failed or none', async () => {
      const store = await open();
      const hints = ['running', 'parked', 'completed', 'failed', undefined] as const;
      for (const hint of hints) await store.append(`hint-${hint ?? 'none'}`, 0, records(0, 1), undefined, hint);
      expect((await store.listRuns()).map((r) => r.runId).sort()).toEqual(hints.map((hint) => `hint-${hint ?? 'none'}`).sort());
    });

    it('reads a log of several MiB to its end, from any seq (no page limit on reads)', async () => {
      const store = await open();
      const big = Array.from({ length: 6 }, (_, i) => testRecord(i, new Uint8Array(700_000).fill(i + 1)));
      for (const [i, record] of big.entries()) expect(await store.append('run-a', i, [record])).toEqual({ committed: true, nextSeq: i + 1 });
      const stored = await store.readRecords('run-a');
      expect(stored.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5]);
      for (const [i, record] of stored.entries()) expectSameBytes(record.bytes, big[i]!, `readRecords: record ${i}`);
      expect((await store.readRecords('run-a', 2)).map((r) => r.seq)).toEqual([2, 3, 4, 5]);
      expectSameBytes(await store.readLog('run-a'), concat(big), 'readLog');
      expect((await store.listRuns()).find((r) => r.runId === 'run-a')?.nextSeq).toBe(6);
      if (store.readRun !== undefined) expect((await store.readRun('run-a')).records.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    });

    it('a batch holding a 2 MiB record commits whole or not at all, with its status hint', async () => {
      const store = await open();
      await store.append('run-a', 0, records(0, 1), undefined, 'running');
      const batch = [testRecord(1, 'small'), testRecord(2, new Uint8Array(2 << 20).fill(7)), testRecord(3, 'after')];
      const outcome = await store.append('run-a', 1, batch, undefined, 'parked').catch((error: unknown) => error);
      const stored = await store.readRecords('run-a');
      if (outcome instanceof Error) {
        // A store with an item limit may refuse it (a StoreError), but must then have written none of it.
        expect(outcome).toBeInstanceOf(StoreError);
        expect(stored.map((r) => r.seq)).toEqual([0]);
        expect(await store.readStatusHint?.('run-a')).toEqual(store.readStatusHint === undefined ? undefined : { statusHint: 'running', recordCount: 1 });
      } else {
        expect(outcome).toEqual({ committed: true, nextSeq: 4 });
        expect(stored.map((r) => r.seq)).toEqual([0, 1, 2, 3]);
        expectSameBytes(stored[2]!.bytes, batch[1]!, 'the 2 MiB record');
      }
    });

    it('of concurrent removals of one last record exactly one removes it (the removal is conditional in the store)', async (ctx) => {
      const store = await open();
      if (store.removeLastRecord === undefined) return ctx.skip(NO_REMOVE);
      const second = options.openSecondHandle ? await options.openSecondHandle(store) : store;
      if (second !== store) opened.push(second);
      await store.append('run-a', 0, records(0, 3));
      const last = records(0, 3)[2]!;
      const removed = await Promise.all([store.removeLastRecord('run-a', 2, last), second.removeLastRecord!('run-a', 2, last), store.removeLastRecord('run-a', 2, last)]);
      expect(removed.filter(Boolean)).toHaveLength(1);
      expect((await store.readRecords('run-a')).map((r) => r.bytes)).toEqual(records(0, 2));
    });

    describe('status hints (if the store has listRunsToRecover)', () => {
      const hinted = async () => {
        const store = await open();
        return store.listRunsToRecover === undefined || store.correctRunStatuses === undefined ? undefined : store;
      };

      it('lists the runs whose last hint is running or that have none, in listRuns order', async (ctx) => {
        const store = await hinted();
        if (store === undefined) return ctx.skip(NO_HINTS);
        expect(await store.listRunsToRecover!()).toEqual([]);
        await store.append('run-c', 0, records(0, 1), undefined, 'running');
        await store.append('run-p', 0, records(0, 1), undefined, 'running');
        await store.append('run-p', 1, records(1, 1), undefined, 'parked');
        await store.append('run-u', 0, records(0, 1)); // no hint: unknown, a candidate
        await store.append('run-d', 0, records(0, 1), undefined, 'running');
        await store.append('run-d', 1, records(1, 2), undefined, 'completed');
        await store.append('run-f', 0, records(0, 2), undefined, 'failed');
        const order = (await store.listRuns()).map((r) => r.runId);
        expect(await store.listRunsToRecover!()).toEqual(order.filter((id) => id === 'run-c' || id === 'run-u'));
      });

      it('a hint changes only with a committed append that carries one', async (ctx) => {
        const store = await hinted();
        if (store === undefined) return ctx.skip(NO_HINTS);
        await store.append('run-a', 0, records(0, 1), undefined, 'running');
        await store.append('run-a', 1, records(1, 1), undefined, 'parked');
        await store.append('run-a', 2, records(2, 1)); // a step: the hint stays
        expect(await store.listRunsToRecover!()).toEqual([]);
        expect((await store.append('run-a', 1, records(1, 1, 'late'), undefined, 'running')).committed).toBe(false);
        expect(await store.listRunsToRecover!()).toEqual([]);
        await store.append('run-a', 3, records(3, 1), { recordCount: 4, byteLength: 10, snapshotSeq: 1, summary: new Uint8Array([1]) }, 'running');
        expect(await store.listRunsToRecover!()).toEqual(['run-a']);
        await store.append('run-a', 4, records(4, 1));
        expect(await store.listRunsToRecover!()).toEqual(['run-a']);
      });

      it('a fork writes the new run\'s hint (none: unknown); the source keeps its own', async (ctx) => {
        const store = await hinted();
        if (store === undefined) return ctx.skip(NO_HINTS);
        await store.append('src', 0, records(0, 3), undefined, 'running');
        await store.append('src', 3, records(3, 1), undefined, 'completed');
        expect(await store.fork('src', 2, 'fork-r', testRecord(2, 'f'), 'running')).toEqual({ committed: true });
        expect(await store.fork('src', 2, 'fork-p', testRecord(2, 'f'), 'parked')).toEqual({ committed: true });
        expect(await store.fork('src', 2, 'fork-u', testRecord(2, 'f'))).toEqual({ committed: true });
        expect((await store.fork('src', 2, 'fork-p', testRecord(2, 'again'), 'running')).committed).toBe(false);
        expect((await store.listRunsToRecover!()).sort()).toEqual(['fork-r', 'fork-u']);
      });

      it('removeLastRecord makes the hint unknown (the run may be open again)', async (ctx) => {
        const store = await hinted();
        if (store === undefined || store.removeLastRecord === undefined) return ctx.skip(store === undefined ? NO_HINTS : NO_REMOVE);
        const batch = records(0, 3);
        await store.append('run-a', 0, batch, undefined, 'completed');
        expect(await store.listRunsToRecover!()).toEqual([]);
        expect(await store.removeLastRecord('run-a', 1, batch[1]!)).toBe(false);
        expect(await store.listRunsToRecover!()).toEqual([]);
        expect(await store.removeLastRecord('run-a', 2, batch[2]!)).toBe(true);
        expect(await store.listRunsToRecover!()).toEqual(['run-a']);
      });

      it('correctRunStatuses writes each hint only while its run holds the given record count', async (ctx) => {
        const store = await hinted();
        if (store === undefined) return ctx.skip(NO_HINTS);
        await store.append('run-a', 0, records(0, 2));
        await store.append('run-b', 0, records(0, 1));
        const stale = [
          { runId: 'run-a', recordCount: 3, runStatus: 'parked' as const },
          { runId: 'run-a', recordCount: 1, runStatus: 'parked' as const },
          { runId: 'missing', recordCount: 1, runStatus: 'parked' as const },
        ];
        expect(await store.correctRunStatuses!(stale)).toBe(0);
        expect(await store.correctRunStatuses!([])).toBe(0);
        expect(await store.listRunsToRecover!()).toEqual(['run-a', 'run-b']);
        const right = [{ runId: 'run-a', recordCount: 2, runStatus: 'parked' as const }, { runId: 'run-b', recordCount: 1, runStatus: 'completed' as const }];
        expect(await store.correctRunStatuses!([...stale, ...right])).toBe(2);
        expect(await store.listRunsToRecover!()).toEqual([]);
        await store.append('run-a', 2, records(2, 1), undefined, 'running');
        expect(await store.correctRunStatuses!([{ runId: 'run-a', recordCount: 2, runStatus: 'completed' }])).toBe(0);
        expect(await store.listRunsToRecover!()).toEqual(['run-a']);
      });

      it('readStatusHint (if the store has it) reads the hint with the run\'s record count; null for a run it does not hold', async (ctx) => {
        const store = await hinted();
        if (store?.readStatusHint === undefined) return ctx.skip(NO_HINTS);
        expect(await store.readStatusHint('missing')).toBeNull();
        await store.append('run-a', 0, records(0, 2));
        expect(await store.readStatusHint('run-a')).toEqual({ statusHint: null, recordCount: 2 });
        await store.append('run-a', 2, records(2, 1), undefined, 'parked');
        expect(await store.readStatusHint('run-a')).toEqual({ statusHint: 'parked', recordCount: 3 });
        await store.append('run-a', 3, records(3, 1));
        expect(await store.readStatusHint('run-a')).toEqual({ statusHint: 'parked', recordCount: 4 });
        const listed = (await store.listRuns()).find((r) => r.runId === 'run-a');
        if (listed?.statusHint !== undefined) expect(listed).toMatchObject({ nextSeq: 4, statusHint: 'parked' });
      });

      it('a stored hint that is not one of the four counts as unknown: listed to recover, never reported as a status, corrected like any hint', async (ctx) => {
        const store = await hinted();
        if (store === undefined || options.writeStatusHint === undefined) return ctx.skip(NO_HINT_EDIT);
        await store.append('run-a', 0, records(0, 2), undefined, 'running');
        await store.append('run-b', 0, records(0, 1), undefined, 'completed');
        await store.append('run-c', 0, records(0, 1), undefined, 'completed');
        for (const [runId, value] of [['run-a', 'bogus'], ['run-b', 'Completed'], ['run-c', 'done\u001b[2J']] as const) {
          await options.writeStatusHint(store, runId, value);
        }
        const order = (await store.listRuns()).map((r) => r.runId).filter((id) => id.startsWith('run-'));
        expect(await store.listRunsToRecover!()).toEqual(order);
        if (store.readStatusHint !== undefined) {
          expect(await store.readStatusHint('run-a')).toEqual({ statusHint: null, statusHintInvalid: 'bogus', recordCount: 2 });
          expect(await store.readStatusHint('run-b')).toEqual({ statusHint: null, statusHintInvalid: 'Completed', recordCount: 1 });
          expect(await store.readStatusHint('run-c')).toEqual({ statusHint: null, statusHintInvalid: 'done\u001b[2J', recordCount: 1 });
        }
        for (const listing of await store.listRuns()) {
          if (listing.statusHint !== undefined) expect(listing.statusHint, `listing of ${listing.runId}`).toBeNull();
        }
        expect(await store.correctRunStatuses!([{ runId: 'run-a', recordCount: 2, runStatus: 'running' }, { runId: 'run-b', recordCount: 1, runStatus: 'completed' }])).toBe(2);
        expect(await store.listRunsToRecover!()).toEqual(order.filter((id) => id !== 'run-b'));
        expect(await store.readStatusHint?.('run-a')).toEqual(store.readStatusHint === undefined ? undefined : { statusHint: 'running', recordCount: 2 });
        expect((await store.readRecords('run-a')).map((r) => r.bytes)).toEqual(records(0, 2));
      });

      it('a terminal hint written over a running run hides it from listRunsToRecover (the index is trusted); it is read back as stored, and a correction lists the run again', async (ctx) => {
        const store = await hinted();
        if (store === undefined || options.writeStatusHint === undefined) return ctx.skip(NO_HINT_EDIT);
        await store.append('run-a', 0, records(0, 3), undefined, 'running');
        await options.writeStatusHint(store, 'run-a', 'completed');
        expect(await store.listRunsToRecover!()).toEqual([]);
        expect(await store.readStatusHint?.('run-a')).toEqual(store.readStatusHint === undefined ? undefined : { statusHint: 'completed', recordCount: 3 });
        const listed = (await store.listRuns()).find((r) => r.runId === 'run-a');
        if (listed?.statusHint !== undefined) expect(listed.statusHint).toBe('completed');
        expect(await store.correctRunStatuses!([{ runId: 'run-a', recordCount: 3, runStatus: 'running' }])).toBe(1);
        expect(await store.listRunsToRecover!()).toEqual(['run-a']);
      });

      it('refuses a hint that is not one of the four, naming the field, writing nothing', async (ctx) => {
        const store = await hinted();
        if (store === undefined) return ctx.skip(NO_HINTS);
        const bogus = 'done' as unknown as 'completed';
        const error = await store.append('run-a', 0, records(0, 1), undefined, bogus).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StoreError);
        expect(error).toMatchObject({ storeCode: 'BAD_RUN_STATUS', field: 'runStatus', runId: 'run-a' });
        expect(await store.readRecords('run-a')).toEqual([]);
        await store.append('run-a', 0, records(0, 1));
        await expect(store.fork('run-a', 1, 'run-b', testRecord(1), bogus)).rejects.toMatchObject({ storeCode: 'BAD_RUN_STATUS' });
        const corrections = [{ runId: 'run-a', recordCount: 1, runStatus: 'parked' as const }, { runId: 'run-a', recordCount: 1, runStatus: bogus }];
        await expect(store.correctRunStatuses!(corrections)).rejects.toMatchObject({ storeCode: 'BAD_RUN_STATUS', runId: 'run-a' });
        expect(await store.listRunsToRecover!()).toEqual(['run-a']);
      });
    });
  });
}
