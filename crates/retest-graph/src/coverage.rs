//! Probes and edge coverage.
//!
//! A front end decides, per node of the (condition-level) CFG, how its out-edges
//! are observed at run time ([`Probe`]). The probes of a procedure are laid out as
//! consecutive *cells* (one byte each at run time); [`CellLayout`] numbers them and
//! [`edge_coverage`] turns the set of hit cells back into the set of traversed
//! edges. The rule for unprobed nodes over-approximates, never under-approximates:
//! an unprobed node's out-edges count as traversed as soon as any of its in-edges
//! is — "the node ran, so it left by its out-edge(s)". An edge without a cell of
//! its own may also lead into a node that has no other in-edge and shows its own
//! start: then it was traversed iff that node started.

use fixedbitset::FixedBitSet;
use serde::{Deserialize, Serialize};

use crate::cfg::{Cfg, EdgeId, EdgeLabel, NodeId};

/// How a node's out-edges are observed.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Probe {
    /// No cell: out-edges are traversed iff some in-edge is.
    Derived,
    /// Not observed in this build (selective instrumentation): out-edges are
    /// unknown — never reported covered, and not *measured* (see [`measured_edges`]).
    Off,
    /// One cell, set when the node starts executing; marks every out-edge.
    Node,
    /// One cell per out-edge, in out-edge order, set when that edge is taken.
    PerEdge,
    /// No cell: the node has one out-edge, into a node that has no other in-edge
    /// and shows its own start (see [`Probe::Edges`]); the out-edge is traversed
    /// iff that successor started.
    Ahead,
    /// A cell for each out-edge whose bit is set (bit `k`: the `k`-th out-edge),
    /// set when that edge is taken; an out-edge without a cell leads into a node
    /// that has no other in-edge and shows its own start — a condition that,
    /// once started, always takes one of its edges, each with a cell or itself
    /// leading into such a node, or an `Ahead` node — and is traversed iff that
    /// node started.
    Edges(u32),
}

impl Probe {
    /// Whether out-edge number `k` of a node with this probe has a cell of its own.
    pub fn has_edge_cell(self, k: usize) -> bool {
        match self {
            Probe::PerEdge => true,
            Probe::Edges(m) => k < 32 && m >> k & 1 == 1,
            Probe::Derived | Probe::Off | Probe::Node | Probe::Ahead => false,
        }
    }

    /// Edge cells among the first `k` out-edges: the offset of out-edge `k`'s cell
    /// from the node's first cell (and, for `k` = the out-degree, their number).
    fn edge_cells_before(self, k: usize) -> u32 {
        (0..k).filter(|&j| self.has_edge_cell(j)).count() as u32
    }

    /// Whether out-edge number `k` is traversed iff its target started.
    fn edge_ahead(self, k: usize) -> bool {
        match self {
            Probe::Ahead => true,
            Probe::Edges(_) => !self.has_edge_cell(k),
            Probe::Derived | Probe::Off | Probe::Node | Probe::PerEdge => false,
        }
    }

    /// Whether the node has at least one cell.
    pub fn is_probed(self) -> bool {
        matches!(self, Probe::Node | Probe::PerEdge | Probe::Edges(_))
    }
}

/// Cell numbers of a procedure's probes, relative to the procedure's first cell.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CellLayout {
    /// First cell of each node (meaningful only for probed nodes).
    pub first: Vec<u32>,
    /// Number of cells.
    pub cells: u32,
}

impl CellLayout {
    /// Numbers the cells: nodes in id order; a `Node` probe takes one cell, a
    /// `PerEdge` probe one per out-edge, an `Edges` probe one per set bit.
    pub fn new(cfg: &Cfg, probes: &[Probe]) -> CellLayout {
        assert_eq!(probes.len(), cfg.node_count());
        let mut first = Vec::with_capacity(probes.len());
        let mut next = 0u32;
        for (n, p) in cfg.node_ids().zip(probes) {
            first.push(next);
            next += match p {
                Probe::Derived | Probe::Off | Probe::Ahead => 0,
                Probe::Node => 1,
                Probe::PerEdge | Probe::Edges(_) => p.edge_cells_before(cfg.out_edges(n).len()),
            };
        }
        CellLayout { first, cells: next }
    }

    /// The cell that records edge `e`, if it has one.
    pub fn cell_of_edge(&self, cfg: &Cfg, probes: &[Probe], e: EdgeId) -> Option<u32> {
        let src = cfg.edge(e).src;
        let p = probes[src.index()];
        match p {
            Probe::Derived | Probe::Off | Probe::Ahead => None,
            Probe::Node => Some(self.first[src.index()]),
            Probe::PerEdge | Probe::Edges(_) => {
                let k = cfg.out_edges(src).position(|x| x == e).unwrap();
                p.has_edge_cell(k).then(|| self.first[src.index()] + p.edge_cells_before(k))
            }
        }
    }

    /// The cell of a `Node`-probed node.
    pub fn cell_of_node(&self, n: NodeId) -> u32 {
        self.first[n.index()]
    }
}

/// Whether each node started, for the nodes edges are derived from ahead; memoised,
/// so a chain is followed once.
struct Starts<'a> {
    cfg: &'a Cfg,
    probes: &'a [Probe],
    memo: Vec<Option<bool>>,
}

impl<'a> Starts<'a> {
    fn new(cfg: &'a Cfg, probes: &'a [Probe]) -> Starts<'a> {
        Starts { cfg, probes, memo: vec![None; cfg.node_count()] }
    }

    /// Whether `q` started, where `leaf(q, Some(k))` says whether `q`'s out-edge
    /// `k` (with a cell) was taken and `leaf(q, None)` whether `Node`-probed `q`
    /// started. Chains of derived edges are acyclic and short (`derive_probes`
    /// bounds them), so the recursion is shallow.
    fn started(&mut self, q: NodeId, leaf: &dyn Fn(NodeId, Option<usize>) -> bool) -> bool {
        if let Some(v) = self.memo[q.index()] {
            return v;
        }
        self.memo[q.index()] = Some(false); // a cycle (not produced by derive_probes) shows nothing
        let p = self.probes[q.index()];
        let v = match p {
            Probe::Node => leaf(q, None),
            Probe::PerEdge | Probe::Edges(_) | Probe::Ahead => {
                let outs: Vec<EdgeId> = self.cfg.out_edges(q).collect();
                outs.iter().enumerate().any(|(k, &e)| {
                    if p.edge_ahead(k) {
                        self.started(self.cfg.edge(e).dst, leaf)
                    } else {
                        p.has_edge_cell(k) && leaf(q, Some(k))
                    }
                })
            }
            Probe::Derived | Probe::Off => false,
        };
        self.memo[q.index()] = Some(v);
        v
    }
}

/// Traversed edges given which cells were hit (`hit(cell)`), with the derivation
/// rules for unprobed nodes and cell-less edges applied.
pub fn edge_coverage(cfg: &Cfg, probes: &[Probe], layout: &CellLayout, hit: &dyn Fn(u32) -> bool) -> FixedBitSet {
    let mut cov = FixedBitSet::with_capacity(cfg.edge_count());
    let mut work: Vec<NodeId> = Vec::new();
    let leaf = |q: NodeId, k: Option<usize>| -> bool {
        let f = layout.first[q.index()];
        match k {
            None => hit(f),
            Some(k) => hit(f + probes[q.index()].edge_cells_before(k)),
        }
    };
    let mut starts = Starts::new(cfg, probes);
    for n in cfg.node_ids() {
        let p = probes[n.index()];
        match p {
            Probe::Derived | Probe::Off => {}
            Probe::Node => {
                if hit(layout.first[n.index()]) {
                    for e in cfg.out_edges(n) {
                        if !cov.put(e.index()) {
                            work.push(cfg.edge(e).dst);
                        }
                    }
                }
            }
            Probe::PerEdge | Probe::Edges(_) | Probe::Ahead => {
                let outs: Vec<EdgeId> = cfg.out_edges(n).collect();
                for (k, e) in outs.into_iter().enumerate() {
                    let taken = if p.edge_ahead(k) {
                        starts.started(cfg.edge(e).dst, &leaf)
                    } else {
                        p.has_edge_cell(k) && leaf(n, Some(k))
                    };
                    if taken && !cov.put(e.index()) {
                        work.push(cfg.edge(e).dst);
                    }
                }
            }
        }
    }
    // propagate through unprobed nodes
    while let Some(v) = work.pop() {
        if probes[v.index()] != Probe::Derived {
            continue;
        }
        for e in cfg.out_edges(v) {
            if !cov.put(e.index()) {
                work.push(cfg.edge(e).dst);
            }
        }
    }
    cov
}

/// Edges whose coverage a build with these probes determines: out-edges with a
/// cell or derived from a node whose start is determined, out-edges of `Node`
/// probes, and out-edges of unprobed (`Derived`) nodes all of whose in-edges are
/// determined. Out-edges of `Off` nodes, and everything derived only through
/// them, are unknown.
pub fn measured_edges(cfg: &Cfg, probes: &[Probe]) -> FixedBitSet {
    let mut m = FixedBitSet::with_capacity(cfg.edge_count());
    let mut memo = vec![None; cfg.node_count()];
    for n in cfg.node_ids() {
        let p = probes[n.index()];
        for (k, e) in cfg.out_edges(n).enumerate() {
            let determined = match p {
                Probe::Node => true,
                Probe::PerEdge | Probe::Edges(_) | Probe::Ahead => {
                    if p.edge_ahead(k) {
                        determined_start(cfg, probes, &mut memo, cfg.edge(e).dst)
                    } else {
                        p.has_edge_cell(k)
                    }
                }
                Probe::Derived | Probe::Off => false,
            };
            if determined {
                m.insert(e.index());
            }
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for n in cfg.node_ids() {
            if probes[n.index()] != Probe::Derived || n == cfg.entry() {
                continue;
            }
            let outs: Vec<EdgeId> = cfg.out_edges(n).collect();
            if outs.iter().all(|e| m.contains(e.index())) {
                continue;
            }
            if cfg.in_edges(n).iter().all(|e| m.contains(e.index())) {
                for e in outs {
                    m.insert(e.index());
                }
                changed = true;
            }
        }
    }
    m
}

/// Whether the cells determine if `q` started: every cell-less edge it is
/// derived through leads to such a node.
fn determined_start(cfg: &Cfg, probes: &[Probe], memo: &mut Vec<Option<bool>>, q: NodeId) -> bool {
    if let Some(v) = memo[q.index()] {
        return v;
    }
    memo[q.index()] = Some(false);
    let p = probes[q.index()];
    let v = match p {
        Probe::Node => true,
        Probe::PerEdge | Probe::Edges(_) | Probe::Ahead => {
            let outs: Vec<EdgeId> = cfg.out_edges(q).collect();
            !outs.is_empty()
                && outs.iter().enumerate().all(|(k, &e)| {
                    if p.edge_ahead(k) {
                        determined_start(cfg, probes, memo, cfg.edge(e).dst)
                    } else {
                        p.has_edge_cell(k)
                    }
                })
        }
        Probe::Derived | Probe::Off => false,
    };
    memo[q.index()] = Some(v);
    v
}

/// Longest chain of cell-less edges `derive_probes` builds (bounds the work of
/// following one).
const MAX_CHAIN: u32 = 64;

/// Drops every probe cell the others already imply, keeping edge coverage exact
/// for every run in which no node stops the process part-way (a crash, or a call
/// that never returns). `completes(n)`: once started, `n` always leaves by one of
/// its out-edges (no call that might not return, no `asm`, nothing opaque).
///
/// Two passes over the nodes reachable from the entry:
///
/// * *Backwards* (postorder). A node `q` other than the entry *shows its start*
///   if it has exactly one in-edge and is a completing two-way condition whose
///   every out-edge has a cell or leads into a node that shows its start, or is
///   `Ahead` (a back edge's target is decided later, so never counts). An edge
///   into such a node needs no cell: a
///   condition's `T`/`F` edge loses its cell ([`Probe::Edges`]), and a `Node` or
///   `Derived` node that completes and has that one out-edge becomes
///   [`Probe::Ahead`]. So `if (a) … else if (b) …` and `a && b` record one cell
///   per evaluation instead of one per condition, and a function that begins
///   with straight-line code and a condition needs no entry probe.
/// * *Forwards* (reverse postorder). A node's start is *known* if it has a
///   `Node` probe, is `Ahead`, or is `Derived` and every in-edge is known. An
///   in-edge `p → n` is known if it has a cell or is derived ahead, or if `p` has
///   exactly one out-edge, completes, and `p`'s start is known already (never so
///   for the source of a back edge, which comes later: no node is derived from
///   itself). A `Node`-probed node other than the entry all of whose in-edges
///   are known becomes `Derived`.
///
/// Straight-line code keeps at most one probe, a branch's first statement none,
/// and the statement after a call its own. Unreachable nodes keep their probes.
pub fn derive_probes(cfg: &Cfg, probes: &[Probe], completes: &dyn Fn(NodeId) -> bool) -> Vec<Probe> {
    assert_eq!(probes.len(), cfg.node_count());
    let dfs = crate::reach::depth_first(cfg);
    let mut out = probes.to_vec();
    // per node: whether it shows its start to an edge into it, and the longest
    // chain of cell-less edges below it
    let mut shows = FixedBitSet::with_capacity(cfg.node_count());
    let mut chain = vec![0u32; cfg.node_count()];
    let two_way = |v: NodeId| {
        let labels: Vec<&EdgeLabel> = cfg.out_labels(v).collect();
        labels == [&EdgeLabel::True, &EdgeLabel::False]
    };
    // postorder: the target of every out-edge that is not a back edge comes first
    for &v in dfs.rpo.iter().rev() {
        let outs: Vec<EdgeId> = cfg.out_edges(v).collect();
        // A node that shows its start has this edge as its only in-edge, so it is
        // not the entry; the target of a back edge comes later and shows nothing yet.
        let derivable = |e: EdgeId| {
            let q = cfg.edge(e).dst;
            shows.contains(q.index()) && chain[q.index()] < MAX_CHAIN
        };
        match out[v.index()] {
            Probe::PerEdge if two_way(v) => {
                let mut mask = 0u32;
                for (k, &e) in outs.iter().enumerate() {
                    if !derivable(e) {
                        mask |= 1 << k;
                    }
                }
                if mask != 0b11 {
                    out[v.index()] = Probe::Edges(mask);
                }
                if completes(v) && cfg.in_edges(v).len() == 1 {
                    shows.insert(v.index());
                }
            }
            Probe::Node | Probe::Derived if completes(v) && outs.len() == 1 && derivable(outs[0]) => {
                out[v.index()] = Probe::Ahead;
                if cfg.in_edges(v).len() == 1 {
                    shows.insert(v.index());
                }
            }
            _ => {}
        }
        let p = out[v.index()];
        chain[v.index()] = outs
            .iter()
            .enumerate()
            .filter(|(k, _)| p.edge_ahead(*k))
            .map(|(_, &e)| chain[cfg.edge(e).dst.index()] + 1)
            .max()
            .unwrap_or(0);
    }
    let mut known = FixedBitSet::with_capacity(cfg.node_count());
    // reverse postorder: the source of every in-edge that is not a back edge comes first
    for &v in &dfs.rpo {
        let ins = cfg.in_edges(v);
        let ins_known = v != cfg.entry()
            && !ins.is_empty()
            && ins.iter().all(|&e| {
                let p = cfg.edge(e).src;
                let k = cfg.out_edges(p).position(|x| x == e).unwrap();
                let pp = out[p.index()];
                if pp.has_edge_cell(k) || pp.edge_ahead(k) {
                    return true;
                }
                // the source of a back edge comes later: not known yet
                matches!(pp, Probe::Node | Probe::Derived)
                    && known.contains(p.index())
                    && cfg.out_edges(p).len() == 1
                    && completes(p)
            });
        match out[v.index()] {
            Probe::Node => {
                known.insert(v.index());
                if ins_known {
                    out[v.index()] = Probe::Derived;
                }
            }
            Probe::Ahead => known.insert(v.index()),
            Probe::Derived => known.set(v.index(), ins_known),
            Probe::PerEdge | Probe::Edges(_) | Probe::Off => {}
        }
    }
    out
}

/// Edge coverage of runs that may have stopped part-way through *any* node:
/// killed by a fatal signal (a fault inside a condition, a signal sent from
/// outside), or still running in another thread when the trace was written.
///
/// [`edge_coverage`] is exact only when every node that started either
/// completed or does not complete by nature ([`derive_probes`]): it claims an
/// edge without a cell when the node it leads into *shows* its start, so a node
/// stopped before it showed anything hides the edges that led into it — in
/// `y = 1; if (*p > 0) …` a fault at `*p` hides the whole function. Here, on top
/// of what [`edge_coverage`] claims, every out-edge of a node that *may have
/// started* is claimed where it has no cell of its own and either is derived
/// from its target's start or leaves a `Derived` node — and its target may
/// have started in turn. A node may have started when it is the source or the
/// target of a claimed edge, when its `Node` cell is hit, and the entry when
/// `entered` (the procedure may have been running: the caller decides, from
/// what called it). So every edge a stopped run took is claimed if its
/// procedure's entry is `entered` or claimed; nothing claimed by
/// [`edge_coverage`] is dropped; the extra edges are those a run stopped at
/// the right node could have taken.
///
/// Returns the edges and the nodes that may have started.
pub fn edge_coverage_stopped(
    cfg: &Cfg,
    probes: &[Probe],
    layout: &CellLayout,
    hit: &dyn Fn(u32) -> bool,
    entered: bool,
) -> (FixedBitSet, FixedBitSet) {
    let mut cov = edge_coverage(cfg, probes, layout, hit);
    let mut started = FixedBitSet::with_capacity(cfg.node_count());
    let mut work: Vec<NodeId> = Vec::new();
    let start = |v: NodeId, started: &mut FixedBitSet, work: &mut Vec<NodeId>| {
        if !started.put(v.index()) {
            work.push(v);
        }
    };
    for (id, e) in cfg.edges() {
        if cov.contains(id.index()) {
            start(e.src, &mut started, &mut work);
            start(e.dst, &mut started, &mut work);
        }
    }
    for n in cfg.node_ids() {
        if probes[n.index()] == Probe::Node && hit(layout.first[n.index()]) {
            start(n, &mut started, &mut work);
        }
    }
    if entered {
        start(cfg.entry(), &mut started, &mut work);
    }
    while let Some(v) = work.pop() {
        let p = probes[v.index()];
        let outs: Vec<EdgeId> = cfg.out_edges(v).collect();
        for (k, e) in outs.into_iter().enumerate() {
            // a `Node` or `PerEdge` node that started shows it in its cells; an
            // `Off` node is not measured
            if p == Probe::Derived || p.edge_ahead(k) {
                cov.insert(e.index());
                start(cfg.edge(e).dst, &mut started, &mut work);
            }
        }
    }
    (cov, started)
}

/// Nodes executed: nodes with a traversed out-edge (the exit: with a traversed in-edge).
pub fn executed_nodes(cfg: &Cfg, edges: &FixedBitSet) -> FixedBitSet {
    let mut out = FixedBitSet::with_capacity(cfg.node_count());
    for (id, e) in cfg.edges() {
        if edges.contains(id.index()) {
            out.insert(e.src.index());
            if e.dst == cfg.exit() {
                out.insert(e.dst.index());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::{CfgBuilder, EdgeLabel, Node, NodeKind};

    #[test]
    fn derived_nodes_follow_their_in_edges() {
        // entry(Node) -> p(PerEdge) ; p T-> a(Derived) -> x ; p F-> x
        let mut b = CfgBuilder::new("f");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let p = b.add_node(Node::new(NodeKind::Predicate, "c"));
        let a = b.add_node(Node::new(NodeKind::Statement, "a"));
        let x = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(x);
        b.add_edge(en, p, EdgeLabel::Eps);
        b.add_edge(p, a, EdgeLabel::True);
        b.add_edge(p, x, EdgeLabel::False);
        b.add_edge(a, x, EdgeLabel::Eps);
        let g = b.build().unwrap();
        let probes = [Probe::Node, Probe::PerEdge, Probe::Derived, Probe::Derived];
        let l = CellLayout::new(&g, &probes);
        assert_eq!(l.cells, 3);
        // cells: 0 = entry, 1 = p:T, 2 = p:F
        let cov = edge_coverage(&g, &probes, &l, &|c| c == 0 || c == 1);
        let got: Vec<_> =
            g.edges().filter(|(id, _)| cov.contains(id.index())).map(|(_, e)| (e.src.0, e.dst.0)).collect();
        assert_eq!(got, vec![(0, 1), (1, 2), (2, 3)]);
        let ex = executed_nodes(&g, &cov);
        assert!(ex.contains(2) && ex.contains(3));
        assert_eq!(measured_edges(&g, &probes).count_ones(..), 4);
        // with the predicate off, nothing after it is known
        let off = [Probe::Node, Probe::Off, Probe::Derived, Probe::Derived];
        let m = measured_edges(&g, &off);
        assert_eq!(m.ones().collect::<Vec<_>>(), vec![0]);
        let l = CellLayout::new(&g, &off);
        let cov = edge_coverage(&g, &off, &l, &|_| true);
        assert_eq!(cov.ones().collect::<Vec<_>>(), vec![0]);
    }

    /// entry → a → b → p; p T→ c → d → x, p F→ x; d has a call; x exit.
    fn straight_and_branch() -> Cfg {
        let mut b = CfgBuilder::new("f");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let a = b.add_node(Node::new(NodeKind::Statement, "a = 1"));
        let s = b.add_node(Node::new(NodeKind::Statement, "b = 2"));
        let p = b.add_node(Node::new(NodeKind::Predicate, "a < b"));
        let c = b.add_node(Node::new(NodeKind::Call, "g()"));
        let d = b.add_node(Node::new(NodeKind::Statement, "c = 3"));
        let x = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(x);
        b.add_edge(en, a, EdgeLabel::Eps);
        b.add_edge(a, s, EdgeLabel::Eps);
        b.add_edge(s, p, EdgeLabel::Eps);
        b.add_edge(p, c, EdgeLabel::True);
        b.add_edge(p, x, EdgeLabel::False);
        b.add_edge(c, d, EdgeLabel::Eps);
        b.add_edge(d, x, EdgeLabel::Eps);
        b.build().unwrap()
    }

    #[test]
    fn derived_probes_keep_the_head_of_straight_line_code_and_the_statement_after_a_call() {
        use Probe::*;
        let g = straight_and_branch();
        let full = [Node, Node, Node, PerEdge, Node, Node, Derived];
        let completes = |n: NodeId| g.node(n).kind != NodeKind::Call;
        let thin = derive_probes(&g, &full, &completes);
        // the entry, a and b run iff p does, which p's cells show; g() follows p's
        // T cell; c = 3 follows a call
        assert_eq!(thin, vec![Ahead, Ahead, Ahead, PerEdge, Derived, Node, Derived]);
        assert_eq!(CellLayout::new(&g, &thin).cells, 3);
        assert_eq!(measured_edges(&g, &thin), measured_edges(&g, &full));
        // cells: 0 = p:T, 1 = p:F, 2 = c = 3
        let l = CellLayout::new(&g, &thin);
        // a run that took T and returned from g()
        let cov = edge_coverage(&g, &thin, &l, &|c| c == 0 || c == 2);
        assert_eq!(cov.count_ones(..), 6);
        // a run in which g() never returned: g()'s out-edge is claimed (it started,
        // as with its own probe), c = 3's out-edge is not; p:F (4) was not taken
        let cov = edge_coverage(&g, &thin, &l, &|c| c == 0);
        assert_eq!(cov.ones().collect::<Vec<_>>(), vec![0, 1, 2, 3, 5]);
        // a run that never called f
        assert_eq!(edge_coverage(&g, &thin, &l, &|_| false).count_ones(..), 0);
    }

    #[test]
    fn a_loop_body_reached_only_by_a_back_edge_keeps_its_probe() {
        use Probe::{Derived, Node as N};
        // entry → s; s → s (for (;;) x++;)
        let mut b = CfgBuilder::new("f");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let s = b.add_node(Node::new(NodeKind::Statement, "x++"));
        let x = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(x);
        b.add_edge(en, s, EdgeLabel::Eps);
        b.add_edge(s, s, EdgeLabel::Eps);
        let g = b.build().unwrap();
        let thin = derive_probes(&g, &[N, N, Derived], &|_| true);
        assert_eq!(thin, vec![N, N, Derived]);
    }

    /// A random procedure: node 0 the entry (no in-edges), the last the exit, every
    /// other node 1–3 out-edges (duplicate targets allowed); multiway nodes `PerEdge` (or, rarely, `Derived` — an
    /// unprobeable condition), single-exit ones `Node` or `Derived`.
    fn random_cfg(n: usize, outs: &[Vec<usize>], derived: &[bool]) -> (Cfg, Vec<Probe>) {
        let mut b = CfgBuilder::new("r");
        for i in 0..n {
            let kind = if i == 0 {
                NodeKind::Entry
            } else if i == n - 1 {
                NodeKind::Exit
            } else {
                NodeKind::Statement
            };
            b.add_node(Node::new(kind, format!("s{i}")));
        }
        b.set_entry(NodeId(0));
        b.set_exit(NodeId(n as u32 - 1));
        let mut probes = vec![Probe::Derived; n];
        for i in 0..n - 1 {
            let ts: Vec<usize> = outs[i].iter().map(|t| 1 + t % (n - 1)).collect();
            let labels: Vec<EdgeLabel> = match ts.len() {
                1 => vec![EdgeLabel::Eps],
                2 => vec![EdgeLabel::True, EdgeLabel::False],
                _ => (0..ts.len()).map(|k| EdgeLabel::Case(k.to_string())).collect(),
            };
            for (t, l) in ts.iter().zip(labels) {
                b.add_edge(NodeId(i as u32), NodeId(*t as u32), l);
            }
            probes[i] = match (ts.len(), derived[i] && i != 0) {
                (1, false) => Probe::Node,
                (1, true) => Probe::Derived,
                (_, false) => Probe::PerEdge,
                (_, true) => Probe::Derived,
            };
        }
        (b.build().unwrap(), probes)
    }

    /// What a run does: the cells it sets (`Node` cells when a node starts, edge
    /// cells when the edge is taken), the edges it takes, and whether it
    /// stopped part-way — which it may only at a node that does not complete.
    /// `None`: the choices ran out before the run ended.
    fn run_cells(
        g: &Cfg,
        probes: &[Probe],
        completes: &[bool],
        choices: &[(u8, bool)],
    ) -> Option<(Vec<u32>, Vec<usize>, bool)> {
        let l = CellLayout::new(g, probes);
        let (mut hit, mut taken) = (Vec::new(), Vec::new());
        let mut v = g.entry();
        let mut k = 0;
        loop {
            if v == g.exit() {
                return Some((hit, taken, false));
            }
            let (pick, stop) = *choices.get(k)?;
            k += 1;
            if probes[v.index()] == Probe::Node {
                hit.push(l.cell_of_node(v));
            }
            if stop && !completes[v.index()] {
                return Some((hit, taken, true));
            }
            let outs: Vec<EdgeId> = g.out_edges(v).collect();
            let k = pick as usize % outs.len();
            let e = outs[k];
            if probes[v.index()].has_edge_cell(k) {
                hit.extend(l.cell_of_edge(g, probes, e));
            }
            taken.push(e.index());
            v = g.edge(e).dst;
        }
    }

    /// `int f(int *p) { int y = 1; if (*p > 0) y = 2; return y; }`: with
    /// derived probes nothing before the condition has a cell, so a fault at
    /// `*p` leaves no trace of the call; runs that may have stopped claim the
    /// edges up to the condition, and no more.
    #[test]
    fn a_run_stopped_inside_a_condition_keeps_the_edges_that_led_to_it() {
        let mut b = CfgBuilder::new("f");
        let entry = b.add_node(Node::new(NodeKind::Entry, ""));
        let decl = b.add_node(Node::new(NodeKind::Declaration, "int y = 1 ;"));
        let cond = b.add_node(Node::new(NodeKind::Predicate, "* p > 0"));
        let then = b.add_node(Node::new(NodeKind::Statement, "y = 2 ;"));
        let ret = b.add_node(Node::new(NodeKind::Statement, "return y ;"));
        let exit = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(entry);
        b.set_exit(exit);
        b.add_edge(entry, decl, EdgeLabel::Eps);
        b.add_edge(decl, cond, EdgeLabel::Eps);
        b.add_edge(cond, then, EdgeLabel::True);
        b.add_edge(cond, ret, EdgeLabel::False);
        b.add_edge(then, ret, EdgeLabel::Eps);
        b.add_edge(ret, exit, EdgeLabel::Eps);
        let g = b.build().unwrap();
        let first = |v: NodeId| g.out_edges(v).next().unwrap();
        let (e0, e1, t) = (first(entry), first(decl), first(cond));
        assert_eq!(g.edge(t).label, EdgeLabel::True);
        let full = vec![Probe::Node, Probe::Node, Probe::PerEdge, Probe::Node, Probe::Node, Probe::Derived];
        let thin = derive_probes(&g, &full, &|_| true);
        // the entry and the declaration are derived ahead from the condition's start
        assert_eq!(thin[entry.index()], Probe::Ahead);
        assert_eq!(thin[decl.index()], Probe::Ahead);
        let l = CellLayout::new(&g, &thin);
        let none = |_: u32| false;
        assert_eq!(edge_coverage(&g, &thin, &l, &none).count_ones(..), 0, "the fault hides the call");
        // not known to have been entered: nothing more
        let (cov, started) = edge_coverage_stopped(&g, &thin, &l, &none, false);
        assert_eq!((cov.count_ones(..), started.count_ones(..)), (0, 0));
        // entered: the edges up to the condition, which may have started; not its branches
        let (cov, started) = edge_coverage_stopped(&g, &thin, &l, &none, true);
        assert_eq!(cov.ones().collect::<Vec<_>>(), vec![e0.index(), e1.index()]);
        assert!(started.contains(cond.index()) && !started.contains(then.index()));
        // a run that took T earlier: what it showed, plus nothing the condition hides
        let tcell = l.cell_of_edge(&g, &thin, t).unwrap();
        let took_t = |c: u32| c == tcell;
        let normal = edge_coverage(&g, &thin, &l, &took_t);
        let (cov, _) = edge_coverage_stopped(&g, &thin, &l, &took_t, true);
        assert!(normal.is_subset(&cov) && cov.contains(e0.index()) && cov.contains(t.index()));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Runs killed at any node (not only at nodes that do not complete):
        /// coverage for stopped runs claims every edge they took, and at least
        /// what `edge_coverage` claims.
        #[test]
        fn runs_killed_anywhere_keep_every_edge_they_took(
            n in 3usize..12,
            outs in proptest::collection::vec(proptest::collection::vec(0usize..12, 1..4), 12),
            derived in proptest::collection::vec(proptest::bool::weighted(0.15), 12),
            completes in proptest::collection::vec(proptest::bool::weighted(0.6), 12),
            runs in proptest::collection::vec(proptest::collection::vec((0u8..6, proptest::bool::weighted(0.1)), 0..60), 1..4),
        ) {
            let (g, full) = random_cfg(n, &outs, &derived);
            let completes = &completes[..n];
            let thin = derive_probes(&g, &full, &|v| completes[v.index()]);
            let l = CellLayout::new(&g, &thin);
            let anywhere = vec![false; n];
            let mut hits = std::collections::BTreeSet::new();
            let mut truth = FixedBitSet::with_capacity(g.edge_count());
            for r in &runs {
                if let Some((h, taken, _)) = run_cells(&g, &thin, &anywhere, r) {
                    hits.extend(h);
                    truth.extend(taken);
                }
            }
            let hit = |c: u32| hits.contains(&c);
            let (cov, started) = edge_coverage_stopped(&g, &thin, &l, &hit, true);
            proptest::prop_assert!(truth.is_subset(&cov));
            proptest::prop_assert!(edge_coverage(&g, &thin, &l, &hit).is_subset(&cov));
            for e in truth.ones() {
                proptest::prop_assert!(started.contains(g.edge(EdgeId(e as u32)).src.index()));
            }
        }

        #[test]
        fn derived_probes_measure_what_full_probes_measure(
            n in 3usize..12,
            outs in proptest::collection::vec(proptest::collection::vec(0usize..12, 1..4), 12),
            derived in proptest::collection::vec(proptest::bool::weighted(0.15), 12),
            completes in proptest::collection::vec(proptest::bool::weighted(0.6), 12),
            runs in proptest::collection::vec(proptest::collection::vec((0u8..6, proptest::bool::weighted(0.4)), 0..60), 1..4),
        ) {
            let (g, full) = random_cfg(n, &outs, &derived);
            let completes = &completes[..n];
            let thin = derive_probes(&g, &full, &|v| completes[v.index()]);
            proptest::prop_assert!(CellLayout::new(&g, &thin).cells <= CellLayout::new(&g, &full).cells);
            // everything full probes measure is measured (an `Ahead` node after an
            // unmeasured one may add its out-edge)
            proptest::prop_assert!(measured_edges(&g, &full).is_subset(&measured_edges(&g, &thin)));
            // the same runs, observed through both plans (runs that do not end are dropped)
            let (lf, lt) = (CellLayout::new(&g, &full), CellLayout::new(&g, &thin));
            let (mut hf, mut ht) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
            let mut truth = FixedBitSet::with_capacity(g.edge_count());
            let mut stopped = false;
            for r in &runs {
                if let (Some((a, taken, stop)), Some((b, _, _))) =
                    (run_cells(&g, &full, completes, r), run_cells(&g, &thin, completes, r))
                {
                    hf.extend(a);
                    ht.extend(b);
                    truth.extend(taken);
                    stopped |= stop;
                }
            }
            let cf = edge_coverage(&g, &full, &lf, &|c| hf.contains(&c));
            let ct = edge_coverage(&g, &thin, &lt, &|c| ht.contains(&c));
            // never less than the truth, never more than full probes claim …
            proptest::prop_assert!(truth.is_subset(&ct));
            proptest::prop_assert!(ct.is_subset(&cf));
            // … and, when no run stopped part-way, exactly what they claim
            if !stopped {
                proptest::prop_assert_eq!(&cf, &ct);
            }
        }
    }
}
