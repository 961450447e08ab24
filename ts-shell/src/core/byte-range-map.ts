/**
 * A hash map from byte ranges of one "home" buffer (the log) to two numbers. Keys are compared as
 * bytes, never decoded to strings, so recovery allocates nothing per lookup and treats names as
 * the opaque byte strings docs/core-api.md says they are.
 */

function hashRange(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5; // FNV-1a, 32-bit
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

export class ByteRangeMap {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly values: number[] = [];
  private readonly values2: number[] = [];
  private readonly hashes: number[] = [];
  /** Open addressing: entry index + 1, 0 = empty. Size is a power of two, at most half full. */
  private slots: Int32Array;

  constructor(private readonly home: Uint8Array, expectedSize = 4) {
    let cap = 8;
    while (cap < expectedSize * 2) cap *= 2;
    this.slots = new Int32Array(cap);
  }

  get size(): number {
    return this.starts.length;
  }

  /** Make room for `size` entries in all (one rehash now instead of one per doubling). */
  reserve(size: number): void {
    let cap = this.slots.length;
    while (cap < size * 2) cap *= 2;
    if (cap !== this.slots.length) this.rehash(cap);
  }

  /** Entry index of the key `key[start..end)` (any buffer), or -1. */
  find(key: Uint8Array, start: number, end: number): number {
    const mask = this.slots.length - 1;
    let slot = hashRange(key, start, end) & mask;
    for (;;) {
      const entry = this.slots[slot]! - 1;
      if (entry < 0) return -1;
      if (this.matches(entry, key, start, end)) return entry;
      slot = (slot + 1) & mask;
    }
  }

  /** Add the key `home[start..end)` (the caller has checked it is absent); returns its index. */
  add(start: number, end: number, value = 0, value2 = 0): number {
    const entry = this.starts.length;
    this.starts.push(start);
    this.ends.push(end);
    this.values.push(value);
    this.values2.push(value2);
    this.hashes.push(hashRange(this.home, start, end));
    if ((entry + 1) * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(entry);
    return entry;
  }

  /** Where entry `entry`'s key is in the home buffer: `[keyStart, keyEnd)`. */
  keyStart(entry: number): number {
    return this.starts[entry]!;
  }

  keyEnd(entry: number): number {
    return this.ends[entry]!;
  }

  value(entry: number): number {
    return this.values[entry]!;
  }

  value2(entry: number): number {
    return this.values2[entry]!;
  }

  private matches(entry: number, key: Uint8Array, start: number, end: number): boolean {
    const s = this.starts[entry]!;
    const len = this.ends[entry]! - s;
    if (len !== end - start) return false;
    const home = this.home;
    for (let i = 0; i < len; i++) if (home[s + i] !== key[start + i]) return false;
    return true;
  }

  private place(entry: number): void {
    const mask = this.slots.length - 1;
    let slot = this.hashes[entry]! & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = entry + 1;
  }

  private rehash(capacity: number): void {
    this.slots = new Int32Array(capacity);
    for (let e = 0; e < this.starts.length; e++) this.place(e);
  }
}
