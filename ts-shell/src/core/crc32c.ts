/**
 * CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF
 * (docs/log-format.md, "Checksum algorithm"). Slice-by-16: sixteen 256-entry tables let the inner
 * loop consume sixteen bytes per iteration (then one eight-byte step, then single bytes), which
 * matters because recovery checksums every durable byte. The same algorithm as the Rust core's
 * (verus-core/src/crc.rs).
 *
 * The tables are an Int32Array, not a Uint32Array: V8 keeps int32 values in registers, while
 * uint32 values above 2^31 become doubles, so the XOR chain ran about 1.5× slower.
 */

const POLY_REFLECTED = 0x82f63b78;

/** TABLES[k * 256 + b]: the register contribution of byte b followed by k zero bytes (as int32). */
const TABLES: Int32Array = buildTables(16);

function buildTables(slices: number): Int32Array {
  const tables = new Int32Array(slices * 256);
  for (let b = 0; b < 256; b++) {
    let crc = b;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLY_REFLECTED : crc >>> 1;
    tables[b] = crc;
  }
  for (let b = 0; b < 256; b++) {
    let crc = tables[b]! >>> 0;
    for (let k = 1; k < slices; k++) {
      crc = (tables[crc & 0xff]! ^ (crc >>> 8)) >>> 0;
      tables[k * 256 + b] = crc;
    }
  }
  return tables;
}

/**
 * Continue a CRC-32C over `bytes[start..end)`. `crc` is the running value *before* the final XOR
 * (start a fresh checksum with 0xFFFFFFFF, finish with `^ 0xFFFFFFFF`); `crc32c` does both.
 */
export function crc32cUpdate(crc: number, bytes: Uint8Array, start: number, end: number): number {
  const t = TABLES;
  let i = start;
  let c = crc | 0;
  const end16 = end - ((end - start) & 15);
  while (i < end16) {
    const w = c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    c =
      t[3840 + (w & 0xff)]! ^ t[3584 + ((w >>> 8) & 0xff)]! ^ t[3328 + ((w >>> 16) & 0xff)]! ^ t[3072 + (w >>> 24)]! ^
      t[2816 + bytes[i + 4]!]! ^ t[2560 + bytes[i + 5]!]! ^ t[2304 + bytes[i + 6]!]! ^ t[2048 + bytes[i + 7]!]! ^
      t[1792 + bytes[i + 8]!]! ^ t[1536 + bytes[i + 9]!]! ^ t[1280 + bytes[i + 10]!]! ^ t[1024 + bytes[i + 11]!]! ^
      t[768 + bytes[i + 12]!]! ^ t[512 + bytes[i + 13]!]! ^ t[256 + bytes[i + 14]!]! ^ t[bytes[i + 15]!]!;
    i += 16;
  }
  if (end - i >= 8) {
    const w = c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    c =
      t[1792 + (w & 0xff)]! ^ t[1536 + ((w >>> 8) & 0xff)]! ^ t[1280 + ((w >>> 16) & 0xff)]! ^ t[1024 + (w >>> 24)]! ^
      t[768 + bytes[i + 4]!]! ^ t[512 + bytes[i + 5]!]! ^ t[256 + bytes[i + 6]!]! ^ t[bytes[i + 7]!]!;
    i += 8;
  }
  while (i < end) {
    c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
    i++;
  }
  return c >>> 0;
}

/** CRC-32C of `bytes[start..end)` (whole array by default), as an unsigned 32-bit number. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return (crc32cUpdate(0xffffffff, bytes, start, end) ^ 0xffffffff) >>> 0;
}
