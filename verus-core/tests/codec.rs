//! Codec twins: CRC (`crc32c` ensures `spec_crc32c`), the roundtrip lemma
//! (`lemma_decode_encode`), framing classification (`read_frame` ensures `spec_read_frame`).

mod common;

use common::gen::Rng;
use common::{encode, encode_v2, frame, frame_v2, frame_with, link, model, Rec};
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
        9 => Rec::RunFailed { node: rng.bytes(20), code: rng.bytes(20), message: rng.bytes(64) },
        10 => Rec::EffectAttempt { node: rng.name(20), key: rng.name(64), attempt: rng.next() as u32, lease: rng.bytes(64) },
        _ => Rec::EffectReleased { node: rng.name(20), key: rng.name(64), attempt: rng.next() as u32, reason: rng.bytes(64) },
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
        Rec::EffectAttempt { node, key, attempt, lease } => Record::EffectAttempt { node, key, attempt: *attempt, lease },
        Rec::EffectReleased { node, key, attempt, reason } => Record::EffectReleased { node, key, attempt: *attempt, reason },
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
    for kind in 1..=11u8 {
        for _ in 0..200 {
            let rec = random_record(&mut rng, kind);
            let seq = rng.next() as u32;
            let prev = rng.next() as u32;
            // Format 2, chained to `prev`: every kind.
            let bytes = encode_record_v2(seq, prev, &to_core(&rec)).expect("well-formed record encodes");
            assert_eq!(bytes, encode_v2(seq, prev, &rec), "crate encoder differs from the naive encoder (v2)");
            let chain = Chain { prev, v2_seen: rng.chance(1, 2) };
            let decoded = decode_record(&bytes, 0, seq, chain).expect("decodes").expect("a record");
            assert_eq!(decoded.record, to_core(&rec));
            assert_eq!((decoded.end, decoded.seq, decoded.version), (bytes.len(), seq, 2));
            assert_eq!(decoded.chain, link(prev, u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap())));
            // Format 1: kinds 1..9 only (10 and 11 are BAD_KIND there).
            let bytes = encode_record(seq, &to_core(&rec)).expect("well-formed record encodes");
            assert_eq!(bytes, encode(seq, &rec), "crate encoder differs from the naive encoder");
            let decoded = decode_record(&bytes, 0, seq, Chain::START);
            if kind <= 9 {
                let decoded = decoded.expect("decodes").expect("a record");
                assert_eq!(decoded.record, to_core(&rec));
                assert_eq!((decoded.end, decoded.seq, decoded.version), (bytes.len(), seq, 1));
                assert_eq!(decoded.chain, u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap()));
            } else {
                assert_eq!(decoded.map_err(|e| e.code), Err(LogErrorCode::BadKind));
            }
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
    let start = Chain::START;
    let good = encode(0, &Rec::RunCompleted);
    let good_crc = u32::from_le_bytes(good[good.len() - 4..].try_into().unwrap());
    // 1. empty, 2. short header: clean end and torn tail.
    assert_eq!(read_frame(&[], 0, 0, start), Frame::End);
    assert_eq!(read_frame(&good[..11], 0, 0, start), Frame::Torn);
    // 3. header check.
    let mut bad = good.clone();
    bad[10] ^= 1;
    assert_eq!(read_frame(&bad, 0, 0, start), Frame::Corrupt { code: LogErrorCode::BadHeader, kind: 0 });
    // 4. version (3 never; 1 not after a format-2 record), then length.
    let v3 = frame_with(0, 0, 3, 8, &[]);
    assert_eq!(read_frame(&v3, 0, 0, start), Frame::Corrupt { code: LogErrorCode::BadVersion, kind: 8 });
    let after_v2 = Chain { prev: 7, v2_seen: true };
    assert_eq!(read_frame(&good, 0, 0, after_v2), Frame::Corrupt { code: LogErrorCode::BadVersion, kind: 8 });
    assert_eq!(read_frame(&good, 0, 0, Chain { prev: 7, v2_seen: false }), Frame::Sound { version: 1, kind: 8, payload: &[], end: 16, chain: good_crc });
    let mut huge = Vec::new();
    huge.extend_from_slice(&0x4000_0000u32.to_le_bytes());
    huge.extend_from_slice(&0u32.to_le_bytes());
    huge.extend_from_slice(&[2, 3]);
    let check = (crc32c(&huge) & 0xFFFF) as u16;
    huge.extend_from_slice(&check.to_le_bytes());
    assert_eq!(read_frame(&huge, 0, 0, start), Frame::Corrupt { code: LogErrorCode::RecordTooLarge, kind: 3 });
    // 5. header intact, record incomplete: torn (a format-2 record without its link too).
    assert_eq!(read_frame(&good[..good.len() - 1], 0, 0, start), Frame::Torn);
    let good2 = frame_v2(0, 0, 8, &[]);
    for cut in 12..good2.len() {
        assert_eq!(read_frame(&good2[..cut], 0, 0, start), Frame::Torn, "v2 cut at {cut}");
    }
    // 6. record CRC.
    let mut bad = good.clone();
    *bad.last_mut().unwrap() ^= 0x80;
    assert_eq!(read_frame(&bad, 0, 0, start), Frame::Corrupt { code: LogErrorCode::BadChecksum, kind: 8 });
    // 7. link: chained to another predecessor, or the link bytes damaged.
    assert!(matches!(read_frame(&good2, 0, 0, start), Frame::Sound { version: 2, kind: 8, .. }));
    assert_eq!(read_frame(&good2, 0, 0, Chain { prev: 1, v2_seen: true }), Frame::Corrupt { code: LogErrorCode::BadLink, kind: 8 });
    let mut bad = good2.clone();
    *bad.last_mut().unwrap() ^= 1;
    assert_eq!(read_frame(&bad, 0, 0, start), Frame::Corrupt { code: LogErrorCode::BadLink, kind: 8 });
    // ... checked before the seq: a record copied to another position fails its link first.
    assert_eq!(read_frame(&frame_v2(5, 9, 8, &[]), 0, 0, start), Frame::Corrupt { code: LogErrorCode::BadLink, kind: 8 });
    // 8. seq.
    assert_eq!(read_frame(&good, 0, 1, start), Frame::Corrupt { code: LogErrorCode::BadSeq, kind: 8 });
    assert_eq!(read_frame(&good2, 0, 1, start), Frame::Corrupt { code: LogErrorCode::BadSeq, kind: 8 });
    // 9. kind: 1..9 in format 1, 1..11 in format 2.
    let k0 = frame(0, 0, &[]);
    assert_eq!(read_frame(&k0, 0, 0, start), Frame::Corrupt { code: LogErrorCode::BadKind, kind: 0 });
    let k10 = frame(0, 10, &[]);
    assert_eq!(read_frame(&k10, 0, 0, start), Frame::Corrupt { code: LogErrorCode::BadKind, kind: 10 });
    assert!(matches!(read_frame(&frame_v2(0, 0, 10, &[]), 0, 0, start), Frame::Sound { version: 2, kind: 10, .. }));
    assert!(matches!(read_frame(&frame_v2(0, 0, 11, &[]), 0, 0, start), Frame::Sound { version: 2, kind: 11, .. }));
    assert_eq!(read_frame(&frame_v2(0, 0, 12, &[]), 0, 0, start), Frame::Corrupt { code: LogErrorCode::BadKind, kind: 12 });
}

/// Twin of `lemma_link_is_injective_in_prev` and `lemma_record_after_another_predecessor_is_bad_link`:
/// the link is injective in the predecessor's chain value (checked on 2^16 predecessors sharing a
/// record_crc, and on random pairs), so a record read after any other predecessor is BAD_LINK.
#[test]
fn a_record_after_another_predecessor_is_always_bad_link() {
    let mut seen = std::collections::HashSet::new();
    for prev in 0..=0xFFFFu32 {
        assert!(seen.insert(link(prev.wrapping_mul(0x9E37_79B9), 0xDEAD_BEEF)), "link collision at {prev}");
    }
    let mut rng = Rng::new(12);
    for _ in 0..20_000 {
        let (a, b, c) = (rng.next() as u32, rng.next() as u32, rng.next() as u32);
        if a != b {
            assert_ne!(link(a, c), link(b, c));
            assert_ne!(link_of(a, c), link_of(b, c));
        }
        assert_eq!(link_of(a, c), link(a, c));
    }
    for kind in 1..=11u8 {
        let rec = random_record(&mut rng, kind);
        let (seq, prev) = (rng.next() as u32, rng.next() as u32);
        let other = prev ^ (1 + rng.below(u32::MAX as u64) as u32);
        let bytes = encode_v2(seq, prev, &rec);
        let frame = read_frame(&bytes, 0, seq, Chain { prev: other, v2_seen: rng.chance(1, 2) });
        assert_eq!(frame, Frame::Corrupt { code: LogErrorCode::BadLink, kind });
    }
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
    assert_eq!(decode_payload(12, &[]), Err(LogErrorCode::BadKind));
    // EFFECT_ATTEMPT: node, key, a u32 attempt, lease bytes; a short attempt is malformed.
    let mut p = Vec::new();
    common::put_bytes(&mut p, b"n");
    common::put_bytes(&mut p, b"k");
    p.extend_from_slice(&[1, 0, 0]);
    assert_eq!(decode_payload(10, &p), Err(LogErrorCode::MalformedPayload));
    p.push(0);
    common::put_bytes(&mut p, b"{}");
    assert_eq!(decode_payload(10, &p), Ok(Record::EffectAttempt { node: b"n", key: b"k", attempt: 1, lease: b"{}" }));
    assert_eq!(decode_payload(11, &p), Ok(Record::EffectReleased { node: b"n", key: b"k", attempt: 1, reason: b"{}" }));
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
        let kind = 1 + rng.below(11) as u8;
        let rec = random_record(&mut rng, kind);
        let seq = rng.next() as u32;
        let prev = rng.next() as u32;
        let bytes = encode_record_v2(seq, prev, &to_core(&rec)).unwrap();
        prop_assert_eq!(&bytes, &encode_v2(seq, prev, &rec));
        let decoded = decode_record(&bytes, 0, seq, Chain { prev, v2_seen: true }).unwrap().unwrap();
        prop_assert_eq!(decoded.record, to_core(&rec));
        if kind <= 9 {
            let bytes = encode_record(seq, &to_core(&rec)).unwrap();
            prop_assert_eq!(&bytes, &encode(seq, &rec));
            let decoded = decode_record(&bytes, 0, seq, Chain::START).unwrap().unwrap();
            prop_assert_eq!(decoded.record, to_core(&rec));
        }
    }

    #[test]
    fn encode_of_decode_is_identity(kind in 1u8..=11, payload in proptest::collection::vec(any::<u8>(), 0..64)) {
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
