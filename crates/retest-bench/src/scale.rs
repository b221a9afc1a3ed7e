//! `retest-bench scale`: a synthetic store at the size of a CI fleet's
//! history (issue 29: 10⁵ tests, 100 units of 10⁵ edges each, 50 changed
//! edges), written through the `retest-store` API into a SQLite file or a
//! PostgreSQL database, to time `retest select` and the index read on it.
//!
//! What is generated (every figure an option):
//! * **units** — `--units` translation units `src/uNNN.c`, each of
//!   `--edges-per-unit / 101` procedures `uNNN_fP(int x)` built with
//!   `retest-graph`'s `CfgBuilder`: 33 `if (x > i) s += …;` statements in a
//!   row, then `return s;` — 101 condition-level edges per procedure. The
//!   statement level is the condition level (one condition per decision),
//!   so DejaVu compares every node as it would on real code.
//! * **tests** — `--tests` universe lines `./t N` (`universe.txt`), each with
//!   its definition and two file dependencies among 100 files under
//!   `data/`, as `retest run` records them. Test `N`'s coverage: a run of 5
//!   adjacent procedures of its *home* unit (tests are grouped by unit, as
//!   suites are by module: tests `0 … tests/units − 1` exercise unit 0),
//!   plus 2 of the first 50 procedures (the unit's "library" functions) of
//!   each of 2 other units. Through each procedure it takes, per `if`, the
//!   true or the false branch by a coin flip: about 630 edges per test,
//!   6 · 10⁷ (test, edge) pairs in all.
//! * **the change** — a second snapshot (open, as after `retest build`)
//!   in which `--changed-units` units differ from the baseline in
//!   `--changed-edges` statements spread over them (a `s += …` text
//!   changed; half of them in library procedures): each makes one edge
//!   dangerous.
//!
//! It then reads the edge index of the changed units as `retest select`
//! does, in a fresh handle and one read view, prints that time and the
//! commands that time `retest select` from a cold process.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use retest_graph::coverage::Probe;
use retest_graph::unit::SourceFile;
use retest_graph::{Cfg, CfgBuilder, Contraction, EdgeId, EdgeLabel, Node, NodeId, NodeKind, Procedure, Span, Unit};
use retest_run::discover::from_universe;
use retest_run::files::{Kind, Paths, StateCache};
use retest_store::{CoverageState, DepState, MatrixRow, SnapshotId, Store, TestDeps, TestName, UnitId};
use roaring::RoaringBitmap;

#[derive(Args, Clone, Debug)]
pub struct ScaleArgs {
    /// The project directory to create: `universe.txt`, `data/`, and
    /// `.retest/` (the SQLite store, or a PostgreSQL store's local files).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Write the store into this PostgreSQL database (empty) instead of
    /// `DIR/.retest/store.db`.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    #[arg(long, default_value_t = 100_000)]
    pub tests: u32,
    #[arg(long, default_value_t = 100)]
    pub units: u32,
    /// Condition-level edges per unit (rounded down to whole procedures of 101).
    #[arg(long, default_value_t = 100_000)]
    pub edges_per_unit: u32,
    /// Statements changed in the second snapshot: one dangerous edge each.
    #[arg(long, default_value_t = 50)]
    pub changed_edges: u32,
    /// Units the changed statements are spread over.
    #[arg(long, default_value_t = 5)]
    pub changed_units: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Do not generate: time the index read on the store an earlier run
    /// generated in DIR with the same options.
    #[arg(long)]
    pub read_only: bool,
}

/// `if` statements per procedure.
const IFS: u32 = 33;
/// Condition-level edges per procedure: entry, three per `if`, `return`.
const EDGES: u32 = 3 * IFS + 2;
/// Adjacent procedures of its home unit a test runs.
const HOME_PROCS: u32 = 5;
/// Other units whose library procedures a test runs, and how many of them.
const LIBRARY_UNITS: u32 = 2;
const LIBRARY_PROCS: u32 = 2;
/// The first procedures of a unit are its library.
const LIBRARY: u32 = 50;
/// Files the tests read, and how many each test reads.
const DATA_FILES: u32 = 100;
const FILES_PER_TEST: u32 = 2;

/// A deterministic xorshift generator.
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n.max(1))) as u32
    }
}

/// Node ids of the procedure template: entry, exit, then per `if` its
/// condition and its statement, then `return`.
fn cond_node(i: u32) -> NodeId {
    NodeId(2 + 2 * i)
}
fn stmt_node(i: u32) -> NodeId {
    NodeId(3 + 2 * i)
}
fn ret_node() -> NodeId {
    NodeId(2 + 2 * IFS)
}

/// One procedure: `int NAME(int x)`, its `if`s, `return s;`. `changed`: the
/// `if` whose statement reads differently in this version.
fn procedure(name: &str, p: u32, line: u32, changed: Option<u32>) -> Procedure {
    let span = |l: u32| Span { file: 0, line: l, col: 1, end_line: l };
    let mut b = CfgBuilder::new(name);
    let mut entry = Node::new(NodeKind::Entry, format!("int {name} ( int x )")).with_span(span(line));
    entry.refs = vec!["x".into()];
    let en = b.add_node(entry);
    let ex = b.add_node(Node::new(NodeKind::Exit, ""));
    b.set_entry(en);
    b.set_exit(ex);
    for i in 0..IFS {
        let mut c = Node::new(NodeKind::Predicate, format!("x > {i}")).with_span(span(line + 1 + i));
        c.refs = vec!["x".into()];
        b.add_node(c);
        let k = if changed == Some(i) { p + 1 } else { p };
        let mut s = Node::new(NodeKind::Statement, format!("s += {k} * {i} ;")).with_span(span(line + 1 + i));
        s.refs = vec!["s".into()];
        b.add_node(s);
    }
    let mut r = Node::new(NodeKind::Statement, "return s ;").with_span(span(line + 1 + IFS));
    r.refs = vec!["s".into()];
    b.add_node(r);
    b.add_edge(en, cond_node(0), EdgeLabel::Eps);
    for i in 0..IFS {
        let next = if i + 1 < IFS { cond_node(i + 1) } else { ret_node() };
        b.add_edge(cond_node(i), stmt_node(i), EdgeLabel::True);
        b.add_edge(cond_node(i), next, EdgeLabel::False);
        b.add_edge(stmt_node(i), next, EdgeLabel::Eps);
    }
    b.add_edge(ret_node(), ex, EdgeLabel::Eps);
    let cond = b.build().expect("the template is a CFG");
    let nodes = cond.node_count();
    let mut probes = vec![Probe::Node; nodes];
    probes[ex.index()] = Probe::Derived;
    Procedure {
        name: name.to_string(),
        is_static: false,
        span: Some(span(line)),
        map: Contraction {
            node: (0..nodes as u32).map(NodeId).collect(),
            edge: (0..cond.edge_count() as u32).map(|e| Some(EdgeId(e))).collect(),
        },
        stmt: cond.clone(),
        cond,
        probes,
        locals: Vec::new(),
        unanalysable: None,
        digest: xxhash_rust::xxh3::xxh3_64(format!("{name}{changed:?}").as_bytes()),
    }
}

/// Unit `k`; `changes` lists (procedure, `if`) pairs that read differently.
fn unit(k: u32, procs: u32, changes: &[(u32, u32)]) -> Unit {
    let procedures = (0..procs)
        .map(|p| {
            let changed = changes.iter().find(|(q, _)| *q == p).map(|(_, i)| *i);
            procedure(&format!("u{k:03}_f{p}"), p, 1 + p * (IFS + 3), changed)
        })
        .collect();
    Unit { files: vec![SourceFile { path: unit_path(k), system: false }], procedures, ..Default::default() }
}

fn unit_path(k: u32) -> String {
    format!("src/u{k:03}.c")
}

/// Edge ids of the template, per `if`: (true, false, after the statement).
struct Template {
    entry: u32,
    ifs: Vec<(u32, u32, u32)>,
    ret: u32,
}

impl Template {
    fn new() -> Template {
        let p = procedure("t", 0, 1, None);
        let c: &Cfg = &p.cond;
        let out = |n: NodeId, l: EdgeLabel| c.out_edge_labelled(n, &l).expect("template edge").0;
        Template {
            entry: out(c.entry(), EdgeLabel::Eps),
            ifs: (0..IFS)
                .map(|i| {
                    (
                        out(cond_node(i), EdgeLabel::True),
                        out(cond_node(i), EdgeLabel::False),
                        out(stmt_node(i), EdgeLabel::Eps),
                    )
                })
                .collect(),
            ret: out(ret_node(), EdgeLabel::Eps),
        }
    }

    /// One run through procedure `p`: each `if` taken or not by a coin flip.
    fn run(&self, p: u32, rng: &mut Rng, into: &mut RoaringBitmap) {
        let base = p * EDGES;
        into.insert(base + self.entry);
        let mut bits = rng.next();
        for (i, (t, f, after)) in self.ifs.iter().enumerate() {
            if i == 32 {
                bits = rng.next();
            }
            if bits & (1 << (i % 32)) != 0 {
                into.insert(base + t);
                into.insert(base + after);
            } else {
                into.insert(base + f);
            }
        }
        into.insert(base + self.ret);
    }
}

/// The changed statements: per changed unit, its (procedure, `if`) pairs.
fn changes(a: &ScaleArgs, procs: u32) -> Vec<(u32, Vec<(u32, u32)>)> {
    let units = a.changed_units.clamp(1, a.units);
    (0..units)
        .map(|j| {
            let k = j * a.units / units;
            let n = a.changed_edges / units + u32::from(j < a.changed_edges % units);
            let mut taken = std::collections::BTreeSet::new();
            let pairs = (0..n.min(procs))
                .map(|c| {
                    // half in library procedures, half spread over the unit;
                    // one change per procedure
                    let mut p = if c % 2 == 0 { (c * 7) % LIBRARY.min(procs) } else { (c * 97 + 13 * j) % procs };
                    while !taken.insert(p) {
                        p = (p + 1) % procs;
                    }
                    (p, (c * 5 + j) % IFS)
                })
                .collect::<Vec<_>>();
            (k, pairs)
        })
        .collect()
}

fn hash_of(seed: u64, k: u32, version: u32) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(format!("retest-bench scale {seed} unit {k} version {version}").as_bytes())
        .to_le_bytes()
}

pub fn run(retest: &Path, a: &ScaleArgs) -> Result<()> {
    let procs = (a.edges_per_unit / EDGES).max(LIBRARY);
    std::fs::create_dir_all(&a.dir).with_context(|| a.dir.display().to_string())?;
    let dir = a.dir.canonicalize()?;
    let local = dir.join(".retest");
    if a.read_only {
        return report_read(retest, a, &dir, &local, procs);
    }
    anyhow::ensure!(!local.exists(), "{} exists: give a new directory", local.display());
    let started = Instant::now();
    let mut store = match &a.store {
        Some(url) => Store::open_url(url, &local, true)?,
        None => Store::init(&local)?,
    };
    let name = store.name().display().to_string();

    // the tests: universe lines, their definitions and the files they read
    let universe = dir.join("universe.txt");
    let lines: Vec<String> = (0..a.tests).map(|t| format!("./t {t}")).collect();
    std::fs::write(&universe, lines.join("\n") + "\n")?;
    let specs = from_universe(&universe)?;
    let data = dir.join("data");
    std::fs::create_dir_all(&data)?;
    let paths = Paths::new(&dir);
    let mut cache = StateCache::default();
    let mut states = Vec::new();
    for f in 0..DATA_FILES {
        let abs = data.join(format!("d{f:03}.txt"));
        std::fs::write(&abs, format!("input {f}\n"))?;
        let s = cache.state(&paths, &abs, Kind::Content);
        states.push(DepState {
            path: s.path,
            kind: s.kind.code(),
            hash: s.hash,
            stamp: s.stamp.map(|t| t.to_bytes().to_vec()),
        });
    }
    let state_ids = store.dep_state_ids(&states)?;
    let named: Vec<TestName> =
        specs.iter().map(|s| TestName { key: s.key.clone(), name: s.name.clone(), cmd: s.cmd.clone() }).collect();
    let ids = store.upsert_tests_named(&named)?;
    eprintln!("{} tests registered ({:.1} s)", ids.len(), started.elapsed().as_secs_f64());

    // the baseline's units
    let base = store.open_snapshot()?;
    let mut unit_ids: Vec<UnitId> = Vec::with_capacity(a.units as usize);
    for k in 0..a.units {
        let u = unit(k, procs, &[]);
        let id = store.put_unit(&hash_of(a.seed, k, 0), &u)?;
        store.record_unit(base, &unit_path(k), &unit_path(k), id, None, "[]")?;
        unit_ids.push(id);
    }
    eprintln!(
        "{} units of {} procedures ({} edges each) stored ({:.1} s)",
        a.units,
        procs,
        procs * EDGES,
        started.elapsed().as_secs_f64()
    );

    // the coverage matrix
    let template = Template::new();
    let run = store.begin_run(base, "full")?;
    let mut rng = Rng::new(a.seed);
    let per_home = a.tests.div_ceil(a.units).max(1);
    let mut pairs = 0u64;
    let rows: Vec<MatrixRow> = specs
        .iter()
        .zip(&ids)
        .enumerate()
        .map(|(t, (spec, id))| {
            let t = t as u32;
            let mut cov: std::collections::BTreeMap<u32, RoaringBitmap> = Default::default();
            let home = (t / per_home).min(a.units - 1);
            let start = rng.below(procs - HOME_PROCS + 1);
            let bm = cov.entry(home).or_default();
            for p in start..start + HOME_PROCS {
                template.run(p, &mut rng, bm);
            }
            for _ in 0..LIBRARY_UNITS {
                let k = rng.below(a.units);
                for _ in 0..LIBRARY_PROCS {
                    let p = rng.below(LIBRARY.min(procs));
                    template.run(p, &mut rng, cov.entry(k).or_default());
                }
            }
            pairs += cov.values().map(|b| b.len()).sum::<u64>();
            let files: RoaringBitmap = (0..FILES_PER_TEST).map(|_| state_ids[rng.below(DATA_FILES) as usize]).collect();
            MatrixRow {
                test: *id,
                run,
                state: CoverageState::Known,
                coverage: cov.into_iter().map(|(k, b)| (unit_ids[k as usize], b)).collect(),
                recorded: Vec::new(),
                deps: Some(TestDeps { definition: spec.definition(&dir).to_json(), states: files, unknown: None }),
            }
        })
        .collect();
    store.advance_baseline(base, &rows)?;
    store.finish_run(run, None)?;
    drop(rows);
    eprintln!(
        "matrix of {} tests, {pairs} (test, edge) pairs, and its edge index stored ({:.1} s)",
        a.tests,
        started.elapsed().as_secs_f64()
    );

    // the change: a new snapshot, as `retest build` leaves it
    let next = store.open_snapshot()?;
    let changed = changes(a, procs);
    for (k, pairs) in &changed {
        let u = unit(*k, procs, pairs);
        let id = store.put_unit(&hash_of(a.seed, *k, 1), &u)?;
        store.record_unit(next, &unit_path(*k), &unit_path(*k), id, None, "[]")?;
    }
    let size = store.file_size();
    drop(store);
    eprintln!(
        "snapshot {} changes {} statements in {} units; store {name}: {:.0} MB ({:.1} s)",
        next.0,
        a.changed_edges,
        changed.len(),
        size as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );

    report_read(retest, a, &dir, &local, procs)
}

/// Times the index read on the generated store and prints how to time `retest select`.
fn report_read(retest: &Path, a: &ScaleArgs, dir: &Path, local: &Path, procs: u32) -> Result<()> {
    let template = Template::new();
    let (open, took, tests, units) = read_index(a, local, procs, &template)?;
    println!(
        "index read: {:.1} ms ({units} units, {tests} tests on the {} changed edges; opening the store before it: {:.1} ms)",
        took * 1e3,
        a.changed_edges,
        open * 1e3
    );
    let store_arg = a.store.as_ref().map(|u| format!("--store {u} ")).unwrap_or_default();
    println!("time a cold `retest select`:");
    println!(
        "  cd {} && hyperfine -N -w 3 -r 20 '{} {store_arg}select --universe universe.txt --format names'",
        dir.display(),
        retest.display()
    );
    Ok(())
}

/// Reads `TestsOnEdge` of the changed edges as `retest select` does, in a
/// fresh handle and one read view — block by block
/// (`Store::edge_index_block`), each block once: the time of that read view,
/// how many tests are on the dangerous edges, and in how many units; and
/// the time it took to open the store (connect, check its version).
fn read_index(a: &ScaleArgs, local: &Path, procs: u32, template: &Template) -> Result<(f64, f64, u64, usize)> {
    let t = Instant::now();
    let mut store = match &a.store {
        Some(url) => Store::open_url(url, local, false)?,
        None => Store::open(local)?,
    };
    let open = t.elapsed().as_secs_f64();
    let base: SnapshotId = store.baseline()?.context("the store has no baseline: generate it first")?;
    let ids: std::collections::HashMap<String, UnitId> =
        store.snapshot_units(base)?.into_iter().map(|u| (u.key, u.unit)).collect();
    let dangerous: Vec<(UnitId, Vec<u32>)> = changes(a, procs)
        .into_iter()
        .map(|(k, pairs)| {
            (ids[&unit_path(k)], pairs.iter().map(|(p, i)| p * EDGES + template.ifs[*i as usize].0).collect())
        })
        .collect();
    let t = Instant::now();
    let tests = store.read_view(|s| -> Result<u64> {
        let mut hit = RoaringBitmap::new();
        for (u, edges) in &dangerous {
            let mut known = RoaringBitmap::new();
            let mut idx = retest_store::EdgeIndex::default();
            for e in edges {
                if !known.contains(*e) {
                    let (range, part) = s.edge_index_block(base, *u, *e)?;
                    known.insert_range(range);
                    idx.edges.extend(part.edges);
                }
                if let Some(b) = idx.tests_on_edge(*e) {
                    hit |= b;
                }
            }
        }
        Ok(hit.len())
    })??;
    Ok((open, t.elapsed().as_secs_f64(), tests, dangerous.len()))
}
