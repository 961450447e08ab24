/**
 * Store.listRunsPage on the three stores: one page of the listing in runs()'s order (creation
 * time, then run id as JavaScript compares strings: UTF-16 code units), after a cursor run, at
 * most `limit` listings, at the cost of the page. SQLite (BINARY) and PostgreSQL (collation "C",
 * or a language's) order run ids otherwise: '\uFFFD' (UTF-8 EF BF BD) before '\u{1F600}' (F0 9F
 * 98 80), where UTF-16 puts the surrogate pair (D83D DE00) first. A store that paged by its own
 * `ORDER BY created_at, run_id` would skip and repeat runs of one millisecond across page
 * boundaries; the property below finds that at once.
 *
 * - pageReads (common.ts), which the SQLite and PostgreSQL stores drive, over store orders of the
 *   test's making (a random order of run ids within a creation time, as any collation might be;
 *   creation times shared by runs far apart in it): every page after every cursor (fast-check).
 * - Property (fast-check, each store): random runs (equal creation times, run ids whose UTF-16
 *   and UTF-8 orders differ, PostgreSQL creation times a microsecond apart), random page sizes:
 *   the pages, walked with their last run as the cursor, joined, are the whole listing in the
 *   order runs() cut pages in before (listRuns sorted as pageOf sorts), each page equal to its
 *   slice; a page after any listed run is the slice after it; a cursor naming no listed run
 *   (unknown, or no run id a store can keep) is null.
 * - Many runs in one millisecond (more than one read of the store's index takes): a cursor in
 *   the middle of them, pages of 1 and 7.
 * - PostgreSQL with a run_id column of a linguistic collation (ICU): the same pages.
 * - PostgreSQL: paging reads runs through its indexes, never a scan of the table (pg_stat).
 */

import Database from 'better-sqlite3';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { readPageNow, type KeyedListing, type ListingScan } from './common.js';
import { MemoryStore } from './memory.js';
import { MIGRATIONS } from './postgres-migrations.js';
import { PostgresStore } from './postgres.js';
import { SqliteStore } from './sqlite.js';
import type { RunListing, RunStatusHint, Store } from './store.js';

const root = mkdtempSync(join(tmpdir(), 'remit-list-page-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;

/** One run as the tests store it: its id, creation time (ms, plus µs on PostgreSQL) and hint. */
interface RunSpec {
  runId: string;
  ms: number;
  micros: number;
  status: RunStatusHint | null;
}

/** A store, and a way to replace its whole listing with `runs` (written by hand, as a restore would). */
interface Harness {
  store: Store;
  put(runs: readonly RunSpec[]): Promise<void>;
}

const BASE_MS = 1_700_000_000_000;

/** runs()'s order before listRunsPage (remit.ts, pageOf): creation time, then run id by UTF-16 code units. */
const runsOrder = (a: RunListing, b: RunListing) => a.createdAtMs - b.createdAtMs || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);

async function ordered(store: Store): Promise<RunListing[]> {
  return (await store.listRuns()).sort(runsOrder);
}

/** Every page from the first, each after the last run of the one before, until one is short. */
async function walk(store: Store, limit: number): Promise<RunListing[][]> {
  const pages: RunListing[][] = [];
  for (let after: string | undefined; ;) {
    const page = await store.listRunsPage!(after, limit);
    expect(page).not.toBeNull();
    pages.push(page!);
    if (page!.length < limit) return pages;
    after = page![page!.length - 1]!.runId;
  }
}

async function expectPagesOf(store: Store, limit: number): Promise<void> {
  const all = await ordered(store);
  const pages = await walk(store, limit);
  pages.forEach((page, i) => expect(page).toEqual(all.slice(i * limit, (i + 1) * limit)));
  expect(pages.flat()).toEqual(all);
}

// Characters whose UTF-16 and UTF-8 orders differ (U+E000..U+FFFF against U+10000 on), cases and
// accents (which a linguistic collation orders otherwise again), and plain ASCII.
const ID_CHARACTERS = ['a', 'b', 'B', 'é', 'z', '~', '\uE000', '\uFFFD', '\uFF21', '\u{10000}', '\u{1F600}', '\u{20000}'];
const runIds = fc.array(fc.constantFrom(...ID_CHARACTERS), { minLength: 1, maxLength: 3 }).map((chars) => chars.join(''));
const runSpec = (micros: boolean) => fc.record({
  runId: runIds,
  ms: fc.integer({ min: 0, max: 4 }),
  micros: micros ? fc.constantFrom(0, 0, 1, 999) : fc.constant(0),
  status: fc.constantFrom<RunStatusHint | null>(null, 'running', 'parked', 'completed', 'failed'),
});
const runSets = (micros: boolean) => fc.uniqueArray(runSpec(micros), { selector: (r) => r.runId, maxLength: 40 });

function memoryHarness(): Harness {
  const store = new MemoryStore();
  return {
    store,
    async put(runs) {
      store.backing.runs.clear();
      for (const r of runs) {
        const createdAtMs = BASE_MS + r.ms;
        store.backing.runs.set(r.runId, { records: [], createdAtMs, updatedAtMs: createdAtMs, ...(r.status === null ? {} : { status: r.status }) });
      }
    },
  };
}

function sqliteHarness(): Harness {
  const path = join(root, `s${files++}.db`);
  const store = new SqliteStore(path);
  return {
    store,
    async put(runs) {
      const db = new Database(path);
      try {
        db.transaction(() => {
          db.exec('DELETE FROM remit_runs');
          const insert = db.prepare('INSERT INTO remit_runs (run_id, created_at_ms, status) VALUES (?, ?, ?)');
          for (const r of runs) insert.run(r.runId, BASE_MS + r.ms, r.status);
        })();
      } finally {
        db.close();
      }
    },
  };
}

/** PostgreSQL rows by hand: created_at to the microsecond, so runs a microsecond apart share no createdAtMs. */
async function putPostgres(url: string, schema: string, runs: readonly RunSpec[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`DELETE FROM "${schema}".runs`);
    await client.query(
      `INSERT INTO "${schema}".runs (run_id, next_seq, created_at, updated_at, status)
       SELECT id, 1, timestamptz 'epoch' + us * interval '1 microsecond', timestamptz 'epoch' + us * interval '1 microsecond', status
       FROM unnest($1::text[], $2::bigint[], $3::text[]) AS t(id, us, status)`,
      [runs.map((r) => r.runId), runs.map((r) => String((BASE_MS + r.ms) * 1000 + r.micros)), runs.map((r) => r.status)],
    );
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
}

function pagingProperty(open: () => Harness | Promise<Harness>, micros: boolean, numRuns: number) {
  return async () => {
    const { store, put } = await open();
    await fc.assert(fc.asyncProperty(runSets(micros), fc.integer({ min: 1, max: 6 }), fc.nat(), async (runs, limit, pick) => {
      await put(runs);
      await expectPagesOf(store, limit);
      const all = await ordered(store);
      if (all.length > 0) {
        const at = pick % all.length;
        expect(await store.listRunsPage!(all[at]!.runId, limit)).toEqual(all.slice(at + 1, at + 1 + limit));
      }
      expect(await store.listRunsPage!('not listed', limit)).toBeNull();
    }), { numRuns });
    await store.close();
  };
}

/** Runs of one millisecond whose ids UTF-16 and UTF-8 order differently: odd ones astral, even ones in U+E000..U+FFFF. */
const oneMillisecond = (count: number): RunSpec[] =>
  Array.from({ length: count }, (_, i) => ({ runId: `${i % 2 === 0 ? '\uFFFD' : '\u{1F600}'}${String(count - i).padStart(2, '0')}`, ms: 2, micros: 0, status: null }));
const around: RunSpec[] = [
  { runId: 'before', ms: 1, micros: 0, status: 'parked' },
  { runId: 'after', ms: 3, micros: 0, status: 'completed' },
];

async function examples(harness: Harness): Promise<void> {
  const { store, put } = harness;
  // The pair that tells the two orders apart, then a run of the next millisecond.
  await put([{ runId: 'a\uFFFD', ms: 0, micros: 0, status: null }, { runId: 'a\u{1F600}', ms: 0, micros: 0, status: null }, { runId: 'b', ms: 1, micros: 0, status: null }]);
  expect((await walk(store, 1)).flat().map((l) => l.runId)).toEqual(['a\u{1F600}', 'a\uFFFD', 'b']);
  expect((await store.listRunsPage!('a\u{1F600}', 1))?.map((l) => l.runId)).toEqual(['a\uFFFD']);
  // More runs in one millisecond than one read of the index takes, a cursor among them.
  await put([...around, ...oneMillisecond(50)]);
  for (const limit of [1, 7, 60]) await expectPagesOf(store, limit);
  const all = await ordered(store);
  expect(await store.listRunsPage!(all[25]!.runId, 3)).toEqual(all.slice(26, 29));
  expect(await store.listRunsPage!(all[50]!.runId, 3)).toEqual(all.slice(51));
  // No store can hold these ids (a NUL, a lone surrogate, nothing): no run is after them.
  for (const after of ['x\u0000', '\uD800', '']) expect(await store.listRunsPage!(after, 3)).toBeNull();
  // SQLite reads a lone surrogate as U+FFFD: a run of that name is not taken for its cursor.
  await put([{ runId: '\uFFFD', ms: 0, micros: 0, status: null }]);
  expect(await store.listRunsPage!('\uD800', 3)).toBeNull();
  await expect(store.listRunsPage!(undefined, 0)).rejects.toMatchObject({ storeCode: 'BAD_LIMIT', field: 'limit' });
  await expect(store.listRunsPage!(7 as unknown as string, 2)).rejects.toMatchObject({ storeCode: 'BAD_RUN_ID', field: 'after' });
  await store.close();
  await expect(store.listRunsPage!(undefined, 2)).rejects.toBeInstanceOf(StoreError);
  await expect(store.listRunsPage!(undefined, 2)).rejects.toMatchObject({ storeCode: 'CLOSED' });
}

/**
 * pageReads over a store order of the test's making: creation time, then a random rank of each run
 * id (any collation), the listing's index read as ranges next to a key.
 */
function indexedPage(listings: readonly RunListing[], rank: ReadonlyMap<string, number>, after: RunListing | undefined, limit: number): RunListing[] {
  const key = (l: RunListing) => [l.createdAtMs, rank.get(l.runId)!] as const;
  const storeOrder = (a: readonly [number, number], b: readonly [number, number]) => a[0] - b[0] || a[1] - b[1];
  const index: KeyedListing<readonly [number, number]>[] = listings.map((listing) => ({ listing, key: key(listing) })).sort((a, b) => storeOrder(a.key, b.key));
  const scan = ({ direction, from, count }: ListingScan<readonly [number, number]>) => {
    if (from === undefined) return index.slice(0, count);
    return direction === 'after'
      ? index.filter((e) => storeOrder(e.key, from) > 0).slice(0, count)
      : index.filter((e) => storeOrder(e.key, from) < 0).reverse().slice(0, count);
  };
  return readPageNow(after && { listing: after, key: key(after) }, limit, scan);
}

describe('pageReads: exact for any store order of run ids along which creation times never decrease', () => {
  it('pages after every cursor are the slices of runs()\'s order, creation times shared by runs of different keys too (fast-check)', () => {
    const listings = fc.uniqueArray(fc.record({ runId: runIds, createdAtMs: fc.constantFrom(0, 1, 1.5, 2) }), { selector: (l) => l.runId, maxLength: 60 })
      .map((ls) => ls.map((l): RunListing => ({ ...l, nextSeq: 1, updatedAtMs: l.createdAtMs })));
    fc.assert(fc.property(listings, fc.integer({ min: 1, max: 9 }), fc.infiniteStream(fc.double({ min: 0, max: 1, noNaN: true })), (ls, limit, ranks) => {
      // A total order, as a store's index is (its key unique): ties of the random values broken by position.
      const values = ls.map((l, i) => [l.runId, ranks.next().value as number, i] as const).sort((a, b) => a[1] - b[1] || a[2] - b[2]);
      const rank = new Map(values.map(([runId], position) => [runId, position]));
      const all = [...ls].sort(runsOrder);
      expect(indexedPage(ls, rank, undefined, limit)).toEqual(all.slice(0, limit));
      all.forEach((cursor, i) => expect(indexedPage(ls, rank, cursor, limit)).toEqual(all.slice(i + 1, i + 1 + limit)));
    }), { numRuns: 300 });
  });
});

describe('listRunsPage: pages in runs()\'s order, whatever order the store compares run ids in', () => {
  it('memory: the pages joined are the listing in runs()\'s order (fast-check)', pagingProperty(memoryHarness, false, 150));
  it('SQLite: the pages joined are the listing in runs()\'s order (fast-check)', pagingProperty(sqliteHarness, false, 100));
  it('memory: a run id pair UTF-8 orders otherwise, a millisecond of 50 runs, cursors no store holds', () => examples(memoryHarness()));
  it('SQLite: a run id pair UTF-8 orders otherwise, a millisecond of 50 runs, cursors no store holds', () => examples(sqliteHarness()));
});

describePg('listRunsPage on PostgreSQL', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));

  async function postgresHarness(): Promise<Harness & { schema: string }> {
    const schema = freshSchemaName();
    schemas.add(schema);
    const store = await PostgresStore.open({ connectionString: url, schema, maxConnections: 2 });
    return { store, schema, put: (runs) => putPostgres(url, schema, runs) };
  }

  async function sql<R extends pg.QueryResultRow>(text: string): Promise<R[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(text)).rows;
    } finally {
      await client.end();
    }
  }

  it('the database compares run ids in byte order here (collation "C"), the order that differs from runs()\'s', async () => {
    const [row] = await sql<{ lt: boolean }>(`SELECT '\uFFFD'::text < '\u{1F600}'::text AS lt`);
    expect(row!.lt).toBe(true);
  });

  it('the pages joined are the listing in runs()\'s order, creation times a microsecond apart too (fast-check)', pagingProperty(postgresHarness, true, 40));

  it('a run id pair UTF-8 orders otherwise, a millisecond of 50 runs, cursors no store holds', async () => examples(await postgresHarness()));

  it('in a session whose DateStyle and TimeZone print a zone abbreviation that reads back as another zone: the same pages (fast-check)', async () => {
    // created_at::text there reads "... CST", which PostgreSQL up to 17 reads back as US Central
    // time: a key made of it would skip or repeat runs. The store's key has one form in UTC.
    const harness = await postgresHarness();
    const options = encodeURIComponent('-c DateStyle=SQL,DMY -c TimeZone=Asia/Shanghai');
    const connectionString = `${url}${url.includes('?') ? '&' : '?'}options=${options}`;
    const store = await PostgresStore.open({ connectionString, schema: harness.schema, maxConnections: 2 });
    const client = new pg.Client({ connectionString });
    await client.connect();
    const shown = (await client.query<{ t: string }>('SELECT now()::text AS t')).rows[0]!.t;
    await client.end();
    expect(shown).toMatch(/CST$/);
    await pagingProperty(async () => ({ ...harness, store }), true, 15)();
    await harness.store.close();
  });

  it('with a run_id column of a linguistic collation (ICU und): the same pages (fast-check)', async () => {
    const harness = await postgresHarness();
    // The run id column as a schema made with another default collation would have it.
    await sql(`ALTER TABLE "${harness.schema}".records DROP CONSTRAINT records_run_id_fkey;
      ALTER TABLE "${harness.schema}".runs ALTER COLUMN run_id TYPE text COLLATE "und-x-icu"`);
    const [row] = await sql<{ lt: boolean }>(`SELECT 'B'::text < 'a'::text COLLATE "und-x-icu" AS lt`);
    expect(row!.lt).toBe(false); // 'B' < 'a' in UTF-16, not in this collation
    await pagingProperty(() => harness, false, 25)();
  });

  it('needs no migration: migration 1\'s index runs_created_at (created_at, run_id) serves; paging never scans runs (pg_stat)', async () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual([1, 2, 3, 4]);
    const { store, schema, put } = await postgresHarness();
    await put(Array.from({ length: 3000 }, (_, i) => ({ runId: `r${i}`, ms: i % 7, micros: i % 3, status: null })));
    await sql(`ANALYZE "${schema}".runs`);
    const stats = async () => (await sql<{ seq_scan: string; created: string }>(
      `SELECT t.seq_scan::text, i.idx_scan::text AS created FROM pg_stat_user_tables t JOIN pg_stat_user_indexes i ON i.relid = t.relid
       WHERE t.schemaname = '${schema}' AND t.relname = 'runs' AND i.indexrelname = 'runs_created_at'`))[0]!;
    const all = await ordered(store); // listRuns reads the whole table (counted before paging starts)
    await store.close();
    // A backend reports its counts when it ends: wait for those of the writes and the listing.
    const before = await settled(stats);
    const pager = await PostgresStore.open({ connectionString: url, schema, maxConnections: 1 });
    expect(await pager.listRunsPage(undefined, 50)).toEqual(all.slice(0, 50));
    expect(await pager.listRunsPage(all[1500]!.runId, 50)).toEqual(all.slice(1501, 1551));
    await pager.close();
    const paged = await settled(stats);
    expect(paged.seq_scan).toBe(before.seq_scan);
    expect(Number(paged.created)).toBeGreaterThan(Number(before.created));
  });
});

/** The statistics once they have stopped changing (ended backends report theirs a moment later). */
async function settled<T>(read: () => Promise<T>): Promise<T> {
  let last = await read();
  for (let same = 0; same < 3;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = await read();
    same = JSON.stringify(now) === JSON.stringify(last) ? same + 1 : 0;
    last = now;
  }
  return last;
}
