//! Header regions: the runs of a unit's top-level items that lie wholly in
//! headers — what one `#include` of the unit's source brought in — and what
//! each contributes to the unit: the headers' declarations (a system
//! header's sealed), the names they declare `noreturn`, `const` or `pure` and
//! the type names they define, and the identifiers they use as values, kept
//! under a digest of the run's text.
//!
//! Most units of a project include the same headers in the same order, and
//! those headers are most of a unit's text (82 % of zlib's `adler32.c`
//! preprocessed is system headers; Lua's units share `lobject.h`,
//! `lstate.h` and the rest). A run met again is neither parsed nor walked:
//! the unit is parsed without it (tree-sitter's included ranges, offsets
//! kept) and what it contributes is taken as kept. What a run contributes
//! depends only on what the key covers: its bytes (raw, with line markers,
//! and as parsed), from the start of its first line, the file and line it
//! starts at, and every file its lines come from with whether it is a
//! system header and whether it is the project's. A region that defines a
//! function of the project's (which gets a graph and probes at its place in
//! this unit's text), or whose project code has a syntax error or stray code
//! (problems reported at their place), is analysed in every unit and never
//! kept.
//!
//! The unit's analysis is the same with or without kept regions:
//! `a_unit_analysed_with_kept_header_regions_is_the_unit_analysed_whole`.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use retest_graph::Declaration;
use serde::{Deserialize, Serialize};

use crate::preprocess::Preprocessed;
use crate::toplevel::Item;

/// The digest a region is kept under.
pub type RegionKey = [u8; 16];

/// Changes whenever what a region keeps, or how it is computed, changes.
const FORMAT: &[u8] = b"retest header region 1";

/// A declaration with the order a unit lists it in: 0 for a function
/// definition's, 1 for any other top-level node's, then the byte offset of
/// what declares it.
pub(crate) type Placed = (u8, usize, Declaration);

/// What one run of header items contributes to a unit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    /// The files the declarations' spans name (`span.file` indexes this).
    pub files: Vec<String>,
    /// Each declaration with the order the unit lists it in: 0 for a
    /// function definition's, 1 for any other top-level node's, and the
    /// byte offset of what declares it from the run's start.
    pub decls: Vec<(u8, u32, Declaration)>,
    pub noreturn: BTreeSet<String>,
    pub returning: BTreeSet<String>,
    pub typedefs: BTreeSet<String>,
    /// Identifiers used other than as a call's callee or in a declarator.
    pub uses: BTreeSet<String>,
    /// Something of the run depends on where it stands in the unit (a
    /// definition named by its byte offset, a function of the project's, a
    /// problem): such a region is not kept.
    #[serde(skip)]
    pub not_kept: bool,
}

impl Region {
    /// Adds a declaration found at byte `offset` of the run, its span's file
    /// an index into `pre.files`.
    pub(crate) fn add(&mut self, phase: u8, offset: usize, mut d: Declaration, pre: &Preprocessed) {
        self.not_kept |= d.names.iter().any(|n| n.starts_with('<'));
        if let Some(s) = d.span.as_mut() {
            let path = &pre.files[s.file as usize].path;
            s.file = match self.files.iter().position(|f| f == path) {
                Some(i) => i as u32,
                None => {
                    self.files.push(path.clone());
                    self.files.len() as u32 - 1
                }
            };
        }
        self.decls.push((phase, offset as u32, d));
    }

    /// The region's declarations for a unit, their spans' files indexes into
    /// `pre.files`, and offsets from the start of the text; `None` when a
    /// file is not the unit's (then the run is analysed).
    pub(crate) fn placed_in(&self, pre: &Preprocessed, start: usize) -> Option<Vec<Placed>> {
        let files: Vec<u32> = self
            .files
            .iter()
            .map(|p| pre.files.iter().position(|f| &f.path == p).map(|i| i as u32))
            .collect::<Option<_>>()?;
        let mut out = Vec::with_capacity(self.decls.len());
        for (phase, offset, d) in &self.decls {
            let mut d = d.clone();
            if let Some(s) = d.span.as_mut() {
                s.file = *files.get(s.file as usize)?;
            }
            out.push((*phase, start + *offset as usize, d));
        }
        Some(out)
    }
}

/// Where regions are kept.
pub trait Regions: Sync {
    fn region(&self, key: &RegionKey) -> Option<Region>;
    fn keep_region(&self, key: &RegionKey, region: &Region);
}

/// Keeps nothing: every run is analysed.
pub struct NoRegions;

impl Regions for NoRegions {
    fn region(&self, _: &RegionKey) -> Option<Region> {
        None
    }
    fn keep_region(&self, _: &RegionKey, _: &Region) {}
}

/// Keeps regions for as long as it lives (the units of one `retest cfg`).
#[derive(Default)]
pub struct RegionsInMemory(Mutex<HashMap<RegionKey, Region>>);

impl Regions for RegionsInMemory {
    fn region(&self, key: &RegionKey) -> Option<Region> {
        self.0.lock().ok()?.get(key).cloned()
    }
    fn keep_region(&self, key: &RegionKey, region: &Region) {
        if let Ok(mut m) = self.0.lock() {
            m.entry(*key).or_insert_with(|| region.clone());
        }
    }
}

/// A run of consecutive items in headers.
pub(crate) struct Run {
    /// The items' indexes.
    pub items: std::ops::Range<usize>,
    /// Bytes of the text, from the first item's start to the last one's end.
    pub start: usize,
    pub end: usize,
    pub key: RegionKey,
}

/// The runs of items whose every line comes from a header (a file other than
/// the unit's source, the first the preprocessor names), in text order.
pub(crate) fn runs(pre: &Preprocessed, items: &[Item], line_starts: &[usize], own_file: &[bool]) -> Vec<Run> {
    // the file of each line of the text
    let file_of_row: Vec<Option<u32>> =
        (0..line_starts.len()).map(|r| pre.map.lookup(r as u32).map(|(f, _)| f)).collect();
    // lines up to each line that is not a header's (prefix counts)
    let mut outside = Vec::with_capacity(file_of_row.len() + 1);
    outside.push(0u32);
    for f in &file_of_row {
        outside.push(outside.last().unwrap() + u32::from(f.is_none_or(|f| f == 0)));
    }
    let row = |byte: usize| line_starts.partition_point(|&s| s <= byte) - 1;
    let in_headers = |it: &Item| {
        if it.end <= it.start {
            return false;
        }
        let (a, b) = (row(it.start), row(it.end - 1));
        outside[b + 1] == outside[a]
    };
    // Two items are kept apart where a line between them comes from the
    // unit's source, which includes the next header. A run is what one
    // `#include` of the source brought in, so the same header included by
    // many units is one run in each (runs split at every header would be
    // found more often, but each one is a file to read: on Lua's units,
    // counting system headers alone, 87 % of their bytes found against 73 %,
    // in 1,346 runs against 198).
    let apart = |a: &Item, b: &Item| {
        let (ra, rb) = (row(a.end - 1), row(b.start));
        outside[rb + 1] != outside[ra]
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        if !in_headers(&items[i]) {
            i += 1;
            continue;
        }
        let first = i;
        i += 1;
        while i < items.len() && in_headers(&items[i]) && !apart(&items[i - 1], &items[i]) {
            i += 1;
        }
        let (start, end) = (items[first].start, items[i - 1].end);
        let (ra, rb) = (row(start), row(end - 1));
        let line_start = line_starts[ra];
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut part = |b: &[u8]| {
            h.update(&(b.len() as u64).to_le_bytes());
            h.update(b);
        };
        part(FORMAT);
        part(&pre.raw.as_bytes()[line_start..end]);
        part(&pre.text.as_bytes()[line_start..end]);
        let (_, l0) = pre.map.lookup(ra as u32).expect("a header's line has a file");
        part(&l0.to_le_bytes());
        // every file the run's lines come from by path, the first line's
        // first, with its flags (a file's system flag is set by the marker
        // that first names it, which may precede the run)
        let mut seen: Vec<u32> = Vec::new();
        for f in file_of_row[ra..=rb].iter().flatten() {
            if !seen.contains(f) {
                seen.push(*f);
                let file = &pre.files[*f as usize];
                part(file.path.as_bytes());
                part(&[u8::from(file.system), u8::from(own_file[*f as usize])]);
            }
        }
        out.push(Run { items: first..i, start, end, key: h.digest128().to_le_bytes() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs of a preprocessed text, the project's files given by name.
    fn runs_of(raw: &str, own: &[&str]) -> Vec<(String, RegionKey)> {
        let pre = Preprocessed::from_output(raw.to_string());
        let src = pre.text.as_bytes();
        let items = crate::toplevel::items(src);
        let mut starts = vec![0];
        starts.extend(src.iter().enumerate().filter(|(_, c)| **c == b'\n').map(|(i, _)| i + 1));
        let own_file: Vec<bool> = pre.files.iter().map(|f| own.contains(&f.path.as_str())).collect();
        runs(&pre, &items, &starts, &own_file)
            .into_iter()
            .map(|r| (pre.text[r.start..r.end].split_whitespace().collect::<Vec<_>>().join(" "), r.key))
            .collect()
    }

    const X: &str = "# 1 \"/usr/include/x.h\" 1 3 4\nextern int x;\nextern int y;\n";

    #[test]
    fn a_run_is_what_one_include_of_the_source_brought_keyed_by_its_text_and_place() {
        let base = format!(
            "# 1 \"a.c\"\n{X}# 2 \"a.c\" 2\nint a;\n# 1 \"/usr/include/z.h\" 1 3 4\nextern int z;\n# 4 \"a.c\" 2\n"
        );
        let runs = runs_of(&base, &["a.c"]);
        let texts: Vec<&str> = runs.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["extern int x; extern int y;", "extern int z;"]);
        // two headers included one after the other are two runs
        let adjacent = format!("# 1 \"a.c\"\n{X}# 2 \"a.c\" 2\n# 1 \"/usr/include/z.h\" 1 3 4\nextern int z;\n");
        assert_eq!(runs_of(&adjacent, &["a.c"]).len(), 2);
        // the same text brought in further down another unit: the same key
        let later = format!("# 1 \"b.c\"\nint b;\nint c;\n{X}# 4 \"b.c\" 2\n");
        assert_eq!(runs_of(&later, &["b.c"])[0].1, runs[0].1);
        // at another line of the header, from another header, or another
        // header in its lines: another key
        let other_line = base.replace("# 1 \"/usr/include/x.h\"", "# 7 \"/usr/include/x.h\"");
        let other_file = base.replace("/usr/include/x.h", "/usr/include/w.h");
        let nested = base.replace(
            "extern int y;\n",
            "# 1 \"/usr/include/v.h\" 1 3 4\nextern int y;\n# 3 \"/usr/include/x.h\" 2 3 4\n",
        );
        for changed in [other_line, other_file, nested] {
            let key = runs_of(&changed, &["a.c"])[0].1;
            assert_ne!(key, runs[0].1, "{changed}");
        }
        // not a system header, or the project's own: runs, under other keys
        let plain = base.replace(" 1 3 4", " 1");
        let own = runs_of(&base, &["a.c", "/usr/include/x.h"]);
        for (other, what) in [(runs_of(&plain, &["a.c"]), "not a system header"), (own, "the project's")] {
            assert_eq!(other.len(), 2, "{what}");
            assert_ne!(other[0].1, runs[0].1, "{what}");
            assert_eq!(other[1].1 == runs[1].1, what == "the project's", "{what}: z.h is as before");
        }
        // the unit's source itself is never a run
        assert!(runs_of("# 1 \"a.c\"\nint a;\nint b;\n", &["a.c"]).is_empty());
    }

    #[test]
    fn a_region_is_placed_by_path_or_not_at_all() {
        let pre = Preprocessed::from_output(format!("# 1 \"a.c\"\n{X}"));
        let d = Declaration {
            kind: retest_graph::DeclKind::Variable,
            names: vec!["x".into()],
            text: "#0123456789abcdef".into(),
            mentions: Vec::new(),
            span: Some(retest_graph::Span { file: 1, line: 1, col: 1, end_line: 1 }),
        };
        let mut g = Region::default();
        g.add(1, 5, d.clone(), &pre);
        assert_eq!(g.files, ["/usr/include/x.h"]);
        assert_eq!(g.decls[0].2.span.unwrap().file, 0, "the region's own file table");
        // another unit names the file at another index
        let other = Preprocessed::from_output(format!("# 1 \"b.c\"\n# 1 \"b.h\" 1\nint q;\n# 2 \"b.c\" 2\n{X}"));
        let placed = g.placed_in(&other, 100).unwrap();
        assert_eq!((placed[0].0, placed[0].1), (1, 105));
        assert_eq!(other.files[placed[0].2.span.unwrap().file as usize].path, "/usr/include/x.h");
        // a unit without the file does not take the region
        assert!(g.placed_in(&Preprocessed::from_output("# 1 \"c.c\"\nint c;\n".into()), 0).is_none());
        // a definition named by its place is not kept
        let mut h = Region::default();
        h.add(0, 0, Declaration { names: vec!["<definition at byte 7>".into()], ..d }, &pre);
        assert!(h.not_kept);
    }
}
