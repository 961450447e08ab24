/**
 * The parse limit for recovery in plain JavaScript: walk the record framing of docs/log-format.md
 * and check both checksums and the seq, nothing else (no payload parsing, no state machine, no
 * result). Any recovery core must do at least this much work per byte, so its time is the floor a
 * core is compared against. Uses the TypeScript codec's CRC-32C (slice-by-8).
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

export function walkFraming(log: Uint8Array): FramingWalk {
  let offset = 0;
  let seq = 0;
  const end = log.length;
  while (end - offset >= 12) {
    const headerCheck = (crc32cUpdate(0xffffffff, log, offset, offset + 10) ^ 0xffffffff) & 0xffff;
    if (headerCheck !== (log[offset + 10]! | (log[offset + 11]! << 8)) || log[offset + 8] !== 1) {
      return { records: seq, durableLen: offset, badOffset: offset };
    }
    const payloadLen = u32(log, offset);
    if (payloadLen > 0x3fff_ffff) return { records: seq, durableLen: offset, badOffset: offset };
    const payloadEnd = offset + 12 + payloadLen;
    if (payloadEnd + 4 > end) break; // torn tail: not durable, not an error
    const recordCrc = (crc32cUpdate(0xffffffff, log, offset, payloadEnd) ^ 0xffffffff) >>> 0;
    if (recordCrc !== u32(log, payloadEnd) || u32(log, offset + 4) !== seq) {
      return { records: seq, durableLen: offset, badOffset: offset };
    }
    offset = payloadEnd + 4;
    seq++;
  }
  return { records: seq, durableLen: offset, badOffset: -1 };
}
