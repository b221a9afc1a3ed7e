//! Reachability, depth-first back edges and strongly connected components.

use fixedbitset::FixedBitSet;

use crate::cfg::{Cfg, EdgeId, NodeId};

/// Nodes reachable from `starts` (inclusive) following edges forward, skipping the
/// edges for which `keep` returns false.
pub fn forward(cfg: &Cfg, starts: impl IntoIterator<Item = NodeId>, keep: impl Fn(EdgeId) -> bool) -> FixedBitSet {
    let mut seen = FixedBitSet::with_capacity(cfg.node_count());
    let mut stack: Vec<NodeId> = Vec::new();
    for s in starts {
        if !seen.put(s.index()) {
            stack.push(s);
        }
    }
    while let Some(v) = stack.pop() {
        for e in cfg.out_edges(v) {
            if !keep(e) {
                continue;
            }
            let w = cfg.edge(e).dst;
            if !seen.put(w.index()) {
                stack.push(w);
            }
        }
    }
    seen
}

/// Nodes from which one of `targets` is reachable (inclusive).
pub fn backward(cfg: &Cfg, targets: impl IntoIterator<Item = NodeId>, keep: impl Fn(EdgeId) -> bool) -> FixedBitSet {
    let mut seen = FixedBitSet::with_capacity(cfg.node_count());
    let mut stack: Vec<NodeId> = Vec::new();
    for s in targets {
        if !seen.put(s.index()) {
            stack.push(s);
        }
    }
    while let Some(v) = stack.pop() {
        for &e in cfg.in_edges(v) {
            if !keep(e) {
                continue;
            }
            let w = cfg.edge(e).src;
            if !seen.put(w.index()) {
                stack.push(w);
            }
        }
    }
    seen
}

/// The back edges found by a depth-first search from the entry that visits
/// out-edges in label order: edges whose target is on the DFS stack. Removing them
/// leaves the reachable part of the graph acyclic, whether or not it is reducible —
/// the decomposition Ball–Larus path numbering uses (000 §5).
pub fn back_edges(cfg: &Cfg) -> Vec<EdgeId> {
    depth_first(cfg).back
}

/// The result of one depth-first search from the entry.
#[derive(Clone, Debug)]
pub struct DepthFirst {
    /// Back edges (target on the DFS stack), sorted.
    pub back: Vec<EdgeId>,
    /// Reachable nodes in reverse postorder: a topological order of the reachable
    /// graph without its back edges (every other edge goes forward in it).
    pub rpo: Vec<NodeId>,
}

/// Depth-first search from the entry, out-edges in label order.
pub fn depth_first(cfg: &Cfg) -> DepthFirst {
    #[derive(Clone, Copy, PartialEq)]
    enum C {
        White,
        Gray,
        Black,
    }
    let mut color = vec![C::White; cfg.node_count()];
    let mut back = Vec::new();
    let mut post = Vec::new();
    let mut stack: Vec<(NodeId, Vec<EdgeId>, usize)> = Vec::new();
    let root = cfg.entry();
    color[root.index()] = C::Gray;
    stack.push((root, cfg.out_edges(root).collect(), 0));
    while let Some((_, outs, i)) = stack.last_mut() {
        if *i < outs.len() {
            let e = outs[*i];
            *i += 1;
            let w = cfg.edge(e).dst;
            match color[w.index()] {
                C::White => {
                    color[w.index()] = C::Gray;
                    stack.push((w, cfg.out_edges(w).collect(), 0));
                }
                C::Gray => back.push(e),
                C::Black => {}
            }
        } else {
            let (v, _, _) = stack.pop().unwrap();
            color[v.index()] = C::Black;
            post.push(v);
        }
    }
    back.sort();
    post.reverse();
    DepthFirst { back, rpo: post }
}

/// Strongly connected components of a graph given as successor lists (Tarjan,
/// iterative). Returns the component number of every node; components are numbered
/// in reverse topological order of the condensation (a component's successors have
/// smaller numbers).
pub fn scc(succ: &[Vec<u32>]) -> Vec<u32> {
    const UNSET: u32 = u32::MAX;
    let n = succ.len();
    let mut index = vec![UNSET; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![UNSET; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut next_index = 0u32;
    let mut next_comp = 0u32;
    for root in 0..n as u32 {
        if index[root as usize] != UNSET {
            continue;
        }
        let mut call: Vec<(u32, usize)> = vec![(root, 0)];
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            if *i < succ[v as usize].len() {
                let w = succ[v as usize][*i];
                *i += 1;
                if index[w as usize] == UNSET {
                    index[w as usize] = next_index;
                    low[w as usize] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    call.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
            } else {
                call.pop();
                if let Some(&(p, _)) = call.last() {
                    low[p as usize] = low[p as usize].min(low[v as usize]);
                }
                if low[v as usize] == index[v as usize] {
                    loop {
                        let w = stack.pop().unwrap();
                        on_stack[w as usize] = false;
                        comp[w as usize] = next_comp;
                        if w == v {
                            break;
                        }
                    }
                    next_comp += 1;
                }
            }
        }
    }
    comp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::{CfgBuilder, EdgeLabel, Node, NodeKind};

    fn looped() -> Cfg {
        // entry -> p ; p T-> body -> p ; p F-> exit
        let mut b = CfgBuilder::new("w");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let p = b.add_node(Node::new(NodeKind::Predicate, "c"));
        let body = b.add_node(Node::new(NodeKind::Statement, "s"));
        let ex = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(ex);
        b.add_edge(en, p, EdgeLabel::Eps);
        b.add_edge(p, body, EdgeLabel::True);
        b.add_edge(p, ex, EdgeLabel::False);
        b.add_edge(body, p, EdgeLabel::Eps);
        b.build().unwrap()
    }

    #[test]
    fn loop_has_one_back_edge() {
        let g = looped();
        let back = back_edges(&g);
        assert_eq!(back.len(), 1);
        let e = g.edge(back[0]);
        assert_eq!((e.src.0, e.dst.0), (2, 1));
    }

    #[test]
    fn forward_and_backward_reachability() {
        let g = looped();
        let f = forward(&g, [NodeId(2)], |_| true);
        assert!(f.contains(1) && f.contains(3) && !f.contains(0));
        let b = backward(&g, [NodeId(2)], |_| true);
        assert!(b.contains(0) && b.contains(1) && b.contains(2) && !b.contains(3));
    }

    #[test]
    fn scc_numbers_condensation_in_reverse_topological_order() {
        let succ = vec![vec![1], vec![2], vec![1, 3], vec![]];
        let c = scc(&succ);
        assert_eq!(c[1], c[2]);
        assert!(c[3] < c[1] && c[1] < c[0]);
    }
}
