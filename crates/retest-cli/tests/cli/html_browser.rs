//! The HTML report in a real browser: headless Chromium loads the report of the
//! corpus of `common/corpus.rs` and a small page of this test inspects it (through
//! same-directory iframes) with the browser's own DOM and computed styles: the
//! summary agrees with `--format json`, every decision has its table, the
//! tables show the pairs' test names and what is missing, executed and
//! unexecuted lines are coloured, and nothing is fetched from anywhere.
//!
//! Needs `chromium` (Debian: chromium); a missing browser fails the test.

use crate::common;
use crate::common::corpus;

use std::process::Command;

use common::*;

/// Inspects `html/index.html` and the corpus page, and writes what it found as
/// JSON into `<pre id="out">`.
const HARNESS: &str = r#"<!DOCTYPE html>
<html><body>
<iframe id="index" src="html/index.html" width="1200" height="800"></iframe>
<iframe id="file" src="html/FILE_PAGE" width="1400" height="2000"></iframe>
<pre id="out"></pre>
<script>
window.addEventListener('load', function () {
  var r = {};
  var ix = document.getElementById('index').contentDocument;
  r.title = ix.title;
  r.summary = Array.prototype.map.call(ix.querySelectorAll('table.summary tr[data-measure]'), function (tr) {
    return [tr.getAttribute('data-measure'), tr.cells[1].textContent];
  });
  r.fileLinks = Array.prototype.map.call(ix.querySelectorAll('table.files a'), function (a) { return a.getAttribute('href'); });
  var f = document.getElementById('file').contentDocument;
  var fw = document.getElementById('file').contentWindow;
  r.decisions = Array.prototype.map.call(f.querySelectorAll('div.decision'), function (d) {
    var t = d.querySelector('table');
    return {
      line: +d.getAttribute('data-line'),
      conditions: +d.getAttribute('data-conditions'),
      rows: t.rows.length - 1,
      visible: t.getBoundingClientRect().height > 0,
      text: d.textContent
    };
  });
  var bg = function (sel) { var e = f.querySelector(sel); return e ? fw.getComputedStyle(e).backgroundColor : null; };
  r.hit = bg('tr.hit td.code');
  r.miss = bg('tr.miss td.code');
  r.partialBranch = bg('td.br.partial');
  r.missedLines = Array.prototype.map.call(f.querySelectorAll('tr.miss'), function (tr) { return +tr.id.slice(1); });
  r.resources = document.getElementById('index').contentWindow.performance.getEntriesByType('resource').length
    + fw.performance.getEntriesByType('resource').length;
  r.external = f.querySelectorAll('[src], link[href]').length + ix.querySelectorAll('[src], link[href]').length;
  document.getElementById('out').textContent = JSON.stringify(r);
});
</script>
</body></html>
"#;

#[test]
fn html_report_renders_in_chromium() {
    assert!(corpus::have("chromium"), "chromium is not installed (Debian: chromium; `.ci/run` installs it)");
    let c = corpus::corpus();
    let d = tempfile::tempdir().unwrap();
    retest(d.path(), &["init"], 0);
    c.write(d.path());
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run", "-j2"], 0);
    retest(d.path(), &["coverage", "--html", "html"], 0);
    let report = json(&retest(d.path(), &["coverage", "--format", "json", "--criteria", "all"], 0));
    let index = std::fs::read_to_string(d.path().join("html/index.html")).unwrap();
    let page = std::fs::read_dir(d.path().join("html"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with("corpus.c.html"))
        .expect("a page for corpus.c");
    assert!(index.contains(&page));
    std::fs::write(d.path().join("harness.html"), HARNESS.replace("FILE_PAGE", &page)).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", d.path().join("harness.html").display());
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--allow-file-access-from-files",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"out\">").unwrap_or_else(|| panic!("no output in the DOM:\n{dom}")) + 14;
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end].replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    let seen: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("the page did not inspect the report ({e}):\n{dom}"));

    assert!(seen["title"].as_str().unwrap().contains(&format!("{} tests", c.tests.len())), "{}", seen["title"]);
    // the summary shows every measure with the JSON's numbers
    let summary = seen["summary"].as_array().unwrap();
    let measures = report["criteria"]["measures"].as_array().unwrap();
    assert_eq!(summary.len(), measures.len(), "{summary:?}");
    for (s, m) in summary.iter().zip(measures) {
        assert_eq!(s[0], m["measure"]);
        let (hit, total) = (m["covered"].as_u64().unwrap(), m["total"].as_u64().unwrap());
        let want = format!("{:.1}% ({hit}/{total})", 100.0 * hit as f64 / total as f64);
        assert_eq!(s[1].as_str().unwrap(), want, "{}", m["measure"]);
    }
    assert!(seen["fileLinks"].as_array().unwrap().iter().any(|l| l == page.as_str()));
    // one visible table per decision, one row per condition
    let decisions: Vec<&serde_json::Value> = report["decisions"].as_array().unwrap().iter().collect();
    let shown = seen["decisions"].as_array().unwrap();
    assert_eq!(shown.len(), decisions.len());
    for (s, d) in shown.iter().zip(&decisions) {
        assert_eq!(s["line"], d["line"]);
        assert_eq!(s["conditions"], d["conditions"]);
        assert_eq!(s["rows"], d["conditions"]);
        assert!(s["visible"].as_bool().unwrap());
    }
    // a decision with every pair shows the tests of its pairs; one never true says why pairs are missing
    let at = |f: &str| {
        let line = c.functions.iter().find(|x| x.name == f).unwrap().line;
        shown.iter().find(|s| s["line"] == line).unwrap()["text"].as_str().unwrap().to_string()
    };
    let d3 = at("d3");
    assert!(d3.contains("a && b"), "{d3}");
    assert!(d3.contains("d3-11") && d3.contains("d3-01") && d3.contains("d3-10"), "{d3}");
    let d22 = at("d22");
    assert!(d22.contains("missing: no independence pair (the decision is never true)"), "{d22}");
    // executed lines green, unexecuted red, partly taken branches yellow
    assert_eq!(seen["hit"], "rgb(223, 245, 223)");
    assert_eq!(seen["miss"], "rgb(249, 214, 214)");
    assert_eq!(seen["partialBranch"], "rgb(246, 231, 166)");
    let d22_line = c.functions.iter().find(|x| x.name == "d22").unwrap().line;
    let missed: Vec<u64> = seen["missedLines"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
    assert!(missed.contains(&(d22_line as u64 + 1)), "`return 1;` after a decision never true: {missed:?}");
    // self-contained: nothing loaded besides the pages themselves
    assert_eq!(seen["resources"], 0);
    assert_eq!(seen["external"], 0);
}

/// Runs `harness.html` in `dir` in headless Chromium (waiting up to a virtual
/// minute for asynchronous checks) and returns what it wrote into `<pre id="out">`.
fn run_harness(dir: &std::path::Path) -> serde_json::Value {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.join("harness.html").display());
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--allow-file-access-from-files",
            "--virtual-time-budget=60000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"out\">").unwrap_or_else(|| panic!("no output in the DOM:\n{dom}")) + 14;
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end].replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("the page did not inspect the report ({e}):\n{dom}"))
}

/// The axe-core accessibility checker (npm package `axe-core`, pinned in
/// `.ci/run`): `$RETEST_AXE_CORE`, else where `.ci/run` installs it.
fn axe_core() -> String {
    let path = std::env::var_os("RETEST_AXE_CORE").map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/retest-ci/node_modules/axe-core/axe.min.js")
    });
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "axe-core is not installed at {} ({e}): run `.ci/run`, or `npm install --prefix ~/.cache/retest-ci \
             axe-core@4.11.1`, or set RETEST_AXE_CORE to its axe.min.js",
            path.display()
        )
    })
}

/// Reads the report of `text.c` / `other.c`: conditions as written, the legend,
/// keyboard navigation, sorting, and axe-core's findings on both pages.
const READER: &str = r#"<!DOCTYPE html>
<html lang="en"><head><title>harness</title></head><body>
<iframe id="index" title="index" src="html/index.html" width="1200" height="600"></iframe>
<iframe id="file" title="file" src="html/FILE_PAGE" width="1200" height="500"></iframe>
<pre id="out"></pre>
<script>
var AXE = AXE_SOURCE;
window.addEventListener('load', function () {
  var r = {};
  var ix = document.getElementById('index').contentDocument;
  var f = document.getElementById('file').contentDocument;
  var fw = document.getElementById('file').contentWindow;
  var map = Array.prototype.map;
  r.written = map.call(f.querySelectorAll('code.written'), function (c) { return [c.textContent, c.getAttribute('title')]; });
  r.legend = [ix, f].map(function (d) { var l = d.querySelector('dl.legend'); return l ? l.textContent : null; });
  r.srcHeader = map.call(f.querySelectorAll('table.src thead th'), function (th) { return th.textContent; });
  // keyboard: n, n, p
  var ts = f.querySelectorAll('[data-uncovered]');
  r.targets = map.call(ts, function (e) { return e.getAttribute('data-uncovered'); });
  var key = function (k) {
    f.dispatchEvent(new fw.KeyboardEvent('keydown', { key: k, bubbles: true }));
    var a = f.activeElement, rect = a.getBoundingClientRect();
    return { at: Array.prototype.indexOf.call(ts, a), inView: rect.top >= 0 && rect.bottom <= fw.innerHeight + 1,
             status: f.getElementById('nav-status').textContent };
  };
  r.keys = [key('n'), key('n'), key('p')];
  f.getElementById('next-uncovered').click();
  r.button = Array.prototype.indexOf.call(ts, f.activeElement);
  // sorting by the Lines column, twice
  var order = function () {
    return map.call(ix.querySelectorAll('table.files tbody tr'), function (tr) {
      return [tr.cells[0].textContent, +tr.cells[1].getAttribute('data-sort')];
    });
  };
  r.before = order();
  var btn = ix.querySelectorAll('table.files thead button.sort')[1];
  r.sortButton = btn.textContent;
  btn.click();
  r.asc = order();
  r.ascSort = btn.parentNode.getAttribute('aria-sort');
  btn.click();
  r.desc = order();
  r.descSort = btn.parentNode.getAttribute('aria-sort');
  // accessibility
  var axe = function (d, w) {
    var s = d.createElement('script');
    s.textContent = AXE;
    d.head.appendChild(s);
    return w.axe.run(d, { resultTypes: ['violations'] }).then(function (res) {
      return res.violations.map(function (v) {
        return { id: v.id, impact: v.impact, nodes: v.nodes.length, target: String(v.nodes[0].target) };
      });
    });
  };
  axe(ix, document.getElementById('index').contentWindow).then(function (a) {
    r.axeIndex = a;
    return axe(f, fw);
  }).then(function (a) {
    r.axeFile = a;
    r.axeVersion = fw.axe.version;
  }).catch(function (e) { r.axeError = String(e); }).then(function () {
    document.getElementById('out').textContent = JSON.stringify(r);
  });
});
</script>
</body></html>
"#;

const TEXT_C: &str = r#"#include <ctype.h>
#include <stdio.h>
#define LITCHAR 'c'
int twice(int x);
int classify(const char *p) {
    if (*p == LITCHAR && isspace(p[1]))
        return 1;
    return 0;
}
int unused(int x) {
    if (x > 3)
        return 2;
    return 0;
}
int main(int argc, char **argv) {
    printf("%d %d\n", classify(argv[1]), twice(argc));
    return 0;
}
"#;

#[test]
fn html_report_reads_navigates_sorts_and_passes_axe() {
    assert!(corpus::have("chromium"), "chromium is not installed (Debian: chromium; `.ci/run` installs it)");
    let axe = axe_core();
    let d = tempfile::tempdir().unwrap();
    retest(d.path(), &["init"], 0);
    std::fs::write(d.path().join("text.c"), TEXT_C).unwrap();
    std::fs::write(d.path().join("other.c"), "int twice(int x) {\n    return 2 * x;\n}\n").unwrap();
    std::fs::write(d.path().join("Makefile"), "text: text.c other.c\n\t$(CC) -O0 -g -o text text.c other.c\n").unwrap();
    std::fs::write(
        d.path().join("retest.toml"),
        "[[test]]\nname = \"space\"\ncmd = \"./text 'c '\"\n\n[[test]]\nname = \"letter\"\ncmd = \"./text x\"\n",
    )
    .unwrap();
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run", "-j2"], 0);
    retest(d.path(), &["coverage", "--html", "html"], 0);
    let report = json(&retest(d.path(), &["coverage", "--format", "json"], 0));
    let page = std::fs::read_dir(d.path().join("html"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with("text.c.html"))
        .expect("a page for text.c");
    let harness = READER.replace("FILE_PAGE", &page).replace("AXE_SOURCE", &serde_json::to_string(&axe).unwrap());
    std::fs::write(d.path().join("harness.html"), harness).unwrap();
    let seen = run_harness(d.path());

    // the conditions as written, the preprocessed text on hover
    let written: Vec<(String, String)> = seen["written"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w[0].as_str().unwrap().to_string(), w[1].as_str().unwrap().to_string()))
        .collect();
    let find = |text: &str| written.iter().find(|(w, _)| w == text).unwrap_or_else(|| panic!("{text}: {written:?}"));
    assert!(find("*p == LITCHAR").1.contains("* p == 'c'"), "{written:?}");
    assert!(find("isspace(p[1])").1.contains("__ctype_b_loc"), "{written:?}");
    assert!(find("*p == LITCHAR && isspace(p[1])").1.contains("_ISspace"), "{written:?}");
    // a legend on both pages that says what the numbers count
    for l in seen["legend"].as_array().unwrap() {
        let l = l.as_str().expect("a legend");
        assert!(l.contains("test"), "{l}");
    }
    assert!(seen["legend"][0].as_str().unwrap().contains("MC/DC (masking)"));
    assert!(seen["legend"][1].as_str().unwrap().contains("not how many times it ran"));
    assert_eq!(seen["srcHeader"], serde_json::json!(["Line", "Tests", "Branches", "Source"]));
    // the navigation targets are the lines no test ran (as the JSON says), lines with branch
    // outcomes not taken, and decisions with something missing, in page order
    let targets: Vec<&str> = seen["targets"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let file = report["files"].as_array().unwrap().iter().find(|f| f["path"] == "text.c").unwrap();
    let not_run: Vec<String> =
        file["lines"].as_array().unwrap().iter().filter(|l| l[1] == 0).map(|l| format!("line {}", l[0])).collect();
    assert!(!not_run.is_empty());
    let shown_not_run: Vec<String> = targets
        .iter()
        .filter(|t| t.contains("line not run"))
        .map(|t| t.split(':').next().unwrap().to_string())
        .collect();
    assert_eq!(shown_not_run, not_run);
    assert!(targets.contains(&"decision on line 6"), "{targets:?}");
    assert!(targets.len() >= 3, "{targets:?}");
    // n, n, p move the focus to targets 0, 1, 0 and scroll them into view; the button to 1
    let keys = seen["keys"].as_array().unwrap();
    let at: Vec<i64> = keys.iter().map(|k| k["at"].as_i64().unwrap()).collect();
    assert_eq!(at, [0, 1, 0], "{keys:?}");
    assert!(keys.iter().all(|k| k["inView"] == true), "{keys:?}");
    assert!(keys[1]["status"].as_str().unwrap().starts_with(&format!("2 of {}: ", targets.len())), "{keys:?}");
    assert_eq!(seen["button"], 1);
    // sorting the file table by Lines: ascending, then descending
    assert_eq!(seen["sortButton"], "Lines");
    let pct =
        |v: &serde_json::Value| -> Vec<f64> { v.as_array().unwrap().iter().map(|r| r[1].as_f64().unwrap()).collect() };
    let (asc, desc) = (pct(&seen["asc"]), pct(&seen["desc"]));
    assert!(asc.windows(2).all(|w| w[0] <= w[1]) && asc[0] < asc[asc.len() - 1], "{asc:?}");
    assert!(desc.windows(2).all(|w| w[0] >= w[1]), "{desc:?}");
    assert_eq!(seen["ascSort"], "ascending");
    assert_eq!(seen["descSort"], "descending");
    // axe-core: nothing serious or critical on either page
    assert!(seen["axeError"].is_null(), "{}", seen["axeError"]);
    for page in ["axeIndex", "axeFile"] {
        let v = seen[page].as_array().unwrap();
        eprintln!("axe-core {} on {page}: {v:?}", seen["axeVersion"]);
        let bad: Vec<&serde_json::Value> =
            v.iter().filter(|x| x["impact"] == "serious" || x["impact"] == "critical").collect();
        assert!(bad.is_empty(), "{page}: {bad:?}");
    }
}
