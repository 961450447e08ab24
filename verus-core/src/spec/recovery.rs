//! Specification of recovery (docs/core-api.md, "Recovery as a state machine over records",
//! "What recovery reports", "Recovery encoding"). Trusted model; erased in normal builds.

#[cfg(verus_keep_ghost)] // spec items exist only when ghost code is kept
use vstd::bytes::spec_u32_to_le_bytes;
use vstd::prelude::*;

#[allow(unused_imports)] // used only by ghost code
use crate::spec::codec::*;

verus! {

pub enum SpecPhase {
    Empty,
    At { node: Seq<u8> },
    Intent { node: Seq<u8>, key: Seq<u8>, seq: u32 },
    Attempted { node: Seq<u8>, key: Seq<u8>, intent_seq: u32, attempt: u32, seq: u32, offset: u32 },
    Released { node: Seq<u8>, key: Seq<u8>, intent_seq: u32, attempt: u32 },
    Done { node: Seq<u8>, key: Seq<u8>, seq: u32, offset: u32 },
    Parked { node: Seq<u8>, id: Seq<u8>, seq: u32 },
    Claimed { node: Seq<u8>, id: Seq<u8>, seq: u32, offset: u32 },
    Ended,
    Completed,
    Failed,
}

/// Effect status of an effect node's latest instance: 0 fresh, 1 intent-only, 2 done; and the
/// number of EFFECT_ATTEMPT records of that instance.
pub struct SpecEffect {
    pub status: u8,
    pub done_count: nat,
    pub attempts: u32,
}

pub struct SpecFork {
    pub source_run_id: Seq<u8>,
    pub source_seq: u32,
    pub run_id: Seq<u8>,
    pub fork_seq: u32,
    pub intent: Seq<u8>,
}

pub struct SpecFailure {
    pub node: Seq<u8>,
    pub code: Seq<u8>,
    pub message: Seq<u8>,
}

/// Everything the fold carries from one record to the next.
pub struct SpecRun {
    pub phase: SpecPhase,
    pub nodes: Seq<SpecNodeEntry>,
    pub run_id: Seq<u8>,
    pub workflow: Seq<u8>,
    pub version: Seq<u8>,
    pub fingerprint: Seq<u8>,
    pub checkpoint: Option<(u32, u32)>,
    pub snapshot: Option<(u32, u32)>,
    pub effects: Map<Seq<u8>, SpecEffect>,
    pub parked: Set<Seq<u8>>,
    /// Claimed interrupt id -> (seq, offset) of its RESUME_CLAIMED.
    pub claims: Map<Seq<u8>, (u32, u32)>,
    pub parked_count: nat,
    pub claimed_count: nat,
    pub lineage: Seq<SpecFork>,
    pub failure: Option<SpecFailure>,
    /// Kind of the record before the next one (0 before the first).
    pub prev_kind: u8,
}

pub struct SpecRecovered {
    pub run: SpecRun,
    pub record_count: nat,
    pub durable_len: nat,
    pub torn_len: nat,
}

pub struct SpecError {
    pub code: u8,
    pub seq: u32,
    pub offset: int,
    pub kind: u8,
}

pub open spec fn spec_empty_run() -> SpecRun {
    SpecRun {
        phase: SpecPhase::Empty,
        nodes: Seq::empty(),
        run_id: Seq::empty(),
        workflow: Seq::empty(),
        version: Seq::empty(),
        fingerprint: Seq::empty(),
        checkpoint: None,
        snapshot: None,
        effects: Map::empty(),
        parked: Set::empty(),
        claims: Map::empty(),
        parked_count: 0,
        claimed_count: 0,
        lineage: Seq::empty(),
        failure: None,
        prev_kind: 0,
    }
}

pub open spec fn spec_is_terminal(p: SpecPhase) -> bool {
    p is Completed || p is Failed
}

/// Kind of the node named `name`, if the table has it.
pub open spec fn spec_node_kind(nodes: Seq<SpecNodeEntry>, name: Seq<u8>) -> Option<u8> {
    if exists|i: int| 0 <= i < nodes.len() && #[trigger] nodes[i].name == name {
        let i = choose|i: int| 0 <= i < nodes.len() && #[trigger] nodes[i].name == name;
        Some(nodes[i].kind)
    } else {
        None
    }
}

/// Position of the last `@` in `id[0..i)`, or -1.
pub open spec fn spec_last_at(id: Seq<u8>, i: int) -> int
    decreases i,
{
    if i <= 0 {
        -1
    } else if id[i - 1] == 64u8 {
        i - 1
    } else {
        spec_last_at(id, i - 1)
    }
}

/// The value of ASCII decimal digits.
pub open spec fn spec_decimal(digits: Seq<u8>) -> nat
    decreases digits.len(),
{
    if digits.len() == 0 {
        0
    } else {
        spec_decimal(digits.drop_last()) * 10 + (digits.last() - 48u8) as nat
    }
}

/// The node name and seq a reserved interrupt id names: `name@seq` with a non-empty name, the last
/// `@`, and seq in decimal without leading zeros, 1 to 10 digits, below 2^32 (docs/core-api.md,
/// "Transitions"). None for any other id.
pub open spec fn spec_reserved_id(id: Seq<u8>) -> Option<(Seq<u8>, nat)> {
    let at = spec_last_at(id, id.len() as int);
    let digits = id.subrange(at + 1, id.len() as int);
    if at <= 0 || digits.len() < 1 || digits.len() > 10 || (digits.len() > 1 && digits[0] == 48u8) {
        None
    } else if !(forall|i: int| 0 <= i < digits.len() ==> 48u8 <= #[trigger] digits[i] <= 57u8) {
        None
    } else if spec_decimal(digits) >= 0x1_0000_0000 {
        None
    } else {
        Some((id.subrange(0, at), spec_decimal(digits)))
    }
}

/// A reserved id may be parked only by the node it names, at the seq it names; any other id may.
pub open spec fn spec_may_park(id: Seq<u8>, node: Seq<u8>, s: u32) -> bool {
    match spec_reserved_id(id) {
        None => true,
        Some((name, at)) => name == node && at == s as nat,
    }
}

pub open spec fn spec_node_table_ok(nodes: Seq<SpecNodeEntry>) -> bool {
    &&& 1 <= nodes.len() <= 65535
    &&& forall|i: int| 0 <= i < nodes.len() ==> 1 <= #[trigger] nodes[i].kind <= 3
    &&& forall|i: int, j: int| 0 <= i < j < nodes.len() ==> #[trigger] nodes[i].name != #[trigger] nodes[j].name
}

pub open spec fn spec_effect_of(run: SpecRun, node: Seq<u8>) -> SpecEffect {
    if run.effects.contains_key(node) { run.effects[node] } else { SpecEffect { status: 0, done_count: 0, attempts: 0 } }
}

/// Is `node` the node of the phase, in one of the given shapes?
pub open spec fn spec_phase_allows_completion(p: SpecPhase, node: Seq<u8>, kind: u8) -> bool {
    match p {
        SpecPhase::At { node: n } => n == node && kind == 1,
        SpecPhase::Done { node: n, .. } => n == node,
        SpecPhase::Claimed { node: n, .. } => n == node,
        _ => false,
    }
}

pub open spec fn spec_step_run_started(run: SpecRun, s: u32, o: u32, r: SpecRecord) -> Result<SpecRun, u8> {
    match r {
        SpecRecord::RunStarted { run_id, workflow, version, fingerprint, nodes, start_node, .. } => {
            if s != 0 {
                Err(code_impossible_order())
            } else if !spec_node_table_ok(nodes) {
                Err(code_bad_node_table())
            } else if spec_node_kind(nodes, start_node) is None {
                Err(code_unknown_node())
            } else {
                Ok(SpecRun {
                    phase: SpecPhase::At { node: start_node },
                    nodes,
                    run_id,
                    workflow,
                    version,
                    fingerprint,
                    checkpoint: Some((s, o)),
                    snapshot: Some((s, o)),
                    prev_kind: 1,
                    ..run
                })
            }
        },
        _ => Err(code_impossible_order()),
    }
}

/// The instance an EFFECT_ATTEMPT of (node, key) may follow, and the attempt it must carry:
/// `Some((intent_seq, next))` in INTENT (next 1), ATTEMPTED a or RELEASED a (next a + 1).
pub open spec fn spec_attempt_slot(p: SpecPhase, node: Seq<u8>, key: Seq<u8>) -> Option<(u32, int)> {
    match p {
        SpecPhase::Intent { node: n, key: k, seq } => if n == node && k == key { Some((seq, 1int)) } else { None },
        SpecPhase::Attempted { node: n, key: k, intent_seq, attempt, .. } => if n == node && k == key {
            Some((intent_seq, attempt + 1))
        } else {
            None
        },
        SpecPhase::Released { node: n, key: k, intent_seq, attempt } => if n == node && k == key {
            Some((intent_seq, attempt + 1))
        } else {
            None
        },
        _ => None,
    }
}

/// Whether EFFECT_DONE(node, key) of format `version` may follow: v2 only after a recorded
/// attempt of the instance (the fence), v1 only right after its intent.
pub open spec fn spec_done_allowed(p: SpecPhase, version: u8, node: Seq<u8>, key: Seq<u8>) -> bool {
    match p {
        SpecPhase::Intent { node: n, key: k, .. } => version == 1 && n == node && k == key,
        SpecPhase::Attempted { node: n, key: k, .. } => version == 2 && n == node && k == key,
        _ => false,
    }
}

/// The kind-specific rules for every kind but RUN_STARTED (step 3 of "Transitions"), for a
/// record of format `version`.
pub open spec fn spec_step_later(run: SpecRun, s: u32, o: u32, version: u8, r: SpecRecord) -> Result<SpecRun, u8> {
    let k = spec_kind_byte(r);
    match r {
        SpecRecord::NodeCompleted { node, next, state_form, .. } => {
            let nk = spec_node_kind(run.nodes, node);
            if nk is None || (next.len() > 0 && spec_node_kind(run.nodes, next) is None) {
                Err(code_unknown_node())
            } else if !spec_phase_allows_completion(run.phase, node, nk.unwrap()) {
                Err(code_impossible_order())
            } else {
                Ok(SpecRun {
                    phase: if next.len() == 0 { SpecPhase::Ended } else { SpecPhase::At { node: next } },
                    checkpoint: Some((s, o)),
                    snapshot: if state_form == 0 { Some((s, o)) } else { run.snapshot },
                    prev_kind: k,
                    ..run
                })
            }
        },
        SpecRecord::EffectIntent { node, key } => {
            let nk = spec_node_kind(run.nodes, node);
            if nk is None {
                Err(code_unknown_node())
            } else if !(run.phase == (SpecPhase::At { node }) && nk == Some(2u8)) {
                Err(code_impossible_order())
            } else {
                Ok(SpecRun {
                    phase: SpecPhase::Intent { node, key, seq: s },
                    effects: run.effects.insert(node, SpecEffect { status: 1, attempts: 0, ..spec_effect_of(run, node) }),
                    prev_kind: k,
                    ..run
                })
            }
        },
        SpecRecord::EffectAttempt { node, key, attempt, .. } => {
            if spec_node_kind(run.nodes, node) is None {
                Err(code_unknown_node())
            } else {
                match spec_attempt_slot(run.phase, node, key) {
                    Some((intent_seq, next)) => if attempt as int == next {
                        Ok(SpecRun {
                            phase: SpecPhase::Attempted { node, key, intent_seq, attempt, seq: s, offset: o },
                            effects: run.effects.insert(node, SpecEffect { attempts: attempt, ..spec_effect_of(run, node) }),
                            prev_kind: k,
                            ..run
                        })
                    } else {
                        Err(code_impossible_order())
                    },
                    None => Err(code_impossible_order()),
                }
            }
        },
        SpecRecord::EffectReleased { node, key, attempt, .. } => {
            if spec_node_kind(run.nodes, node) is None {
                Err(code_unknown_node())
            } else {
                match run.phase {
                    SpecPhase::Attempted { node: n, key: kk, intent_seq, attempt: a, .. } => if n == node && kk == key
                        && a == attempt {
                        Ok(SpecRun {
                            phase: SpecPhase::Released { node, key, intent_seq, attempt },
                            prev_kind: k,
                            ..run
                        })
                    } else {
                        Err(code_impossible_order())
                    },
                    _ => Err(code_impossible_order()),
                }
            }
        },
        SpecRecord::EffectDone { node, key, .. } => {
            if spec_node_kind(run.nodes, node) is None {
                Err(code_unknown_node())
            } else if !spec_done_allowed(run.phase, version, node, key) {
                Err(code_impossible_order())
            } else {
                let before = spec_effect_of(run, node);
                Ok(SpecRun {
                    phase: SpecPhase::Done { node, key, seq: s, offset: o },
                    effects: run.effects.insert(node, SpecEffect { status: 2, done_count: before.done_count + 1, ..before }),
                    prev_kind: k,
                    ..run
                })
            }
        },
        SpecRecord::InterruptParked { node, interrupt_id } => {
            let nk = spec_node_kind(run.nodes, node);
            if nk is None {
                Err(code_unknown_node())
            } else if !(run.phase == (SpecPhase::At { node }) && nk == Some(3u8)) {
                Err(code_impossible_order())
            } else if run.parked.contains(interrupt_id) || !spec_may_park(interrupt_id, node, s) {
                Err(code_duplicate_interrupt())
            } else {
                Ok(SpecRun {
                    phase: SpecPhase::Parked { node, id: interrupt_id, seq: s },
                    parked: run.parked.insert(interrupt_id),
                    parked_count: run.parked_count + 1,
                    prev_kind: k,
                    ..run
                })
            }
        },
        SpecRecord::ResumeClaimed { interrupt_id, .. } => {
            match run.phase {
                SpecPhase::Parked { node, id, .. } => if id == interrupt_id {
                    Ok(SpecRun {
                        phase: SpecPhase::Claimed { node, id, seq: s, offset: o },
                        claims: run.claims.insert(id, (s, o)),
                        claimed_count: run.claimed_count + 1,
                        prev_kind: k,
                        ..run
                    })
                } else {
                    Err(code_impossible_order())
                },
                _ => Err(code_impossible_order()),
            }
        },
        SpecRecord::Forked { source_run_id, source_seq, run_id, intent } => {
            if (run.prev_kind == 1 || run.prev_kind == 2) && s >= 1 && source_seq == s - 1 {
                Ok(SpecRun {
                    run_id,
                    lineage: run.lineage.push(SpecFork { source_run_id, source_seq, run_id, fork_seq: s, intent }),
                    prev_kind: k,
                    ..run
                })
            } else {
                Err(code_impossible_order())
            }
        },
        SpecRecord::RunCompleted => {
            if run.phase is Ended {
                Ok(SpecRun { phase: SpecPhase::Completed, prev_kind: k, ..run })
            } else {
                Err(code_impossible_order())
            }
        },
        SpecRecord::RunFailed { node, code, message } => {
            if run.phase is Empty {
                Err(code_impossible_order())
            } else {
                Ok(SpecRun {
                    phase: SpecPhase::Failed,
                    failure: Some(SpecFailure { node, code, message }),
                    prev_kind: k,
                    ..run
                })
            }
        },
        SpecRecord::RunStarted { .. } => Err(code_impossible_order()),
    }
}

/// One transition: the terminal check, then the s = 0 rule, then the kind-specific rules.
/// (Step 1, the payload parse, happened before: `r` is a parsed record of format `version`.)
pub open spec fn spec_step(run: SpecRun, s: u32, o: u32, version: u8, r: SpecRecord) -> Result<SpecRun, u8> {
    if spec_is_terminal(run.phase) {
        Err(code_impossible_order())
    } else if s == 0 || r is RunStarted {
        spec_step_run_started(run, s, o, r)
    } else {
        spec_step_later(run, s, o, version, r)
    }
}

/// Walks the log from offset `o`, expecting position `s` after a record whose chain value is
/// `prev`; `v2_seen`: a format-2 record came before.
pub open spec fn spec_walk(log: Seq<u8>, o: int, s: u32, prev: u32, v2_seen: bool, run: SpecRun) -> Result<SpecRecovered, SpecError>
    decreases log.len() - o,
{
    match spec_read_frame(log, o, s, prev, v2_seen) {
        SpecFrame::End => Ok(SpecRecovered { run, record_count: s as nat, durable_len: o as nat, torn_len: 0 }),
        SpecFrame::Torn => Ok(SpecRecovered {
            run,
            record_count: s as nat,
            durable_len: o as nat,
            torn_len: (log.len() - o) as nat,
        }),
        SpecFrame::Corrupt { code, kind } => Err(SpecError { code, seq: s, offset: o, kind }),
        SpecFrame::Sound { version, kind, payload, end, chain } => match spec_decode_payload(kind, payload) {
            Err(code) => Err(SpecError { code, seq: s, offset: o, kind }),
            Ok(r) => match spec_step(run, s, o as u32, version, r) {
                Err(code) => Err(SpecError { code, seq: s, offset: o, kind }),
                Ok(next) => if o < end && s < u32::MAX {
                    spec_walk(log, end, (s + 1) as u32, chain, v2_seen || version == 2, next)
                } else {
                    Err(SpecError { code: code_bad_seq(), seq: s, offset: o, kind })
                },
            },
        },
    }
}

pub open spec fn spec_recover(log: Seq<u8>) -> Result<SpecRecovered, SpecError> {
    spec_walk(log, 0, 0, 0, false, spec_empty_run())
}

/// The durable records of a log, decoded, in order (no transition checks): what "the log
/// holds" means in the properties.
pub open spec fn spec_records_from(log: Seq<u8>, o: int, s: u32, prev: u32, v2_seen: bool) -> Seq<SpecRecord>
    decreases log.len() - o,
{
    match spec_read_frame(log, o, s, prev, v2_seen) {
        SpecFrame::Sound { version, kind, payload, end, chain } => match spec_decode_payload(kind, payload) {
            Ok(r) => if o < end && s < u32::MAX {
                seq![r] + spec_records_from(log, end, (s + 1) as u32, chain, v2_seen || version == 2)
            } else {
                seq![r]
            },
            Err(_) => Seq::empty(),
        },
        _ => Seq::empty(),
    }
}

pub open spec fn spec_records(log: Seq<u8>) -> Seq<SpecRecord> {
    spec_records_from(log, 0, 0, 0, false)
}

// ---------------------------------------------------------------- next action

pub enum SpecAction {
    None,
    RunPure { node: Seq<u8> },
    BeginEffect { node: Seq<u8> },
    InvokeEffect { node: Seq<u8>, key: Seq<u8>, intent_seq: u32, next_attempt: u32 },
    FinishEffect { node: Seq<u8>, key: Seq<u8>, done_seq: u32, done_offset: u32 },
    Park { node: Seq<u8> },
    AwaitResume { node: Seq<u8>, id: Seq<u8>, parked_seq: u32 },
    FinishInterrupt { node: Seq<u8>, id: Seq<u8>, claim_seq: u32, claim_offset: u32 },
    FinishRun,
    AwaitAttempt { node: Seq<u8>, key: Seq<u8>, intent_seq: u32, attempt: u32, attempt_seq: u32, attempt_offset: u32 },
}

pub open spec fn spec_next_action(run: SpecRun) -> SpecAction {
    match run.phase {
        SpecPhase::At { node } => {
            let k = spec_node_kind(run.nodes, node);
            if k == Some(1u8) {
                SpecAction::RunPure { node }
            } else if k == Some(2u8) {
                SpecAction::BeginEffect { node }
            } else {
                SpecAction::Park { node }
            }
        },
        SpecPhase::Intent { node, key, seq } => SpecAction::InvokeEffect { node, key, intent_seq: seq, next_attempt: 1 },
        SpecPhase::Released { node, key, intent_seq, attempt } => SpecAction::InvokeEffect {
            node,
            key,
            intent_seq,
            next_attempt: if attempt < u32::MAX { (attempt + 1) as u32 } else { u32::MAX },
        },
        SpecPhase::Attempted { node, key, intent_seq, attempt, seq, offset } => SpecAction::AwaitAttempt {
            node,
            key,
            intent_seq,
            attempt,
            attempt_seq: seq,
            attempt_offset: offset,
        },
        SpecPhase::Done { node, key, seq, offset } => SpecAction::FinishEffect {
            node,
            key,
            done_seq: seq,
            done_offset: offset,
        },
        SpecPhase::Parked { node, id, seq } => SpecAction::AwaitResume { node, id, parked_seq: seq },
        SpecPhase::Claimed { node, id, seq, offset } => SpecAction::FinishInterrupt {
            node,
            id,
            claim_seq: seq,
            claim_offset: offset,
        },
        SpecPhase::Ended => SpecAction::FinishRun,
        _ => SpecAction::None,
    }
}

pub open spec fn spec_status(p: SpecPhase) -> u8 {
    match p {
        SpecPhase::Empty => 0,
        SpecPhase::Parked { .. } => 2,
        SpecPhase::Completed => 3,
        SpecPhase::Failed => 4,
        _ => 1,
    }
}

// ---------------------------------------------------------------- result encoding

pub open spec fn spec_none32() -> u32 { 0xFFFF_FFFF }

pub open spec fn spec_u32n(x: nat) -> Seq<u8> {
    spec_u32_to_le_bytes(x as u32)
}

pub open spec fn spec_action_bytes(a: SpecAction) -> Seq<u8> {
    match a {
        SpecAction::None => seq![0u8],
        SpecAction::RunPure { node } => seq![1u8] + spec_field(node),
        SpecAction::BeginEffect { node } => seq![2u8] + spec_field(node),
        SpecAction::InvokeEffect { node, key, intent_seq, next_attempt } => seq![3u8] + spec_field(node)
            + spec_field(key) + spec_u32_to_le_bytes(intent_seq) + spec_u32_to_le_bytes(next_attempt),
        SpecAction::FinishEffect { node, key, done_seq, done_offset } => seq![4u8] + spec_field(node)
            + spec_field(key) + spec_u32_to_le_bytes(done_seq) + spec_u32_to_le_bytes(done_offset),
        SpecAction::Park { node } => seq![5u8] + spec_field(node),
        SpecAction::AwaitResume { node, id, parked_seq } => seq![6u8] + spec_field(node)
            + spec_field(id) + spec_u32_to_le_bytes(parked_seq),
        SpecAction::FinishInterrupt { node, id, claim_seq, claim_offset } => seq![7u8] + spec_field(node)
            + spec_field(id) + spec_u32_to_le_bytes(claim_seq) + spec_u32_to_le_bytes(claim_offset),
        SpecAction::FinishRun => seq![8u8],
        SpecAction::AwaitAttempt { node, key, intent_seq, attempt, attempt_seq, attempt_offset } => seq![9u8]
            + spec_field(node) + spec_field(key) + spec_u32_to_le_bytes(intent_seq) + spec_u32_to_le_bytes(attempt)
            + spec_u32_to_le_bytes(attempt_seq) + spec_u32_to_le_bytes(attempt_offset),
    }
}

/// Effect entries in node-table order, effect nodes only.
pub open spec fn spec_effects_bytes(run: SpecRun, nodes: Seq<SpecNodeEntry>) -> Seq<u8>
    decreases nodes.len(),
{
    if nodes.len() == 0 {
        Seq::empty()
    } else {
        let first = nodes[0];
        let rest = spec_effects_bytes(run, nodes.subrange(1, nodes.len() as int));
        if first.kind == 2 {
            let e = spec_effect_of(run, first.name);
            spec_field(first.name) + seq![e.status] + spec_u32n(e.done_count) + spec_u32_to_le_bytes(e.attempts)
                + rest
        } else {
            rest
        }
    }
}

pub open spec fn spec_effect_count(nodes: Seq<SpecNodeEntry>) -> nat
    decreases nodes.len(),
{
    if nodes.len() == 0 {
        0
    } else {
        (if nodes[0].kind == 2 { 1nat } else { 0nat }) + spec_effect_count(nodes.subrange(1, nodes.len() as int))
    }
}

pub open spec fn spec_lineage_bytes(forks: Seq<SpecFork>) -> Seq<u8>
    decreases forks.len(),
{
    if forks.len() == 0 {
        Seq::empty()
    } else {
        let f = forks[0];
        spec_field(f.source_run_id) + spec_u32_to_le_bytes(f.source_seq) + spec_field(f.run_id)
            + spec_u32_to_le_bytes(f.fork_seq) + spec_field(f.intent)
            + spec_lineage_bytes(forks.subrange(1, forks.len() as int))
    }
}

pub open spec fn spec_opt_pair(p: Option<(u32, u32)>) -> Seq<u8> {
    match p {
        Some((s, o)) => spec_u32_to_le_bytes(s) + spec_u32_to_le_bytes(o),
        None => spec_u32_to_le_bytes(spec_none32()) + spec_u32_to_le_bytes(spec_none32()),
    }
}

pub open spec fn spec_encode_recovered(r: SpecRecovered) -> Seq<u8> {
    let run = r.run;
    let head = seq![1u8, spec_status(run.phase)] + spec_u32n(r.record_count) + spec_u32n(r.durable_len)
        + spec_u32n(r.torn_len) + spec_field(run.run_id) + spec_field(run.workflow) + spec_field(run.version)
        + spec_field(run.fingerprint) + spec_opt_pair(run.checkpoint) + spec_opt_pair(run.snapshot);
    let body = head + spec_action_bytes(spec_next_action(run)) + spec_u32n(spec_effect_count(run.nodes))
        + spec_effects_bytes(run, run.nodes) + spec_u32n(run.parked_count) + spec_u32n(run.claimed_count)
        + spec_u32n(run.lineage.len()) + spec_lineage_bytes(run.lineage);
    match run.failure {
        Some(f) => if run.phase is Failed {
            body + spec_field(f.node) + spec_field(f.code) + spec_field(f.message)
        } else {
            body
        },
        None => body,
    }
}

pub open spec fn spec_encode_error(e: SpecError) -> Seq<u8> {
    seq![0u8, e.code] + spec_u32_to_le_bytes(e.seq) + spec_u32n(e.offset as nat) + seq![e.kind]
}

/// The recovery encoding of a log: what `recover(log)` must return, byte for byte.
pub open spec fn spec_recovery_encoding(log: Seq<u8>) -> Seq<u8> {
    match spec_recover(log) {
        Ok(r) => spec_encode_recovered(r),
        Err(e) => spec_encode_error(e),
    }
}

/// The summary of a log's durable records (docs/core-api.md, "Summary encoding"). Left
/// uninterpreted here: the byte layout is not modelled; its executable definition is
/// `summary::write_summary`, and the equivalence suite pins it between the two cores.
pub uninterp spec fn spec_summary(log: Seq<u8>) -> Seq<u8>;

/// The recovery half of `feed(summary, chunk)` (uninterpreted; pinned by
/// `lemma_feed_in_any_split_is_recover`).
pub uninterp spec fn spec_feed_recovery(summary: Seq<u8>, chunk: Seq<u8>) -> Seq<u8>;

/// The summary half of `feed(summary, chunk)` (uninterpreted, as above).
pub uninterp spec fn spec_feed_summary(summary: Seq<u8>, chunk: Seq<u8>) -> Seq<u8>;

} // verus!
