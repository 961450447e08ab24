/**
 * close() on the PostgreSQL store while calls are under way (docs/postgres.md, errors): a call
 * made after it, or waiting for a pooled connection when it came, fails at once with CLOSED naming
 * its operation and run; a write whose outcome was being resolved when it came is OUTCOME_UNKNOWN
 * (it may have committed), never CLOSED ("nothing was written"). Needs a server (REMIT_PG_URL).
 */

import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { testRecord } from '../testing/test-record.js';
import { PostgresStore } from './postgres.js';

describePg('postgres: close() with calls under way', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));
  const freshSchema = () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    return schema;
  };

  /** An admin connection holding the run row's lock, so that an append on it waits. */
  async function lockRunRow(schema: string, runId: string): Promise<{ release(): Promise<void> }> {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('BEGIN');
    await admin.query(`SELECT 1 FROM ${schema}.runs WHERE run_id = $1 FOR UPDATE`, [runId]);
    return { release: async () => { await admin.query('COMMIT'); await admin.end(); } };
  }

  /**
   * Waits until a backend of `schema` waits on a lock: the store's append is then certainly
   * holding its pooled connection (a fixed sleep did not make sure of that on a loaded machine,
   * and a close() that came before the append had its connection failed the append with CLOSED).
   */
  async function untilAppendWaits(schema: string): Promise<void> {
    for (;;) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`, [schema]);
        if (rows.length > 0) return;
      } finally {
        await client.end();
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('after close(), every call fails with CLOSED naming its operation and run', async () => {
    const store = await PostgresStore.open({ connectionString: url, schema: freshSchema(), maxConnections: 2 });
    await store.append('r', 0, [testRecord(0)]);
    await store.close();
    await expect(store.append('r', 1, [testRecord(1)])).rejects.toMatchObject({ storeCode: 'CLOSED', operation: 'append', runId: 'r', seq: 1 });
    await expect(store.readRecords('r')).rejects.toMatchObject({ storeCode: 'CLOSED', operation: 'readRecords', runId: 'r' });
    await expect(store.fork('r', 1, 'f', testRecord(1))).rejects.toMatchObject({ storeCode: 'CLOSED', operation: 'fork', runId: 'f' });
  });

  it('calls waiting for a pooled connection fail at once with CLOSED, even without a connect timeout', async () => {
    const schema = freshSchema();
    const store = await PostgresStore.open({ connectionString: url, schema, maxConnections: 1, connectTimeoutMs: 0, statementTimeoutMs: 0 });
    await store.append('r', 0, [testRecord(0)]);
    const lock = await lockRunRow(schema, 'r');
    const blocked = store.append('r', 1, [testRecord(1)]);
    await untilAppendWaits(schema);
    const waiting = [store.readRecords('r').catch((e: unknown) => e), store.listRuns().catch((e: unknown) => e)];
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = store.close();
    const started = Date.now();
    // Without close() they would wait as long as the lock is held: until after this check.
    const errors = await Promise.all(waiting);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(errors[0]).toMatchObject({ storeCode: 'CLOSED', operation: 'readRecords', runId: 'r' });
    expect(errors[1]).toMatchObject({ storeCode: 'CLOSED', operation: 'listRuns' });
    await lock.release();
    expect(await blocked).toMatchObject({ committed: true });
    await closed;
  });

  it('a second close() made while the first runs resolves only when the pool has ended, as the first does', async () => {
    const schema = freshSchema();
    const store = await PostgresStore.open({ connectionString: url, schema, maxConnections: 1, statementTimeoutMs: 0 });
    await store.append('r', 0, [testRecord(0)]);
    const lock = await lockRunRow(schema, 'r');
    const blocked = store.append('r', 1, [testRecord(1)]);
    await untilAppendWaits(schema);
    // The pool ends only when the blocked append gives its connection back.
    const ended: string[] = [];
    const first = store.close().then(() => ended.push('first'));
    const second = store.close().then(() => ended.push('second'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ended).toEqual([]);
    await lock.release();
    expect(await blocked).toMatchObject({ committed: true });
    await Promise.all([first, second]);
    expect(ended).toEqual(['first', 'second']);
  });

  it('close() while an interrupted write is being resolved: OUTCOME_UNKNOWN naming the run, and the write did commit', async () => {
    const schema = freshSchema();
    let lock: { release(): Promise<void> } | undefined;
    let store: PostgresStore | undefined;
    let closing: Promise<void> | undefined;
    store = await PostgresStore.open({
      connectionString: url, schema, maxConnections: 2, statementTimeoutMs: 0, clientTimeoutMs: 500,
      onAmbiguousWrite: async () => {
        closing = store!.close();
        await lock!.release();
      },
    });
    await store.append('r', 0, [testRecord(0)]);
    lock = await lockRunRow(schema, 'r');
    const error = await store.append('r', 1, [testRecord(1)]).catch((e: unknown) => e);
    expect(error).toMatchObject({ storeCode: 'OUTCOME_UNKNOWN', operation: 'append', runId: 'r', seq: 1 });
    await closing;
    const reader = await PostgresStore.open({ connectionString: url, schema, maxConnections: 1 });
    // The old backend was never asked to stop: its append committed once the lock was released.
    await expect.poll(async () => (await reader.readRecords('r')).length, { timeout: 30_000 }).toBe(2);
    await reader.close();
  });
});
