/** The growable byte buffer a run session keeps its log in. */

import { chainValueBefore, MAX_LOG_BYTES } from '../core/framing.js';

/** A run's log bytes: one buffer that grows by doubling, so appending is not a copy of the whole log. */
export class LogBuffer {
  private buffer: Uint8Array;
  private length: number;

  /**
   * `initial[0..length)` is the log; the rest of `initial` is room to grow into. A session read
   * from a stored summary holds a mostly untouched buffer of the whole log's size (the bytes before
   * the head snapshot are never read): room at its end keeps the first append from copying it.
   */
  constructor(initial: Uint8Array, length = initial.length) {
    if (!Number.isInteger(length) || length < 0 || length > initial.length) {
      throw new RangeError(`log buffer length ${length} outside its ${initial.length}-byte buffer`);
    }
    this.buffer = initial;
    this.length = length;
  }

  /** The log so far. Bytes under a view are never rewritten: the buffer only grows at its end. */
  get bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  get byteLength(): number {
    return this.length;
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
