/**
 * Broken stores: each is the memory store with one promise of the `Store` interface
 * (src/store/store.ts, docs/guide.md "Stores") broken, and nothing else. The store contract
 * suite (src/testing/store-contract.ts) must fail on every one of them: a suite that passes a
 * store which loses, reorders or shares bytes, or lets two writers commit at one seq, would tell a
 * user with such a store that it is sound. `store-mutants.contract.ts` runs the suite on each,
 * `src/testing/store-contract-mutants.test.ts` checks that each one fails it and the memory store
 * passes.
 *
 * The list is `STORE_MUTANTS` at the end of this file, one line per mutant saying what it breaks.
 */

import { StoreError } from '../src/errors.js';
import { bytesEqual, concatRecords } from '../src/store/common.js';
import { MemoryBacking, MemoryStore, type MemoryStoreOptions } from '../src/store/memory.js';
import type {
  AppendOutcome, ForkOutcome, RecoverySummary, RunListing, RunStatusCorrection, RunStatusHint, StoredRecord,
} from '../src/store/store.js';

type MutantClass = new (options?: MemoryStoreOptions) => MemoryStore;

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The backing's run, if any (mutants reach past the store's own copies on purpose). */
function runOf(store: MemoryStore, runId: string) {
  return store.backing.runs.get(runId);
}

// --- appends that report a commit they did not make as promised ---

/**
 * Remembers the next seq of each run it wrote to and, when an append is at that seq, writes
 * without a condition (an upsert at the seq: "this handle wrote the last records"), over what
 * another handle committed meanwhile.
 */
class TrustsItsOwnLastSeq extends MemoryStore {
  private readonly lastSeq = new Map<string, number>();
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const run = runOf(this, runId);
    if (run !== undefined && expectedSeq > 0 && this.lastSeq.get(runId) === expectedSeq) run.records.length = Math.min(run.records.length, expectedSeq);
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed) this.lastSeq.set(runId, outcome.nextSeq);
    return outcome;
  }
}

/** Writes the records of a batch before one over 1 MiB (its item limit), then fails: not all or nothing. */
class CommitsBatchUpToLargeRecord extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const large = records.findIndex((r) => r.length > 1 << 20);
    if (large < 0) return super.append(runId, expectedSeq, records, summary, runStatus);
    if (large > 0) await super.append(runId, expectedSeq, records.slice(0, large), undefined, runStatus);
    throw new StoreError(this.description, 'append', 'ITEM_TOO_LARGE', { runId, seq: expectedSeq + large }, new Error('a record is over the item limit of 1 MiB'));
  }
}

class DropsLastRecordOfBatch extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed && records.length > 1) runOf(this, runId)!.records.pop();
    return outcome;
  }
}

class DropsLaterBatches extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed && expectedSeq > 0) runOf(this, runId)!.records.length = expectedSeq;
    return outcome;
  }
}

class DropsRecordsPastOneHundredInABatch extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed && records.length > 100) runOf(this, runId)!.records.length = expectedSeq + 100;
    return outcome;
  }
}

/** Reads return one page: the records up to 1 MiB (a common response size limit), the rest left out. */
class ReadsOnePageOfOneMiB extends MemoryStore {
  override async readRecords(runId: string, fromSeq?: number): Promise<StoredRecord[]> {
    const page: StoredRecord[] = [];
    let bytes = 0;
    for (const record of await super.readRecords(runId, fromSeq)) {
      if (page.length > 0 && bytes + record.bytes.length > 1 << 20) break;
      page.push(record);
      bytes += record.bytes.length;
    }
    return page;
  }
  override async readLog(runId: string, fromSeq?: number): Promise<Uint8Array> {
    return concatRecords(await this.readRecords(runId, fromSeq));
  }
}

class TruncatesLargeRecords extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    return super.append(runId, expectedSeq, records.map((r) => r.subarray(0, 65_535)), summary, runStatus);
  }
}

class KeepsBytesAsText extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed && records.length > 0) {
      for (const r of runOf(this, runId)!.records.slice(expectedSeq)) r.bytes = new TextEncoder().encode(new TextDecoder().decode(r.bytes));
    }
    return outcome;
  }
}

class ReversesBatch extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed && records.length > 1) {
      const stored = runOf(this, runId)!.records;
      const bytes = stored.slice(expectedSeq).map((r) => r.bytes).reverse();
      bytes.forEach((b, i) => { stored[expectedSeq + i]!.bytes = b; });
    }
    return outcome;
  }
}

class CommitsWithoutCheckingSeqs extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const run = runOf(this, runId);
    if ((run?.records.length ?? 0) !== expectedSeq || records.length === 0) return super.append(runId, expectedSeq, records, summary, runStatus);
    const now = Date.now();
    const target = run ?? { records: [], createdAtMs: now, updatedAtMs: now };
    records.forEach((bytes, i) => target.records.push({ seq: expectedSeq + i, bytes: bytes.slice(), committedAtMs: now }));
    this.backing.runs.set(runId, target);
    return { committed: true, nextSeq: target.records.length };
  }
}

// --- the condition: one writer per seq ---

/** Checks the seq, yields, then writes over whatever a racer wrote meanwhile. */
class CheckThenWrite extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    if ((runOf(this, runId)?.records.length ?? 0) !== expectedSeq || records.length === 0) return super.append(runId, expectedSeq, records, summary, runStatus);
    await tick();
    const run = runOf(this, runId);
    if (run !== undefined && expectedSeq > 0) run.records.length = expectedSeq;
    else this.backing.runs.delete(runId);
    return super.append(runId, expectedSeq, records, summary, runStatus);
  }
}

/** Conditional for an existing run, but racing creators of a new run both commit (the last one's records stay). */
class RacyCreate extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    if (expectedSeq !== 0 || runOf(this, runId) !== undefined || records.length === 0) return super.append(runId, expectedSeq, records, summary, runStatus);
    await tick();
    this.backing.runs.delete(runId);
    return super.append(runId, expectedSeq, records, summary, runStatus);
  }
}

class EmptyBatchIgnoresSeq extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    if (records.length === 0) return { committed: true, nextSeq: expectedSeq };
    return super.append(runId, expectedSeq, records, summary, runStatus);
  }
}

// --- outcomes that misreport ---

class CommitReportsOldNextSeq extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    return outcome.committed ? { committed: true, nextSeq: expectedSeq } : outcome;
  }
}

/** A refusal reports the next seq the run had when this view first saw it (a cache), and no tail. */
class RefusalReportsCachedNextSeq extends MemoryStore {
  private readonly seen = new Map<string, number>();
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (!this.seen.has(runId)) this.seen.set(runId, outcome.nextSeq);
    return outcome.committed ? outcome : { committed: false, nextSeq: this.seen.get(runId)! };
  }
}

class RefusalTailStartsAtLastRecord extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed || outcome.tail === undefined || outcome.tail.length < 2) return outcome;
    return { ...outcome, tail: outcome.tail.slice(-1) };
  }
}

class RefusalCreatesListing extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (!this.backing.runs.has(runId)) this.backing.runs.set(runId, { records: [], createdAtMs: Date.now(), updatedAtMs: Date.now() });
    return outcome;
  }
}

// --- reads ---

/** Reads in pages of 16 records and forgets a last page that is not full (only runs of more than 16). */
class ReadsMissPartialLastPage extends MemoryStore {
  override async readRecords(runId: string, fromSeq = 0): Promise<StoredRecord[]> {
    const all = await super.readRecords(runId, 0);
    const kept = all.length > 16 ? all.slice(0, all.length - (all.length % 16)) : all;
    return kept.filter((r) => r.seq >= fromSeq);
  }
}

class ReadFromSeqOffByOne extends MemoryStore {
  override async readRecords(runId: string, fromSeq = 0): Promise<StoredRecord[]> {
    return super.readRecords(runId, fromSeq > 0 ? fromSeq + 1 : 0);
  }
}

/** Remembers what it read and answers from that until the run's record count changes through this view. */
class ReadsFromStaleCache extends MemoryStore {
  private readonly cache = new Map<string, StoredRecord[]>();
  override async readRecords(runId: string, fromSeq = 0): Promise<StoredRecord[]> {
    if (!this.cache.has(runId)) this.cache.set(runId, await super.readRecords(runId, 0));
    return this.cache.get(runId)!.filter((r) => r.seq >= fromSeq).map((r) => ({ ...r, bytes: r.bytes.slice() }));
  }
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed && records.length > 0 && expectedSeq === 0) this.cache.delete(runId);
    return outcome;
  }
}

/**
 * A per-handle read cache that this handle's own writes refresh (a wrapper a service might put
 * in front of its store): it reads its own writes, and never another handle's committed since.
 */
class ReadsMissOtherHandlesWrites extends MemoryStore {
  private readonly cache = new Map<string, StoredRecord[]>();
  override async readRecords(runId: string, fromSeq = 0): Promise<StoredRecord[]> {
    if (!this.cache.has(runId)) this.cache.set(runId, await super.readRecords(runId, 0));
    return this.cache.get(runId)!.filter((r) => r.seq >= fromSeq).map((r) => ({ ...r, bytes: r.bytes.slice() }));
  }
  override async readLog(runId: string, fromSeq = 0): Promise<Uint8Array> {
    return concatRecords(await this.readRecords(runId, fromSeq));
  }
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    this.cache.delete(runId);
    return super.append(runId, expectedSeq, records, summary, runStatus);
  }
  override async fork(...args: Parameters<MemoryStore['fork']>): ReturnType<MemoryStore['fork']> {
    this.cache.clear();
    return super.fork(...args);
  }
  override async removeLastRecord(runId: string, seq: number, expected: Uint8Array): Promise<boolean> {
    this.cache.delete(runId);
    return super.removeLastRecord(runId, seq, expected);
  }
}

/** The reads besides the log that a handle may answer from what it saw. */
type CachedRead = 'listRuns' | 'listRunsToRecover' | 'readStatusHint' | 'readSummary' | 'readRun';

/**
 * A per-handle cache of one of those reads, refreshed by this handle's own writes only (the same
 * wrapper for another read): its answer misses what another handle committed since.
 */
function cachesOtherRead(read: CachedRead): MutantClass {
  return class extends MemoryStore {
    private readonly answers = new Map<string, unknown>();
    constructor(options?: MemoryStoreOptions) {
      super(options);
      const original = (this[read] as (...args: unknown[]) => Promise<unknown>).bind(this);
      Object.defineProperty(this, read, {
        value: async (...args: unknown[]) => {
          const key = JSON.stringify(args);
          if (!this.answers.has(key)) this.answers.set(key, await original(...args));
          return structuredClone(this.answers.get(key));
        },
      });
    }
    override async append(...args: Parameters<MemoryStore['append']>): ReturnType<MemoryStore['append']> {
      this.answers.clear();
      return super.append(...args);
    }
    override async fork(...args: Parameters<MemoryStore['fork']>): ReturnType<MemoryStore['fork']> {
      this.answers.clear();
      return super.fork(...args);
    }
  };
}

class ReadRecordsShareStoredBytes extends MemoryStore {
  override async readRecords(runId: string, fromSeq = 0): Promise<StoredRecord[]> {
    return (runOf(this, runId)?.records ?? []).slice(Math.max(0, fromSeq));
  }
}

/** readLog answers in one buffer it reuses: the next read overwrites what an earlier one returned. */
class ReadLogReusesBuffer extends MemoryStore {
  private scratch = new Uint8Array(1024);
  override async readLog(runId: string, fromSeq = 0): Promise<Uint8Array> {
    const log = concatRecords(await super.readRecords(runId, fromSeq));
    if (log.length > this.scratch.length) this.scratch = new Uint8Array(log.length * 2);
    this.scratch.set(log);
    return this.scratch.subarray(0, log.length);
  }
}

class KeepsCallersRecordBytes extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed && records.length > 0) records.forEach((bytes, i) => { runOf(this, runId)!.records[expectedSeq + i]!.bytes = bytes; });
    return outcome;
  }
}

class KeepsCallersSummaryBytes extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const before = runOf(this, runId)?.summary;
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    const run = runOf(this, runId);
    if (outcome.committed && summary !== undefined && run?.summary !== before) run!.summary = summary;
    return outcome;
  }
}

class CommitTimeIsReadTime extends MemoryStore {
  override async readRecords(runId: string, fromSeq = 0): Promise<StoredRecord[]> {
    return (await super.readRecords(runId, fromSeq)).map((r) => ({ ...r, committedAtMs: Date.now() }));
  }
}

class NormalisesRunIds extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    return super.append(runId.normalize('NFC').toLowerCase(), expectedSeq, records, summary, runStatus);
  }
  override async readRecords(runId: string, fromSeq = 0): Promise<StoredRecord[]> {
    return super.readRecords(runId.normalize('NFC').toLowerCase(), fromSeq);
  }
}

// --- durability: what was committed stays ---

/**
 * Write-behind: appends reach the backing at once, but only a flush (a timer, every few seconds)
 * makes them durable; close() goes back to the last flushed state, losing what came after.
 */
class CloseLosesUnflushedWrites extends MemoryStore {
  private static readonly flushed = new WeakMap<MemoryBacking, Map<string, unknown>>();
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    if (!CloseLosesUnflushedWrites.flushed.has(this.backing)) {
      CloseLosesUnflushedWrites.flushed.set(this.backing, structuredClone(this.backing.runs));
      setTimeout(() => CloseLosesUnflushedWrites.flushed.delete(this.backing), 5_000).unref();
    }
    return super.append(runId, expectedSeq, records, summary, runStatus);
  }
  override async close(): Promise<void> {
    const flushed = CloseLosesUnflushedWrites.flushed.get(this.backing);
    CloseLosesUnflushedWrites.flushed.delete(this.backing);
    if (flushed !== undefined) {
      this.backing.runs.clear();
      for (const [id, run] of flushed) this.backing.runs.set(id, run as never);
    }
    return super.close();
  }
}

// --- listings ---

class ListsAtMostOneHundredRuns extends MemoryStore {
  override async listRuns(): Promise<RunListing[]> {
    return (await super.listRuns()).slice(0, 100);
  }
}

/** One page of 1,000, a common page size of list APIs, for the listing and the runs to recover. */
class ListsOnePageOfOneThousand extends MemoryStore {
  override async listRuns(): Promise<RunListing[]> {
    return (await super.listRuns()).slice(0, 1_000);
  }
  override async listRunsToRecover(): Promise<string[]> {
    return (await super.listRunsToRecover()).slice(0, 1_000);
  }
}

/** Leaves out of the listing the runs whose hint is completed (a listing that is really a "recent activity" index). */
class ListingOmitsCompleted extends MemoryStore {
  override async listRuns(): Promise<RunListing[]> {
    return (await super.listRuns()).filter((listing) => runOf(this, listing.runId)?.status !== 'completed');
  }
}

/** Lists each run with the next seq it had after the first batch this view wrote (a cache never updated). */
class ListingNextSeqFromCreation extends MemoryStore {
  private readonly created = new Map<string, number>();
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    if (outcome.committed && expectedSeq === 0 && records.length > 0) this.created.set(runId, outcome.nextSeq);
    return outcome;
  }
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    const outcome = await super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
    if (outcome.committed) this.created.set(targetRunId, prefixRecords + 1);
    return outcome;
  }
  override async listRuns(): Promise<RunListing[]> {
    return (await super.listRuns()).map((l) => ({ ...l, nextSeq: this.created.get(l.runId) ?? l.nextSeq }));
  }
}

class ListingHintWrong extends MemoryStore {
  override async listRuns(): Promise<RunListing[]> {
    return (await super.listRuns()).map((l) => (typeof l.statusHint === 'string' ? { ...l, statusHint: 'completed' as const } : l));
  }
  override async listRunsToRecover(): Promise<string[]> {
    return [...this.backing.runs.entries()]
      .filter(([, run]) => run.status === undefined || !['parked', 'completed', 'failed'].includes(run.status))
      .sort(([a, ra], [b, rb]) => ra.createdAtMs - rb.createdAtMs || a.localeCompare(b))
      .map(([id]) => id);
  }
}

// --- status hints ---

class HintWrittenOnRefusal extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    const run = runOf(this, runId);
    if (!outcome.committed && run !== undefined && runStatus !== undefined) run.status = runStatus;
    return outcome;
  }
}

class HintsIgnored extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary): Promise<AppendOutcome> {
    return super.append(runId, expectedSeq, records, summary);
  }
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array): Promise<ForkOutcome> {
    return super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord);
  }
}

class RecoverListsOnlyRunning extends MemoryStore {
  override async listRunsToRecover(): Promise<string[]> {
    return (await this.listRuns()).filter((r) => r.statusHint === 'running').map((r) => r.runId);
  }
}

class RecoverListUnordered extends MemoryStore {
  override async listRunsToRecover(): Promise<string[]> {
    return (await super.listRunsToRecover()).reverse();
  }
}

class CorrectionIgnoresRecordCount extends MemoryStore {
  override async correctRunStatuses(corrections: readonly RunStatusCorrection[]): Promise<number> {
    const current = corrections.map((c) => ({ ...c, recordCount: runOf(this, c.runId)?.records.length ?? c.recordCount }));
    return super.correctRunStatuses(current);
  }
}

/** Writes each correction as it checks it: one it refuses leaves the ones before it written. */
class CorrectionsNotAtomic extends MemoryStore {
  override async correctRunStatuses(corrections: readonly RunStatusCorrection[]): Promise<number> {
    let written = 0;
    for (const correction of corrections) written += await super.correctRunStatuses([correction]);
    return written;
  }
}

class ForkCopiesSourceHint extends MemoryStore {
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    const outcome = await super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
    const source = runOf(this, sourceRunId);
    if (outcome.committed && runStatus === undefined && source?.status !== undefined) runOf(this, targetRunId)!.status = source.status;
    return outcome;
  }
}

// --- fork ---

class ForkCopiesWholeSource extends MemoryStore {
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    const outcome = await super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
    if (outcome.committed) {
      const target = runOf(this, targetRunId)!;
      const rest = runOf(this, sourceRunId)!.records.slice(prefixRecords).map((r) => ({ ...r, bytes: r.bytes.slice() }));
      target.records.splice(prefixRecords, 0, ...rest);
    }
    return outcome;
  }
}

class ForkOverwritesTarget extends MemoryStore {
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    if ((runOf(this, sourceRunId)?.records.length ?? 0) >= prefixRecords) this.backing.runs.delete(targetRunId);
    return super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
  }
}

class RefusedForkCreatesListing extends MemoryStore {
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    const outcome = await super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
    if (!outcome.committed && !this.backing.runs.has(targetRunId)) this.backing.runs.set(targetRunId, { records: [], createdAtMs: Date.now(), updatedAtMs: Date.now() });
    return outcome;
  }
}

/** Checks the target is free, yields, then writes over whatever a racer created meanwhile. */
class CheckThenFork extends MemoryStore {
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    if (this.backing.runs.has(targetRunId)) return super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
    await tick();
    this.backing.runs.delete(targetRunId);
    return super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
  }
}

class ForkRefusesWholeSource extends MemoryStore {
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    if (!this.backing.runs.has(targetRunId) && runOf(this, sourceRunId)?.records.length === prefixRecords) return { committed: false, reason: 'SOURCE_TOO_SHORT' };
    return super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
  }
}

/** Takes a prefix one record longer than the source (an off-by-one in the length check), leaving a gap before the fork record. */
class ForkPastSourceEnd extends MemoryStore {
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    const source = runOf(this, sourceRunId);
    if (source === undefined || source.records.length !== prefixRecords - 1 || this.backing.runs.has(targetRunId)) return super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
    const now = Date.now();
    const records = source.records.map((r) => ({ ...r, bytes: r.bytes.slice() }));
    records.push({ seq: prefixRecords, bytes: forkRecord.slice(), committedAtMs: now });
    this.backing.runs.set(targetRunId, { records, createdAtMs: now, updatedAtMs: now });
    return { committed: true };
  }
}

class ForkCopiesSummary extends MemoryStore {
  override async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    const outcome = await super.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
    const summary = runOf(this, sourceRunId)?.summary;
    if (outcome.committed && summary !== undefined) runOf(this, targetRunId)!.summary = { ...summary, summary: summary.summary.slice() };
    return outcome;
  }
}

// --- recovery summaries ---

class SummaryKeptOnRefusal extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    const run = runOf(this, runId);
    if (!outcome.committed && run !== undefined && summary !== undefined) run.summary = { ...summary, summary: summary.summary.slice() };
    return outcome;
  }
}

class SummaryKeptPastRecords extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
    const run = runOf(this, runId);
    if (outcome.committed && run !== undefined && summary !== undefined) run.summary = { ...summary, summary: summary.summary.slice() };
    return outcome;
  }
}

class SummaryWithLastRecord extends MemoryStore {
  override async readSummary(runId: string) {
    const found = await super.readSummary(runId);
    const last = runOf(this, runId)?.records.at(-1);
    return found === null || last === undefined ? found : { ...found, runStarted: { ...last, bytes: last.bytes.slice() } };
  }
}

class ReadRunReadsFromZero extends MemoryStore {
  override async readRun(runId: string) {
    return { found: await this.readSummary(runId), records: await this.readRecords(runId, 0) };
  }
}

class DeleteSummaryForgetsEveryRun extends MemoryStore {
  override async deleteSummary(runId: string): Promise<void> {
    for (const id of this.backing.runs.keys()) await super.deleteSummary(id);
    return super.deleteSummary(runId);
  }
}

// --- repair's removal ---

class RemovesWithoutComparingBytes extends MemoryStore {
  override async removeLastRecord(runId: string, seq: number, expected: Uint8Array): Promise<boolean> {
    const last = runOf(this, runId)?.records.at(-1);
    return super.removeLastRecord(runId, seq, last?.seq === seq ? last.bytes : expected);
  }
}

/** Checks the last record's bytes, waits a round trip, then removes whatever record is last by then. */
class RemovalCheckThenDelete extends MemoryStore {
  override async removeLastRecord(runId: string, seq: number, expected: Uint8Array): Promise<boolean> {
    const last = runOf(this, runId)?.records.at(-1);
    if (seq === 0 || last === undefined || last.seq !== seq || !bytesEqual(last.bytes, expected)) return false;
    await tick();
    const run = runOf(this, runId);
    if (run === undefined || run.records.length <= 1) return false;
    run.records.pop();
    delete run.summary;
    delete run.status;
    return true;
  }
}

class RemovesRecordZero extends MemoryStore {
  override async removeLastRecord(runId: string, seq: number, expected: Uint8Array): Promise<boolean> {
    const run = runOf(this, runId);
    if (seq === 0 && run?.records.length === 1) {
      run.records.pop();
      return true;
    }
    return super.removeLastRecord(runId, seq, expected);
  }
}

class RemovalKeepsSummaryAndHint extends MemoryStore {
  override async removeLastRecord(runId: string, seq: number, expected: Uint8Array): Promise<boolean> {
    const run = runOf(this, runId);
    const { summary, status } = run ?? {};
    const removed = await super.removeLastRecord(runId, seq, expected);
    if (removed && run !== undefined) Object.assign(run, summary === undefined ? {} : { summary }, status === undefined ? {} : { status });
    return removed;
  }
}

// --- refusals the interface asks for ---

class AcceptsBadRunIds extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    return super.append(runId.replace(/[\ud800-\udfff\u0000]/gu, '?'), expectedSeq, records, summary, runStatus);
  }
}

class AcceptsBadRunStatus extends MemoryStore {
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const known = runStatus === undefined || ['running', 'parked', 'completed', 'failed'].includes(runStatus);
    return super.append(runId, expectedSeq, records, summary, known ? runStatus : undefined);
  }
}

class UnknownRunThrows extends MemoryStore {
  override async readRecords(runId: string, fromSeq = 0): Promise<StoredRecord[]> {
    if (!this.backing.runs.has(runId)) throw new StoreError(this.description, 'readRecords', 'NO_SUCH_RUN', { runId });
    return super.readRecords(runId, fromSeq);
  }
}

export interface StoreMutant {
  name: string;
  /** The promise it breaks. */
  breaks: string;
  Store: MutantClass;
}

const mutant = (name: string, Store: MutantClass, breaks: string): StoreMutant => ({ name, breaks, Store });

/** Every mutant, one line each: its name, its class, the promise it breaks. */
export const STORE_MUTANTS: readonly StoreMutant[] = [
  mutant('drops-last-record-of-batch', DropsLastRecordOfBatch, 'append is all or nothing: reports a batch committed but keeps all but its last record'),
  mutant('drops-later-batches', DropsLaterBatches, 'a committed append is readable: reports batches after the first committed and keeps none of them'),
  mutant('drops-records-past-100-in-a-batch', DropsRecordsPastOneHundredInABatch, 'append is all or nothing whatever the batch size: a batch of more than 100 keeps only its first 100'),
  mutant('truncates-large-records', TruncatesLargeRecords, 'a store keeps bytes exactly: records longer than 64 KiB are cut (a column type too small)'),
  mutant('keeps-bytes-as-text', KeepsBytesAsText, 'a store keeps bytes exactly: bytes stored as UTF-8 text, so bytes that are not text change'),
  mutant('reverses-batch', ReversesBatch, 'records are kept in seq order: a batch is stored in reverse'),
  mutant('commits-without-checking-seqs', CommitsWithoutCheckingSeqs, 'a batch whose records carry the wrong seqs is refused (StoreError), writing nothing'),
  mutant('check-then-write', CheckThenWrite, 'of two writers at one seq exactly one commits: the check and the write are not atomic'),
  mutant('racy-create', RacyCreate, 'of two creators of one run exactly one commits: the first append of a new run is not conditional'),
  mutant('empty-batch-ignores-seq', EmptyBatchIgnoresSeq, 'every append is conditional on the next seq: an empty batch commits at any seq'),
  mutant('commit-reports-old-next-seq', CommitReportsOldNextSeq, 'a committed append reports the run\'s next seq after it: reports the one before'),
  mutant('refusal-reports-cached-next-seq', RefusalReportsCachedNextSeq, 'a refused append reports the run\'s current next seq: reports a stale cached one'),
  mutant('refusal-tail-starts-at-last-record', RefusalTailStartsAtLastRecord, 'a refusal\'s tail is every record from expectedSeq on: reports only the last'),
  mutant('refusal-creates-listing', RefusalCreatesListing, 'a refused append writes nothing: it leaves an empty listing of an unknown run'),
  mutant('reads-miss-partial-last-page', ReadsMissPartialLastPage, 'reads return every record to the end: runs of more than 16 records lose a last partial page'),
  mutant('read-from-seq-off-by-one', ReadFromSeqOffByOne, 'reads from fromSeq are inclusive: they start one record later'),
  mutant('reads-from-stale-cache', ReadsFromStaleCache, 'reads see every committed record: a view answers from what it read before'),
  mutant('reads-miss-other-handles-writes', ReadsMissOtherHandlesWrites, 'a read sees what every handle committed before it: a handle answers from a cache only its own writes refresh'),
  mutant('listing-misses-other-handles-writes', cachesOtherRead('listRuns'), 'listRuns sees what every handle committed: a handle answers from a cache only its own writes refresh'),
  mutant('candidates-miss-other-handles-writes', cachesOtherRead('listRunsToRecover'), 'listRunsToRecover sees every handle\'s hints: a handle answers from a cache only its own writes refresh'),
  mutant('hint-misses-other-handles-writes', cachesOtherRead('readStatusHint'), 'readStatusHint sees every handle\'s hints: a handle answers from a cache only its own writes refresh'),
  mutant('summary-misses-other-handles-writes', cachesOtherRead('readSummary'), 'readSummary sees every handle\'s summaries: a handle answers from a cache only its own writes refresh'),
  mutant('read-run-misses-other-handles-writes', cachesOtherRead('readRun'), 'readRun sees what every handle committed: a handle answers from a cache only its own writes refresh'),
  mutant('read-records-share-stored-bytes', ReadRecordsShareStoredBytes, 'returned bytes are copies: readRecords hands out the stored arrays'),
  mutant('read-log-reuses-buffer', ReadLogReusesBuffer, 'returned bytes are the caller\'s: readLog answers in a buffer the next read overwrites'),
  mutant('keeps-callers-record-bytes', KeepsCallersRecordBytes, 'appended bytes are copied: the store keeps the caller\'s arrays'),
  mutant('keeps-callers-summary-bytes', KeepsCallersSummaryBytes, 'a stored summary is a copy: the store keeps the caller\'s summary bytes'),
  mutant('commit-time-is-read-time', CommitTimeIsReadTime, 'committedAtMs is the commit time: reported as the time of the read'),
  mutant('normalises-run-ids', NormalisesRunIds, 'a run id is kept exactly: ids are normalised and lower-cased'),
  mutant('close-loses-unflushed-writes', CloseLosesUnflushedWrites, 'a committed append is durable: close() drops what was appended since the last flush'),
  mutant('lists-at-most-100-runs', ListsAtMostOneHundredRuns, 'listRuns lists every run: only the first page of 100'),
  mutant('lists-one-page-of-1000', ListsOnePageOfOneThousand, 'listRuns and listRunsToRecover list every run: only a first page of 1,000'),
  mutant('listing-omits-completed', ListingOmitsCompleted, 'listRuns lists every run whatever its hint: completed runs are left out'),
  mutant('trusts-its-own-last-seq', TrustsItsOwnLastSeq, 'an append is conditional in the store: a handle writes unconditionally at the seq it last left a run at'),
  mutant('commits-batch-up-to-large-record', CommitsBatchUpToLargeRecord, 'a batch commits whole or not at all: the records before one over 1 MiB are written, then it fails'),
  mutant('reads-one-page-of-1-mib', ReadsOnePageOfOneMiB, 'reads return every record: one page of 1 MiB'),
  mutant('removal-check-then-delete', RemovalCheckThenDelete, 'removeLastRecord is conditional in the store: it checks, waits, then removes whatever is last'),
  mutant('listing-next-seq-from-creation', ListingNextSeqFromCreation, 'a listing\'s nextSeq is the run\'s: it stays at the run\'s first batch'),
  mutant('listing-hint-wrong', ListingHintWrong, 'a listing\'s status hint is the stored one: every hint is listed as completed'),
  mutant('hint-written-on-refusal', HintWrittenOnRefusal, 'a hint changes only with a committed append: a refused one writes it'),
  mutant('hints-ignored', HintsIgnored, 'a store with listRunsToRecover keeps the hints appends and forks pass: it drops them'),
  mutant('recover-lists-only-running', RecoverListsOnlyRunning, 'listRunsToRecover lists runs whose hint is running or unknown: leaves out unknown ones'),
  mutant('recover-list-unordered', RecoverListUnordered, 'listRunsToRecover is in listRuns order: reversed'),
  mutant('correction-ignores-record-count', CorrectionIgnoresRecordCount, 'correctRunStatuses writes only while the run holds recordCount records: writes regardless'),
  mutant('corrections-not-atomic', CorrectionsNotAtomic, 'correctRunStatuses is one transaction: a refused correction leaves the ones before it written'),
  mutant('fork-copies-source-hint', ForkCopiesSourceHint, 'a fork writes the new run\'s own hint (none: unknown): it inherits the source\'s'),
  mutant('fork-copies-whole-source', ForkCopiesWholeSource, 'a fork copies records 0..prefixRecords-1 then the fork record: it copies the whole source'),
  mutant('check-then-fork', CheckThenFork, 'of concurrent forks into one target exactly one commits: the check and the write are not atomic'),
  mutant('fork-refuses-whole-source', ForkRefusesWholeSource, 'a fork of every record of the source commits: refused as SOURCE_TOO_SHORT'),
  mutant('fork-past-source-end', ForkPastSourceEnd, 'a fork from a source shorter than prefixRecords is refused (SOURCE_TOO_SHORT): one record short is taken, leaving a gap'),
  mutant('fork-overwrites-target', ForkOverwritesTarget, 'a fork into an existing run is refused (TARGET_EXISTS): it replaces the run'),
  mutant('refused-fork-creates-listing', RefusedForkCreatesListing, 'a refused fork writes nothing: it leaves an empty listing of the target'),
  mutant('fork-copies-summary', ForkCopiesSummary, 'a fork target has no recovery summary: it gets the source\'s'),
  mutant('summary-kept-on-refusal', SummaryKeptOnRefusal, 'a summary is kept only when its append commits: a refused append stores it'),
  mutant('summary-kept-past-records', SummaryKeptPastRecords, 'a summary is kept only if it covers at most the run\'s records: one past them is stored'),
  mutant('summary-with-last-record', SummaryWithLastRecord, 'readSummary returns record 0 with the summary: returns the last record'),
  mutant('read-run-reads-from-zero', ReadRunReadsFromZero, 'readRun returns records from the summary\'s snapshot seq: returns every record'),
  mutant('delete-summary-forgets-every-run', DeleteSummaryForgetsEveryRun, 'deleteSummary forgets one run\'s summary: forgets every run\'s'),
  mutant('removes-without-comparing-bytes', RemovesWithoutComparingBytes, 'removeLastRecord removes only a last record holding the expected bytes: ignores the bytes'),
  mutant('removes-record-zero', RemovesRecordZero, 'removeLastRecord never removes record 0: removes it, leaving a run listed but empty'),
  mutant('removal-keeps-summary-and-hint', RemovalKeepsSummaryAndHint, 'a removal drops the summary and makes the hint unknown: keeps both'),
  mutant('accepts-bad-run-ids', AcceptsBadRunIds, 'a run id the store could not keep exactly is refused: a lone surrogate or NUL is replaced'),
  mutant('accepts-bad-run-status', AcceptsBadRunStatus, 'a hint other than the four is refused (BAD_RUN_STATUS): it is dropped silently'),
  mutant('unknown-run-throws', UnknownRunThrows, 'an unknown run reads as empty: reading it throws'),
];

/** The store these mutants break, unbroken: the suite must pass it. */
export const CONTROL_STORE: MutantClass = MemoryStore;

/** The name the control's suite runs under, and each mutant's (`store contract: <name>`). */
export const CONTROL_NAME = 'memory (control)';
export const mutantSuiteName = (mutant: string): string => `mutant ${mutant}`;
