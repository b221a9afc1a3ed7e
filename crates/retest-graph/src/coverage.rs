//! Probes and edge coverage.
//!
//! A front end decides, per node of the (condition-level) CFG, how its out-edges
//! are observed at run time ([`Probe`]). The probes of a procedure are laid out as
//! consecutive *cells* (one byte each in a trace); [`CellLayout`] numbers them and
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
    /// A two-way condition recorded as `Edges(mask)` whose outcome also records
    /// which in-edge led to it (see [`pair_probes`]): for each in-edge `j` with
    /// bit `j` of `via` set, two more cells (one per out-edge, after the edge
    /// cells), set instead of both the in-edge's own cell and the out-edge's
    /// when a run takes that in-edge and then that out-edge.
    Paired { mask: u32, via: u32 },
    /// The entry, without a cell: every run that enters the procedure sets a
    /// cell of it before it leaves or stops, so the entry ran iff any cell of
    /// the procedure is hit (see [`derive_probes`]); its out-edges are then
    /// traversed.
    Entered,
}

impl Probe {
    /// Whether out-edge number `k` of a node with this probe has a cell of its own.
    pub fn has_edge_cell(self, k: usize) -> bool {
        match self {
            Probe::PerEdge => true,
            Probe::Edges(m) | Probe::Paired { mask: m, .. } => k < 32 && m >> k & 1 == 1,
            Probe::Derived | Probe::Off | Probe::Node | Probe::Ahead | Probe::Entered => false,
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
            Probe::Edges(_) | Probe::Paired { .. } => !self.has_edge_cell(k),
            Probe::Derived | Probe::Off | Probe::Node | Probe::PerEdge | Probe::Entered => false,
        }
    }

    /// Whether the node has at least one cell.
    pub fn is_probed(self) -> bool {
        matches!(self, Probe::Node | Probe::PerEdge | Probe::Edges(_) | Probe::Paired { .. })
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
    /// `PerEdge` probe one per out-edge, an `Edges` probe one per set bit, a
    /// `Paired` probe one per set bit of its mask and then two per set bit of
    /// its `via`.
    pub fn new(cfg: &Cfg, probes: &[Probe]) -> CellLayout {
        assert_eq!(probes.len(), cfg.node_count());
        let mut first = Vec::with_capacity(probes.len());
        let mut next = 0u32;
        for (n, p) in cfg.node_ids().zip(probes) {
            first.push(next);
            next += match p {
                Probe::Derived | Probe::Off | Probe::Ahead | Probe::Entered => 0,
                Probe::Node => 1,
                Probe::PerEdge | Probe::Edges(_) => p.edge_cells_before(cfg.out_edges(n).len()),
                Probe::Paired { via, .. } => p.edge_cells_before(cfg.out_edges(n).len()) + 2 * via.count_ones(),
            };
        }
        CellLayout { first, cells: next }
    }

    /// The cell that records edge `e`, if it has one.
    pub fn cell_of_edge(&self, cfg: &Cfg, probes: &[Probe], e: EdgeId) -> Option<u32> {
        let src = cfg.edge(e).src;
        let p = probes[src.index()];
        match p {
            Probe::Derived | Probe::Off | Probe::Ahead | Probe::Entered => None,
            Probe::Node => Some(self.first[src.index()]),
            Probe::PerEdge | Probe::Edges(_) | Probe::Paired { .. } => {
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

/// An in-edge paired with its target's outcome ([`Probe::Paired`]) under a plan.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Pair {
    /// The in-edge: its source records it with a cell of its own.
    pub edge: EdgeId,
    /// Its target, the `Paired` condition.
    pub target: NodeId,
    /// The cell set when a run takes `edge` and then the target's out-edge `k`
    /// is `cells + k`.
    pub cells: u32,
}

/// The pairs in effect under `probes`: each in-edge named by a `Paired`
/// node's `via` whose source records it with a cell of its own. A `via`
/// in-edge whose source has no cell for it (its source left out of a selective
/// plan) is not paired: its pair cells stay unset, and the target records its
/// outcomes in its own cells alone.
pub fn active_pairs(cfg: &Cfg, probes: &[Probe], layout: &CellLayout) -> Vec<Pair> {
    let mut out = Vec::new();
    for x in cfg.node_ids() {
        let p = probes[x.index()];
        let Probe::Paired { via, .. } = p else { continue };
        let mut cells = layout.first[x.index()] + p.edge_cells_before(cfg.out_edges(x).len());
        for (j, &e) in cfg.in_edges(x).iter().enumerate() {
            if j >= 32 || via >> j & 1 == 0 {
                continue;
            }
            if layout.cell_of_edge(cfg, probes, e).is_some() {
                out.push(Pair { edge: e, target: x, cells });
            }
            cells += 2;
        }
    }
    out
}

/// The cells a run would have set had no cell been paired: the hit cells,
/// plus, for each hit pair cell, its in-edge's cell and its out-edge's cell
/// (if it has one). `None` when no pair is in effect.
fn unpaired_hits(cfg: &Cfg, probes: &[Probe], layout: &CellLayout, hit: &dyn Fn(u32) -> bool) -> Option<FixedBitSet> {
    let pairs = active_pairs(cfg, probes, layout);
    if pairs.is_empty() {
        return None;
    }
    let mut set = FixedBitSet::with_capacity(layout.cells as usize);
    for pair in pairs {
        let x = pair.target;
        let px = probes[x.index()];
        for k in 0..2 {
            if !hit(pair.cells + k as u32) {
                continue;
            }
            set.extend(layout.cell_of_edge(cfg, probes, pair.edge).map(|c| c as usize));
            if px.has_edge_cell(k) {
                set.insert((layout.first[x.index()] + px.edge_cells_before(k)) as usize);
            }
        }
    }
    Some(set)
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
            Probe::PerEdge | Probe::Edges(_) | Probe::Paired { .. } | Probe::Ahead => {
                let outs: Vec<EdgeId> = self.cfg.out_edges(q).collect();
                outs.iter().enumerate().any(|(k, &e)| {
                    if p.edge_ahead(k) {
                        self.started(self.cfg.edge(e).dst, leaf)
                    } else {
                        p.has_edge_cell(k) && leaf(q, Some(k))
                    }
                })
            }
            // the entry has no in-edge to be derived ahead from
            Probe::Derived | Probe::Off | Probe::Entered => false,
        };
        self.memo[q.index()] = Some(v);
        v
    }
}

/// Traversed edges given which cells were hit (`hit(cell)`), with the derivation
/// rules for unprobed nodes and cell-less edges applied.
pub fn edge_coverage(cfg: &Cfg, probes: &[Probe], layout: &CellLayout, hit: &dyn Fn(u32) -> bool) -> FixedBitSet {
    let unpaired = unpaired_hits(cfg, probes, layout, hit);
    let hit = |c: u32| hit(c) || unpaired.as_ref().is_some_and(|s| s.contains(c as usize));
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
            Probe::Node | Probe::Entered => {
                let started = match p {
                    Probe::Node => hit(layout.first[n.index()]),
                    _ => (0..layout.cells).any(&hit),
                };
                if started {
                    for e in cfg.out_edges(n) {
                        if !cov.put(e.index()) {
                            work.push(cfg.edge(e).dst);
                        }
                    }
                }
            }
            Probe::PerEdge | Probe::Edges(_) | Probe::Paired { .. } | Probe::Ahead => {
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
                Probe::Node | Probe::Entered => true,
                Probe::PerEdge | Probe::Edges(_) | Probe::Paired { .. } | Probe::Ahead => {
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
        Probe::Node | Probe::Entered => true,
        Probe::PerEdge | Probe::Edges(_) | Probe::Paired { .. } | Probe::Ahead => {
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

/// Whether `v` is a condition: exactly a `T` and an `F` out-edge, in that order.
fn is_two_way(cfg: &Cfg, v: NodeId) -> bool {
    let mut labels = cfg.out_labels(v);
    labels.next() == Some(&EdgeLabel::True) && labels.next() == Some(&EdgeLabel::False) && labels.next().is_none()
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
/// Last, the entry loses its cell ([`Probe::Entered`]) when every run that
/// enters sets another cell before it can leave or stop: a function that
/// starts with a loop needs no entry probe either.
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
    let two_way = |v: NodeId| is_two_way(cfg, v);
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
            Probe::Ahead | Probe::Entered => known.insert(v.index()),
            Probe::Derived => known.set(v.index(), ins_known),
            Probe::PerEdge | Probe::Edges(_) | Probe::Paired { .. } | Probe::Off => {}
        }
    }
    if out[cfg.entry().index()] == Probe::Node && every_run_sets_a_cell(cfg, &out, completes) {
        out[cfg.entry().index()] = Probe::Entered;
    }
    out
}

/// Whether a run that enters the procedure sets a cell before it can leave
/// or stop, the entry's own cell aside: no path from the entry reaches the
/// exit, or a node that may not complete, without taking an edge that has a
/// cell or starting a `Node`-probed node. (A path that cycles without cells
/// runs forever: its test times out, and a test that times out has no
/// coverage.)
fn every_run_sets_a_cell(cfg: &Cfg, probes: &[Probe], completes: &dyn Fn(NodeId) -> bool) -> bool {
    let mut seen = FixedBitSet::with_capacity(cfg.node_count());
    let mut work = vec![cfg.entry()];
    seen.insert(cfg.entry().index());
    while let Some(v) = work.pop() {
        let p = probes[v.index()];
        if v == cfg.exit() || !completes(v) || p == Probe::Off {
            return false;
        }
        for (k, e) in cfg.out_edges(v).enumerate() {
            let w = cfg.edge(e).dst;
            if p.has_edge_cell(k) || probes[w.index()] == Probe::Node {
                continue;
            }
            if !seen.put(w.index()) {
                work.push(w);
            }
        }
    }
    true
}

/// The most in-edges of a node [`pair_probes`] pairs.
pub const MAX_PAIRED_IN: usize = 2;

/// Pairs cells that runs set one right after the other, so that one store
/// records both ([`Probe::Paired`]): an edge `a → x` with a cell, where `x` is
/// a two-way condition with a cell on at least one out-edge. Instead of setting
/// the edge's cell, a run notes the edge in a flag local to the activation;
/// `x`'s outcome then sets, for the out-edge taken, the pair cell of the noted
/// in-edge (clearing the flag), or the out-edge's own cell if none is noted. A
/// run that goes `a → x → out` through a hot loop then makes one store where it
/// made two.
///
/// Exact as long as `x`, once started, takes one of its out-edges
/// (`completes(x)`): between the in-edge and the outcome nothing else runs, so
/// the noted edge is always recorded. A run stopped inside `x` loses the note;
/// [`edge_coverage_stopped`] claims paired in-edges as it claims cell-less
/// ones. `cond(n)`: the front end records `n`'s outcomes where it evaluates
/// (a condition it rewrites), so it can note an out-edge of `n` and test a
/// note at `n`'s outcome.
///
/// A node is paired as a target or as a source, never both, so a note is
/// never taken over by another. A target has at most [`MAX_PAIRED_IN`]
/// in-edges, and all of them are paired (a flag and two cells each): every
/// path into it then sets exactly one flag right before it, so an optimising
/// compiler knows each flag's value on each path and drops the tests. Where
/// some path set no flag the tests stay and cost more than the store they
/// save: the condition of a `do … while` that `continue`s and the body's end
/// both reach cost zlib's `longest_match` 3 % more instructions when every
/// qualifying in-edge was paired. A loop header is never a target either: a
/// compiler does not duplicate a loop header to tell its back edge from its
/// entry, so each iteration would pay the tests.
pub fn pair_probes(
    cfg: &Cfg,
    probes: &[Probe],
    completes: &dyn Fn(NodeId) -> bool,
    cond: &dyn Fn(NodeId) -> bool,
) -> Vec<Probe> {
    assert_eq!(probes.len(), cfg.node_count());
    let mut out = probes.to_vec();
    let two_way = |v: NodeId| is_two_way(cfg, v);
    let mut source = FixedBitSet::with_capacity(cfg.node_count());
    let mut target = FixedBitSet::with_capacity(cfg.node_count());
    let mut header = FixedBitSet::with_capacity(cfg.node_count());
    for e in crate::reach::depth_first(cfg).back {
        header.insert(cfg.edge(e).dst.index());
    }
    for x in cfg.node_ids() {
        let mask = match out[x.index()] {
            Probe::Edges(m) => m,
            Probe::PerEdge => 0b11,
            _ => continue,
        };
        if mask & 0b11 == 0
            || !two_way(x)
            || !cond(x)
            || !completes(x)
            || source.contains(x.index())
            || header.contains(x.index())
        {
            continue;
        }
        let ins = cfg.in_edges(x);
        let pairable = |e: EdgeId| {
            let a = cfg.edge(e).src;
            let k = cfg.out_edges(a).position(|o| o == e).expect("an in-edge is an out-edge of its source");
            a != x && !target.contains(a.index()) && two_way(a) && cond(a) && out[a.index()].has_edge_cell(k)
        };
        if ins.is_empty() || ins.len() > MAX_PAIRED_IN || !ins.iter().all(|&e| pairable(e)) {
            continue;
        }
        for &e in ins {
            source.insert(cfg.edge(e).src.index());
        }
        out[x.index()] = Probe::Paired { mask, via: (1 << ins.len()) - 1 };
        target.insert(x.index());
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
/// what called it). A paired in-edge ([`pair_probes`]) out of a node that may
/// have started is claimed too. So every edge a stopped run took is claimed if its
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
    // a paired in-edge is noted in a flag until its target's outcome, which a
    // run stopped inside the target never reached
    let mut paired = FixedBitSet::with_capacity(cfg.edge_count());
    for pair in active_pairs(cfg, probes, layout) {
        paired.insert(pair.edge.index());
    }
    while let Some(v) = work.pop() {
        let p = probes[v.index()];
        let outs: Vec<EdgeId> = cfg.out_edges(v).collect();
        for (k, e) in outs.into_iter().enumerate() {
            // a `Node` or `PerEdge` node that started shows it in its cells; an
            // `Off` node is not measured
            if matches!(p, Probe::Derived | Probe::Entered) || p.edge_ahead(k) || paired.contains(e.index()) {
                cov.insert(e.index());
                start(cfg.edge(e).dst, &mut started, &mut work);
            }
        }
    }
    (cov, started)
}

/// Execution counts of a procedure's condition-level edges, given how many
/// times each cell was recorded (`count(cell)`, summed over runs): the
/// counters of a counted build (`retest cc --counts`). `None` where the counts
/// do not determine an edge's.
///
/// Cells give counts directly: an edge that edge coverage leaves out
/// ([`edge_coverage`], [`measured_edges`]) was taken zero times; an edge with a cell of its own was taken as
/// often as its cell counted, plus, for a paired in-edge or out-edge, the
/// counts of the pair cells that stand for it ([`Pair`]); a `Node`-probed
/// node started as often as its cell counted. The rest follows by flow
/// conservation, as gcov solves its arcs: every node but the entry was
/// entered as often as its in-edges were taken, and every node but the exit
/// left as often as it was entered. Repeated to a fixed point: a node whose
/// in-edges (or out-edges) are all known has their sum as its count, and a
/// node whose count is known determines its one unknown in-edge (or
/// out-edge). Conservation presumes that every node that started completed:
/// a run stopped part-way (a crash, `exit` in a call) makes the edges after
/// the node it stopped in count one run too many where only the node's start
/// was counted, as gcov's counts do without its fake arcs. Derived plans drop
/// only cells the others imply under the same presumption, so they determine
/// every edge a plan with a probe on every node does (property test
/// `counts_follow_from_counted_cells`).
pub fn edge_counts(cfg: &Cfg, probes: &[Probe], layout: &CellLayout, count: &dyn Fn(u32) -> u64) -> Vec<Option<u64>> {
    let mut edge: Vec<Option<u64>> = vec![None; cfg.edge_count()];
    let mut node: Vec<Option<u64>> = vec![None; cfg.node_count()];
    for n in cfg.node_ids() {
        let p = probes[n.index()];
        match p {
            Probe::Node => node[n.index()] = Some(count(layout.cell_of_node(n))),
            Probe::PerEdge | Probe::Edges(_) | Probe::Paired { .. } => {
                for (k, e) in cfg.out_edges(n).enumerate() {
                    if p.has_edge_cell(k) {
                        edge[e.index()] = Some(count(layout.first[n.index()] + p.edge_cells_before(k)));
                    }
                }
            }
            Probe::Derived | Probe::Off | Probe::Ahead | Probe::Entered => {}
        }
    }
    // a pair cell counts for both of its edges
    for pair in active_pairs(cfg, probes, layout) {
        let target = probes[pair.target.index()];
        for (k, out) in cfg.out_edges(pair.target).enumerate().take(2) {
            let c = count(pair.cells + k as u32);
            if let Some(x) = edge[pair.edge.index()].as_mut() {
                *x = x.saturating_add(c);
            }
            if target.has_edge_cell(k)
                && let Some(x) = edge[out.index()].as_mut()
            {
                *x = x.saturating_add(c);
            }
        }
    }
    // an edge that edge coverage (an over-approximation) leaves out was never
    // taken — where the plan measures it at all
    let covered = edge_coverage(cfg, probes, layout, &|c| count(c) > 0);
    for e in measured_edges(cfg, probes).ones() {
        if !covered.contains(e) {
            edge[e] = Some(0);
        }
    }
    // edges out of a node that is not observed stay unknown, and so does
    // everything that would follow only from them
    let off: Vec<bool> = probes.iter().map(|p| *p == Probe::Off).collect();
    // flow conservation to a fixed point
    let sum = |es: &mut dyn Iterator<Item = EdgeId>, edge: &[Option<u64>]| -> (u64, Vec<EdgeId>) {
        let mut total = 0u64;
        let mut unknown = Vec::new();
        for e in es {
            match edge[e.index()] {
                Some(c) => total = total.saturating_add(c),
                None => unknown.push(e),
            }
        }
        (total, unknown)
    };
    // First backwards only (a node's count from its out-edges or its cell,
    // and from it an in-edge's), then both ways: a node's start is counted
    // before its calls, so where a call returns other than once — `fork`
    // returns twice — what follows a node is measured, and what precedes it
    // is not, by what the node's successors recorded.
    for forwards in [false, true] {
        loop {
            let mut changed = false;
            for n in cfg.node_ids() {
                let is_entry = n == cfg.entry();
                let is_exit = n == cfg.exit();
                let (in_sum, in_unknown) = sum(&mut cfg.in_edges(n).iter().copied(), &edge);
                let (out_sum, out_unknown) = sum(&mut cfg.out_edges(n), &edge);
                if node[n.index()].is_none() {
                    if !is_exit && !off[n.index()] && out_unknown.is_empty() && cfg.out_edges(n).len() > 0 {
                        node[n.index()] = Some(out_sum);
                        changed = true;
                    } else if forwards && !is_entry && in_unknown.is_empty() {
                        node[n.index()] = Some(in_sum);
                        changed = true;
                    }
                }
                let Some(c) = node[n.index()] else { continue };
                if !is_entry && let [e] = in_unknown[..] {
                    edge[e.index()] = c.checked_sub(in_sum);
                    changed |= edge[e.index()].is_some();
                }
                if forwards
                    && !is_exit
                    && !off[n.index()]
                    && let [e] = out_unknown[..]
                {
                    edge[e.index()] = c.checked_sub(out_sum);
                    changed |= edge[e.index()].is_some();
                }
            }
            if !changed {
                break;
            }
        }
    }
    edge
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
pub(crate) mod tests {
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
        use Probe::{Derived, Entered, Node as N};
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
        // s keeps its cell, and every run that enters sets it: the entry needs none
        assert_eq!(thin, vec![Entered, N, Derived]);
        let l = CellLayout::new(&g, &thin);
        assert_eq!(l.cells, 1);
        assert_eq!(edge_coverage(&g, &thin, &l, &|c| c == 0).count_ones(..), 2);
        assert_eq!(edge_coverage(&g, &thin, &l, &|_| false).count_ones(..), 0);
    }

    /// `static int running(void) { for (p = N; p >= 1; p--) if (ready[p]) return p; return -1; }`
    /// (sched): the loop's header has two in-edges, so nothing ahead shows the
    /// entry's start, yet every run that enters takes a cell before it returns —
    /// the entry needs no cell. With a call that may not return before the
    /// first cell, it keeps its own.
    #[test]
    fn an_entry_every_run_leaves_a_cell_behind_needs_none() {
        use Probe::{Derived, Entered, Node as N, PerEdge};
        let mut b = CfgBuilder::new("running");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let init = b.add_node(Node::new(NodeKind::Statement, "p = N"));
        let head = b.add_node(Node::new(NodeKind::Predicate, "p >= 1"));
        let test = b.add_node(Node::new(NodeKind::Predicate, "ready [ p ]"));
        let found = b.add_node(Node::new(NodeKind::Statement, "return p ;"));
        let step = b.add_node(Node::new(NodeKind::Statement, "p --"));
        let none = b.add_node(Node::new(NodeKind::Statement, "return -1 ;"));
        let x = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(x);
        b.add_edge(en, init, EdgeLabel::Eps);
        b.add_edge(init, head, EdgeLabel::Eps);
        b.add_edge(head, test, EdgeLabel::True);
        b.add_edge(head, none, EdgeLabel::False);
        b.add_edge(test, found, EdgeLabel::True);
        b.add_edge(test, step, EdgeLabel::False);
        b.add_edge(step, head, EdgeLabel::Eps);
        b.add_edge(found, x, EdgeLabel::Eps);
        b.add_edge(none, x, EdgeLabel::Eps);
        let g = b.build().unwrap();
        let full = vec![N, N, PerEdge, PerEdge, N, N, N, Derived];
        let thin = derive_probes(&g, &full, &|_| true);
        assert_eq!(thin[en.index()], Entered);
        assert_eq!(thin[init.index()], Derived, "follows the entry");
        let l = CellLayout::new(&g, &thin);
        // a call that returns from the first iteration: the entry and `p = N` ran
        let found_cell =
            |c: u32| Some(c) == l.cell_of_edge(&g, &thin, g.out_edge_labelled(test, &EdgeLabel::True).unwrap());
        let cov = edge_coverage(&g, &thin, &l, &found_cell);
        for e in [g.out_edges(en).next().unwrap(), g.out_edges(init).next().unwrap()] {
            assert!(cov.contains(e.index()));
        }
        assert_eq!(edge_coverage(&g, &thin, &l, &|_| false).count_ones(..), 0);
        // `p = N` calls something that may not return: a run may leave no cell
        let calls = |v: NodeId| v != init;
        assert_eq!(derive_probes(&g, &full, &calls)[en.index()], N);
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

    /// One step of a simulated run at node `v`, which has started: takes out-edge
    /// `pick` (modulo the out-degree) and adds to `hit` the cells the step
    /// sets — the pair cell when the edge into `v` was noted, else the edge's
    /// own cell, or, for an active pair's edge, a note (`noted`) that `v`'s
    /// successor takes. Shared with `stopped`'s simulation of whole programs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn take_edge(
        g: &Cfg,
        probes: &[Probe],
        layout: &CellLayout,
        pairs: &[Pair],
        v: NodeId,
        pick: u8,
        noted: &mut Option<Pair>,
        hit: &mut impl Extend<u32>,
    ) -> EdgeId {
        let outs: Vec<EdgeId> = g.out_edges(v).collect();
        let k = pick as usize % outs.len();
        let e = outs[k];
        match noted.take() {
            Some(p) => {
                assert_eq!(p.target, v, "a note is taken by the next node");
                hit.extend([p.cells + k as u32]);
            }
            None if probes[v.index()].has_edge_cell(k) => match pairs.iter().find(|p| p.edge == e) {
                Some(p) => *noted = Some(*p),
                None => hit.extend(layout.cell_of_edge(g, probes, e)),
            },
            None => {}
        }
        e
    }

    /// What a run does: the cells it sets (`Node` cells when a node starts, edge
    /// cells when the edge is taken — a paired in-edge noted instead, and its
    /// target's outcome setting the pair cell), the edges it takes, and
    /// whether it stopped part-way — which it may only at a node that does not
    /// complete. `None`: the choices ran out before the run ended.
    fn run_cells(
        g: &Cfg,
        probes: &[Probe],
        completes: &[bool],
        choices: &[(u8, bool)],
    ) -> Option<(Vec<u32>, Vec<usize>, bool)> {
        let l = CellLayout::new(g, probes);
        let pairs = active_pairs(g, probes, &l);
        let (mut hit, mut taken) = (Vec::new(), Vec::new());
        let mut noted: Option<Pair> = None;
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
            let e = take_edge(g, probes, &l, &pairs, v, pick, &mut noted, &mut hit);
            taken.push(e.index());
            v = g.edge(e).dst;
        }
    }

    /// `while (…) { if (a && b) s1; else if (c && d) s2; j; }` as the lexer's
    /// comment loop has it: a run that takes `a:F` and then `c:F` on every
    /// character sets one cell per character with pairs, where it set two.
    #[test]
    fn pairs_record_a_hot_else_if_chain_in_one_store() {
        use Probe::{Derived, Edges, Node as N, Paired, PerEdge};
        let mut b = CfgBuilder::new("f");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let w = b.add_node(Node::new(NodeKind::Predicate, "more ( )"));
        let [pa, pb, pc, pd] = ["a", "b", "c", "d"].map(|t| b.add_node(Node::new(NodeKind::Predicate, t)));
        let s1 = b.add_node(Node::new(NodeKind::Statement, "s1 ;"));
        let s2 = b.add_node(Node::new(NodeKind::Statement, "s2 ;"));
        let j = b.add_node(Node::new(NodeKind::Statement, "j ;"));
        let x = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(x);
        b.add_edge(en, w, EdgeLabel::Eps);
        b.add_edge(w, pa, EdgeLabel::True);
        b.add_edge(w, x, EdgeLabel::False);
        b.add_edge(pa, pb, EdgeLabel::True);
        b.add_edge(pa, pc, EdgeLabel::False);
        b.add_edge(pb, s1, EdgeLabel::True);
        b.add_edge(pb, pc, EdgeLabel::False);
        b.add_edge(pc, pd, EdgeLabel::True);
        b.add_edge(pc, j, EdgeLabel::False);
        b.add_edge(pd, s2, EdgeLabel::True);
        b.add_edge(pd, j, EdgeLabel::False);
        b.add_edge(s1, j, EdgeLabel::Eps);
        b.add_edge(s2, j, EdgeLabel::Eps);
        b.add_edge(j, w, EdgeLabel::Eps);
        let g = b.build().unwrap();
        let full = vec![N, PerEdge, PerEdge, PerEdge, PerEdge, PerEdge, N, N, N, Derived];
        let thin = derive_probes(&g, &full, &|_| true);
        // c's T edge is derived from d's start; a:F, b:F and c:F have cells
        assert_eq!(thin[pc.index()], Edges(0b10));
        let paired = pair_probes(&g, &thin, &|_| true, &|v| g.node(v).kind == NodeKind::Predicate);
        // both of c's in-edges (a:F and b:F) are paired with its outcome
        assert_eq!(paired[pc.index()], Paired { mask: 0b10, via: 0b11 });
        assert_eq!(paired.iter().filter(|p| matches!(p, Paired { .. })).count(), 1);
        let (lt, lp) = (CellLayout::new(&g, &thin), CellLayout::new(&g, &paired));
        assert_eq!(lp.cells, lt.cells + 4);
        let choices = |n: usize| -> Vec<(u8, bool)> {
            // en, then per character: w:T, a:F, c:F, j; then w:F
            let mut v = vec![(0, false)];
            for _ in 0..n {
                v.extend([(0, false), (1, false), (1, false), (0, false)]);
            }
            v.push((1, false));
            v
        };
        let all = vec![true; g.node_count()];
        let (ht, taken, _) = run_cells(&g, &thin, &all, &choices(1)).unwrap();
        let (hp, _, _) = run_cells(&g, &paired, &all, &choices(1)).unwrap();
        let (h3, _, _) = run_cells(&g, &paired, &all, &choices(3)).unwrap();
        // per character: a:F and c:F unpaired, one pair cell paired
        let per_char =
            |h: &Vec<u32>, n: usize| (h.len() - run_cells(&g, &paired, &all, &choices(0)).unwrap().0.len()) / n;
        assert_eq!(per_char(&h3, 3), 1);
        let (ht3, _, _) = run_cells(&g, &thin, &all, &choices(3)).unwrap();
        assert_eq!((ht3.len() - run_cells(&g, &thin, &all, &choices(0)).unwrap().0.len()) / 3, 2);
        let ct = edge_coverage(&g, &thin, &lt, &|c| ht.contains(&c));
        let cp = edge_coverage(&g, &paired, &lp, &|c| hp.contains(&c));
        let truth: FixedBitSet = taken.into_iter().collect();
        assert_eq!(ct, truth);
        assert_eq!(cp, truth);
        // killed inside c after a:F, before c's outcome: the note is lost, and
        // a:F is claimed from a's start
        let killed = vec![(0, false), (0, false), (1, false), (0, true)];
        let anywhere = vec![false; g.node_count()];
        let (hk, taken, stopped) = run_cells(&g, &paired, &anywhere, &killed).unwrap();
        assert!(stopped);
        let af = g.out_edge_labelled(pa, &EdgeLabel::False).unwrap();
        assert!(taken.contains(&af.index()));
        assert!(!edge_coverage(&g, &paired, &lp, &|c| hk.contains(&c)).contains(af.index()));
        let (cs, _) = edge_coverage_stopped(&g, &paired, &lp, &|c| hk.contains(&c), true);
        assert!(taken.iter().all(|&e| cs.contains(e)), "every edge the killed run took is claimed");
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
            // pairs too: a run killed inside a pair's target loses the note
            let thin = pair_probes(&g, &thin, &|v| completes[v.index()], &|_| true);
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
            // … and, when no run stopped part-way, exactly what they claim —
            // unless a multiway node is unprobeable (`Derived`): full probes
            // then claim all its out-edges and what follows from them through
            // unprobed nodes, where a derived plan may know better (an `Ahead`
            // node after it claims its out-edge only if the node it leads
            // into started)
            let unprobeable = g.node_ids().any(|v| g.out_edges(v).len() > 1 && full[v.index()] == Probe::Derived);
            if !stopped && !unprobeable {
                proptest::prop_assert_eq!(&cf, &ct);
            }
        }

        /// Counted cells give every edge's count, through a plan with a
        /// probe on every node, a derived one and a paired one alike: an
        /// edge's count is never other than the number of times runs took
        /// it, and it is known wherever full probes measure the edge at all.
        #[test]
        fn counts_follow_from_counted_cells(
            n in 3usize..12,
            outs in proptest::collection::vec(proptest::collection::vec(0usize..12, 1..4), 12),
            derived in proptest::collection::vec(proptest::bool::weighted(0.15), 12),
            conds in proptest::collection::vec(proptest::bool::weighted(0.9), 12),
            runs in proptest::collection::vec(proptest::collection::vec((0u8..6, proptest::strategy::Just(false)), 0..60), 1..4),
        ) {
            let (g, full) = random_cfg(n, &outs, &derived);
            let completes = vec![true; n];
            let thin = derive_probes(&g, &full, &|_| true);
            let paired = pair_probes(&g, &thin, &|_| true, &|v| conds[v.index()]);
            let mut truth = vec![0u64; g.edge_count()];
            let mut per_plan: Vec<std::collections::BTreeMap<u32, u64>> = vec![Default::default(); 3];
            for r in &runs {
                let got: Vec<_> = [&full, &thin, &paired].iter().map(|p| run_cells(&g, p, &completes, r)).collect();
                if got.iter().any(Option::is_none) {
                    continue; // a run that does not end
                }
                for e in &got[0].as_ref().unwrap().1 {
                    truth[*e] += 1;
                }
                for (acc, g) in per_plan.iter_mut().zip(got) {
                    for c in g.unwrap().0 {
                        *acc.entry(c).or_default() += 1;
                    }
                }
            }
            let unprobeable = g.node_ids().any(|v| g.out_edges(v).len() > 1 && full[v.index()] == Probe::Derived);
            let counted: Vec<Vec<Option<u64>>> = [&full, &thin, &paired]
                .iter()
                .zip(&per_plan)
                .map(|(p, acc)| edge_counts(&g, p, &CellLayout::new(&g, p), &|c| acc.get(&c).copied().unwrap_or(0)))
                .collect();
            for (plan, got) in counted.iter().enumerate() {
                for (e, c) in got.iter().enumerate() {
                    if let Some(c) = c {
                        proptest::prop_assert_eq!(*c, truth[e], "plan {}, edge {}", plan, e);
                    }
                }
                if !unprobeable {
                    let measured = measured_edges(&g, &full);
                    proptest::prop_assert!(
                        measured.ones().all(|e| got[e].is_some()),
                        "plan {} leaves counts unknown: {:?}",
                        plan,
                        got
                    );
                }
            }
        }

        /// Pairing changes how edges are recorded, never what is claimed: the
        /// same runs give the same coverage, paired or not, unless a run
        /// stopped part-way (then still every edge taken).
        #[test]
        fn paired_probes_claim_what_unpaired_probes_claim(
            n in 3usize..12,
            outs in proptest::collection::vec(proptest::collection::vec(0usize..12, 1..4), 12),
            derived in proptest::collection::vec(proptest::bool::weighted(0.15), 12),
            completes in proptest::collection::vec(proptest::bool::weighted(0.8), 12),
            conds in proptest::collection::vec(proptest::bool::weighted(0.9), 12),
            runs in proptest::collection::vec(proptest::collection::vec((0u8..6, proptest::bool::weighted(0.2)), 0..60), 1..4),
        ) {
            let (g, full) = random_cfg(n, &outs, &derived);
            let completes = &completes[..n];
            let thin = derive_probes(&g, &full, &|v| completes[v.index()]);
            let paired = pair_probes(&g, &thin, &|v| completes[v.index()], &|v| conds[v.index()]);
            proptest::prop_assert_eq!(measured_edges(&g, &thin), measured_edges(&g, &paired));
            let (lt, lp) = (CellLayout::new(&g, &thin), CellLayout::new(&g, &paired));
            let (mut ht, mut hp) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
            let mut truth = FixedBitSet::with_capacity(g.edge_count());
            let mut stopped = false;
            for r in &runs {
                if let (Some((a, taken, stop)), Some((b, _, _))) =
                    (run_cells(&g, &thin, completes, r), run_cells(&g, &paired, completes, r))
                {
                    ht.extend(a);
                    hp.extend(b);
                    truth.extend(taken);
                    stopped |= stop;
                }
            }
            let ct = edge_coverage(&g, &thin, &lt, &|c| ht.contains(&c));
            let cp = edge_coverage(&g, &paired, &lp, &|c| hp.contains(&c));
            proptest::prop_assert!(truth.is_subset(&cp));
            if !stopped {
                proptest::prop_assert_eq!(&ct, &cp);
            }
            // and killed anywhere, every edge taken is claimed
            let (cs, _) = edge_coverage_stopped(&g, &paired, &lp, &|c| hp.contains(&c), true);
            proptest::prop_assert!(cp.is_subset(&cs));
        }
    }
}
