//! `retest compare-algorithms`: every selection algorithm on the same change —
//! how many tests each selects, how long its analysis takes, and, when
//! `retest audit` has run on the new build, how many tests whose behaviour
//! changed each would have missed — and the change's multiply-visited nodes
//! (without them RH is optimal and Ball's algorithms select what DejaVu selects,
//! 000 §4.1; how often they occur is 000 §7's open question).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use clap::Args;
use serde::Serialize;

use retest_engine::audit::changed_in_audit;
use retest_engine::select::{Algorithm, compute};
use retest_select::Keys;
use retest_select::equiv::at;

use crate::args::{SelectionArgs, TextOrJson as Format};
use crate::fail::{Fail, OrFail};
use crate::progress;

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub opts: SelectionArgs,
    /// `text`, or `json` (`retest.compare/1`).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Serialize)]
struct Report {
    schema: &'static str,
    baseline_snapshot: i64,
    new_snapshot: Option<i64>,
    tests: usize,
    /// Tests whose behaviour changed, from the newest audit of the new build
    /// (absent when no audit ran).
    changed: Option<Vec<String>>,
    /// Old nodes paired with more than one new node during DejaVu's walk.
    multiply_visited_nodes: usize,
    multiply_visited: Vec<Located>,
    algorithms: Vec<Row>,
}

#[derive(Serialize)]
struct Located {
    procedure: String,
    file: String,
    line: u32,
    text: String,
}

#[derive(Serialize)]
struct Row {
    algorithm: &'static str,
    selected: usize,
    analysis_seconds: f64,
    /// Changed tests the algorithm did not select (absent when no audit ran).
    missed: Option<Vec<String>>,
    selected_tests: Vec<String>,
    /// Procedure pairs whose intersection graph was built (Ball's algorithms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pairs_analysed: Option<usize>,
    /// The part of `analysis_seconds` spent after DejaVu (Ball's algorithms).
    #[serde(skip_serializing_if = "Option::is_none")]
    refine_seconds: Option<f64>,
}

pub fn run(store_opt: Option<&Path>, a: CompareArgs) -> Result<(), Fail> {
    let (mut store, root) = retest_engine::store::open(store_opt)?;
    let cx = progress::context(&progress::RETEST)?;
    let base = a.opts.options();
    let mut rows = Vec::new();
    let mut head: Option<(i64, Option<i64>, usize)> = None;
    let mut multiply_visited: Vec<Located> = Vec::new();
    let mut changed: Option<BTreeMap<String, String>> = None;
    // untimed: the first selection builds and stores the edge index (TestsOnEdge)
    // and warms the page cache, which would count against the first algorithm
    compute(&mut store, &root, &retest_engine::select::SelectOptions { algorithm: Algorithm::Dejavu, ..base.clone() })?;
    for alg in Algorithm::ALL {
        let opts = retest_engine::select::SelectOptions { algorithm: alg, ..base.clone() };
        let sel = compute(&mut store, &root, &opts)?;
        if head.is_none() {
            head = Some((sel.baseline.0, sel.new_snapshot.map(|s| s.0), sel.suite.len()));
            if let Some(n) = sel.new_snapshot {
                changed = changed_in_audit(&cx, &store, sel.baseline, n)?;
            }
            let (old, new) = sel.programs();
            let keys = Keys::new(&old, &new);
            for (r, nodes) in &sel.outcome.multiply_visited {
                for n in nodes {
                    let a = at(&old, &keys, *r, *n);
                    multiply_visited.push(Located { procedure: a.procedure, file: a.file, line: a.line, text: a.text });
                }
            }
        }
        let missed =
            changed.as_ref().map(|c| c.keys().filter(|t| !sel.selected.contains_key(*t)).cloned().collect::<Vec<_>>());
        rows.push(Row {
            algorithm: alg.name(),
            selected: sel.selected.len(),
            analysis_seconds: sel.elapsed.as_secs_f64(),
            missed,
            selected_tests: sel.selected.keys().cloned().collect(),
            pairs_analysed: sel.pairs_analysed,
            refine_seconds: sel.refine_elapsed.map(|d| d.as_secs_f64()),
        });
    }
    let (baseline_snapshot, new_snapshot, tests) = head.unwrap_or((0, None, 0));
    let report = Report {
        schema: "retest.compare/1",
        baseline_snapshot,
        new_snapshot,
        tests,
        changed: changed.map(|c| c.into_keys().collect()),
        multiply_visited_nodes: multiply_visited.len(),
        multiply_visited,
        algorithms: rows,
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match a.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report).map_err(io::Error::other).and_then(|_| writeln!(out))
        }
        Format::Text => write_human(&report, &mut out),
    }
    .and_then(|_| out.flush())
    .or_fail()
}

fn write_human(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    let to = r.new_snapshot.map(|s| format!("snapshot {s}")).unwrap_or_else(|| "the sources (-p)".into());
    writeln!(w, "change: baseline snapshot {} → {to}; {} tests", r.baseline_snapshot, r.tests)?;
    match &r.changed {
        Some(c) => writeln!(w, "audit: {} tests changed behaviour", c.len())?,
        None => writeln!(w, "audit: none recorded for this build (run `retest audit` to count misses)")?,
    }
    writeln!(w, "multiply-visited nodes: {}", r.multiply_visited_nodes)?;
    for m in r.multiply_visited.iter().take(5) {
        writeln!(w, "  {}:{} in {} `{}`", m.file, m.line, m.procedure, m.text)?;
    }
    if r.multiply_visited.len() > 5 {
        writeln!(w, "  … and {} more", r.multiply_visited.len() - 5)?;
    }
    writeln!(w, "{:<10} {:>16} {:>12} {:>8}", "algorithm", "selected", "analysis", "missed")?;
    for row in &r.algorithms {
        let pct = if r.tests == 0 { 0.0 } else { 100.0 * row.selected as f64 / r.tests as f64 };
        writeln!(
            w,
            "{:<10} {:>7} ({:>5.1} %) {:>10.3} s {:>8}",
            row.algorithm,
            row.selected,
            pct,
            row.analysis_seconds,
            row.missed.as_ref().map(|m| m.len().to_string()).unwrap_or_else(|| "-".into())
        )?;
    }
    Ok(())
}
