//! `retest select` and `retest explain`: which tests must run again, and why.

use std::io::{self, Write};
use std::path::Path;

use clap::{Args, ValueEnum};
use retest_engine::select::{Algorithm, Selection, compute, ctest_regex};
use retest_run::discover::shell_quote;

use crate::args::SelectionArgs as SelectOptions;
use crate::fail::{Fail, OrFail};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Test names, each with one line of reason (also accepted as `human`).
    #[value(alias = "human")]
    Text,
    /// `retest.selection/1`.
    Json,
    /// One name per line (for `ctest --tests-from-file` or scripts).
    Names,
    /// A regular expression for `ctest -R`.
    Ctest,
    /// Per GoogleTest binary, a command line that runs its selected cases:
    /// `BINARY --gtest_filter=Suite.A:Suite.B` (none when nothing is selected).
    GtestFilter,
}

#[derive(Args)]
pub struct SelectArgs {
    #[command(flatten)]
    pub opts: SelectOptions,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Args)]
pub struct ExplainArgs {
    /// The test to explain.
    pub test: String,
    #[command(flatten)]
    pub opts: SelectOptions,
}

pub fn run(store_opt: Option<&Path>, a: SelectArgs) -> Result<(), Fail> {
    let (mut store, root) = retest_engine::store::open(store_opt)?;
    let sel = compute(&mut store, &root, &a.opts.options())?;
    for w in &sel.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(l) = &sel.listing {
        retest_engine::report::Reporter::detail(&crate::progress::RETEST, l);
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match a.format {
        Format::Text => write_human(&sel, &mut out),
        Format::Names => sel.selected.keys().try_for_each(|n| writeln!(out, "{n}")),
        Format::Ctest => writeln!(out, "{}", ctest_regex(sel.selected.keys())),
        Format::GtestFilter => {
            let filters = sel.gtest_filters().map_err(|other| {
                Fail::usage(format!(
                    "{} selected test(s) are not GoogleTest cases run with --gtest_filter (`{}`{})",
                    other.len(),
                    other[0],
                    if other.len() > 1 { ", …" } else { "" }
                ))
                .hint("use --format names or ctest for a suite that has other tests")
            })?;
            filters.iter().try_for_each(|(binary, filter)| {
                writeln!(out, "{} {}", shell_quote(binary), shell_quote(&format!("--gtest_filter={filter}")))
            })
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &sel.to_json()).map_err(io::Error::other).and_then(|_| writeln!(out))
        }
    }
    .and_then(|_| out.flush())
    .or_fail()?;
    // the process ends here: freeing both programs' graphs one by one would take
    // longer than the selection's output did
    std::mem::forget(sel);
    Ok(())
}

fn write_human(sel: &Selection, w: &mut dyn Write) -> io::Result<()> {
    let by = if sel.algorithm == Algorithm::Dejavu { String::new() } else { format!("{}, ", sel.algorithm.name()) };
    let nothing_built = if sel.new_snapshot == Some(sel.baseline) {
        "nothing built since: definitions and files compared, "
    } else {
        ""
    };
    writeln!(
        w,
        "{} of {} tests selected ({by}baseline snapshot {}, {nothing_built}analysis {:.3} s)",
        sel.selected.len(),
        sel.suite.len(),
        sel.baseline.0,
        sel.elapsed.as_secs_f64()
    )?;
    let width = sel.selected.keys().map(|n| n.len()).max().unwrap_or(0).min(40);
    for (name, why) in &sel.selected {
        let extra = if why.len() > 1 { format!(" (+{} more)", why.len() - 1) } else { String::new() };
        writeln!(w, "  {name:<width$}  {}{extra}", why[0])?;
    }
    if !sel.removed.is_empty() {
        let n = sel.removed.len();
        writeln!(
            w,
            "{n} {} of the baseline {} no longer in the suite: {}",
            if n == 1 { "test" } else { "tests" },
            if n == 1 { "is" } else { "are" },
            sel.removed.join(", ")
        )?;
    }
    if !sel.eliminated.is_empty() {
        writeln!(
            w,
            "{} tests DejaVu selects are eliminated by {} (`retest explain TEST --algorithm {}` says why)",
            sel.eliminated.len(),
            sel.algorithm.name(),
            sel.algorithm.name()
        )?;
    }
    Ok(())
}

pub fn explain(store_opt: Option<&Path>, a: ExplainArgs) -> Result<(), Fail> {
    let (mut store, root) = retest_engine::store::open(store_opt)?;
    let sel = compute(&mut store, &root, &a.opts.options())?;
    if !sel.suite.contains(&a.test) {
        return Err(Fail::usage(format!("no test named `{}`", a.test)).hint("`retest run --list` shows the test names"));
    }
    match sel.selected.get(&a.test) {
        Some(why) => {
            println!("{} is selected:", a.test);
            for r in why {
                println!("  - {r}");
            }
        }
        None if sel.eliminated.contains_key(&a.test) => {
            println!(
                "{} is not selected by {}, though DejaVu selects it (baseline snapshot {}):",
                a.test,
                sel.algorithm.name(),
                sel.baseline.0
            );
            for e in &sel.eliminated[&a.test] {
                println!("  - {e}");
            }
        }
        None => {
            println!(
                "{} is not selected: its recorded coverage (baseline snapshot {}) traverses none of the {} dangerous edges",
                a.test,
                sel.baseline.0,
                sel.dangerous.len()
            );
            if let Some(n) = sel.file_deps(&a.test) {
                println!(
                    "its definition is unchanged, and none of the {n} files and paths it read or looked for changed ({} recorded file states of the suite changed)",
                    sel.files_changed
                );
            }
            if !sel.dangerous.is_empty() {
                println!("the changes it does not reach:");
                let mut seen = std::collections::BTreeSet::new();
                for d in &sel.dangerous {
                    let s = d.reason.to_string();
                    if seen.insert(s.clone()) {
                        println!("  - {s}");
                    }
                }
            }
        }
    }
    Ok(())
}
