//! Cobertura XML (the format Jenkins and GitLab read), from the same per-file
//! line and branch data as the LCOV writer ([`crate::lcov`]).
//!
//! Layout: `coverage` › `sources` › `source` (the root file names are relative
//! to), `packages` › `package` (one per directory) › `classes` › `class` (one per
//! file) › `methods` › `method` (one per function, with its lines) and `lines` ›
//! `line`. Hits are numbers of tests, as in LCOV, or, for a line a build with
//! counters holds (`retest build --counts`), how many times it ran, summed
//! over the tests. A line with branches has
//! `branch="true"` and `condition-coverage="P% (covered/total)"`, `P` rounded
//! down. Rates are between 0 and 1 and are 1 when there is nothing to cover.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::lines::FileCoverage;

/// Options for [`write()`].
#[derive(Clone, Debug)]
pub struct Options<'a> {
    /// The directory file names are relative to (`<source>`).
    pub source_root: &'a str,
    /// Milliseconds since the Unix epoch, as Cobertura writes `timestamp`.
    pub timestamp: u64,
    /// The producing tool and version (`version`).
    pub version: &'a str,
}

/// Escapes text for an XML attribute value.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => o.push_str(&format!("&#x{:x};", c as u32)),
            c => o.push(c),
        }
    }
    o
}

/// A rate in `[0, 1]` with at most four decimals, trailing zeros dropped.
fn rate(hit: usize, total: usize) -> String {
    if total == 0 {
        return "1".to_string();
    }
    let s = format!("{:.4}", hit as f64 / total as f64);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() { "0".to_string() } else { s.to_string() }
}

/// Per line of one file: (hits, branches covered, branches).
fn line_table(fc: &FileCoverage) -> BTreeMap<u32, (u64, usize, usize)> {
    let mut t: BTreeMap<u32, (u64, usize, usize)> = BTreeMap::new();
    for (l, c) in &fc.lines {
        t.entry(*l).or_default().0 = c.executions.unwrap_or(u64::from(c.tests));
    }
    for (l, bs) in &fc.branches {
        let e = t.entry(*l).or_default();
        e.1 += bs.iter().filter(|b| b.tests > 0).count();
        e.2 += bs.len();
    }
    t
}

fn counts(t: &BTreeMap<u32, (u64, usize, usize)>) -> (usize, usize, usize, usize) {
    let lines_valid = t.len();
    let lines_covered = t.values().filter(|x| x.0 > 0).count();
    let branches_covered = t.values().map(|x| x.1).sum();
    let branches_valid = t.values().map(|x| x.2).sum();
    (lines_covered, lines_valid, branches_covered, branches_valid)
}

fn write_line(w: &mut dyn Write, indent: &str, line: u32, (hits, bh, bt): (u64, usize, usize)) -> io::Result<()> {
    match (bh * 100).checked_div(bt) {
        None => writeln!(w, r#"{indent}<line number="{line}" hits="{hits}" branch="false"/>"#),
        Some(percent) => writeln!(
            w,
            r#"{indent}<line number="{line}" hits="{hits}" branch="true" condition-coverage="{percent}% ({bh}/{bt})"/>"#
        ),
    }
}

/// Writes the Cobertura report of `files` (keyed by path relative to
/// `options.source_root`).
pub fn write(files: &BTreeMap<String, FileCoverage>, options: &Options<'_>, w: &mut dyn Write) -> io::Result<()> {
    let tables: BTreeMap<&str, BTreeMap<u32, (u64, usize, usize)>> =
        files.iter().map(|(p, fc)| (p.as_str(), line_table(fc))).collect();
    let (mut lc, mut lv, mut bc, mut bv) = (0, 0, 0, 0);
    for t in tables.values() {
        let (a, b, c, d) = counts(t);
        lc += a;
        lv += b;
        bc += c;
        bv += d;
    }
    writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(w, r#"<!DOCTYPE coverage SYSTEM "http://cobertura.sourceforge.net/xml/coverage-04.dtd">"#)?;
    writeln!(
        w,
        r#"<coverage line-rate="{}" branch-rate="{}" lines-covered="{lc}" lines-valid="{lv}" branches-covered="{bc}" branches-valid="{bv}" complexity="0" version="{}" timestamp="{}">"#,
        rate(lc, lv),
        rate(bc, bv),
        escape(options.version),
        options.timestamp
    )?;
    writeln!(w, "  <sources>")?;
    writeln!(w, "    <source>{}</source>", escape(options.source_root))?;
    writeln!(w, "  </sources>")?;
    writeln!(w, "  <packages>")?;
    // packages: directories
    let mut packages: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for p in files.keys() {
        let dir = match p.rfind('/') {
            Some(i) => p[..i].to_string(),
            None => ".".to_string(),
        };
        packages.entry(dir).or_default().push(p.as_str());
    }
    for (dir, paths) in &packages {
        let (mut lc, mut lv, mut bc, mut bv) = (0, 0, 0, 0);
        for p in paths {
            let (a, b, c, d) = counts(&tables[p]);
            lc += a;
            lv += b;
            bc += c;
            bv += d;
        }
        writeln!(
            w,
            r#"    <package name="{}" line-rate="{}" branch-rate="{}" complexity="0">"#,
            escape(dir),
            rate(lc, lv),
            rate(bc, bv)
        )?;
        writeln!(w, "      <classes>")?;
        for p in paths {
            let fc = &files[*p];
            let t = &tables[p];
            let (lc, lv, bc, bv) = counts(t);
            let name = p.rsplit('/').next().unwrap_or(p);
            writeln!(
                w,
                r#"        <class name="{}" filename="{}" line-rate="{}" branch-rate="{}" complexity="0">"#,
                escape(name),
                escape(p),
                rate(lc, lv),
                rate(bc, bv)
            )?;
            writeln!(w, "          <methods>")?;
            let mut fns = fc.functions.clone();
            fns.sort_by_key(|f| (f.line, f.name.clone()));
            for f in &fns {
                let (lines, branches) = fc.function_stats(f);
                writeln!(
                    w,
                    r#"            <method name="{}" signature="" line-rate="{}" branch-rate="{}" complexity="0">"#,
                    escape(&f.name),
                    rate(lines.hit, lines.total),
                    rate(branches.hit, branches.total)
                )?;
                writeln!(w, "              <lines>")?;
                let mut ls: Vec<u32> = f.lines.clone();
                ls.sort_unstable();
                ls.dedup();
                for l in ls {
                    if let Some(x) = t.get(&l) {
                        write_line(w, "                ", l, *x)?;
                    }
                }
                writeln!(w, "              </lines>")?;
                writeln!(w, "            </method>")?;
            }
            writeln!(w, "          </methods>")?;
            writeln!(w, "          <lines>")?;
            for (l, x) in t {
                write_line(w, "            ", *l, *x)?;
            }
            writeln!(w, "          </lines>")?;
            writeln!(w, "        </class>")?;
        }
        writeln!(w, "      </classes>")?;
        writeln!(w, "    </package>")?;
    }
    writeln!(w, "  </packages>")?;
    writeln!(w, "</coverage>")
}
