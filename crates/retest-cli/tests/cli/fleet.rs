//! A CI fleet on the bundled example: sharded runs (`--partition`), each
//! shard recording into one store, against one worker running everything.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use common::*;

/// Runs `retest ARGS` in `dir`; panics unless it exits with one of `codes`.
fn retest_exits(dir: &Path, args: &[&str], codes: &[i32]) -> Output {
    let out = retest_output(dir, args);
    assert!(
        out.status.code().is_some_and(|c| codes.contains(&c)),
        "retest {args:?} exited {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        stdout(&out),
        stderr(&out)
    );
    out
}

/// The raw matrix without the snapshot number (stores numbered differently).
fn raw_matrix(dir: &Path) -> serde_json::Value {
    let mut v = json(&retest(dir, &["coverage", "--format", "matrix"], 0));
    v["snapshot"] = serde_json::Value::Null;
    v
}

fn listed(dir: &Path, partition: &str) -> Vec<String> {
    let out = retest(dir, &["run", "--list", "--partition", partition], 0);
    stdout(&out).lines().map(|l| l.split('\t').next().unwrap().to_string()).collect()
}

fn selected_names(v: &serde_json::Value) -> BTreeSet<String> {
    v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

fn ran(o: &Output) -> BTreeSet<String> {
    json(o)["tests"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

/// `--partition hash:K/N` and `count:K/N` put every test of the suite in
/// exactly one of the N shards; `count` deals them round-robin (sizes differ
/// by at most one); bad values are usage errors that say what is wrong.
#[test]
fn every_test_is_listed_in_exactly_one_shard() {
    let d = example_copy();
    retest(d.path(), &["init"], 0);
    let all: BTreeSet<String> = test_names(d.path()).into_iter().collect();
    assert_eq!(all.len(), 40);
    for method in ["hash", "count"] {
        for n in [1, 3, 4, 7] {
            let mut seen = BTreeSet::new();
            let mut sizes = Vec::new();
            for k in 1..=n {
                let shard = listed(d.path(), &format!("{method}:{k}/{n}"));
                sizes.push(shard.len());
                for t in shard {
                    assert!(seen.insert(t.clone()), "{method}:{k}/{n}: {t} is in two shards");
                }
            }
            assert_eq!(seen, all, "{method} over {n}");
            if method == "count" {
                assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "{sizes:?}");
            }
        }
    }
    // --filter first, then the partition
    let filtered: BTreeSet<String> = (1..=2)
        .flat_map(|k| {
            let out = retest(d.path(), &["run", "--list", "--filter", "2*", "--partition", &format!("count:{k}/2")], 0);
            stdout(&out).lines().map(|l| l.split('\t').next().unwrap().to_string()).collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(filtered, all.iter().filter(|t| t.starts_with('2')).cloned().collect());
    for (bad, why) in
        [("hash:0/4", "between 1 and 4"), ("hash:5/4", "between 1 and 4"), ("slice:1/2", "`hash:` or `count:`")]
    {
        let e = stderr(&retest(d.path(), &["run", "--partition", bad], 2));
        assert!(e.contains(why), "{bad}: {e}");
    }
}

/// Four shards, one after the other, into one store record the matrix one
/// worker running the whole suite records, test by test; until the last
/// shard has run, a selection selects the tests no shard has recorded.
/// Then `run --selected --partition` on four shards brings every test's
/// coverage up to date as one `run --selected` does, each shard running its
/// part of the same selection.
#[test]
fn four_shards_record_what_one_worker_records() {
    let one = example_copy();
    baseline(one.path());
    let fleet = example_copy();
    retest(fleet.path(), &["init"], 0);
    retest(fleet.path(), &["build", "--", "make", "-s", "-j2"], 0);
    let mut recorded = BTreeSet::new();
    for k in 1..=4 {
        let p = format!("hash:{k}/4");
        let out = retest(fleet.path(), &["run", "-j2", "--partition", &p, "--format", "json"], 0);
        let shard = ran(&out);
        assert_eq!(shard, listed(fleet.path(), &p).into_iter().collect(), "{p}");
        recorded.extend(shard);
        let o = retest(fleet.path(), &["select", "--format", "json"], 0);
        let v = json(&o);
        let all: BTreeSet<String> = test_names(fleet.path()).into_iter().collect();
        let missing: BTreeSet<String> = all.difference(&recorded).cloned().collect();
        assert_eq!(selected_names(&v), missing, "after {p}: the tests no shard has recorded yet");
        let listed: BTreeSet<String> =
            v["baseline_missing"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
        assert_eq!(listed, missing, "after {p}");
        for t in v["selected"].as_array().unwrap() {
            let kinds: Vec<&str> =
                t["reasons"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
            assert_eq!(kinds, ["incomplete-baseline"], "{t}");
        }
        let e = stderr(&o);
        if missing.is_empty() {
            assert!(!e.contains("incomplete"), "{e}");
        } else {
            let head = format!("is incomplete: {} of the suite's tests have no record yet", missing.len());
            assert!(e.contains(&head) && e.contains(missing.iter().next().unwrap().as_str()), "{e}");
        }
    }
    assert_eq!(raw_matrix(fleet.path()), raw_matrix(one.path()));

    apply_change(one.path(), "brake-check");
    apply_change(fleet.path(), "brake-check");
    let sel = selected_names(&json(&retest(one.path(), &["select", "--format", "json"], 0)));
    assert!(!sel.is_empty() && sel.len() < 40, "{sel:?}");
    let whole = ran(&retest_exits(one.path(), &["run", "--selected", "--full-probes", "--format", "json"], &[0, 1]));
    let mut shards = BTreeSet::new();
    for k in 1..=4 {
        let p = format!("count:{k}/4");
        let out = retest_exits(fleet.path(), &["run", "--selected", "--partition", &p, "--format", "json"], &[0, 1]);
        let part = ran(&out);
        assert!(part.is_disjoint(&shards), "{p} ran tests another shard ran");
        shards.extend(part);
    }
    assert_eq!(shards, whole, "the shards ran the tests one worker runs, each once");
    assert_eq!(raw_matrix(fleet.path()), raw_matrix(one.path()));
    let v = json(&retest(fleet.path(), &["select", "--format", "json"], 0));
    assert!(selected_names(&v).is_empty(), "complete: nothing to select with nothing changed: {v}");
}

/// Copies a store file, leaving no write-ahead log of the one replaced.
fn put_store(from: &Path, to: &Path) {
    for ext in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", to.display()));
    }
    std::fs::copy(from, to).unwrap();
}

/// A copy of the example built once (its store saved as `build.db`), whose
/// four `hash:K/4` shards each ran from that store into a file of their own
/// (`shardK.db`): (the copy, its store, `build.db`, the shard files).
fn four_shard_files() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf, Vec<std::path::PathBuf>) {
    let fleet = example_copy();
    let f = fleet.path();
    retest(f, &["init"], 0);
    retest(f, &["build", "--", "make", "-s", "-j2"], 0);
    let db = f.join(".retest/store.db");
    let build = f.join("build.db");
    std::fs::copy(&db, &build).unwrap();
    let mut shards = Vec::new();
    for k in 1..=4 {
        put_store(&build, &db);
        retest(f, &["run", "-j2", "--partition", &format!("hash:{k}/4")], 0);
        let shard = f.join(format!("shard{k}.db"));
        std::fs::copy(&db, &shard).unwrap();
        shards.push(shard);
    }
    (fleet, db, build, shards)
}

/// The CI recipe with one SQLite file per worker: the build's store is
/// copied to four workers (one after the other, in the same checkout, as CI
/// runners see the same path), each records its shard into its copy, and
/// `retest merge` combines the four files. Per-test coverage (JSON and the
/// raw matrix) and a later selection are byte for byte one worker's who ran
/// everything. Shards of another build are refused, naming the unit that
/// differs, and nothing is written.
#[test]
fn four_shard_stores_merged_give_what_one_worker_records() {
    let one = example_copy();
    baseline(one.path());
    let (fleet, db, build, shards) = four_shard_files();
    let f = fleet.path();
    let names: Vec<&str> = shards.iter().map(|p| p.to_str().unwrap()).collect();
    // into a new file, and into the build's store
    let merged = f.join("merged.db");
    let mut args = vec!["merge"];
    args.extend(&names);
    args.extend(["--into", merged.to_str().unwrap()]);
    let out = stdout(&retest(f, &args, 0));
    assert!(out.contains("merged 4 shard(s) (40 test records)") && out.contains("(new)"), "{out}");
    assert!(out.contains("complete: every one of the 40 tests"), "{out}");
    put_store(&build, &db);
    let mut args = vec!["merge"];
    args.extend(&names[..3]);
    let out = stdout(&retest(f, &args, 0));
    let last: BTreeSet<String> = listed(f, "hash:4/4").into_iter().collect();
    assert!(out.contains(&format!("incomplete: {} of the 40 tests", last.len())), "{out}");
    let v = json(&retest(f, &["select", "--format", "json"], 0));
    let missing = selected_names(&v);
    assert_eq!(missing, last, "the unmerged shard's tests are selected");
    retest(f, &["merge", names[3]], 0);
    for format in ["json", "matrix"] {
        let a = stdout(&retest(f, &["coverage", "--format", format], 0));
        let b = stdout(&retest(one.path(), &["coverage", "--format", format], 0));
        assert_eq!(a, b, "coverage --format {format}");
    }
    // the new file holds the same
    let merged_here = stdout(&retest(f, &["coverage", "--format", "matrix"], 0));
    let kept = f.join("kept.db");
    std::fs::copy(&db, &kept).unwrap();
    put_store(&merged, &db);
    assert_eq!(stdout(&retest(f, &["coverage", "--format", "matrix"], 0)), merged_here);
    put_store(&kept, &db);
    apply_change(one.path(), "brake-check");
    apply_change(f, "brake-check");
    for format in ["text", "json", "names"] {
        let mut a = stdout(&retest(f, &["select", "--format", format], 0));
        let mut b = stdout(&retest(one.path(), &["select", "--format", format], 0));
        // the analysis time differs from run to run
        for s in [&mut a, &mut b] {
            if format == "json" {
                let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
                v["analysis_seconds"] = serde_json::Value::Null;
                *s = v.to_string();
            } else if let Some(at) = s.find(", analysis ") {
                let end = at + s[at..].find(" s)").unwrap();
                s.replace_range(at..end, "");
            }
        }
        assert_eq!(a, b, "select --format {format}");
    }

    // a shard of another build: refused, one line, nothing written
    retest(f, &["run", "-j2", "--partition", "hash:1/4"], 0);
    let other = f.join("other.db");
    std::fs::copy(&db, &other).unwrap();
    let into = f.join("never.db");
    let e = stderr(&retest(f, &["merge", names[0], other.to_str().unwrap(), "--into", into.to_str().unwrap()], 5));
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("controller.c") && e.contains("differ") && e.contains("one build"), "{e}");
    assert!(!into.exists(), "nothing written");
    let e = stderr(&retest(f, &["merge", "no-such.db"], 2));
    assert!(e.contains("no-such.db"), "{e}");
}

/// `sqlite3 STORE QUERY` on the project's store, trimmed.
fn sql(dir: &Path, query: &str) -> String {
    let out = Command::new("sqlite3").arg(dir.join(".retest/store.db")).arg(query).output().unwrap();
    assert!(out.status.success(), "sqlite3 {query}: {}", stderr(&out));
    stdout(&out).trim().to_string()
}

fn spawn_shard(dir: &Path, partition: &str) -> std::process::Child {
    spawn_shard_on(dir, &[], partition)
}

/// [`spawn_shard`] with the global options `store` (`--store URL`).
fn spawn_shard_on(dir: &Path, store: &[&str], partition: &str) -> std::process::Child {
    Command::new(retest_bin())
        .args(store)
        .args(["run", "-j2", "--partition", partition])
        .current_dir(dir)
        .env("CI", "1")
        .env_remove("RETEST_STORE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Kills a worker as its machine's end would: with every process it started.
/// The worker is stopped first, so it starts nothing meanwhile; its tests run
/// in process groups of their own, so they are found by parent, in `/proc`.
/// (A worker killed alone leaves its running test behind, still writing; a
/// report of that test's code, run after its worker's trace directory was
/// cleaned up, makes a test of another worker running at that moment
/// unknown, and so selected: safe, but not what one worker records.)
fn kill_with_its_tests(worker: &mut std::process::Child) {
    let signal = |sig: &str, pid: u32| {
        let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
    };
    let root = worker.id();
    signal("-STOP", root);
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // pid (comm) state ppid …: the command may hold spaces and parentheses
            let ppid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        tree.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    for pid in tree.iter().skip(1) {
        signal("-KILL", *pid);
    }
    worker.kill().unwrap();
}

/// Per test, its row of the raw matrix.
fn rows(m: &serde_json::Value) -> std::collections::BTreeMap<String, serde_json::Value> {
    m["tests"].as_array().unwrap().iter().map(|t| (t["name"].as_str().unwrap().to_string(), t.clone())).collect()
}

/// Four workers record their shards into one store at the same time: nothing
/// is lost and the store is sound — the matrix is one worker's. Then four
/// workers again on a fresh build, one of them killed (SIGKILL, with its
/// tests) at a random point of its shard: the store is sound, every test it finished is
/// recorded as one worker records it, a selection selects the tests it did
/// not finish, and running its shard again completes the baseline one
/// worker records.
#[test]
fn concurrent_shards_lose_nothing_and_a_killed_one_is_completed_by_its_rerun() {
    let one = example_copy();
    baseline(one.path());
    let want = raw_matrix(one.path());

    let fleet = example_copy();
    let f = fleet.path();
    retest(f, &["init"], 0);
    retest(f, &["build", "--", "make", "-s", "-j2"], 0);
    let workers: Vec<_> = (1..=4).map(|k| spawn_shard(f, &format!("hash:{k}/4"))).collect();
    for (k, w) in workers.into_iter().enumerate() {
        let o = w.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {}: {}", k + 1, stderr(&o));
    }
    assert_eq!(sql(f, "PRAGMA integrity_check"), "ok");
    assert_eq!(raw_matrix(f), want, "four workers at once record what one does");

    let mut rng = common::Rng::from_env();
    let seed = rng.0;
    let fleet = example_copy();
    let f = fleet.path();
    retest(f, &["init"], 0);
    retest(f, &["build", "--", "make", "-s", "-j2"], 0);
    let victim = 1 + rng.below(4);
    let victims: BTreeSet<String> = listed(f, &format!("hash:{victim}/4")).into_iter().collect();
    // killed once it has recorded `at` of its tests (at least one, never all)
    assert!(victims.len() >= 2, "shard {victim} has {} tests", victims.len());
    let at = 1 + rng.below(victims.len() as u64 - 1);
    let ctx = format!("seed {seed}: shard {victim} killed after {at} of its {} tests", victims.len());
    let workers: Vec<_> = (1..=4).map(|k| spawn_shard(f, &format!("hash:{k}/4"))).collect();
    let names = victims.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(",");
    let count = format!("SELECT count(*) FROM matrix_tests m JOIN tests t ON t.id = m.test WHERE t.name IN ({names})");
    let started = std::time::Instant::now();
    let mut workers: Vec<Option<std::process::Child>> = workers.into_iter().map(Some).collect();
    let mut killed = workers[victim as usize - 1].take().unwrap();
    loop {
        let n: u64 = sql(f, &count).parse().unwrap();
        if n >= at {
            kill_with_its_tests(&mut killed);
            break;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "{ctx}: it never recorded {at} tests");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let status = killed.wait().unwrap();
    for (k, w) in workers.into_iter().enumerate() {
        if let Some(w) = w {
            let o = w.wait_with_output().unwrap();
            assert!(o.status.success(), "{ctx}: shard {}: {}", k + 1, stderr(&o));
        }
    }
    assert_eq!(sql(f, "PRAGMA integrity_check"), "ok", "{ctx}");
    let got = rows(&raw_matrix(f));
    let all = rows(&want);
    if status.success() {
        eprintln!("{ctx}: it finished before the kill landed");
    }
    for (name, row) in &got {
        assert_eq!(row, &all[name], "{ctx}: {name} is recorded as one worker records it");
    }
    let unfinished: BTreeSet<String> = victims.iter().filter(|n| !got.contains_key(*n)).cloned().collect();
    assert!(got.len() + unfinished.len() == 40, "{ctx}: the other shards recorded all of theirs");
    let v = json(&retest(f, &["select", "--format", "json"], 0));
    assert_eq!(selected_names(&v), unfinished, "{ctx}: the tests it did not finish are selected");
    retest(f, &["run", "-j2", "--partition", &format!("hash:{victim}/4")], 0);
    assert_eq!(sql(f, "PRAGMA integrity_check"), "ok", "{ctx}");
    assert_eq!(raw_matrix(f), want, "{ctx}: the rerun shard completes the baseline");
    let v = json(&retest(f, &["select", "--format", "json"], 0));
    assert!(selected_names(&v).is_empty(), "{ctx}: complete");
}

/// The README's CI recipe (between `<!-- ci-recipe:begin -->` and
/// `<!-- ci-recipe:end -->`): its sections, each a title and its lines.
fn ci_recipe(readme: &str) -> Vec<(String, Vec<String>)> {
    ci_recipe_named(readme, "ci-recipe")
}

/// The README's recipe between `<!-- NAME:begin -->` and `<!-- NAME:end -->`.
fn ci_recipe_named(readme: &str, name: &str) -> Vec<(String, Vec<String>)> {
    let start = readme.find(&format!("<!-- {name}:begin -->")).expect("the README has the CI recipe");
    let end = readme.find(&format!("<!-- {name}:end -->")).unwrap();
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in readme[start..end].lines().skip(1) {
        if line.starts_with("```") || line.trim().is_empty() {
            continue;
        }
        match line.strip_prefix("# ") {
            Some(title) => sections.push((title.to_string(), Vec::new())),
            None => sections.last_mut().expect("a section title first").1.push(line.to_string()),
        }
    }
    sections
}

/// The README's CI recipe with one SQLite store per shard, run as written on
/// the bundled example: the build job, four worker jobs (`K` of `N` = 4) and
/// the fan-in job, each section as one shell script with the real `retest` on
/// the PATH. The fan-in's baseline is complete and one worker's; every line
/// of the recipe is in the README's GitHub Actions and GitLab CI files.
#[test]
fn ci_recipe_with_one_store_per_shard_runs_as_written() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let recipe = ci_recipe(&readme);
    let titles: Vec<&str> = recipe.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles, ["build job", "worker job K of N", "fan-in job"]);
    // the CI files hold the same commands
    let after = &readme[readme.find("<!-- ci-recipe:end -->").unwrap()..];
    let yaml: Vec<&str> = after.split("```yaml").skip(1).take(2).map(|b| b.split("```").next().unwrap()).collect();
    assert_eq!(yaml.len(), 2, "a GitHub Actions and a GitLab CI file");
    for (title, lines) in &recipe {
        for l in lines {
            for (ci, y) in ["GitHub Actions", "GitLab CI"].iter().zip(&yaml) {
                assert!(y.lines().any(|yl| yl.trim().trim_start_matches("- ") == l), "{ci} lacks `{l}` ({title})");
            }
        }
    }

    let one = example_copy();
    baseline(one.path());
    let d = example_copy();
    let bin_dir = retest_bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let job = |lines: &[String], k: u32| -> Output {
        let script = format!("set -e\n{}\n", lines.join("\n"));
        let out = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(d.path())
            .env("PATH", &path)
            .env("CI", "1")
            .env("K", k.to_string())
            .env("N", "4")
            .env_remove("RETEST_STORE")
            .env_remove("RETEST_STORE_URL")
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}\nstdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
        out
    };
    job(&recipe[0].1, 0);
    let mut in_reports = 0;
    for k in 1..=4 {
        job(&recipe[1].1, k);
        assert!(d.path().join(format!("shard-{k}.db")).is_file());
        // each worker's report names every test: its own run, the others skipped
        let junit = std::fs::read_to_string(d.path().join(format!("junit-{k}.xml"))).unwrap();
        assert!(junit.contains(r#"<property name="retest.run" value="shard"/>"#), "{junit}");
        assert_eq!(junit.matches("<testcase ").count(), 40, "{junit}");
        let skipped = junit.matches(&format!("not in shard hash:{k}/4: another worker runs it")).count();
        in_reports += 40 - skipped;
    }
    assert_eq!(in_reports, 40, "every test ran in exactly one worker's report");
    let out = stdout(&job(&recipe[2].1, 0));
    assert!(
        out.contains("merged 4 shard(s) (40 test records)") && out.contains("complete: every one of the 40"),
        "{out}"
    );
    assert!(out.contains("0 of 40 tests selected"), "{out}");
    assert_eq!(raw_matrix(d.path()), raw_matrix(one.path()), "the fan-in's baseline is one worker's");
}

/// An incomplete baseline (three of four shards recorded) followed by a
/// change: `run --selected` measures the tests no shard recorded in full,
/// with the others it selects, and ends with the matrix a full run of the
/// changed program records.
#[test]
fn run_selected_on_an_incomplete_baseline_measures_the_missing_tests() {
    let truth = example_copy();
    retest(truth.path(), &["init"], 0);
    apply_change(truth.path(), "throttle-gain");
    retest_exits(truth.path(), &["run", "-j2"], &[0, 1]);

    let d = example_copy();
    let f = d.path();
    retest(f, &["init"], 0);
    retest(f, &["build", "--", "make", "-s", "-j2"], 0);
    for k in 1..=3 {
        retest(f, &["run", "-j2", "--partition", &format!("count:{k}/4")], 0);
    }
    let missing: BTreeSet<String> = listed(f, "count:4/4").into_iter().collect();
    apply_change(f, "throttle-gain");
    let v = json(&retest(f, &["select", "--format", "json"], 0));
    let sel = selected_names(&v);
    assert!(missing.is_subset(&sel), "the unrecorded tests are selected: {missing:?} ⊄ {sel:?}");
    let ran = ran(&retest_exits(f, &["run", "--selected", "--format", "json"], &[0, 1]));
    assert!(missing.is_subset(&ran), "and run: {missing:?} ⊄ {ran:?}");
    assert_eq!(raw_matrix(f), raw_matrix(truth.path()), "the matrix of a full run on the new version");
    let v = json(&retest(f, &["select", "--format", "json"], 0));
    assert!(v["baseline_missing"].as_array().unwrap().is_empty(), "{v}");
}

/// Shards that took their tests from a universe file: the store merged into
/// (the build's, which no run has told where the tests are) learns it from
/// the shards, so a later selection lists the suite and compares the tests'
/// definitions.
#[test]
fn a_merge_into_the_builds_store_keeps_where_the_tests_come_from() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path();
    std::fs::write(
        f.join("prog.c"),
        "#include <stdlib.h>\nint main(int c, char **v) { int n = c > 1 ? atoi(v[1]) : 0;\n  if (n & 1) return 0;\n  return n > 100;\n}\n",
    )
    .unwrap();
    std::fs::write(f.join("Makefile"), "prog: prog.c\n\t$(CC) -o prog prog.c\n").unwrap();
    let universe: String = (0..20).map(|i| format!("./prog {i}\n")).collect();
    std::fs::write(f.join("universe.txt"), universe).unwrap();
    retest(f, &["init"], 0);
    retest(f, &["build", "--", "make", "-s"], 0);
    let db = f.join(".retest/store.db");
    let build = f.join("build.db");
    std::fs::copy(&db, &build).unwrap();
    for k in 1..=2 {
        put_store(&build, &db);
        retest(f, &["run", "--universe", "universe.txt", "--partition", &format!("hash:{k}/2")], 0);
        std::fs::copy(&db, f.join(format!("shard{k}.db"))).unwrap();
    }
    put_store(&build, &db);
    retest(f, &["merge", "shard1.db", "shard2.db"], 0);
    let o = retest(f, &["select", "--format", "json"], 0);
    let v = json(&o);
    assert_eq!(v["tests_total"], 20);
    assert!(v["warnings"].as_array().unwrap().is_empty() && stderr(&o).is_empty(), "{v}\n{}", stderr(&o));
    // bad input: one line, the store merged into unchanged
    let before = raw_matrix(f);
    std::fs::write(f.join("junk.db"), "not a store at all, just some bytes\n".repeat(200)).unwrap();
    let e = stderr(&retest(f, &["merge", "shard1.db", "junk.db"], 5));
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("junk.db is not a readable retest store"), "{e}");
    let e = stderr(&retest(f, &["merge", "shard1.db", "shard1.db"], 2));
    assert!(e.contains("named twice"), "{e}");
    assert_eq!(raw_matrix(f), before);
}

/// `ARGS` after `--store URL`.
fn on<'a>(url: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    ["--store", url].into_iter().chain(args.iter().copied()).collect()
}

/// The raw matrix of the PostgreSQL store `url`, without the snapshot number.
fn raw_matrix_on(dir: &Path, url: &str) -> serde_json::Value {
    let mut v = json(&retest(dir, &on(url, &["coverage", "--format", "matrix"]), 0));
    v["snapshot"] = serde_json::Value::Null;
    v
}

/// A selection's JSON without what varies from run to run (times).
fn selection(dir: &Path, store: &[&str]) -> serde_json::Value {
    let args: Vec<&str> = store.iter().copied().chain(["select", "--format", "json"]).collect();
    let mut v = json(&retest(dir, &args, 0));
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| {
                    !(k.contains("time") || k.contains("seconds") || k.ends_with("_ms") || k == "snapshot")
                });
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// The database name at the end of a throwaway server's URL.
fn database(url: &str) -> &str {
    url.rsplit('/').next().unwrap()
}

/// Four workers record their shards (`--partition hash:K/4`) into one
/// PostgreSQL store at the same time: the matrix is, test by test, the one
/// one worker records into SQLite, and so is the selection after a change.
/// Then four again on a fresh database, one killed (SIGKILL) at a random
/// point of its shard: every test it finished is recorded as one worker
/// records it, a selection selects the rest, and rerunning its shard
/// completes the baseline. Then a worker whose connection the server drops
/// mid-shard: one error line that says so, a non-zero exit, and rerunning
/// its shard completes the baseline. The server is the test's own
/// (`initdb` in a temporary directory), stopped at the end.
#[test]
fn four_workers_into_one_postgresql_store_record_what_one_worker_records() {
    let one = example_copy();
    baseline(one.path());
    let want = raw_matrix(one.path());
    let server = retest_store::throwaway::Throwaway::start();

    let fleet = example_copy();
    let f = fleet.path();
    let url = server.new_database();
    retest(f, &on(&url, &["init"]), 0);
    assert!(!f.join(".retest/store.db").exists(), "the store is the database, not a file");
    retest(f, &on(&url, &["build", "--", "make", "-s", "-j2"]), 0);
    let workers: Vec<_> = (1..=4).map(|k| spawn_shard_on(f, &["--store", &url], &format!("hash:{k}/4"))).collect();
    for (k, w) in workers.into_iter().enumerate() {
        let o = w.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {}: {}", k + 1, stderr(&o));
    }
    assert_eq!(raw_matrix_on(f, &url), want, "four workers at once into PostgreSQL record what one does into SQLite");
    apply_change(one.path(), "brake-check");
    apply_change_with(f, "brake-check", &["--store", &url]);
    let (a, b) = (selection(one.path(), &[]), selection(f, &["--store", &url]));
    assert!(!selected_names(&a).is_empty(), "the change selects tests");
    assert_eq!(b, a, "the same selection from either store");

    // one of four killed at a random point, its shard rerun
    let mut rng = common::Rng::from_env();
    let seed = rng.0;
    let fleet = example_copy();
    let f = fleet.path();
    let url = server.new_database();
    retest(f, &on(&url, &["init"]), 0);
    retest(f, &on(&url, &["build", "--", "make", "-s", "-j2"]), 0);
    let victim = 1 + rng.below(4);
    let victims: BTreeSet<String> = {
        let out = retest(f, &on(&url, &["run", "--list", "--partition", &format!("hash:{victim}/4")]), 0);
        stdout(&out).lines().map(|l| l.split('\t').next().unwrap().to_string()).collect()
    };
    assert!(victims.len() >= 2, "shard {victim} has {} tests", victims.len());
    let at = 1 + rng.below(victims.len() as u64 - 1);
    let ctx = format!("seed {seed}: shard {victim} killed after {at} of its {} tests", victims.len());
    let names = victims.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(",");
    let count = format!("SELECT count(*) FROM matrix_tests m JOIN tests t ON t.id = m.test WHERE t.name IN ({names})");
    let recorded = |url: &str| -> u64 { server.psql_on(database(url), &["-c", &count]).trim().parse().unwrap() };
    let workers: Vec<_> = (1..=4).map(|k| spawn_shard_on(f, &["--store", &url], &format!("hash:{k}/4"))).collect();
    let started = std::time::Instant::now();
    let mut workers: Vec<Option<std::process::Child>> = workers.into_iter().map(Some).collect();
    let mut killed = workers[victim as usize - 1].take().unwrap();
    loop {
        if recorded(&url) >= at {
            kill_with_its_tests(&mut killed);
            break;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "{ctx}: it never recorded {at} tests");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let status = killed.wait().unwrap();
    for (k, w) in workers.into_iter().enumerate() {
        if let Some(w) = w {
            let o = w.wait_with_output().unwrap();
            assert!(o.status.success(), "{ctx}: shard {}: {}", k + 1, stderr(&o));
        }
    }
    if status.success() {
        eprintln!("{ctx}: it finished before the kill landed");
    }
    let got = rows(&raw_matrix_on(f, &url));
    let all = rows(&want);
    for (name, row) in &got {
        assert_eq!(row, &all[name], "{ctx}: {name} is recorded as one worker records it");
    }
    let unfinished: BTreeSet<String> = victims.iter().filter(|n| !got.contains_key(*n)).cloned().collect();
    assert!(got.len() + unfinished.len() == 40, "{ctx}: the other shards recorded all of theirs");
    let v = json(&retest(f, &on(&url, &["select", "--format", "json"]), 0));
    assert_eq!(selected_names(&v), unfinished, "{ctx}: the tests it did not finish are selected");
    retest(f, &on(&url, &["run", "-j2", "--partition", &format!("hash:{victim}/4")]), 0);
    assert_eq!(raw_matrix_on(f, &url), want, "{ctx}: the rerun shard completes the baseline");

    // a dropped connection: one clear line, a non-zero exit, the shard resumable
    let fleet = example_copy();
    let f = fleet.path();
    let url = server.new_database();
    retest(f, &on(&url, &["init"]), 0);
    retest(f, &on(&url, &["build", "--", "make", "-s", "-j2"]), 0);
    let victims: BTreeSet<String> = {
        let out = retest(f, &on(&url, &["run", "--list", "--partition", "hash:1/4"]), 0);
        stdout(&out).lines().map(|l| l.split('\t').next().unwrap().to_string()).collect()
    };
    let names = victims.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(",");
    let count = format!("SELECT count(*) FROM matrix_tests m JOIN tests t ON t.id = m.test WHERE t.name IN ({names})");
    let recorded = |url: &str| -> u64 { server.psql_on(database(url), &["-c", &count]).trim().parse().unwrap() };
    let worker = spawn_shard_on(f, &["--store", &url], "hash:1/4");
    let started = std::time::Instant::now();
    while recorded(&url) < 1 {
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "the shard never recorded a test");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    server.drop_connections();
    let o = worker.wait_with_output().unwrap();
    if o.status.success() {
        eprintln!("the shard finished before its connection was dropped");
    } else {
        let err = stderr(&o);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "one error line: {err}");
        assert!(lines[0].contains("lost the connection to the store"), "{err}");
    }
    retest(f, &on(&url, &["run", "-j2", "--partition", "hash:1/4"]), 0);
    let got = rows(&raw_matrix_on(f, &url));
    assert!(victims.iter().all(|n| got.get(n) == all.get(n)), "the rerun shard records all of its tests");
}

/// The fan-in of workers that each recorded into a file, into PostgreSQL:
/// four shards recorded into copies of the build's store file, merged by
/// `retest merge … --into postgresql://…` into a database that holds no
/// build yet (it gets the shards' from the first one), give the matrix one
/// worker records into SQLite, test by test, and after a change the same
/// selection; the password is never shown. Shards of two builds are
/// refused with the reason, and nothing is written.
#[test]
fn four_shard_files_merged_into_postgresql_give_what_one_worker_records() {
    let one = example_copy();
    baseline(one.path());
    let want = raw_matrix(one.path());
    let server = retest_store::throwaway::Throwaway::start();
    let (fleet, _, _, shards) = four_shard_files();
    let f = fleet.path();
    let names: Vec<&str> = shards.iter().map(|p| p.to_str().unwrap()).collect();
    let url = server.new_database();
    retest(f, &on(&url, &["init"]), 0);
    let secret = url.replace("retest@", "retest:s3cret@");
    let mut args = vec!["merge"];
    args.extend(&names);
    args.extend(["--into", &secret]);
    let o = retest(f, &args, 0);
    let out = stdout(&o);
    assert!(out.contains("merged 4 shard(s) (40 test records)"), "{out}");
    assert!(out.contains("complete: every one of the 40 tests"), "{out}");
    assert!(!out.contains("s3cret") && !stderr(&o).contains("s3cret"), "{out}");
    assert_eq!(raw_matrix_on(f, &url), want, "four shard files merged into PostgreSQL hold what one worker records");
    apply_change(one.path(), "brake-check");
    apply_change_with(f, "brake-check", &["--store", &url]);
    let (a, b) = (selection(one.path(), &[]), selection(f, &["--store", &url]));
    assert!(!selected_names(&a).is_empty(), "the change selects tests");
    assert_eq!(b, a, "the same selection from the merged PostgreSQL store");

    // a shard of another build: refused, one line, nothing written
    retest(one.path(), &["run", "-j2", "--partition", "hash:1/4"], 0);
    let other = f.join("other.db");
    std::fs::copy(one.path().join(".retest/store.db"), &other).unwrap();
    let fresh = server.new_database();
    retest(f, &on(&fresh, &["init"]), 0);
    let e = stderr(&retest(f, &["merge", names[0], other.to_str().unwrap(), "--into", &fresh], 5));
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("controller.c") && e.contains("differ") && e.contains("one build"), "{e}");
    let count = |q: &str| server.psql_on(database(&fresh), &["-c", q]).trim().to_string();
    assert_eq!(count("SELECT count(*) FROM snapshots"), "0", "nothing written");
    assert_eq!(count("SELECT count(*) FROM runs"), "0", "nothing written");
}

/// The README's CI recipe with one PostgreSQL store for every worker, run as
/// written on the bundled example against a throwaway server: the build job,
/// four worker jobs at once (`K` of `N` = 4, `RETEST_STORE_URL` set as the CI
/// file sets it) and the selection job. The baseline is complete and one
/// worker's into SQLite; every line of the recipe is in the README's GitHub
/// Actions and GitLab CI files for it.
#[test]
fn ci_recipe_with_one_postgresql_store_runs_as_written() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let recipe = ci_recipe_named(&readme, "ci-recipe-postgres");
    let titles: Vec<&str> = recipe.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles, ["build job", "worker job K of N", "selection job"]);
    let after = &readme[readme.find("<!-- ci-recipe-postgres:end -->").unwrap()..];
    let yaml: Vec<&str> = after.split("```yaml").skip(1).take(2).map(|b| b.split("```").next().unwrap()).collect();
    assert_eq!(yaml.len(), 2, "a GitHub Actions and a GitLab CI file");
    for (title, lines) in &recipe {
        for l in lines {
            for (ci, y) in ["GitHub Actions", "GitLab CI"].iter().zip(&yaml) {
                assert!(y.lines().any(|yl| yl.trim().trim_start_matches("- ") == l), "{ci} lacks `{l}` ({title})");
            }
        }
    }

    let one = example_copy();
    baseline(one.path());
    let server = retest_store::throwaway::Throwaway::start();
    let url = server.new_database();
    let d = example_copy();
    let bin_dir = retest_bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let job = |lines: &[String], k: u32| -> std::process::Child {
        let script = format!("set -e\n{}\n", lines.join("\n"));
        Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(d.path())
            .env("PATH", &path)
            .env("CI", "1")
            .env("K", k.to_string())
            .env("N", "4")
            .env("RETEST_STORE_URL", &url)
            .env_remove("RETEST_STORE")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let done = |c: std::process::Child, what: &str| -> Output {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{what}\nstdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
        out
    };
    done(job(&recipe[0].1, 0), "build job");
    let workers: Vec<_> = (1..=4).map(|k| job(&recipe[1].1, k)).collect();
    for (k, w) in workers.into_iter().enumerate() {
        done(w, &format!("worker {}", k + 1));
    }
    let out = stdout(&done(job(&recipe[2].1, 0), "selection job"));
    assert!(out.contains("0 of 40 tests selected"), "{out}");
    assert_eq!(raw_matrix_on(d.path(), &url), raw_matrix(one.path()), "the shared store's baseline is one worker's");
}
