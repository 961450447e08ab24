//! Codec twins: CRC (`crc32c` ensures `spec_crc32c`), the roundtrip lemma
//! (`lemma_decode_encode`), framing classification (`read_frame` ensures `spec_read_frame`).

mod common;

use common::gen::Rng;
use common::{encode, frame, frame_with, model, Rec};
use proptest::prelude::*;
use remit_verus_core::crc::{crc32c_bitwise, crc32c_update};
use remit_verus_core::*;

/// A record of the given kind with random well-formed fields.
fn random_record(rng: &mut Rng, kind: u8) -> Rec {
    match kind {
        1 => {
            let count = rng.below(5) as usize;
            let nodes = (0..count).map(|_| (rng.name(20), rng.next() as u8)).collect();
            Rec::RunStarted {
                run_id: rng.name(40),
                workflow: rng.name(40),
                version: rng.bytes(8),
                fingerprint: rng.bytes(32),
                definition: rng.bytes(64),
                nodes,
                start_node: rng.name(20),
                state: rng.bytes(64),
            }
        }
        2 => Rec::NodeCompleted { node: rng.name(20), next: rng.bytes(20), state_form: rng.below(2) as u8, state: rng.bytes(64) },
        3 => Rec::EffectIntent { node: rng.name(20), key: rng.name(64) },
        4 => Rec::EffectDone { node: rng.name(20), key: rng.name(64), result: rng.bytes(64) },
        5 => Rec::InterruptParked { node: rng.name(20), interrupt_id: rng.name(64) },
        6 => Rec::ResumeClaimed { interrupt_id: rng.name(64), value: rng.bytes(64) },
        7 => Rec::Forked { source_run_id: rng.name(40), source_seq: rng.next() as u32, run_id: rng.name(40), intent: rng.bytes(64) },
        8 => Rec::RunCompleted,
        _ => Rec::RunFailed { node: rng.bytes(20), code: rng.bytes(20), message: rng.bytes(64) },
    }
}

/// The crate's borrowed record for an owned one.
fn to_core(r: &Rec) -> Record<'_> {
    match r {
        Rec::RunStarted { run_id, workflow, version, fingerprint, definition, nodes, start_node, state } => {
            Record::RunStarted(RunStarted {
                run_id,
                workflow,
                version,
                fingerprint,
                definition,
                nodes: nodes.iter().map(|(name, kind)| NodeEntry { name, kind: *kind }).collect(),
                start_node,
                state,
            })
        }
        Rec::NodeCompleted { node, next, state_form, state } => Record::NodeCompleted { node, next, state_form: *state_form, state },
        Rec::EffectIntent { node, key } => Record::EffectIntent { node, key },
        Rec::EffectDone { node, key, result } => Record::EffectDone { node, key, result },
        Rec::InterruptParked { node, interrupt_id } => Record::InterruptParked { node, interrupt_id },
        Rec::ResumeClaimed { interrupt_id, value } => Record::ResumeClaimed { interrupt_id, value },
        Rec::Forked { source_run_id, source_seq, run_id, intent } => Record::Forked { source_run_id, source_seq: *source_seq, run_id, intent },
        Rec::RunCompleted => Record::RunCompleted,
        Rec::RunFailed { node, code, message } => Record::RunFailed { node, code, message },
    }
}

#[test]
fn crc_check_value_matches_the_spec() {
    assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    assert_eq!(crc32c_bitwise(b"123456789"), 0xE306_9283);
    assert_eq!(crc32c(b""), 0);
}

#[test]
fn header_check_detects_every_single_byte_change() {
    // CRC is affine, so for a fixed length the change in the check depends only on the error
    // pattern: checking one header against all 10 x 255 single-byte errors covers all headers.
    let header = [7u8, 0, 0, 0, 3, 0, 0, 0, 1, 2];
    let base = crc32c(&header) & 0xFFFF;
    let mut undetected = 0;
    for pos in 0..10 {
        for delta in 1..=255u8 {
            let mut h = header;
            h[pos] ^= delta;
            if crc32c(&h) & 0xFFFF == base {
                undetected += 1;
            }
        }
    }
    assert_eq!(undetected, 0);
}

#[test]
fn every_kind_roundtrips_and_matches_the_independent_encoder() {
    let mut rng = Rng::new(1);
    for kind in 1..=9u8 {
        for _ in 0..200 {
            let rec = random_record(&mut rng, kind);
            let seq = rng.next() as u32;
            let bytes = encode_record(seq, &to_core(&rec)).expect("well-formed record encodes");
            assert_eq!(bytes, encode(seq, &rec), "crate encoder differs from the naive encoder");
            let decoded = decode_record(&bytes, 0, seq).expect("decodes").expect("a record");
            assert_eq!(decoded.record, to_core(&rec));
            assert_eq!(decoded.end, bytes.len());
            assert_eq!(decoded.seq, seq);
        }
    }
}

#[test]
fn encoder_refuses_what_the_decoder_would_reject_and_names_the_field() {
    let long = vec![b'x'; 1025];
    let cases: Vec<(Record<'_>, EncodeError)> = vec![
        (Record::EffectIntent { node: b"", key: b"k" }, EncodeError::EmptyName { field: "node" }),
        (Record::EffectIntent { node: b"n", key: &long }, EncodeError::NameTooLong { field: "key" }),
        (Record::NodeCompleted { node: b"n", next: b"", state_form: 2, state: b"" }, EncodeError::BadStateForm),
        (Record::ResumeClaimed { interrupt_id: b"", value: b"" }, EncodeError::EmptyName { field: "interrupt_id" }),
    ];
    for (record, expected) in cases {
        assert_eq!(encode_record(0, &record), Err(expected));
    }
    // A 1024-byte name is still a name.
    assert!(encode_record(0, &Record::EffectIntent { node: &long[..1024], key: b"k" }).is_ok());
}

#[test]
fn framing_classification_follows_the_documented_order() {
    let good = encode(0, &Rec::RunCompleted);
    // 1. empty, 2. short header: clean end and torn tail.
    assert_eq!(read_frame(&[], 0, 0), Frame::End);
    assert_eq!(read_frame(&good[..11], 0, 0), Frame::Torn);
    // 3. header check.
    let mut bad = good.clone();
    bad[10] ^= 1;
    assert_eq!(read_frame(&bad, 0, 0), Frame::Corrupt { code: LogErrorCode::BadHeader, kind: 0 });
    // 4. version, then length (both with a valid header check).
    let v2 = frame_with(0, 0, 2, 8, &[]);
    assert_eq!(read_frame(&v2, 0, 0), Frame::Corrupt { code: LogErrorCode::BadVersion, kind: 8 });
    let mut huge = Vec::new();
    huge.extend_from_slice(&0x4000_0000u32.to_le_bytes());
    huge.extend_from_slice(&0u32.to_le_bytes());
    huge.extend_from_slice(&[1, 3]);
    let check = (crc32c(&huge) & 0xFFFF) as u16;
    huge.extend_from_slice(&check.to_le_bytes());
    assert_eq!(read_frame(&huge, 0, 0), Frame::Corrupt { code: LogErrorCode::RecordTooLarge, kind: 3 });
    // 5. header intact, record incomplete: torn.
    assert_eq!(read_frame(&good[..good.len() - 1], 0, 0), Frame::Torn);
    // 6. record CRC.
    let mut bad = good.clone();
    *bad.last_mut().unwrap() ^= 0x80;
    assert_eq!(read_frame(&bad, 0, 0), Frame::Corrupt { code: LogErrorCode::BadChecksum, kind: 8 });
    // 7. seq.
    assert_eq!(read_frame(&good, 0, 1), Frame::Corrupt { code: LogErrorCode::BadSeq, kind: 8 });
    // 8. kind.
    let k0 = frame(0, 0, &[]);
    assert_eq!(read_frame(&k0, 0, 0), Frame::Corrupt { code: LogErrorCode::BadKind, kind: 0 });
    let k10 = frame(0, 10, &[]);
    assert_eq!(read_frame(&k10, 0, 0), Frame::Corrupt { code: LogErrorCode::BadKind, kind: 10 });
}

#[test]
fn payload_parsing_rejects_leftovers_overruns_and_bad_names() {
    // Trailing byte after RUN_COMPLETED's empty payload.
    assert_eq!(decode_payload(8, &[0]), Err(LogErrorCode::MalformedPayload));
    // A bytes field running past the end.
    assert_eq!(decode_payload(9, &[5, 0, 0, 0, 1]), Err(LogErrorCode::MalformedPayload));
    // Empty name.
    let mut p = Vec::new();
    common::put_bytes(&mut p, b"");
    common::put_bytes(&mut p, b"k");
    assert_eq!(decode_payload(3, &p), Err(LogErrorCode::MalformedPayload));
    // state_form 2.
    let mut p = Vec::new();
    common::put_bytes(&mut p, b"n");
    common::put_bytes(&mut p, b"");
    p.push(2);
    common::put_bytes(&mut p, b"");
    assert_eq!(decode_payload(2, &p), Err(LogErrorCode::MalformedPayload));
    // A node count far larger than the payload: malformed, and no huge reservation.
    let mut p = Vec::new();
    for f in [&b"r"[..], b"w", b"", b"", b""] {
        common::put_bytes(&mut p, f);
    }
    p.extend_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(decode_payload(1, &p), Err(LogErrorCode::MalformedPayload));
    assert_eq!(decode_payload(0, &[]), Err(LogErrorCode::BadKind));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn table_crc_equals_bitwise_crc(bytes in proptest::collection::vec(any::<u8>(), 0..300), split in 0usize..300) {
        prop_assert_eq!(crc32c(&bytes), crc32c_bitwise(&bytes));
        let cut = split.min(bytes.len());
        let joined = crc32c_update(crc32c_update(0xFFFF_FFFF, &bytes[..cut]), &bytes[cut..]);
        prop_assert_eq!(joined, crc32c_update(0xFFFF_FFFF, &bytes));
    }

    #[test]
    fn decode_of_encode_is_identity(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let kind = 1 + rng.below(9) as u8;
        let rec = random_record(&mut rng, kind);
        let seq = rng.next() as u32;
        let bytes = encode_record(seq, &to_core(&rec)).unwrap();
        prop_assert_eq!(&bytes, &encode(seq, &rec));
        let decoded = decode_record(&bytes, 0, seq).unwrap().unwrap();
        prop_assert_eq!(decoded.record, to_core(&rec));
    }

    #[test]
    fn encode_of_decode_is_identity(kind in 1u8..=9, payload in proptest::collection::vec(any::<u8>(), 0..64)) {
        // Whatever payload decodes re-encodes to itself (the encoding is canonical).
        if let Ok(record) = decode_payload(kind, &payload) {
            prop_assert_eq!(encode_payload(&record).unwrap(), payload.clone());
        }
        // And the crate's decoder agrees with the model's on every payload.
        prop_assert_eq!(decode_payload(kind, &payload).is_ok(), model::decode_payload(kind, &payload).is_ok());
    }
}

/// The sliced loop has three phases (16-byte blocks, one 8-byte step, single bytes): every
/// length up to 80 from every start offset up to 17 crosses each phase boundary, and every
/// split point shows that feeding a message in pieces equals feeding it at once.
#[test]
fn every_length_and_offset_matches_the_bitwise_definition() {
    let data: Vec<u8> = (0u32..160).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    for start in 0..=17usize {
        for len in 0..=80usize {
            let piece = &data[start..start + len];
            assert_eq!(crc32c(piece), crc32c_bitwise(piece), "start {start} len {len}");
            for cut in [0, 1, 7, 8, 15, 16, 17, len / 2, len] {
                if cut > len {
                    continue;
                }
                let joined = crc32c_update(crc32c_update(0xFFFF_FFFF, &piece[..cut]), &piece[cut..]) ^ 0xFFFF_FFFF;
                assert_eq!(joined, crc32c_bitwise(piece), "start {start} len {len} cut {cut}");
            }
        }
    }
}
