/**
 * SQLite: the database file deleted, moved away or replaced (a restore renamed over it) while a
 * store has it open. The connection kept writing to the file it had opened, which the path no
 * longer named: every write was reported committed and was gone once the store closed (a start
 * resolved `parked`; reopened, the store did not know the run). Now every write checks the path
 * first and is refused, with nothing written: StoreError FILE_REPLACED naming the operation, the
 * run and the seq; no effect handler is called for an attempt that was not claimed; reopened on a
 * restored file, the runs continue from where they were.
 */

import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../core/index.js';
import { StoreError } from '../errors.js';
import { Remit } from '../remit.js';
import { openSqliteStore } from './sqlite.js';
import { chargeAfterApproval } from '../../test-support/charge-workflow.js';

const core = await createCore('reference');
const root = mkdtempSync(join(tmpdir(), 'remit-replaced-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const makeWorkflow = (calls: string[], failOnce: Set<string>) => chargeAfterApproval('replaced', calls, failOnce);

type Kind = 'deleted' | 'moved away' | 'restored from a copy';
type Operation = 'start' | 'resume' | 'continue into an effect attempt' | 'fork';

describe('a SQLite file deleted or replaced while a store has it open', () => {
  it('every write is refused (FILE_REPLACED, naming the operation, run and seq), nothing is lost or reported committed, no unclaimed handler call; a restored file continues', async () => {
    let case_ = 0;
    await fc.assert(fc.asyncProperty(
      fc.constantFrom<Kind>('deleted', 'moved away', 'restored from a copy'),
      fc.constantFrom<Operation>('start', 'resume', 'continue into an effect attempt', 'fork'),
      async (kind, operation) => {
        const dir = join(root, `c${case_++}`);
        const file = join(dir, 'remit.db');
        const calls: string[] = [];
        const failOnce = new Set(['retry/charge/9']);
        const wf = makeWorkflow(calls, failOnce);
        const remit = new Remit(openSqliteStore(file), core, [wf]);
        const parked = await remit.start(wf, { n: 0 }, { runId: 'parked' });
        if (parked.status !== 'parked') throw new Error('setup: not parked');
        const retry = await remit.start(wf, { n: 0 }, { runId: 'retry' });
        if (retry.status !== 'parked') throw new Error('setup: not parked');
        await expect(remit.resume('retry', retry.interrupt.id, true)).rejects.toThrow(/outside system down/);
        expect(calls).toEqual(['retry/charge/9']);

        // What an operator does to the path while the store has it open.
        if (kind === 'restored from a copy') {
          const copy = new Database(file);
          copy.exec(`VACUUM INTO '${file}.restore'`);
          copy.close();
          renameSync(`${file}.restore`, file);
        } else if (kind === 'moved away') {
          renameSync(file, `${file}.old`);
        } else {
          for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
        }

        const write: Record<Operation, () => Promise<unknown>> = {
          start: () => remit.start(wf, { n: 0 }, { runId: 'fresh' }),
          resume: () => remit.resume('parked', parked.interrupt.id, true),
          'continue into an effect attempt': () => remit.continueRun('retry'),
          fork: () => remit.fork('parked', 1, { newRunId: 'forked' }),
        };
        const expected: Record<Operation, { operation: string; runId: string; seq: number }> = {
          start: { operation: 'append', runId: 'fresh', seq: 0 },
          resume: { operation: 'append', runId: 'parked', seq: parked.interrupt.parkedSeq + 1 },
          'continue into an effect attempt': { operation: 'append', runId: 'retry', seq: 12 },
          fork: { operation: 'fork', runId: 'parked', seq: 2 },
        };
        const error = await write[operation]().then(() => undefined, (e: unknown) => e);
        expect(error, `${operation} after the file was ${kind}`).toBeInstanceOf(StoreError);
        expect(error).toMatchObject({ code: 'REMIT_STORE', storeCode: 'FILE_REPLACED', ...expected[operation] });
        // What to do, by what happened: move the WAL beside a moved file; remove it before the path is opened again.
        expect((error as StoreError).message).toMatch(/Close this store \(the Remit instance\)/);
        if (kind === 'moved away' && process.platform === 'linux') expect((error as StoreError).message).toContain(`move ${file}-wal and ${file}-shm beside ${file}.old`);
        else if (process.platform === 'linux') expect((error as StoreError).message).toContain(`remove ${file}-wal and ${file}-shm`);
        expect((error as { claimSeq?: number }).claimSeq).toBeUndefined();
        // The attempt was not claimed: the handler was not called for it.
        expect(calls).toEqual(['retry/charge/9']);
        await remit.close();

        if (kind !== 'restored from a copy') return;
        // As the message says: the WAL of the replaced file is removed before the path is opened again.
        for (const suffix of ['-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
        // Reopened on the restored file: nothing of the refused write, every run where it was.
        const again = new Remit(openSqliteStore(file), core, [wf]);
        expect((await again.runs()).map((r) => [r.runId, r.status])).toEqual([['parked', 'parked'], ['retry', 'running']]);
        for (const runId of ['parked', 'retry']) expect((await again.scrub(runId)).damage).toBeNull();
        const done = await again.resume('parked', parked.interrupt.id, true);
        expect(done).toMatchObject({ status: 'completed', state: { n: 5, ok: true, id: 'c-parked/charge/9' } });
        expect(await again.continueRun('retry')).toMatchObject({ status: 'completed', state: { id: 'c-retry/charge/9' } });
        expect(calls).toEqual(['retry/charge/9', 'parked/charge/9', 'retry/charge/9']);
        await again.close();
      },
    ), { numRuns: 24 });
  });
});
