//! The properties the recovery core promises, stated over the model (spec/*.rs).
//!
//! STATUS: stated, NOT proved. No Verus verifier runs on this machine (verus-core/README.md).
//! Each lemma's body is empty: a Verus run will report each one it cannot discharge, and the
//! proofs are the work left to do. Every lemma has an executable twin in tests/ (the table in
//! verus-core/README.md names it); those twins run on every `cargo test`.

use vstd::prelude::*;

#[allow(unused_imports)] // used only by ghost code
use crate::spec::admission::*;
#[allow(unused_imports)] // used only by ghost code
use crate::spec::codec::*;
#[allow(unused_imports)] // used only by ghost code
use crate::spec::recovery::*;

verus! {

/// The node a phase is at or inside, if any.
pub open spec fn spec_current_node(p: SpecPhase) -> Option<Seq<u8>> {
    match p {
        SpecPhase::At { node } => Some(node),
        SpecPhase::Intent { node, .. } => Some(node),
        SpecPhase::Attempted { node, .. } => Some(node),
        SpecPhase::Released { node, .. } => Some(node),
        SpecPhase::Done { node, .. } => Some(node),
        SpecPhase::Parked { node, .. } => Some(node),
        SpecPhase::Claimed { node, .. } => Some(node),
        _ => None,
    }
}

/// "The first node not durably completed", defined from the records alone: the `next` of the
/// last NODE_COMPLETED, or the start node when no node completed yet.
pub open spec fn spec_first_not_completed(records: Seq<SpecRecord>) -> Seq<u8>
    decreases records.len(),
{
    if records.len() == 0 {
        Seq::empty()
    } else {
        match records.last() {
            SpecRecord::NodeCompleted { next, .. } => next,
            SpecRecord::RunStarted { start_node, .. } => start_node,
            _ => spec_first_not_completed(records.drop_last()),
        }
    }
}

pub open spec fn spec_resume_request(id: Seq<u8>) -> Seq<u8> {
    seq![1u8] + spec_field(id)
}

/// The chain value the next record of a recovered log chains from: the last four bytes of its
/// last durable record (its link if v2, its record_crc if v1), 0 when there is none.
pub open spec fn spec_tail_chain(log: Seq<u8>, durable_len: nat) -> u32 {
    if durable_len >= 4 { spec_u32_at(log, durable_len - 4) } else { 0 }
}

/// P1 (codec roundtrip): decode(encode(x)) == x for every well-formed record, in both formats
/// (a format-1 record of kind 10 or 11 is not well-formed for format 1: BAD_KIND).
pub proof fn lemma_decode_encode(seq: u32, prev: u32, v2_seen: bool, r: SpecRecord)
    requires
        spec_record_well_formed(r),
    ensures
        spec_kind_byte(r) <= 9 ==> spec_read_frame(spec_encode_record(seq, r), 0, seq, prev, false) == (SpecFrame::Sound {
            version: 1,
            kind: spec_kind_byte(r),
            payload: spec_encode_payload(r),
            end: spec_encode_record(seq, r).len() as int,
            chain: spec_record_crc(seq, 1, r),
        }),
        spec_read_frame(spec_encode_record_v2(seq, prev, r), 0, seq, prev, v2_seen) == (SpecFrame::Sound {
            version: 2,
            kind: spec_kind_byte(r),
            payload: spec_encode_payload(r),
            end: spec_encode_record_v2(seq, prev, r).len() as int,
            chain: spec_link(prev, spec_record_crc(seq, 2, r)),
        }),
        spec_decode_payload(spec_kind_byte(r), spec_encode_payload(r)) == Ok::<SpecRecord, u8>(r),
{
}

/// P8a (chain): the link is injective in the predecessor's chain value. (CRC-32C of a fixed
/// length message is affine over GF(2), and the first word's contribution, prev(x) * x^64 mod P,
/// is a bijection on words because P has a non-zero constant term.)
pub proof fn lemma_link_is_injective_in_prev(a: u32, b: u32, record_crc: u32)
    requires
        a != b,
    ensures
        spec_link(a, record_crc) != spec_link(b, record_crc),
{
}

/// P8b (chain): a format-2 record read after a predecessor other than the one it was chained to
/// is BAD_LINK: a record copied from another run, moved, or following an edited record.
pub proof fn lemma_record_after_another_predecessor_is_bad_link(seq: u32, prev: u32, other: u32, v2_seen: bool, r: SpecRecord)
    requires
        spec_record_well_formed(r),
        prev != other,
    ensures
        spec_read_frame(spec_encode_record_v2(seq, prev, r), 0, seq, other, v2_seen) == (SpecFrame::Corrupt {
            code: code_bad_link(),
            kind: spec_kind_byte(r),
        }),
{
}

/// P9a (the fence, core side): a format-2 EFFECT_DONE is accepted only while an attempt of the
/// same instance is recorded and neither completed nor released.
pub proof fn lemma_v2_done_needs_a_live_attempt(run: SpecRun, s: u32, o: u32, node: Seq<u8>, key: Seq<u8>, result: Seq<u8>)
    requires
        s > 0,
        spec_step(run, s, o, 2, SpecRecord::EffectDone { node, key, result }) is Ok,
    ensures
        run.phase matches SpecPhase::Attempted { node: n, key: k, .. } && n == node && k == key,
{
}

/// P9b (the fence, core side): recovery proposes to invoke a handler only when no attempt of the
/// instance is live (none recorded, or the latest one released), and names the attempt to claim.
pub proof fn lemma_invoke_only_without_a_live_attempt(log: Seq<u8>)
    requires
        spec_recover(log) is Ok,
    ensures
        spec_next_action(spec_recover(log)->Ok_0.run) matches SpecAction::InvokeEffect { next_attempt, .. } ==> (
        spec_recover(log)->Ok_0.run.phase is Intent && next_attempt == 1) || (spec_recover(log)->Ok_0.run.phase matches SpecPhase::Released {
            attempt,
            ..
        } && next_attempt == attempt + 1),
{
}

/// P10 (format 1 reads as before): a log of format-1 records never reaches an attempt phase,
/// every effect reports 0 attempts, and INVOKE_EFFECT always names attempt 1.
pub proof fn lemma_v1_logs_have_no_attempts(records: Seq<SpecRecord>, node: Seq<u8>)
    requires
        spec_recover(spec_encode_log(records)) is Ok,
    ensures
        !(spec_recover(spec_encode_log(records))->Ok_0.run.phase is Attempted),
        !(spec_recover(spec_encode_log(records))->Ok_0.run.phase is Released),
        spec_effect_of(spec_recover(spec_encode_log(records))->Ok_0.run, node).attempts == 0,
{
}

/// P2 (prefix continuation): the node recovery continues at is the first node not durably
/// completed.
pub proof fn lemma_next_node_is_first_not_completed(log: Seq<u8>)
    requires
        spec_recover(log) is Ok,
    ensures
        spec_current_node(spec_recover(log)->Ok_0.run.phase) matches Some(n) ==> n
            == spec_first_not_completed(spec_records(log)),
{
}

/// P3 (effect exactly-once, core side): when the next action is to invoke an effect handler,
/// no completion of that effect instance is in the log. (AWAIT_ATTEMPT likewise: P9b and the
/// phase table make it the state "attempt recorded, no outcome".)
pub proof fn lemma_never_invoke_a_done_effect(log: Seq<u8>)
    requires
        spec_recover(log) is Ok,
    ensures
        spec_next_action(spec_recover(log)->Ok_0.run) matches SpecAction::InvokeEffect {
            node,
            key,
            intent_seq,
            ..
        } ==> forall|j: int|
            intent_seq < j < spec_records(log).len() ==> !(#[trigger] spec_records(log)[j] matches SpecRecord::EffectDone {
                node: n2,
                key: k2,
                ..
            } && n2 == node && k2 == key),
{
}

/// P4a (consume-once): an interrupt whose claim is durable refuses every further claim.
pub proof fn lemma_second_claim_refused(log: Seq<u8>, id: Seq<u8>)
    requires
        spec_recover(log) is Ok,
        spec_recover(log)->Ok_0.run.claims.contains_key(id),
    ensures
        spec_admit(log, spec_resume_request(id)).verdict == 2,
        spec_admit(log, spec_resume_request(id)).reason == reason_already_consumed(),
{
}

/// P4b (consume-once): after an accepted claim is appended (as the shell writes it: format 2,
/// chained to the log's last record), the same claim is refused.
pub proof fn lemma_accepted_claim_is_consumed(log: Seq<u8>, id: Seq<u8>, value: Seq<u8>)
    requires
        spec_recover(log) is Ok,
        spec_recover(log)->Ok_0.torn_len == 0,
        spec_admit(log, spec_resume_request(id)).verdict == 1,
        spec_fits_u32(value),
        spec_field(id).len() + spec_field(value).len() <= spec_max_payload_len(),
    ensures
        ({
            let claimed = log + spec_encode_record_v2(
                spec_recover(log)->Ok_0.record_count as u32,
                spec_tail_chain(log, spec_recover(log)->Ok_0.durable_len),
                SpecRecord::ResumeClaimed { interrupt_id: id, value },
            );
            spec_admit(claimed, spec_resume_request(id)).reason == reason_already_consumed()
        }),
{
}

/// P5 (recovery determinism): the recovery encoding is a function of the log bytes. (The
/// executable half is `recover`'s `ensures out@ == spec_recovery_encoding(log@)`.)
pub proof fn lemma_recovery_is_a_function_of_bytes(a: Seq<u8>, b: Seq<u8>)
    requires
        a =~= b,
    ensures
        spec_recovery_encoding(a) == spec_recovery_encoding(b),
{
}

/// P6a (torn tail): cutting a recoverable log at any byte never yields an error; the cut-off
/// part of the last record is reported as a torn tail.
pub proof fn lemma_truncation_is_a_torn_tail(log: Seq<u8>, k: int)
    requires
        spec_recover(log) is Ok,
        0 <= k <= log.len(),
    ensures
        spec_recover(log.subrange(0, k)) is Ok,
        spec_recover(log.subrange(0, k))->Ok_0.durable_len + spec_recover(log.subrange(0, k))->Ok_0.torn_len
            == k,
{
}

/// P6b (corruption): changing any one byte of a record that is not the last one is an error
/// naming that record's position.
pub proof fn lemma_damage_before_the_last_record_is_named(log: Seq<u8>, i: u32, pos: int, byte: u8)
    requires
        spec_recover(log) is Ok,
        spec_recover(log)->Ok_0.torn_len == 0,
        i + 1 < spec_recover(log)->Ok_0.record_count,
        spec_record_start(log, i) <= pos < spec_record_start(log, (i + 1) as u32),
        log[pos] != byte,
    ensures
        spec_recover(log.update(pos, byte)) is Err,
        spec_recover(log.update(pos, byte))->Err_0.seq == i,
{
}

/// P7 (interrupt ids): a log that parks one interrupt id twice does not recover.
pub proof fn lemma_duplicate_park_is_an_error(log: Seq<u8>)
    requires
        spec_recover(log) is Ok,
    ensures
        spec_recover(log)->Ok_0.run.parked_count == spec_recover(log)->Ok_0.run.parked.len(),
{
}

/// Incremental recovery (docs/core-api.md, "Incremental recovery"): cut a log at any byte `k`
/// whose prefix recovers, summarise the prefix, feed the rest from the prefix's durable length:
/// the recovery is the whole log's, and so is the summary (when the whole log recovers). The
/// Coq counterpart is `incremental_recovery` in proofs/coq/RecoveryFacts.v (proved there over
/// record lists of the model, not over these bytes).
pub proof fn lemma_feed_in_any_split_is_recover(log: Seq<u8>, k: int)
    requires
        0 <= k <= log.len(),
        spec_recover(log.subrange(0, k)) is Ok,
    ensures
        ({
            let d = spec_recover(log.subrange(0, k))->Ok_0.durable_len as int;
            let summary = spec_summary(log.subrange(0, k));
            let rest = log.subrange(d, log.len() as int);
            &&& spec_feed_recovery(summary, rest) == spec_recovery_encoding(log)
            &&& (spec_recover(log) is Ok ==> spec_feed_summary(summary, rest) == spec_summary(log))
        }),
{
    assume(false); // a statement of intent: the summary encoding is not modelled (see above)
}

} // verus!
