/**
 * The PostgreSQL store's counterpart of sqlite-stored-types.test.ts. A bytea column holds only
 * bytea (what a hand edit writes into it is converted to bytes), so a record cannot be stored as
 * TEXT or a number here; what can make pg return something else than a Buffer for it is a type
 * parser for bytea (OID 17) that replaced pg's own. The store then reports RECORD_NOT_BYTES naming
 * the run and the seq, never a record read as empty that `repair` would remove. Needs a server
 * (REMIT_PG_URL; test-support/postgres-test-env.ts says how, and when it is skipped).
 */

import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createRemit } from '../remit.js';
import { END, workflow } from '../workflow/workflow.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { PostgresStore } from './postgres.js';

const counter = workflow({ name: 'counter', version: '1', state: z.object({ n: z.number().int(), approved: z.boolean().optional() }) })
  .pure('count', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n >= 3 ? 'approve' : 'count') })
  .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ approved: v.ok }), next: END })
  .build();

/** pg's parsers, but bytea left as the server's text form (a string), as a replaced parser would. */
const byteaAsText = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 17 ? (value: string) => value : pg.types.getTypeParser(oid, format as never)),
};

describePg('postgres: a bytea read as something else than bytes', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));

  it('is RECORD_NOT_BYTES naming the run and the seq, from every view; nothing is removed', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    const store = await PostgresStore.open({ connectionString: url, schema, maxConnections: 2 });
    const remit = await createRemit({ store, workflows: [counter], core: 'reference', groupPureSteps: false });
    const parked = await remit.start(counter, { n: 0 }, { runId: 'r' });
    expect(parked.status).toBe('parked');
    const before = await store.readRecords('r');

    const misread = await PostgresStore.open({ connectionString: url, schema, maxConnections: 2, pool: { types: byteaAsText } });
    const viewer = await createRemit({ store: misread, workflows: [counter], core: 'reference' });
    const expected = { code: 'REMIT_STORE', storeCode: 'RECORD_NOT_BYTES', runId: 'r', seq: 0 };
    const error = await misread.readRecords('r').catch((e: unknown) => e);
    expect(error).toMatchObject({ ...expected, operation: 'readRecords' });
    expect(String((error as Error).message)).toMatch(/type parser for bytea/);
    await expect(misread.readRecords('r', 2)).rejects.toMatchObject({ ...expected, seq: 2 });
    await expect(misread.readRun('r')).rejects.toMatchObject({ ...expected, operation: 'readRun' });
    await expect(viewer.status('r')).rejects.toMatchObject(expected);
    await expect(viewer.inspect('r')).rejects.toMatchObject(expected);
    await expect(viewer.scrub('r')).rejects.toMatchObject(expected);
    await expect(viewer.repair('r')).rejects.toMatchObject(expected);
    // The removal compares bytea in SQL: bytes that are not the stored ones remove nothing.
    expect(await misread.removeLastRecord('r', before.length - 1, new Uint8Array())).toBe(false);

    expect(await store.readRecords('r')).toEqual(before);
    expect((await remit.resume('r', parked.interrupt!.id, { ok: true })).status).toBe('completed');
    await viewer.close();
    await remit.close();
  });
});
