//! Analysis of one preprocessed translation unit: a CFG pair for every function
//! defined in the project's own files, the declarations outside functions, and
//! what selection needs to reason about calls (address-taken and `noreturn`
//! functions).
//!
//! The front end never fails on a file: syntax errors and unsupported constructs
//! become [`Problem`]s, and a function that cannot be built exactly is marked
//! unanalysable.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::flat::Node as Ts;
use fixedbitset::FixedBitSet;
use retest_graph::coverage::{Probe, derive_probes};
use retest_graph::{DeclKind, Declaration, NodeId, Problem, Procedure, Span, Unit};

use crate::build::{Definition, Site, TuFacts, build_function};
use crate::decls;
use crate::preprocess::{Preprocessed, SourceFile};
use crate::region::{self, Placed, Region, Regions};
use crate::syntax::{self, declarator_name, kind_of, src_text};
use crate::toplevel::{self, Item, ItemKind};

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
    pub(crate) completes: Vec<FixedBitSet>,
    /// The unit is C++ (its instrumented text is compiled as preprocessed C++).
    pub cpp: bool,
    /// Per procedure: its probes store only outside constant evaluation
    /// (`crate::build::Evaluation`).
    pub guarded: Vec<bool>,
    /// Where the parser first met a syntax error in the project's own code
    /// (an `ERROR` or a token it inserted), if it did: the graph there is the
    /// parser's guess. Whether the compiler agrees is for
    /// [`crate::TuJob::check_syntax`] to say.
    pub syntax_error: Option<Span>,
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
pub fn parse(text: &str) -> crate::flat::Tree {
    parse_ranges(text, &[])
}

/// Parses the text outside the byte ranges `skip` (ascending, disjoint), as
/// if they were not there; offsets, rows and columns stay the text's.
fn parse_outside(text: &str, lines: &Lines, skip: &[(usize, usize)]) -> crate::flat::Tree {
    if skip.is_empty() {
        return parse(text);
    }
    let mut ranges = Vec::new();
    let mut at = 0;
    for &(start, end) in skip {
        if start > at {
            ranges.push(lines.range(at, start));
        }
        at = end;
    }
    if at < text.len() {
        ranges.push(lines.range(at, text.len()));
    }
    if ranges.is_empty() {
        // nothing left to parse (no range would mean the whole text)
        return parse("");
    }
    parse_ranges(text, &ranges)
}

/// Parses only the bytes of `ranges` with tree-sitter-c ([`syntax::parse_in`]).
fn parse_ranges(text: &str, ranges: &[tree_sitter::Range]) -> crate::flat::Tree {
    syntax::parse_in(crate::flat::Grammar::C, text, ranges)
}

/// Byte offsets to tree-sitter points.
pub(crate) struct Lines(pub(crate) Vec<usize>);

impl Lines {
    pub(crate) fn new(src: &[u8]) -> Lines {
        let mut starts = vec![0];
        starts.extend(src.iter().enumerate().filter(|(_, c)| **c == b'\n').map(|(i, _)| i + 1));
        Lines(starts)
    }

    pub(crate) fn point(&self, byte: usize) -> tree_sitter::Point {
        let row = self.0.partition_point(|&s| s <= byte) - 1;
        tree_sitter::Point { row, column: byte - self.0[row] }
    }

    pub(crate) fn range(&self, start: usize, end: usize) -> tree_sitter::Range {
        tree_sitter::Range {
            start_byte: start,
            end_byte: end,
            start_point: self.point(start),
            end_point: self.point(end),
        }
    }
}

/// The items that share a byte with `[start, end)`.
fn overlapping_items(items: &[Item], start: usize, end: usize) -> impl Iterator<Item = usize> + '_ {
    let from = items.partition_point(|it| it.end <= start);
    (from..items.len()).take_while(move |&i| items[i].start < end)
}

/// The first item `n` lies within. Items come in source order and do not
/// overlap ([`toplevel::items`]), so this is a binary search: the analysis asks
/// it for every top-level node, and a linear scan made the front end's time
/// grow with the square of the number of items.
fn item_of(items: &[Item], n: Ts<'_>) -> Option<usize> {
    let (start, end) = (n.start_byte(), n.end_byte());
    let from = items.partition_point(|it| it.end < start);
    (from..items.len()).take_while(|&i| items[i].start <= start).find(|&i| end <= items[i].end)
}

/// Whether a top-level node of the whole-unit parse can be trusted: it lies
/// inside one item and is what the item is — the item's function definition
/// with the same body, or, in a declaration item, a node without errors.
fn trusted(n: Ts<'_>, items: &[Item], src: &[u8]) -> bool {
    let Some(it) = item_of(items, n).map(|i| &items[i]) else {
        // white space or a comment between items is fine; anything else spans items
        return matches!(kind_of(n), "comment") || n.end_byte() == n.start_byte();
    };
    match &it.kind {
        ItemKind::Function { .. } => reads_whole(n, it, src),
        ItemKind::Declaration => !(syntax::has_syntax_error(n, src) || syntax::has_missing(n, src)),
        ItemKind::Stray { .. } => false,
    }
}

/// Whether `n` is the function definition of item `it`, read whole: the same
/// body, a declarator that declares a function, and the same name. tree-sitter
/// reads `static f(a) { … }` (implicit `int`) as the type `f` and the declarator
/// `(a)`: a definition of `a` that is not a function.
fn reads_whole(n: Ts<'_>, it: &Item, src: &[u8]) -> bool {
    let ItemKind::Function { name, body_open, body_close, .. } = &it.kind else { return false };
    kind_of(n) == "function_definition"
        && n.child_by_field_name("body").is_some_and(|b| b.start_byte() == *body_open && b.end_byte() == body_close + 1)
        && n.child_by_field_name("declarator").is_some_and(|d| {
            decls::declares_function(d) && name.as_ref().is_none_or(|m| declarator_name(d, src).as_ref() == Some(m))
        })
}

/// The items to parse on their own: those the whole-unit parse got wrong, and
/// with them every item a dropped node reaches into (a node that spans items
/// goes, so every item it touches is parsed again).
fn damaged_items(top: &[Ts<'_>], items: &[Item], src: &[u8]) -> Vec<bool> {
    let mut damaged = vec![false; items.len()];
    let overlapping = |n: Ts<'_>| overlapping_items(items, n.start_byte(), n.end_byte());
    for n in top {
        if !trusted(*n, items, src) {
            for i in overlapping(*n) {
                damaged[i] = true;
            }
        }
    }
    loop {
        let mut grew = false;
        for n in top {
            if overlapping(*n).any(|i| damaged[i]) {
                for i in overlapping(*n) {
                    grew |= !std::mem::replace(&mut damaged[i], true);
                }
            }
        }
        if !grew {
            return damaged;
        }
    }
}

/// Analyses a preprocessed translation unit. `is_own(file)` says whether functions
/// defined in `file` belong to the project (and get CFGs).
///
/// The unit is parsed whole; where that parse went wrong (a node that is not
/// what the unit's top-level structure, [`toplevel::items`], says is there),
/// each item of the region is parsed again on its own, so a syntax error costs
/// at most the one definition that contains it. Old-style definitions the
/// grammar cannot read whole are put back together from their pieces.
pub fn analyze(pre: &Preprocessed, is_own: &dyn Fn(&SourceFile) -> bool) -> TuAnalysis {
    analyze_in(pre, is_own, None)
}

/// [`analyze`], with the header regions `regions` keeps taken from
/// there (and those it does not, kept): the same analysis, without parsing
/// again what other units included before ([`crate::region`]).
pub fn analyze_with(pre: &Preprocessed, is_own: &dyn Fn(&SourceFile) -> bool, regions: &dyn Regions) -> TuAnalysis {
    analyze_in(pre, is_own, Some(regions))
}

/// Without `regions`, the unit is analysed whole and no run of headers is
/// told apart: what [`analyze_with`] must equal.
fn analyze_in(pre: &Preprocessed, is_own: &dyn Fn(&SourceFile) -> bool, regions: Option<&dyn Regions>) -> TuAnalysis {
    let src = pre.text.as_bytes();
    let lines = Lines::new(src);
    // whether each file is the project's, asked once per file (`is_own` may
    // resolve paths on the file system)
    let own_file: Vec<bool> = pre.files.iter().map(is_own).collect();
    let all_items = toplevel::items(src);
    // runs of header items: those kept are left out of the parse and
    // of every walk below, the others are analysed and kept
    let runs = match regions {
        Some(_) => region::runs(pre, &all_items, &lines.0, &own_file),
        None => Vec::new(),
    };
    let kept: Vec<Option<(Region, Vec<Placed>)>> = runs
        .iter()
        .map(|r| {
            let g = regions?.region(&r.key)?;
            let decls = g.placed_in(pre, r.start)?;
            Some((g, decls))
        })
        .collect();
    let mut left_out = vec![false; all_items.len()];
    for (r, _) in runs.iter().zip(&kept).filter(|(_, k)| k.is_some()) {
        left_out[r.items.clone()].fill(true);
    }
    let items: Vec<Item> = all_items.into_iter().zip(&left_out).filter(|(_, out)| !**out).map(|(it, _)| it).collect();
    let skip: Vec<(usize, usize)> =
        runs.iter().zip(&kept).filter(|(_, k)| k.is_some()).map(|(r, _)| (r.start, r.end)).collect();
    let tree = parse_outside(&pre.text, &lines, &skip);
    // the run (analysed, not kept) a byte of the text lies in
    let run_at = |byte: usize| -> Option<usize> {
        let i = runs.partition_point(|r| r.end <= byte);
        (i < runs.len() && runs[i].start <= byte && kept[i].is_none()).then_some(i)
    };
    let mut fresh: Vec<Region> = runs.iter().map(|_| Region::default()).collect();
    let unit_top: Vec<Ts<'_>> = {
        let root = tree.root_node();
        let mut c = root.walk();
        root.children(&mut c).collect()
    };
    let damaged = damaged_items(&unit_top, &items, src);
    let item_trees: Vec<crate::flat::Tree> = (0..items.len())
        .filter(|&i| damaged[i])
        .map(|i| parse_ranges(&pre.text, &[lines.range(items[i].start, items[i].end)]))
        .collect();
    // the unit's top-level nodes: the whole-unit parse's, and each damaged item's own
    let mut top: Vec<Ts<'_>> = unit_top
        .iter()
        .copied()
        .filter(|n| !overlapping_items(&items, n.start_byte(), n.end_byte()).any(|i| damaged[i]))
        .collect();
    for t in &item_trees {
        let root = t.root_node();
        let mut c = root.walk();
        top.extend(root.children(&mut c));
    }
    top.sort_by_key(|n| (n.start_byte(), std::cmp::Reverse(n.end_byte())));

    // function definitions: the parser's, or put together from the pieces of a
    // function item; a body the item's parse did not show as a block is parsed
    // on its own
    let item_of = |n: Ts<'_>| item_of(&items, n);
    let whole: BTreeSet<usize> = top
        .iter()
        .filter(|n| kind_of(**n) == "function_definition")
        .filter_map(|n| {
            let i = item_of(*n)?;
            reads_whole(*n, &items[i], src).then_some(i)
        })
        .collect();
    let is_piece = |n: Ts<'_>| item_of(n).is_some_and(|i| items[i].is_function() && !whole.contains(&i));
    let body_of = |i: usize| -> Option<(usize, usize)> {
        match items[i].kind {
            ItemKind::Function { body_open, body_close, .. } => Some((body_open, body_close)),
            _ => None,
        }
    };
    // top-level blocks by their braces (a block at file scope is a body the
    // parse separated from its head)
    fn blocks_of<'t>(nodes: &[Ts<'t>]) -> HashMap<(usize, usize), Ts<'t>> {
        let mut blocks = HashMap::new();
        for n in nodes.iter().filter(|n| kind_of(**n) == "compound_statement" && n.end_byte() > n.start_byte()) {
            blocks.entry((n.start_byte(), n.end_byte() - 1)).or_insert(*n);
        }
        blocks
    }
    let top_blocks = blocks_of(&top);
    let body_trees: Vec<crate::flat::Tree> = (0..items.len())
        .filter(|&i| items[i].is_function() && !whole.contains(&i))
        .filter_map(body_of)
        .filter(|braces| !top_blocks.contains_key(braces))
        .map(|(open, close)| parse_ranges(&pre.text, &[lines.range(open, close + 1)]))
        .collect();
    let body_top: Vec<Ts<'_>> = body_trees
        .iter()
        .flat_map(|t| {
            let root = t.root_node();
            let mut c = root.walk();
            root.children(&mut c).collect::<Vec<_>>()
        })
        .collect();
    let body_blocks = blocks_of(&body_top);

    let is_own = |f: &SourceFile| match pre.files.iter().position(|g| std::ptr::eq(g, f)) {
        Some(i) => own_file[i],
        None => is_own(f),
    };
    let is_own = &is_own;
    let locate = |row: u32| pre.map.lookup(row);
    let span_at = |start: tree_sitter::Point, end: tree_sitter::Point| pre.span_at(start, end);
    let span_of = |n: Ts<'_>| span_at(n.start_position(), n.end_position());
    let file_at = |row: usize| pre.file_at(row);
    let file_of = |n: Ts<'_>| file_at(n.start_position().row);
    let own = |n: Ts<'_>| file_of(n).is_some_and(is_own);
    let syntax_error = syntax::first_error(tree.root_node(), src, &own).and_then(span_of);

    // noreturn functions declared anywhere in the unit, functions declared
    // `const` or `pure` (they return), and file-scope typedef names
    let mut noreturn = BTreeSet::new();
    let mut returning = BTreeSet::new();
    let mut typedefs = BTreeSet::new();
    for n in top.iter().filter(|n| !is_piece(**n)) {
        let (nr, rt, td) = match run_at(n.start_byte()) {
            Some(r) => {
                let g = &mut fresh[r];
                (&mut g.noreturn, &mut g.returning, &mut g.typedefs)
            }
            None => (&mut noreturn, &mut returning, &mut typedefs),
        };
        decls::noreturn_names(*n, src, nr);
        decls::returning_names(*n, src, rt);
        decls::typedef_names(*n, src, td);
    }
    for g in fresh.iter().chain(kept.iter().flatten().map(|(g, _)| g)) {
        noreturn.extend(g.noreturn.iter().cloned());
        returning.extend(g.returning.iter().cloned());
        typedefs.extend(g.typedefs.iter().cloned());
    }

    // every definition, in source order
    let mut defs: Vec<Definition<'_>> = Vec::new();
    for n in top.iter().filter(|n| kind_of(**n) == "function_definition" && !is_piece(**n)) {
        let name = n.child_by_field_name("declarator").and_then(|d| declarator_name(d, src)).unwrap_or_default();
        defs.push(Definition::of_node(*n, name));
    }
    for (i, it) in items.iter().enumerate() {
        let ItemKind::Function { name, body_open, body_close, params, .. } = &it.kind else { continue };
        if whole.contains(&i) {
            continue;
        }
        // the head: the pieces before the body, or the head of a definition the
        // parser ended early
        let mut pieces: Vec<Ts<'_>> = Vec::new();
        let mut declarator = None;
        let first = top.partition_point(|n| n.start_byte() < it.start);
        for n in top[first..].iter().copied().take_while(|n| n.start_byte() < *body_open) {
            if n.end_byte() <= *body_open {
                pieces.push(n);
            } else if kind_of(n) == "function_definition" {
                let mut c = n.walk();
                pieces.extend(n.children(&mut c).filter(|k| k.end_byte() <= *body_open));
                declarator = n.child_by_field_name("declarator");
            }
        }
        let body =
            top_blocks.get(&(*body_open, *body_close)).or_else(|| body_blocks.get(&(*body_open, *body_close))).copied();
        let unreadable = match (&name, body) {
            (None, _) => Some("cannot tell the name this definition declares".to_string()),
            (_, None) => Some(format!(
                "cannot parse the body: `{}`",
                first_chars(&String::from_utf8_lossy(&src[*body_open..(*body_close + 1).min(src.len())]), 60)
            )),
            _ => None,
        };
        defs.push(Definition {
            name: name.clone().unwrap_or_else(|| format!("<definition at byte {}>", it.start)),
            head: pieces,
            declarator,
            body,
            braces: Some((*body_open, *body_close)),
            params: params.clone(),
            range: lines.range(it.start, it.end),
            unreadable,
            class: None,
            evaluation: crate::build::Evaluation::RunTime,
        });
    }
    defs.sort_by_key(|d| d.range.start_byte);

    // every declaration with the order it is listed in: function definitions'
    // first, then the other top-level nodes', each in text order
    let mut placed: Vec<Placed> = Vec::new();
    let mut place = |phase: u8, at: usize, d: Declaration, fresh: &mut Vec<Region>| {
        if let Some(r) = run_at(at) {
            fresh[r].add(phase, at - runs[r].start, d.clone(), pre);
        }
        placed.push((phase, at, d));
    };
    let mut functions = Vec::new();
    let mut sites = Vec::new();
    let mut problems = Vec::new();
    let mut unattributed_error = None;
    let mut fn_names = BTreeSet::new();
    let mut completes = Vec::new();
    let hidden = |r: std::ops::Range<usize>| pre.attributes_within(r);
    let no_classes = BTreeMap::new();
    let facts = TuFacts {
        src,
        locate: &locate,
        noreturn: &noreturn,
        typedefs: &typedefs,
        hidden_attributes: &hidden,
        cpp: false,
        constexpr_statements: false,
        classes: &no_classes,
    };
    for d in &defs {
        let span = span_at(d.range.start_point, d.range.end_point);
        let file = file_at(d.range.start_point.row);
        let system = file.is_none_or(|f| f.system);
        let own = file.is_some_and(is_own);
        place(0, d.range.start_byte, function_declaration(d, pre, span, system, !own), &mut fresh);
        fn_names.insert(d.name.clone());
        if !own || d.name.is_empty() {
            continue;
        }
        // a function of the project's in a header: built at its place in
        // this unit, so its region is analysed in every unit
        if let Some(r) = run_at(d.range.start_byte) {
            fresh[r].not_kept = true;
        }
        let is_static = head_is_static(d, src);
        let cfgs = build_function(d, &facts);
        problems.extend(cfgs.problems.iter().cloned());
        sites.push(cfgs.sites);
        completes.push(cfgs.completes_unless_calls);
        functions.push(Procedure {
            name: d.name.clone(),
            is_static,
            span,
            cond: cfgs.cond,
            stmt: cfgs.stmt,
            map: cfgs.map,
            probes: cfgs.probes,
            locals: cfgs.locals,
            unanalysable: cfgs.unanalysable,
            digest: xxhash_rust::xxh3::xxh3_64(definition_text(d, src).as_bytes()),
        });
    }
    // code outside every function: a block at file scope, unbalanced braces
    for it in &items {
        if let ItemKind::Stray { why } = it.kind
            && file_at(lines.point(it.start).row).is_some_and(is_own)
        {
            if let Some(r) = run_at(it.start) {
                fresh[r].not_kept = true;
            }
            let r = lines.range(it.start, it.end);
            let p = Problem {
                span: span_at(r.start_point, r.end_point),
                message: format!(
                    "code outside any function's CFG ({why}): `{}`",
                    first_chars(&String::from_utf8_lossy(&src[it.start..it.end.min(it.start + 200)]), 60)
                ),
            };
            problems.push(p.clone());
            unattributed_error.get_or_insert(p);
        }
    }
    for n in top.iter().filter(|n| kind_of(**n) != "function_definition" && !is_piece(**n)) {
        let system = file_of(*n).is_none_or(|f| f.system);
        let mut found = Vec::new();
        decls::top_level_items(*n, src, span_of(*n), system, &|r| pre.attributes_within(r), &mut found);
        for d in found {
            place(1, n.start_byte(), d, &mut fresh);
        }
        let stray = item_of(*n).is_some_and(|i| matches!(items[i].kind, ItemKind::Stray { .. }));
        if stray || !own(*n) {
            continue;
        }
        // the project's code with an error (reported at its place below, or
        // an error the compiler may take as valid): its region is analysed
        // in every unit
        if n.has_error()
            && let Some(r) = run_at(n.start_byte())
        {
            fresh[r].not_kept = true;
        }
        if kind_of(n) == "ERROR" {
            let p = Problem {
                span: span_of(*n),
                message: format!(
                    "syntax error outside any function: `{}`",
                    first_chars(&crate::syntax::normalized(*n, src), 60)
                ),
            };
            problems.push(p.clone());
            unattributed_error.get_or_insert(p);
        } else if crate::syntax::has_syntax_error(*n, src) || crate::syntax::has_missing(*n, src) {
            problems.push(Problem {
                span: span_of(*n),
                message: format!(
                    "syntax error in a declaration: `{}`",
                    first_chars(&crate::syntax::normalized(*n, src), 60)
                ),
            });
        }
    }
    for (_, decls) in kept.iter().flatten() {
        placed.extend(decls.iter().cloned());
    }
    placed.sort_by_key(|(phase, at, _)| (*phase, *at));
    let mut decls_out: Vec<Declaration> = placed.into_iter().map(|(_, _, d)| d).collect();
    decls_out.sort_by_key(|d| d.span.map(|s| (s.file, s.line, s.col)));
    for d in &decls_out {
        if d.kind == retest_graph::DeclKind::Function {
            fn_names.extend(d.names.iter().cloned());
        }
    }
    // function names used as values: the unit's, and the regions'
    let mut uses = BTreeSet::new();
    for root in top.iter().chain(&body_top) {
        let into = match run_at(root.start_byte()) {
            Some(r) => &mut fresh[r].uses,
            None => &mut uses,
        };
        syntax::value_uses(*root, src, into);
    }
    let address_taken: Vec<String> = uses
        .iter()
        .chain(fresh.iter().chain(kept.iter().flatten().map(|(g, _)| g)).flat_map(|g| g.uses.iter()))
        .filter(|n| fn_names.contains(*n))
        .cloned()
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    for (r, g) in runs.iter().zip(&fresh) {
        if let Some(regions) = regions
            && run_at(r.start).is_some()
            && !g.not_kept
        {
            regions.keep_region(&r.key, g);
        }
    }
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
            classes: Vec::new(),
            unattributed_error,
            entry_points: crate::build::ENTRY_POINTS.iter().map(|s| s.to_string()).collect(),
            returns_twice: crate::build::RETURNS_TWICE.iter().map(|s| s.to_string()).collect(),
        },
        guarded: vec![false; sites.len()],
        sites,
        completes,
        cpp: false,
        syntax_error,
    }
}

/// Whether a definition's head declares it `static`.
fn head_is_static(d: &Definition<'_>, src: &[u8]) -> bool {
    d.head.iter().any(|k| match kind_of(k) {
        "storage_class_specifier" => src_text(*k, src) == "static",
        // the pieces of an old-style definition: `static` among the first tokens
        _ if d.declarator.is_none() => {
            let mut c = k.walk();
            kind_of(k) != "compound_statement"
                && k.children(&mut c).any(|x| kind_of(x) == "storage_class_specifier" && src_text(x, src) == "static")
        }
        _ => false,
    })
}

/// The normalised text of a whole definition (its digest's input).
fn definition_text(d: &Definition<'_>, src: &[u8]) -> String {
    let mut t = d.signature(src);
    match d.body {
        Some(b) => {
            t.push(' ');
            t.push_str(&crate::syntax::normalized(b, src));
        }
        None => {
            if let Some((open, close)) = d.braces {
                for tok in toplevel::tokens(&src[open..=close]) {
                    t.push(' ');
                    t.push_str(&String::from_utf8_lossy(&src[open + tok.start..open + tok.end]));
                }
            }
        }
    }
    t
}

/// The declaration item of a definition: its signature (so a changed signature
/// is a changed declaration of the name), and the names the head mentions.
/// A definition's declaration item: its signature; with `body` (a definition
/// the project does not own, which gets no CFG: an inline function of a
/// header reached through `-isystem`), its whole text, so that a change to
/// its body is a change of what every call of it means.
fn function_declaration(
    d: &Definition<'_>,
    pre: &Preprocessed,
    span: Option<Span>,
    system: bool,
    body: bool,
) -> Declaration {
    let src = pre.text.as_bytes();
    let mut sig = if body { definition_text(d, src) } else { d.signature(src) };
    let hidden = pre.attributes_within(d.range.start_byte..d.braces.map_or(d.range.end_byte, |b| b.0));
    if !hidden.is_empty() {
        sig.push(' ');
        sig.push_str(&hidden);
    }
    let mut mentions = BTreeSet::new();
    for h in &d.head {
        let u = crate::syntax::mentions(*h, src, &|_| false);
        mentions.extend(u.refs.into_iter().filter(|r| *r != d.name));
    }
    if body && let Some(b) = d.body {
        let u = crate::syntax::mentions(b, src, &|_| false);
        mentions.extend(u.refs.into_iter().filter(|r| *r != d.name));
    }
    Declaration {
        kind: DeclKind::Function,
        names: vec![d.name.clone()],
        text: crate::decls::sealed(sig, system),
        mentions: mentions.into_iter().collect(),
        span,
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
pub(crate) fn derive_unit_probes(
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

pub(crate) fn first_chars(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n).collect::<String>()) }
}

#[cfg(test)]
mod tests;
