//! Tests whose coverage varies between runs of the same code.
//!
//! Safe selection assumes controlled regression testing: a test run twice on
//! the same code takes the same path. A test not selected for a change runs,
//! on the new version, exactly the path it ran before, so wherever the code did
//! not change its coverage is the one recorded. `retest audit` checks that for
//! every test it did not select: a difference in a unit that is the same in
//! both versions means the test's path depends on more than the code (timing,
//! scheduling, randomness, files it writes itself) — or that selection went
//! wrong. The audit runs such a test once more on the same build to tell the two
//! apart, and flags it in the store either way (a test stopped part-way, whose
//! record also claims what stopped code may have run, only when the two runs
//! differ). A flagged test's recorded
//! coverage is one path of several, so selection cannot rely on it: it is
//! selected whenever a change can change some test's behaviour
//! (`an_unsteady_test_found_by_the_audit_is_selected_on_every_change`).

use std::collections::{BTreeMap, HashMap, HashSet};

use retest_store::{Store, UnitId};
use roaring::RoaringBitmap;

use crate::error::{Error, OrFail};
use crate::store::MetaKey;

/// The tests flagged so far: test key → why.
pub fn flagged(store: &Store) -> Result<BTreeMap<String, String>, Error> {
    let Some(text) = store.meta(MetaKey::UnsteadyTests.name()).or_fail()? else { return Ok(BTreeMap::new()) };
    serde_json::from_str(&text).map_err(|e| {
        Error::new(format!("the store's list of tests with varying coverage cannot be read: {e}"))
            .hint(crate::store::damaged_hint(store.path().parent().unwrap_or(store.path())))
    })
}

/// Adds `tests` (test key → why) to the flagged ones, replacing an earlier why.
pub fn flag(store: &mut Store, tests: &BTreeMap<String, String>) -> Result<(), Error> {
    if tests.is_empty() {
        return Ok(());
    }
    let mut all = flagged(store)?;
    all.extend(tests.iter().map(|(k, v)| (k.clone(), v.clone())));
    let text = serde_json::to_string(&all).map_err(|e| Error::new(format!("cannot encode the flagged tests: {e}")))?;
    store.set_meta(MetaKey::UnsteadyTests.name(), &text).or_fail()
}

/// How one test's coverage differs between two records, in units both share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Edges the first record has and the second has not.
    pub only_first: u64,
    /// Edges the second record has and the first has not.
    pub only_second: u64,
    /// The units where they differ.
    pub units: Vec<UnitId>,
}

/// The difference of two records of one test's coverage over the units in
/// `shared` (a unit absent from a record counts as no edge run); `None` when
/// they agree there.
pub fn compare(
    first: &[(UnitId, RoaringBitmap)],
    second: &[(UnitId, RoaringBitmap)],
    shared: &HashSet<UnitId>,
) -> Option<Difference> {
    let a: HashMap<UnitId, &RoaringBitmap> = first.iter().map(|(u, b)| (*u, b)).collect();
    let b: HashMap<UnitId, &RoaringBitmap> = second.iter().map(|(u, b)| (*u, b)).collect();
    let empty = RoaringBitmap::new();
    let mut units: Vec<UnitId> = a.keys().chain(b.keys()).copied().filter(|u| shared.contains(u)).collect();
    units.sort();
    units.dedup();
    let mut d = Difference { only_first: 0, only_second: 0, units: Vec::new() };
    for u in units {
        let (x, y) = (a.get(&u).copied().unwrap_or(&empty), b.get(&u).copied().unwrap_or(&empty));
        if x != y {
            d.only_first += x.difference_len(y);
            d.only_second += y.difference_len(x);
            d.units.push(u);
        }
    }
    (!d.units.is_empty()).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(v: &[u32]) -> RoaringBitmap {
        v.iter().copied().collect()
    }

    #[test]
    fn records_that_differ_only_outside_the_shared_units_agree() {
        let shared: HashSet<UnitId> = [UnitId(1)].into();
        let first = vec![(UnitId(1), bits(&[1, 2])), (UnitId(2), bits(&[7]))];
        let second = vec![(UnitId(1), bits(&[1, 2])), (UnitId(3), bits(&[9]))];
        assert_eq!(compare(&first, &second, &shared), None);
    }

    #[test]
    fn a_shared_unit_one_record_lacks_counts_as_no_edge_run() {
        let shared: HashSet<UnitId> = [UnitId(1), UnitId(2)].into();
        let first = vec![(UnitId(1), bits(&[1, 2, 3]))];
        let second = vec![(UnitId(1), bits(&[1, 4])), (UnitId(2), bits(&[5, 6]))];
        let d = compare(&first, &second, &shared).expect("they differ");
        assert_eq!((d.only_first, d.only_second, d.units), (2, 3, vec![UnitId(1), UnitId(2)]));
    }
}
