//! Selection from path coverage (000 §5).
//!
//! Edge coverage cannot tell a path in I(G, G') from one in D(G, G') with the same
//! edges (000 Fig. 6). Path coverage in the Ammons/Ball/Larus decomposition
//! ([`retest_graph::pathnum`]) records which acyclic paths an execution took —
//! each ends at the exit or with a back edge, after which the next one starts at
//! the back edge's target. An execution is then some sequence of recorded paths,
//! the first from the entry, each next one from the target of the back edge that
//! ended the previous one.
//!
//! [`decide_paths`] runs every recorded path through the intersection graph from
//! every vertex it may start in: (s, s') for paths from the entry; for paths from
//! a back-edge target w, every vertex (w, w') that some recorded path reaches
//! through a back edge into w (a fixpoint). The test is eliminated if no such run
//! reaches `reject`. Every real execution is one of the sequences considered, so
//! this is safe; and it is combined with valid-reachability on the edges of the
//! recorded paths, so it never selects a test valid-reachability eliminates.
//!
//! Bounded paths cannot be exact: nesting one more conditional in G' makes a path
//! in I(G, G') and one in D(G, G') record the same paths (000 §5, last example).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use retest_graph::pathnum::PathNumbering;
use retest_graph::{EdgeId, NodeId};

use crate::ball::{Decision, Order, PairAnalysis, Step, Transition, selected};

/// Why recorded path coverage could not be used; callers fall back to edge
/// coverage (or select the test).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PathsError {
    /// The numbering was made for a graph of a different shape than the old graph.
    NumberingMismatch,
    /// A recorded path number is not a path of the numbering.
    UnknownPath(u64),
}

impl std::fmt::Display for PathsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathsError::NumberingMismatch => {
                f.write_str("the path numbering does not belong to the old graph — renumber it from the stored CFG")
            }
            PathsError::UnknownPath(id) => {
                write!(f, "recorded path number {id} is not a path of the procedure — use edge coverage")
            }
        }
    }
}

impl std::error::Error for PathsError {}

/// Decides one test from the acyclic paths (by number) its execution(s) of the
/// procedure took, in any order, duplicates allowed. `numbering` must be the
/// numbering of `analysis.old()`. `order` is passed to valid-reachability on the
/// union of the paths' edges (see [`Order`]).
///
/// Selected iff valid-reachability selects the edges of the paths *and* some
/// recorded path, run from a vertex it may start in, reaches `reject`; the
/// transitions reported are the ones to `reject` those runs take.
pub fn decide_paths(
    analysis: &PairAnalysis<'_>,
    numbering: &PathNumbering,
    recorded: &[u64],
    order: Order,
) -> Result<Decision, PathsError> {
    let g = analysis.old();
    if numbering.shape() != (g.node_count(), g.edge_count()) {
        return Err(PathsError::NumberingMismatch);
    }
    let ids: BTreeSet<u64> = recorded.iter().copied().collect();
    // paths by start node
    let mut by_start: BTreeMap<NodeId, Vec<Vec<EdgeId>>> = BTreeMap::new();
    let mut edges: Vec<EdgeId> = Vec::new();
    for &id in &ids {
        let p = numbering.decode(g, id).ok_or(PathsError::UnknownPath(id))?;
        edges.extend_from_slice(&p.edges);
        by_start.entry(p.start).or_default().push(p.edges);
    }
    edges.sort();
    edges.dedup();
    let valid = analysis.decide(crate::ball::Algorithm::Valid, &edges, order);
    if !valid.is_selected() || !analysis.entry_equivalent() {
        return Ok(valid);
    }
    let Some(start) = analysis.start() else { return Ok(Decision::Eliminated) };
    let mut seen: HashSet<(NodeId, u32)> = HashSet::new();
    let mut work = vec![(g.entry(), start)];
    seen.insert((g.entry(), start));
    let mut because: Vec<Transition> = Vec::new();
    while let Some((node, state)) = work.pop() {
        let Some(paths) = by_start.get(&node) else { continue };
        for path in paths {
            let mut i = state;
            let mut through = true;
            for &e in path {
                match analysis.step(i, e) {
                    Step::State(j) => i = j,
                    Step::Reject => {
                        because.push(analysis.transition(i, e, Step::Reject));
                        through = false;
                        break;
                    }
                    Step::Accept => {
                        through = false;
                        break;
                    }
                }
            }
            // a path that ends with a back edge continues at its target
            if through
                && let Some(&last) = path.last()
                && numbering.is_back_edge(last)
                && seen.insert((g.edge(last).dst, i))
            {
                work.push((g.edge(last).dst, i));
            }
        }
    }
    Ok(selected(because))
}
