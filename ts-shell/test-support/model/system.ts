/**
 * The model-based test's two sides: the real system (a store, the refund workflow over a
 * deduplicating sink, a recovery core; a fresh Remit per command) and an independent model of
 * what each run should be (its input, the refund policy recomputed here, its approval, and the
 * path a fault-free run takes). After every command, `checkAll` asserts the six properties.
 */

import { join } from 'node:path';
import { z } from 'zod';
import { sinkDeps } from '../../../examples/refund/deps.js';
import { Approval, createRefundWorkflow, RefundState, type RefundWorkflow } from '../../../examples/refund/workflow.js';
import type { RecoveryCore } from '../../src/core/types.js';
import { MemoryEffectSink, receiptIdFor, type EffectCounts, type EffectReceipt, type EffectSink } from '../../src/testing/effect-sink.js';
import { NO_HOOKS, type SequencerHooks } from '../../src/faults.js';
import { parseEffectKey } from '../../src/ids.js';
import type { Json } from '../../src/json.js';
import { Remit, type FenceOptions } from '../../src/remit.js';
import { MemoryBacking, MemoryStore } from '../../src/store/memory.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import {
  checkCheckpointValidity, checkConsumeOnce, checkEffectsExactlyOnce, checkPrefixContinuation, checkRecoveryDeterminism,
  logFacts, type LogFacts,
} from '../contract-checks.js';

export type StoreKind = 'memory' | 'sqlite';

export interface RefundInput {
  orderId: string;
  customerEmail: string;
  amountCents: number;
  reason: 'damaged' | 'late' | 'changed-mind';
}

/** The refund policy, written again from the example's documentation (not imported). */
export function modelRefund(input: RefundInput): number {
  switch (input.reason) {
    case 'damaged':
      return input.amountCents;
    case 'late':
      return Math.floor(input.amountCents / 2);
    case 'changed-mind':
      return Math.max(0, input.amountCents - 500);
  }
}

export const FULL_PATH = ['computeRefund', 'chargeCard', 'managerApproval', 'notifyCustomer'] as const;

export interface ModelRun {
  runId: string;
  input: RefundInput;
  /** The nodes a fault-free run completes, in order. */
  expectedPath: readonly string[];
  /** The last observed durable log (every command refreshes it after checking). */
  lastLog: Uint8Array;
  /** The resume value whose claim is durable in this run's log (own or inherited), if any. */
  approval: z.infer<typeof Approval> | undefined;
  /** Interrupt ids parked and claimed in this log (for duplicate-resume commands). */
  consumedIds: string[];
  /** The last command that drove this run ended without an injected fault. */
  settled: boolean;
  forkedFrom?: { runId: string; checkpointSeq: number };
}

export class Model {
  readonly runs: ModelRun[] = [];
  nextRunNo = 1;

  pick(index: number, filter: (r: ModelRun) => boolean = () => true): ModelRun | undefined {
    const candidates = this.runs.filter(filter);
    return candidates.length === 0 ? undefined : candidates[index % candidates.length];
  }
}

/** What a settled run must look like, computed from the model alone. */
export function expectedSettledStatus(run: ModelRun): 'parked' | 'completed' {
  if (modelRefund(run.input) === 0) return 'completed';
  return run.approval ? 'completed' : 'parked';
}

/** The final state of a completed run: input, policy, receipts derived from the durable keys. */
export function expectedFinalState(run: ModelRun, facts: LogFacts): Json {
  const refundCents = modelRefund(run.input);
  if (refundCents === 0) return { ...run.input, refundCents };
  const chargeKey = lastDoneKey(facts, 'chargeCard');
  const notifyKey = lastDoneKey(facts, 'notifyCustomer');
  return {
    ...run.input,
    refundCents,
    chargeId: `ch_${receiptIdFor(chargeKey)}`,
    approval: run.approval as Json,
    notificationId: `msg_${receiptIdFor(notifyKey)}`,
  };
}

function lastDoneKey(facts: LogFacts, node: string): string {
  const dones = facts.dones.filter((d) => d.node === node);
  return dones[dones.length - 1]?.key ?? '(none)';
}

/**
 * The sink as the outside world: it survives crashes and also records any handler call made
 * after the effect's completion was already durable, or without a durable attempt that has no
 * outcome (the invocation fence: a handler runs only under its own claimed attempt). Checked on
 * every call, also while several sequencers drive one run at once.
 */
export class GuardedSink implements EffectSink {
  readonly inner: MemoryEffectSink;
  readonly violations: string[] = [];
  readLog: ((runId: string) => Promise<Uint8Array>) | null = null;

  constructor(deduplicate = true) {
    this.inner = new MemoryEffectSink({ deduplicate });
  }

  async apply(effect: string, key: string, payload: unknown): Promise<EffectReceipt> {
    const parsed = parseEffectKey(key);
    if (parsed === null) this.violations.push(`P2: handler called with a key that is not an effect key: ${key}`);
    else if (this.readLog) {
      // The key names the run that wrote the intent; a fork's own effects carry the fork's id.
      const facts = logFacts(parsed.runId, await this.readLog(parsed.runId));
      if (facts.dones.some((d) => d.key === key)) this.violations.push(`P2: handler for ${key} called after its completion was durable`);
      const attempts = facts.attempts.filter((a) => a.key === key);
      const latest = attempts[attempts.length - 1];
      if (latest === undefined) this.violations.push(`P2 fence: handler for ${key} called with no attempt recorded`);
      else if (facts.releases.some((r) => r.key === key && r.attempt === latest.attempt)) {
        this.violations.push(`P2 fence: handler for ${key} called under released attempt ${latest.attempt}`);
      }
    }
    return this.inner.apply(effect, key, payload);
  }

  counts(): Promise<EffectCounts> {
    return this.inner.counts();
  }
}

export interface RealSystemOptions {
  /** false: a sink that applies every call (canary for the exactly-once checks). */
  deduplicate?: boolean;
  /** 'off': every sequencer runs with the invocation fence switched off (canary for the fence checks). */
  fence?: 'off';
}

/**
 * The lease every sequencer of the model writes: short, so that concurrent recoverers that wait
 * for a crashed sequencer's attempt do not wait long. Handlers here take microseconds.
 */
export const MODEL_LEASE_MS = 150;

/** The model's "restarting replica": every single sequencer command runs under this id. */
export const MAIN_INSTANCE = 'replica-main';

export class RealSystem {
  store!: Store;
  readonly sink: GuardedSink;
  readonly workflow: RefundWorkflow;
  private readonly backing = new MemoryBacking();
  private readonly extraStores: Store[] = [];

  private readonly fenceCanary: 'off' | undefined;

  constructor(
    readonly storeKind: StoreKind,
    readonly core: RecoveryCore,
    /** Every core available, for P6 (the first is `core`'s kind or another). */
    readonly allCores: RecoveryCore[],
    readonly dir: string,
    options: RealSystemOptions = {},
  ) {
    this.fenceCanary = options.fence;
    this.sink = new GuardedSink(options.deduplicate ?? true);
    this.workflow = createRefundWorkflow(sinkDeps(this.sink));
    this.openStore();
    this.sink.readLog = (runId) => this.store.readLog(runId);
  }

  get dbPath(): string {
    return join(this.dir, 'model.db');
  }

  private newStoreHandle(): Store {
    return this.storeKind === 'memory'
      ? new MemoryStore({ backing: this.backing })
      : new SqliteStore(this.dbPath, { synchronous: 'NORMAL' });
  }

  private openStore(): void {
    this.store = this.newStoreHandle();
  }

  /**
   * A fresh sequencer: nothing carried over in memory from earlier commands. It runs as the main
   * replica (MAIN_INSTANCE) unless given another instance id (a concurrent sequencer elsewhere).
   */
  remit(hooks: SequencerHooks = NO_HOOKS, store: Store = this.store, instanceId = MAIN_INSTANCE, effectLeaseMs = MODEL_LEASE_MS): Remit {
    const fence: Partial<FenceOptions> = { instanceId, effectLeaseMs, ...(this.fenceCanary ? { canary: this.fenceCanary } : {}) };
    return new Remit(store, this.core, [this.workflow], hooks, {}, fence);
  }

  /** Another connection (SQLite) or view (memory) on the same data, for concurrent resumers. */
  extraStore(): Store {
    const store = this.newStoreHandle();
    this.extraStores.push(store);
    return store;
  }

  /** Drop everything in memory and reopen the store. */
  async crash(): Promise<void> {
    await this.store.close();
    for (const s of this.extraStores.splice(0)) await s.close();
    this.openStore();
  }

  async close(): Promise<void> {
    await this.store.close();
    for (const s of this.extraStores.splice(0)) await s.close();
  }
}

export const resumeSchemas = { managerApproval: Approval as z.ZodType };

/**
 * The six properties over every run, against the model. Returns violations; updates each run's
 * lastLog to the current durable log once checked.
 */
export async function checkAll(model: Model, real: RealSystem): Promise<string[]> {
  const out: string[] = [];
  const allFacts: LogFacts[] = [];
  for (const run of model.runs) {
    const log = await real.store.readLog(run.runId);
    const facts = logFacts(run.runId, log);
    allFacts.push(facts);
    out.push(...checkPrefixContinuation(run.lastLog, log, facts, run.expectedPath));
    out.push(...checkCheckpointValidity(facts, RefundState, resumeSchemas));
    out.push(...checkConsumeOnce(facts));
    out.push(...checkRecoveryDeterminism(run.runId, log, real.allCores));
    run.lastLog = log;
    observeClaims(run, facts);
  }
  out.push(...checkEffectsExactlyOnce(allFacts, await real.sink.counts()));
  out.push(...real.sink.violations.splice(0));
  return out;
}

/** What the model takes from the durable log: the claimed approval (own or inherited) and the ids consumed. */
export function observeClaims(run: ModelRun, facts: LogFacts): void {
  const last = facts.claims[facts.claims.length - 1];
  run.approval = last ? (last.value as ModelRun['approval']) : undefined;
  run.consumedIds = facts.claims.map((c) => c.id);
}

export function pathFor(input: RefundInput): readonly string[] {
  return modelRefund(input) === 0 ? FULL_PATH.slice(0, 1) : FULL_PATH;
}
