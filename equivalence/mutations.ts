/**
 * Ways to damage a log: byte-level (bit flips, truncation, spliced or overwritten bytes, raw record
 * duplication and reordering) and record-level with the framing repaired (records duplicated,
 * swapped, deleted, spliced from another log, payload bits flipped, seqs changed; each record then
 * gets a correct header check and CRC), so that damage reaches the payload parser and the ordering
 * rules instead of always stopping at a checksum. Positions are plain numbers taken modulo the
 * log's size, so fast-check can shrink them.
 */

import fc from 'fast-check';
import { concatBytes as join, decodeRecordAt, encodeRecord } from 'remit/core';
import { crc32c } from 'remit/core';
import type { LogRecord } from 'remit/core';

export type Mutation =
  | { type: 'bit-flip'; at: number; bit: number }
  | { type: 'truncate'; at: number }
  | { type: 'splice-bytes'; at: number; bytes: Uint8Array }
  | { type: 'overwrite-bytes'; at: number; bytes: Uint8Array }
  | { type: 'duplicate-record-raw'; index: number }
  | { type: 'swap-records-raw'; i: number; j: number }
  | { type: 'duplicate-record'; index: number }
  | { type: 'swap-records'; i: number; j: number }
  | { type: 'delete-record'; index: number }
  | { type: 'splice-donor'; keep: number; from: number }
  | { type: 'payload-bit-flip'; index: number; at: number; bit: number }
  | { type: 'set-kind'; index: number; kind: number }
  | { type: 'set-seq'; index: number; seq: number }
  | { type: 'copy-field'; to: number; from: number; pick: number };

const nat = fc.nat();
export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ type: fc.constant('bit-flip' as const), at: nat, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ type: fc.constant('truncate' as const), at: nat }),
  fc.record({ type: fc.constant('splice-bytes' as const), at: nat, bytes: fc.uint8Array({ minLength: 1, maxLength: 24 }) }),
  fc.record({ type: fc.constant('overwrite-bytes' as const), at: nat, bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ type: fc.constant('duplicate-record-raw' as const), index: nat }),
  fc.record({ type: fc.constant('swap-records-raw' as const), i: nat, j: nat }),
  fc.record({ type: fc.constant('duplicate-record' as const), index: nat }),
  fc.record({ type: fc.constant('swap-records' as const), i: nat, j: nat }),
  fc.record({ type: fc.constant('delete-record' as const), index: nat }),
  fc.record({ type: fc.constant('splice-donor' as const), keep: nat, from: nat }),
  fc.record({ type: fc.constant('payload-bit-flip' as const), index: nat, at: nat, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ type: fc.constant('set-kind' as const), index: nat, kind: fc.integer({ min: 0, max: 12 }) }),
  fc.record({ type: fc.constant('set-seq' as const), index: nat, seq: fc.integer({ min: 0, max: 40 }) }),
  fc.record({ type: fc.constant('copy-field' as const), to: nat, from: nat, pick: nat }),
);

/** Byte-string fields that name something (nodes, keys, ids, runs), in a fixed order. */
const NAME_FIELDS = ['node', 'key', 'interruptId', 'next', 'startNode', 'runId', 'sourceRunId'] as const;

/**
 * Copy one naming field from record `from` into record `to` (same field when both have it): an
 * interrupt id parked twice, a result under another key, a completion of another node, ... The
 * record is re-encoded with its position as seq.
 */
function copyField(chunks: Uint8Array[], to: number, from: number, pick: number): Uint8Array | null {
  const target = decodeRecordAt(chunks[to]!, 0);
  const source = decodeRecordAt(chunks[from]!, 0);
  if (target.outcome !== 'record' || source.outcome !== 'record') return null;
  const t = target.record as unknown as Record<string, unknown>;
  const s = source.record as unknown as Record<string, unknown>;
  const targetFields = NAME_FIELDS.filter((f) => t[f] instanceof Uint8Array);
  const sourceFields = NAME_FIELDS.filter((f) => s[f] instanceof Uint8Array);
  if (targetFields.length === 0 || sourceFields.length === 0) return null;
  const shared = targetFields.filter((f) => sourceFields.includes(f));
  const field = shared.length ? shared[pick % shared.length]! : targetFields[pick % targetFields.length]!;
  const value = s[shared.length ? field : sourceFields[pick % sourceFields.length]!] as Uint8Array;
  return encodeRecord({ ...target.record, [field]: value, seq: to } as LogRecord);
}

/** Split a log into record-sized chunks by trusting each length field (no checks) + a remainder. */
export function splitRecords(log: Uint8Array): { chunks: Uint8Array[]; rest: Uint8Array } {
  const chunks: Uint8Array[] = [];
  let offset = 0;
  while (log.length - offset >= 16) {
    const len = (log[offset]! | (log[offset + 1]! << 8) | (log[offset + 2]! << 16) | (log[offset + 3]! << 24)) >>> 0;
    const end = offset + 16 + len;
    if (end > log.length) break;
    chunks.push(log.slice(offset, end));
    offset = end;
  }
  return { chunks, rest: log.slice(offset) };
}

/** Give a record chunk seq `seq` and a correct header check and record CRC. */
export function reseal(chunk: Uint8Array, seq: number): Uint8Array {
  const out = chunk.slice();
  if (out.length < 16) return out;
  out[4] = seq & 0xff; out[5] = (seq >>> 8) & 0xff; out[6] = (seq >>> 16) & 0xff; out[7] = (seq >>> 24) & 0xff;
  const check = crc32c(out, 0, 10) & 0xffff;
  out[10] = check & 0xff;
  out[11] = check >>> 8;
  const crc = crc32c(out, 0, out.length - 4);
  const p = out.length - 4;
  out[p] = crc & 0xff; out[p + 1] = (crc >>> 8) & 0xff; out[p + 2] = (crc >>> 16) & 0xff; out[p + 3] = crc >>> 24;
  return out;
}

function flipBit(bytes: Uint8Array, at: number, bit: number): void {
  bytes[at] = bytes[at]! ^ (1 << bit);
}


function resequenced(chunks: Uint8Array[]): Uint8Array {
  return join(chunks.map((c, i) => reseal(c, i)));
}

/** Apply one mutation; `donor` is another log that splice-donor takes records from. */
export function applyMutation(log: Uint8Array, m: Mutation, donor: Uint8Array): Uint8Array {
  const n = log.length;
  switch (m.type) {
    case 'bit-flip': {
      if (n === 0) return log;
      const out = log.slice();
      flipBit(out, m.at % n, m.bit);
      return out;
    }
    case 'truncate':
      return log.slice(0, m.at % (n + 1));
    case 'splice-bytes': {
      const at = m.at % (n + 1);
      return join([log.subarray(0, at), m.bytes, log.subarray(at)]);
    }
    case 'overwrite-bytes': {
      if (n === 0) return log;
      const out = log.slice();
      const at = m.at % n;
      out.set(m.bytes.subarray(0, n - at), at);
      return out;
    }
    default:
      return applyRecordMutation(log, m, donor);
  }
}

function applyRecordMutation(log: Uint8Array, m: Mutation, donor: Uint8Array): Uint8Array {
  const { chunks, rest } = splitRecords(log);
  const count = chunks.length;
  if (count === 0) return log;
  const pick = (k: number) => k % count;
  switch (m.type) {
    case 'duplicate-record-raw': {
      const i = pick(m.index);
      return join([...chunks.slice(0, i + 1), chunks[i]!, ...chunks.slice(i + 1), rest]);
    }
    case 'swap-records-raw': {
      const c = chunks.slice();
      const [i, j] = [pick(m.i), pick(m.j)];
      [c[i], c[j]] = [c[j]!, c[i]!];
      return join([...c, rest]);
    }
    case 'duplicate-record': {
      const i = pick(m.index);
      return resequenced([...chunks.slice(0, i + 1), chunks[i]!, ...chunks.slice(i + 1)]);
    }
    case 'swap-records': {
      const c = chunks.slice();
      const [i, j] = [pick(m.i), pick(m.j)];
      [c[i], c[j]] = [c[j]!, c[i]!];
      return resequenced(c);
    }
    case 'delete-record': {
      const i = pick(m.index);
      return resequenced([...chunks.slice(0, i), ...chunks.slice(i + 1)]);
    }
    case 'splice-donor': {
      const donorChunks = splitRecords(donor).chunks;
      const from = donorChunks.length ? m.from % donorChunks.length : 0;
      return resequenced([...chunks.slice(0, m.keep % (count + 1)), ...donorChunks.slice(from)]);
    }
    case 'payload-bit-flip': {
      const i = pick(m.index);
      const c = chunks.slice();
      const payloadLen = c[i]!.length - 16;
      if (payloadLen === 0) return log;
      const flipped = c[i]!.slice();
      flipBit(flipped, 12 + (m.at % payloadLen), m.bit);
      c[i] = flipped;
      return join([...c.slice(0, i), reseal(c[i]!, i), ...c.slice(i + 1), rest]);
    }
    case 'set-kind': {
      const i = pick(m.index);
      const c = chunks.slice();
      const changed = c[i]!.slice();
      changed[9] = m.kind;
      c[i] = reseal(changed, i);
      return join([...c, rest]);
    }
    case 'copy-field': {
      const i = pick(m.to);
      const copied = copyField(chunks, i, pick(m.from), m.pick);
      if (!copied) return log;
      const c = chunks.slice();
      c[i] = copied;
      return join([...c, rest]);
    }
    case 'set-seq': {
      const i = pick(m.index);
      const c = chunks.slice();
      c[i] = reseal(c[i]!, m.seq);
      return join([...c, rest]);
    }
    default:
      return log;
  }
}
