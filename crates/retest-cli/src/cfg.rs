//! `retest cfg`: control-flow graphs of C functions.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use rayon::prelude::*;
use retest_cover::cfdg::Cfdg;
use retest_cover::mcdc;
use retest_graph::Cfg;
use retest_graph::Unit as TuAnalysis;
use retest_graph::dot::{DotOptions, write_cfg};
use retest_graph::text::write_text;
use retest_lang_c::TuJob;
use retest_lang_c::project::{own_files, project_root, read_compile_commands};
use serde::Serialize;

use crate::fail::{Fail, OrFail};
use crate::progress;

#[derive(Args)]
pub struct CfgArgs {
    /// C or C++ source file to analyse (or use -p).
    #[arg(required_unless_present = "project")]
    file: Option<PathBuf>,
    /// Analyse every C and C++ translation unit of a compilation database.
    #[arg(short = 'p', long = "project", value_name = "compile_commands.json", conflicts_with = "file")]
    project: Option<PathBuf>,
    /// Only this function.
    #[arg(long)]
    function: Option<String>,
    /// Statement level (one predicate per decision, as DejaVu uses) or condition
    /// level (one node per condition of && / || / !, as compilers and MC/DC use).
    #[arg(long, value_enum, default_value_t = Level::Statement)]
    level: Level,
    /// Control-flow decision graphs (Kauffman et al. §V): the condition-level CFG
    /// with its decisions — DOT clusters `Decision N`, a line per decision in
    /// text, `decisions` in JSON. Implies --level condition.
    #[arg(long)]
    cfdg: bool,
    /// Output format. With -p and no --function, `text` prints a summary.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Compiler used as the preprocessor for FILE (default: $CC, else cc).
    #[arg(long, value_name = "CC")]
    cc: Option<String>,
    /// Compiler flags for FILE (include paths, macros, -std=...), after `--`.
    #[arg(last = true, value_name = "FLAGS")]
    flags: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Level {
    Statement,
    Condition,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Dot,
    Json,
}

pub fn run(a: CfgArgs) -> Result<(), Fail> {
    let mut a = a;
    if a.cfdg {
        a.level = Level::Condition;
    }
    let (units, syntax_warnings): Analysed = match (&a.file, &a.project) {
        (Some(file), None) => {
            if !file.exists() {
                return Err(
                    Fail::new(format!("{}: no such file", file.display())).hint("give the path of a C source file")
                );
            }
            let cpp = retest_lang_c::driver::is_cpp_source(&file.to_string_lossy());
            let (var, default) = if cpp { ("CXX", "c++") } else { ("CC", "cc") };
            let cc = a.cc.clone().or_else(|| std::env::var(var).ok()).unwrap_or_else(|| default.to_string());
            let dir = std::env::current_dir().or_fail()?;
            let job = TuJob::new(cc, &a.flags, file.clone(), dir.clone());
            let tu = job
                .analyze(&own_files(None, dir))
                .or_fail_hint("pass the file's compiler flags after `--` (e.g. -- -Iinclude -DNDEBUG)")?;
            let warning = syntax_warning(&job, &tu);
            (vec![(file.clone(), tu.unit)], warning.into_iter().collect())
        }
        (None, Some(db)) => analyze_project(db)?,
        _ => {
            return Err(Fail::usage("give either a source file or -p compile_commands.json"));
        }
    };

    let selected: Vec<(&Path, &TuAnalysis, &retest_graph::Procedure)> = units
        .iter()
        .flat_map(|(p, tu)| tu.procedures.iter().map(move |f| (p.as_path(), tu, f)))
        .filter(|(_, _, f)| a.function.as_deref().is_none_or(|n| n == f.name))
        .collect();
    if let Some(name) = &a.function
        && selected.is_empty()
    {
        let mut names: Vec<&str> =
            units.iter().flat_map(|(_, tu)| tu.procedures.iter().map(|f| f.name.as_str())).collect();
        names.sort();
        names.dedup();
        let shown: Vec<&str> = names.iter().take(12).copied().collect();
        return Err(Fail::new(format!("no function named `{name}`")).hint(format!(
            "functions defined here: {}{}",
            shown.join(", "),
            if names.len() > shown.len() { ", …" } else { "" }
        )));
    }

    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let summary = a.project.is_some() && a.function.is_none() && a.format == Format::Text;
    let res = if summary {
        write_summary(&units, &mut out)
    } else {
        match a.format {
            Format::Text => selected.iter().try_for_each(|(_, tu, f)| {
                if let Some(r) = &f.unanalysable {
                    writeln!(out, "# {} is unanalysable: {r}", f.name)?;
                }
                let name = |i: u32| tu.files[i as usize].path.clone();
                write_text(pick(f, a.level), Some(&name), &mut out)?;
                if a.cfdg {
                    write_decisions(f, &mut out)?;
                }
                Ok(())
            }),
            Format::Dot => selected.iter().try_for_each(|(_, tu, f)| {
                let name = |i: u32| tu.files[i as usize].path.clone();
                let clusters = if a.cfdg { Cfdg::for_procedure(f).clusters() } else { Vec::new() };
                let opts = DotOptions { file_name: Some(&name), clusters, ..Default::default() };
                write_cfg(pick(f, a.level), &opts, &mut out)
            }),
            Format::Json => {
                let doc = json_doc(&units, a.function.as_deref(), a.level, a.cfdg);
                serde_json::to_writer_pretty(&mut out, &doc).map_err(io::Error::other).and_then(|_| writeln!(out))
            }
        }
    };
    res.and_then(|_| out.flush()).or_fail()?;
    // problems go to stderr so that the graph output stays clean
    for w in &syntax_warnings {
        eprintln!("warning: {w}");
    }
    for (path, tu) in &units {
        for p in &tu.problems {
            let at = p
                .span
                .map(|s| format!("{}:{}", tu.file_path(&s), s.line))
                .unwrap_or_else(|| path.display().to_string());
            eprintln!("warning: {at}: {}", p.message);
        }
    }
    Ok(())
}

/// One line per decision of `f`'s CFDG: its conditions, expression and successors.
fn write_decisions(f: &retest_graph::Procedure, out: &mut dyn Write) -> io::Result<()> {
    let cfdg = Cfdg::for_procedure(f);
    writeln!(out, "cfdg {} ({} decisions)", f.name, cfdg.decisions.len())?;
    for (i, d) in cfdg.decisions.iter().enumerate() {
        let ids = |v: &[retest_graph::NodeId]| v.iter().map(|n| format!("n{}", n.0)).collect::<Vec<_>>().join(" ");
        let texts: Vec<String> = d.conditions.iter().map(|&c| f.cond.node(c).text.clone()).collect();
        let expr =
            mcdc::decision_structure(&f.cond, d).map(|e| e.render(&texts)).unwrap_or_else(|e| format!("? ({e})"));
        let line = f.cond.node(d.entry).span.map(|s| s.line).unwrap_or(0);
        writeln!(
            out,
            "  Decision {i} line {line}: {} `{expr}` true -> {} false -> {}{}",
            ids(&d.conditions),
            ids(&d.targets(true)),
            ids(&d.targets(false)),
            if d.well_formed { "" } else { " (not well formed)" }
        )?;
    }
    Ok(())
}

fn pick(f: &retest_graph::Procedure, level: Level) -> &Cfg {
    match level {
        Level::Statement => &f.stmt,
        Level::Condition => &f.cond,
    }
}

/// When the parser met a syntax error in the unit's own code and the compiler
/// rejects the source too: where and what (the compiler's first error), and
/// what to do. Nothing when the compiler accepts it (the parser's misreading
/// of valid code is told by the unit's problems).
fn syntax_warning(job: &TuJob, tu: &retest_lang_c::TuAnalysis) -> Option<String> {
    let span = tu.syntax_error?;
    let (at, what) = match job.check_syntax() {
        Ok(None) => return None,
        Ok(Some(e)) => (
            e.at.unwrap_or_else(|| job.source_path().display().to_string()),
            format!("the compiler rejects this code ({})", e.message),
        ),
        // the compiler that preprocessed the unit cannot be run again: the parser's word
        Err(_) => (format!("{}:{}:{}", tu.unit.file_path(&span), span.line, span.col), "syntax error".into()),
    };
    Some(format!(
        "{at}: {what}; the graph shows retest's guess at what does not parse — fix the error and run `retest cfg` again"
    ))
}

/// Analysed units, each with its source's path, and the warnings of those
/// whose code does not compile ([`syntax_warning`]).
type Analysed = (Vec<(PathBuf, TuAnalysis)>, Vec<String>);

fn analyze_project(db: &Path) -> Result<Analysed, Fail> {
    let cmds = read_compile_commands(db).or_fail()?;
    let jobs: Vec<TuJob> = cmds.iter().flat_map(TuJob::from_compile_command).collect();
    if jobs.is_empty() {
        return Err(Fail::new(format!("{}: no C compile commands", db.display()))
            .hint("generate the database with a build that compiles C (e.g. `bear -- make`, CMAKE_EXPORT_COMPILE_COMMANDS=ON)"));
    }
    let root = project_root(db, &cmds);
    let pb = progress::bar(jobs.len() as u64, "analysing");
    // the units mostly include the same headers: each run of them is
    // analysed once
    let regions = retest_lang_c::region::RegionsInMemory::default();
    let results: Vec<Result<_, Fail>> = jobs
        .par_iter()
        .map(|job| {
            let own = own_files(root.clone(), job.directory.clone());
            let r = job
                .analyze_with(&own, &regions)
                .map(|tu| (job.source_path(), syntax_warning(job, &tu), tu.unit))
                .or_fail();
            pb.inc(1);
            r
        })
        .collect();
    pb.finish_and_clear();
    let (mut units, mut warnings) = (Vec::new(), Vec::new());
    for r in results {
        match r {
            Ok((path, warning, unit)) => {
                units.push((path, unit));
                warnings.extend(warning);
            }
            // one unit that does not preprocess is reported, the others still analysed
            Err(f) => eprintln!("warning: {}", f.what),
        }
    }
    Ok((units, warnings))
}

fn write_summary(units: &[(PathBuf, TuAnalysis)], out: &mut dyn Write) -> io::Result<()> {
    let (mut fns, mut nodes, mut edges, mut unan) = (0usize, 0usize, 0usize, 0usize);
    for (path, tu) in units {
        let n: usize = tu.procedures.iter().map(|f| f.stmt.node_count()).sum();
        let bad: Vec<_> = tu.procedures.iter().filter(|f| f.unanalysable.is_some()).collect();
        writeln!(
            out,
            "{}: {} functions, {} nodes{}",
            path.display(),
            tu.procedures.len(),
            n,
            if bad.is_empty() { String::new() } else { format!(", {} unanalysable", bad.len()) }
        )?;
        for f in bad {
            writeln!(out, "  unanalysable {}: {}", f.name, f.unanalysable.as_deref().unwrap_or(""))?;
        }
        fns += tu.procedures.len();
        nodes += n;
        edges += tu.procedures.iter().map(|f| f.stmt.edge_count()).sum::<usize>();
        unan += tu.procedures.iter().filter(|f| f.unanalysable.is_some()).count();
    }
    writeln!(
        out,
        "total: {} translation units, {fns} functions, {nodes} nodes, {edges} edges, {unan} unanalysable",
        units.len()
    )
}

/// `retest cfg --format json`, schema `retest.cfg/1`.
#[derive(Serialize)]
struct JsonDoc<'a> {
    schema: &'static str,
    level: &'static str,
    translation_units: Vec<JsonTu<'a>>,
}

#[derive(Serialize)]
struct JsonTu<'a> {
    file: String,
    functions: Vec<JsonFn<'a>>,
    problems: Vec<JsonProblem>,
}

#[derive(Serialize)]
struct JsonFn<'a> {
    name: &'a str,
    file: Option<&'a str>,
    line: Option<u32>,
    #[serde(rename = "static")]
    is_static: bool,
    unanalysable: Option<&'a str>,
    entry: u32,
    exit: u32,
    nodes: Vec<JsonNode<'a>>,
    edges: Vec<JsonEdge>,
    /// With --cfdg: the decisions (Kauffman et al. §V).
    #[serde(skip_serializing_if = "Option::is_none")]
    decisions: Option<Vec<JsonDecision>>,
}

#[derive(Serialize)]
struct JsonDecision {
    id: usize,
    line: Option<u32>,
    entry: u32,
    /// condition nodes in evaluation order
    conditions: Vec<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    interstitial: Vec<u32>,
    #[serde(rename = "true")]
    when_true: Vec<u32>,
    #[serde(rename = "false")]
    when_false: Vec<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expression: Option<String>,
    well_formed: bool,
}

fn json_decisions(f: &retest_graph::Procedure) -> Vec<JsonDecision> {
    let cfdg = Cfdg::for_procedure(f);
    let ids = |v: &[retest_graph::NodeId]| v.iter().map(|n| n.0).collect::<Vec<_>>();
    cfdg.decisions
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let texts: Vec<String> = d.conditions.iter().map(|&c| f.cond.node(c).text.clone()).collect();
            JsonDecision {
                id: i,
                line: f.cond.node(d.entry).span.map(|s| s.line),
                entry: d.entry.0,
                conditions: ids(&d.conditions),
                interstitial: ids(&d.interstitial),
                when_true: ids(&d.targets(true)),
                when_false: ids(&d.targets(false)),
                expression: mcdc::decision_structure(&f.cond, d).ok().map(|e| e.render(&texts)),
                well_formed: d.well_formed,
            }
        })
        .collect()
}

#[derive(Serialize)]
struct JsonNode<'a> {
    id: u32,
    kind: &'static str,
    text: &'a str,
    file: Option<&'a str>,
    line: Option<u32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    calls: &'a [String],
}

#[derive(Serialize)]
struct JsonEdge {
    id: u32,
    from: u32,
    to: u32,
    label: String,
}

#[derive(Serialize)]
struct JsonProblem {
    file: Option<String>,
    line: Option<u32>,
    message: String,
}

fn json_doc<'a>(units: &'a [(PathBuf, TuAnalysis)], function: Option<&str>, level: Level, cfdg: bool) -> JsonDoc<'a> {
    let translation_units = units
        .iter()
        .map(|(path, tu)| {
            let file_of = |i: u32| tu.files.get(i as usize).map(|f| f.path.as_str());
            let functions = tu
                .procedures
                .iter()
                .filter(|f| function.is_none_or(|n| n == f.name))
                .map(|f| {
                    let g = pick(f, level);
                    JsonFn {
                        name: &f.name,
                        file: f.span.and_then(|s| file_of(s.file)),
                        line: f.span.map(|s| s.line),
                        is_static: f.is_static,
                        unanalysable: f.unanalysable.as_deref(),
                        entry: g.entry().0,
                        exit: g.exit().0,
                        nodes: g
                            .nodes()
                            .map(|(id, n)| JsonNode {
                                id: id.0,
                                kind: n.kind.as_str(),
                                text: &n.text,
                                file: n.span.and_then(|s| file_of(s.file)),
                                line: n.span.map(|s| s.line),
                                calls: &n.calls,
                            })
                            .collect(),
                        edges: g
                            .edges()
                            .map(|(id, e)| JsonEdge {
                                id: id.0,
                                from: e.src.0,
                                to: e.dst.0,
                                label: e.label.to_string(),
                            })
                            .collect(),
                        decisions: cfdg.then(|| json_decisions(f)),
                    }
                })
                .collect();
            JsonTu {
                file: path.display().to_string(),
                functions,
                problems: tu
                    .problems
                    .iter()
                    .map(|p| JsonProblem {
                        file: p.span.map(|s| tu.file_path(&s).to_string()),
                        line: p.span.map(|s| s.line),
                        message: p.message.clone(),
                    })
                    .collect(),
            }
        })
        .collect();
    JsonDoc {
        schema: "retest.cfg/1",
        level: match level {
            Level::Statement => "statement",
            Level::Condition => "condition",
        },
        translation_units,
    }
}
