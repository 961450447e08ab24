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
use common::{encode, encode_log, frame, hex, Rec};
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
    with("error/bad-version", common::frame_with(2, 2, 2, 8, &[]));
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
    // Generated histories, every fourth prefix.
    for seed in [3u64, 11, 29] {
        let h = history(seed, 36);
        let (log, starts) = encode_log(&h.records);
        for (n, &s) in starts.iter().enumerate().step_by(4) {
            cases.push(Case { name: format!("generated/seed-{seed}/prefix-{n:02}"), log: log[..s].to_vec() });
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
