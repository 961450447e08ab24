/**
 * readRecords' `limit`, the same in every built-in store: at most that many records from `fromSeq`,
 * in seq order, and a limit that is not a whole number from 1 refused (BAD_LIMIT, naming the field).
 * The sequencer reads the one claim an AlreadyConsumedError names this way: without it, a refused
 * retry of an interrupt claimed early in a long run read the whole rest of the log (81 MB and
 * 150-170 ms on SQLite after 20,000 steps, in a review). The PostgreSQL half needs a server.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { testRecord } from '../testing/test-record.js';
import { MemoryStore } from './memory.js';
import { PostgresStore } from './postgres.js';
import { SqliteStore } from './sqlite.js';
import type { Store } from './store.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-read-limit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function describeLimit(name: string, open: () => Promise<Store>): void {
  describe(`${name}: readRecords with a limit`, () => {
    it('gives at most `limit` records from fromSeq, in order, and all of them without one', async () => {
      const store = await open();
      try {
        await store.append('r', 0, Array.from({ length: 6 }, (_, seq) => testRecord(seq)));
        expect((await store.readRecords('r', 2, 1)).map((r) => r.seq)).toEqual([2]);
        expect((await store.readRecords('r', 2, 3)).map((r) => r.seq)).toEqual([2, 3, 4]);
        expect((await store.readRecords('r', 4, 10)).map((r) => r.seq)).toEqual([4, 5]);
        expect((await store.readRecords('r', 6, 1)).map((r) => r.seq)).toEqual([]);
        expect((await store.readRecords('r', 2, 1))[0]!.bytes).toEqual(testRecord(2));
        expect((await store.readRecords('r', 1)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
      } finally {
        await store.close();
      }
    });

    it('refuses a limit that is not a whole number from 1, naming it', async () => {
      const store = await open();
      try {
        for (const limit of [0, -1, 1.5, Number.NaN, '1' as unknown as number]) {
          await expect(store.readRecords('r', 0, limit), String(limit)).rejects.toMatchObject({ storeCode: 'BAD_LIMIT', field: 'limit', runId: 'r' });
        }
      } finally {
        await store.close();
      }
    });
  });
}

let files = 0;
describeLimit('memory', async () => new MemoryStore());
describeLimit('SQLite', async () => new SqliteStore(join(dir, `limit-${files++}.db`)));
describePg('PostgreSQL readRecords with a limit', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));
  describeLimit('PostgreSQL', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    return PostgresStore.open({ connectionString: url, schema });
  });
});
