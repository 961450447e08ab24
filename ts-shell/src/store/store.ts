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

export interface Store {
  /** A short name for messages and reports, e.g. "sqlite:/path/remit.db". */
  readonly description: string;

  /** The run's records from `fromSeq` (inclusive) concatenated in seq order; empty if none. */
  readLog(runId: string, fromSeq?: number): Promise<Uint8Array>;

  /** The run's records from `fromSeq` one by one, with store metadata (for inspection). */
  readRecords(runId: string, fromSeq?: number): Promise<StoredRecord[]>;

  /**
   * Append `records` (already encoded, seqs expectedSeq, expectedSeq+1, ...) atomically, only if
   * the run's next seq is `expectedSeq`. All or nothing. Store failures throw a StoreError.
   */
  append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary): Promise<AppendOutcome>;

  /**
   * Optional capability (with `append`'s `summary` argument): the run's last stored recovery
   * summary and its record 0, or null when the run has none. `append(.., summary)` replaces the
   * stored summary in the same transaction as the records, only when the append commits and
   * `summary.recordCount` is at most the run's record count after it. A store without this
   * capability ignores `summary`; the sequencer then reads every record.
   */
  readSummary?(runId: string): Promise<{ summary: RecoverySummary; runStarted: StoredRecord } | null>;

  /**
   * Optional capability (with readSummary): what opening a run reads, in one read (one snapshot):
   * readSummary's answer, and the records from its summary's snapshot seq on, or every record
   * when it is null. A store without it is read with readSummary, then readRecords.
   */
  readRun?(runId: string): Promise<RunRead>;

  /**
   * Atomically create run `targetRunId` holding a byte copy of the source's records
   * 0..prefixRecords-1 followed by `forkRecord` (whose seq is prefixRecords). The source is not
   * touched.
   */
  fork(
    sourceRunId: string,
    prefixRecords: number,
    targetRunId: string,
    forkRecord: Uint8Array,
  ): Promise<ForkOutcome>;

  listRuns(): Promise<RunListing[]>;

  /**
   * Remove record `seq` of the run, only if it is the run's last record and holds exactly
   * `expected` (so a repair never removes a record someone else wrote or changed meanwhile).
   * Resolves true when it was removed, false when it was not (nothing changed). Used only by
   * `Remit.repair` for a damaged last record (docs/guide.md, "Damaged runs"); a store without it
   * cannot be repaired through REMIT. A removal also drops the run's recovery summary.
   */
  removeLastRecord?(runId: string, seq: number, expected: Uint8Array): Promise<boolean>;

  close(): Promise<void>;
}
