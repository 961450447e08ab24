/**
 * The PostgreSQL store, through `pg` (node-postgres) with a connection pool.
 *
 * Tables (created and migrated by the library, postgres-migrations.ts), in a configurable schema:
 *   runs    (run_id PK, next_seq, created_at, updated_at, status) one row per run
 *   records (run_id, seq) PK, bytes, append_token, committed_at   one row per record
 *
 * Conditional append is ONE statement. A run's first append inserts the run row (ON CONFLICT DO
 * NOTHING: a second creator finds it and writes nothing) feeding the insert of the batch's rows.
 * Every later append inserts the batch's first record, `ON CONFLICT (run_id, seq) DO NOTHING`, only
 * while `next_seq` is the expected seq, then the rest, and last moves `next_seq`: the records'
 * primary key is the gate. Of k writers at one seq the losers wait on the winner's key
 * entry and all wake at its commit, writing nothing, as k raw `INSERT ... ON CONFLICT` do, instead
 * of queueing one by one on the run row's lock (statements(), insertNext, says how each part
 * works). A single statement is atomic: a batch is stored whole or not at all.
 * Behind it, in the same round trip (pipeline mode), a read of the records in the way, which a
 * refused append reports (AppendOutcome.tail; see appendOnce).
 *
 * An append that changes the run's status hint sets `runs.status` in that same compare-and-set.
 * `listRunsToRecover` reads the partial index `runs_to_recover` (migration 4): every run whose
 * hint is not parked, completed or failed. `listRunsPage` reads ranges of the index `runs_created_at`
 * (created_at, run_id), which migration 1 made: paging needs no migration.
 *
 * Fork is one transaction: claim the target's run row (a run there already → TARGET_EXISTS), check
 * the source is long enough, copy rows 0..prefix-1 byte for byte, insert the fork record.
 *
 * A run row that keeps no record (records removed by hand: NO_RECORDS) does not keep its id taken:
 * a first append or a fork into it finds the row in the way and then, in one transaction, locks
 * the row, checks in a statement of its own that it still keeps no record, and takes it over,
 * dropping its recovery summary and status hint, as SQLite and the memory store replace such a
 * listing (replaceListing says why two creators racing for the id never both commit).
 *
 * Faults (docs/postgres.md, "Ambiguous commits"): when a connection breaks while a write is in
 * flight, the write may or may not have committed. The store then (1) makes sure the old server
 * backend is gone (pg_terminate_backend on it, then waits until it has left pg_stat_activity, so
 * it can no longer commit), (2) looks for rows carrying this call's `append_token`. Found: report
 * committed. Other rows at that seq: report not committed. Nothing: the write definitely did not
 * commit, and it is retried, still conditional on the same seq, so it can never land twice.
 * Tokens, not byte comparison, decide: two resumers sending the same value write identical bytes,
 * and only one of them may be told it committed.
 */

import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { PoolClient, PoolConfig, QueryResultRow } from 'pg';
import { describeThrown, OptionInvalidError, StoreError, type ErrorSubject } from '../errors.js';
import { allKeysOf, notKnown, unknownKey } from '../known-keys.js';
import {
  checkBatchSeqs, checkCorrections, checkPageArguments, checkReadArguments, checkRunStatus, checkStoredRunId, concatRecords, isStorableRunId, readPage,
  RECOVERY_CANDIDATE_SQL, statusHintOf, storedRecordBytes, storedSummaryBytes, type KeyedListing, type ListingScan, type NotBytes,
} from './common.js';
import { internalTimers, sleepInternally } from '../timers.js';
import { formatTarget, parseConnectionString, ParserMissing, type ConnectionTarget } from './postgres-connection-string.js';
import { backoffMs, classifyConnectFailure, classifyStatementFailure, errorCode, isRetryable, type FailureKind } from './postgres-failures.js';
import { migrateSchema, quoteSchema, SCHEMA_NAME_PATTERN, SchemaVersionError, type Migration } from './postgres-migrations.js';
import type {
  AppendOutcome, ForkOutcome, RecoverySummary, RunListing, RunRead, RunStatusCorrection, RunStatusHint, Store, StoredRecord, StoredStatusHint,
} from './store.js';

/**
 * node-postgres Pool settings, passed to `new pg.Pool` as they are (see pg's PoolConfig). Typed
 * loosely here so that a TypeScript service needs no @types/pg to use this store.
 */
export interface PostgresPoolSettings {
  host?: string;
  port?: number;
  user?: string;
  /** A string, or a function giving one for each new connection (a rotating IAM token): pg's own. */
  password?: string | (() => string | Promise<string>);
  database?: string;
  ssl?: unknown;
  max?: number;
  connectionTimeoutMillis?: number;
  application_name?: string;
  [setting: string]: unknown;
}

export interface PostgresStoreOptions {
  /**
   * e.g. postgres://user:password@host:5432/db, postgres://user@/db?host=/socket/folder, or a socket
   * folder: any postgres://, postgresql:// or socket: URL pg reads (docs/postgres.md, "Connecting").
   */
  connectionString?: string;
  /** Further pg.Pool settings (host, port, user, ssl, ...); `connectionString` wins over its own. */
  pool?: PostgresPoolSettings;
  /** Schema holding the tables (default "remit"); lower-case letters, digits, underscore, not starting with pg_. */
  schema?: string;
  /*
   * Every timeout below is a whole number of milliseconds from 0 to 2 147 483 647 (MAX_TIMEOUT_MS);
   * any other value (a string such as '10s', NaN, a fraction, a negative) is refused by `open`
   * with OptionInvalidError before it connects (docs/postgres.md, "Timeouts and retries").
   */
  /** Server-side statement_timeout for every statement (default 10000 ms; 0 = none). */
  statementTimeoutMs?: number;
  /**
   * Client-side limit for a reply, for networks that go silent (default statementTimeoutMs + 5000,
   * at most MAX_TIMEOUT_MS; 0 when statementTimeoutMs is 0). 0 = none.
   */
  clientTimeoutMs?: number;
  /** How long to wait for a new connection, or for a free one of a full pool (default 5000 ms; 0 = no limit: pg's own meaning). */
  connectTimeoutMs?: number;
  /** Pool size: a whole number from 1 (default 10). */
  maxConnections?: number;
  /**
   * Time one call may spend on transparent retries and on resolving an ambiguous commit (default
   * 15000 ms). 0: no retry; every failure is reported at once.
   */
  retryBudgetMs?: number;
  /**
   * After a connection broke mid-write: how long to keep trying to learn whether the write
   * committed before reporting OUTCOME_UNKNOWN (default 15000 ms). Independent of retryBudgetMs.
   */
  resolveTimeoutMs?: number;
  /** 'apply' (default): create/migrate the schema. 'verify': only check it is up to date. Nothing else. */
  migrate?: 'apply' | 'verify';
  /** Replaces the built-in migration list (tests only): { version, name, sql } numbered 1, 2, 3, ... */
  migrations?: readonly Migration[];
  /** The connection's application_name (default "remit"): a string without NUL. */
  applicationName?: string;
  /** Test hook: awaited after a connection broke mid-write, before the outcome is resolved. */
  onAmbiguousWrite?: (info: { operation: 'append' | 'fork'; runId: string; seq: number }) => Promise<void> | void;
}

const POSTGRES_STORE_OPTIONS = allKeysOf<PostgresStoreOptions>()(
  'connectionString', 'pool', 'schema', 'statementTimeoutMs', 'clientTimeoutMs', 'connectTimeoutMs', 'maxConnections', 'retryBudgetMs',
  'resolveTimeoutMs', 'migrate', 'migrations', 'applicationName', 'onAmbiguousWrite',
);

/**
 * The longest timeout the store can use: PostgreSQL's statement_timeout is a 32-bit count of
 * milliseconds, and so is a Node timer (pg's query_timeout and connectionTimeoutMillis are
 * setTimeout delays; a longer delay fires after 1 ms).
 */
const MAX_TIMEOUT_MS = 0x7fff_ffff;

function isWholeNumber(value: unknown, min: number, max: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}

function checkMs(option: string, value: unknown, zero: string, fallback: string): void {
  if (value !== undefined && !isWholeNumber(value, 0, MAX_TIMEOUT_MS)) {
    throw new OptionInvalidError(option, value, `must be a whole number of milliseconds from 0 (${zero}) to ${MAX_TIMEOUT_MS} (default ${fallback})`);
  }
}

function checkPoolSize(option: string, value: unknown): void {
  if (value !== undefined && !isWholeNumber(value, 1, Number.MAX_SAFE_INTEGER)) {
    throw new OptionInvalidError(option, value, 'must be a whole number of connections from 1 (default 10)');
  }
}

function checkApplicationName(option: string, value: unknown): void {
  if (value !== undefined && (typeof value !== 'string' || value.includes('\u0000'))) {
    throw new OptionInvalidError(option, value, 'must be a string without NUL characters (default "remit")');
  }
}

/**
 * Every option value `open` cannot use is refused here, with OptionInvalidError naming the option,
 * the value and what is allowed, before anything connects: a value taken as it is would otherwise
 * be a silent change (a misspelt migrate mode ran the migrations; a timeout of '10s' became NaN
 * and dropped the timeouts; a retry budget of 'x' retried forever) or a misleading failure later
 * (a connect timeout of 'x' reported as the server not answering). The pool settings the store
 * reads itself (max, connectionTimeoutMillis, application_name) are held to the same rules; the
 * others go to pg.Pool as they are. `schema` and `connectionString` keep their documented
 * StoreErrors (BAD_SCHEMA_NAME, BAD_CONNECTION_STRING), checked next, for a value of any type.
 */
function checkOptionValues(options: PostgresStoreOptions): void {
  const o = options as Record<string, unknown>;
  const pool = o['pool'];
  if (pool !== undefined && (pool === null || typeof pool !== 'object' || Array.isArray(pool))) {
    throw new OptionInvalidError('pool', pool, 'must be an object of pg.Pool settings ({ host, port, user, ssl, ... })');
  }
  checkMs('statementTimeoutMs', o['statementTimeoutMs'], 'no server-side limit', '10000');
  checkMs('clientTimeoutMs', o['clientTimeoutMs'], 'no client-side limit', 'statementTimeoutMs + 5000');
  checkMs('connectTimeoutMs', o['connectTimeoutMs'], 'no limit', '5000');
  checkMs('retryBudgetMs', o['retryBudgetMs'], 'no retry', '15000');
  checkMs('resolveTimeoutMs', o['resolveTimeoutMs'], 'one look, no waiting', '15000');
  checkPoolSize('maxConnections', o['maxConnections']);
  const migrate = o['migrate'];
  if (migrate !== undefined && migrate !== 'apply' && migrate !== 'verify') {
    throw new OptionInvalidError('migrate', migrate, 'must be "apply" (create or migrate the schema, the default) or "verify" (only check that it is up to date)');
  }
  const migrations = o['migrations'];
  if (migrations !== undefined) {
    const wellFormed = Array.isArray(migrations) && migrations.every((m: unknown, i) =>
      m !== null && typeof m === 'object' && (m as Migration).version === i + 1 && typeof (m as Migration).name === 'string' && typeof (m as Migration).sql === 'string');
    if (!wellFormed) throw new OptionInvalidError('migrations', migrations, 'must be an array of { version, name, sql } with versions 1, 2, 3, ... in order (tests only)');
  }
  checkApplicationName('applicationName', o['applicationName']);
  const hook = o['onAmbiguousWrite'];
  if (hook !== undefined && typeof hook !== 'function') throw new OptionInvalidError('onAmbiguousWrite', hook, 'must be a function (a test hook)');
  if (pool !== undefined) {
    const settings = pool as Record<string, unknown>;
    checkPoolSize('pool.max', settings['max']);
    checkMs('pool.connectionTimeoutMillis', settings['connectionTimeoutMillis'], 'no limit', '5000');
    checkApplicationName('pool.application_name', settings['application_name']);
  }
}

/**
 * The schema must be a plain identifier (SCHEMA_NAME_PATTERN), checked before connecting. A name
 * starting with pg_ gets a message of its own: it looks plain, but PostgreSQL reserves the prefix
 * for system schemas and CREATE SCHEMA refuses it (SQLSTATE 42939).
 */
function checkSchemaName(description: string, schema: unknown): asserts schema is string {
  if (typeof schema === 'string' && SCHEMA_NAME_PATTERN.test(schema)) return;
  const why = typeof schema === 'string' && schema.startsWith('pg_')
    ? `schema must not start with pg_: PostgreSQL reserves the prefix for system schemas (names must match ${SCHEMA_NAME_PATTERN})`
    : `schema must be a string matching ${SCHEMA_NAME_PATTERN}`;
  throw new StoreError(description, 'open', 'BAD_SCHEMA_NAME', { field: 'schema' }, new Error(why));
}

/** What the store did about faults, for tests and reports. */
export interface PostgresFaultCounters {
  retries: number;
  ambiguousWrites: number;
  resolvedCommitted: number;
  resolvedNotCommitted: number;
  resolvedConflict: number;
}

interface Backend {
  pid: number;
  startedAt: string;
}

/** One failed attempt, before deciding what to tell the caller. Internal. */
class AttemptFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    override readonly cause: unknown,
    /** Present when a statement was sent on this backend (the write may be in flight there). */
    readonly backend?: Backend,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

const MAX_SEQ = 2 ** 31 - 1;

/**
 * Record and summary bytes are `bytea` columns, and PostgreSQL keeps only bytea in them (a hand
 * edit that writes text, `UPDATE ... SET bytes = 'abc'`, stores that text's bytes as bytea), so
 * the SQLite damage of a TEXT or INTEGER value in a blob column (sqlite.ts, storageClassOf)
 * cannot be stored here. pg returns bytea as a Buffer, unless a type parser for bytea replaced
 * its own (pg.types.setTypeParser(17, ...), which is process-wide, or the pool's `types`
 * setting): every read still goes through storedRecordBytes / storedSummaryBytes, so that such a
 * parser is a typed RECORD_NOT_BYTES (or a summary ignored), never a record misread as empty.
 */
function notBytes(value: unknown): NotBytes {
  return {
    found: value === null ? 'null' : `a ${typeof value}`,
    cause: 'pg returned it for the bytea column: a type parser for bytea (OID 17) set with pg.types.setTypeParser or the pool\'s types setting replaced pg\'s own',
    remedy: 'remove that parser (the stored bytes are intact)',
  };
}

/** A row of listRuns, and of listRunsPage with `created_key`: the run's created_at as text, its place in runs_created_at. */
type ListingRow = { run_id: string; next_seq: number; created_ms: number; updated_ms: number; status: string | null; created_key?: string };
/**
 * A listing's place in the index runs_created_at: created_at as the session writes it as text
 * (to the microsecond, or 'infinity'), which it reads back exactly (a JavaScript Date keeps only
 * milliseconds), and the run id.
 */
type PagingKey = readonly [createdAt: string, runId: string];

function listingOf(r: ListingRow): RunListing {
  return { runId: r.run_id, nextSeq: r.next_seq, createdAtMs: r.created_ms, updatedAtMs: r.updated_ms, ...statusHintOf(r.status) };
}

function keyedListing(r: ListingRow): KeyedListing<PagingKey> {
  return { listing: listingOf(r), key: [r.created_key!, r.run_id] };
}

/** A row of readRun: a record, and on record 0 the run's summary (null columns: none). */
type RunRow = {
  seq: number; bytes: unknown; committed_ms: number;
  record_count: number | null; byte_length: number | null; snapshot_seq: number | null; summary: unknown;
};
/** A row of tailAfterAppend: the run row, and one record in the way (seq null: none). */
type TailRow = { next_seq: number; mine: boolean; seq: number | null; bytes: unknown; committed_ms: number | null };
const emptyTail = { rows: [] as TailRow[] } as unknown as pg.QueryResult<TailRow>;
/** An append's answer, or the read behind a refusal when the run is back at its seq (tried again). */
type Refusal = AppendOutcome | { caughtUp: pg.QueryResult<TailRow> };

/** How many times an append refused by a run short of its seq, then found at it, is tried again. */
const MAX_CAUGHT_UP_RETRIES = 3;

/**
 * Whether the read behind a refused append (tailAfterAppend) finds the run at `expectedSeq` with no
 * record there and none of the call's own: the append judged the run row in its statement's
 * snapshot, which predated a repair that moved the row down and the append that brought it back.
 */
function caughtUpSince(tail: pg.QueryResult<TailRow>, expectedSeq: number): boolean {
  const row = tail.rows[0];
  return row !== undefined && row.next_seq === expectedSeq && !row.mine && tail.rows.every((r) => r.seq === null);
}

/**
 * The text of the error an append at seq > 0 raises, writing nothing, when its records went in but
 * the run row did not move (statements(), insertNext): a refusal. Only a repair racing the append
 * (removeLastRecord) or a run row edited by hand can cause it.
 */
const APPEND_REFUSED_GUARD = 'remit: append refused at seq';

/** Whether `error` is the guard of an append at seq > 0 (invalid_text_representation of its own text). */
function isAppendRefusedGuard(error: unknown): boolean {
  return errorCode(error) === '22P02' && error instanceof Error && error.message.includes(APPEND_REFUSED_GUARD);
}

/** Whether an append statement wrote its whole batch (false: nothing; a part cannot happen). */
function insertedAll(result: pg.QueryResult<{ inserted: number }>, count: number): boolean {
  const inserted = result.rows[0]?.inserted ?? 0;
  if (inserted !== 0 && inserted !== count) throw new Error(`append inserted ${inserted} of ${count} rows in one statement`); // cannot happen
  return inserted === count;
}
/**
 * Whether tailAfterAppend at seq 0 found the run row and no record at all: a run listed without
 * records (NO_RECORDS). Not when record 0 is this call's own (`mine`: the records are left out).
 */
function listedWithoutRecords(tail: pg.QueryResult<TailRow>): boolean {
  return tail.rows.length === 1 && tail.rows[0]!.seq === null && !tail.rows[0]!.mine;
}
/** A token no append carries (the read after a refusal that is not this call's own). */
const NO_TOKEN = '00000000-0000-0000-0000-000000000000';

/**
 * Closes a client whose connection may be broken or silent at once: pg's graceful end waits for
 * the server's goodbye, which a black-holed connection never sends (pg-pool does the same).
 */
function discard(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  client.end().catch(() => {});
}

/** pg-pool's message when a call queued for a connection of a full pool waited connectionTimeoutMillis. */
const POOL_QUEUE_TIMEOUT = 'timeout exceeded when trying to connect';

/**
 * Deadlines of the store's own waits (a retry's backoff, resolving an ambiguous write) are timed by
 * the monotonic clock and slept on the timer REMIT loaded with (internalTimers): a wall clock set
 * back or frozen (a test's fake Date) stretched them, and a test's fake timers stopped them. No
 * time the store keeps or compares with a stored one is read here: the server stamps those.
 */
const monotonicNow = (): number => internalTimers.monotonicNow();
const sleep = sleepInternally;

export class PostgresStore implements Store {
  readonly description: string;
  readonly schema: string;
  readonly faultCounters: PostgresFaultCounters = { retries: 0, ambiguousWrites: 0, resolvedCommitted: 0, resolvedNotCommitted: 0, resolvedConflict: 0 };
  private readonly pool: pg.Pool;
  private readonly sql: NamedStatements;
  private readonly retryBudgetMs: number;
  private readonly resolveTimeoutMs: number;
  private readonly backends = new WeakMap<PoolClient, Backend>();
  private readonly onAmbiguousWrite: PostgresStoreOptions['onAmbiguousWrite'];
  /** The option that asks for TLS (tlsOption), named by SSL_NOT_SUPPORTED. */
  private readonly tlsField: string | undefined;
  private closed = false;
  /** close()'s one ending of the pool, which every close() call awaits. */
  private poolEnded: Promise<void> | undefined;
  /**
   * The calls now waiting for a connection: close() fails each at once with kind 'closed'
   * (CLOSED). pg's pool.end() neither serves nor rejects the calls queued for a connection, which
   * would otherwise wait for the connect timeout, or for ever without one. A set, not a race
   * against one promise that close() rejects: every race leaves a reaction on that promise until
   * close(), and the reaction holds its caller's async context (the Remit operation and its
   * result), so a store open for days kept every call's memory (about 4 KB a run, 50 KB a
   * status() of a 50 KB state).
   */
  private readonly waitingForConnection = new Set<(failure: AttemptFailure) => void>();

  private constructor(pool: pg.Pool, schema: string, description: string, options: PostgresStoreOptions, tlsField: string | undefined) {
    this.pool = pool;
    this.schema = schema;
    this.description = description;
    this.sql = namedStatements(statements(quoteSchema(schema)));
    // Checked by open (checkOptionValues): whole numbers from 0.
    this.retryBudgetMs = options.retryBudgetMs ?? 15_000;
    this.resolveTimeoutMs = options.resolveTimeoutMs ?? 15_000;
    this.onAmbiguousWrite = options.onAmbiguousWrite;
    this.tlsField = tlsField;
  }

  /** Connects, applies (or verifies) the migrations, and returns a ready store. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    if (options === null || typeof options !== 'object') throw new OptionInvalidError('options', options, 'must be an object of PostgreSQL store options ({ connectionString, ... })');
    const unknown = unknownKey(options, POSTGRES_STORE_OPTIONS);
    if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as Record<string, unknown>)[unknown], notKnown('an option of the PostgreSQL store', POSTGRES_STORE_OPTIONS));
    checkOptionValues(options);
    const { Pool } = await loadPg();
    // Only undefined means "not given" (null is a value, and not one the store can use).
    const schema: unknown = options.schema === undefined ? 'remit' : options.schema;
    // The connection string is read once, and parsed once, for the description, its check and TLS.
    // A null connectionString is refused below; the description then names the pool's string.
    const url = options.connectionString !== undefined ? options.connectionString : options.pool?.connectionString;
    const described = url ?? options.pool?.connectionString;
    const target = typeof described === 'string' ? parseWithPg(described) : undefined;
    const description = describeTarget(options, described, target, String(schema));
    checkSchemaName(description, schema);
    checkConnectionString(description, url, target);
    const pool = createPool(Pool, options);
    const store = new PostgresStore(pool, schema, description, options, tlsOption(options, target));
    try {
      await store.migrate(options);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return store;
  }

  async readLog(runId: string, fromSeq = 0): Promise<Uint8Array> {
    // Its own arguments first: a refusal names readLog, the call made.
    checkReadArguments(this.description, 'readLog', runId, fromSeq);
    return concatRecords(await this.readRecords(runId, fromSeq));
  }

  async readRecords(runId: string, fromSeq = 0, limit?: number): Promise<StoredRecord[]> {
    checkReadArguments(this.description, 'readRecords', runId, fromSeq, limit);
    const from = Math.min(MAX_SEQ, fromSeq);
    const rows = await this.read('readRecords', { runId }, (c) =>
      limit === undefined
        ? c.query<{ seq: number; bytes: unknown; committed_ms: number }>(this.sql.readFrom, [runId, from])
        : c.query<{ seq: number; bytes: unknown; committed_ms: number }>(this.sql.readFromAtMost, [runId, from, limit]),
    );
    return rows.rows.map((row) => ({ seq: row.seq, bytes: this.recordBytes('readRecords', runId, row.seq, row.bytes), committedAtMs: row.committed_ms }));
  }

  async readSummary(runId: string): Promise<{ summary: RecoverySummary; runStarted: StoredRecord } | null> {
    this.checkRunId('readSummary', runId);
    type Row = { record_count: number; byte_length: number; snapshot_seq: number; summary: unknown; bytes: unknown; committed_ms: number };
    const rows = await this.read('readSummary', { runId }, (c) => c.query<Row>(this.sql.readSummary, [runId]));
    const row = rows.rows[0];
    if (row === undefined) return null;
    return {
      summary: { recordCount: row.record_count, byteLength: row.byte_length, snapshotSeq: row.snapshot_seq, summary: storedSummaryBytes(row.summary) },
      runStarted: { seq: 0, bytes: this.recordBytes('readSummary', runId, 0, row.bytes), committedAtMs: row.committed_ms },
    };
  }

  /** One statement: the summary row (if any) beside record 0, and the records from its snapshot seq (or 0) on. */
  async readRun(runId: string): Promise<RunRead> {
    this.checkRunId('readRun', runId);
    const result = await this.read('readRun', { runId }, (c) => c.query<RunRow>(this.sql.readRun, [runId]));
    const first = result.rows[0];
    let found: RunRead['found'] = null;
    if (first?.seq === 0 && first.summary !== null) {
      const summary = { recordCount: first.record_count!, byteLength: first.byte_length!, snapshotSeq: first.snapshot_seq!, summary: storedSummaryBytes(first.summary) };
      found = { summary, runStarted: { seq: 0, bytes: this.recordBytes('readRun', runId, 0, first.bytes), committedAtMs: first.committed_ms } };
    }
    const from = found?.summary.snapshotSeq ?? 0;
    const records = result.rows.filter((row) => row.seq >= from).map((row) => ({ seq: row.seq, bytes: this.recordBytes('readRun', runId, row.seq, row.bytes), committedAtMs: row.committed_ms }));
    return { found, records };
  }

  async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    this.checkRunId('append', runId);
    checkBatchSeqs(this.description, runId, expectedSeq, records);
    checkRunStatus(this.description, 'append', runId, runStatus);
    if (expectedSeq + records.length > MAX_SEQ) throw this.storeError('append', 'SEQ_OUT_OF_RANGE', { runId, seq: expectedSeq });
    if (records.length === 0) {
      const nextSeq = await this.nextSeq(runId);
      return { committed: nextSeq === expectedSeq, nextSeq };
    }
    const subject = { runId, seq: expectedSeq };
    const batch = records.map((r) => Buffer.from(r)); // our own copy: a retry sends the same bytes
    const token = randomUUID();
    const deadline = monotonicNow() + this.retryBudgetMs;
    let afterAmbiguity = false;
    let caughtUp = 0;
    for (let attempt = 1; ; attempt++) {
      let failure: AttemptFailure | undefined;
      let refused: Refusal | undefined;
      try {
        const { committed, tail } = await this.attempt((c) => this.appendOnce(c, runId, expectedSeq, batch, token, summary, runStatus));
        if (committed) return { committed: true, nextSeq: expectedSeq + records.length };
        refused = afterAmbiguity ? await this.refusedAppend(runId, expectedSeq, records.length, token, afterAmbiguity) : this.refusal(runId, expectedSeq, tail);
      } catch (error) {
        if (!(error instanceof AttemptFailure)) throw error;
        failure = error;
      }
      if (failure?.kind === 'conflict') {
        refused = await this.refusedAppend(runId, expectedSeq, records.length, token, afterAmbiguity);
      } else if (failure?.kind === 'connection_lost') {
        afterAmbiguity = true;
        refused = await this.resolveAppend(runId, expectedSeq, records.length, token, failure);
      } else if (failure !== undefined && !isRetryable(failure.kind)) {
        throw this.failureError('append', subject, failure, 'nothing was written');
      }
      if (refused !== undefined && 'caughtUp' in refused) {
        // Refused while the run was short of expectedSeq (a repair had removed its last record),
        // and another writer brought it back to expectedSeq before the read behind the refusal: the
        // run is where this append expects it, so it is tried again (a few times at most; a run
        // that stays at expectedSeq and keeps refusing is INCONSISTENT, as before).
        if (caughtUp++ < MAX_CAUGHT_UP_RETRIES) continue;
        return this.refusalOutcome(runId, expectedSeq, refused.caughtUp);
      }
      if (refused !== undefined) return refused;
      if (!(await this.pauseBeforeRetry(attempt, deadline))) {
        throw this.failureError('append', subject, failure!, 'nothing was written; retries exhausted');
      }
    }
  }

  /** A refused append's outcome from the read behind it, or that read when the run is back at expectedSeq (caughtUpSince). */
  private refusal(runId: string, expectedSeq: number, tail: pg.QueryResult<TailRow>): Refusal {
    return caughtUpSince(tail, expectedSeq) ? { caughtUp: tail } : this.refusalOutcome(runId, expectedSeq, tail);
  }

  async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    this.checkRunId('fork', sourceRunId);
    this.checkRunId('fork', targetRunId);
    checkBatchSeqs(this.description, targetRunId, prefixRecords, [forkRecord], 'fork');
    checkRunStatus(this.description, 'fork', targetRunId, runStatus);
    if (prefixRecords + 1 > MAX_SEQ) throw this.storeError('fork', 'SEQ_OUT_OF_RANGE', { runId: targetRunId, seq: prefixRecords });
    const subject = { runId: targetRunId, seq: prefixRecords };
    const token = randomUUID();
    const deadline = monotonicNow() + this.retryBudgetMs;
    let afterAmbiguity = false;
    for (let attempt = 1; ; attempt++) {
      let failure: AttemptFailure;
      try {
        const outcome = await this.attempt((c) => this.forkOnce(c, sourceRunId, prefixRecords, targetRunId, forkRecord, token, runStatus));
        if (outcome.committed || outcome.reason !== 'TARGET_EXISTS' || !afterAmbiguity) return outcome;
        return await this.refusedForkAfterAmbiguity(targetRunId, prefixRecords, token);
      } catch (error) {
        if (!(error instanceof AttemptFailure)) throw error;
        failure = error;
      }
      // A racing fork that claimed the target first can surface as a key violation.
      if (failure.kind === 'conflict') {
        return afterAmbiguity ? this.refusedForkAfterAmbiguity(targetRunId, prefixRecords, token) : { committed: false, reason: 'TARGET_EXISTS' };
      }
      if (failure.kind === 'connection_lost') {
        afterAmbiguity = true;
        const resolved = await this.resolveFork(targetRunId, prefixRecords, token, failure);
        if (resolved) return resolved;
      } else if (!isRetryable(failure.kind)) {
        throw this.failureError('fork', subject, failure, 'nothing was written');
      }
      if (!(await this.pauseBeforeRetry(attempt, deadline))) {
        throw this.failureError('fork', subject, failure, 'nothing was written; retries exhausted');
      }
    }
  }

  /** One statement, idempotent: retried like a read. */
  async deleteSummary(runId: string): Promise<void> {
    this.checkRunId('deleteSummary', runId);
    await this.read('deleteSummary', { runId }, (c) => c.query(this.sql.deleteSummary, [runId]));
  }

  /**
   * One transaction under a FOR NO KEY UPDATE lock on the run row, taken first: no append of the
   * run can move the row or commit while it is held (an append racing it finds the row moved when
   * it may update it and writes nothing: insertNext's compare-and-set), and each later statement
   * reads the newest committed rows. Then: the row must be at seq + 1, the
   * record at `seq` must hold `expected` (its delete checks both), and only then next_seq moves down
   * and the summary and hint go. As one statement (until this release) its delete read the
   * statement's snapshot: a record removed and appended again with other bytes while it waited for
   * the row was not deleted, yet next_seq moved down under it, and every later append was
   * INCONSISTENT. A connection that breaks while it is under way (the reply of its COMMIT lost)
   * leaves the removal unknown; it is resolved as an append is (resolveRemoval), not retried
   * blindly: a second attempt would find next_seq moved by the first and report false, "nothing
   * changed", for a record this call had removed.
   */
  async removeLastRecord(runId: string, seq: number, expected: Uint8Array): Promise<boolean> {
    this.checkRunId('removeLastRecord', runId);
    // Record 0 is never removed (store.ts, removeLastRecord).
    if (!Number.isInteger(seq) || seq < 1 || seq >= MAX_SEQ) return false;
    const subject = { runId, seq };
    const bytes = toBuffer(expected);
    const deadline = monotonicNow() + this.retryBudgetMs;
    for (let attempt = 1; ; attempt++) {
      let failure: AttemptFailure;
      try {
        return await this.attempt((c) => this.removeOnce(c, runId, seq, bytes));
      } catch (error) {
        if (!(error instanceof AttemptFailure)) throw error;
        failure = error;
      }
      if (failure.kind === 'connection_lost') {
        const removed = await this.resolveRemoval(runId, seq, bytes, failure);
        if (removed !== undefined) return removed;
      } else if (!isRetryable(failure.kind)) {
        throw this.failureError('removeLastRecord', subject, failure, 'nothing was removed');
      }
      if (!(await this.pauseBeforeRetry(attempt, deadline))) {
        throw this.failureError('removeLastRecord', subject, failure, 'nothing was removed; retries exhausted');
      }
    }
  }

  async listRuns(): Promise<RunListing[]> {
    const rows = await this.read('listRuns', {}, (c) => c.query<ListingRow>(this.sql.listRuns));
    return rows.rows.map(listingOf);
  }

  /**
   * pageReads on one pooled connection: the cursor by its primary key, then a range of
   * runs_created_at or two. Each is a statement of its own (its own snapshot): a run listed
   * throughout is in each of them, which is what keeps it in exactly one page; a run created
   * meanwhile may be read by one and not another, like a run created between two pages. Read only:
   * retried whole after a broken connection.
   */
  async listRunsPage(after: string | undefined, limit: number): Promise<RunListing[] | null> {
    checkPageArguments(this.description, after, limit);
    return this.read('listRunsPage', {}, async (c) => {
      if (after !== undefined && !isStorableRunId(after)) return null; // no run holds it (a NUL would be a server error)
      const found = after === undefined ? undefined : (await c.query<ListingRow>(this.sql.listing, [after])).rows[0];
      if (after !== undefined && found === undefined) return null;
      return readPage(found && keyedListing(found), limit, async (scan) => (await this.scanListings(c, scan)).rows.map(keyedListing));
    });
  }

  /** One of pageReads' reads: a range of runs_created_at next to a key, nearest first. */
  private scanListings(c: PoolClient, { direction, from, count }: ListingScan<PagingKey>): Promise<pg.QueryResult<ListingRow>> {
    if (from === undefined) return c.query<ListingRow>(this.sql.listingsFirst, [count]);
    return c.query<ListingRow>(direction === 'after' ? this.sql.listingsAfter : this.sql.listingsBefore, [from[0], from[1], count]);
  }

  /** One statement on the run row: the hint and next_seq (its record count) in one snapshot. */
  async readStatusHint(runId: string): Promise<StoredStatusHint | null> {
    this.checkRunId('readStatusHint', runId);
    const rows = await this.read('readStatusHint', { runId }, (c) => c.query<{ status: string | null; next_seq: number }>(this.sql.readStatusHint, [runId]));
    const row = rows.rows[0];
    return row === undefined ? null : { ...statusHintOf(row.status), recordCount: row.next_seq };
  }

  async listRunsToRecover(): Promise<string[]> {
    const rows = await this.read('listRunsToRecover', {}, (c) => c.query<{ run_id: string }>(this.sql.runsToRecover));
    return rows.rows.map((r) => r.run_id);
  }

  /**
   * One statement: a compare-and-set on `runs.next_seq` (which every append moves) per run.
   * Retried like a read: running it twice writes the same hints.
   */
  async correctRunStatuses(corrections: readonly RunStatusCorrection[]): Promise<number> {
    checkCorrections(this.description, corrections);
    const valid = corrections.filter((c) => Number.isInteger(c.recordCount) && c.recordCount >= 1 && c.recordCount <= MAX_SEQ);
    if (valid.length === 0) return 0;
    const values = [valid.map((c) => c.runId), valid.map((c) => c.recordCount), valid.map((c) => c.runStatus)];
    const result = await this.read('correctRunStatuses', {}, (c) => c.query(this.sql.correctStatuses, values));
    return result.rowCount ?? 0;
  }

  /**
   * Every call, the first and any made while it runs, resolves once the pool has ended: a second
   * close() that returned at once would let its caller exit or drop the server while the first
   * one's connections were still open.
   */
  close(): Promise<void> {
    this.poolEnded ??= this.endPool();
    return this.poolEnded;
  }

  private async endPool(): Promise<void> {
    this.closed = true;
    const waiting = [...this.waitingForConnection];
    this.waitingForConnection.clear();
    for (const fail of waiting) fail(new AttemptFailure('closed', new Error('the store was closed while this call waited for a connection')));
    await this.pool.end();
  }

  // ---------------------------------------------------------------- single attempts

  /**
   * The one-statement conditional append (with the run's status hint when `runStatus` is given),
   * with the read of the records in the way pipelined behind it on the same connection (sent together, one round trip). The read is a statement of
   * its own, so its snapshot is taken after the append finished: it sees the writer whose commit
   * refused the append, which a part of the append statement could not (its snapshot may predate
   * that commit). When the append committed, the read finds this call's token at expectedSeq and
   * returns only the run row. `committed` false: the seq was not expectedSeq. A first append that
   * the read shows refused by a run row keeping no record goes on to take it over (replaceListing).
   */
  private async appendOnce(
    c: PoolClient, runId: string, expectedSeq: number, records: Buffer[], token: string, summary?: RecoverySummary, runStatus?: RunStatusHint,
  ): Promise<{ committed: boolean; tail: pg.QueryResult<TailRow> }> {
    const appended = this.appendStatement(c, runId, expectedSeq, records, token, summary, runStatus);
    const tail = c.query<TailRow>(this.sql.tailAfterAppend, [runId, expectedSeq, token]);
    // Both replies are awaited (the connection goes back to the pool idle); the read's failure
    // after a failed append is that one's consequence, so the append's error is the one reported.
    const [appendedResult, tailResult] = await Promise.allSettled([appended, tail]);
    if (appendedResult.status === 'rejected' && !isAppendRefusedGuard(appendedResult.reason)) throw appendedResult.reason;
    if (appendedResult.status === 'fulfilled' && insertedAll(appendedResult.value, records.length)) return { committed: true, tail: emptyTail };
    if (tailResult.status === 'rejected') throw tailResult.reason;
    // A first append refused by a run row that keeps no record (NO_RECORDS): the row is stale.
    if (expectedSeq === 0 && listedWithoutRecords(tailResult.value)) return this.replaceListing(c, runId, records, token, summary, runStatus);
    return { committed: false, tail: tailResult.value };
  }

  /**
   * A run's first append (expectedSeq 0) into an id whose run row keeps no record (records
   * removed by hand: NO_RECORDS): as on SQLite and the memory store, the new run takes the id
   * over, and the stale row's recovery summary and status hint go with it (kept, the summary
   * would describe the old records to every fresh process reading the new run, a BAD_LINK
   * refusal at its seq). One transaction on `c`:
   *
   *   1. `SELECT ... FOR UPDATE` locks the run row (waiting for any writer holding it);
   *   2. a statement of its own reads the records from seq 0 with the run row (tailAfterAppend);
   *   3. only if there are none: delete the summary, then one statement takes the row over
   *      (next_seq, created_at, status) and inserts the batch (and the new summary), as the
   *      ordinary first append does; commit.
   *
   * Why two creators (appends or forks into the id, each through here or forkOnce) never both
   * commit, under READ COMMITTED (PostgreSQL's default): every transaction that writes a record of
   * a run whose row exists holds a lock on that row until it ends which conflicts with FOR UPDATE:
   * it updates the row (this take-over, a fork's, an append at seq > 0), or locks it (step 1), and
   * whatever else it does, inserting a record takes a key-share lock on the row (the foreign key
   * of `records`; that is why step 1 is FOR UPDATE, not FOR NO KEY UPDATE). Only a writer that
   * inserts the row itself needs no existing row, and its row is committed with its records. So
   * step 1 returns once every earlier record writer has committed or rolled back, and no later one
   * can write a record before this transaction ends. Step 2 is a new statement, so its
   * snapshot is taken after the lock was granted (a statement sees what was committed before it
   * began; the locking statement's own snapshot may predate the winner's commit, which is why the
   * check is not part of it): it sees the winner's records, and this writer refuses. Nobody can
   * add a record between step 2 and the commit, since they would need the lock held here. The
   * loser waiting in step 1 on a winner that took the row over gets the row's new version (a
   * locking read follows the update chain); on a row deleted meanwhile it gets none, and the
   * ordinary first append (insert the row, ON CONFLICT DO NOTHING) is tried instead. Under
   * REPEATABLE READ or SERIALIZABLE (a server default changed), the snapshot is the
   * transaction's, taken no later than step 1: every REMIT writer of a record into an existing row
   * also updates the row, so one that committed after that snapshot makes step 1 fail with a
   * serialization failure, which is retried (`transient`) and then sees its records. Behind it
   * all, the primary key (run_id, seq) refuses a second record 0 to any creator (23505: `conflict`,
   * reported as not committed).
   */
  private async replaceListing(
    c: PoolClient, runId: string, records: Buffer[], token: string, summary: RecoverySummary | undefined, runStatus: RunStatusHint | undefined,
  ): Promise<{ committed: boolean; tail: pg.QueryResult<TailRow> }> {
    return this.inTransaction(c, async () => {
      const locked = await c.query(this.sql.lockRun, [runId]);
      if (locked.rowCount === 0) {
        // Deleted meanwhile (by hand: the foreign key keeps a row with records): the id is free.
        const appended = await this.appendStatement(c, runId, 0, records, token, summary, runStatus);
        if (insertedAll(appended, records.length)) return { committed: true, tail: emptyTail };
        return { committed: false, tail: await c.query<TailRow>(this.sql.tailAfterAppend, [runId, 0, token]) };
      }
      const tail = await c.query<TailRow>(this.sql.tailAfterAppend, [runId, 0, token]);
      if (!listedWithoutRecords(tail)) return { committed: false, tail };
      await c.query(this.sql.deleteSummary, [runId]);
      const hint = runStatus ?? null;
      const appended = summary === undefined
        ? await c.query<{ inserted: number }>(this.sql.appendStale, [runId, 0, records, token, hint])
        : await c.query<{ inserted: number }>(this.sql.appendStaleWithSummary, [
          runId, 0, records, token, summary.recordCount, summary.byteLength, summary.snapshotSeq, toBuffer(summary.summary), hint,
        ]);
      if (!insertedAll(appended, records.length)) throw new Error('the take-over of a locked run row wrote nothing'); // cannot happen
      return { committed: true, tail: emptyTail };
    }, (outcome) => outcome.committed);
  }

  /** The conditional append statement for `expectedSeq` (with the summary and the hint when given). */
  private appendStatement(
    c: PoolClient, runId: string, expectedSeq: number, records: Buffer[], token: string, summary?: RecoverySummary, runStatus?: RunStatusHint,
  ): Promise<pg.QueryResult<{ inserted: number }>> {
    if (runStatus !== undefined) return this.appendWithStatus(c, runId, expectedSeq, records, token, runStatus, summary);
    if (summary === undefined) return c.query<{ inserted: number }>(expectedSeq === 0 ? this.sql.appendFirst : this.sql.appendNext, [runId, expectedSeq, records, token]);
    const sql = expectedSeq === 0 ? this.sql.appendFirstWithSummary : this.sql.appendNextWithSummary;
    return c.query<{ inserted: number }>(sql, [runId, expectedSeq, records, token, summary.recordCount, summary.byteLength, summary.snapshotSeq, toBuffer(summary.summary)]);
  }

  /**
   * The append of a batch that changes the run's status hint: the statements above with the hint
   * ($5, or $9 after the summary's four) written by the same compare-and-set on the run row.
   */
  private appendWithStatus(
    c: PoolClient,
    runId: string,
    expectedSeq: number,
    records: Buffer[],
    token: string,
    runStatus: RunStatusHint,
    summary?: RecoverySummary,
  ): Promise<pg.QueryResult<{ inserted: number }>> {
    const first = expectedSeq === 0;
    if (summary === undefined) {
      return c.query(first ? this.sql.appendFirstWithStatus : this.sql.appendNextWithStatus, [runId, expectedSeq, records, token, runStatus]);
    }
    const sql = first ? this.sql.appendFirstWithSummaryAndStatus : this.sql.appendNextWithSummaryAndStatus;
    const values = [runId, expectedSeq, records, token, summary.recordCount, summary.byteLength, summary.snapshotSeq, toBuffer(summary.summary), runStatus];
    return c.query(sql, values);
  }

  private async forkOnce(
    c: PoolClient,
    sourceRunId: string,
    prefixRecords: number,
    targetRunId: string,
    forkRecord: Uint8Array,
    token: string,
    runStatus: RunStatusHint | undefined,
  ): Promise<ForkOutcome> {
    return this.inTransaction(c, async (): Promise<ForkOutcome> => {
      const claimed = await c.query(this.sql.claimForkTarget, [targetRunId, prefixRecords + 1, runStatus ?? null]);
      if (claimed.rowCount === 0 && !(await this.takeOverForkTarget(c, targetRunId, prefixRecords, runStatus))) return { committed: false, reason: 'TARGET_EXISTS' };
      // The source's row under FOR SHARE until the fork ends: no append can move it and no repair
      // can remove a record of it meanwhile, so the copy (a statement of its own, reading the newest
      // rows) finds every record next_seq counts. Without it a repair of the source's last record
      // between the two reads left the copy a record short (an untyped error, reported as PG_ERROR).
      const source = await c.query<{ next_seq: number }>(this.sql.lockSource, [sourceRunId]);
      const sourceNext = source.rows[0]?.next_seq ?? 0;
      if (sourceNext === 0 || sourceNext < prefixRecords) return { committed: false, reason: 'SOURCE_TOO_SHORT' };
      const copied = await c.query(this.sql.copyPrefixAndFork, [targetRunId, sourceRunId, prefixRecords, token, toBuffer(forkRecord)]);
      // Fewer records than the row counts (only records deleted by hand): the prefix is not there to
      // copy, and the transaction is rolled back.
      if (copied.rowCount !== prefixRecords + 1) return { committed: false, reason: 'SOURCE_TOO_SHORT' };
      return { committed: true };
    }, (outcome) => outcome.committed);
  }

  /**
   * In forkOnce's transaction, after the target's run row was found to exist: true when the row
   * keeps no record (NO_RECORDS) and now belongs to this fork (next_seq, creation time and hint
   * rewritten, the stale summary deleted; all rolled back with the fork if it does not commit),
   * false when the target exists. The lock, then the check in a statement of its own, as for an
   * append (replaceListing, which says why two creators never both commit).
   */
  private async takeOverForkTarget(c: PoolClient, targetRunId: string, prefixRecords: number, runStatus: RunStatusHint | undefined): Promise<boolean> {
    const locked = await c.query(this.sql.lockRun, [targetRunId]);
    if (locked.rowCount === 0) {
      // Deleted meanwhile (by hand): the id is free, unless another creator claims it first.
      return (await c.query(this.sql.claimForkTarget, [targetRunId, prefixRecords + 1, runStatus ?? null])).rowCount === 1;
    }
    const found = await c.query<{ has_records: boolean }>(this.sql.hasRecords, [targetRunId]);
    if (found.rows[0]!.has_records) return false;
    await c.query(this.sql.deleteSummary, [targetRunId]);
    const taken = await c.query(this.sql.takeOverForkTarget, [targetRunId, prefixRecords + 1, runStatus ?? null]);
    if (taken.rowCount !== 1) throw new Error('the take-over of a locked run row changed nothing'); // cannot happen
    return true;
  }

  /** One attempt of removeLastRecord: its transaction (the method's comment says why in this order). */
  private removeOnce(c: PoolClient, runId: string, seq: number, expected: Buffer): Promise<boolean> {
    return this.inTransaction(c, async () => {
      const locked = await c.query<{ next_seq: number }>(this.sql.lockRunForRepair, [runId]);
      if (locked.rows[0]?.next_seq !== seq + 1) return false;
      const deleted = await c.query(this.sql.removeLast, [runId, seq, expected]);
      return deleted.rowCount === 1;
    }, (removed) => removed);
  }

  /**
   * Runs `body` in a transaction; commits when `keep(result)`, else rolls back. If the rollback
   * itself fails the connection is broken, and that (not the SQL error) is what the caller must
   * handle: the client is discarded and the write treated as in flight.
   */
  private async inTransaction<T>(c: PoolClient, body: () => Promise<T>, keep: (result: T) => boolean): Promise<T> {
    await c.query('BEGIN');
    let result: T;
    try {
      result = await body();
    } catch (error) {
      await this.rollback(c, error);
      throw error;
    }
    if (keep(result)) await c.query('COMMIT');
    else await this.rollback(c, undefined);
    return result;
  }

  private async rollback(c: PoolClient, original: unknown): Promise<void> {
    try {
      await c.query('ROLLBACK');
    } catch (rollbackError) {
      throw new AttemptFailure('connection_lost', original ?? rollbackError, this.backends.get(c));
    }
  }

  // ---------------------------------------------------------------- ambiguous commits

  /**
   * After a connection broke mid-append: the append's outcome, or undefined when it definitely did
   * not commit (the caller may then retry it). Throws OUTCOME_UNKNOWN when time runs out first.
   */
  private async resolveAppend(
    runId: string,
    expectedSeq: number,
    count: number,
    token: string,
    failure: AttemptFailure,
  ): Promise<Refusal | undefined> {
    this.faultCounters.ambiguousWrites++;
    await this.onAmbiguousWrite?.({ operation: 'append', runId, seq: expectedSeq });
    const deadline = monotonicNow() + this.resolveTimeoutMs;
    await this.waitUntilBackendGone('append', { runId, seq: expectedSeq }, failure, deadline);
    const owner = await this.appendOwner(runId, expectedSeq, count, token, failure, deadline);
    if (owner === 'mine') {
      this.faultCounters.resolvedCommitted++;
      return { committed: true, nextSeq: expectedSeq + count };
    }
    if (owner === 'other') {
      this.faultCounters.resolvedConflict++;
      return this.conflictOutcome(runId, expectedSeq);
    }
    this.faultCounters.resolvedNotCommitted++;
    return undefined;
  }

  /**
   * The store refused an append. If an earlier attempt of this same call broke mid-flight, the rows
   * in the way may be that attempt's (committed after all): the token tells. Otherwise a conflict.
   */
  private async refusedAppend(runId: string, expectedSeq: number, count: number, token: string, afterAmbiguity: boolean): Promise<Refusal> {
    if (afterAmbiguity) {
      const failure = new AttemptFailure('connection_lost', new Error('an earlier attempt of this append lost its connection'));
      const owner = await this.appendOwner(runId, expectedSeq, count, token, failure, monotonicNow() + this.resolveTimeoutMs);
      if (owner === 'mine') {
        this.faultCounters.resolvedCommitted++;
        return { committed: true, nextSeq: expectedSeq + count };
      }
    }
    return this.conflictOutcome(runId, expectedSeq);
  }

  /** Who holds seqs expectedSeq..expectedSeq+count-1: this call (by token), another writer, or nobody. */
  private async appendOwner(
    runId: string,
    expectedSeq: number,
    count: number,
    token: string,
    failure: AttemptFailure,
    deadline: number,
  ): Promise<'mine' | 'other' | 'none'> {
    const subject = { runId, seq: expectedSeq };
    const rows = await this.resolveRead('append', subject, failure, deadline, (c) =>
      c.query<{ mine: boolean }>(this.sql.tokensAt, [runId, expectedSeq, count, token]),
    );
    const mine = rows.rows.filter((r) => r.mine).length;
    if (mine === count) return 'mine';
    if (mine !== 0) throw this.storeError('append', 'INCONSISTENT', subject, new Error(`${mine} of ${count} rows of one append found`));
    return rows.rowCount === 0 ? 'none' : 'other';
  }

  private async resolveFork(
    targetRunId: string,
    prefixRecords: number,
    token: string,
    failure: AttemptFailure,
  ): Promise<ForkOutcome | undefined> {
    this.faultCounters.ambiguousWrites++;
    await this.onAmbiguousWrite?.({ operation: 'fork', runId: targetRunId, seq: prefixRecords });
    const deadline = monotonicNow() + this.resolveTimeoutMs;
    await this.waitUntilBackendGone('fork', { runId: targetRunId, seq: prefixRecords }, failure, deadline);
    const owner = await this.forkOwner(targetRunId, prefixRecords, token, failure, deadline);
    if (owner === 'mine') {
      this.faultCounters.resolvedCommitted++;
      return { committed: true };
    }
    if (owner === 'other') {
      this.faultCounters.resolvedConflict++;
      return { committed: false, reason: 'TARGET_EXISTS' };
    }
    this.faultCounters.resolvedNotCommitted++;
    return undefined;
  }

  /**
   * After a connection broke mid-removal, once its backend is gone: undefined when the record is
   * still the run's last, with its bytes (not removed: the caller tries again), true when it is
   * gone and the run ends just before it (removed: by this call, or by a repair racing it, which
   * the caller asked for either way), and OUTCOME_UNKNOWN otherwise (the run moved on: an append
   * after the removal, or a second repair). No token tells, as for an append: a delete leaves none.
   */
  private async resolveRemoval(runId: string, seq: number, expected: Buffer, failure: AttemptFailure): Promise<boolean | undefined> {
    this.faultCounters.ambiguousWrites++;
    const subject = { runId, seq };
    const deadline = monotonicNow() + this.resolveTimeoutMs;
    await this.waitUntilBackendGone('removeLastRecord', subject, failure, deadline);
    const rows = await this.resolveRead('removeLastRecord', subject, failure, deadline, (c) =>
      c.query<{ next_seq: number; kept: boolean }>(this.sql.removalState, [runId, seq, expected]),
    );
    const row = rows.rows[0];
    if (row?.kept && row.next_seq === seq + 1) {
      this.faultCounters.resolvedNotCommitted++;
      return undefined;
    }
    if (row !== undefined && !row.kept && row.next_seq === seq) {
      this.faultCounters.resolvedCommitted++;
      return true;
    }
    throw this.storeError('removeLastRecord', 'OUTCOME_UNKNOWN', subject, new Error(
      `${failure.message} (the connection broke mid-removal, and the run has changed since: whether this call removed record ${seq} cannot be told; re-read the run)`,
      { cause: failure.cause },
    ));
  }

  /** A fork refused with TARGET_EXISTS after an earlier attempt broke: the target may be ours. */
  private async refusedForkAfterAmbiguity(targetRunId: string, prefixRecords: number, token: string): Promise<ForkOutcome> {
    const failure = new AttemptFailure('connection_lost', new Error('an earlier attempt of this fork lost its connection'));
    const owner = await this.forkOwner(targetRunId, prefixRecords, token, failure, monotonicNow() + this.resolveTimeoutMs);
    if (owner === 'mine') {
      this.faultCounters.resolvedCommitted++;
      return { committed: true };
    }
    return { committed: false, reason: 'TARGET_EXISTS' };
  }

  private async forkOwner(
    targetRunId: string,
    prefixRecords: number,
    token: string,
    failure: AttemptFailure,
    deadline: number,
  ): Promise<'mine' | 'other' | 'none'> {
    const rows = await this.resolveRead('fork', { runId: targetRunId, seq: prefixRecords }, failure, deadline, (c) =>
      c.query<{ target_exists: boolean; mine: boolean }>(this.sql.forkTokenAt, [targetRunId, prefixRecords, token]),
    );
    const row = rows.rows[0];
    return row?.mine ? 'mine' : row?.target_exists ? 'other' : 'none';
  }

  /**
   * Returns once the server backend that ran the interrupted write has exited: from then on its
   * transaction is finished (committed or rolled back) and reading tells the truth. It is asked to
   * terminate, which is allowed for one's own role's backends; without that right, we only wait.
   */
  private async waitUntilBackendGone(operation: string, subject: ErrorSubject, failure: AttemptFailure, deadline: number): Promise<void> {
    const backend = failure.backend;
    if (!backend) return;
    let terminate = true;
    for (let round = 1; ; round++) {
      try {
        const sql = terminate ? this.sql.terminateBackend : this.sql.backendAlive;
        const alive = await this.attemptAside((c) => c.query(sql, [backend.pid, backend.startedAt]));
        if (alive.rowCount === 0) return;
      } catch (error) {
        if (!(error instanceof AttemptFailure)) throw error;
        if (error.kind === 'fatal' && errorCode(error.cause) === '42501') terminate = false;
        else if (!isRetryable(error.kind)) throw this.unknownOutcome(operation, subject, error);
      }
      if (monotonicNow() + 25 > deadline) throw this.unknownOutcome(operation, subject, failure);
      await sleep(Math.min(25 * round, 250));
    }
  }

  /** A read made while resolving; if it cannot be made in time, the outcome stays unknown. */
  private async resolveRead<R extends QueryResultRow>(
    operation: string,
    subject: ErrorSubject,
    failure: AttemptFailure,
    deadline: number,
    step: (c: pg.ClientBase) => Promise<pg.QueryResult<R>>,
  ): Promise<pg.QueryResult<R>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attemptAside(step);
      } catch (error) {
        if (!(error instanceof AttemptFailure)) throw error;
        if (!isRetryable(error.kind) || monotonicNow() + backoffMs(attempt) > deadline) throw this.unknownOutcome(operation, subject, failure);
      }
      await sleep(backoffMs(attempt));
    }
  }

  // ---------------------------------------------------------------- plumbing

  /** `connecting`'s outcome, or AttemptFailure 'closed' if close() is called first. */
  private untilClosed<T>(connecting: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waitingForConnection.add(reject);
      connecting.then(
        (value) => {
          this.waitingForConnection.delete(reject);
          resolve(value);
        },
        (error: unknown) => {
          this.waitingForConnection.delete(reject);
          reject(error);
        },
      );
    });
  }

  /**
   * Runs a step of resolving an interrupted write on a connection of its own, outside the pool,
   * closed after it. Through the pool, it waited behind the calls queued there, which may hold
   * every pooled connection for as long as a lock keeps them waiting, and the write was reported
   * OUTCOME_UNKNOWN though the server could be asked at any time. Failures become AttemptFailure.
   */
  private async attemptAside<T>(step: (c: pg.ClientBase) => Promise<T>): Promise<T> {
    if (this.closed) throw new AttemptFailure('closed', new Error('the store is closed'));
    // The pool's own Client class and settings (a `pool.Client` given in the options included).
    const Client = (this.pool as unknown as { Client: typeof pg.Client }).Client;
    const client = new Client(this.pool.options);
    client.on('error', () => {});
    try {
      await this.untilClosed(client.connect());
    } catch (error) {
      discard(client);
      throw error instanceof AttemptFailure ? error : new AttemptFailure(classifyConnectFailure(error), error);
    }
    try {
      const result = await step(client);
      client.end().catch(() => {});
      return result;
    } catch (error) {
      discard(client);
      throw new AttemptFailure(classifyStatementFailure(error), error);
    }
  }

  /** Runs `step` on a pooled client. Failures become AttemptFailure; broken clients are discarded. */
  private async attempt<T>(step: (c: PoolClient) => Promise<T>): Promise<T> {
    // 'closed', not a StoreError: each caller reports it as its own operation on its own run and
    // seq (CLOSED), and a call resolving an interrupted write as OUTCOME_UNKNOWN (the write may
    // have committed), never as "nothing was written".
    if (this.closed) throw new AttemptFailure('closed', new Error('the store is closed'));
    let client: PoolClient;
    const connecting = this.pool.connect();
    try {
      client = await this.untilClosed(connecting);
    } catch (error) {
      if (error instanceof AttemptFailure) {
        connecting.then((late) => late.release(true), () => {});
        throw error;
      }
      throw new AttemptFailure(classifyConnectFailure(error), this.explainPoolWait(error));
    }
    let backend: Backend;
    try {
      backend = await this.backendOf(client);
    } catch (error) {
      client.release(true);
      throw new AttemptFailure(classifyConnectFailure(error), error); // our statement was not sent
    }
    try {
      const result = await step(client);
      client.release();
      return result;
    } catch (error) {
      const kind = error instanceof AttemptFailure ? error.kind : classifyStatementFailure(error);
      // A client whose statement failed for a connection reason, or whose state is unknown, is
      // never reused; one that got an ordinary SQL error is healthy.
      client.release(kind === 'fatal' || kind === 'conflict' || kind === 'timeout' || kind === 'transient' ? undefined : true);
      throw error instanceof AttemptFailure ? error : new AttemptFailure(kind, error, backend);
    }
  }

  /**
   * pg-pool's error for a call that waited connectTimeoutMs in its queue behind a full pool says
   * "timeout exceeded when trying to connect", which reads as an unreachable server; the server may
   * be answering every other client. Kept as the cause, with what happened in the message.
   */
  private explainPoolWait(error: unknown): unknown {
    if (!(error instanceof Error) || error.message !== POOL_QUEUE_TIMEOUT) return error;
    const { max, connectionTimeoutMillis } = this.pool.options;
    return new Error(
      `no pooled connection became free within connectTimeoutMs (${connectionTimeoutMillis} ms): all ${max} (maxConnections) were in use by this store's calls or still connecting; the server may be answering (docs/postgres.md, "Pool sizing")`,
      { cause: error },
    );
  }

  /** The server process behind a pooled client, looked up once per connection. */
  private async backendOf(client: PoolClient): Promise<Backend> {
    const known = this.backends.get(client);
    if (known) return known;
    const row = (await client.query<{ pid: number; started_at: string }>(this.sql.whoAmI)).rows[0];
    if (!row) throw new Error('pg_stat_activity has no row for this connection');
    const backend = { pid: row.pid, startedAt: row.started_at };
    this.backends.set(client, backend);
    return backend;
  }

  /** A read with transparent retries (reads change nothing, so running one twice is harmless). */
  private async read<T>(operation: string, subject: ErrorSubject, step: (c: PoolClient) => Promise<T>): Promise<T> {
    const deadline = monotonicNow() + this.retryBudgetMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(step);
      } catch (error) {
        if (!(error instanceof AttemptFailure)) throw error;
        if (!isRetryable(error.kind) || !(await this.pauseBeforeRetry(attempt, deadline))) throw this.failureError(operation, subject, error);
      }
    }
  }

  private async nextSeq(runId: string): Promise<number> {
    const rows = await this.read('append', { runId }, (c) => c.query<{ next_seq: number }>(this.sql.nextSeq, [runId]));
    return rows.rows[0]?.next_seq ?? 0;
  }

  /** The outcome for an append that found another writer's seq, read afresh (one statement). */
  private async conflictOutcome(runId: string, expectedSeq: number): Promise<Refusal> {
    const tail = await this.read('append', { runId, seq: expectedSeq }, (c) => c.query<TailRow>(this.sql.tailAfterAppend, [runId, expectedSeq, NO_TOKEN]));
    return this.refusal(runId, expectedSeq, tail);
  }

  /**
   * A refused append's outcome from the read of the run row and the records from expectedSeq
   * (tailAfterAppend); asserts the store moved on.
   */
  private refusalOutcome(runId: string, expectedSeq: number, result: pg.QueryResult<TailRow>): AppendOutcome {
    const nextSeq = result.rows[0]?.next_seq ?? 0;
    if (nextSeq === expectedSeq || result.rows[0]?.mine) {
      throw this.storeError('append', 'INCONSISTENT', { runId, seq: expectedSeq }, new Error('a conflicting append was refused but the run is still at the expected seq'));
    }
    if (expectedSeq === 0) return { committed: false, nextSeq };
    const tail: StoredRecord[] = [];
    for (const row of result.rows) {
      if (row.seq !== null) tail.push({ seq: row.seq, bytes: this.recordBytes('append', runId, row.seq, row.bytes), committedAtMs: row.committed_ms! });
    }
    // One snapshot holds the run row and its records: a run row ahead of them was edited by hand
    // (a record deleted, next_seq changed). Taken for a lost race, it would refuse every append of
    // the run for ever, each a ConflictError naming records that do not exist.
    const ahead = nextSeq > expectedSeq && (tail.length !== nextSeq - expectedSeq || tail.some((record, i) => record.seq !== expectedSeq + i));
    if (ahead) {
      throw this.storeError('append', 'INCONSISTENT', { runId, seq: expectedSeq }, new Error(
        `the run row counts ${nextSeq} records (next_seq) but its records from seq ${expectedSeq} on are ${tail.length === 0 ? 'none' : `seqs ${tail.map((r) => r.seq).join(', ')}`}: `
          + `the tables were edited by hand (a record deleted?); restore the run from a backup, or, if the records are the run's whole log, `
          + `UPDATE ${this.schema}.runs SET next_seq = (SELECT coalesce(max(seq) + 1, 0) FROM ${this.schema}.records WHERE run_id = runs.run_id) WHERE run_id = '<runId>'`,
      ));
    }
    return { committed: false, nextSeq, tail };
  }

  /** Sleeps before retry `attempt + 1`; false if that would overrun the budget. */
  private async pauseBeforeRetry(attempt: number, deadline: number): Promise<boolean> {
    const waitMs = backoffMs(attempt);
    if (monotonicNow() + waitMs > deadline || this.closed) return false;
    this.faultCounters.retries++;
    await sleep(waitMs);
    return true;
  }

  private checkRunId(operation: string, runId: string): void {
    checkStoredRunId(this.description, operation, runId);
  }

  /** A bytea column's value as a record's bytes (see notBytes). */
  private recordBytes(operation: string, runId: string, seq: number, value: unknown): Uint8Array {
    return storedRecordBytes(this.description, operation, runId, seq, value, notBytes);
  }

  private storeError(operation: string, storeCode: string, subject: ErrorSubject, cause?: unknown): StoreError {
    return new StoreError(this.description, operation, storeCode, subject, cause);
  }

  /** The typed error for a failure known not to have written anything. */
  private failureError(operation: string, subject: ErrorSubject, failure: AttemptFailure, note?: string): StoreError {
    if (failure.kind === 'ssl_not_supported') return this.sslNotSupported(operation, subject, failure);
    const storeCode =
      failure.kind === 'timeout' ? 'TIMEOUT'
      : failure.kind === 'fatal' ? errorCode(failure.cause) ?? 'PG_ERROR'
      : failure.kind === 'closed' ? 'CLOSED'
      : 'UNAVAILABLE';
    const message = note ? `${failure.message} (${note})` : failure.message;
    return this.storeError(operation, storeCode, subject, new Error(message, { cause: failure.cause }));
  }

  /** SSL_NOT_SUPPORTED, at once: names the option that asked for TLS and what to change. */
  private sslNotSupported(operation: string, subject: ErrorSubject, failure: AttemptFailure): StoreError {
    const asker = this.tlsField ?? 'the PGSSLMODE environment variable';
    return this.storeError(operation, 'SSL_NOT_SUPPORTED', this.tlsField ? { ...subject, field: this.tlsField } : subject, new Error(
      `${failure.message}, and ${asker} asks for TLS (not retried: the server's answer will not change); connect without TLS (sslmode=disable) or turn ssl on in the server's configuration`,
      { cause: failure.cause },
    ));
  }

  private unknownOutcome(operation: string, subject: ErrorSubject, failure: AttemptFailure): StoreError {
    return this.storeError(
      operation,
      'OUTCOME_UNKNOWN',
      subject,
      new Error(`${failure.message} (the connection broke mid-write and the server could not be asked in time whether it committed; re-read the run)`, {
        cause: failure.cause,
      }),
    );
  }

  private async migrate(options: PostgresStoreOptions): Promise<void> {
    const mode = options.migrate ?? 'apply';
    try {
      await this.read('open', {}, async (c) => {
        await migrateSchema(c, this.schema, { mode, ...(options.migrations ? { migrations: options.migrations } : {}) });
      });
    } catch (error) {
      if (error instanceof StoreError && error.cause instanceof Error && error.cause.cause instanceof SchemaVersionError) {
        throw this.storeError('open', 'SCHEMA_VERSION', { field: 'schema' }, error.cause.cause);
      }
      throw error;
    }
  }
}

/** Opens a PostgresStore; see PostgresStoreOptions and docs/postgres.md. */
export function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  return PostgresStore.open(options);
}

/**
 * node-postgres, loaded when a store is opened: it is an optional peer dependency of remit, and
 * importing remit/postgres without it installed failed with Node's own "Cannot find package 'pg'",
 * naming a file inside remit's dist/ and not what to install. A dynamic import with a literal
 * specifier, which a bundler follows (a createRequire call it does not see left a bundled service
 * without pg).
 */
async function loadPg(): Promise<typeof pg> {
  try {
    return (await import('pg')).default;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if ((code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') || !/'pg'/.test((error as Error).message)) throw error;
    throw new StoreError('postgres', 'open', 'PG_NOT_INSTALLED', {}, new Error(
      'the PostgreSQL store needs node-postgres, an optional peer dependency of remit that is not installed here: npm install pg (^8.11)'));
  }
}

/** parseConnectionString, its parser missing reported as PG_NOT_INSTALLED. */
function parseWithPg(text: string): ConnectionTarget | undefined {
  try {
    return parseConnectionString(text);
  } catch (error) {
    if (!(error instanceof ParserMissing)) throw error;
    throw new StoreError('postgres', 'open', 'PG_NOT_INSTALLED', {}, new Error(
      `node-postgres's connection-string parser (pg-connection-string, a dependency of pg) cannot be loaded from pg's folder: ${describeThrown(error.cause)}; ` +
        'a bundle must keep pg and its dependencies as they are installed (mark pg external), or pass pool: { host, port, user, password, database } instead of connectionString'));
  }
}

/** The pool for options checked by checkOptionValues (every number a whole number in range). */
function createPool(Pool: typeof pg.Pool, options: PostgresStoreOptions): pg.Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? 10_000;
  // Capped: a statement timeout near the limit must not make the reply's timer overflow (it
  // would fire at once, and every statement would look like a broken connection).
  const clientTimeoutMs = options.clientTimeoutMs ?? (statementTimeoutMs === 0 ? 0 : Math.min(MAX_TIMEOUT_MS, statementTimeoutMs + 5000));
  // `pipeline` is a pg client setting (8.2x) that the PoolConfig typings do not list yet.
  const config: PoolConfig & { pipeline: boolean } = {
    ...(options.pool as PoolConfig | undefined),
    max: options.maxConnections ?? options.pool?.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? options.pool?.connectionTimeoutMillis ?? 5000,
    application_name: options.applicationName ?? options.pool?.application_name ?? 'remit',
    keepAlive: true,
    // Queries are written as soon as they are issued, not after the previous reply: an append and
    // the read of what refused it travel together (appendOnce). Each still has its own Sync, so
    // each is its own statement and, outside BEGIN, its own transaction.
    pipeline: true,
    ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
    ...(clientTimeoutMs > 0 ? { query_timeout: clientTimeoutMs } : {}),
  };
  if (options.connectionString !== undefined) config.connectionString = options.connectionString;
  const pool = new Pool(config);
  // A broken idle connection (server restart, terminated backend) is reported here and dropped by
  // the pool; without a listener Node would treat it as an uncaught error and exit.
  pool.on('error', () => {});
  // Same for a connection that breaks while checked out: the failing query carries the error.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * A connection string must be one pg reads (postgres-connection-string.ts) with a postgres://,
 * postgresql:// or socket: scheme, or a socket folder: pg reads anything else as a host name, so
 * a libpq keyword string ("host=... port=...") or a typo would be retried for the whole retry
 * budget and reported as an unreachable server.
 */
function checkConnectionString(description: string, url: unknown, target: ConnectionTarget | undefined): void {
  if (url === undefined) return;
  if (typeof url !== 'string') {
    throw new StoreError(description, 'open', 'BAD_CONNECTION_STRING', { field: 'connectionString' },
      new Error(`connectionString must be a string (a postgres://user@host:port/database URL), not ${url === null ? 'null' : typeof url}`));
  }
  if (target !== undefined) return;
  throw new StoreError(description, 'open', 'BAD_CONNECTION_STRING', { field: 'connectionString' },
    new Error('connectionString must be a postgres://user@host:port/database URL or a socket folder (percent-encode reserved characters such as # or @ in the password); for the libpq keyword form, pass pool: { host, port, user, password, database } instead'));
}

/**
 * "postgres://user@host:port/db#schema", never the password. The connection string's parts win
 * over the pool's, as in pg (which assigns every part the string names, given or not, over the
 * pool's settings: a URL without a user leaves pg's default user, not the pool's).
 */
function describeTarget(options: PostgresStoreOptions, url: unknown, target: ConnectionTarget | undefined, schema: string): string {
  const p = options.pool ?? {};
  if (url) {
    if (target === undefined) return `postgres:(unparsed url)#${schema}`;
    return formatTarget({ ...poolTarget(p), ...target }, schema);
  }
  return formatTarget({ ...poolTarget(p), host: poolPart(p.host) ?? 'localhost', port: poolPart(p.port) ?? '5432' }, schema);
}

/**
 * The option that asks for TLS, as pg decides: the connection string when it carries a TLS setting
 * (pg then ignores pool.ssl), else pool.ssl; neither: pg's PGSSLMODE environment variable.
 */
function tlsOption(options: PostgresStoreOptions, target: ConnectionTarget | undefined): string | undefined {
  if (target?.tls) return options.connectionString !== undefined ? 'connectionString' : 'pool.connectionString';
  return options.pool?.ssl !== undefined ? 'pool.ssl' : undefined;
}

/** The pool settings that name the target, as text (a setting of another type is not described). */
function poolTarget(p: PostgresPoolSettings): ConnectionTarget {
  return { user: poolPart(p.user), host: poolPart(p.host), port: poolPart(p.port), database: poolPart(p.database) };
}

function poolPart(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Every statement the store runs, for one schema. */
/** A run's listing as listRuns and listRunsPage read it (ListingRow). */
const LISTING_COLUMNS = `run_id, next_seq, status,
  (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
  (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms`;

/**
 * A run's created_at as listRunsPage's key: its exact value (microseconds) as text of one fixed
 * form in UTC, whatever the session's DateStyle and TimeZone (created_at::text follows both, and
 * a zone abbreviation it prints may mean another zone when read back), and how a key is read back.
 */
const CREATED_KEY = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;
const CREATED_AT_KEY_PARAM = `($1::timestamp AT TIME ZONE 'UTC')`;

type NamedStatements = { [K in keyof ReturnType<typeof statements>]: { name: string; text: string } };

/**
 * Every statement as a named prepared statement: each connection parses and plans it once, then
 * only binds and executes it (the CTEs of the append and the reads cost more to plan than to run on
 * a short run). The name is a digest of the text, so two stores on different schemas sharing a
 * connection never collide, and a changed text is a new statement.
 */
function namedStatements(texts: ReturnType<typeof statements>): NamedStatements {
  const out: Partial<Record<string, { name: string; text: string }>> = {};
  for (const [key, text] of Object.entries(texts)) {
    out[key] = { name: `remit_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text };
  }
  return out as NamedStatements;
}

function statements(s: string) {
  const insertBatch = (claimCte: string) => `
WITH claim AS (${claimCte}),
ins AS (
  INSERT INTO ${s}.records (run_id, seq, bytes, append_token, committed_at)
  SELECT $1, $2 + (t.ord - 1)::int, t.bytes, $4, now()
  FROM claim, unnest($3::bytea[]) WITH ORDINALITY AS t(bytes, ord)
  RETURNING seq
)
SELECT count(*)::int AS inserted FROM ins`;
  // The same append, also replacing the run's recovery summary ($5..$8) when the claim succeeds and
  // the summary covers no more records than the run holds after it: one statement, one commit.
  const summaryCte = `, summary AS (
  INSERT INTO ${s}.summaries (run_id, record_count, byte_length, snapshot_seq, summary)
  SELECT $1, $5, $6, $7, $8 FROM claim WHERE $5 <= $2 + cardinality($3::bytea[])
  ON CONFLICT (run_id) DO UPDATE SET record_count = EXCLUDED.record_count, byte_length = EXCLUDED.byte_length,
    snapshot_seq = EXCLUDED.snapshot_seq, summary = EXCLUDED.summary
  RETURNING 1
)
`;
  const withSummary = (batch: string) =>
    batch.replace('SELECT count(*)::int AS inserted FROM ins', `${summaryCte}SELECT count(*)::int AS inserted FROM ins`);
  // The claim on the run row, with the status hint written by the same statement when `statusParam`
  // (the hint's parameter number: after those of the statement it joins) is given.
  // expectedSeq 0: the run must not exist; a racing creator makes ON CONFLICT skip the insert.
  const claimFirst = (statusParam?: number) => `
  INSERT INTO ${s}.runs (run_id, next_seq, created_at, updated_at${statusParam === undefined ? '' : ', status'})
  VALUES ($1, $2 + cardinality($3::bytea[]), now(), now()${statusParam === undefined ? '' : `, $${statusParam}::text`})
  ON CONFLICT (run_id) DO NOTHING
  RETURNING run_id`;
  // expectedSeq 0 into a run row that keeps no record (NO_RECORDS), inside replaceListing's
  // transaction and under its lock on the row: the new run takes the row over, with a new
  // creation time and its own hint (NULL: unknown, when the batch carries none).
  const claimStale = (statusParam: number) => `
  UPDATE ${s}.runs SET next_seq = $2 + cardinality($3::bytea[]), created_at = now(), updated_at = now(), status = $${statusParam}::text
  WHERE run_id = $1
  RETURNING run_id`;
  // expectedSeq > 0: the records' primary key is the gate, at the batch's first seq. In order (each
  // part reads the one before, which is what orders data-modifying CTEs: EXPLAIN shows each behind a
  // one-time filter on an InitPlan reading the previous one):
  // - `first` inserts the batch's first record, ON CONFLICT DO NOTHING, only if the run row (`run`,
  //   read in the statement's snapshot) is at expectedSeq: k racers at one seq wait on the winner's
  //   key entry and all wake at its commit, writing nothing, as k raw `INSERT ... ON CONFLICT` do,
  //   never touching the run row. A writer behind or ahead of the run inserts nothing and is refused
  //   without an error (a snapshot that was already old is caught by the read behind the append:
  //   caughtUpSince).
  // - `rest` inserts the other records when the first went in. A conflict there (a writer whose
  //   snapshot predates a repair put its first record at one of these seqs) waits for that writer,
  //   which then finds the run row moved and writes nothing, or is a key violation (23505: a
  //   refusal) when it committed.
  // - `claim` moves the run row when the whole batch went in: the row's lock is taken last, by a
  //   writer that waits for nothing more, so two appends never wait on each other. Its
  //   compare-and-set is judged on the row's newest version (the CASE, not the WHERE, which the
  //   statement's snapshot would judge): it fails only when a repair moved the row down after the
  //   snapshot (removeLastRecord) or the row was edited by hand.
  // The final SELECT fails the statement, writing nothing, if records went in but the row did not
  // move (APPEND_REFUSED_GUARD). (The take-over of a run row that keeps no record, which locks the
  // row first and then inserts, can wait on a stale writer of the old run that waits on the row: a
  // deadlock PostgreSQL breaks and the store retries, 40P01 being transient; possible only on a run
  // whose records were deleted by hand while a writer held it.)
  // `statusParam`: the hint's parameter number ($5, or $9 after the summary's four); `summary`:
  // the statement also replaces the run's recovery summary when it moves the run row.
  const insertNext = (statusParam?: number, summary = false) => `
WITH run AS (
  SELECT next_seq FROM ${s}.runs WHERE run_id = $1
),
first AS (
  INSERT INTO ${s}.records (run_id, seq, bytes, append_token, committed_at)
  SELECT $1, $2, ($3::bytea[])[1], $4, now() FROM run WHERE run.next_seq = $2
  ON CONFLICT (run_id, seq) DO NOTHING
  RETURNING seq
),
rest AS (
  INSERT INTO ${s}.records (run_id, seq, bytes, append_token, committed_at)
  SELECT $1, $2 + (t.ord - 1)::int, t.bytes, $4, now()
  FROM unnest($3::bytea[]) WITH ORDINALITY AS t(bytes, ord)
  WHERE t.ord > 1 AND (SELECT count(*) FROM first) > 0
  RETURNING seq
),
claim AS (
  UPDATE ${s}.runs SET next_seq = CASE WHEN next_seq = $2 THEN $2 + cardinality($3::bytea[]) ELSE next_seq END,
    updated_at = now()${statusParam === undefined ? '' : `, status = CASE WHEN next_seq = $2 THEN $${statusParam}::text ELSE status END`}
  WHERE run_id = $1 AND (SELECT count(*) FROM first) + (SELECT count(*) FROM rest) = cardinality($3::bytea[])
  RETURNING next_seq = $2 + cardinality($3::bytea[]) AS moved
)
${summary ? summaryCte : ''}SELECT CASE WHEN f.n = 0 THEN 0
    WHEN coalesce((SELECT moved FROM claim), false) THEN cardinality($3::bytea[])
    ELSE ('${APPEND_REFUSED_GUARD} ' || $2::text || ' (' || f.n::text || ' rows went in, the run row did not move)')::int END AS inserted
  FROM (SELECT count(*)::int AS n FROM first) f`;
  const sql = {
    appendFirst: insertBatch(claimFirst()),
    appendNext: insertNext(),
    nextSeq: `SELECT next_seq FROM ${s}.runs WHERE run_id = $1`,
    // After an append ($3 its token): the run row, whether record $2 is this call's, and unless it
    // is, the records from $2 on (the records in the way). No row at all: the run does not exist.
    // At $2 = 0 only the run's first record is read: whether it has any (listedWithoutRecords);
    // a refused first record reports no tail (store.ts, AppendOutcome), which would be the whole log.
    tailAfterAppend: `SELECT x.next_seq, m.mine, r.seq, r.bytes, (extract(epoch FROM r.committed_at) * 1000)::float8 AS committed_ms
      FROM ${s}.runs x
      CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM ${s}.records WHERE run_id = $1 AND seq = $2 AND append_token = $3::uuid) AS mine) m
      LEFT JOIN ${s}.records r ON r.run_id = x.run_id AND r.seq >= $2 AND NOT m.mine
        AND ($2 > 0 OR r.seq = (SELECT min(seq) FROM ${s}.records WHERE run_id = $1))
      WHERE x.run_id = $1 ORDER BY r.seq`,
    // Inside removeLastRecord's transaction, under its FOR NO KEY UPDATE lock on the run row (lockRunForRepair): the
    // record at $2 only while it holds $3 (as BLOB bytes), and with it next_seq, the summary and the hint.
    removeLast: `WITH gone AS (
        DELETE FROM ${s}.records WHERE run_id = $1 AND seq = $2 AND bytes = $3::bytea RETURNING seq),
      run AS (
        UPDATE ${s}.runs SET next_seq = $2, updated_at = now(), status = NULL
        WHERE run_id = $1 AND next_seq = $2 + 1 AND EXISTS (SELECT 1 FROM gone)
        RETURNING run_id),
      dropped AS (DELETE FROM ${s}.summaries x USING run WHERE x.run_id = run.run_id)
      SELECT seq FROM gone, run`,
    // After a connection broke mid-removal (resolveRemoval): the run row, and whether record $2 still holds $3.
    removalState: `SELECT x.next_seq, EXISTS (SELECT 1 FROM ${s}.records WHERE run_id = $1 AND seq = $2 AND bytes = $3::bytea) AS kept
      FROM ${s}.runs x WHERE x.run_id = $1`,
    deleteSummary: `DELETE FROM ${s}.summaries WHERE run_id = $1`,
    readSummary: `SELECT x.record_count, x.byte_length::float8 AS byte_length, x.snapshot_seq, x.summary, r.bytes,
        (extract(epoch FROM r.committed_at) * 1000)::float8 AS committed_ms
      FROM ${s}.summaries x JOIN ${s}.records r ON r.run_id = x.run_id AND r.seq = 0 WHERE x.run_id = $1`,
    // Record 0 with the summary, then the records from the snapshot seq on: two index ranges (an
    // OR of the two in one WHERE would filter every record of the run, O(N) for a long run).
    readRun: `WITH x AS (SELECT record_count, byte_length, snapshot_seq, summary FROM ${s}.summaries WHERE run_id = $1)
      SELECT r.seq, r.bytes, (extract(epoch FROM r.committed_at) * 1000)::float8 AS committed_ms,
          x.record_count, x.byte_length::float8 AS byte_length, x.snapshot_seq, x.summary
        FROM ${s}.records r LEFT JOIN x ON true WHERE r.run_id = $1 AND r.seq = 0
      UNION ALL
      SELECT r.seq, r.bytes, (extract(epoch FROM r.committed_at) * 1000)::float8, NULL, NULL, NULL, NULL
        FROM ${s}.records r WHERE r.run_id = $1 AND r.seq >= greatest(1, coalesce((SELECT snapshot_seq FROM x), 0))
      ORDER BY seq`,
    readFrom: `SELECT seq, bytes, (extract(epoch FROM committed_at) * 1000)::float8 AS committed_ms
      FROM ${s}.records WHERE run_id = $1 AND seq >= $2 ORDER BY seq`,
    readFromAtMost: `SELECT seq, bytes, (extract(epoch FROM committed_at) * 1000)::float8 AS committed_ms
      FROM ${s}.records WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
    listRuns: `SELECT ${LISTING_COLUMNS} FROM ${s}.runs ORDER BY created_at, run_id`,
    // listRunsPage: the cursor by its primary key, then ranges of runs_created_at (created_at,
    // run_id) from a key, nearest first. Run ids compare in the column's collation here (the
    // index's), never taken for runs()'s order: pageReads orders each creation time's runs.
    listing: `SELECT ${LISTING_COLUMNS}, ${CREATED_KEY} AS created_key FROM ${s}.runs WHERE run_id = $1`,
    listingsFirst: `SELECT ${LISTING_COLUMNS}, ${CREATED_KEY} AS created_key FROM ${s}.runs ORDER BY created_at, run_id LIMIT $1`,
    listingsAfter: `SELECT ${LISTING_COLUMNS}, ${CREATED_KEY} AS created_key FROM ${s}.runs
      WHERE (created_at, run_id) > (${CREATED_AT_KEY_PARAM}, $2::text) ORDER BY created_at, run_id LIMIT $3`,
    listingsBefore: `SELECT ${LISTING_COLUMNS}, ${CREATED_KEY} AS created_key FROM ${s}.runs
      WHERE (created_at, run_id) < (${CREATED_AT_KEY_PARAM}, $2::text) ORDER BY created_at DESC, run_id DESC LIMIT $3`,
    claimForkTarget: `INSERT INTO ${s}.runs (run_id, next_seq, created_at, updated_at, status)
      VALUES ($1, $2, now(), now(), $3::text) ON CONFLICT (run_id) DO NOTHING RETURNING run_id`,
    // replaceListing (a run row that keeps no record): the lock, then, as statements of their own,
    // the check for records and the take-over of the row (a fork's; an append's is claimStale).
    lockRun: `SELECT next_seq FROM ${s}.runs WHERE run_id = $1 FOR UPDATE`,
    // A fork's source (forkOnce): shared with other forks, exclusive of appends and repairs.
    lockSource: `SELECT next_seq FROM ${s}.runs WHERE run_id = $1 FOR SHARE`,
    // removeLastRecord's lock: the one an append's update of the row takes, so no append can move
    // the row (nor commit) until the repair ends; an append that inserted its first record meanwhile
    // finds the row moved down and writes nothing (insertNext).
    lockRunForRepair: `SELECT next_seq FROM ${s}.runs WHERE run_id = $1 FOR NO KEY UPDATE`,
    hasRecords: `SELECT EXISTS (SELECT 1 FROM ${s}.records WHERE run_id = $1) AS has_records`,
    takeOverForkTarget: `UPDATE ${s}.runs SET next_seq = $2, created_at = now(), updated_at = now(), status = $3::text
      WHERE run_id = $1 RETURNING run_id`,
    // The condition of the partial index runs_to_recover (migration 4), so the planner uses it.
    runsToRecover: `SELECT run_id FROM ${s}.runs WHERE ${RECOVERY_CANDIDATE_SQL} ORDER BY created_at, run_id`,
    readStatusHint: `SELECT status, next_seq FROM ${s}.runs WHERE run_id = $1`,
    correctStatuses: `UPDATE ${s}.runs r SET status = c.status
      FROM unnest($1::text[], $2::int[], $3::text[]) AS c(run_id, record_count, status)
      WHERE r.run_id = c.run_id AND r.next_seq = c.record_count`,
    copyPrefixAndFork: `INSERT INTO ${s}.records (run_id, seq, bytes, append_token, committed_at)
      SELECT $1::text, seq, bytes, $4::uuid, committed_at FROM ${s}.records WHERE run_id = $2::text AND seq < $3::int
      UNION ALL SELECT $1::text, $3::int, $5::bytea, $4::uuid, now()`,
    tokensAt: `SELECT seq, append_token = $4 AS mine FROM ${s}.records
      WHERE run_id = $1 AND seq >= $2 AND seq < $2 + $3 ORDER BY seq`,
    // The target exists when it keeps a record: a run row without any (NO_RECORDS) is replaced by
    // a fork, so after a broken fork it does not mean another writer took the id.
    forkTokenAt: `SELECT EXISTS (SELECT 1 FROM ${s}.records WHERE run_id = $1) AS target_exists,
      EXISTS (SELECT 1 FROM ${s}.records WHERE run_id = $1 AND seq = $2 AND append_token = $3) AS mine`,
    whoAmI: `SELECT pid, backend_start::text AS started_at FROM pg_stat_activity WHERE pid = pg_backend_pid()`,
    terminateBackend: `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2::timestamptz`,
    backendAlive: `SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2::timestamptz`,
  };
  return {
    ...sql,
    appendFirstWithSummary: withSummary(sql.appendFirst),
    appendNextWithSummary: insertNext(undefined, true),
    appendFirstWithStatus: insertBatch(claimFirst(5)),
    appendNextWithStatus: insertNext(5),
    appendFirstWithSummaryAndStatus: withSummary(insertBatch(claimFirst(9))),
    // The first append into a stale run row ($5: the hint or NULL; $9 after the summary's four).
    appendStale: insertBatch(claimStale(5)),
    appendStaleWithSummary: withSummary(insertBatch(claimStale(9))),
    appendNextWithSummaryAndStatus: insertNext(9, true),
  };
}
