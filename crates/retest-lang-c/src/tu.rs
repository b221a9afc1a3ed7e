//! Analysis of one preprocessed translation unit: a CFG pair for every function
//! defined in the project's own files, the declarations outside functions, and
//! what selection needs to reason about calls (address-taken and `noreturn`
//! functions).
//!
//! The front end never fails on a file: syntax errors and unsupported constructs
//! become [`Problem`]s, and a function that cannot be built exactly is marked
//! unanalysable.

use std::collections::{BTreeMap, BTreeSet};

use fixedbitset::FixedBitSet;
use retest_graph::coverage::{Probe, derive_probes};
use retest_graph::{NodeId, Problem, Procedure, Span, Unit};
use tree_sitter::{Node as Ts, Parser};

use crate::build::{Site, TuFacts, build_function};
use crate::decls;
use crate::preprocess::{Preprocessed, SourceFile};
use crate::syntax::{declarator_name, src_text};

/// Everything the front end learns about one translation unit: the
/// language-neutral [`Unit`], plus where each condition-level node of each
/// procedure is instrumented.
#[derive(Clone, Debug)]
pub struct TuAnalysis {
    pub unit: Unit,
    /// `sites[i][n]`: instrumentation site of node `n` of procedure `i`'s
    /// condition-level CFG (byte offsets into the preprocessed text).
    pub sites: Vec<Vec<Site>>,
    /// Per procedure, the nodes that complete once started (every call in them
    /// returns): what `derive_probes` was given.
    completes: Vec<FixedBitSet>,
}

impl TuAnalysis {
    /// Pairs the probe cells that runs set one right after the other
    /// ([`retest_graph::coverage::pair_probes`]) in every analysable
    /// procedure: the in-edge is noted in a local flag declared at the
    /// function's entry, and the condition's outcome records both. Worth it
    /// only when the compiler optimises: it keeps the flag in a register and
    /// threads the test away on each path. Without optimisation the flag is a
    /// stack slot, and one store becomes a store, a load, a test and two stores.
    pub fn pair_probes(&mut self) {
        for (i, p) in self.unit.procedures.iter_mut().enumerate() {
            let sites = &self.sites[i];
            if p.unanalysable.is_some() || !matches!(sites[p.cond.entry().index()], Site::Entry { .. }) {
                continue;
            }
            let completes = &self.completes[i];
            p.probes =
                retest_graph::coverage::pair_probes(&p.cond, &p.probes, &|n| completes.contains(n.index()), &|n| {
                    matches!(sites[n.index()], Site::Cond { .. })
                });
        }
    }
}

/// Parses preprocessed text with tree-sitter-c.
pub fn parse(text: &str) -> tree_sitter::Tree {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_c::LANGUAGE.into()).expect("tree-sitter-c ABI is compatible");
    p.parse(text, None).expect("parsing without a timeout or cancellation always yields a tree")
}

/// Analyses a preprocessed translation unit. `is_own(file)` says whether functions
/// defined in `file` belong to the project (and get CFGs).
pub fn analyze(pre: &Preprocessed, is_own: &dyn Fn(&SourceFile) -> bool) -> TuAnalysis {
    let tree = parse(&pre.text);
    let src = pre.text.as_bytes();
    let root = tree.root_node();
    let locate = |row: u32| pre.map.lookup(row);
    let span_of = |n: Ts<'_>| -> Option<Span> {
        let (file, line) = locate(n.start_position().row as u32)?;
        let end_line = match locate(n.end_position().row as u32) {
            Some((f, l)) if f == file && l >= line => l,
            _ => line,
        };
        Some(Span { file, line, col: n.start_position().column as u32 + 1, end_line })
    };
    let file_of = |n: Ts<'_>| -> Option<&SourceFile> {
        let (f, _) = locate(n.start_position().row as u32)?;
        pre.files.get(f as usize)
    };
    let own = |n: Ts<'_>| file_of(n).is_some_and(is_own);

    let top: Vec<Ts<'_>> = {
        let mut c = root.walk();
        root.children(&mut c).collect()
    };

    // noreturn functions declared anywhere in the unit, functions declared
    // `const` or `pure` (they return), and file-scope typedef names
    let mut noreturn = BTreeSet::new();
    let mut returning = BTreeSet::new();
    let mut typedefs = BTreeSet::new();
    for n in &top {
        decls::noreturn_names(*n, src, &mut noreturn);
        decls::returning_names(*n, src, &mut returning);
        decls::typedef_names(*n, src, &mut typedefs);
    }

    let mut decls_out = Vec::new();
    let mut functions = Vec::new();
    let mut sites = Vec::new();
    let mut problems = Vec::new();
    let mut unattributed_error = None;
    let mut fn_names = BTreeSet::new();
    let mut completes = Vec::new();
    let facts = TuFacts { src, locate: &locate, noreturn: &noreturn, typedefs: &typedefs };
    for n in &top {
        let system = file_of(*n).is_none_or(|f| f.system);
        decls::top_level_items(*n, src, span_of(*n), system, &|r| pre.attributes_within(r), &mut decls_out);
        match n.kind() {
            "function_definition" => {
                let name =
                    n.child_by_field_name("declarator").and_then(|d| declarator_name(d, src)).unwrap_or_default();
                fn_names.insert(name.clone());
                if !own(*n) || name.is_empty() {
                    continue;
                }
                let is_static = {
                    let mut c = n.walk();
                    n.children(&mut c).any(|k| k.kind() == "storage_class_specifier" && src_text(k, src) == "static")
                };
                let cfgs = build_function(*n, &name, &facts);
                problems.extend(cfgs.problems.iter().cloned());
                sites.push(cfgs.sites);
                completes.push(cfgs.completes_unless_calls);
                functions.push(Procedure {
                    name,
                    is_static,
                    span: span_of(*n),
                    cond: cfgs.cond,
                    stmt: cfgs.stmt,
                    map: cfgs.map,
                    probes: cfgs.probes,
                    locals: cfgs.locals,
                    unanalysable: cfgs.unanalysable,
                    digest: xxhash_rust::xxh3::xxh3_64(crate::syntax::normalized(*n, src).as_bytes()),
                });
            }
            "ERROR" => {
                if own(*n) {
                    let p = Problem {
                        span: span_of(*n),
                        message: format!(
                            "syntax error outside any function: `{}`",
                            first_chars(&crate::syntax::normalized(*n, src), 60)
                        ),
                    };
                    problems.push(p.clone());
                    unattributed_error.get_or_insert(p);
                }
            }
            _ => {
                if own(*n) && (crate::syntax::has_syntax_error(*n, src) || crate::syntax::has_missing(*n, src)) {
                    let p = Problem {
                        span: span_of(*n),
                        message: format!(
                            "syntax error in a declaration: `{}`",
                            first_chars(&crate::syntax::normalized(*n, src), 60)
                        ),
                    };
                    problems.push(p);
                }
            }
        }
    }
    for d in &decls_out {
        if d.kind == retest_graph::DeclKind::Function {
            fn_names.extend(d.names.iter().cloned());
        }
    }
    let address_taken = address_taken_functions(root, src, &fn_names);
    let declared_returning: BTreeSet<&str> =
        returning.iter().filter(|n| !noreturn.contains(*n)).map(String::as_str).collect();
    let completes = derive_unit_probes(&mut functions, &completes, &declared_returning);
    TuAnalysis {
        unit: Unit {
            files: pre.files.clone(),
            procedures: functions,
            decls: decls_out,
            address_taken,
            noreturn: noreturn.into_iter().collect(),
            problems,
            unattributed_error,
        },
        sites,
        completes,
    }
}

/// Drops the probes the others imply (`retest_graph::coverage::derive_probes`),
/// except in unanalysable functions.
/// A node completes if it does unless a call does not return, and every function
/// it calls returns: a `static` function of this unit (so no other definition can
/// be bound to the call) whose every node completes in that sense — the greatest
/// fixpoint, so recursion alone does not make a function non-returning — or a
/// function the unit declares `const` or `pure` and not `noreturn` (`declared`,
/// see [`decls::returning_names`]). Calls to anything else (other units,
/// libraries, `exit`) may not return. Returns, per procedure, the nodes that
/// complete in that sense.
fn derive_unit_probes(
    functions: &mut [Procedure],
    completes: &[Vec<bool>],
    declared: &BTreeSet<&str>,
) -> Vec<FixedBitSet> {
    let mut returns: BTreeSet<&str> = declared.clone();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for f in functions.iter().filter(|f| f.is_static) {
        *count.entry(f.name.as_str()).or_default() += 1;
    }
    for f in functions.iter() {
        if f.is_static && f.unanalysable.is_none() && count[f.name.as_str()] == 1 {
            returns.insert(f.name.as_str());
        }
    }
    let node_completes = |f: usize, n: usize, returns: &BTreeSet<&str>| {
        completes[f][n] && functions[f].cond.node(NodeId(n as u32)).calls.iter().all(|c| returns.contains(c.as_str()))
    };
    loop {
        let gone: Vec<&str> = functions
            .iter()
            .enumerate()
            .filter(|(_, f)| returns.contains(f.name.as_str()))
            .filter(|(i, f)| {
                // every node that can reach the exit must complete; the exit itself is the return
                f.cond.node_ids().any(|n| n != f.cond.exit() && !node_completes(*i, n.index(), &returns))
            })
            .map(|(_, f)| f.name.as_str())
            .collect();
        if gone.is_empty() {
            break;
        }
        for g in gone {
            returns.remove(g);
        }
    }
    let complete_nodes: Vec<FixedBitSet> = functions
        .iter()
        .enumerate()
        .map(|(i, f)| f.cond.node_ids().filter(|n| node_completes(i, n.index(), &returns)).map(|n| n.index()).collect())
        .collect();
    let derived: Vec<Vec<Probe>> = functions
        .iter()
        .zip(&complete_nodes)
        .map(|(f, completes)| match f.unanalysable {
            // a graph we could not build exactly does not justify dropping probes
            Some(_) => f.probes.clone(),
            None => derive_probes(&f.cond, &f.probes, &|n| completes.contains(n.index())),
        })
        .collect();
    for (f, p) in functions.iter_mut().zip(derived) {
        f.probes = p;
    }
    complete_nodes
}

fn first_chars(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n).collect::<String>()) }
}

/// Function names used other than as the callee of a call or in a declarator.
fn address_taken_functions(root: Ts<'_>, src: &[u8], fn_names: &BTreeSet<String>) -> Vec<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "identifier" {
            let name = src_text(n, src);
            if fn_names.contains(name) && !is_callee_or_declarator(n) {
                out.insert(name.to_string());
            }
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    out.into_iter().collect()
}

fn is_callee_or_declarator(id: Ts<'_>) -> bool {
    let Some(p) = id.parent() else { return false };
    let is_field = |f: &str| p.child_by_field_name(f).map(|x| x.id()) == Some(id.id());
    match p.kind() {
        "call_expression" => is_field("function"),
        "function_declarator"
        | "pointer_declarator"
        | "array_declarator"
        | "parenthesized_declarator"
        | "init_declarator"
        | "attributed_declarator" => is_field("declarator") || p.kind() == "parenthesized_declarator",
        "declaration" | "parameter_declaration" | "field_declaration" | "type_definition" => is_field("declarator"),
        "parenthesized_expression" => {
            // `(f)(x)` is still a direct call
            p.parent().is_some_and(|g| {
                g.kind() == "call_expression" && g.child_by_field_name("function").map(|x| x.id()) == Some(p.id())
            })
        }
        _ => false,
    }
}
