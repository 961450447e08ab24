/**
 * The parse limit for recovery in plain JavaScript: walk the record framing of docs/log-format.md
 * and check both checksums, the seq and (format 2) the link, nothing else (no payload parsing, no
 * state machine, no result). Any recovery core must do at least this much work per byte, so its time is the floor a
 * core is compared against. Uses the TypeScript codec's CRC-32C (slice-by-16).
 */

import { crc32cUpdate } from 'remit/core';

export interface FramingWalk {
  records: number;
  durableLen: number;
  /** -1 when the log ends cleanly or in a torn tail; else the offset of the first bad record. */
  badOffset: number;
}

function u32(log: Uint8Array, pos: number): number {
  return (log[pos]! | (log[pos + 1]! << 8) | (log[pos + 2]! << 16) | (log[pos + 3]! << 24)) >>> 0;
}

const linkScratch = new Uint8Array(8);

export function walkFraming(log: Uint8Array): FramingWalk {
  let offset = 0;
  let seq = 0;
  let sawV2 = false;
  const end = log.length;
  while (end - offset >= 12) {
    const headerCheck = (crc32cUpdate(0xffffffff, log, offset, offset + 10) ^ 0xffffffff) & 0xffff;
    const version = log[offset + 8];
    if (headerCheck !== (log[offset + 10]! | (log[offset + 11]! << 8)) || !(version === 2 || (version === 1 && !sawV2))) {
      return { records: seq, durableLen: offset, badOffset: offset };
    }
    const payloadLen = u32(log, offset);
    if (payloadLen > 0x3fff_ffff) return { records: seq, durableLen: offset, badOffset: offset };
    const payloadEnd = offset + 12 + payloadLen;
    const recordEnd = payloadEnd + (version === 2 ? 8 : 4);
    if (recordEnd > end) break; // torn tail: not durable, not an error
    const recordCrc = (crc32cUpdate(0xffffffff, log, offset, payloadEnd) ^ 0xffffffff) >>> 0;
    if (recordCrc !== u32(log, payloadEnd) || u32(log, offset + 4) !== seq) {
      return { records: seq, durableLen: offset, badOffset: offset };
    }
    if (version === 2) {
      // The chain value before a record is the last 4 bytes of the record before it (0 at seq 0).
      if (offset === 0) linkScratch.fill(0, 0, 4);
      else linkScratch.set(log.subarray(offset - 4, offset), 0);
      linkScratch.set(log.subarray(payloadEnd, payloadEnd + 4), 4);
      const link = (crc32cUpdate(0xffffffff, linkScratch, 0, 8) ^ 0xffffffff) >>> 0;
      if (link !== u32(log, payloadEnd + 4)) return { records: seq, durableLen: offset, badOffset: offset };
      sawV2 = true;
    }
    offset = recordEnd;
    seq++;
  }
  return { records: seq, durableLen: offset, badOffset: -1 };
}
