/**
 * The PostgreSQL store across a server restart. The test restarts a server, so it uses its own
 * private cluster (scripts/pg.sh on port REMIT_PG_RESTART_PORT, default 54339), never the shared
 * one other test files are using; it starts that cluster and stops it again at the end.
 */

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { describePg, freshSchemaName, runSql } from '../../test-support/postgres-test-env.js';
import { PostgresStore, type PostgresStoreOptions } from './postgres.js';
import { testRecord } from '../testing/store-contract.js';

const execFileAsync = promisify(execFile);
const PG_SH = fileURLToPath(new URL('../../../scripts/pg.sh', import.meta.url));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const decoder = new TextDecoder();
const payloadOf = (bytes: Uint8Array) => decoder.decode(bytes.subarray(12, bytes.length - 4));

describePg('postgres store across a server restart', () => {
  const port = process.env.REMIT_PG_RESTART_PORT ?? '54339';
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('REMIT_PG_')));
  env.REMIT_PG_PORT = port;
  const pgsh = async (command: string) => (await execFileAsync('bash', [PG_SH, command], { env })).stdout.trim();

  let url = '';
  const stores: PostgresStore[] = [];
  beforeAll(async () => {
    await pgsh('start');
    url = await pgsh('url');
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close().catch(() => {})));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const leftovers = await client.query<{ gid: string }>(`SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'remit_%'`);
      for (const { gid } of leftovers.rows) await client.query(`ROLLBACK PREPARED '${gid}'`);
      for (const s of stores) await client.query(`DROP SCHEMA IF EXISTS "${s.schema}" CASCADE`);
    } finally {
      await client.end();
    }
    await pgsh('stop');
  });

  const open = async (options: Partial<PostgresStoreOptions> = {}) => {
    const store = await PostgresStore.open({ connectionString: url, schema: freshSchemaName(), retryBudgetMs: 30_000, resolveTimeoutMs: 30_000, ...options });
    stores.push(store);
    return store;
  };

  it('a write in flight when the server restarts is resolved once it is back, and lands exactly once', async () => {
    const store = await open();
    await store.append('run', 0, [testRecord(0, 'a')]);
    // A prepared transaction keeps its row lock across the restart, so the append is certainly
    // still waiting (uncommitted) when the server goes down, and its retry waits again after.
    const gid = `remit_${store.schema}`;
    await runSql(url, `BEGIN; SELECT 1 FROM "${store.schema}".runs WHERE run_id = 'run' FOR UPDATE; PREPARE TRANSACTION '${gid}'`);
    const pending = store.append('run', 1, [testRecord(1, 'b'), testRecord(2, 'c')]);
    const first = await waitForLockWaiter(url, store.schema);
    await pgsh('restart'); // fast shutdown terminates the waiting append's backend
    await waitForLockWaiter(url, store.schema, first); // the retry, after the ambiguity was resolved
    await runSql(url, `ROLLBACK PREPARED '${gid}'`);
    expect(await pending).toEqual({ committed: true, nextSeq: 3 });
    expect(store.faultCounters).toMatchObject({ ambiguousWrites: 1, resolvedNotCommitted: 1 });
    expect((await store.readRecords('run')).map((r) => payloadOf(r.bytes))).toEqual(['a', 'b', 'c']);
  });

  it('appends keep going through a restart: every reported commit stored once, nothing lost, nothing doubled', async () => {
    const store = await open({ maxConnections: 4 });
    const writers = 4;
    let restart: Promise<string> | undefined;
    let restarted = false;
    const reported = new Map<string, string>(); // payload -> 'committed' | error code
    const writer = async (w: number) => {
      const runId = `run-${w}`;
      let nextSeq = 0;
      for (let i = 0; i < 30 || !restarted; i++) {
        if (i === 10 && !restart) restart = pgsh('restart').finally(() => (restarted = true));
        const payload = `w${w}-${i}`;
        try {
          const outcome = await store.append(runId, nextSeq, [testRecord(nextSeq, payload)]);
          expect(outcome.committed).toBe(true); // one writer per run: never a conflict
          reported.set(payload, 'committed');
          nextSeq = outcome.nextSeq;
        } catch (error) {
          expect(error).toBeInstanceOf(StoreError);
          reported.set(payload, (error as StoreError).storeCode);
          nextSeq = (await store.readRecords(runId)).length;
        }
        await sleep(2);
      }
    };
    await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    await restart;
    for (let w = 0; w < writers; w++) {
      const stored = await store.readRecords(`run-${w}`);
      expect(stored.map((r) => r.seq)).toEqual(stored.map((_, i) => i));
      const payloads = stored.map((r) => payloadOf(r.bytes));
      expect(new Set(payloads).size).toBe(payloads.length); // nothing doubled
      for (const [payload, outcome] of reported) {
        if (!payload.startsWith(`w${w}-`)) continue;
        if (outcome === 'committed') expect(payloads).toContain(payload); // nothing lost
        else if (outcome !== 'OUTCOME_UNKNOWN') expect(payloads).not.toContain(payload); // "not written" was true
      }
    }
    const errors = [...reported.values()].filter((o) => o !== 'committed');
    // The restart must have met appends in flight: some were retried, resolved or reported as
    // failed. A restart that fell between appends would test nothing.
    const counters = store.faultCounters;
    expect(errors.length + counters.retries + counters.ambiguousWrites, JSON.stringify({ errors, counters })).toBeGreaterThan(0);
    process.stderr.write(
      `restart run: ${reported.size} appends, ${reported.size - errors.length} committed, errors ${JSON.stringify(errors)}, counters ${JSON.stringify(store.faultCounters)}\n`,
    );
  });
});


/** Waits for a backend of `schema` waiting on a lock (other than pid `not`) and returns its pid. */
async function waitForLockWaiter(url: string, schema: string, not = 0): Promise<number> {
  for (let i = 0; i < 400; i++) {
    try {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const rows = await client.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%' AND pid <> $2`,
          [`"${schema}"`, not],
        );
        if (rows.rows[0]) return rows.rows[0].pid;
      } finally {
        await client.end();
      }
    } catch {
      // the server is restarting
    }
    await sleep(25);
  }
  throw new Error('no append came to wait on the lock');
}
