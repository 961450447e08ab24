/**
 * A PostgreSQL store open for the life of a service keeps nothing of the calls made through it.
 * Before, every call raced its wait for a pooled connection against one promise that only close()
 * settles: each race left a reaction on that promise, and the reaction held the caller's async
 * context (the Remit operation and its result). A service's heap grew by about 4 KB a run, and by
 * the whole state at each status(). Needs a server (REMIT_PG_URL).
 */

import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { createRemit, END, workflow } from '../index.js';
import { openPostgresStore } from './postgres.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 10 && ref.deref() !== undefined; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return ref.deref() === undefined;
}

async function heapAfterCollection(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return process.memoryUsage().heapUsed;
}

describePg('postgres: a long-lived store keeps nothing of its calls', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));
  const freshSchema = () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    return schema;
  };

  it('the results of status() and resume() are collected once the caller drops them, the store still open', async () => {
    const wf = workflow({ name: 'kept', version: '1', state: z.object({ blob: z.string() }) })
      .interrupt('ask', { resume: z.boolean(), apply: () => ({}), next: END })
      .build();
    const remit = await createRemit({ store: await openPostgresStore({ connectionString: url, schema: freshSchema() }), workflows: [wf] });
    try {
      // Each result is only ever held by a WeakRef here (no local keeps it).
      const refs: WeakRef<object>[] = [];
      const parked = await remit.start(wf, { blob: 'x'.repeat(10_000) }, { runId: 'one' });
      const interruptId = parked.status === 'parked' ? parked.interrupt.id : 'not parked';
      for (let i = 0; i < 20; i++) await remit.status('one').then((status) => refs.push(new WeakRef(status)));
      await remit.resume('one', interruptId, true).then((done) => refs.push(new WeakRef(done)));
      await remit.status('one');
      const held = (await Promise.all(refs.map((ref) => collected(ref)))).filter((gone) => !gone).length;
      // At most one: a pooled connection keeps the context of the call that opened it. Before,
      // every operation's context held its promise, and so its result: all 21 were held.
      expect(held).toBeLessThanOrEqual(1);
    } finally {
      await remit.close();
    }
  });

  it('20,000 store calls leave the heap where it was (each held a reaction until close() before)', async () => {
    const store = await openPostgresStore({ connectionString: url, schema: freshSchema() });
    try {
      await store.readStatusHint('nope');
      const before = await heapAfterCollection();
      for (let i = 0; i < 20_000; i++) await store.readStatusHint('nope');
      const grown = (await heapAfterCollection()) - before;
      // Before: about 330 bytes a call (6.6 MB); GC noise is far below 2 MB.
      expect(grown).toBeLessThan(2 * 1024 * 1024);
    } finally {
      await store.close();
    }
  });
});
