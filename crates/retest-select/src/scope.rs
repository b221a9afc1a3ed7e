//! Changes a tester chooses not to consider, as 003 lets them:
//!
//! * §5.5 — driver, setup and oracle code is not the code under test: a
//!   change there need not select the tests that run through it (the
//!   tester checks that code on its own);
//! * §6.4 — changes in constructors and operators may be set aside, to be
//!   tested independently ("summarizing such methods, in graphs, as single,
//!   unchanged nodes").
//!
//! Both trade safety for fewer tests, on the tester's word. Nothing is set
//! aside silently: every dangerous edge left out comes back with why, for the
//! report.

use crate::dejavu::{Dangerous, Outcome};
use crate::hierarchy::Hierarchy;
use crate::program::Program;
use retest_graph::MethodKind;

/// Why a change was set aside.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Aside {
    /// In a procedure the settings name as driver, setup or oracle code.
    NotUnderTest,
    /// In a constructor or an operator (003 §6.4).
    ConstructorOrOperator,
}

/// Whether the procedure named `name` (`ns::C::C(int)`, `C::operator==(…)`)
/// is a constructor or an operator (a destructor is neither): by the
/// hierarchy's methods, else by its name's form.
pub fn is_constructor_or_operator(h: &Hierarchy<'_>, name: &str) -> bool {
    if let Some(kind) = h.kind_of(name) {
        return matches!(kind, MethodKind::Constructor | MethodKind::Operator);
    }
    let head = name.split('(').next().unwrap_or(name);
    let parts: Vec<&str> = head.rsplit("::").take(2).collect();
    let last = parts.first().copied().unwrap_or("");
    last.starts_with("operator") || (parts.len() == 2 && parts[0] == parts[1])
}

/// Moves out of `outcome.dangerous` every edge of a procedure for which
/// `aside` says why, and returns them with that reason. `aside` is given the
/// procedure's name (`C::go(int)`) and its key, the name after its unit's key
/// (`src/c_test.cc@obj/c_test.o::<static initialisation>`), so that settings
/// can name a procedure of some files only.
pub fn set_aside(
    outcome: &mut Outcome,
    old: &Program<'_>,
    aside: &dyn Fn(&str, &str) -> Option<Aside>,
) -> Vec<(Dangerous, Aside)> {
    let mut kept = Vec::with_capacity(outcome.dangerous.len());
    let mut out = Vec::new();
    for d in std::mem::take(&mut outcome.dangerous) {
        let name = &old.head(d.procedure).name;
        match aside(name, &format!("{}::{name}", old.unit(d.procedure).key)) {
            Some(why) => out.push((d, why)),
            None => kept.push(d),
        }
    }
    outcome.dangerous = kept;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_and_operators_are_told_by_their_names_without_a_hierarchy() {
        let h = Hierarchy::default();
        for yes in [
            "ns::C::C(int)",
            "C::C()",
            "C::operator==(const C&) const",
            "C::operator()(int)",
            "operator<<(std::ostream&, const C&)",
        ] {
            assert!(is_constructor_or_operator(&h, yes), "{yes}");
        }
        for no in ["C::~C()", "C::go(int)", "main(int, char**)", "ns::C::Cx(int)", "C", "<static initialisation>"] {
            assert!(!is_constructor_or_operator(&h, no), "{no}");
        }
    }
}
