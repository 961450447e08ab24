/**
 * Quick recovery benchmark (tinybench): one log per size (10^3 .. 10^6 records, a realistic mix of
 * kinds, states of 20-200 bytes), built once, recovered by the Wasm core, the TypeScript reference
 * and a plain-JS baseline that only walks the framing and checks both checksums (the floor any
 * recovery pays). Prints median records/s and MB/s per implementation and the Wasm/reference ratio.
 *
 *   npx tsx bench/recovery-quick.ts [--max-records 1000000]
 */

import { Bench } from 'tinybench';
import { encodeRecord } from 'remit/core';
import { crc32c } from 'remit/core';
import { reference } from 'remit/core';
import { RecordKind, type LogRecord, type RecoveryCore } from 'remit/core';
import { loadWasmCore } from 'remit/core';
import { readScriptArgs, wholeOption } from './lib/script-args.js';

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
    // As the shell names it: node@parkSeq, the park being the fifth record of the loop.
    const id = te.encode(`approve@${parts.length + 4}`);
    const steps: Array<Omit<LogRecord, 'seq'>> = [
      { kind: RecordKind.NODE_COMPLETED, node: names.prepare, next: names.charge, stateForm: form(), state: state() },
      { kind: RecordKind.EFFECT_INTENT, node: names.charge, key },
      { kind: RecordKind.EFFECT_DONE, node: names.charge, key, result: te.encode('{"receipt":"r-000000"}') },
      { kind: RecordKind.NODE_COMPLETED, node: names.charge, next: names.approve, stateForm: form(), state: state() },
      { kind: RecordKind.INTERRUPT_PARKED, node: names.approve, interruptId: id },
      { kind: RecordKind.RESUME_CLAIMED, interruptId: id, value: te.encode('{"approved":true}') },
      { kind: RecordKind.NODE_COMPLETED, node: names.approve, next: names.prepare, stateForm: form(), state: state() },
    ] as unknown as Array<Omit<LogRecord, 'seq'>>;
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

async function main(): Promise<void> {
  const usage = `usage: npx tsx bench/recovery-quick.ts [options]
  --max-records N   the largest log, 1000 to 1000000: logs of 10^3, 10^4, ... up to it (1000000)
  --help            this text`;
  const values = readScriptArgs('recovery-quick', usage, { 'max-records': '1000000' });
  const maxRecords = wholeOption('recovery-quick', 'max-records', values['max-records'], 1_000, 1_000_000);
  let wasm: RecoveryCore | null = null;
  try {
    wasm = await loadWasmCore();
  } catch (e) {
    console.warn(`(Wasm core not measured: ${(e as Error).message})`);
  }
  const rows: Row[] = [];
  for (const n of [1_000, 10_000, 100_000, 1_000_000].filter((x) => x <= maxRecords)) {
    const log = buildLog(n);
    const expected = (reference.recover(log) as { recordCount?: number }).recordCount;
    if (expected !== n || framingBaseline(log) !== n) throw new Error(`bench log of ${n} records did not recover whole`);
    if (wasm && (wasm.recover(log) as { recordCount?: number }).recordCount !== n) throw new Error('wasm recovered a different count');
    const bench = new Bench({ time: n >= 100_000 ? 0 : 300, iterations: n >= 1_000_000 ? 5 : n >= 100_000 ? 8 : 20, warmupIterations: 2 });
    if (wasm) bench.add('wasm', () => void wasm!.recoverEncoded(log));
    bench.add('reference', () => void reference.recoverEncoded(log));
    bench.add('framing+crc baseline', () => void framingBaseline(log));
    await bench.run();
    for (const task of bench.tasks) {
      const result = task.result as { latency?: { p50: number } } | undefined;
      const p50Ms = result?.latency?.p50 ?? NaN;
      rows.push({ records: n, mb: log.length / 1e6, impl: task.name, p50Ms, recordsPerS: n / (p50Ms / 1000), mbPerS: log.length / 1e6 / (p50Ms / 1000) });
    }
  }
  console.log('records   log_MB  implementation          p50_ms   records_per_s   MB_per_s');
  for (const r of rows) {
    console.log(
      `${String(r.records).padStart(8)}  ${r.mb.toFixed(2).padStart(6)}  ${r.impl.padEnd(22)} ${r.p50Ms.toFixed(3).padStart(8)}  ` +
      `${Math.round(r.recordsPerS).toLocaleString('en-US').padStart(14)}  ${r.mbPerS.toFixed(1).padStart(9)}`,
    );
  }
  if (wasm) {
    for (const n of new Set(rows.map((r) => r.records))) {
      const w = rows.find((r) => r.records === n && r.impl === 'wasm')!;
      const ref = rows.find((r) => r.records === n && r.impl === 'reference')!;
      console.log(`${n} records: wasm/reference throughput ratio ${(w.recordsPerS / ref.recordsPerS).toFixed(2)}`);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
