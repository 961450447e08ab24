/**
 * recoverAll at start-up reads each candidate as continueRun does (guide, "Damaged runs" and
 * "Fresh-process resume"):
 * record 0 and the records from the run's stored recovery summary's snapshot on, not its whole
 * log, so a service restarting with long runs in flight pays their tails, not their histories.
 * What that read leaves to scrub: damage between record 0 and the snapshot (guide, "Fresh-process
 * resume"); such damage does not change the run's recovery, so the run is continued.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRemit, END, LogCorruptError, openSqliteStore, RunNotFoundError, workflow } from './index.js';
import { countingReads } from '../test-support/counting-reads.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-recover-all-tail-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const STEPS = 2_000;
const State = z.object({ n: z.number().int(), note: z.string() });
const counter = workflow({ name: 'long-counter', version: '1', state: State })
  .pure('count', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n < STEPS ? 'count' : END) })
  .build();

class Crash extends Error {}

/** A run of `counter` on a fresh SQLite file, the process "dying" after `appends` appends. */
async function crashedRun(appends: number): Promise<{ file: string; records: number }> {
  const file = join(dir, `run-${files++}.db`);
  let left = appends;
  const remit = await createRemit({
    store: openSqliteStore(file), workflows: [counter], core: 'reference', groupPureSteps: false,
    hooks: { at: (point) => { if (point === 'append.after' && --left <= 0) throw new Crash('crash after an append'); } },
  });
  await expect(remit.start(counter, { n: 0, note: 'x'.repeat(200) }, { runId: 'long' })).rejects.toBeInstanceOf(Crash);
  await remit.close();
  const db = new Database(file, { readonly: true });
  const records = (db.prepare("SELECT count(*) AS c FROM remit_records WHERE run_id = 'long'").get() as { c: number }).c;
  db.close();
  return { file, records };
}

describe('recoverAll reads a long run from its stored summary', () => {
  it('continues a run crashed 1,500 steps in, reading its tail, not its 1,500 records', async () => {
    const { file, records } = await crashedRun(1_500);
    expect(records).toBeGreaterThanOrEqual(1_500);
    const { store, count: read } = countingReads(openSqliteStore(file));
    const remit = await createRemit({ store, workflows: [counter], core: 'reference' });
    const outcomes = await remit.recoverAll();
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ runId: 'long', result: { status: 'completed', state: { n: STEPS } } });
    // One read of record 0 and the tail from the snapshot: a few dozen records, where reading
    // the whole log (as recoverAll did before) read all of them.
    expect(read.records).toBeLessThan(records / 4);
    await remit.close();
  });

  it('reads each run it continues once: the look at it is the read it is continued from', async () => {
    const { file } = await crashedRun(1_500);
    const { store, count: read } = countingReads(openSqliteStore(file));
    const remit = await createRemit({ store, workflows: [counter], core: 'reference' });
    const outcomes = await remit.recoverAll();
    expect(outcomes[0]).toMatchObject({ runId: 'long', result: { status: 'completed', state: { n: STEPS } } });
    // SQLite's readRun is record 0, the summary and the tail in one call; continuing the run
    // reads nothing more (every append it makes commits: no other sequencer is in the way).
    expect(read.calls).toBe(1);
    await remit.close();
  });

  it('leaves damage before the summary\'s snapshot to scrub, and continues the run', async () => {
    const { file, records } = await crashedRun(1_200);
    const db = new Database(file);
    const row = db.prepare("SELECT bytes FROM remit_records WHERE run_id = 'long' AND seq = 5").get() as { bytes: Buffer };
    const damaged = Buffer.from(row.bytes);
    damaged[damaged.length - 1]! ^= 0xff; // the record's trailer (its checksum or link) no longer matches
    db.prepare("UPDATE remit_records SET bytes = ? WHERE run_id = 'long' AND seq = 5").run(damaged);
    db.close();
    const remit = await createRemit({ store: openSqliteStore(file), workflows: [counter], core: 'reference' });
    const outcomes = await remit.recoverAll();
    expect(outcomes[0]).toMatchObject({ runId: 'long', result: { status: 'completed', state: { n: STEPS } } });
    const scrub = await remit.scrub('long');
    expect(scrub.damage).toMatchObject({ seq: 5 });
    expect(records).toBeGreaterThan(5);
    await remit.close();
  });

  it('still reports damage in what it reads: the tail', async () => {
    const { file, records } = await crashedRun(1_200);
    const db = new Database(file);
    const last = records - 1;
    const row = db.prepare("SELECT bytes FROM remit_records WHERE run_id = 'long' AND seq = ?").get(last) as { bytes: Buffer };
    const damaged = Buffer.from(row.bytes);
    damaged[damaged.length - 1]! ^= 0xff;
    db.prepare("UPDATE remit_records SET bytes = ? WHERE run_id = 'long' AND seq = ?").run(damaged, last);
    db.close();
    const remit = await createRemit({ store: openSqliteStore(file), workflows: [counter], core: 'reference' });
    const outcomes = await remit.recoverAll();
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]!.runId).toBe('long');
    const error = (outcomes[0] as { error?: unknown }).error;
    expect(error).toBeInstanceOf(LogCorruptError);
    expect(error).toMatchObject({ code: 'REMIT_LOG_CORRUPT', seq: last, logError: expect.stringMatching(/^BAD_(CHECKSUM|LINK)$/) });
    await remit.close();
  });

  it('a run removed between the listing and the look is that run\'s RunNotFoundError', async () => {
    const { file } = await crashedRun(100);
    const store = openSqliteStore(file);
    const removing = new Proxy(store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (key === 'listRunsToRecover') {
          return async () => {
            const listed = await target.listRunsToRecover!();
            const db = new Database(file);
            db.prepare("DELETE FROM remit_records WHERE run_id = 'long'").run();
            db.prepare("DELETE FROM remit_summaries WHERE run_id = 'long'").run();
            db.prepare("DELETE FROM remit_runs WHERE run_id = 'long'").run();
            db.close();
            return listed;
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const remit = await createRemit({ store: removing, workflows: [counter], core: 'reference' });
    const outcomes = await remit.recoverAll();
    expect(outcomes).toHaveLength(1);
    expect((outcomes[0] as { error?: unknown }).error).toBeInstanceOf(RunNotFoundError);
    await remit.close();
  });
});
