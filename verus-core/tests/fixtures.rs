//! Golden fixtures for other implementations (the Wasm component's vitest file, the TypeScript
//! reference): logs with their expected recovery and admission encodings, as hex in JSON.
//!
//! The expected bytes come from the executable model and must equal the crate's output before
//! anything is written. `REMIT_WRITE_FIXTURES=1 cargo test -p remit-verus-core --test fixtures`
//! rewrites tests/fixtures/*.json; without it the test fails if the files drifted.

mod common;

use std::path::PathBuf;

use common::gen::history;
use common::model::{self, resume_request, seq_request};
use common::{chain_of, encode, encode_log, encode_log_v2, encode_log_versions, encode_v2, frame, frame_v2, hex, Rec};
use remit_verus_core::{admit, recover};

fn started(nodes: &[(&[u8], u8)], start: &[u8]) -> Rec {
    Rec::RunStarted {
        run_id: b"run-1".to_vec(),
        workflow: b"order".to_vec(),
        version: b"1".to_vec(),
        fingerprint: vec![0x5A; 32],
        definition: br#"{"nodes":["a","pay","wait"]}"#.to_vec(),
        nodes: nodes.iter().map(|(n, k)| (n.to_vec(), *k)).collect(),
        start_node: start.to_vec(),
        state: br#"{"n":0}"#.to_vec(),
    }
}

fn done(node: &[u8], next: &[u8], form: u8, state: &[u8]) -> Rec {
    Rec::NodeCompleted { node: node.to_vec(), next: next.to_vec(), state_form: form, state: state.to_vec() }
}

/// The reference run: every phase, a fork, a completion.
fn reference_records() -> Vec<Rec> {
    let nodes: &[(&[u8], u8)] = &[(b"a", 1), (b"pay", 2), (b"wait", 3)];
    vec![
        started(nodes, b"a"),
        done(b"a", b"pay", 1, br#"{"n":1}"#),
        Rec::EffectIntent { node: b"pay".to_vec(), key: b"run-1/pay/0".to_vec() },
        Rec::EffectDone { node: b"pay".to_vec(), key: b"run-1/pay/0".to_vec(), result: br#"{"ok":true}"#.to_vec() },
        done(b"pay", b"wait", 0, br#"{"n":2}"#),
        Rec::Forked { source_run_id: b"run-1".to_vec(), source_seq: 4, run_id: b"run-2".to_vec(), intent: br#""retry""#.to_vec() },
        Rec::InterruptParked { node: b"wait".to_vec(), interrupt_id: b"approve-1".to_vec() },
        Rec::ResumeClaimed { interrupt_id: b"approve-1".to_vec(), value: b"true".to_vec() },
        done(b"wait", b"", 1, br#"{"n":3}"#),
        Rec::RunCompleted,
    ]
}

/// The reference run as a format-2 shell writes it: the intent and attempt 1 of `pay`, a
/// release (the handler threw), attempt 2, a takeover (attempt 3), the completion.
fn reference_records_v2() -> Vec<Rec> {
    let nodes: &[(&[u8], u8)] = &[(b"a", 1), (b"pay", 2), (b"wait", 3)];
    let key = b"run-1/pay/2".to_vec();
    let attempt = |a: u32, owner: &str| Rec::EffectAttempt {
        node: b"pay".to_vec(),
        key: key.clone(),
        attempt: a,
        lease: format!(r#"{{"owner":"{owner}","leaseUntilMs":1760000030000}}"#).into_bytes(),
    };
    vec![
        started(nodes, b"a"),
        done(b"a", b"pay", 1, br#"{"n":1}"#),
        Rec::EffectIntent { node: b"pay".to_vec(), key: key.clone() },
        attempt(1, "replica-a"),
        Rec::EffectReleased { node: b"pay".to_vec(), key: key.clone(), attempt: 1, reason: br#"{"error":"timeout"}"#.to_vec() },
        attempt(2, "replica-a"),
        attempt(3, "replica-b"),
        Rec::EffectDone { node: b"pay".to_vec(), key: key.clone(), result: br#"{"ok":true}"#.to_vec() },
        done(b"pay", b"wait", 0, br#"{"n":2}"#),
        Rec::InterruptParked { node: b"wait".to_vec(), interrupt_id: b"wait@9".to_vec() },
        Rec::ResumeClaimed { interrupt_id: b"wait@9".to_vec(), value: b"true".to_vec() },
        done(b"wait", b"", 1, br#"{"n":3}"#),
        Rec::RunCompleted,
    ]
}

struct Case {
    name: String,
    log: Vec<u8>,
}

fn recovery_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let (log, starts) = encode_log(&reference_records());
    for (n, &s) in starts.iter().enumerate() {
        cases.push(Case { name: format!("reference/prefix-{n:02}"), log: log[..s].to_vec() });
    }
    cases.push(Case { name: "reference/torn-header".into(), log: log[..starts[3] + 7].to_vec() });
    cases.push(Case { name: "reference/torn-payload".into(), log: log[..starts[3] + 20].to_vec() });
    let failed = vec![started(&[(b"a", 1)], b"a"), Rec::RunFailed { node: b"a".to_vec(), code: b"E_NODE".to_vec(), message: b"boom".to_vec() }];
    cases.push(Case { name: "failed".into(), log: encode_log(&failed).0 });
    // One per recovery error code.
    let mut damaged = log.clone();
    damaged[starts[2] + 3] ^= 0x10;
    cases.push(Case { name: "error/bad-header".into(), log: damaged });
    let mut with = |name: &str, tail: Vec<u8>| {
        let mut l = log[..starts[2]].to_vec();
        l.extend_from_slice(&tail);
        cases.push(Case { name: name.into(), log: l });
    };
    with("error/bad-version", common::frame_with(2, 2, 3, 8, &[]));
    let mut too_large = Vec::new();
    too_large.extend_from_slice(&0x4000_0000u32.to_le_bytes());
    too_large.extend_from_slice(&2u32.to_le_bytes());
    too_large.extend_from_slice(&[1, 2]);
    let check = (remit_verus_core::crc32c(&too_large) & 0xFFFF) as u16;
    too_large.extend_from_slice(&check.to_le_bytes());
    with("error/record-too-large", too_large);
    let mut bad_crc = encode(2, &Rec::EffectIntent { node: b"pay".to_vec(), key: b"k".to_vec() });
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 1;
    with("error/bad-checksum", bad_crc);
    with("error/bad-seq", frame(3, 8, &[]));
    with("error/bad-kind", frame(2, 42, &[]));
    with("error/malformed-payload", frame(2, 8, &[0]));
    with("error/impossible-order", encode(2, &Rec::RunCompleted));
    with("error/unknown-node", encode(2, &Rec::EffectIntent { node: b"nope".to_vec(), key: b"k".to_vec() }));
    let mut dup = reference_records()[..8].to_vec();
    dup.push(done(b"wait", b"wait", 0, b"{}"));
    dup.push(Rec::InterruptParked { node: b"wait".to_vec(), interrupt_id: b"approve-1".to_vec() });
    cases.push(Case { name: "error/duplicate-interrupt".into(), log: encode_log(&dup).0 });
    cases.push(Case { name: "error/bad-node-table".into(), log: encode_log(&[started(&[(b"a", 1), (b"a", 3)], b"a")]).0 });
    cases.push(Case { name: "garbage".into(), log: b"not a log at all, just text".to_vec() });
    // Format 2: the reference run with attempts, a release and a takeover, every prefix and the
    // cuts inside the link of a record.
    let (log2, starts2) = encode_log_v2(&reference_records_v2());
    for (n, &s) in starts2.iter().enumerate() {
        cases.push(Case { name: format!("v2/prefix-{n:02}"), log: log2[..s].to_vec() });
    }
    cases.push(Case { name: "v2/torn-link".into(), log: log2[..starts2[4] - 2].to_vec() });
    // A format-1 log continued by a format-2 shell: the format-1 intent, then attempt 1.
    let mixed = reference_records_v2();
    let mut versions = vec![2u8; mixed.len()];
    versions[..3].fill(1);
    let (log_mixed, starts_mixed) = encode_log_versions(&mixed, &versions);
    cases.push(Case { name: "mixed/after-attempt".into(), log: log_mixed[..starts_mixed[4]].to_vec() });
    cases.push(Case { name: "mixed/completed".into(), log: log_mixed.clone() });
    // BAD_LINK: record 3 of another run (another run id) spliced in at seq 3.
    let other: Vec<Rec> = reference_records_v2()
        .into_iter()
        .map(|r| match r {
            Rec::RunStarted { workflow, version, fingerprint, definition, nodes, start_node, state, .. } => {
                Rec::RunStarted { run_id: b"run-9".to_vec(), workflow, version, fingerprint, definition, nodes, start_node, state }
            }
            r => r,
        })
        .collect();
    let (log_other, starts_other) = encode_log_v2(&other);
    let mut spliced = log2[..starts2[3]].to_vec();
    spliced.extend_from_slice(&log_other[starts_other[3]..starts_other[4]]);
    cases.push(Case { name: "error/bad-link".into(), log: spliced });
    // BAD_VERSION: a format-1 record after a format-2 one.
    let mut v1_after_v2 = log2[..starts2[3]].to_vec();
    v1_after_v2.extend_from_slice(&encode(3, &Rec::RunCompleted));
    cases.push(Case { name: "error/v1-after-v2".into(), log: v1_after_v2 });
    // IMPOSSIBLE_ORDER: a format-2 completion with no attempt (the fence).
    let mut no_attempt = log2[..starts2[3]].to_vec();
    let prev = chain_of(&log2[starts2[2]..starts2[3]]);
    no_attempt.extend_from_slice(&encode_v2(3, prev, &reference_records_v2()[7]));
    cases.push(Case { name: "error/done-without-attempt".into(), log: no_attempt });
    // BAD_KIND: kind 10 in format 1; kind 12 in format 2.
    let mut k10 = log[..starts[2]].to_vec();
    k10.extend_from_slice(&frame(2, 10, &[]));
    cases.push(Case { name: "error/attempt-in-format-1".into(), log: k10 });
    let mut k12 = log2[..starts2[2]].to_vec();
    k12.extend_from_slice(&frame_v2(2, chain_of(&log2[starts2[1]..starts2[2]]), 12, &[]));
    cases.push(Case { name: "error/kind-12".into(), log: k12 });
    // Generated histories, every fourth prefix.
    for seed in [3u64, 11, 29] {
        let h = history(seed, 36);
        let (log, starts) = encode_log(&h.records);
        for (n, &s) in starts.iter().enumerate().step_by(4) {
            cases.push(Case { name: format!("generated/seed-{seed}/prefix-{n:02}"), log: log[..s].to_vec() });
        }
    }
    for seed in [4u64, 12, 30] {
        let h = common::gen::history_v2(seed, 36);
        let (log, starts) = h.encode();
        for (n, &s) in starts.iter().enumerate().step_by(3) {
            cases.push(Case { name: format!("generated-v2/seed-{seed}/prefix-{n:02}"), log: log[..s].to_vec() });
        }
    }
    cases
}

fn admission_cases() -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let (log, starts) = encode_log(&reference_records());
    let parked = &log[..starts[7]];
    let claimed = &log[..starts[8]];
    let mut cases = Vec::new();
    let mut add = |name: &str, log: &[u8], req: Vec<u8>| cases.push((name.to_string(), log.to_vec(), req));
    add("resume/accept", parked, resume_request(b"approve-1"));
    add("resume/already-consumed", claimed, resume_request(b"approve-1"));
    add("resume/not-parked", &log[..starts[2]], resume_request(b"approve-1"));
    add("resume/unknown-interrupt", parked, resume_request(b"approve-2"));
    add("fork/accept-run-started", claimed, seq_request(2, 0));
    add("fork/accept-node-completed", claimed, seq_request(2, 4));
    add("fork/not-a-checkpoint", claimed, seq_request(2, 3));
    add("fork/beyond-head", claimed, seq_request(2, 8));
    add("continue/accept", claimed, seq_request(3, 7));
    add("continue/implicit-fork", claimed, seq_request(3, 4));
    add("continue/beyond-head", claimed, seq_request(3, 9));
    add("bad-request/empty", claimed, vec![]);
    add("bad-request/unknown-tag", claimed, seq_request(7, 0));
    add("bad-request/trailing", claimed, [seq_request(3, 7), vec![0]].concat());
    add("bad-request/empty-id", parked, resume_request(b""));
    add("no-run", &[], resume_request(b"approve-1"));
    let mut damaged = claimed.to_vec();
    damaged[starts[1] + 14] ^= 0x01;
    add("log-invalid", &damaged, resume_request(b"approve-1"));
    // Format 2: resume, fork and continue on the reference run with attempts.
    let (log2, starts2) = encode_log_v2(&reference_records_v2());
    let parked2 = &log2[..starts2[10]];
    let claimed2 = &log2[..starts2[11]];
    add("v2/resume/accept", parked2, resume_request(b"wait@9"));
    add("v2/resume/already-consumed", claimed2, resume_request(b"wait@9"));
    add("v2/resume/not-parked-while-attempted", &log2[..starts2[4]], resume_request(b"wait@9"));
    add("v2/fork/accept-after-effect", claimed2, seq_request(2, 8));
    add("v2/fork/not-a-checkpoint-attempt", claimed2, seq_request(2, 5));
    add("v2/continue/accept", &log2[..starts2[7]], seq_request(3, 6));
    let mut bad_link = claimed2.to_vec();
    bad_link[starts2[5] - 1] ^= 0x40;
    add("v2/log-invalid-bad-link", &bad_link, seq_request(3, 10));
    cases
}

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
}

fn render_recovery() -> String {
    let mut out = String::from("{\n  \"format\": \"remit-core-fixtures/recovery/1\",\n");
    out.push_str("  \"note\": \"generated by verus-core/tests/fixtures.rs; expected = recovery encoding (docs/core-api.md)\",\n");
    out.push_str("  \"cases\": [\n");
    let cases = recovery_cases();
    for (i, c) in cases.iter().enumerate() {
        let expected = model::recovery_encoding(&c.log);
        assert_eq!(recover(&c.log), expected, "crate and model disagree on fixture {}", c.name);
        let comma = if i + 1 < cases.len() { "," } else { "" };
        out.push_str(&format!(
            "    {{ \"name\": \"{}\", \"log\": \"{}\", \"recovery\": \"{}\" }}{comma}\n",
            c.name,
            hex(&c.log),
            hex(&expected)
        ));
    }
    out.push_str("  ]\n}\n");
    out
}

fn render_admission() -> String {
    let mut out = String::from("{\n  \"format\": \"remit-core-fixtures/admission/1\",\n");
    out.push_str("  \"note\": \"generated by verus-core/tests/fixtures.rs; expected = admission encoding (docs/core-api.md)\",\n");
    out.push_str("  \"cases\": [\n");
    let cases = admission_cases();
    for (i, (name, log, req)) in cases.iter().enumerate() {
        let expected = model::admission_encoding(log, req);
        assert_eq!(admit(log, req), expected, "crate and model disagree on fixture {name}");
        let comma = if i + 1 < cases.len() { "," } else { "" };
        out.push_str(&format!(
            "    {{ \"name\": \"{name}\", \"log\": \"{}\", \"request\": \"{}\", \"admission\": \"{}\" }}{comma}\n",
            hex(log),
            hex(req),
            hex(&expected)
        ));
    }
    out.push_str("  ]\n}\n");
    out
}

fn check_or_write(file: &str, text: &str) {
    let path = fixtures_dir().join(file);
    if std::env::var("REMIT_WRITE_FIXTURES").as_deref() == Ok("1") {
        std::fs::create_dir_all(fixtures_dir()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with REMIT_WRITE_FIXTURES=1", path.display()));
    assert!(on_disk == text, "{} is out of date: run with REMIT_WRITE_FIXTURES=1 and review the diff", path.display());
}

#[test]
fn recovery_fixtures_are_current() {
    check_or_write("recovery.json", &render_recovery());
}

#[test]
fn admission_fixtures_are_current() {
    check_or_write("admission.json", &render_admission());
}

#[test]
fn error_fixtures_hit_their_codes() {
    let expected = [
        ("error/bad-header", 1u8),
        ("error/bad-version", 2),
        ("error/record-too-large", 3),
        ("error/bad-checksum", 4),
        ("error/bad-seq", 5),
        ("error/bad-kind", 6),
        ("error/malformed-payload", 7),
        ("error/impossible-order", 8),
        ("error/unknown-node", 9),
        ("error/duplicate-interrupt", 10),
        ("error/bad-node-table", 11),
        ("error/bad-link", 12),
        ("error/v1-after-v2", 2),
        ("error/done-without-attempt", 8),
        ("error/attempt-in-format-1", 6),
        ("error/kind-12", 6),
    ];
    let cases = recovery_cases();
    for (name, code) in expected {
        let case = cases.iter().find(|c| c.name == name).unwrap();
        let enc = recover(&case.log);
        assert_eq!((enc[0], enc[1]), (0, code), "{name}");
    }
    let reasons = admission_cases();
    let mut seen = std::collections::BTreeSet::new();
    for (_, log, req) in &reasons {
        seen.insert(admit(log, req)[1]);
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), (0..=9).collect::<Vec<u8>>());
}
