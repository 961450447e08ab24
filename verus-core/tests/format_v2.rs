//! Format 2 and core API 2: the twins of the chain lemmas (`lemma_link_*`,
//! `lemma_record_after_another_predecessor_is_bad_link`), of the fence lemmas
//! (`lemma_v2_done_needs_a_live_attempt`, `lemma_invoke_only_without_a_live_attempt`), of
//! `lemma_v1_logs_have_no_attempts` and "a format-1 log recovers exactly as before" (against
//! the frozen format-1 model), and `recover`/`admit` equal to the model on format-2 and mixed
//! logs, their prefixes, cuts and mutations.

mod common;

use common::gen::{history, history_v2, mutate_bytes, mutate_framed, mutate_records, Rng};
use common::model::{self, resume_request, seq_request};
use common::{chain_of, encode_log, encode_log_v2, encode_v2, hex, model_v1, project_to_api_v1, recovery_action, recovery_head, Rec};
use proptest::prelude::*;
use remit_verus_core::*;

fn cfg(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

fn assert_matches_model(log: &[u8]) {
    assert_eq!(hex(&recover(log)), hex(&model::recovery_encoding(log)), "recover differs from the model for log {}", hex(log));
}

/// (ok, code, seq) of a recovery encoding.
fn verdict(log: &[u8]) -> (u8, u8, u32) {
    let (ok, code, seq, _, _) = recovery_head(&recover(log));
    (ok, code, seq)
}

fn started(nodes: &[(&[u8], u8)], start: &[u8], run_id: &[u8]) -> Rec {
    Rec::RunStarted {
        run_id: run_id.to_vec(),
        workflow: b"wf".to_vec(),
        version: b"1".to_vec(),
        fingerprint: vec![7; 4],
        definition: b"{}".to_vec(),
        nodes: nodes.iter().map(|(n, k)| (n.to_vec(), *k)).collect(),
        start_node: start.to_vec(),
        state: b"{}".to_vec(),
    }
}

fn intent(k: &[u8]) -> Rec {
    Rec::EffectIntent { node: b"e".to_vec(), key: k.to_vec() }
}
fn attempt(k: &[u8], a: u32) -> Rec {
    Rec::EffectAttempt { node: b"e".to_vec(), key: k.to_vec(), attempt: a, lease: b"{\"owner\":\"x\"}".to_vec() }
}
fn released(k: &[u8], a: u32) -> Rec {
    Rec::EffectReleased { node: b"e".to_vec(), key: k.to_vec(), attempt: a, reason: b"{}".to_vec() }
}
fn done(k: &[u8]) -> Rec {
    Rec::EffectDone { node: b"e".to_vec(), key: k.to_vec(), result: b"1".to_vec() }
}

// ------------------------------------------------------------- hand-built transitions

#[test]
fn the_attempt_phases_report_the_documented_actions() {
    let nodes: &[(&[u8], u8)] = &[(b"a", 1), (b"e", 2)];
    let records = vec![
        started(nodes, b"a", b"r"),
        Rec::NodeCompleted { node: b"a".to_vec(), next: b"e".to_vec(), state_form: 0, state: vec![] },
        intent(b"k"),
        attempt(b"k", 1),
        released(b"k", 1),
        attempt(b"k", 2),
        attempt(b"k", 3),
        done(b"k"),
    ];
    let (log, starts) = encode_log_v2(&records);
    let action_at = |n: usize| recovery_action(&recover(&log[..starts[n]]));
    assert_eq!(action_at(3), (3, b"e".to_vec(), vec![b"k".to_vec()], vec![2, 1]));
    assert_eq!(action_at(4), (9, b"e".to_vec(), vec![b"k".to_vec()], vec![2, 1, 3, starts[3] as u32]));
    assert_eq!(action_at(5), (3, b"e".to_vec(), vec![b"k".to_vec()], vec![2, 2]));
    assert_eq!(action_at(6), (9, b"e".to_vec(), vec![b"k".to_vec()], vec![2, 2, 5, starts[5] as u32]));
    assert_eq!(action_at(7), (9, b"e".to_vec(), vec![b"k".to_vec()], vec![2, 3, 6, starts[6] as u32]));
    assert_eq!(action_at(8).0, 4);
    for n in 0..=records.len() {
        assert_matches_model(&log[..starts[n]]);
    }
    let run = recover_log(&log).unwrap();
    assert_eq!(run.effects[1], EffectTally { status: EffectStatus::Done, done_count: 1, attempts: 3 });
    let run = recover_log(&log[..starts[3]]).unwrap();
    assert_eq!(run.effects[1], EffectTally { status: EffectStatus::IntentOnly, done_count: 0, attempts: 0 });
}

#[test]
fn every_attempt_rule_refuses_what_the_document_refuses() {
    let nodes: &[(&[u8], u8)] = &[(b"e", 2), (b"p", 1)];
    let base = vec![started(nodes, b"e", b"r"), intent(b"k")];
    // (records after the intent, versions of all records, expected (code, seq))
    type Case = (Vec<Rec>, Vec<u8>, (u8, u32));
    let v2 = |n: usize| vec![2u8; n];
    let cases: Vec<Case> = vec![
        // The fence: a format-2 completion needs a recorded attempt.
        (vec![done(b"k")], v2(3), (8, 2)),
        // A format-1 completion may not follow an attempt (format 1 may not follow format 2 at all).
        (vec![attempt(b"k", 1), done(b"k")], vec![1, 1, 2, 1], (2, 3)),
        // Attempts start at 1 and go up by one; a takeover or a retry names the next one.
        (vec![attempt(b"k", 2)], v2(3), (8, 2)),
        (vec![attempt(b"k", 0)], v2(3), (8, 2)),
        (vec![attempt(b"k", 1), attempt(b"k", 1)], v2(4), (8, 3)),
        (vec![attempt(b"k", 1), attempt(b"k", 3)], v2(4), (8, 3)),
        (vec![attempt(b"k", 1), released(b"k", 1), attempt(b"k", 1)], v2(5), (8, 4)),
        // Same node and key as the intent.
        (vec![attempt(b"other", 1)], v2(3), (8, 2)),
        (vec![Rec::EffectAttempt { node: b"p".to_vec(), key: b"k".to_vec(), attempt: 1, lease: vec![] }], v2(3), (8, 2)),
        (vec![Rec::EffectAttempt { node: b"zz".to_vec(), key: b"k".to_vec(), attempt: 1, lease: vec![] }], v2(3), (9, 2)),
        // Only the latest attempt can be released, once, and only before its outcome.
        (vec![released(b"k", 1)], v2(3), (8, 2)),
        (vec![attempt(b"k", 1), released(b"k", 2)], v2(4), (8, 3)),
        (vec![attempt(b"k", 1), released(b"k", 1), released(b"k", 1)], v2(5), (8, 4)),
        (vec![attempt(b"k", 1), done(b"k"), released(b"k", 1)], v2(5), (8, 4)),
        (vec![attempt(b"k", 1), released(b"other", 1)], v2(4), (8, 3)),
        // No completion after a release; no attempt after a completion.
        (vec![attempt(b"k", 1), released(b"k", 1), done(b"k")], v2(5), (8, 4)),
        (vec![attempt(b"k", 1), done(b"k"), attempt(b"k", 2)], v2(5), (8, 4)),
        // Kinds 10 and 11 are format 2 only.
        (vec![attempt(b"k", 1)], vec![1, 1, 1], (6, 2)),
        // A failure may end the run while an attempt is live.
        (vec![attempt(b"k", 1), Rec::RunFailed { node: b"e".to_vec(), code: vec![], message: vec![] }, attempt(b"k", 2)], v2(5), (8, 4)),
    ];
    for (i, (tail, versions, (code, seq))) in cases.into_iter().enumerate() {
        let records = [base.clone(), tail].concat();
        let (log, _) = common::encode_log_versions(&records, &versions);
        assert_eq!(verdict(&log), (0, code, seq), "case {i}");
        assert_matches_model(&log);
    }
    // A format-1 intent continued by a format-2 shell: attempt 1 in format 2, then completion.
    let records = [base.clone(), vec![attempt(b"k", 1), done(b"k")]].concat();
    let (log, _) = common::encode_log_versions(&records, &[1, 1, 2, 2]);
    assert_eq!(verdict(&log).0, 1);
    // A format-1 completion straight after a format-1 intent, as before.
    let records = [base, vec![done(b"k")]].concat();
    let (log, _) = common::encode_log_versions(&records, &[1, 1, 1]);
    assert_eq!(verdict(&log).0, 1);
}

// ------------------------------------------------------------- the chain

/// Twin of `lemma_record_after_another_predecessor_is_bad_link`, on logs: a valid record copied
/// from another run into this one at the same seq, records reordered, or a record edited with
/// its checks recomputed: recovery names the first record that does not follow its predecessor.
#[test]
fn the_chain_names_the_first_record_that_does_not_belong() {
    let mut copied = 0;
    let mut edited = 0;
    for seed in 0..600u64 {
        let a = history_v2(seed, 30);
        let b = history_v2(seed + 1000, 30);
        let (log_a, starts_a) = a.encode();
        let (log_b, starts_b) = b.encode();
        let n = a.records.len().min(b.records.len());
        let mut rng = Rng::new(seed);
        let i = 1 + rng.below(n.max(2) as u64 - 1) as usize;
        if i >= n || a.versions[i] != 2 || b.versions[i] != 2 {
            continue;
        }
        // Record i of run B (valid framing, same seq) in place of record i of run A.
        let piece = &log_b[starts_b[i]..starts_b[i + 1]];
        if piece != &log_a[starts_a[i]..starts_a[i + 1]] {
            let mut spliced = log_a[..starts_a[i]].to_vec();
            spliced.extend_from_slice(piece);
            spliced.extend_from_slice(&log_a[starts_a[i + 1]..]);
            assert_eq!(verdict(&spliced), (0, 12, i as u32), "seed {seed}: copied record {i}");
            assert_matches_model(&spliced);
            copied += 1;
        }
        // Record i edited (its state or key bytes changed) with record_crc and link recomputed
        // for its true predecessor: it passes, the record after it does not.
        let edited_rec = match a.records[i].clone() {
            Rec::NodeCompleted { node, next, state_form, mut state } => {
                state.push(b'!');
                Rec::NodeCompleted { node, next, state_form, state }
            }
            Rec::EffectDone { node, key, mut result } => {
                result.push(b'!');
                Rec::EffectDone { node, key, result }
            }
            _ => continue,
        };
        let prev = chain_of(&log_a[starts_a[i - 1]..starts_a[i]]);
        let mut forged = log_a[..starts_a[i]].to_vec();
        forged.extend_from_slice(&encode_v2(i as u32, prev, &edited_rec));
        forged.extend_from_slice(&log_a[starts_a[i + 1]..]);
        if i + 1 < a.records.len() {
            assert_eq!(verdict(&forged), (0, 12, i as u32 + 1), "seed {seed}: edited record {i}");
        } else {
            // The last record edited and resealed: nothing after it to notice (docs/log-format.md).
            assert_eq!(verdict(&forged).0, 1);
        }
        assert_matches_model(&forged);
        edited += 1;
        // Two neighbours swapped (their seq fields still name their old positions).
        if i + 1 < a.records.len() && a.versions[i + 1] == 2 {
            let mut swapped = log_a[..starts_a[i]].to_vec();
            swapped.extend_from_slice(&log_a[starts_a[i + 1]..starts_a[i + 2]]);
            swapped.extend_from_slice(&log_a[starts_a[i]..starts_a[i + 1]]);
            swapped.extend_from_slice(&log_a[starts_a[i + 2]..]);
            assert_eq!(verdict(&swapped), (0, 12, i as u32), "seed {seed}: swapped {i}");
            assert_matches_model(&swapped);
        }
    }
    assert!(copied > 50 && edited > 30, "too few cases: {copied} copied, {edited} edited");
}

/// A whole format-2 log copied under another run id recovers (the chain cannot see it: it is
/// self-consistent); the shell compares the recovered run id with the store key. This pins the
/// limit stated in docs/log-format.md.
#[test]
fn a_whole_log_copied_elsewhere_still_recovers_with_its_own_run_id() {
    let h = history_v2(3, 20);
    let (log, _) = h.encode();
    assert_eq!(verdict(&log).0, 1);
}

// ------------------------------------------------------------- properties on histories

/// Twin of `recover`'s ensures on format-2 and mixed logs: every prefix and a cut inside every
/// record.
#[test]
fn recover_equals_the_model_on_every_prefix_of_format_2_histories() {
    for seed in 0..200u64 {
        let h = history_v2(seed, 60);
        let (log, starts) = h.encode();
        for (n, &start) in starts.iter().enumerate() {
            assert_matches_model(&log[..start]);
            if n + 1 < starts.len() {
                assert_matches_model(&log[..start + (starts[n + 1] - start) / 2]);
                assert_matches_model(&log[..starts[n + 1] - 1]);
            }
        }
        assert_eq!(verdict(&log).0, 1, "seed {seed}: a generated history must recover");
    }
}

/// Twins of `lemma_invoke_only_without_a_live_attempt`, `lemma_v2_done_needs_a_live_attempt` and
/// `lemma_never_invoke_a_done_effect` for format 2, from the records alone, on every prefix.
#[test]
fn the_fence_holds_on_every_prefix() {
    let (mut invokes, mut awaits, mut retries) = (0, 0, 0);
    for seed in 0..300u64 {
        let h = history_v2(seed, 60);
        let (log, starts) = h.encode();
        for n in 1..=h.records.len() {
            let (tag, node, names, nums) = recovery_action(&recover(&log[..starts[n]]));
            if tag != 3 && tag != 9 {
                continue;
            }
            let intent_seq = nums[0] as usize;
            assert!(matches!(&h.records[intent_seq], Rec::EffectIntent { node: n2, key } if *n2 == node && *key == names[0]));
            // What the records after the intent say about the instance.
            let mut latest_attempt = None;
            let mut released_latest = false;
            for (j, r) in h.records[intent_seq + 1..n].iter().enumerate() {
                match r {
                    Rec::EffectAttempt { attempt, .. } => {
                        latest_attempt = Some((*attempt, intent_seq + 1 + j));
                        released_latest = false;
                    }
                    Rec::EffectReleased { .. } => released_latest = true,
                    Rec::EffectDone { .. } => panic!("seed {seed}: an invoke or await after a completion"),
                    _ => {}
                }
            }
            if tag == 3 {
                invokes += 1;
                // No attempt live: none yet (claim 1), or the latest released (claim it + 1).
                match latest_attempt {
                    None => assert_eq!(nums[1], 1),
                    Some((a, _)) => {
                        assert!(released_latest, "seed {seed}: INVOKE_EFFECT while attempt {a} is live");
                        assert_eq!(nums[1], a + 1);
                        retries += 1;
                    }
                }
            } else {
                awaits += 1;
                let (a, at) = latest_attempt.expect("AWAIT_ATTEMPT without an attempt record");
                assert!(!released_latest);
                assert_eq!((nums[1], nums[2], nums[3]), (a, at as u32, starts[at] as u32));
            }
        }
        // Every format-2 completion follows a live attempt of its instance.
        let mut live = false;
        for (r, v) in h.records.iter().zip(&h.versions) {
            match r {
                Rec::EffectIntent { .. } => live = false,
                Rec::EffectAttempt { .. } => live = true,
                Rec::EffectReleased { .. } => live = false,
                Rec::EffectDone { .. } if *v == 2 => assert!(live, "seed {seed}: a format-2 completion without a live attempt"),
                _ => {}
            }
        }
    }
    assert!(invokes > 100 && awaits > 100 && retries > 20, "too few cases: {invokes} invokes, {awaits} awaits, {retries} retries");
}

/// "A format-1 log recovers exactly as before": the API-2 encoding, with the fields API 2 added
/// taken out, equals the frozen format-1 model's encoding on every prefix and cut of format-1
/// histories, their record and byte mutations, and random bytes. Also the twin of
/// `lemma_v1_logs_have_no_attempts` (`project_to_api_v1` panics on an attempt).
#[test]
fn format_1_logs_recover_exactly_as_before() {
    let same = |log: &[u8]| {
        let old = model_v1::recovery_encoding(log);
        if old[0] == 0 && old[1] == 2 {
            return; // format 1 refused every version byte but 1; a valid format-2 frame is now read
        }
        assert_eq!(hex(&project_to_api_v1(&recover(log))), hex(&old), "format-1 log {}", hex(log));
    };
    for seed in 0..150u64 {
        let h = history(seed, 60);
        let (log, starts) = encode_log(&h.records);
        for (n, &start) in starts.iter().enumerate() {
            same(&log[..start]);
            if n + 1 < starts.len() {
                same(&log[..start + (starts[n + 1] - start) / 2]);
            }
        }
        let mut rng = Rng::new(seed);
        for _ in 0..20 {
            let (log, _) = encode_log(&mutate_records(&h.records, &mut rng));
            same(&log);
            same(&mutate_bytes(&log, &mut rng));
        }
    }
    let mut rng = Rng::new(5);
    for _ in 0..5000 {
        same(&rng.bytes(120));
    }
}

/// Admission on every prefix of format-2 histories, every request kind: equal to the model.
#[test]
fn admit_equals_the_model_on_format_2_histories() {
    for seed in 0..60u64 {
        let h = history_v2(seed, 40);
        let (log, starts) = h.encode();
        for n in 0..=h.records.len() {
            let prefix = &log[..starts[n]];
            let mut reqs = vec![resume_request(b"never"), vec![]];
            for r in &h.records[..n] {
                if let Rec::InterruptParked { interrupt_id, .. } = r {
                    reqs.push(resume_request(interrupt_id));
                }
            }
            for k in 0..=n as u32 + 1 {
                reqs.push(seq_request(2, k));
                reqs.push(seq_request(3, k));
            }
            for req in reqs {
                assert_eq!(admit(prefix, &req), model::admission_encoding(prefix, &req), "seed {seed} prefix {n}");
            }
        }
    }
}

/// Twin of `lemma_truncation_is_a_torn_tail` for format 2: cut at every byte.
#[test]
fn truncating_a_format_2_log_at_every_byte_is_a_torn_tail() {
    for seed in 0..12u64 {
        let h = history_v2(seed, 30);
        let (log, starts) = h.encode();
        for k in 0..=log.len() {
            let (ok, _, count, durable, torn) = recovery_head(&recover(&log[..k]));
            assert_eq!(ok, 1, "seed {seed}: cut at {k}");
            let whole = starts.iter().filter(|&&s| s <= k).count() - 1;
            assert_eq!((count as usize, durable as usize, (durable + torn) as usize), (whole, starts[whole], k));
        }
    }
}

/// Twin of `lemma_damage_before_the_last_record_is_named` for format 2 (link bytes included).
#[test]
fn any_byte_change_before_the_last_format_2_record_names_that_record() {
    let h = history_v2(7, 12);
    let (log, starts) = h.encode();
    assert!(h.versions.iter().all(|v| *v == 2) || h.versions.contains(&2));
    for i in 0..h.records.len() - 1 {
        for pos in starts[i]..starts[i + 1] {
            for delta in [1u8, 2, 0x10, 0x80, 0xFF, 0x5A] {
                let mut bad = log.clone();
                bad[pos] ^= delta;
                let (ok, _, seq, offset, _) = recovery_head(&recover(&bad));
                assert_eq!((ok, seq, offset as usize), (0, i as u32, starts[i]), "byte {pos} ^ {delta}");
            }
        }
    }
}

/// The generators reach every action tag (9 included) and every error code the transition and
/// chain rules can produce (BAD_LINK and BAD_VERSION included).
#[test]
fn format_2_generators_cover_every_action_and_error() {
    let mut tags = std::collections::BTreeSet::new();
    for seed in 0..300u64 {
        let h = history_v2(seed, 60);
        let (log, starts) = h.encode();
        for &s in &starts {
            tags.insert(recovery_action(&recover(&log[..s])).0);
        }
    }
    assert_eq!(tags.into_iter().collect::<Vec<_>>(), (0..=9).collect::<Vec<u8>>());
    let mut codes = std::collections::BTreeSet::new();
    for seed in 0..3000u64 {
        let h = history_v2(seed, 40);
        let mut rng = Rng::new(seed);
        let (records, versions) = mutate_framed(&h.records, &h.versions, &mut rng);
        let (log, _) = common::encode_log_versions(&records, &versions);
        let enc = recover(&log);
        if enc[0] == 0 {
            codes.insert(enc[1]);
        }
        let enc = recover(&mutate_bytes(&log, &mut rng));
        if enc[0] == 0 {
            codes.insert(enc[1]);
        }
    }
    for code in [1u8, 2, 4, 6, 8, 9, 10, 11, 12] {
        assert!(codes.contains(&code), "error code {code} never produced; saw {codes:?}");
    }
}

proptest! {
    #![proptest_config(cfg(400))]

    #[test]
    fn recover_equals_the_model_on_format_2_record_mutations(seed in any::<u64>()) {
        let h = history_v2(seed, 40);
        let mut rng = Rng::new(seed ^ 0xABCD);
        let (records, versions) = mutate_framed(&h.records, &h.versions, &mut rng);
        let (log, _) = common::encode_log_versions(&records, &versions);
        prop_assert_eq!(recover(&log), model::recovery_encoding(&log));
        for req in [resume_request(b"i1"), seq_request(2, 1), seq_request(3, records.len() as u32 - 1)] {
            prop_assert_eq!(admit(&log, &req), model::admission_encoding(&log, &req));
        }
    }

    #[test]
    fn recover_equals_the_model_on_format_2_byte_mutations(seed in any::<u64>()) {
        let h = history_v2(seed, 30);
        let (log, _) = h.encode();
        let mut rng = Rng::new(seed);
        let bad = mutate_bytes(&log, &mut rng);
        prop_assert_eq!(recover(&bad), model::recovery_encoding(&bad));
    }
}
