//! The interrupt ids a run has parked, each with the position of its claim if claimed; only the
//! ids that are not reserved (`name@seq`, `recovery::reserved_interrupt_id`): a reserved id is
//! unique by its seq and its claim is the record after its park, so it is not listed, and a run
//! whose ids the shell wrote keeps this table empty.
//!
//! Why not one `BTreeMap`: a fold that resumes from a summary starts with every id the run ever
//! parked. Building a map of them cost one allocation and about log2(n) comparisons per id at
//! every feed and admission, so a run that parks once per cycle paid O(cycles) per step. The
//! summary lists the ids already in ascending order, so they are taken as one sorted vector
//! (`base`, checked in one pass) and only the ids parked since go into a map (`added`, disjoint
//! from `base`). A whole-log recovery starts with an empty `base`: every id goes to the map.
//! Iteration merges the two in ascending bytewise order, the summary's canonical order.
//!
//! Why `added` is a hash map (hashbrown), not a `BTreeMap`: a whole-log recovery of 10^6 records
//! that park 71,000 ids spent about 40 % of its time inserting them into a `BTreeMap` and comparing
//! their bytes (a CPU profile of the Wasm core with names kept), more than the CRC-32C of every
//! byte. The order is only needed when a summary is written: `iter` sorts the ids parked since the
//! summary was read (few, on the sequencer's path), and `recover`, which writes no summary, never
//! sorts. The hasher is foldhash's with a fixed seed: the core has no randomness and no global
//! state, so a log whose ids were crafted to collide can slow its own recovery (not change its
//! answer); whoever can write the log can already damage the run.
//! While nothing was parked or claimed since the decode, the table also keeps the entries' bytes
//! as the summary held them: the next summary copies them instead of writing every entry again
//! (the entry encoding is canonical, so the copy is byte for byte what writing them would give).

use alloc::vec::Vec;
use core::fmt;
use core::iter::Peekable;
use foldhash::fast::FixedState;
use hashbrown::HashMap;

use crate::recovery::Position;

/// One parked id and its claim (None while unclaimed).
pub type InterruptEntry<'a> = (&'a [u8], Option<Position>);

#[derive(Clone, Default)]
pub struct InterruptTable<'a> {
    /// Strictly ascending by id (as decoded from a summary).
    base: Vec<InterruptEntry<'a>>,
    /// Ids parked after `base` was taken; none of them is in `base`. Unordered.
    added: HashMap<&'a [u8], Option<Position>, FixedState>,
    /// The summary's encoding of the entries of `base`, while the table holds exactly those.
    encoded: Option<&'a [u8]>,
}

impl<'a> InterruptTable<'a> {
    pub fn new() -> Self {
        InterruptTable { base: Vec::new(), added: HashMap::with_hasher(FixedState::default()), encoded: None }
    }

    /// A table of `entries` if they are strictly ascending by id (one pass), else None.
    pub fn from_ascending(entries: Vec<InterruptEntry<'a>>) -> Option<Self> {
        let ascending = entries.iter().zip(entries.iter().skip(1)).all(|((a, _), (b, _))| a < b);
        ascending.then_some(InterruptTable { base: entries, added: HashMap::with_hasher(FixedState::default()), encoded: None })
    }

    /// As `from_ascending`, remembering `encoded`: the summary bytes `entries` were decoded from
    /// (per entry: bytes id, u8 claimed, and when claimed u32 seq, u32 offset).
    pub(crate) fn from_summary(entries: Vec<InterruptEntry<'a>>, encoded: &'a [u8]) -> Option<Self> {
        let mut table = Self::from_ascending(entries)?;
        table.encoded = Some(encoded);
        Some(table)
    }

    /// The entries' summary encoding when it is still the one they were decoded from.
    pub(crate) fn unchanged_encoding(&self) -> Option<&'a [u8]> {
        self.encoded
    }

    pub fn len(&self) -> usize {
        self.base.len().saturating_add(self.added.len())
    }

    pub fn is_empty(&self) -> bool {
        self.base.is_empty() && self.added.is_empty()
    }

    /// Where `id` is in `base`, if it is there.
    fn base_index(&self, id: &[u8]) -> Option<usize> {
        self.base.binary_search_by(|(k, _)| (*k).cmp(id)).ok()
    }

    /// `Some(claim)` when `id` was parked (`claim` None while unclaimed), None when it never was.
    pub fn get(&self, id: &[u8]) -> Option<Option<Position>> {
        match self.base_index(id) {
            Some(i) => self.base.get(i).map(|(_, claim)| *claim),
            None => self.added.get(id).copied(),
        }
    }

    /// Records that `id` was parked; false (and nothing changes) when it already was.
    pub fn park(&mut self, id: &'a [u8]) -> bool {
        if self.get(id).is_some() {
            return false;
        }
        self.added.insert(id, None);
        self.encoded = None;
        true
    }

    /// Records the claim of `id` at `at` (a parked id; an unknown one is added claimed).
    pub fn claim(&mut self, id: &'a [u8], at: Position) {
        self.encoded = None;
        if let Some(i) = self.base_index(id) {
            if let Some(entry) = self.base.get_mut(i) {
                entry.1 = Some(at);
            }
            return;
        }
        self.added.insert(id, Some(at));
    }

    /// Every entry, ascending bytewise by id (the ids parked since `base` sorted here).
    pub fn iter(&self) -> Iter<'_, 'a> {
        let mut added: Vec<InterruptEntry<'a>> = self.added.iter().map(|(id, claim)| (*id, *claim)).collect();
        added.sort_unstable_by_key(|(id, _)| *id);
        Iter { base: self.base.iter().peekable(), added: added.into_iter().peekable() }
    }
}

/// Equal when they hold the same entries, however they are split between `base` and `added`
/// (a fold fed in pieces and one fed whole must compare equal).
impl PartialEq for InterruptTable<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for InterruptTable<'_> {}

impl fmt::Debug for InterruptTable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The merge of the two ascending, disjoint halves of a table.
pub struct Iter<'t, 'a> {
    base: Peekable<core::slice::Iter<'t, InterruptEntry<'a>>>,
    added: Peekable<alloc::vec::IntoIter<InterruptEntry<'a>>>,
}

impl<'a> Iterator for Iter<'_, 'a> {
    type Item = InterruptEntry<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let take_base = match (self.base.peek(), self.added.peek()) {
            (Some((b, _)), Some((a, _))) => *b < *a,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if take_base {
            self.base.next().copied()
        } else {
            self.added.next()
        }
    }
}
