/**
 * SQLite on a full disk (a 512 KiB tmpfs filled up): every write that meets it fails with a
 * StoreError SQLITE_FULL naming the operation and the run (and the seq for an append), stores
 * nothing of it, calls no effect handler for an attempt it did not claim; once space is freed the
 * same instance carries on and `scrub` finds every log sound. `repair` correcting a status hint
 * failed with an error naming no run, and a failed open left its connection (and its file
 * descriptors) open until garbage collection. Needs root (it mounts a tmpfs): skipped otherwise, saying so.
 */

import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../core/index.js';
import { StoreError } from '../errors.js';
import { Remit } from '../remit.js';
import { openSqliteStore } from './sqlite.js';
import { chargeAfterApproval } from '../../test-support/charge-workflow.js';

const notRoot = typeof process.getuid === 'function' && process.getuid() !== 0;
const skipReason = notRoot ? ' (SKIPPED: needs root to mount a small tmpfs)' : '';
if (notRoot) console.warn(`sqlite-disk-full.test.ts${skipReason}`);

const core = await createCore('reference');
const mountPoint = mkdtempSync(join(tmpdir(), 'remit-full-'));
let mounted = false;
beforeAll(() => {
  if (notRoot) return;
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mountPoint]);
  mounted = true;
});
afterAll(() => {
  // Lazily: a descriptor still open (a failing case) must not leave the mount behind.
  if (mounted) execFileSync('umount', ['-l', mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

/** Fill the file system but `leaveBytes`; returns the function that frees it again. */
function fill(leaveBytes: number): () => void {
  const filler = join(mountPoint, 'filler');
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(4096, 1);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOSPC') throw error;
  }
  closeSync(fd);
  if (leaveBytes > 0) execFileSync('truncate', ['-s', String(Math.max(0, written - leaveBytes)), filler]);
  return () => rmSync(filler, { force: true });
}

const makeWorkflow = (calls: string[], failOnce: Set<string>) => chargeAfterApproval('full', calls, failOnce);

type Operation = 'start (a group of pure steps)' | 'resume' | 'continue into an effect attempt' | 'fork' | 'repair a torn record' | 'repair a status hint';

describe('a SQLite store on a full disk', () => {
  it(`every write fails with a StoreError naming operation and run, nothing is lost; freed, the same instance goes on${skipReason}`, async () => {
    if (notRoot) return;
    let case_ = 0;
    await fc.assert(fc.asyncProperty(
      fc.constantFrom<Operation>('start (a group of pure steps)', 'resume', 'continue into an effect attempt', 'fork', 'repair a torn record', 'repair a status hint'),
      fc.integer({ min: 0, max: 12 }),
      async (operation, leaveKiB) => {
        const file = join(mountPoint, `c${case_++}.db`);
        const calls: string[] = [];
        const failOnce = new Set(['retry/charge/6']);
        const wf = makeWorkflow(calls, failOnce);
        let remit = new Remit(openSqliteStore(file), core, [wf]);
        try {
          const parked = await remit.start(wf, { n: 0, target: 2 }, { runId: 'parked' });
          const retry = await remit.start(wf, { n: 0, target: 2 }, { runId: 'retry' });
          if (parked.status !== 'parked' || retry.status !== 'parked') throw new Error('setup: not parked');
          await expect(remit.resume('retry', retry.interrupt.id, true)).rejects.toThrow(/outside system down/);
          await remit.start(wf, { n: 0, target: 2 }, { runId: 'torn' });
          await remit.start(wf, { n: 0, target: 2 }, { runId: 'hint' });
          await remit.close();
          const raw = new Database(file);
          const last = raw.prepare('SELECT seq, bytes FROM remit_records WHERE run_id = ? ORDER BY seq DESC LIMIT 1').get('torn') as { seq: number; bytes: Buffer };
          raw.prepare('UPDATE remit_records SET bytes = ? WHERE run_id = ? AND seq = ?').run(last.bytes.subarray(0, 10), 'torn', last.seq);
          raw.prepare("UPDATE remit_runs SET status = 'running' WHERE run_id = ?").run('hint');
          raw.close();
          remit = new Remit(openSqliteStore(file), core, [wf]);
          await remit.status('parked');

          const write: Record<Operation, () => Promise<unknown>> = {
            'start (a group of pure steps)': () => remit.start(wf, { n: 0, target: 400 }, { runId: 'fresh' }),
            resume: () => remit.resume('parked', parked.interrupt.id, true),
            'continue into an effect attempt': () => remit.continueRun('retry'),
            fork: () => remit.fork('parked', 1, { newRunId: 'forked' }),
            'repair a torn record': () => remit.repair('torn'),
            'repair a status hint': () => remit.repair('hint'),
          };
          const runOf: Record<Operation, string> = {
            'start (a group of pure steps)': 'fresh', resume: 'parked', 'continue into an effect attempt': 'retry',
            fork: 'parked', 'repair a torn record': 'torn', 'repair a status hint': 'hint',
          };
          const free = fill(leaveKiB * 1024);
          let error: unknown;
          try {
            error = await write[operation]().then(() => undefined, (e: unknown) => e);
          } finally {
            free();
          }
          if (error !== undefined) {
            expect(error, `${operation}, ${leaveKiB} KiB left`).toBeInstanceOf(StoreError);
            expect(error).toMatchObject({ storeCode: 'SQLITE_FULL', runId: runOf[operation] });
            if ((error as StoreError).operation === 'append') expect(typeof (error as StoreError).seq).toBe('number');
          }
          // No handler call without its attempt's record.
          const attempts = async (runId: string) => (await remit.inspect(runId)).records.filter((r) => r.kind === 'EFFECT_ATTEMPT').length;
          for (const runId of ['parked', 'retry']) expect(calls.filter((k) => k.startsWith(`${runId}/`)).length).toBeLessThanOrEqual(await attempts(runId));

          // Space freed: the same instance goes on; every log is sound.
          await remit.repair('torn');
          await remit.repair('hint');
          if ((await remit.runs()).some((r) => r.runId === 'fresh')) {
            expect(await remit.continueRun('fresh')).toMatchObject({ status: 'parked', state: { n: 400 } });
          }
          const resumed = await remit.status('parked');
          if (resumed.status === 'parked') await remit.resume('parked', resumed.interrupt.id, true);
          else await remit.continueRun('parked');
          expect(await remit.status('parked')).toMatchObject({ status: 'completed', state: { ok: true, id: 'c-parked/charge/6' } });
          expect(await remit.continueRun('retry')).toMatchObject({ status: 'completed', state: { id: 'c-retry/charge/6' } });
          for (const run of await remit.runs()) {
            const report = await remit.scrub(run.runId);
            expect(report.damage, run.runId).toBeNull();
            expect(report.statusHintAgrees, run.runId).not.toBe(false);
          }
        } finally {
          await remit.close();
          for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
        }
      },
    ), { numRuns: 30 });
  });

  it(`a failed open (an existing file, a new one) closes what it opened: no file descriptor is left behind${skipReason}`, async () => {
    if (notRoot) return;
    const existing = join(mountPoint, 'existing.db');
    const wf = makeWorkflow([], new Set());
    const remit = new Remit(openSqliteStore(existing), core, [wf]);
    const parked = await remit.start(wf, { n: 0, target: 2 }, { runId: 'kept' });
    if (parked.status !== 'parked') throw new Error('setup: not parked');
    await remit.close();
    const openFds = () => readdirSync('/proc/self/fd').length;
    await fc.assert(fc.asyncProperty(fc.constantFrom('existing.db', 'new.db'), fc.integer({ min: 1, max: 8 }), async (name, tries) => {
      const free = fill(0);
      try {
        const before = openFds();
        for (let i = 0; i < tries; i++) {
          const error = (() => {
            try {
              openSqliteStore(join(mountPoint, name)).close();
              return undefined;
            } catch (e) {
              return e;
            }
          })();
          expect(error).toBeInstanceOf(StoreError);
          expect(error).toMatchObject({ operation: 'open' });
        }
        expect(openFds()).toBe(before);
      } finally {
        free();
        for (const suffix of ['', '-wal', '-shm']) rmSync(join(mountPoint, `new.db${suffix}`), { force: true });
      }
    }), { numRuns: 10 });
    // Space freed: the file opens and its run goes on.
    const again = new Remit(openSqliteStore(existing), core, [wf]);
    expect(await again.resume('kept', parked.interrupt.id, true)).toMatchObject({ status: 'completed' });
    await again.close();
  });
});
