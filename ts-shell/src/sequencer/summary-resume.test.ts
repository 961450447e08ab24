/**
 * Fresh-process reads from the stored recovery summary (docs/guide.md, "Fresh-process resume"): a
 * session that reads the summary, record 0 and the records from the summary's snapshot on gives
 * the very answer of a session that reads the whole log, on both cores and on the memory, SQLite
 * and PostgreSQL stores; a damaged, stale or wrong summary never changes an answer (the session falls back to the
 * whole log), and `Remit.scrub` is the check that finds a wrong one.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { NotACheckpointError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { PostgresStore } from '../store/postgres.js';
import { SqliteStore } from '../store/sqlite.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import type { RecoverySummary, Store, StoredRecord } from '../store/store.js';
import { END, workflow } from '../workflow/workflow.js';
import { SUMMARY_EVERY_RECORDS } from './run-session.js';
import { openSummary, sealSummary } from './stored-summary.js';

const State = z.object({ i: z.number().int(), pad: z.string() });

/** think (pure) -> send (effect) -> ... until i reaches `steps`, then park at approve (or end). */
function mixedLoop(steps: number, park: boolean) {
  return workflow({ name: 'mixed', version: '1', state: State })
    .pure('think', { run: (s) => ({ i: s.i + 1, pad: `${s.pad}x`.slice(-40) }), next: 'send' })
    .effect('send', { run: async () => ({ ok: true }), apply: (s) => ({ i: s.i + 1 }), next: (s) => (s.i < steps ? 'think' : park ? 'approve' : END) })
    .interrupt('approve', { resume: z.boolean(), apply: (s) => ({ i: s.i + 1 }), next: END })
    .build();
}

/** `store` without the summary capability, counting the records every read returns. */
function counted(store: Store, withSummaries: boolean): { store: Store; read: { records: number } } {
  const read = { records: 0 };
  const view: Store = {
    description: store.description,
    readLog: (runId, fromSeq) => store.readLog(runId, fromSeq),
    readRecords: async (runId, fromSeq) => {
      const rows = await store.readRecords(runId, fromSeq);
      read.records += rows.length;
      return rows;
    },
    append: (runId, expectedSeq, records, summary) => store.append(runId, expectedSeq, records, withSummaries ? summary : undefined),
    fork: (...args) => store.fork(...args),
    listRuns: () => store.listRuns(),
    close: async () => {},
  };
  if (withSummaries && store.readSummary) {
    const readSummary = store.readSummary.bind(store);
    view.readSummary = async (runId) => {
      const found = await readSummary(runId);
      if (found !== null) read.records += 1;
      return found;
    };
  }
  return { store: view, read };
}

/** Fork `runId` at the first checkpoint at or after `seq` (a record that is no checkpoint is refused). */
async function forkAtOrAfter(remit: Remit, runId: string, seq: number, newRunId: string) {
  for (let at = Math.max(1, seq); ; at++) {
    try {
      return await remit.fork(runId, at, { newRunId });
    } catch (error) {
      if (!(error instanceof NotACheckpointError)) throw error;
    }
  }
}

type StoreKind = 'memory' | 'sqlite';
const dir = mkdtempSync(join(tmpdir(), 'remit-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A store kind whose `open()` is a new view on the same data (a fresh process). */
function storeOf(kind: StoreKind): () => Store {
  if (kind === 'memory') {
    const backing = new MemoryBacking();
    return () => new MemoryStore({ backing });
  }
  const path = join(dir, `s${files++}.db`);
  return () => new SqliteStore(path);
}

describe.each(['reference', 'wasm'] as const)('fresh-process reads from the stored summary (%s core)', (coreKind) => {
  it.each(['memory', 'sqlite'] as const)('give the answers of the whole log, reading fewer records (%s store)', async (storeKind) => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 160 }), fc.boolean(), async (steps, park) => {
        const wf = mixedLoop(steps, park);
        const open = storeOf(storeKind);
        const writer = open();
        const first = await new Remit(writer, await createCore(coreKind), [wf]).start(wf, { i: 0, pad: '' }, { runId: 'r' });
        await writer.close();
        expect(first.status).toBe(park ? 'parked' : 'completed');

        const whole = counted(open(), false);
        const tail = counted(open(), true);
        const fromWhole = await new Remit(whole.store, await createCore(coreKind), [wf]).status('r');
        const fromTail = await new Remit(tail.store, await createCore(coreKind), [wf]).status('r');
        expect(fromTail).toEqual(fromWhole);
        expect(fromTail).toEqual(first);
        const records = (await open().readRecords('r')).length;
        expect(whole.read.records).toBe(records);
        if (records >= 4 * SUMMARY_EVERY_RECORDS) expect(tail.read.records).toBeLessThan(records / 2);

        if (park) {
          // Resume and continue in fresh processes, from the summary, to the same end.
          const resumed = await new Remit(counted(open(), true).store, await createCore(coreKind), [wf]).resume('r', first.interrupt!.id, true);
          expect(resumed.status).toBe('completed');
          const again = await new Remit(counted(open(), true).store, await createCore(coreKind), [wf]).continueRun('r');
          expect(again).toEqual(resumed);
          expect(await new Remit(counted(open(), false).store, await createCore(coreKind), [wf]).status('r')).toEqual(resumed);
        }
        const scrub = await new Remit(open(), await createCore(coreKind), [wf]).scrub('r');
        expect(scrub.damage).toBeNull();
        expect(scrub.summaryAgrees).not.toBe(false);
      }),
      { numRuns: 12 },
    );
  });

  /**
   * A fork's summary names the fork while its record 0 names the source: the session compared the
   * two, so every fresh read of a fork fell back to the whole log (the answers were right, the
   * summaries written for it were never used).
   */
  it.each(['memory', 'sqlite'] as const)('a fork, and a fork of a fork, read from their own summaries too (%s store)', async (storeKind) => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 100, max: 160 }), fc.double({ min: 0, max: 0.3, noNaN: true }), fc.boolean(), async (steps, at, twice) => {
        const wf = mixedLoop(steps, true);
        const open = storeOf(storeKind);
        const writer = open();
        const remit = new Remit(writer, await createCore(coreKind), [wf]);
        await remit.start(wf, { i: 0, pad: '' }, { runId: 'r' });
        let runId = 'r';
        let forkSeq = 0;
        for (const target of twice ? ['f1', 'f2'] : ['f1']) {
          forkSeq = (await forkAtOrAfter(remit, runId, Math.floor(at * (await remit.status(runId)).headSeq), target)).forkSeq;
          runId = target;
          expect((await remit.continueRun(runId)).status).toBe('parked');
        }
        const parked = await remit.status(runId);
        await writer.close();

        const whole = counted(open(), false);
        const tail = counted(open(), true);
        const fromWhole = await new Remit(whole.store, await createCore(coreKind), [wf]).status(runId);
        const fromTail = await new Remit(tail.store, await createCore(coreKind), [wf]).status(runId);
        expect(fromTail).toEqual(fromWhole);
        expect(fromTail).toEqual(parked);
        const records = (await open().readRecords(runId)).length;
        expect(whole.read.records).toBe(records);
        if (records - forkSeq >= 4 * SUMMARY_EVERY_RECORDS) expect(tail.read.records).toBeLessThan(records / 2);

        const resumed = await new Remit(counted(open(), true).store, await createCore(coreKind), [wf]).resume(runId, parked.interrupt!.id, true);
        expect(resumed.status).toBe('completed');
        expect(await new Remit(counted(open(), false).store, await createCore(coreKind), [wf]).status(runId)).toEqual(resumed);
        expect((await new Remit(open(), await createCore(coreKind), [wf]).scrub(runId)).summaryAgrees).toBe(true);
      }),
      { numRuns: 8 },
    );
  });

  it('a damaged, stale or foreign summary changes no answer, and scrub reports it (canary)', async () => {
    const wf = mixedLoop(200, true);
    const backing = new MemoryBacking();
    const stored: RecoverySummary[] = [];
    const writer = new MemoryStore({ backing });
    const capture: Store = Object.assign(Object.create(writer) as MemoryStore, {
      append: (runId: string, seq: number, records: Uint8Array[], summary?: RecoverySummary) => {
        if (summary !== undefined) stored.push({ ...summary, summary: summary.summary.slice() });
        return writer.append(runId, seq, records, summary);
      },
    });
    const core = await createCore(coreKind);
    const parked = await new Remit(capture, core, [wf]).start(wf, { i: 0, pad: '' }, { runId: 'c' });
    await new Remit(capture, core, [wf]).start(wf, { i: 0, pad: 'other' }, { runId: 'd' });
    expect(stored.length).toBeGreaterThan(2);
    const run = backing.runs.get('c')!;
    const good = run.summary!;
    const foreign = backing.runs.get('d')!.summary!;
    const fresh = () => new Remit(new MemoryStore({ backing }), core, [wf]);
    expect((await fresh().scrub('c')).summaryAgrees).toBe(true);

    const stale = stored.find((s) => s.recordCount < good.recordCount)!;
    const goodCore = openSummary(good)!;
    const staleCore = openSummary(stale)!;
    const flipped = goodCore.slice();
    flipped[flipped.length >> 1]! ^= 0xff;
    const reseal = (summary: RecoverySummary, core: Uint8Array) => sealSummary(summary.recordCount, summary.byteLength, summary.snapshotSeq, core);
    // Damage at rest (the checksum refuses it) and summaries with a valid checksum that do not
    // line up with the records after them (the tail checks refuse them): whole-log answers.
    const refused: [string, RecoverySummary][] = [
      ['garbage bytes', { ...good, summary: new Uint8Array([1, 2, 3]) }],
      ['one byte flipped under the old checksum', { ...good, summary: Uint8Array.from([...flipped, ...good.summary.subarray(-4)]) }],
      ['a record count changed under the old checksum', { ...good, recordCount: good.recordCount - 1 }],
      ['a stale summary resealed under the current counts', reseal(good, staleCore)],
      ["another run's summary", { ...foreign }],
      ['a snapshot seq past the summary, resealed', reseal({ ...good, snapshotSeq: good.recordCount + 5 }, goodCore)],
      ['a byte length off by one, resealed', reseal({ ...good, byteLength: good.byteLength - 1 }, goodCore)],
    ];
    for (const [why, summary] of refused) {
      run.summary = summary;
      expect(await fresh().status('c'), why).toEqual(parked);
      expect((await fresh().scrub('c')).summaryAgrees, why).toBe(false);
    }
    // A well-formed wrong summary under a valid checksum (only a bug or a hand edit makes one):
    // the fresh process cannot see it, the scrub does.
    run.summary = reseal(good, flipped);
    expect((await fresh().scrub('c')).summaryAgrees).toBe(false);
    run.summary = good;
    // A removal of the last record (repair) drops the summary: it may cover that record.
    const last: StoredRecord = run.records[run.records.length - 1]!;
    expect(await new MemoryStore({ backing }).removeLastRecord('c', last.seq, last.bytes)).toBe(true);
    expect(run.summary).toBeUndefined();
    expect((await fresh().scrub('c')).summaryRecords).toBeNull();
  });
});

describe.each(['reference', 'wasm'] as const)('record 0 under a stored summary (%s core)', (coreKind) => {
  it('a damaged record 0 is found by a fresh process, which reads the whole log (docs/guide.md, "Fresh-process resume": checked)', async () => {
    const wf = mixedLoop(200, true);
    const backing = new MemoryBacking();
    const core = await createCore(coreKind);
    const parked = await new Remit(new MemoryStore({ backing }), core, [wf]).start(wf, { i: 0, pad: '' }, { runId: 'z' });
    const run = backing.runs.get('z')!;
    expect(run.summary).toBeDefined();
    const fresh = () => new Remit(new MemoryStore({ backing }), core, [wf]);
    expect(await fresh().status('z')).toEqual(parked);
    // One byte of record 0's payload flipped: its checksum fails.
    const zero = run.records[0]!.bytes;
    zero[zero.length >> 1]! ^= 0xff;
    for (const call of [() => fresh().status('z'), () => fresh().continueRun('z'), () => fresh().resume('z', parked.interrupt!.id, true), () => fresh().workflowOf('z')]) {
      await expect(call()).rejects.toMatchObject({ code: 'REMIT_LOG_CORRUPT', seq: 0 });
    }
    expect(run.records.length).toBe(parked.headSeq + 1);
  });

  it("a sound record 0 of another definition is not taken on the summary's word", async () => {
    const wf = mixedLoop(200, true);
    const other = workflow({ name: 'mixed', version: '2', state: State }).pure('p', { run: (s) => s, next: END }).build();
    const backing = new MemoryBacking();
    const core = await createCore(coreKind);
    const parked = await new Remit(new MemoryStore({ backing }), core, [wf]).start(wf, { i: 0, pad: '' }, { runId: 'z' });
    await new Remit(new MemoryStore({ backing }), core, [other]).start(other, { i: 0, pad: '' }, { runId: 'z2' });
    // Record 0 replaced by another run's (its frame sound, linked as a first record is).
    backing.runs.get('z')!.records[0] = { ...backing.runs.get('z2')!.records[0]! };
    await expect(new Remit(new MemoryStore({ backing }), core, [wf]).status('z')).rejects.toMatchObject({ code: 'REMIT_LOG_CORRUPT' });
    expect(parked.status).toBe('parked');
  });

  it("a sound record 0 of another run of the same definition is not taken on the summary's word", async () => {
    const wf = mixedLoop(200, true);
    const backing = new MemoryBacking();
    const core = await createCore(coreKind);
    const remit = new Remit(new MemoryStore({ backing }), core, [wf]);
    const parked = await remit.start(wf, { i: 0, pad: '' }, { runId: 'z' });
    await remit.start(wf, { i: 0, pad: '' }, { runId: 'y' });
    // Record 0 replaced by run y's: same workflow, version and fingerprint, another run id.
    backing.runs.get('z')!.records[0] = { ...backing.runs.get('y')!.records[0]! };
    await expect(new Remit(new MemoryStore({ backing }), core, [wf]).status('z')).rejects.toMatchObject({ code: 'REMIT_LOG_CORRUPT' });
    expect(parked.status).toBe('parked');
  });

  it("a fork's record 0 replaced by another run's of the same definition: a fresh process answers from the fork's summary, scrub finds the damage", async () => {
    const wf = mixedLoop(200, true);
    const backing = new MemoryBacking();
    const core = await createCore(coreKind);
    const remit = new Remit(new MemoryStore({ backing }), core, [wf]);
    await remit.start(wf, { i: 0, pad: '' }, { runId: 'z' });
    await remit.start(wf, { i: 0, pad: '' }, { runId: 'y' });
    await remit.fork('z', 1, { newRunId: 'f' });
    const parked = await remit.continueRun('f');
    expect(backing.runs.get('f')!.summary).toBeDefined();
    backing.runs.get('f')!.records[0] = { ...backing.runs.get('y')!.records[0]! };
    // Not checked by a fresh process (docs/guide.md, "Fresh-process resume"): the records it reads
    // are sound and the summary is the fork's, so it answers as before the edit.
    expect(await new Remit(new MemoryStore({ backing }), core, [wf]).status('f')).toEqual(parked);
    const scrub = await new Remit(new MemoryStore({ backing }), core, [wf]).scrub('f');
    expect(scrub.damage).toMatchObject({ kind: 'corrupt', seq: 1 });
  });
});

describePg('fresh-process reads from the stored summary (postgres store)', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));

  it.each(['reference', 'wasm'] as const)('give the answers of the whole log, reading fewer records (%s core)', async (coreKind) => {
    const schema = freshSchemaName();
    schemas.add(schema);
    const opened: Store[] = [];
    const open = async () => {
      const store = await PostgresStore.open({ connectionString: url, maxConnections: 2, schema });
      opened.push(store);
      return store;
    };
    try {
      const wf = mixedLoop(150, true);
      const first = await new Remit(await open(), await createCore(coreKind), [wf]).start(wf, { i: 0, pad: '' }, { runId: 'r' });
      expect(first.status).toBe('parked');
      const whole = counted(await open(), false);
      const tail = counted(await open(), true);
      expect(await new Remit(tail.store, await createCore(coreKind), [wf]).status('r')).toEqual(first);
      expect(await new Remit(whole.store, await createCore(coreKind), [wf]).status('r')).toEqual(first);
      expect(tail.read.records).toBeLessThan(whole.read.records / 2);
      const resumed = await new Remit(await open(), await createCore(coreKind), [wf]).resume('r', first.interrupt!.id, true);
      expect(resumed.status).toBe('completed');
      expect(await new Remit(counted(await open(), false).store, await createCore(coreKind), [wf]).status('r')).toEqual(resumed);
      expect((await new Remit(await open(), await createCore(coreKind), [wf]).scrub('r')).summaryAgrees).toBe(true);
    } finally {
      for (const store of opened) await store.close();
    }
  });
});
