//! Specification of admission (docs/core-api.md, "Admission", "Admission request encoding",
//! "Admission encoding"). Trusted model; erased in normal builds.

#[cfg(verus_keep_ghost)] // spec items exist only when ghost code is kept
use vstd::bytes::spec_u32_to_le_bytes;
use vstd::prelude::*;

#[allow(unused_imports)] // used only by ghost code
use crate::spec::codec::*;
#[allow(unused_imports)] // used only by ghost code
use crate::spec::recovery::*;

verus! {

pub enum SpecRequest {
    Resume { id: Seq<u8> },
    ForkAt { seq: u32 },
    ContinueFrom { seq: u32 },
}

/// verdict 1 accept / 2 refuse; reason 0 on accept, else 1..9; detail; seq; offset.
pub struct SpecAdmission {
    pub verdict: u8,
    pub reason: u8,
    pub detail: u8,
    pub seq: u32,
    pub offset: u32,
}

pub open spec fn reason_already_consumed() -> u8 { 1 }
pub open spec fn reason_not_parked() -> u8 { 2 }
pub open spec fn reason_unknown_interrupt() -> u8 { 3 }
pub open spec fn reason_not_a_checkpoint() -> u8 { 4 }
pub open spec fn reason_beyond_head() -> u8 { 5 }
pub open spec fn reason_implicit_fork() -> u8 { 6 }
pub open spec fn reason_log_invalid() -> u8 { 7 }
pub open spec fn reason_no_run() -> u8 { 8 }
pub open spec fn reason_bad_request() -> u8 { 9 }

pub open spec fn spec_parse_request(req: Seq<u8>) -> Option<SpecRequest> {
    match spec_take_u8(req, 0) {
        None => None,
        Some((tag, i)) => if tag == 1 {
            match spec_take_name(req, i) {
                Some((id, j)) => if j == req.len() { Some(SpecRequest::Resume { id }) } else { None },
                None => None,
            }
        } else if tag == 2 || tag == 3 {
            match spec_take_u32(req, i) {
                Some((n, j)) => if j == req.len() {
                    if tag == 2 { Some(SpecRequest::ForkAt { seq: n }) } else { Some(SpecRequest::ContinueFrom { seq: n }) }
                } else {
                    None
                },
                None => None,
            }
        } else {
            None
        },
    }
}

pub open spec fn spec_accept(seq: u32, offset: u32) -> SpecAdmission {
    SpecAdmission { verdict: 1, reason: 0, detail: 0, seq, offset }
}

pub open spec fn spec_refuse(reason: u8, seq: u32, offset: u32) -> SpecAdmission {
    SpecAdmission { verdict: 2, reason, detail: 0, seq, offset }
}

/// Where the record at position `n` is, in a log whose records up to `n` are sound: its start
/// offset and the framing context it is read in (the chain value before it, whether a format-2
/// record came before it). The walk starts at offset `o`, position `s`.
pub open spec fn spec_record_place(log: Seq<u8>, o: int, s: u32, prev: u32, v2_seen: bool, n: u32) -> (int, u32, bool)
    decreases log.len() - o,
{
    if s >= n {
        (o, prev, v2_seen)
    } else {
        match spec_read_frame(log, o, s, prev, v2_seen) {
            SpecFrame::Sound { version, end, chain, .. } => if o < end {
                spec_record_place(log, end, (s + 1) as u32, chain, v2_seen || version == 2, n)
            } else {
                (o, prev, v2_seen)
            },
            _ => (o, prev, v2_seen),
        }
    }
}

/// Start offset of the record at position `n` (from the start of the log).
pub open spec fn spec_record_start(log: Seq<u8>, n: u32) -> int {
    spec_record_place(log, 0, 0, 0, false, n).0
}

pub open spec fn spec_admit_resume(r: SpecRecovered, id: Seq<u8>) -> SpecAdmission {
    let head = (r.record_count - 1) as u32;
    let len = r.durable_len as u32;
    if r.run.claims.contains_key(id) {
        spec_refuse(reason_already_consumed(), r.run.claims[id].0, r.run.claims[id].1)
    } else if r.run.phase matches SpecPhase::Parked { id: p, .. } && p == id {
        spec_accept(r.record_count as u32, len)
    } else if !(r.run.phase is Parked) {
        spec_refuse(reason_not_parked(), head, len)
    } else {
        spec_refuse(reason_unknown_interrupt(), head, len)
    }
}

pub open spec fn spec_admit_fork(log: Seq<u8>, r: SpecRecovered, n: u32) -> SpecAdmission {
    let head = (r.record_count - 1) as u32;
    if n > head {
        spec_refuse(reason_beyond_head(), head, r.durable_len as u32)
    } else {
        let (start, prev, v2_seen) = spec_record_place(log, 0, 0, 0, false, n);
        match spec_read_frame(log, start, n, prev, v2_seen) {
            SpecFrame::Sound { kind, end, .. } => if kind == 1 || kind == 2 {
                spec_accept((n + 1) as u32, end as u32)
            } else {
                spec_refuse(reason_not_a_checkpoint(), n, start as u32)
            },
            _ => spec_refuse(reason_not_a_checkpoint(), n, start as u32),
        }
    }
}

pub open spec fn spec_admit_continue(r: SpecRecovered, n: u32) -> SpecAdmission {
    let head = (r.record_count - 1) as u32;
    let len = r.durable_len as u32;
    if n == head {
        spec_accept(r.record_count as u32, len)
    } else if n > head {
        spec_refuse(reason_beyond_head(), head, len)
    } else {
        spec_refuse(reason_implicit_fork(), head, len)
    }
}

pub open spec fn spec_admit(log: Seq<u8>, req: Seq<u8>) -> SpecAdmission {
    match spec_recover(log) {
        Err(e) => SpecAdmission {
            verdict: 2,
            reason: reason_log_invalid(),
            detail: e.code,
            seq: e.seq,
            offset: e.offset as u32,
        },
        Ok(r) => if r.record_count == 0 {
            spec_refuse(reason_no_run(), 0, 0)
        } else {
            match spec_parse_request(req) {
                None => spec_refuse(reason_bad_request(), 0, 0),
                Some(SpecRequest::Resume { id }) => spec_admit_resume(r, id),
                Some(SpecRequest::ForkAt { seq }) => spec_admit_fork(log, r, seq),
                Some(SpecRequest::ContinueFrom { seq }) => spec_admit_continue(r, seq),
            }
        },
    }
}

pub open spec fn spec_encode_admission(a: SpecAdmission) -> Seq<u8> {
    seq![a.verdict, a.reason, a.detail] + spec_u32_to_le_bytes(a.seq) + spec_u32_to_le_bytes(a.offset)
}

/// The admission encoding: what `admit(log, request)` must return, byte for byte.
pub open spec fn spec_admission_encoding(log: Seq<u8>, req: Seq<u8>) -> Seq<u8> {
    spec_encode_admission(spec_admit(log, req))
}

} // verus!
