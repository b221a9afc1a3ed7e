//! Coarse selection, as practical tools do it, for comparison with the
//! edge-level algorithms.
//!
//! * [`Granularity::Function`] — a test is selected when it executed any changed
//!   function (the granularity of pytest-testmon and RustyRTS).
//! * [`Granularity::File`] — a test is selected when it executed anything in a
//!   changed translation unit (the granularity of Ekstazi: a test depends on the
//!   files whose code it ran).
//!
//! Both are supersets of DejaVu's selection by construction: a function is
//! *changed* when DejaVu found a dangerous edge in it or its normalised text
//! differs (or it was removed); a unit is changed when it holds a changed
//! function, its declarations or compile flags differ, or it was removed or
//! could not be analysed. Layout and comments never count as changes (node text
//! is normalised), which is what Ekstazi's "smart checksums" achieve for Java.
//!
//! The result is a list of [`Dangerous`] edges — every statement-level edge of
//! each changed function or unit — so the same `TestsOnEdge` lookup and the same
//! explanations serve every algorithm.

use std::collections::{BTreeMap, BTreeSet};

use crate::dejavu::{Dangerous, Outcome};
use crate::equiv::at;
use crate::program::{Keys, Pairing, ProcRef, Program};
use crate::reason::{Reason, ReasonKind};

/// The unit of change of a coarse selection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Granularity {
    Function,
    File,
}

/// The dangerous edges of a coarse selection: all edges of every changed
/// function (or of every function of every changed unit), each with the reason
/// its function or unit counts as changed.
pub fn coarsen(old: &Program<'_>, new: &Program<'_>, outcome: &Outcome, granularity: Granularity) -> Vec<Dangerous> {
    let keys = Keys::new(old, new);
    let pairing = Pairing::new(old, new, &keys);
    let changed = changed_functions(old, new, &keys, &pairing, outcome);
    let reasons: BTreeMap<ProcRef, Reason> = match granularity {
        Granularity::Function => changed,
        Granularity::File => {
            let mut by_unit: BTreeMap<usize, Reason> = BTreeMap::new();
            for (r, why) in &changed {
                by_unit.entry(r.unit).or_insert_with(|| why.clone());
            }
            for (ui, why) in changed_units(old, new, &keys) {
                by_unit.entry(ui).or_insert(why);
            }
            old.procedures().filter_map(|r| by_unit.get(&r.unit).map(|why| (r, why.clone()))).collect()
        }
    };
    let mut out = Vec::new();
    for (r, reason) in reasons {
        let p = old.procedure(r);
        for (e, _) in p.stmt.edges() {
            out.push(Dangerous { procedure: r, edge: e, reason: reason.clone() });
        }
    }
    out
}

/// Old procedures that changed, each with one reason: DejaVu's first dangerous
/// edge in it, else a textual difference, else removal.
fn changed_functions(
    old: &Program<'_>,
    new: &Program<'_>,
    keys: &Keys,
    pairing: &Pairing,
    outcome: &Outcome,
) -> BTreeMap<ProcRef, Reason> {
    let mut out: BTreeMap<ProcRef, Reason> = BTreeMap::new();
    for d in &outcome.dangerous {
        out.entry(d.procedure).or_insert_with(|| d.reason.clone());
    }
    for r in old.procedures() {
        if out.contains_key(&r) {
            continue;
        }
        // heads first: a body is decoded only for a procedure that changed
        let entry = |p: &Program<'_>, r: ProcRef| p.procedure(r).stmt.entry();
        match pairing.old_to_new.get(&r) {
            None => {
                out.insert(
                    r,
                    Reason { kind: ReasonKind::Removed, old: Some(at(old, keys, r, entry(old, r))), new: None },
                );
            }
            Some(&n) => {
                let (p, q) = (old.head(r), new.head(n));
                if p.digest != q.digest || p.unanalysable.is_some() || q.unanalysable.is_some() {
                    out.insert(
                        r,
                        Reason {
                            kind: ReasonKind::Modified,
                            old: Some(at(old, keys, r, entry(old, r))),
                            new: Some(at(new, keys, n, entry(new, n))),
                        },
                    );
                }
            }
        }
    }
    out
}

/// Old units that changed as a whole: removed, unanalysable now, different
/// compile flags, or different declarations outside functions.
fn changed_units(old: &Program<'_>, new: &Program<'_>, keys: &Keys) -> Vec<(usize, Reason)> {
    let by_key: BTreeMap<&str, usize> = new.units.iter().enumerate().map(|(i, u)| (u.key, i)).collect();
    let mut out = Vec::new();
    for (i, u) in old.units.iter().enumerate() {
        let Some(first) = (0..u.unit.procedures.len()).map(|p| ProcRef { unit: i, proc: p }).next() else {
            continue; // no code: no test can have executed it
        };
        let where_ = Some(at(old, keys, first, old.procedure(first).stmt.entry()));
        let kind = match by_key.get(u.key) {
            None => Some(ReasonKind::Removed),
            Some(&j) => {
                let v = &new.units[j];
                if let Some(b) = v.broken {
                    Some(ReasonKind::Unanalysable(b.to_string()))
                } else if u.flags != v.flags {
                    Some(ReasonKind::Flags { old: u.flags.to_string(), new: v.flags.to_string() })
                } else {
                    let texts = |d: &[retest_graph::Declaration]| -> BTreeSet<String> {
                        d.iter().map(|x| x.text.clone()).collect()
                    };
                    let names = |x: &retest_graph::Unit| -> BTreeSet<String> {
                        x.procedures.iter().map(|p| p.name.clone()).collect()
                    };
                    (texts(u.decls()) != texts(v.decls()) || names(u.unit) != names(v.unit))
                        .then_some(ReasonKind::Structure)
                }
            }
        };
        if let Some(kind) = kind {
            out.push((i, Reason { kind, old: where_, new: None }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use retest_graph::Unit;

    use super::*;
    use crate::dejavu::{Mode, select};
    use crate::program::UnitRef;

    use crate::tests::fixture;

    fn prog<'a>(units: &'a [(&'a str, Unit)]) -> Program<'a> {
        Program::new(
            units.iter().map(|(k, u)| UnitRef { key: k, unit: u, flags: "", broken: None, bodies: None }).collect(),
        )
    }

    fn procs(d: &[Dangerous]) -> BTreeSet<(usize, usize)> {
        d.iter().map(|d| (d.procedure.unit, d.procedure.proc)).collect()
    }

    // fixtures coarse-*: a.c is `int f(int x) { if (x > 0) x = 1; else x = 2; return x; }`
    // and `int g(int z) { return z + 3; }`; b.c is `int h(int w) { return w * 4; }`

    #[test]
    fn function_and_file_granularity_contain_dejavu() {
        let old_units = [("a.c", fixture("coarse-a")), ("b.c", fixture("coarse-b"))];
        let new_units = [("a.c", fixture("coarse-a-changed")), ("b.c", fixture("coarse-b"))];
        let (old, new) = (prog(&old_units), prog(&new_units));
        let outcome = select(&old, &new, Mode::Naive);
        let function = coarsen(&old, &new, &outcome, Granularity::Function);
        let file = coarsen(&old, &new, &outcome, Granularity::File);
        // DejaVu: only the F edge of f's decision; function: every edge of f
        assert_eq!(outcome.dangerous.len(), 1);
        assert_eq!(procs(&outcome.dangerous), BTreeSet::from([(0, 0)]));
        assert_eq!(procs(&function), BTreeSet::from([(0, 0)]));
        assert_eq!(function.len(), old.procedure(ProcRef { unit: 0, proc: 0 }).stmt.edge_count());
        // file: f and g (same unit), not h
        assert_eq!(procs(&file), BTreeSet::from([(0, 0), (0, 1)]));
    }

    #[test]
    fn layout_and_comments_are_not_changes() {
        let old_units = [("a.c", fixture("coarse-a"))];
        let new_units = [("a.c", fixture("coarse-a-layout"))];
        let (old, new) = (prog(&old_units), prog(&new_units));
        let outcome = select(&old, &new, Mode::Naive);
        assert!(coarsen(&old, &new, &outcome, Granularity::Function).is_empty());
        assert!(coarsen(&old, &new, &outcome, Granularity::File).is_empty());
    }

    #[test]
    fn a_changed_global_declaration_changes_the_whole_file() {
        let old_units = [("a.c", fixture("coarse-a-global1"))];
        let new_units = [("a.c", fixture("coarse-a-global2"))];
        let (old, new) = (prog(&old_units), prog(&new_units));
        let outcome = select(&old, &new, Mode::Naive);
        // no function mentions `unused`: DejaVu and function level select nothing
        assert!(outcome.dangerous.is_empty());
        assert!(coarsen(&old, &new, &outcome, Granularity::Function).is_empty());
        assert_eq!(procs(&coarsen(&old, &new, &outcome, Granularity::File)), BTreeSet::from([(0, 0), (0, 1)]));
    }

    #[test]
    fn a_removed_unit_changes_all_its_functions() {
        let old_units = [("a.c", fixture("coarse-a")), ("b.c", fixture("coarse-b"))];
        let new_units = [("a.c", fixture("coarse-a"))];
        let (old, new) = (prog(&old_units), prog(&new_units));
        let outcome = select(&old, &new, Mode::Naive);
        let file = coarsen(&old, &new, &outcome, Granularity::File);
        assert_eq!(procs(&file), BTreeSet::from([(1, 0)]));
        assert!(file.iter().all(|d| d.reason.kind == ReasonKind::Removed));
    }
}
