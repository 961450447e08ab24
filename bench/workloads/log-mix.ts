/**
 * A realistic record log for the recovery suite: one run of a six-node agent-style loop
 * (plan -> fetch -> transform -> notify -> review -> score -> plan ...), with two effect nodes (each
 * EFFECT_INTENT, EFFECT_ATTEMPT, EFFECT_DONE, as the fenced shell writes them), one
 * human-review interrupt per cycle, JSON-sized payloads of varying length, and state deltas with a
 * full snapshot whenever the deltas since the last one add up to a snapshot's size (the shell's
 * storage policy, docs/log-format.md), in log format 2 (chained). Deterministic: a fixed seed gives the same bytes every run.
 *
 * One log of the largest size is built; smaller cases are its prefixes at record boundaries, which
 * are valid logs too (recovery then stops mid-cycle, in a running phase).
 */

import { chainOf, encodeRecord, encodeRecordV2 } from 'remit/core';
import { NodeKind, RecordKind, StateForm, type LogRecord } from 'remit/core';

const utf8 = new TextEncoder();

/** Payload sizes (bytes) of the mix. Ranges are uniform. */
export const MIX = {
  deltaBytes: [30, 150] as const,
  snapshotBytes: 800,
  resultBytes: [40, 300] as const,
  resumeValueBytes: [20, 80] as const,
};

const NODES = [
  { name: 'plan', kind: NodeKind.PURE },
  { name: 'fetch', kind: NodeKind.EFFECT },
  { name: 'transform', kind: NodeKind.PURE },
  { name: 'notify', kind: NodeKind.EFFECT },
  { name: 'review', kind: NodeKind.INTERRUPT },
  { name: 'score', kind: NodeKind.PURE },
] as const;

/** Small deterministic PRNG (mulberry32): same seed, same log. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface MixedLog {
  /** The whole log. */
  bytes: Uint8Array;
  /** Byte length of the first n records, for each requested n. */
  prefixLen: Map<number, number>;
  /** Record count per kind name, over the whole log. */
  kindCounts: Record<string, number>;
}

export interface PrefixCase {
  records: number;
  log: Uint8Array;
  /** The same bytes with the first header check broken: recovery stops at offset 0 (BAD_HEADER). */
  invalidAtZero: Uint8Array;
}

/** Printable ASCII filler pool, so payload bytes look like JSON text and slices cost nothing. */
function fillerPool(rand: () => number, size: number): Uint8Array {
  const pool = new Uint8Array(size);
  for (let i = 0; i < size; i++) pool[i] = 0x61 + Math.floor(rand() * 26);
  return pool;
}

/**
 * `format`: 2 (default) as the fenced shell writes logs; 1 as the shell wrote them before log format
 * 2 (no EFFECT_ATTEMPT records, 4-byte trailers), for the recovery suite's side-by-side row.
 */
export function buildMixedLog(totalRecords: number, prefixes: readonly number[], seed = 20240601, format: 1 | 2 = 2): MixedLog {
  if (totalRecords < 1) throw new Error('buildMixedLog: need at least one record');
  const rand = prng(seed);
  const pool = fillerPool(rand, 1 << 16);
  const span = (range: readonly [number, number]) => range[0] + Math.floor(rand() * (range[1] - range[0] + 1));
  const filler = (len: number) => {
    const start = Math.floor(rand() * (pool.length - len));
    return pool.subarray(start, start + len);
  };
  const name = (s: string) => utf8.encode(s);
  const nodeName = NODES.map((n) => name(n.name));
  const parts: Uint8Array[] = [];
  const kindCounts: Record<string, number> = {};
  const prefixLen = new Map<number, number>();
  const wanted = new Set(prefixes);
  let total = 0;
  let chain = 0;
  const push = (r: LogRecord, kindName: string) => {
    // Log format 2, as the shell writes it: each record chained to the one before.
    const bytes = format === 2 ? encodeRecordV2(r, chain) : encodeRecord(r);
    chain = chainOf(bytes);
    parts.push(bytes);
    total += bytes.length;
    kindCounts[kindName] = (kindCounts[kindName] ?? 0) + 1;
    if (wanted.has(parts.length)) prefixLen.set(parts.length, total);
  };

  push({
    kind: RecordKind.RUN_STARTED, seq: 0, runId: name('run-bench-mix-0001'), workflow: name('bench-mix'),
    version: name('1'), fingerprint: filler(32), definition: filler(300),
    nodes: NODES.map((n, i) => ({ name: nodeName[i]!, kind: n.kind })), startNode: nodeName[0]!,
    state: filler(MIX.snapshotBytes),
  }, 'RUN_STARTED');

  const leaseBytes = name('{"owner":"remit-7d3c2a4e-5b7f-4f0e-9a55-2b1c8e6f0d13","leaseUntilMs":1767225600000}');
  let deltaSinceSnapshot = 0;
  let cycle = 0;
  const complete = (node: number) => {
    const next = nodeName[(node + 1) % NODES.length]!;
    let form: number = StateForm.DELTA;
    let state = filler(span(MIX.deltaBytes));
    if (deltaSinceSnapshot + state.length >= MIX.snapshotBytes) {
      form = StateForm.SNAPSHOT;
      state = filler(MIX.snapshotBytes);
      deltaSinceSnapshot = 0;
    } else {
      deltaSinceSnapshot += state.length;
    }
    return { kind: RecordKind.NODE_COMPLETED, seq: parts.length, node: nodeName[node]!, next, stateForm: form, state } as const;
  };
  while (parts.length < totalRecords) {
    for (let node = 0; node < NODES.length && parts.length < totalRecords; node++) {
      const kind = NODES[node]!.kind;
      if (kind === NodeKind.EFFECT) {
        const key = name(`run-bench-mix-0001/${NODES[node]!.name}/${cycle}`);
        push({ kind: RecordKind.EFFECT_INTENT, seq: parts.length, node: nodeName[node]!, key }, 'EFFECT_INTENT');
        if (parts.length >= totalRecords) break;
        // Format 2: the fence's attempt record between the intent and the outcome.
        if (format === 2) push({ kind: RecordKind.EFFECT_ATTEMPT, seq: parts.length, node: nodeName[node]!, key, attempt: 1, lease: leaseBytes }, 'EFFECT_ATTEMPT');
        if (format === 2 && parts.length >= totalRecords) break;
        push({ kind: RecordKind.EFFECT_DONE, seq: parts.length, node: nodeName[node]!, key, result: filler(span(MIX.resultBytes)) }, 'EFFECT_DONE');
        if (parts.length >= totalRecords) break;
      } else if (kind === NodeKind.INTERRUPT) {
        // As the shell names it: node@parkSeq (a reserved id, which the core does not list).
        const interruptId = name(`${NODES[node]!.name}@${parts.length}`);
        push({ kind: RecordKind.INTERRUPT_PARKED, seq: parts.length, node: nodeName[node]!, interruptId }, 'INTERRUPT_PARKED');
        if (parts.length >= totalRecords) break;
        push({ kind: RecordKind.RESUME_CLAIMED, seq: parts.length, interruptId, value: filler(span(MIX.resumeValueBytes)) }, 'RESUME_CLAIMED');
        if (parts.length >= totalRecords) break;
      }
      push(complete(node), 'NODE_COMPLETED');
    }
    cycle++;
  }
  const bytes = new Uint8Array(total);
  let pos = 0;
  for (const p of parts) {
    bytes.set(p, pos);
    pos += p.length;
  }
  prefixLen.set(totalRecords, total);
  return { bytes, prefixLen, kindCounts };
}

export function prefixCase(mixed: MixedLog, records: number): PrefixCase {
  const len = mixed.prefixLen.get(records);
  if (len === undefined) throw new Error(`prefixCase: no prefix of ${records} records was recorded`);
  const log = mixed.bytes.subarray(0, len);
  const invalidAtZero = log.slice();
  invalidAtZero[10] = invalidAtZero[10]! ^ 0xff;
  return { records, log, invalidAtZero };
}
