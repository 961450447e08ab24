/**
 * SQLite: the database file moved away or replaced while a store has it open. The records
 * committed since the last checkpoint are only in `<path>-wal`, which SQLite keeps by path, not
 * with the file: the moved file lacks them, close() leaves that WAL at the old path (SQLite does
 * not checkpoint a moved file on close), and the next open of the path discards it or replays it
 * into the file now there. The advice the store gave before ("open the path again") lost them.
 * FILE_REPLACED now says what to move or remove, and these tests follow it and lose nothing.
 * REMIT does not checkpoint the WAL itself: the checkpoint would go through the -wal and -shm now at
 * the path, which another process that opened the path since shares (a review showed its commits
 * copied into the old file and truncated out of its own); the last test is that case.
 */

import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
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

/** A database at `path` holding `count` completed runs `${prefix}-i`, closed. */
async function databaseWithRuns(path: string, prefix: string, count: number): Promise<void> {
  const remit = new Remit(openSqliteStore(path), core, [wf]);
  await startRuns(remit, prefix, count);
  await remit.close();
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

/** What FILE_REPLACED says to do with a moved file's WAL: move it beside the file. */
function moveWalBeside(path: string, moved: string): void {
  for (const suffix of ['-wal', '-shm']) if (existsSync(`${path}${suffix}`)) renameSync(`${path}${suffix}`, `${moved}${suffix}`);
}

describe('a SQLite file moved or replaced while a store has it open: following FILE_REPLACED loses no committed record', () => {
  it('moved to another folder: the write is refused naming where the file is and what to move; after close and that move, it holds all 50 runs', async () => {
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
    // Where the file is (found through /proc on Linux) and what to move there.
    if (process.platform === 'linux') expect((error as Error).message).toContain(`move ${path}-wal and ${path}-shm beside ${archived} (the file was moved there) as ${archived}-wal and ${archived}-shm, and open ${archived}`);
    await live.close();
    moveWalBeside(path, archived);
    expect(await runIdsAt(archived)).toEqual(ids('run', 50));
  });

  it('moved, and the store closed without a write after it: the WAL moved beside it gives every run', async () => {
    const dir = freshDir();
    const path = join(dir, 'app.db');
    const live = new Remit(openSqliteStore(path), core, [wf]);
    await startRuns(live, 'run', 20);
    renameSync(path, join(dir, 'moved.db'));
    await live.close();
    moveWalBeside(path, join(dir, 'moved.db'));
    expect(await runIdsAt(join(dir, 'moved.db'))).toEqual(ids('run', 20));
  });

  it('a backup renamed over the path: the write is refused saying to remove the WAL first; after that the path shows the backup\'s runs intact', async () => {
    const dir = freshDir();
    const backupPath = join(dir, 'backup.db');
    await databaseWithRuns(backupPath, 'backup', 40);
    const path = join(dir, 'app.db');
    const live = new Remit(openSqliteStore(path), core, [wf]);
    await startRuns(live, 'live', 40);
    renameSync(backupPath, path);
    const error = await live.start(wf, { n: 0 }, { runId: 'late' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ storeCode: 'FILE_REPLACED', runId: 'late' });
    expect((error as Error).message).toMatch(/replaced by another file/);
    expect((error as Error).message).toContain(`remove ${path}-wal and ${path}-shm`);
    await live.close();
    for (const suffix of ['-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    expect(await runIdsAt(path)).toEqual(ids('backup', 40));
    const again = new Remit(openSqliteStore(path), core, [wf]);
    expect(await again.status('backup-5')).toMatchObject({ runId: 'backup-5', status: 'completed' });
    expect((await again.scrub('backup-5')).damage).toBeNull();
    await again.close();
  });

  it('a store that sees the path replaced does not touch the WAL another instance opened there since (it took that instance\'s commits before)', async () => {
    const dir = freshDir();
    const path = join(dir, 'app.db');
    await databaseWithRuns(path, 'a', 5);
    const backupPath = join(dir, 'backup.db');
    copyFileSync(path, backupPath);
    const idle = new Remit(openSqliteStore(path), core, [wf]);
    expect(await idle.runs()).toHaveLength(5);
    renameSync(backupPath, path);
    // A restarted service opens the path (the backup) and writes, while the idle store still runs.
    const restarted = new Remit(openSqliteStore(path), core, [wf]);
    await startRuns(restarted, 'b', 10);
    const error = await idle.start(wf, { n: 0 }, { runId: 'late' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ storeCode: 'FILE_REPLACED' });
    await idle.close();
    expect((await restarted.runs()).map((r) => r.runId).sort()).toEqual([...ids('a', 5), ...ids('b', 10)].sort());
    await restarted.close();
    expect(await runIdsAt(path)).toEqual([...ids('a', 5), ...ids('b', 10)].sort());
  });
});

describe('a SQLite file opened through a symbolic link: SQLite keeps its -wal and -shm beside the file the link names (found by a review)', () => {
  /** A folder with the database app.db and a link to it, current.db, as a deployment's "current" link. */
  function linkedFile(): { dir: string; file: string; link: string } {
    const dir = realpathSync(freshDir());
    const file = join(dir, 'app.db');
    const link = join(dir, 'current.db');
    symlinkSync(file, link);
    return { dir, file, link };
  }

  it('the link pointed at another file: the write is refused saying the store\'s file is still there, with every commit; opening it loses nothing', async () => {
    const { dir, file, link } = linkedFile();
    const other = join(dir, 'other.db');
    await databaseWithRuns(other, 'other', 5);
    const live = new Remit(openSqliteStore(link), core, [wf]);
    await startRuns(live, 'run', 30);
    expect(existsSync(`${file}-wal`)).toBe(true);
    unlinkSync(link);
    symlinkSync(other, link);
    const error = await live.start(wf, { n: 0 }, { runId: 'late' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ storeCode: 'FILE_REPLACED', runId: 'late' });
    // It said the file was replaced and to move or remove `${link}-wal`, which SQLite never wrote.
    expect((error as Error).message).toContain(`${link} named ${file} through a symbolic link when this store opened it, and now names another file`);
    expect((error as Error).message).toContain(`open ${file}, or make ${link} name it again`);
    await live.close();
    expect(await runIdsAt(file)).toEqual(ids('run', 30));
    expect(await runIdsAt(link)).toEqual(ids('other', 5));
  });

  it('the file the link names moved: the message names the -wal beside that file, and moving it as told keeps every run', async () => {
    const { dir, file, link } = linkedFile();
    const live = new Remit(openSqliteStore(link), core, [wf]);
    await startRuns(live, 'run', 30);
    const moved = join(dir, 'moved.db');
    renameSync(file, moved);
    const error = await live.start(wf, { n: 0 }, { runId: 'late' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ storeCode: 'FILE_REPLACED', runId: 'late' });
    expect((error as Error).message).toContain(`the database file ${file} (opened as ${link}, through a symbolic link) was deleted or moved away`);
    expect((error as Error).message).toContain(`Its latest commits are in ${file}-wal and ${file}-shm`);
    await live.close();
    moveWalBeside(file, moved);
    expect(await runIdsAt(moved)).toEqual(ids('run', 30));
  });
});
