import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { MIGRATIONS, type Migration } from './postgres-migrations.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { PostgresStore, type PostgresStoreOptions } from './postgres.js';
import { describeStoreContract, outcomeOf, testRecord } from '../testing/store-contract.js';

const concat = (parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const records = (first: number, count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => testRecord(first + i, `${tag}-${first + i}`));

describePg('postgres store', (url) => {
  const schemas = new Set<string>();
  const stores: PostgresStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close().catch(() => {})));
    await dropSchemas(url, schemas);
  });

  const open = async (options: Partial<PostgresStoreOptions> = {}) => {
    const schema = options.schema ?? freshSchemaName();
    schemas.add(schema);
    const store = await PostgresStore.open({ connectionString: url, maxConnections: 4, ...options, schema });
    stores.push(store);
    return store;
  };

  async function sql<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  describeStoreContract('postgres', () => open(), {
    openSecondHandle: (store) => open({ schema: (store as PostgresStore).schema }),
    // A hand edit (psql). The CHECK of migration 3 refuses a value that is not a status (tested
    // below), so for one the test drops the constraint first, as a schema changed by hand would.
    writeStatusHint: async (store, runId, value) => {
      const schema = `"${(store as PostgresStore).schema}"`;
      if (!['running', 'parked', 'completed', 'failed'].includes(value)) await sql(`ALTER TABLE ${schema}.runs DROP CONSTRAINT IF EXISTS runs_status_check`);
      const updated = await sql(`UPDATE ${schema}.runs SET status = $2 WHERE run_id = $1 RETURNING run_id`, [runId, value]);
      expect(updated).toHaveLength(1);
    },
  });

  describe('conditional append', () => {
    it('of 12 pools appending at one seq at the same moment, exactly one commits', async () => {
      const first = await open();
      await first.append('run', 0, records(0, 1, 'base'));
      const others = await Promise.all(Array.from({ length: 11 }, () => open({ schema: first.schema, maxConnections: 1 })));
      const writers = [first, ...others];
      const outcomes = await Promise.all(writers.map((s, i) => s.append('run', 1, records(1, 3, `writer${i}`))));
      const winners = outcomes.flatMap((o, i) => (o.committed ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const o of outcomes) expect(o.nextSeq).toBe(4);
      const stored = await first.readRecords('run');
      expect(stored.map((r) => r.seq)).toEqual([0, 1, 2, 3]);
      expect(stored.slice(1).map((r) => r.bytes)).toEqual(records(1, 3, `writer${winners[0]}`));
    });

    it('is all or nothing when a batch overlaps records another writer committed', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 2, 'a'));
      expect(outcomeOf(await store.append('run', 1, records(1, 3, 'b')))).toEqual({ committed: false, nextSeq: 2, tail: [{ seq: 1, bytes: records(1, 1, 'a')[0] }] });
      expect(await store.readLog('run')).toEqual(concat(records(0, 2, 'a')));
      const rows = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${store.schema}".records`);
      expect(rows[0]!.n).toBe(2);
    });

    // An append at seq > 0 inserts its batch first (the records' key is the gate) and then moves
    // the run row; a guard makes the statement write nothing unless both held in full.
    it('writes nothing behind a gap: a run row short of the expected seq (a record removed since the writer read it) refuses the whole batch', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 3, 'a'));
      await sql(`DELETE FROM "${store.schema}".records WHERE run_id = 'run' AND seq = 2`);
      await sql(`UPDATE "${store.schema}".runs SET next_seq = 2 WHERE run_id = 'run'`);
      expect(outcomeOf(await store.append('run', 3, records(3, 2, 'b')))).toEqual({ committed: false, nextSeq: 2, tail: [] });
      expect((await store.readRecords('run')).map((r) => r.seq)).toEqual([0, 1]);
      expect((await sql<{ next_seq: number }>(`SELECT next_seq FROM "${store.schema}".runs`))[0]!.next_seq).toBe(2);
      // The store is usable at once: the connection the guard failed on is healthy.
      expect(outcomeOf(await store.append('run', 2, records(2, 1, 'c')))).toEqual({ committed: true, nextSeq: 3 });
    });

    it('writes none of a batch when a record in its middle is in the way of a run row still at the expected seq (a hand edit): INCONSISTENT', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 1, 'a'));
      const [stray] = records(2, 1, 'stray');
      await sql(`INSERT INTO "${store.schema}".records (run_id, seq, bytes, append_token, committed_at) VALUES ('run', 2, $1, gen_random_uuid(), now())`, [Buffer.from(stray!)]);
      const error = await store.append('run', 1, records(1, 3, 'b')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).storeCode).toBe('INCONSISTENT');
      expect((await store.readRecords('run')).map((r) => r.seq)).toEqual([0, 2]);
      expect((await sql<{ next_seq: number }>(`SELECT next_seq FROM "${store.schema}".runs`))[0]!.next_seq).toBe(1);
    });

    it('a repair racing an append: whichever moves the run row first wins, the other writes nothing', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 2, 'a'));
      const other = await open({ schema: store.schema });
      // The repair locks the run row first (held open by a transaction of our own), the append
      // inserts its record and waits for the row; the repair commits: the append must refuse.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('BEGIN');
        await client.query(`UPDATE "${store.schema}".runs SET next_seq = 1 WHERE run_id = 'run'`);
        await client.query(`DELETE FROM "${store.schema}".records WHERE run_id = 'run' AND seq = 1`);
        const pending = other.append('run', 2, records(2, 1, 'b'));
        await waitForLockWaiter(store.schema);
        await client.query('COMMIT');
        expect(outcomeOf(await pending)).toEqual({ committed: false, nextSeq: 1, tail: [] });
      } finally {
        await client.end();
      }
      expect((await store.readRecords('run')).map((r) => r.seq)).toEqual([0]);
    });

    it('the losers of a race at one seq never lock the run row: they wait on the winner\'s key and write nothing', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 1, 'a'));
      // A winner of our own, in a transaction held open: its record at seq 1 first, the run row
      // only later. A loser at seq 1 waits on that key; meanwhile the run row must stay free for
      // an update (an append that moved the row first would hold that lock while it waits; the
      // records' foreign key only takes the KEY SHARE lock, which an update does not conflict with).
      const winner = new pg.Client({ connectionString: url });
      await winner.connect();
      try {
        await winner.query('BEGIN');
        await winner.query(`INSERT INTO "${store.schema}".records (run_id, seq, bytes, append_token, committed_at) VALUES ('run', 1, $1, gen_random_uuid(), now())`, [Buffer.from(records(1, 1, 'w')[0]!)]);
        const loser = await open({ schema: store.schema });
        const pending = loser.append('run', 1, records(1, 1, 'l'));
        await waitForLockWaiter(store.schema, 'transactionid');
        const locked = await sql(`SELECT 1 FROM "${store.schema}".runs WHERE run_id = 'run' FOR NO KEY UPDATE NOWAIT`);
        expect(locked).toHaveLength(1);
        await winner.query(`UPDATE "${store.schema}".runs SET next_seq = 2 WHERE run_id = 'run'`);
        await winner.query('COMMIT');
        expect(outcomeOf(await pending)).toEqual({ committed: false, nextSeq: 2, tail: [{ seq: 1, bytes: records(1, 1, 'w')[0] }] });
      } finally {
        await winner.end();
      }
      expect((await store.readRecords('run')).map((r) => r.bytes)).toEqual([...records(0, 1, 'a'), ...records(1, 1, 'w')]);
    });

    it('a repair that waited while its record was removed and appended again with other bytes removes nothing, and the run stays consistent', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 3, 'a')); // next_seq 3, record 2 = a-2
      const [stale] = records(2, 1, 'a');
      // Another repair of record 2 and a writer appending it again, in one transaction held open.
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query(`DELETE FROM "${store.schema}".records WHERE run_id = 'run' AND seq = 2`);
        await other.query(`UPDATE "${store.schema}".runs SET next_seq = 2 WHERE run_id = 'run'`);
        await other.query(`INSERT INTO "${store.schema}".records (run_id, seq, bytes, append_token, committed_at) VALUES ('run', 2, $1, gen_random_uuid(), now())`, [Buffer.from(records(2, 1, 'b')[0]!)]);
        await other.query(`UPDATE "${store.schema}".runs SET next_seq = 3 WHERE run_id = 'run'`);
        const repair = store.removeLastRecord('run', 2, stale!); // read the run before both
        await waitForLockWaiter(store.schema);
        await other.query('COMMIT');
        expect(await repair).toBe(false);
      } finally {
        await other.end();
      }
      expect((await store.readRecords('run')).map((r) => r.bytes)).toEqual([...records(0, 2, 'a'), ...records(2, 1, 'b')]);
      expect((await sql<{ next_seq: number }>(`SELECT next_seq FROM "${store.schema}".runs`))[0]!.next_seq).toBe(3);
      expect(outcomeOf(await store.append('run', 3, records(3, 1, 'c')))).toEqual({ committed: true, nextSeq: 4 });
    });

    it('a writer whose batch meets a stale writer\'s first record waits for it without holding the run row: the stale writer can still reach the row, and no deadlock', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 2, 'a')); // next_seq 2
      // A stale writer (its snapshot predates a repair) has put its first record at seq 3 and has
      // not reached the run row yet: a transaction of our own, held open.
      const stale = new pg.Client({ connectionString: url });
      await stale.connect();
      try {
        await stale.query('BEGIN');
        await stale.query(`INSERT INTO "${store.schema}".records (run_id, seq, bytes, append_token, committed_at) VALUES ('run', 3, $1, gen_random_uuid(), now())`, [Buffer.from(records(3, 1, 'stale')[0]!)]);
        const pending = store.append('run', 2, records(2, 3, 'b')); // inserts 2, then waits on 3
        await waitForLockWaiter(store.schema, 'transactionid');
        // The stale writer now takes the run row, as its compare-and-set does; a writer that held
        // the row while it waited would deadlock here.
        await stale.query(`SET lock_timeout = '3s'`);
        await stale.query(`SELECT 1 FROM "${store.schema}".runs WHERE run_id = 'run' FOR NO KEY UPDATE`);
        await stale.query('ROLLBACK'); // it finds the row moved on and writes nothing
        expect(outcomeOf(await pending)).toEqual({ committed: true, nextSeq: 5 });
      } finally {
        await stale.end();
      }
      expect(store.faultCounters.retries).toBe(0);
      expect((await store.readRecords('run')).map((r) => r.bytes)).toEqual([...records(0, 2, 'a'), ...records(2, 3, 'b')]);
    });

    it('a stale writer at seq > 0 racing the take-over of a run row that keeps no record: one of them commits, and the run row agrees with its records', async () => {
      const store = await open();
      const creator = await open({ schema: store.schema });
      await store.append('run', 0, records(0, 2, 'old'));
      await sql(`DELETE FROM "${store.schema}".records WHERE run_id = 'run'`); // NO_RECORDS: the row stays at next_seq 2
      // The stale writer is held inside its statement after its first record (a trigger waiting on
      // an advisory lock this test holds), and the take-over then waits on that record. The writer
      // moves the run row last, which the take-over holds: the two wait on each other, and
      // PostgreSQL breaks the deadlock; the one it aborts is retried (40P01 is transient). Only a
      // run whose records were deleted by hand while a writer held it can come to this.
      await sql(`CREATE FUNCTION "${store.schema}".stall() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock_shared(7707); PERFORM pg_advisory_unlock_shared(7707); RETURN NEW; END $$`);
      await sql(`CREATE TRIGGER stall BEFORE INSERT ON "${store.schema}".records FOR EACH ROW WHEN (NEW.seq = 3) EXECUTE FUNCTION "${store.schema}".stall()`);
      const control = new pg.Client({ connectionString: url });
      await control.connect();
      try {
        await control.query('SELECT pg_advisory_lock(7707)');
        const stale = store.append('run', 2, records(2, 2, 'stale'));
        await waitForLockWaiter(store.schema, 'advisory');
        const created = creator.append('run', 0, records(0, 3, 'new'));
        await waitForLockWaiter(store.schema, 'transactionid');
        await control.query('SELECT pg_advisory_unlock(7707)');
        const outcomes = [await stale, await created];
        expect(outcomes.filter((o) => o.committed)).toHaveLength(1);
      } finally {
        await control.end();
      }
      const stored = await store.readRecords('run');
      expect((await sql<{ next_seq: number }>(`SELECT next_seq FROM "${store.schema}".runs`))[0]!.next_seq).toBe(stored.at(-1)!.seq + 1);
    });

    it('racing appends (at the head, stale, ahead; batches of 1 to 4 with summaries and hints) and repairs: no error, a contiguous run, nothing stored that was not reported committed', async () => {
      const first = await open();
      const writers = [first, ...(await Promise.all(Array.from({ length: 5 }, () => open({ schema: first.schema, maxConnections: 2 }))))];
      await first.append('run', 0, records(0, 1, 'base'));
      const committed = new Map<number, Uint8Array>([[0, records(0, 1, 'base')[0]!]]);
      const errors: string[] = [];
      let longBatches = 0;
      // A 32-bit linear congruential generator (Math.imul keeps the product exact), its high bits.
      let seed = 20261205;
      const random = (n: number) => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return (seed >>> 16) % n;
      };
      const nextSeqNow = async () => (await sql<{ next_seq: number }>(`SELECT next_seq FROM "${first.schema}".runs WHERE run_id = 'run'`))[0]!.next_seq;
      await Promise.all(writers.map(async (store, w) => {
        for (let i = 0; i < 40; i++) {
          try {
            const head = await nextSeqNow();
            const pick = random(10);
            if (pick === 0 && head > 1) {
              const [last] = await store.readRecords('run', head - 1);
              if (last !== undefined && (await store.removeLastRecord('run', last.seq, last.bytes))) committed.delete(last.seq);
              continue;
            }
            const seq = Math.max(1, pick < 6 ? head : pick < 8 ? head - 1 - random(2) : head + 1);
            const batch = records(seq, 1 + random(4), `w${w}-${i}`);
            if (batch.length > 1) longBatches++;
            const summary = random(3) === 0 ? { recordCount: seq + batch.length, byteLength: 1, snapshotSeq: 0, summary: new Uint8Array([w]) } : undefined;
            const outcome = await store.append('run', seq, batch, summary, random(3) === 0 ? 'running' : undefined);
            if (outcome.committed) batch.forEach((bytes, k) => committed.set(seq + k, bytes));
          } catch (error) {
            errors.push(String((error as Error).message));
          }
        }
      }));
      expect(longBatches).toBeGreaterThan(40); // the generator draws batches of 2 to 4 too
      expect(errors).toEqual([]);
      // A deadlock (40P01) or any other transient failure would have been retried: none may happen.
      expect(writers.map((w) => w.faultCounters.retries)).toEqual(writers.map(() => 0));
      const stored = await first.readRecords('run');
      expect(stored.map((r) => r.seq)).toEqual(stored.map((_, i) => i));
      expect(await nextSeqNow()).toBe(stored.length);
      for (const r of stored) expect(r.bytes).toEqual(committed.get(r.seq));
      const summaries = await sql<{ record_count: number }>(`SELECT record_count FROM "${first.schema}".summaries`);
      for (const row of summaries) expect(row.record_count).toBeLessThanOrEqual(stored.length);
    });

    /** Waits until a backend working on `schema` waits for a lock of `type` (any, by default). */
    async function waitForLockWaiter(schema: string, type?: string): Promise<void> {
      // Up to a minute (it returns as soon as one waits): 500 polls of 10 ms were 5 s and more.
      for (const started = Date.now(); Date.now() - started < 60_000;) {
        const rows = await sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE NOT l.granted AND a.query LIKE $1 AND ($2::text IS NULL OR l.locktype = $2)`,
          [`%"${schema}".%`, type ?? null],
        );
        if (rows[0]!.n > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error('no append waited for a lock');
    }

    it('rejects a run id PostgreSQL cannot store, naming the field', async () => {
      const store = await open();
      const error = await store.append('bad\u0000id', 0, records(0, 1, 'x')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).storeCode).toBe('BAD_RUN_ID');
      expect((error as StoreError).field).toBe('runId');
    });

    it('records commit times and run timestamps from the server clock', async () => {
      const store = await open();
      const before = Date.now();
      await store.append('run', 0, records(0, 2, 't'));
      await store.append('run', 2, records(2, 1, 't'));
      const stored = await store.readRecords('run');
      for (const r of stored) expect(Math.abs(r.committedAtMs - before)).toBeLessThan(60_000);
      const [listing] = (await store.listRuns()).filter((r) => r.runId === 'run');
      expect(listing!.nextSeq).toBe(3);
      expect(listing!.updatedAtMs).toBeGreaterThanOrEqual(listing!.createdAtMs);
      expect(listing!.updatedAtMs).toBeGreaterThanOrEqual(stored[0]!.committedAtMs);
    });
  });

  describe('fork', () => {
    it('a fork racing repairs of its source\'s last record (removed, then appended again) commits or is SOURCE_TOO_SHORT, never an untyped error', async () => {
      const store = await open();
      const forker = await open({ schema: store.schema });
      const length = 6;
      await store.append('src', 0, records(0, length, 'src'));
      let stop = false;
      const churn = (async () => {
        for (let i = 0; !stop; i++) {
          const [last] = await store.readRecords('src', length - 1);
          if (last !== undefined && (await store.removeLastRecord('src', length - 1, last.bytes))) {
            await store.append('src', length - 1, records(length - 1, 1, `src${i}`));
          }
        }
      })();
      const outcomes = new Map<string, number>();
      try {
        for (let i = 0; i < 150; i++) {
          const outcome = await forker.fork('src', length, `t${i}`, testRecord(length, 'fork')).catch((e: unknown) => ({ error: String((e as Error).message) }));
          const key = 'committed' in outcome ? (outcome.committed ? 'committed' : outcome.reason) : outcome.error;
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        }
      } finally {
        stop = true;
        await churn;
      }
      expect([...outcomes.keys()].filter((k) => k !== 'committed' && k !== 'SOURCE_TOO_SHORT')).toEqual([]);
      expect(outcomes.get('committed')).toBeGreaterThan(0);
    });

    it('is one transaction: a failure after the prefix was copied leaves no trace of the target', async () => {
      const store = await open();
      await store.append('src', 0, records(0, 3, 's'));
      // A test-only trigger that refuses the fork record, i.e. fails the transaction at its last write.
      await sql(`CREATE FUNCTION "${store.schema}".refuse_fork() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.run_id = 'dst' AND NEW.seq = 2 THEN RAISE EXCEPTION 'refused by test'; END IF; RETURN NEW; END $$`);
      await sql(`CREATE TRIGGER refuse_fork BEFORE INSERT ON "${store.schema}".records
        FOR EACH ROW EXECUTE FUNCTION "${store.schema}".refuse_fork()`);
      const error = await store.fork('src', 2, 'dst', testRecord(2, 'fork')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).storeCode).toBe('P0001');
      expect(await store.readRecords('dst')).toEqual([]);
      expect((await store.listRuns()).map((r) => r.runId)).toEqual(['src']);
      await sql(`DROP TRIGGER refuse_fork ON "${store.schema}".records`);
      expect(await store.fork('src', 2, 'dst', testRecord(2, 'fork'))).toEqual({ committed: true });
      expect((await store.readRecords('dst')).map((r) => r.seq)).toEqual([0, 1, 2]);
    });

    it('keeps the source commit times for the copied prefix', async () => {
      const store = await open();
      await store.append('src', 0, records(0, 2, 's'));
      await store.fork('src', 2, 'dst', testRecord(2, 'fork'));
      const src = await store.readRecords('src');
      const dst = await store.readRecords('dst');
      expect(dst.slice(0, 2).map((r) => r.committedAtMs)).toEqual(src.map((r) => r.committedAtMs));
    });
  });

  describe('a run row that keeps no record (NO_RECORDS: its records deleted by hand)', () => {
    const summaryOf = (recordCount: number, tag: string) => ({ recordCount, byteLength: 10 * recordCount, snapshotSeq: 0, summary: new TextEncoder().encode(tag) });

    /** A store holding run `runId` (3 records, a summary, hint 'completed'), then its records deleted as by hand. */
    async function staleRun(runId = 'ghost', store?: PostgresStore) {
      store ??= await open();
      await store.append(runId, 0, records(0, 3, 'old'), summaryOf(3, 'old summary'), 'completed');
      await sql(`DELETE FROM "${store.schema}".records WHERE run_id = $1`, [runId]);
      const [listing] = (await store.listRuns()).filter((r) => r.runId === runId);
      expect(listing).toMatchObject({ nextSeq: 3, statusHint: 'completed' });
      expect(await sql(`SELECT 1 FROM "${store.schema}".summaries WHERE run_id = $1`, [runId])).toHaveLength(1);
      return { store, listing: listing! };
    }

    it('a first append takes the id over: the new records, next_seq, creation time and hint; the stale summary goes', async () => {
      const { store, listing } = await staleRun();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await store.append('ghost', 0, records(0, 2, 'new'), undefined, 'running')).toEqual({ committed: true, nextSeq: 2 });
      expect(await store.readLog('ghost')).toEqual(concat(records(0, 2, 'new')));
      const [after] = (await store.listRuns()).filter((r) => r.runId === 'ghost');
      expect(after).toMatchObject({ nextSeq: 2, statusHint: 'running' });
      expect(after!.createdAtMs).toBeGreaterThan(listing.createdAtMs);
      expect(await store.readSummary('ghost')).toBeNull();
      expect(await store.readStatusHint('ghost')).toEqual({ statusHint: 'running', recordCount: 2 });
      // And the run goes on as any other; a second first append is refused as always.
      expect(await store.append('ghost', 2, records(2, 1, 'new'))).toEqual({ committed: true, nextSeq: 3 });
      // With no tail: a refused first record's would be the whole log (store.ts, AppendOutcome).
      expect(outcomeOf(await store.append('ghost', 0, records(0, 1, 'late')))).toEqual({ committed: false, nextSeq: 3 });
    });

    it('a first append with a summary and no hint stores its own summary and leaves the hint unknown', async () => {
      const { store } = await staleRun();
      expect(await store.append('ghost', 0, records(0, 2, 'new'), summaryOf(2, 'new summary'))).toEqual({ committed: true, nextSeq: 2 });
      expect((await store.readSummary('ghost'))?.summary).toEqual(summaryOf(2, 'new summary'));
      expect(await store.readStatusHint('ghost')).toEqual({ statusHint: null, recordCount: 2 });
      expect(await store.listRunsToRecover()).toEqual(['ghost']);
    });

    it('a fork takes the id over likewise; a fork from a short source leaves the stale row as it was', async () => {
      const { store, listing } = await staleRun();
      await store.append('src', 0, records(0, 3, 's'));
      expect(await store.fork('src', 5, 'ghost', testRecord(5, 'fork'), 'running')).toEqual({ committed: false, reason: 'SOURCE_TOO_SHORT' });
      expect((await store.listRuns()).find((r) => r.runId === 'ghost')).toEqual(listing);
      expect(await sql(`SELECT 1 FROM "${store.schema}".summaries WHERE run_id = 'ghost'`)).toHaveLength(1);
      expect(await store.fork('src', 2, 'ghost', testRecord(2, 'fork'), 'running')).toEqual({ committed: true });
      expect(await store.readLog('ghost')).toEqual(concat([...records(0, 2, 's'), testRecord(2, 'fork')]));
      expect((await store.listRuns()).find((r) => r.runId === 'ghost')).toMatchObject({ nextSeq: 3, statusHint: 'running' });
      expect(await store.readSummary('ghost')).toBeNull();
      // A target that keeps records is refused, now as before.
      expect(await store.fork('src', 1, 'ghost', testRecord(1, 'again'))).toEqual({ committed: false, reason: 'TARGET_EXISTS' });
      expect(await store.fork('src', 1, 'src', testRecord(1, 'self'))).toEqual({ committed: false, reason: 'TARGET_EXISTS' });
    });

    it('a row deleted by hand after the append found it in the way: the id is simply free', async () => {
      const { store } = await staleRun();
      await sql(`DELETE FROM "${store.schema}".summaries WHERE run_id = 'ghost'`);
      await sql(`DELETE FROM "${store.schema}".runs WHERE run_id = 'ghost'`);
      expect(await store.append('ghost', 0, records(0, 1, 'new'))).toEqual({ committed: true, nextSeq: 1 });
      expect(await store.fork('ghost', 1, 'ghost2', testRecord(1, 'fork'))).toEqual({ committed: true });
    });

    it.each([1, 2, 3, 4, 5])('of 8 pools creating the run (round %i: appends of different lengths and forks) at the same moment, exactly one commits and the log is its own', async (round) => {
      const { store } = await staleRun();
      await store.append('src', 0, records(0, 4, 'src'));
      const others = await Promise.all(Array.from({ length: 7 }, () => open({ schema: store.schema, maxConnections: 1 })));
      const writers = [store, ...others];
      // Writer i: odd rounds all append (i + 1 records); even rounds the odd writers fork instead.
      const forks = (i: number) => round % 2 === 0 && i % 2 === 1;
      const logOf = (i: number) => (forks(i) ? [...records(0, i % 4, 'src'), testRecord(i % 4, `fork-${i}`)] : records(0, i + 1, `writer${i}`));
      const outcomes = await Promise.all(writers.map(async (w, i) => {
        if (forks(i)) return (await w.fork('src', i % 4, 'ghost', testRecord(i % 4, `fork-${i}`), 'running')).committed;
        return w.append('ghost', 0, records(0, i + 1, `writer${i}`), summaryOf(i + 1, `summary-${i}`), 'running');
      }));
      const committed = outcomes.map((o) => (typeof o === 'boolean' ? o : o.committed));
      const winners = committed.flatMap((c, i) => (c ? [i] : []));
      expect(winners).toHaveLength(1);
      const winner = winners[0]!;
      const log = logOf(winner);
      expect(await store.readLog('ghost')).toEqual(concat(log));
      expect((await store.listRuns()).find((r) => r.runId === 'ghost')).toMatchObject({ nextSeq: log.length, statusHint: 'running' });
      expect((await store.readSummary('ghost'))?.summary ?? null).toEqual(forks(winner) ? null : summaryOf(winner + 1, `summary-${winner}`));
      // Every loser is refused as a racing first append (or fork) is: with the winner's next seq
      // and no tail (a refused first record's would be the whole log).
      for (const [i, o] of outcomes.entries()) {
        if (i === winner) continue;
        if (typeof o === 'boolean') expect(o).toBe(false);
        else expect(outcomeOf(o)).toEqual({ committed: false, nextSeq: log.length });
      }
      expect(await store.readRecords('src')).toHaveLength(4);
    });

    it.each(['append', 'fork'] as const)('a %s that takes the row over holds its lock until it commits: a stale writer of the old run at its next_seq waits, then is refused', async (how) => {
      // The interleaving that needs the lock, made deterministic: the take-over is held after its
      // check for records (its delete of the stale summary waits for a row lock this test holds),
      // while a writer of the old run appends at the stale row's next_seq (3). Without the lock that
      // append commits at once, and the take-over then writes records 0.. beside it.
      const { store } = await staleRun();
      await store.append('src', 0, records(0, 2, 'src'));
      const stale = await open({ schema: store.schema, maxConnections: 1 });
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      const waiting = async (marker: string) =>
        (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [`%"${store.schema}".${marker}%`]))[0]!.n;
      const until = async (done: () => Promise<boolean> | boolean) => {
        for (const started = Date.now(); !(await done()); await new Promise((resolve) => setTimeout(resolve, 20))) {
          if (Date.now() - started > 60_000) throw new Error('timed out');
        }
      };
      try {
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM "${store.schema}".summaries WHERE run_id = 'ghost' FOR UPDATE`);
        const taking = how === 'append' ? store.append('ghost', 0, records(0, 2, 'new')) : store.fork('src', 1, 'ghost', testRecord(1, 'fork'));
        await until(async () => (await waiting('summaries')) === 1);
        let staleSettled = false;
        const staleAppend = stale.append('ghost', 3, records(3, 1, 'stale')).finally(() => { staleSettled = true; });
        await until(async () => staleSettled || (await waiting('runs SET next_seq')) === 1);
        const staleWaited = !staleSettled;
        await holder.query('ROLLBACK');
        expect(await taking).toEqual(how === 'append' ? { committed: true, nextSeq: 2 } : { committed: true });
        expect(outcomeOf(await staleAppend)).toEqual({ committed: false, nextSeq: 2, tail: [] });
        const log = how === 'append' ? records(0, 2, 'new') : [...records(0, 1, 'src'), testRecord(1, 'fork')];
        expect(await store.readLog('ghost')).toEqual(concat(log));
        expect(staleWaited).toBe(true);
      } finally {
        await holder.end();
      }
    });
  });

  describe('migrations', () => {
    it('are idempotent: reopening applies nothing and keeps the data', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 2, 'm'));
      const again = await open({ schema: store.schema });
      expect(await again.readLog('run')).toEqual(await store.readLog('run'));
      const versions = await sql<{ version: number }>(`SELECT version FROM "${store.schema}".schema_migrations ORDER BY version`);
      expect(versions.map((v) => v.version)).toEqual(MIGRATIONS.map((m) => m.version));
    });

    it('are safe when several processes open a new schema at once: each version applied once', async () => {
      const schema = freshSchemaName();
      const opened = await Promise.all(Array.from({ length: 6 }, () => open({ schema, maxConnections: 1 })));
      expect(opened).toHaveLength(6);
      const versions = await sql<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
      expect(versions.map((v) => v.version)).toEqual(MIGRATIONS.map((m) => m.version));
    });

    it('apply a later migration once, in order, to an existing schema', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 1, 'v1'));
      const v2: Migration = { version: MIGRATIONS.length + 1, name: 'test column', sql: 'ALTER TABLE {schema}.runs ADD COLUMN note text' };
      const withV2 = [...MIGRATIONS, v2];
      await Promise.all([open({ schema: store.schema, migrations: withV2 }), open({ schema: store.schema, migrations: withV2 })]);
      const versions = await sql<{ version: number }>(`SELECT version FROM "${store.schema}".schema_migrations ORDER BY version`);
      expect(versions.map((v) => v.version)).toEqual(withV2.map((m) => m.version));
      const cols = await sql(`SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'runs' AND column_name = 'note'`, [store.schema]);
      expect(cols).toHaveLength(1);
      expect(await store.readLog('run')).toEqual(records(0, 1, 'v1')[0]);
    });

    it('migration 4 upgrades a migration-3 schema in place: the index of the runs to recover excludes only the terminal hints; rows kept', async () => {
      const old = await open({ migrations: MIGRATIONS.slice(0, 3) });
      await old.append('running', 0, records(0, 2, 'r'), undefined, 'running');
      await old.append('done', 0, records(0, 2, 'd'), undefined, 'completed');
      await old.append('unknown', 0, records(0, 1, 'u'));
      const indexOf = async (schema: string) =>
        (await sql<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'runs_to_recover'`, [schema]))[0]?.indexdef;
      expect(await indexOf(old.schema)).toMatch(/status = 'running'/);
      const store = await open({ schema: old.schema });
      const versions = await sql<{ version: number }>(`SELECT version FROM "${store.schema}".schema_migrations ORDER BY version`);
      expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4]);
      expect(await indexOf(store.schema)).toMatch(/NOT IN|<> ALL/);
      expect(await store.listRunsToRecover()).toEqual(['running', 'unknown']);
      expect((await store.listRuns()).map((r) => [r.runId, r.statusHint])).toEqual([['running', 'running'], ['done', 'completed'], ['unknown', null]]);
      expect(await store.readLog('done')).toEqual(concat(records(0, 2, 'd')));
      // The candidates are read through the partial index (a plan without it is forced off).
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('SET enable_seqscan = off');
        const plan = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT run_id FROM "${store.schema}".runs WHERE status IS NULL OR status NOT IN ('parked', 'completed', 'failed') ORDER BY created_at, run_id`,
        );
        expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/runs_to_recover/);
      } finally {
        await client.end();
      }
    });

    it('the CHECK of migration 3 refuses a hand-written hint that is not a status; a schema without it still lists the run', async () => {
      const store = await open();
      await store.append('run', 0, records(0, 1, 'c'), undefined, 'completed');
      const refused = await sql(`UPDATE "${store.schema}".runs SET status = 'bogus' WHERE run_id = 'run'`).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: '23514' });
      expect(await store.listRunsToRecover()).toEqual([]);
      await sql(`ALTER TABLE "${store.schema}".runs DROP CONSTRAINT runs_status_check`);
      await sql(`UPDATE "${store.schema}".runs SET status = 'bogus' WHERE run_id = 'run'`);
      expect(await store.listRunsToRecover()).toEqual(['run']);
      expect(await store.readStatusHint('run')).toEqual({ statusHint: null, statusHintInvalid: 'bogus', recordCount: 1 });
    });

    it('refuse a schema newer than this library', async () => {
      const store = await open();
      await sql(`INSERT INTO "${store.schema}".schema_migrations (version, name) VALUES (999, 'from the future')`);
      const error = await open({ schema: store.schema }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).storeCode).toBe('SCHEMA_VERSION');
      expect((error as StoreError).message).toMatch(/newer than this library/);
    });

    it("in 'verify' mode refuse an unmigrated schema and accept a migrated one", async () => {
      const schema = freshSchemaName();
      schemas.add(schema);
      const error = await PostgresStore.open({ connectionString: url, schema, migrate: 'verify' }).catch((e: unknown) => e);
      expect((error as StoreError).storeCode).toBe('SCHEMA_VERSION');
      expect(await sql(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema])).toHaveLength(0);
      await open({ schema });
      const verified = await open({ schema, migrate: 'verify' });
      expect(await verified.listRuns()).toEqual([]);
    });

    it('use a schema an administrator created beforehand', async () => {
      const schema = freshSchemaName();
      schemas.add(schema);
      await sql(`CREATE SCHEMA "${schema}"`);
      const store = await open({ schema });
      expect(await store.append('run', 0, records(0, 1, 'x'))).toEqual({ committed: true, nextSeq: 1 });
    });
  });

  describe('configuration', () => {
    it('keeps schemas apart: the same run id in two schemas is two runs', async () => {
      const a = await open();
      const b = await open();
      await a.append('run', 0, records(0, 2, 'a'));
      await b.append('run', 0, records(0, 1, 'b'));
      expect(await a.readLog('run')).toEqual(concat(records(0, 2, 'a')));
      expect(await b.readLog('run')).toEqual(concat(records(0, 1, 'b')));
      expect(a.description).toMatch(new RegExp(`#${a.schema}$`));
      expect(a.description).not.toMatch(/:remit@|password/);
    });

    it('rejects a schema name that is not a plain identifier', async () => {
      const error = await PostgresStore.open({ connectionString: url, schema: 'Robert"; DROP' }).catch((e: unknown) => e);
      expect((error as StoreError).storeCode).toBe('BAD_SCHEMA_NAME');
    });

    it('reports an unreachable server as a typed UNAVAILABLE error after its retry budget', async () => {
      const target = new URL(url);
      target.port = '1';
      const started = Date.now();
      const error = await PostgresStore.open({ connectionString: target.toString(), retryBudgetMs: 300, connectTimeoutMs: 500 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).storeCode).toBe('UNAVAILABLE');
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('reports wrong credentials at once, without retrying', async () => {
      const target = new URL(url);
      target.password = 'wrong-password';
      const error = await PostgresStore.open({ connectionString: target.toString(), retryBudgetMs: 10_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).storeCode).toBe('28P01');
    });

    it('reports use after close as a typed error', async () => {
      const store = await open();
      await store.close();
      await expect(store.readLog('run')).rejects.toMatchObject({ storeCode: 'CLOSED' });
    });
  });
});

describe('postgres store options checked before connecting (no server needed)', () => {
  it.each([
    'not a url at all',
    'host=127.0.0.1 port=1 user=remit password=S3cret dbname=x',
    'mysql://remit@localhost/db',
    'postgres://remit:S3cr#t@localhost:5432/db',
    'postgres://remit:S3cr@/et@localhost:5432/db', // pg would read "et@localhost:5432/db" as the database
  ])('a connection string that is not a postgres:// URL (%s) is BAD_CONNECTION_STRING at once, naming the field, never the password', async (connectionString) => {
    const started = Date.now();
    const error = await PostgresStore.open({ connectionString, retryBudgetMs: 10_000 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5000); // under the 10 s retry budget: not retried
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'BAD_CONNECTION_STRING', field: 'connectionString' });
    expect(JSON.stringify((error as StoreError).toJSON())).not.toMatch(/S3cr/);
  });
});
