//! Probes and edge coverage.
//!
//! A front end decides, per node of the (condition-level) CFG, how its out-edges
//! are observed at run time ([`Probe`]). The probes of a procedure are laid out as
//! consecutive *cells* (one byte each at run time); [`CellLayout`] numbers them and
//! [`edge_coverage`] turns the set of hit cells back into the set of traversed
//! edges. The rule for unprobed nodes over-approximates, never under-approximates:
//! an unprobed node's out-edges count as traversed as soon as any of its in-edges
//! is — "the node ran, so it left by its out-edge(s)".

use fixedbitset::FixedBitSet;
use serde::{Deserialize, Serialize};

use crate::cfg::{Cfg, EdgeId, NodeId};

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
    /// `PerEdge` probe one per out-edge.
    pub fn new(cfg: &Cfg, probes: &[Probe]) -> CellLayout {
        assert_eq!(probes.len(), cfg.node_count());
        let mut first = Vec::with_capacity(probes.len());
        let mut next = 0u32;
        for (n, p) in cfg.node_ids().zip(probes) {
            first.push(next);
            next += match p {
                Probe::Derived | Probe::Off => 0,
                Probe::Node => 1,
                Probe::PerEdge => cfg.out_edges(n).len() as u32,
            };
        }
        CellLayout { first, cells: next }
    }

    /// The cell that records edge `e`, if its source is probed.
    pub fn cell_of_edge(&self, cfg: &Cfg, probes: &[Probe], e: EdgeId) -> Option<u32> {
        let src = cfg.edge(e).src;
        match probes[src.index()] {
            Probe::Derived | Probe::Off => None,
            Probe::Node => Some(self.first[src.index()]),
            Probe::PerEdge => {
                let k = cfg.out_edges(src).position(|x| x == e).unwrap() as u32;
                Some(self.first[src.index()] + k)
            }
        }
    }

    /// The cell of a `Node`-probed node.
    pub fn cell_of_node(&self, n: NodeId) -> u32 {
        self.first[n.index()]
    }
}

/// Traversed edges given which cells were hit (`hit(cell)`), with the derivation
/// rule for unprobed nodes applied to a fixpoint.
pub fn edge_coverage(cfg: &Cfg, probes: &[Probe], layout: &CellLayout, hit: &dyn Fn(u32) -> bool) -> FixedBitSet {
    let mut cov = FixedBitSet::with_capacity(cfg.edge_count());
    let mut work: Vec<NodeId> = Vec::new();
    for n in cfg.node_ids() {
        match probes[n.index()] {
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
            Probe::PerEdge => {
                for (k, e) in cfg.out_edges(n).enumerate() {
                    if hit(layout.first[n.index()] + k as u32) && !cov.put(e.index()) {
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

/// Edges whose coverage a build with these probes determines: out-edges of
/// probed nodes, and out-edges of unprobed (`Derived`) nodes all of whose in-edges
/// are determined. Out-edges of `Off` nodes, and everything derived only through
/// them, are unknown.
pub fn measured_edges(cfg: &Cfg, probes: &[Probe]) -> FixedBitSet {
    let mut m = FixedBitSet::with_capacity(cfg.edge_count());
    for n in cfg.node_ids() {
        if matches!(probes[n.index()], Probe::Node | Probe::PerEdge) {
            for e in cfg.out_edges(n) {
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
}
