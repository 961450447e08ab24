/**
 * The PostgreSQL store under faults: a backend terminated mid-append and mid-fork, a reply lost
 * after the server committed, identical bytes from a rival writer, a statement timeout, pooled
 * connections killed while idle. In every case the caller gets a typed error or a resolved
 * outcome, and reading back shows every record exactly once: nothing lost, nothing doubled.
 * (Server restarts: postgres-restart.test.ts.)
 */

import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { describePg, dropSchemas, freshSchemaName, ReplyLosingProxy } from '../../test-support/postgres-test-env.js';
import { PostgresStore, type PostgresStoreOptions } from './postgres.js';
import { outcomeOf, testRecord } from '../testing/store-contract.js';

const records = (first: number, count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => testRecord(first + i, `${tag}-${first + i}`));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describePg('postgres store under faults', (url) => {
  const schemas = new Set<string>();
  const stores: PostgresStore[] = [];
  const clients: pg.Client[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close().catch(() => {})));
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
    await dropSchemas(url, schemas);
  });

  const open = async (options: Partial<PostgresStoreOptions> = {}) => {
    const schema = options.schema ?? freshSchemaName();
    schemas.add(schema);
    const store = await PostgresStore.open({ connectionString: url, maxConnections: 4, ...options, schema });
    stores.push(store);
    return store;
  };

  async function connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    clients.push(client);
    return client;
  }

  async function sql<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
    const client = await connect();
    try {
      return (await client.query<R>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** Another transaction holding `statement`'s locks until release(): writers that need them wait. */
  async function holdLocks(statement: string, params: unknown[]): Promise<{ release: (how?: 'COMMIT' | 'ROLLBACK') => Promise<void> }> {
    const client = await connect();
    await client.query('BEGIN');
    await client.query(statement, params);
    return {
      release: async (how = 'COMMIT') => {
        await client.query(how);
        await client.end();
      },
    };
  }

  /** The pid of a backend of this schema waiting on a lock, other than `not`. */
  async function lockWaiter(schema: string, not?: number): Promise<number> {
    // Up to a minute (it returns as soon as one waits): 400 polls of 25 ms were 10 s and more.
    for (const started = Date.now(); Date.now() - started < 60_000;) {
      const rows = await sql<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%' AND pid <> $2`,
        [`"${schema}"`, not ?? 0],
      );
      if (rows[0]) return rows[0].pid;
      await sleep(25);
    }
    throw new Error(`no backend of ${schema} came to wait on a lock`);
  }

  const terminate = (pid: number) => sql('SELECT pg_terminate_backend($1)', [pid]);

  describe('a backend terminated mid-append (pg_terminate_backend)', () => {
    it('is resolved as not committed, retried on the same seq, and lands exactly once', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 1, 'a'));
      const lock = await holdLocks(`SELECT 1 FROM "${store.schema}".runs WHERE run_id = $1 FOR UPDATE`, ['run']);
      const pending = store.append('run', 1, records(1, 2, 'b'));
      const first = await lockWaiter(store.schema);
      await terminate(first);
      await lockWaiter(store.schema, first); // the retry, waiting on the same lock
      await lock.release();
      expect(await pending).toEqual({ committed: true, nextSeq: 3 });
      expect(await store.readLog('run')).toEqual(new Uint8Array(Buffer.concat([...records(0, 1, 'a'), ...records(1, 2, 'b')])));
      expect(store.faultCounters).toMatchObject({ ambiguousWrites: 1, resolvedNotCommitted: 1, resolvedCommitted: 0 });
    });

    it('with retries disabled, is a typed UNAVAILABLE error and nothing is written', async () => {
      const store = await open({ retryBudgetMs: 0 });
      await store.append('run', 0, records(0, 1, 'a'));
      const lock = await holdLocks(`SELECT 1 FROM "${store.schema}".runs WHERE run_id = $1 FOR UPDATE`, ['run']);
      const pending = store.append('run', 1, records(1, 1, 'b')).catch((e: unknown) => e);
      await terminate(await lockWaiter(store.schema));
      const error = await pending;
      await lock.release();
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).storeCode).toBe('UNAVAILABLE');
      expect((error as StoreError).message).toMatch(/nothing was written/);
      expect((await store.readRecords('run')).map((r) => r.seq)).toEqual([0]);
    });
  });

  describe('a reply lost after the server committed', () => {
    async function proxiedStore(options: Partial<PostgresStoreOptions> = {}) {
      const target = new URL(url);
      const proxy = new ReplyLosingProxy(target.hostname, Number(target.port || 5432));
      const proxied = new URL(url);
      proxied.port = String(await proxy.start());
      const store = await open({ connectionString: proxied.toString(), ...options });
      return { proxy, store };
    }

    it('is resolved as committed by its append token and not sent again', async () => {
      const { proxy, store } = await proxiedStore();
      try {
        await store.append('run', 0, records(0, 1, 'a'));
        proxy.armLoseReply('ON CONFLICT (run_id, seq)'); // an append at seq > 0 (the statement's text, parsed on first use)
        expect(await store.append('run', 1, records(1, 2, 'b'))).toEqual({ committed: true, nextSeq: 3 });
        expect(proxy.lostReplies).toBe(1);
        expect(store.faultCounters).toMatchObject({ ambiguousWrites: 1, resolvedCommitted: 1, retries: 0 });
        expect((await store.readRecords('run')).map((r) => r.seq)).toEqual([0, 1, 2]);
      } finally {
        await proxy.stop();
      }
    });

    it('when the server cannot be asked in time, is a typed OUTCOME_UNKNOWN error; the record is kept once', async () => {
      let proxy: ReplyLosingProxy | undefined;
      const opened = await proxiedStore({ resolveTimeoutMs: 500, onAmbiguousWrite: () => proxy?.stop() });
      proxy = opened.proxy;
      await opened.store.append('run', 0, records(0, 1, 'a'));
      proxy.armLoseReply('ON CONFLICT (run_id, seq)'); // an append at seq > 0 (the statement's text, parsed on first use)
      const error = await opened.store.append('run', 1, records(1, 1, 'b')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).storeCode).toBe('OUTCOME_UNKNOWN');
      const direct = await open({ schema: opened.store.schema });
      expect(await direct.readLog('run')).toEqual(new Uint8Array(Buffer.concat([...records(0, 1, 'a'), ...records(1, 1, 'b')])));
    });
  });

  it('identical bytes committed by a rival writer are not mistaken for our own commit', async () => {
    // Two resumers sending the same value write byte-identical claim records; only one may be told
    // it committed. The rival commits while our connection is broken and before we resolve.
    let lock: Awaited<ReturnType<typeof holdLocks>> | undefined;
    let rival: PostgresStore | undefined;
    const same = records(1, 1, 'claim');
    let rivalOutcome: unknown;
    const store = await open({
      onAmbiguousWrite: async () => {
        await lock!.release();
        rivalOutcome = await rival!.append('run', 1, same);
      },
    });
    rival = await open({ schema: store.schema });
    await store.append('run', 0, records(0, 1, 'a'));
    lock = await holdLocks(`SELECT 1 FROM "${store.schema}".runs WHERE run_id = $1 FOR UPDATE`, ['run']);
    const pending = store.append('run', 1, same);
    await terminate(await lockWaiter(store.schema));
    // The token decides, not the bytes: the records in the way are the rival's (byte-identical to ours).
    expect(outcomeOf(await pending)).toEqual({ committed: false, nextSeq: 2, tail: [{ seq: 1, bytes: same[0] }] });
    expect(rivalOutcome).toEqual({ committed: true, nextSeq: 2 });
    expect(store.faultCounters).toMatchObject({ ambiguousWrites: 1, resolvedConflict: 1, resolvedCommitted: 0 });
    expect((await store.readRecords('run')).map((r) => r.seq)).toEqual([0, 1]);
  });

  it('a statement timeout is a typed TIMEOUT error; nothing is written and the run stays appendable', async () => {
    const store = await open({ statementTimeoutMs: 300 });
    await store.append('run', 0, records(0, 1, 'a'));
    const lock = await holdLocks(`SELECT 1 FROM "${store.schema}".runs WHERE run_id = $1 FOR UPDATE`, ['run']);
    const started = Date.now();
    const error = await store.append('run', 1, records(1, 1, 'b')).catch((e: unknown) => e);
    const elapsedMs = Date.now() - started;
    await lock.release();
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).storeCode).toBe('TIMEOUT');
    expect((error as StoreError).seq).toBe(1);
    expect(elapsedMs).toBeLessThan(30_000); // not the lock's wait: it is held until after this
    expect((await store.readRecords('run')).map((r) => r.seq)).toEqual([0]);
    expect(await store.append('run', 1, records(1, 1, 'b'))).toEqual({ committed: true, nextSeq: 2 });
  });

  it('a backend terminated mid-fork is resolved, retried, and the fork lands exactly once', async () => {
    const store = await open();
    await store.append('src', 0, records(0, 3, 's'));
    // An uncommitted claim of the target makes the fork wait inside its transaction.
    const lock = await holdLocks(`INSERT INTO "${store.schema}".runs VALUES ($1, 1, now(), now())`, ['dst']);
    const pending = store.fork('src', 2, 'dst', testRecord(2, 'fork'));
    const first = await lockWaiter(store.schema);
    await terminate(first);
    await lockWaiter(store.schema, first);
    await lock.release('ROLLBACK');
    expect(await pending).toEqual({ committed: true });
    expect((await store.readRecords('dst')).map((r) => r.seq)).toEqual([0, 1, 2]);
    expect(store.faultCounters).toMatchObject({ ambiguousWrites: 1, resolvedNotCommitted: 1 });
  });

  it.each(['append', 'fork'] as const)('a backend terminated while a first %s waits to take over a run row that keeps no record is resolved as not committed, retried, and lands once', async (how) => {
    const store = await open();
    await store.append('src', 0, records(0, 3, 's'));
    await store.append('ghost', 0, records(0, 2, 'old'), { recordCount: 2, byteLength: 2, snapshotSeq: 0, summary: new Uint8Array([1]) }, 'completed');
    await sql(`DELETE FROM "${store.schema}".records WHERE run_id = 'ghost'`);
    // The take-over's lock on the stale row (replaceListing / takeOverForkTarget) waits for this one.
    const lock = await holdLocks(`SELECT 1 FROM "${store.schema}".runs WHERE run_id = $1 FOR UPDATE`, ['ghost']);
    const pending = how === 'append' ? store.append('ghost', 0, records(0, 1, 'new')) : store.fork('src', 2, 'ghost', testRecord(2, 'fork'));
    const first = await lockWaiter(store.schema);
    await terminate(first);
    await lockWaiter(store.schema, first); // the retry, waiting on the same lock
    await lock.release('ROLLBACK');
    // The stale row is still there when the outcome is resolved: only records tell that nobody committed.
    expect(await pending).toEqual(how === 'append' ? { committed: true, nextSeq: 1 } : { committed: true });
    const log = how === 'append' ? records(0, 1, 'new') : [...records(0, 2, 's'), testRecord(2, 'fork')];
    expect(await store.readLog('ghost')).toEqual(new Uint8Array(Buffer.concat(log)));
    expect(await store.readSummary('ghost')).toBeNull();
    expect(store.faultCounters).toMatchObject({ ambiguousWrites: 1, resolvedNotCommitted: 1, resolvedCommitted: 0, resolvedConflict: 0 });
  });

  it('pooled connections killed while idle are replaced without the caller noticing', async () => {
    // Unique to this store (the backends terminated are those with this name): a Date.now() name
    // could be another run's of this test against the same server in the same millisecond.
    const applicationName = freshSchemaName('remit_idle');
    const store = await open({ applicationName });
    await Promise.all(['a', 'b', 'c', 'd'].map((run) => store.append(run, 0, records(0, 1, run))));
    const killed = await sql<{ pid: number }>(
      `SELECT pid, pg_terminate_backend(pid) FROM (SELECT pid FROM pg_stat_activity WHERE application_name = $1 OFFSET 0) mine`,
      [applicationName],
    );
    expect(killed.length).toBeGreaterThan(0);
    const outcomes = await Promise.all(['a', 'b', 'c', 'd'].map((run) => store.append(run, 1, records(1, 1, run))));
    for (const o of outcomes) expect(o).toEqual({ committed: true, nextSeq: 2 });
    for (const run of ['a', 'b', 'c', 'd']) expect((await store.readRecords(run)).map((r) => r.seq)).toEqual([0, 1]);
    expect(await store.readLog('a')).toEqual(new Uint8Array(Buffer.concat(records(0, 2, 'a'))));
  });
});
