//! The canonical result encodings of docs/core-api.md ("Recovery encoding", "Admission
//! encoding"). Each encoder runs twice over one writer function: once counting bytes, once
//! writing into a buffer of exactly that size, so a call allocates its output once.

use alloc::vec::Vec;

use crate::admission::Admission;
use crate::codec::NODE_EFFECT;
use crate::recovery::{to_u32, Action, ForkLink, Position, Recovered, RecoveryError, RunStatus};

/// `NONE32`: absent checkpoint/snapshot positions.
pub const NONE32: u32 = 0xFFFF_FFFF;

/// Where encoded bytes go: a counter or a buffer.
pub(crate) trait Sink {
    fn put(&mut self, bytes: &[u8]);

    fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }

    fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }

    fn bytes(&mut self, v: &[u8]) {
        self.u32(to_u32(v.len()));
        self.put(v);
    }
}

pub(crate) struct Counter {
    pub(crate) len: usize,
}

impl Sink for Counter {
    fn put(&mut self, bytes: &[u8]) {
        self.len = self.len.saturating_add(bytes.len());
    }
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

fn write_position<S: Sink>(out: &mut S, p: Option<Position>) {
    match p {
        Some(p) => {
            out.u32(p.seq);
            out.u32(p.offset);
        }
        None => {
            out.u32(NONE32);
            out.u32(NONE32);
        }
    }
}

fn write_action<S: Sink>(out: &mut S, action: Action<'_>) {
    match action {
        Action::None => out.u8(0),
        Action::RunPure { node } => {
            out.u8(1);
            out.bytes(node);
        }
        Action::BeginEffect { node } => {
            out.u8(2);
            out.bytes(node);
        }
        Action::InvokeEffect { node, key, intent_seq, next_attempt } => {
            out.u8(3);
            out.bytes(node);
            out.bytes(key);
            out.u32(intent_seq);
            out.u32(next_attempt);
        }
        Action::FinishEffect { node, key, done_seq, done_offset } => {
            out.u8(4);
            out.bytes(node);
            out.bytes(key);
            out.u32(done_seq);
            out.u32(done_offset);
        }
        Action::Park { node } => {
            out.u8(5);
            out.bytes(node);
        }
        Action::AwaitResume { node, interrupt_id, parked_seq } => {
            out.u8(6);
            out.bytes(node);
            out.bytes(interrupt_id);
            out.u32(parked_seq);
        }
        Action::FinishInterrupt { node, interrupt_id, claim_seq, claim_offset } => {
            out.u8(7);
            out.bytes(node);
            out.bytes(interrupt_id);
            out.u32(claim_seq);
            out.u32(claim_offset);
        }
        Action::FinishRun => out.u8(8),
        Action::AwaitAttempt { node, key, intent_seq, attempt, attempt_seq, attempt_offset } => {
            out.u8(9);
            out.bytes(node);
            out.bytes(key);
            out.u32(intent_seq);
            out.u32(attempt);
            out.u32(attempt_seq);
            out.u32(attempt_offset);
        }
    }
}

fn write_effects<S: Sink>(out: &mut S, run: &Recovered<'_>) {
    let mut effect_count: u32 = 0;
    for entry in &run.nodes {
        if entry.kind == NODE_EFFECT {
            effect_count = effect_count.saturating_add(1);
        }
    }
    out.u32(effect_count);
    for (entry, tally) in run.nodes.iter().zip(run.effects.iter()) {
        if entry.kind == NODE_EFFECT {
            out.bytes(entry.name);
            out.u8(tally.status as u8);
            out.u32(tally.done_count);
            out.u32(tally.attempts);
        }
    }
}

/// The lineage, oldest fork first: the recovery encoding's and the summary's layout.
pub(crate) fn write_lineage<S: Sink>(out: &mut S, lineage: &[ForkLink<'_>]) {
    out.u32(to_u32(lineage.len()));
    for link in lineage {
        out.bytes(link.source_run_id);
        out.u32(link.source_seq);
        out.bytes(link.run_id);
        out.u32(link.fork_seq);
        out.bytes(link.intent);
    }
}

fn write_recovered<S: Sink>(out: &mut S, run: &Recovered<'_>) {
    out.u8(1);
    let status = run.status();
    out.u8(status as u8);
    out.u32(run.record_count);
    out.u32(run.durable_len);
    out.u32(run.torn_len);
    out.bytes(run.run_id);
    out.bytes(run.workflow);
    out.bytes(run.version);
    out.bytes(run.fingerprint);
    write_position(out, run.checkpoint);
    write_position(out, run.snapshot);
    write_action(out, run.action());
    write_effects(out, run);
    out.u32(run.interrupts_parked);
    out.u32(run.interrupts_claimed);
    write_lineage(out, &run.lineage);
    if status == RunStatus::Failed {
        if let Some(failure) = run.failure {
            out.bytes(failure.node);
            out.bytes(failure.code);
            out.bytes(failure.message);
        }
    }
}

fn write_error<S: Sink>(out: &mut S, error: &RecoveryError) {
    out.u8(0);
    out.u8(error.code as u8);
    out.u32(error.seq);
    out.u32(error.offset);
    out.u8(error.kind);
}

pub(crate) fn write_recovery<S: Sink>(out: &mut S, result: &Result<Recovered<'_>, RecoveryError>) {
    match result {
        Ok(run) => write_recovered(out, run),
        Err(error) => write_error(out, error),
    }
}

/// The recovery encoding of a typed recovery result.
pub fn encode_recovery(result: &Result<Recovered<'_>, RecoveryError>) -> Vec<u8> {
    let mut counter = Counter { len: 0 };
    write_recovery(&mut counter, result);
    let mut out = Vec::with_capacity(counter.len);
    write_recovery(&mut out, result);
    out
}

/// Size of an admission encoding: verdict, reason, detail, seq, offset.
pub const ADMISSION_LEN: usize = 11;

/// The admission encoding of a typed admission.
pub fn encode_admission(admission: &Admission) -> Vec<u8> {
    let (verdict, reason, detail, seq, offset) = admission.wire_fields();
    let mut out = Vec::with_capacity(ADMISSION_LEN);
    out.push(verdict);
    out.push(reason);
    out.push(detail);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    out
}
