//! `retest demo`: the whole workflow on the bundled example, in a scratch
//! directory — build with the wrapper, record the baseline, apply a bundled
//! change, select with reasons, explain one test each way, run the selected
//! tests, audit the selection.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use retest_store::Store;

use crate::fail::{Fail, OrFail};
use retest_engine::run::{RunKind, RunSummary, TestSource, discover_tests, execute};
use retest_engine::select::{SelectOptions, compute};

use crate::progress::{self, Terminal};

static BUILD: Terminal = Terminal { prefix: "retest build" };

include!(concat!(env!("OUT_DIR"), "/example.rs"));

#[derive(Args)]
pub struct DemoArgs {
    /// Which bundled change to apply (a directory of examples/cruise/changes).
    #[arg(long, default_value = "brake-check")]
    change: String,
    /// Keep the scratch directory (its path is printed).
    #[arg(long)]
    keep: bool,
    /// Tests run in parallel (default: the number of CPUs).
    #[arg(short = 'j', long)]
    jobs: Option<usize>,
}

fn write_example(dir: &Path) -> Result<(), Fail> {
    for (rel, bytes) in EXAMPLE {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).or_fail()?;
        }
        std::fs::write(&p, bytes).or_fail()?;
    }
    Ok(())
}

fn changes() -> Vec<String> {
    let mut v: Vec<String> = EXAMPLE
        .iter()
        .filter_map(|(p, _)| p.strip_prefix("changes/").and_then(|r| r.split_once('/')).map(|(c, _)| c.to_string()))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Copies a change's files over the project, with modification times that make
/// `make` rebuild them.
fn apply_change(dir: &Path, change: &str) -> Result<Vec<String>, Fail> {
    let prefix = format!("changes/{change}/");
    let mut changed = Vec::new();
    // a later modification time than the build products, even within one second
    std::thread::sleep(std::time::Duration::from_millis(1100));
    for (rel, bytes) in EXAMPLE {
        if let Some(name) = rel.strip_prefix(&prefix)
            && (name.ends_with(".c") || name.ends_with(".h"))
        {
            std::fs::write(dir.join(name), bytes).or_fail()?;
            changed.push(name.to_string());
        }
    }
    Ok(changed)
}

pub fn run(a: DemoArgs) -> Result<ExitCode, Fail> {
    let scratch = std::env::temp_dir().join(format!("retest-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).or_fail()?;
    let result = demo(&scratch, &a);
    if a.keep {
        println!("\nthe demo project is kept in {}", scratch.display());
    } else {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    result
}

fn demo(dir: &Path, a: &DemoArgs) -> Result<ExitCode, Fail> {
    write_example(dir)?;
    // checked before anything runs: a bad --change is a usage error
    if !changes().contains(&a.change) {
        return Err(Fail::usage(format!("no bundled change named `{}`", a.change))
            .hint(format!("choose one of: {}", changes().join(", "))));
    }
    println!("retest demo: the bundled cruise-control example (examples/cruise), in {}", dir.display());
    let mut store = Store::init(&Store::dir_for(dir)).or_fail()?;
    let cx = progress::context(&BUILD)?;
    let make = vec!["make".to_string(), "-s".to_string(), "-j2".to_string()];

    println!("\n1. build with the instrumenting compiler wrapper: retest build -- make");
    retest_engine::build::run_build(&cx, &mut store, &make, dir, Default::default())?;
    let source = TestSource { tests: Some(dir.join("retest.toml")), ..Default::default() };
    let tests = discover_tests(&source, dir, &store)?;
    let snap1 =
        store.newest_snapshot().or_fail()?.map(|s| s.id).ok_or_else(|| Fail::new("the build recorded nothing"))?;

    println!("\n2. run all {} tests, recording each one's coverage: retest run", tests.len());
    let (_, _, full) = execute(&cx, &mut store, snap1, Some(snap1), RunKind::Full, &tests, a.jobs, None)?;
    report(&full, tests.len());
    store.seal(snap1).or_fail()?;
    store.set_baseline(snap1).or_fail()?;

    let changed = apply_change(dir, &a.change)?;
    let readme = EXAMPLE
        .iter()
        .find(|(p, _)| *p == format!("changes/{}/README.md", a.change))
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    // the README's title line says what the change does
    let summary_line = readme
        .lines()
        .find_map(|l| l.strip_prefix("# ").and_then(|t| t.split_once(": ").map(|(_, what)| what.trim())))
        .unwrap_or("");
    println!("\n3. edit: change `{}` ({}): {summary_line}", a.change, changed.join(", "));
    println!("   rebuild: retest build -- make");
    retest_engine::build::run_build(&cx, &mut store, &make, dir, Default::default())?;

    println!("\n4. select the tests the change can affect: retest select");
    let opts = SelectOptions { source: source.clone(), scoped: true, ..Default::default() };
    let sel = compute(&mut store, dir, &opts)?;
    println!(
        "   {} of {} tests selected in {:.3} s; the others cannot behave differently:",
        sel.selected.len(),
        sel.suite.len(),
        sel.elapsed.as_secs_f64()
    );
    for (i, (name, why)) in sel.selected.iter().enumerate() {
        if i == 6 {
            let rest: Vec<&Vec<String>> = sel.selected.values().skip(6).collect();
            let same = rest.iter().all(|w| w[0] == why[0]);
            println!("   … and {} more{}", rest.len(), if same { " (for the same reason)" } else { "" });
            break;
        }
        println!("   {name:<24} {}", why[0]);
    }
    println!("\n   why, one test each way: retest explain TEST");
    if let Some((name, why)) = sel.selected.iter().next() {
        println!("   {name} is selected: {}", why[0]);
    }
    if let Some(name) = sel.suite.iter().find(|t| !sel.selected.contains_key(*t)) {
        println!(
            "   {name} is not selected: its recorded coverage traverses none of the {} dangerous edges",
            sel.dangerous.len()
        );
    }

    println!("\n5. run only the selected tests: retest run --selected");
    let chosen: Vec<_> = tests.iter().filter(|t| sel.selected.contains_key(&t.name)).cloned().collect();
    let new_snap = sel.new_snapshot.ok_or_else(|| Fail::new("no new snapshot was built"))?;
    let (_, _, part) = execute(&cx, &mut store, new_snap, None, RunKind::Selected, &chosen, a.jobs, None)?;
    report(&part, chosen.len());

    println!("\n6. check the selection: retest audit (every test again, its outcome compared with the baseline's)");
    let audit = retest_engine::audit::audit(&cx, &mut store, dir, &opts, a.jobs, None)?;
    println!(
        "   {} tests changed behaviour, {} of them selected; {} missed",
        audit.changed.len(),
        audit.changed.keys().filter(|t| sel.selected.contains_key(*t)).count(),
        audit.missed.len()
    );
    let saved = if full.elapsed.as_secs_f64() > 0.0 {
        100.0 * (1.0 - part.elapsed.as_secs_f64() / full.elapsed.as_secs_f64())
    } else {
        0.0
    };
    println!(
        "\nsummary: {} of {} tests selected; the full suite took {:.2} s, the selected tests {:.2} s ({saved:.0}% less){}",
        chosen.len(),
        tests.len(),
        full.elapsed.as_secs_f64(),
        part.elapsed.as_secs_f64(),
        if part.failed.is_empty() {
            String::new()
        } else {
            format!("; the change broke {}: selection caught it", part.failed.join(", "))
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn report(s: &RunSummary, total: usize) {
    println!(
        "   {}/{} passed, {} failed, in {:.2} s{}",
        s.passed,
        total,
        s.failed.len(),
        s.elapsed.as_secs_f64(),
        if s.failed.is_empty() { String::new() } else { format!(" (failed: {})", s.failed.join(", ")) }
    );
}
