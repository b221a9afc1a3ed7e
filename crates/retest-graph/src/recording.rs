//! Run-time recording beyond edge probes: *registers* that sum increments along
//! the edges an execution takes, and cells or id sets that receive their value
//! at chosen edges. Two clients use it:
//!
//! * MC/DC per evaluation: one register per decision sums the increments of the
//!   decision's path numbering (`retest_cover::mcdc::DecisionPaths`); at the
//!   edge that leaves the decision, cell `base + r` records which conditions were
//!   evaluated, their values and the outcome.
//! * Ball–Larus path profiling (000 §5): one register per procedure invocation
//!   (the *frame* register) sums the increments of [`crate::pathnum`] on the
//!   statement-level CFG; a back edge records the path it ends and restarts the
//!   register; returning from the procedure records the last path.
//!
//! A [`Component`] is one register's work: the [`Action`]s to run when each
//! condition-level edge is traversed. Components are independent — a front end
//! places each one or drops it whole (and says why), so a component is never
//! half instrumented.
//!
//! Path profiling also counts *frames in flight* per procedure (incremented at
//! entry, decremented at return). A procedure whose count is not zero when a
//! process writes its trace was left by `exit`, `longjmp`, a signal or an
//! `exec` in the middle of a path that was never recorded: its recorded paths
//! are then incomplete, and selection must fall back to edge coverage for it.

use std::collections::BTreeMap;

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

use crate::cfg::EdgeId;
use crate::pathnum::{Increment, PathCountOverflow, PathNumbering};
use crate::unit::{Procedure, Unit};

pub use retest_abi::{SECT_FRAMES, SECT_MCDC, SECT_PATHS};

/// Id-set keys at or above this value name MC/DC decisions (key − base = the
/// decision's number in the unit); below it, procedures' path ids.
pub const MCDC_KEY_BASE: u32 = 0x8000_0000;

/// A procedure with at most this many acyclic paths records them in cells;
/// above it, in the runtime's id set (a call per recorded path).
pub const PATH_CELL_LIMIT: u64 = 4096;

/// Where a recorded value goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Sink {
    /// Cell `base + value` of the section (`SECT_MCDC` or `SECT_PATHS`).
    Cell { sect: u32, base: u32 },
    /// Id `value` under `key` in the runtime's id set.
    Id { key: u32 },
}

/// What traversing an edge does to the component's register `r`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Action {
    /// `r = value`.
    Set(u64),
    /// `r += value`.
    Add(u64),
    /// Record `r + add` into the sink.
    Record { sink: Sink, add: u64 },
}

impl Action {
    /// Whether the action commutes with every [`Action::Add`] (only `Add` does):
    /// where it runs relative to other increments matters.
    pub fn is_add(&self) -> bool {
        matches!(self, Action::Add(_))
    }
}

/// One register's recording: the actions per condition-level edge.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Component {
    /// Condition-level edge → actions, in order; ascending by edge, each edge once.
    pub on_edge: Vec<(EdgeId, Vec<Action>)>,
}

impl Component {
    /// Appends `actions` to those of edge `e`.
    pub fn push(&mut self, e: EdgeId, actions: &[Action]) {
        if actions.is_empty() {
            return;
        }
        match self.on_edge.binary_search_by_key(&e, |(x, _)| *x) {
            Ok(i) => self.on_edge[i].1.extend_from_slice(actions),
            Err(i) => self.on_edge.insert(i, (e, actions.to_vec())),
        }
    }

    /// The actions of edge `e`.
    pub fn actions(&self, e: EdgeId) -> &[Action] {
        match self.on_edge.binary_search_by_key(&e, |(x, _)| *x) {
            Ok(i) => &self.on_edge[i].1,
            Err(_) => &[],
        }
    }
}

/// Path profiling of one procedure: the frame register's component, what to
/// record when the procedure returns, and its frames-in-flight counter.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct PathComponent {
    /// Increments and back-edge records; the register starts at 0 at entry.
    pub component: Component,
    /// Where the path that ends at the procedure's exit goes (the register's value at return).
    pub at_return: Sink,
    /// Index of the procedure's counter in the unit's `SECT_FRAMES` section.
    pub counter: u32,
}

/// All recording of one procedure.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct ProcRecording {
    /// One component per recorded MC/DC decision (each its own register), with
    /// the decision's index in the procedure's decision list.
    pub decisions: Vec<(u32, Component)>,
    /// Path profiling, if recorded.
    pub path: Option<PathComponent>,
}

impl ProcRecording {
    /// Whether there is nothing to record.
    pub fn is_empty(&self) -> bool {
        self.decisions.is_empty() && self.path.is_none()
    }
}

/// All recording of one unit, as instrumented: per procedure its components,
/// and the sizes of the sections they record into. `None` sizes: not recorded.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct UnitRecording {
    /// One per procedure (empty when nothing beyond edges is recorded).
    pub procs: Vec<ProcRecording>,
    /// Cells of `SECT_MCDC` (`retest cc --mcdc`).
    pub mcdc_cells: Option<u32>,
    /// Cells of `SECT_PATHS` (`retest cc --paths`); the unit then also has one
    /// `SECT_FRAMES` counter per procedure.
    pub path_cells: Option<u32>,
    /// Edge cells are execution counters (`retest cc --counts`): each probe
    /// adds one to a 64-bit counter instead of storing a byte. Left out of
    /// the serialised form when false, so recordings (and build hashes) of
    /// builds without counters are what they were before counters existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counts: bool,
}

impl UnitRecording {
    /// Whether anything beyond edges is recorded (execution counts included).
    pub fn is_empty(&self) -> bool {
        self.mcdc_cells.is_none() && self.path_cells.is_none() && !self.counts
    }

    /// Whether decision `j` of procedure `i` records its evaluations.
    pub fn records_decision(&self, i: usize, j: usize) -> bool {
        self.procs.get(i).is_some_and(|p| p.decisions.iter().any(|(k, _)| *k as usize == j))
    }

    /// Whether procedure `i` records its paths.
    pub fn records_paths(&self, i: usize) -> bool {
        self.procs.get(i).is_some_and(|p| p.path.is_some())
    }
}

/// What one test recorded in one unit beyond edges (`retest cc --mcdc`,
/// `--paths`): hit cells of each section, and the runtime's id sets. What the
/// cells and ids mean follows from the unit's layouts
/// (`retest_cover::mcdc::McdcLayout`, [`PathLayout`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recorded {
    /// Hit cells of the MC/DC section: decision evaluations.
    pub mcdc: RoaringBitmap,
    /// Hit cells of the paths section: acyclic paths taken.
    pub paths: RoaringBitmap,
    /// Procedures (by index) with a call in flight when some trace was written:
    /// a path of theirs was cut off and not recorded.
    pub frames: RoaringBitmap,
    /// Id sets by key: a procedure's index for its path ids, or
    /// `MCDC_KEY_BASE` + a decision's number for its evaluations.
    pub ids: BTreeMap<u32, Vec<u64>>,
    /// Execution counts of condition-level edges (unit-wide edge numbers, as
    /// the matrix numbers them), summed over the test's processes: only edges
    /// that ran and whose count the build's counters determine
    /// ([`crate::coverage::edge_counts`]); empty without `--counts`.
    pub counts: BTreeMap<u32, u64>,
}

impl Recorded {
    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.mcdc.is_empty()
            && self.paths.is_empty()
            && self.frames.is_empty()
            && self.ids.is_empty()
            && self.counts.is_empty()
    }

    /// Adds everything `other` recorded; execution counts add up.
    pub fn union_with(&mut self, other: &Recorded) {
        self.mcdc |= &other.mcdc;
        self.paths |= &other.paths;
        self.frames |= &other.frames;
        for (e, c) in &other.counts {
            let mine = self.counts.entry(*e).or_default();
            *mine = mine.saturating_add(*c);
        }
        for (k, ids) in &other.ids {
            let mine = self.ids.entry(*k).or_default();
            mine.extend_from_slice(ids);
            mine.sort_unstable();
            mine.dedup();
        }
    }
}

/// How one procedure's paths are recorded.
#[derive(Clone, Debug)]
pub enum ProcPaths {
    /// In cells `base .. base + numbering.path_count()` of `SECT_PATHS`.
    Cells { base: u32, numbering: PathNumbering },
    /// In the id set, under the procedure's index as key.
    Ids { numbering: PathNumbering },
    /// Not recorded: the procedure has a single acyclic path, so its edge
    /// coverage says all that its path coverage would (and selection uses it).
    Single,
    /// Not recorded, and why (selection uses edge coverage for it).
    Off(String),
}

impl ProcPaths {
    /// The numbering, when paths are recorded.
    pub fn numbering(&self) -> Option<&PathNumbering> {
        match self {
            ProcPaths::Cells { numbering, .. } | ProcPaths::Ids { numbering } => Some(numbering),
            ProcPaths::Off(_) | ProcPaths::Single => None,
        }
    }
}

/// The path-profiling layout of a unit: per procedure, Ball–Larus numbering of
/// its statement-level CFG and where its path ids go. Deterministic in the
/// unit, so the recorder and every reader compute the same layout.
#[derive(Clone, Debug)]
pub struct PathLayout {
    pub procs: Vec<ProcPaths>,
    /// Cells of `SECT_PATHS`.
    pub cells: u32,
}

impl PathLayout {
    pub fn new(unit: &Unit) -> PathLayout {
        let mut cells = 0u32;
        let mut procs = Vec::with_capacity(unit.procedures.len());
        for p in &unit.procedures {
            procs.push(match Self::numbering_of(p, &unit.returns_twice) {
                Err(why) => ProcPaths::Off(why),
                Ok(numbering) if numbering.path_count() <= 1 => ProcPaths::Single,
                Ok(numbering) => {
                    let n = numbering.path_count();
                    if n <= PATH_CELL_LIMIT && u64::from(cells) + n <= u64::from(u32::MAX / 2) {
                        let base = cells;
                        cells += n as u32;
                        ProcPaths::Cells { base, numbering }
                    } else {
                        ProcPaths::Ids { numbering }
                    }
                }
            });
        }
        PathLayout { procs, cells }
    }

    /// Calls of `returns_twice` (the unit's [`Unit::returns_twice`]) come back
    /// into the middle of the caller: its path register is then indeterminate.
    fn numbering_of(p: &Procedure, returns_twice: &[String]) -> Result<PathNumbering, String> {
        if let Some(why) = &p.unanalysable {
            return Err(format!("the procedure is unanalysable ({why})"));
        }
        if let Some(f) = p.cond.nodes().flat_map(|(_, n)| n.calls.iter()).find(|c| returns_twice.contains(c)) {
            return Err(format!("it calls `{f}`, after which the path register is indeterminate"));
        }
        PathNumbering::new(&p.stmt).map_err(|PathCountOverflow| "it has 2^64 or more acyclic paths".to_string())
    }

    /// The path component of procedure `i`: increments of its statement-level
    /// edges on their condition-level preimages, back edges recording and
    /// restarting. Edges into the exit need nothing: the return records.
    pub fn component(&self, unit: &Unit, i: usize) -> Option<PathComponent> {
        let p = &unit.procedures[i];
        let (numbering, at_return) = match &self.procs[i] {
            ProcPaths::Cells { base, numbering } => (numbering, Sink::Cell { sect: SECT_PATHS, base: *base }),
            ProcPaths::Ids { numbering } => (numbering, Sink::Id { key: i as u32 }),
            ProcPaths::Off(_) | ProcPaths::Single => return None,
        };
        let mut component = Component::default();
        for (fine, coarse) in p.map.edge.iter().enumerate() {
            let Some(coarse) = coarse else { continue };
            let fine = EdgeId(fine as u32);
            match numbering.increment(*coarse) {
                Increment::Forward(0) | Increment::Unreachable => {}
                Increment::Forward(v) => component.push(fine, &[Action::Add(v)]),
                Increment::Back { end, restart } => {
                    component.push(fine, &[Action::Record { sink: at_return, add: end }, Action::Set(restart)])
                }
            }
        }
        Some(PathComponent { component, at_return, counter: i as u32 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::{CfgBuilder, EdgeLabel, Node, NodeKind};

    #[test]
    fn push_keeps_edges_sorted_and_appends() {
        let mut c = Component::default();
        c.push(EdgeId(5), &[Action::Add(1)]);
        c.push(EdgeId(2), &[Action::Set(0)]);
        c.push(EdgeId(5), &[Action::Record { sink: Sink::Id { key: 3 }, add: 0 }]);
        c.push(EdgeId(7), &[]);
        assert_eq!(c.on_edge.iter().map(|(e, _)| e.0).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(c.actions(EdgeId(5)), &[Action::Add(1), Action::Record { sink: Sink::Id { key: 3 }, add: 0 }]);
        assert!(c.actions(EdgeId(7)).is_empty());
    }

    /// A procedure with one acyclic path records none: its edges say it all.
    #[test]
    fn a_single_path_is_not_profiled() {
        let mut b = CfgBuilder::new("g");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let s = b.add_node(Node::new(NodeKind::Statement, "s;"));
        let ex = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(ex);
        b.add_edge(en, s, EdgeLabel::Eps);
        b.add_edge(s, ex, EdgeLabel::Eps);
        let cfg = b.build().unwrap();
        let map = crate::cfg::Contraction {
            node: cfg.node_ids().collect(),
            edge: cfg.edges().map(|(e, _)| Some(e)).collect(),
        };
        let p = Procedure {
            name: "g".into(),
            is_static: false,
            span: None,
            cond: cfg.clone(),
            stmt: cfg.clone(),
            map,
            probes: vec![crate::coverage::Probe::Node; cfg.node_count()],
            locals: vec![],
            unanalysable: None,
            digest: 0,
        };
        let unit = Unit { procedures: vec![p], ..Unit::default() };
        let layout = PathLayout::new(&unit);
        assert!(matches!(layout.procs[0], ProcPaths::Single));
        assert_eq!(layout.cells, 0);
        assert!(layout.component(&unit, 0).is_none());
    }

    /// `while (c) s;`: the back edge records `r + end` and restarts; the loop's
    /// exit edge and the loop entry carry increments that tell the paths apart.
    #[test]
    fn loop_paths_record_at_the_back_edge() {
        let mut b = CfgBuilder::new("f");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let ex = b.add_node(Node::new(NodeKind::Exit, ""));
        let c = b.add_node(Node::new(NodeKind::Predicate, "c"));
        let s = b.add_node(Node::new(NodeKind::Statement, "s;"));
        b.set_entry(en);
        b.set_exit(ex);
        b.add_edge(en, c, EdgeLabel::Eps);
        b.add_edge(c, s, EdgeLabel::True);
        b.add_edge(c, ex, EdgeLabel::False);
        b.add_edge(s, c, EdgeLabel::Eps);
        let cfg = b.build().unwrap();
        let map = crate::cfg::Contraction {
            node: cfg.node_ids().collect(),
            edge: cfg.edges().map(|(e, _)| Some(e)).collect(),
        };
        let p = Procedure {
            name: "f".into(),
            is_static: false,
            span: None,
            cond: cfg.clone(),
            stmt: cfg.clone(),
            map,
            probes: vec![crate::coverage::Probe::Node; cfg.node_count()],
            locals: vec![],
            unanalysable: None,
            digest: 0,
        };
        let unit = Unit { procedures: vec![p], ..Unit::default() };
        let layout = PathLayout::new(&unit);
        let n = layout.procs[0].numbering().unwrap();
        // entry→exit, entry→back edge, c→back edge, c→exit
        assert_eq!(n.path_count(), 4);
        assert_eq!(layout.cells, 4);
        let comp = layout.component(&unit, 0).unwrap();
        let back = cfg.out_edges(s).next().unwrap();
        let acts = comp.component.actions(back);
        assert!(matches!(
            acts,
            [Action::Record { sink: Sink::Cell { sect: SECT_PATHS, base: 0 }, .. }, Action::Set(_)]
        ));
        // every execution's recorded ids are what `split` says
        let t = cfg.out_edge_labelled(c, &EdgeLabel::True).unwrap();
        let f = cfg.out_edge_labelled(c, &EdgeLabel::False).unwrap();
        let e0 = cfg.out_edges(en).next().unwrap();
        let walk = [e0, t, back, t, back, f];
        let mut r = 0u64;
        let mut recorded = Vec::new();
        for &e in &walk {
            for a in comp.component.actions(e) {
                match *a {
                    Action::Set(v) => r = v,
                    Action::Add(v) => r += v,
                    Action::Record { add, .. } => recorded.push(r + add),
                }
            }
        }
        recorded.push(r); // at return
        assert_eq!(recorded, n.split(&cfg, &walk).unwrap());
    }
}
