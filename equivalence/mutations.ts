/**
 * Ways to damage a log: byte-level (bit flips, truncation, spliced or overwritten bytes, raw record
 * duplication and reordering) and record-level with the framing repaired (records duplicated,
 * swapped, deleted, spliced from another log, payload bits flipped, kinds, seqs or formats changed;
 * each record then gets a correct header check and CRC and, in format 2, the whole chain of links
 * is recomputed), so that damage reaches the payload parser and the ordering rules instead of
 * always stopping at a checksum. Three mutations repair less on purpose, to reach the chain rules:
 * `stale-link` (a record resealed but the records after it not relinked: BAD_LINK after an edit),
 * `relink-wrong` (a record chained to a wrong predecessor), `splice-donor-record` (a donor's record
 * put in at the same seq with its own link: a record copied from another run). Positions are plain
 * numbers taken modulo the log's size, so fast-check can shrink them.
 */

import fc from 'fast-check';
import { concatBytes as join, decodeRecordAt, encodeRecord, encodeRecordV2, linkOf } from 'remit/core';
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
  | { type: 'copy-field'; to: number; from: number; pick: number }
  | { type: 'set-version'; index: number; version: number }
  | { type: 'stale-link'; index: number; at: number; bit: number }
  | { type: 'relink-wrong'; index: number; chain: number }
  | { type: 'splice-donor-record'; index: number; from: number }
  | { type: 'set-attempt'; index: number; attempt: number };

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
  fc.record({ type: fc.constant('set-version' as const), index: nat, version: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ type: fc.constant('stale-link' as const), index: nat, at: nat, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ type: fc.constant('relink-wrong' as const), index: nat, chain: fc.nat() }),
  fc.record({ type: fc.constant('splice-donor-record' as const), index: nat, from: nat }),
  fc.record({ type: fc.constant('set-attempt' as const), index: nat, attempt: fc.integer({ min: 0, max: 4 }) }),
);

/** Byte-string fields that name something (nodes, keys, ids, runs), in a fixed order. */
const NAME_FIELDS = ['node', 'key', 'interruptId', 'next', 'startNode', 'runId', 'sourceRunId'] as const;

/**
 * Copy one naming field from record `from` into record `to` (same field when both have it): an
 * interrupt id parked twice, a result under another key, a completion of another node, ... The
 * record is re-encoded with its position as seq, in its own format (the caller relinks).
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
  const record = { ...target.record, [field]: value, seq: to } as LogRecord;
  return target.version === 2 ? encodeRecordV2(record, 0) : encodeRecord(record);
}

/** Header and trailer bytes of a record chunk by its version byte (format 2 carries a link). */
function overhead(bytes: Uint8Array, offset: number): number {
  return bytes[offset + 8] === 2 ? 20 : 16;
}

/** Split a log into record-sized chunks by trusting each length and version byte (no checks) + a remainder. */
export function splitRecords(log: Uint8Array): { chunks: Uint8Array[]; rest: Uint8Array } {
  const chunks: Uint8Array[] = [];
  let offset = 0;
  while (log.length - offset >= 16) {
    const len = (log[offset]! | (log[offset + 1]! << 8) | (log[offset + 2]! << 16) | (log[offset + 3]! << 24)) >>> 0;
    const end = offset + overhead(log, offset) + len;
    if (end > log.length) break;
    chunks.push(log.slice(offset, end));
    offset = end;
  }
  return { chunks, rest: log.slice(offset) };
}

function putU32(out: Uint8Array, at: number, v: number): void {
  out[at] = v & 0xff; out[at + 1] = (v >>> 8) & 0xff; out[at + 2] = (v >>> 16) & 0xff; out[at + 3] = v >>> 24;
}

/**
 * Give a record chunk seq `seq`, a correct header check and record CRC and, in format 2, the link
 * to `prevChain` (null: leave the stored link, which may no longer fit).
 */
export function reseal(chunk: Uint8Array, seq: number, prevChain: number | null = null): Uint8Array {
  const out = chunk.slice();
  if (out.length < 16) return out;
  putU32(out, 4, seq);
  const check = crc32c(out, 0, 10) & 0xffff;
  out[10] = check & 0xff;
  out[11] = check >>> 8;
  const v2 = out[8] === 2 && out.length >= 20;
  const crcAt = out.length - (v2 ? 8 : 4);
  const crc = crc32c(out, 0, crcAt);
  putU32(out, crcAt, crc);
  if (v2 && prevChain !== null) putU32(out, out.length - 4, linkOf(prevChain, crc));
  return out;
}

/** The chain value a chunk passes on: its last four bytes. */
function chainOfChunk(chunk: Uint8Array): number {
  const n = chunk.length;
  return n < 4 ? 0 : (chunk[n - 4]! | (chunk[n - 3]! << 8) | (chunk[n - 2]! << 16) | (chunk[n - 1]! << 24)) >>> 0;
}

function flipBit(bytes: Uint8Array, at: number, bit: number): void {
  bytes[at] = bytes[at]! ^ (1 << bit);
}

/** Reseal every chunk with its position as seq and the links chained from the start. */
function resequenced(chunks: Uint8Array[]): Uint8Array {
  let prev = 0;
  return join(chunks.map((c, i) => {
    const sealed = reseal(c, i, prev);
    prev = chainOfChunk(sealed);
    return sealed;
  }));
}

/** Keep each chunk's stored seq; reseal and relink every chunk from `from` on (earlier ones as they are). */
function relinkedFrom(chunks: Uint8Array[], from: number): Uint8Array[] {
  let prev = from === 0 ? 0 : chainOfChunk(chunks[from - 1]!);
  return chunks.map((c, i) => {
    if (i < from || c.length < 16) return c;
    const sealed = reseal(c, (c[4]! | (c[5]! << 8) | (c[6]! << 16) | (c[7]! << 24)) >>> 0, prev);
    prev = chainOfChunk(sealed);
    return sealed;
  });
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
      const payloadLen = c[i]!.length - overhead(c[i]!, 0);
      if (payloadLen <= 0) return log;
      const flipped = c[i]!.slice();
      flipBit(flipped, 12 + (m.at % payloadLen), m.bit);
      c[i] = reseal(flipped, i);
      return join([...relinkedFrom(c, i), rest]);
    }
    case 'set-kind': {
      const i = pick(m.index);
      const c = chunks.slice();
      const changed = c[i]!.slice();
      changed[9] = m.kind;
      c[i] = changed;
      return join([...relinkedFrom(c, i), rest]);
    }
    case 'copy-field': {
      const i = pick(m.to);
      const copied = copyField(chunks, i, pick(m.from), m.pick);
      if (!copied) return log;
      const c = chunks.slice();
      c[i] = copied;
      return join([...relinkedFrom(c, i), rest]);
    }
    case 'set-seq': {
      const i = pick(m.index);
      const c = chunks.slice();
      c[i] = reseal(c[i]!, m.seq);
      return join([...relinkedFrom(c, i + 1), rest]);
    }
    case 'set-version': {
      // Re-frame record i in another format (0 and 3: BAD_VERSION; 1 after 2: BAD_VERSION).
      const i = pick(m.index);
      const step = decodeRecordAt(chunks[i]!, 0);
      if (step.outcome !== 'record') return log;
      const c = chunks.slice();
      const record = { ...step.record, seq: i } as LogRecord;
      c[i] = m.version === 2 ? encodeRecordV2(record, 0) : encodeRecord(record);
      if (m.version !== 1 && m.version !== 2) c[i] = reseal(Uint8Array.from([...c[i]!.subarray(0, 8), m.version, ...c[i]!.subarray(9)]), i);
      return join([...relinkedFrom(c, i), rest]);
    }
    case 'stale-link': {
      // Record i edited and resealed for its true predecessor, the records after it left alone.
      const i = pick(m.index);
      const c = chunks.slice();
      const payloadLen = c[i]!.length - overhead(c[i]!, 0);
      if (payloadLen <= 0) return log;
      const edited = c[i]!.slice();
      flipBit(edited, 12 + (m.at % payloadLen), m.bit);
      c[i] = reseal(edited, i, i === 0 ? 0 : chainOfChunk(c[i - 1]!));
      return join([...c, rest]);
    }
    case 'relink-wrong': {
      const i = pick(m.index);
      const c = chunks.slice();
      c[i] = reseal(c[i]!, i, m.chain >>> 0);
      return join([...c, rest]);
    }
    case 'splice-donor-record': {
      // The donor's record at the same position, bytes as they are (its own seq field and link).
      const donorChunks = splitRecords(donor).chunks;
      if (donorChunks.length === 0) return log;
      const i = pick(m.index);
      const c = chunks.slice();
      c[i] = donorChunks[(m.from + i) % donorChunks.length]!;
      return join([...c, rest]);
    }
    case 'set-attempt': {
      // A takeover or release naming another attempt; an intent turned into an attempt.
      const i = pick(m.index);
      const step = decodeRecordAt(chunks[i]!, 0);
      if (step.outcome !== 'record') return log;
      const r = step.record;
      let changed: LogRecord;
      if (r.kind === 10 || r.kind === 11) changed = { ...r, attempt: m.attempt };
      else if (r.kind === 3) changed = { kind: 10, seq: i, node: r.node, key: r.key, attempt: m.attempt, lease: new Uint8Array(0) };
      else return log;
      const c = chunks.slice();
      c[i] = encodeRecordV2({ ...changed, seq: i } as LogRecord, 0);
      return join([...relinkedFrom(c, i), rest]);
    }
    default:
      return log;
  }
}
