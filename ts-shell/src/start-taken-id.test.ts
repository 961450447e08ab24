/**
 * `start()` under a run id that is taken costs the same whatever the existing run's length: the
 * refused append at seq 0 is the existence check, and the existing run's records are neither
 * handed back by the built-in stores (no tail for a refused first record: store.ts, AppendOutcome)
 * nor fed to the core (RunSession.catchUp ignores a tail at seq 0, whatever store gives one).
 * Before, a service making `start` idempotent with its own ids (`order-1042`) paid a read of the
 * whole log and a core pass over it for every duplicate request (10,000 rows,
 * 817 KB fed to the core, 54 ms on SQLite). The PostgreSQL half needs a server (REMIT_PG_URL).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describePg, dropSchemas, freshSchemaName } from '../test-support/postgres-test-env.js';
import { createCore } from './core/index.js';
import type { RecoveryCore } from './core/types.js';
import { RunExistsError } from './errors.js';
import { Remit } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { PostgresStore } from './store/postgres.js';
import { SqliteStore } from './store/sqlite.js';
import type { AppendOutcome, Store } from './store/store.js';
import { END, workflow } from './workflow/workflow.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-taken-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const counter = workflow({ name: 'counter', version: '1', state: z.object({ n: z.number().int(), steps: z.number().int() }) })
  .pure('tick', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n < s.steps ? 'tick' : END) })
  .build();

/** Bytes handed to the core, every method and argument counted. */
function countingCore(core: RecoveryCore, fed: { bytes: number }): RecoveryCore {
  return new Proxy(core, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        for (const a of args) if (a instanceof Uint8Array) fed.bytes += a.byteLength;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** `store` reporting the records each refused append hands back; `withTail` gives a tail at seq 0 as a custom store may. */
function watchedStore(store: Store, tails: { records: number }, withTail = false): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key !== 'append') {
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      return async (...args: Parameters<Store['append']>): Promise<AppendOutcome> => {
        const outcome = await target.append(...args);
        if (outcome.committed) return outcome;
        const tail = outcome.tail ?? (withTail && args[1] === 0 ? await target.readRecords(args[0], 0) : undefined);
        tails.records += tail?.length ?? 0;
        return tail === undefined ? outcome : { ...outcome, tail };
      };
    },
  });
}

function describeTakenId(name: string, open: () => Promise<Store>): void {
  describe(`start() under a taken id (${name} store)`, () => {
    it.each(['wasm', 'reference'] as const)('is refused with RunExistsError, reading and feeding nothing of the existing run (%s core)', async (coreKind) => {
      const store = await open();
      try {
        const core = await createCore(coreKind);
        for (const steps of [10, 2_000]) {
          const runId = `taken-${steps}`;
          expect((await new Remit(store, core, [counter]).start(counter, { n: 0, steps }, { runId })).status).toBe('completed');
          const before = await store.readLog(runId);
          for (const withTail of [false, true]) {
            const fed = { bytes: 0 };
            const tails = { records: 0 };
            const remit = new Remit(watchedStore(store, tails, withTail), countingCore(core, fed), [counter]);
            const refused = await remit.start(counter, { n: 0, steps: 1 }, { runId }).catch((e: unknown) => e);
            expect(refused).toBeInstanceOf(RunExistsError);
            expect(refused).toMatchObject({ runId });
            // The built-in store hands back nothing; a store that does (withTail) is not fed to the core.
            expect(tails.records).toBe(withTail ? steps + 2 : 0);
            expect(fed.bytes).toBe(0);
          }
          expect(await store.readLog(runId)).toEqual(before);
        }
      } finally {
        await store.close();
      }
    });
  });
}

let files = 0;
describeTakenId('memory', async () => new MemoryStore());
describeTakenId('SQLite', async () => new SqliteStore(join(dir, `taken-${files++}.db`)));
describePg('start() under a taken id, PostgreSQL (a server)', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));
  describeTakenId('PostgreSQL', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    return PostgresStore.open({ connectionString: url, schema, maxConnections: 2 });
  });
});
