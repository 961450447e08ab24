//! The record codec of docs/log-format.md: framing (header check, record CRC, the v2 chain link,
//! torn tail versus corruption) and the payload of every record kind, in both directions.
//!
//! Decoding never copies: every byte field of a decoded record is a slice of the input. The only
//! allocation is the node table of `RUN_STARTED` (once per log).

use alloc::vec::Vec;
use vstd::prelude::*;

use crate::crc::{crc32c_update, header_check_of_register};
#[allow(unused_imports)] // used only by ghost code
use crate::spec::codec::*;

/// Version byte of a format-1 record (no link).
pub const FORMAT_VERSION_1: u8 = 1;
/// Version byte of a format-2 record (record_crc followed by the chain link).
pub const FORMAT_VERSION_2: u8 = 2;
/// The version the shell writes.
pub const FORMAT_VERSION: u8 = FORMAT_VERSION_2;
/// Header bytes: payload_len, seq, version, kind, header_check.
pub const HEADER_LEN: usize = 12;
/// Bytes covered by the header check (payload_len, seq, version, kind).
pub const HEADER_CHECKED_LEN: usize = 10;
/// Trailer bytes of a v1 record: record_crc.
pub const TRAILER_LEN: usize = 4;
/// Trailer bytes of a v2 record: record_crc, link.
pub const TRAILER_LEN_V2: usize = 8;
/// Largest allowed `payload_len`.
pub const MAX_PAYLOAD_LEN: u32 = 0x3FFF_FFFF;
/// Longest allowed `name` field, in bytes.
pub const MAX_NAME_LEN: usize = 1024;

verus! {

/// Recovery error codes (docs/core-api.md, "Error codes"). The discriminant is the wire value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum LogErrorCode {
    BadHeader = 1,
    BadVersion = 2,
    RecordTooLarge = 3,
    BadChecksum = 4,
    BadSeq = 5,
    BadKind = 6,
    MalformedPayload = 7,
    ImpossibleOrder = 8,
    UnknownNode = 9,
    DuplicateInterrupt = 10,
    BadNodeTable = 11,
    BadLink = 12,
}

/// Record kind bytes.
pub const KIND_RUN_STARTED: u8 = 1;
pub const KIND_NODE_COMPLETED: u8 = 2;
pub const KIND_EFFECT_INTENT: u8 = 3;
pub const KIND_EFFECT_DONE: u8 = 4;
pub const KIND_INTERRUPT_PARKED: u8 = 5;
pub const KIND_RESUME_CLAIMED: u8 = 6;
pub const KIND_FORKED: u8 = 7;
pub const KIND_RUN_COMPLETED: u8 = 8;
pub const KIND_RUN_FAILED: u8 = 9;
/// Kinds 10 and 11 exist only in v2 records.
pub const KIND_EFFECT_ATTEMPT: u8 = 10;
pub const KIND_EFFECT_RELEASED: u8 = 11;
/// The last kind byte of each version.
pub const LAST_KIND_V1: u8 = KIND_RUN_FAILED;
pub const LAST_KIND_V2: u8 = KIND_EFFECT_RELEASED;

/// Node kinds in the node table.
pub const NODE_PURE: u8 = 1;
pub const NODE_EFFECT: u8 = 2;
pub const NODE_INTERRUPT: u8 = 3;

/// One node-table entry. `kind` keeps any byte: the codec reads it, recovery judges it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct NodeEntry<'a> {
    pub name: &'a [u8],
    pub kind: u8,
}

/// The `RUN_STARTED` payload.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RunStarted<'a> {
    pub run_id: &'a [u8],
    pub workflow: &'a [u8],
    pub version: &'a [u8],
    pub fingerprint: &'a [u8],
    pub definition: &'a [u8],
    pub nodes: Vec<NodeEntry<'a>>,
    pub start_node: &'a [u8],
    pub state: &'a [u8],
}

/// One decoded record payload (docs/log-format.md, "Record kinds"). Byte fields borrow the log.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Record<'a> {
    RunStarted(RunStarted<'a>),
    NodeCompleted { node: &'a [u8], next: &'a [u8], state_form: u8, state: &'a [u8] },
    EffectIntent { node: &'a [u8], key: &'a [u8] },
    EffectDone { node: &'a [u8], key: &'a [u8], result: &'a [u8] },
    InterruptParked { node: &'a [u8], interrupt_id: &'a [u8] },
    ResumeClaimed { interrupt_id: &'a [u8], value: &'a [u8] },
    Forked { source_run_id: &'a [u8], source_seq: u32, run_id: &'a [u8], intent: &'a [u8] },
    RunCompleted,
    RunFailed { node: &'a [u8], code: &'a [u8], message: &'a [u8] },
    /// v2 only: the claim of attempt `attempt` of the effect instance (node, key).
    EffectAttempt { node: &'a [u8], key: &'a [u8], attempt: u32, lease: &'a [u8] },
    /// v2 only: attempt `attempt` given up by its owner, without an outcome.
    EffectReleased { node: &'a [u8], key: &'a [u8], attempt: u32, reason: &'a [u8] },
}

impl<'a> Record<'a> {
    /// The record's kind byte.
    pub fn kind(&self) -> (k: u8)
        ensures
            k == spec_kind_byte(self@),
    {
        match self {
            Record::RunStarted(_) => KIND_RUN_STARTED,
            Record::NodeCompleted { .. } => KIND_NODE_COMPLETED,
            Record::EffectIntent { .. } => KIND_EFFECT_INTENT,
            Record::EffectDone { .. } => KIND_EFFECT_DONE,
            Record::InterruptParked { .. } => KIND_INTERRUPT_PARKED,
            Record::ResumeClaimed { .. } => KIND_RESUME_CLAIMED,
            Record::Forked { .. } => KIND_FORKED,
            Record::RunCompleted => KIND_RUN_COMPLETED,
            Record::RunFailed { .. } => KIND_RUN_FAILED,
            Record::EffectAttempt { .. } => KIND_EFFECT_ATTEMPT,
            Record::EffectReleased { .. } => KIND_EFFECT_RELEASED,
        }
    }
}

impl<'a> View for NodeEntry<'a> {
    type V = SpecNodeEntry;

    open spec fn view(&self) -> SpecNodeEntry {
        SpecNodeEntry { name: self.name@, kind: self.kind }
    }
}

impl<'a> View for Record<'a> {
    type V = SpecRecord;

    open spec fn view(&self) -> SpecRecord {
        match self {
            Record::RunStarted(r) => SpecRecord::RunStarted {
                run_id: r.run_id@,
                workflow: r.workflow@,
                version: r.version@,
                fingerprint: r.fingerprint@,
                definition: r.definition@,
                nodes: r.nodes@.map_values(|e: NodeEntry<'a>| e@),
                start_node: r.start_node@,
                state: r.state@,
            },
            Record::NodeCompleted { node, next, state_form, state } => SpecRecord::NodeCompleted {
                node: node@,
                next: next@,
                state_form: *state_form,
                state: state@,
            },
            Record::EffectIntent { node, key } => SpecRecord::EffectIntent { node: node@, key: key@ },
            Record::EffectDone { node, key, result } => SpecRecord::EffectDone {
                node: node@,
                key: key@,
                result: result@,
            },
            Record::InterruptParked { node, interrupt_id } => SpecRecord::InterruptParked {
                node: node@,
                interrupt_id: interrupt_id@,
            },
            Record::ResumeClaimed { interrupt_id, value } => SpecRecord::ResumeClaimed {
                interrupt_id: interrupt_id@,
                value: value@,
            },
            Record::Forked { source_run_id, source_seq, run_id, intent } => SpecRecord::Forked {
                source_run_id: source_run_id@,
                source_seq: *source_seq,
                run_id: run_id@,
                intent: intent@,
            },
            Record::RunCompleted => SpecRecord::RunCompleted,
            Record::RunFailed { node, code, message } => SpecRecord::RunFailed {
                node: node@,
                code: code@,
                message: message@,
            },
            Record::EffectAttempt { node, key, attempt, lease } => SpecRecord::EffectAttempt {
                node: node@,
                key: key@,
                attempt: *attempt,
                lease: lease@,
            },
            Record::EffectReleased { node, key, attempt, reason } => SpecRecord::EffectReleased {
                node: node@,
                key: key@,
                attempt: *attempt,
                reason: reason@,
            },
        }
    }
}

/// Wire value of an error code.
pub open spec fn spec_code(c: LogErrorCode) -> u8 {
    match c {
        LogErrorCode::BadHeader => 1,
        LogErrorCode::BadVersion => 2,
        LogErrorCode::RecordTooLarge => 3,
        LogErrorCode::BadChecksum => 4,
        LogErrorCode::BadSeq => 5,
        LogErrorCode::BadKind => 6,
        LogErrorCode::MalformedPayload => 7,
        LogErrorCode::ImpossibleOrder => 8,
        LogErrorCode::UnknownNode => 9,
        LogErrorCode::DuplicateInterrupt => 10,
        LogErrorCode::BadNodeTable => 11,
        LogErrorCode::BadLink => 12,
    }
}

/// What the framing of a record depends on besides its own bytes: the chain value of the
/// record before it (0 before the first) and whether a v2 record came before it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Chain {
    /// The previous record's chain value: its link (v2) or its record_crc (v1); 0 at seq 0.
    pub prev: u32,
    /// A v2 record came before: a v1 record may no longer follow.
    pub v2_seen: bool,
}

/// The v2 link of a record: CRC-32C over (previous chain value, this record's record_crc),
/// both as u32 little-endian. Trusted (`external_body`): `to_le_bytes` has no specification here.
#[verifier::external_body]
pub fn link_of(prev: u32, record_crc: u32) -> (link: u32)
    ensures
        link == spec_link(prev, record_crc),
{
    let [p0, p1, p2, p3] = prev.to_le_bytes();
    let [c0, c1, c2, c3] = record_crc.to_le_bytes();
    crc32c_update(0xFFFF_FFFFu32, &[p0, p1, p2, p3, c0, c1, c2, c3]) ^ 0xFFFF_FFFFu32
}

/// What the framing checks found at one offset (docs/log-format.md, "Integrity classification").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Frame<'a> {
    /// No bytes remain: the log ends cleanly.
    End,
    /// The remaining bytes are an incomplete record: not durable.
    Torn,
    /// A corrupt record. `kind` is the kind byte when the header check passed, else 0.
    Corrupt { code: LogErrorCode, kind: u8 },
    /// A record whose framing is sound and whose kind is valid for its version; `end` is its
    /// end offset, `chain` its chain value (the link of a v2 record, the record_crc of a v1 one).
    Sound { version: u8, kind: u8, payload: &'a [u8], end: usize, chain: u32 },
}

impl<'a> View for Frame<'a> {
    type V = SpecFrame;

    open spec fn view(&self) -> SpecFrame {
        match self {
            Frame::End => SpecFrame::End,
            Frame::Torn => SpecFrame::Torn,
            Frame::Corrupt { code, kind } => SpecFrame::Corrupt { code: spec_code(*code), kind: *kind },
            Frame::Sound { version, kind, payload, end, chain } => SpecFrame::Sound {
                version: *version,
                kind: *kind,
                payload: payload@,
                end: *end as int,
                chain: *chain,
            },
        }
    }
}

/// Classifies the bytes of `log` at `offset`, expecting the record at position `expected_seq`
/// after the records summarised by `chain`. Steps 1-9 of the integrity classification, in the
/// document's order; the payload is not parsed here. Trusted (`external_body`): std slice
/// splitting has no Verus specification here.
#[verifier::external_body]
pub fn read_frame<'a>(log: &'a [u8], offset: usize, expected_seq: u32, chain: Chain) -> (frame: Frame<'a>)
    ensures
        frame@ == spec_read_frame(log@, offset as int, expected_seq, chain.prev, chain.v2_seen),
{
    let rest: &'a [u8] = match log.get(offset..) {
        Some(rest) => rest,
        None => return Frame::End,  // offset past the end: only reachable by a caller's bug
    };
    let (header, after_header): (&'a [u8; 12], &'a [u8]) = match rest.split_first_chunk::<12>() {
        Some(split) => split,
        None => return if rest.is_empty() { Frame::End } else { Frame::Torn },
    };
    let [l0, l1, l2, l3, s0, s1, s2, s3, version, kind, c0, c1] = *header;
    let register = crc32c_update(0xFFFF_FFFFu32, &[l0, l1, l2, l3, s0, s1, s2, s3, version, kind]);
    if header_check_of_register(register) != u16::from_le_bytes([c0, c1]) {
        return Frame::Corrupt { code: LogErrorCode::BadHeader, kind: 0 };
    }
    let v2 = version == FORMAT_VERSION_2;
    if !(v2 || (version == FORMAT_VERSION_1 && !chain.v2_seen)) {
        return Frame::Corrupt { code: LogErrorCode::BadVersion, kind };
    }
    let payload_len = u32::from_le_bytes([l0, l1, l2, l3]);
    if payload_len > MAX_PAYLOAD_LEN {
        return Frame::Corrupt { code: LogErrorCode::RecordTooLarge, kind };
    }
    // payload_len <= 2^30 - 1, so the cast is lossless on 32- and 64-bit targets.
    let (payload, after_payload) = match after_header.split_at_checked(payload_len as usize) {
        Some(split) => split,
        None => return Frame::Torn,
    };
    let (stored_crc, stored_link) = if v2 {
        match after_payload.first_chunk::<8>() {
            Some([a, b, c, d, e, f, g, h]) => (u32::from_le_bytes([*a, *b, *c, *d]), u32::from_le_bytes([*e, *f, *g, *h])),
            None => return Frame::Torn,
        }
    } else {
        match after_payload.first_chunk::<4>() {
            Some(bytes) => (u32::from_le_bytes(*bytes), 0),
            None => return Frame::Torn,
        }
    };
    // The record CRC covers bytes 0..12+L: continue the header's register over the two check
    // bytes and the payload instead of hashing the header twice.
    let register = crc32c_update(register, &[c0, c1]);
    let register = crc32c_update(register, payload);
    if register ^ 0xFFFF_FFFFu32 != stored_crc {
        return Frame::Corrupt { code: LogErrorCode::BadChecksum, kind };
    }
    if v2 && link_of(chain.prev, stored_crc) != stored_link {
        return Frame::Corrupt { code: LogErrorCode::BadLink, kind };
    }
    if u32::from_le_bytes([s0, s1, s2, s3]) != expected_seq {
        return Frame::Corrupt { code: LogErrorCode::BadSeq, kind };
    }
    let last_kind = if v2 { LAST_KIND_V2 } else { LAST_KIND_V1 };
    if !(KIND_RUN_STARTED..=last_kind).contains(&kind) {
        return Frame::Corrupt { code: LogErrorCode::BadKind, kind };
    }
    // HEADER_LEN + payload_len + trailer bytes were present after `offset`, so neither sum
    // can overflow; checked arithmetic keeps that argument out of the reader's head.
    let frame_len = if v2 { HEADER_LEN + TRAILER_LEN_V2 } else { HEADER_LEN + TRAILER_LEN };
    let record_len = (payload_len as usize).saturating_add(frame_len);
    let chain_value = if v2 { stored_link } else { stored_crc };
    Frame::Sound { version, kind, payload, end: offset.saturating_add(record_len), chain: chain_value }
}

} // verus!

impl Chain {
    /// Before the first record.
    pub const START: Chain = Chain { prev: 0, v2_seen: false };

    /// The chain after a sound record of `version` whose chain value is `value`.
    pub fn after(self, version: u8, value: u32) -> Chain {
        Chain { prev: value, v2_seen: self.v2_seen || version == FORMAT_VERSION_2 }
    }
}

/// A cursor over a payload (and over a summary, crate::summary). Every read checks the remaining
/// length; none can panic.
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(rest: &'a [u8]) -> Self {
        Reader { rest }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The bytes not read yet.
    pub(crate) fn remaining(&self) -> &'a [u8] {
        self.rest
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        let (first, rest) = self.rest.split_first()?;
        self.rest = rest;
        Some(*first)
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.rest.split_first_chunk::<4>()?;
        self.rest = rest;
        Some(u32::from_le_bytes(*head))
    }

    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u32()?).ok()?;
        let (field, rest) = self.rest.split_at_checked(len)?;
        self.rest = rest;
        Some(field)
    }

    fn name(&mut self) -> Option<&'a [u8]> {
        let field = self.bytes()?;
        if field.is_empty() || field.len() > MAX_NAME_LEN {
            return None;
        }
        Some(field)
    }

    /// The payload must be consumed exactly.
    fn finish<T>(self, value: T) -> Option<T> {
        if self.rest.is_empty() {
            Some(value)
        } else {
            None
        }
    }
}

fn parse_node_table<'a>(reader: &mut Reader<'a>) -> Option<Vec<NodeEntry<'a>>> {
    let count = reader.u32()?;
    // Each entry needs at least 6 bytes (a 4-byte length, a 1-byte name, a kind byte), so a
    // lying count cannot make us reserve more than the payload could hold.
    let plausible = reader.rest.len() / 6;
    let mut nodes = Vec::with_capacity(plausible.min(usize::try_from(count).unwrap_or(usize::MAX)));
    for _ in 0..count {
        let name = reader.name()?;
        let kind = reader.u8()?;
        nodes.push(NodeEntry { name, kind });
    }
    Some(nodes)
}

fn parse_run_started<'a>(mut r: Reader<'a>) -> Option<Record<'a>> {
    let run_id = r.name()?;
    let workflow = r.name()?;
    let version = r.bytes()?;
    let fingerprint = r.bytes()?;
    let definition = r.bytes()?;
    let nodes = parse_node_table(&mut r)?;
    let start_node = r.name()?;
    let state = r.bytes()?;
    r.finish(Record::RunStarted(RunStarted {
        run_id,
        workflow,
        version,
        fingerprint,
        definition,
        nodes,
        start_node,
        state,
    }))
}

fn parse_node_completed<'a>(mut r: Reader<'a>) -> Option<Record<'a>> {
    let node = r.name()?;
    let next = r.bytes()?;
    let state_form = r.u8()?;
    if state_form > 1 {
        return None;
    }
    let state = r.bytes()?;
    r.finish(Record::NodeCompleted { node, next, state_form, state })
}

fn parse_forked<'a>(mut r: Reader<'a>) -> Option<Record<'a>> {
    let source_run_id = r.name()?;
    let source_seq = r.u32()?;
    let run_id = r.name()?;
    let intent = r.bytes()?;
    r.finish(Record::Forked { source_run_id, source_seq, run_id, intent })
}

fn parse_simple<'a>(kind: u8, mut r: Reader<'a>) -> Option<Record<'a>> {
    match kind {
        KIND_EFFECT_INTENT => {
            let node = r.name()?;
            let key = r.name()?;
            r.finish(Record::EffectIntent { node, key })
        }
        KIND_EFFECT_DONE => {
            let node = r.name()?;
            let key = r.name()?;
            let result = r.bytes()?;
            r.finish(Record::EffectDone { node, key, result })
        }
        KIND_INTERRUPT_PARKED => {
            let node = r.name()?;
            let interrupt_id = r.name()?;
            r.finish(Record::InterruptParked { node, interrupt_id })
        }
        KIND_RESUME_CLAIMED => {
            let interrupt_id = r.name()?;
            let value = r.bytes()?;
            r.finish(Record::ResumeClaimed { interrupt_id, value })
        }
        KIND_RUN_COMPLETED => r.finish(Record::RunCompleted),
        KIND_EFFECT_ATTEMPT => {
            let node = r.name()?;
            let key = r.name()?;
            let attempt = r.u32()?;
            let lease = r.bytes()?;
            r.finish(Record::EffectAttempt { node, key, attempt, lease })
        }
        KIND_EFFECT_RELEASED => {
            let node = r.name()?;
            let key = r.name()?;
            let attempt = r.u32()?;
            let reason = r.bytes()?;
            r.finish(Record::EffectReleased { node, key, attempt, reason })
        }
        KIND_RUN_FAILED => {
            let node = r.bytes()?;
            let code = r.bytes()?;
            let message = r.bytes()?;
            r.finish(Record::RunFailed { node, code, message })
        }
        _ => None,
    }
}

/// Parses a payload of record kind `kind`. `BadKind` for a kind outside 1..11 (which kinds a
/// record of each version may carry is a framing rule, `read_frame`),
/// `MalformedPayload` when the payload does not parse exactly (a field running past the end,
/// bytes left over, an empty or over-long name, `state_form` not 0 or 1).
pub fn decode_payload(kind: u8, payload: &[u8]) -> Result<Record<'_>, LogErrorCode> {
    let reader = Reader { rest: payload };
    let parsed = match kind {
        KIND_RUN_STARTED => parse_run_started(reader),
        KIND_NODE_COMPLETED => parse_node_completed(reader),
        KIND_FORKED => parse_forked(reader),
        KIND_EFFECT_INTENT..=KIND_RESUME_CLAIMED | KIND_RUN_COMPLETED..=KIND_EFFECT_RELEASED => {
            parse_simple(kind, reader)
        }
        _ => return Err(LogErrorCode::BadKind),
    };
    parsed.ok_or(LogErrorCode::MalformedPayload)
}

/// A decoded record with its place in the log.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Decoded<'a> {
    pub seq: u32,
    pub offset: usize,
    pub record: Record<'a>,
    /// Offset just past the record.
    pub end: usize,
    /// The record's version byte (1 or 2).
    pub version: u8,
    /// The record's chain value (link of a v2 record, record_crc of a v1 one).
    pub chain: u32,
}

/// Framing or payload error at one record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DecodeError {
    pub code: LogErrorCode,
    pub seq: u32,
    pub offset: usize,
    pub kind: u8,
}

/// Decodes the record at `offset`, expected at position `seq` after the records summarised by
/// `chain`. `Ok(None)` at a clean end or a torn tail (the caller tells them apart by
/// `offset == log.len()`).
pub fn decode_record(log: &[u8], offset: usize, seq: u32, chain: Chain) -> Result<Option<Decoded<'_>>, DecodeError> {
    match read_frame(log, offset, seq, chain) {
        Frame::End | Frame::Torn => Ok(None),
        Frame::Corrupt { code, kind } => Err(DecodeError { code, seq, offset, kind }),
        Frame::Sound { version, kind, payload, end, chain } => match decode_payload(kind, payload) {
            Ok(record) => Ok(Some(Decoded { seq, offset, record, end, version, chain })),
            Err(code) => Err(DecodeError { code, seq, offset, kind }),
        },
    }
}

/// Why a record could not be encoded; `field` names the offending field.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EncodeError {
    /// A `name` field is empty.
    EmptyName { field: &'static str },
    /// A `name` field is longer than 1024 bytes.
    NameTooLong { field: &'static str },
    /// A `bytes` field is longer than `u32::MAX` bytes.
    FieldTooLong { field: &'static str },
    /// `state_form` is not 0 (snapshot) or 1 (delta).
    BadStateForm,
    /// The payload would exceed `MAX_PAYLOAD_LEN`.
    PayloadTooLarge,
    /// More than `u32::MAX` node-table entries.
    TooManyNodes,
}

struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }

    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, field: &'static str, v: &[u8]) -> Result<(), EncodeError> {
        let len = match u32::try_from(v.len()) {
            Ok(len) => len,
            Err(_) => return Err(EncodeError::FieldTooLong { field }),
        };
        self.u32(len);
        self.out.extend_from_slice(v);
        Ok(())
    }

    fn name(&mut self, field: &'static str, v: &[u8]) -> Result<(), EncodeError> {
        if v.is_empty() {
            return Err(EncodeError::EmptyName { field });
        }
        if v.len() > MAX_NAME_LEN {
            return Err(EncodeError::NameTooLong { field });
        }
        self.bytes(field, v)
    }
}

fn encode_run_started(w: &mut Writer, r: &RunStarted<'_>) -> Result<(), EncodeError> {
    w.name("run_id", r.run_id)?;
    w.name("workflow", r.workflow)?;
    w.bytes("version", r.version)?;
    w.bytes("fingerprint", r.fingerprint)?;
    w.bytes("definition", r.definition)?;
    match u32::try_from(r.nodes.len()) {
        Ok(count) => w.u32(count),
        Err(_) => return Err(EncodeError::TooManyNodes),
    }
    for entry in &r.nodes {
        w.name("node", entry.name)?;
        w.u8(entry.kind);
    }
    w.name("start_node", r.start_node)?;
    w.bytes("state", r.state)
}

/// Encodes a record's payload. Refuses exactly what `decode_payload` would reject, so
/// `decode_payload(r.kind(), &encode_payload(r)?) == Ok(r)` (the roundtrip property).
pub fn encode_payload(record: &Record<'_>) -> Result<Vec<u8>, EncodeError> {
    let mut w = Writer { out: Vec::new() };
    match record {
        Record::RunStarted(r) => encode_run_started(&mut w, r)?,
        Record::NodeCompleted { node, next, state_form, state } => {
            w.name("node", node)?;
            w.bytes("next", next)?;
            if *state_form > 1 {
                return Err(EncodeError::BadStateForm);
            }
            w.u8(*state_form);
            w.bytes("state", state)?;
        }
        Record::EffectIntent { node, key } => {
            w.name("node", node)?;
            w.name("key", key)?;
        }
        Record::EffectDone { node, key, result } => {
            w.name("node", node)?;
            w.name("key", key)?;
            w.bytes("result", result)?;
        }
        Record::InterruptParked { node, interrupt_id } => {
            w.name("node", node)?;
            w.name("interrupt_id", interrupt_id)?;
        }
        Record::ResumeClaimed { interrupt_id, value } => {
            w.name("interrupt_id", interrupt_id)?;
            w.bytes("value", value)?;
        }
        Record::Forked { source_run_id, source_seq, run_id, intent } => {
            w.name("source_run_id", source_run_id)?;
            w.u32(*source_seq);
            w.name("run_id", run_id)?;
            w.bytes("intent", intent)?;
        }
        Record::RunCompleted => {}
        Record::RunFailed { node, code, message } => {
            w.bytes("node", node)?;
            w.bytes("code", code)?;
            w.bytes("message", message)?;
        }
        Record::EffectAttempt { node, key, attempt, lease } => {
            w.name("node", node)?;
            w.name("key", key)?;
            w.u32(*attempt);
            w.bytes("lease", lease)?;
        }
        Record::EffectReleased { node, key, attempt, reason } => {
            w.name("node", node)?;
            w.name("key", key)?;
            w.u32(*attempt);
            w.bytes("reason", reason)?;
        }
    }
    Ok(w.out)
}

/// How a record is framed: format 1 (no link), or format 2 chained to the previous record's
/// chain value (its link if v2, its record_crc if v1; 0 before the first record).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Framing {
    V1,
    V2 { prev: u32 },
}

/// Appends one framed record with sequence number `seq` to `out` and returns its chain value
/// (the link of a v2 record, the record_crc of a v1 one): what the next record chains from.
pub fn encode_record_framed_into(out: &mut Vec<u8>, seq: u32, framing: Framing, record: &Record<'_>) -> Result<u32, EncodeError> {
    let payload = encode_payload(record)?;
    let payload_len = match u32::try_from(payload.len()) {
        Ok(len) if len <= MAX_PAYLOAD_LEN => len,
        _ => return Err(EncodeError::PayloadTooLarge),
    };
    let start = out.len();
    out.extend_from_slice(&payload_len.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.push(match framing {
        Framing::V1 => FORMAT_VERSION_1,
        Framing::V2 { .. } => FORMAT_VERSION_2,
    });
    out.push(record.kind());
    let header = out.get(start..).unwrap_or(&[]);
    let register = crc32c_update(0xFFFF_FFFF, header);
    out.extend_from_slice(&header_check_of_register(register).to_le_bytes());
    out.extend_from_slice(&payload);
    let framed = out.get(start..).unwrap_or(&[]);
    let record_crc = crc32c_update(0xFFFF_FFFF, framed) ^ 0xFFFF_FFFF;
    out.extend_from_slice(&record_crc.to_le_bytes());
    match framing {
        Framing::V1 => Ok(record_crc),
        Framing::V2 { prev } => {
            let link = link_of(prev, record_crc);
            out.extend_from_slice(&link.to_le_bytes());
            Ok(link)
        }
    }
}

/// Appends one framed format-1 record (header, payload, CRC) with sequence number `seq` to `out`.
pub fn encode_record_into(out: &mut Vec<u8>, seq: u32, record: &Record<'_>) -> Result<(), EncodeError> {
    encode_record_framed_into(out, seq, Framing::V1, record).map(|_| ())
}

/// Encodes one framed format-1 record with sequence number `seq`.
pub fn encode_record(seq: u32, record: &Record<'_>) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    encode_record_into(&mut out, seq, record)?;
    Ok(out)
}

/// Encodes one framed format-2 record with sequence number `seq`, chained to `prev`.
pub fn encode_record_v2(seq: u32, prev: u32, record: &Record<'_>) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    encode_record_framed_into(&mut out, seq, Framing::V2 { prev }, record)?;
    Ok(out)
}
