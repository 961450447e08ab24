/**
 * Status hints written by someone other than the sequencer (docs/guide.md, "Recovery at start-up"):
 * a hand edit (sqlite3, psql) or another program. On the memory, SQLite and PostgreSQL stores:
 *
 * - a value that is not one of the four statuses counts as unknown: listRunsToRecover lists the
 *   run, recoverAll reads it (and continues it, or corrects the hint), no view passes the value on
 *   as a status;
 * - a terminal hint written over a running run hides it from recoverAll (the index is trusted, for
 *   start-up cost), and scrub and runs report the disagreement, naming the hint and the log's status;
 * - repair corrects the hint from the log, changing no record, and recoverAll then continues the run.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import type { SequencerHooks } from './faults.js';
import { Remit, type RecoverAllOutcome } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { PostgresStore } from './store/postgres.js';
import { SqliteStore } from './store/sqlite.js';
import type { RunStatusHint, Store } from './store/store.js';
import { describePg, dropSchemas, freshSchemaName } from '../test-support/postgres-test-env.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const dir = mkdtempSync(join(tmpdir(), 'remit-hints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** prepare (pure) -> approve (interrupt) -> finish (pure) -> END. */
const approvals = workflow({ name: 'approvals', version: '1', state: z.object({ n: z.number().int() }) })
  .pure('prepare', { run: (s) => ({ n: s.n + 1 }), next: 'approve' })
  .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (s) => s, next: 'finish' })
  .pure('finish', { run: (s) => ({ n: s.n * 2 }), next: END })
  .build();

/** Thrown by a hook after the store committed an append: the process "dies" there. */
class Crash extends Error {}

function remitOn(store: Store, crashAfterAppends = Number.POSITIVE_INFINITY): Remit {
  let left = crashAfterAppends;
  const hooks: SequencerHooks = {
    at(point) {
      if (point === 'append.after' && --left <= 0) throw new Crash('crash after an append');
    },
  };
  return new Remit(store, core, [approvals], hooks, {}, { instanceId: 'replica-1' });
}

function outline(outcomes: RecoverAllOutcome[]) {
  return outcomes.map((o) => ('result' in o ? { runId: o.runId, status: o.result.status } : { runId: o.runId, error: String(o.error) }));
}

interface Target {
  open(): Promise<Store>;
  /** Write a run's stored hint as `value` exactly, past the store's checks (a hand edit). */
  writeHint(store: Store, runId: string, value: string): Promise<void>;
}

/** 'crashed' is running (the process died after its first append); 'waiting' is parked. */
async function twoRuns(store: Store): Promise<void> {
  await expect(remitOn(store, 1).start(approvals, { n: 1 }, { runId: 'crashed' })).rejects.toBeInstanceOf(Crash);
  expect((await remitOn(store).start(approvals, { n: 1 }, { runId: 'waiting' })).status).toBe('parked');
  expect((await remitOn(store).status('crashed')).status).toBe('running');
  expect(await store.listRunsToRecover!()).toEqual(['crashed']);
}

const bytesOf = async (store: Store, runId: string) => (await store.readRecords(runId)).map((r) => r.bytes);

function describeHints(name: string, target: Target): void {
  describe(`status hints written by hand: ${name}`, () => {
    it('a terminal hint over a running run hides it from recoverAll; scrub and runs report it; repair corrects it; recoverAll then continues the run', async () => {
      const store = await target.open();
      try {
        await twoRuns(store);
        const records = await bytesOf(store, 'crashed');
        await target.writeHint(store, 'crashed', 'completed');

        expect(await store.listRunsToRecover!()).toEqual([]);
        expect(await remitOn(store).recoverAll()).toEqual([]);
        expect((await remitOn(store).status('crashed')).status).toBe('running');

        const scrubbed = await remitOn(store).scrub('crashed');
        expect(scrubbed).toMatchObject({ runId: 'crashed', damage: null, logStatus: 'running', statusHint: 'completed', statusHintAgrees: false });
        expect(scrubbed.statusHintInvalid).toBeUndefined();
        expect(await remitOn(store).scrub('waiting')).toMatchObject({ logStatus: 'parked', statusHint: 'parked', statusHintAgrees: true });
        const listed = Object.fromEntries((await remitOn(store).runs()).map((r) => [r.runId, r]));
        expect(listed['crashed']).toMatchObject({ status: 'running', statusHint: 'completed', statusHintAgrees: false });
        expect(listed['waiting']).toMatchObject({ status: 'parked', statusHint: 'parked', statusHintAgrees: true });

        const repaired = await remitOn(store).repair('crashed');
        expect(repaired).toMatchObject({ runId: 'crashed', removedSeq: null, summaryRemoved: false, statusHintCorrected: 'running' });
        expect(repaired.note).toMatch(/status hint completed disagreed with the log and was corrected to running/);
        expect(await bytesOf(store, 'crashed')).toEqual(records);
        expect(await remitOn(store).scrub('crashed')).toMatchObject({ statusHint: 'running', statusHintAgrees: true });
        expect(await remitOn(store).repair('waiting')).toMatchObject({ statusHintCorrected: null, summaryRemoved: false });

        expect(outline(await remitOn(store).recoverAll())).toEqual([{ runId: 'crashed', status: 'parked' }]);
        expect(await store.listRunsToRecover!()).toEqual([]);
        expect(await remitOn(store).scrub('crashed')).toMatchObject({ logStatus: 'parked', statusHint: 'parked', statusHintAgrees: true });
      } finally {
        await store.close();
      }
    });

    it('a hint that is not a status counts as unknown: listed, reported with its value and never as a status; repair corrects it; recoverAll continues the run', async () => {
      const store = await target.open();
      try {
        await twoRuns(store);
        const records = await bytesOf(store, 'crashed');
        await target.writeHint(store, 'crashed', 'bogus');
        await target.writeHint(store, 'waiting', 'PARKED');

        const order = (await store.listRuns()).map((r) => r.runId);
        expect(await store.listRunsToRecover!()).toEqual(order);
        const scrubbed = await remitOn(store).scrub('crashed');
        expect(scrubbed).toMatchObject({ damage: null, logStatus: 'running', statusHint: null, statusHintInvalid: 'bogus', statusHintAgrees: false });
        expect(await remitOn(store).scrub('waiting')).toMatchObject({ logStatus: 'parked', statusHint: null, statusHintInvalid: 'PARKED', statusHintAgrees: false });
        for (const listing of await store.listRuns()) expect(listing.statusHint, listing.runId).toBeNull();
        const listed = Object.fromEntries((await remitOn(store).runs()).map((r) => [r.runId, r]));
        expect(listed['crashed']).toMatchObject({ status: 'running', statusHint: null, statusHintInvalid: 'bogus', statusHintAgrees: false });

        const repaired = await remitOn(store).repair('crashed');
        expect(repaired).toMatchObject({ removedSeq: null, statusHintCorrected: 'running' });
        expect(repaired.note).toMatch(/status hint "bogus" \(not a status\) disagreed with the log/);
        expect(await bytesOf(store, 'crashed')).toEqual(records);
        expect(await remitOn(store).scrub('crashed')).toMatchObject({ statusHint: 'running', statusHintAgrees: true });

        // recoverAll continues the running run, and reads the parked one (its hint counts as
        // unknown) and corrects its hint.
        expect(outline(await remitOn(store).recoverAll())).toEqual([{ runId: 'crashed', status: 'parked' }]);
        expect(await store.listRunsToRecover!()).toEqual([]);
        expect(await remitOn(store).scrub('waiting')).toMatchObject({ statusHint: 'parked', statusHintAgrees: true });
        expect((await store.readStatusHint!('waiting'))?.statusHintInvalid).toBeUndefined();
      } finally {
        await store.close();
      }
    });

    it('without a repair, recoverAll reads a running run whose hint is not a status and continues it', async () => {
      const store = await target.open();
      try {
        await twoRuns(store);
        await target.writeHint(store, 'crashed', 'bogus');
        expect(outline(await remitOn(store).recoverAll())).toEqual([{ runId: 'crashed', status: 'parked' }]);
        expect(await store.listRunsToRecover!()).toEqual([]);
      } finally {
        await store.close();
      }
    });
  });
}

describeHints('memory', {
  open: async () => new MemoryStore(),
  async writeHint(store, runId, value) {
    (store as MemoryStore).backing.runs.get(runId)!.status = value as RunStatusHint;
  },
});

describeHints('sqlite', {
  open: async () => new SqliteStore(join(dir, `hints-${files++}.db`), { synchronous: 'NORMAL' }),
  async writeHint(store, runId, value) {
    const db = new Database((store as SqliteStore).path);
    try {
      expect(db.prepare('UPDATE remit_runs SET status = ? WHERE run_id = ?').run(value, runId).changes).toBe(1);
    } finally {
      db.close();
    }
  },
});

describePg('status hints written by hand on PostgreSQL', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));

  async function sql(text: string, params: unknown[] = []): Promise<number> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, params)).rowCount ?? 0;
    } finally {
      await client.end();
    }
  }

  describeHints('postgres', {
    async open() {
      const schema = freshSchemaName('remit_hint');
      schemas.add(schema);
      return PostgresStore.open({ connectionString: url, schema, maxConnections: 2 });
    },
    async writeHint(store, runId, value) {
      const schema = `"${(store as PostgresStore).schema}"`;
      // The CHECK of migration 3 refuses a value that is not a status: a schema changed by hand.
      if (!['running', 'parked', 'completed', 'failed'].includes(value)) await sql(`ALTER TABLE ${schema}.runs DROP CONSTRAINT IF EXISTS runs_status_check`);
      expect(await sql(`UPDATE ${schema}.runs SET status = $2 WHERE run_id = $1`, [runId, value])).toBe(1);
    },
  });
});
