/**
 * SQLite: the database file moved away or replaced while a store has it open (D1, D2 of the
 * store review). The records committed since the last checkpoint were only in `<path>-wal`, which
 * SQLite keeps by path, not with the file: the moved file lacked them, close() left the orphan WAL
 * at the old path (SQLite does not checkpoint a moved file on close), and the next open of the path
 * either discarded it (every run gone) or replayed it into a backup renamed over the path (the
 * backup's runs gone). Now the store checkpoints its WAL into the file it opened, through the
 * connection, once, when it first sees the change: the moved file holds every committed run, and
 * the WAL left at the path is empty, so nothing is replayed into the file now there.
 */

import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { StoreError } from '../errors.js';
import { Remit } from '../remit.js';
import { END, workflow } from '../workflow/workflow.js';
import { openSqliteStore } from './sqlite.js';

const core = await createCore('reference');
const wf = workflow({ name: 'w', version: '1', state: z.object({ n: z.number() }) }).pure('p', { run: (s) => ({ n: s.n + 1 }), next: END }).build();
const root = mkdtempSync(join(tmpdir(), 'remit-moved-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let cases = 0;
const freshDir = () => {
  const dir = join(root, `c${cases++}`);
  mkdirSync(dir);
  return dir;
};

async function startRuns(remit: Remit, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await remit.start(wf, { n: i }, { runId: `${prefix}-${i}` });
}

async function runIdsAt(path: string): Promise<string[]> {
  const remit = new Remit(openSqliteStore(path, { create: false }), core, [wf]);
  try {
    return (await remit.runs()).map((r) => r.runId).sort();
  } finally {
    await remit.close();
  }
}

const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`).sort();

describe('a SQLite file moved or replaced while a store has it open: no committed record is lost', () => {
  it('moved to another folder: the write is refused (FILE_REPLACED, naming where the file now is); after close the moved file holds all 50 runs', async () => {
    const dir = freshDir();
    const path = join(dir, 'app.db');
    const live = new Remit(openSqliteStore(path), core, [wf]);
    await startRuns(live, 'run', 50);
    mkdirSync(join(dir, 'archive'));
    const archived = join(dir, 'archive', 'app.db');
    renameSync(path, archived);
    const error = await live.start(wf, { n: 0 }, { runId: 'late' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'FILE_REPLACED', runId: 'late' });
    await live.close();
    expect(await runIdsAt(archived)).toEqual(ids('run', 50));
    // Where the records are: the file the store opened, at its new path (found through /proc on Linux).
    if (process.platform === 'linux') expect((error as Error).message).toContain(`moved to ${archived}`);
    // The WAL left at the old path is empty: nothing of it can be replayed into a file made there.
    expect(existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0).toBe(0);
  });

  it('moved, and the store closed without a write after it: close() still saves the WAL into the moved file', async () => {
    const dir = freshDir();
    const path = join(dir, 'app.db');
    const live = new Remit(openSqliteStore(path), core, [wf]);
    await startRuns(live, 'run', 20);
    renameSync(path, join(dir, 'moved.db'));
    await live.close();
    expect(await runIdsAt(join(dir, 'moved.db'))).toEqual(ids('run', 20));
  });

  it('a backup renamed over the path: the write is refused, and the path reopened shows the backup\'s runs intact', async () => {
    const dir = freshDir();
    const backupPath = join(dir, 'backup.db');
    const backup = new Remit(openSqliteStore(backupPath), core, [wf]);
    await startRuns(backup, 'backup', 40);
    await backup.close();
    const path = join(dir, 'app.db');
    const live = new Remit(openSqliteStore(path), core, [wf]);
    await startRuns(live, 'live', 40);
    renameSync(backupPath, path);
    const error = await live.start(wf, { n: 0 }, { runId: 'late' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ storeCode: 'FILE_REPLACED', runId: 'late' });
    expect((error as Error).message).toMatch(/replaced by another file/);
    await live.close();
    expect(await runIdsAt(path)).toEqual(ids('backup', 40));
    const again = new Remit(openSqliteStore(path), core, [wf]);
    expect(await again.status('backup-5')).toMatchObject({ runId: 'backup-5', status: 'completed' });
    expect((await again.scrub('backup-5')).damage).toBeNull();
    await again.close();
  });
});
