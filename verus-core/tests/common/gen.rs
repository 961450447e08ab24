//! Seeded generators. Every history and mutation is a function of a u64 seed, so a failing
//! case reproduces from the seed proptest prints.

use super::Rec;

/// SplitMix64: small, deterministic, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability num/den.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
    pub fn bytes(&mut self, max_len: u64) -> Vec<u8> {
        let n = self.below(max_len + 1);
        (0..n).map(|_| self.next() as u8).collect()
    }
    /// A name: 1..=max_len bytes, sometimes printable, sometimes arbitrary.
    pub fn name(&mut self, max_len: u64) -> Vec<u8> {
        let n = 1 + self.below(max_len);
        if self.chance(1, 2) {
            (0..n).map(|_| b'a' + (self.below(26) as u8)).collect()
        } else {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }
}

/// A valid history and what the generator knows about it.
pub struct History {
    pub records: Vec<Rec>,
    pub node_table: Vec<(Vec<u8>, u8)>,
    /// The format of each record (1 or 2): format-1 records, then format-2 ones.
    pub versions: Vec<u8>,
}

impl History {
    /// The log and the start offset of each record (plus the total length).
    pub fn encode(&self) -> (Vec<u8>, Vec<usize>) {
        super::encode_log_versions(&self.records, &self.versions)
    }
}

/// Generates a valid run: a random workflow (1..6 nodes of random kinds, random routing) driven
/// as the sequencer would, with forks after checkpoints and an occasional failure. Every prefix
/// of the result is a log the shell could leave behind after a crash.
pub fn history(seed: u64, max_records: usize) -> History {
    let mut rng = Rng::new(seed);
    let node_count = 1 + rng.below(6) as usize;
    let mut nodes: Vec<(Vec<u8>, u8)> = Vec::new();
    while nodes.len() < node_count {
        let name = rng.name(6);
        if nodes.iter().all(|(n, _)| *n != name) {
            nodes.push((name, 1 + rng.below(3) as u8));
        }
    }
    let mut run_id = rng.name(8);
    let start = nodes[rng.below(node_count as u64) as usize].0.clone();
    let mut records = vec![Rec::RunStarted {
        run_id: run_id.clone(),
        workflow: rng.name(8),
        version: rng.bytes(4),
        fingerprint: rng.bytes(32),
        definition: rng.bytes(16),
        nodes: nodes.clone(),
        start_node: start.clone(),
        state: rng.bytes(12),
    }];
    let mut at = Some(start);
    let mut interrupt_counter = 0u32;
    let mut effect_counter = 0u32;
    let mut ended = false;
    while records.len() < max_records {
        let last_is_checkpoint = matches!(records.last(), Some(Rec::RunStarted { .. } | Rec::NodeCompleted { .. }));
        if last_is_checkpoint && rng.chance(1, 8) {
            let new_id = rng.name(8);
            records.push(Rec::Forked {
                source_run_id: run_id.clone(),
                source_seq: (records.len() - 1) as u32,
                run_id: new_id.clone(),
                intent: rng.bytes(8),
            });
            run_id = new_id;
            continue;
        }
        if rng.chance(1, 40) {
            let node = if rng.chance(1, 2) { at.clone().unwrap_or_default() } else { Vec::new() };
            records.push(Rec::RunFailed { node, code: rng.bytes(6), message: rng.bytes(20) });
            break;
        }
        let Some(node) = at.clone() else {
            records.push(Rec::RunCompleted);
            ended = true;
            break;
        };
        let kind = nodes.iter().find(|(n, _)| *n == node).map(|(_, k)| *k).unwrap();
        match kind {
            2 => {
                // Keys are sometimes reused across visits: the core must not care.
                let key = if rng.chance(1, 4) { b"k".to_vec() } else { effect_counter += 1; format!("k{effect_counter}").into_bytes() };
                records.push(Rec::EffectIntent { node: node.clone(), key: key.clone() });
                records.push(Rec::EffectDone { node: node.clone(), key, result: rng.bytes(10) });
            }
            3 => {
                interrupt_counter += 1;
                let id = if rng.chance(1, 2) {
                    format!("i{interrupt_counter}").into_bytes()
                } else {
                    let mut id = rng.name(5);
                    id.extend_from_slice(format!("#{interrupt_counter}").as_bytes());
                    id
                };
                records.push(Rec::InterruptParked { node: node.clone(), interrupt_id: id.clone() });
                records.push(Rec::ResumeClaimed { interrupt_id: id, value: rng.bytes(10) });
            }
            _ => {}
        }
        let next = if rng.chance(1, 6) { Vec::new() } else { nodes[rng.below(node_count as u64) as usize].0.clone() };
        records.push(Rec::NodeCompleted {
            node: node.clone(),
            next: next.clone(),
            state_form: rng.below(2) as u8,
            state: rng.bytes(16),
        });
        at = if next.is_empty() { None } else { Some(next) };
    }
    let _ = ended;
    records.truncate(max_records.max(1));
    let versions = vec![1; records.len()];
    History { records, node_table: nodes, versions }
}

/// A valid run as a format-2 shell writes it, possibly continuing a format-1 log: records before
/// `switch_at` are format 1 (seq 0 only, all, or none of them, or a random cut), the rest format
/// 2. Effect instances in format 2 claim attempt 1 before their completion, sometimes give an
/// attempt up (EFFECT_RELEASED) or are taken over (a further EFFECT_ATTEMPT) before it; an
/// instance whose intent is format 1 completes directly while the log is still format 1.
pub fn history_v2(seed: u64, max_records: usize) -> History {
    let mut rng = Rng::new(seed ^ 0xF0F0_5EED);
    let switch_at = match rng.below(4) {
        0 => 0,
        1 => 1,
        _ => 1 + rng.below(max_records as u64 + 1) as usize,
    };
    let node_count = 1 + rng.below(6) as usize;
    let mut nodes: Vec<(Vec<u8>, u8)> = Vec::new();
    while nodes.len() < node_count {
        let name = rng.name(6);
        if nodes.iter().all(|(n, _)| *n != name) {
            // Effect nodes twice as likely: the attempts are what this generator is for.
            nodes.push((name, [1u8, 2, 2, 3][rng.below(4) as usize]));
        }
    }
    let mut run_id = rng.name(8);
    let start = nodes[rng.below(node_count as u64) as usize].0.clone();
    let mut records = vec![Rec::RunStarted {
        run_id: run_id.clone(),
        workflow: rng.name(8),
        version: rng.bytes(4),
        fingerprint: rng.bytes(32),
        definition: rng.bytes(16),
        nodes: nodes.clone(),
        start_node: start.clone(),
        state: rng.bytes(12),
    }];
    let mut at = Some(start);
    let mut counter = 0u32;
    while records.len() < max_records {
        let v2 = records.len() >= switch_at;
        let last_is_checkpoint = matches!(records.last(), Some(Rec::RunStarted { .. } | Rec::NodeCompleted { .. }));
        if last_is_checkpoint && rng.chance(1, 10) {
            let new_id = rng.name(8);
            records.push(Rec::Forked { source_run_id: run_id.clone(), source_seq: (records.len() - 1) as u32, run_id: new_id.clone(), intent: rng.bytes(8) });
            run_id = new_id;
            continue;
        }
        if rng.chance(1, 50) {
            let node = if rng.chance(1, 2) { at.clone().unwrap_or_default() } else { Vec::new() };
            records.push(Rec::RunFailed { node, code: rng.bytes(6), message: rng.bytes(20) });
            break;
        }
        let Some(node) = at.clone() else {
            records.push(Rec::RunCompleted);
            break;
        };
        let kind = nodes.iter().find(|(n, _)| *n == node).map(|(_, k)| *k).unwrap();
        match kind {
            2 => {
                counter += 1;
                let key = if rng.chance(1, 4) { b"k".to_vec() } else { format!("r/{counter}").into_bytes() };
                records.push(Rec::EffectIntent { node: node.clone(), key: key.clone() });
                let _ = v2;
                let mut attempt = 0u32;
                loop {
                    if records.len() < switch_at {
                        // Still format 1: the completion follows the intent directly.
                        records.push(Rec::EffectDone { node: node.clone(), key: key.clone(), result: rng.bytes(10) });
                        break;
                    }
                    if attempt == 0 || (attempt < 5 && rng.chance(1, 3)) {
                        if attempt > 0 && rng.chance(1, 2) {
                            let reason = rng.bytes(12);
                            records.push(Rec::EffectReleased { node: node.clone(), key: key.clone(), attempt, reason });
                        }
                        attempt += 1;
                        let lease = rng.bytes(24);
                        records.push(Rec::EffectAttempt { node: node.clone(), key: key.clone(), attempt, lease });
                        continue;
                    }
                    records.push(Rec::EffectDone { node: node.clone(), key: key.clone(), result: rng.bytes(10) });
                    break;
                }
            }
            3 => {
                counter += 1;
                let id = format!("i{counter}").into_bytes();
                records.push(Rec::InterruptParked { node: node.clone(), interrupt_id: id.clone() });
                records.push(Rec::ResumeClaimed { interrupt_id: id, value: rng.bytes(10) });
            }
            _ => {}
        }
        let next = if rng.chance(1, 6) { Vec::new() } else { nodes[rng.below(node_count as u64) as usize].0.clone() };
        records.push(Rec::NodeCompleted { node: node.clone(), next: next.clone(), state_form: rng.below(2) as u8, state: rng.bytes(16) });
        at = if next.is_empty() { None } else { Some(next) };
    }
    records.truncate(max_records.max(1));
    let versions = (0..records.len()).map(|i| if i >= switch_at { 2 } else { 1 }).collect();
    History { records, node_table: nodes, versions }
}

/// A record-level mutation of a framed history that keeps framing valid (the log is encoded
/// again, links included), so damage reaches the ordering rules: the format-1 mutations of
/// `mutate_records`, and changes to attempts, releases and formats.
pub fn mutate_framed(records: &[Rec], versions: &[u8], rng: &mut Rng) -> (Vec<Rec>, Vec<u8>) {
    let mut out = records.to_vec();
    let mut vs = versions.to_vec();
    if out.is_empty() {
        return (out, vs);
    }
    let i = rng.below(out.len() as u64) as usize;
    match rng.below(6) {
        0 => {
            // An attempt or release with the wrong number, node or key.
            out[i] = match out[i].clone() {
                Rec::EffectAttempt { node, key, attempt, lease } => match rng.below(3) {
                    0 => Rec::EffectAttempt { node, key, attempt: attempt.wrapping_add(1), lease },
                    1 => Rec::EffectAttempt { node, key, attempt: attempt.wrapping_sub(1), lease },
                    _ => Rec::EffectAttempt { node, key: rng.name(3), attempt, lease },
                },
                Rec::EffectReleased { node, key, attempt, reason } => match rng.below(3) {
                    0 => Rec::EffectReleased { node, key, attempt: attempt.wrapping_add(1), reason },
                    1 => Rec::EffectReleased { node: rng.name(3), key, attempt, reason },
                    _ => Rec::EffectReleased { node, key: rng.name(3), attempt, reason },
                },
                Rec::EffectIntent { node, key } => Rec::EffectAttempt { node, key, attempt: 1, lease: vec![] },
                Rec::EffectDone { node, key, .. } => Rec::EffectReleased { node, key, attempt: 1, reason: vec![] },
                r => r,
            };
        }
        1 => {
            // Drop every attempt before a completion (a v2 EFFECT_DONE without its attempt).
            let keep: Vec<bool> = out.iter().map(|r| !matches!(r, Rec::EffectAttempt { .. } | Rec::EffectReleased { .. }) || rng.chance(1, 2)).collect();
            let mut k = keep.iter();
            out.retain(|_| *k.next().unwrap());
            let mut k = keep.iter();
            vs.retain(|_| *k.next().unwrap());
        }
        2 => {
            // Change one record's format (a format-1 record after a format-2 one; kinds 10/11
            // in format 1; a format-1 completion after an attempt).
            vs[i] = if vs[i] == 1 { 2 } else { 1 };
        }
        3 => {
            // Everything format 1, or format 2 from a random point on.
            let from = rng.below(out.len() as u64 + 1) as usize;
            let all_v1 = rng.chance(1, 2);
            for (j, v) in vs.iter_mut().enumerate() {
                *v = if !all_v1 && j >= from { 2 } else { 1 };
            }
        }
        4 => {
            // A second release, or an attempt after the completion.
            let r = out[i].clone();
            if matches!(r, Rec::EffectReleased { .. } | Rec::EffectAttempt { .. } | Rec::EffectDone { .. }) {
                let j = (i + 1).min(out.len());
                out.insert(j, r);
                vs.insert(j, vs[i]);
            }
        }
        _ => {
            let mutated = mutate_records(&out, rng);
            // mutate_records may change the length by one; keep the format of each position.
            let last = *vs.last().unwrap();
            vs.resize(mutated.len(), last);
            out = mutated;
        }
    }
    (out, vs)
}

/// A record-level mutation that keeps framing valid (so the transition rules are exercised):
/// drop, duplicate, swap, or replace a record with a neighbour's kind of content.
pub fn mutate_records(records: &[Rec], rng: &mut Rng) -> Vec<Rec> {
    let mut out = records.to_vec();
    if out.is_empty() {
        return out;
    }
    let i = rng.below(out.len() as u64) as usize;
    match rng.below(7) {
        0 => {
            out.remove(i);
        }
        1 => {
            let r = out[i].clone();
            out.insert(i, r);
        }
        2 => {
            let j = rng.below(out.len() as u64) as usize;
            out.swap(i, j);
        }
        3 => {
            // Change a name inside the record to an unknown or different one.
            let other = rng.name(4);
            out[i] = match out[i].clone() {
                Rec::NodeCompleted { next, state_form, state, .. } if rng.chance(1, 2) => {
                    Rec::NodeCompleted { node: other, next, state_form, state }
                }
                Rec::NodeCompleted { node, state_form, state, .. } => Rec::NodeCompleted { node, next: other, state_form, state },
                Rec::EffectIntent { node, .. } => Rec::EffectIntent { node, key: other },
                Rec::EffectDone { node, result, .. } => Rec::EffectDone { node, key: other, result },
                Rec::InterruptParked { node, .. } => Rec::InterruptParked { node, interrupt_id: other },
                Rec::ResumeClaimed { value, .. } => Rec::ResumeClaimed { interrupt_id: other, value },
                Rec::Forked { source_run_id, run_id, intent, source_seq } => {
                    Rec::Forked { source_run_id, source_seq: source_seq.wrapping_add(1), run_id, intent }
                }
                r => r,
            };
        }
        4 => {
            // A second park of an existing id, or a table with a duplicate / bad kind.
            out[i] = match out[i].clone() {
                Rec::RunStarted { run_id, workflow, version, fingerprint, definition, mut nodes, start_node, state } => {
                    match rng.below(3) {
                        0 => nodes.push(nodes[0].clone()),
                        1 => nodes[0].1 = [0u8, 4, 255][rng.below(3) as usize],
                        _ => nodes.clear(),
                    }
                    Rec::RunStarted { run_id, workflow, version, fingerprint, definition, nodes, start_node, state }
                }
                r => r,
            };
            let parked: Vec<Vec<u8>> = out
                .iter()
                .filter_map(|r| match r {
                    Rec::InterruptParked { interrupt_id, .. } => Some(interrupt_id.clone()),
                    _ => None,
                })
                .collect();
            if let Some(id) = parked.first() {
                for r in out.iter_mut().rev() {
                    if let Rec::InterruptParked { interrupt_id, .. } = r {
                        *interrupt_id = id.clone();
                        break;
                    }
                }
            }
        }
        5 => {
            out.push(Rec::RunCompleted);
        }
        _ => {
            let j = rng.below(out.len() as u64) as usize;
            out[i] = out[j].clone();
        }
    }
    out
}

/// A byte-level mutation of an encoded log: flip, overwrite, insert, delete, truncate.
pub fn mutate_bytes(log: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = log.to_vec();
    let rounds = 1 + rng.below(3);
    for _ in 0..rounds {
        if out.is_empty() {
            out.push(rng.next() as u8);
            continue;
        }
        let i = rng.below(out.len() as u64) as usize;
        match rng.below(5) {
            0 => out[i] ^= 1 << rng.below(8),
            1 => out[i] = rng.next() as u8,
            2 => out.insert(i, rng.next() as u8),
            3 => {
                out.remove(i);
            }
            _ => out.truncate(i),
        }
    }
    out
}
