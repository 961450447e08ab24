/**
 * The physical limits for the commit and gate suites: what better-sqlite3 itself does per second
 * on the same file settings, with no sequencer in between.
 * - insert-commit: one row per transaction (autocommit), the shape of one durable step.
 * - claim gate: INSERT ... ON CONFLICT DO NOTHING RETURNING, where the first racer's insert returns
 *   a row and every other racer's returns none: the cheapest correct consume-once gate SQL offers.
 * The table mirrors a record store's: (run_id, seq) primary key, record bytes, commit time.
 */

import Database from 'better-sqlite3';

export type SyncMode = 'FULL' | 'NORMAL';

export function openRawDb(file: string, sync: SyncMode): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync}`);
  db.exec(`CREATE TABLE IF NOT EXISTS records (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, committed_at_ms INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)) WITHOUT ROWID`);
  db.exec(`CREATE TABLE IF NOT EXISTS claims (
    run_id TEXT NOT NULL, interrupt_id TEXT NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (run_id, interrupt_id)) WITHOUT ROWID`);
  return db;
}

/** `steps` single-row insert-commits of `record` into run `runId` (seq 0..steps-1). */
export function rawInsertCommitLoop(db: Database.Database, runId: string, steps: number, record: Uint8Array): number {
  const insert = db.prepare('INSERT INTO records (run_id, seq, bytes, committed_at_ms) VALUES (?, ?, ?, ?)');
  for (let seq = 0; seq < steps; seq++) insert.run(runId, seq, record, Date.now());
  return steps;
}

/**
 * Resolve `claims` interrupts, each raced by one connection per racer (in order; better-sqlite3 is
 * synchronous, so racers in one process interleave per statement). Returns how many inserts won;
 * exactly `claims` is the only correct answer.
 */
export function rawClaimGate(racers: Database.Database[], runPrefix: string, claims: number, value: Uint8Array): number {
  const stmts = racers.map((db) =>
    db.prepare('INSERT INTO claims (run_id, interrupt_id, value) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING run_id'),
  );
  let winners = 0;
  for (let c = 0; c < claims; c++) {
    const runId = `${runPrefix}-${c}`;
    for (const stmt of stmts) if (stmt.get(runId, 'approve', value) !== undefined) winners++;
  }
  return winners;
}
