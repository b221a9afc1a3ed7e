//! Line, branch and function coverage of a set of tests, per source file.
//!
//! A line is *executable* when a statement-level node (statement, call,
//! predicate, switch) starts on it, and *executed* by a test when one of those
//! nodes ran (left by an out-edge — see `retest_graph::coverage`). Branches are
//! the out-edges of condition-level predicates (`T`/`F` of each condition, as
//! compilers count them) and of switches, where, as gcov counts them, the labels
//! of one statement make one branch (`case 'a': case 'e': … return 1;` is one
//! branch, not one per label). Labels that leave the switch at once (`case 3:
//! break;`) lead where the switch's end leads, so they make one branch with
//! each other and with an implicit `default`; gcov counts each such `break`
//! apart (the graph has no node for a `break`).
//! Counts are numbers of tests; a line also has an *execution count* when a
//! unit that holds it was built with counters (`retest build --counts`): see
//! [`LineCount::executions`] for the rule.

use std::collections::BTreeMap;

use fixedbitset::FixedBitSet;
use retest_graph::{EdgeId, NodeId, NodeKind, Procedure, Unit};
use roaring::RoaringBitmap;

/// Coverage of one line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCount {
    /// Tests that executed the line.
    pub tests: u32,
    /// How many times the line ran, summed over the tests: `None` unless a
    /// unit that holds the line was built with counters (`--counts`).
    ///
    /// The rule, gcov's for lines that hold no loop of their own: a line
    /// ran once each time control *entered* it from elsewhere — the sum,
    /// over the condition-level edges into a node whose statement starts on
    /// the line from a node that is not on it (another line, the function's
    /// entry, a declaration without code), of their execution counts (edge
    /// counts: `retest_graph::coverage::edge_counts`). Flow within the line
    /// (`a && b`, two statements on one line) enters it once; so `for (i =
    /// 0; i < n; i++)` above its body ran n + 1 times (the entry, then once
    /// back from the body for each of n iterations), the body n times. A loop
    /// wholly on one line (`while (*p) p++;`) counts once per entry, where
    /// gcov adds the line's own cycles. In C++ the implicit destructor call of
    /// a local object is a statement of its declaration's line, so that line
    /// also counts the exits of the object's scope. Edges whose count the
    /// counters do not determine (none that full probes measure) count as
    /// zero.
    pub executions: Option<u64>,
}

/// One branch: a labelled out-edge of a condition or switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    /// Which decision on the line (in source order) and which outcome.
    pub block: u32,
    pub label: String,
    /// Tests that took it.
    pub tests: u32,
}

/// A function's entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub line: u32,
    /// Tests that entered it.
    pub tests: u32,
    /// Its executable lines.
    pub lines: Vec<u32>,
    /// Its branches: (line, block, label).
    pub branches: Vec<(u32, u32, String)>,
    /// Whether runs record it: a C++ function that runs only while compiling
    /// (`consteval`), or a `constexpr` one in C++11, has no probe; its
    /// `tests` is then 0 without meaning that no test called it, and it
    /// counts in no total.
    pub recorded: bool,
}

/// Hit and total counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Ratio {
    pub hit: usize,
    pub total: usize,
}

impl Ratio {
    pub fn percent(&self) -> f64 {
        if self.total == 0 { 100.0 } else { 100.0 * self.hit as f64 / self.total as f64 }
    }
}

impl FileCoverage {
    /// Line and branch coverage of function `f` of this file.
    pub fn function_stats(&self, f: &Function) -> (Ratio, Ratio) {
        let lines = Ratio {
            hit: f.lines.iter().filter(|l| self.lines.get(l).is_some_and(|c| c.tests > 0)).count(),
            total: f.lines.len(),
        };
        let branches = Ratio {
            hit: f
                .branches
                .iter()
                .filter(|(l, b, lab)| {
                    self.branches
                        .get(l)
                        .is_some_and(|v| v.iter().any(|x| x.block == *b && &x.label == lab && x.tests > 0))
                })
                .count(),
            total: f.branches.len(),
        };
        (lines, branches)
    }
}

/// Coverage of one source file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileCoverage {
    pub lines: BTreeMap<u32, LineCount>,
    pub branches: BTreeMap<u32, Vec<Branch>>,
    pub functions: Vec<Function>,
}

impl FileCoverage {
    pub fn lines_hit(&self) -> usize {
        self.lines.values().filter(|l| l.tests > 0).count()
    }
    pub fn branches_total(&self) -> usize {
        self.branches.values().map(Vec::len).sum()
    }
    pub fn branches_hit(&self) -> usize {
        self.branches.values().flatten().filter(|b| b.tests > 0).count()
    }
    pub fn functions_hit(&self) -> usize {
        self.functions.iter().filter(|f| f.tests > 0).count()
    }
    /// Functions that runs record (see [`Function::recorded`]).
    pub fn functions_total(&self) -> usize {
        self.functions.iter().filter(|f| f.recorded).count()
    }
}

/// Where each countable thing of a procedure is, precomputed once per unit.
struct ProcShape {
    file: String,
    entry_line: u32,
    /// statement-level node → line (executable nodes only)
    stmt_lines: Vec<Option<u32>>,
    /// condition-level node → the line of its statement (executable only)
    cond_lines: Vec<Option<u32>>,
    /// condition-level edge → (line, block, label) for branch edges
    branch_of: Vec<Option<(u32, u32, String)>>,
    /// Whether the function has a probe at all: a C++ `constexpr` function
    /// has none (it may run while compiling), and its lines and branches are
    /// *not recorded* rather than unexecuted; the function is still listed.
    recorded: bool,
}

fn shape(unit: &Unit, p: &Procedure) -> Option<ProcShape> {
    let span = p.span?;
    let file = unit.file_path(&span).to_string();
    let recorded = p.probes.iter().any(|q| !matches!(q, retest_graph::coverage::Probe::Derived));
    if !recorded {
        return Some(ProcShape {
            file,
            entry_line: span.line,
            stmt_lines: vec![None; p.stmt.node_count()],
            cond_lines: vec![None; p.cond.node_count()],
            branch_of: vec![None; p.cond.edge_count()],
            recorded,
        });
    }
    let stmt_lines: Vec<Option<u32>> = p
        .stmt
        .nodes()
        .map(|(_, n)| match n.kind {
            NodeKind::Statement | NodeKind::Call | NodeKind::Predicate | NodeKind::Switch => {
                n.span.filter(|s| unit.file_path(s) == file).map(|s| s.line)
            }
            _ => None,
        })
        .collect();
    let cond_lines = p.map.node.iter().map(|c| stmt_lines.get(c.index()).copied().flatten()).collect();
    // branch blocks: number the decisions (condition nodes, switches) per line in id order
    let mut per_line: BTreeMap<u32, u32> = BTreeMap::new();
    let mut branch_of = vec![None; p.cond.edge_count()];
    for (id, n) in p.cond.nodes() {
        if !matches!(n.kind, NodeKind::Predicate | NodeKind::Switch) {
            continue;
        }
        let Some(s) = n.span.filter(|s| unit.file_path(s) == file) else { continue };
        let block = {
            let b = per_line.entry(s.line).or_insert(0);
            *b += 1;
            *b - 1
        };
        if n.kind == NodeKind::Switch {
            // one branch per target: the labels that lead to one statement
            let mut targets: Vec<(NodeId, Vec<EdgeId>)> = Vec::new();
            for e in p.cond.out_edges(id) {
                let dst = p.cond.edge(e).dst;
                match targets.iter_mut().find(|(t, _)| *t == dst) {
                    Some((_, es)) => es.push(e),
                    None => targets.push((dst, vec![e])),
                }
            }
            for (_, es) in targets {
                let labels: Vec<String> = es.iter().map(|&e| p.cond.edge(e).label.to_string()).collect();
                let label = match labels.len() {
                    0..=3 => labels.join(", "),
                    n => format!("{}, {} … ({n} labels)", labels[0], labels[1]),
                };
                for e in es {
                    branch_of[e.index()] = Some((s.line, block, label.clone()));
                }
            }
            continue;
        }
        for e in p.cond.out_edges(id) {
            branch_of[e.index()] = Some((s.line, block, p.cond.edge(e).label.to_string()));
        }
    }
    Some(ProcShape { file, entry_line: span.line, stmt_lines, cond_lines, branch_of, recorded })
}

/// Accumulates coverage over units and tests.
#[derive(Default)]
pub struct Accumulator {
    files: BTreeMap<String, FileCoverage>,
    /// The test being added (see [`Accumulator::begin_test`]), and what it
    /// has counted already: a header's line, branch or function compiled into
    /// several units counts once per test, not once per unit.
    test: u64,
    counted: std::collections::HashSet<Counted>,
}

/// A thing the current test has counted: (file, line), (file, line, block,
/// label), or (file, function slot).
#[derive(PartialEq, Eq, Hash)]
enum Counted {
    Line(String, u32),
    Branch(String, u32, u32, String),
    Function(String, usize),
}

/// Index of a function within its file's list.
fn function_slot(fc: &mut FileCoverage, name: &str, line: u32) -> usize {
    match fc.functions.iter().position(|f| f.name == name && f.line == line) {
        Some(i) => i,
        None => {
            fc.functions.push(Function {
                name: name.to_string(),
                line,
                tests: 0,
                lines: Vec::new(),
                branches: Vec::new(),
                recorded: false,
            });
            fc.functions.len() - 1
        }
    }
}

/// A unit ready to accumulate tests into.
pub struct UnitShape {
    procs: Vec<Option<ProcShape>>,
    bases: Vec<u32>,
}

impl Accumulator {
    /// Registers a unit's executable lines, branches and functions (all at zero),
    /// and returns its shape for [`Accumulator::add_test`].
    pub fn add_unit(&mut self, unit: &Unit) -> UnitShape {
        self.add_unit_counted(unit, false)
    }

    /// [`Accumulator::add_unit`] for a unit whose build may have counted
    /// executions (`counted`): its lines then have an execution count, zero
    /// until tests add theirs.
    pub fn add_unit_counted(&mut self, unit: &Unit, counted: bool) -> UnitShape {
        let procs: Vec<Option<ProcShape>> = unit.procedures.iter().map(|p| shape(unit, p)).collect();
        for (p, s) in unit.procedures.iter().zip(&procs) {
            let Some(s) = s else { continue };
            let fc = self.files.entry(s.file.clone()).or_default();
            let slot = function_slot(fc, &p.name, s.entry_line);
            // one unit that records it (an inline function in many units) suffices
            fc.functions[slot].recorded |= s.recorded;
            for l in s.stmt_lines.iter().flatten() {
                let c = fc.lines.entry(*l).or_default();
                if counted && s.recorded {
                    c.executions.get_or_insert(0);
                }
                if !fc.functions[slot].lines.contains(l) {
                    fc.functions[slot].lines.push(*l);
                }
            }
            for (line, block, label) in s.branch_of.iter().flatten() {
                let v = fc.branches.entry(*line).or_default();
                if !v.iter().any(|b| b.block == *block && b.label == *label) {
                    v.push(Branch { block: *block, label: label.clone(), tests: 0 });
                }
                let key = (*line, *block, label.clone());
                if !fc.functions[slot].branches.contains(&key) {
                    fc.functions[slot].branches.push(key);
                }
            }
        }
        UnitShape { procs, bases: unit.edge_bases() }
    }

    /// Starts a test: what [`Accumulator::add_test`] adds until the next
    /// call counts once, however many of the test's units hold it.
    pub fn begin_test(&mut self) {
        self.test += 1;
        self.counted.clear();
    }

    /// Adds one test's coverage of a unit (unit-wide condition-level edges).
    pub fn add_test(&mut self, unit: &Unit, shape: &UnitShape, edges: &RoaringBitmap) {
        self.add_test_counted(unit, shape, edges, None);
    }

    /// [`Accumulator::add_test`] with the test's execution counts of the
    /// unit's edges (unit-wide numbers; an edge not listed ran zero times),
    /// if its build counted: they add to the lines' execution counts (see
    /// [`LineCount::executions`]).
    pub fn add_test_counted(
        &mut self,
        unit: &Unit,
        shape: &UnitShape,
        edges: &RoaringBitmap,
        counts: Option<&BTreeMap<u32, u64>>,
    ) {
        if let Some(counts) = counts {
            for (i, p) in unit.procedures.iter().enumerate() {
                let Some(s) = shape.procs[i].as_ref().filter(|s| s.recorded) else { continue };
                let (lo, hi) = (shape.bases[i], shape.bases[i + 1]);
                let fc = self.files.entry(s.file.clone()).or_default();
                for (&e, &n) in counts.range(lo..hi) {
                    let edge = p.cond.edge(EdgeId(e - lo));
                    let Some(line) = s.cond_lines[edge.dst.index()] else { continue };
                    if s.cond_lines[edge.src.index()] == Some(line) {
                        continue; // flow within the line
                    }
                    let c = fc.lines.entry(line).or_default().executions.get_or_insert(0);
                    *c = c.saturating_add(n);
                }
            }
        }
        for (i, p) in unit.procedures.iter().enumerate() {
            let Some(s) = shape.procs[i].as_ref().filter(|s| s.recorded) else { continue };
            let (lo, hi) = (shape.bases[i], shape.bases[i + 1]);
            if edges.range_cardinality(lo..hi) == 0 {
                continue;
            }
            let mut cond = FixedBitSet::with_capacity(p.cond.edge_count());
            for e in edges.range(lo..hi) {
                cond.insert((e - lo) as usize);
            }
            let stmt = p.stmt_coverage(&cond);
            let fc = self.files.entry(s.file.clone()).or_default();
            // executed statement-level nodes → lines (a line counts once per test)
            let mut lines: Vec<u32> = Vec::new();
            for (id, e) in p.stmt.edges() {
                if stmt.contains(id.index())
                    && let Some(l) = s.stmt_lines[e.src.index()]
                {
                    lines.push(l);
                }
            }
            lines.sort_unstable();
            lines.dedup();
            for l in lines {
                if self.counted.insert(Counted::Line(s.file.clone(), l)) {
                    fc.lines.entry(l).or_default().tests += 1;
                }
            }
            // a branch counts once per test, however many of its labels it took
            let mut taken: Vec<&(u32, u32, String)> = cond.ones().filter_map(|e| s.branch_of[e].as_ref()).collect();
            taken.sort_unstable();
            taken.dedup();
            for (line, block, label) in taken {
                if !self.counted.insert(Counted::Branch(s.file.clone(), *line, *block, label.clone())) {
                    continue;
                }
                if let Some(b) = fc
                    .branches
                    .get_mut(line)
                    .and_then(|v| v.iter_mut().find(|b| b.block == *block && b.label == *label))
                {
                    b.tests += 1;
                }
            }
            let slot = function_slot(fc, &p.name, s.entry_line);
            if self.counted.insert(Counted::Function(s.file.clone(), slot)) {
                fc.functions[slot].tests += 1;
            }
        }
    }

    pub fn finish(self) -> BTreeMap<String, FileCoverage> {
        self.files
    }
}
