/**
 * A PostgreSQL run row whose next_seq is ahead of the run's records (the last record deleted by
 * hand, or next_seq raised): before, every append of the run was refused as a lost race for ever
 * (ConflictError naming records that do not exist) and `repair` said "another process wrote to the
 * run meanwhile: repair it again" at every call. Now the append is
 * StoreError INCONSISTENT naming the run, both counts and the fix, `repair` says the listing
 * contradicts the records, and the fix docs/postgres.md gives brings the run back. Nothing is
 * written by any of it. Needs a server (REMIT_PG_URL).
 */

import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { describePg, dropSchemas, freshSchemaName, runSql } from '../../test-support/postgres-test-env.js';
import { createCore } from '../core/index.js';
import { StoreError } from '../errors.js';
import { Remit } from '../remit.js';
import { END, workflow } from '../workflow/workflow.js';
import { PostgresStore } from './postgres.js';

const asks = workflow({ name: 'asks', version: '1', state: z.object({ n: z.number().int() }) })
  .pure('count', { run: (s) => ({ n: s.n + 1 }), next: 'ask' })
  .interrupt('ask', { resume: z.number().int(), apply: (s, v) => ({ n: s.n + v }), next: END })
  .build();

describePg('postgres: a run row ahead of its records', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));

  const sql = (text: string) => runSql(url, text);

  it.each([
    ['the last record deleted by hand', (s: string) => `DELETE FROM ${s}.records WHERE run_id = 'r' AND seq = 2`],
    ['next_seq raised by hand', (s: string) => `UPDATE ${s}.runs SET next_seq = next_seq + 2 WHERE run_id = 'r'`],
  ])('%s: appends are INCONSISTENT, repair says why, and the documented fix brings the run back', async (_what, edit) => {
    const schema = freshSchemaName();
    schemas.add(schema);
    const store = await PostgresStore.open({ connectionString: url, schema, maxConnections: 2 });
    try {
      const remit = new Remit(store, await createCore('wasm'), [asks]);
      const parked = await remit.start(asks, { n: 0 }, { runId: 'r' });
      expect(parked).toMatchObject({ status: 'parked', headSeq: 2 });
      await sql(edit(schema));
      const before = await store.readLog('r');

      const fresh = new Remit(store, await createCore('wasm'), [asks]);
      const refused = await fresh.continueRun('r').then(() => fresh.resume('r', parked.interrupt!.id, 1)).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(StoreError);
      expect(refused).toMatchObject({ storeCode: 'INCONSISTENT', runId: 'r', operation: 'append' });
      expect(String((refused as Error).cause)).toMatch(/the run row counts \d+ records \(next_seq\) but its records from seq \d+ on are none: the tables were edited by hand/);

      const repaired = await fresh.repair('r');
      expect(repaired.note).toMatch(/its listing contradicts its records, which only a hand edit makes/);
      expect(repaired.note).not.toMatch(/repair it again/);
      expect(await store.readLog('r')).toEqual(before);

      // The fix docs/postgres.md gives (INCONSISTENT): the run row's count from its records.
      await sql(`UPDATE ${schema}.runs SET next_seq = (SELECT coalesce(max(seq) + 1, 0) FROM ${schema}.records WHERE run_id = runs.run_id) WHERE run_id = 'r'`);
      const again = await fresh.continueRun('r');
      expect(again.status).toBe('parked');
      expect((await fresh.resume('r', again.interrupt!.id, 5)).status).toBe('completed');
      expect((await fresh.scrub('r')).damage).toBeNull();
    } finally {
      await store.close();
    }
  });
});
