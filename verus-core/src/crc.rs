//! CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, init 0xFFFFFFFF, final XOR 0xFFFFFFFF.
//!
//! The specification (`spec_crc32c`) is the bit-at-a-time definition; the executable code is
//! slice-by-16 over sixteen 256-entry tables built at compile time (16 KiB), with one slice-by-8
//! step and then single bytes for the tail. Recovery checksums every durable byte, so this loop
//! is most of recovery's time. The tables make the code fast and unreadable, so the two are tied
//! by an `ensures` clause (trusted here: `external_body`) and by the test twins
//! `table_crc_equals_bitwise_crc` and `every_length_and_offset_matches_the_bitwise_definition`
//! in tests/codec.rs.

use vstd::prelude::*;

/// Reflected CRC-32C polynomial.
pub const CRC32C_POLY: u32 = 0x82F6_3B78;

/// How many tables: bytes consumed per iteration of the main loop.
const SLICES: usize = 16;

/// Slice-by-16 tables: `TABLES[0]` is the classic byte table; `TABLES[k][i]` advances
/// `TABLES[k-1][i]` by one more zero byte, i.e. it is the register contribution of byte `i`
/// followed by `k` zero bytes.
// Indexing in a const initialiser cannot fail at run time: an out-of-range index would be a
// compile error, so the crate-wide ban on indexing is lifted for this one function.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const fn build_tables() -> [[u32; 256]; SLICES] {
    let mut tables = [[0u32; 256]; SLICES];
    let mut i = 0usize;
    while i < 256 {
        let mut c = i as u32;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 == 1 { (c >> 1) ^ CRC32C_POLY } else { c >> 1 };
            bit += 1;
        }
        tables[0][i] = c;
        i += 1;
    }
    let mut k = 1usize;
    while k < SLICES {
        let mut i = 0usize;
        while i < 256 {
            let prev = tables[k - 1][i];
            tables[k][i] = (prev >> 8) ^ tables[0][(prev & 0xFF) as usize];
            i += 1;
        }
        k += 1;
    }
    tables
}

static TABLES: [[u32; 256]; SLICES] = build_tables();

#[inline(always)]
fn lookup(table: usize, index: u32) -> u32 {
    // `index & 0xFF` < 256 and `table` < 16 at every call site, so LLVM removes both checks;
    // the fallbacks are unreachable and only keep the function total.
    match TABLES.get(table) {
        Some(t) => t.get((index & 0xFF) as usize).copied().unwrap_or(0),
        None => 0,
    }
}

/// The register contribution of four message bytes (a little-endian word, the register already
/// XORed into it when it is the first word) followed by `zeros` more bytes. `zeros` is 0, 4, 8 or
/// 12, so `zeros | k` is `zeros + k` for k < 4 (and needs no overflow check).
#[inline(always)]
fn fold_word(word: u32, zeros: usize) -> u32 {
    lookup(zeros | 3, word) ^ lookup(zeros | 2, word >> 8) ^ lookup(zeros | 1, word >> 16) ^ lookup(zeros, word >> 24)
}

verus! {

/// One bit step of the reflected CRC register.
pub open spec fn spec_crc_bit(c: u32) -> u32 {
    if c & 1 == 1 { (c >> 1u32) ^ 0x82F6_3B78u32 } else { c >> 1u32 }
}

/// Feed one byte: XOR it in, then eight bit steps.
pub open spec fn spec_crc_byte(c: u32, b: u8) -> u32 {
    let x = c ^ (b as u32);
    spec_crc_bit(spec_crc_bit(spec_crc_bit(spec_crc_bit(
        spec_crc_bit(spec_crc_bit(spec_crc_bit(spec_crc_bit(x))))))))
}

/// The raw register after feeding `bytes` to register value `c` (no init or final XOR).
pub open spec fn spec_crc_update(c: u32, bytes: Seq<u8>) -> u32
    decreases bytes.len(),
{
    if bytes.len() == 0 {
        c
    } else {
        spec_crc_update(spec_crc_byte(c, bytes[0]), bytes.subrange(1, bytes.len() as int))
    }
}

/// CRC-32C as docs/log-format.md defines it.
pub open spec fn spec_crc32c(bytes: Seq<u8>) -> u32 {
    spec_crc_update(0xFFFF_FFFFu32, bytes) ^ 0xFFFF_FFFFu32
}

/// Raw register update (slice-by-16). `crc32c_update(!0, b) ^ !0 == crc32c(b)`; feeding a
/// message in two pieces equals feeding it at once, which is how the record check reuses the
/// header's register.
#[verifier::external_body]
pub fn crc32c_update(state: u32, bytes: &[u8]) -> (out: u32)
    ensures
        out == spec_crc_update(state, bytes@),
{
    let mut crc = state;
    let mut blocks = bytes.chunks_exact(16);
    for block in &mut blocks {
        if let [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15] = *block {
            crc = fold_word(crc ^ u32::from_le_bytes([b0, b1, b2, b3]), 12)
                ^ fold_word(u32::from_le_bytes([b4, b5, b6, b7]), 8)
                ^ fold_word(u32::from_le_bytes([b8, b9, b10, b11]), 4)
                ^ fold_word(u32::from_le_bytes([b12, b13, b14, b15]), 0);
        }
    }
    let mut rest = blocks.remainder();
    if let Some((word, tail)) = rest.split_first_chunk::<8>() {
        let [b0, b1, b2, b3, b4, b5, b6, b7] = *word;
        crc = fold_word(crc ^ u32::from_le_bytes([b0, b1, b2, b3]), 4) ^ fold_word(u32::from_le_bytes([b4, b5, b6, b7]), 0);
        rest = tail;
    }
    for byte in rest {
        crc = (crc >> 8) ^ lookup(0, crc ^ (*byte as u32));
    }
    crc
}

/// CRC-32C of `bytes`.
pub fn crc32c(bytes: &[u8]) -> (out: u32)
    ensures
        out == spec_crc32c(bytes@),
{
    crc32c_update(0xFFFF_FFFFu32, bytes) ^ 0xFFFF_FFFFu32
}

/// The record header's check: the low 16 bits of CRC-32C over the header's first 10 bytes.
pub fn header_check_of_register(register: u32) -> (out: u16)
    ensures
        out == ((register ^ 0xFFFF_FFFFu32) & 0xFFFFu32) as u16,
{
    ((register ^ 0xFFFF_FFFFu32) & 0xFFFFu32) as u16
}

} // verus!

/// Bit-at-a-time CRC-32C: the executable copy of `spec_crc32c`, used by tests as the oracle
/// for the table-driven code. Slow on purpose.
pub fn crc32c_bitwise(bytes: &[u8]) -> u32 {
    let mut c: u32 = 0xFFFF_FFFF;
    for byte in bytes {
        c ^= *byte as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 { (c >> 1) ^ CRC32C_POLY } else { c >> 1 };
        }
    }
    c ^ 0xFFFF_FFFF
}
