import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LOG_BYTES } from '../core/framing.js';
import { LogBuffer, grownCapacity } from './log-buffer.js';

describe('LogBuffer', () => {
  it('holds exactly the bytes pushed after its initial length, whatever the room and the pieces', () => {
    fc.assert(fc.property(
      fc.uint8Array({ maxLength: 64 }), fc.nat(64), fc.array(fc.uint8Array({ maxLength: 80 }), { maxLength: 8 }),
      (initial, room, pieces) => {
        const buffer = new Uint8Array(initial.length + room);
        buffer.set(initial);
        const log = new LogBuffer(buffer, initial.length);
        const expected = [...initial];
        for (const piece of pieces) {
          log.push([piece]);
          expected.push(...piece);
        }
        expect([...log.bytes]).toEqual(expected);
        expect(log.byteLength).toBe(expected.length);
      },
    ));
  });

  it('appends into its room without copying the bytes it holds', () => {
    const buffer = new Uint8Array(1024);
    const log = new LogBuffer(buffer, 1000);
    log.push([new Uint8Array(24).fill(7)]);
    expect(log.bytes.buffer).toBe(buffer.buffer);
    log.push([Uint8Array.of(1)]);
    expect(log.bytes.buffer).not.toBe(buffer.buffer);
    expect(log.bytes[1023]).toBe(7);
    expect(log.bytes[1024]).toBe(1);
  });

  it('grows by doubling, but never past the most a log may hold, so a log over 2 GiB still takes its next record', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: MAX_LOG_BYTES }), fc.integer({ min: 1, max: 1 << 20 }), (capacity, added) => {
      const needed = Math.min(capacity + added, MAX_LOG_BYTES);
      const grown = grownCapacity(capacity, needed);
      expect(grown).toBeGreaterThanOrEqual(needed);
      expect(grown).toBeLessThanOrEqual(MAX_LOG_BYTES);
      if (2 * capacity <= MAX_LOG_BYTES) expect(grown).toBe(Math.max(needed, 2 * capacity, 4096));
    }));
    expect(grownCapacity(2.5 * 2 ** 30, 2.5 * 2 ** 30 + 100)).toBe(MAX_LOG_BYTES);
  });

  it('skipping bytes (a read from a stored summary): holds the rest, and translates offsets in the log to positions in what it holds', () => {
    fc.assert(fc.property(
      fc.uint8Array({ minLength: 1, maxLength: 32 }), fc.integer({ min: 1, max: 1 << 30 }), fc.uint8Array({ maxLength: 64 }), fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 4 }),
      (first, skipped, rest, pieces) => {
        const held = new Uint8Array([...first, ...rest]);
        const log = new LogBuffer(held, held.length, { at: first.length, bytes: skipped });
        for (const piece of pieces) log.push([piece]);
        const expected = [...first, ...rest, ...pieces.flatMap((p) => [...p])];
        expect([...log.held]).toEqual(expected);
        expect(log.byteLength).toBe(expected.length + skipped);
        expect(log.skippedBytes).toBe(skipped);
        expect(() => log.bytes).toThrow(/does not hold bytes/);
        for (let i = 0; i <= expected.length; i++) expect(log.indexOf(log.offsetOf(i))).toBe(i);
        expect(log.indexOf(first.length)).toBe(-1);
        expect(log.indexOf(first.length + skipped - 1)).toBe(-1);
        expect(log.indexOf(first.length + skipped)).toBe(first.length);
        // A prefix keeps what it skips, and its first push never writes into the bytes it shares.
        const cut = first.length + skipped + rest.length;
        const prefix = log.prefix(cut);
        expect(prefix.byteLength).toBe(cut);
        prefix.push([Uint8Array.of(7)]);
        expect([...log.held]).toEqual(expected);
        expect(prefix.held[first.length + rest.length]).toBe(7);
      },
    ));
  });

  it('skipping more later (a long drive releasing its history): holds record 0 and the bytes from the new point on, offsets unchanged', () => {
    fc.assert(fc.property(
      fc.uint8Array({ minLength: 2, maxLength: 200 }), fc.nat(), fc.nat(), fc.nat(), fc.nat(16), fc.uint8Array({ maxLength: 40 }),
      (whole, a, b, c, room, after) => {
        // keep: record 0's end; first: where an earlier skip (a read from a summary) ended; then: the new point.
        const keep = 1 + (a % (whole.length - 1));
        const first = keep + (b % (whole.length - keep + 1));
        const then = first + (c % (whole.length - first + 1));
        const read = new Uint8Array([...whole.subarray(0, keep), ...whole.subarray(first)]);
        const log = new LogBuffer(read, read.length, { at: keep, bytes: first - keep }).skipping(keep, then, room);
        expect(log.byteLength).toBe(whole.length);
        expect(log.skippedBytes).toBe(then - keep);
        expect(log.skipStart).toBe(keep);
        expect([...log.held]).toEqual([...whole.subarray(0, keep), ...whole.subarray(then)]);
        expect(log.capacity).toBe(keep + whole.length - then + room);
        for (let offset = 0; offset < whole.length; offset++) {
          const index = log.indexOf(offset);
          if (offset >= keep && offset < then) expect(index).toBe(-1);
          else expect(log.held[index]).toBe(whole[offset]);
        }
        log.push([after]);
        expect(log.byteLength).toBe(whole.length + after.length);
        expect([...log.held.subarray(log.held.length - after.length)]).toEqual([...after]);
      },
    ));
  });

  it('refuses to skip from another point than the one it already skips from, or to skip bytes it does not hold', () => {
    const read = new LogBuffer(new Uint8Array(10), 10, { at: 3, bytes: 5 });
    expect(() => read.skipping(4, 12, 0)).toThrow(/cannot keep 4 bytes and skip to 12/);
    expect(() => read.skipping(3, 6, 0)).toThrow(/cannot keep 3 bytes and skip to 6/);
    expect(() => new LogBuffer(new Uint8Array(10)).skipping(0, 5, 0)).toThrow(/cannot keep 0 bytes/);
    expect(read.skipping(3, 12, 0).held.length).toBe(6);
  });

  it('refuses a length outside its buffer', () => {
    expect(() => new LogBuffer(new Uint8Array(4), 5)).toThrow(RangeError);
    expect(() => new LogBuffer(new Uint8Array(4), -1)).toThrow(/outside its 4-byte buffer/);
  });
});
