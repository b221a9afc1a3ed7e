//! Edge coverage of a test some of whose code may have stopped part-way, across
//! the procedures of every unit the test ran: which procedures may have been
//! running when it stopped, and what [`edge_coverage_stopped`] then claims of
//! each.

use std::collections::HashSet;

use fixedbitset::FixedBitSet;

use crate::cfg::{DeclKind, NodeId};
use crate::coverage::{CellLayout, Probe, edge_coverage_stopped};
use crate::unit::Unit;

/// One unit as a test's run left it: the build's probes and which cells are hit.
pub struct StoppedUnit<'a> {
    pub unit: &'a Unit,
    /// Per procedure, the probes of the build that ran.
    pub plan: &'a [Vec<Probe>],
    /// Per procedure, its cells under `plan`.
    pub layouts: &'a [CellLayout],
    /// Whether procedure `i`'s cell `c` (numbered from the procedure's first
    /// cell, as in its layout) is hit.
    pub hit: &'a dyn Fn(usize, u32) -> bool,
}

/// What [`stopped_edges`] claims of one procedure.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct StoppedProcedure {
    /// The procedure may have been running when code stopped (its entry is
    /// claimed to have started).
    pub entered: bool,
    /// Claimed condition-level edges, numbered within the procedure.
    pub edges: FixedBitSet,
}

/// Edges of a test some of whose code may have been stopped part-way through a
/// node (killed by a signal, still running in another thread, left by a
/// handler that jumps out): per procedure [`edge_coverage_stopped`], which also
/// claims what code stopped before it showed its start may have run, with the
/// procedure *entered* — possibly running when it stopped — if it has external
/// linkage (code outside the test's units may call it: an uninstrumented
/// caller or test harness, a library calling back, the C runtime calling
/// `main`, or `main` calling itself), if code that may have run names it (a
/// call, or its address taken), if no code of the test's units names it (a
/// constructor, a callback reached through a table), or if code that may have
/// run calls through a pointer and the procedure, `static`, has its address
/// taken in its unit. A call of a name that a declaration of file scope
/// declares as a variable (`fp(x)`, `fp` a function pointer) is a call through
/// a pointer, though it names a callee. Names are matched without regard to
/// units (two `static` procedures of one name are entered together): more
/// claimed, never less. A procedure that is not entered and has no hit cell
/// claims nothing (and is not looked at). Iterates until no more procedures are
/// entered.
///
/// Returns, per unit and per procedure, whether it was entered and the edges
/// claimed.
///
/// # Panics
///
/// If a unit's `plan` or `layouts` does not have one entry per procedure.
pub fn stopped_edges(units: &[StoppedUnit<'_>]) -> Vec<Vec<StoppedProcedure>> {
    for u in units {
        assert_eq!(u.plan.len(), u.unit.procedures.len(), "one plan per procedure");
        assert_eq!(u.layouts.len(), u.unit.procedures.len(), "one layout per procedure");
    }
    let named: HashSet<&str> = units
        .iter()
        .flat_map(|u| u.unit.procedures.iter())
        .flat_map(|p| p.cond.nodes())
        .flat_map(|(_, n)| n.calls.iter().chain(&n.refs).map(String::as_str))
        .collect();
    let address_taken: HashSet<&str> =
        units.iter().flat_map(|u| u.unit.address_taken.iter()).map(String::as_str).collect();
    let variables: HashSet<&str> = units
        .iter()
        .flat_map(|u| u.unit.decls.iter())
        .filter(|d| d.kind == DeclKind::Variable)
        .flat_map(|d| d.names.iter().map(String::as_str))
        .collect();
    let procedures: HashSet<&str> =
        units.iter().flat_map(|u| u.unit.procedures.iter()).map(|p| p.name.as_str()).collect();
    // per unit and procedure: whether any of its cells is hit
    let any_hit: Vec<Vec<bool>> = units
        .iter()
        .map(|u| (0..u.layouts.len()).map(|i| (0..u.layouts[i].cells).any(|c| (u.hit)(i, c))).collect())
        .collect();
    let mut entered_names: HashSet<&str> = HashSet::new();
    let mut any_pointer_call = false;
    // per unit and procedure: what was computed, and whether as entered
    let mut done: Vec<Vec<Option<StoppedProcedure>>> =
        units.iter().map(|u| vec![None; u.unit.procedures.len()]).collect();
    loop {
        let mut changed = false;
        for (ui, u) in units.iter().enumerate() {
            for (i, p) in u.unit.procedures.iter().enumerate() {
                // code outside the units (an uninstrumented caller, a library
                // calling back, the C runtime calling `main`) may call any
                // procedure with external linkage
                let entered = !p.is_static
                    || (any_pointer_call && address_taken.contains(p.name.as_str()))
                    || !named.contains(p.name.as_str())
                    || entered_names.contains(p.name.as_str());
                if done[ui][i].as_ref().is_some_and(|d| d.entered == entered) {
                    continue;
                }
                if !entered && !any_hit[ui][i] {
                    done[ui][i] =
                        Some(StoppedProcedure { entered, edges: FixedBitSet::with_capacity(p.cond.edge_count()) });
                    continue;
                }
                let hit = |c: u32| (u.hit)(i, c);
                let (edges, started) = edge_coverage_stopped(&p.cond, &u.plan[i], &u.layouts[i], &hit, entered);
                for n in started.ones() {
                    let node = p.cond.node(NodeId(n as u32));
                    for name in node.calls.iter().chain(&node.refs) {
                        if procedures.contains(name.as_str()) && entered_names.insert(name.as_str()) {
                            changed = true;
                        }
                    }
                    let through_pointer =
                        node.indirect_call || node.calls.iter().any(|c| variables.contains(c.as_str()));
                    if through_pointer && !any_pointer_call {
                        any_pointer_call = true;
                        changed = true;
                    }
                }
                done[ui][i] = Some(StoppedProcedure { entered, edges });
            }
        }
        if !changed {
            break;
        }
    }
    // the last round changed nothing, so it looked at every procedure in the
    // state it ends in
    done.into_iter()
        .map(|procs| procs.into_iter().map(|d| d.expect("every procedure is looked at in the first round")).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::cfg::{Cfg, CfgBuilder, Contraction, Declaration, EdgeId, EdgeLabel, Node, NodeKind};
    use crate::coverage::tests::take_edge;
    use crate::coverage::{Pair, active_pairs, derive_probes, edge_coverage, pair_probes};
    use crate::unit::Procedure;

    use EdgeLabel::{Eps, False as F, True as T};
    use Probe::{Ahead, Derived, Node as N, PerEdge};

    fn node(kind: NodeKind, text: &str, calls: &[&str]) -> Node {
        let mut n = Node::new(kind, text);
        n.calls = calls.iter().map(|c| c.to_string()).collect();
        n.refs = n.calls.clone();
        n
    }

    /// A procedure of `nodes` (the first the entry, the last the exit) and
    /// `edges` (source, target, label), probed as `plan` under full instrumentation.
    fn procedure(
        name: &str,
        is_static: bool,
        nodes: Vec<Node>,
        edges: &[(u32, u32, EdgeLabel)],
        plan: &[Probe],
    ) -> Procedure {
        let mut b = CfgBuilder::new(name);
        let n = nodes.len();
        for x in nodes {
            b.add_node(x);
        }
        b.set_entry(NodeId(0));
        b.set_exit(NodeId(n as u32 - 1));
        for (s, d, l) in edges {
            b.add_edge(NodeId(*s), NodeId(*d), l.clone());
        }
        let cond = b.build().unwrap();
        Procedure {
            name: name.into(),
            is_static,
            span: None,
            stmt: cond.clone(),
            map: Contraction {
                node: cond.node_ids().collect(),
                edge: (0..cond.edge_count()).map(|e| Some(EdgeId(e as u32))).collect(),
            },
            cond,
            probes: plan.to_vec(),
            locals: vec![],
            unanalysable: None,
            digest: 0,
        }
    }

    /// `f () { if (*p > 0) …; }`: a condition that may fault first, so with
    /// derived probes nothing shows that a run entered before it: entered, it
    /// claims its entry's edge (0), never the condition's (1: T, 2: F).
    fn faults_first(name: &str, is_static: bool) -> Procedure {
        procedure(
            name,
            is_static,
            vec![
                node(NodeKind::Entry, name, &[]),
                node(NodeKind::Predicate, "* p > 0", &[]),
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, T), (1, 2, F)],
            &[Ahead, PerEdge, Derived],
        )
    }

    fn unit(procedures: Vec<Procedure>) -> Unit {
        Unit { procedures, ..Default::default() }
    }

    /// [`stopped_edges`] over `units`, each with its procedures' hit cells,
    /// under full instrumentation.
    fn stopped(units: &[(&Unit, &[&[u32]])]) -> Vec<Vec<StoppedProcedure>> {
        let plans: Vec<Vec<Vec<Probe>>> =
            units.iter().map(|(u, _)| u.procedures.iter().map(|p| p.probes.clone()).collect()).collect();
        let layouts: Vec<Vec<CellLayout>> = units
            .iter()
            .zip(&plans)
            .map(|((u, _), plan)| u.procedures.iter().zip(plan).map(|(p, pl)| CellLayout::new(&p.cond, pl)).collect())
            .collect();
        let hits: Vec<_> = units
            .iter()
            .map(|(u, h)| {
                assert_eq!(h.len(), u.procedures.len());
                move |i: usize, c: u32| h[i].contains(&c)
            })
            .collect();
        let input: Vec<StoppedUnit<'_>> = units
            .iter()
            .enumerate()
            .map(|(k, (u, _))| StoppedUnit { unit: u, plan: &plans[k], layouts: &layouts[k], hit: &hits[k] })
            .collect();
        stopped_edges(&input)
    }

    fn ones(s: &StoppedProcedure) -> Vec<usize> {
        s.edges.ones().collect()
    }

    /// `main () { x = 1; f (); }` with a cell per statement (0: entry, 1:
    /// `x = 1`, 2: the call), and `static f` faulting first: `f` is entered
    /// once the call may have started — after `x = 1` ran, not before.
    #[test]
    fn a_callee_named_by_code_that_may_have_run_is_entered() {
        let main = procedure(
            "main",
            false,
            vec![
                node(NodeKind::Entry, "main", &[]),
                node(NodeKind::Statement, "x = 1 ;", &[]),
                node(NodeKind::Call, "f ( ) ;", &["f"]),
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, Eps), (2, 3, Eps)],
            &[N, N, N, Derived],
        );
        let u = unit(vec![main, faults_first("f", true)]);
        // stopped in `x = 1`: the call never started
        let r = stopped(&[(&u, &[&[0], &[]])]);
        assert!(r[0][0].entered, "main: external");
        assert_eq!(ones(&r[0][0]), vec![0]);
        assert!(!r[0][1].entered);
        assert_eq!(ones(&r[0][1]), Vec::<usize>::new());
        // `x = 1` ran: the call may have started, and `f` stopped before its first cell
        let r = stopped(&[(&u, &[&[0, 1], &[]])]);
        assert_eq!(ones(&r[0][0]), vec![0, 1]);
        assert!(r[0][1].entered);
        assert_eq!(ones(&r[0][1]), vec![0]);
        // `f` took T before it stopped: that too
        let r = stopped(&[(&u, &[&[0, 1, 2], &[0]])]);
        assert_eq!(ones(&r[0][1]), vec![0, 1]);
    }

    /// Nothing hit: `main` and a constructor (no code names either) may have
    /// been running; `g`, named only by code that did not run, was not.
    #[test]
    fn a_procedure_no_code_names_is_entered() {
        // main () { if (*p > 0) g (); }
        let main = procedure(
            "main",
            false,
            vec![
                node(NodeKind::Entry, "main", &[]),
                node(NodeKind::Predicate, "* p > 0", &[]),
                node(NodeKind::Call, "g ( ) ;", &["g"]),
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, T), (1, 3, F), (2, 3, Eps)],
            &[Ahead, PerEdge, N, Derived],
        );
        let u = unit(vec![main, faults_first("g", true), faults_first("init", true)]);
        let r = stopped(&[(&u, &[&[], &[], &[]])]);
        let entered: Vec<bool> = r[0].iter().map(|p| p.entered).collect();
        assert_eq!(entered, vec![true, false, true]);
        assert_eq!(ones(&r[0][0]), vec![0]);
        assert_eq!(ones(&r[0][1]), Vec::<usize>::new());
        assert_eq!(ones(&r[0][2]), vec![0]);
    }

    /// `main () { if (c) direct (ext, loc, taken); else <call through a pointer>; }`
    /// with `ext` external, `loc` and `taken` static and only `taken`'s address
    /// taken in its unit.
    fn pointer_program(pointer_call: Node, decls: Vec<Declaration>) -> Unit {
        let main = procedure(
            "main",
            false,
            vec![
                node(NodeKind::Entry, "main", &[]),
                node(NodeKind::Predicate, "c", &[]),
                node(NodeKind::Call, "direct ( ext , loc , taken ) ;", &["direct"]),
                pointer_call,
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, T), (1, 3, F), (2, 4, Eps), (3, 4, Eps)],
            &[N, PerEdge, N, N, Derived],
        );
        let mut u =
            unit(vec![main, faults_first("ext", false), faults_first("loc", true), faults_first("taken", true)]);
        u.procedures[0].cond = u.procedures[0].cond.map_nodes(|n, x| {
            let mut x = x.clone();
            if n == NodeId(2) {
                x.refs = vec!["ext".into(), "loc".into(), "taken".into()];
            }
            x
        });
        u.address_taken = vec!["taken".into()];
        u.decls = decls;
        u
    }

    /// Cells of `main` in [`pointer_program`]: 0 the entry, 1 `c`:T, 2 `c`:F.
    fn entered_by(u: &Unit, main_hits: &[u32]) -> Vec<bool> {
        stopped(&[(u, &[main_hits, &[], &[], &[]])])[0].iter().map(|p| p.entered).collect()
    }

    #[test]
    fn a_call_through_a_pointer_enters_static_procedures_whose_address_is_taken() {
        let mut indirect = node(NodeKind::Call, "( * fp ) ( ) ;", &[]);
        indirect.indirect_call = true;
        let u = pointer_program(indirect, vec![]);
        // neither call may have started: only what has external linkage
        assert_eq!(entered_by(&u, &[0]), vec![true, true, false, false]);
        // the call through the pointer may have: `loc`'s address is not taken
        assert_eq!(entered_by(&u, &[0, 2]), vec![true, true, false, true]);
        let r = stopped(&[(&u, &[&[0, 2], &[], &[], &[]])]);
        assert_eq!(r[0].iter().map(ones).collect::<Vec<_>>(), vec![vec![0, 2], vec![0], vec![], vec![0]]);
        // naming them is enough
        assert_eq!(entered_by(&u, &[0, 1]), vec![true, true, true, true]);
    }

    /// `fp ()` names a callee, but `fp` is a variable of file scope: a call
    /// through a pointer. Declared as a function, it is a direct call of a
    /// procedure the test's units do not define.
    #[test]
    fn a_call_of_a_variable_is_a_call_through_a_pointer() {
        let decl = |kind| Declaration {
            kind,
            names: vec!["fp".into()],
            text: "void ( * fp ) ( void ) ;".into(),
            mentions: vec![],
            span: None,
        };
        let call = || node(NodeKind::Call, "fp ( ) ;", &["fp"]);
        let u = pointer_program(call(), vec![decl(DeclKind::Variable)]);
        assert_eq!(entered_by(&u, &[0, 2]), vec![true, true, false, true]);
        let u = pointer_program(call(), vec![decl(DeclKind::Function)]);
        assert_eq!(entered_by(&u, &[0, 2]), vec![true, true, false, false]);
    }

    /// `main` (unit B) calls `static f` (unit B), stopped inside `f`'s first
    /// condition, which calls `static g` (unit A, matched by name) — stopped in
    /// turn before `g` set a cell. `g` comes first but is entered only once `f`
    /// is: a second round.
    #[test]
    fn procedures_are_entered_up_to_a_fixed_point_across_units() {
        let main = procedure(
            "main",
            false,
            vec![
                node(NodeKind::Entry, "main", &[]),
                node(NodeKind::Call, "f ( ) ;", &["f"]),
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, Eps)],
            &[Ahead, N, Derived],
        );
        let f = procedure(
            "f",
            true,
            vec![
                node(NodeKind::Entry, "f", &[]),
                node(NodeKind::Predicate, "g ( ) > 0", &["g"]),
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, T), (1, 2, F)],
            &[Ahead, PerEdge, Derived],
        );
        let a = unit(vec![faults_first("g", true)]);
        let b = unit(vec![main, f]);
        let r = stopped(&[(&a, &[&[]]), (&b, &[&[0], &[]])]);
        assert!(r[0][0].entered && r[1][0].entered && r[1][1].entered);
        assert_eq!(ones(&r[0][0]), vec![0]);
        assert_eq!(ones(&r[1][1]), vec![0]);
        // the order of the units does not matter
        let s = stopped(&[(&b, &[&[0], &[]]), (&a, &[&[]])]);
        assert_eq!((&s[0], &s[1][0]), (&r[1], &r[0][0]));
    }

    /// Two `static` procedures of one name in two units: a call of the name
    /// enters both (which one it reached is not known here).
    #[test]
    fn names_are_matched_across_units() {
        let main = procedure(
            "main",
            false,
            vec![
                node(NodeKind::Entry, "main", &[]),
                node(NodeKind::Call, "helper ( ) ;", &["helper"]),
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, Eps)],
            &[Ahead, N, Derived],
        );
        let a = unit(vec![faults_first("helper", true)]);
        let b = unit(vec![main, faults_first("helper", true)]);
        let r = stopped(&[(&a, &[&[]]), (&b, &[&[0], &[]])]);
        assert!(r[0][0].entered && r[1][1].entered);
        assert_eq!((ones(&r[0][0]), ones(&r[1][1])), (vec![0], vec![0]));
    }

    /// `main () { if (c) parse (); }` took `c`:F, and the test's harness —
    /// code outside the units — called `parse`, which stopped in its first
    /// condition: external, `parse` is entered though the only call the units
    /// make of it did not run (a `static` one would not be).
    #[test]
    fn an_external_procedure_may_have_been_called_from_outside_the_units() {
        let main = procedure(
            "main",
            false,
            vec![
                node(NodeKind::Entry, "main", &[]),
                node(NodeKind::Predicate, "c", &[]),
                node(NodeKind::Call, "parse ( ) ;", &["parse"]),
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, T), (1, 3, F), (2, 3, Eps)],
            &[Ahead, PerEdge, N, Derived],
        );
        for is_static in [false, true] {
            let u = unit(vec![main.clone(), faults_first("parse", is_static)]);
            let r = stopped(&[(&u, &[&[1], &[]])]);
            assert_eq!(r[0][1].entered, !is_static);
            assert_eq!(ones(&r[0][1]), if is_static { vec![] } else { vec![0] });
        }
    }

    /// A callback named only by code that did not run (registered elsewhere,
    /// called from code not seen) shows its cells: it is not entered, claims
    /// what they show, and a call that code may have started enters its callee.
    #[test]
    fn a_procedure_with_hit_cells_that_nothing_enters_claims_what_they_show() {
        // main () { if (c) register (cb); }
        let main = procedure(
            "main",
            false,
            vec![
                node(NodeKind::Entry, "main", &[]),
                node(NodeKind::Predicate, "c", &[]),
                node(NodeKind::Call, "register ( cb ) ;", &["register", "cb"]),
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, T), (1, 3, F), (2, 3, Eps)],
            &[Ahead, PerEdge, N, Derived],
        );
        // cb () { if (d) k (); }
        let cb = procedure(
            "cb",
            true,
            vec![
                node(NodeKind::Entry, "cb", &[]),
                node(NodeKind::Predicate, "d", &[]),
                node(NodeKind::Call, "k ( ) ;", &["k"]),
                node(NodeKind::Exit, "", &[]),
            ],
            &[(0, 1, Eps), (1, 2, T), (1, 3, F), (2, 3, Eps)],
            &[Ahead, PerEdge, N, Derived],
        );
        let u = unit(vec![main, cb, faults_first("k", true)]);
        // main took c:F (its cell 1); cb took d:T (its cell 0)
        let r = stopped(&[(&u, &[&[1], &[0], &[]])]);
        assert_eq!(r[0].iter().map(|p| p.entered).collect::<Vec<_>>(), vec![true, false, true]);
        let cb = &u.procedures[1];
        let plan = &cb.probes;
        let normal = edge_coverage(&cb.cond, plan, &CellLayout::new(&cb.cond, plan), &|c| c == 0);
        assert_eq!(ones(&r[0][1]), normal.ones().collect::<Vec<_>>());
        assert_eq!(ones(&r[0][1]), vec![0, 1]);
        assert_eq!(ones(&r[0][2]), vec![0]);
        // without its cells, nothing of cb, and k is not entered
        let r = stopped(&[(&u, &[&[1], &[], &[]])]);
        assert_eq!(r[0].iter().map(|p| p.entered).collect::<Vec<_>>(), vec![true, false, false]);
        assert!(r[0][1].edges.is_clear() && r[0][2].edges.is_clear());
    }

    /// Names a random program's procedures and calls draw from; `fp` is a
    /// variable of file scope (a function pointer), never a procedure; a call
    /// of `main` makes it recursive.
    const NAMES: [&str; 6] = ["p0", "p1", "p2", "p3", "fp", "main"];

    /// A random procedure: node count, per node its out-edges (as in
    /// `coverage`'s random procedures), whether it is unprobeable, whether it
    /// completes, whether its outcomes can be paired, what it calls (two
    /// draws: below 5 a name of [`NAMES`]), whose address it takes (below 4),
    /// whether it calls through a pointer; and whether the procedure is `static`.
    type RawProc = (usize, Vec<Vec<usize>>, Vec<bool>, Vec<bool>, Vec<bool>, Vec<(u8, u8, u8, bool)>, bool);

    fn raw_proc() -> impl proptest::strategy::Strategy<Value = RawProc> {
        use proptest::prelude::*;
        (
            3usize..9,
            proptest::collection::vec(proptest::collection::vec(0usize..9, 1..4), 9),
            proptest::collection::vec(proptest::bool::weighted(0.15), 9),
            proptest::collection::vec(proptest::bool::weighted(0.7), 9),
            proptest::collection::vec(proptest::bool::weighted(0.8), 9),
            proptest::collection::vec((0u8..10, 0u8..20, 0u8..10, proptest::bool::weighted(0.25)), 9),
            any::<bool>(),
        )
    }

    /// A random program: per unit, an offset into [`NAMES`] and its
    /// procedures; unit 0's first procedure is `main`.
    type RawProgram = Vec<(usize, Vec<RawProc>)>;

    fn raw_program() -> impl proptest::strategy::Strategy<Value = RawProgram> {
        proptest::collection::vec((0usize..4, proptest::collection::vec(raw_proc(), 1..4)), 1..4)
    }

    /// A program's units and the plans of the build that ran (derived, and
    /// paired, as `retest cc` makes them).
    struct Program {
        units: Vec<Unit>,
        plans: Vec<Vec<Vec<Probe>>>,
    }

    impl Program {
        fn new(raw: &RawProgram) -> Program {
            let mut external: HashSet<String> = HashSet::new();
            let mut units = Vec::new();
            let mut plans = Vec::new();
            for (u, (offset, procs)) in raw.iter().enumerate() {
                let mut unit = Unit::default();
                let mut plan = Vec::new();
                for (j, raw) in procs.iter().enumerate() {
                    let name = if (u, j) == (0, 0) { "main".to_string() } else { NAMES[(offset + j) % 4].to_string() };
                    // one external definition of a name in the program
                    let is_static = name != "main" && (raw.6 || external.contains(&name));
                    if !is_static {
                        external.insert(name.clone());
                    }
                    let (p, pl) = random_procedure(&name, is_static, raw);
                    for (_, x) in p.cond.nodes() {
                        for r in &x.refs {
                            if !x.calls.contains(r) && !unit.address_taken.contains(r) {
                                unit.address_taken.push(r.clone());
                            }
                        }
                    }
                    unit.procedures.push(p);
                    plan.push(pl);
                }
                if u == 0 {
                    unit.decls.push(Declaration {
                        kind: DeclKind::Variable,
                        names: vec!["fp".into()],
                        text: "void ( * fp ) ( void ) ;".into(),
                        mentions: vec![],
                        span: None,
                    });
                }
                units.push(unit);
                plans.push(plan);
            }
            Program { units, plans }
        }

        fn layouts(&self) -> Vec<Vec<CellLayout>> {
            self.units
                .iter()
                .zip(&self.plans)
                .map(|(u, plan)| u.procedures.iter().zip(plan).map(|(p, pl)| CellLayout::new(&p.cond, pl)).collect())
                .collect()
        }

        /// [`stopped_edges`] given whether cell `c` of procedure `i` of unit `u` is hit.
        fn stopped(&self, hit: &dyn Fn(usize, usize, u32) -> bool) -> Vec<Vec<StoppedProcedure>> {
            let layouts = self.layouts();
            let hits: Vec<_> = (0..self.units.len()).map(|u| move |i: usize, c: u32| hit(u, i, c)).collect();
            let input: Vec<StoppedUnit<'_>> = (0..self.units.len())
                .map(|u| StoppedUnit {
                    unit: &self.units[u],
                    plan: &self.plans[u],
                    layouts: &layouts[u],
                    hit: &hits[u],
                })
                .collect();
            stopped_edges(&input)
        }

        /// The procedure a call of `name` from unit `u` reaches: the unit's
        /// own, else the external one, else none (outside the program).
        fn resolve(&self, u: usize, name: &str) -> Option<(usize, usize)> {
            let own = self.units[u].procedures.iter().position(|p| p.name == name).map(|i| (u, i));
            own.or_else(|| {
                self.units.iter().enumerate().find_map(|(v, unit)| {
                    unit.procedures.iter().position(|p| p.name == name && !p.is_static).map(|i| (v, i))
                })
            })
        }

        /// The procedures with external linkage (`main` among them).
        fn externals(&self) -> Vec<(usize, usize)> {
            let mut out = Vec::new();
            for (u, unit) in self.units.iter().enumerate() {
                for (i, p) in unit.procedures.iter().enumerate() {
                    if !p.is_static {
                        out.push((u, i));
                    }
                }
            }
            out
        }

        /// What a call through a pointer may reach: external procedures, and
        /// `static` ones whose unit takes their address.
        fn pointer_targets(&self) -> Vec<(usize, usize)> {
            let mut out = Vec::new();
            for (u, unit) in self.units.iter().enumerate() {
                for (i, p) in unit.procedures.iter().enumerate() {
                    if !p.is_static || unit.address_taken.contains(&p.name) {
                        out.push((u, i));
                    }
                }
            }
            out
        }
    }

    fn random_procedure(name: &str, is_static: bool, raw: &RawProc) -> (Procedure, Vec<Probe>) {
        let (n, outs, derived, completes, conds, calls, _) = raw;
        let n = *n;
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        let mut full = vec![Derived; n];
        for (i, &(a, b, r, indirect)) in calls.iter().enumerate().take(n) {
            let kind = match i {
                0 => NodeKind::Entry,
                _ if i == n - 1 => NodeKind::Exit,
                _ => NodeKind::Statement,
            };
            let mut x = Node::new(kind, format!("s{i}"));
            if i != 0 && i != n - 1 {
                for c in [a, b] {
                    if (c as usize) < NAMES.len() && !x.calls.iter().any(|y| y == NAMES[c as usize]) {
                        x.calls.push(NAMES[c as usize].into());
                        x.refs.push(NAMES[c as usize].into());
                    }
                }
                if (r as usize) < 4 && !x.refs.iter().any(|y| y == NAMES[r as usize]) {
                    x.refs.push(NAMES[r as usize].into());
                }
                x.indirect_call = indirect;
            }
            nodes.push(x);
        }
        for i in 0..n - 1 {
            let ts: Vec<usize> = outs[i].iter().map(|t| 1 + t % (n - 1)).collect();
            let labels: Vec<EdgeLabel> = match ts.len() {
                1 => vec![Eps],
                2 => vec![T, F],
                _ => (0..ts.len()).map(|k| EdgeLabel::Case(k.to_string())).collect(),
            };
            for (t, l) in ts.iter().zip(labels) {
                edges.push((i as u32, *t as u32, l));
            }
            full[i] = match (ts.len(), derived[i] && i != 0) {
                (1, false) => N,
                (1, true) => Derived,
                (_, false) => PerEdge,
                (_, true) => Derived,
            };
        }
        let p = procedure(name, is_static, nodes, &edges, &full);
        // a node that calls may not return
        let completes = |v: NodeId| completes[v.index()] && !p.cond.node(v).has_calls();
        let thin = derive_probes(&p.cond, &full, &completes);
        let plan = pair_probes(&p.cond, &thin, &completes, &|v| conds[v.index()]);
        (p, plan)
    }

    /// One run of a [`Program`] from `main`, as the build's probes record it:
    /// per step (a node starting) a choice of out-edge, where to stop (below
    /// 1: as the node starts, below 2: after its calls returned) and which
    /// procedure a call through a pointer reaches. The process stops where
    /// told, or where the choices run out (killed from outside), with every
    /// activation on the stack stopped part-way.
    struct Run<'a> {
        program: &'a Program,
        layouts: Vec<Vec<CellLayout>>,
        choices: &'a [(u8, u8, u8)],
        next: usize,
        /// Per unit and procedure, hit cells and edges taken.
        hits: Vec<Vec<BTreeSet<u32>>>,
        taken: Vec<Vec<FixedBitSet>>,
    }

    /// The process stopped.
    struct Stop;

    impl<'a> Run<'a> {
        fn new(program: &'a Program, choices: &'a [(u8, u8, u8)]) -> Run<'a> {
            let units = &program.units;
            Run {
                program,
                layouts: program.layouts(),
                choices,
                next: 0,
                hits: units.iter().map(|u| vec![BTreeSet::new(); u.procedures.len()]).collect(),
                taken: units
                    .iter()
                    .map(|u| u.procedures.iter().map(|p| FixedBitSet::with_capacity(p.cond.edge_count())).collect())
                    .collect(),
            }
        }

        /// Runs procedure `i` of unit `u`, from its entry to its exit.
        fn call(&mut self, u: usize, i: usize) -> Result<(), Stop> {
            let program = self.program;
            let g: &Cfg = &program.units[u].procedures[i].cond;
            let probes = &program.plans[u][i];
            let layout = self.layouts[u][i].clone();
            let pairs = active_pairs(g, probes, &layout);
            // a paired in-edge noted in this activation
            let mut noted: Option<Pair> = None;
            let mut v = g.entry();
            while v != g.exit() {
                let &(pick, stop, target) = self.choices.get(self.next).ok_or(Stop)?;
                self.next += 1;
                if probes[v.index()] == Probe::Node {
                    self.hits[u][i].insert(layout.cell_of_node(v));
                }
                if stop == 0 {
                    return Err(Stop);
                }
                let x = g.node(v);
                for name in &x.calls {
                    let callee = if name == "fp" { self.through_pointer(target) } else { program.resolve(u, name) };
                    if let Some((cu, ci)) = callee {
                        self.call(cu, ci)?;
                    }
                }
                if x.indirect_call
                    && let Some((cu, ci)) = self.through_pointer(target)
                {
                    self.call(cu, ci)?;
                }
                if stop == 1 {
                    return Err(Stop);
                }
                let e = take_edge(g, probes, &layout, &pairs, v, pick, &mut noted, &mut self.hits[u][i]);
                self.taken[u][i].insert(e.index());
                v = g.edge(e).dst;
            }
            Ok(())
        }

        /// The procedure a call through a pointer reaches, if one of the program's.
        fn through_pointer(&self, target: u8) -> Option<(usize, usize)> {
            let targets = self.program.pointer_targets();
            targets.get(target as usize % (targets.len() + 1)).copied()
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6000))]

        /// Runs of a random program stopped anywhere — in any node, with any
        /// calls on the stack —: every edge they took is claimed. A run starts
        /// in `main` or, as a test harness outside the units would call it, in
        /// any procedure with external linkage; its calls go by a name its
        /// unit resolves (its own procedure, else the external one; `main`
        /// too, recursively), or through a pointer (`fp ()`, or an indirect
        /// call) to an external procedure or a `static` one whose unit takes
        /// its address.
        #[test]
        fn runs_stopped_anywhere_keep_every_edge_they_took_in_every_procedure(
            raw in raw_program(),
            runs in proptest::collection::vec(
                (0u8..6, proptest::collection::vec((0u8..6, 0u8..16, 0u8..8), 0..80)),
                1..4,
            ),
        ) {
            let program = Program::new(&raw);
            let mut hits: Vec<Vec<BTreeSet<u32>>> =
                program.units.iter().map(|u| vec![BTreeSet::new(); u.procedures.len()]).collect();
            let mut truth: Vec<Vec<FixedBitSet>> = program
                .units
                .iter()
                .map(|u| u.procedures.iter().map(|p| FixedBitSet::with_capacity(p.cond.edge_count())).collect())
                .collect();
            for (start, choices) in &runs {
                let mut run = Run::new(&program, choices);
                // from `main`, or from code outside the units (a test
                // harness) calling a procedure with external linkage
                let externals = program.externals();
                let (u, i) = if *start < 3 { (0, 0) } else { externals[*start as usize % externals.len()] };
                let _ = run.call(u, i);
                for (u, procs) in run.hits.into_iter().enumerate() {
                    for (i, h) in procs.into_iter().enumerate() {
                        hits[u][i].extend(h);
                        truth[u][i].union_with(&run.taken[u][i]);
                    }
                }
            }
            let got = program.stopped(&|u, i, c| hits[u][i].contains(&c));
            for (u, procs) in got.iter().enumerate() {
                for (i, p) in procs.iter().enumerate() {
                    proptest::prop_assert!(
                        truth[u][i].is_subset(&p.edges),
                        "unit {} procedure {}: took {:?}, claimed {:?}",
                        u,
                        program.units[u].procedures[i].name,
                        truth[u][i].ones().collect::<Vec<_>>(),
                        p.edges.ones().collect::<Vec<_>>()
                    );
                }
            }
        }

        /// Whatever the cells: every procedure claims at least what
        /// [`edge_coverage`] claims of its cells, and more hit cells never
        /// claim fewer edges or enter fewer procedures.
        #[test]
        fn stopped_edges_claim_what_the_cells_show_and_grow_with_them(
            raw in raw_program(),
            cells in proptest::collection::vec(proptest::num::u64::ANY, 9),
            more in proptest::collection::vec(proptest::num::u64::ANY, 9),
        ) {
            let program = Program::new(&raw);
            let layouts = program.layouts();
            // a mask per procedure (unit-major), sparse
            let mask = |bits: &[u64], u: usize, i: usize| {
                let k = program.units[..u].iter().map(|x| x.procedures.len()).sum::<usize>() + i;
                bits[k] & bits[(k + 1) % bits.len()] & bits[(k + 2) % bits.len()]
            };
            let few = |u: usize, i: usize, c: u32| c < 64 && mask(&cells, u, i) >> c & 1 == 1;
            let many = |u: usize, i: usize, c: u32| few(u, i, c) || (c < 64 && mask(&more, u, i) >> c & 1 == 1);
            let (a, b) = (program.stopped(&few), program.stopped(&many));
            for (u, unit) in program.units.iter().enumerate() {
                for (i, p) in unit.procedures.iter().enumerate() {
                    let plan = &program.plans[u][i];
                    let shown = edge_coverage(&p.cond, plan, &layouts[u][i], &|c| few(u, i, c));
                    proptest::prop_assert!(shown.is_subset(&a[u][i].edges), "{}: claims less than its cells show", p.name);
                    proptest::prop_assert!(a[u][i].edges.is_subset(&b[u][i].edges), "{}: more cells, fewer edges", p.name);
                    proptest::prop_assert!(!a[u][i].entered || b[u][i].entered, "{}: more cells, not entered", p.name);
                }
            }
        }
    }
}
