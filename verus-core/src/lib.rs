//! REMIT recovery core: the record codec of docs/log-format.md and the recovery and admission
//! functions of docs/core-api.md. Pure: no I/O, no clock, no randomness, no global state.
//! Total: every input gets an answer; nothing here may panic (clippy lints below enforce the
//! usual sources: indexing, unwrap, unchecked arithmetic).
//!
//! Layout: `spec/` is the model (Verus spec functions, erased in a normal build); `crc`,
//! `codec`, `recovery`, `admission`, `encoding` are the executable code; each public entry
//! point states the spec function it implements in an `ensures` clause.
#![no_std]
#![forbid(unsafe_code)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::unreachable,
    clippy::todo,
    clippy::unimplemented
)]

extern crate alloc;

pub mod admission;
pub mod codec;
pub mod crc;
pub mod encoding;
pub mod interrupts;
pub mod recovery;
pub mod spec;
pub mod summary;

use alloc::vec::Vec;
use vstd::prelude::*;

pub use admission::{admit_request, log_error_of, parse_request, Admission, AdmissionRequest, RefusalReason};
pub use codec::{
    decode_payload, decode_record, encode_payload, encode_record, encode_record_framed_into, encode_record_into,
    encode_record_v2, link_of, read_frame, Chain, Decoded, EncodeError, Frame, Framing, LogErrorCode, NodeEntry, Record,
    RunStarted,
};
pub use crc::crc32c;
pub use encoding::{encode_admission, encode_recovery, NONE32};
pub use summary::{admit_from_summary, encode_fed, feed_log, Fed, SummaryError, SUMMARY_VERSION};
pub use recovery::{
    recover_log, Action, EffectStatus, EffectTally, Failure, ForkLink, Phase, Position, Recovered,
    RecoveryError, RunStatus,
};

/// Log format version (docs/log-format.md): the version the shell writes; format-1 records are
/// still read.
pub const LOG_FORMAT_VERSION: u32 = 2;
/// Core API version (docs/core-api.md).
pub const CORE_API_VERSION: u32 = 2;

verus! {

#[cfg(verus_keep_ghost)] // spec items exist only when ghost code is kept
use crate::spec::admission::spec_admission_encoding;
#[cfg(verus_keep_ghost)] // spec items exist only when ghost code is kept
use crate::spec::recovery::spec_recovery_encoding;

/// `recover(log bytes) -> Recovery`, in the recovery encoding of docs/core-api.md.
/// The result depends on the bytes of `log` and nothing else.
#[verifier::external_body]
pub fn recover(log: &[u8]) -> (out: Vec<u8>)
    ensures
        out@ == spec_recovery_encoding(log@),
{
    encode_recovery(&recover_log(log))
}

/// `admit(log bytes, request bytes) -> Admission`, in the admission encoding.
#[verifier::external_body]
pub fn admit(log: &[u8], request: &[u8]) -> (out: Vec<u8>)
    ensures
        out@ == spec_admission_encoding(log@, request@),
{
    encode_admission(&admit_request(log, request))
}

/// `feed(summary, chunk) -> Fed`, in the fed encoding of docs/core-api.md ("Incremental
/// recovery"): the recovery encoding of the summarised log followed by `chunk`, and the new summary.
/// Statement: `spec::properties::lemma_feed_in_any_split_is_recover`.
#[verifier::external_body]
pub fn feed(summary: &[u8], chunk: &[u8]) -> Vec<u8> {
    encode_fed(&feed_log(summary, chunk))
}

/// `admit-from(summary, request) -> Admission`: admission judged from a summary.
#[verifier::external_body]
pub fn admit_from(summary: &[u8], request: &[u8]) -> Vec<u8> {
    encode_admission(&admit_from_summary(summary, request))
}

} // verus!
