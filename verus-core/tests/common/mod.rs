//! Test support shared by the integration tests:
//! - `Rec`: an owned record with its own naive encoder (independent of the crate's codec), in
//!   both formats (format 2 chains each record to the one before by its link);
//! - `model`: the executable twin of `spec::recovery` / `spec::admission`, written from
//!   docs/core-api.md as plainly as possible (owned data, linear searches, bitwise CRC);
//! - `model_v1`: the format-1 model as it was before format 2, the oracle of "format-1 logs
//!   recover exactly as before" (with `project_to_api_v1`);
//! - `gen`: a seeded generator of valid histories, and record-level mutations of them.
#![allow(dead_code, clippy::all)]

pub mod gen;
pub mod model;
pub mod model_v1;

use remit_verus_core::crc::crc32c_bitwise;

/// One record, owned. Field order and meaning as in docs/log-format.md.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rec {
    RunStarted {
        run_id: Vec<u8>,
        workflow: Vec<u8>,
        version: Vec<u8>,
        fingerprint: Vec<u8>,
        definition: Vec<u8>,
        nodes: Vec<(Vec<u8>, u8)>,
        start_node: Vec<u8>,
        state: Vec<u8>,
    },
    NodeCompleted { node: Vec<u8>, next: Vec<u8>, state_form: u8, state: Vec<u8> },
    EffectIntent { node: Vec<u8>, key: Vec<u8> },
    EffectDone { node: Vec<u8>, key: Vec<u8>, result: Vec<u8> },
    InterruptParked { node: Vec<u8>, interrupt_id: Vec<u8> },
    ResumeClaimed { interrupt_id: Vec<u8>, value: Vec<u8> },
    Forked { source_run_id: Vec<u8>, source_seq: u32, run_id: Vec<u8>, intent: Vec<u8> },
    RunCompleted,
    RunFailed { node: Vec<u8>, code: Vec<u8>, message: Vec<u8> },
    EffectAttempt { node: Vec<u8>, key: Vec<u8>, attempt: u32, lease: Vec<u8> },
    EffectReleased { node: Vec<u8>, key: Vec<u8>, attempt: u32, reason: Vec<u8> },
}

impl Rec {
    pub fn kind(&self) -> u8 {
        match self {
            Rec::RunStarted { .. } => 1,
            Rec::NodeCompleted { .. } => 2,
            Rec::EffectIntent { .. } => 3,
            Rec::EffectDone { .. } => 4,
            Rec::InterruptParked { .. } => 5,
            Rec::ResumeClaimed { .. } => 6,
            Rec::Forked { .. } => 7,
            Rec::RunCompleted => 8,
            Rec::RunFailed { .. } => 9,
            Rec::EffectAttempt { .. } => 10,
            Rec::EffectReleased { .. } => 11,
        }
    }

    /// Payload bytes, field by field (no validation: tests may write malformed records).
    pub fn payload(&self) -> Vec<u8> {
        let mut p = Vec::new();
        match self {
            Rec::RunStarted { run_id, workflow, version, fingerprint, definition, nodes, start_node, state } => {
                for f in [run_id, workflow, version, fingerprint, definition] {
                    put_bytes(&mut p, f);
                }
                p.extend_from_slice(&(nodes.len() as u32).to_le_bytes());
                for (name, kind) in nodes {
                    put_bytes(&mut p, name);
                    p.push(*kind);
                }
                put_bytes(&mut p, start_node);
                put_bytes(&mut p, state);
            }
            Rec::NodeCompleted { node, next, state_form, state } => {
                put_bytes(&mut p, node);
                put_bytes(&mut p, next);
                p.push(*state_form);
                put_bytes(&mut p, state);
            }
            Rec::EffectIntent { node, key } => {
                put_bytes(&mut p, node);
                put_bytes(&mut p, key);
            }
            Rec::EffectDone { node, key, result } => {
                put_bytes(&mut p, node);
                put_bytes(&mut p, key);
                put_bytes(&mut p, result);
            }
            Rec::InterruptParked { node, interrupt_id } => {
                put_bytes(&mut p, node);
                put_bytes(&mut p, interrupt_id);
            }
            Rec::ResumeClaimed { interrupt_id, value } => {
                put_bytes(&mut p, interrupt_id);
                put_bytes(&mut p, value);
            }
            Rec::Forked { source_run_id, source_seq, run_id, intent } => {
                put_bytes(&mut p, source_run_id);
                p.extend_from_slice(&source_seq.to_le_bytes());
                put_bytes(&mut p, run_id);
                put_bytes(&mut p, intent);
            }
            Rec::RunCompleted => {}
            Rec::RunFailed { node, code, message } => {
                put_bytes(&mut p, node);
                put_bytes(&mut p, code);
                put_bytes(&mut p, message);
            }
            Rec::EffectAttempt { node, key, attempt, lease: tail } | Rec::EffectReleased { node, key, attempt, reason: tail } => {
                put_bytes(&mut p, node);
                put_bytes(&mut p, key);
                p.extend_from_slice(&attempt.to_le_bytes());
                put_bytes(&mut p, tail);
            }
        }
        p
    }
}

pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// Frames an arbitrary payload as record `seq` of kind `kind`, with correct checks.
pub fn frame(seq: u32, kind: u8, payload: &[u8]) -> Vec<u8> {
    frame_with(seq, seq, 1, kind, payload)
}

/// Frames with full control over the stored seq and the version byte; checks are correct.
pub fn frame_with(_position: u32, stored_seq: u32, version: u8, kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + payload.len());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&stored_seq.to_le_bytes());
    out.push(version);
    out.push(kind);
    let check = (crc32c_bitwise(&out[..10]) & 0xFFFF) as u16;
    out.extend_from_slice(&check.to_le_bytes());
    out.extend_from_slice(payload);
    let crc = crc32c_bitwise(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The v2 link, bit by bit: CRC-32C over (prev, record_crc) as u32 little-endian.
pub fn link(prev: u32, record_crc: u32) -> u32 {
    let mut b = prev.to_le_bytes().to_vec();
    b.extend_from_slice(&record_crc.to_le_bytes());
    crc32c_bitwise(&b)
}

/// Frames a payload as a format-2 record chained to `prev`, with correct checks and link.
pub fn frame_v2(seq: u32, prev: u32, kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = frame_with(seq, seq, 2, kind, payload);
    let crc = u32::from_le_bytes(out[out.len() - 4..].try_into().unwrap());
    out.extend_from_slice(&link(prev, crc).to_le_bytes());
    out
}

/// The chain value of a framed record: its last four bytes (link if v2, record_crc if v1).
pub fn chain_of(record: &[u8]) -> u32 {
    u32::from_le_bytes(record[record.len() - 4..].try_into().unwrap())
}

/// The naive encoder: `frame(seq, kind, payload)`.
pub fn encode(seq: u32, r: &Rec) -> Vec<u8> {
    frame(seq, r.kind(), &r.payload())
}

/// The naive format-2 encoder, chained to `prev`.
pub fn encode_v2(seq: u32, prev: u32, r: &Rec) -> Vec<u8> {
    frame_v2(seq, prev, r.kind(), &r.payload())
}

/// A format-1 log of the given records, numbered from 0, and the start offset of each record
/// (plus the total length at the end).
pub fn encode_log(records: &[Rec]) -> (Vec<u8>, Vec<usize>) {
    encode_log_versions(records, &vec![1; records.len()])
}

/// A format-2 log of the given records (each chained to the one before).
pub fn encode_log_v2(records: &[Rec]) -> (Vec<u8>, Vec<usize>) {
    encode_log_versions(records, &vec![2; records.len()])
}

/// A log whose record i has format `versions[i]`; format-2 records chain to the chain value of
/// the record before (its link or record_crc; 0 at seq 0).
pub fn encode_log_versions(records: &[Rec], versions: &[u8]) -> (Vec<u8>, Vec<usize>) {
    assert_eq!(records.len(), versions.len());
    let mut log = Vec::new();
    let mut starts = Vec::with_capacity(records.len() + 1);
    let mut prev = 0u32;
    for (i, r) in records.iter().enumerate() {
        starts.push(log.len());
        let bytes = if versions[i] == 2 { encode_v2(i as u32, prev, r) } else { encode(i as u32, r) };
        prev = chain_of(&bytes);
        log.extend_from_slice(&bytes);
    }
    starts.push(log.len());
    (log, starts)
}

pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A small reader over the recovery encoding, for assertions in tests.
pub struct Cursor<'a> {
    pub bytes: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }
    pub fn u8(&mut self) -> u8 {
        let v = self.bytes[self.pos];
        self.pos += 1;
        v
    }
    pub fn u32(&mut self) -> u32 {
        let v = u32::from_le_bytes(self.bytes[self.pos..self.pos + 4].try_into().unwrap());
        self.pos += 4;
        v
    }
    pub fn bytes(&mut self) -> &'a [u8] {
        let n = self.u32() as usize;
        let v = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        v
    }
    pub fn done(&self) -> bool {
        self.pos == self.bytes.len()
    }
}

/// The head of a recovery encoding: (ok, status or error code, record_count or seq,
/// durable_len or offset, torn_len or kind).
pub fn recovery_head(enc: &[u8]) -> (u8, u8, u32, u32, u32) {
    let mut c = Cursor::new(enc);
    let ok = c.u8();
    let code = c.u8();
    let a = c.u32();
    let b = c.u32();
    let d = if ok == 1 { c.u32() } else { c.u8() as u32 };
    (ok, code, a, b, d)
}

/// The next-action tag and its node name, read from a successful recovery encoding.
pub fn recovery_action(enc: &[u8]) -> (u8, Vec<u8>, Vec<Vec<u8>>, Vec<u32>) {
    let mut c = Cursor::new(enc);
    assert_eq!(c.u8(), 1);
    c.u8();
    c.u32();
    c.u32();
    c.u32();
    for _ in 0..4 {
        c.bytes();
    }
    for _ in 0..4 {
        c.u32();
    }
    let tag = c.u8();
    let (mut node, mut names, mut nums) = (Vec::new(), Vec::new(), Vec::new());
    match tag {
        1 | 2 | 5 => node = c.bytes().to_vec(),
        // INVOKE_EFFECT: intent_seq, next_attempt.
        3 => {
            node = c.bytes().to_vec();
            names.push(c.bytes().to_vec());
            nums.push(c.u32());
            nums.push(c.u32());
        }
        6 => {
            node = c.bytes().to_vec();
            names.push(c.bytes().to_vec());
            nums.push(c.u32());
        }
        // AWAIT_ATTEMPT: intent_seq, attempt, attempt_seq, attempt_offset.
        9 => {
            node = c.bytes().to_vec();
            names.push(c.bytes().to_vec());
            for _ in 0..4 {
                nums.push(c.u32());
            }
        }
        4 | 7 => {
            node = c.bytes().to_vec();
            names.push(c.bytes().to_vec());
            nums.push(c.u32());
            nums.push(c.u32());
        }
        _ => {}
    }
    (tag, node, names, nums)
}

/// The recovery encoding of core API 1 that an API-2 encoding of the same log stands for: the
/// fields API 2 added are taken out (INVOKE_EFFECT's next_attempt, each effect entry's
/// attempts). Panics on an API-2-only value (AWAIT_ATTEMPT, an attempt count or next attempt
/// other than the neutral 0 and 1): a format-1 log must never produce one.
pub fn project_to_api_v1(enc: &[u8]) -> Vec<u8> {
    if enc[0] == 0 {
        return enc.to_vec();
    }
    let mut c = Cursor::new(enc);
    let mut out = Vec::new();
    let copy = |c: &mut Cursor, n: usize, out: &mut Vec<u8>| {
        out.extend_from_slice(&c.bytes[c.pos..c.pos + n]);
        c.pos += n;
    };
    copy(&mut c, 2 + 12, &mut out);
    for _ in 0..4 {
        let n = u32::from_le_bytes(c.bytes[c.pos..c.pos + 4].try_into().unwrap()) as usize;
        copy(&mut c, 4 + n, &mut out);
    }
    copy(&mut c, 16, &mut out);
    let tag = c.bytes[c.pos];
    copy(&mut c, 1, &mut out);
    let field = |c: &mut Cursor, out: &mut Vec<u8>| {
        let n = u32::from_le_bytes(c.bytes[c.pos..c.pos + 4].try_into().unwrap()) as usize;
        out.extend_from_slice(&c.bytes[c.pos..c.pos + 4 + n]);
        c.pos += 4 + n;
    };
    match tag {
        0 | 8 => {}
        1 | 2 | 5 => field(&mut c, &mut out),
        3 => {
            field(&mut c, &mut out);
            field(&mut c, &mut out);
            copy(&mut c, 4, &mut out);
            assert_eq!(c.u32(), 1, "a format-1 log names next_attempt 1");
        }
        4 | 7 => {
            field(&mut c, &mut out);
            field(&mut c, &mut out);
            copy(&mut c, 8, &mut out);
        }
        6 => {
            field(&mut c, &mut out);
            field(&mut c, &mut out);
            copy(&mut c, 4, &mut out);
        }
        other => panic!("action tag {other} cannot come from a format-1 log"),
    }
    let effects = c.u32();
    out.extend_from_slice(&effects.to_le_bytes());
    for _ in 0..effects {
        field(&mut c, &mut out);
        copy(&mut c, 5, &mut out);
        assert_eq!(c.u32(), 0, "a format-1 log has no attempts");
    }
    out.extend_from_slice(&c.bytes[c.pos..]);
    out
}
