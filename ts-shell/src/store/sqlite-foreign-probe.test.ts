/**
 * SQLite `create: false` on another program's database, which it must leave as it found it:
 * - in WAL mode: the read-only probe that looks for REMIT's tables left `-wal` and `-shm` files
 *   beside it (a read-only connection creates them and cannot remove them). Now removed as SQLite
 *   removes them, by the last connection's close.
 * - in rollback mode with a hot journal (the program was killed mid-write): the probe failed with
 *   a bare SQLITE_READONLY_ROLLBACK. Now that StoreError says what the journal is and what to do,
 *   and the file and its journal are left untouched.
 */

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError, StoreNotFoundError } from '../errors.js';
import { openSqliteStore } from './sqlite.js';

const root = mkdtempSync(join(tmpdir(), 'remit-probe-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const openError = (path: string) => {
  try {
    openSqliteStore(path, { create: false });
  } catch (e) {
    return e;
  }
  return undefined;
};

describe('create: false on another program\'s SQLite database', () => {
  it('in WAL mode: refused (not a REMIT database), and no -wal or -shm file is left beside it', () => {
    const path = join(root, 'host-wal.db');
    const host = new Database(path);
    host.pragma('journal_mode = WAL');
    host.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'ada')");
    host.close();
    expect(readdirSync(root).filter((f) => f.startsWith('host-wal'))).toEqual(['host-wal.db']);
    const before = digest(path);
    expect(openError(path)).toBeInstanceOf(StoreNotFoundError);
    expect(readdirSync(root).filter((f) => f.startsWith('host-wal'))).toEqual(['host-wal.db']);
    expect(digest(path)).toBe(before);
  });

  it('in WAL mode and open in another connection: its -wal and -shm are left to it', () => {
    const path = join(root, 'host-open.db');
    const host = new Database(path);
    host.pragma('journal_mode = WAL');
    host.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
    expect(openError(path)).toBeInstanceOf(StoreNotFoundError);
    expect(existsSync(`${path}-wal`) && existsSync(`${path}-shm`)).toBe(true);
    host.exec("INSERT INTO customers VALUES (1, 'ada')");
    expect(host.prepare('SELECT name FROM customers').pluck().all()).toEqual(['ada']);
    host.close();
  });

  it('with a hot rollback journal (the program killed mid-write): StoreError SQLITE_READONLY_ROLLBACK saying so and what to do; file and journal untouched', () => {
    const path = join(root, 'host-crashed.db');
    const betterSqlite3 = createRequire(import.meta.url).resolve('better-sqlite3');
    const crash = `
      const Database = require(${JSON.stringify(betterSqlite3)});
      const db = new Database(${JSON.stringify(path)});
      db.pragma('journal_mode = DELETE');
      db.exec('CREATE TABLE t (x BLOB)');
      const insert = db.prepare('INSERT INTO t VALUES (randomblob(500))');
      db.transaction(() => { for (let i = 0; i < 2000; i++) insert.run(); })();
      db.pragma('cache_size = 1');
      db.exec('BEGIN; UPDATE t SET x = randomblob(500);');
      process.kill(process.pid, 'SIGKILL');`;
    expect(() => execFileSync(process.execPath, ['-e', crash], { stdio: 'pipe' })).toThrow();
    expect(statSync(`${path}-journal`).size).toBeGreaterThan(0);
    const before = [digest(path), digest(`${path}-journal`)];
    const error = openError(path);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'SQLITE_READONLY_ROLLBACK', operation: 'open' });
    expect((error as Error).message).toContain(`${path} has a hot rollback journal`);
    expect((error as Error).message).toMatch(/nothing in it was changed: open it once with the program that wrote it/);
    expect([digest(path), digest(`${path}-journal`)]).toEqual(before);
  });
});
