/**
 * The one asynchronous store interface that every backend implements (memory, SQLite, PostgreSQL).
 * A store keeps bytes; it never interprets a record beyond its sequence number. Every write is
 * conditional on the run's next sequence number, so two writers on one run never both succeed.
 */

export interface StoredRecord {
  seq: number;
  bytes: Uint8Array;
  /** Commit time recorded by the store (milliseconds since the epoch); not part of the log bytes. */
  committedAtMs: number;
}

export type AppendOutcome =
  | { committed: true; nextSeq: number }
  /** Another writer appended first (or expectedSeq was stale); nothing was written. */
  | {
      committed: false;
      nextSeq: number;
      /**
       * The records in the way: the run's records from `expectedSeq` on (seqs expectedSeq ..
       * nextSeq - 1, empty when expectedSeq >= nextSeq), read in one snapshot with `nextSeq` after
       * the refusal. Lets a writer that lost a race learn what won without reading the run again.
       * Optional: a store that does not report it leaves it out, and the caller reads the run.
       * The built-in stores leave it out for a refused first record (expectedSeq 0): its one
       * writer, `start()`, needs only to know that the run exists, and the records in the way
       * would be the whole run's log, read and handed back for nothing.
       */
      tail?: StoredRecord[];
    };

export type ForkOutcome =
  | { committed: true }
  /** The target run id already exists, or the source has fewer than `prefixRecords` records. */
  | { committed: false; reason: 'TARGET_EXISTS' | 'SOURCE_TOO_SHORT' };

export interface RunListing {
  runId: string;
  nextSeq: number;
  createdAtMs: number;
  updatedAtMs: number;
  /**
   * The run's status hint, read in the same snapshot as `nextSeq`, from a store that keeps hints
   * (absent from one that does not): one of the four, or null when it is unknown (none stored, or
   * a stored value that is not one of the four: then `statusHintInvalid` holds it).
   */
  statusHint?: RunStatusHint | null;
  /** A stored hint that is not one of the four statuses (a hand edit, another program), as stored; it counts as unknown. */
  statusHintInvalid?: string;
}

/**
 * A durable recovery summary of a run's first `recordCount` records (`byteLength` bytes): the
 * core's summary bytes (docs/core-api.md, "Incremental recovery") and the seq of the head
 * state's snapshot at that point, so a fresh process reads only record 0 and the records from
 * `snapshotSeq` on (docs/architecture.md, decision 9). A store keeps it as opaque bytes.
 */
export interface RecoverySummary {
  recordCount: number;
  byteLength: number;
  snapshotSeq: number;
  summary: Uint8Array;
}

/** What `Store.readRun` returns. */
export interface RunRead {
  found: { summary: RecoverySummary; runStarted: StoredRecord } | null;
  /** From `found.summary.snapshotSeq` on, or from seq 0 when `found` is null. */
  records: StoredRecord[];
}

/**
 * A run's coarse status as the sequencer last wrote it (docs/guide.md, "Recovery at start-up"):
 * what the batch that changed it left the run in. A store keeps it only as a hint for
 * `listRunsToRecover`; the log is the truth.
 */
export type RunStatusHint = 'running' | 'parked' | 'completed' | 'failed';

/**
 * A run's stored status hint as `Store.readStatusHint` reads it, with the run's record count in the
 * same snapshot (the log the hint can be compared with).
 */
export interface StoredStatusHint {
  /** One of the four; null: unknown (none stored, or a stored value that is not a status). */
  statusHint: RunStatusHint | null;
  /** A stored value that is not one of the four statuses, as stored (read as unknown); absent otherwise. */
  statusHintInvalid?: string;
  recordCount: number;
}

/** A status hint found stale by reading the run: what it is at `recordCount` records. */
export interface RunStatusCorrection {
  runId: string;
  recordCount: number;
  runStatus: RunStatusHint;
}

export interface Store {
  /** A short name for messages and reports, e.g. "sqlite:/path/remit.db". */
  readonly description: string;

  /** The run's records from `fromSeq` (inclusive) concatenated in seq order; empty if none. */
  readLog(runId: string, fromSeq?: number): Promise<Uint8Array>;

  /**
   * The run's records from `fromSeq` one by one, with store metadata (for inspection). With
   * `limit` (a whole number from 1), at most that many: the sequencer reads one record so (the
   * claim an AlreadyConsumedError names), not the rest of the log. A store may ignore `limit` and
   * return more; the caller takes what it needs.
   */
  readRecords(runId: string, fromSeq?: number, limit?: number): Promise<StoredRecord[]>;

  /**
   * Append `records` (already encoded, seqs expectedSeq, expectedSeq+1, ...) atomically, only if
   * the run's next seq is `expectedSeq`. All or nothing. Store failures throw a StoreError.
   *
   * `runStatus`: the run's status after these records, passed only by a batch that changes it
   * (the first records, a park, a resume claim, the end of the run). A store with
   * `listRunsToRecover` keeps it in the same transaction as the records (only when the append
   * commits); any other store ignores it.
   */
  append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome>;

  /**
   * Optional capability (with `append`'s `summary` argument): the run's last stored recovery
   * summary and its record 0, or null when the run has none. `append(.., summary)` replaces the
   * stored summary in the same transaction as the records, only when the append commits and
   * `summary.recordCount` is at most the run's record count after it. A store without this
   * capability ignores `summary`; the sequencer then reads every record.
   */
  readSummary?(runId: string): Promise<{ summary: RecoverySummary; runStarted: StoredRecord } | null>;

  /**
   * Optional capability (with `readSummary`): forget the run's stored recovery summary, if any
   * (`repair` of a summary that disagrees with its log; docs/guide.md, "Fresh-process resume").
   * Always safe: a summary is derived from the records, a fresh process without one reads the whole
   * log, and the sequencer's next appends store a new one. Records are never touched.
   */
  deleteSummary?(runId: string): Promise<void>;

  /**
   * Optional capability (with readSummary): what opening a run reads, in one read (one snapshot):
   * readSummary's answer, and the records from its summary's snapshot seq on, or every record
   * when it is null. A store without it is read with readSummary, then readRecords.
   */
  readRun?(runId: string): Promise<RunRead>;

  /**
   * Atomically create run `targetRunId` holding a byte copy of the source's records
   * 0..prefixRecords-1 followed by `forkRecord` (whose seq is prefixRecords). The source is not
   * touched. `runStatus`: the new run's status hint (as for `append`), kept with it.
   */
  fork(
    sourceRunId: string,
    prefixRecords: number,
    targetRunId: string,
    forkRecord: Uint8Array,
    runStatus?: RunStatusHint,
  ): Promise<ForkOutcome>;

  listRuns(): Promise<RunListing[]>;

  /**
   * Optional capability: one page of `listRuns`, for `Remit.runs({ limit, after })`: at most
   * `limit` listings (a whole number from 1), those that follow the run `after` (from the first
   * when it is undefined) in the order runs() pages in: by `createdAtMs`, then by run id as
   * JavaScript compares strings (UTF-16 code units; `a < b`), which is not the order of a SQL
   * `ORDER BY run_id` (UTF-8 bytes, or a language's collation) among the runs created in one
   * millisecond. Null when `after` names no listed run (runs() refuses such a cursor). Its cost
   * follows the page, not the number of stored runs: one indexed lookup of the cursor and an
   * index range of about `limit` listings (plus the runs that share the creation time of the
   * cursor or of the page's last run, read whole to be ordered). A run listed throughout a
   * paging is in exactly one page. Without it, runs() reads the whole listing at every page.
   */
  listRunsPage?(after: string | undefined, limit: number): Promise<RunListing[] | null>;

  /**
   * Optional capability: the ids of the runs that may need recovery, in `listRuns` order: those
   * whose status hint is 'running' or unknown (no hint: written before the store kept hints, or
   * after `removeLastRecord`; or a stored value that is not one of the four statuses, which no
   * REMIT store writes but a hand edit or another program may). Only 'parked', 'completed' and
   * 'failed' leave a run out. Its cost follows the number of such runs, not of all stored runs.
   * `Remit.recoverAll` recovers each listed run and continues only those the core finds running;
   * it does not read the runs left out, so a terminal hint written by hand on a running run hides
   * it until `Remit.scrub` finds the disagreement and `Remit.repair` corrects the hint. What must
   * hold: every run whose log recovers as running and whose hint the sequencer (or a correction)
   * wrote is listed (the list is a superset). Without it, recoverAll reads every run.
   */
  listRunsToRecover?(): Promise<string[]>;

  /**
   * Optional, with `listRunsToRecover`: the run's stored status hint and record count, read in one
   * snapshot (`Remit.scrub` compares the hint with the log), or null when the store holds no run
   * of that id. A stored value that is not one of the four is reported as unknown, with the value.
   */
  readStatusHint?(runId: string): Promise<StoredStatusHint | null>;

  /**
   * Optional, with `listRunsToRecover`: replace each listed run's status hint, only if the run
   * still holds exactly `recordCount` records (the log it was judged from), so a correction never
   * overwrites the hint of an append made meanwhile. All in one transaction (after an upgrade
   * recoverAll corrects every stored run once). Resolves to the number of hints written.
   */
  correctRunStatuses?(corrections: readonly RunStatusCorrection[]): Promise<number>;

  /**
   * Remove record `seq` of the run, only if it is the run's last record and holds exactly
   * `expected` (so a repair never removes a record someone else wrote or changed meanwhile).
   * Resolves true when it was removed, false when it was not (nothing changed). Record 0, the
   * run's first, is never removed (false): a run emptied that way would be neither absent nor
   * startable again, and repair refuses a first record anyway. Used only by
   * `Remit.repair` for a damaged last record (docs/guide.md, "Damaged runs"); a store without it
   * cannot be repaired through REMIT. A removal also drops the run's recovery summary and makes
   * its status hint unknown (the removed record may have been the one that ended or parked it).
   */
  removeLastRecord?(runId: string, seq: number, expected: Uint8Array): Promise<boolean>;

  /**
   * The ids of runs whose records are stored without a listing (only a store whose schema allows
   * it has this: SQLite, where a listing row can be deleted by hand; PostgreSQL's records
   * reference their run row). listRuns, runs() and recoverAll do not see such a run; `scrub --all`
   * reports it and `repair` lists it again (relistRun). Reads every record key: for scrub only.
   */
  listUnlistedRuns?(): Promise<string[]>;

  /**
   * List again a run whose records are stored without a listing: created at its first record's
   * commit time, status hint unknown. Resolves false when the run is listed or has no records
   * (nothing changed).
   */
  relistRun?(runId: string): Promise<boolean>;

  close(): Promise<void>;
}
