//! Reserved interrupt ids (`name@seq`, docs/core-api.md "Transitions"): an id that reads
//! `name@seq` (non-empty name, the last `@`, the seq in canonical decimal, a u32) may be parked
//! only by node `name` at seq `seq`; any other id may be parked once. Reserved ids are unique by
//! their seq, so the fold's interrupt table (and the summary) keeps only the other ids, and the
//! claim of an earlier reserved id is found in the log (record `seq + 1`), or, from a summary,
//! needs the log, unless it is the last claim: the fold and the summary keep the latest
//! RESUME_CLAIMED's id and position (`last_claim`, whatever the id's form), so a second resume
//! of the interrupt claimed last is refused from a summary alone.
//!
//! The logs here mix canonical ids (`node@parkSeq`, the majority, as the shell writes them),
//! ids that only look reserved (no digits, a leading zero, an empty name, over u32, a trailing
//! `@`, ...), node names that themselves hold `@`, and ids that break the rule (right node wrong
//! seq, wrong node right seq, seq 0, u32::MAX, a repeated non-reserved id). Each park's expected
//! verdict is known by construction (`reserved` below, written apart from the core and the
//! model), and the core is compared with that, with the model, with itself fed in pieces, and
//! with itself judging from a summary.

mod common;

use std::collections::BTreeSet;

use common::gen::{history, history_v2, mutate_bytes, mutate_framed, mutate_records, Rng};
use common::model::{self, resume_request, seq_request};
use common::{encode_log_versions, hex, model_v1, project_to_api_v1, Cursor, Rec};
use proptest::prelude::*;
use remit_verus_core::recovery::reserved_interrupt_id;
use remit_verus_core::*;

fn cfg(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

// ------------------------------------------------------------------ the rule, independently

/// `Some((name, seq))` when `id` is reserved. Stated differently from the core and the model: the
/// part after the last `@` must be exactly how a u32 prints in decimal.
fn reserved(id: &[u8]) -> Option<(&[u8], u32)> {
    let at = id.iter().rposition(|&b| b == b'@')?;
    let (name, digits) = (&id[..at], &id[at + 1..]);
    let seq: u32 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    (!name.is_empty() && seq.to_string().as_bytes() == digits).then_some((name, seq))
}

/// The id the shell writes for the park of `node` at `seq`.
fn canonical(node: &[u8], seq: u64) -> Vec<u8> {
    [node, b"@", seq.to_string().as_bytes()].concat()
}

fn cat(node: &[u8], tail: &str) -> Vec<u8> {
    [node, tail.as_bytes()].concat()
}

/// What a park's id is, judged when it is parked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Reserved and names this park: accepted.
    Canonical,
    /// Not reserved, first park of it: accepted.
    Free,
    /// Reserved, naming another node or seq: DUPLICATE_INTERRUPT.
    Violating,
    /// Not reserved, parked before: DUPLICATE_INTERRUPT.
    Repeat,
}

impl Kind {
    fn accepted(self) -> bool {
        matches!(self, Kind::Canonical | Kind::Free)
    }
}

// ------------------------------------------------------------------ generators

/// Node names: some hold `@` (and look like reserved ids themselves), some are random.
const POOL: &[&[u8]] = &[b"i", b"a@1", b"a", b"@", b"i@", b"x@y", b"n@05", b"w@4294967296", b"q@0", b"wait", b"@@"];

/// Chooses the interrupt ids of one log.
struct Ids {
    /// Non-reserved ids parked so far.
    free: BTreeSet<Vec<u8>>,
    /// Percent of parks given a rule-breaking id (0: a log that recovers whole).
    bad_rate: u64,
}

impl Ids {
    fn new(rng: &mut Rng) -> Self {
        Ids { free: BTreeSet::new(), bad_rate: if rng.chance(1, 2) { 0 } else { 12 } }
    }

    /// An id for the park of `node` at `seq` and its kind (from `reserved`, not from the form
    /// that was aimed at).
    fn pick(&mut self, rng: &mut Rng, node: &[u8], seq: u32, nodes: &[(Vec<u8>, u8)]) -> (Vec<u8>, Kind) {
        let s = u64::from(seq);
        let roll = rng.below(100);
        let id = if roll < self.bad_rate {
            // Rule-breaking: a reserved id naming another park, or a repeated non-reserved id.
            match rng.below(12) {
                0 => canonical(node, s + 1),
                1 => canonical(node, s - 1),
                2 => canonical(node, 0),
                3 => canonical(node, u64::from(u32::MAX)),
                4 => {
                    let others: Vec<&Vec<u8>> = nodes.iter().map(|(n, _)| n).filter(|n| n.as_slice() != node).collect();
                    match others.is_empty() {
                        true => canonical(&cat(node, "x"), s),
                        false => canonical(others[rng.below(others.len() as u64) as usize], s),
                    }
                }
                5 => canonical(if node.len() > 1 { &node[..node.len() - 1] } else { b"zz" }, s),
                6 => cat(node, &format!("@1@{s}")),
                7 => cat(node, &format!("@{s}0")),
                _ => match self.free.iter().nth(rng.below(self.free.len().max(1) as u64) as usize) {
                    Some(id) => id.clone(),
                    None => canonical(node, s + 2),
                },
            }
        } else if roll < self.bad_rate + 24 {
            // Looks reserved, is not (or plainly is not).
            match rng.below(14) {
                // Near misses of this park's own id, and of another park's (which an id read
                // as reserved, wrongly, would then name).
                10 => cat(node, &format!("@0{}", s + 1)),
                11 => format!("@{}", s + 1).into_bytes(),
                12 => cat(node, &format!("@{}", s + 1 + (1u64 << 32))),
                13 => cat(node, &format!("@{}@", s + 1)),
                0 => format!("p{s}").into_bytes(),
                1 => cat(node, &format!("@x{s}")),
                2 => cat(node, &format!("@0{s}")),
                3 => format!("@{s}").into_bytes(),
                4 => cat(node, &format!("@{}", s + (1u64 << 32))),
                5 => cat(node, &format!("@{s}@")),
                6 => cat(node, &format!("@+{s}")),
                7 => cat(node, &format!("@1{s:010}")),
                8 => cat(node, &format!("@{s} ")),
                _ => cat(node, "@"),
            }
        } else {
            canonical(node, s)
        };
        let kind = match reserved(&id) {
            Some((name, at)) if name == node && at == seq => Kind::Canonical,
            Some(_) => Kind::Violating,
            None if self.free.contains(&id) => Kind::Repeat,
            None => {
                self.free.insert(id.clone());
                Kind::Free
            }
        };
        (id, kind)
    }
}

/// A generated log: its records, each record's format, and the kind of each park (by seq).
struct Log {
    records: Vec<Rec>,
    versions: Vec<u8>,
    parks: Vec<(usize, Kind)>,
}

impl Log {
    fn encode(&self) -> (Vec<u8>, Vec<usize>) {
        encode_log_versions(&self.records, &self.versions)
    }

    /// The seq of the first park the rule refuses.
    fn first_refused_park(&self) -> Option<usize> {
        self.parks.iter().find(|(_, k)| !k.accepted()).map(|(s, _)| *s)
    }
}

fn node_table(rng: &mut Rng) -> Vec<(Vec<u8>, u8)> {
    let count = 1 + rng.below(6) as usize;
    let mut nodes: Vec<(Vec<u8>, u8)> = Vec::new();
    while nodes.len() < count {
        let name = if rng.chance(2, 3) { POOL[rng.below(POOL.len() as u64) as usize].to_vec() } else { rng.name(6) };
        if nodes.iter().all(|(n, _)| *n != name) {
            nodes.push((name, [1u8, 2, 3, 3, 3][rng.below(5) as usize]));
        }
    }
    if !nodes.iter().any(|(_, k)| *k == 3) {
        nodes[0].1 = 3;
    }
    nodes
}

/// A run that parks often: interrupt nodes three times as likely as the others, node names from
/// `POOL`, format 1, format 2, or format 1 then 2. Valid but for the ids the rule refuses.
fn interrupt_run(seed: u64, max_records: usize) -> Log {
    let mut rng = Rng::new(seed ^ 0x1D5_A7A7);
    let nodes = node_table(&mut rng);
    let switch_at = match rng.below(3) {
        0 => 0,
        1 => usize::MAX,
        _ => 1 + rng.below(max_records as u64) as usize,
    };
    let mut ids = Ids::new(&mut rng);
    let mut run_id = rng.name(6);
    let start = nodes[rng.below(nodes.len() as u64) as usize].0.clone();
    let mut records = vec![Rec::RunStarted {
        run_id: run_id.clone(),
        workflow: b"wf".to_vec(),
        version: rng.bytes(3),
        fingerprint: rng.bytes(8),
        definition: rng.bytes(8),
        nodes: nodes.clone(),
        start_node: start.clone(),
        state: rng.bytes(6),
    }];
    let mut parks = Vec::new();
    let mut at = Some(start);
    'run: while records.len() < max_records {
        let last_is_checkpoint = matches!(records.last(), Some(Rec::RunStarted { .. } | Rec::NodeCompleted { .. }));
        if last_is_checkpoint && rng.chance(1, 12) {
            let new_id = rng.name(6);
            records.push(Rec::Forked { source_run_id: run_id.clone(), source_seq: (records.len() - 1) as u32, run_id: new_id.clone(), intent: rng.bytes(4) });
            run_id = new_id;
            continue;
        }
        if rng.chance(1, 80) {
            records.push(Rec::RunFailed { node: at.clone().unwrap_or_default(), code: b"E".to_vec(), message: rng.bytes(6) });
            break;
        }
        let Some(node) = at.clone() else {
            records.push(Rec::RunCompleted);
            break;
        };
        match nodes.iter().find(|(n, _)| *n == node).map(|(_, k)| *k).unwrap() {
            2 => {
                let key = format!("k{}", records.len()).into_bytes();
                records.push(Rec::EffectIntent { node: node.clone(), key: key.clone() });
                if records.len() >= switch_at {
                    records.push(Rec::EffectAttempt { node: node.clone(), key: key.clone(), attempt: 1, lease: vec![] });
                }
                records.push(Rec::EffectDone { node: node.clone(), key, result: rng.bytes(4) });
            }
            3 => {
                let seq = records.len() as u32;
                let (id, kind) = ids.pick(&mut rng, &node, seq, &nodes);
                records.push(Rec::InterruptParked { node: node.clone(), interrupt_id: id.clone() });
                parks.push((seq as usize, kind));
                if rng.chance(1, 15) {
                    // Left parked (the log ends here), or failed while parked.
                    if rng.chance(1, 2) {
                        records.push(Rec::RunFailed { node: node.clone(), code: b"E".to_vec(), message: vec![] });
                    }
                    break 'run;
                }
                records.push(Rec::ResumeClaimed { interrupt_id: id, value: rng.bytes(4) });
            }
            _ => {}
        }
        let next = if rng.chance(1, 10) { Vec::new() } else { nodes[rng.below(nodes.len() as u64) as usize].0.clone() };
        records.push(Rec::NodeCompleted { node: node.clone(), next: next.clone(), state_form: rng.below(2) as u8, state: rng.bytes(6) });
        at = if next.is_empty() { None } else { Some(next) };
    }
    records.truncate(max_records);
    parks.retain(|(s, _)| *s < records.len());
    let versions = (0..records.len()).map(|i| if i >= switch_at { 2 } else { 1 }).collect();
    Log { records, versions, parks }
}

/// A history of the shared generators (common::gen) with each park's id chosen again as above,
/// and its claim (the next record) renamed with it.
fn renamed(records: Vec<Rec>, versions: Vec<u8>, rng: &mut Rng) -> Log {
    let nodes = match &records[0] {
        Rec::RunStarted { nodes, .. } => nodes.clone(),
        _ => unreachable!(),
    };
    let mut ids = Ids::new(rng);
    let mut records = records;
    let mut parks = Vec::new();
    for i in 0..records.len() {
        let Rec::InterruptParked { node, interrupt_id } = records[i].clone() else { continue };
        let (id, kind) = ids.pick(rng, &node, i as u32, &nodes);
        records[i] = Rec::InterruptParked { node, interrupt_id: id.clone() };
        if let Some(Rec::ResumeClaimed { interrupt_id: claimed, .. }) = records.get_mut(i + 1) {
            if *claimed == interrupt_id {
                *claimed = id;
            }
        }
        parks.push((i, kind));
    }
    Log { records, versions, parks }
}

/// One of the generators, by seed.
fn any_log(seed: u64, max_records: usize) -> Log {
    let mut rng = Rng::new(seed.wrapping_mul(31) ^ 0xA7);
    match seed % 4 {
        0 | 1 => interrupt_run(seed, max_records),
        2 => {
            let h = history(seed, max_records);
            renamed(h.records, h.versions, &mut rng)
        }
        _ => {
            let h = history_v2(seed, max_records);
            renamed(h.records, h.versions, &mut rng)
        }
    }
}

// ------------------------------------------------------------------ helpers

fn assert_matches_model(log: &[u8]) {
    assert_eq!(hex(&recover(log)), hex(&model::recovery_encoding(log)), "recover differs from the model for log {}", hex(log));
}

/// The format-1 model (frozen before format 2, reserved rule added) on a format-1 log.
fn assert_matches_model_v1(log: &[u8]) {
    let old = model_v1::recovery_encoding(log);
    assert_eq!(hex(&project_to_api_v1(&recover(log))), hex(&old), "format-1 log {}", hex(log));
}

/// (code, seq, offset, kind) of an error encoding; panics if it recovered.
fn error_of(enc: &[u8]) -> (u8, u32, u32, u8) {
    assert_eq!(enc[0], 0, "expected an error encoding");
    (enc[1], u32::from_le_bytes(enc[2..6].try_into().unwrap()), u32::from_le_bytes(enc[6..10].try_into().unwrap()), enc[10])
}

/// (recovery encoding, summary) of a fed encoding; panics if the summary was refused.
fn split_fed(fed: &[u8]) -> (Vec<u8>, Vec<u8>) {
    assert_eq!(fed.first(), Some(&1), "feed refused a summary a core wrote");
    let len = u32::from_le_bytes([fed[1], fed[2], fed[3], fed[4]]) as usize;
    (fed[5..5 + len].to_vec(), fed[5 + len..].to_vec())
}

fn durable_len(recovery: &[u8]) -> Option<usize> {
    (recovery.first() == Some(&1)).then(|| u32::from_le_bytes([recovery[6], recovery[7], recovery[8], recovery[9]]) as usize)
}

fn whole_summary(log: &[u8]) -> Vec<u8> {
    split_fed(&feed(&[], log)).1
}

/// Feeds `log` cut at `cuts` (ascending), each time from the summary's durable length; returns
/// each intermediate (cut, recovery), and the last summary.
fn feed_in_pieces(log: &[u8], cuts: &[usize]) -> (Vec<(usize, Vec<u8>)>, Vec<u8>) {
    let mut summary: Vec<u8> = Vec::new();
    let mut from = 0usize;
    let mut seen = Vec::new();
    for &cut in cuts.iter().chain(std::iter::once(&log.len())) {
        let (recovery, next) = split_fed(&feed(&summary, &log[from..cut.max(from)]));
        if let Some(d) = durable_len(&recovery) {
            from = d;
        }
        seen.push((cut, recovery));
        summary = next;
    }
    (seen, summary)
}

/// The split property at `cuts`: every intermediate recovery is its prefix's, the last is the
/// whole log's, and the summary is byte for byte the whole log's.
fn check_split(log: &[u8], cuts: &[usize]) {
    let (seen, summary) = feed_in_pieces(log, cuts);
    for (cut, recovery) in &seen {
        assert_eq!(hex(recovery), hex(&recover(&log[..*cut])), "prefix {cut} fed at cuts {cuts:?} of {}", hex(log));
    }
    let whole = recover(log);
    if whole[0] == 1 {
        assert_eq!(hex(&summary), hex(&whole_summary(log)), "summary after cuts {cuts:?} of {}", hex(log));
    }
}

/// A summary's interrupt table: (id, claim seq and offset if claimed), in order.
type Table = Vec<(Vec<u8>, Option<(u32, u32)>)>;

/// A last claim: (id, claim seq, claim offset).
type Claim = (Vec<u8>, u32, u32);

/// What this file reads of a summary.
struct Parsed {
    /// The phase tag, and the phase's interrupt id when PARKED or CLAIMED.
    tag: u8,
    phase_id: Option<Vec<u8>>,
    table: Table,
    last_claim: Option<Claim>,
    /// Where the last-claim field (its flag byte first) starts and ends.
    last_claim_span: (usize, usize),
}

/// A summary read by hand, every field to the last byte (docs/core-api.md, "Summary encoding").
fn parse_summary(summary: &[u8]) -> Parsed {
    let mut c = Cursor::new(summary);
    assert_eq!(c.u8(), 2, "summary version");
    for _ in 0..3 {
        c.u32();
    }
    c.u8();
    c.u8();
    let tag = c.u8();
    let mut phase_id = None;
    match tag {
        1 => {
            c.u32();
        }
        2 => {
            c.u32();
            c.bytes();
            c.u32();
        }
        3 => {
            c.u32();
            c.bytes();
            for _ in 0..4 {
                c.u32();
            }
        }
        4 | 5 => {
            c.u32();
            c.bytes();
            c.u32();
            c.u32();
        }
        6 => {
            c.u32();
            phase_id = Some(c.bytes().to_vec());
            c.u32();
        }
        7 => {
            c.u32();
            phase_id = Some(c.bytes().to_vec());
            c.u32();
            c.u32();
        }
        8..=10 => {}
        other => panic!("phase tag {other}"),
    }
    for _ in 0..4 {
        c.bytes();
    }
    for _ in 0..4 {
        c.u32();
    }
    let nodes = c.u32();
    for _ in 0..nodes {
        c.bytes();
        c.u8();
        c.u8();
        c.u32();
        c.u32();
    }
    c.u32();
    c.u32();
    let count = c.u32();
    let mut table = Vec::new();
    for _ in 0..count {
        let id = c.bytes().to_vec();
        let claim = match c.u8() {
            0 => None,
            1 => Some((c.u32(), c.u32())),
            other => panic!("claimed flag {other}"),
        };
        table.push((id, claim));
    }
    let span_start = c.pos;
    let last_claim = match c.u8() {
        0 => None,
        1 => Some((c.bytes().to_vec(), c.u32(), c.u32())),
        other => panic!("last_claim flag {other}"),
    };
    let last_claim_span = (span_start, c.pos);
    for _ in 0..c.u32() {
        c.bytes();
        c.u32();
        c.bytes();
        c.u32();
        c.bytes();
    }
    if tag == 10 {
        for _ in 0..3 {
            c.bytes();
        }
    }
    assert!(c.done(), "bytes after the last field of {}", hex(summary));
    Parsed { tag, phase_id, table, last_claim, last_claim_span }
}

/// `summary` with its last-claim field replaced by `claim` (None: flag 0).
fn with_last_claim(summary: &[u8], claim: Option<(&[u8], u32, u32)>) -> Vec<u8> {
    let (from, to) = parse_summary(summary).last_claim_span;
    let mut field = Vec::new();
    match claim {
        None => field.push(0),
        Some((id, seq, offset)) => {
            field.push(1);
            field.extend_from_slice(&(id.len() as u32).to_le_bytes());
            field.extend_from_slice(id);
            field.extend_from_slice(&seq.to_le_bytes());
            field.extend_from_slice(&offset.to_le_bytes());
        }
    }
    [&summary[..from], &field[..], &summary[to..]].concat()
}

/// What the table of the summary of `log` must list: the non-reserved ids the model parked, in
/// ascending order, with their claims.
fn expected_table(log: &[u8]) -> Table {
    let run = model::recover(log).expect("a log that recovers").run;
    run.parked.iter().filter(|id| reserved(id).is_none()).map(|id| (id.clone(), run.claims.get(id).copied())).collect()
}

/// The last claim of `records` (durable records of a log that recovers, `starts` their offsets),
/// read off the records: the latest RESUME_CLAIMED's id, seq and offset, whatever the id's form.
fn expected_last_claim(records: &[Rec], starts: &[usize]) -> Option<Claim> {
    records.iter().enumerate().rev().find_map(|(s, r)| match r {
        Rec::ResumeClaimed { interrupt_id, .. } => Some((interrupt_id.clone(), s as u32, starts[s] as u32)),
        _ => None,
    })
}

/// (verdict, reason, detail, seq, offset) of an admission encoding.
fn fields(enc: &[u8]) -> (u8, u8, u8, u32, u32) {
    assert_eq!(enc.len(), 11);
    (enc[0], enc[1], enc[2], u32::from_le_bytes(enc[3..7].try_into().unwrap()), u32::from_le_bytes(enc[7..11].try_into().unwrap()))
}

fn started(nodes: &[(&[u8], u8)], start: &[u8]) -> Rec {
    Rec::RunStarted {
        run_id: b"run-1".to_vec(),
        workflow: b"wf".to_vec(),
        version: b"1".to_vec(),
        fingerprint: vec![7; 4],
        definition: b"{}".to_vec(),
        nodes: nodes.iter().map(|(n, k)| (n.to_vec(), *k)).collect(),
        start_node: start.to_vec(),
        state: b"{}".to_vec(),
    }
}

fn completed(node: &[u8], next: &[u8]) -> Rec {
    Rec::NodeCompleted { node: node.to_vec(), next: next.to_vec(), state_form: 1, state: b"{}".to_vec() }
}

fn park(node: &[u8], id: &[u8]) -> Rec {
    Rec::InterruptParked { node: node.to_vec(), interrupt_id: id.to_vec() }
}

fn claim(id: &[u8]) -> Rec {
    Rec::ResumeClaimed { interrupt_id: id.to_vec(), value: b"v".to_vec() }
}

fn v2(records: &[Rec]) -> (Vec<u8>, Vec<usize>) {
    encode_log_versions(records, &vec![2; records.len()])
}

fn v1(records: &[Rec]) -> (Vec<u8>, Vec<usize>) {
    encode_log_versions(records, &vec![1; records.len()])
}

// ------------------------------------------------------------------ the parser

#[test]
fn reserved_ids_read_as_the_document_says() {
    type Case = (&'static [u8], Option<(&'static [u8], u32)>);
    let cases: &[Case] = &[
        (b"i@5", Some((b"i", 5))),
        (b"i@0", Some((b"i", 0))),
        (b"i@4294967295", Some((b"i", u32::MAX))),
        (b"i@4294967296", None),
        (b"i@9999999999", None),
        (b"i@10000000000", None),
        (b"i@00000000001", None),
        (b"i@05", None),
        (b"i@00", None),
        (b"@5", None),
        (b"@", None),
        (b"i@", None),
        (b"i", None),
        (b"i5", None),
        (b"i@x5", None),
        (b"i@5x", None),
        (b"i@+5", None),
        (b"i@-5", None),
        (b"i@ 5", None),
        (b"i@5 ", None),
        (b"i@\xd9\xa3", None), // an Arabic-Indic digit
        (b"a@1@7", Some((b"a@1", 7))),
        (b"a@1@", None),
        (b"a@1@07", None),
        (b"@@7", Some((b"@", 7))),
        (b"@1@7", Some((b"@1", 7))),
        (b"n@05@12", Some((b"n@05", 12))),
        (b"\xff\x00@3", Some((b"\xff\x00", 3))),
    ];
    for &(id, want) in cases {
        assert_eq!(reserved_interrupt_id(id), want, "core on {:?}", String::from_utf8_lossy(id));
        assert_eq!(reserved(id), want, "test oracle on {:?}", String::from_utf8_lossy(id));
    }
}

proptest! {
    #![proptest_config(cfg(2000))]

    /// The core's parser and this file's agree on ids made of the characters that matter.
    #[test]
    fn the_core_parser_agrees_with_the_oracle(raw in proptest::collection::vec(0u8..16, 0..14), big in any::<u32>(), name in proptest::collection::vec(any::<u8>(), 0..4)) {
        let alphabet = b"@@@0012345679a x";
        let id: Vec<u8> = raw.iter().map(|&i| alphabet[i as usize]).collect();
        prop_assert_eq!(reserved_interrupt_id(&id), reserved(&id), "{:?}", String::from_utf8_lossy(&id));
        let near_max = [name.as_slice(), b"@", big.to_string().as_bytes()].concat();
        prop_assert_eq!(reserved_interrupt_id(&near_max), reserved(&near_max));
        let over = [name.as_slice(), b"@", (u64::from(big) + (1 << 32)).to_string().as_bytes()].concat();
        prop_assert_eq!(reserved_interrupt_id(&over), None);
    }
}

// ------------------------------------------------------------------ recovery

/// Every park is accepted or refused as its id says (known by construction, not from the model),
/// at the exact record; every prefix equals the model (and the format-1 model on format-1 logs).
#[test]
fn every_park_is_accepted_or_refused_as_its_id_says() {
    let mut seen = std::collections::BTreeMap::<Kind, usize>::new();
    let mut at_signs_in_node_names = 0;
    for seed in 0..1000u64 {
        let log = any_log(seed, 40);
        let (bytes, starts) = log.encode();
        let enc = recover(&bytes);
        match log.first_refused_park() {
            None => {
                assert_eq!(enc[0], 1, "seed {seed}: refused a log whose ids are all allowed: {:?}", error_of(&enc));
                assert_eq!(recover_log(&bytes).unwrap().record_count as usize, log.records.len());
            }
            Some(s) => assert_eq!(error_of(&enc), (10, s as u32, starts[s] as u32, 5), "seed {seed}: the park at {s}"),
        }
        let last = log.first_refused_park().map_or(log.records.len(), |s| s + 1);
        for &(s, kind) in log.parks.iter().filter(|(s, _)| *s < last) {
            *seen.entry(kind).or_default() += 1;
            if let Rec::InterruptParked { node, .. } = &log.records[s] {
                at_signs_in_node_names += usize::from(node.contains(&b'@') && kind == Kind::Canonical);
            }
        }
        for &start in &starts {
            assert_matches_model(&bytes[..start]);
        }
        if log.versions.iter().all(|v| *v == 1) {
            assert_matches_model_v1(&bytes);
        }
    }
    let count = |k| seen.get(&k).copied().unwrap_or(0);
    let total: usize = seen.values().sum();
    assert!(count(Kind::Canonical) * 2 > total, "canonical ids must be the majority: {seen:?}");
    assert!(count(Kind::Free) > 400 && count(Kind::Violating) > 100 && count(Kind::Repeat) > 20, "too few cases: {seen:?}");
    eprintln!("parks judged: {seen:?}; canonical by a node named with '@': {at_signs_in_node_names}");
    assert!(at_signs_in_node_names > 50, "too few canonical parks by a node whose name holds '@': {at_signs_in_node_names}");
}

/// Hand-picked parks of one id by one node at seq 2 (the `a@1` / `a` pair: the last `@` decides).
#[test]
fn each_form_of_id_is_judged_by_its_last_at_sign() {
    let nodes: &[(&[u8], u8)] = &[(b"p", 1), (b"a@1", 3), (b"a", 3)];
    // (node, id, accepted)
    let cases: &[(&[u8], &[u8], bool)] = &[
        (b"a@1", b"a@1@2", true),
        (b"a", b"a@1@2", false),
        (b"a@1", b"a@2", false),
        (b"a", b"a@2", true),
        (b"a@1", b"a@1@02", true),
        (b"a@1", b"a@1@2@", true),
        (b"a@1", b"@2", true),
        (b"a@1", b"a@1@0", false),
        (b"a@1", b"a@1@1", false),
        (b"a@1", b"a@1@3", false),
        (b"a@1", b"a@1@4294967295", false),
        (b"a@1", b"a@1@4294967296", true),
        (b"a@1", b"a@1@+2", true),
        (b"a@1", b"a@1@2 ", true),
        (b"a@1", b"A@1@2", false),
        (b"a", b"p@2", false),
        (b"a", b"zz@2", false),
    ];
    for &(node, id, accepted) in cases {
        let records = vec![started(nodes, b"p"), completed(b"p", node), park(node, id), claim(id), completed(node, b"")];
        for (log, starts) in [v1(&records), v2(&records)] {
            let enc = recover(&log);
            assert_matches_model(&log);
            let what = format!("{} parking {}", String::from_utf8_lossy(node), String::from_utf8_lossy(id));
            if accepted {
                assert_eq!(enc[0], 1, "{what}: refused");
                let run = recover_log(&log).unwrap();
                // Only a non-reserved id is listed.
                assert_eq!(run.interrupts.len(), usize::from(reserved(id).is_none()), "{what}");
                assert_eq!((run.interrupts_parked, run.interrupts_claimed), (1, 1));
            } else {
                assert_eq!(error_of(&enc), (10, 2, starts[2] as u32, 5), "{what}");
                assert_eq!(recover_log(&log).unwrap_err().code, LogErrorCode::DuplicateInterrupt);
            }
        }
    }
}

/// Non-reserved ids that look reserved are still parked once only; a canonical id parked again
/// (later, so at another seq) is refused too.
#[test]
fn a_second_park_of_an_id_is_refused_whatever_its_form() {
    let nodes: &[(&[u8], u8)] = &[(b"i", 3)];
    for first in [&b"i@02"[..], b"@2", b"i@4294967298", b"i@x", b"i@2@", b"i@2"] {
        // Parks at 1 and 4: a non-reserved id is refused at 4 (parked before); `i@2` at 1 (it
        // names the park at 2).
        let again = [started(nodes, b"i"), park(b"i", first), claim(first), completed(b"i", b"i"), park(b"i", first)];
        let (log, starts) = v2(&again);
        let expected_first = reserved(first).is_none();
        let enc = recover(&log);
        assert_matches_model(&log);
        if expected_first {
            assert_eq!(error_of(&enc), (10, 4, starts[4] as u32, 5), "{:?} parked twice", String::from_utf8_lossy(first));
        } else {
            assert_eq!(error_of(&enc), (10, 1, starts[1] as u32, 5), "{:?} parked at 1", String::from_utf8_lossy(first));
        }
    }
    // The canonical id of the first park, parked again at 4.
    let records = [started(nodes, b"i"), park(b"i", b"i@1"), claim(b"i@1"), completed(b"i", b"i"), park(b"i", b"i@1")];
    let (log, starts) = v1(&records);
    assert_eq!(error_of(&recover(&log)), (10, 4, starts[4] as u32, 5));
    assert_matches_model(&log);
    assert_matches_model_v1(&log);
    // The same, with its own canonical id at 4: accepted.
    let records = [started(nodes, b"i"), park(b"i", b"i@1"), claim(b"i@1"), completed(b"i", b"i"), park(b"i", b"i@4")];
    let (log, _) = v1(&records);
    assert_eq!(recover(&log)[0..2], [1, 2]);
    assert_matches_model(&log);
}

proptest! {
    #![proptest_config(cfg(300))]

    /// Record and byte mutations of these logs (dropped or duplicated records shift every later
    /// canonical id off its seq; a park copied elsewhere repeats an id): equal to the model.
    #[test]
    fn recover_equals_the_model_on_mutated_logs_with_reserved_ids(seed in any::<u64>()) {
        let log = any_log(seed, 40);
        let mut rng = Rng::new(seed ^ 0xBEEF);
        let (records, versions) = if rng.chance(1, 2) {
            mutate_framed(&log.records, &log.versions, &mut rng)
        } else {
            let records = mutate_records(&log.records, &mut rng);
            let last = *log.versions.last().unwrap();
            let mut versions = log.versions.clone();
            versions.resize(records.len(), last);
            (records, versions)
        };
        let (bytes, _) = encode_log_versions(&records, &versions);
        prop_assert_eq!(hex(&recover(&bytes)), hex(&model::recovery_encoding(&bytes)));
        let damaged = mutate_bytes(&bytes, &mut rng);
        prop_assert_eq!(hex(&recover(&damaged)), hex(&model::recovery_encoding(&damaged)));
    }
}

// ------------------------------------------------------------------ incremental recovery

/// Every byte cut of short logs: prefix, whole and summary as the whole log gives them; the
/// summary's table lists exactly the non-reserved ids (never a reserved one), and its last claim
/// is the prefix's latest RESUME_CLAIMED (whatever its id's form).
#[test]
fn every_cut_of_logs_with_reserved_ids_recovers_as_the_whole() {
    let (mut tables_checked, mut reserved_last_claims) = (0, 0);
    for seed in 0..48u64 {
        let log = any_log(seed, 16);
        let (bytes, starts) = log.encode();
        for cut in 0..=bytes.len() {
            check_split(&bytes, &[cut]);
        }
        for (k, &start) in starts.iter().enumerate().skip(1) {
            let prefix = &bytes[..start];
            if recover(prefix)[0] != 1 {
                break;
            }
            let parsed = parse_summary(&whole_summary(prefix));
            assert_eq!(parsed.table, expected_table(prefix), "seed {seed}, prefix of {start} bytes");
            let last = expected_last_claim(&log.records[..k], &starts);
            assert_eq!(parsed.last_claim, last, "seed {seed}, prefix of {start} bytes");
            reserved_last_claims += usize::from(last.is_some_and(|(id, ..)| reserved(&id).is_some()));
            tables_checked += 1;
        }
    }
    assert!(tables_checked > 300 && reserved_last_claims > 100, "{tables_checked} tables, {reserved_last_claims} reserved last claims");
}

proptest! {
    #![proptest_config(cfg(200))]

    /// Any cuts (record boundaries or inside records) of longer logs, and one record at a time:
    /// all give the whole log's recovery and the same summary bytes.
    #[test]
    fn feeding_logs_with_reserved_ids_in_any_split_is_recovering_whole(seed in any::<u64>(), raw_cuts in proptest::collection::vec(any::<u16>(), 0..8), mutated in any::<bool>()) {
        let mut log = any_log(seed, 60);
        if mutated {
            // Shifted, repeated or renamed parks: refused where the whole log is refused.
            let mut rng = Rng::new(seed);
            (log.records, log.versions) = mutate_framed(&log.records, &log.versions, &mut rng);
        }
        let (bytes, starts) = log.encode();
        let mut cuts: Vec<usize> = raw_cuts.iter().map(|c| *c as usize % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        check_split(&bytes, &cuts);
        check_split(&bytes, &starts);
        if recover(&bytes)[0] == 1 {
            let Parsed { tag, phase_id, table, last_claim, .. } = parse_summary(&whole_summary(&bytes));
            prop_assert_eq!(&table, &expected_table(&bytes));
            let durable = starts.iter().position(|&s| s == durable_len(&recover(&bytes)).unwrap()).unwrap();
            prop_assert_eq!(&last_claim, &expected_last_claim(&log.records[..durable], &starts));
            // A CLAIMED phase's claim is the last claim.
            if tag == 7 {
                prop_assert_eq!(last_claim.map(|(id, ..)| id), phase_id.clone());
            }
            // The phase's id is there whatever its form; a reserved one names the park.
            if let (6 | 7, Some(id)) = (tag, &phase_id) {
                if let Some((name, _)) = reserved(id) {
                    let named = log.records.iter().any(|r| matches!(r, Rec::InterruptParked { node, interrupt_id } if node.as_slice() == name && interrupt_id == id));
                    prop_assert!(named, "phase id {:?} names no park", String::from_utf8_lossy(id));
                }
            }
        }
    }
}

/// A run of many park/claim cycles with canonical ids: the table stays empty and the summary's
/// length does not depend on the number of cycles. What it holds of the cycles is the last claim
/// (flag, length, id, seq, offset: 12 bytes and the id), whose id `wait@s` is the only thing that
/// varies, by the decimal digits of `s`: the length is the same after every cycle whose park seq
/// has as many digits (cycles 334 to 1,000, all 4), and never anything else. With non-reserved
/// ids, the control, it grows with every park.
#[test]
fn the_summary_does_not_grow_with_canonical_parks() {
    let nodes: &[(&[u8], u8)] = &[(b"wait", 3), (b"p", 1)];
    let build = |cycles: usize, canonical_ids: bool| {
        let mut records = vec![started(nodes, b"wait")];
        for _ in 0..cycles {
            let s = records.len() as u64;
            let id = if canonical_ids { canonical(b"wait", s) } else { format!("w{s}").into_bytes() };
            records.push(park(b"wait", &id));
            records.push(claim(&id));
            records.push(completed(b"wait", b"wait"));
        }
        records
    };
    for encode in [v1 as fn(&[Rec]) -> (Vec<u8>, Vec<usize>), v2] {
        let (log, starts) = encode(&build(1000, true));
        let at_cycle = |k: usize| &log[..starts[1 + 3 * k]];
        // Cycle k parks `wait@(3k - 2)` and claims it at 3k - 1.
        let last_claim_after = |k: usize| Some((canonical(b"wait", 3 * k as u64 - 2), 3 * k as u32 - 1, starts[3 * k - 1] as u32));
        let first = whole_summary(at_cycle(0));
        assert_eq!(parse_summary(&first).last_claim, None);
        // No claim yet: the flag byte alone.
        let base = first.len() + 12;
        let length_after = |k: usize| base + canonical(b"wait", 3 * k as u64 - 2).len();
        let full = length_after(1000);
        for k in [1, 3, 4, 10, 33, 34, 333, 334, 1000] {
            let summary = whole_summary(at_cycle(k));
            assert_eq!(summary.len(), length_after(k), "{k} cycles");
            assert_eq!(summary.len() == full, k >= 334, "{k} cycles");
            assert_eq!(parse_summary(&summary).last_claim, last_claim_after(k), "{k} cycles");
        }
        // Fed one cycle at a time, as the sequencer does: every summary is that length, and the
        // last is the whole log's.
        let mut summary = first;
        for k in 1..=1000 {
            let (recovery, next) = split_fed(&feed(&summary, &log[starts[1 + 3 * (k - 1)]..starts[1 + 3 * k]]));
            assert_eq!(recovery[0], 1, "cycle {k}");
            assert_eq!(next.len(), length_after(k), "summary after cycle {k}");
            if k >= 334 {
                assert_eq!(next.len(), full, "summary after cycle {k}");
            }
            summary = next;
        }
        assert_eq!(summary, whole_summary(&log));
        let parsed = parse_summary(&summary);
        assert!(parsed.table.is_empty());
        assert_eq!(parsed.last_claim, last_claim_after(1000));
        let run = recover_log(&log).unwrap();
        assert!(run.interrupts.is_empty());
        assert_eq!((run.interrupts_parked, run.interrupts_claimed), (1000, 1000));
        assert_matches_model(&log);
        // The control: non-reserved ids are listed, one entry per park.
        let (plain, plain_starts) = encode(&build(20, false));
        let sizes: Vec<usize> = (0..=20).map(|k| whole_summary(&plain[..plain_starts[1 + 3 * k]]).len()).collect();
        assert!(sizes.windows(2).all(|w| w[1] > w[0]), "control: {sizes:?}");
        assert_eq!(parse_summary(&whole_summary(&plain)).table.len(), 20);
    }
}

// ------------------------------------------------------------------ admission

/// Resume requests worth asking of `records` (a prefix of a log): every id in it, each park's
/// canonical id and its near misses, a canonical id for every seq (non-park records included),
/// ids beyond the head.
fn resume_ids(records: &[Rec]) -> Vec<Vec<u8>> {
    let nodes: Vec<Vec<u8>> = match records.first() {
        Some(Rec::RunStarted { nodes, .. }) if !nodes.is_empty() => nodes.iter().map(|(n, _)| n.clone()).collect(),
        _ => vec![b"i".to_vec()],
    };
    let count = records.len() as u64;
    let mut ids: BTreeSet<Vec<u8>> = BTreeSet::new();
    for (s, r) in records.iter().enumerate() {
        let s = s as u64;
        match r {
            Rec::InterruptParked { node, interrupt_id } => {
                ids.insert(interrupt_id.clone());
                ids.insert(canonical(node, s));
                ids.insert(canonical(node, s + 1));
                ids.insert(cat(node, &format!("@0{s}")));
                ids.insert(cat(node, &format!("@{s}@")));
                for other in &nodes {
                    ids.insert(canonical(other, s));
                }
            }
            Rec::ResumeClaimed { interrupt_id, .. } => {
                ids.insert(interrupt_id.clone());
            }
            _ => {}
        }
    }
    let first = nodes[0].clone();
    for s in 0..count + 3 {
        ids.insert(canonical(&first, s));
    }
    ids.insert(canonical(&first, u64::from(u32::MAX)));
    ids.insert(canonical(b"zz", count.saturating_sub(2)));
    ids.insert(b"never".to_vec());
    ids.retain(|id| !id.is_empty() && id.len() <= 1024);
    ids.into_iter().collect()
}

/// Coverage counts of `check_admission`.
#[derive(Default)]
struct Seen {
    /// NEEDS_LOG from the summary where the log finds the claim (ALREADY_CONSUMED at `s + 1`).
    old_claims: usize,
    needs_log: usize,
    /// Resumes of a reserved `X@s`, `s < head`, claimed last: consumed from the summary too.
    last_claims: usize,
}

/// The admission property at one log: `admit` equals the model; `admit_from(summary)` equals
/// `admit` except NEEDS_LOG, which it answers exactly for a FORK_AT at or below the head and for
/// a resume of a reserved `X@s` with `s < head` that is neither the last claim's id, nor listed
/// (a reserved id never is), nor the parked phase's id, naming `s + 1` (and then the log answers
/// ALREADY_CONSUMED at `s + 1` or UNKNOWN / NOT_PARKED). The last claim is read off `records`
/// (the prefix's records; those past the durable ones are left out), not from the core.
fn check_admission(prefix: &[u8], records: &[Rec], requests: &[Vec<u8>], seen: &mut Seen) {
    let recovery = recover(prefix);
    let summary = (recovery[0] == 1).then(|| whole_summary(prefix));
    let model_run = model::recover(prefix).ok();
    let head = model_run.as_ref().and_then(|r| r.record_count.checked_sub(1));
    let durable = model_run.as_ref().map_or(&[][..], |r| &records[..r.record_count as usize]);
    let last_claim_id = durable.iter().rev().find_map(|r| match r {
        Rec::ResumeClaimed { interrupt_id, .. } => Some(interrupt_id.as_slice()),
        _ => None,
    });
    for req in requests {
        let from_log = admit(prefix, req);
        assert_eq!(hex(&from_log), hex(&model::admission_encoding(prefix, req)), "admit vs model, request {} on {}", hex(req), hex(prefix));
        let (Some(summary), Some(head), Some(run)) = (&summary, head, &model_run) else { continue };
        let from_summary = admit_from(summary, req);
        let (verdict, reason, _, seq, offset) = fields(&from_summary);
        let log_fields = fields(&from_log);
        let resume = parse_request(req).and_then(|r| match r {
            AdmissionRequest::Resume { interrupt_id } => Some(interrupt_id),
            _ => None,
        });
        let parked_phase = matches!(run.run.phase(), model::Phase::Parked(_, ref id, _) if Some(id.as_slice()) == resume);
        let claimed_last = resume.is_some() && resume == last_claim_id;
        let expect_needs_log = match (parse_request(req), resume.and_then(reserved)) {
            (Some(AdmissionRequest::ForkAt { seq: n }), _) => n <= head,
            (Some(AdmissionRequest::Resume { .. }), Some((_, s))) => s < head && !claimed_last && !parked_phase,
            _ => false,
        };
        assert_eq!(verdict == 2 && reason == 10, expect_needs_log, "NEEDS_LOG? request {} on {}", hex(req), hex(prefix));
        if expect_needs_log {
            if let Some((_, s)) = resume.and_then(reserved) {
                seen.needs_log += 1;
                assert_eq!((seq, offset), (s + 1, 0), "NEEDS_LOG names the claim's seq");
                assert!(log_fields.0 == 2 && matches!(log_fields.1, 1..=3), "from the log: {log_fields:?}");
                if log_fields.1 == 1 {
                    assert_eq!(log_fields.3, s + 1);
                    seen.old_claims += 1;
                    assert!(matches!(&records[s as usize + 1], Rec::ResumeClaimed { interrupt_id, .. } if Some(interrupt_id.as_slice()) == resume));
                }
            }
        } else {
            assert_eq!(hex(&from_summary), hex(&from_log), "admit_from vs admit, request {} on {}", hex(req), hex(prefix));
            if claimed_last {
                // The last claim, whatever its form: consumed at its claim, from either.
                assert_eq!((verdict, reason), (2, 1), "the last claim, request {} on {}", hex(req), hex(prefix));
                seen.last_claims += usize::from(resume.and_then(reserved).is_some_and(|(_, s)| s < head));
            }
        }
    }
}

/// On every record prefix of generated logs (and mutated ones): `admit` equals the model and
/// `admit_from` equals `admit` but for the documented NEEDS_LOG.
#[test]
fn admission_with_reserved_ids_from_the_log_and_from_a_summary() {
    let (mut seen, mut accepts) = (Seen::default(), 0);
    for seed in 0..120u64 {
        let log = any_log(seed, 30);
        let (bytes, starts) = log.encode();
        for n in 0..=log.records.len() {
            let mut requests: Vec<Vec<u8>> = resume_ids(&log.records[..n]).iter().map(|id| resume_request(id)).collect();
            requests.extend([seq_request(2, n as u32), seq_request(2, 0), seq_request(3, (n as u32).wrapping_sub(1))]);
            check_admission(&bytes[..starts[n]], &log.records[..n], &requests, &mut seen);
            // With a torn tail (half the next record): the same answers; the summary leaves it out.
            if n < log.records.len() && n % 3 == 0 {
                check_admission(&bytes[..(starts[n] + starts[n + 1]) / 2], &log.records[..n], &requests, &mut seen);
            }
            if let Some(Rec::InterruptParked { interrupt_id, .. }) = log.records[..n].last() {
                accepts += usize::from(admit(&bytes[..starts[n]], &resume_request(interrupt_id))[0] == 1);
            }
        }
        // A mutated log, whole: mostly refused with a recovery error, which both answer alike.
        let mut rng = Rng::new(seed);
        let records = mutate_records(&log.records, &mut rng);
        let mut versions = log.versions.clone();
        versions.resize(records.len(), *log.versions.last().unwrap());
        let (mutated, _) = encode_log_versions(&records, &versions);
        let requests: Vec<Vec<u8>> = resume_ids(&records).iter().map(|id| resume_request(id)).collect();
        check_admission(&mutated, &records, &requests, &mut seen);
    }
    let Seen { old_claims, needs_log, last_claims } = seen;
    let counts = format!("{old_claims} old claims, {needs_log} NEEDS_LOG, {last_claims} reserved last claims, {accepts} accepts");
    eprintln!("admission: {counts}");
    assert!(old_claims > 500 && needs_log > 2000 && last_claims > 200 && accepts > 50, "too few cases: {counts}");
}

proptest! {
    #![proptest_config(cfg(100))]

    /// The same on random seeds, longer logs: the whole log, a torn tail, and a few prefixes.
    #[test]
    fn admission_with_reserved_ids_on_random_logs(seed in any::<u64>(), picks in proptest::collection::vec(any::<u16>(), 3)) {
        let log = any_log(seed, 50);
        let (bytes, starts) = log.encode();
        let n = log.records.len();
        let mut points: Vec<(usize, usize)> = picks.iter().map(|p| {
            let k = *p as usize % (n + 1);
            (k, starts[k])
        }).collect();
        points.push((n, bytes.len()));
        points.push((n - 1, bytes.len() - 3));
        for (k, end) in points {
            let mut requests: Vec<Vec<u8>> = resume_ids(&log.records[..k]).iter().map(|id| resume_request(id)).collect();
            requests.push(seq_request(2, k as u32));
            check_admission(&bytes[..end], &log.records[..k], &requests, &mut Seen::default());
        }
    }
}

/// A resume of a canonical id claimed long ago: `admit` finds the claim in the log (the record
/// after the park) and refuses ALREADY_CONSUMED with its seq and offset; `admit_from` needs the
/// log for it, naming that seq. The latest claim, still the phase, is known to both.
#[test]
fn an_old_canonical_claim_is_consumed_in_the_log_and_needs_the_log_from_a_summary() {
    let nodes: &[(&[u8], u8)] = &[(b"wait", 3), (b"p", 1)];
    let mut records = vec![started(nodes, b"wait")];
    for _ in 0..300 {
        let id = canonical(b"wait", records.len() as u64);
        records.push(park(b"wait", &id));
        records.push(claim(&id));
        records.push(completed(b"wait", b"wait"));
    }
    for (log, starts) in [v1(&records), v2(&records)] {
        let summary = whole_summary(&log);
        let len = log.len() as u32;
        let head = records.len() as u32 - 1;
        for s in [1u32, 4, 151, 895] {
            let req = resume_request(&canonical(b"wait", s.into()));
            assert_eq!(fields(&admit(&log, &req)), (2, 1, 0, s + 1, starts[s as usize + 1] as u32), "wait@{s}");
            assert_eq!(admit(&log, &req), model::admission_encoding(&log, &req));
            assert_eq!(fields(&admit_from(&summary, &req)), (2, 10, 0, s + 1, 0), "wait@{s} from the summary");
        }
        // Reserved ids that name no park: a claim (seq 2), a checkpoint (seq 3), the run's start,
        // another node: not consumed; the summary still needs the log for them.
        for id in [&b"wait@2"[..], b"wait@3", b"wait@0", b"p@1", b"zz@4"] {
            let req = resume_request(id);
            assert_eq!(fields(&admit(&log, &req)), (2, 2, 0, head, len), "{}", String::from_utf8_lossy(id));
            assert_eq!(admit(&log, &req), model::admission_encoding(&log, &req));
            let s = reserved(id).unwrap().1;
            assert_eq!(fields(&admit_from(&summary, &req)), (2, 10, 0, s + 1, 0));
        }
        // Near misses of an old canonical id are other (non-reserved, never parked) ids.
        for id in [&b"wait@01"[..], b"wait@1@", b"@1", b"wait@+1"] {
            let req = resume_request(id);
            assert_eq!(fields(&admit(&log, &req)), (2, 2, 0, head, len));
            assert_eq!(admit_from(&summary, &req), admit(&log, &req));
        }
        // Beyond the head: not parked, from either.
        for s in [head, head + 1, u32::MAX] {
            let req = resume_request(&canonical(b"wait", s.into()));
            assert_eq!(fields(&admit(&log, &req)), (2, 2, 0, head, len));
            assert_eq!(admit_from(&summary, &req), admit(&log, &req));
        }
        // Parked at the end: accepted by both; once claimed (phase CLAIMED), consumed for both.
        let p = head as usize - 2;
        let (parked, claimed) = (&log[..starts[p + 1]], &log[..starts[p + 2]]);
        let req = resume_request(&canonical(b"wait", p as u64));
        assert_eq!(fields(&admit(parked, &req)), (1, 0, 0, p as u32 + 1, starts[p + 1] as u32));
        assert_eq!(admit_from(&whole_summary(parked), &req), admit(parked, &req));
        assert_eq!(fields(&admit(claimed, &req)), (2, 1, 0, p as u32 + 1, starts[p + 1] as u32));
        assert_eq!(admit_from(&whole_summary(claimed), &req), admit(claimed, &req));
    }
}

/// The summary keeps the last claim: a second resume of the interrupt claimed last is
/// ALREADY_CONSUMED at its claim from the summary alone, however far the run went on since (here
/// 300 canonical cycles, then 20 pure steps); an older reserved id still needs the log, which
/// finds its claim. A later claim takes its place, whatever its form (a non-reserved id, then a
/// canonical one again); the non-reserved one stays consumed from the table.
#[test]
fn the_last_claim_is_answered_from_a_summary_after_the_run_moved_on() {
    let nodes: &[(&[u8], u8)] = &[(b"wait", 3), (b"p", 1)];
    let mut records = vec![started(nodes, b"wait")];
    for k in 0..300 {
        let id = canonical(b"wait", records.len() as u64);
        records.push(park(b"wait", &id));
        records.push(claim(&id));
        records.push(completed(b"wait", if k == 299 { b"p" } else { b"wait" }));
    }
    // The 300th park is wait@898, claimed at 899; the run is at `p` after 900.
    assert_eq!(records[899], claim(b"wait@898"));
    for _ in 0..20 {
        records.push(completed(b"p", b"p"));
    }
    records.push(completed(b"p", b"wait"));
    records.push(park(b"wait", b"plain")); // 922
    records.push(claim(b"plain"));
    records.push(completed(b"wait", b"p"));
    records.push(completed(b"p", b"wait"));
    records.push(park(b"wait", b"wait@926"));
    records.push(claim(b"wait@926"));
    records.push(completed(b"wait", b"p"));
    records.push(completed(b"p", b"p"));
    assert_eq!((records.len(), &records[922], &records[927]), (930, &park(b"wait", b"plain"), &claim(b"wait@926")));
    for (log, starts) in [v1(&records), v2(&records)] {
        let consumed = |claim_seq: u32| (2, 1, 0, claim_seq, starts[claim_seq as usize] as u32);
        let needs_log = |claim_seq: u32| (2, 10, 0, claim_seq, 0);
        // Fed a record at a time from the summary after 299 records, and written whole: the same.
        let mut summary = whole_summary(&log[..starts[899]]);
        for k in 900..=records.len() {
            let prefix = &log[..starts[k]];
            summary = split_fed(&feed(&summary, &log[starts[k - 1]..starts[k]])).1;
            assert_eq!(summary, whole_summary(prefix), "after {k} records");
            assert_eq!(parse_summary(&summary).last_claim, expected_last_claim(&records[..k], &starts), "after {k} records");
            // (id, answer from the summary); from the log, each is consumed at its claim.
            let cases: Vec<(&[u8], _, u32)> = match k {
                ..=923 => vec![(b"wait@898", consumed(899), 899), (b"wait@895", needs_log(896), 896), (b"wait@1", needs_log(2), 2)],
                924..=927 => vec![(b"plain", consumed(923), 923), (b"wait@898", needs_log(899), 899), (b"wait@1", needs_log(2), 2)],
                _ => vec![(b"wait@926", consumed(927), 927), (b"plain", consumed(923), 923), (b"wait@898", needs_log(899), 899)],
            };
            for (id, from_summary, claim_seq) in cases {
                let req = resume_request(id);
                let what = format!("{} after {k} records", String::from_utf8_lossy(id));
                assert_eq!(fields(&admit_from(&summary, &req)), from_summary, "{what}, from the summary");
                assert_eq!(fields(&admit(prefix, &req)), consumed(claim_seq), "{what}, from the log");
                assert_eq!(admit(prefix, &req), model::admission_encoding(prefix, &req), "{what}");
            }
        }
    }
}

// ------------------------------------------------------------------ summaries refused

/// Replaces the `hits` occurrences of `from` (with its length prefix) in `summary` by `to`.
fn replace_each(summary: &[u8], from: &[u8], to: &[u8], hits: usize) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let needle = [&(from.len() as u32).to_le_bytes()[..], from].concat();
    let at: Vec<usize> = (0..=summary.len() - needle.len()).filter(|&i| summary[i..i + needle.len()] == needle[..]).collect();
    assert_eq!(at.len(), hits, "{:?} in the summary", String::from_utf8_lossy(from));
    let mut out = summary.to_vec();
    for i in at {
        out[i + 4..i + 4 + to.len()].copy_from_slice(to);
    }
    out
}

fn refused(summary: &[u8]) -> bool {
    let fed = feed(summary, &[]);
    let verdict = fields(&admit_from(summary, &seq_request(3, 0)));
    assert_eq!(fed == [0], verdict.1 == 11, "feed and admit_from disagree on {}", hex(summary));
    fed == [0]
}

/// A summary whose interrupt table lists a reserved id is not one a core writes: refused. The
/// same bytes with a non-reserved id of the same length are accepted (so it is the id's form
/// that is refused), and fed on as the summary they are. The id is renamed in the table alone
/// (an id claimed before the last claim), or in the table and in the last claim alike (the id
/// claimed last, so that the last claim stays listed at its position).
#[test]
fn a_summary_listing_a_reserved_id_is_refused() {
    let nodes: &[(&[u8], u8)] = &[(b"wait", 3), (b"p", 1)];
    // One listed id, and two; all claimed and the run at `p`, so no phase names them.
    let one = [started(nodes, b"wait"), park(b"wait", b"qzqz"), claim(b"qzqz"), completed(b"wait", b"p")];
    let two = [
        started(nodes, b"wait"),
        park(b"wait", b"aaaa"),
        claim(b"aaaa"),
        completed(b"wait", b"wait"),
        park(b"wait", b"zzzz"),
        claim(b"zzzz"),
        completed(b"wait", b"p"),
    ];
    // (records, the listed id renamed, whether it is the last claim)
    for (records, listed, last) in [(&one[..], &b"qzqz"[..], true), (&two[..], b"zzzz", true), (&two[..], b"aaaa", false)] {
        for (log, _) in [v1(records), v2(records)] {
            let summary = whole_summary(&log);
            assert!(!refused(&summary));
            let parsed = parse_summary(&summary);
            assert!(parsed.table.iter().any(|(id, _)| id == listed));
            assert_eq!(parsed.last_claim.as_ref().map(|(id, ..)| id.as_slice()) == Some(listed), last);
            let hits = if last { 2 } else { 1 };
            let prefix = &listed[..1]; // keeps the table ascending for both logs
            for reserved_form in [[prefix, b"z@1"].concat(), [prefix, b"@12"].concat(), b"@@12".to_vec(), [prefix, b"z@0"].concat()] {
                assert!(reserved(&reserved_form).is_some());
                let crafted = replace_each(&summary, listed, &reserved_form, hits);
                assert!(refused(&crafted), "table listing {:?}", String::from_utf8_lossy(&reserved_form));
                assert_eq!(fields(&admit_from(&crafted, &resume_request(&reserved_form))).1, 11);
                if last {
                    // Renamed in the last claim only (a reserved last claim need not be listed):
                    // accepted, and consumed from it.
                    let (id, seq, offset) = parsed.last_claim.clone().unwrap();
                    assert_eq!(id, listed);
                    let elsewhere = with_last_claim(&summary, Some((&reserved_form, seq, offset)));
                    assert!(!refused(&elsewhere), "last claim {:?}", String::from_utf8_lossy(&reserved_form));
                    assert_eq!(fields(&admit_from(&elsewhere, &resume_request(&reserved_form))), (2, 1, 0, seq, offset));
                }
            }
            for plain in [[prefix, b"z@x"].concat(), [prefix, b"@01"].concat(), [prefix, b"zz@"].concat(), [prefix, b"@+1"].concat()] {
                assert!(reserved(&plain).is_none());
                let crafted = replace_each(&summary, listed, &plain, hits);
                assert!(!refused(&crafted), "table listing {:?}", String::from_utf8_lossy(&plain));
                assert_eq!(split_fed(&feed(&crafted, &[])).1, crafted, "an unchanged table is written back as read");
                // The crafted summary knows the plain id as consumed.
                assert_eq!(fields(&admit_from(&crafted, &resume_request(&plain))).1, 1);
                if let (true, Some((id, seq, offset))) = (last, &parsed.last_claim) {
                    // Renamed in the table only: the last claim's (non-reserved) id is no longer
                    // listed: refused.
                    assert!(refused(&with_last_claim(&crafted, Some((id, *seq, *offset)))), "table listing {:?} only", String::from_utf8_lossy(&plain));
                }
            }
        }
    }
}

/// The phase's reserved id must name the phase's node and its park (the claim's seq - 1): a
/// summary whose PARKED or CLAIMED phase says otherwise is refused; a non-reserved phase id must
/// be listed, as before.
#[test]
fn a_summary_whose_phase_misnames_a_reserved_id_is_refused() {
    let nodes: &[(&[u8], u8)] = &[(b"i", 3), (b"j", 3)];
    let parked_records = [started(nodes, b"i"), park(b"i", b"i@1")];
    let claimed_records = [started(nodes, b"i"), park(b"i", b"i@1"), claim(b"i@1")];
    for (log, _) in [v1(&parked_records), v2(&parked_records)] {
        let summary = whole_summary(&log);
        // version, seq, offset, chain, v2_seen, prev_kind: 15 bytes; then PARKED, node, id, seq.
        assert_eq!(summary[15], 6);
        assert_eq!(&summary[16..20], &0u32.to_le_bytes());
        assert_eq!(&summary[20..27], &[3, 0, 0, 0, b'i', b'@', b'1']);
        assert_eq!(&summary[27..31], &1u32.to_le_bytes());
        assert!(!refused(&summary));
        let with = |node: u32, id: &[u8; 3], seq: u32| {
            let mut s = summary.clone();
            s[16..20].copy_from_slice(&node.to_le_bytes());
            s[24..27].copy_from_slice(id);
            s[27..31].copy_from_slice(&seq.to_le_bytes());
            s
        };
        assert!(refused(&with(0, b"j@1", 1)), "another node's name");
        assert!(refused(&with(0, b"i@2", 1)), "another seq in the id");
        assert!(refused(&with(0, b"i@1", 2)), "another park seq");
        assert!(refused(&with(1, b"i@1", 1)), "another node");
        assert!(!refused(&with(1, b"j@1", 1)), "node j, its own id: agrees");
        assert!(!refused(&with(0, b"i@2", 2)), "park seq 2, its own id: agrees");
        assert!(refused(&with(0, b"i@x", 1)), "a non-reserved id must be listed");
        assert!(refused(&with(0, b"@01", 1)), "a non-reserved id must be listed");
    }
    for (log, _) in [v1(&claimed_records), v2(&claimed_records)] {
        let summary = whole_summary(&log);
        // CLAIMED, node, id, claim seq, claim offset.
        assert_eq!(summary[15], 7);
        assert_eq!(&summary[20..27], &[3, 0, 0, 0, b'i', b'@', b'1']);
        assert_eq!(&summary[27..31], &2u32.to_le_bytes());
        let offset = u32::from_le_bytes(summary[31..35].try_into().unwrap());
        assert_eq!(parse_summary(&summary).last_claim, Some((b"i@1".to_vec(), 2, offset)));
        assert!(!refused(&summary));
        // The phase edited, and the last claim with it (a CLAIMED phase's claim is the last
        // claim): what is refused below is refused for the id the phase names.
        let phase_only = |node: u32, id: &[u8; 3], seq: u32| {
            let mut s = summary.clone();
            s[16..20].copy_from_slice(&node.to_le_bytes());
            s[24..27].copy_from_slice(id);
            s[27..31].copy_from_slice(&seq.to_le_bytes());
            s
        };
        let with = |node: u32, id: &[u8; 3], seq: u32| with_last_claim(&phase_only(node, id, seq), Some((id, seq, offset)));
        assert!(!refused(&with(0, b"i@1", 2)), "unchanged");
        assert_eq!(with(0, b"i@1", 2), summary);
        assert!(refused(&phase_only(1, b"j@1", 2)), "agrees with its node, not with the last claim");
        assert!(refused(&phase_only(0, b"i@2", 3)), "agrees with its node, not with the last claim");
        assert!(refused(&with(0, b"i@2", 2)), "the claim's seq is not the park's");
        assert!(refused(&with(0, b"i@1", 3)), "claim seq 3 names park 2");
        assert!(refused(&with(0, b"j@1", 2)), "another node's name");
        assert!(refused(&with(0, b"i@1", 0)), "claim seq 0 names no park");
        assert!(!refused(&with(1, b"j@1", 2)), "node j, its own id: agrees");
        assert!(!refused(&with(0, b"i@2", 3)), "claim 3 of park 2: agrees");
        assert!(refused(&with(0, b"i@x", 2)), "a non-reserved id must be listed claimed");
    }
}

/// The last-claim field (docs/core-api.md, "Summary encoding", decoding rules): a flag other
/// than 0 or 1, a field cut short, a CLAIMED phase whose (id, claim seq, claim offset) is not
/// the last claim, a non-reserved last claim not listed claimed at that very position: refused.
/// Edits that keep the rules are accepted, and answered from as the summary they are.
#[test]
fn a_summary_whose_last_claim_is_damaged_is_refused() {
    let nodes: &[(&[u8], u8)] = &[(b"i", 3), (b"p", 1)];
    let plain_claimed = vec![started(nodes, b"i"), park(b"i", b"aa"), claim(b"aa"), completed(b"i", b"i"), park(b"i", b"bb"), claim(b"bb")];
    let reserved_claimed = vec![started(nodes, b"i"), park(b"i", b"i@1"), claim(b"i@1"), completed(b"i", b"i"), park(b"i", b"i@4"), claim(b"i@4")];
    let moved_on = |mut r: Vec<Rec>| {
        r.push(completed(b"i", b"p"));
        r
    };
    let (plain_at, reserved_at) = (moved_on(plain_claimed.clone()), moved_on(reserved_claimed.clone()));
    let unclaimed = [vec![started(nodes, b"i")], vec![started(nodes, b"i"), park(b"i", b"i@1")]];
    for encode in [v1 as fn(&[Rec]) -> (Vec<u8>, Vec<usize>), v2] {
        let summary_of = |records: &[Rec]| {
            let (log, starts) = encode(records);
            let summary = whole_summary(&log);
            assert!(!refused(&summary));
            assert_eq!(parse_summary(&summary).last_claim, expected_last_claim(records, &starts));
            summary
        };
        // The claims' offsets (at seq 2 and 5), which differ between the two logs (ids of other
        // lengths) and not between a log and its moved-on twin.
        let offsets = |records: &[Rec]| {
            let (_, starts) = encode(records);
            (starts[2] as u32, starts[5] as u32)
        };
        // The flag: 0 or 1 only; a field cut short.
        for records in [&plain_claimed, &reserved_claimed, &plain_at, &reserved_at, &unclaimed[0], &unclaimed[1]] {
            let summary = summary_of(records);
            let (from, to) = parse_summary(&summary).last_claim_span;
            for flag in [2u8, 3, 0x80, 0xff] {
                let mut damaged = summary.clone();
                damaged[from] = flag;
                assert!(refused(&damaged), "flag {flag}");
            }
            for cut in from..to {
                assert!(refused(&[&summary[..cut], &summary[to..]].concat()), "last claim cut to {} bytes", cut - from);
            }
        }
        // A CLAIMED phase's claim is the last claim.
        let (o2, o5) = offsets(&reserved_claimed);
        let summary = summary_of(&reserved_claimed);
        assert_eq!(parse_summary(&summary).last_claim, Some((b"i@4".to_vec(), 5, o5)));
        for (claim, what) in [
            (None, "no last claim"),
            (Some((&b"i@1"[..], 2, o2)), "the earlier claim"),
            (Some((b"i@5", 5, o5)), "another id"),
            (Some((b"i@4", 6, o5)), "another seq"),
            (Some((b"i@4", 5, o5 + 1)), "another offset"),
            (Some((b"i@4", 5, 0)), "offset 0"),
        ] {
            assert!(refused(&with_last_claim(&summary, claim)), "CLAIMED i@4, last claim: {what}");
        }
        assert_eq!(with_last_claim(&summary, Some((b"i@4", 5, o5))), summary);
        let (o2, o5) = offsets(&plain_claimed);
        let summary = summary_of(&plain_claimed);
        for (claim, what) in [
            (None, "no last claim"),
            (Some((&b"aa"[..], 2, o2)), "the earlier claim, listed there"),
            (Some((b"ba", 5, o5)), "another id"),
            (Some((b"bb", 5, o5 + 1)), "another offset"),
        ] {
            assert!(refused(&with_last_claim(&summary, claim)), "CLAIMED bb, last claim: {what}");
        }
        // A non-reserved last claim is listed claimed at that position.
        let summary = summary_of(&plain_at);
        assert_eq!(parse_summary(&summary).last_claim, Some((b"bb".to_vec(), 5, o5)));
        for (claim, what) in [
            ((&b"cc"[..], 5, o5), "an id not listed"),
            ((b"i@01", 5, o5), "an id not listed (it only looks reserved)"),
            ((b"aa", 5, o5), "aa, listed at 2"),
            ((b"bb", 2, o2), "bb, listed at 5"),
            ((b"bb", 5, o5 + 1), "bb at another offset"),
            ((b"bb", 6, o5), "bb at another seq"),
        ] {
            assert!(refused(&with_last_claim(&summary, Some(claim))), "AT p, last claim: {what}");
        }
        // Consistent edits: the earlier listed claim; no last claim at all.
        for claim in [Some((&b"aa"[..], 2, o2)), None] {
            let edited = with_last_claim(&summary, claim);
            assert!(!refused(&edited), "AT p, last claim {claim:?}");
            assert_eq!(split_fed(&feed(&edited, &[])).1, edited, "written back as read");
            assert_eq!(fields(&admit_from(&edited, &resume_request(b"aa"))), (2, 1, 0, 2, o2));
            assert_eq!(fields(&admit_from(&edited, &resume_request(b"bb"))), (2, 1, 0, 5, o5));
        }
        // A reserved last claim is not listed: the earlier claim, or none, are accepted, and the
        // summary answers from what it holds (the id it does not hold needs the log).
        let (o2, o5) = offsets(&reserved_at);
        let summary = summary_of(&reserved_at);
        assert_eq!(fields(&admit_from(&summary, &resume_request(b"i@4"))), (2, 1, 0, 5, o5));
        assert_eq!(fields(&admit_from(&summary, &resume_request(b"i@1"))), (2, 10, 0, 2, 0));
        let edited = with_last_claim(&summary, Some((b"i@1", 2, o2)));
        assert!(!refused(&edited));
        assert_eq!(split_fed(&feed(&edited, &[])).1, edited, "written back as read");
        assert_eq!(fields(&admit_from(&edited, &resume_request(b"i@1"))), (2, 1, 0, 2, o2));
        assert_eq!(fields(&admit_from(&edited, &resume_request(b"i@4"))), (2, 10, 0, 5, 0));
        let edited = with_last_claim(&summary, None);
        assert!(!refused(&edited));
        assert_eq!(fields(&admit_from(&edited, &resume_request(b"i@4"))), (2, 10, 0, 5, 0));
    }
}
