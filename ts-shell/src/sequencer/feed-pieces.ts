/**
 * Feeding a log to the core in pieces, so that the Wasm core's linear memory holds one piece and
 * the summary, never the whole log: a run session's reload and every view that judges a whole log
 * (runs, recoverAll, inspect, scrub, repair) go through here. By the split property
 * (docs/core-api.md, "Incremental recovery"; checked by the equivalence suite) the last piece's
 * answer is the recovery of the whole log, and the last summary the whole log's.
 */

import { assert } from '../assert.js';
import { EMPTY_SUMMARY, type Recovery, type RecoveryCore } from '../core/types.js';
import type { SkippedBytes } from './log-buffer.js';

/** No bytes skipped: the log is held whole. */
const NO_SKIP: SkippedBytes = { at: 0, bytes: 0 };

/**
 * The most log bytes handed to the core in one call (more only when one record is longer): the
 * Wasm core's linear memory grows to about this plus the summary, not to the log's size.
 */
export const FEED_CHUNK_BYTES = 1024 * 1024;

/** A core summary and the log prefix it covers. */
export interface SummaryAt {
  summary: Uint8Array;
  /** Bytes of the log the summary covers (its records are durable and checked). */
  byteLength: number;
  recordCount: number;
}

/** The summary of no bytes. */
export const EMPTY_SUMMARY_AT: SummaryAt = { summary: EMPTY_SUMMARY, byteLength: 0, recordCount: 0 };

/**
 * Feed the log's bytes from `from.byteLength` to `end` to the core from `from` in pieces of at
 * most `chunkBytes`. `log` holds the log but for the `skip.bytes` bytes from offset `skip.at` on:
 * a session read from a stored summary holds record 0 and then the bytes from the head snapshot on
 * (./log-buffer.ts), and the bytes between them, which the summary covers, are not in `log` (no
 * skip: `log` is the whole log). So `log[offset - skip.bytes]` is the log's byte at `offset` for
 * every offset from the end of the skipped bytes on, where the feed must start (asserted: a feed
 * from inside them, or from before them, would read the wrong bytes). Offsets in the answers are the whole log's.
 * A piece that ends inside a record leaves it torn and the summary where it was, so the next piece
 * starts there again, twice as long until the record fits. Returns the last answer and the summary
 * reached (durable records only: a torn tail is fed again next time; on a recovery error, the
 * summary before the piece that failed). Null when the core refuses the summary it is given (only
 * a stored one can be refused; the core's own never are).
 */
export function feedInPieces(
  core: RecoveryCore, from: SummaryAt, log: Uint8Array, end: number, chunkBytes = FEED_CHUNK_BYTES, skip: SkippedBytes = NO_SKIP,
): { recovery: Recovery; at: SummaryAt } | null {
  const skipped = skip.bytes;
  assert(
    (skipped === 0 || from.byteLength >= skip.at + skipped) && end - skipped <= log.length,
    () => `feed of log bytes ${from.byteLength} to ${end} outside the ${log.length} bytes held (${skipped} bytes skipped from ${skip.at})`,
  );
  let at = from;
  let pieceBytes = chunkBytes;
  for (;;) {
    const pieceEnd = Math.min(end, at.byteLength + pieceBytes);
    const fed = core.feed(at.summary, log.subarray(at.byteLength - skipped, pieceEnd - skipped));
    if (!fed.ok) return null;
    if (!fed.recovery.ok) return { recovery: fed.recovery, at };
    const advanced = fed.recovery.durableLen > at.byteLength;
    at = { summary: fed.summary, byteLength: fed.recovery.durableLen, recordCount: fed.recovery.recordCount };
    if (pieceEnd === end) return { recovery: fed.recovery, at };
    pieceBytes = advanced ? chunkBytes : pieceBytes * 2;
  }
}

/**
 * The recovery of the whole `log`, as `core.recover(log)` answers it, fed in pieces. A log of one
 * piece or less is recovered in one call: no summary to encode, the same bound on memory.
 */
export function recoverInPieces(core: RecoveryCore, log: Uint8Array, chunkBytes = FEED_CHUNK_BYTES): Recovery {
  if (log.length <= chunkBytes) return core.recover(log);
  const fed = feedInPieces(core, EMPTY_SUMMARY_AT, log, log.length, chunkBytes);
  assert(fed !== null, 'the core refused the empty summary (the core\'s own summaries are never refused)');
  return fed.recovery;
}
