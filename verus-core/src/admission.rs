//! Admission (docs/core-api.md, "Admission"): may this resume / fork / continue go ahead, judged
//! from the log alone. The model is `spec::admission::spec_admit`.

use crate::codec::{
    decode_payload, LogErrorCode, Record, FORMAT_VERSION_2, HEADER_LEN, KIND_NODE_COMPLETED, KIND_RESUME_CLAIMED, KIND_RUN_STARTED,
    MAX_NAME_LEN, TRAILER_LEN, TRAILER_LEN_V2,
};
use crate::recovery::{record_span, recover_log, reserved_interrupt_id, to_u32, Phase, Recovered};

/// A parsed admission request (docs/core-api.md, "Admission request encoding").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AdmissionRequest<'a> {
    Resume { interrupt_id: &'a [u8] },
    ForkAt { seq: u32 },
    ContinueFrom { seq: u32 },
}

/// Why an admission was refused. The discriminant is the wire value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum RefusalReason {
    AlreadyConsumed = 1,
    NotParked = 2,
    UnknownInterrupt = 3,
    NotACheckpoint = 4,
    BeyondHead = 5,
    ImplicitFork = 6,
    LogInvalid = 7,
    NoRun = 8,
    BadRequest = 9,
    /// Only from a summary (`crate::summary::admit_from_summary`): `FORK_AT(n)` with `n <= head`
    /// needs the log, which knows which records are checkpoints.
    NeedsLog = 10,
    /// Only from a summary: the bytes given are not a summary encoding.
    BadSummary = 11,
}

/// An admission verdict with the seq and offset the document assigns to it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Admission {
    Accept { seq: u32, offset: u32 },
    /// `detail` is the recovery error code when `reason` is `LogInvalid`, else 0.
    Refuse { reason: RefusalReason, detail: u8, seq: u32, offset: u32 },
}

impl Admission {
    /// (verdict, reason, detail, seq, offset) as the encoding lays them out.
    pub fn wire_fields(&self) -> (u8, u8, u8, u32, u32) {
        match *self {
            Admission::Accept { seq, offset } => (1, 0, 0, seq, offset),
            Admission::Refuse { reason, detail, seq, offset } => (2, reason as u8, detail, seq, offset),
        }
    }

    fn refuse(reason: RefusalReason, seq: u32, offset: u32) -> Self {
        Admission::Refuse { reason, detail: 0, seq, offset }
    }
}

/// Parses a request: tag 1 + `bytes` id (a name: 1..1024 bytes), tag 2 or 3 + u32. Anything
/// else, including trailing bytes, is `None`.
pub fn parse_request(request: &[u8]) -> Option<AdmissionRequest<'_>> {
    let (tag, rest) = request.split_first()?;
    let (word, rest) = rest.split_first_chunk::<4>()?;
    let value = u32::from_le_bytes(*word);
    match *tag {
        1 => {
            let len = usize::try_from(value).ok()?;
            if len == 0 || len > MAX_NAME_LEN || rest.len() != len {
                return None;
            }
            Some(AdmissionRequest::Resume { interrupt_id: rest })
        }
        2 | 3 if rest.is_empty() => Some(if *tag == 2 {
            AdmissionRequest::ForkAt { seq: value }
        } else {
            AdmissionRequest::ContinueFrom { seq: value }
        }),
        _ => None,
    }
}

/// Where an earlier claim of a reserved interrupt id is looked up: in the log, or nowhere (a
/// summary, which keeps no reserved id: its admission then needs the log).
#[derive(Clone, Copy)]
pub(crate) enum EarlierClaims<'l> {
    InLog(&'l [u8]),
    NotKept,
}

pub(crate) fn admit_resume(run: &Recovered<'_>, interrupt_id: &[u8], head: u32, earlier: EarlierClaims<'_>) -> Admission {
    if let Some(claim) = run.claim_of(interrupt_id) {
        return Admission::refuse(RefusalReason::AlreadyConsumed, claim.seq, claim.offset);
    }
    let parked_here = matches!(run.phase, Phase::Parked { interrupt_id: parked, .. } if parked == interrupt_id);
    if !parked_here {
        // A reserved id `name@s` with s < head may have been parked at s and claimed at s + 1,
        // and neither the table nor the phase says so: the record after s does.
        if let Some((_, at)) = reserved_interrupt_id(interrupt_id).filter(|&(_, at)| at < head) {
            let claim_seq = at.saturating_add(1);
            match earlier {
                EarlierClaims::NotKept => return Admission::refuse(RefusalReason::NeedsLog, claim_seq, 0),
                EarlierClaims::InLog(log) => {
                    if let Some(offset) = claim_in_log(log, interrupt_id, claim_seq) {
                        return Admission::refuse(RefusalReason::AlreadyConsumed, claim_seq, offset);
                    }
                }
            }
        }
    }
    match run.phase {
        Phase::Parked { .. } if parked_here => Admission::Accept { seq: run.record_count, offset: run.durable_len },
        Phase::Parked { .. } => Admission::refuse(RefusalReason::UnknownInterrupt, head, run.durable_len),
        _ => Admission::refuse(RefusalReason::NotParked, head, run.durable_len),
    }
}

/// The offset of record `seq` of a recovered `log` when it is the claim of `interrupt_id`. In a log
/// that recovers, a RESUME_CLAIMED follows the park of its id, so the claim of the park at `s` of a
/// reserved id is record `s + 1` or none.
fn claim_in_log(log: &[u8], interrupt_id: &[u8], seq: u32) -> Option<u32> {
    let (start, end, kind) = record_span(log, seq)?;
    if kind != KIND_RESUME_CLAIMED {
        return None;
    }
    let version = *log.get(start.checked_add(8)?)?;
    let trailer = if version == FORMAT_VERSION_2 { TRAILER_LEN_V2 } else { TRAILER_LEN };
    let payload = log.get(start.checked_add(HEADER_LEN)?..end.checked_sub(trailer)?)?;
    match decode_payload(kind, payload) {
        Ok(Record::ResumeClaimed { interrupt_id: claimed, .. }) if claimed == interrupt_id => Some(to_u32(start)),
        _ => None,
    }
}

fn admit_fork(log: &[u8], run: &Recovered<'_>, n: u32, head: u32) -> Admission {
    if n > head {
        return Admission::refuse(RefusalReason::BeyondHead, head, run.durable_len);
    }
    match record_span(log, n) {
        Some((_, end, kind)) if kind == KIND_RUN_STARTED || kind == KIND_NODE_COMPLETED => {
            // n <= head < u32::MAX, so n + 1 does not overflow.
            Admission::Accept { seq: n.saturating_add(1), offset: to_u32(end) }
        }
        Some((start, _, _)) => Admission::refuse(RefusalReason::NotACheckpoint, n, to_u32(start)),
        // Unreachable: n <= head and the log recovered, so record n exists.
        None => Admission::refuse(RefusalReason::NotACheckpoint, n, run.durable_len),
    }
}

pub(crate) fn admit_continue(run: &Recovered<'_>, n: u32, head: u32) -> Admission {
    if n == head {
        Admission::Accept { seq: run.record_count, offset: run.durable_len }
    } else if n > head {
        Admission::refuse(RefusalReason::BeyondHead, head, run.durable_len)
    } else {
        Admission::refuse(RefusalReason::ImplicitFork, head, run.durable_len)
    }
}

/// Judges an encoded request against a log. Checks run in the document's order: the log
/// recovers (else `LogInvalid`), it holds a run (else `NoRun`), the request parses (else
/// `BadRequest`), then the request's own rules.
pub fn admit_request(log: &[u8], request: &[u8]) -> Admission {
    let run = match recover_log(log) {
        Ok(run) => run,
        Err(error) => {
            return Admission::Refuse {
                reason: RefusalReason::LogInvalid,
                detail: error.code as u8,
                seq: error.seq,
                offset: error.offset,
            }
        }
    };
    let head = match run.record_count.checked_sub(1) {
        Some(head) => head,
        None => return Admission::refuse(RefusalReason::NoRun, 0, 0),
    };
    match parse_request(request) {
        None => Admission::refuse(RefusalReason::BadRequest, 0, 0),
        Some(AdmissionRequest::Resume { interrupt_id }) => admit_resume(&run, interrupt_id, head, EarlierClaims::InLog(log)),
        Some(AdmissionRequest::ForkAt { seq }) => admit_fork(log, &run, seq, head),
        Some(AdmissionRequest::ContinueFrom { seq }) => admit_continue(&run, seq, head),
    }
}

/// The recovery error code a `LogInvalid` refusal carries, for callers that want it typed.
pub fn log_error_of(admission: &Admission) -> Option<LogErrorCode> {
    match *admission {
        Admission::Refuse { reason: RefusalReason::LogInvalid, detail, .. } => match detail {
            1 => Some(LogErrorCode::BadHeader),
            2 => Some(LogErrorCode::BadVersion),
            3 => Some(LogErrorCode::RecordTooLarge),
            4 => Some(LogErrorCode::BadChecksum),
            5 => Some(LogErrorCode::BadSeq),
            6 => Some(LogErrorCode::BadKind),
            7 => Some(LogErrorCode::MalformedPayload),
            8 => Some(LogErrorCode::ImpossibleOrder),
            9 => Some(LogErrorCode::UnknownNode),
            10 => Some(LogErrorCode::DuplicateInterrupt),
            11 => Some(LogErrorCode::BadNodeTable),
            12 => Some(LogErrorCode::BadLink),
            _ => None,
        },
        _ => None,
    }
}
