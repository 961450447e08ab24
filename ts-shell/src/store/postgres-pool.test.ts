/**
 * The PostgreSQL store with every pooled connection in use (more calls at once than
 * maxConnections, each held by a statement waiting on a lock): a call that finds no free
 * connection within connectTimeoutMs is UNAVAILABLE naming its run, and its message says the
 * pool was exhausted, not that the server could not be reached (pg-pool's own words, "timeout
 * exceeded when trying to connect", sent operators looking for a network fault while the server
 * answered every other client). Once the statements holding the pool finish, the same store serves
 * every run again. A write whose connection broke meanwhile is resolved on a connection of its own,
 * outside the pool: queued behind the calls holding the pool, it was OUTCOME_UNKNOWN though the
 * server could be asked at any time. Needs a server (REMIT_PG_URL).
 */

import fc from 'fast-check';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { testRecord } from '../testing/test-record.js';
import { PostgresStore } from './postgres.js';

describePg('postgres: a pool whose every connection is in use', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));

  async function sql(text: string, params: unknown[] = []): Promise<pg.QueryResultRow[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** The pids of `count` backends of the store waiting on a lock (polled until they are there). */
  async function lockWaiters(applicationName: string, count: number): Promise<number[]> {
    // Up to a minute (it returns as soon as they wait): 200 polls of 25 ms were 5 s and more.
    for (const started = Date.now(); Date.now() - started < 60_000;) {
      const rows = await sql(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [applicationName]);
      if (rows.length >= count) return rows.map((r) => r['pid'] as number);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`${count} backends of ${applicationName} never came to wait on a lock`);
  }

  /** An outside transaction holding run `runId`'s row, so that appends at seq > 0 on it wait. */
  async function holdRunRow(schema: string, runId: string): Promise<() => Promise<void>> {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('BEGIN');
    await admin.query(`SELECT 1 FROM "${schema}".runs WHERE run_id = $1 FOR UPDATE`, [runId]);
    return async () => {
      await admin.query('COMMIT');
      await admin.end();
    };
  }

  it('a write whose backend is terminated while every pooled connection is held is resolved, never OUTCOME_UNKNOWN', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 3 }), async (maxConnections, queued) => {
        const schema = freshSchemaName();
        schemas.add(schema);
        const applicationName = `remit_pool_${schema}`;
        // Time for the resolution (the terminated backend gone, a connection of its own, one read)
        // on a loaded machine: with 800 ms it could run out and report OUTCOME_UNKNOWN.
        const resolveTimeoutMs = 2000;
        const store = await PostgresStore.open({
          connectionString: url, schema, maxConnections, applicationName, connectTimeoutMs: 300, retryBudgetMs: 3000, resolveTimeoutMs, statementTimeoutMs: 0,
        });
        try {
          await store.append('held', 0, [testRecord(0)]);
          const release = await holdRunRow(schema, 'held');
          // Racing writers of seq 1: one per pooled connection, waiting on the held row, and more queued for the pool.
          const writers = Array.from({ length: maxConnections + queued }, (_, i) => store.append('held', 1, [testRecord(1, `w${i}`)]).catch((e: unknown) => e));
          const waiting = await lockWaiters(applicationName, maxConnections);
          await sql('SELECT pg_terminate_backend($1)', [waiting[0]]);
          // The row stays held past the resolution's time limit: the pool stays full all along.
          await new Promise((resolve) => setTimeout(resolve, resolveTimeoutMs + 400));
          await release();
          const outcomes = await Promise.all(writers);
          for (const outcome of outcomes) {
            if (outcome instanceof StoreError) expect(outcome).toMatchObject({ storeCode: 'UNAVAILABLE', runId: 'held', seq: 1 });
            else expect(outcome).toMatchObject({ committed: expect.any(Boolean) });
          }
          expect(store.faultCounters).toMatchObject({ ambiguousWrites: 1, resolvedNotCommitted: 1 });
          expect((await store.readRecords('held')).map((r) => r.seq)).toEqual([0, 1]);
        } finally {
          await store.close();
        }
      }),
      { numRuns: 5 },
    );
  });

  it('a call that waits longer than connectTimeoutMs for a free connection is UNAVAILABLE saying the pool was exhausted; afterwards the store serves every run', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 4 }), async (maxConnections, waiting) => {
        const schema = freshSchemaName();
        schemas.add(schema);
        const connectTimeoutMs = 300;
        const applicationName = `remit_pool_${schema}`;
        const store = await PostgresStore.open({ connectionString: url, schema, maxConnections, applicationName, connectTimeoutMs, retryBudgetMs: 500, statementTimeoutMs: 0 });
        try {
          const others = Array.from({ length: waiting }, (_, i) => `other-${i}`);
          for (const runId of ['held', ...others]) await store.append(runId, 0, [testRecord(0)]);
          const release = await holdRunRow(schema, 'held');
          // One append per pooled connection, each waiting on the held row.
          const holders = Array.from({ length: maxConnections }, () => store.append('held', 1, [testRecord(1)]).catch((e: unknown) => e));
          await lockWaiters(applicationName, maxConnections);
          const refused = await Promise.all(others.map((runId) => store.readRecords(runId).catch((e: unknown) => e)));
          for (const [i, error] of refused.entries()) {
            expect(error).toBeInstanceOf(StoreError);
            expect(error).toMatchObject({ storeCode: 'UNAVAILABLE', operation: 'readRecords', runId: others[i] });
            expect((error as StoreError).message).toContain(`no pooled connection became free within connectTimeoutMs (${connectTimeoutMs} ms)`);
            expect((error as StoreError).message).toContain(`all ${maxConnections} (maxConnections)`);
          }
          await release();
          const outcomes = await Promise.all(holders);
          expect(outcomes.filter((o) => (o as { committed?: boolean }).committed === true)).toHaveLength(1);
          for (const runId of others) expect(await store.append(runId, 1, [testRecord(1)])).toEqual({ committed: true, nextSeq: 2 });
        } finally {
          await store.close();
        }
      }),
      { numRuns: 6 },
    );
  });
});
