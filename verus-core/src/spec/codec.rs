//! Specification of the record log (docs/log-format.md) as Verus spec functions over `Seq<u8>`.
//! Trusted: this file is the model the executable code is measured against. It has no
//! executable code; in a normal build the `verus!` macro erases all of it.

#[cfg(verus_keep_ghost)] // spec items exist only when ghost code is kept
use vstd::bytes::{spec_u16_to_le_bytes, spec_u32_from_le_bytes, spec_u32_to_le_bytes};
use vstd::prelude::*;

#[cfg(verus_keep_ghost)] // spec items exist only when ghost code is kept
use crate::crc::{spec_crc_update, spec_crc32c};

verus! {

pub open spec fn spec_max_payload_len() -> int { 0x3FFF_FFFF }
pub open spec fn spec_max_name_len() -> int { 1024 }

/// Error codes as wire values (docs/core-api.md, "Error codes").
pub open spec fn code_bad_header() -> u8 { 1 }
pub open spec fn code_bad_version() -> u8 { 2 }
pub open spec fn code_record_too_large() -> u8 { 3 }
pub open spec fn code_bad_checksum() -> u8 { 4 }
pub open spec fn code_bad_seq() -> u8 { 5 }
pub open spec fn code_bad_kind() -> u8 { 6 }
pub open spec fn code_malformed_payload() -> u8 { 7 }
pub open spec fn code_impossible_order() -> u8 { 8 }
pub open spec fn code_unknown_node() -> u8 { 9 }
pub open spec fn code_duplicate_interrupt() -> u8 { 10 }
pub open spec fn code_bad_node_table() -> u8 { 11 }
pub open spec fn code_bad_link() -> u8 { 12 }

pub struct SpecNodeEntry {
    pub name: Seq<u8>,
    pub kind: u8,
}

/// A record payload, mathematically.
pub enum SpecRecord {
    RunStarted {
        run_id: Seq<u8>,
        workflow: Seq<u8>,
        version: Seq<u8>,
        fingerprint: Seq<u8>,
        definition: Seq<u8>,
        nodes: Seq<SpecNodeEntry>,
        start_node: Seq<u8>,
        state: Seq<u8>,
    },
    NodeCompleted { node: Seq<u8>, next: Seq<u8>, state_form: u8, state: Seq<u8> },
    EffectIntent { node: Seq<u8>, key: Seq<u8> },
    EffectDone { node: Seq<u8>, key: Seq<u8>, result: Seq<u8> },
    InterruptParked { node: Seq<u8>, interrupt_id: Seq<u8> },
    ResumeClaimed { interrupt_id: Seq<u8>, value: Seq<u8> },
    Forked { source_run_id: Seq<u8>, source_seq: u32, run_id: Seq<u8>, intent: Seq<u8> },
    RunCompleted,
    RunFailed { node: Seq<u8>, code: Seq<u8>, message: Seq<u8> },
    EffectAttempt { node: Seq<u8>, key: Seq<u8>, attempt: u32, lease: Seq<u8> },
    EffectReleased { node: Seq<u8>, key: Seq<u8>, attempt: u32, reason: Seq<u8> },
}

/// The framing verdict at one offset (docs/log-format.md, "Integrity classification").
pub enum SpecFrame {
    End,
    Torn,
    Corrupt { code: u8, kind: u8 },
    /// `chain`: the record's chain value (its link if v2, its record_crc if v1).
    Sound { version: u8, kind: u8, payload: Seq<u8>, end: int, chain: u32 },
}

pub open spec fn spec_kind_byte(r: SpecRecord) -> u8 {
    match r {
        SpecRecord::RunStarted { .. } => 1,
        SpecRecord::NodeCompleted { .. } => 2,
        SpecRecord::EffectIntent { .. } => 3,
        SpecRecord::EffectDone { .. } => 4,
        SpecRecord::InterruptParked { .. } => 5,
        SpecRecord::ResumeClaimed { .. } => 6,
        SpecRecord::Forked { .. } => 7,
        SpecRecord::RunCompleted => 8,
        SpecRecord::RunFailed { .. } => 9,
        SpecRecord::EffectAttempt { .. } => 10,
        SpecRecord::EffectReleased { .. } => 11,
    }
}

// ---------------------------------------------------------------- encoding

/// A `bytes` field: u32 length, then the bytes.
pub open spec fn spec_field(b: Seq<u8>) -> Seq<u8> {
    spec_u32_to_le_bytes(b.len() as u32) + b
}

pub open spec fn spec_is_name(b: Seq<u8>) -> bool {
    1 <= b.len() <= spec_max_name_len()
}

pub open spec fn spec_fits_u32(b: Seq<u8>) -> bool {
    b.len() <= u32::MAX
}

pub open spec fn spec_node_table_bytes(nodes: Seq<SpecNodeEntry>) -> Seq<u8>
    decreases nodes.len(),
{
    if nodes.len() == 0 {
        Seq::<u8>::empty()
    } else {
        spec_field(nodes[0].name) + seq![nodes[0].kind]
            + spec_node_table_bytes(nodes.subrange(1, nodes.len() as int))
    }
}

pub open spec fn spec_encode_payload(r: SpecRecord) -> Seq<u8> {
    match r {
        SpecRecord::RunStarted {
            run_id, workflow, version, fingerprint, definition, nodes, start_node, state,
        } => spec_field(run_id) + spec_field(workflow) + spec_field(version) + spec_field(
            fingerprint,
        ) + spec_field(definition) + spec_u32_to_le_bytes(nodes.len() as u32)
            + spec_node_table_bytes(nodes) + spec_field(start_node) + spec_field(state),
        SpecRecord::NodeCompleted { node, next, state_form, state } => spec_field(node)
            + spec_field(next) + seq![state_form] + spec_field(state),
        SpecRecord::EffectIntent { node, key } => spec_field(node) + spec_field(key),
        SpecRecord::EffectDone { node, key, result } => spec_field(node) + spec_field(key)
            + spec_field(result),
        SpecRecord::InterruptParked { node, interrupt_id } => spec_field(node) + spec_field(
            interrupt_id,
        ),
        SpecRecord::ResumeClaimed { interrupt_id, value } => spec_field(interrupt_id)
            + spec_field(value),
        SpecRecord::Forked { source_run_id, source_seq, run_id, intent } => spec_field(
            source_run_id,
        ) + spec_u32_to_le_bytes(source_seq) + spec_field(run_id) + spec_field(intent),
        SpecRecord::RunCompleted => Seq::<u8>::empty(),
        SpecRecord::RunFailed { node, code, message } => spec_field(node) + spec_field(code)
            + spec_field(message),
        SpecRecord::EffectAttempt { node, key, attempt, lease } => spec_field(node) + spec_field(key)
            + spec_u32_to_le_bytes(attempt) + spec_field(lease),
        SpecRecord::EffectReleased { node, key, attempt, reason } => spec_field(node) + spec_field(key)
            + spec_u32_to_le_bytes(attempt) + spec_field(reason),
    }
}

pub open spec fn spec_nodes_well_formed(nodes: Seq<SpecNodeEntry>) -> bool {
    nodes.len() <= u32::MAX && forall|i: int| 0 <= i < nodes.len() ==> spec_is_name(#[trigger] nodes[i].name)
}

/// The records the encoder accepts: exactly those the decoder can give back.
pub open spec fn spec_record_well_formed(r: SpecRecord) -> bool {
    &&& spec_encode_payload(r).len() <= spec_max_payload_len()
    &&& match r {
        SpecRecord::RunStarted {
            run_id, workflow, version, fingerprint, definition, nodes, start_node, state,
        } => spec_is_name(run_id) && spec_is_name(workflow) && spec_fits_u32(version)
            && spec_fits_u32(fingerprint) && spec_fits_u32(definition) && spec_nodes_well_formed(
            nodes,
        ) && spec_is_name(start_node) && spec_fits_u32(state),
        SpecRecord::NodeCompleted { node, next, state_form, state } => spec_is_name(node)
            && spec_fits_u32(next) && state_form <= 1 && spec_fits_u32(state),
        SpecRecord::EffectIntent { node, key } => spec_is_name(node) && spec_is_name(key),
        SpecRecord::EffectDone { node, key, result } => spec_is_name(node) && spec_is_name(key)
            && spec_fits_u32(result),
        SpecRecord::InterruptParked { node, interrupt_id } => spec_is_name(node) && spec_is_name(
            interrupt_id,
        ),
        SpecRecord::ResumeClaimed { interrupt_id, value } => spec_is_name(interrupt_id)
            && spec_fits_u32(value),
        SpecRecord::Forked { source_run_id, source_seq, run_id, intent } => spec_is_name(
            source_run_id,
        ) && spec_is_name(run_id) && spec_fits_u32(intent),
        SpecRecord::RunCompleted => true,
        SpecRecord::RunFailed { node, code, message } => spec_fits_u32(node) && spec_fits_u32(code)
            && spec_fits_u32(message),
        SpecRecord::EffectAttempt { node, key, lease, .. } => spec_is_name(node) && spec_is_name(key)
            && spec_fits_u32(lease),
        SpecRecord::EffectReleased { node, key, reason, .. } => spec_is_name(node) && spec_is_name(key)
            && spec_fits_u32(reason),
    }
}

/// The kinds a record of `version` may carry: 1..9 in format 1, 1..11 in format 2.
pub open spec fn spec_kind_allowed(version: u8, kind: u8) -> bool {
    1 <= kind && (if version == 2 { kind <= 11 } else { kind <= 9 })
}

/// Header bytes 0..10: payload_len, seq, version, kind.
pub open spec fn spec_header10(payload_len: u32, seq: u32, version: u8, kind: u8) -> Seq<u8> {
    spec_u32_to_le_bytes(payload_len) + spec_u32_to_le_bytes(seq) + seq![version, kind]
}

/// The v2 link: CRC-32C of the previous record's chain value and this record's record_crc.
pub open spec fn spec_link(prev: u32, record_crc: u32) -> u32 {
    spec_crc32c(spec_u32_to_le_bytes(prev) + spec_u32_to_le_bytes(record_crc))
}

pub open spec fn spec_header_check(header10: Seq<u8>) -> u16 {
    (spec_crc32c(header10) & 0xFFFFu32) as u16
}

/// Header, payload: the bytes record_crc covers, for a record of `version`.
pub open spec fn spec_record_body(seq: u32, version: u8, r: SpecRecord) -> Seq<u8> {
    let payload = spec_encode_payload(r);
    let h10 = spec_header10(payload.len() as u32, seq, version, spec_kind_byte(r));
    h10 + spec_u16_to_le_bytes(spec_header_check(h10)) + payload
}

/// One framed format-1 record: header, payload, CRC-32C of both.
pub open spec fn spec_encode_record(seq: u32, r: SpecRecord) -> Seq<u8> {
    let body = spec_record_body(seq, 1, r);
    body + spec_u32_to_le_bytes(spec_crc32c(body))
}

/// The record_crc of a record of `version`.
pub open spec fn spec_record_crc(seq: u32, version: u8, r: SpecRecord) -> u32 {
    spec_crc32c(spec_record_body(seq, version, r))
}

/// One framed format-2 record chained to `prev`: header, payload, record_crc, link.
pub open spec fn spec_encode_record_v2(seq: u32, prev: u32, r: SpecRecord) -> Seq<u8> {
    let body = spec_record_body(seq, 2, r);
    let crc = spec_crc32c(body);
    body + spec_u32_to_le_bytes(crc) + spec_u32_to_le_bytes(spec_link(prev, crc))
}

/// A format-1 log written record by record from seq 0.
pub open spec fn spec_encode_log(records: Seq<SpecRecord>) -> Seq<u8>
    decreases records.len(),
{
    if records.len() == 0 {
        Seq::<u8>::empty()
    } else {
        spec_encode_log(records.drop_last()) + spec_encode_record(
            (records.len() - 1) as u32,
            records.last(),
        )
    }
}

/// The chain value after a format-2 log of `records` (0 when empty).
pub open spec fn spec_chain_v2(records: Seq<SpecRecord>) -> u32
    decreases records.len(),
{
    if records.len() == 0 {
        0
    } else {
        spec_link(
            spec_chain_v2(records.drop_last()),
            spec_record_crc((records.len() - 1) as u32, 2, records.last()),
        )
    }
}

/// A format-2 log written record by record from seq 0, each record chained to the one before.
pub open spec fn spec_encode_log_v2(records: Seq<SpecRecord>) -> Seq<u8>
    decreases records.len(),
{
    if records.len() == 0 {
        Seq::<u8>::empty()
    } else {
        spec_encode_log_v2(records.drop_last()) + spec_encode_record_v2(
            (records.len() - 1) as u32,
            spec_chain_v2(records.drop_last()),
            records.last(),
        )
    }
}

// ---------------------------------------------------------------- decoding

/// Little-endian u32 at `i` (caller ensures 4 bytes exist).
pub open spec fn spec_u32_at(b: Seq<u8>, i: int) -> u32 {
    spec_u32_from_le_bytes(b.subrange(i, i + 4))
}

pub open spec fn spec_take_u8(p: Seq<u8>, i: int) -> Option<(u8, int)> {
    if 0 <= i < p.len() { Some((p[i], i + 1)) } else { None }
}

pub open spec fn spec_take_u32(p: Seq<u8>, i: int) -> Option<(u32, int)> {
    if 0 <= i && i + 4 <= p.len() { Some((spec_u32_at(p, i), i + 4)) } else { None }
}

pub open spec fn spec_take_bytes(p: Seq<u8>, i: int) -> Option<(Seq<u8>, int)> {
    match spec_take_u32(p, i) {
        Some((n, j)) => if j + n <= p.len() {
            Some((p.subrange(j, j + n), j + n))
        } else {
            None
        },
        None => None,
    }
}

pub open spec fn spec_take_name(p: Seq<u8>, i: int) -> Option<(Seq<u8>, int)> {
    match spec_take_bytes(p, i) {
        Some((b, j)) => if spec_is_name(b) { Some((b, j)) } else { None },
        None => None,
    }
}

pub open spec fn spec_take_nodes(p: Seq<u8>, i: int, count: nat) -> Option<(Seq<SpecNodeEntry>, int)>
    decreases count,
{
    if count == 0 {
        Some((Seq::<SpecNodeEntry>::empty(), i))
    } else {
        match spec_take_name(p, i) {
            Some((name, j)) => match spec_take_u8(p, j) {
                Some((kind, k)) => match spec_take_nodes(p, k, (count - 1) as nat) {
                    Some((rest, m)) => Some((seq![SpecNodeEntry { name, kind }] + rest, m)),
                    None => None,
                },
                None => None,
            },
            None => None,
        }
    }
}

/// The payload must end exactly at `end`.
pub open spec fn spec_exact(p: Seq<u8>, end: int, r: SpecRecord) -> Option<SpecRecord> {
    if end == p.len() { Some(r) } else { None }
}

pub open spec fn spec_parse_run_started(p: Seq<u8>) -> Option<SpecRecord> {
    match spec_take_name(p, 0) { None => None, Some((run_id, i1)) =>
    match spec_take_name(p, i1) { None => None, Some((workflow, i2)) =>
    match spec_take_bytes(p, i2) { None => None, Some((version, i3)) =>
    match spec_take_bytes(p, i3) { None => None, Some((fingerprint, i4)) =>
    match spec_take_bytes(p, i4) { None => None, Some((definition, i5)) =>
    match spec_take_u32(p, i5) { None => None, Some((count, i6)) =>
    match spec_take_nodes(p, i6, count as nat) { None => None, Some((nodes, i7)) =>
    match spec_take_name(p, i7) { None => None, Some((start_node, i8)) =>
    match spec_take_bytes(p, i8) { None => None, Some((state, i9)) =>
        spec_exact(p, i9, SpecRecord::RunStarted {
            run_id, workflow, version, fingerprint, definition, nodes, start_node, state,
        })
    }}}}}}}}}
}

pub open spec fn spec_parse_node_completed(p: Seq<u8>) -> Option<SpecRecord> {
    match spec_take_name(p, 0) { None => None, Some((node, i1)) =>
    match spec_take_bytes(p, i1) { None => None, Some((next, i2)) =>
    match spec_take_u8(p, i2) { None => None, Some((state_form, i3)) =>
    if state_form > 1 { None } else {
    match spec_take_bytes(p, i3) { None => None, Some((state, i4)) =>
        spec_exact(p, i4, SpecRecord::NodeCompleted { node, next, state_form, state })
    }}}}}
}

pub open spec fn spec_parse_two_names(p: Seq<u8>, kind: u8) -> Option<SpecRecord> {
    match spec_take_name(p, 0) { None => None, Some((a, i1)) =>
    match spec_take_name(p, i1) { None => None, Some((b, i2)) =>
        if kind == 3 {
            spec_exact(p, i2, SpecRecord::EffectIntent { node: a, key: b })
        } else {
            spec_exact(p, i2, SpecRecord::InterruptParked { node: a, interrupt_id: b })
        }
    }}
}

pub open spec fn spec_parse_effect_done(p: Seq<u8>) -> Option<SpecRecord> {
    match spec_take_name(p, 0) { None => None, Some((node, i1)) =>
    match spec_take_name(p, i1) { None => None, Some((key, i2)) =>
    match spec_take_bytes(p, i2) { None => None, Some((result, i3)) =>
        spec_exact(p, i3, SpecRecord::EffectDone { node, key, result })
    }}}
}

pub open spec fn spec_parse_resume_claimed(p: Seq<u8>) -> Option<SpecRecord> {
    match spec_take_name(p, 0) { None => None, Some((interrupt_id, i1)) =>
    match spec_take_bytes(p, i1) { None => None, Some((value, i2)) =>
        spec_exact(p, i2, SpecRecord::ResumeClaimed { interrupt_id, value })
    }}
}

pub open spec fn spec_parse_forked(p: Seq<u8>) -> Option<SpecRecord> {
    match spec_take_name(p, 0) { None => None, Some((source_run_id, i1)) =>
    match spec_take_u32(p, i1) { None => None, Some((source_seq, i2)) =>
    match spec_take_name(p, i2) { None => None, Some((run_id, i3)) =>
    match spec_take_bytes(p, i3) { None => None, Some((intent, i4)) =>
        spec_exact(p, i4, SpecRecord::Forked { source_run_id, source_seq, run_id, intent })
    }}}}
}

/// EFFECT_ATTEMPT (kind 10) and EFFECT_RELEASED (kind 11): node, key, attempt, then bytes.
pub open spec fn spec_parse_attempt_like(p: Seq<u8>, kind: u8) -> Option<SpecRecord> {
    match spec_take_name(p, 0) { None => None, Some((node, i1)) =>
    match spec_take_name(p, i1) { None => None, Some((key, i2)) =>
    match spec_take_u32(p, i2) { None => None, Some((attempt, i3)) =>
    match spec_take_bytes(p, i3) { None => None, Some((tail, i4)) =>
        if kind == 10 {
            spec_exact(p, i4, SpecRecord::EffectAttempt { node, key, attempt, lease: tail })
        } else {
            spec_exact(p, i4, SpecRecord::EffectReleased { node, key, attempt, reason: tail })
        }
    }}}}
}

pub open spec fn spec_parse_run_failed(p: Seq<u8>) -> Option<SpecRecord> {
    match spec_take_bytes(p, 0) { None => None, Some((node, i1)) =>
    match spec_take_bytes(p, i1) { None => None, Some((code, i2)) =>
    match spec_take_bytes(p, i2) { None => None, Some((message, i3)) =>
        spec_exact(p, i3, SpecRecord::RunFailed { node, code, message })
    }}}
}

/// `Err(code)`: BAD_KIND (6) for a kind outside 1..11, or MALFORMED_PAYLOAD (7). (Which kinds a
/// record of each version may carry is a framing rule: `spec_kind_allowed`.)
pub open spec fn spec_decode_payload(kind: u8, p: Seq<u8>) -> Result<SpecRecord, u8> {
    let parsed = if kind == 1 {
        spec_parse_run_started(p)
    } else if kind == 2 {
        spec_parse_node_completed(p)
    } else if kind == 3 || kind == 5 {
        spec_parse_two_names(p, kind)
    } else if kind == 4 {
        spec_parse_effect_done(p)
    } else if kind == 6 {
        spec_parse_resume_claimed(p)
    } else if kind == 7 {
        spec_parse_forked(p)
    } else if kind == 8 {
        spec_exact(p, 0, SpecRecord::RunCompleted)
    } else if kind == 9 {
        spec_parse_run_failed(p)
    } else {
        spec_parse_attempt_like(p, kind)
    };
    if kind < 1 || kind > 11 {
        Err(code_bad_kind())
    } else {
        match parsed {
            Some(r) => Ok(r),
            None => Err(code_malformed_payload()),
        }
    }
}

/// Steps 1-9 of the integrity classification at offset `o`, expecting position `seq` after a
/// record whose chain value is `prev` (0 at seq 0); `v2_seen`: a format-2 record came before.
pub open spec fn spec_read_frame(log: Seq<u8>, o: int, seq: u32, prev: u32, v2_seen: bool) -> SpecFrame {
    let r = log.len() - o;
    if r <= 0 {
        SpecFrame::End
    } else if r < 12 {
        SpecFrame::Torn
    } else {
        let h10 = log.subrange(o, o + 10);
        let check = (log[o + 10] as u16) | ((log[o + 11] as u16) << 8u16);
        let version = log[o + 8];
        let kind = log[o + 9];
        let len = spec_u32_at(log, o);
        let trailer: int = if version == 2 { 8 } else { 4 };
        if spec_header_check(h10) != check {
            SpecFrame::Corrupt { code: code_bad_header(), kind: 0 }
        } else if !(version == 2 || (version == 1 && !v2_seen)) {
            SpecFrame::Corrupt { code: code_bad_version(), kind }
        } else if len > spec_max_payload_len() {
            SpecFrame::Corrupt { code: code_record_too_large(), kind }
        } else if 12 + len + trailer > r {
            SpecFrame::Torn
        } else if spec_crc32c(log.subrange(o, o + 12 + len)) != spec_u32_at(log, o + 12 + len) {
            SpecFrame::Corrupt { code: code_bad_checksum(), kind }
        } else if version == 2 && spec_link(prev, spec_u32_at(log, o + 12 + len)) != spec_u32_at(
            log,
            o + 16 + len,
        ) {
            SpecFrame::Corrupt { code: code_bad_link(), kind }
        } else if spec_u32_at(log, o + 4) != seq {
            SpecFrame::Corrupt { code: code_bad_seq(), kind }
        } else if !spec_kind_allowed(version, kind) {
            SpecFrame::Corrupt { code: code_bad_kind(), kind }
        } else {
            SpecFrame::Sound {
                version,
                kind,
                payload: log.subrange(o + 12, o + 12 + len),
                end: o + 12 + len + trailer,
                chain: spec_u32_at(log, o + 12 + len + trailer - 4),
            }
        }
    }
}

/// Register continuation: what lets the executable code hash the header once.
pub open spec fn spec_crc_split_ok(a: Seq<u8>, b: Seq<u8>) -> bool {
    spec_crc_update(spec_crc_update(0xFFFF_FFFFu32, a), b) == spec_crc_update(0xFFFF_FFFFu32, a + b)
}

} // verus!
