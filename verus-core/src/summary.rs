//! Incremental recovery (docs/core-api.md, "Incremental recovery"): the fold's state between two
//! records as an owned, canonical byte string (the *summary*), and `feed(summary, chunk)`, which
//! folds only the new bytes. The statement is `spec::properties::lemma_feed_in_any_split_is_recover`: feeding the log in any
//! split gives what recovering it whole gives (`lemma_feed_in_any_split_is_recover`).
//!
//! How: the summary is decoded into a `Fold` whose byte fields borrow the summary, the existing
//! fold runs over the chunk (`recovery::fold_chunk`, absolute offsets), and the fold at the
//! chunk's end is written back out. The cost is O(summary + chunk), never O(log).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use vstd::prelude::*;

use crate::admission::{admit_continue, admit_resume, parse_request, EarlierClaims, Admission, AdmissionRequest, RefusalReason};
use crate::codec::{Chain, NodeEntry, Reader, NODE_INTERRUPT, NODE_PURE};
use crate::encoding::{write_lineage, write_recovery, Counter, Sink};
use crate::interrupts::{InterruptEntry, InterruptTable};
use crate::recovery::{
    fold_chunk, reserved_interrupt_id, to_u32, Cursor, EffectStatus, EffectTally, Failure, Fold, ForkLink, Phase, Position, Recovered, RecoveryError,
};

/// Version byte of the summary encoding this core writes.
pub const SUMMARY_VERSION: u8 = 2;

/// The layout written before reserved interrupt ids (until 2026-12-07): every parked id listed,
/// no last claim. Still read, so that the summaries earlier releases stored stay of use
/// (`read_listing_every_id`); never written.
const SUMMARY_VERSION_LISTING_EVERY_ID: u8 = 1;

/// Phase tags of the summary encoding (`Empty` has none: the summary of an empty log is empty).
const PHASE_AT: u8 = 1;
const PHASE_INTENT: u8 = 2;
const PHASE_ATTEMPTED: u8 = 3;
const PHASE_RELEASED: u8 = 4;
const PHASE_DONE: u8 = 5;
const PHASE_PARKED: u8 = 6;
const PHASE_CLAIMED: u8 = 7;
const PHASE_ENDED: u8 = 8;
const PHASE_COMPLETED: u8 = 9;
const PHASE_FAILED: u8 = 10;

/// Largest node table (docs/core-api.md, `RUN_STARTED`).
const MAX_NODES: u32 = 65535;

/// The summary given to `feed` or `admit_from` is not a summary encoding a core writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SummaryError;

// ------------------------------------------------------------------ writing

fn write_phase<S: Sink>(out: &mut S, phase: Phase<'_>) {
    match phase {
        // Unreachable for a summary with records (record_count >= 1 means RUN_STARTED ran);
        // written as ENDED's absence would be ambiguous, so Empty never reaches here.
        Phase::Empty => {}
        Phase::At { node } => {
            out.u8(PHASE_AT);
            out.u32(node);
        }
        Phase::Intent { node, key, seq } => {
            out.u8(PHASE_INTENT);
            out.u32(node);
            out.bytes(key);
            out.u32(seq);
        }
        Phase::Attempted { node, key, intent_seq, attempt, seq, offset } => {
            out.u8(PHASE_ATTEMPTED);
            out.u32(node);
            out.bytes(key);
            out.u32(intent_seq);
            out.u32(attempt);
            out.u32(seq);
            out.u32(offset);
        }
        Phase::Released { node, key, intent_seq, attempt } => {
            out.u8(PHASE_RELEASED);
            out.u32(node);
            out.bytes(key);
            out.u32(intent_seq);
            out.u32(attempt);
        }
        Phase::Done { node, key, seq, offset } => {
            out.u8(PHASE_DONE);
            out.u32(node);
            out.bytes(key);
            out.u32(seq);
            out.u32(offset);
        }
        Phase::Parked { node, interrupt_id, seq } => {
            out.u8(PHASE_PARKED);
            out.u32(node);
            out.bytes(interrupt_id);
            out.u32(seq);
        }
        Phase::Claimed { node, interrupt_id, seq, offset } => {
            out.u8(PHASE_CLAIMED);
            out.u32(node);
            out.bytes(interrupt_id);
            out.u32(seq);
            out.u32(offset);
        }
        Phase::Ended => out.u8(PHASE_ENDED),
        Phase::Completed => out.u8(PHASE_COMPLETED),
        Phase::Failed => out.u8(PHASE_FAILED),
    }
}

fn write_position<S: Sink>(out: &mut S, p: Option<Position>) {
    let p = p.unwrap_or(Position { seq: 0, offset: 0 });
    out.u32(p.seq);
    out.u32(p.offset);
}

/// Ascending bytewise, the canonical order. A table unchanged since it was decoded writes the
/// bytes it was decoded from: the same bytes, without a pass over its entries.
fn write_interrupts<S: Sink>(out: &mut S, interrupts: &InterruptTable<'_>) {
    out.u32(to_u32(interrupts.len()));
    if let Some(encoded) = interrupts.unchanged_encoding() {
        out.put(encoded);
        return;
    }
    for (id, claim) in interrupts.iter() {
        out.bytes(id);
        match claim {
            Some(p) => {
                out.u8(1);
                out.u32(p.seq);
                out.u32(p.offset);
            }
            None => out.u8(0),
        }
    }
}

/// The summary encoding of `fold` standing at `cursor` (docs/core-api.md, "Summary encoding").
/// A fold before the first record is the empty byte string.
fn write_summary<S: Sink>(out: &mut S, fold: &Fold<'_>, cursor: Cursor) {
    if cursor.seq == 0 {
        return;
    }
    let run = &fold.run;
    out.u8(SUMMARY_VERSION);
    out.u32(cursor.seq);
    out.u32(cursor.offset);
    out.u32(cursor.chain.prev);
    out.u8(u8::from(cursor.chain.v2_seen));
    out.u8(fold.prev_kind);
    write_phase(out, run.phase);
    out.bytes(run.run_id);
    out.bytes(run.workflow);
    out.bytes(run.version);
    out.bytes(run.fingerprint);
    write_position(out, run.checkpoint);
    write_position(out, run.snapshot);
    out.u32(to_u32(run.nodes.len()));
    for (entry, tally) in run.nodes.iter().zip(run.effects.iter()) {
        out.bytes(entry.name);
        out.u8(entry.kind);
        out.u8(tally.status as u8);
        out.u32(tally.done_count);
        out.u32(tally.attempts);
    }
    out.u32(run.interrupts_parked);
    out.u32(run.interrupts_claimed);
    write_interrupts(out, &run.interrupts);
    match run.last_claim {
        Some((id, at)) => {
            out.u8(1);
            out.bytes(id);
            out.u32(at.seq);
            out.u32(at.offset);
        }
        None => out.u8(0),
    }
    write_lineage(out, &run.lineage);
    if let (Phase::Failed, Some(failure)) = (run.phase, run.failure) {
        out.bytes(failure.node);
        out.bytes(failure.code);
        out.bytes(failure.message);
    }
}

fn summary_bytes(fold: &Fold<'_>, cursor: Cursor) -> Vec<u8> {
    let mut counter = Counter { len: 0 };
    write_summary(&mut counter, fold, cursor);
    let mut out = Vec::with_capacity(counter.len);
    write_summary(&mut out, fold, cursor);
    out
}

// ------------------------------------------------------------------ reading

/// A flag byte: 0 or 1, anything else is malformed.
fn read_flag(r: &mut Reader<'_>) -> Option<bool> {
    match r.u8()? {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

fn read_position(r: &mut Reader<'_>) -> Option<Position> {
    Some(Position { seq: r.u32()?, offset: r.u32()? })
}

fn read_phase<'a>(r: &mut Reader<'a>) -> Option<Phase<'a>> {
    let phase = match r.u8()? {
        PHASE_AT => Phase::At { node: r.u32()? },
        PHASE_INTENT => Phase::Intent { node: r.u32()?, key: r.bytes()?, seq: r.u32()? },
        PHASE_ATTEMPTED => Phase::Attempted {
            node: r.u32()?,
            key: r.bytes()?,
            intent_seq: r.u32()?,
            attempt: r.u32()?,
            seq: r.u32()?,
            offset: r.u32()?,
        },
        PHASE_RELEASED => Phase::Released { node: r.u32()?, key: r.bytes()?, intent_seq: r.u32()?, attempt: r.u32()? },
        PHASE_DONE => Phase::Done { node: r.u32()?, key: r.bytes()?, seq: r.u32()?, offset: r.u32()? },
        PHASE_PARKED => Phase::Parked { node: r.u32()?, interrupt_id: r.bytes()?, seq: r.u32()? },
        PHASE_CLAIMED => Phase::Claimed { node: r.u32()?, interrupt_id: r.bytes()?, seq: r.u32()?, offset: r.u32()? },
        PHASE_ENDED => Phase::Ended,
        PHASE_COMPLETED => Phase::Completed,
        PHASE_FAILED => Phase::Failed,
        _ => return None,
    };
    Some(phase)
}

fn read_status(byte: u8) -> Option<EffectStatus> {
    match byte {
        0 => Some(EffectStatus::Fresh),
        1 => Some(EffectStatus::IntentOnly),
        2 => Some(EffectStatus::Done),
        _ => None,
    }
}

/// The node table: 1..65535 entries, kinds 1..3, names pairwise distinct (what `RUN_STARTED`
/// admits), with its name index.
#[allow(clippy::type_complexity)] // three parallel results of one pass
fn read_nodes<'a>(r: &mut Reader<'a>) -> Option<(Vec<NodeEntry<'a>>, Vec<EffectTally>, BTreeMap<&'a [u8], u32>)> {
    let count = r.u32()?;
    if count == 0 || count > MAX_NODES {
        return None;
    }
    let mut nodes = Vec::new();
    let mut effects = Vec::new();
    let mut index = BTreeMap::new();
    for position in 0..count {
        let name = r.bytes()?;
        let kind = r.u8()?;
        if !(NODE_PURE..=NODE_INTERRUPT).contains(&kind) || index.insert(name, position).is_some() {
            return None;
        }
        let status = read_status(r.u8()?)?;
        nodes.push(NodeEntry { name, kind });
        effects.push(EffectTally { status, done_count: r.u32()?, attempts: r.u32()? });
    }
    Some((nodes, effects, index))
}

/// A parked phase's id is listed unclaimed, a claimed phase's id with that very claim, unless the
/// id is reserved (`name@s`), when it must name the phase's node and park seq (and is not listed):
/// what every summary a core writes holds, so a summary without it is refused.
fn phase_agrees_with_interrupts(phase: &Phase<'_>, nodes: &[NodeEntry<'_>], interrupts: &InterruptTable<'_>) -> bool {
    let names_its_park = |id: &[u8], node: u32, parked_seq: Option<u32>| {
        reserved_interrupt_id(id).map(|(name, at)| {
            usize::try_from(node).ok().and_then(|n| nodes.get(n)).is_some_and(|e| e.name == name) && parked_seq == Some(at)
        })
    };
    match *phase {
        Phase::Parked { interrupt_id, node, seq } => {
            names_its_park(interrupt_id, node, Some(seq)).unwrap_or_else(|| interrupts.get(interrupt_id) == Some(None))
        }
        Phase::Claimed { interrupt_id, node, seq, offset } => names_its_park(interrupt_id, node, seq.checked_sub(1))
            .unwrap_or_else(|| interrupts.get(interrupt_id) == Some(Some(Position { seq, offset }))),
        _ => true,
    }
}

/// A CLAIMED phase's claim is the latest claim; a latest claim of an id that is not reserved is
/// that id's listed claim (every summary a core writes agrees so; one that does not could make the
/// cores answer a resume from different fields).
fn last_claim_agrees(run: &Recovered<'_>) -> bool {
    let claimed_phase_agrees = match run.phase {
        Phase::Claimed { interrupt_id, seq, offset, .. } => run.last_claim == Some((interrupt_id, Position { seq, offset })),
        _ => true,
    };
    let listed_agrees = match run.last_claim {
        Some((id, at)) if reserved_interrupt_id(id).is_none() => run.interrupts.get(id) == Some(Some(at)),
        _ => true,
    };
    claimed_phase_agrees && listed_agrees
}

/// Interrupt ids in strictly ascending bytewise order, each with its claim if claimed.
fn read_interrupts<'a>(r: &mut Reader<'a>) -> Option<InterruptTable<'a>> {
    let count = r.u32()?;
    let start = r.remaining();
    let interrupts = read_entries(r, count)?;
    // A reserved id (`name@s`) is never listed: the fold keeps only the others.
    if interrupts.iter().any(|(id, _)| reserved_interrupt_id(id).is_some()) {
        return None;
    }
    let encoded = start.get(..start.len().saturating_sub(r.remaining().len()))?;
    InterruptTable::from_summary(interrupts, encoded)
}

/// `count` interrupt entries, as both versions lay them out: bytes id, u8 claimed, and when
/// claimed u32 claim_seq, u32 claim_offset.
fn read_entries<'a>(r: &mut Reader<'a>, count: u32) -> Option<Vec<InterruptEntry<'a>>> {
    // Not pre-sized from `count`: a damaged count must not reserve memory the bytes cannot fill.
    let mut entries = Vec::new();
    for _ in 0..count {
        let id = r.bytes()?;
        let claim = if read_flag(r)? { Some(read_position(r)?) } else { None };
        entries.push((id, claim));
    }
    Some(entries)
}

/// The latest claim: its interrupt id and position.
type LastClaim<'a> = (&'a [u8], Position);

/// Version 1's interrupt list (every parked id, reserved or not, ascending, each with its claim),
/// checked by version 1's rule (a PARKED phase's id listed unclaimed, a CLAIMED phase's id listed
/// with that claim) and turned into what a fold of the same log keeps now: the ids that are not
/// reserved, and the latest claim, which is the listed claim of the greatest seq. For a log that
/// follows the reserved-id rule (the shell's logs do) the fold is then the one the whole log gives.
fn read_listing_every_id<'a>(r: &mut Reader<'a>, phase: &Phase<'a>) -> Option<(InterruptTable<'a>, Option<LastClaim<'a>>)> {
    let count = r.u32()?;
    let entries = read_entries(r, count)?;
    if !entries.iter().zip(entries.iter().skip(1)).all(|((a, _), (b, _))| a < b) {
        return None;
    }
    let listed = |id: &[u8]| entries.binary_search_by(|(k, _)| (*k).cmp(id)).ok().and_then(|i| entries.get(i)).map(|(_, claim)| *claim);
    let phase_listed = match *phase {
        Phase::Parked { interrupt_id, .. } => listed(interrupt_id) == Some(None),
        Phase::Claimed { interrupt_id, seq, offset, .. } => listed(interrupt_id) == Some(Some(Position { seq, offset })),
        _ => true,
    };
    if !phase_listed {
        return None;
    }
    let last_claim = entries.iter().filter_map(|(id, claim)| claim.map(|at| (*id, at))).max_by_key(|(_, at)| at.seq);
    // Two claims at one seq: no log holds them (a seq is one record), and which is "the last"
    // would be the cores' choice.
    if let Some((_, last)) = last_claim {
        if entries.iter().filter(|(_, claim)| claim.is_some_and(|at| at.seq == last.seq)).count() > 1 {
            return None;
        }
    }
    let unreserved = entries.into_iter().filter(|(id, _)| reserved_interrupt_id(id).is_none()).collect();
    Some((InterruptTable::from_ascending(unreserved)?, last_claim))
}

fn read_lineage<'a>(r: &mut Reader<'a>) -> Option<Vec<ForkLink<'a>>> {
    let count = r.u32()?;
    let mut lineage = Vec::new();
    for _ in 0..count {
        lineage.push(ForkLink {
            source_run_id: r.bytes()?,
            source_seq: r.u32()?,
            run_id: r.bytes()?,
            fork_seq: r.u32()?,
            intent: r.bytes()?,
        });
    }
    Some(lineage)
}

/// The fold and cursor a summary encodes, borrowing its bytes; `None` if the bytes are not a
/// summary encoding (docs/core-api.md, "Summary encoding", the decoding rules).
fn decode_summary(summary: &[u8]) -> Option<(Fold<'_>, Cursor)> {
    if summary.is_empty() {
        return Some((Fold::start(), Cursor::START));
    }
    let mut r = Reader::new(summary);
    let version = r.u8()?;
    if version != SUMMARY_VERSION && version != SUMMARY_VERSION_LISTING_EVERY_ID {
        return None;
    }
    let seq = r.u32()?;
    let offset = r.u32()?;
    let chain = Chain { prev: r.u32()?, v2_seen: read_flag(&mut r)? };
    let prev_kind = r.u8()?;
    if seq == 0 {
        return None;
    }
    let phase = read_phase(&mut r)?;
    let mut run = Recovered::empty();
    run.run_id = r.bytes()?;
    run.workflow = r.bytes()?;
    run.version = r.bytes()?;
    run.fingerprint = r.bytes()?;
    run.checkpoint = Some(read_position(&mut r)?);
    run.snapshot = Some(read_position(&mut r)?);
    let (nodes, effects, index) = read_nodes(&mut r)?;
    if phase.node().is_some_and(|node| usize::try_from(node).map_or(true, |n| n >= nodes.len())) {
        return None;
    }
    run.phase = phase;
    run.nodes = nodes;
    run.effects = effects;
    run.interrupts_parked = r.u32()?;
    run.interrupts_claimed = r.u32()?;
    if version == SUMMARY_VERSION_LISTING_EVERY_ID {
        (run.interrupts, run.last_claim) = read_listing_every_id(&mut r, &phase)?;
        // What version 2 requires of what it keeps holds of what version 1 gave too (a CLAIMED
        // phase's claim is the last claim), or the summary written from it would be refused.
        if !last_claim_agrees(&run) {
            return None;
        }
    } else {
        run.interrupts = read_interrupts(&mut r)?;
        run.last_claim = if read_flag(&mut r)? { Some((r.bytes()?, read_position(&mut r)?)) } else { None };
        if !phase_agrees_with_interrupts(&phase, &run.nodes, &run.interrupts) || !last_claim_agrees(&run) {
            return None;
        }
    }
    run.lineage = read_lineage(&mut r)?;
    if phase == Phase::Failed {
        run.failure = Some(Failure { node: r.bytes()?, code: r.bytes()?, message: r.bytes()? });
    }
    if !r.is_empty() {
        return None;
    }
    run.record_count = seq;
    run.durable_len = offset;
    Some((Fold { run, index, prev_kind }, Cursor { seq, offset, chain }))
}

// ------------------------------------------------------------------ the functions

/// What one feed gives: the recovery of the log so far, and the summary to feed next from.
pub type Fed<'a> = (Result<Recovered<'a>, RecoveryError>, Vec<u8>);

verus! {

/// `feed(summary, chunk)`: recovery of (the log `summary` summarises) ++ `chunk`, and the
/// summary of its durable records. `chunk` must start where the summary's log ends (its
/// `durable_len`). On a recovery error the summary returned is the one given: nothing of the
/// chunk is taken. Statement: `spec::properties::lemma_feed_in_any_split_is_recover`.
#[verifier::external_body]
pub fn feed_log<'a>(summary: &'a [u8], chunk: &'a [u8]) -> Result<Fed<'a>, SummaryError> {
    let (mut fold, at) = decode_summary(summary).ok_or(SummaryError)?;
    match fold_chunk(&mut fold, at, chunk) {
        Ok(next) => {
            let out = summary_bytes(&fold, next);
            Ok((Ok(fold.run), out))
        }
        Err(error) => Ok((Err(error), summary.to_vec())),
    }
}

} // verus!

/// The fed encoding (docs/core-api.md): `u8 1, bytes recovery, summary...` or `u8 0` when the
/// summary does not decode.
pub fn encode_fed(fed: &Result<Fed<'_>, SummaryError>) -> Vec<u8> {
    match fed {
        Err(SummaryError) => alloc::vec![0],
        Ok((recovery, summary)) => {
            let mut counter = Counter { len: 0 };
            write_recovery(&mut counter, recovery);
            let mut out = Vec::with_capacity(counter.len.saturating_add(5).saturating_add(summary.len()));
            out.push(1);
            out.extend_from_slice(&to_u32(counter.len).to_le_bytes());
            write_recovery(&mut out, recovery);
            out.extend_from_slice(summary);
            out
        }
    }
}

/// Admission judged from a summary instead of the log (docs/core-api.md, "Admission from a
/// summary"): identical to `admit(log, request)` for every log whose durable records the summary
/// summarises, except where only the log can say (`NeedsLog`): `FORK_AT(n)` with `n <= head` (the
/// summary keeps only the latest checkpoint, not which records are checkpoints), and `RESUME` of a
/// reserved id `name@p`, `p < head`, that is neither the parked id nor the last claim (the summary
/// lists no reserved id; its claim, if any, is record `p + 1`).
pub fn admit_from_summary(summary: &[u8], request: &[u8]) -> Admission {
    let Some((fold, at)) = decode_summary(summary) else {
        return Admission::Refuse { reason: RefusalReason::BadSummary, detail: 0, seq: 0, offset: 0 };
    };
    let run = fold.run;
    let Some(head) = at.seq.checked_sub(1) else {
        return Admission::Refuse { reason: RefusalReason::NoRun, detail: 0, seq: 0, offset: 0 };
    };
    match parse_request(request) {
        None => Admission::Refuse { reason: RefusalReason::BadRequest, detail: 0, seq: 0, offset: 0 },
        Some(AdmissionRequest::Resume { interrupt_id }) => admit_resume(&run, interrupt_id, head, EarlierClaims::NotKept),
        Some(AdmissionRequest::ContinueFrom { seq }) => admit_continue(&run, seq, head),
        Some(AdmissionRequest::ForkAt { seq }) if seq > head => {
            Admission::Refuse { reason: RefusalReason::BeyondHead, detail: 0, seq: head, offset: run.durable_len }
        }
        Some(AdmissionRequest::ForkAt { seq }) => Admission::Refuse { reason: RefusalReason::NeedsLog, detail: 0, seq, offset: 0 },
    }
}
