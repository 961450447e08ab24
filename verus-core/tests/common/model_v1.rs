//! The executable model of FORMAT 1 / CORE API 1, frozen as it was before format 2 existed (it
//! knows no link, no kinds 10 and 11, no attempts). It is the oracle of "a format-1 log recovers
//! exactly as before": the API-2 encoding of a format-1 log, with the fields API 2 added taken
//! out (`super::project_to_api_v1`), must equal this model's encoding, byte for byte. Do not
//! change it.

use std::collections::{BTreeMap, BTreeSet};

use super::model::may_park;
use super::{put_bytes, Rec};
use remit_verus_core::crc::crc32c_bitwise;

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
}

#[derive(Debug)]
pub enum Frame {
    End,
    Torn,
    Corrupt { code: u8, kind: u8 },
    Sound { kind: u8, payload: Vec<u8>, end: usize },
}

/// spec_read_frame.
pub fn read_frame(log: &[u8], o: usize, seq: u32) -> Frame {
    let r = log.len() - o;
    if r == 0 {
        return Frame::End;
    }
    if r < 12 {
        return Frame::Torn;
    }
    let check = u16::from_le_bytes([log[o + 10], log[o + 11]]);
    let version = log[o + 8];
    let kind = log[o + 9];
    let len = u32_at(log, o) as usize;
    if (crc32c_bitwise(&log[o..o + 10]) & 0xFFFF) as u16 != check {
        return Frame::Corrupt { code: 1, kind: 0 };
    }
    if version != 1 {
        return Frame::Corrupt { code: 2, kind };
    }
    if len > 0x3FFF_FFFF {
        return Frame::Corrupt { code: 3, kind };
    }
    if 12 + len + 4 > r {
        return Frame::Torn;
    }
    if crc32c_bitwise(&log[o..o + 12 + len]) != u32_at(log, o + 12 + len) {
        return Frame::Corrupt { code: 4, kind };
    }
    if u32_at(log, o + 4) != seq {
        return Frame::Corrupt { code: 5, kind };
    }
    if !(1..=9).contains(&kind) {
        return Frame::Corrupt { code: 6, kind };
    }
    Frame::Sound { kind, payload: log[o + 12..o + 12 + len].to_vec(), end: o + 16 + len }
}

struct P<'a> {
    p: &'a [u8],
    i: usize,
}

impl<'a> P<'a> {
    fn u8(&mut self) -> Option<u8> {
        let v = *self.p.get(self.i)?;
        self.i += 1;
        Some(v)
    }
    fn u32(&mut self) -> Option<u32> {
        if self.i + 4 > self.p.len() {
            return None;
        }
        let v = u32_at(self.p, self.i);
        self.i += 4;
        Some(v)
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        let n = self.u32()? as usize;
        if self.i + n > self.p.len() {
            return None;
        }
        let v = self.p[self.i..self.i + n].to_vec();
        self.i += n;
        Some(v)
    }
    fn name(&mut self) -> Option<Vec<u8>> {
        let b = self.bytes()?;
        if b.is_empty() || b.len() > 1024 {
            None
        } else {
            Some(b)
        }
    }
    fn exact(&self, r: Rec) -> Option<Rec> {
        if self.i == self.p.len() {
            Some(r)
        } else {
            None
        }
    }
}

fn parse(kind: u8, p: &[u8]) -> Option<Rec> {
    let mut c = P { p, i: 0 };
    match kind {
        1 => {
            let run_id = c.name()?;
            let workflow = c.name()?;
            let version = c.bytes()?;
            let fingerprint = c.bytes()?;
            let definition = c.bytes()?;
            let count = c.u32()?;
            let mut nodes = Vec::new();
            for _ in 0..count {
                let name = c.name()?;
                let k = c.u8()?;
                nodes.push((name, k));
            }
            let start_node = c.name()?;
            let state = c.bytes()?;
            c.exact(Rec::RunStarted { run_id, workflow, version, fingerprint, definition, nodes, start_node, state })
        }
        2 => {
            let node = c.name()?;
            let next = c.bytes()?;
            let state_form = c.u8()?;
            if state_form > 1 {
                return None;
            }
            let state = c.bytes()?;
            c.exact(Rec::NodeCompleted { node, next, state_form, state })
        }
        3 => {
            let node = c.name()?;
            let key = c.name()?;
            c.exact(Rec::EffectIntent { node, key })
        }
        4 => {
            let node = c.name()?;
            let key = c.name()?;
            let result = c.bytes()?;
            c.exact(Rec::EffectDone { node, key, result })
        }
        5 => {
            let node = c.name()?;
            let interrupt_id = c.name()?;
            c.exact(Rec::InterruptParked { node, interrupt_id })
        }
        6 => {
            let interrupt_id = c.name()?;
            let value = c.bytes()?;
            c.exact(Rec::ResumeClaimed { interrupt_id, value })
        }
        7 => {
            let source_run_id = c.name()?;
            let source_seq = c.u32()?;
            let run_id = c.name()?;
            let intent = c.bytes()?;
            c.exact(Rec::Forked { source_run_id, source_seq, run_id, intent })
        }
        8 => c.exact(Rec::RunCompleted),
        9 => {
            let node = c.bytes()?;
            let code = c.bytes()?;
            let message = c.bytes()?;
            c.exact(Rec::RunFailed { node, code, message })
        }
        _ => None,
    }
}

/// spec_decode_payload: Err(6) BAD_KIND, Err(7) MALFORMED_PAYLOAD.
pub fn decode_payload(kind: u8, p: &[u8]) -> Result<Rec, u8> {
    if !(1..=9).contains(&kind) {
        return Err(6);
    }
    parse(kind, p).ok_or(7)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Empty,
    At(Vec<u8>),
    Intent(Vec<u8>, Vec<u8>, u32),
    Done(Vec<u8>, Vec<u8>, u32, u32),
    Parked(Vec<u8>, Vec<u8>, u32),
    Claimed(Vec<u8>, Vec<u8>, u32, u32),
    Ended,
    Completed,
    Failed,
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub phase: Option<Phase>,
    pub nodes: Vec<(Vec<u8>, u8)>,
    pub run_id: Vec<u8>,
    pub workflow: Vec<u8>,
    pub version: Vec<u8>,
    pub fingerprint: Vec<u8>,
    pub checkpoint: Option<(u32, u32)>,
    pub snapshot: Option<(u32, u32)>,
    /// node -> (status, done_count)
    pub effects: BTreeMap<Vec<u8>, (u8, u32)>,
    pub parked: BTreeSet<Vec<u8>>,
    pub claims: BTreeMap<Vec<u8>, (u32, u32)>,
    pub parked_count: u32,
    pub claimed_count: u32,
    /// (source_run_id, source_seq, run_id, fork_seq, intent)
    pub lineage: Vec<(Vec<u8>, u32, Vec<u8>, u32, Vec<u8>)>,
    pub failure: Option<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    pub prev_kind: u8,
}

impl Run {
    pub fn phase(&self) -> Phase {
        self.phase.clone().unwrap_or(Phase::Empty)
    }
    fn kind_of(&self, name: &[u8]) -> Option<u8> {
        self.nodes.iter().find(|(n, _)| n == name).map(|(_, k)| *k)
    }
    fn effect(&self, name: &[u8]) -> (u8, u32) {
        self.effects.get(name).copied().unwrap_or((0, 0))
    }
}

#[derive(Clone, Debug)]
pub struct Recovered {
    pub run: Run,
    pub record_count: u32,
    pub durable_len: u32,
    pub torn_len: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    pub code: u8,
    pub seq: u32,
    pub offset: u32,
    pub kind: u8,
}

fn table_ok(nodes: &[(Vec<u8>, u8)]) -> bool {
    if nodes.is_empty() || nodes.len() > 65535 {
        return false;
    }
    if nodes.iter().any(|(_, k)| !(1..=3).contains(k)) {
        return false;
    }
    for i in 0..nodes.len() {
        for j in i + 1..nodes.len() {
            if nodes[i].0 == nodes[j].0 {
                return false;
            }
        }
    }
    true
}

/// spec_step. Codes: 8 IMPOSSIBLE_ORDER, 9 UNKNOWN_NODE, 10 DUPLICATE_INTERRUPT, 11 BAD_NODE_TABLE.
pub fn step(run: &mut Run, s: u32, o: u32, r: Rec) -> Result<(), u8> {
    let phase = run.phase();
    if matches!(phase, Phase::Completed | Phase::Failed) {
        return Err(8);
    }
    if s == 0 || matches!(r, Rec::RunStarted { .. }) {
        let Rec::RunStarted { run_id, workflow, version, fingerprint, nodes, start_node, .. } = r else {
            return Err(8);
        };
        if s != 0 {
            return Err(8);
        }
        if !table_ok(&nodes) {
            return Err(11);
        }
        if !nodes.iter().any(|(n, _)| *n == start_node) {
            return Err(9);
        }
        run.nodes = nodes;
        run.run_id = run_id;
        run.workflow = workflow;
        run.version = version;
        run.fingerprint = fingerprint;
        run.phase = Some(Phase::At(start_node));
        run.checkpoint = Some((s, o));
        run.snapshot = Some((s, o));
        run.prev_kind = 1;
        return Ok(());
    }
    let k = r.kind();
    match r {
        Rec::NodeCompleted { node, next, state_form, .. } => {
            let nk = run.kind_of(&node);
            if nk.is_none() || (!next.is_empty() && run.kind_of(&next).is_none()) {
                return Err(9);
            }
            let allowed = match &phase {
                Phase::At(n) => *n == node && nk == Some(1),
                Phase::Done(n, ..) | Phase::Claimed(n, ..) => *n == node,
                _ => false,
            };
            if !allowed {
                return Err(8);
            }
            run.phase = Some(if next.is_empty() { Phase::Ended } else { Phase::At(next) });
            run.checkpoint = Some((s, o));
            if state_form == 0 {
                run.snapshot = Some((s, o));
            }
        }
        Rec::EffectIntent { node, key } => {
            let nk = run.kind_of(&node);
            if nk.is_none() {
                return Err(9);
            }
            if !(phase == Phase::At(node.clone()) && nk == Some(2)) {
                return Err(8);
            }
            let (_, count) = run.effect(&node);
            run.effects.insert(node.clone(), (1, count));
            run.phase = Some(Phase::Intent(node, key, s));
        }
        Rec::EffectDone { node, key, .. } => {
            if run.kind_of(&node).is_none() {
                return Err(9);
            }
            match &phase {
                Phase::Intent(n, kk, _) if *n == node && *kk == key => {}
                _ => return Err(8),
            }
            let (_, count) = run.effect(&node);
            run.effects.insert(node.clone(), (2, count + 1));
            run.phase = Some(Phase::Done(node, key, s, o));
        }
        Rec::InterruptParked { node, interrupt_id } => {
            let nk = run.kind_of(&node);
            if nk.is_none() {
                return Err(9);
            }
            if !(phase == Phase::At(node.clone()) && nk == Some(3)) {
                return Err(8);
            }
            if run.parked.contains(&interrupt_id) || !may_park(&interrupt_id, &node, s) {
                return Err(10);
            }
            run.parked.insert(interrupt_id.clone());
            run.parked_count += 1;
            run.phase = Some(Phase::Parked(node, interrupt_id, s));
        }
        Rec::ResumeClaimed { interrupt_id, .. } => match &phase {
            Phase::Parked(node, id, _) if *id == interrupt_id => {
                run.claims.insert(id.clone(), (s, o));
                run.claimed_count += 1;
                run.phase = Some(Phase::Claimed(node.clone(), id.clone(), s, o));
            }
            _ => return Err(8),
        },
        Rec::Forked { source_run_id, source_seq, run_id, intent } => {
            if !((run.prev_kind == 1 || run.prev_kind == 2) && s >= 1 && source_seq == s - 1) {
                return Err(8);
            }
            run.run_id = run_id.clone();
            run.lineage.push((source_run_id, source_seq, run_id, s, intent));
        }
        Rec::RunCompleted => {
            if phase != Phase::Ended {
                return Err(8);
            }
            run.phase = Some(Phase::Completed);
        }
        Rec::RunFailed { node, code, message } => {
            if phase == Phase::Empty {
                return Err(8);
            }
            run.phase = Some(Phase::Failed);
            run.failure = Some((node, code, message));
        }
        Rec::RunStarted { .. } => return Err(8),
        // Kinds 10 and 11 did not exist in format 1: `parse` never yields them.
        Rec::EffectAttempt { .. } | Rec::EffectReleased { .. } => unreachable!("format 1 has no kind 10 or 11"),
    }
    run.prev_kind = k;
    Ok(())
}

/// spec_recover.
pub fn recover(log: &[u8]) -> Result<Recovered, Error> {
    let mut run = Run::default();
    let mut o = 0usize;
    let mut s = 0u32;
    loop {
        match read_frame(log, o, s) {
            Frame::End => return Ok(Recovered { run, record_count: s, durable_len: o as u32, torn_len: 0 }),
            Frame::Torn => {
                return Ok(Recovered { run, record_count: s, durable_len: o as u32, torn_len: (log.len() - o) as u32 })
            }
            Frame::Corrupt { code, kind } => return Err(Error { code, seq: s, offset: o as u32, kind }),
            Frame::Sound { kind, payload, end } => {
                let r = decode_payload(kind, &payload).map_err(|code| Error { code, seq: s, offset: o as u32, kind })?;
                step(&mut run, s, o as u32, r).map_err(|code| Error { code, seq: s, offset: o as u32, kind })?;
                o = end;
                s += 1;
            }
        }
    }
}

/// The durable records (spec_records): decoded, no transition checks.
pub fn records(log: &[u8]) -> Vec<Rec> {
    let mut out = Vec::new();
    let mut o = 0usize;
    let mut s = 0u32;
    while let Frame::Sound { kind, payload, end } = read_frame(log, o, s) {
        match decode_payload(kind, &payload) {
            Ok(r) => out.push(r),
            Err(_) => break,
        }
        o = end;
        s += 1;
    }
    out
}

pub fn status(p: &Phase) -> u8 {
    match p {
        Phase::Empty => 0,
        Phase::Parked(..) => 2,
        Phase::Completed => 3,
        Phase::Failed => 4,
        _ => 1,
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_pair(out: &mut Vec<u8>, p: Option<(u32, u32)>) {
    let (a, b) = p.unwrap_or((0xFFFF_FFFF, 0xFFFF_FFFF));
    put_u32(out, a);
    put_u32(out, b);
}

/// spec_action_bytes(spec_next_action(run)).
pub fn action_bytes(run: &Run) -> Vec<u8> {
    let mut out = Vec::new();
    match run.phase() {
        Phase::At(node) => {
            let tag = match run.kind_of(&node) {
                Some(1) => 1,
                Some(2) => 2,
                _ => 5,
            };
            out.push(tag);
            put_bytes(&mut out, &node);
        }
        Phase::Intent(node, key, seq) => {
            out.push(3);
            put_bytes(&mut out, &node);
            put_bytes(&mut out, &key);
            put_u32(&mut out, seq);
        }
        Phase::Done(node, key, seq, off) => {
            out.push(4);
            put_bytes(&mut out, &node);
            put_bytes(&mut out, &key);
            put_u32(&mut out, seq);
            put_u32(&mut out, off);
        }
        Phase::Parked(node, id, seq) => {
            out.push(6);
            put_bytes(&mut out, &node);
            put_bytes(&mut out, &id);
            put_u32(&mut out, seq);
        }
        Phase::Claimed(node, id, seq, off) => {
            out.push(7);
            put_bytes(&mut out, &node);
            put_bytes(&mut out, &id);
            put_u32(&mut out, seq);
            put_u32(&mut out, off);
        }
        Phase::Ended => out.push(8),
        Phase::Empty | Phase::Completed | Phase::Failed => out.push(0),
    }
    out
}

/// spec_recovery_encoding.
pub fn recovery_encoding(log: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match recover(log) {
        Err(e) => {
            out.push(0);
            out.push(e.code);
            put_u32(&mut out, e.seq);
            put_u32(&mut out, e.offset);
            out.push(e.kind);
        }
        Ok(r) => {
            let run = &r.run;
            let phase = run.phase();
            out.push(1);
            out.push(status(&phase));
            put_u32(&mut out, r.record_count);
            put_u32(&mut out, r.durable_len);
            put_u32(&mut out, r.torn_len);
            for f in [&run.run_id, &run.workflow, &run.version, &run.fingerprint] {
                put_bytes(&mut out, f);
            }
            put_pair(&mut out, run.checkpoint);
            put_pair(&mut out, run.snapshot);
            out.extend_from_slice(&action_bytes(run));
            let effect_nodes: Vec<&Vec<u8>> = run.nodes.iter().filter(|(_, k)| *k == 2).map(|(n, _)| n).collect();
            put_u32(&mut out, effect_nodes.len() as u32);
            for n in effect_nodes {
                let (st, count) = run.effect(n);
                put_bytes(&mut out, n);
                out.push(st);
                put_u32(&mut out, count);
            }
            put_u32(&mut out, run.parked_count);
            put_u32(&mut out, run.claimed_count);
            put_u32(&mut out, run.lineage.len() as u32);
            for (src, src_seq, id, fork_seq, intent) in &run.lineage {
                put_bytes(&mut out, src);
                put_u32(&mut out, *src_seq);
                put_bytes(&mut out, id);
                put_u32(&mut out, *fork_seq);
                put_bytes(&mut out, intent);
            }
            if phase == Phase::Failed {
                let (n, c, m) = run.failure.clone().unwrap();
                put_bytes(&mut out, &n);
                put_bytes(&mut out, &c);
                put_bytes(&mut out, &m);
            }
        }
    }
    out
}

/// Start offsets of the durable records, plus the durable length at the end.
fn record_starts(log: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut o = 0usize;
    let mut s = 0u32;
    while let Frame::Sound { end, .. } = read_frame(log, o, s) {
        starts.push(o);
        o = end;
        s += 1;
    }
    starts.push(o);
    starts
}

/// spec_admit: (verdict, reason, detail, seq, offset).
pub fn admit(log: &[u8], req: &[u8]) -> (u8, u8, u8, u32, u32) {
    let r = match recover(log) {
        Err(e) => return (2, 7, e.code, e.seq, e.offset),
        Ok(r) => r,
    };
    if r.record_count == 0 {
        return (2, 8, 0, 0, 0);
    }
    let head = r.record_count - 1;
    let len = r.durable_len;
    let parsed = match req.first() {
        Some(1) if req.len() >= 5 => {
            let n = u32_at(req, 1) as usize;
            if n >= 1 && n <= 1024 && req.len() == 5 + n {
                Some((1u8, req[5..].to_vec(), 0u32))
            } else {
                None
            }
        }
        Some(&t) if (t == 2 || t == 3) && req.len() == 5 => Some((t, Vec::new(), u32_at(req, 1))),
        _ => None,
    };
    let Some((tag, id, n)) = parsed else { return (2, 9, 0, 0, 0) };
    match tag {
        1 => {
            if let Some((s, o)) = r.run.claims.get(&id) {
                return (2, 1, 0, *s, *o);
            }
            match r.run.phase() {
                Phase::Parked(_, p, _) if p == id => (1, 0, 0, r.record_count, len),
                Phase::Parked(..) => (2, 3, 0, head, len),
                _ => (2, 2, 0, head, len),
            }
        }
        2 => {
            if n > head {
                return (2, 5, 0, head, len);
            }
            let starts = record_starts(log);
            let (start, end) = (starts[n as usize], starts[n as usize + 1]);
            let kind = log[start + 9];
            if kind == 1 || kind == 2 {
                (1, 0, 0, n + 1, end as u32)
            } else {
                (2, 4, 0, n, start as u32)
            }
        }
        _ => {
            if n == head {
                (1, 0, 0, r.record_count, len)
            } else if n > head {
                (2, 5, 0, head, len)
            } else {
                (2, 6, 0, head, len)
            }
        }
    }
}

/// spec_admission_encoding.
pub fn admission_encoding(log: &[u8], req: &[u8]) -> Vec<u8> {
    let (v, reason, detail, seq, off) = admit(log, req);
    let mut out = vec![v, reason, detail];
    put_u32(&mut out, seq);
    put_u32(&mut out, off);
    out
}

pub fn resume_request(id: &[u8]) -> Vec<u8> {
    let mut r = vec![1u8];
    put_bytes(&mut r, id);
    r
}

pub fn seq_request(tag: u8, n: u32) -> Vec<u8> {
    let mut r = vec![tag];
    put_u32(&mut r, n);
    r
}

