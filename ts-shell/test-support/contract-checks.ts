/**
 * Checkers for the six properties of the resume contract, over durable logs and an effect sink.
 * They are separate from the generators (the model-based test, the child-process tests) and
 * return violations instead of throwing, so a test can report all of them at once.
 * Each checker reads only logs and sink counts: it never asks the sequencer what it did.
 */

import type { z } from 'zod';
import { bytesEqual, decodeJson, fromUtf8, type Json } from '../src/json.js';
import { decodeLog } from '../src/core/codec.js';
import { RecordKind, type LogRecord, type RecoveryCore } from '../src/core/types.js';
import { applyDelta, type Delta } from '../src/state/delta.js';
import type { EffectCounts } from '../src/testing/effect-sink.js';
import { effectKey } from '../src/ids.js';

export interface LogFacts {
  runId: string;
  records: LogRecord[];
  /** NODE_COMPLETED nodes in log order. */
  completedNodes: string[];
  /** Seq of each checkpoint (RUN_STARTED, NODE_COMPLETED) and the state it holds. */
  checkpoints: Array<{ seq: number; state: Json }>;
  intents: Array<{ seq: number; node: string; key: string; runIdAtIntent: string }>;
  dones: Array<{ seq: number; node: string; key: string }>;
  /** EFFECT_ATTEMPT records (log format 2): the claims that let a sequencer call a handler. */
  attempts: Array<{ seq: number; node: string; key: string; attempt: number }>;
  releases: Array<{ seq: number; node: string; key: string; attempt: number }>;
  parks: Array<{ seq: number; node: string; id: string }>;
  claims: Array<{ seq: number; id: string; value: Json }>;
  forks: Array<{ seq: number; sourceRunId: string; sourceSeq: number; runId: string }>;
  terminal: 'completed' | 'failed' | null;
  decodeError: string | null;
}

export function logFacts(runId: string, log: Uint8Array): LogFacts {
  const decoded = decodeLog(log);
  const facts: LogFacts = {
    runId, records: decoded.records, completedNodes: [], checkpoints: [], intents: [], dones: [], attempts: [], releases: [],
    parks: [], claims: [], forks: [],
    terminal: null, decodeError: decoded.error ? decoded.error.message : decoded.tornLen > 0 ? `torn tail of ${decoded.tornLen} bytes` : null,
  };
  let state: Json = null;
  let effectiveRunId = '';
  for (const r of decoded.records) {
    switch (r.kind) {
      case RecordKind.RUN_STARTED:
        effectiveRunId = fromUtf8(r.runId);
        state = decodeJson(r.state);
        facts.checkpoints.push({ seq: r.seq, state });
        break;
      case RecordKind.NODE_COMPLETED:
        state = r.stateForm === 0 ? decodeJson(r.state) : applyDelta(state, decodeJson(r.state) as Delta);
        facts.completedNodes.push(fromUtf8(r.node));
        facts.checkpoints.push({ seq: r.seq, state });
        break;
      case RecordKind.EFFECT_INTENT:
        facts.intents.push({ seq: r.seq, node: fromUtf8(r.node), key: fromUtf8(r.key), runIdAtIntent: effectiveRunId });
        break;
      case RecordKind.EFFECT_DONE:
        facts.dones.push({ seq: r.seq, node: fromUtf8(r.node), key: fromUtf8(r.key) });
        break;
      case RecordKind.EFFECT_ATTEMPT:
        facts.attempts.push({ seq: r.seq, node: fromUtf8(r.node), key: fromUtf8(r.key), attempt: r.attempt });
        break;
      case RecordKind.EFFECT_RELEASED:
        facts.releases.push({ seq: r.seq, node: fromUtf8(r.node), key: fromUtf8(r.key), attempt: r.attempt });
        break;
      case RecordKind.INTERRUPT_PARKED:
        facts.parks.push({ seq: r.seq, node: fromUtf8(r.node), id: fromUtf8(r.interruptId) });
        break;
      case RecordKind.RESUME_CLAIMED:
        facts.claims.push({ seq: r.seq, id: fromUtf8(r.interruptId), value: decodeJson(r.value) });
        break;
      case RecordKind.FORKED:
        effectiveRunId = fromUtf8(r.runId);
        facts.forks.push({ seq: r.seq, sourceRunId: fromUtf8(r.sourceRunId), sourceSeq: r.sourceSeq, runId: effectiveRunId });
        break;
      case RecordKind.RUN_COMPLETED:
        facts.terminal = 'completed';
        break;
      case RecordKind.RUN_FAILED:
        facts.terminal = 'failed';
        break;
    }
  }
  return facts;
}

export function isPrefix(prefix: Uint8Array, whole: Uint8Array): boolean {
  return prefix.length <= whole.length && bytesEqual(prefix, whole.subarray(0, prefix.length));
}

/** P1: the log only grew, and its completed nodes follow the expected path without skip or repeat. */
export function checkPrefixContinuation(before: Uint8Array, after: Uint8Array, facts: LogFacts, expectedPath: readonly string[]): string[] {
  const out: string[] = [];
  if (!isPrefix(before, after)) out.push(`P1 ${facts.runId}: the durable log changed (it is not an extension of what it was)`);
  if (facts.decodeError) out.push(`P1 ${facts.runId}: log is damaged: ${facts.decodeError}`);
  const path = facts.completedNodes;
  for (let i = 0; i < path.length; i++) {
    if (path[i] !== expectedPath[i]) {
      out.push(`P1 ${facts.runId}: completed node #${i} is ${path[i]}, expected ${expectedPath[i] ?? '(nothing more)'}; path ${path.join(' > ')}`);
      break;
    }
  }
  return out;
}

/**
 * P2: every effect with a durable completion was applied exactly once at the sink; one with only
 * an intent at most once; nothing was applied without a durable intent; keys have the documented
 * form (ids.ts, effectKey); and the invocation fence: a handler was called at most once per
 * attempt the logs record for its key (each call needs its own durable EFFECT_ATTEMPT), so raw
 * invocations are bounded by the attempts, whatever the number of concurrent sequencers.
 */
export function checkEffectsExactlyOnce(allFacts: LogFacts[], counts: EffectCounts): string[] {
  const out: string[] = [];
  const intentKeys = new Set<string>();
  const doneKeys = new Set<string>();
  const attemptsByKey = new Map<string, number>();
  for (const facts of allFacts) {
    for (const intent of facts.intents) {
      intentKeys.add(intent.key);
      const expectedKey = effectKey(intent.runIdAtIntent, intent.node, intent.seq);
      if (intent.key !== expectedKey) out.push(`P2 ${facts.runId}: intent at seq ${intent.seq} has key ${intent.key}, expected ${expectedKey}`);
    }
    for (const done of facts.dones) doneKeys.add(done.key);
    // A fork inherits its source's attempts with the copied prefix: count each attempt record once.
    const inherited = facts.forks.length > 0 ? facts.forks[facts.forks.length - 1]!.seq : 0;
    for (const a of facts.attempts) {
      if (a.seq < inherited) continue;
      attemptsByKey.set(a.key, (attemptsByKey.get(a.key) ?? 0) + 1);
    }
  }
  for (const [key, c] of Object.entries(counts.byKey)) {
    const attempts = attemptsByKey.get(key) ?? 0;
    if (c.invocations > attempts) out.push(`P2 fence: effect ${key} was invoked ${c.invocations} times with ${attempts} attempts recorded`);
  }
  for (const key of doneKeys) {
    const applied = counts.byKey[key]?.applied ?? 0;
    if (applied !== 1) out.push(`P2: effect ${key} is durably done but was applied ${applied} times`);
  }
  for (const [key, c] of Object.entries(counts.byKey)) {
    if (!intentKeys.has(key)) out.push(`P2: effect ${key} reached the sink without a durable intent`);
    if (c.applied > 1) out.push(`P2: effect ${key} was applied ${c.applied} times`);
  }
  return out;
}

/** P3: a fork's log is the source prefix up to the checkpoint plus one FORKED record; the source is unchanged. */
export function checkFork(sourceBefore: Uint8Array, sourceAfter: Uint8Array, forkLog: Uint8Array, checkpointSeq: number, forkRunId: string): string[] {
  const out: string[] = [];
  if (!bytesEqual(sourceBefore, sourceAfter)) out.push(`P3: fork changed the source log`);
  const source = decodeLog(sourceAfter);
  const prefixLen = source.offsets[checkpointSeq + 1] ?? source.durableLen;
  if (!bytesEqual(forkLog.subarray(0, prefixLen), sourceAfter.subarray(0, prefixLen))) out.push(`P3 ${forkRunId}: fork does not start with the source's prefix`);
  const fork = decodeLog(forkLog);
  const forked = fork.records[checkpointSeq + 1];
  if (!forked || forked.kind !== RecordKind.FORKED || forked.sourceSeq !== checkpointSeq || fromUtf8(forked.runId) !== forkRunId) {
    out.push(`P3 ${forkRunId}: record ${checkpointSeq + 1} is not the FORKED record naming checkpoint ${checkpointSeq}`);
  }
  return out;
}

/** P4: every checkpoint state satisfies the state schema; every claimed value its resume schema. */
export function checkCheckpointValidity(facts: LogFacts, stateSchema: z.ZodType, resumeSchemas: Record<string, z.ZodType>): string[] {
  const out: string[] = [];
  for (const cp of facts.checkpoints) {
    const parsed = stateSchema.safeParse(cp.state);
    if (!parsed.success) out.push(`P4 ${facts.runId}: checkpoint seq ${cp.seq} fails the state schema: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`);
  }
  for (const claim of facts.claims) {
    const node = claim.id.slice(0, claim.id.lastIndexOf('@'));
    const schema = resumeSchemas[node];
    if (!schema) out.push(`P4 ${facts.runId}: claim of unknown interrupt ${claim.id}`);
    else if (!schema.safeParse(claim.value).success) out.push(`P4 ${facts.runId}: claimed value of ${claim.id} fails its schema`);
  }
  return out;
}

/** P5: an interrupt is claimed at most once, and only after it was parked in this log. */
export function checkConsumeOnce(facts: LogFacts): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const parked = new Set(facts.parks.map((p) => p.id));
  for (const claim of facts.claims) {
    if (seen.has(claim.id)) out.push(`P5 ${facts.runId}: interrupt ${claim.id} claimed twice (again at seq ${claim.seq})`);
    if (!parked.has(claim.id)) out.push(`P5 ${facts.runId}: interrupt ${claim.id} claimed but never parked`);
    seen.add(claim.id);
  }
  return out;
}

/** P6: recovery is a pure function of the log: twice on one core, and across cores, byte-identical. */
export function checkRecoveryDeterminism(runId: string, log: Uint8Array, cores: RecoveryCore[]): string[] {
  const out: string[] = [];
  const first = cores[0]!.recoverEncoded(log);
  if (!bytesEqual(first, cores[0]!.recoverEncoded(log))) out.push(`P6 ${runId}: ${cores[0]!.name} core recovered the same log differently twice`);
  for (const core of cores.slice(1)) {
    if (!bytesEqual(first, core.recoverEncoded(log))) out.push(`P6 ${runId}: ${cores[0]!.name} and ${core.name} cores disagree on the log`);
  }
  return out;
}
