/**
 * Quick recovery benchmark (tinybench): one log per size (10^3 .. 10^6 records, a realistic mix of
 * kinds, states of 20-200 bytes), built once, recovered by the Wasm core, the TypeScript reference
 * and a plain-JS baseline that only walks the framing and checks both checksums (the floor any
 * recovery pays). Prints median records/s and MB/s per implementation and the Wasm/reference ratio.
 *
 *   npx tsx bench/recovery-quick.ts [--max-records 1000000]
 */

import { Bench } from 'tinybench';
import { encodeRecord } from '../../ts-shell/src/core/codec.js';
import { crc32c } from '../../ts-shell/src/core/crc32c.js';
import { reference } from '../../ts-shell/src/core/reference-core.js';
import { RecordKind, type LogRecord, type RecoveryCore } from '../../ts-shell/src/core/types.js';
import { loadWasmCore } from '../../ts-shell/src/core/wasm-core.js';

const te = new TextEncoder();

/** A deterministic generator so every run benchmarks the same bytes. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * prepare (pure) → charge (effect) → approve (interrupt) → prepare ..., 7 records per loop; every
 * 8th checkpoint a snapshot, the rest deltas; states 20-200 bytes.
 */
function buildLog(recordCount: number): Uint8Array {
  const rand = lcg(recordCount);
  const state = () => te.encode(JSON.stringify({ pad: 'x'.repeat(8 + Math.floor(rand() * 172)) }));
  const parts: Uint8Array[] = [];
  let total = 0;
  const push = (r: Omit<LogRecord, 'seq'>) => {
    const bytes = encodeRecord({ ...r, seq: parts.length } as LogRecord);
    parts.push(bytes);
    total += bytes.length;
  };
  push({
    kind: RecordKind.RUN_STARTED, runId: te.encode('bench-run'), workflow: te.encode('order'), version: te.encode('1'),
    fingerprint: new Uint8Array(32), definition: te.encode('{"nodes":3}'),
    nodes: [{ name: te.encode('prepare'), kind: 1 }, { name: te.encode('charge'), kind: 2 }, { name: te.encode('approve'), kind: 3 }],
    startNode: te.encode('prepare'), state: state(),
  } as Omit<LogRecord, 'seq'>);
  const names = { prepare: te.encode('prepare'), charge: te.encode('charge'), approve: te.encode('approve') };
  let checkpoints = 0;
  const form = () => (++checkpoints % 8 === 0 ? 0 : 1);
  for (let loop = 0; parts.length < recordCount; loop++) {
    const key = te.encode(`bench-run/charge#${loop}`);
    const id = te.encode(`bench-run/approve#${loop}`);
    const steps: Array<Omit<LogRecord, 'seq'>> = [
      { kind: RecordKind.NODE_COMPLETED, node: names.prepare, next: names.charge, stateForm: form(), state: state() },
      { kind: RecordKind.EFFECT_INTENT, node: names.charge, key },
      { kind: RecordKind.EFFECT_DONE, node: names.charge, key, result: te.encode('{"receipt":"r-000000"}') },
      { kind: RecordKind.NODE_COMPLETED, node: names.charge, next: names.approve, stateForm: form(), state: state() },
      { kind: RecordKind.INTERRUPT_PARKED, node: names.approve, interruptId: id },
      { kind: RecordKind.RESUME_CLAIMED, interruptId: id, value: te.encode('{"approved":true}') },
      { kind: RecordKind.NODE_COMPLETED, node: names.approve, next: names.prepare, stateForm: form(), state: state() },
    ] as Array<Omit<LogRecord, 'seq'>>;
    for (const s of steps) if (parts.length < recordCount) push(s);
  }
  const log = new Uint8Array(total);
  let pos = 0;
  for (const p of parts) {
    log.set(p, pos);
    pos += p.length;
  }
  return log;
}

/** The floor: walk the framing, check header check and record CRC, count records. */
function framingBaseline(log: Uint8Array): number {
  const view = new DataView(log.buffer, log.byteOffset, log.byteLength);
  let offset = 0;
  let records = 0;
  while (log.length - offset >= 16) {
    const len = view.getUint32(offset, true);
    if ((crc32c(log, offset, offset + 10) & 0xffff) !== view.getUint16(offset + 10, true)) break;
    const end = offset + 12 + len;
    if (end + 4 > log.length || crc32c(log, offset, end) !== view.getUint32(end, true)) break;
    offset = end + 4;
    records++;
  }
  return records;
}

interface Row {
  records: number;
  mb: number;
  impl: string;
  p50Ms: number;
  recordsPerS: number;
  mbPerS: number;
}


const log = buildLog(1_000_000);
for (let k = 0; k < 4; k++) { const t = performance.now(); reference.recoverEncoded(log); console.log('ref', (performance.now() - t).toFixed(0)); }

