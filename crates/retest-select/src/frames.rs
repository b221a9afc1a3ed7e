//! Class-level selection (003 §4): the tests of a class, and of a class
//! derived from it, to rerun when the class or its bases change.
//!
//! The paper gives a class a single entry with a *frame* (Fig. 7, 8): a
//! driver that calls the constructors, then any sequence of public methods,
//! then the destructors, with each call edge labelled by the method's
//! signature. `SelectTests` walks the old and new framed CCFGs from the frame
//! entry, pairs the methods by signature, and walks into their CFGs; a
//! derived class's CCFG inherits the CFGs of the methods it does not redefine
//! (Fig. 11). Calls to methods outside the class stay single nodes
//! (intraclass testing, §5.1).
//!
//! Here every procedure already has its CFG and its tests' coverage, so the
//! frame's walk is the pairwise comparison of the methods it reaches: the
//! class's own methods and those of its bases (what it inherits, and what
//! its methods may call as `Base::m()`), paired by key — a method's key is
//! its signature. A public method gone from the new version makes its entry
//! edges dangerous (the frame call's out-edges differ); a new one pairs with
//! nothing and selects nothing (`which_floor`, §4.2). Changes outside the
//! class and its bases are not the class's: they are left out, and counted
//! for the report.

use std::collections::BTreeSet;

use crate::dejavu::Outcome;
use crate::hierarchy::Hierarchy;
use crate::program::{ProcRef, Program};

/// The procedures of class `class`'s framed CCFG in program `p`: the methods
/// (and the lambdas in them) of the class and of its bases, by last name.
/// `None` when the program defines no class of that name.
pub fn class_procedures(h: &Hierarchy<'_>, p: &Program<'_>, class: &str) -> Option<BTreeSet<ProcRef>> {
    let chain = h.with_bases(class)?;
    let prefixes: Vec<String> = chain.iter().map(|c| format!("{c}::")).collect();
    Some(
        p.procedures()
            .filter(|r| {
                let name = &p.head(*r).name;
                prefixes.iter().any(|pre| name.starts_with(pre.as_str()))
            })
            .collect(),
    )
}

/// Keeps only the dangerous edges of the class's procedures; returns how many
/// were left out.
pub fn restrict_to(outcome: &mut Outcome, procedures: &BTreeSet<ProcRef>) -> usize {
    let before = outcome.dangerous.len();
    outcome.dangerous.retain(|d| procedures.contains(&d.procedure));
    before - outcome.dangerous.len()
}
