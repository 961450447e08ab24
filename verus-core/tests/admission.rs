//! Admission twins: `admit` ensures `out@ == spec_admission_encoding(..)` (compared with the
//! model for every request kind on every prefix), `lemma_second_claim_refused` and
//! `lemma_accepted_claim_is_consumed`, plus one scenario per refusal reason.

mod common;

use common::gen::{history, mutate_records, Rng};
use common::model::{self, resume_request, seq_request};
use common::{encode, encode_log, Rec};
use proptest::prelude::*;
use remit_verus_core::*;

/// (verdict, reason, detail, seq, offset) of an admission encoding.
fn fields(enc: &[u8]) -> (u8, u8, u8, u32, u32) {
    assert_eq!(enc.len(), 11);
    let seq = u32::from_le_bytes(enc[3..7].try_into().unwrap());
    let offset = u32::from_le_bytes(enc[7..11].try_into().unwrap());
    (enc[0], enc[1], enc[2], seq, offset)
}

fn parked_ids(records: &[Rec]) -> Vec<Vec<u8>> {
    records
        .iter()
        .filter_map(|r| match r {
            Rec::InterruptParked { interrupt_id, .. } => Some(interrupt_id.clone()),
            _ => None,
        })
        .collect()
}

/// Every request worth asking of a log with `count` records.
fn requests_for(records: &[Rec], count: u32) -> Vec<Vec<u8>> {
    let mut reqs = vec![resume_request(b"never-parked"), vec![], vec![1], vec![4, 0, 0, 0, 0], vec![2, 0, 0, 0], vec![3, 0, 0, 0, 0, 0]];
    reqs.push(resume_request(&[b'x'; 1025]));
    reqs.push(vec![1, 0, 0, 0, 0]);
    for id in parked_ids(records) {
        reqs.push(resume_request(&id));
        let mut trailing = resume_request(&id);
        trailing.push(0);
        reqs.push(trailing);
    }
    for n in 0..=count + 1 {
        reqs.push(seq_request(2, n));
        reqs.push(seq_request(3, n));
    }
    reqs.push(seq_request(2, u32::MAX));
    reqs.push(seq_request(3, u32::MAX));
    reqs
}

#[test]
fn admit_equals_the_model_for_every_request_on_every_prefix() {
    for seed in 0..60u64 {
        let h = history(seed, 40);
        let (log, starts) = encode_log(&h.records);
        for n in 0..=h.records.len() {
            let prefix = &log[..starts[n]];
            for req in requests_for(&h.records[..n], n as u32) {
                assert_eq!(admit(prefix, &req), model::admission_encoding(prefix, &req), "seed {seed} prefix {n} req {req:?}");
            }
        }
    }
}

/// Twins of `lemma_second_claim_refused` and `lemma_accepted_claim_is_consumed`.
#[test]
fn a_claimed_interrupt_refuses_every_second_claim() {
    let mut claims_checked = 0;
    let mut accepts_checked = 0;
    for seed in 0..300u64 {
        let h = history(seed, 50);
        let (log, starts) = encode_log(&h.records);
        for n in 1..=h.records.len() {
            let prefix = &log[..starts[n]];
            // Every claim already in the prefix is refused, naming the claim record.
            for (i, r) in h.records[..n].iter().enumerate() {
                if let Rec::ResumeClaimed { interrupt_id, .. } = r {
                    let got = fields(&admit(prefix, &resume_request(interrupt_id)));
                    assert_eq!(got, (2, 1, 0, i as u32, starts[i] as u32), "seed {seed}");
                    claims_checked += 1;
                }
            }
            // Where a claim is accepted, appending it makes the same claim (any value) refused.
            if let Some(Rec::InterruptParked { interrupt_id, .. }) = h.records[..n].last() {
                let req = resume_request(interrupt_id);
                assert_eq!(fields(&admit(prefix, &req)), (1, 0, 0, n as u32, starts[n] as u32));
                let mut claimed = prefix.to_vec();
                claimed.extend_from_slice(&encode(n as u32, &Rec::ResumeClaimed { interrupt_id: interrupt_id.clone(), value: b"v".to_vec() }));
                assert_eq!(fields(&admit(&claimed, &req)), (2, 1, 0, n as u32, starts[n] as u32));
                accepts_checked += 1;
            }
        }
    }
    assert!(claims_checked > 100 && accepts_checked > 50, "too few cases: {claims_checked} {accepts_checked}");
}

#[test]
fn each_refusal_reason_has_the_documented_seq_and_offset() {
    let records = vec![
        Rec::RunStarted {
            run_id: b"r".to_vec(),
            workflow: b"w".to_vec(),
            version: vec![],
            fingerprint: vec![],
            definition: vec![],
            nodes: vec![(b"a".to_vec(), 1), (b"i".to_vec(), 3)],
            start_node: b"a".to_vec(),
            state: vec![],
        },
        Rec::NodeCompleted { node: b"a".to_vec(), next: b"i".to_vec(), state_form: 0, state: vec![] },
        Rec::InterruptParked { node: b"i".to_vec(), interrupt_id: b"x".to_vec() },
    ];
    let (log, starts) = encode_log(&records);
    let len = log.len() as u32;
    let at = |req: &[u8]| fields(&admit(&log, req));
    assert_eq!(at(&resume_request(b"x")), (1, 0, 0, 3, len));
    assert_eq!(at(&resume_request(b"y")), (2, 3, 0, 2, len)); // UNKNOWN_INTERRUPT
    assert_eq!(at(&seq_request(2, 1)), (1, 0, 0, 2, starts[2] as u32)); // fork after record 1
    assert_eq!(at(&seq_request(2, 0)), (1, 0, 0, 1, starts[1] as u32));
    assert_eq!(at(&seq_request(2, 2)), (2, 4, 0, 2, starts[2] as u32)); // NOT_A_CHECKPOINT
    assert_eq!(at(&seq_request(2, 3)), (2, 5, 0, 2, len)); // BEYOND_HEAD
    assert_eq!(at(&seq_request(3, 2)), (1, 0, 0, 3, len));
    assert_eq!(at(&seq_request(3, 3)), (2, 5, 0, 2, len));
    assert_eq!(at(&seq_request(3, 1)), (2, 6, 0, 2, len)); // IMPLICIT_FORK
    assert_eq!(at(&[9]), (2, 9, 0, 0, 0)); // BAD_REQUEST
    // NOT_PARKED: the run is at a pure node.
    assert_eq!(fields(&admit(&log[..starts[1]], &resume_request(b"x"))), (2, 2, 0, 0, starts[1] as u32));
    // NO_RUN: empty log, and a log that is only a torn tail.
    assert_eq!(fields(&admit(&[], &resume_request(b"x"))), (2, 8, 0, 0, 0));
    assert_eq!(fields(&admit(&log[..5], &resume_request(b"x"))), (2, 8, 0, 0, 0));
    // LOG_INVALID outranks a bad request and carries the recovery error.
    let mut bad = log.clone();
    bad[starts[1] + 13] ^= 1;
    assert_eq!(fields(&admit(&bad, &[])), (2, 7, 4, 1, starts[1] as u32));
    assert_eq!(log_error_of(&admit_request(&bad, &[])), Some(LogErrorCode::BadChecksum));
    // NO_RUN outranks a bad request.
    assert_eq!(fields(&admit(&[], &[])), (2, 8, 0, 0, 0));
}

#[test]
fn request_parser_accepts_exactly_the_documented_shapes() {
    assert_eq!(parse_request(&resume_request(b"id")), Some(AdmissionRequest::Resume { interrupt_id: b"id" }));
    assert_eq!(parse_request(&seq_request(2, 7)), Some(AdmissionRequest::ForkAt { seq: 7 }));
    assert_eq!(parse_request(&seq_request(3, 7)), Some(AdmissionRequest::ContinueFrom { seq: 7 }));
    for bad in [vec![], vec![1], vec![2, 0, 0, 0], vec![2, 0, 0, 0, 0, 0], vec![0, 0, 0, 0, 0], resume_request(b""), resume_request(&[1; 1025])] {
        assert_eq!(parse_request(&bad), None, "{bad:?}");
    }
    assert!(parse_request(&resume_request(&[1; 1024])).is_some());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Admission on broken logs and arbitrary requests: total, and equal to the model.
    #[test]
    fn admit_equals_the_model_on_mutated_logs_and_random_requests(seed in any::<u64>(), req in proptest::collection::vec(any::<u8>(), 0..12)) {
        let h = history(seed, 30);
        let mut rng = Rng::new(seed);
        let records = if rng.chance(1, 2) { mutate_records(&h.records, &mut rng) } else { h.records.clone() };
        let (log, _) = encode_log(&records);
        prop_assert_eq!(admit(&log, &req), model::admission_encoding(&log, &req));
        for r in requests_for(&records, records.len() as u32) {
            prop_assert_eq!(admit(&log, &r), model::admission_encoding(&log, &r));
        }
    }
}
