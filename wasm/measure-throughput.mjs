// Quick throughput probe of the Wasm core (not the project's benchmark suite, which lives in
// bench/): recovers one log of many small records through the jco bindings and reports
// records_per_s and MB_per_s. Build first: bash scripts/build-wasm.sh
//
//   node wasm/measure-throughput.mjs [record_count=1000000] [rounds=5]
import { recover } from './pkg/remit_core.js';

const recordCount = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 5);

const table = new Uint32Array(256);
for (let i = 0; i < 256; i++) {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  table[i] = c >>> 0;
}
const crc = (bytes, from, to) => {
  let c = 0xffffffff;
  for (let i = from; i < to; i++) c = table[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};

// A one-node workflow that loops on a pure node: RUN_STARTED, then NODE_COMPLETED(a -> a).
const enc = new TextEncoder();
const field = (s) => {
  const b = enc.encode(s);
  return [b.length & 0xff, (b.length >>> 8) & 0xff, 0, 0, ...b];
};
const runStarted = [...field('run'), ...field('wf'), ...field(''), ...field(''), ...field(''), 1, 0, 0, 0, ...field('a'), 1, ...field('a'), ...field('{}')];
const nodeCompleted = [...field('a'), ...field('a'), 1, ...field('{}')];
const recordLen = (payload) => 16 + payload.length;
const total = recordLen(runStarted) + (recordCount - 1) * recordLen(nodeCompleted);
const log = new Uint8Array(total);
const view = new DataView(log.buffer);
let offset = 0;
for (let seq = 0; seq < recordCount; seq++) {
  const payload = seq === 0 ? runStarted : nodeCompleted;
  view.setUint32(offset, payload.length, true);
  view.setUint32(offset + 4, seq, true);
  log[offset + 8] = 1;
  log[offset + 9] = seq === 0 ? 1 : 2;
  view.setUint16(offset + 10, crc(log, offset, offset + 10) & 0xffff, true);
  log.set(payload, offset + 12);
  view.setUint32(offset + 12 + payload.length, crc(log, offset, offset + 12 + payload.length), true);
  offset += recordLen(payload);
}

const first = recover(log);
if (first[0] !== 1 || new DataView(first.buffer, first.byteOffset).getUint32(2, true) !== recordCount) {
  throw new Error('recovery failed on the probe log');
}
let best_ms = Infinity;
for (let r = 0; r < rounds; r++) {
  const t0 = performance.now();
  recover(log);
  best_ms = Math.min(best_ms, performance.now() - t0);
}
const records_per_s = recordCount / (best_ms / 1000);
const mb_per_s = total / 1e6 / (best_ms / 1000);
console.log(
  JSON.stringify({ record_count: recordCount, log_bytes: total, bytes_per_record: total / recordCount, best_ms: +best_ms.toFixed(2), records_per_s: Math.round(records_per_s), MB_per_s: +mb_per_s.toFixed(1) }),
);
