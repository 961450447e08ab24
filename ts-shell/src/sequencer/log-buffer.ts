/** The growable byte buffer a run session keeps its log in. */

import { assert } from '../assert.js';
import { chainValueBefore, MAX_LOG_BYTES } from '../core/framing.js';

/**
 * Bytes of a log a buffer does not hold: `bytes` bytes from offset `at` on (after record 0, up to
 * the head snapshot a read from a stored summary starts at; the core's summary covers them).
 */
export interface SkippedBytes {
  at: number;
  bytes: number;
}

/**
 * A run's log bytes: one buffer that grows by doubling, so appending is not a copy of the whole log.
 *
 * A session read from a stored summary holds only record 0 and the bytes from the head snapshot on
 * (docs/guide.md, "Fresh-process resume"), one after the other: the bytes between are never read,
 * and a buffer of the whole log's size for them was an allocation (and the full garbage
 * collections V8 runs for large external memory) as large as the log at every status(). Offsets the
 * core reports stay positions in the whole log: `indexOf` translates them to positions in `held`.
 */
export class LogBuffer {
  private buffer: Uint8Array;
  private length: number;
  /** The log's bytes this buffer does not hold (none: it holds the whole log). */
  private readonly skip: SkippedBytes;

  /**
   * `initial[0..length)` is what is held of the log; the rest of `initial` is room to grow into.
   * With `skip`, `initial[0..skip.at)` are the log's first bytes and the rest follow the skipped ones.
   */
  constructor(initial: Uint8Array, length = initial.length, skip: SkippedBytes = { at: 0, bytes: 0 }) {
    if (!Number.isInteger(length) || length < 0 || length > initial.length) {
      throw new RangeError(`log buffer length ${length} outside its ${initial.length}-byte buffer`);
    }
    if (!Number.isInteger(skip.at) || !Number.isInteger(skip.bytes) || skip.at < 0 || skip.bytes < 0 || (skip.bytes > 0 && skip.at > length)) {
      throw new RangeError(`log buffer skips ${skip.bytes} bytes at ${skip.at}, outside its ${length} held bytes`);
    }
    this.buffer = initial;
    this.length = length;
    this.skip = skip;
  }

  /**
   * The whole log. Only a buffer that holds all of it has one (a session opened with `wholeLog`, or
   * one whose read started right after record 0): the bytes under a view are never rewritten, since
   * the buffer only grows at its end.
   */
  get bytes(): Uint8Array {
    assert(this.skip.bytes === 0, () => `the log buffer does not hold bytes ${this.skip.at} to ${this.skip.at + this.skip.bytes} of the log`);
    return this.held;
  }

  /** The bytes held: the log itself, or record 0 followed by the bytes after the skipped ones. */
  get held(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  /** The log's length, the skipped bytes included: offsets past it are the next records'. */
  get byteLength(): number {
    return this.length + this.skip.bytes;
  }

  /** Where the bytes this buffer skips begin: the end of record 0 for a buffer made to skip (even none), else 0. */
  get skipStart(): number {
    return this.skip.at;
  }

  /** The log's bytes this buffer skips (none: 0). */
  get skippedBytes(): number {
    return this.skip.bytes;
  }

  /** Bytes this buffer takes in memory: what it holds and its room to grow. */
  get capacity(): number {
    return this.buffer.length;
  }

  /** The position in `held` of the log's byte at `offset` (up to byteLength), or -1 when it is skipped. */
  indexOf(offset: number): number {
    if (offset < this.skip.at) return offset;
    if (offset < this.skip.at + this.skip.bytes) return -1;
    return offset - this.skip.bytes;
  }

  /** The offset in the log of position `index` of `held` (indexOf's inverse). */
  offsetOf(index: number): number {
    return index < this.skip.at ? index : index + this.skip.bytes;
  }

  /**
   * The log up to `byteLength` (at least what it skips), sharing this buffer's bytes: its first push
   * copies them, so this buffer's are never rewritten.
   */
  prefix(byteLength: number): LogBuffer {
    const index = this.indexOf(byteLength);
    assert(index >= 0 && index <= this.length, () => `log prefix of ${byteLength} bytes ends outside the held bytes`);
    return new LogBuffer(this.buffer.subarray(0, index), index, this.skip);
  }

  /**
   * This log holding only its first `keep` bytes (record 0) and the bytes from offset `from` on,
   * with `room` bytes to grow into: the bytes between are skipped from then on (a buffer that
   * skips already must skip from `keep`). A copy of what is kept; offsets stay the whole log's.
   */
  skipping(keep: number, from: number, room: number): LogBuffer {
    const tail = this.indexOf(from);
    assert(keep > 0 && keep <= from && tail >= keep && (this.skip.bytes === 0 || this.skip.at === keep), () => `log buffer cannot keep ${keep} bytes and skip to ${from} (it skips ${this.skip.bytes} at ${this.skip.at})`);
    const tailBytes = this.buffer.subarray(tail, this.length);
    const buffer = new Uint8Array(keep + tailBytes.length + room);
    buffer.set(this.buffer.subarray(0, keep), 0);
    buffer.set(tailBytes, keep);
    return new LogBuffer(buffer, keep + tailBytes.length, { at: keep, bytes: from - keep });
  }

  /**
   * The chain value of the last record (chainValueBefore at the end), read in place: a step asks
   * for it at every record it adds, and a view of the log per step is an allocation for nothing.
   */
  get lastChainValue(): number {
    return chainValueBefore(this.buffer, this.length);
  }

  push(parts: readonly Uint8Array[]): void {
    let added = 0;
    for (const p of parts) added += p.length;
    const needed = this.length + added;
    if (needed > this.buffer.length) {
      const grown = new Uint8Array(grownCapacity(this.buffer.length, needed));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    for (const p of parts) {
      this.buffer.set(p, this.length);
      this.length += p.length;
    }
  }
}

/**
 * The capacity a buffer of `capacity` bytes grows to when `needed` bytes must fit: doubling, but
 * never past the most a log may hold (the session refuses records past it), which is also about
 * what a typed array can be: doubled, a log of 2.5 GiB could not take its next record.
 */
export function grownCapacity(capacity: number, needed: number): number {
  return Math.min(Math.max(needed, capacity * 2, 4096), Math.max(needed, MAX_LOG_BYTES));
}
