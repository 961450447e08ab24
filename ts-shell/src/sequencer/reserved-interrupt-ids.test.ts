/**
 * The interrupt ids the shell writes (`node@parkSeq`) are reserved ids (docs/core-api.md,
 * "Transitions"): unique by their seq, so the core's summary does not list them. A run that parks
 * once per cycle keeps a summary of one size however many cycles it ran, and a fresh process that
 * read that summary still refuses a second resume of any earlier interrupt as already consumed
 * (reading that interrupt's claim alone, the record after its park), with the value it was
 * claimed with.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { AlreadyConsumedError, BeyondHeadError, ImplicitForkError, LogCorruptError, UnknownInterruptError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { SqliteStore } from '../store/sqlite.js';
import type { Store, StoredRecord } from '../store/store.js';
import { workflow } from '../workflow/workflow.js';
import { countingReads } from '../../test-support/counting-reads.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-reserved-ids-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** How many times `ask` ran in this file (a continue refused must run no node code). */
let askRuns = 0;

/** ask (pure) -> approve (interrupt) -> ask ... : one park per cycle, for ever. */
const approvals = workflow({ name: 'approvals', version: '1', state: z.object({ n: z.number().int(), last: z.string() }) })
  .pure('ask', { run: (s) => { askRuns += 1; return { n: s.n + 1 }; }, next: 'approve' })
  .interrupt('approve', { resume: z.object({ by: z.string() }), apply: (s, v) => ({ last: v.by }), next: 'ask' })
  .build();

/** The seq of the claim of reserved id `node@park`: the record after its park. */
const claimSeqOf = (id: string) => Number(id.slice(id.indexOf('@') + 1)) + 1;

function opener(kind: 'memory' | 'sqlite'): () => Store {
  if (kind === 'memory') {
    const backing = new MemoryBacking();
    return () => new MemoryStore({ backing });
  }
  const path = join(dir, `s${files++}.db`);
  return () => new SqliteStore(path);
}

describe.each(['reference', 'wasm'] as const)('reserved interrupt ids (%s core)', (coreKind) => {
  it.each(['memory', 'sqlite'] as const)('the stored summary keeps one size over the cycles; an old interrupt is still refused as consumed (%s store)', async (storeKind) => {
    const open = opener(storeKind);
    const store = open();
    const remit = new Remit(store, await createCore(coreKind), [approvals]);
    let result: Awaited<ReturnType<Remit['resume']>> = await remit.start(approvals, { n: 0, last: '' }, { runId: 'r' });
    const ids: string[] = [];
    const summaryBytes: number[] = [];
    for (let cycle = 1; cycle <= 400; cycle++) {
      ids.push(result.interrupt!.id);
      result = await remit.resume('r', result.interrupt!.id, { by: `user-${cycle}` });
      if (cycle % 100 === 0) summaryBytes.push((await store.readSummary!('r'))!.summary.summary.length);
    }
    await store.close();
    // Listed, the 300 ids parked between the first and the last reading would add about 20 bytes
    // each; only the counters and the digits of the phase's id may change.
    expect(Math.max(...summaryBytes) - Math.min(...summaryBytes)).toBeLessThanOrEqual(4);

    // A fresh process, reading from the stored summary.
    const fresh = new Remit(open(), await createCore(coreKind), [approvals]);
    const firstClaim = await fresh.resume('r', ids[0]!, { by: 'user-1' }).then(() => null, (error: unknown) => error);
    expect(firstClaim).toBeInstanceOf(AlreadyConsumedError);
    expect((firstClaim as AlreadyConsumedError).sameValue).toBe(true);
    expect((firstClaim as AlreadyConsumedError).claimedValue).toEqual({ by: 'user-1' });
    const other = await fresh.resume('r', ids[199]!, { by: 'someone else' }).then(() => null, (error: unknown) => error);
    expect(other).toBeInstanceOf(AlreadyConsumedError);
    expect((other as AlreadyConsumedError).sameValue).toBe(false);
    expect((other as AlreadyConsumedError).claimedValue).toEqual({ by: 'user-200' });
    // An id of the reserved form that no park used: a seq past the head, a seq of a pure step.
    const head = (await fresh.status('r')).interrupt!.parkedSeq;
    await expect(fresh.resume('r', `approve@${head + 5}`, { by: 'x' })).rejects.toBeInstanceOf(UnknownInterruptError);
    await expect(fresh.resume('r', 'approve@1', { by: 'x' })).rejects.toBeInstanceOf(UnknownInterruptError);
    // Nothing was written by the refusals; the parked interrupt resumes.
    const after = await new Remit(open(), await createCore(coreKind), [approvals]).resume('r', result.interrupt!.id, { by: 'last' });
    expect(after.status).toBe('parked');
    expect(after.state).toEqual({ n: 402, last: 'last' });
  });

  /** Run 'r' on `store` through `cycles` park-and-resume cycles, the k-th resumed by user-k (from 0); the ids it parked, in order. */
  async function cycled(store: Store, cycles: number): Promise<string[]> {
    const remit = new Remit(store, await createCore(coreKind), [approvals]);
    let result: Awaited<ReturnType<Remit['resume']>> = await remit.start(approvals, { n: 0, last: '' }, { runId: 'r' });
    const ids: string[] = [];
    for (let cycle = 0; cycle < cycles; cycle++) {
      ids.push(result.interrupt!.id);
      result = await remit.resume('r', result.interrupt!.id, { by: `user-${cycle}` });
    }
    await remit.close();
    return ids;
  }

  it.each(['memory', 'sqlite'] as const)('a second click on an old request reads that request\'s claim, not the log (%s store)', async (storeKind) => {
    const open = opener(storeKind);
    const ids = await cycled(open(), 300);
    const { store, count } = countingReads(open());
    const fresh = new Remit(store, await createCore(coreKind), [approvals]);
    const error = await fresh.resume('r', ids[5]!, { by: 'user-5' }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(AlreadyConsumedError);
    expect(error).toMatchObject({ seq: claimSeqOf(ids[5]!), sameValue: true, claimedValue: { by: 'user-5' } });
    // The run's tail from its stored summary's snapshot, then the claim: a few dozen of its 900 records.
    expect(count.records).toBeLessThan(100);
    // Read once: the refusal's claimed value comes from that read, not from a second one.
    expect(count.recordsFrom.filter((from) => from === claimSeqOf(ids[5]!))).toHaveLength(1);
    await fresh.close();
  });

  it.each(['memory', 'sqlite'] as const)('a made-up id of the reserved form (a pure step\'s seq) is refused reading one record, not the log (%s store)', async (storeKind) => {
    const open = opener(storeKind);
    const ids = await cycled(open(), 300);
    const { store, count } = countingReads(open());
    const fresh = new Remit(store, await createCore(coreKind), [approvals]);
    // The seq after a claim is the pure step `ask`'s completion: no park of approve is there.
    const madeUp = `approve@${claimSeqOf(ids[5]!) + 1}`;
    const error = await fresh.resume('r', madeUp, { by: 'mallory' }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownInterruptError);
    expect((error as UnknownInterruptError).message).toContain(`the run is parked on approve@`);
    expect(count.records).toBeLessThan(100);
    expect(count.recordsFrom).not.toContain(0);
    // Nothing was written: the run is parked where it was.
    expect((await fresh.status('r')).interrupt!.id).not.toBe(madeUp);
    await fresh.close();
  });

  it.each(['memory', 'sqlite'] as const)('a continue from a seq of a long run (continueRun fromSeq) reads the tail and at most that record, not the log (%s store)', async (storeKind) => {
    const open = opener(storeKind);
    const ids = await cycled(open(), 300);
    const core = await createCore(coreKind);
    const head = (await new Remit(open(), core, [approvals]).status('r')).headSeq;
    /** `fromSeq` continued by a fresh process: its answer, and what it read. */
    const continued = async (fromSeq: number) => {
      const { store, count } = countingReads(open());
      const answer = await new Remit(store, core, [approvals]).continueRun('r', { fromSeq }).then((r) => r, (e: unknown) => e);
      return { answer, count };
    };
    // ask's completion after a claim (a checkpoint: the refusal names the fork), approve's park (none).
    const checkpoint = claimSeqOf(ids[5]!) + 1;
    const park = claimSeqOf(ids[5]!) - 1;
    for (const [fromSeq, requestedIsCheckpoint] of [[checkpoint, true], [park, false]] as const) {
      const { answer, count } = await continued(fromSeq);
      expect(answer).toBeInstanceOf(ImplicitForkError);
      expect(answer).toMatchObject({ seq: head, requestedSeq: fromSeq, requestedIsCheckpoint });
      expect(count.records).toBeLessThan(100);
      expect(count.recordsFrom).not.toContain(0);
    }
    // From the head: driven as continueRun drives it, parked where it was; past it: refused.
    const atHead = await continued(head);
    expect(atHead.answer).toMatchObject({ status: 'parked', headSeq: head, interrupt: { id: `approve@${head}` } });
    expect(atHead.count.records).toBeLessThan(100);
    expect(atHead.count.recordsFrom).not.toContain(0);
    expect((await continued(head + 1)).answer).toBeInstanceOf(BeyondHeadError);
    // A store whose limited reads start at seq 0 whatever they are asked (a custom store's bug; its
    // reads of a run's tail are sound): the record read is not record `checkpoint`, so the whole
    // log decides, not "no checkpoint".
    const sloppy = Object.create(open()) as Store;
    const inner = open();
    sloppy.readRecords = (runId, fromSeq, limit) => inner.readRecords(runId, limit === undefined ? fromSeq : 0, limit);
    const answer = await new Remit(sloppy, core, [approvals]).continueRun('r', { fromSeq: checkpoint }).then((r) => r, (e: unknown) => e);
    expect(answer).toMatchObject({ name: 'ImplicitForkError', requestedIsCheckpoint: true });
  });

  /** A run of 100 cycles on SQLite, and a reader whose every read returns record `damagedSeq` with a byte flipped. */
  async function damagedRun(damagedSeq: (ids: string[]) => number) {
    const path = join(dir, `damaged-${coreKind}-${files++}.db`);
    const ids = await cycled(new SqliteStore(path), 100);
    const seq = damagedSeq(ids);
    const damaged = (record: StoredRecord): StoredRecord => {
      if (record.seq !== seq) return record;
      const flipped = record.bytes.slice();
      flipped[flipped.length - 6]! ^= 0xff;
      return { ...record, bytes: flipped };
    };
    const raw = new SqliteStore(path);
    const store = Object.create(raw) as SqliteStore;
    store.readRecords = async (...args) => (await raw.readRecords(...args)).map(damaged);
    store.readRun = async (runId) => {
      const read = await raw.readRun(runId);
      return { ...read, records: read.records.map(damaged) };
    };
    return { ids, seq, reader: new Remit(store, await createCore(coreKind), [approvals]) };
  }

  it('a stale resume reads the claim alone: damage elsewhere before the snapshot is scrub\'s to find, as for status', async () => {
    const { ids, reader } = await damagedRun(() => 20);
    expect((await reader.status('r')).status).toBe('parked');
    const error = await reader.resume('r', ids[30]!, { by: 'user-30' }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(AlreadyConsumedError);
    expect(error).toMatchObject({ seq: claimSeqOf(ids[30]!), sameValue: true, claimedValue: { by: 'user-30' } });
    expect((await reader.scrub('r')).damage).toMatchObject({ seq: 20 });
    await reader.close();
  });

  it('a made-up id reads the record after its seq alone: damage before the snapshot is scrub\'s to find; damage in that record is named', async () => {
    const madeUpSeq = (ids: string[]) => claimSeqOf(ids[30]!) + 1;
    const elsewhere = await damagedRun(() => 20);
    const refused = await elsewhere.reader.resume('r', `approve@${madeUpSeq(elsewhere.ids)}`, { by: 'x' }).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(UnknownInterruptError);
    expect((await elsewhere.reader.scrub('r')).damage).toMatchObject({ seq: 20 });
    await elsewhere.reader.close();
    // The record after the made-up seq is the damaged one: the whole log is read, and it names it.
    const there = await damagedRun((all) => madeUpSeq(all) + 1);
    const named = await there.reader.resume('r', `approve@${madeUpSeq(there.ids)}`, { by: 'x' }).then(() => null, (e: unknown) => e);
    expect(named).toBeInstanceOf(LogCorruptError);
    expect((named as LogCorruptError).seq).toBe(there.seq);
    await there.reader.close();
  });

  it('a continue from an earlier seq whose record is damaged reads the whole log and names the damage, never "not a checkpoint"', async () => {
    // ask's completion after the 30th claim: a checkpoint before the summary's snapshot.
    const checkpoint = (ids: string[]) => claimSeqOf(ids[30]!) + 1;
    const { ids, seq, reader } = await damagedRun(checkpoint);
    expect(seq).toBe(checkpoint(ids));
    const error = await reader.continueRun('r', { fromSeq: seq }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(LogCorruptError);
    expect((error as LogCorruptError).seq).toBe(seq);
    // Damage elsewhere before the snapshot is not read: the refusal says a fork can start there.
    const elsewhere = await damagedRun(() => 20);
    const refused = await elsewhere.reader.continueRun('r', { fromSeq: checkpoint(elsewhere.ids) }).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(ImplicitForkError);
    expect(refused).toMatchObject({ requestedIsCheckpoint: true });
    expect((await elsewhere.reader.scrub('r')).damage).toMatchObject({ seq: 20 });
    await Promise.all([reader.close(), elsewhere.reader.close()]);
  });

  /**
   * A store whose limited reads start at seq 0 whatever they are asked (so a continue's one-record
   * read of `fromSeq` does not read as that record and the whole log is read instead), around
   * `inner`; `beforeLimitedRead` runs before each such read.
   */
  function sloppyLimitedReads(inner: Store, beforeLimitedRead: () => Promise<void> = async () => {}): Store {
    const sloppy = Object.create(inner) as Store;
    sloppy.readRecords = async (runId, fromSeq, limit) => {
      if (limit !== undefined) await beforeLimitedRead();
      return inner.readRecords(runId, limit === undefined ? fromSeq : 0, limit);
    };
    return sloppy;
  }

  it.each(['memory', 'sqlite'] as const)('a continue whose fallback reads fewer records than the first read showed says the store cut its read short (%s store)', async (storeKind) => {
    const open = opener(storeKind);
    const ids = await cycled(open(), 100);
    const inner = open();
    // Its whole reads stop at 50 records (a page limit); its tail reads are sound.
    const sloppy = sloppyLimitedReads(inner);
    const cut = Object.create(sloppy) as Store;
    cut.readRecords = async (runId, fromSeq, limit) => {
      const rows = await sloppy.readRecords(runId, fromSeq, limit);
      return (fromSeq ?? 0) === 0 && limit === undefined ? rows.slice(0, 50) : rows;
    };
    const checkpoint = claimSeqOf(ids[60]!) + 1;
    const reader = new Remit(cut, await createCore(coreKind), [approvals]);
    const error = await reader.continueRun('r', { fromSeq: checkpoint }).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ name: 'StoreError', storeCode: 'READS_CUT_SHORT', runId: 'r', seq: 50 });
    await reader.close();
  });

  it.each(['memory', 'sqlite'] as const)('a continue whose fallback read is behind the store (a stale whole read, then a sound one) answers from the run as it is (%s store)', async (storeKind) => {
    const open = opener(storeKind);
    const ids = await cycled(open(), 100);
    const core = await createCore(coreKind);
    const head = (await new Remit(open(), core, [approvals]).status('r')).headSeq;
    const checkpoint = claimSeqOf(ids[60]!) + 1;
    // Its first whole read ends at the requested checkpoint (a replica behind the primary), which
    // read alone would make it the head; every later read is sound.
    const inner = open();
    const sloppy = sloppyLimitedReads(inner);
    const stale = Object.create(sloppy) as Store;
    let staleReads = 0;
    stale.readRecords = async (runId, fromSeq, limit) => {
      const rows = await sloppy.readRecords(runId, fromSeq, limit);
      if ((fromSeq ?? 0) !== 0 || limit !== undefined || staleReads > 0) return rows;
      staleReads += 1;
      return rows.slice(0, checkpoint + 1);
    };
    const reader = new Remit(stale, core, [approvals]);
    const error = await reader.continueRun('r', { fromSeq: checkpoint }).then(() => null, (e: unknown) => e);
    expect(staleReads).toBe(1);
    expect(error).toBeInstanceOf(ImplicitForkError);
    expect(error).toMatchObject({ seq: head, requestedSeq: checkpoint, requestedIsCheckpoint: true });
    // Nothing written: the run is parked where it was.
    expect((await new Remit(open(), core, [approvals]).status('r')).headSeq).toBe(head);
    await reader.close();
  });

  it.each(['memory', 'sqlite'] as const)('a continue whose fallback reads are behind the store twice (a replica catching up in steps) says the store cut its reads short: no node run, nothing written (%s store)', async (storeKind) => {
    const open = opener(storeKind);
    const ids = await cycled(open(), 100);
    const core = await createCore(coreKind);
    const head = (await new Remit(open(), core, [approvals]).status('r')).headSeq;
    const checkpoint = claimSeqOf(ids[60]!) + 1;
    // Its first whole read ends at the requested checkpoint, its second one record later, though
    // a read from there shows the records up to the head: taken, the second read made the
    // continue run `ask` from a seq that is not the head (its append then refused).
    const sloppy = sloppyLimitedReads(open());
    const behind = Object.create(sloppy) as Store;
    let wholeReads = 0;
    behind.readRecords = async (runId, fromSeq, limit) => {
      const rows = await sloppy.readRecords(runId, fromSeq, limit);
      if ((fromSeq ?? 0) !== 0 || limit !== undefined) return rows;
      wholeReads += 1;
      return wholeReads <= 2 ? rows.slice(0, checkpoint + wholeReads) : rows;
    };
    const reader = new Remit(behind, core, [approvals]);
    const asksBefore = askRuns;
    const error = await reader.continueRun('r', { fromSeq: checkpoint }).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ name: 'StoreError', storeCode: 'READS_CUT_SHORT', runId: 'r', seq: checkpoint + 2 });
    expect(askRuns).toBe(asksBefore);
    expect((await new Remit(open(), core, [approvals]).status('r')).headSeq).toBe(head);
    await reader.close();
  });

  it.each(['memory', 'sqlite'] as const)('a continue refused after its fallback read names the head that read saw, when another writer appended meanwhile (%s store)', async (storeKind) => {
    const open = opener(storeKind);
    const ids = await cycled(open(), 100);
    const core = await createCore(coreKind);
    const other = new Remit(open(), core, [approvals]);
    const parked = (await other.status('r')).interrupt!.id;
    let appended = false;
    const racing = sloppyLimitedReads(open(), async () => {
      if (appended) return;
      appended = true;
      await other.resume('r', parked, { by: 'other' });
    });
    const checkpoint = claimSeqOf(ids[60]!) + 1;
    const reader = new Remit(racing, core, [approvals]);
    const error = await reader.continueRun('r', { fromSeq: checkpoint }).then(() => null, (e: unknown) => e);
    const head = (await new Remit(open(), core, [approvals]).status('r')).headSeq;
    expect(appended).toBe(true);
    expect(head).toBeGreaterThan(claimSeqOf(parked));
    expect(error).toBeInstanceOf(ImplicitForkError);
    expect(error).toMatchObject({ seq: head, requestedSeq: checkpoint, requestedIsCheckpoint: true });
    await Promise.all([other.close(), reader.close()]);
  });

  it('a stale resume whose claim is the damaged record reads the whole log and names the damage', async () => {
    const { ids, seq, reader } = await damagedRun((all) => claimSeqOf(all[30]!));
    expect((await reader.status('r')).status).toBe('parked');
    const error = await reader.resume('r', ids[30]!, { by: 'user-30' }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(LogCorruptError);
    expect((error as LogCorruptError).message).toContain('BAD_CHECKSUM');
    expect((error as LogCorruptError).seq).toBe(seq);
    await reader.close();
  });

});
