/**
 * runs({ limit, after, status }) through a store's listRunsPage (store.ts): a page costs its page,
 * not a read of the whole listing, with the answers of the path it replaces (the whole listing
 * read and cut by pageOf, which a store without listRunsPage still gets).
 *
 * - Same answers (fast-check, each store): random runs of every status (damaged too), several in
 *   one millisecond, run ids that UTF-16 and UTF-8 order differently ('\uFFFD', '\u{1F600}'),
 *   random page sizes and status filters: each page equals the page of the same store without
 *   listRunsPage, and the pages joined are the whole listing (filtered) in runs()'s order.
 * - A page never reads the whole listing (listRuns), and a cursor naming no listed run is refused
 *   with the OptionInvalidError of before, from one lookup.
 * - With a status filter the limit counts the runs kept: store pages are read until `limit` are
 *   kept or the listing ends, and no page more.
 * - Runs started while a reader pages (docs/guide.md, "Recovery at start-up"): a run listed from the
 *   first page to the last is in exactly one page, and no run is in two; on PostgreSQL with the
 *   starts truly concurrent.
 * - A custom store's listRunsPage that answers something else is StoreError BAD_READ naming it.
 *
 * The tests of what is read and of a custom store's answers fail on the code before listRunsPage
 * (whose runs() read the whole listing at every page); the properties (same answers, paging under
 * starts) hold on both, which is the point of them.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OptionInvalidError, StoreError, TerminalFailure } from './errors.js';
import { createRemit, type ListedStatus, type Remit, type RunsOptions, type RunSummary } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { PostgresStore } from './store/postgres.js';
import { SqliteStore } from './store/sqlite.js';
import type { RunListing, Store } from './store/store.js';
import { testRecord } from './testing/test-record.js';
import { describePg, dropSchemas, freshSchemaName } from '../test-support/postgres-test-env.js';
import { END, workflow } from './workflow/workflow.js';

const root = mkdtempSync(join(tmpdir(), 'remit-runs-pages-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;

const BASE_MS = 1_700_000_000_000;

/** A run's kind picks its status: completed, parked, failed, running (its node threw), damaged (a record that is not REMIT's). */
type Kind = 0 | 1 | 2 | 3 | 4;
const kinds = workflow({ name: 'kinds', version: '1', state: z.object({ n: z.number(), ok: z.boolean().optional() }) })
  .pure('decide', {
    run: (s) => {
      if (s.n === 2) throw new TerminalFailure('REFUSED', 'refused');
      if (s.n === 3) throw new Error('the process went away');
      return {};
    },
    next: (s) => (s.n === 1 ? 'ask' : END),
  })
  .interrupt('ask', { resume: z.boolean(), apply: (_s, ok) => ({ ok }), next: END })
  .build();

/** A store whose clock the test sets: the creation time of the next run (memory, SQLite). */
interface Clocked {
  store: Store;
  setNow(ms: number): void;
}

function memoryStore(): Clocked {
  let now = BASE_MS;
  return { store: new MemoryStore({ clock: () => now }), setNow: (ms) => (now = ms) };
}

function sqliteStore(): Clocked {
  let now = BASE_MS;
  return { store: new SqliteStore(join(root, `r${files++}.db`), { clock: () => now }), setNow: (ms) => (now = ms) };
}

/** The same store without listRunsPage: runs() takes the path of before (the whole listing, pageOf). */
function withoutPaging(store: Store): Store {
  const view = Object.create(store) as Store;
  Object.defineProperty(view, 'listRunsPage', { value: undefined });
  view.close = async () => {};
  return view;
}

async function startRun(remit: Remit, store: Store, runId: string, kind: Kind): Promise<void> {
  if (kind === 4) {
    expect((await store.append(runId, 0, [testRecord(0)])).committed).toBe(true);
    return;
  }
  await remit.start(kinds, { n: kind }, { runId }).catch((error: unknown) => {
    if (kind !== 3) throw error; // kind 3's node throws: the run stays running
  });
}

/** Every page from the first (its options but `after`), each after the last run of the one before, until one is short. */
async function pagesOf(remit: Remit, options: RunsOptions & { limit: number }): Promise<RunSummary[][]> {
  const pages: RunSummary[][] = [];
  for (let after: string | undefined; ;) {
    const page = await remit.runs({ ...options, ...(after === undefined ? {} : { after }) });
    pages.push(page);
    if (page.length < options.limit) return pages;
    after = page[page.length - 1]!.runId;
  }
}

const ID_CHARACTERS = ['a', 'B', 'é', '\uE000', '\uFFFD', '\u{10000}', '\u{1F600}'];
const runSpecs = fc.uniqueArray(
  fc.record({
    runId: fc.array(fc.constantFrom(...ID_CHARACTERS), { minLength: 0, maxLength: 2 }).map((chars) => `r${chars.join('')}`),
    ms: fc.integer({ min: 0, max: 3 }),
    kind: fc.constantFrom<Kind>(0, 1, 2, 3, 4),
  }),
  { selector: (r) => r.runId, maxLength: 14 },
);
const statusFilters = fc.option(fc.uniqueArray(fc.constantFrom<ListedStatus>('running', 'parked', 'completed', 'failed', 'damaged'), { minLength: 1, maxLength: 3 }), { nil: undefined });

/** Each page through listRunsPage equals the page of the path before; joined, they are the listing. */
async function expectSameAnswers(remit: Remit, legacy: Remit, limit: number, status: ListedStatus[] | undefined): Promise<void> {
  const options = { limit, ...(status === undefined ? {} : { status }) };
  const pages = await pagesOf(remit, options);
  const before = await pagesOf(legacy, options);
  expect(pages).toEqual(before);
  const everyRun = await legacy.runs({ limit: 1_000_000 });
  expect(pages.flat()).toEqual(everyRun.filter((r) => status === undefined || status.includes(r.status)));
}

function sameAnswersProperty(open: () => Clocked, numRuns: number) {
  return async () => {
    await fc.assert(fc.asyncProperty(runSpecs, fc.integer({ min: 1, max: 5 }), statusFilters, async (specs, limit, status) => {
      const { store, setNow } = open();
      const remit = await createRemit({ store, workflows: [kinds], core: 'reference' });
      const legacy = await createRemit({ store: withoutPaging(store), workflows: [kinds], core: 'reference' });
      for (const spec of specs) {
        setNow(BASE_MS + spec.ms);
        await startRun(remit, store, spec.runId, spec.kind);
      }
      await expectSameAnswers(remit, legacy, limit, status);
      await remit.close();
    }), { numRuns });
  };
}

/** A view of `store` that counts its listings: listRuns (each the whole listing) and listRunsPage (with its arguments). */
function counting(store: Store): { view: Store; listRuns: number; pages: [string | undefined, number][]; examined: string[] } {
  const counts = { view: Object.create(store) as Store, listRuns: 0, pages: [] as [string | undefined, number][], examined: [] as string[] };
  counts.view.listRuns = () => {
    counts.listRuns += 1;
    return store.listRuns();
  };
  counts.view.listRunsPage = (after, limit) => {
    counts.pages.push([after, limit]);
    return store.listRunsPage!(after, limit);
  };
  counts.view.readRecords = (runId, fromSeq, limit) => {
    counts.examined.push(runId);
    return store.readRecords(runId, fromSeq, limit);
  };
  return counts;
}

describe('runs() through listRunsPage: the answers of before', () => {
  it('memory: each page as before, the pages joined the whole listing (fast-check over runs, page sizes, status filters)', sameAnswersProperty(memoryStore, 40));
  it('SQLite: each page as before, the pages joined the whole listing (fast-check over runs, page sizes, status filters)', sameAnswersProperty(sqliteStore, 25));
});

describe.each([['memory', memoryStore], ['SQLite', sqliteStore]] as const)('runs() on the %s store', (_name, open) => {
  async function fixture(runs: [string, Kind][]) {
    const { store, setNow } = open();
    const counts = counting(store);
    const remit = await createRemit({ store: counts.view, workflows: [kinds], core: 'reference' });
    for (const [i, [runId, kind]] of runs.entries()) {
      setNow(BASE_MS + i);
      await startRun(remit, store, runId, kind);
    }
    counts.pages.length = 0;
    counts.examined.length = 0;
    return { remit, counts, store };
  }

  it('a page reads one page of the listing (listRunsPage), never the whole of it; a cursor naming no listed run is refused as before', async () => {
    const { remit, counts, store } = await fixture(Array.from({ length: 30 }, (_, i) => [`r${String(i).padStart(2, '0')}`, 0]));
    expect((await remit.runs({ limit: 4 })).map((r) => r.runId)).toEqual(['r00', 'r01', 'r02', 'r03']);
    expect((await remit.runs({ limit: 3, after: 'r10' })).map((r) => r.runId)).toEqual(['r11', 'r12', 'r13']);
    expect(counts.pages).toEqual([[undefined, 4], ['r10', 3]]);
    expect(counts.examined).toEqual(['r00', 'r01', 'r02', 'r03', 'r11', 'r12', 'r13']);
    const refused = await remit.runs({ limit: 3, after: 'gone' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OptionInvalidError);
    const before = await createRemit({ store: withoutPaging(store), workflows: [kinds], core: 'reference' });
    const refusedBefore = await before.runs({ limit: 3, after: 'gone' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ field: 'after', message: (refusedBefore as Error).message });
    expect(counts.listRuns).toBe(0);
    // Without a limit every run after the cursor is read anyway: the listing is read whole, as before.
    expect((await remit.runs({ after: 'r27' })).map((r) => r.runId)).toEqual(['r28', 'r29']);
    expect(counts.listRuns).toBe(1);
    await remit.close();
  });

  it('with a status filter, limit counts the runs kept: store pages are read until that many are kept, and no page more', async () => {
    const runs: [string, Kind][] = Array.from({ length: 70 }, (_, i) => [`c${String(i).padStart(2, '0')}`, 0]);
    runs.push(['p1', 1], ['p2', 1], ['p3', 1]);
    const { remit, counts } = await fixture(runs);
    expect((await remit.runs({ status: 'parked', limit: 2 })).map((r) => r.runId)).toEqual(['p1', 'p2']);
    // 32 listings a read at least (FILTERED_PAGE_READ), each after the last of the one before.
    expect(counts.pages).toEqual([[undefined, 32], ['c31', 32], ['c63', 32]]);
    // Read up to the second parked run, not one run more.
    expect(counts.examined).toEqual([...runs.slice(0, 72).map(([runId]) => runId)]);
    counts.pages.length = 0;
    expect((await remit.runs({ status: 'parked', limit: 2, after: 'p2' })).map((r) => r.runId)).toEqual(['p3']);
    expect(counts.pages).toEqual([['p2', 32]]);
    expect((await remit.runs({ status: ['completed'], limit: 40 })).length).toBe(40);
    expect(counts.pages.slice(1)).toEqual([[undefined, 40]]);
    expect(counts.listRuns).toBe(0);
    await remit.close();
  });

  it('runs started while a reader pages: each run listed throughout is in exactly one page, no run in two (fast-check over where they fall)', async () => {
    // Where a run started between two pages falls: behind the cursor's millisecond, in it (an id
    // before or after the cursor's), just after it, or far ahead.
    const starts = fc.array(fc.array(fc.record({ at: fc.constantFrom(-1, 0, 1, 50), id: fc.constantFrom('a', 'm', 'z', '\u{1F600}', '\uFFFD') }), { maxLength: 3 }), { maxLength: 12 });
    await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 15 }), fc.integer({ min: 1, max: 4 }), starts, async (initial, limit, between) => {
      const { store, setNow } = open();
      const remit = await createRemit({ store, workflows: [kinds], core: 'reference' });
      const throughout: string[] = [];
      for (const [i, ms] of initial.entries()) {
        const runId = `m${i}`;
        setNow(BASE_MS + ms);
        await startRun(remit, store, runId, 0);
        throughout.push(runId);
      }
      const seen: string[] = [];
      let started = 0;
      for (let after: string | undefined, page = 0; ; page++) {
        const got = await remit.runs({ limit, ...(after === undefined ? {} : { after }) });
        seen.push(...got.map((r) => r.runId));
        if (got.length < limit) break;
        const cursor = got[got.length - 1]!;
        after = cursor.runId;
        for (const { at, id } of between[page] ?? []) {
          setNow(cursor.createdAtMs + at);
          await startRun(remit, store, `${id}-${started++}`, 0);
        }
      }
      for (const runId of throughout) expect(seen.filter((id) => id === runId)).toEqual([runId]);
      expect(new Set(seen).size).toBe(seen.length);
      await remit.close();
    }), { numRuns: 30 });
  });
});

describe('a custom store\'s listRunsPage that answers something else', () => {
  it('is StoreError BAD_READ naming listRunsPage: not an array, more listings than asked, null for the last run of the page it just gave', async () => {
    const store = new MemoryStore();
    const remit0 = await createRemit({ store, workflows: [kinds], core: 'reference' });
    for (let i = 0; i < 40; i++) await remit0.start(kinds, { n: 1 }, { runId: `r${String(i).padStart(2, '0')}` });
    for (const [answer, problem] of [
      ['x', 'neither null nor an array of run listings'],
      [null, 'null (no such cursor) to a page from the first run'],
      [[{ nextSeq: 1 }], 'neither null nor an array of run listings'],
      [Array.from({ length: 3 }, (_, i) => ({ runId: `r${i}`, nextSeq: 1, createdAtMs: 0, updatedAtMs: 0 })), '3 listings for a page of at most 2'],
    ] as const) {
      const view = Object.create(store) as Store;
      view.listRunsPage = async () => answer as unknown as RunListing[];
      const remit = await createRemit({ store: view, workflows: [kinds], core: 'reference' });
      const error = await remit.runs({ limit: 2 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ operation: 'listRunsPage', storeCode: 'BAD_READ' });
      expect((error as Error).message).toContain(problem);
    }
    // The run a store page ended on is gone at the next read (its listing deleted by hand meanwhile):
    // a filter that keeps none of the first 32 reads on from it.
    const view = Object.create(store) as Store;
    view.listRunsPage = async (after, limit) => (after === undefined ? store.listRunsPage(after, limit) : null);
    const remit = await createRemit({ store: view, workflows: [kinds], core: 'reference' });
    const error = await remit.runs({ limit: 2, status: 'completed' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ operation: 'listRunsPage', storeCode: 'BAD_READ', runId: 'r31' });
    await remit0.close();
  });

  it('is StoreError BAD_READ for a page out of order, repeating a run or holding its cursor (a paging loop would not end)', async () => {
    const store = new MemoryStore();
    const remit0 = await createRemit({ store, workflows: [kinds], core: 'reference' });
    for (let i = 0; i < 6; i++) await remit0.start(kinds, { n: 1 }, { runId: `r${i}` });
    const honest = (await store.listRunsPage!(undefined, 6))!;
    const cases: Array<[string, (after: string | undefined, limit: number) => RunListing[]]> = [
      ['out of order', (_after, limit) => honest.slice(0, limit).reverse()],
      ['repeating a run', (_after, limit) => [honest[0]!, honest[0]!].slice(0, limit)],
      ['holding its cursor', (after, limit) => honest.filter((l) => after === undefined || l.runId >= after).slice(0, limit)],
    ];
    for (const [name, answer] of cases) {
      const view = Object.create(store) as Store;
      view.listRunsPage = async (after, limit) => answer(after, limit);
      const remit = await createRemit({ store: view, workflows: [kinds], core: 'reference' });
      const error = await remit.runs({ limit: 2, after: name === 'holding its cursor' ? 'r1' : undefined }).catch((e: unknown) => e);
      expect(error, name).toMatchObject({ operation: 'listRunsPage', storeCode: 'BAD_READ' });
    }
    await remit0.close();
  });
});

describe('a limit past what any store holds', () => {
  it.each([['memory', memoryStore], ['SQLite', sqliteStore]] as const)('lists every run (%s): runs({ limit: 2 ** 63 }) as the old path did', async (_name, make) => {
    const { store, setNow } = make();
    const remit = await createRemit({ store, workflows: [kinds], core: 'reference' });
    for (let i = 0; i < 5; i++) {
      setNow(BASE_MS + i);
      await remit.start(kinds, { n: 1 }, { runId: `r${i}` });
    }
    for (const limit of [2 ** 53, 2 ** 63, 1e300]) expect((await remit.runs({ limit })).map((r) => r.runId)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    await remit.close();
  });
});

describePg('runs() on PostgreSQL through listRunsPage', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));

  async function open(): Promise<{ store: PostgresStore; schema: string }> {
    const schema = freshSchemaName();
    schemas.add(schema);
    return { store: await PostgresStore.open({ connectionString: url, schema, maxConnections: 3 }), schema };
  }

  /** Creation times set by hand (the server's clock writes them): runs of one millisecond, and a microsecond apart. */
  async function setCreatedAt(schema: string, runs: { runId: string; micros: number }[]): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(
        `UPDATE "${schema}".runs r SET created_at = timestamptz 'epoch' + t.us * interval '1 microsecond'
         FROM unnest($1::text[], $2::bigint[]) AS t(id, us) WHERE r.run_id = t.id`,
        [runs.map((r) => r.runId), runs.map((r) => String(BASE_MS * 1000 + r.micros))],
      );
    } finally {
      await client.end();
    }
  }

  it('each page as before, the pages joined the whole listing (fast-check over runs, page sizes, status filters)', async () => {
    await fc.assert(fc.asyncProperty(runSpecs, fc.integer({ min: 1, max: 5 }), statusFilters, fc.boolean(), async (specs, limit, status, microsApart) => {
      const { store, schema } = await open();
      const remit = await createRemit({ store, workflows: [kinds], core: 'reference' });
      const legacy = await createRemit({ store: withoutPaging(store), workflows: [kinds], core: 'reference' });
      for (const spec of specs) await startRun(remit, store, spec.runId, spec.kind);
      await setCreatedAt(schema, specs.map((s, i) => ({ runId: s.runId, micros: s.ms * 1000 + (microsApart ? i % 2 : 0) })));
      await expectSameAnswers(remit, legacy, limit, status);
      await remit.close();
    }), { numRuns: 12 });
  });

  it('runs started while a reader pages, at once: each run listed throughout is in exactly one page, no run in two', async () => {
    const { store } = await open();
    const remit = await createRemit({ store, workflows: [kinds], core: 'reference' });
    const throughout = Array.from({ length: 40 }, (_, i) => `t${i}`);
    for (const runId of throughout) await startRun(remit, store, runId, 0);
    const seen: string[] = [];
    let paging = true;
    const reader = (async () => {
      for (let after: string | undefined; ;) {
        const got = await remit.runs({ limit: 3, ...(after === undefined ? {} : { after }) });
        seen.push(...got.map((r) => r.runId));
        if (got.length < 3) break;
        after = got[got.length - 1]!.runId;
      }
      paging = false;
    })();
    const starters = [0, 1, 2].map(async (w) => {
      for (let i = 0; paging && i < 20; i++) await startRun(remit, store, `w${w}-${i}`, 0);
    });
    await Promise.all([reader, ...starters]);
    for (const runId of throughout) expect(seen.filter((id) => id === runId)).toEqual([runId]);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeGreaterThan(throughout.length); // some started meanwhile were listed too
    await remit.close();
  });
});

describe('createRemit and a store whose listRunsPage is not a function', () => {
  it('is refused at once, naming it, as for every optional store method', async () => {
    const store = Object.assign(Object.create(new MemoryStore()) as Store, { listRunsPage: 42 });
    const error = await createRemit({ store, workflows: [] }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(OptionInvalidError);
    expect((error as OptionInvalidError).message).toContain('listRunsPage()');
  });
});
