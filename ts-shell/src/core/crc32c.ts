/**
 * CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF
 * (docs/log-format.md, "Checksum algorithm"). Slice-by-8: eight 256-entry tables let the inner loop
 * consume eight bytes per iteration, which matters because recovery checksums every durable byte.
 */

const POLY_REFLECTED = 0x82f63b78;

/** TABLES[k * 256 + b]: the CRC contribution of byte b followed by k zero bytes. */
const TABLES: Uint32Array = buildTables();

function buildTables(): Uint32Array {
  const tables = new Uint32Array(8 * 256);
  for (let b = 0; b < 256; b++) {
    let crc = b;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLY_REFLECTED : crc >>> 1;
    tables[b] = crc >>> 0;
  }
  for (let b = 0; b < 256; b++) {
    let crc = tables[b]!;
    for (let k = 1; k < 8; k++) {
      crc = tables[crc & 0xff]! ^ (crc >>> 8);
      tables[k * 256 + b] = crc >>> 0;
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
  let c = crc >>> 0;
  const end8 = end - ((end - start) & 7);
  while (i < end8) {
    const lo = (c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))) >>> 0;
    const hi = bytes[i + 4]! | (bytes[i + 5]! << 8) | (bytes[i + 6]! << 16) | (bytes[i + 7]! << 24);
    c =
      t[1792 + (lo & 0xff)]! ^
      t[1536 + ((lo >>> 8) & 0xff)]! ^
      t[1280 + ((lo >>> 16) & 0xff)]! ^
      t[1024 + (lo >>> 24)]! ^
      t[768 + (hi & 0xff)]! ^
      t[512 + ((hi >>> 8) & 0xff)]! ^
      t[256 + ((hi >>> 16) & 0xff)]! ^
      t[(hi >>> 24) & 0xff]!;
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
