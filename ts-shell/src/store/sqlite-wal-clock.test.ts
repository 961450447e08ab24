/**
 * openSqliteStore's switch of a new file to WAL mode waits (blocking the thread, as opening is
 * synchronous) while another process holds a lock, up to busyTimeoutMs. That wait was timed by
 * Date.now: with the wall clock frozen (a test's fake Date) or set back it never ran out, and the
 * thread stayed blocked for as long as the other process held its lock. It is timed by the
 * monotonic clock now, as the store's other lock waits are.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { StoreError } from '../errors.js';
import { openSqliteStore } from './sqlite.js';

const root = mkdtempSync(join(tmpdir(), 'remit-wal-clock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

/** Another process holding a SHARED lock on a new rollback-journal database at `path` for `ms` (or until stopped); resolves once it holds it. */
async function holdSharedLock(path: string, ms: number): Promise<{ stop(): Promise<void> }> {
  const script = `
    const Database = require(process.argv[1]);
    const db = new Database(process.argv[2]);
    db.exec('CREATE TABLE IF NOT EXISTS other(x)'); db.exec('INSERT INTO other VALUES (1)');
    db.exec('BEGIN'); db.prepare('SELECT * FROM other').all();
    console.log('holding');
    setTimeout(() => { db.exec('COMMIT'); process.exit(0); }, Number(process.argv[3]));`;
  const holder = spawn(process.execPath, ['-e', script, BETTER_SQLITE3, path, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const done = new Promise<void>((resolve) => holder.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once('data', () => resolve());
    holder.once('exit', (code) => reject(new Error(`the lock holder exited (${String(code)}) before holding the lock`)));
  });
  return {
    stop: () => {
      holder.kill();
      return done;
    },
  };
}

describe('opening a new SQLite file while another process holds a lock on it', () => {
  it('with Date.now frozen, gives up after busyTimeoutMs (SQLITE_BUSY), not when the other process lets go', async () => {
    const path = join(root, 'frozen.db');
    const holder = await holdSharedLock(path, 4_000);
    const frozen = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(frozen);
    const started = performance.now();
    let outcome: unknown;
    try {
      const store = openSqliteStore(path, { busyTimeoutMs: 300 });
      outcome = 'opened';
      await store.close();
    } catch (error) {
      outcome = error;
    }
    const tookMs = performance.now() - started;
    vi.restoreAllMocks();
    // Before, the thread was blocked until the holder let go (4 s), and the store then opened.
    expect(outcome).toBeInstanceOf(StoreError);
    expect(outcome).toMatchObject({ storeCode: 'SQLITE_BUSY' });
    expect(tookMs).toBeGreaterThanOrEqual(250);
    expect(tookMs).toBeLessThan(2_000);
    await holder.stop();
  }, 30_000);
});
