/**
 * A custom store whose whole reads are cut short (a page limit: the first records, the rest left
 * out) is named as such, StoreError READS_CUT_SHORT naming the run and the first seq left out,
 * wherever REMIT meets the contradiction it leaves: a stored summary covering more records than a
 * whole read returned, a status hint counting more. Before, a fresh process read such a parked
 * run as running (a ConflictError at every append, "another sequencer appended first"), and
 * repair deleted its sound summary. Nothing is written and no handler is called.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { Remit } from '../remit.js';
import { END, workflow } from '../workflow/workflow.js';
import { MemoryBacking, MemoryStore } from './memory.js';
import { SqliteStore } from './sqlite.js';
import { counter } from '../../test-support/counter-workflow.js';
import type { RunRead, StoredRecord } from './store.js';
import { concatRecords } from './common.js';

const PAGE = 40;

/** The memory store with one page of PAGE records per read of records, readRun's too. */
class PagedReads extends MemoryStore {
  override async readRecords(runId: string, fromSeq?: number): Promise<StoredRecord[]> {
    return (await super.readRecords(runId, fromSeq)).slice(0, PAGE);
  }
  override async readRun(runId: string): Promise<RunRead> {
    const read = await super.readRun(runId);
    return { ...read, records: read.records.slice(0, PAGE) };
  }
  override async readLog(runId: string, fromSeq?: number): Promise<Uint8Array> {
    return concatRecords(await this.readRecords(runId, fromSeq));
  }
}

const calls: string[] = [];
function longRun() {
  // A large field written by the first node, small deltas after it: the run's snapshot stays at
  // seq 1, so a summary read needs every record from there, more than a page.
  let builder = workflow({ name: 'long', version: '1', state: z.object({ pad: z.string(), n: z.number(), by: z.string().optional() }) }) as ReturnType<typeof workflow<z.ZodObject<{ pad: z.ZodString; n: z.ZodNumber; by: z.ZodOptional<z.ZodString> }>>>;
  for (let i = 0; i < 70; i++) builder = builder.pure(`p${i}`, { run: (s) => ({ n: s.n + 1, ...(i === 0 ? { pad: 'x'.repeat(20_000) } : {}) }), next: i + 1 < 70 ? `p${i + 1}` : 'send' });
  return builder
    .effect('send', { run: (_s, { idempotencyKey }) => { calls.push(idempotencyKey); return 1; }, next: 'approve' })
    .interrupt('approve', { resume: z.string(), apply: (_s, by) => ({ by }), next: END })
    .build();
}

describe('a store whose whole reads are cut short', async () => {
  const core = await createCore('reference');
  const wf = longRun();

  async function parkedRun() {
    const backing = new MemoryBacking();
    // Written through a sound view of the same data, as another process with a sound store would.
    const parked = await new Remit(new MemoryStore({ backing }), core, [wf], undefined, { groupPureSteps: false }).start(wf, { pad: '', n: 0 }, { runId: 'r' });
    expect(parked.status).toBe('parked');
    const stored = backing.runs.get('r')!;
    expect(stored.records.length).toBeGreaterThan(PAGE + 20);
    expect(stored.summary!.recordCount).toBeGreaterThan(PAGE);
    expect(stored.summary!.snapshotSeq).toBe(1);
    return { backing, interruptId: parked.status === 'parked' ? parked.interrupt.id : '', records: stored.records.length, summary: stored.summary };
  }

  it('status, resume and continueRun from a fresh process: READS_CUT_SHORT naming the run and seq, nothing written, no handler called', async () => {
    const { backing, interruptId, records } = await parkedRun();
    calls.length = 0;
    const fresh = new Remit(new PagedReads({ backing }), core, [wf]);
    const cutShort = { code: 'REMIT_STORE', storeCode: 'READS_CUT_SHORT', runId: 'r', seq: PAGE };
    await expect(fresh.status('r')).rejects.toMatchObject(cutShort);
    await expect(fresh.resume('r', interruptId, 'kim')).rejects.toMatchObject(cutShort);
    await expect(fresh.continueRun('r')).rejects.toMatchObject(cutShort);
    expect(backing.runs.get('r')!.records.length).toBe(records);
    expect(calls).toEqual([]);
  });

  it('scrub of a run whose status hint alone counts more than its whole reads (no summary kept) says so too', async () => {
    const { backing, records } = await parkedRun();
    const paged = new PagedReads({ backing });
    for (const name of ['readRun', 'readSummary']) Object.defineProperty(paged, name, { value: undefined });
    await expect(new Remit(paged, core, [wf]).scrub('r')).rejects.toMatchObject({ storeCode: 'READS_CUT_SHORT', runId: 'r', seq: PAGE });
    expect(backing.runs.get('r')!.records.length).toBe(records);
  });

  it('runs() says so for a run whose listing counts more records than its whole read, never listing the parked run as running', async () => {
    const { backing } = await parkedRun();
    await expect(new Remit(new PagedReads({ backing }), core, [wf]).runs()).rejects.toMatchObject({ storeCode: 'READS_CUT_SHORT', runId: 'r', seq: PAGE });
    expect(await new Remit(new MemoryStore({ backing }), core, [wf]).runs({ status: 'parked' })).toMatchObject([{ runId: 'r', status: 'parked' }]);
  });

  it('recoverAll reports it as the outcome of a run it reads to continue, and continues nothing', async () => {
    const { backing, records } = await parkedRun();
    // A status hint saying running (one left by a crash before the park's own hint): recoverAll reads the run.
    backing.runs.get('r')!.status = 'running';
    calls.length = 0;
    const outcomes = await new Remit(new PagedReads({ backing }), core, [wf]).recoverAll();
    expect(outcomes).toMatchObject([{ runId: 'r', error: { code: 'REMIT_STORE', storeCode: 'READS_CUT_SHORT', runId: 'r', seq: PAGE } }]);
    expect(backing.runs.get('r')!.records.length).toBe(records);
    expect(calls).toEqual([]);
  });

  it('scrub and repair say so too; repair deletes no summary', async () => {
    const { backing, summary } = await parkedRun();
    const fresh = new Remit(new PagedReads({ backing }), core, [wf]);
    await expect(fresh.scrub('r')).rejects.toMatchObject({ storeCode: 'READS_CUT_SHORT', runId: 'r' });
    await expect(fresh.repair('r')).rejects.toMatchObject({ storeCode: 'READS_CUT_SHORT', runId: 'r' });
    expect(backing.runs.get('r')!.summary).toEqual(summary);
  });

  it('scrub and repair of a run read once behind the store (a replica catching up): the summary judged on the newer read, never called wrong, never deleted', async () => {
    const { backing, summary } = await parkedRun();
    // Its first whole read stops short of the records the summary covers (a replica behind), every
    // later read is sound; it keeps no status hint, so nothing else makes scrub read again.
    class BehindOnce extends MemoryStore {
      wholeReads = 0;
      override async readRecords(runId: string, fromSeq?: number): Promise<StoredRecord[]> {
        const rows = await super.readRecords(runId, fromSeq);
        if ((fromSeq ?? 0) !== 0 || this.wholeReads++ > 0) return rows;
        return rows.slice(0, summary!.recordCount - 5);
      }
    }
    const behind = new BehindOnce({ backing });
    Object.defineProperty(behind, 'readStatusHint', { value: undefined });
    const report = await new Remit(behind, core, [wf]).scrub('r');
    expect(report).toMatchObject({ records: backing.runs.get('r')!.records.length, summaryRecords: summary!.recordCount, summaryAgrees: true, damage: null });
    const again = new BehindOnce({ backing });
    Object.defineProperty(again, 'readStatusHint', { value: undefined });
    expect(await new Remit(again, core, [wf]).repair('r')).toMatchObject({ summaryRemoved: false });
    expect(backing.runs.get('r')!.summary).toEqual(summary);
  });

  it('a start that loses its run to another sequencer past a page reads it again (as a resume does after its claim) and says the store cut that read short', async () => {
    // A run of many one-record steps: another sequencer (through a sound view of the same data)
    // drives it to its end while this start is about to append at seq 50, past the page.
    const steps = 80;
    let builder = workflow({ name: 'many', version: '1', state: z.object({ n: z.number() }) }) as ReturnType<typeof workflow<z.ZodObject<{ n: z.ZodNumber }>>>;
    for (let i = 0; i < steps; i++) builder = builder.pure(`p${i}`, { run: (s) => ({ n: s.n + 1 }), next: i + 1 < steps ? `p${i + 1}` : END });
    const many = builder.build();
    const backing = new MemoryBacking();
    const other = new Remit(new MemoryStore({ backing }), core, [many], undefined, { groupPureSteps: false });
    class OvertakenAt50 extends PagedReads {
      override async append(...args: Parameters<MemoryStore['append']>) {
        if (args[1] === 50) await other.continueRun(args[0]);
        return super.append(...args);
      }
    }
    // Without its summaries (a store that keeps none), a read of the run is a read of every record.
    const overtaken = new OvertakenAt50({ backing });
    for (const name of ['readRun', 'readSummary']) Object.defineProperty(overtaken, name, { value: undefined });
    const starter = new Remit(overtaken, core, [many], undefined, { groupPureSteps: false });
    const error = await starter.start(many, { n: 0 }, { runId: 'm' }).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'REMIT_STORE', storeCode: 'READS_CUT_SHORT', runId: 'm', seq: PAGE });
    // The other sequencer's run stands whole: the refused start wrote nothing past its own records.
    expect((await new Remit(new MemoryStore({ backing }), core, [many]).status('m'))).toMatchObject({ status: 'completed', headSeq: steps + 1 });
  });

  it('a resume overtaken after its claim, whose read of the run again is behind (a replica still at its first read), answers from the run as it stands', async () => {
    // 40 pure steps, a park, 5 pure steps: stored summaries kept, one record per step.
    let builder = workflow({ name: 'gate', version: '1', state: z.object({ n: z.number(), by: z.string().optional() }) }) as ReturnType<typeof workflow<z.ZodObject<{ n: z.ZodNumber; by: z.ZodOptional<z.ZodString> }>>>;
    for (let i = 0; i < 40; i++) builder = builder.pure(`p${i}`, { run: (s) => ({ n: s.n + 1 }), next: i + 1 < 40 ? `p${i + 1}` : 'approve' });
    builder = builder.interrupt('approve', { resume: z.string(), apply: (_s, by) => ({ by }), next: 'q0' });
    for (let i = 0; i < 5; i++) builder = builder.pure(`q${i}`, { run: (s) => ({ n: s.n + 1 }), next: i + 1 < 5 ? `q${i + 1}` : END });
    const gate = builder.build();
    const backing = new MemoryBacking();
    const parked = await new Remit(new MemoryStore({ backing }), core, [gate], undefined, { groupPureSteps: false }).start(gate, { n: 0 }, { runId: 'g' });
    if (parked.status !== 'parked') throw new Error(parked.status);
    expect(backing.runs.get('g')!.summary).toBeDefined();
    // Another sequencer drives the run to its end just after this resume's claim; every readRun
    // after the first answers as the first did.
    const other = new Remit(new MemoryStore({ backing }), core, [gate], undefined, { groupPureSteps: false });
    const claimSeq = parked.headSeq + 1;
    class Behind extends MemoryStore {
      first: RunRead | undefined;
      override async readRun(runId: string): Promise<RunRead> {
        this.first ??= await super.readRun(runId);
        return this.first;
      }
      override async append(...args: Parameters<MemoryStore['append']>) {
        if (args[1] === claimSeq + 1) await other.continueRun(args[0]);
        return super.append(...args);
      }
    }
    const resumed = await new Remit(new Behind({ backing }), core, [gate], undefined, { groupPureSteps: false }).resume('g', parked.interrupt.id, 'kim');
    const truth = await new Remit(new MemoryStore({ backing }), core, [gate]).status('g');
    expect(truth).toMatchObject({ status: 'completed', headSeq: parked.headSeq + 8 });
    // Not `parked` on the interrupt this very claim consumed.
    expect(resumed).toEqual(truth);
  });

  it('a run whose readRun is behind its readRecords (a replica not yet holding it, twice) is answered from the read that found it, never RunNotFoundError', async () => {
    const { backing, interruptId } = await parkedRun();
    class BehindRunReads extends MemoryStore {
      runReads = 0;
      override async readRun(runId: string): Promise<RunRead> {
        const read = await super.readRun(runId);
        return this.runReads++ < 2 ? { found: null, records: [] } : read;
      }
    }
    expect(await new Remit(new BehindRunReads({ backing }), core, [wf]).status('r')).toMatchObject({ status: 'parked', interrupt: { id: interruptId } });
    expect(await new Remit(new BehindRunReads({ backing }), core, [wf]).workflowOf('r')).toBe(wf);
    expect(await new Remit(new BehindRunReads({ backing }), core, [wf]).continueRun('r')).toMatchObject({ status: 'parked' });
  });

  it('the same run through a sound store: answered and resumed (the check costs a sound read nothing)', async () => {
    const { backing, interruptId } = await parkedRun();
    const fresh = new Remit(new MemoryStore({ backing }), core, [wf]);
    expect((await fresh.status('r')).status).toBe('parked');
    expect((await fresh.resume('r', interruptId, 'kim')).status).toBe('completed');
  });
});

describe('a record deleted by hand from the middle of a run (a gap) is damage, not a read cut short', async () => {
  const core = await createCore('reference');
  const dir = mkdtempSync(join(tmpdir(), 'remit-gap-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // SQLite counts a run's records from its last seq: with one deleted from the middle, the listing
  // and the status hint count one more than a whole read returns, and a read from there finds the
  // last record at the seq a cut-short read would give next.
  it.each([['seq 2 deleted', 'DELETE FROM remit_records WHERE run_id = ? AND seq = 2'], ['seq 2 renumbered to the run\'s length', 'UPDATE remit_records SET seq = 5 WHERE run_id = ? AND seq = 2']])('%s: BAD_RECORD_SEQ in every view; runs() still lists the other runs', async (_name, edit) => {
    const db = join(dir, `${_name.length}-${Math.random().toString(36).slice(2)}.db`);
    const store = new SqliteStore(db);
    const library = new Remit(store, core, [counter], undefined, { groupPureSteps: false });
    for (const runId of ['sound', 'gap']) expect(await library.start(counter, { i: 0 }, { runId })).toMatchObject({ status: 'completed', headSeq: 4 });
    await library.close();
    await store.close();
    const raw = new Database(db);
    raw.prepare(edit).run('gap');
    raw.close();

    const reader = new Remit(new SqliteStore(db), core, [counter]);
    const listed = Object.fromEntries((await reader.runs()).map((r) => [r.runId, r]));
    expect(listed['sound']).toMatchObject({ status: 'completed' });
    expect(listed['gap']).toMatchObject({ status: 'damaged', damage: { code: 'BAD_RECORD_SEQ' } });
    expect(await reader.scrub('gap')).toMatchObject({ damage: { code: 'BAD_RECORD_SEQ' } });
    await expect(reader.status('gap')).rejects.toMatchObject({ code: 'REMIT_LOG_CORRUPT', logError: 'BAD_RECORD_SEQ', runId: 'gap' });
    await reader.close();
  });
});
