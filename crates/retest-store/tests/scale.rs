//! Store figures at scale (ignored by default; run with
//! `cargo test --release -p retest-store --test scale -- --ignored --nocapture`):
//! a matrix of 10,000 synthetic tests over 50,000 edges of one unit — write it
//! (which builds and stores `TestsOnEdge` in the same transaction), read the
//! index in the same handle and from a fresh one, and report the database size
//! per test.

use std::time::Instant;

use retest_graph::coverage::Probe;
use retest_graph::{CfgBuilder, Contraction, EdgeId, EdgeLabel, Node, NodeId, NodeKind, Procedure, Unit};
use retest_store::{CoverageState, MatrixRow, Store};
use roaring::RoaringBitmap;

const TESTS: u32 = 10_000;
const FUNCTIONS: u32 = 1_000;
const EDGES_PER_FUNCTION: u32 = 50;

fn unit() -> Unit {
    let mut b = CfgBuilder::new("f");
    let en = b.add_node(Node::new(NodeKind::Entry, "void f ( void )"));
    let ex = b.add_node(Node::new(NodeKind::Exit, ""));
    b.set_entry(en);
    b.set_exit(ex);
    b.add_edge(en, ex, EdgeLabel::Eps);
    let cfg = b.build().unwrap();
    Unit {
        procedures: vec![Procedure {
            name: "f".into(),
            is_static: false,
            span: None,
            stmt: cfg.clone(),
            cond: cfg,
            map: Contraction { node: vec![NodeId(0), NodeId(1)], edge: vec![Some(EdgeId(0))] },
            probes: vec![Probe::Node, Probe::Derived],
            locals: vec![],
            unanalysable: None,
            digest: 0,
        }],
        ..Default::default()
    }
}

/// A deterministic xorshift generator (no dependency needed for a benchmark's noise).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// One test's coverage: the 20 functions every test runs (start-up, parsing)
/// fully, plus 30 random functions, each about 70 % covered.
fn coverage(rng: &mut Rng) -> RoaringBitmap {
    let mut bm = RoaringBitmap::new();
    for f in 0..20 {
        bm.insert_range(f * EDGES_PER_FUNCTION..(f + 1) * EDGES_PER_FUNCTION);
    }
    for _ in 0..30 {
        let f = (rng.next() % FUNCTIONS as u64) as u32;
        for e in 0..EDGES_PER_FUNCTION {
            if rng.next() % 10 < 7 {
                bm.insert(f * EDGES_PER_FUNCTION + e);
            }
        }
    }
    bm
}

#[test]
#[ignore = "a benchmark: run it with --ignored --nocapture, in release mode"]
fn tests_on_edge_for_10k_tests_and_50k_edges() {
    let d = tempfile::tempdir().unwrap();
    let dir = Store::dir_for(d.path());
    let mut s = Store::init(&dir).unwrap();
    let u = s.put_unit(&[1; 16], &unit()).unwrap();
    let snap = s.open_snapshot().unwrap();
    let names: Vec<(String, String)> = (0..TESTS).map(|i| (format!("t{i}"), format!("./run {i}"))).collect();
    let ids = s.upsert_tests(&names).unwrap();
    let run = s.begin_run(snap, "full").unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let rows: Vec<MatrixRow> = ids
        .iter()
        .map(|&test| MatrixRow {
            test,
            run,
            state: CoverageState::Known,
            coverage: vec![(u, coverage(&mut rng))],
            recorded: vec![],
            deps: None,
        })
        .collect();
    let covered: u64 = rows.iter().map(|r| r.coverage[0].1.len()).sum();
    let t = Instant::now();
    s.write_matrix(snap, &rows).unwrap();
    let write = t.elapsed();
    let size_matrix = s.file_size();

    let t = Instant::now();
    let cold = s.edge_index(snap, u).unwrap();
    let cold_time = t.elapsed();
    let size_index = s.file_size();
    drop(s);

    let s2_t = Instant::now();
    let mut s2 = Store::open(&dir).unwrap();
    let open_time = s2_t.elapsed();
    let warm = s2.edge_index(snap, u).unwrap();
    let warm_time = s2_t.elapsed();
    // a selection's use: the tests on 1,000 edges (every 50th), united
    let t = Instant::now();
    let mut selected = RoaringBitmap::new();
    for e in (0..FUNCTIONS * EDGES_PER_FUNCTION).step_by(50) {
        if let Some(b) = warm.tests_on_edge(e) {
            selected |= b;
        }
    }
    let lookup_time = t.elapsed();
    assert_eq!(selected.len(), TESTS as u64);

    // the index is exact: every covered (test, edge) pair, and nothing else
    let pairs: u64 = (0..FUNCTIONS * EDGES_PER_FUNCTION).map(|e| warm.tests_on_edge(e).map_or(0, |b| b.len())).sum();
    assert_eq!(pairs, covered);
    for e in [0, 999, 25_000, 49_999] {
        assert_eq!(cold.tests_on_edge(e), warm.tests_on_edge(e));
    }
    let on_edge_0 = warm.tests_on_edge(0).map_or(0, |b| b.len());
    assert_eq!(on_edge_0, TESTS as u64, "every test runs the start-up code");

    println!("tests: {TESTS}, edges: {}, covered (test, edge) pairs: {covered}", FUNCTIONS * EDGES_PER_FUNCTION);
    println!("write matrix and its TestsOnEdge index (one transaction): {:.3} s", write.as_secs_f64());
    println!(
        "database: {:.1} MiB with the matrix and index = {:.0} bytes per test; {:.1} MiB after reading the index",
        size_matrix as f64 / 1048576.0,
        size_matrix as f64 / TESTS as f64,
        size_index as f64 / 1048576.0
    );
    println!("TestsOnEdge, first read after writing: {:.3} s", cold_time.as_secs_f64());
    println!(
        "TestsOnEdge, warm (open the store, read the stored index): {:.3} s (of which opening {:.3} s)",
        warm_time.as_secs_f64(),
        open_time.as_secs_f64()
    );
    println!("union of TestsOnEdge over 1,000 edges: {:.6} s", lookup_time.as_secs_f64());
}

/// The same matrix spread over 100 units of 500 edges each (a unit per source
/// file, as a real project has): write, build every unit's index, then load all
/// 100 stored indexes — what a change touching every file costs — and one.
#[test]
#[ignore = "a benchmark: run it with --ignored --nocapture, in release mode"]
fn tests_on_edge_for_10k_tests_and_50k_edges_in_100_units() {
    const UNITS: u32 = 100;
    let per_unit = FUNCTIONS * EDGES_PER_FUNCTION / UNITS;
    let d = tempfile::tempdir().unwrap();
    let dir = Store::dir_for(d.path());
    let mut s = Store::init(&dir).unwrap();
    let units: Vec<_> = (0..UNITS)
        .map(|i| {
            let mut h = [0u8; 16];
            h[..4].copy_from_slice(&i.to_le_bytes());
            s.put_unit(&h, &unit()).unwrap()
        })
        .collect();
    let snap = s.open_snapshot().unwrap();
    let names: Vec<(String, String)> = (0..TESTS).map(|i| (format!("t{i}"), format!("./run {i}"))).collect();
    let ids = s.upsert_tests(&names).unwrap();
    let run = s.begin_run(snap, "full").unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut covered = 0u64;
    let rows: Vec<MatrixRow> = ids
        .iter()
        .map(|&test| {
            let all = coverage(&mut rng);
            covered += all.len();
            let mut per: Vec<RoaringBitmap> = vec![RoaringBitmap::new(); UNITS as usize];
            for e in all.iter() {
                per[(e / per_unit) as usize].insert(e % per_unit);
            }
            let coverage = units.iter().zip(per).filter(|(_, b)| !b.is_empty()).map(|(&u, b)| (u, b)).collect();
            MatrixRow { test, run, state: CoverageState::Known, coverage, recorded: vec![], deps: None }
        })
        .collect();
    let t = Instant::now();
    s.write_matrix(snap, &rows).unwrap();
    let write = t.elapsed();
    let size_matrix = s.file_size();
    let t = Instant::now();
    for &u in &units {
        s.edge_index(snap, u).unwrap();
    }
    let cold_time = t.elapsed();
    let size_index = s.file_size();
    drop(s);
    let t = Instant::now();
    let mut s2 = Store::open(&dir).unwrap();
    let mut pairs = 0u64;
    for &u in &units {
        let idx = s2.edge_index(snap, u).unwrap();
        pairs += (0..per_unit).map(|e| idx.tests_on_edge(e).map_or(0, |b| b.len())).sum::<u64>();
    }
    let warm_all = t.elapsed();
    assert_eq!(pairs, covered, "the indexes are exact");
    drop(s2);
    let t = Instant::now();
    let mut s3 = Store::open(&dir).unwrap();
    let one = s3.edge_index(snap, units[50]).unwrap();
    let warm_one = t.elapsed();
    assert!(one.tests_on_edge(0).is_some());
    println!("100 units × {per_unit} edges, {TESTS} tests, covered (test, edge) pairs: {covered}");
    println!("write matrix and its TestsOnEdge index (one transaction): {:.3} s", write.as_secs_f64());
    println!(
        "database: {:.1} MiB with the matrix and indexes = {:.0} bytes per test; {:.1} MiB after reading the indexes",
        size_matrix as f64 / 1048576.0,
        size_matrix as f64 / TESTS as f64,
        size_index as f64 / 1048576.0
    );
    println!("TestsOnEdge, first read after writing, all 100 units: {:.3} s", cold_time.as_secs_f64());
    println!("TestsOnEdge, warm, open + all 100 units: {:.3} s", warm_all.as_secs_f64());
    println!("TestsOnEdge, warm, open + one unit: {:.4} s", warm_one.as_secs_f64());
}
