/**
 * SQLite's index of runs by creation time (remit_runs_by_creation), which listRunsPage reads: a
 * file of the release before holds none (layout 5, remit_schema 5).
 *
 * - create: false reads such a file as it is (a page then scans and sorts remit_runs), with the
 *   same pages, not a byte of it changed; it is not refused as an older layout.
 * - The first open that may write makes the index (one transaction), pages read through it, the
 *   version stays 5 (releases that do not know the index keep writing the file, and keep the
 *   index up to date), and the next open changes nothing.
 * - Made along with any migration (a layout-5 file of an earlier release without remit_schema); an
 *   index of that name with another definition is made again; the index alone failing to be made
 *   says so (SQLITE_BUSY, naming the index), changing nothing.
 */

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { compareListings } from './common.js';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from './sqlite.js';
import type { RunListing, Store } from './store.js';

const root = mkdtempSync(join(tmpdir(), 'remit-paging-index-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

const RUNS = 'CREATE TABLE remit_runs (run_id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL, status TEXT);';
const RECORDS = 'CREATE TABLE remit_records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, committed_at_ms INTEGER NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;';
const SUMMARIES = 'CREATE TABLE remit_summaries (run_id TEXT PRIMARY KEY, record_count INTEGER NOT NULL, byte_length INTEGER NOT NULL, snapshot_seq INTEGER NOT NULL, summary BLOB NOT NULL) WITHOUT ROWID;';
const RECOVERY_INDEX = "CREATE INDEX remit_runs_to_recover ON remit_runs (created_at_ms, run_id) WHERE status IS NULL OR status NOT IN ('parked', 'completed', 'failed');";
const SCHEMA_ROW = 'CREATE TABLE remit_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL); INSERT INTO remit_schema VALUES (1, 5);';

/** 60 runs in 3 milliseconds, ids UTF-16 and UTF-8 order differently ('\uFFFD' and '\u{1F600}'). */
function insertRuns(db: Database.Database): void {
  const insert = db.prepare('INSERT INTO remit_runs (run_id, created_at_ms, status) VALUES (?, ?, ?)');
  for (let i = 0; i < 60; i++) insert.run(`${i % 2 === 0 ? '\uFFFD' : '\u{1F600}'}${String(60 - i).padStart(2, '0')}`, 1_000 + (i % 3), i % 4 === 0 ? 'parked' : null);
}

/** The layout the release before this one wrote: layout 5, its version in remit_schema, no paging index. */
function previousReleaseFile(withSchemaRow = true, extra = ''): string {
  const path = join(root, `f${files++}.db`);
  const db = new Database(path);
  db.exec(`PRAGMA journal_mode = WAL; ${RUNS} ${RECORDS} ${SUMMARIES} ${RECOVERY_INDEX} ${withSchemaRow ? SCHEMA_ROW : 'PRAGMA user_version = 5;'} ${extra}`);
  insertRuns(db);
  db.close();
  return path;
}

function inspect(path: string): { index: unknown; version: unknown; userVersion: unknown; plan: string } {
  const db = new Database(path, { readonly: true });
  try {
    const plan = db.prepare('EXPLAIN QUERY PLAN SELECT run_id FROM remit_runs r WHERE (r.created_at_ms, r.run_id) > (?, ?) ORDER BY r.created_at_ms, r.run_id LIMIT ?')
      .all(1_000, 'x', 10) as { detail: string }[];
    return {
      index: db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'remit_runs_by_creation'").pluck().get(),
      version: db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'remit_schema'").pluck().get() === 1 ? db.prepare('SELECT version FROM remit_schema').pluck().get() : undefined,
      userVersion: db.pragma('user_version', { simple: true }),
      plan: plan.map((p) => p.detail).join('; '),
    };
  } finally {
    db.close();
  }
}

/** Every page of `limit` joined, checked against the listing in runs()'s order. */
async function expectPages(store: Store, limit: number): Promise<void> {
  const all = (await store.listRuns()).sort((a, b) => a.createdAtMs - b.createdAtMs || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  const joined: RunListing[] = [];
  for (let after: string | undefined; ;) {
    const page = (await store.listRunsPage!(after, limit))!;
    joined.push(...page);
    if (page.length < limit) break;
    after = page[page.length - 1]!.runId;
  }
  expect(all).toHaveLength(60);
  expect(joined).toEqual(all);
}

const INDEX_SQL = 'CREATE INDEX remit_runs_by_creation ON remit_runs (created_at_ms, run_id)';

describe('the paging index in a file of the release before', () => {
  it('create: false reads it as it is, the same pages, not a byte changed; the first open that may write makes the index, the version stays 5', async () => {
    const path = previousReleaseFile();
    const before = digest(path);
    const reader = new SqliteStore(path, { create: false });
    for (const limit of [1, 7, 50]) await expectPages(reader, limit);
    await reader.close();
    expect(digest(path)).toBe(before);
    expect(inspect(path).index).toBeUndefined();
    expect(inspect(path).plan).not.toContain('remit_runs_by_creation');

    const store = new SqliteStore(path);
    expect(inspect(path)).toMatchObject({ index: INDEX_SQL, version: 5, userVersion: 0 });
    expect(inspect(path).plan).toMatch(/SEARCH r USING (COVERING )?INDEX remit_runs_by_creation/);
    for (const limit of [1, 7, 50]) await expectPages(store, limit);
    await store.close();
    expect(SQLITE_SCHEMA_VERSION).toBe(5);

    // Made once: the next open finds the file as this release makes it and writes nothing.
    const made = digest(path);
    await new SqliteStore(path).close();
    expect(digest(path)).toBe(made);
  });

  it('a layout-5 file of an earlier release (no remit_schema) gets it with its migration, in the same open', async () => {
    const path = previousReleaseFile(false);
    const store = new SqliteStore(path);
    await expectPages(store, 9);
    await store.close();
    expect(inspect(path)).toMatchObject({ index: INDEX_SQL, version: 5, userVersion: 5 });
  });

  it('an index of that name with another definition (a hand edit) is made again', async () => {
    const path = previousReleaseFile(true, 'CREATE INDEX remit_runs_by_creation ON remit_runs (run_id);');
    const store = new SqliteStore(path);
    await expectPages(store, 4);
    await store.close();
    expect(inspect(path).index).toBe(INDEX_SQL);
  });

  it('the index that cannot be made yet (the write lock held past the busy timeout): the file is opened as it is, pages read it without the index, the next open makes it', async () => {
    const path = previousReleaseFile();
    const before = digest(path);
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const store = new SqliteStore(path, { busyTimeoutMs: 50 });
      expect((await store.listRunsPage(undefined, 100))!.map((l) => l.runId)).toEqual((await store.listRuns()).sort(compareListings).map((l) => l.runId));
      await store.close();
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(digest(path)).toBe(before);
    await new SqliteStore(path).close();
    expect(inspect(path).index).toBe(INDEX_SQL);
  });
});
