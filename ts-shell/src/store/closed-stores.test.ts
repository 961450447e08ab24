/**
 * A closed store, the same in every built-in store: a call whose arguments are wrong is refused for
 * its arguments (BAD_RUN_ID naming the field, BAD_EXPECTED_SEQ, BAD_RECORD_SEQ, BAD_RUN_STATUS),
 * whether the store is open or closed, and a well-formed call is refused with CLOSED naming its
 * operation and run. The memory store used to say CLOSED first, the SQLite and PostgreSQL stores
 * named the argument first: the same mistake read differently depending on the store.
 * The PostgreSQL half needs a server (REMIT_PG_URL).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { StoreError } from '../errors.js';
import { testRecord } from '../testing/test-record.js';
import { MemoryStore } from './memory.js';
import { PostgresStore } from './postgres.js';
import { SqliteStore } from './sqlite.js';
import type { Store } from './store.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-closed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Call = { operation: string; call: (store: Store) => Promise<unknown> };

const BAD_ID = 'run\u0000id';

/** Calls with a wrong argument, and the storeCode each must give, open or closed. */
const wrongCalls: Array<Call & { storeCode: string }> = [
  { operation: 'readRecords', storeCode: 'BAD_RUN_ID', call: (s) => s.readRecords(BAD_ID) },
  { operation: 'readLog', storeCode: 'BAD_RUN_ID', call: (s) => s.readLog(BAD_ID) },
  { operation: 'append', storeCode: 'BAD_RUN_ID', call: (s) => s.append(BAD_ID, 1, [testRecord(1)]) },
  { operation: 'append', storeCode: 'BAD_EXPECTED_SEQ', call: (s) => s.append('r', -1, []) },
  { operation: 'append', storeCode: 'BAD_RECORD_SEQ', call: (s) => s.append('r', 2, [testRecord(5)]) },
  { operation: 'append', storeCode: 'BAD_RUN_STATUS', call: (s) => s.append('r', 1, [testRecord(1)], undefined, 'done' as never) },
  { operation: 'fork', storeCode: 'BAD_RUN_ID', call: (s) => s.fork('r', 1, BAD_ID, testRecord(1)) },
  { operation: 'removeLastRecord', storeCode: 'BAD_RUN_ID', call: (s) => s.removeLastRecord!(BAD_ID, 1, testRecord(1)) },
  { operation: 'readStatusHint', storeCode: 'BAD_RUN_ID', call: (s) => s.readStatusHint!(BAD_ID) },
  // Found by a review: a TypeError (records.forEach), BAD_RECORD_SEQ for a number, a fork's bad
  // prefix named as an append with a string seq, an empty target id committed, and a fromSeq of
  // -1, 1.5 or 'x' read differently by each store.
  { operation: 'append', storeCode: 'BAD_RECORDS', call: (s) => s.append('r', 1, 'x' as never) },
  { operation: 'append', storeCode: 'BAD_RECORDS', call: (s) => s.append('r', 1, [5] as never) },
  { operation: 'fork', storeCode: 'BAD_EXPECTED_SEQ', call: (s) => s.fork('r', 'x' as never, 'n', testRecord(1)) },
  { operation: 'fork', storeCode: 'BAD_RUN_ID', call: (s) => s.fork('r', 1, '', testRecord(1)) },
  { operation: 'readRecords', storeCode: 'BAD_FROM_SEQ', call: (s) => s.readRecords('r', -1) },
  { operation: 'readRecords', storeCode: 'BAD_FROM_SEQ', call: (s) => s.readRecords('r', 1.5) },
  { operation: 'readRecords', storeCode: 'BAD_FROM_SEQ', call: (s) => s.readRecords('r', 'x' as never) },
];

/** Well-formed calls: each is CLOSED on a closed store, naming the operation and run (and a write's seq). */
const rightCalls: Array<Call & { subject: { runId?: string; seq?: number } }> = [
  { operation: 'readRecords', subject: { runId: 'r' }, call: (s) => s.readRecords('r') },
  { operation: 'append', subject: { runId: 'r', seq: 1 }, call: (s) => s.append('r', 1, [testRecord(1)]) },
  { operation: 'removeLastRecord', subject: { runId: 'r', seq: 1 }, call: (s) => s.removeLastRecord!('r', 1, testRecord(1)) },
  { operation: 'readStatusHint', subject: { runId: 'r' }, call: (s) => s.readStatusHint!('r') },
  { operation: 'listRuns', subject: {}, call: (s) => s.listRuns() },
];

async function refusal(call: Call, store: Store): Promise<StoreError> {
  const error = await call.call(store).then(() => undefined, (e: unknown) => e);
  expect(error, `${call.operation} must be refused`).toBeInstanceOf(StoreError);
  return error as StoreError;
}

function describeClosed(name: string, open: () => Promise<Store>): void {
  describe(`${name} store, closed`, () => {
    it('refuses a wrong argument for that argument, open or closed, as the other stores do', async () => {
      const store = await open();
      const whileOpen = [];
      for (const call of wrongCalls) whileOpen.push((await refusal(call, store)).storeCode);
      await store.close();
      for (const [i, call] of wrongCalls.entries()) {
        const error = await refusal(call, store);
        expect({ operation: error.operation, storeCode: error.storeCode }).toEqual({ operation: call.operation, storeCode: call.storeCode });
        expect(error.seq === undefined || typeof error.seq === 'number', `${call.operation}: seq ${String(error.seq)}`).toBe(true);
        expect(error.storeCode).toBe(whileOpen[i]);
      }
    });

    it('refuses every well-formed call with CLOSED naming its operation, run and seq', async () => {
      const store = await open();
      await store.close();
      for (const call of rightCalls) {
        const error = await refusal(call, store);
        expect(error).toMatchObject({ storeCode: 'CLOSED', operation: call.operation, ...call.subject });
      }
    });
  });
}

let files = 0;
describeClosed('memory', async () => new MemoryStore());
describeClosed('SQLite', async () => new SqliteStore(join(dir, `closed-${files++}.db`)));
describePg('PostgreSQL store, closed (a server)', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));
  describeClosed('PostgreSQL', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    return PostgresStore.open({ connectionString: url, schema, maxConnections: 1 });
  });
});
