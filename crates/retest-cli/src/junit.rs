//! `retest run --junit FILE`: the run as JUnit XML, the format CI systems
//! (GitLab, Jenkins, GitHub actions, Azure) read test results from.
//!
//! One `<testsuite>` holds a `<testcase>` per test of the run. The document is
//! valid against Jenkins's JUnit schema, and against Apache Ant's stricter one
//! as long as no test is skipped (that schema has no `<skipped>`): no
//! attribute or element outside both, elements in the order both require,
//! times in seconds with three decimals, the timestamp without a time zone.
//!
//! - A GoogleTest case `binary/Suite.Name` (or `binary/Prefix/Suite.Name/0`)
//!   is `classname="binary.Suite"` (`binary.Prefix/Suite`), `name="Name"`
//!   (`Name/0`), as GoogleTest's own XML names it with the binary in front; any
//!   other test is `classname` = the test source (`retest` for `retest.toml`,
//!   the universe file's stem, `ctest`) and `name` = its retest name.
//! - `fail`, `signal` and `timeout` are `<failure>`; `error` (the test could
//!   not start) and `stopped` (Ctrl-C ended it) are `<error>`: a stopped test
//!   did not pass, nor did it fail. Tests an interrupted run never started
//!   and, with `--selected`, the tests not selected are `<skipped>` with why.
//! - The message is in the element's text too: GitLab shows only the text.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::SystemTime;

use retest_engine::run::{NotRun, RunReport, TestResult, TestSource};

use crate::fail::Fail;

/// What the report says about where the tests came from.
pub struct Suite {
    /// The `<testsuite>` name and the classname of tests other than
    /// GoogleTest cases.
    pub name: String,
    /// The file (or CTest build directory) the tests came from.
    pub source: String,
    /// `full`, `filtered` or `selected`.
    pub kind: &'static str,
}

impl Suite {
    /// The suite of `source` (as resolved: the one the run used).
    pub fn of(source: &TestSource, kind: &'static str) -> Suite {
        let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned()).filter(|s| !s.is_empty());
        let (name, path) = match (&source.universe, &source.ctest, &source.tests) {
            (Some(u), _, _) => (stem(u).unwrap_or_else(|| "universe".into()), u.display().to_string()),
            (_, Some(c), _) => ("ctest".to_string(), c.display().to_string()),
            (_, _, Some(t)) => (stem(t).unwrap_or_else(|| "retest".into()), t.display().to_string()),
            _ => ("retest".to_string(), "retest.toml".to_string()),
        };
        Suite { name, source: path, kind }
    }
}

/// Checks, before the tests run, that FILE can be written where it is meant to go.
pub fn check_target(file: &Path) -> Result<(), Fail> {
    let dir = parent(file);
    if !dir.is_dir() {
        return Err(Fail::usage(format!("--junit {}: directory {} does not exist", file.display(), dir.display()))
            .hint("create the directory first, or give another path"));
    }
    if file.is_dir() {
        return Err(Fail::usage(format!("--junit {}: is a directory", file.display()))
            .hint("give the path of the XML file to write, e.g. `--junit report.xml`"));
    }
    Ok(())
}

fn parent(file: &Path) -> &Path {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes the report to `file` atomically (a temporary file in the same
/// directory, renamed over it), so a reader never sees half a document.
pub fn write(file: &Path, r: &RunReport, suite: &Suite, started: SystemTime) -> Result<(), Fail> {
    let xml = render(r, suite, started, &hostname());
    let fail = |e: std::io::Error| {
        Fail::new(format!("cannot write the JUnit report {}: {e}", file.display()))
            .hint("check that the directory exists and is writable")
    };
    let mut tmp = tempfile::Builder::new().prefix(".retest-junit").tempfile_in(parent(file)).map_err(fail)?;
    tmp.write_all(xml.as_bytes()).and_then(|_| tmp.as_file().sync_all()).map_err(fail)?;
    tmp.persist(file).map_err(|e| fail(e.error))?;
    Ok(())
}

/// One test's place in the report.
enum Case<'a> {
    Ran(&'a TestResult),
    Skipped(&'a NotRun),
}

/// The document.
pub fn render(r: &RunReport, suite: &Suite, started: SystemTime, hostname: &str) -> String {
    let s = &r.summary;
    let mut cases: Vec<Case> = s.results.iter().map(Case::Ran).collect();
    cases.extend(s.not_started.iter().chain(&r.not_run).map(Case::Skipped));
    let (mut failures, mut errors, mut skipped) = (0, 0, 0);
    let mut body = String::new();
    for c in &cases {
        match c {
            Case::Ran(t) => {
                let (classname, name) = names(&t.name, &t.cmd, &suite.name);
                let _ = write!(
                    body,
                    "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
                    esc(name),
                    esc(&classname),
                    secs(t.seconds)
                );
                match outcome(t) {
                    None => body.push_str("/>\n"),
                    Some((element, kind, message)) => {
                        if element == "failure" {
                            failures += 1;
                        } else {
                            errors += 1;
                        }
                        let text = format!("{message}\ncommand: {}", t.cmd);
                        let _ = write!(
                            body,
                            ">\n      <{element} type=\"{kind}\" message=\"{}\">{}</{element}>\n    </testcase>\n",
                            esc(&message),
                            esc(&text)
                        );
                    }
                }
            }
            Case::Skipped(t) => {
                skipped += 1;
                let (classname, short) = names(&t.name, &t.cmd, &suite.name);
                let _ = write!(
                    body,
                    "    <testcase name=\"{}\" classname=\"{}\" time=\"0.000\">\n      <skipped>{}</skipped>\n    </testcase>\n",
                    esc(short),
                    esc(&classname),
                    esc(&t.why)
                );
            }
        }
    }
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    let _ = writeln!(
        out,
        "  <testsuite name=\"{n}\" package=\"{n}\" id=\"0\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\"{} time=\"{}\" timestamp=\"{}\" hostname=\"{}\">",
        cases.len(),
        if skipped > 0 { format!(" skipped=\"{skipped}\"") } else { String::new() },
        secs(s.elapsed.as_secs_f64()),
        timestamp(started),
        esc(hostname),
        n = esc(&suite.name),
    );
    out.push_str("    <properties>\n");
    let mut prop = |k: &str, v: &str| {
        let _ = writeln!(out, "      <property name=\"retest.{k}\" value=\"{}\"/>", esc(v));
    };
    prop("tests", &suite.source);
    prop("run", suite.kind);
    prop("snapshot", &r.snapshot.0.to_string());
    prop("baseline", if r.made_baseline { "true" } else { "false" });
    prop("interrupted", if s.stopped { "true" } else { "false" });
    out.push_str("    </properties>\n");
    out.push_str(&body);
    // what became of the run, as `retest run` says it on the terminal
    let mut said: Vec<String> = Vec::new();
    for t in &s.results {
        if let Some(why) = &t.coverage_unknown {
            said.push(format!("coverage unknown for {}: {why} (it will always be selected)", t.name));
        }
        if let Some(why) = &t.dependencies_unknown {
            said.push(format!("dependencies unknown for {}: {why} (it will always be selected)", t.name));
        }
    }
    said.extend(r.conclusion.iter().cloned());
    let _ = writeln!(out, "    <system-out>{}</system-out>", esc(&said.join("\n")));
    let error = r.error.as_ref().map(|e| match &e.hint {
        Some(h) => format!("error: {} — {h}", e.what),
        None => format!("error: {}", e.what),
    });
    let _ = writeln!(out, "    <system-err>{}</system-err>", esc(error.as_deref().unwrap_or("")));
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// The `<failure>` or `<error>` of a test that did not pass: element, type, message.
fn outcome(t: &TestResult) -> Option<(&'static str, &'static str, String)> {
    Some(match (t.status.as_str(), t.code) {
        ("pass", _) => return None,
        ("fail", Some(c)) => ("failure", "fail", format!("exit code {c}")),
        ("signal", Some(s)) => ("failure", "signal", format!("killed by signal {s}")),
        ("timeout", _) => ("failure", "timeout", format!("timed out after {:.1} s", t.seconds)),
        ("stopped", _) => (
            "error",
            "interrupted",
            "interrupted (Ctrl-C) before it finished: its outcome is unknown and its coverage was not recorded"
                .to_string(),
        ),
        ("error", _) => ("error", "error", "the test could not start (its command could not be run)".to_string()),
        (other, _) => ("failure", "fail", format!("status {other}")),
    })
}

/// `(classname, name)` of a test: GoogleTest cases by binary and suite, the
/// others by the suite of the run.
fn names<'a>(test: &'a str, cmd: &str, suite: &str) -> (String, &'a str) {
    if let Some((binary, case)) = gtest_case(test, cmd)
        && let Some((gsuite, name)) = case.split_once('.')
    {
        return (format!("{binary}.{gsuite}"), name);
    }
    (suite.to_string(), test)
}

/// `(binary, Suite.Name)` when `test` is a GoogleTest case of a `[[gtest]]`:
/// `binary/Suite.Name` whose command runs the binary with `--gtest_filter=`
/// that case (a test of `retest.toml` named so but running something else
/// is not one).
fn gtest_case<'a>(test: &'a str, cmd: &str) -> Option<(&'a str, &'a str)> {
    let (binary, case) = test.split_once('/')?;
    let filtered = cmd.contains(&format!("--gtest_filter={case}")) || cmd.contains(&format!("--gtest_filter='{case}'"));
    (filtered && case.contains('.')).then_some((binary, case))
}

/// Seconds with three decimals (what both schemas' time types accept).
fn secs(s: f64) -> String {
    format!("{:.3}", if s.is_finite() && s > 0.0 { s } else { 0.0 })
}

/// `YYYY-MM-DDTHH:MM:SS` in UTC, without a zone (Ant's schema forbids one).
fn timestamp(t: SystemTime) -> String {
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // civil date from days since 1970-01-01 (H. Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Text for an attribute or element: markup escaped, and characters XML 1.0
/// cannot hold (control characters other than tab and newlines) as `\u{…}`.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(o, "\\u{{{:x}}}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_civil_dates() {
        let at = |s: u64| timestamp(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00");
        // 2000-02-29 (a leap day of a leap century) 12:34:56
        assert_eq!(at(951_827_696), "2000-02-29T12:34:56");
        assert_eq!(at(1_709_251_199), "2024-02-29T23:59:59");
        assert_eq!(at(1_709_251_200), "2024-03-01T00:00:00");
    }

    #[test]
    fn googletest_cases_are_named_by_binary_and_suite() {
        let cmd = "./unit_tests --gtest_filter=Parser.Empty";
        assert_eq!(names("unit_tests/Parser.Empty", cmd, "retest"), ("unit_tests.Parser".to_string(), "Empty"));
        let cmd = "./t --gtest_filter='Inst/Fixture.Case/0'";
        assert_eq!(names("t/Inst/Fixture.Case/0", cmd, "retest"), ("t.Inst/Fixture".to_string(), "Case/0"));
        // a test of retest.toml whose name looks like one but whose command is not
        assert_eq!(names("dir/a.b", "sh run.sh", "retest"), ("retest".to_string(), "dir/a.b"));
        assert_eq!(names("01-basic", "sh tests/run.sh 01-basic", "retest"), ("retest".to_string(), "01-basic"));
    }

    #[test]
    fn text_is_escaped_and_control_characters_are_spelled_out() {
        assert_eq!(esc("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
        assert_eq!(esc("x\u{1b}[0m\ty"), "x\\u{1b}[0m\ty");
    }
}
