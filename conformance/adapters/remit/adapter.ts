/**
 * Conformance adapter for REMIT, through the shell's public API (createRemit, start, resume,
 * continueRun, fork, status) and its fault hooks. Options:
 *   --store sqlite|memory|postgres   --core wasm|reference
 *     (postgres: the server at REMIT_PG_URL, one schema per cell store; ../remit-postgres/)
 *   --canary lost-append-reported-committed | unstable-effect-key | reapply-transform   (test-only, a guard switched off)
 * Generated workflows (harness/generated/): `define` builds one (./generated-workflow.ts) and
 * registers it; `start` with `workflow` runs it; `tagged` values carry Dates, Maps, NaN, undefined.
 * Run: node --import tsx conformance/adapters/remit/adapter.ts --store sqlite --core wasm
 *
 * The invocation fence: each `open` names the replica this process plays (protocol.ts); it is the
 * Remit's instance id, so a primary restarted after SIGKILL takes over its own unfinished effect
 * attempt at once, and other replicas wait for its lease (REMIT_CONFORMANCE_LEASE_MS, default
 * 3000 ms: short, so recoverer cells do not wait long; it must still exceed a handler's run, which
 * here is one fsync'd line). `continue` waits up to 15 s for an attempt in flight elsewhere.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import {
  AlreadyConsumedError,
  ConflictError,
  DefinitionMismatchError,
  EffectInFlightError,
  ForkTargetExistsError,
  ImplicitForkError,
  LogCorruptError,
  NotParkedError,
  RemitError,
  ResumeValueInvalidError,
  StateInvalidError,
  StoreError,
  ValueUnfaithfulError,
  createRemit,
  openMemoryStore,
  openSqliteStore,
  type FaultInfo,
  type FaultPoint,
  type Json,
  type RecoveryCore,
  type Remit,
  type RunResult,
  type SequencerHooks,
  type Store,
  type Workflow,
} from 'remit';
import { createCore } from 'remit/core';
import { applyDelta, type Delta } from 'remit/testing';
import { decodeLog, RecordKind, type LogRecord } from 'remit/core';
import { EffectSinkWriter } from '../../harness/sink.js';
import { FAULT_POINTS } from '../../harness/cells.js';
import { EFFECT_NODES, RefundInputSchema, initialState, invalidStateInput } from '../../harness/workflow.js';
import { FaultSwitch, InjectedFault, hex, serve, stringArg, type ArmedFault } from '../common/serve.js';
import { installedVersion, repositoryVersion } from '../common/versions.js';
import { FaultingStore, INJECTED_STORE_CODE, commitPointOfKind } from './faulting-store.js';
import { buildRefundWorkflow } from './workflow.js';
import { buildGeneratedWorkflow } from './generated-workflow.js';
import { GENERATED_WORKFLOW_FORMAT, untag, type Tagged, type WorkflowSpec } from '../../harness/generated/spec.js';

function option(name: string, allowed: readonly string[], fallback: string | null): string | null {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? process.argv[i + 1] : fallback;
  if (value !== null && value !== undefined && !allowed.includes(value)) {
    throw new Error(`--${name} must be one of ${allowed.join(', ')}, got ${value}`);
  }
  return value ?? null;
}

const STORE_KIND = option('store', ['sqlite', 'memory', 'postgres'], 'sqlite') as 'sqlite' | 'memory' | 'postgres';
const CORE_KIND = option('core', ['wasm', 'reference'], 'wasm') as 'wasm' | 'reference';
const CANARY = option('canary', ['lost-append-reported-committed', 'unstable-effect-key', 'reapply-transform'], null);
/** The effect lease of this adapter's sequencers (see the header comment). */
const LEASE_MS = Number(process.env['REMIT_CONFORMANCE_LEASE_MS'] ?? 3000);
/** How long `continue` waits for another replica's effect attempt (below the harness's 20 s request timeout). */
const WAIT_FOR_EFFECT_MS = 15_000;

const faults = new FaultSwitch();
let sink: EffectSinkWriter | null = null;
let session: Session | null = null;
const otherCores = new Map<string, RecoveryCore>();

/** PostgreSQL only: this process's cell schemas and its end of the hosts barrier (loaded lazily). */
let postgresSide: Promise<PostgresSide> | null = null;
interface PostgresSide {
  stores: import('../remit-postgres/store.js').PostgresCellStores;
  barrier: import('../remit-postgres/barrier.js').AdvisoryBarrier;
}
function postgres(): Promise<PostgresSide> {
  if (STORE_KIND !== 'postgres') throw new Error('this adapter does not run on PostgreSQL (--store postgres)');
  postgresSide ??= (async () => {
    const { PostgresCellStores } = await import('../remit-postgres/store.js');
    const { AdvisoryBarrier } = await import('../remit-postgres/barrier.js');
    const stores = PostgresCellStores.fromEnv();
    return { stores, barrier: new AdvisoryBarrier(stores.url) };
  })();
  return postgresSide;
}

/** The recover race: wait at this barrier just before the next append (set by `continue`). */
let holdBeforeAppend: number | null = null;

function currentSink(): EffectSinkWriter {
  if (sink === null) throw new Error('no effect sink: "open" was not called');
  return sink;
}

const deps = { sink: currentSink, faults, unstableKeys: CANARY === 'unstable-effect-key' };
const refund = buildRefundWorkflow(deps);
/** Generated workflows defined so far (`define`), by name, with their spec; every session registers them. */
const generated = new Map<string, Workflow>();
const generatedSpecs = new Map<string, string>();

function generatedWorkflow(name: string): Workflow {
  const wf = generated.get(name);
  if (wf === undefined) throw new Error(`no generated workflow named ${JSON.stringify(name)} was defined`);
  return wf;
}

/** Commit points reached through the sequencer's hooks; store errors come from the store wrapper. */
const hooks: SequencerHooks = {
  at(point: FaultPoint, info: FaultInfo): void | Promise<void> {
    if (point === 'append.before' && holdBeforeAppend !== null) {
      const key = holdBeforeAppend;
      holdBeforeAppend = null;
      return postgres().then((p) => p.barrier.pass(key));
    }
    if (faults.current === null || faults.current.kind === 'store-error') return;
    if (point === 'append.before' || point === 'append.after') {
      const phase = point === 'append.before' ? 'before' : 'after';
      for (const kind of info.kinds ?? []) faults.hit(`${phase}-commit:${commitPointOfKind(kind, info.node)}`);
    } else if (point === 'fork.before-store') {
      faults.hit('before-commit:FORKED');
    } else if (point === 'fork.after-store') {
      faults.hit('after-commit:FORKED');
    }
  },
};

class Session {
  constructor(
    readonly storePath: string,
    readonly store: Store,
    readonly remit: Remit,
  ) {}

  static async open(storePath: string, replica: string): Promise<Session> {
    const inner =
      STORE_KIND === 'sqlite' ? openSqliteStore(storePath) : STORE_KIND === 'postgres' ? await (await postgres()).stores.open(storePath) : openMemoryStore();
    const store = new FaultingStore(inner, faults, CANARY === 'lost-append-reported-committed');
    // One replica per role and cell store: the instance id is what the lease names.
    const instanceId = `${replica}@${storePath}`.slice(-200);
    const remit = await createRemit({ store, core: CORE_KIND, workflows: [refund, ...generated.values()], hooks, instanceId, effectLeaseMs: LEASE_MS });
    return new Session(storePath, store, remit);
  }
}

function current(): Session {
  if (session === null) throw new Error('no store: "open" was not called');
  return session;
}

function outcomeOfResult(result: RunResult) {
  const status = result.status === 'parked' || result.status === 'completed' || result.status === 'failed' ? result.status : null;
  if (status === null) return { outcome: 'error' as const, error: { kind: 'other' as const, message: `run stopped while ${result.status}` } };
  return { outcome: status, state: result.state };
}

function injectedCause(e: unknown): InjectedFault | null {
  let cur: unknown = e;
  for (let depth = 0; depth < 5 && cur instanceof Error; depth++) {
    if (cur instanceof InjectedFault) return cur;
    cur = (cur as { cause?: unknown }).cause;
  }
  return null;
}

function outcomeOfError(e: unknown) {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  const field = e instanceof RemitError ? e.field : undefined;
  const system = e instanceof RemitError ? { systemCode: e.code, ...(e instanceof ValueUnfaithfulError ? { reason: e.reason } : {}) } : {};
  const refused = (code: 'ALREADY_CONSUMED' | 'NOT_PARKED' | 'INVALID_VALUE' | 'IMPLICIT_FORK' | 'DEFINITION_MISMATCH' | 'CONFLICT' | 'OTHER') => ({
    outcome: 'refused' as const,
    refusal: { code, message, ...(field === undefined ? {} : { field }), ...system },
  });
  if (injectedCause(e) !== null) return { outcome: 'error' as const, error: { kind: 'injected' as const, message } };
  if (e instanceof StoreError && e.storeCode === INJECTED_STORE_CODE) return { outcome: 'error' as const, error: { kind: 'store' as const, message } };
  if (e instanceof ResumeValueInvalidError) return refused('INVALID_VALUE');
  if (e instanceof ValueUnfaithfulError) {
    if (e.value === 'resume value') return refused('INVALID_VALUE');
    return { outcome: 'error' as const, error: { kind: 'validation' as const, message, ...(field === undefined ? {} : { field }), ...system } };
  }
  if (e instanceof AlreadyConsumedError) return refused('ALREADY_CONSUMED');
  if (e instanceof NotParkedError) return refused('NOT_PARKED');
  if (e instanceof ImplicitForkError) return refused('IMPLICIT_FORK');
  if (e instanceof DefinitionMismatchError) return refused('DEFINITION_MISMATCH');
  if (e instanceof ConflictError) return refused('CONFLICT');
  // Another replica's effect attempt is in flight (it holds the run): nothing written, nothing called.
  if (e instanceof EffectInFlightError) return refused('CONFLICT');
  if (e instanceof ForkTargetExistsError) return refused('OTHER');
  if (e instanceof StateInvalidError) {
    return { outcome: 'error' as const, error: { kind: 'validation' as const, message, ...(field === undefined ? {} : { field }), ...system } };
  }
  if (e instanceof StoreError) return { outcome: 'error' as const, error: { kind: 'store' as const, message, ...system } };
  return { outcome: 'error' as const, error: { kind: 'other' as const, message, ...system } };
}

async function attempt(action: () => Promise<RunResult>) {
  try {
    return outcomeOfResult(await action());
  } catch (e) {
    return outcomeOfError(e);
  }
}

async function decoded(runId: string): Promise<{ log: Uint8Array; records: LogRecord[]; stored: { seq: number; bytes: Uint8Array }[] }> {
  const stored = await current().store.readRecords(runId);
  const log = Buffer.concat(stored.map((r) => Buffer.from(r.bytes)));
  return { log, records: decodeLog(log).records, stored };
}

/**
 * The interrupt a resume addresses: the run's last parked interrupt (also when already consumed),
 * or with `park` the run's park number `park` (0-based), as a caller holding that park's interrupt
 * id would address it (the soak's concurrent resumers of one park).
 */
async function interruptIdOf(runId: string, park?: number): Promise<string> {
  const { records } = await decoded(runId);
  const parked = records.filter((r) => r.kind === RecordKind.INTERRUPT_PARKED);
  const last = park === undefined ? parked[parked.length - 1] : parked[park];
  if (last === undefined || last.kind !== RecordKind.INTERRUPT_PARKED) return 'approval@0';
  return Buffer.from(last.interruptId).toString('utf8');
}

/** The seq of the `occurrence`-th (1-based) completion of `node`. */
async function seqOfCompletion(runId: string, node: string, occurrence = 1): Promise<number> {
  const { records } = await decoded(runId);
  const completions = records.filter((r) => r.kind === RecordKind.NODE_COMPLETED && Buffer.from(r.node).toString('utf8') === node);
  const rec = completions[occurrence - 1];
  if (rec === undefined) throw new Error(`run ${runId} has no completion #${occurrence} of ${node}`);
  return rec.seq;
}

function occurrenceArg(args: Record<string, unknown>): number {
  const n = args.occurrence ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new TypeError(`request field "occurrence" must be a positive integer, got ${JSON.stringify(n)}`);
  return n;
}

const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

function jsonOf(b: Uint8Array): Json {
  return JSON.parse(text(b)) as Json;
}

/** Every state the log holds, rebuilt from snapshots and deltas, in log order. */
function statesOf(records: LogRecord[]): Json[] {
  const states: Json[] = [];
  let current: Json = null;
  for (const r of records) {
    if (r.kind === RecordKind.RUN_STARTED) current = jsonOf(r.state);
    else if (r.kind === RecordKind.NODE_COMPLETED) current = r.stateForm === 0 ? jsonOf(r.state) : applyDelta(current, jsonOf(r.state) as unknown as Delta);
    else continue;
    states.push(current);
  }
  return states;
}

/** Decoded records with every run id replaced, so two forks compare equal apart from ids. */
/** An EFFECT_ATTEMPT's lease without its expiry (wall-clock time, differs between equal runs). */
function leaseOwner(lease: string): string {
  try {
    const parsed = JSON.parse(lease) as { owner?: unknown };
    return `<lease of ${String(parsed.owner)}>`;
  } catch {
    return lease;
  }
}

function normalize(records: LogRecord[], runIds: string[]): unknown[] {
  const mask = (s: string) => runIds.reduce((acc, id) => acc.split(id).join('<run>'), s);
  return records.map((r) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r)) {
      if (k === 'lease' && v instanceof Uint8Array) out[k] = leaseOwner(text(v)); // the expiry is a clock reading
      else if (v instanceof Uint8Array) out[k] = mask(text(v));
      else if (Array.isArray(v)) out[k] = v.map((n: { name: Uint8Array; kind: number }) => ({ name: text(n.name), kind: n.kind }));
      else out[k] = v;
    }
    return out;
  });
}

function recoveriesOf(log: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, core] of otherCores) out[name] = hex(core.recoverEncoded(log));
  return out;
}

async function readStore(runId: string) {
  const s = current();
  const { log, records, stored } = await decoded(runId);
  const base = {
    runId,
    exists: stored.length > 0,
    records: stored.map((r) => ({ id: String(r.seq), hex: hex(r.bytes) })),
    claims: records.filter((r) => r.kind === RecordKind.RESUME_CLAIMED).length,
    recoveries: recoveriesOf(log),
  };
  if (stored.length === 0) {
    return { ...base, normalized: [], status: 'absent', integrity: { ok: true }, completedNodes: [], effectsDone: [], states: [], headState: null, nextAction: 'NONE' };
  }
  const recovery = s.remit.core.recover(log);
  if (!recovery.ok) {
    const integrity = { ok: false, record: String(recovery.seq), message: `recovery error code ${recovery.code} at seq ${recovery.seq}` };
    return { ...base, normalized: [], status: 'invalid', integrity, completedNodes: [], effectsDone: [], states: [], headState: null, nextAction: 'STUCK' };
  }
  const runIds = [runId, ...records.flatMap((r) => (r.kind === RecordKind.FORKED ? [text(r.sourceRunId), text(r.runId)] : []))];
  const node = 'node' in recovery.action ? ` ${text(recovery.action.node)}` : '';
  const status = await s.remit.status(runId);
  return {
    ...base,
    normalized: normalize(records, runIds),
    status: status.status,
    integrity: { ok: true },
    completedNodes: records.flatMap((r) => (r.kind === RecordKind.NODE_COMPLETED ? [text(r.node)] : [])),
    // The reference workflow reports its own effect nodes; a generated one all of its effect nodes.
    effectsDone: recovery.effects
      .filter((e) => e.status === 2)
      .map((e) => text(e.node))
      .filter((n) => text(recovery.workflow) !== 'refund' || (EFFECT_NODES as readonly string[]).includes(n)),
    effectKeysDone: records.flatMap((r) => (r.kind === RecordKind.EFFECT_DONE ? [text(r.key)] : [])),
    states: statesOf(records),
    headState: status.state,
    nextAction: `${recovery.action.tag}${node}`,
  };
}

/** Corrupt one bit of one stored record in a copy of the store, then ask REMIT for the run. */
async function probeCorruption(args: Record<string, unknown>) {
  const s = current();
  const runId = stringArg(args, 'runId');
  const pick = Number(args.pick ?? 0);
  const stored = await s.store.readRecords(runId);
  const target = stored[pick % stored.length];
  if (target === undefined) throw new Error(`run ${runId} has no records to corrupt`);
  const bytes = Buffer.from(target.bytes);
  const at = 12 + ((pick >>> 3) % Math.max(1, bytes.length - 16)); // a payload or checksum byte
  bytes[at] = (bytes[at] as number) ^ (1 << (pick & 7));
  let copy: Store;
  let cleanup: () => void | Promise<void> = () => {};
  if (STORE_KIND === 'sqlite') {
    const copyPath = `${s.storePath}.corrupt-${process.pid}.db`;
    fs.rmSync(copyPath, { force: true });
    const source = new Database(s.storePath);
    source.exec(`VACUUM INTO '${copyPath.replaceAll("'", "''")}'`);
    source.close();
    const raw = new Database(copyPath);
    raw.prepare('UPDATE remit_records SET bytes = ? WHERE run_id = ? AND seq = ?').run(bytes, runId, target.seq);
    raw.close();
    copy = openSqliteStore(copyPath);
    cleanup = () => fs.rmSync(copyPath, { force: true });
  } else if (STORE_KIND === 'postgres') {
    const side = await (await postgres()).stores.corruptedCopy(s.storePath, runId, stored, target.seq, bytes);
    copy = side.store;
    cleanup = () => side.drop();
  } else {
    copy = openMemoryStore();
    for (const r of stored) await copy.append(runId, r.seq, [r.seq === target.seq ? bytes : r.bytes]);
  }
  const reader = await createRemit({ store: copy, core: CORE_KIND, workflows: [refund] });
  const corruptedRecord = String(target.seq);
  try {
    await reader.status(runId);
    return { detected: false, message: 'status() loaded the run without an error', corruptedRunId: runId, corruptedRecord, reportedRunId: null, reportedRecord: null };
  } catch (e) {
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    const typed = e instanceof LogCorruptError || (e instanceof RemitError && e.code === 'REMIT_LOG_TORN');
    const err = e as RemitError;
    return {
      detected: typed,
      message,
      corruptedRunId: runId,
      corruptedRecord,
      reportedRunId: err.runId ?? null,
      reportedRecord: err.seq === undefined ? null : String(err.seq),
    };
  } finally {
    await reader.close();
    await cleanup();
  }
}

async function probeInvalidState(args: Record<string, unknown>) {
  const runId = stringArg(args, 'runId');
  const input = RefundInputSchema.parse(args.input ?? invalidStateInput(runId));
  const outcome = await attempt(() => current().remit.start(refund, initialState(input), { runId }));
  return { outcome, view: await readStore(runId) };
}

async function probeDefinitionChange(args: Record<string, unknown>) {
  const s = current();
  const runId = stringArg(args, 'runId');
  const input = RefundInputSchema.parse(args.input);
  const parked = await attempt(() => s.remit.start(refund, initialState(input), { runId }));
  if (parked.outcome !== 'parked') throw new Error(`definition-change probe: side run ${runId} did not park (${parked.outcome})`);
  // Version 2 of the workflow renames its last node; the run was started under version 1.
  const changed = buildRefundWorkflow({ ...deps, faults: new FaultSwitch() }, 'notify_customer');
  const v2 = await createRemit({ store: s.store, core: s.remit.core, workflows: [changed] });
  const interruptId = await interruptIdOf(runId);
  const outcome = await attempt(() => v2.resume(runId, interruptId, { approved: true, note: 'v2' }));
  return { change: 'node "notify" renamed to "notify_customer"', changedNode: 'notify', outcome };
}

function hello() {
  const supported = (where: string) => ({ supported: true, where });
  const points: Record<string, unknown> = {};
  for (const p of FAULT_POINTS) {
    const [place, rest = ''] = p.name.split(':');
    if (place === 'before-commit' || place === 'after-commit') {
      points[p.name] = supported(
        rest === 'FORKED'
          ? `hook fork.${place === 'before-commit' ? 'before' : 'after'}-store / Store.fork`
          : `hook append.${place === 'before-commit' ? 'before' : 'after'} / Store.append of the batch holding ${rest} (a batch commits atomically)`,
      );
    } else {
      points[p.name] = supported(`in the adapter's ${rest} node code`);
    }
  }
  const memory = STORE_KIND === 'memory';
  const memoryReason = 'the memory store lives in the adapter process: it does not survive SIGKILL and no other process can see it';
  const storeVersion: Record<string, string> =
    STORE_KIND === 'postgres' ? { pg: installedVersion('pg') } : { 'better-sqlite3': installedVersion('better-sqlite3') };
  const hostsSupport =
    STORE_KIND === 'postgres'
      ? supported('k processes in network namespaces (hosts), each with its own Remit and connection pool, on one PostgreSQL server reached over a veth link; released together by a server-side advisory-lock barrier')
      : { supported: false, reason: memory ? memoryReason : 'a SQLite file is shared through a file system, not over a network link; the hosts column needs a network store (PostgreSQL)' };
  return {
    protocol: 1,
    system: CANARY === null ? 'remit' : `remit-canary(${CANARY})`,
    variant: `${STORE_KIND}/${CORE_KIND}`,
    versions: { remit: repositoryVersion(), ...storeVersion, core: CORE_KIND },
    points,
    faultKinds: {
      sigkill: memory ? { supported: false, reason: memoryReason } : supported('process.kill(process.pid, "SIGKILL") in the hook'),
      throw: supported('an Error thrown by the hook at the point'),
      'store-error': supported(`a StoreError (${INJECTED_STORE_CODE}) from the Store wrapper before or after the real write`),
    },
    concurrency: {
      'in-process': supported('k concurrent Remit.resume (or continueRun) calls on one instance'),
      'recoverers-in-process': supported('continueMany: k concurrent Remit.continueRun calls on one instance'),
      processes: memory
        ? { supported: false, reason: memoryReason }
        : supported(`k processes, each with its own Remit on the same ${STORE_KIND === 'postgres' ? 'PostgreSQL schema' : 'SQLite file'}`),
      hosts: hostsSupport,
    },
    fork: supported('Remit.fork at the checkpoint (a new run: prefix copy + FORKED record)'),
  };
}

async function loadOtherCores(): Promise<void> {
  for (const kind of ['wasm', 'reference'] as const) {
    try {
      otherCores.set(kind, await createCore(kind));
    } catch (e) {
      if (kind === CORE_KIND) throw e;
      console.error(`core ${kind} unavailable for cross-checks: ${String(e)}`);
    }
  }
}

await loadOtherCores();

function barrierKeyOf(ref: unknown): number {
  const key = (ref as { key?: unknown } | null)?.key;
  if (typeof key !== 'number') throw new TypeError(`request field "barrier.key" must be a number, got ${JSON.stringify(key)}`);
  return key;
}

/** Hosts cells: wait at the server-side barrier (if the request names one) before acting. */
async function passBarrier(ref: unknown): Promise<void> {
  if (ref === undefined || ref === null) return;
  await (await postgres()).barrier.pass(barrierKeyOf(ref));
}

/** At exit: drop this process's cell schemas (PostgreSQL) so a campaign leaves nothing behind. */
async function onExit(): Promise<void> {
  if (postgresSide === null) return;
  const side = await postgresSide;
  await session?.remit.close().catch(() => undefined);
  await side.barrier.close();
  await side.stores.dropAll();
}

serve({
  hello: async () => hello(),
  open: async (args) => {
    sink?.close();
    await session?.remit.close();
    faults.arm(null);
    sink = new EffectSinkWriter(stringArg(args, 'sinkPath'));
    session = await Session.open(stringArg(args, 'storePath'), typeof args.replica === 'string' ? args.replica : `pid-${process.pid}`);
    return {};
  },
  arm: async (args) => {
    faults.arm((args.fault ?? null) as ArmedFault | null);
    return {};
  },
  define: async (args) => {
    const spec = args.workflow as WorkflowSpec;
    if (spec === null || typeof spec !== 'object' || spec.format !== GENERATED_WORKFLOW_FORMAT) {
      throw new TypeError(`request field "workflow" must be a generated workflow (${GENERATED_WORKFLOW_FORMAT})`);
    }
    const text = JSON.stringify(spec);
    const known = generatedSpecs.get(spec.name);
    if (known !== undefined && known !== text) throw new Error(`a different workflow named ${JSON.stringify(spec.name)} was defined before`);
    if (known === undefined) {
      const wf = buildGeneratedWorkflow(spec, deps, CANARY === 'reapply-transform' ? 'reapply-transform' : null);
      generated.set(spec.name, wf);
      generatedSpecs.set(spec.name, text);
      session?.remit.register(wf);
    }
    return { name: spec.name };
  },
  start: async (args) => {
    const runId = stringArg(args, 'runId');
    if (args.workflow !== undefined) {
      const wf = generatedWorkflow(stringArg(args, 'workflow'));
      const input = args.tagged === true ? untag(args.input as Tagged) : args.input;
      return attempt(() => current().remit.start(wf, input, { runId }));
    }
    return attempt(() => current().remit.start(refund, initialState(RefundInputSchema.parse(args.input)), { runId }));
  },
  resume: async (args) => {
    const runId = stringArg(args, 'runId');
    if (args.park !== undefined && !(Number.isInteger(args.park) && (args.park as number) >= 0)) throw new TypeError(`request field "park" must be a non-negative integer, got ${JSON.stringify(args.park)}`);
    const interruptId = await interruptIdOf(runId, args.park as number | undefined);
    await passBarrier(args.barrier);
    const value = args.tagged === true ? untag(args.value as Tagged) : args.value;
    return attempt(() => current().remit.resume(runId, interruptId, value));
  },
  resumeMany: async (args) => {
    const runId = stringArg(args, 'runId');
    const interruptId = await interruptIdOf(runId);
    const values = Array.isArray(args.values) ? args.values : [];
    return { outcomes: await Promise.all(values.map((value) => attempt(() => current().remit.resume(runId, interruptId, value)))) };
  },
  continue: async (args) => {
    const runId = stringArg(args, 'runId');
    await passBarrier(args.barrier);
    holdBeforeAppend = args.holdBeforeAppend === undefined ? null : barrierKeyOf(args.holdBeforeAppend);
    try {
      return await attempt(() => current().remit.continueRun(runId, { waitForEffectMs: WAIT_FOR_EFFECT_MS }));
    } finally {
      holdBeforeAppend = null;
    }
  },
  continueMany: async (args) => {
    const runId = stringArg(args, 'runId');
    const count = Number(args.count);
    if (!Number.isInteger(count) || count < 1 || count > 64) throw new Error(`continueMany: count must be 1..64, got ${String(args.count)}`);
    const calls = Array.from({ length: count }, () => attempt(() => current().remit.continueRun(runId, { waitForEffectMs: WAIT_FOR_EFFECT_MS })));
    return { outcomes: await Promise.all(calls) };
  },
  recoverAll: async (args) => {
    const wait = args.waitForEffectMs === undefined ? 0 : Number(args.waitForEffectMs);
    if (!Number.isInteger(wait) || wait < 0 || wait > WAIT_FOR_EFFECT_MS) throw new Error(`recoverAll: waitForEffectMs must be 0..${WAIT_FOR_EFFECT_MS}, got ${String(args.waitForEffectMs)}`);
    const outcomes = await current().remit.recoverAll({ waitForEffectMs: wait });
    return {
      outcomes: outcomes.map((o) => ({ runId: o.runId, ...('result' in o ? outcomeOfResult(o.result) : outcomeOfError(o.error)) })),
    };
  },
  barrier: async (args) => {
    const { barrier } = await postgres();
    const key = barrierKeyOf(args);
    if (args.action === 'hold') await barrier.hold(key);
    else if (args.action === 'release') await barrier.release(key);
    else if (args.action === 'count') return { waiting: await barrier.count(key) };
    else throw new Error(`barrier action must be hold, count or release, got ${JSON.stringify(args.action)}`);
    return {};
  },
  continueFrom: async (args) => {
    const runId = stringArg(args, 'runId');
    const fromSeq = await seqOfCompletion(runId, stringArg(args, 'after'), occurrenceArg(args));
    return attempt(() => current().remit.continueRun(runId, { fromSeq }));
  },
  fork: async (args) => {
    const source = stringArg(args, 'sourceRunId');
    try {
      const seq = await seqOfCompletion(source, stringArg(args, 'after'), occurrenceArg(args));
      const forked = await current().remit.fork(source, seq, { intent: args.intent ?? null, newRunId: stringArg(args, 'targetRunId') });
      return { outcome: 'forked', runId: forked.runId };
    } catch (e) {
      return outcomeOfError(e);
    }
  },
  readStore: async (args) => readStore(stringArg(args, 'runId')),
  probe: async (args) => {
    if (args.kind === 'corruption') return probeCorruption(args);
    if (args.kind === 'invalid-state') return probeInvalidState(args);
    if (args.kind === 'definition-change') return probeDefinitionChange(args);
    throw new Error(`unknown probe kind "${String(args.kind)}"`);
  },
}, { onExit });
