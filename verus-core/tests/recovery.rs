//! Recovery twins: `recover` ensures `out@ == spec_recovery_encoding(log@)` (compared with the
//! executable model on valid, record-mutated, byte-mutated and random logs), and the lemmas
//! of spec/properties.rs (next node, never invoke a done effect, determinism, torn tail versus
//! corruption, totality).

mod common;

use common::gen::{history, mutate_bytes, mutate_records, Rng};
use common::{encode_log, frame, model, put_bytes, recovery_action, recovery_head, Cursor, Rec};
use proptest::prelude::*;
use remit_verus_core::*;

fn cfg(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

fn assert_matches_model(log: &[u8]) {
    let fast = recover(log);
    let slow = model::recovery_encoding(log);
    assert_eq!(common::hex(&fast), common::hex(&slow), "recover differs from the model for log {}", common::hex(log));
}

fn started(nodes: &[(&[u8], u8)], start: &[u8]) -> Rec {
    Rec::RunStarted {
        run_id: b"run-1".to_vec(),
        workflow: b"wf".to_vec(),
        version: b"v1".to_vec(),
        fingerprint: vec![0xAB; 4],
        definition: b"{}".to_vec(),
        nodes: nodes.iter().map(|(n, k)| (n.to_vec(), *k)).collect(),
        start_node: start.to_vec(),
        state: b"{}".to_vec(),
    }
}

fn completed(node: &[u8], next: &[u8], form: u8) -> Rec {
    Rec::NodeCompleted { node: node.to_vec(), next: next.to_vec(), state_form: form, state: b"{}".to_vec() }
}

/// (code, seq, offset, kind) of an error encoding.
fn error_of(enc: &[u8]) -> (u8, u32, u32, u8) {
    let (ok, code, seq, offset, kind) = recovery_head(enc);
    assert_eq!(ok, 0, "expected an error encoding");
    assert_eq!(enc.len(), 11);
    (code, seq, offset, kind as u8)
}

// ------------------------------------------------------------- hand-built scenarios

#[test]
fn empty_log_recovers_to_the_empty_run() {
    let enc = recover(&[]);
    let mut expected = vec![1u8, 0];
    expected.extend_from_slice(&[0; 12]); // record_count, durable_len, torn_len
    expected.extend_from_slice(&[0; 16]); // four empty byte strings
    expected.extend_from_slice(&[0xFF; 16]); // NONE32 x 4
    expected.push(0); // NONE
    expected.extend_from_slice(&[0; 16]); // effect_count, parked, claimed, lineage_count
    assert_eq!(enc, expected);
}

#[test]
fn a_walk_through_every_phase_reports_the_documented_action() {
    let nodes: &[(&[u8], u8)] = &[(b"a", 1), (b"e", 2), (b"i", 3)];
    let records = vec![
        started(nodes, b"a"),
        completed(b"a", b"e", 1),
        Rec::EffectIntent { node: b"e".to_vec(), key: b"k1".to_vec() },
        Rec::EffectDone { node: b"e".to_vec(), key: b"k1".to_vec(), result: b"r".to_vec() },
        completed(b"e", b"i", 0),
        Rec::Forked { source_run_id: b"run-1".to_vec(), source_seq: 4, run_id: b"run-2".to_vec(), intent: b"why".to_vec() },
        Rec::InterruptParked { node: b"i".to_vec(), interrupt_id: b"int-1".to_vec() },
        Rec::ResumeClaimed { interrupt_id: b"int-1".to_vec(), value: b"yes".to_vec() },
        completed(b"i", b"", 1),
        Rec::RunCompleted,
    ];
    let (log, starts) = encode_log(&records);
    let expected_tags = [0u8, 1, 2, 3, 4, 5, 5, 6, 7, 8, 0];
    for n in 0..=records.len() {
        let enc = recover(&log[..starts[n]]);
        assert_matches_model(&log[..starts[n]]);
        let (tag, node, _, _) = recovery_action(&enc);
        assert_eq!(tag, expected_tags[n], "action after {n} records");
        if matches!(tag, 1 | 2 | 5) {
            assert!(!node.is_empty());
        }
    }
    // The full log: completed, with effect tally, counts and lineage.
    let run = recover_log(&log).unwrap();
    assert_eq!(run.status(), RunStatus::Completed);
    assert_eq!(run.record_count, 10);
    assert_eq!(run.run_id, b"run-2");
    assert_eq!(run.checkpoint, Some(Position { seq: 8, offset: starts[8] as u32 }));
    assert_eq!(run.snapshot, Some(Position { seq: 4, offset: starts[4] as u32 }));
    assert_eq!((run.interrupts_parked, run.interrupts_claimed), (1, 1));
    assert_eq!(run.lineage.len(), 1);
    assert_eq!(run.lineage[0].fork_seq, 5);
    assert_eq!(run.effects[1], EffectTally { status: EffectStatus::Done, done_count: 1, attempts: 0 });
}

#[test]
fn a_failed_run_reports_its_failure_fields() {
    let records = vec![
        started(&[(b"a", 1)], b"a"),
        Rec::RunFailed { node: b"a".to_vec(), code: b"E_X".to_vec(), message: b"boom".to_vec() },
    ];
    let (log, _) = encode_log(&records);
    let enc = recover(&log);
    assert_matches_model(&log);
    let mut tail = Vec::new();
    put_bytes(&mut tail, b"a");
    put_bytes(&mut tail, b"E_X");
    put_bytes(&mut tail, b"boom");
    assert!(enc.ends_with(&tail));
    assert_eq!(enc[1], 4);
}

#[test]
fn each_error_code_names_the_bad_record() {
    let nodes: &[(&[u8], u8)] = &[(b"a", 1), (b"e", 2), (b"i", 3)];
    let (base, starts) = encode_log(&[started(nodes, b"a")]);
    let at1 = starts[1] as u32;
    let with = |r: &Rec| {
        let mut log = base.clone();
        log.extend_from_slice(&common::encode(1, r));
        log
    };
    type Expected = (u8, u32, u32, u8);
    let cases: Vec<(Vec<u8>, Expected)> = vec![
        // IMPOSSIBLE_ORDER: completing a node the run is not at.
        (with(&completed(b"e", b"a", 0)), (8, 1, at1, 2)),
        // UNKNOWN_NODE: node not in the table; next not in the table.
        (with(&completed(b"zz", b"a", 0)), (9, 1, at1, 2)),
        (with(&completed(b"a", b"zz", 0)), (9, 1, at1, 2)),
        // IMPOSSIBLE_ORDER: an intent at a pure node.
        (with(&Rec::EffectIntent { node: b"a".to_vec(), key: b"k".to_vec() }), (8, 1, at1, 3)),
        // IMPOSSIBLE_ORDER: RUN_STARTED twice; RUN_COMPLETED before the end.
        (with(&started(nodes, b"a")), (8, 1, at1, 1)),
        (with(&Rec::RunCompleted), (8, 1, at1, 8)),
        // FORKED must name the previous record.
        (with(&Rec::Forked { source_run_id: b"r".to_vec(), source_seq: 7, run_id: b"s".to_vec(), intent: vec![] }), (8, 1, at1, 7)),
        // MALFORMED_PAYLOAD: a framed record whose payload has a trailing byte.
        ({
            let mut log = base.clone();
            log.extend_from_slice(&frame(1, 8, &[0]));
            log
        }, (7, 1, at1, 8)),
        // BAD_KIND.
        ({
            let mut log = base.clone();
            log.extend_from_slice(&frame(1, 12, &[]));
            log
        }, (6, 1, at1, 12)),
        // BAD_SEQ: a record numbered 2 in position 1.
        ({
            let mut log = base.clone();
            log.extend_from_slice(&frame(2, 8, &[]));
            log
        }, (5, 1, at1, 8)),
    ];
    for (log, expected) in cases {
        assert_eq!(error_of(&recover(&log)), expected);
        assert_matches_model(&log);
    }
    // s = 0 must be RUN_STARTED.
    let (log, _) = encode_log(&[Rec::RunCompleted]);
    assert_eq!(error_of(&recover(&log)), (8, 0, 0, 8));
    // BAD_NODE_TABLE: empty table, duplicate names, bad kind; UNKNOWN_NODE: start not in table.
    for (rec, code) in [
        (started(&[], b"a"), 11),
        (started(&[(b"a", 1), (b"a", 2)], b"a"), 11),
        (started(&[(b"a", 4)], b"a"), 11),
        (started(&[(b"a", 1)], b"b"), 9),
    ] {
        let (log, _) = encode_log(&[rec]);
        assert_eq!(error_of(&recover(&log)), (code, 0, 0, 1));
    }
    // DUPLICATE_INTERRUPT.
    let records = vec![
        started(&[(b"i", 3)], b"i"),
        Rec::InterruptParked { node: b"i".to_vec(), interrupt_id: b"x".to_vec() },
        Rec::ResumeClaimed { interrupt_id: b"x".to_vec(), value: vec![] },
        completed(b"i", b"i", 0),
        Rec::InterruptParked { node: b"i".to_vec(), interrupt_id: b"x".to_vec() },
    ];
    let (log, starts) = encode_log(&records);
    assert_eq!(error_of(&recover(&log)), (10, 4, starts[4] as u32, 5));
    // Nothing follows a terminal record.
    let (log, starts) = encode_log(&[started(&[(b"a", 1)], b"a"), Rec::RunFailed { node: vec![], code: vec![], message: vec![] }, Rec::RunCompleted]);
    assert_eq!(error_of(&recover(&log)), (8, 2, starts[2] as u32, 8));
}

#[test]
fn node_table_of_65535_entries_is_accepted_and_65536_refused() {
    for (count, ok) in [(65_535usize, true), (65_536, false)] {
        let nodes: Vec<(Vec<u8>, u8)> = (0..count).map(|i| (format!("n{i}").into_bytes(), 1)).collect();
        let rec = Rec::RunStarted {
            run_id: b"r".to_vec(),
            workflow: b"w".to_vec(),
            version: vec![],
            fingerprint: vec![],
            definition: vec![],
            nodes,
            start_node: b"n0".to_vec(),
            state: vec![],
        };
        let (log, _) = encode_log(&[rec]);
        let enc = recover(&log);
        assert_eq!(enc[0] == 1, ok, "table of {count}");
        if !ok {
            assert_eq!(error_of(&enc), (11, 0, 0, 1));
        }
    }
}

// ------------------------------------------------------------- properties (twins of lemmas)

/// Twin of `recover`'s ensures: equal to the model on every prefix of valid histories and on
/// cuts inside records.
#[test]
fn recover_equals_the_model_on_every_prefix_of_valid_histories() {
    for seed in 0..150u64 {
        let h = history(seed, 60);
        let (log, starts) = encode_log(&h.records);
        for (n, &start) in starts.iter().enumerate() {
            assert_matches_model(&log[..start]);
            if n + 1 < starts.len() {
                let mid = start + (starts[n + 1] - start) / 2;
                assert_matches_model(&log[..mid]);
            }
        }
    }
}

/// Twin of `lemma_next_node_is_first_not_completed`.
#[test]
fn the_next_node_is_the_first_not_durably_completed() {
    for seed in 0..200u64 {
        let h = history(seed, 60);
        let (log, starts) = encode_log(&h.records);
        for n in 1..=h.records.len() {
            let enc = recover(&log[..starts[n]]);
            let (tag, node, _, _) = recovery_action(&enc);
            // The first node not durably completed, from the records alone.
            let mut first_open: Option<Vec<u8>> = None;
            for r in &h.records[..n] {
                match r {
                    Rec::RunStarted { start_node, .. } => first_open = Some(start_node.clone()),
                    Rec::NodeCompleted { next, .. } => first_open = if next.is_empty() { None } else { Some(next.clone()) },
                    _ => {}
                }
            }
            if (1..=7).contains(&tag) {
                assert_eq!(Some(node), first_open, "seed {seed}, prefix {n}");
            }
        }
    }
}

/// Twin of `lemma_never_invoke_a_done_effect`, checked on every prefix: if the action is
/// INVOKE_EFFECT(node, key, s), no EFFECT_DONE(node, key) follows record s; and if the latest
/// intent of the current node has a completion, the action is FINISH_EFFECT, never INVOKE.
#[test]
fn the_next_action_never_invokes_a_completed_effect() {
    let mut invoke_seen = 0;
    for seed in 0..200u64 {
        let h = history(seed, 60);
        let (log, starts) = encode_log(&h.records);
        for n in 1..=h.records.len() {
            let enc = recover(&log[..starts[n]]);
            let (tag, node, names, nums) = recovery_action(&enc);
            if tag == 3 {
                invoke_seen += 1;
                let intent_seq = nums[0] as usize;
                for r in &h.records[intent_seq + 1..n] {
                    if let Rec::EffectDone { node: dn, key: dk, .. } = r {
                        assert!(!(dn == &node && dk == &names[0]), "seed {seed}: invoke of a done effect");
                    }
                }
            }
            if let Some(Rec::EffectDone { .. }) = h.records[..n].last() {
                assert_eq!(tag, 4, "after EFFECT_DONE the action is FINISH_EFFECT");
            }
        }
    }
    assert!(invoke_seen > 50, "generator produced too few intent-only prefixes ({invoke_seen})");
}

/// Twin of `lemma_recovery_is_a_function_of_bytes`: same bytes, same answer, wherever the bytes
/// live and however often recovery runs.
#[test]
fn recovery_is_a_function_of_the_bytes_only() {
    for seed in 0..50u64 {
        let h = history(seed, 40);
        let (log, _) = encode_log(&h.records);
        let first = recover(&log);
        let mut elsewhere = vec![0xEEu8; 3];
        elsewhere.extend_from_slice(&log);
        assert_eq!(recover(&elsewhere[3..]), first);
        assert_eq!(recover(&log), first);
        let mut rng = Rng::new(seed);
        let garbage = mutate_bytes(&log, &mut rng);
        assert_eq!(recover(&garbage), recover(&garbage.clone()));
    }
}

/// Twin of `lemma_truncation_is_a_torn_tail`: cut a valid log at every byte.
#[test]
fn truncation_at_every_byte_is_a_torn_tail_never_an_error() {
    for seed in 0..12u64 {
        let h = history(seed, 30);
        let (log, starts) = encode_log(&h.records);
        for k in 0..=log.len() {
            let enc = recover(&log[..k]);
            let (ok, _, count, durable, torn) = recovery_head(&enc);
            assert_eq!(ok, 1, "seed {seed}: cut at {k} gave an error");
            let whole = starts.iter().filter(|&&s| s <= k).count() - 1;
            assert_eq!(count as usize, whole);
            assert_eq!(durable as usize, starts[whole]);
            assert_eq!((durable + torn) as usize, k);
        }
    }
}

/// Twin of `lemma_damage_before_the_last_record_is_named`: every byte of every record but the
/// last, changed to every other value, is an error naming that record.
#[test]
fn any_byte_change_before_the_last_record_names_that_record() {
    let h = history(7, 12);
    let (log, starts) = encode_log(&h.records);
    let records = h.records.len();
    assert!(records >= 3);
    for i in 0..records - 1 {
        for pos in starts[i]..starts[i + 1] {
            for delta in 1..=255u8 {
                let mut bad = log.clone();
                bad[pos] ^= delta;
                let (ok, _, seq, offset, _) = recovery_head(&recover(&bad));
                assert_eq!((ok, seq, offset as usize), (0, i as u32, starts[i]), "byte {pos} ^ {delta}");
            }
        }
    }
}

#[test]
fn typed_result_and_encoding_agree() {
    for seed in 0..40u64 {
        let h = history(seed, 40);
        let (log, _) = encode_log(&h.records);
        let typed = recover_log(&log);
        assert_eq!(encode_recovery(&typed), recover(&log));
        let run = typed.unwrap();
        let enc = recover(&log);
        let mut c = Cursor::new(&enc);
        assert_eq!((c.u8(), c.u8(), c.u32()), (1, run.status() as u8, run.record_count));
    }
}

proptest! {
    #![proptest_config(cfg(300))]

    /// Twin of `recover`'s ensures on logs that break the transition rules (records dropped,
    /// duplicated, swapped, renamed, tables broken, ids re-parked) but keep valid framing.
    #[test]
    fn recover_equals_the_model_on_record_mutations(seed in any::<u64>()) {
        let h = history(seed, 40);
        let mut rng = Rng::new(seed ^ 0x5EED);
        let mutated = mutate_records(&h.records, &mut rng);
        let (log, _) = encode_log(&mutated);
        prop_assert_eq!(recover(&log), model::recovery_encoding(&log));
    }

    /// Totality and model agreement on byte-level damage (flips, inserts, deletes, cuts).
    #[test]
    fn recover_equals_the_model_on_byte_mutations(seed in any::<u64>()) {
        let h = history(seed, 30);
        let (log, _) = encode_log(&h.records);
        let mut rng = Rng::new(seed);
        let bad = mutate_bytes(&log, &mut rng);
        prop_assert_eq!(recover(&bad), model::recovery_encoding(&bad));
    }

    /// Totality on arbitrary bytes: an answer, never a panic, and the model's answer.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let enc = recover(&bytes);
        prop_assert!(enc[0] == 0 || enc[0] == 1);
        prop_assert_eq!(enc, model::recovery_encoding(&bytes));
    }
}

/// Random bytes behind a valid header prefix reach the payload parser and transition rules.
#[test]
fn random_payloads_in_valid_frames_never_panic() {
    let mut rng = Rng::new(99);
    let (base, _) = encode_log(&[started(&[(b"a", 1), (b"e", 2)], b"a")]);
    for _ in 0..20_000 {
        let mut log = base.clone();
        let kind = rng.below(11) as u8;
        let payload = rng.bytes(40);
        log.extend_from_slice(&frame(1, kind, &payload));
        assert_eq!(recover(&log), model::recovery_encoding(&log));
        let c = Cursor::new(&log);
        assert!(!c.done() || log.is_empty());
    }
}

/// The generators reach what the properties talk about: every action tag from valid
/// histories, every transition error from record mutations, header and checksum errors from
/// byte mutations. (The other framing codes need a forged header check; the hand-built tests
/// above cover them.)
#[test]
fn generators_cover_every_action_and_transition_error() {
    let mut tags = std::collections::BTreeSet::new();
    for seed in 0..300u64 {
        let h = history(seed, 60);
        let (log, starts) = encode_log(&h.records);
        for &s in &starts {
            tags.insert(recovery_action(&recover(&log[..s])).0);
        }
    }
    assert_eq!(tags.into_iter().collect::<Vec<_>>(), (0..=8).collect::<Vec<u8>>());
    let mut codes = std::collections::BTreeSet::new();
    for seed in 0..3000u64 {
        let h = history(seed, 40);
        let mut rng = Rng::new(seed);
        let (log, _) = encode_log(&mutate_records(&h.records, &mut rng));
        let enc = recover(&log);
        if enc[0] == 0 {
            codes.insert(enc[1]);
        }
        let enc = recover(&mutate_bytes(&log, &mut rng));
        if enc[0] == 0 {
            codes.insert(enc[1]);
        }
    }
    for code in [1u8, 4, 8, 9, 10, 11] {
        assert!(codes.contains(&code), "error code {code} never produced; saw {codes:?}");
    }
}

/// Canary: the model comparison can fail. Pairing one log's recovery with another log's model
/// answer must be caught.
#[test]
fn canary_the_model_comparison_detects_a_difference() {
    let (a, _) = encode_log(&history(1, 10).records);
    let (b, _) = encode_log(&history(2, 10).records);
    assert_ne!(recover(&a), model::recovery_encoding(&b));
    let caught = std::panic::catch_unwind(|| {
        let mut off_by_one = model::recovery_encoding(&a);
        let last = off_by_one.len() - 1;
        off_by_one[last] ^= 1;
        assert_eq!(recover(&a), off_by_one);
    });
    assert!(caught.is_err());
}
