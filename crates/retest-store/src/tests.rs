use std::time::Duration;

use proptest::prelude::*;
use retest_graph::{CfgBuilder, Contraction, EdgeId, EdgeLabel, Node, NodeId, NodeKind, Procedure, Unit};

use super::*;

fn tiny_unit(name: &str) -> Unit {
    let mut b = CfgBuilder::new(name);
    let en = b.add_node(Node::new(NodeKind::Entry, format!("void {name} ( void )")));
    let s = b.add_node(Node::new(NodeKind::Statement, "x ++ ;"));
    let ex = b.add_node(Node::new(NodeKind::Exit, ""));
    b.set_entry(en);
    b.set_exit(ex);
    b.add_edge(en, s, EdgeLabel::Eps);
    b.add_edge(s, ex, EdgeLabel::Eps);
    let cfg = b.build().unwrap();
    Unit {
        procedures: vec![Procedure {
            name: name.into(),
            is_static: false,
            span: None,
            stmt: cfg.clone(),
            cond: cfg,
            map: Contraction {
                node: vec![NodeId(0), NodeId(1), NodeId(2)],
                edge: vec![Some(EdgeId(0)), Some(EdgeId(1))],
            },
            probes: vec![Probe::Node, Probe::Node, Probe::Derived],
            locals: vec![],
            unanalysable: None,
            digest: 0,
        }],
        ..Default::default()
    }
}

fn outcome(status: &str) -> Outcome {
    Outcome {
        status: status.into(),
        code: Some(0),
        stdout_hash: Some([1; 16]),
        stderr_hash: Some([2; 16]),
        duration: Duration::from_millis(12),
    }
}

/// A store on one back end: a SQLite file in a temporary directory, or a
/// database of a throwaway PostgreSQL server.
enum Fixture {
    Sqlite(tempfile::TempDir),
    Postgres { dir: tempfile::TempDir, _server: crate::throwaway::Throwaway, url: String },
}

impl Fixture {
    fn sqlite() -> Fixture {
        Fixture::Sqlite(tempfile::tempdir().unwrap())
    }

    fn postgres() -> Fixture {
        let server = crate::throwaway::Throwaway::start();
        let url = server.new_database();
        Fixture::Postgres { dir: tempfile::tempdir().unwrap(), _server: server, url }
    }

    /// Creates the store.
    fn init(&self) -> Store {
        match self {
            Fixture::Sqlite(d) => Store::init(&Store::dir_for(d.path())).unwrap(),
            Fixture::Postgres { dir: d, url, .. } => Store::open_url(url, &Store::dir_for(d.path()), true).unwrap(),
        }
    }

    /// Opens it again (another connection).
    fn open(&self) -> Store {
        match self {
            Fixture::Sqlite(d) => Store::open(&Store::dir_for(d.path())).unwrap(),
            Fixture::Postgres { dir: d, url, .. } => Store::open_url(url, &Store::dir_for(d.path()), false).unwrap(),
        }
    }
}

/// A test of the store on both back ends: `NAME::sqlite`, `NAME::postgres`.
macro_rules! both {
    ($name:ident) => {
        mod $name {
            #[test]
            fn sqlite() {
                super::$name(&super::Fixture::sqlite());
            }
            #[test]
            fn postgres() {
                super::$name(&super::Fixture::postgres());
            }
        }
    };
}

fn bm(v: &[u32]) -> RoaringBitmap {
    v.iter().copied().collect()
}

#[test]
fn init_refuses_an_existing_store_and_open_finds_it() {
    let d = tempfile::tempdir().unwrap();
    let dir = Store::dir_for(d.path());
    Store::init(&dir).unwrap();
    assert!(matches!(Store::init(&dir), Err(StoreError::Exists { .. })));
    let sub = d.path().join("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    assert_eq!(Store::find(&sub).unwrap(), dir);
    Store::open(&dir).unwrap();
    let other = tempfile::tempdir().unwrap();
    assert!(matches!(Store::find(other.path()), Err(StoreError::NotFound { .. })));
}

#[test]
fn a_newer_schema_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = Store::dir_for(d.path());
    let mut s = Store::init(&dir).unwrap();
    s.set_meta("schema_version", "99").unwrap();
    drop(s);
    match Store::open(&dir) {
        Err(StoreError::TooNew { found: 99, known: schema::VERSION, .. }) => {}
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a newer store must be refused"),
    }
}

both!(units_builds_and_snapshots);
fn units_builds_and_snapshots(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[7; 16], &tiny_unit("f")).unwrap();
    assert_eq!(s.put_unit(&[7; 16], &tiny_unit("f")).unwrap(), u, "stored once per hash");
    assert_eq!(s.unit(u).unwrap().procedures[0].name, "f");
    let plan = vec![vec![Probe::Node, Probe::Node, Probe::Derived]];
    let b = s.put_build(&BuildHash([9; 16]), u, 2, &plan).unwrap();
    let info = s.build_by_hash(&BuildHash([9; 16])).unwrap().unwrap();
    assert_eq!((info.id, info.unit, info.cells, info.plan), (b, u, 2, plan));
    assert!(s.build_by_hash(&BuildHash([0; 16])).unwrap().is_none());

    let s1 = s.open_snapshot().unwrap();
    assert_eq!(s.open_snapshot().unwrap(), s1, "an open snapshot is reused");
    s.record_unit(s1, "a.c", "a.c", u, Some(b), "[]").unwrap();
    s.seal(s1).unwrap();
    let s2 = s.open_snapshot().unwrap();
    assert_ne!(s2, s1);
    assert_eq!(s.snapshot(s2).unwrap().parent, Some(s1));
    let units = s.snapshot_units(s2).unwrap();
    assert_eq!(units.len(), 1, "a new snapshot starts from its parent's units");
    assert_eq!(units[0].key, "a.c");
    assert_eq!(units[0].src_hash, [7; 16]);
    let hashes = s.snapshot_build_hashes(s2).unwrap();
    assert_eq!(hashes.get(&BuildHash([9; 16])), Some(&("a.c".to_string(), u)));
}

both!(results_coverage_and_tests_on_edge);
fn results_coverage_and_tests_on_edge(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    let ids =
        s.upsert_tests(&[("t1".into(), "a".into()), ("t2".into(), "b".into()), ("t3".into(), "c".into())]).unwrap();
    let run = s.begin_run(snap, "full").unwrap();
    assert_eq!(s.latest_run(snap, "full").unwrap(), None, "an unfinished run is not a result");
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: ids[0],
            outcome: outcome("pass"),
            coverage: Ok(vec![(u, bm(&[0, 1]))]),
            recorded: vec![],
            deps: None,
            stopped: false,
        },
    )
    .unwrap();
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: ids[1],
            outcome: outcome("fail"),
            coverage: Ok(vec![(u, bm(&[0]))]),
            recorded: vec![],
            deps: None,
            stopped: true,
        },
    )
    .unwrap();
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: ids[2],
            outcome: outcome("timeout"),
            coverage: Err("timed out".into()),
            recorded: vec![],
            deps: None,
            stopped: false,
        },
    )
    .unwrap();
    s.finish_run(run, None).unwrap();
    assert_eq!(s.latest_run(snap, "full").unwrap(), Some(run));
    assert_eq!(s.latest_run(snap, "audit").unwrap(), None);

    let idx = s.edge_index(snap, u).unwrap();
    assert_eq!(idx.tests_on_edge(0), Some(&bm(&[ids[0].0 as u32, ids[1].0 as u32])));
    assert_eq!(idx.tests_on_edge(1), Some(&bm(&[ids[0].0 as u32])));
    assert_eq!(idx.tests_on_edge(2), None);
    // read back from the stored index
    assert_eq!(s.edge_index(snap, u).unwrap(), idx);

    let m = s.matrix_tests(snap).unwrap();
    assert_eq!(m.len(), 3);
    assert_eq!(m[2].state, CoverageState::Unknown("timed out".into()));
    // whether each coverage claims what code stopped part-way may have run
    assert_eq!(m.iter().map(|t| t.stopped).collect::<Vec<_>>(), [Some(false), Some(true), None]);
    let r = s.run_results(run).unwrap();
    assert_eq!(r[&ids[1]].status, "fail");
    assert_eq!(r[&ids[0]].stdout_hash, Some([1; 16]));

    // re-recording t2 with new coverage invalidates the index
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: ids[1],
            outcome: outcome("pass"),
            coverage: Ok(vec![(u, bm(&[1]))]),
            recorded: vec![],
            deps: None,
            stopped: false,
        },
    )
    .unwrap();
    let idx = s.edge_index(snap, u).unwrap();
    assert_eq!(idx.tests_on_edge(0), Some(&bm(&[ids[0].0 as u32])));
    assert_eq!(idx.tests_on_edge(1), Some(&bm(&[ids[0].0 as u32, ids[1].0 as u32])));
}

both!(tests_that_ran_code_look_at_their_newest_known_coverage);
/// A test ran code "the last time" when its newest row of known coverage, in
/// any matrix, covers something; rows of unknown coverage are passed over.
fn tests_that_ran_code_look_at_their_newest_known_coverage(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let names: Vec<(String, String)> = ["ran", "ran-then-unknown", "ran-then-nothing", "never"]
        .iter()
        .map(|n| (n.to_string(), "x".to_string()))
        .collect();
    let ids = s.upsert_tests(&names).unwrap();
    let rec = |s: &mut Store, run, snap, t: TestId, c: Result<Vec<(UnitId, RoaringBitmap)>, String>| {
        let r =
            TestRecord { test: t, outcome: outcome("pass"), coverage: c, recorded: vec![], deps: None, stopped: false };
        s.record_result(run, Some(snap), &r).unwrap();
    };
    let s1 = s.open_snapshot().unwrap();
    let run = s.begin_run(s1, "full").unwrap();
    for &t in &ids[..3] {
        rec(&mut s, run, s1, t, Ok(vec![(u, bm(&[0]))]));
    }
    rec(&mut s, run, s1, ids[3], Ok(vec![]));
    s.finish_run(run, Some(s1)).unwrap();
    s.seal(s1).unwrap();
    let s2 = s.open_snapshot().unwrap();
    let run = s.begin_run(s2, "full").unwrap();
    rec(&mut s, run, s2, ids[0], Ok(vec![(u, bm(&[1]))]));
    rec(&mut s, run, s2, ids[1], Err("timed out".into()));
    rec(&mut s, run, s2, ids[2], Ok(vec![]));
    rec(&mut s, run, s2, ids[3], Ok(vec![]));
    s.finish_run(run, Some(s2)).unwrap();
    assert_eq!(s.tests_that_ran_code().unwrap(), std::collections::HashSet::from([ids[0], ids[1]]));
}

both!(a_failed_write_leaves_nothing_half_written);
fn a_failed_write_leaves_nothing_half_written(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    let ids = s.upsert_tests(&[("t1".into(), "a".into())]).unwrap();
    let run = s.begin_run(snap, "full").unwrap();
    // a coverage row for a unit that does not exist violates nothing in SQL terms,
    // so provoke a failure inside the transaction instead: a result for an
    // unknown test id breaks the foreign key after the results row was inserted
    let bad = TestRecord {
        test: TestId(999),
        outcome: outcome("pass"),
        coverage: Ok(vec![(u, bm(&[0]))]),
        recorded: vec![],
        deps: None,
        stopped: false,
    };
    assert!(s.record_result(run, Some(snap), &bad).is_err());
    assert!(s.run_results(run).unwrap().is_empty());
    assert!(s.matrix_tests(snap).unwrap().is_empty());
    let good = TestRecord {
        test: ids[0],
        outcome: outcome("pass"),
        coverage: Ok(vec![(u, bm(&[0]))]),
        recorded: vec![],
        deps: None,
        stopped: false,
    };
    s.record_result(run, Some(snap), &good).unwrap();
    assert_eq!(s.matrix_tests(snap).unwrap().len(), 1);
}

both!(concurrent_writers_do_not_lose_units);
fn concurrent_writers_do_not_lose_units(f: &Fixture) {
    drop(f.init());
    let snaps: Vec<SnapshotId> = std::thread::scope(|sc| {
        let threads: Vec<_> = (0..8u8)
            .map(|i| {
                sc.spawn(move || {
                    let mut s = f.open();
                    let snap = s.open_snapshot().unwrap();
                    let u = s.put_unit(&[i; 16], &tiny_unit(&format!("f{i}"))).unwrap();
                    s.record_unit(snap, &format!("f{i}.c"), "x", u, None, "[]").unwrap();
                    snap
                })
            })
            .collect();
        threads.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(snaps.windows(2).all(|w| w[0] == w[1]), "all writers join one open snapshot");
    let s = f.open();
    assert_eq!(s.snapshot_units(snaps[0]).unwrap().len(), 8);
}

proptest! {
    #[test]
    fn edge_index_round_trips(edges in proptest::collection::btree_map(0u32..10_000, proptest::collection::btree_set(0u32..5000, 1..20), 0..50)) {
        let idx = EdgeIndex { edges: edges.into_iter().map(|(e, t)| (e, t.into_iter().collect())).collect() };
        let back = blob::decode_index(&blob::encode_index(&idx)).unwrap();
        prop_assert_eq!(back, idx);
    }

    #[test]
    fn truncated_index_blobs_are_errors(cut in 0usize..40) {
        let idx = EdgeIndex { edges: [(3u32, bm(&[1, 2, 3])), (9, bm(&[7]))].into_iter().collect() };
        let b = blob::encode_index(&idx);
        if cut < b.len() {
            prop_assert!(blob::decode_index(&b[..cut]).is_err());
        }
    }
}

/// A unit that uses every variant and optional field the unit encoding knows.
fn rich_unit() -> Unit {
    use retest_graph::{DeclKind, Declaration, Problem, SourceFile, Span};
    let span = |line| Some(Span { file: 1, line, col: 3, end_line: line + 300 });
    let decl = |kind, name: &str, mentions: &[&str]| Declaration {
        kind,
        names: vec![name.to_string(), format!("{name}_2")],
        text: format!("int {name} [ N ] ;"),
        mentions: mentions.iter().map(|m| m.to_string()).collect(),
        span: span(7),
    };
    let mut b = CfgBuilder::new("big");
    let en = b.add_node(Node::new(NodeKind::Entry, "int big ( int x )").with_span(span(1).unwrap()));
    let mut dn = Node::new(NodeKind::Declaration, "int y ;");
    dn.decls = vec![decl(DeclKind::Variable, "y", &["N"])];
    let dn = b.add_node(dn);
    let sw = b.add_node(Node::new(NodeKind::Switch, "switch ( x )"));
    let mut call = Node::new(NodeKind::Call, "f ( x ) ; ( * p ) ( ) ;");
    call.calls = vec!["f".into()];
    call.refs = vec!["f".into(), "x".into(), "p".into()];
    call.indirect_call = true;
    let call = b.add_node(call);
    let pr = b.add_node(Node::new(NodeKind::Predicate, "x > 0 é ✓"));
    let st = b.add_node(Node::new(NodeKind::Statement, "goto * t ;"));
    let ex = b.add_node(Node::new(NodeKind::Exit, ""));
    b.set_entry(en);
    b.set_exit(ex);
    b.add_edge(en, dn, EdgeLabel::Eps);
    b.add_edge(dn, sw, EdgeLabel::Eps);
    b.add_edge(sw, call, EdgeLabel::Case("1 ... 5".into()));
    b.add_edge(sw, pr, EdgeLabel::Case("'a'".into()));
    b.add_edge(sw, ex, EdgeLabel::Default);
    b.add_edge(call, pr, EdgeLabel::Eps);
    b.add_edge(pr, st, EdgeLabel::True);
    b.add_edge(pr, ex, EdgeLabel::False);
    b.add_edge(st, call, EdgeLabel::Goto("L1".into()));
    b.add_edge(st, ex, EdgeLabel::Goto("L2".into()));
    let cond = b.build().unwrap();
    let n = cond.node_count() as u32;
    let e = cond.edge_count() as u32;
    let problem = |m: &str| Problem { span: span(2), message: m.to_string() };
    let mut u = tiny_unit("small");
    u.procedures[0].unanalysable = Some("asm goto".into());
    u.procedures[0].is_static = true;
    u.procedures.push(Procedure {
        name: "big".into(),
        is_static: false,
        span: span(1),
        stmt: cond.clone(),
        cond,
        map: Contraction {
            node: (0..n).map(NodeId).collect(),
            edge: (0..e).map(|i| (i % 3 != 1).then_some(EdgeId(i * 1000))).collect(),
        },
        probes: [
            Probe::Derived,
            Probe::Off,
            Probe::Node,
            Probe::PerEdge,
            Probe::Ahead,
            Probe::Edges(0b101),
            Probe::Edges(u32::MAX),
            Probe::Paired { mask: 0b10, via: 0b101 },
            Probe::Entered,
        ]
        .into_iter()
        .cycle()
        .take(n as usize)
        .collect(),
        locals: vec![decl(DeclKind::Variable, "y", &[])],
        unanalysable: None,
        digest: u64::MAX - 5,
    });
    u.files = vec![
        SourceFile { path: "<built-in>".into(), system: true },
        SourceFile { path: "src/big.c".into(), system: false },
    ];
    // system headers' declarations (sealed) in runs among the project's
    let sealed = |name: &str, digest: &str| Declaration {
        text: format!("#{digest}"),
        span: Some(Span { file: 0, line: 2, col: 1, end_line: 2 }),
        ..decl(DeclKind::Function, name, &["size_t"])
    };
    u.decls = vec![
        sealed("malloc", "00000000000000ff"),
        decl(DeclKind::Variable, "v", &["T"]),
        decl(DeclKind::Function, "f", &[]),
        sealed("free", "0123456789abcdef"),
        sealed("abort", "fedcba9876543210"),
        decl(DeclKind::Type, "T", &["S"]),
        decl(DeclKind::Tag, "S", &[]),
        Declaration { span: None, ..decl(DeclKind::Enumerator, "E", &[]) },
        decl(DeclKind::Other, "_", &[]),
        Declaration { span: None, ..sealed("exit", "aaaaaaaaaaaaaaaa") },
    ];
    u.address_taken = vec!["f".into()];
    u.noreturn = vec!["abort".into(), "exit".into()];
    u.problems = vec![problem("a problem"), Problem { span: None, message: String::new() }];
    u.unattributed_error = Some(problem("syntax error"));
    u.entry_points = vec!["main".into(), "WinMain".into()];
    u.returns_twice = vec!["setjmp".into()];
    let method = |name: &str, kind: retest_graph::MethodKind, max_args: Option<u32>| retest_graph::Method {
        name: name.into(),
        key: format!("ns::C::{name}(int)"),
        kind,
        is_virtual: kind == retest_graph::MethodKind::Ordinary,
        public: max_args.is_some(),
        min_args: 1,
        max_args,
    };
    u.classes = vec![retest_graph::Class {
        name: "ns::C".into(),
        bases: vec!["B".into(), "D".into()],
        methods: vec![
            method("go", retest_graph::MethodKind::Ordinary, Some(2)),
            method("C", retest_graph::MethodKind::Constructor, None),
            method("~C", retest_graph::MethodKind::Destructor, Some(0)),
            method("operator()", retest_graph::MethodKind::Operator, Some(300)),
        ],
        span: span(4),
    }];
    let calls = |p: &mut Procedure| {
        let g = p.cond.clone();
        let mut b = CfgBuilder::new(g.name());
        for (i, (_, n)) in g.nodes().enumerate() {
            let mut n = n.clone();
            if n.kind == NodeKind::Call {
                use retest_graph::cfg::{Dispatch, Receiver};
                n.dispatch = vec![
                    Dispatch { name: "go".into(), receiver: Receiver::Object("C".into()), args: 1 },
                    Dispatch { name: "f".into(), receiver: Receiver::Qualified("ns::C".into()), args: 0 },
                    Dispatch { name: "h".into(), receiver: Receiver::Unknown, args: 200 + i as u32 },
                ];
            }
            b.add_node(n);
        }
        b.set_entry(g.entry());
        b.set_exit(g.exit());
        for (_, e) in g.edges() {
            b.add_edge(e.src, e.dst, e.label.clone());
        }
        p.cond = b.build().unwrap();
    };
    calls(&mut u.procedures[1]);
    u
}

#[test]
fn unit_blobs_round_trip_and_reject_garbage() {
    for u in [tiny_unit("g"), rich_unit(), Unit::default()] {
        assert_eq!(blob::decode_unit(&blob::encode_unit(&u)).unwrap(), u);
        // JSON blobs predate the language facts: they read with those of their time
        let mut then = u.clone();
        crate::unitbin::legacy_facts(&mut then);
        assert_eq!(blob::decode_unit(&blob::encode_unit_json(&u)).unwrap(), then);
    }
    assert!(blob::decode_unit(&[]).is_err());
    assert!(blob::decode_unit(&[9, 1, 2]).is_err());
    assert!(blob::decode_unit(&[1, 1, 2, 3]).is_err());
    assert!(blob::decode_unit(&[2, 1, 2, 3]).is_err());
}

/// A unit of encoding 2, written before units carried their language facts,
/// reads with the facts its front end assumed (`main`, the `setjmp` family);
/// one of encoding 3 reads with its own, which may be empty, and no classes
/// or member calls; one of encoding 4 with all it holds.
#[test]
fn units_of_the_encoding_without_facts_read_with_the_facts_of_their_time() {
    let mut u = rich_unit();
    u.entry_points.clear();
    u.returns_twice.clear();
    let blob_of = |tag: u8, version| {
        let mut b = vec![tag];
        b.extend(lz4_flex::compress_prepend_size(&unitbin::encode_as(&u, version)));
        b
    };
    let three = blob::decode_unit(&blob_of(3, unitbin::Version::Facts)).unwrap();
    assert!(three.classes.is_empty());
    assert!(three.procedures.iter().all(|p| p.cond.nodes().all(|(_, n)| n.dispatch.is_empty())));
    assert_eq!(three.decls, u.decls);
    let mut rich = rich_unit();
    rich.entry_points.clear();
    rich.returns_twice.clear();
    assert_eq!(blob::decode_unit(&blob_of(4, unitbin::Version::Classes)).unwrap(), rich);
    assert!(!rich.classes.is_empty());
    let old = blob_of(2, unitbin::Version::NoFacts);
    let mut u = u.clone();
    for p in &mut u.procedures {
        let mut three = three.procedures.iter().find(|q| q.name == p.name).unwrap().clone();
        three.digest = p.digest;
        *p = three;
    }
    let back = blob::decode_unit(&old).unwrap();
    assert_eq!(back.entry_points, ["main"]);
    assert!(back.returns_twice.iter().any(|f| f == "setjmp") && back.returns_twice.iter().any(|f| f == "vfork"));
    assert_eq!((back.procedures, back.decls), (u.procedures.clone(), u.decls.clone()));
    let now = blob::decode_unit(&blob::encode_unit(&u)).unwrap();
    assert!(now.entry_points.is_empty() && now.returns_twice.is_empty());
}

/// Every cut, and every single-byte change, of a binary unit either fails to
/// decode or decodes to a unit: it never panics, and a cut never decodes.
#[test]
fn damaged_binary_units_are_errors_not_panics() {
    for (raw, version) in [
        (unitbin::encode(&rich_unit()), unitbin::Version::Apart),
        (unitbin::encode_as(&rich_unit(), unitbin::Version::Sealed), unitbin::Version::Sealed),
        (unitbin::encode_as(&rich_unit(), unitbin::Version::Lazy), unitbin::Version::Lazy),
        (unitbin::encode_as(&rich_unit(), unitbin::Version::Classes), unitbin::Version::Classes),
    ] {
        for cut in 0..raw.len() {
            assert!(
                unitbin::decode(&raw[..cut], version).is_err(),
                "a unit of {version:?} cut at {cut} of {} decoded",
                raw.len()
            );
        }
        let mut extra = raw.clone();
        extra.push(0);
        assert!(unitbin::decode(&extra, version).is_err());
        for i in 0..raw.len() {
            for b in [0u8, 1, 0x7f, 0x80, 0xff] {
                let mut bad = raw.clone();
                bad[i] = b;
                let _ = unitbin::decode(&bad, version);
                if version >= unitbin::Version::Lazy
                    && let Ok((shell, bodies)) = unitbin::decode_shell(&bad, version)
                {
                    use retest_graph::summary::Bodies;
                    for p in 0..shell.procedures.len() {
                        let _ = bodies.body(p);
                    }
                    let _ = (bodies.own_decls(), bodies.all_decls());
                }
            }
        }
    }
}

/// A store at schema version 2 holds its units as JSON: it opens, is upgraded,
/// and its units read back the same, now in the binary encoding.
#[test]
fn a_version_2_store_with_json_units_is_upgraded() {
    let d = tempfile::tempdir().unwrap();
    let dir = Store::dir_for(d.path());
    std::fs::create_dir_all(&dir).unwrap();
    let units = [tiny_unit("f"), rich_unit()];
    {
        let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
        conn.execute_batch(schema::V1).unwrap();
        conn.execute_batch(schema::V2).unwrap();
        conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '2')", []).unwrap();
        for (i, u) in units.iter().enumerate() {
            conn.execute(
                "INSERT INTO units(src_hash, edges, data) VALUES (?1, ?2, ?3)",
                rusqlite::params![vec![i as u8; 16], u.edge_count(), blob::encode_unit_json(u)],
            )
            .unwrap();
        }
        // a damaged blob stays as it is and does not stop the upgrade
        conn.execute(
            "INSERT INTO units(src_hash, edges, data) VALUES (?1, 0, ?2)",
            rusqlite::params![vec![9u8; 16], vec![1u8, 7]],
        )
        .unwrap();
    }
    let s = Store::open(&dir).unwrap();
    assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some(schema::VERSION.to_string().as_str()));
    for (i, u) in units.iter().enumerate() {
        let id = s.unit_by_hash(&[i as u8; 16]).unwrap().unwrap();
        let mut then = u.clone();
        crate::unitbin::legacy_facts(&mut then);
        assert_eq!(*s.unit(id).unwrap(), then, "upgraded with the facts of its time");
        let data: Vec<u8> =
            s.conn.row("SELECT data FROM units WHERE id = ?1", db::p![id.0], |r| r.get(0)).unwrap().unwrap();
        assert!(blob::unit_is_current(&data));
    }
    let bad = s.unit_by_hash(&[9; 16]).unwrap().unwrap();
    assert!(matches!(s.unit(bad), Err(StoreError::Corrupt { .. })));
    drop(s);
    // opening again changes nothing
    let s = Store::open(&dir).unwrap();
    assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some(schema::VERSION.to_string().as_str()));
}

/// A store at schema version 3 gains the results' `stopped` column; what it
/// recorded before says "not known".
#[test]
fn a_version_3_store_is_upgraded_and_its_results_do_not_know_whether_they_stopped() {
    let d = tempfile::tempdir().unwrap();
    let dir = Store::dir_for(d.path());
    let (snap, ids) = {
        let mut s = Store::init(&dir).unwrap();
        let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
        let snap = s.open_snapshot().unwrap();
        let ids = s.upsert_tests(&[("t1".into(), "a".into())]).unwrap();
        let run = s.begin_run(snap, "full").unwrap();
        let rec = TestRecord {
            test: ids[0],
            outcome: outcome("pass"),
            coverage: Ok(vec![(u, bm(&[0]))]),
            recorded: vec![],
            deps: None,
            stopped: false,
        };
        s.record_result(run, Some(snap), &rec).unwrap();
        s.finish_run(run, Some(snap)).unwrap();
        (snap, ids)
    };
    {
        // back to version 3, as a retest before version 4 left it
        let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
        conn.execute_batch(
            "ALTER TABLE results DROP COLUMN stopped; UPDATE meta SET value = '3' WHERE key = 'schema_version';",
        )
        .unwrap();
    }
    let s = Store::open(&dir).unwrap();
    assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some(schema::VERSION.to_string().as_str()));
    let m = s.matrix_tests(snap).unwrap();
    assert_eq!((m[0].test, m[0].stopped), (ids[0], None));
}

fn recorded(mcdc: &[u32], frames: &[u32], ids: &[(u32, &[u64])]) -> Recorded {
    Recorded {
        mcdc: bm(mcdc),
        paths: bm(&[1, 4096, 70000]),
        frames: bm(frames),
        ids: ids.iter().map(|(k, v)| (*k, v.to_vec())).collect(),
        counts: Default::default(),
    }
}

both!(execution_counts_are_kept_with_the_recording);
/// A test's execution counts (`--counts`) are stored with its recording and
/// read back as written, in both back ends.
fn execution_counts_are_kept_with_the_recording(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    let ids = s.upsert_tests(&[("t1".into(), "a".into())]).unwrap();
    let run = s.begin_run(snap, "full").unwrap();
    let r = Recorded { counts: [(0, 1), (1, 1 << 40), (7, u64::MAX)].into_iter().collect(), ..Default::default() };
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: ids[0],
            outcome: outcome("pass"),
            coverage: Ok(vec![(u, bm(&[0, 1]))]),
            recorded: vec![(u, r.clone())],
            deps: None,
            stopped: false,
        },
    )
    .unwrap();
    assert_eq!(s.test_recorded(snap, ids[0]).unwrap(), vec![(u, r.clone())]);
    assert_eq!(s.unit_recorded(snap, u).unwrap(), vec![(ids[0], r)]);
}

both!(a_version_7_store_opens_with_its_recordings);
/// A store of version 7 opens at the current version (the steps run on both
/// back ends) and reads its recordings, which have no counts, as they were.
fn a_version_7_store_opens_with_its_recordings(f: &Fixture) {
    let r1 = recorded(&[0, 2], &[], &[(0x8000_0001, &[5, 1 << 40])]);
    let (snap, u, t) = {
        let mut s = f.init();
        let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
        let snap = s.open_snapshot().unwrap();
        let ids = s.upsert_tests(&[("t1".into(), "a".into())]).unwrap();
        let run = s.begin_run(snap, "full").unwrap();
        s.record_result(
            run,
            Some(snap),
            &TestRecord {
                test: ids[0],
                outcome: outcome("pass"),
                coverage: Ok(vec![(u, bm(&[0]))]),
                recorded: vec![(u, r1.clone())],
                deps: None,
                stopped: false,
            },
        )
        .unwrap();
        s.set_meta("schema_version", "7").unwrap();
        (snap, u, ids[0])
    };
    let s = f.open();
    assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some(schema::VERSION.to_string().as_str()));
    assert_eq!(s.test_recorded(snap, t).unwrap(), vec![(u, r1)]);
}

both!(recordings_follow_the_matrix);
/// Recordings beyond edges follow the matrix: recorded with a result, replaced
/// by a rerun, copied, rewritten and dropped with it.
fn recordings_follow_the_matrix(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    let ids = s.upsert_tests(&[("t1".into(), "a".into()), ("t2".into(), "b".into())]).unwrap();
    let run = s.begin_run(snap, "full").unwrap();
    let r1 = recorded(&[0, 2], &[], &[(0x8000_0001, &[5, 1 << 40])]);
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: ids[0],
            outcome: outcome("pass"),
            coverage: Ok(vec![(u, bm(&[0]))]),
            recorded: vec![(u, r1.clone())],
            deps: None,
            stopped: false,
        },
    )
    .unwrap();
    // unknown coverage: nothing beyond edges is kept either
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: ids[1],
            outcome: outcome("timeout"),
            coverage: Err("timed out".into()),
            recorded: vec![(u, recorded(&[1], &[0], &[]))],
            deps: None,
            stopped: false,
        },
    )
    .unwrap();
    assert_eq!(s.unit_recorded(snap, u).unwrap(), vec![(ids[0], r1.clone())]);
    assert_eq!(s.test_recorded(snap, ids[0]).unwrap(), vec![(u, r1.clone())]);
    assert!(s.test_recorded(snap, ids[1]).unwrap().is_empty());
    // a rerun replaces the test's recordings
    let r2 = recorded(&[3], &[0], &[]);
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: ids[0],
            outcome: outcome("pass"),
            coverage: Ok(vec![(u, bm(&[1]))]),
            recorded: vec![(u, r2.clone())],
            deps: None,
            stopped: false,
        },
    )
    .unwrap();
    assert_eq!(s.test_recorded(snap, ids[0]).unwrap(), vec![(u, r2.clone())]);
    s.seal(snap).unwrap();
    let next = s.open_snapshot().unwrap();
    s.copy_matrix(snap, next).unwrap();
    assert_eq!(s.unit_recorded(next, u).unwrap(), vec![(ids[0], r2.clone())]);
    let rows = vec![MatrixRow {
        test: ids[1],
        run,
        state: CoverageState::Known,
        coverage: vec![(u, bm(&[0]))],
        recorded: vec![(u, r1.clone())],
        deps: None,
    }];
    s.advance_baseline(next, &rows).unwrap();
    assert_eq!(s.unit_recorded(next, u).unwrap(), vec![(ids[1], r1)]);
    assert_eq!(s.unit_recorded(snap, u).unwrap(), vec![(ids[0], r2)], "the old matrix is untouched");
}

proptest! {
    #[test]
    fn recorded_blobs_round_trip(
        mcdc in proptest::collection::vec(any::<u32>(), 0..50),
        frames in proptest::collection::vec(0u32..100, 0..5),
        ids in proptest::collection::btree_map(any::<u32>(), proptest::collection::vec(any::<u64>(), 0..20), 0..4),
        counts in proptest::collection::btree_map(any::<u32>(), 1..=u64::MAX, 0..30),
    ) {
        let without = counts.is_empty();
        let r = Recorded { mcdc: mcdc.iter().copied().collect(), paths: bm(&[]), frames: frames.iter().copied().collect(), ids, counts };
        let b = blob::encode_recorded(&r);
        // a recording without counts is written as before counts existed (tag 1)
        prop_assert_eq!(b[0] == 1, without);
        prop_assert_eq!(blob::decode_recorded(&b).unwrap(), r);
        for cut in 0..b.len() {
            prop_assert!(blob::decode_recorded(&b[..cut]).is_err());
        }
    }
}

fn stored_index_units(s: &Store, snap: SnapshotId) -> Vec<i64> {
    s.conn.rows("SELECT unit FROM edge_index WHERE snapshot = ?1 ORDER BY unit", db::p![snap.0], |r| r.get(0)).unwrap()
}

both!(finishing_a_run_stores_the_edge_index);
/// Finishing a run into a matrix stores the index of every unit of the matrix
/// (covered or not); a run that never finished leaves the index of what it
/// recorded missing, and reading it builds the same index.
fn finishing_a_run_stores_the_edge_index(f: &Fixture) {
    let mut s = f.init();
    let u1 = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let u2 = s.put_unit(&[2; 16], &tiny_unit("g")).unwrap();
    let snap = s.open_snapshot().unwrap();
    s.record_unit(snap, "f.c", "f.c", u1, None, "[]").unwrap();
    s.record_unit(snap, "g.c", "g.c", u2, None, "[]").unwrap();
    let ids = s.upsert_tests(&[("t1".into(), "a".into()), ("t2".into(), "b".into())]).unwrap();
    let record = |s: &mut Store, run, t: TestId, edges: &[u32]| {
        s.record_result(
            run,
            Some(snap),
            &TestRecord {
                test: t,
                outcome: outcome("pass"),
                coverage: Ok(vec![(u1, bm(edges))]),
                recorded: vec![],
                deps: None,
                stopped: false,
            },
        )
        .unwrap()
    };
    let run = s.begin_run(snap, "full").unwrap();
    record(&mut s, run, ids[0], &[0, 1]);
    record(&mut s, run, ids[1], &[1]);
    assert!(stored_index_units(&s, snap).is_empty());
    s.finish_run(run, Some(snap)).unwrap();
    assert_eq!(stored_index_units(&s, snap), vec![u1.0, u2.0]);
    let (t1, t2) = (ids[0].0 as u32, ids[1].0 as u32);
    let idx = s.edge_index(snap, u1).unwrap();
    assert_eq!(idx.tests_on_edge(0), Some(&bm(&[t1])));
    assert_eq!(idx.tests_on_edge(1), Some(&bm(&[t1, t2])));
    assert_eq!(s.edge_index(snap, u2).unwrap(), EdgeIndex::default());

    // a second run is killed after recording t2 anew: u1's index is gone, u2's stays
    let run2 = s.begin_run(snap, "full").unwrap();
    record(&mut s, run2, ids[1], &[0]);
    assert_eq!(stored_index_units(&s, snap), vec![u2.0]);
    let idx = s.edge_index(snap, u1).unwrap();
    assert_eq!(idx.tests_on_edge(0), Some(&bm(&[t1, t2])));
    assert_eq!(idx.tests_on_edge(1), Some(&bm(&[t1])));
    assert_eq!(stored_index_units(&s, snap), vec![u1.0, u2.0]);

    // a whole matrix written at once comes with its index
    s.seal(snap).unwrap();
    let next = s.open_snapshot().unwrap();
    assert_ne!(next, snap);
    let row = |t: TestId, edges: &[u32]| MatrixRow {
        test: t,
        run,
        state: CoverageState::Known,
        coverage: vec![(u1, bm(edges))],
        recorded: vec![],
        deps: None,
    };
    s.write_matrix(next, &[row(ids[0], &[1]), row(ids[1], &[0, 1])]).unwrap();
    assert_eq!(stored_index_units(&s, next), vec![u1.0, u2.0]);
    assert_eq!(s.edge_index(next, u1).unwrap().tests_on_edge(1), Some(&bm(&[t1, t2])));
}

both!(a_block_of_the_edge_index_is_read_alone);
/// The index is stored in blocks of `EDGE_BLOCK` edges, and the block that
/// holds an edge is read without the others: with every other block
/// damaged, it still reads, and reads what the whole index holds there
/// (while reading the whole index reports the damage).
fn a_block_of_the_edge_index_is_read_alone(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    s.record_unit(snap, "f.c", "f.c", u, None, "[]").unwrap();
    let ids = s.upsert_tests(&[("t1".into(), "a".into()), ("t2".into(), "b".into())]).unwrap();
    let run = s.begin_run(snap, "full").unwrap();
    let b = EDGE_BLOCK;
    let row = |t: TestId, edges: &[u32]| MatrixRow {
        test: t,
        run,
        state: CoverageState::Known,
        coverage: vec![(u, bm(edges))],
        recorded: vec![],
        deps: None,
    };
    s.write_matrix(snap, &[row(ids[0], &[0, b + 3, 2 * b + 1]), row(ids[1], &[b + 3, 2 * b - 1])]).unwrap();
    let (t1, t2) = (ids[0].0 as u32, ids[1].0 as u32);
    let whole = s.edge_index(snap, u).unwrap();
    assert_eq!(whole.edges.len(), 4);
    let blocks: Vec<i64> = s
        .conn
        .rows(
            "SELECT block FROM edge_blocks WHERE snapshot = ?1 AND unit = ?2 ORDER BY block",
            db::p![snap.0, u.0],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(blocks, [0, 1, 2], "one row per block that holds a traversed edge");
    s.conn
        .exec("UPDATE edge_blocks SET data = ?1 WHERE snapshot = ?2 AND block <> 1", db::p![vec![7u8], snap.0])
        .unwrap();
    let (range, part) = s.edge_index_block(snap, u, b + 3).unwrap();
    assert_eq!(range, b..2 * b);
    assert_eq!(part.tests_on_edge(b + 3), Some(&bm(&[t1, t2])));
    assert_eq!(part.tests_on_edge(2 * b - 1), Some(&bm(&[t2])));
    assert_eq!(part.edges.len(), 2, "only the block's edges");
    for e in range {
        assert_eq!(part.tests_on_edge(e), whole.tests_on_edge(e));
    }
    assert!(matches!(s.edge_index(snap, u), Err(StoreError::Corrupt { .. })));
    assert!(matches!(s.edge_index_block(snap, u, 0), Err(StoreError::Corrupt { .. })));
}

/// A store of version 6 (a unit's index in one blob) opens migrated: the
/// old index is dropped, and the index read is built anew, in blocks, from
/// the coverage.
#[test]
fn a_version_6_store_opens_with_its_index_rebuilt_in_blocks() {
    let d = tempfile::tempdir().unwrap();
    let dir = Store::dir_for(d.path());
    let (snap, u, t) = {
        let mut s = Store::init(&dir).unwrap();
        let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
        let snap = s.open_snapshot().unwrap();
        s.record_unit(snap, "f.c", "f.c", u, None, "[]").unwrap();
        let ids = s.upsert_tests(&[("t1".into(), "a".into())]).unwrap();
        let run = s.begin_run(snap, "full").unwrap();
        let row = MatrixRow {
            test: ids[0],
            run,
            state: CoverageState::Known,
            coverage: vec![(u, bm(&[1, 300]))],
            recorded: vec![],
            deps: None,
        };
        s.write_matrix(snap, &[row]).unwrap();
        // back to version 6: one blob per unit, which said edge 1 had no test
        let old = blob::encode_index(&EdgeIndex { edges: [(0u32, bm(&[ids[0].0 as u32]))].into_iter().collect() });
        s.sqlite()
            .execute_batch("DROP TABLE edge_blocks; UPDATE meta SET value = '6' WHERE key = 'schema_version';")
            .unwrap();
        s.sqlite().execute("UPDATE edge_index SET data = ?1", [old]).unwrap();
        (snap, u, ids[0].0 as u32)
    };
    let mut s = Store::open(&dir).unwrap();
    assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some(schema::VERSION.to_string().as_str()));
    assert!(stored_index_units(&s, snap).is_empty(), "the old index is dropped");
    let idx = s.edge_index(snap, u).unwrap();
    assert_eq!(idx.edges, [(1u32, bm(&[t])), (300, bm(&[t]))].into_iter().collect());
    assert_eq!(stored_index_units(&s, snap), [u.0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// The stored index is the exact transposition of the coverage, built when
    /// a run finishes or when read, for dense and for sparse test ids.
    #[test]
    fn the_edge_index_is_the_transposed_coverage(
        tests in proptest::collection::btree_map(
            prop_oneof![1i64..200, 1i64..2_000_000],
            proptest::collection::btree_set(0u32..300, 0..60),
            1..25,
        )
    ) {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::init(&Store::dir_for(d.path())).unwrap();
        let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
        let snap = s.open_snapshot().unwrap();
        s.record_unit(snap, "f.c", "f.c", u, None, "[]").unwrap();
        for id in tests.keys() {
            s.conn.exec("INSERT INTO tests(id, name, cmd) VALUES (?1, ?2, 'true')", db::p![id, format!("t{id}")]).unwrap();
        }
        let run = s.begin_run(snap, "full").unwrap();
        for (id, edges) in &tests {
            let cov = edges.iter().copied().collect::<RoaringBitmap>();
            s.record_result(run, Some(snap), &TestRecord { test: TestId(*id), outcome: outcome("pass"), coverage: Ok(vec![(u, cov)]), recorded: vec![], deps: None, stopped: false }).unwrap();
        }
        let mut expected: HashMap<u32, RoaringBitmap> = HashMap::new();
        for (id, edges) in &tests {
            for e in edges {
                expected.entry(*e).or_default().insert(*id as u32);
            }
        }
        s.finish_run(run, Some(snap)).unwrap();
        prop_assert_eq!(&s.edge_index(snap, u).unwrap().edges, &expected);
        s.conn.exec("DELETE FROM edge_index", db::p![]).unwrap();
        prop_assert_eq!(&s.edge_index(snap, u).unwrap().edges, &expected);
    }
}

fn dep(path: &str, kind: u8, h: u8) -> DepState {
    DepState { path: path.into(), kind, hash: [h; 16], stamp: Some(vec![h; 32]) }
}

both!(dependencies_follow_the_matrix);
/// File states are stored once: the same (path, kind, hash) gets the same id
/// whatever its stamp (the newer stamp is kept); each matrix row carries its
/// test's definition and state ids through `record_result`, `write_matrix`
/// and `copy_matrix`, and a row without them reads as not recorded.
fn dependencies_follow_the_matrix(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    let ids = s.dep_state_ids(&[dep("a.txt", 0, 1), dep("/usr/bin/cat", 0, 2), dep("b.txt", 1, 0)]).unwrap();
    let mut touched = dep("a.txt", 0, 1);
    touched.stamp = Some(vec![7; 32]);
    let again = s.dep_state_ids(&[touched.clone(), dep("a.txt", 0, 3)]).unwrap();
    assert_eq!(again[0], ids[0]);
    assert_ne!(again[1], ids[0], "another content is another state");
    let stored = s.dep_states(&ids.iter().copied().collect()).unwrap();
    assert_eq!(stored[&ids[0]], touched);
    assert_eq!(stored[&ids[2]], dep("b.txt", 1, 0));
    assert_eq!(stored.len(), 3);

    let tests = s
        .upsert_tests_named(&[
            TestName { key: "./prog a".into(), name: "t1".into(), cmd: "./prog a".into() },
            TestName { key: "named".into(), name: "named".into(), cmd: "true".into() },
        ])
        .unwrap();
    let deps = TestDeps { definition: "{\"cmd\":\"./prog a\"}".into(), states: bm(&ids), unknown: None };
    let run = s.begin_run(snap, "full").unwrap();
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: tests[0],
            outcome: outcome("pass"),
            coverage: Ok(vec![(u, bm(&[0]))]),
            recorded: vec![],
            deps: Some(deps.clone()),
            stopped: false,
        },
    )
    .unwrap();
    let unknown = TestDeps { definition: "{}".into(), states: RoaringBitmap::new(), unknown: Some("static".into()) };
    s.record_result(
        run,
        Some(snap),
        &TestRecord {
            test: tests[1],
            outcome: outcome("pass"),
            coverage: Ok(vec![]),
            recorded: vec![],
            deps: Some(unknown.clone()),
            stopped: false,
        },
    )
    .unwrap();
    s.finish_run(run, Some(snap)).unwrap();
    let m = s.matrix_deps(snap).unwrap();
    assert_eq!(m[&tests[0]], deps);
    assert_eq!(m[&tests[1]], unknown);
    let rows = s.matrix_tests(snap).unwrap();
    assert_eq!((rows[0].key.as_str(), rows[0].name.as_str()), ("./prog a", "t1"));
    assert_eq!((rows[1].key.as_str(), rows[1].name.as_str()), ("named", "named"));

    // a whole matrix, and a copy of it
    s.seal(snap).unwrap();
    let next = s.open_snapshot().unwrap();
    let row = |t: TestId, deps: Option<TestDeps>| MatrixRow {
        test: t,
        run,
        state: CoverageState::Known,
        coverage: vec![(u, bm(&[1]))],
        recorded: vec![],
        deps,
    };
    s.write_matrix(next, &[row(tests[0], Some(deps.clone())), row(tests[1], None)]).unwrap();
    let m = s.matrix_deps(next).unwrap();
    assert_eq!(m.len(), 1, "a row without a definition has none recorded");
    assert_eq!(m[&tests[0]], deps);
    s.copy_matrix(snap, next).unwrap();
    assert_eq!(s.matrix_deps(next).unwrap(), s.matrix_deps(snap).unwrap());
    // a universe test renamed by an inserted line keeps its id
    let renamed = s
        .upsert_tests_named(&[TestName { key: "./prog a".into(), name: "t2".into(), cmd: "./prog a".into() }])
        .unwrap();
    assert_eq!(renamed[0], tests[0]);
    assert_eq!(s.matrix_tests(snap).unwrap()[0].name, "t2");
    // a test that left the suite leaves the matrix, and the index with it
    s.record_result(
        run,
        Some(next),
        &TestRecord {
            test: tests[1],
            outcome: outcome("pass"),
            coverage: Ok(vec![(u, bm(&[0]))]),
            recorded: vec![],
            deps: None,
            stopped: false,
        },
    )
    .unwrap();
    let both = bm(&[tests[0].0 as u32, tests[1].0 as u32]);
    assert_eq!(s.edge_index(next, u).unwrap().tests_on_edge(0), Some(&both));
    s.retain_matrix_tests(next, &[tests[0]]).unwrap();
    let left: Vec<TestId> = s.matrix_tests(next).unwrap().into_iter().map(|m| m.test).collect();
    assert_eq!(left, [tests[0]]);
    assert_eq!(s.edge_index(next, u).unwrap().tests_on_edge(0), Some(&bm(&[tests[0].0 as u32])));
    assert!(s.test_coverage(next, tests[1]).unwrap().is_empty());
}

both!(unit_sources_and_wrapper_outputs);
/// The sources of a unit are what its newest build saw; the files the
/// wrapper wrote follow the snapshot into the next one.
fn unit_sources_and_wrapper_outputs(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    s.record_unit(snap, "a.c@a.o", "a.c", u, None, "[]").unwrap();
    let src = |path: &str, h: u8| SourceState { path: path.into(), hash: [h; 16], stamp: Some(vec![h; 32]) };
    s.record_unit_sources(u, &[src("a.c", 1), src("a.h", 2)]).unwrap();
    s.record_unit_sources(u, &[src("a.c", 3)]).unwrap();
    assert_eq!(s.snapshot_sources(snap).unwrap(), vec![("a.c@a.o".to_string(), src("a.c", 3))]);
    s.record_outputs(snap, &["a.o".into(), "prog".into()]).unwrap();
    s.record_outputs(snap, &["prog".into()]).unwrap();
    s.seal(snap).unwrap();
    let next = s.open_snapshot().unwrap();
    s.record_outputs(next, &["lib.so".into()]).unwrap();
    assert_eq!(s.snapshot_outputs(snap).unwrap(), ["a.o", "prog"]);
    assert_eq!(s.snapshot_outputs(next).unwrap(), ["a.o", "lib.so", "prog"]);
    assert_eq!(s.snapshot_sources(next).unwrap().len(), 1);
}

/// A version 3 store gains the columns of version 4 and the tables and
/// columns of version 5; its matrix rows read as having no dependencies
/// recorded. So does a version 4 store of either line of development that
/// called its step version 4: the one with the results' `stopped` column, and
/// the one with the dependency tables.
#[test]
fn a_version_3_store_is_upgraded_to_record_dependencies() {
    for (version, extra) in [("3", ""), ("4", schema::V4), ("4", schema::V5)] {
        version_store_is_upgraded_to_record_dependencies(version, extra);
    }
}

fn version_store_is_upgraded_to_record_dependencies(version: &str, extra: &str) {
    let d = tempfile::tempdir().unwrap();
    let dir = Store::dir_for(d.path());
    std::fs::create_dir_all(&dir).unwrap();
    {
        let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
        conn.execute_batch(schema::V1).unwrap();
        conn.execute_batch(schema::V2).unwrap();
        conn.execute_batch(extra).unwrap();
        conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?1)", [version]).unwrap();
        conn.execute_batch(
            "INSERT INTO snapshots(id, created, state) VALUES (1, '0', 'sealed');
             INSERT INTO tests(id, name, cmd) VALUES (1, 't1', 'true');
             INSERT INTO runs(id, snapshot, kind, started) VALUES (1, 1, 'full', '0');
             INSERT INTO matrix_tests(snapshot, test, run, state) VALUES (1, 1, 1, 'ok');",
        )
        .unwrap();
    }
    let mut s = Store::open(&dir).unwrap();
    assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some(schema::VERSION.to_string().as_str()));
    let m = s.matrix_tests(SnapshotId(1)).unwrap();
    assert_eq!((m[0].key.as_str(), m[0].name.as_str(), m[0].stopped), ("t1", "t1", None));
    assert!(s.matrix_deps(SnapshotId(1)).unwrap().is_empty());
    assert_eq!(s.dep_state_ids(&[dep("x", 0, 1)]).unwrap().len(), 1);
}

both!(a_sharded_baseline_is_complete_once_every_test_of_its_suite_has_a_row);
/// Shards: each run records its tests into one snapshot's matrix and makes
/// it the baseline with the suite it is to cover; the matrix is complete once
/// every test of the suite has a row. Tests that left the suite leave the
/// matrix; rows of the other shards stay.
fn a_sharded_baseline_is_complete_once_every_test_of_its_suite_has_a_row(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    s.record_unit(snap, "f.c", "f.c", u, None, "[]").unwrap();
    let ids = s
        .upsert_tests(&[
            ("a".into(), "a".into()),
            ("b".into(), "b".into()),
            ("c".into(), "c".into()),
            ("old".into(), "o".into()),
        ])
        .unwrap();
    assert_eq!(s.suite(snap).unwrap(), None, "no run recorded a suite");
    assert_eq!(s.missing_tests(snap).unwrap(), None);
    let record = |s: &mut Store, t: TestId, edges: &[u32]| {
        let run = s.begin_run(snap, "shard").unwrap();
        let rec = TestRecord {
            test: t,
            outcome: outcome("pass"),
            coverage: Ok(vec![(u, bm(edges))]),
            recorded: vec![],
            deps: None,
            stopped: false,
        };
        s.record_result(run, Some(snap), &rec).unwrap();
        s.finish_run(run, Some(snap)).unwrap();
    };
    // a test that has left the suite still has a row from before
    record(&mut s, ids[3], &[0]);
    // shard 1 of 2: a and c
    record(&mut s, ids[0], &[0, 1]);
    record(&mut s, ids[2], &[1]);
    let suite = &ids[..3];
    s.make_baseline(snap, suite).unwrap();
    assert_eq!(s.baseline().unwrap(), Some(snap));
    assert_eq!(s.snapshot(snap).unwrap().state, SnapshotState::Sealed);
    assert_eq!(s.suite(snap).unwrap(), Some(suite.iter().map(|t| t.0 as u32).collect()));
    let missing: Vec<String> = s.missing_tests(snap).unwrap().unwrap().into_iter().map(|t| t.key).collect();
    assert_eq!(missing, ["b"]);
    let rows: Vec<TestId> = s.matrix_tests(snap).unwrap().into_iter().map(|m| m.test).collect();
    assert_eq!(rows, [ids[0], ids[2]], "the test that left the suite left the matrix");
    assert_eq!(s.edge_index(snap, u).unwrap().tests_on_edge(0), Some(&bm(&[ids[0].0 as u32])));
    // shard 2 of 2
    record(&mut s, ids[1], &[0]);
    s.make_baseline(snap, suite).unwrap();
    assert_eq!(s.missing_tests(snap).unwrap(), Some(vec![]));
    assert_eq!(s.edge_index(snap, u).unwrap().tests_on_edge(0), Some(&bm(&[ids[0].0 as u32, ids[1].0 as u32])));
    assert_eq!(s.origin(snap).unwrap(), None);
}

both!(a_shard_of_a_recovery_writes_its_rows_and_keeps_the_others);
/// A sharded `run --selected` writes only its own rows of the new matrix,
/// with the suite and the baseline it carried coverage over from, in one
/// transaction; a whole matrix written by `advance_baseline` is its suite.
fn a_shard_of_a_recovery_writes_its_rows_and_keeps_the_others(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let old = s.open_snapshot().unwrap();
    s.record_unit(old, "f.c", "f.c", u, None, "[]").unwrap();
    let ids = s.upsert_tests(&[("a".into(), "a".into()), ("b".into(), "b".into()), ("c".into(), "c".into())]).unwrap();
    let run = s.begin_run(old, "full").unwrap();
    let row = |t: TestId, edges: &[u32]| MatrixRow {
        test: t,
        run,
        state: CoverageState::Known,
        coverage: vec![(u, bm(edges))],
        recorded: vec![],
        deps: None,
    };
    s.advance_baseline(old, &[row(ids[0], &[0]), row(ids[1], &[1]), row(ids[2], &[0, 1])]).unwrap();
    assert_eq!(s.missing_tests(old).unwrap(), Some(vec![]));
    let new = s.open_snapshot().unwrap();
    s.advance_baseline_shard(new, &[row(ids[0], &[1]), row(ids[2], &[1])], &ids, Some(old)).unwrap();
    assert_eq!(s.baseline().unwrap(), Some(new));
    assert_eq!(s.origin(new).unwrap(), Some(old));
    let missing: Vec<String> = s.missing_tests(new).unwrap().unwrap().into_iter().map(|t| t.key).collect();
    assert_eq!(missing, ["b"]);
    // the other shard; a row written again replaces its own only
    s.advance_baseline_shard(new, &[row(ids[1], &[0]), row(ids[2], &[0])], &ids, Some(old)).unwrap();
    assert_eq!(s.missing_tests(new).unwrap(), Some(vec![]));
    let t = |i: usize| ids[i].0 as u32;
    assert_eq!(s.edge_index(new, u).unwrap().tests_on_edge(0), Some(&bm(&[t(1), t(2)])));
    assert_eq!(s.edge_index(new, u).unwrap().tests_on_edge(1), Some(&bm(&[t(0)])));
    // the old baseline's matrix is as it was
    assert_eq!(s.edge_index(old, u).unwrap().tests_on_edge(0), Some(&bm(&[t(0), t(2)])));
}

both!(a_read_view_sees_one_moment_and_stores_nothing);
/// Inside a read view a missing edge index is built from the view's
/// coverage and not stored (the view does not write); outside one,
/// `store_missing_indexes` stores every missing one. A view does not see
/// what another connection commits after its first read.
fn a_read_view_sees_one_moment_and_stores_nothing(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    s.record_unit(snap, "f.c", "f.c", u, None, "[]").unwrap();
    let ids = s.upsert_tests(&[("a".into(), "a".into()), ("b".into(), "b".into())]).unwrap();
    let run = s.begin_run(snap, "shard").unwrap();
    let rec = |t: TestId| TestRecord {
        test: t,
        outcome: outcome("pass"),
        coverage: Ok(vec![(u, bm(&[0]))]),
        recorded: vec![],
        deps: None,
        stopped: false,
    };
    // a run killed before it finished: no index
    s.record_result(run, Some(snap), &rec(ids[0])).unwrap();
    assert!(stored_index_units(&s, snap).is_empty());
    let mut other = f.open();
    let (first, second) = s
        .read_view(|v| {
            let first = v.edge_index(snap, u).unwrap();
            // another worker records meanwhile
            other.record_result(run, Some(snap), &rec(ids[1])).unwrap();
            let rows = v.matrix_tests(snap).unwrap().len();
            (first, (rows, v.edge_index(snap, u).unwrap()))
        })
        .unwrap();
    assert_eq!(first.tests_on_edge(0), Some(&bm(&[ids[0].0 as u32])));
    assert_eq!(second.0, 1, "the view does not see the other worker's row");
    assert_eq!(second.1, first);
    assert!(stored_index_units(&s, snap).is_empty(), "nothing stored by the view");
    s.store_missing_indexes(snap).unwrap();
    assert_eq!(stored_index_units(&s, snap), vec![u.0]);
    assert_eq!(s.edge_index(snap, u).unwrap().tests_on_edge(0), Some(&bm(&[ids[0].0 as u32, ids[1].0 as u32])));
}

/// A PostgreSQL store: `init` refuses a database that holds one, opening
/// refuses a database without one and one written by a newer retest (as
/// SQLite's does), and a dropped connection is reported as such (the
/// command can be rerun), not as a damaged store.
#[test]
fn a_postgresql_store_is_created_once_versioned_and_reports_a_lost_connection() {
    let server = crate::throwaway::Throwaway::start();
    let d = tempfile::tempdir().unwrap();
    let local = Store::dir_for(d.path());
    let url = server.new_database();
    match Store::open_url(&url, &local, false) {
        Err(StoreError::NotInitialised { .. }) => {}
        other => panic!("expected NotInitialised, got {:?}", other.err()),
    }
    let mut s = Store::open_url(&url, &local, true).unwrap();
    assert!(matches!(Store::open_url(&url, &local, true), Err(StoreError::Exists { .. })));
    assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some(schema::VERSION.to_string().as_str()));
    s.set_meta("schema_version", "99").unwrap();
    match Store::open_url(&url, &local, false) {
        Err(e @ StoreError::TooNew { found: 99, .. }) => assert!(e.to_string().contains("upgrade retest"), "{e}"),
        other => panic!("expected TooNew, got {:?}", other.err()),
    }
    s.set_meta("schema_version", &schema::VERSION.to_string()).unwrap();
    server.drop_connections();
    match s.open_snapshot() {
        Err(e @ StoreError::ConnectionLost { .. }) => {
            assert!(e.to_string().contains("rerun the command"), "{e}");
            assert!(!e.to_string().contains("password"), "{e}");
        }
        other => panic!("expected ConnectionLost, got {other:?}"),
    }
    // a new connection carries on
    let mut again = Store::open_url(&url, &local, false).unwrap();
    again.open_snapshot().unwrap();
}

#[test]
fn urls_are_shown_without_their_password() {
    assert_eq!(redact("postgresql://ci:s3cret@db:5432/retest"), "postgresql://ci@db:5432/retest");
    assert_eq!(redact("postgres://db/retest?user=ci&password=s3cret"), "postgres://db/retest?user=ci&password=…");
    assert_eq!(redact("postgresql://db/retest"), "postgresql://db/retest");
}

/// Encodings 5 to 7 read back whole, and as a shell whose bodies decode on
/// demand into the same procedures, with the summaries of what they hold.
/// A shell of encoding 6 holds the project's declarations, and the system
/// headers' digest; all of them, in order, decode on demand. A shell of
/// encoding 7 holds no declarations, and both digests; the project's
/// declarations, and all of them, decode on demand.
#[test]
fn a_unit_of_encoding_5_to_7_reads_whole_or_body_by_body() {
    use retest_graph::summary::{Bodies, Summary};
    let tagged = |tag: u8, u: &Unit| {
        let mut b = vec![tag];
        b.extend(match tag {
            5 => unitbin::encode_as(u, unitbin::Version::Lazy),
            6 => unitbin::encode_as(u, unitbin::Version::Sealed),
            _ => unitbin::encode(u),
        });
        b
    };
    // system headers' declarations that take more bytes than the rest of the shell
    let mut many = tiny_unit("h");
    many.decls = (0..300)
        .map(|i| retest_graph::Declaration {
            kind: retest_graph::DeclKind::Function,
            names: vec![format!("libc_function_{i}")],
            text: format!("#{:016x}", i * 7919),
            mentions: vec![format!("type_{i}")],
            span: Some(retest_graph::Span { file: 0, line: i, col: 1, end_line: i }),
        })
        .collect();
    let units = [tiny_unit("g"), rich_unit(), Unit::default(), many];
    for (tag, u) in [5, 6, 7].into_iter().flat_map(|t| units.clone().map(|u| (t, u))) {
        let b = tagged(tag, &u);
        if tag == 7 {
            assert_eq!(b, blob::encode_unit(&u), "encoding 7 is what is written");
        }
        assert_eq!(blob::decode_unit(&b).unwrap(), u);
        let (shell, bodies) = blob::decode_unit_lazy(&b).unwrap();
        let bodies = bodies.expect("encodings 5 and 6 have bodies on demand");
        assert_eq!(shell.procedures.len(), u.procedures.len());
        assert_eq!((&shell.files, &shell.classes), (&u.files, &u.classes));
        let own: Vec<_> = u.decls.iter().filter(|d| !d.is_sealed()).cloned().collect();
        let sealed_digest = retest_graph::summary::decls_digest(u.decls.iter().filter(|d| d.is_sealed()));
        if tag == 7 {
            assert!(shell.decls.is_empty(), "a shell of encoding 7 holds no declarations");
            assert_eq!(bodies.own_digest(), Some(retest_graph::summary::decls_digest(&own)));
            assert_eq!(bodies.sealed_digest(), Some(sealed_digest));
            assert_eq!(bodies.own_decls(), Some(&own[..]));
            assert_eq!(bodies.all_decls(), Some(&u.decls[..]));
        } else if tag == 6 {
            assert_eq!(shell.decls, own);
            assert_eq!((bodies.own_digest(), bodies.own_decls()), (None, None));
            assert_eq!(bodies.sealed_digest(), Some(sealed_digest));
            assert_eq!(bodies.all_decls(), Some(&u.decls[..]));
        } else {
            assert_eq!(shell.decls, u.decls);
            assert_eq!((bodies.sealed_digest(), bodies.all_decls()), (None, None));
        }
        for (i, p) in u.procedures.iter().enumerate() {
            let head = &shell.procedures[i];
            assert_eq!((&head.name, head.is_static, head.span, head.digest), (&p.name, p.is_static, p.span, p.digest));
            assert_ne!(head.stmt, p.stmt, "a shell holds no body");
            assert_eq!(bodies.summary(i), &Summary::of(p));
            assert_eq!(bodies.body(i), p);
        }
        assert_eq!(bodies.error(), None);
    }
    // a unit of an older encoding reads whole, without bodies on demand
    let old = {
        let mut b = vec![4];
        b.extend(lz4_flex::compress_prepend_size(&unitbin::encode_as(&rich_unit(), unitbin::Version::Classes)));
        b
    };
    let (u, bodies) = blob::decode_unit_lazy(&old).unwrap();
    assert!(bodies.is_none());
    assert_eq!(u, rich_unit());
}

/// Bodies stored byte for byte alike, in two units or in the old and new
/// version of one, decode once when their units share a
/// [`unitbin::DecodedBodies`]: the same procedure, which each would have
/// decoded alone. A body alike under another head (another name) is decoded
/// for its own.
#[test]
fn identical_bodies_are_decoded_once() {
    use retest_graph::summary::Bodies;
    let old = rich_unit();
    let mut changed = rich_unit();
    changed.procedures[0] = tiny_unit("other").procedures.remove(0);
    let mut renamed = rich_unit();
    renamed.procedures[1].name = "big_renamed".into();
    let shared = std::sync::Arc::new(unitbin::DecodedBodies::default());
    let lazy = |u: &Unit| {
        let Ok((_, Some(mut b))) = blob::decode_unit_lazy(&blob::encode_unit(u)) else {
            panic!("encoding 6 has bodies on demand");
        };
        b.share(shared.clone());
        b
    };
    let (b_old, b_changed, b_renamed) = (lazy(&old), lazy(&changed), lazy(&renamed));
    for (b, u) in [(&b_old, &old), (&b_changed, &changed), (&b_renamed, &renamed)] {
        for (i, p) in u.procedures.iter().enumerate() {
            assert_eq!(b.body(i), p, "{}", p.name);
        }
        assert_eq!(b.error(), None);
    }
    assert!(std::ptr::eq(b_old.body(1), b_changed.body(1)), "the procedure left as it was is decoded once");
    assert!(!std::ptr::eq(b_old.body(0), b_changed.body(0)));
    assert!(std::ptr::eq(b_old.body(0), b_renamed.body(0)));
    assert!(!std::ptr::eq(b_old.body(1), b_renamed.body(1)), "another head: its own body");
    assert_eq!(shared.len(), 3, "small, big and other");
}

both!(units_decoded_ahead_are_the_units_read);
/// Units decoded ahead ([`Store::decode_units_ahead`]), on a thread of their
/// own through a connection of its own, or at once, are the units
/// [`Store::units_lazy`] reads, with reads of the same handle in between; a
/// damaged one is an error when they are taken, naming the unit, never a
/// panic.
fn units_decoded_ahead_are_the_units_read(f: &Fixture) {
    use retest_graph::summary::Bodies;
    let mut s = f.init();
    let units = [rich_unit(), tiny_unit("f"), tiny_unit("g")];
    let ids: Vec<UnitId> = units.iter().zip(1u8..).map(|(u, h)| s.put_unit(&[h; 16], u).unwrap()).collect();
    drop(s);
    // on a thread of its own, at once, and read on the handle when the
    // thread could not connect
    for from in [Some(0), Some(i64::MAX), None] {
        let s = f.open();
        match from {
            Some(0) => {
                s.decode_units_ahead_from(&ids[..2], 0).unwrap();
                let Ahead { ids, decoding } = s.ahead.borrow_mut().take().expect("on a thread");
                let decoded = decoding.join().unwrap();
                assert!(decoded.is_some(), "the thread read through a connection of its own");
                *s.ahead.borrow_mut() = Some(Ahead { ids, decoding: std::thread::spawn(|| decoded) });
            }
            Some(from) => s.decode_units_ahead_from(&ids[..2], from).unwrap(),
            None => {
                *s.ahead.borrow_mut() = Some(Ahead { ids: ids[..2].to_vec(), decoding: std::thread::spawn(|| None) })
            }
        }
        assert_eq!(s.unit_facts(ids[2]).unwrap(), UnitFacts::of(&units[2]), "a read meanwhile");
        let read = s.units_lazy(&ids).unwrap();
        assert_eq!(read.len(), 3);
        for ((shell, bodies), u) in read.iter().zip(&units) {
            let bodies = bodies.as_ref().expect("encoding 7 has bodies on demand");
            assert_eq!(shell.procedures.len(), u.procedures.len());
            for (i, p) in u.procedures.iter().enumerate() {
                assert_eq!(bodies.body(i), p, "{} decoded ahead ({from:?} edges)", p.name);
            }
        }
        assert!(s.ahead.borrow().is_none(), "taken");
    }
    // the second unit damaged: its shell does not decode
    let s = f.open();
    s.conn.exec("UPDATE units SET data = ?1 WHERE id = ?2", db::p![vec![blob::UNIT_BIN, 9, 9, 9], ids[1].0]).unwrap();
    s.decode_units_ahead_from(&ids, 0).unwrap();
    match s.units_lazy(&ids) {
        Err(e) => assert!(e.to_string().contains(&format!("unit {}", ids[1].0)), "{e}"),
        Ok(_) => panic!("a damaged unit decoded"),
    }
}

/// A store dropped while units decode ahead waits for their thread, so that
/// its own connection closes last and empties the write-ahead log: a closed
/// store is its database file alone (`a_database_copied_over_a_closed_store_is_what_opens`).
#[test]
fn a_store_dropped_while_units_decode_ahead_closes_last() {
    let a = tempfile::tempdir().unwrap();
    let d = Store::dir_for(a.path());
    let mut s = Store::init(&d).unwrap();
    let reader = Reader::Sqlite(d.join(DB_FILE));
    let (reading, read) = std::sync::mpsc::channel();
    let decoding = std::thread::spawn(move || {
        let conn = reader.connect().expect("a read-only connection");
        conn.row("SELECT count(*) FROM units", db::p![], |r| r.get::<i64>(0)).unwrap();
        reading.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        None
    });
    *s.ahead.borrow_mut() = Some(Ahead { ids: Vec::new(), decoding });
    read.recv().unwrap();
    for i in 0..50u32 {
        s.set_meta(&format!("k{i}"), "v").unwrap();
    }
    drop(s);
    let wal = d.join(format!("{DB_FILE}-wal"));
    assert_eq!(std::fs::metadata(&wal).map(|m| m.len()).ok(), Some(0), "the store's connection closed last");
}

/// A body damaged after its shell was read is an error the selection
/// reports, never a panic: the body reads as a changed procedure and
/// `Bodies::error` says which.
#[test]
fn a_damaged_body_is_reported_not_decoded() {
    use retest_graph::summary::Bodies;
    let u = rich_unit();
    let mut b = vec![5];
    b.extend(unitbin::encode_as(&u, unitbin::Version::Lazy));
    // in encoding 5 the last body's bytes end the blob: garble its end
    let n = b.len();
    for x in &mut b[n - 6..] {
        *x ^= 0x5a;
    }
    let Ok((shell, Some(bodies))) = blob::decode_unit_lazy(&b) else {
        panic!("the shell is intact");
    };
    let last = shell.procedures.len() - 1;
    let p = bodies.body(last);
    assert!(p.unanalysable.is_some());
    assert!(bodies.error().is_some_and(|e| e.contains(&u.procedures[last].name)));
    assert!(blob::decode_unit(&b).is_err(), "read whole, the unit is damaged");
}

/// The system headers' declarations damaged after the shell was read: an
/// error the selection reports, never the project's declarations alone
/// taken for all.
#[test]
fn damaged_system_declarations_are_reported() {
    use retest_graph::summary::Bodies;
    let u = rich_unit();
    let mut b = blob::encode_unit(&u);
    // in encodings 6 and 7 the system headers' declarations end the blob
    let n = b.len();
    for x in &mut b[n - 6..] {
        *x ^= 0x5a;
    }
    let Ok((_, Some(bodies))) = blob::decode_unit_lazy(&b) else {
        panic!("the shell is intact");
    };
    assert!(bodies.sealed_digest().is_some());
    let _ = bodies.all_decls();
    assert!(bodies.error().is_some_and(|e| e.contains("system headers' declarations")), "{:?}", bodies.error());
    assert!(blob::decode_unit(&b).is_err(), "read whole, the unit is damaged");
}

/// The project's declarations of encoding 7 damaged after the shell was
/// read: an error the selection reports, whichever way they are read.
#[test]
fn damaged_project_declarations_are_reported() {
    use retest_graph::summary::Bodies;
    let mut u = rich_unit();
    u.decls.retain(|d| !d.is_sealed());
    assert!(!u.decls.is_empty(), "the unit declares something");
    let mut b = blob::encode_unit(&u);
    // the project's declarations come just before the system headers',
    // here an empty section
    let sealed = lz4_flex::compress_prepend_size(&[0]).len();
    let n = b.len() - sealed;
    for x in &mut b[n - 6..n] {
        *x ^= 0x5a;
    }
    assert!(blob::decode_unit(&b).is_err(), "read whole, the unit is damaged");
    for all in [false, true] {
        let Ok((shell, Some(bodies))) = blob::decode_unit_lazy(&b) else {
            panic!("the shell is intact");
        };
        assert!(shell.decls.is_empty() && bodies.own_digest().is_some());
        let _ = if all { bodies.all_decls() } else { bodies.own_decls() };
        assert!(bodies.error().is_some_and(|e| e.contains("project's declarations")), "{:?}", bodies.error());
    }
}

both!(a_version_8_store_keeps_its_unit_facts_in_their_own_table);
/// A store of version 8 kept each unit's facts in `units.facts`; at version
/// 9 they are in `unit_facts`, read back the same, and the column is gone
/// (reading it had walked each unit's whole blob). A unit stored without
/// facts gets them from `store_missing_facts`.
fn a_version_8_store_keeps_its_unit_facts_in_their_own_table(f: &Fixture) {
    let (units, snap) = {
        let mut s = f.init();
        let a = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
        let b = s.put_unit(&[2; 16], &rich_unit()).unwrap();
        let snap = s.open_snapshot().unwrap();
        s.record_unit(snap, "a.c", "a.c", a, None, "").unwrap();
        s.record_unit(snap, "b.c", "b.c", b, None, "").unwrap();
        // back to version 8's shape: the facts of `a` in the column, `b` without
        s.conn
            .exec("ALTER TABLE units ADD COLUMN facts BLOB", db::p![])
            .unwrap_or_else(|_| s.conn.exec("ALTER TABLE units ADD COLUMN facts BYTEA", db::p![]).unwrap());
        s.conn
            .exec("UPDATE units SET facts = ?1 WHERE id = ?2", db::p![UnitFacts::of(&tiny_unit("f")).encode(), a.0])
            .unwrap();
        s.conn.exec("DELETE FROM unit_facts", db::p![]).unwrap();
        s.set_meta("schema_version", "8").unwrap();
        ([a, b], snap)
    };
    let mut s = f.open();
    assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some(schema::VERSION.to_string().as_str()));
    assert_eq!(s.unit_facts(units[0]).unwrap(), UnitFacts::of(&tiny_unit("f")));
    assert!(
        s.conn.row("SELECT facts FROM units", db::p![], |r| r.get::<Option<Vec<u8>>>(0)).is_err(),
        "the column is gone"
    );
    let stored = |s: &Store, id: UnitId| {
        s.conn.row("SELECT data FROM unit_facts WHERE unit = ?1", db::p![id.0], |r| r.get::<Vec<u8>>(0)).unwrap()
    };
    assert!(stored(&s, units[1]).is_none());
    // read from the unit itself meanwhile, stored for the next selection
    assert_eq!(s.unit_facts(units[1]).unwrap(), UnitFacts::of(&rich_unit()));
    s.store_missing_facts(&[snap]).unwrap();
    assert_eq!(UnitFacts::decode(&stored(&s, units[1]).unwrap()).unwrap(), UnitFacts::of(&rich_unit()));
}

both!(what_a_selection_reads_per_test_is_read_in_one_pass);
/// `matrix_for_selection` gives what `matrix_tests`, `matrix_deps` and
/// `missing_tests` give, row by row, on both back ends.
fn what_a_selection_reads_per_test_is_read_in_one_pass(f: &Fixture) {
    let mut s = f.init();
    let u = s.put_unit(&[1; 16], &tiny_unit("f")).unwrap();
    let snap = s.open_snapshot().unwrap();
    let ids = s.dep_state_ids(&[dep("a.txt", 0, 1), dep("b.txt", 1, 0)]).unwrap();
    let tests = s
        .upsert_tests_named(&[
            TestName { key: "./prog a".into(), name: "t1".into(), cmd: "./prog a".into() },
            TestName { key: "named".into(), name: "named".into(), cmd: "true".into() },
            TestName { key: "later".into(), name: "later".into(), cmd: "true".into() },
        ])
        .unwrap();
    let run = s.begin_run(snap, "full").unwrap();
    let deps = [Some(TestDeps { definition: "{\"cmd\":\"./prog a\"}".into(), states: bm(&ids), unknown: None }), None];
    for (t, d) in tests.iter().zip(&deps) {
        s.record_result(
            run,
            Some(snap),
            &TestRecord {
                test: *t,
                outcome: outcome("pass"),
                coverage: Ok(vec![(u, bm(&[0]))]),
                recorded: vec![],
                deps: d.clone(),
                stopped: false,
            },
        )
        .unwrap();
    }
    s.finish_run(run, Some(snap)).unwrap();
    // the third test is in the suite and has no row: the baseline is incomplete
    s.make_baseline(snap, &tests).unwrap();
    let (matrix, per_test, missing) = s.matrix_for_selection(snap).unwrap();
    let mut expected = s.matrix_tests(snap).unwrap();
    for m in &mut expected {
        m.stopped = None;
    }
    assert_eq!(matrix, expected);
    let by_id = s.matrix_deps(snap).unwrap();
    assert_eq!(per_test.len(), matrix.len());
    for (m, d) in matrix.iter().zip(&per_test) {
        assert_eq!(d.as_ref(), by_id.get(&m.test), "{}", m.key);
    }
    assert_eq!(per_test[0], deps[0]);
    assert_eq!(missing, s.missing_tests(snap).unwrap());
    assert_eq!(missing.unwrap().iter().map(|t| t.key.as_str()).collect::<Vec<_>>(), ["later"]);
}

/// A closed store keeps its write-ahead log beside it, empty: the database
/// file alone is the whole store (a copy of it misses nothing), and a
/// database copied over it is what the next open reads (the log holds
/// nothing of the store it belonged to). Without the log truncated at close,
/// the copied database read back the first store's rows.
#[test]
fn a_database_copied_over_a_closed_store_is_what_opens() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (da, db) = (Store::dir_for(a.path()), Store::dir_for(b.path()));
    let units = [tiny_unit("f"), rich_unit()];
    {
        let (mut sa, mut sb) = (Store::init(&da).unwrap(), Store::init(&db).unwrap());
        for i in 0..200u32 {
            sa.set_meta(&format!("k{i}"), "a").unwrap();
        }
        sa.put_unit(&[1; 16], &units[0]).unwrap();
        sb.set_meta("k0", "b").unwrap();
        sb.put_unit(&[2; 16], &units[1]).unwrap();
    }
    let wal = da.join(format!("{DB_FILE}-wal"));
    assert_eq!(std::fs::metadata(&wal).map(|m| m.len()).ok(), Some(0), "the log is kept, empty");
    // a copy of the database file alone is the whole store
    let c = tempfile::tempdir().unwrap();
    let dc = Store::dir_for(c.path());
    std::fs::create_dir_all(&dc).unwrap();
    std::fs::copy(da.join(DB_FILE), dc.join(DB_FILE)).unwrap();
    let sc = Store::open(&dc).unwrap();
    assert_eq!(sc.meta("k199").unwrap().as_deref(), Some("a"));
    assert!(sc.unit_by_hash(&[1; 16]).unwrap().is_some());
    drop(sc);
    // the other store's database copied over the first
    std::fs::copy(db.join(DB_FILE), da.join(DB_FILE)).unwrap();
    let s = Store::open(&da).unwrap();
    assert_eq!(s.meta("k0").unwrap().as_deref(), Some("b"));
    assert_eq!(s.meta("k199").unwrap(), None);
    assert!(s.unit_by_hash(&[1; 16]).unwrap().is_none());
    let id = s.unit_by_hash(&[2; 16]).unwrap().expect("the copied store's unit");
    assert_eq!(*s.unit(id).unwrap(), units[1]);
}
