//! Recovery: one pass over the log, folding each record through the phase machine of
//! docs/core-api.md ("Transitions"). The model is `spec::recovery::spec_recover`.
//!
//! Hot-path rules: no allocation per record (names are slices of the log; the node table and
//! its index are built once, at RUN_STARTED), one CRC pass per record.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use vstd::prelude::*;

use crate::codec::*;
use crate::interrupts::InterruptTable;

/// A record's place: its sequence number and start offset.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Position {
    pub seq: u32,
    pub offset: u32,
}

/// The recovery phase (docs/core-api.md). Nodes are indices into the node table.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Phase<'a> {
    Empty,
    At { node: u32 },
    Intent { node: u32, key: &'a [u8], seq: u32 },
    /// Attempt `attempt` of the instance whose intent is at `intent_seq` is recorded (at `seq`,
    /// `offset`) without an outcome: its owner may be calling the handler.
    Attempted { node: u32, key: &'a [u8], intent_seq: u32, attempt: u32, seq: u32, offset: u32 },
    /// Attempt `attempt` was given up by its owner (EFFECT_RELEASED): no attempt is live.
    Released { node: u32, key: &'a [u8], intent_seq: u32, attempt: u32 },
    Done { node: u32, key: &'a [u8], seq: u32, offset: u32 },
    Parked { node: u32, interrupt_id: &'a [u8], seq: u32 },
    Claimed { node: u32, interrupt_id: &'a [u8], seq: u32, offset: u32 },
    Ended,
    Completed,
    Failed,
}

impl<'a> Phase<'a> {
    /// The node the phase is at or inside.
    pub fn node(&self) -> Option<u32> {
        match *self {
            Phase::At { node }
            | Phase::Intent { node, .. }
            | Phase::Attempted { node, .. }
            | Phase::Released { node, .. }
            | Phase::Done { node, .. }
            | Phase::Parked { node, .. }
            | Phase::Claimed { node, .. } => Some(node),
            _ => None,
        }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, Phase::Completed | Phase::Failed)
    }
}

/// Run status byte of the recovery encoding.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum RunStatus {
    Empty = 0,
    Running = 1,
    Parked = 2,
    Completed = 3,
    Failed = 4,
}

/// Effect status of an effect node's latest instance.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum EffectStatus {
    Fresh = 0,
    IntentOnly = 1,
    Done = 2,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct EffectTally {
    pub status: EffectStatus,
    pub done_count: u32,
    /// EFFECT_ATTEMPT records of the latest instance (0 for a v1 instance).
    pub attempts: u32,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ForkLink<'a> {
    pub source_run_id: &'a [u8],
    pub source_seq: u32,
    pub run_id: &'a [u8],
    pub fork_seq: u32,
    pub intent: &'a [u8],
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Failure<'a> {
    pub node: &'a [u8],
    pub code: &'a [u8],
    pub message: &'a [u8],
}

/// The next action (docs/core-api.md, phase table).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Action<'a> {
    None,
    RunPure { node: &'a [u8] },
    BeginEffect { node: &'a [u8] },
    /// No attempt is live: claim attempt `next_attempt` by a conditional append of
    /// EFFECT_ATTEMPT, and call the handler only if that append committed.
    InvokeEffect { node: &'a [u8], key: &'a [u8], intent_seq: u32, next_attempt: u32 },
    FinishEffect { node: &'a [u8], key: &'a [u8], done_seq: u32, done_offset: u32 },
    Park { node: &'a [u8] },
    AwaitResume { node: &'a [u8], interrupt_id: &'a [u8], parked_seq: u32 },
    FinishInterrupt { node: &'a [u8], interrupt_id: &'a [u8], claim_seq: u32, claim_offset: u32 },
    FinishRun,
    /// Attempt `attempt` is recorded without an outcome: its owner may be calling the handler.
    AwaitAttempt { node: &'a [u8], key: &'a [u8], intent_seq: u32, attempt: u32, attempt_seq: u32, attempt_offset: u32 },
}

/// A successfully recovered run. Byte fields borrow the log.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Recovered<'a> {
    pub record_count: u32,
    pub durable_len: u32,
    pub torn_len: u32,
    pub run_id: &'a [u8],
    pub workflow: &'a [u8],
    pub version: &'a [u8],
    pub fingerprint: &'a [u8],
    pub checkpoint: Option<Position>,
    pub snapshot: Option<Position>,
    pub phase: Phase<'a>,
    pub nodes: Vec<NodeEntry<'a>>,
    /// Parallel to `nodes`; meaningful for effect nodes only.
    pub effects: Vec<EffectTally>,
    /// Every interrupt id parked in the log that is not reserved (`name@seq`), with the position
    /// of its claim if claimed.
    pub interrupts: InterruptTable<'a>,
    /// The latest RESUME_CLAIMED's id and position: a second resume of the interrupt claimed last
    /// (a retry whose answer was lost, a double click) is refused from a summary without the log.
    pub last_claim: Option<(&'a [u8], Position)>,
    pub interrupts_parked: u32,
    pub interrupts_claimed: u32,
    pub lineage: Vec<ForkLink<'a>>,
    pub failure: Option<Failure<'a>>,
}

/// Recovery failed at one record (the first bad one).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RecoveryError {
    pub code: LogErrorCode,
    /// Position of the bad record (the expected seq, not the stored field).
    pub seq: u32,
    /// Byte offset where the bad record starts.
    pub offset: u32,
    /// The record's kind byte if its header check passed, else 0.
    pub kind: u8,
}

/// Offsets and lengths travel as u32 (the encodings' width). A wasm32 log cannot exceed it;
/// on a 64-bit host a log over 4 GiB saturates instead of wrapping.
pub fn to_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

impl<'a> Recovered<'a> {
    pub(crate) fn empty() -> Self {
        Recovered {
            record_count: 0,
            durable_len: 0,
            torn_len: 0,
            run_id: &[],
            workflow: &[],
            version: &[],
            fingerprint: &[],
            checkpoint: None,
            snapshot: None,
            phase: Phase::Empty,
            nodes: Vec::new(),
            effects: Vec::new(),
            interrupts: InterruptTable::new(),
            last_claim: None,
            interrupts_parked: 0,
            interrupts_claimed: 0,
            lineage: Vec::new(),
            failure: None,
        }
    }

    pub fn status(&self) -> RunStatus {
        match self.phase {
            Phase::Empty => RunStatus::Empty,
            Phase::Parked { .. } => RunStatus::Parked,
            Phase::Completed => RunStatus::Completed,
            Phase::Failed => RunStatus::Failed,
            _ => RunStatus::Running,
        }
    }

    pub(crate) fn node_name(&self, node: u32) -> &'a [u8] {
        match self.nodes.get(node as usize) {
            Some(entry) => entry.name,
            None => &[],
        }
    }

    fn node_kind(&self, node: u32) -> u8 {
        match self.nodes.get(node as usize) {
            Some(entry) => entry.kind,
            None => 0,
        }
    }

    /// The next action, from the phase alone.
    pub fn action(&self) -> Action<'a> {
        match self.phase {
            Phase::At { node } => {
                let name = self.node_name(node);
                match self.node_kind(node) {
                    NODE_PURE => Action::RunPure { node: name },
                    NODE_EFFECT => Action::BeginEffect { node: name },
                    _ => Action::Park { node: name },
                }
            }
            Phase::Intent { node, key, seq } => {
                Action::InvokeEffect { node: self.node_name(node), key, intent_seq: seq, next_attempt: 1 }
            }
            // attempt + 1 cannot overflow: attempt a needs a records before it in the log.
            Phase::Released { node, key, intent_seq, attempt } => Action::InvokeEffect {
                node: self.node_name(node),
                key,
                intent_seq,
                next_attempt: attempt.saturating_add(1),
            },
            Phase::Attempted { node, key, intent_seq, attempt, seq, offset } => Action::AwaitAttempt {
                node: self.node_name(node),
                key,
                intent_seq,
                attempt,
                attempt_seq: seq,
                attempt_offset: offset,
            },
            Phase::Done { node, key, seq, offset } => Action::FinishEffect {
                node: self.node_name(node),
                key,
                done_seq: seq,
                done_offset: offset,
            },
            Phase::Parked { node, interrupt_id, seq } => {
                Action::AwaitResume { node: self.node_name(node), interrupt_id, parked_seq: seq }
            }
            Phase::Claimed { node, interrupt_id, seq, offset } => Action::FinishInterrupt {
                node: self.node_name(node),
                interrupt_id,
                claim_seq: seq,
                claim_offset: offset,
            },
            Phase::Ended => Action::FinishRun,
            Phase::Empty | Phase::Completed | Phase::Failed => Action::None,
        }
    }

    /// Where the claim of `interrupt_id` is, if the fold knows it: the latest claim's, or an id's
    /// in the table. The claim of an earlier reserved id (`name@s`) is in the log only, at seq
    /// `s + 1` (`crate::admission::claim_in_log`).
    pub fn claim_of(&self, interrupt_id: &[u8]) -> Option<Position> {
        match self.last_claim {
            Some((claimed, at)) if claimed == interrupt_id => Some(at),
            _ => self.interrupts.get(interrupt_id).flatten(),
        }
    }
}

/// The fold's state: the run so far, plus what only the fold needs. Byte fields borrow either
/// the log or, when the fold resumes from a summary (`crate::summary`), the summary's bytes.
pub(crate) struct Fold<'a> {
    pub(crate) run: Recovered<'a>,
    /// Node name -> index into the table, built once at RUN_STARTED (or from a summary).
    pub(crate) index: BTreeMap<&'a [u8], u32>,
    /// Kind of the previous record (FORKED must follow a checkpoint).
    pub(crate) prev_kind: u8,
}

/// Where the fold stands between two records: the seq and absolute byte offset of the next
/// record, and the chain its framing is read after.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Cursor {
    pub(crate) seq: u32,
    pub(crate) offset: u32,
    pub(crate) chain: Chain,
}

impl Cursor {
    /// Before the first record of a log.
    pub(crate) const START: Cursor = Cursor { seq: 0, offset: 0, chain: Chain::START };
}

impl<'a> Fold<'a> {
    /// The fold before the first record.
    pub(crate) fn start() -> Self {
        Fold { run: Recovered::empty(), index: BTreeMap::new(), prev_kind: 0 }
    }

    /// Index of `name` in the node table. Most records name the node the phase is at, so that
    /// one is compared first; the map answers the rest.
    fn find_node(&self, name: &[u8]) -> Option<u32> {
        if let Some(current) = self.run.phase.node() {
            if self.run.node_name(current) == name {
                return Some(current);
            }
        }
        self.index.get(name).copied()
    }

    fn run_started(&mut self, seq: u32, offset: u32, r: RunStarted<'a>) -> Result<(), LogErrorCode> {
        if seq != 0 {
            return Err(LogErrorCode::ImpossibleOrder);
        }
        if r.nodes.is_empty() || r.nodes.len() > 65535 {
            return Err(LogErrorCode::BadNodeTable);
        }
        let mut index = BTreeMap::new();
        let mut position: u32 = 0;
        for entry in &r.nodes {
            if entry.kind < NODE_PURE || entry.kind > NODE_INTERRUPT {
                return Err(LogErrorCode::BadNodeTable);
            }
            if index.insert(entry.name, position).is_some() {
                return Err(LogErrorCode::BadNodeTable);
            }
            position = position.saturating_add(1);
        }
        let start = match index.get(r.start_node) {
            Some(ix) => *ix,
            None => return Err(LogErrorCode::UnknownNode),
        };
        let fresh = EffectTally { status: EffectStatus::Fresh, done_count: 0, attempts: 0 };
        self.run.effects = alloc::vec![fresh; r.nodes.len()];
        self.run.nodes = r.nodes;
        self.index = index;
        self.run.run_id = r.run_id;
        self.run.workflow = r.workflow;
        self.run.version = r.version;
        self.run.fingerprint = r.fingerprint;
        self.run.phase = Phase::At { node: start };
        self.run.checkpoint = Some(Position { seq, offset });
        self.run.snapshot = Some(Position { seq, offset });
        Ok(())
    }

    fn node_completed(&mut self, seq: u32, offset: u32, node: &[u8], next: &[u8], form: u8) -> Result<(), LogErrorCode> {
        let ix = self.find_node(node).ok_or(LogErrorCode::UnknownNode)?;
        let next_ix = if next.is_empty() {
            None
        } else {
            Some(self.index.get(next).copied().ok_or(LogErrorCode::UnknownNode)?)
        };
        let allowed = match self.run.phase {
            Phase::At { node } => node == ix && self.run.node_kind(ix) == NODE_PURE,
            Phase::Done { node, .. } | Phase::Claimed { node, .. } => node == ix,
            _ => false,
        };
        if !allowed {
            return Err(LogErrorCode::ImpossibleOrder);
        }
        self.run.phase = match next_ix {
            Some(n) => Phase::At { node: n },
            None => Phase::Ended,
        };
        self.run.checkpoint = Some(Position { seq, offset });
        if form == 0 {
            self.run.snapshot = Some(Position { seq, offset });
        }
        Ok(())
    }

    fn effect_intent(&mut self, seq: u32, node: &[u8], key: &'a [u8]) -> Result<(), LogErrorCode> {
        let ix = self.find_node(node).ok_or(LogErrorCode::UnknownNode)?;
        if self.run.phase != (Phase::At { node: ix }) || self.run.node_kind(ix) != NODE_EFFECT {
            return Err(LogErrorCode::ImpossibleOrder);
        }
        self.run.phase = Phase::Intent { node: ix, key, seq };
        if let Some(tally) = self.run.effects.get_mut(ix as usize) {
            tally.status = EffectStatus::IntentOnly;
            tally.attempts = 0;
        }
        Ok(())
    }

    /// EFFECT_ATTEMPT(node, key, attempt): attempt 1 after the intent, a + 1 after attempt a
    /// (a takeover, or a retry after a release).
    fn effect_attempt(&mut self, seq: u32, offset: u32, node: &[u8], key: &'a [u8], attempt: u32) -> Result<(), LogErrorCode> {
        let ix = self.find_node(node).ok_or(LogErrorCode::UnknownNode)?;
        let (intent_key, intent_seq, previous) = match self.run.phase {
            Phase::Intent { node, key, seq } if node == ix => (key, seq, 0),
            Phase::Attempted { node, key, intent_seq, attempt, .. } if node == ix => (key, intent_seq, attempt),
            Phase::Released { node, key, intent_seq, attempt } if node == ix => (key, intent_seq, attempt),
            _ => return Err(LogErrorCode::ImpossibleOrder),
        };
        if intent_key != key || previous.checked_add(1) != Some(attempt) {
            return Err(LogErrorCode::ImpossibleOrder);
        }
        self.run.phase = Phase::Attempted { node: ix, key, intent_seq, attempt, seq, offset };
        if let Some(tally) = self.run.effects.get_mut(ix as usize) {
            tally.attempts = attempt;
        }
        Ok(())
    }

    /// EFFECT_RELEASED(node, key, attempt): only the latest attempt, while it has no outcome.
    fn effect_released(&mut self, node: &[u8], key: &[u8], attempt: u32) -> Result<(), LogErrorCode> {
        let ix = self.find_node(node).ok_or(LogErrorCode::UnknownNode)?;
        match self.run.phase {
            Phase::Attempted { node, key: k, intent_seq, attempt: a, .. } if node == ix && k == key && a == attempt => {
                self.run.phase = Phase::Released { node, key: k, intent_seq, attempt };
                Ok(())
            }
            _ => Err(LogErrorCode::ImpossibleOrder),
        }
    }

    /// EFFECT_DONE: a v2 record needs a recorded attempt of the instance (the fence); a v1 record
    /// follows its intent directly (format 1 had no attempts).
    fn effect_done(&mut self, seq: u32, offset: u32, version: u8, node: &[u8], key: &'a [u8]) -> Result<(), LogErrorCode> {
        let ix = self.find_node(node).ok_or(LogErrorCode::UnknownNode)?;
        let allowed = match self.run.phase {
            Phase::Intent { node, key: k, .. } => version == FORMAT_VERSION_1 && node == ix && k == key,
            Phase::Attempted { node, key: k, .. } => version == FORMAT_VERSION_2 && node == ix && k == key,
            _ => false,
        };
        if !allowed {
            return Err(LogErrorCode::ImpossibleOrder);
        }
        self.run.phase = Phase::Done { node: ix, key, seq, offset };
        if let Some(tally) = self.run.effects.get_mut(ix as usize) {
            tally.status = EffectStatus::Done;
            tally.done_count = tally.done_count.saturating_add(1);
        }
        Ok(())
    }

    fn interrupt_parked(&mut self, seq: u32, node: &[u8], interrupt_id: &'a [u8]) -> Result<(), LogErrorCode> {
        let ix = self.find_node(node).ok_or(LogErrorCode::UnknownNode)?;
        if self.run.phase != (Phase::At { node: ix }) || self.run.node_kind(ix) != NODE_INTERRUPT {
            return Err(LogErrorCode::ImpossibleOrder);
        }
        // An id that reads `name@s` names the park of node `name` at seq `s`, and only that park
        // may use it: no two records share a seq, so such an id is unique without being listed
        // (the table keeps only the other ids, and stays empty for the ids the shell writes).
        let unique = match reserved_interrupt_id(interrupt_id) {
            Some((name, at)) => name == node && at == seq,
            None => self.run.interrupts.park(interrupt_id),
        };
        if !unique {
            return Err(LogErrorCode::DuplicateInterrupt);
        }
        self.run.phase = Phase::Parked { node: ix, interrupt_id, seq };
        self.run.interrupts_parked = self.run.interrupts_parked.saturating_add(1);
        Ok(())
    }

    fn resume_claimed(&mut self, seq: u32, offset: u32, interrupt_id: &'a [u8]) -> Result<(), LogErrorCode> {
        let node = match self.run.phase {
            Phase::Parked { node, interrupt_id: parked, .. } if parked == interrupt_id => node,
            _ => return Err(LogErrorCode::ImpossibleOrder),
        };
        self.run.phase = Phase::Claimed { node, interrupt_id, seq, offset };
        self.run.last_claim = Some((interrupt_id, Position { seq, offset }));
        // A reserved id (`name@s`) is not in the table: its claim is the record after seq `s`.
        if reserved_interrupt_id(interrupt_id).is_none() {
            self.run.interrupts.claim(interrupt_id, Position { seq, offset });
        }
        self.run.interrupts_claimed = self.run.interrupts_claimed.saturating_add(1);
        Ok(())
    }

    fn forked(&mut self, seq: u32, link: ForkLink<'a>) -> Result<(), LogErrorCode> {
        let after_checkpoint = self.prev_kind == KIND_RUN_STARTED || self.prev_kind == KIND_NODE_COMPLETED;
        if !after_checkpoint || seq.checked_sub(1) != Some(link.source_seq) {
            return Err(LogErrorCode::ImpossibleOrder);
        }
        self.run.run_id = link.run_id;
        self.run.lineage.push(link);
        Ok(())
    }

    /// Steps 2 and 3 of "Transitions" for an already parsed record of format `version`.
    fn apply(&mut self, seq: u32, offset: u32, version: u8, record: Record<'a>) -> Result<(), LogErrorCode> {
        if self.run.phase.is_terminal() {
            return Err(LogErrorCode::ImpossibleOrder);
        }
        if seq == 0 && !matches!(record, Record::RunStarted(_)) {
            return Err(LogErrorCode::ImpossibleOrder);
        }
        match record {
            Record::RunStarted(r) => self.run_started(seq, offset, r),
            Record::NodeCompleted { node, next, state_form, .. } => {
                self.node_completed(seq, offset, node, next, state_form)
            }
            Record::EffectIntent { node, key } => self.effect_intent(seq, node, key),
            Record::EffectDone { node, key, .. } => self.effect_done(seq, offset, version, node, key),
            Record::EffectAttempt { node, key, attempt, .. } => self.effect_attempt(seq, offset, node, key, attempt),
            Record::EffectReleased { node, key, attempt, .. } => self.effect_released(node, key, attempt),
            Record::InterruptParked { node, interrupt_id } => self.interrupt_parked(seq, node, interrupt_id),
            Record::ResumeClaimed { interrupt_id, .. } => self.resume_claimed(seq, offset, interrupt_id),
            Record::Forked { source_run_id, source_seq, run_id, intent } => {
                self.forked(seq, ForkLink { source_run_id, source_seq, run_id, fork_seq: seq, intent })
            }
            Record::RunCompleted => {
                if self.run.phase != Phase::Ended {
                    return Err(LogErrorCode::ImpossibleOrder);
                }
                self.run.phase = Phase::Completed;
                Ok(())
            }
            Record::RunFailed { node, code, message } => {
                if self.run.phase == Phase::Empty {
                    return Err(LogErrorCode::ImpossibleOrder);
                }
                self.run.phase = Phase::Failed;
                self.run.failure = Some(Failure { node, code, message });
                Ok(())
            }
        }
    }
}

/// The node name and seq an interrupt id names when it reads `name@seq`: a non-empty `name`, the
/// last `@`, and the seq in decimal without leading zeros (a u32). docs/core-api.md, "Transitions":
/// such an id may be parked only by node `name` at seq `seq`, which is how the shell names every
/// interrupt (`node@parkSeq`); None for any other id.
pub fn reserved_interrupt_id(id: &[u8]) -> Option<(&[u8], u32)> {
    let at = id.iter().rposition(|&b| b == b'@')?;
    let (name, rest) = id.split_at(at);
    let digits = rest.get(1..)?;
    let canonical_digits = match digits {
        [] => false,
        [b'0', _, ..] => false,
        _ => digits.len() <= 10 && digits.iter().all(u8::is_ascii_digit),
    };
    if name.is_empty() || !canonical_digits {
        return None;
    }
    let value = digits.iter().fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d.saturating_sub(b'0'))));
    u32::try_from(value).ok().map(|seq| (name, seq))
}

/// Folds the records of `bytes`, which start at the absolute position `at` of the log, into
/// `fold`. Offsets in the fold and in an error are absolute (`at.offset` + the offset in
/// `bytes`), so folding a log in pieces reports what folding it whole reports (docs/core-api.md,
/// "Incremental recovery"). Returns the cursor after the last durable record; a torn tail is
/// left out of it and counted in `fold.run.torn_len`.
pub(crate) fn fold_chunk<'a>(fold: &mut Fold<'a>, at: Cursor, bytes: &'a [u8]) -> Result<Cursor, RecoveryError> {
    let mut local: usize = 0;
    let mut seq = at.seq;
    let mut chain = at.chain;
    fold.run.torn_len = 0;
    loop {
        let offset = at.offset.saturating_add(to_u32(local));
        match read_frame(bytes, local, seq, chain) {
            Frame::End => break,
            Frame::Torn => {
                fold.run.torn_len = to_u32(bytes.len().saturating_sub(local));
                break;
            }
            Frame::Corrupt { code, kind } => return Err(RecoveryError { code, seq, offset, kind }),
            Frame::Sound { version, kind, payload, end, chain: value } => {
                let applied = match decode_payload(kind, payload) {
                    Ok(record) => fold.apply(seq, offset, version, record),
                    Err(code) => Err(code),
                };
                if let Err(code) = applied {
                    return Err(RecoveryError { code, seq, offset, kind });
                }
                fold.prev_kind = kind;
                chain = chain.after(version, value);
                local = end;
                // Every record is at least 16 bytes, so 2^32 records cannot fit in memory;
                // reaching the limit would be a 64 GiB log on a 64-bit host. Stop there.
                seq = match seq.checked_add(1) {
                    Some(next) => next,
                    None => return Err(RecoveryError { code: LogErrorCode::BadSeq, seq, offset, kind }),
                };
            }
        }
    }
    let next = Cursor { seq, offset: at.offset.saturating_add(to_u32(local)), chain };
    fold.run.record_count = next.seq;
    fold.run.durable_len = next.offset;
    Ok(next)
}

verus! {

/// Recovers a run from its log: the typed result behind `crate::recover`.
/// Model: `spec::recovery::spec_recover(log@)`; the byte-level tie is on `crate::recover`.
#[verifier::external_body]
pub fn recover_log<'a>(log: &'a [u8]) -> Result<Recovered<'a>, RecoveryError> {
    let mut fold = Fold::start();
    fold_chunk(&mut fold, Cursor::START, log)?;
    Ok(fold.run)
}

} // verus!

/// Start offset, end offset and kind byte of record `n` of a log that recovered: the framing
/// was checked, so this only hops over lengths (and the version byte, which says how long the
/// trailer is). `None` if the log has fewer records.
pub fn record_span(log: &[u8], n: u32) -> Option<(usize, usize, u8)> {
    let mut offset: usize = 0;
    let mut seq: u32 = 0;
    loop {
        let (header, _) = log.get(offset..)?.split_first_chunk::<12>()?;
        let [l0, l1, l2, l3, _, _, _, _, version, kind, _, _] = *header;
        let payload_len = usize::try_from(u32::from_le_bytes([l0, l1, l2, l3])).ok()?;
        let frame_len = if version == FORMAT_VERSION_2 { HEADER_LEN + TRAILER_LEN_V2 } else { HEADER_LEN + TRAILER_LEN };
        let end = offset.checked_add(payload_len)?.checked_add(frame_len)?;
        if end > log.len() {
            return None;
        }
        if seq == n {
            return Some((offset, end, kind));
        }
        offset = end;
        seq = seq.checked_add(1)?;
    }
}
