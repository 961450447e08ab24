import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32c, crc32cUpdate } from './crc32c.js';

/** Bit-at-a-time CRC-32C straight from the definition, to check the sliced tables against. */
function crc32cBitwise(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

describe('crc32c', () => {
  it('has the check value of docs/log-format.md', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
  });
  it('is 0 on empty input', () => {
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });
  it('matches the bitwise definition on any bytes and any sub-range', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const start = bytes.length ? a % (bytes.length + 1) : 0;
        const end = start + (bytes.length - start ? b % (bytes.length - start + 1) : 0);
        expect(crc32c(bytes, start, end)).toBe(crc32cBitwise(bytes.subarray(start, end)));
      }),
      { numRuns: 300 },
    );
  });
  it('can be computed in pieces', () => {
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => (i * 31) & 0xff);
    const piecewise = crc32cUpdate(crc32cUpdate(0xffffffff, bytes, 0, 37), bytes, 37, 100) ^ 0xffffffff;
    expect(piecewise >>> 0).toBe(crc32c(bytes));
  });
  it('matches the bitwise definition at every length up to 80 from every offset up to 17', () => {
    // Crosses each phase of the sliced loop: 16-byte blocks, the 8-byte step, single bytes.
    const data = Uint8Array.from({ length: 160 }, (_, i) => Math.imul(i, 2654435761) >>> 24);
    for (let start = 0; start <= 17; start++) {
      for (let len = 0; len <= 80; len++) {
        const expected = crc32cBitwise(data.subarray(start, start + len));
        expect(crc32c(data, start, start + len)).toBe(expected);
        const cut = start + (len >> 1);
        expect((crc32cUpdate(crc32cUpdate(0xffffffff, data, start, cut), data, cut, start + len) ^ 0xffffffff) >>> 0).toBe(expected);
      }
    }
  });
});
