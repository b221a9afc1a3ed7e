//! Dominators of nodes and of edges.
//!
//! [`Dominators::compute`] is the Lengauer–Tarjan algorithm (path compression,
//! O(m log n)) on any graph given as successor lists. Edge dominance — "every path
//! from the entry to edge f contains edge e" — is node dominance in the *edge-split*
//! graph, which has one extra node per edge between its source and target
//! ([`EdgeDominators`]); that keeps it near-linear as Ball's valid-reachability
//! algorithm needs (000 §4.4).

use crate::cfg::{Cfg, EdgeId, NodeId};

const NONE: u32 = u32::MAX;

/// The dominator tree of a graph rooted at one node. Nodes unreachable from the
/// root have no immediate dominator and dominate nothing.
#[derive(Clone, Debug)]
pub struct Dominators {
    root: u32,
    idom: Vec<u32>,
    /// Pre/post order numbers in the dominator tree, for O(1) `dominates`.
    pre: Vec<u32>,
    post: Vec<u32>,
}

impl Dominators {
    /// Computes dominators of the graph with nodes `0..succ.len()` and the given
    /// successor lists, rooted at `root`.
    pub fn compute(succ: &[Vec<u32>], root: u32) -> Dominators {
        let n = succ.len();
        let mut pred: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (v, ss) in succ.iter().enumerate() {
            for &w in ss {
                pred[w as usize].push(v as u32);
            }
        }
        // Iterative DFS numbering (1-based dfnum; 0 = unvisited).
        let mut dfnum = vec![0u32; n];
        let mut vertex: Vec<u32> = Vec::with_capacity(n);
        let mut parent = vec![NONE; n];
        let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
        dfnum[root as usize] = 1;
        vertex.push(root);
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if *i < succ[v as usize].len() {
                let w = succ[v as usize][*i];
                *i += 1;
                if dfnum[w as usize] == 0 {
                    vertex.push(w);
                    dfnum[w as usize] = vertex.len() as u32;
                    parent[w as usize] = v;
                    stack.push((w, 0));
                }
            } else {
                stack.pop();
            }
        }
        let mut semi: Vec<u32> = (0..n).map(|v| dfnum[v]).collect();
        let mut idom = vec![NONE; n];
        let mut ancestor = vec![NONE; n];
        let mut label: Vec<u32> = (0..n as u32).collect();
        let mut bucket: Vec<Vec<u32>> = vec![Vec::new(); n];

        // eval with iterative path compression
        fn eval(v: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32]) -> u32 {
            if ancestor[v as usize] == NONE {
                return v;
            }
            // collect the path to the root of v's tree in the forest
            let mut path = Vec::new();
            let mut u = v;
            while ancestor[ancestor[u as usize] as usize] != NONE {
                path.push(u);
                u = ancestor[u as usize];
            }
            // compress from the top down
            for &x in path.iter().rev() {
                let a = ancestor[x as usize];
                if semi[label[a as usize] as usize] < semi[label[x as usize] as usize] {
                    label[x as usize] = label[a as usize];
                }
                ancestor[x as usize] = ancestor[a as usize];
            }
            label[v as usize]
        }

        for i in (1..vertex.len()).rev() {
            let w = vertex[i];
            for &v in &pred[w as usize] {
                if dfnum[v as usize] == 0 {
                    continue; // unreachable predecessor
                }
                let u = eval(v, &mut ancestor, &mut label, &semi);
                if semi[u as usize] < semi[w as usize] {
                    semi[w as usize] = semi[u as usize];
                }
            }
            let sw = vertex[semi[w as usize] as usize - 1];
            bucket[sw as usize].push(w);
            let p = parent[w as usize];
            ancestor[w as usize] = p;
            for v in std::mem::take(&mut bucket[p as usize]) {
                let u = eval(v, &mut ancestor, &mut label, &semi);
                idom[v as usize] = if semi[u as usize] < semi[v as usize] { u } else { p };
            }
        }
        for &w in vertex.iter().skip(1) {
            let sw = vertex[semi[w as usize] as usize - 1];
            if idom[w as usize] != sw {
                idom[w as usize] = idom[idom[w as usize] as usize];
            }
        }
        idom[root as usize] = root;

        // Dominator tree pre/post numbering.
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &w in vertex.iter().skip(1) {
            children[idom[w as usize] as usize].push(w);
        }
        let mut pre = vec![NONE; n];
        let mut post = vec![NONE; n];
        let mut clock = 0u32;
        let mut st: Vec<(u32, usize)> = vec![(root, 0)];
        pre[root as usize] = clock;
        clock += 1;
        while let Some(&mut (v, ref mut i)) = st.last_mut() {
            if *i < children[v as usize].len() {
                let c = children[v as usize][*i];
                *i += 1;
                pre[c as usize] = clock;
                clock += 1;
                st.push((c, 0));
            } else {
                post[v as usize] = clock;
                clock += 1;
                st.pop();
            }
        }
        Dominators { root, idom, pre, post }
    }

    pub fn root(&self) -> u32 {
        self.root
    }

    /// Immediate dominator of `v`; `None` for the root and for unreachable nodes.
    pub fn idom(&self, v: u32) -> Option<u32> {
        let d = self.idom[v as usize];
        if d == NONE || v == self.root { None } else { Some(d) }
    }

    /// Whether `v` is reachable from the root.
    pub fn is_reachable(&self, v: u32) -> bool {
        self.pre[v as usize] != NONE
    }

    /// Whether `a` dominates `b` (reflexive). False if either is unreachable.
    pub fn dominates(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        self.pre[a] != NONE && self.pre[b] != NONE && self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
    }
}

/// Successor lists of a CFG's nodes (one entry per out-edge).
pub fn successor_lists(cfg: &Cfg) -> Vec<Vec<u32>> {
    cfg.node_ids().map(|n| cfg.succs(n).map(|s| s.0).collect()).collect()
}

/// Successor lists of the reverse CFG (predecessors), for post-dominators.
pub fn predecessor_lists(cfg: &Cfg) -> Vec<Vec<u32>> {
    cfg.node_ids().map(|n| cfg.preds(n).map(|s| s.0).collect()).collect()
}

/// Node dominators of a CFG, rooted at its entry.
pub fn node_dominators(cfg: &Cfg) -> Dominators {
    Dominators::compute(&successor_lists(cfg), cfg.entry().0)
}

/// Node post-dominators of a CFG, rooted at its exit (nodes that cannot reach the
/// exit are unreachable in the reverse graph and post-dominate nothing).
pub fn node_postdominators(cfg: &Cfg) -> Dominators {
    Dominators::compute(&predecessor_lists(cfg), cfg.exit().0)
}

/// Dominance among edges (and between edges and nodes) of a CFG, computed on the
/// edge-split graph: node `v` keeps index `v`, edge `e` becomes node `|V| + e`.
#[derive(Clone, Debug)]
pub struct EdgeDominators {
    nodes: u32,
    dom: Dominators,
}

impl EdgeDominators {
    pub fn compute(cfg: &Cfg) -> EdgeDominators {
        let nv = cfg.node_count() as u32;
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); cfg.node_count() + cfg.edge_count()];
        for (id, e) in cfg.edges() {
            let en = nv + id.0;
            succ[e.src.index()].push(en);
            succ[en as usize].push(e.dst.0);
        }
        EdgeDominators { nodes: nv, dom: Dominators::compute(&succ, cfg.entry().0) }
    }

    /// Every path from the entry to edge `f` contains edge `e` (reflexive).
    pub fn edge_dominates(&self, e: EdgeId, f: EdgeId) -> bool {
        self.dom.dominates(self.nodes + e.0, self.nodes + f.0)
    }

    /// Every path from the entry to node `v` contains edge `e`.
    pub fn edge_dominates_node(&self, e: EdgeId, v: NodeId) -> bool {
        self.dom.dominates(self.nodes + e.0, v.0)
    }

    /// The immediately dominating *edge* of edge `f`, if any (skipping node levels).
    pub fn idom_edge(&self, f: EdgeId) -> Option<EdgeId> {
        let mut v = self.nodes + f.0;
        loop {
            v = self.dom.idom(v)?;
            if v >= self.nodes {
                return Some(EdgeId(v - self.nodes));
            }
        }
    }

    /// Whether edge `e` is reachable from the entry.
    pub fn edge_reachable(&self, e: EdgeId) -> bool {
        self.dom.is_reachable(self.nodes + e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Dominance by definition: a dominates b iff b is unreachable from root once a is removed
    /// (for a != root), with b reachable at all.
    fn naive_dominates(succ: &[Vec<u32>], root: u32, a: u32, b: u32) -> bool {
        let reach = |skip: Option<u32>| {
            let mut seen = vec![false; succ.len()];
            let mut st = vec![root];
            if Some(root) == skip {
                return seen;
            }
            seen[root as usize] = true;
            while let Some(v) = st.pop() {
                for &w in &succ[v as usize] {
                    if Some(w) != skip && !seen[w as usize] {
                        seen[w as usize] = true;
                        st.push(w);
                    }
                }
            }
            seen
        };
        let all = reach(None);
        if !all[b as usize] || !all[a as usize] {
            return false;
        }
        if a == b {
            return true;
        }
        !reach(Some(a))[b as usize]
    }

    proptest! {
        #[test]
        fn lengauer_tarjan_matches_definition(
            n in 1usize..14,
            edges in proptest::collection::vec((0u32..14, 0u32..14), 0..40),
        ) {
            let mut succ = vec![Vec::new(); n];
            for (a, b) in edges {
                if (a as usize) < n && (b as usize) < n {
                    succ[a as usize].push(b);
                }
            }
            let d = Dominators::compute(&succ, 0);
            for a in 0..n as u32 {
                for b in 0..n as u32 {
                    prop_assert_eq!(d.dominates(a, b), naive_dominates(&succ, 0, a, b), "a={} b={}", a, b);
                }
            }
        }
    }

    #[test]
    fn idom_of_a_diamond() {
        // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3
        let succ = vec![vec![1, 2], vec![3], vec![3], vec![]];
        let d = Dominators::compute(&succ, 0);
        assert_eq!(d.idom(3), Some(0));
        assert_eq!(d.idom(1), Some(0));
        assert_eq!(d.idom(0), None);
        assert!(d.dominates(0, 3) && !d.dominates(1, 3));
    }

    #[test]
    fn long_chain_does_not_overflow_the_stack() {
        let n = 200_000u32;
        let succ: Vec<Vec<u32>> = (0..n).map(|i| if i + 1 < n { vec![i + 1] } else { vec![] }).collect();
        let d = Dominators::compute(&succ, 0);
        assert!(d.dominates(0, n - 1));
        assert_eq!(d.idom(n - 1), Some(n - 2));
    }
}
