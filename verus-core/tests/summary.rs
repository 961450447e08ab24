//! Incremental recovery: the executable twin of `lemma_feed_in_any_split_is_recover`. Feeding a
//! log in any split (every cut point, random multi-cut splits, on valid histories of both
//! formats and on mutated logs) gives the recovery encoding of the whole log, and the summary
//! the whole log gives; admission from a summary equals admission from the log.

mod common;

use common::gen::{history, history_v2, mutate_bytes, mutate_records, Rng};
use common::{encode_log_v2, hex};
use proptest::prelude::*;
use remit_verus_core::*;

fn cfg(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// (recovery encoding, summary) of a fed encoding; panics (a test failure) if the summary was refused.
fn split_fed(fed: &[u8]) -> (Vec<u8>, Vec<u8>) {
    assert_eq!(fed.first(), Some(&1), "feed refused a summary a core wrote");
    let len = u32::from_le_bytes([fed[1], fed[2], fed[3], fed[4]]) as usize;
    (fed[5..5 + len].to_vec(), fed[5 + len..].to_vec())
}

/// durable_len of a recovery encoding that recovered, else None.
fn durable_len(recovery: &[u8]) -> Option<usize> {
    if recovery.first() != Some(&1) {
        return None;
    }
    Some(u32::from_le_bytes([recovery[6], recovery[7], recovery[8], recovery[9]]) as usize)
}

/// Every intermediate (cut, recovery), then the last recovery and summary.
type Pieces = (Vec<(usize, Vec<u8>)>, Vec<u8>, Vec<u8>);

/// Feed `log` cut at `cuts` (ascending byte positions), each time from the summary's durable
/// length; returns every intermediate recovery and the last (recovery, summary).
fn feed_in_pieces(log: &[u8], cuts: &[usize]) -> Pieces {
    let mut summary: Vec<u8> = Vec::new();
    let mut from = 0usize;
    let mut seen = Vec::new();
    for &cut in cuts.iter().chain(core::iter::once(&log.len())) {
        let (recovery, next) = split_fed(&feed(&summary, &log[from..cut.max(from)]));
        seen.push((cut, recovery.clone()));
        if let Some(d) = durable_len(&recovery) {
            from = d;
        }
        summary = next;
    }
    let (_, last_recovery) = seen.last().cloned().unwrap();
    (seen, last_recovery, summary)
}

fn whole_summary(log: &[u8]) -> Vec<u8> {
    split_fed(&feed(&[], log)).1
}

/// The split property at every cut point of `log`, plus the intermediate prefixes.
fn check_every_cut(log: &[u8]) {
    let whole = recover(log);
    let whole_sum = whole_summary(log);
    assert_eq!(split_fed(&feed(&[], log)).0, whole, "feed from the empty summary differs from recover");
    for cut in 0..=log.len() {
        let (seen, last, summary) = feed_in_pieces(log, &[cut]);
        assert_eq!(hex(&seen[0].1), hex(&recover(&log[..cut])), "prefix {cut} of {}", hex(log));
        assert_eq!(hex(&last), hex(&whole), "split at {cut} of {}", hex(log));
        if whole.first() == Some(&1) {
            assert_eq!(hex(&summary), hex(&whole_sum), "summary after split at {cut}");
        }
    }
}

#[test]
fn feeding_an_empty_log_gives_the_empty_summary() {
    assert_eq!(feed(&[], &[]), {
        let mut v = vec![1];
        let r = recover(&[]);
        v.extend_from_slice(&(r.len() as u32).to_le_bytes());
        v.extend_from_slice(&r);
        v
    });
}

#[test]
fn every_cut_of_valid_histories_recovers_as_the_whole() {
    for seed in 0..60u64 {
        let (log, _) = history(seed, 16).encode();
        check_every_cut(&log);
        let (log, _) = history_v2(seed, 16).encode();
        check_every_cut(&log);
    }
}

#[test]
fn every_cut_of_mutated_logs_recovers_as_the_whole() {
    for seed in 0..60u64 {
        let mut rng = Rng::new(seed);
        let (log, _) = history_v2(seed, 12).encode();
        check_every_cut(&mutate_bytes(&log, &mut rng));
        let records = mutate_records(&history_v2(seed, 12).records, &mut rng);
        check_every_cut(&encode_log_v2(&records).0);
    }
}

#[test]
fn a_summary_that_is_not_a_core_summary_is_refused_never_a_panic() {
    let (log, _) = history_v2(7, 20).encode();
    let summary = whole_summary(&log);
    assert!(!summary.is_empty());
    // Truncations and trailing bytes.
    for cut in 1..summary.len() {
        assert_eq!(feed(&summary[..cut], &[]), vec![0], "truncated summary at {cut}");
    }
    let mut longer = summary.clone();
    longer.push(0);
    assert_eq!(feed(&longer, &[]), vec![0]);
    assert_eq!(admit_from(&longer, &[3, 0, 0, 0, 0])[1], 11, "BAD_SUMMARY");
    // A version byte no core writes or reads (1, the layout before reserved interrupt ids, is read:
    // equivalence/summary-v1.test.ts, on both cores).
    for version in [0u8, 3, 255] {
        let mut wrong = summary.clone();
        wrong[0] = version;
        assert_eq!(feed(&wrong, &[]), vec![0], "version {version}");
    }
    // Any single byte changed: either refused or answered; never a panic.
    for i in 0..summary.len() {
        let mut changed = summary.clone();
        changed[i] ^= 0x5A;
        let _ = feed(&changed, &log[log.len().min(3)..]);
        let _ = admit_from(&changed, &[1, 1, 0, 0, 0, b'x']);
    }
}

/// Requests that exercise every admission rule at `log`'s head.
fn requests_for(log: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![vec![], vec![9], vec![1, 0, 0, 0, 0]];
    for seq in [0u32, 1, 2, 5, 40, u32::MAX] {
        out.push([&[3u8][..], &seq.to_le_bytes()].concat());
        out.push([&[2u8][..], &seq.to_le_bytes()].concat());
    }
    let (records, _) = {
        let mut r = Vec::new();
        let mut offset = 0;
        let mut seq = 0;
        let mut chain = Chain::START;
        while let Ok(Some(d)) = decode_record(log, offset, seq, chain) {
            r.push(d.record.clone());
            chain = chain.after(d.version, d.chain);
            offset = d.end;
            seq += 1;
        }
        (r, ())
    };
    let count = records.len() as u32;
    for seq in [count.wrapping_sub(1), count, count.wrapping_sub(2)] {
        out.push([&[3u8][..], &seq.to_le_bytes()].concat());
    }
    for r in records {
        if let Record::InterruptParked { interrupt_id, .. } = r {
            out.push([&[1u8][..], &(interrupt_id.len() as u32).to_le_bytes(), interrupt_id].concat());
        }
    }
    out.push([&[1u8][..], &1u32.to_le_bytes(), b"?"].concat());
    out
}

#[test]
fn admission_from_a_summary_is_admission_from_the_log() {
    for seed in 0..80u64 {
        let (log, _) = history_v2(seed, 20).encode();
        for cut in 0..=log.len() {
            let prefix = &log[..cut];
            let (recovery, summary) = split_fed(&feed(&[], prefix));
            if recovery.first() != Some(&1) {
                continue;
            }
            for request in requests_for(prefix) {
                let from_summary = admit_from(&summary, &request);
                let from_log = admit(prefix, &request);
                let is_fork = request.first() == Some(&2) && request.len() == 5;
                if from_summary[1] == 10 {
                    assert!(is_fork, "NEEDS_LOG only for FORK_AT");
                } else {
                    assert_eq!(hex(&from_summary), hex(&from_log), "request {} at cut {cut}", hex(&request));
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(cfg(256))]

    /// Any number of cuts, anywhere (record boundaries or inside records), on format-1, format-2
    /// and mutated logs: the last feed is the whole log's recovery; every intermediate feed is
    /// its prefix's; the summary is the whole log's.
    #[test]
    fn feeding_in_any_split_is_recovering_whole(seed in any::<u64>(), raw_cuts in proptest::collection::vec(any::<u16>(), 0..8), which in 0u8..3) {
        let mut rng = Rng::new(seed);
        let log = match which {
            0 => history(seed, 40).encode().0,
            1 => history_v2(seed, 40).encode().0,
            _ => mutate_bytes(&history_v2(seed, 40).encode().0, &mut rng),
        };
        let mut cuts: Vec<usize> = raw_cuts.iter().map(|c| *c as usize % (log.len() + 1)).collect();
        cuts.sort_unstable();
        let (seen, last, summary) = feed_in_pieces(&log, &cuts);
        for (cut, recovery) in &seen {
            prop_assert_eq!(hex(recovery), hex(&recover(&log[..*cut])));
        }
        let whole = recover(&log);
        prop_assert_eq!(hex(&last), hex(&whole));
        if whole.first() == Some(&1) {
            prop_assert_eq!(hex(&summary), hex(&whole_summary(&log)));
        }
    }

    /// One record at a time (what the sequencer does): identical to the whole at every step.
    #[test]
    fn feeding_record_by_record_is_recovering_whole(seed in any::<u64>()) {
        let (log, starts) = history_v2(seed, 60).encode();
        let (_, last, summary) = feed_in_pieces(&log, &starts);
        prop_assert_eq!(hex(&last), hex(&recover(&log)));
        prop_assert_eq!(hex(&summary), hex(&whole_summary(&log)));
    }
}
