/**
 * removeLastRecord (what `repair` removes a damaged last record with) on the PostgreSQL store when
 * the connection is cut part-way through its transaction, by a real relay between the store and
 * the server: before the statements reach the server, after the server committed and lost only
 * the reply, and anywhere between. Its answer must be what the table shows (true: removed, false:
 * nothing changed; store.ts), or a typed error that says so (OUTCOME_UNKNOWN: re-read), and the
 * same store must go on writing afterwards. Retried like a read, a removal whose COMMIT reply was
 * lost was reported false ("nothing changed") though the record was gone, and `repair` refused
 * for a record it had removed.
 */

import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { CuttingProxy, describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { testRecord } from '../testing/test-record.js';
import { PostgresStore } from './postgres.js';

const seqsOf = async (store: PostgresStore, runId: string) => (await store.readRecords(runId)).map((r) => r.seq);

describePg('postgres: removeLastRecord with its connection cut part-way', (url) => {
  const schema = freshSchemaName();
  const proxy = new CuttingProxy(new URL(url).hostname, Number(new URL(url).port || 5432));
  let direct: PostgresStore;
  let proxied: PostgresStore;
  beforeAll(async () => {
    const through = new URL(url);
    through.port = String(await proxy.start());
    direct = await PostgresStore.open({ connectionString: url, schema, maxConnections: 2 });
    proxied = await PostgresStore.open({
      connectionString: through.toString(), schema, maxConnections: 2, statementTimeoutMs: 2000, retryBudgetMs: 5000, resolveTimeoutMs: 5000,
    });
  });
  afterAll(async () => {
    await proxied?.close();
    await direct?.close();
    await proxy.stop();
    await dropSchemas(url, [schema]);
  });

  let runs = 0;
  /** What one removal reported, checked against the records the table keeps afterwards. */
  async function removeWithCut(marker: string, replyBytes: number, requestBytes: number | null): Promise<unknown> {
    const runId = `run-${++runs}`;
    const last = testRecord(2, 'torn');
    await direct.append(runId, 0, [testRecord(0, 'a'), testRecord(1, 'b'), last]);
    proxy.armCut(marker, { replyBytes, ...(requestBytes === null ? {} : { requestBytes }) });
    const outcome = await proxied.removeLastRecord(runId, 2, last).catch((e: unknown) => e);
    proxy.disarm();
    const kept = await seqsOf(direct, runId);
    if (outcome === true) expect(kept).toEqual([0, 1]);
    else if (outcome === false) expect(kept).toEqual([0, 1, 2]);
    else {
      expect(outcome).toBeInstanceOf(StoreError);
      expect(outcome).toMatchObject({ operation: 'removeLastRecord', runId, seq: 2 });
      if ((outcome as StoreError).storeCode !== 'OUTCOME_UNKNOWN') expect(kept).toEqual([0, 1, 2]);
    }
    // The same store goes on: the run takes its next record through it.
    const next = kept.length;
    expect(await proxied.append(runId, next, [testRecord(next, 'after')])).toEqual({ committed: true, nextSeq: next + 1 });
    return outcome;
  }

  it('a removal whose COMMIT reached the server but whose reply was lost reports the record removed', async () => {
    expect(await removeWithCut('COMMIT', 0, null)).toBe(true);
  });

  it('wherever the cut falls, the answer matches the table (true, false, or a typed error naming the run)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('BEGIN', 'COMMIT'),
        fc.nat({ max: 400 }),
        fc.option(fc.nat({ max: 200 }), { nil: null }),
        async (marker, replyBytes, requestBytes) => {
          const outcome = await removeWithCut(marker, replyBytes, requestBytes);
          // Nothing else is touching these runs: a removal never loses to a rival, so false is a lie.
          expect(outcome).not.toBe(false);
        },
      ),
      { numRuns: 30, examples: [['COMMIT', 0, null], ['COMMIT', 5, null], ['BEGIN', 0, 3]] },
    );
  });
});
