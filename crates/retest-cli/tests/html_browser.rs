//! The HTML report in a real browser: headless Chromium loads the report of the
//! corpus of `common/corpus.rs` and a small page of this test inspects it (through
//! same-directory iframes) with the browser's own DOM and computed styles: the
//! summary agrees with `--format json`, every decision has its table, the
//! tables show the pairs' test names and what is missing, executed and
//! unexecuted lines are coloured, and nothing is fetched from anywhere.
//!
//! Needs `chromium` (Debian: chromium); a missing browser fails the test.

mod common;
#[path = "common/corpus.rs"]
mod corpus;

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
