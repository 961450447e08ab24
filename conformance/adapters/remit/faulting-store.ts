/**
 * A Store wrapper for the conformance adapter: raises store errors at named commit points (before
 * the inner append: the write is refused; after it: the write committed but the caller sees an
 * error, as when a connection drops after COMMIT), and, for the canary only, lies about lost
 * conditional appends.
 */
import {
  StoreError, type AppendOutcome, type ForkOutcome, type RecoverySummary, type RunListing, type RunStatusHint, type Store, type StoredRecord,
} from 'remit';
import type { FaultSwitch } from '../common/serve.js';

const KIND_NAMES = [
  '', 'RUN_STARTED', 'NODE_COMPLETED', 'EFFECT_INTENT', 'EFFECT_DONE', 'INTERRUPT_PARKED', 'RESUME_CLAIMED', 'FORKED', 'RUN_COMPLETED', 'RUN_FAILED',
  'EFFECT_ATTEMPT', 'EFFECT_RELEASED',
];
const NODE_FIRST_KINDS = new Set([2, 3, 4, 5, 10, 11]);
const RESUME_CLAIMED = 6;

function u32(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(at, true);
}

function firstName(record: Uint8Array): string {
  const len = u32(record, 12);
  return Buffer.from(record.subarray(16, 16 + len)).toString('utf8');
}

/** The catalogue's name for a commit point of one record (docs/log-format.md framing). */
export function commitPointOf(record: Uint8Array): string {
  const kind = record[9] ?? 0;
  const name = KIND_NAMES[kind] ?? `KIND_${kind}`;
  if (NODE_FIRST_KINDS.has(kind)) return `${name}@${firstName(record)}`;
  if (kind === RESUME_CLAIMED) return `${name}@${firstName(record).split('@')[0]}`;
  return name;
}

/** Same naming from what the sequencer's hooks report (kind names and the node). */
export function commitPointOfKind(kind: string, node: string | undefined): string {
  return kind === 'RUN_STARTED' || kind === 'RUN_COMPLETED' || kind === 'FORKED' || kind === 'RUN_FAILED' || node === undefined ? kind : `${kind}@${node}`;
}

export const INJECTED_STORE_CODE = 'INJECTED_EIO';

/**
 * Canary only: how long a RESUME_CLAIMED append is held before it reaches the store. Resumers the
 * harness releases together then all read the parked run before any claim commits, so the race
 * the missing guard loses happens every time instead of when the processes' wake-ups line up
 * (about one try in ten on a loaded two-core machine without it). A second: a resumer whose process
 * the loaded machine of a full test run wakes a few hundred milliseconds after the other's still
 * reads the run before that claim commits (the canary test's tries are for rarer delays still).
 */
const CANARY_CLAIM_HOLD_MS = 1000;

export class FaultingStore implements Store {
  // The inner store's optional reads and index pass through as they are (faults are injected at
  // commit points only), so the harness exercises the stored summary and the recovery index too.
  readonly readSummary: Store['readSummary'];
  readonly readRun: Store['readRun'];
  readonly listRunsToRecover: Store['listRunsToRecover'];
  readonly correctRunStatuses: Store['correctRunStatuses'];
  readonly removeLastRecord: Store['removeLastRecord'];

  constructor(
    private readonly inner: Store,
    private readonly faults: FaultSwitch,
    private readonly lieAboutLostAppends: boolean,
  ) {
    this.readSummary = inner.readSummary?.bind(inner);
    this.readRun = inner.readRun?.bind(inner);
    this.listRunsToRecover = inner.listRunsToRecover?.bind(inner);
    this.correctRunStatuses = inner.correctRunStatuses?.bind(inner);
    this.removeLastRecord = inner.removeLastRecord?.bind(inner);
  }

  get description(): string {
    return this.inner.description;
  }

  private storeErrorAt(points: string[], phase: 'before' | 'after', operation: string, runId: string): void {
    if (this.faults.current?.kind !== 'store-error') return;
    for (const p of points) {
      this.faults.hit(`${phase}-commit:${p}`, () => new StoreError(this.inner.description, operation, INJECTED_STORE_CODE, { runId }));
    }
  }

  readLog(runId: string, fromSeq?: number): Promise<Uint8Array> {
    return this.inner.readLog(runId, fromSeq);
  }

  readRecords(runId: string, fromSeq?: number): Promise<StoredRecord[]> {
    return this.inner.readRecords(runId, fromSeq);
  }

  async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    const points = records.map(commitPointOf);
    this.storeErrorAt(points, 'before', 'append', runId);
    if (this.lieAboutLostAppends && records.some((r) => r[9] === RESUME_CLAIMED)) await new Promise((r) => setTimeout(r, CANARY_CLAIM_HOLD_MS));
    const outcome = await this.inner.append(runId, expectedSeq, records, summary, runStatus);
    if (!outcome.committed && this.lieAboutLostAppends) {
      // The canary's missing guard: a lost conditional append is reported as committed.
      return { committed: true, nextSeq: expectedSeq + records.length };
    }
    if (outcome.committed) this.storeErrorAt(points, 'after', 'append', runId);
    return outcome;
  }

  async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    this.storeErrorAt(['FORKED'], 'before', 'fork', sourceRunId);
    const outcome = await this.inner.fork(sourceRunId, prefixRecords, targetRunId, forkRecord, runStatus);
    if (outcome.committed) this.storeErrorAt(['FORKED'], 'after', 'fork', sourceRunId);
    return outcome;
  }

  listRuns(): Promise<RunListing[]> {
    return this.inner.listRuns();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
