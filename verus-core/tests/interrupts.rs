//! The interrupt table against a model (one BTreeMap): a table taken from an ascending prefix of
//! entries (as a summary decodes them) and then parked and claimed into answers every lookup,
//! iterates in ascending order and compares equal exactly as the model does, wherever the split
//! between its decoded half and its added half falls.

use std::collections::BTreeMap;

use proptest::prelude::*;
use remit_verus_core::interrupts::InterruptTable;
use remit_verus_core::Position;

#[derive(Clone, Debug)]
enum Op {
    Park(u8),
    Claim(u8, u32),
}

/// Small id alphabet so that ops collide: ids "i0".."i15", with "i1" a prefix of "i10".."i15".
fn id_of(n: u8) -> Vec<u8> {
    format!("i{}", n % 16).into_bytes()
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![any::<u8>().prop_map(Op::Park), (any::<u8>(), any::<u32>()).prop_map(|(n, s)| Op::Claim(n, s))]
}

type Model = BTreeMap<Vec<u8>, Option<Position>>;

fn apply_model(model: &mut Model, op: &Op) -> Option<bool> {
    match op {
        Op::Park(n) => {
            let id = id_of(*n);
            if model.contains_key(&id) {
                return Some(false);
            }
            model.insert(id, None);
            Some(true)
        }
        Op::Claim(n, s) => {
            model.insert(id_of(*n), Some(Position { seq: *s, offset: s.wrapping_mul(3) }));
            None
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn table_matches_a_single_map(before in proptest::collection::vec(op(), 0..40), after in proptest::collection::vec(op(), 0..40)) {
        let ids: Vec<Vec<u8>> = (0..16).map(id_of).collect();
        let mut model = Model::new();
        for o in &before {
            apply_model(&mut model, o);
        }
        // The decoded half: the model's entries so far, ascending (what a summary holds).
        let stored = |k: &Vec<u8>| ids.iter().find(|i| *i == k).unwrap().as_slice();
        let decoded: Vec<(&[u8], Option<Position>)> = model.iter().map(|(k, v)| (stored(k), *v)).collect();
        let mut table = InterruptTable::from_ascending(decoded).unwrap();
        let mut whole = InterruptTable::new();
        for (k, v) in &model {
            whole.park(stored(k));
            if let Some(p) = v {
                whole.claim(stored(k), *p);
            }
        }
        for o in &after {
            let expected = apply_model(&mut model, o);
            match o {
                Op::Park(n) => {
                    let id = &ids[(*n % 16) as usize];
                    prop_assert_eq!(Some(table.park(id)), expected);
                    whole.park(id);
                }
                Op::Claim(n, s) => {
                    let id = &ids[(*n % 16) as usize];
                    let at = Position { seq: *s, offset: s.wrapping_mul(3) };
                    table.claim(id, at);
                    whole.claim(id, at);
                }
            }
        }
        for id in &ids {
            prop_assert_eq!(table.get(id), model.get(id).copied());
        }
        prop_assert_eq!(table.get(b"absent"), None);
        prop_assert_eq!(table.len(), model.len());
        let listed: Vec<(Vec<u8>, Option<Position>)> = table.iter().map(|(k, v)| (k.to_vec(), v)).collect();
        let expected: Vec<(Vec<u8>, Option<Position>)> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
        prop_assert_eq!(listed, expected);
        // Same entries split differently (all added, none decoded): equal.
        prop_assert_eq!(&table, &whole);
    }
}

#[test]
fn entries_out_of_order_are_refused() {
    assert!(InterruptTable::from_ascending(vec![(b"a".as_slice(), None), (b"b".as_slice(), None)]).is_some());
    assert!(InterruptTable::from_ascending(vec![(b"b".as_slice(), None), (b"a".as_slice(), None)]).is_none());
    assert!(InterruptTable::from_ascending(vec![(b"a".as_slice(), None), (b"a".as_slice(), None)]).is_none(), "a repeated id");
    assert!(InterruptTable::from_ascending(vec![(b"ab".as_slice(), None), (b"a".as_slice(), None)]).is_none(), "a prefix sorts first");
}

#[test]
fn tables_with_different_entries_differ() {
    let mut a = InterruptTable::new();
    let mut b = InterruptTable::new();
    assert!(a.park(b"x"));
    assert!(b.park(b"x"));
    assert_eq!(a, b);
    b.claim(b"x", Position { seq: 4, offset: 90 });
    assert_ne!(a, b);
    assert!(a.park(b"y"));
    assert!(!a.park(b"y"), "a second park of one id is refused");
    assert_ne!(a, b);
}
