//! `retest-select`: safe regression test selection on control-flow graphs.
//!
//! * [`dejavu`] — Rothermel & Harrold's `SelectTests`/`Compare` and
//!   `SelectInterTests` (002 §3, 003 Fig. 5): the dangerous edges of the old
//!   version, each with its reason, plus what RECOVER needs (matched pairs, change set).
//! * [`ball`] — Ball's intersection graph G'' and the algorithms on it: RH
//!   restated, partial-, full- and valid-reachability (000 §3–4).
//! * [`paths`] — path-based selection on Ball–Larus path ids (000 §5).
//! * [`equiv`] — node equivalence between versions, shared by all algorithms.
//! * [`affected`] — names affected by declaration changes.
//! * [`hierarchy`] — C++'s class hierarchy and the target sets of member calls.
//! * [`program`] — procedures across versions and call resolution.
//! * [`refine`] — Ball's algorithms applied per procedure pair to the tests DejaVu
//!   selects, with reasons and, for eliminated tests, why.
//! * [`frames`] — class-level selection: a class's framed CCFG (003 §4).
//! * [`scope`] — changes a tester sets aside: driver code (003 §5.5),
//!   constructors and operators (003 §6.4).
//! * [`coarse`] — function- and file-level selection (testmon / Ekstazi
//!   granularity), for comparison.
//! * [`tests_for`] — from dangerous edges to tests through `TestsOnEdge`.
//!
//! Architecture invariant: no I/O, nothing about C. Coverage comes in through a
//! function the caller provides.

pub mod affected;
pub mod ball;
pub mod coarse;
pub mod dejavu;
pub mod equiv;
pub mod frames;
pub mod hierarchy;
pub mod paths;
pub mod program;
pub mod reason;
pub mod refine;
pub mod scope;

use std::collections::BTreeMap;

use roaring::RoaringBitmap;

pub use dejavu::{Dangerous, Mode, Outcome, PairWalk, select, select_changes};
pub use program::{Keys, Pairing, ProcRef, Program, UnitRef};
pub use reason::{At, Reason, ReasonKind};

/// The tests selected by a set of dangerous edges: test id → indexes (into
/// `dangerous`) of the edges that select it. `tests_on_edge(unit, edge)` is
/// `TestsOnEdge` for a *condition-level* edge numbered unit-wide; a
/// statement-level edge is traversed when any of the condition-level edges that
/// map onto it is.
pub fn tests_for(
    old: &Program<'_>,
    dangerous: &[Dangerous],
    tests_on_edge: &mut dyn FnMut(usize, u32) -> RoaringBitmap,
) -> BTreeMap<u32, Vec<usize>> {
    let mut bases: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    let mut out: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, d) in dangerous.iter().enumerate() {
        let base = bases.entry(d.procedure.unit).or_insert_with(|| old.edge_bases(d.procedure.unit))[d.procedure.proc];
        let proc = old.procedure(d.procedure);
        let mut tests = RoaringBitmap::new();
        for fine in proc.map.preimage(d.edge) {
            tests |= tests_on_edge(d.procedure.unit, base + fine.0);
        }
        for t in tests.iter() {
            out.entry(t).or_default().push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests;
