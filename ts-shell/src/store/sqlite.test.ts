import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { SqliteStore } from './sqlite.js';
import { describeStoreContract, testRecord } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = () => join(dir, `contract-${n++}.db`);

describeStoreContract('sqlite', () => new SqliteStore(freshPath()), {
  openSecondHandle: (store) => new SqliteStore((store as SqliteStore).path),
});

describeStoreContract('sqlite synchronous=NORMAL', () => new SqliteStore(freshPath(), { synchronous: 'NORMAL' }));

describe('sqlite specifics', () => {
  it('keeps committed records across close and reopen', async () => {
    const path = freshPath();
    const first = new SqliteStore(path);
    await first.append('run', 0, [testRecord(0), testRecord(1)]);
    const before = await first.readLog('run');
    await first.close();
    const second = new SqliteStore(path);
    expect(await second.readLog('run')).toEqual(before);
    expect(await second.append('run', 2, [testRecord(2)])).toEqual({ committed: true, nextSeq: 3 });
    await second.close();
  });

  it('uses WAL and FULL synchronous by default, NORMAL on request', async () => {
    const path = freshPath();
    const store = new SqliteStore(path);
    const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    await store.close();
    const normal = new SqliteStore(path, { synchronous: 'NORMAL' });
    expect((normal as unknown as { db: import('better-sqlite3').Database }).db.pragma('synchronous', { simple: true })).toBe(1);
    await normal.close();
  });

  it('reports a closed database as a StoreError naming the operation', async () => {
    const store = new SqliteStore(freshPath());
    await store.close();
    await expect(store.readLog('run')).rejects.toBeInstanceOf(StoreError);
  });
});
