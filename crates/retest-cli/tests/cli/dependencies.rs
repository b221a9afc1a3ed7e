//! What a test depends on beyond the code: its definition and the files its
//! processes read — data files, files redirected to stdin, scripts, expected
//! outputs read by `diff`, programs the wrapper did not build. Each edit
//! selects exactly the tests it can affect, with a reason naming what
//! changed, with or without a rebuild.

use crate::common;

use std::path::Path;

use common::{retest, stderr, stdout};

const PROG: &str = r#"#include <stdio.h>
#include <string.h>
/* counts the characters (-s) or words (-w) of a file, or of stdin */
int main(int argc, char **argv) {
    int words = argc > 1 && strcmp(argv[1], "-w") == 0;
    const char *path = argc > 2 ? argv[2] : NULL;
    FILE *f = path ? fopen(path, "r") : stdin;
    int c, n = 0, prev = ' ';
    if (!f) { perror(path); return 2; }
    while ((c = fgetc(f)) != EOF) {
        if (!words) n++;
        else if ((c == ' ' || c == '\n') && prev != ' ' && prev != '\n') n++;
        prev = c;
    }
    printf("%d\n", n);
    return 0;
}
"#;

const TESTS: &str = r#"[[test]]
name = "cmd"
cmd = "./prog -w inputs/d2.txt"

[[test]]
name = "data"
cmd = "./prog -s inputs/d1.txt"

[[test]]
name = "stdin"
cmd = "./prog -s < inputs/d3.txt"

[[test]]
name = "script"
cmd = "./drive.sh inputs/d4.txt"

[[test]]
name = "oracle"
cmd = "./prog -w inputs/d5.txt | diff expected.txt -"
"#;

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A project of one program and five tests, with its baseline recorded.
fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    write(p, "prog.c", PROG);
    write(p, "Makefile", "prog: prog.c\n\t$(CC) -O0 -g -o prog prog.c\n");
    for (i, text) in ["one two\n", "a b c\n", "x\n", "p q\n", "r s t\n"].iter().enumerate() {
        write(p, &format!("inputs/d{}.txt", i + 1), text);
    }
    write(p, "expected.txt", "3\n");
    write(p, "drive.sh", "#!/bin/sh\n./prog -s \"$1\"\n");
    chmod_x(&p.join("drive.sh"));
    write(p, "retest.toml", TESTS);
    retest(p, &["init"], 0);
    retest(p, &["build", "--", "make", "-s"], 0);
    retest(p, &["run", "-j2"], 0);
    d
}

fn chmod_x(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The selected tests and the first reason of each, from `retest select`.
fn selection(dir: &Path) -> Vec<(String, String)> {
    let out = stdout(&retest(dir, &["select", "--format", "json"], 0));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["reasons"][0]["text"].as_str().unwrap().to_string()))
        .collect()
}

fn append(dir: &Path, name: &str, text: &str) {
    use std::io::Write;
    std::fs::OpenOptions::new().append(true).open(dir.join(name)).unwrap().write_all(text.as_bytes()).unwrap();
}

/// Each edit of the issue selects exactly its test, with a reason that says
/// what changed — without a rebuild (nothing was built since the baseline,
/// and selection says so instead of asking for one); undoing the edit
/// selects nothing again.
#[test]
fn each_edit_of_a_definition_or_a_file_selects_exactly_its_test() {
    let d = project();
    let p = d.path();
    let human = stdout(&retest(p, &["select"], 0));
    assert!(human.starts_with("0 of 5 tests selected") && human.contains("nothing built since"), "{human}");

    type Edit<'a> = (&'a str, &'a str, Box<dyn Fn() + 'a>, &'a str);
    let edits: [Edit; 5] = [
        (
            "cmd",
            "definition changed: cmd `./prog -w inputs/d2.txt` → `./prog -s inputs/d2.txt`",
            Box::new(|| write(p, "retest.toml", &TESTS.replace("./prog -w inputs/d2.txt", "./prog -s inputs/d2.txt"))),
            "retest.toml",
        ),
        ("data", "file changed: inputs/d1.txt", Box::new(|| append(p, "inputs/d1.txt", "three\n")), "inputs/d1.txt"),
        ("stdin", "file changed: inputs/d3.txt", Box::new(|| append(p, "inputs/d3.txt", "y\n")), "inputs/d3.txt"),
        (
            "script",
            "file changed: drive.sh",
            Box::new(|| write(p, "drive.sh", "#!/bin/sh\n./prog -w \"$1\"\n")),
            "drive.sh",
        ),
        ("oracle", "file changed: expected.txt", Box::new(|| write(p, "expected.txt", "4\n")), "expected.txt"),
    ];
    for (test, reason, edit, file) in &edits {
        let before = std::fs::read(p.join(file)).unwrap();
        edit();
        assert_eq!(selection(p), vec![(test.to_string(), reason.to_string())], "after editing {file}");
        let why = stdout(&retest(p, &["explain", test], 0));
        assert!(why.contains(&format!("{test} is selected:")) && why.contains(reason), "{why}");
        std::fs::write(p.join(file), before).unwrap();
        if *file == "drive.sh" {
            chmod_x(&p.join(file));
        }
        assert_eq!(selection(p), vec![], "after undoing the edit of {file}");
    }
    // a test not selected says what it was compared on
    let why = stdout(&retest(p, &["explain", "data"], 0));
    assert!(why.contains("none of the") && why.contains("files and paths it read or looked for changed"), "{why}");
}

/// A source edited after the newest build: the selection would be made from
/// code the build did not analyse, so it stops, names the file and says to
/// rebuild; after the rebuild the code comparison takes over.
#[test]
fn a_source_changed_since_the_newest_build_stops_the_selection() {
    let d = project();
    let p = d.path();
    write(p, "prog.c", &PROG.replace("n++;\n        prev", "n += 1;\n        prev"));
    let e = stderr(&retest(p, &["select"], 5));
    assert!(e.starts_with("error: prog.c changed since the newest build") && e.contains("retest build"), "{e}");
    let e = stderr(&retest(p, &["audit"], 5));
    assert!(e.contains("prog.c changed"), "{e}");
    retest(p, &["build", "--", "make", "-s"], 0);
    let sel = selection(p);
    assert!(!sel.is_empty() && sel.iter().all(|(_, why)| why.starts_with("prog.c:")), "{sel:?}");
}

/// `run --selected` reruns the tests whose files changed and replaces their
/// records, with and without a rebuild in between, and the audit finds no
/// test whose behaviour changed unselected.
#[test]
fn run_selected_and_audit_handle_files_like_code() {
    let d = project();
    let p = d.path();
    append(p, "inputs/d1.txt", "three four\n");
    let out = stdout(&retest(p, &["audit"], 0));
    assert!(out.contains("1 selected, 1 changed behaviour, 0 missed"), "{out}");
    // nothing built: the selected test runs on the baseline's build
    let out = stdout(&retest(p, &["run", "--selected"], 0));
    assert!(out.contains("ran 1 of 5 tests") && out.contains("are replaced"), "{out}");
    assert_eq!(selection(p), vec![]);
    // a data change and a code change together: the data's test is measured
    // in full (its coverage may change anywhere), the others as RECOVER does —
    // and the matrix is what a full run records
    append(p, "inputs/d3.txt", "y z\n");
    write(p, "prog.c", &PROG.replace("prev != '\\n') n++;", "prev != '\\n') n += 1;"));
    retest(p, &["build", "--", "make", "-s"], 0);
    let names: Vec<String> = selection(p).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["cmd", "oracle", "stdin"]);
    let out = stdout(&retest(p, &["audit"], 0));
    assert!(out.contains("0 missed"), "{out}");
    let o = retest(p, &["run", "--selected"], 0);
    assert!(stdout(&o).contains("coverage of all 5 tests brought up to date"), "{}", stdout(&o));
    assert!(!stderr(&o).contains("coverage unknown"), "{}", stderr(&o));
    assert_eq!(selection(p), vec![]);
    let recovered = matrix(p);
    retest(p, &["run", "-j2"], 0);
    assert_eq!(recovered, matrix(p));
}

/// Per test, its state and covered edges per unit (`retest coverage --format matrix`).
fn matrix(p: &Path) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&retest(p, &["coverage", "--format", "matrix"], 0))).unwrap();
    v["tests"].clone()
}

/// A universe test is its command: a line inserted at the top renames every
/// test below it, and selects none of them; the new line is selected, and a
/// removed line is reported.
#[test]
fn universe_tests_keep_their_history_when_lines_are_inserted() {
    let d = project();
    let p = d.path();
    let lines: Vec<String> =
        TESTS.lines().filter_map(|l| l.strip_prefix("cmd = \"")).map(|c| c.trim_end_matches('"').to_string()).collect();
    write(p, "universe.txt", &(lines.join("\n") + "\n"));
    retest(p, &["run", "--universe", "universe.txt", "-j2"], 0);
    assert_eq!(selection(p), vec![]);
    write(p, "universe.txt", &format!("./prog -w inputs/d3.txt\n{}\n", lines.join("\n")));
    assert_eq!(
        selection(p),
        vec![("t1".to_string(), "new test: nothing is recorded for it in the baseline".to_string())]
    );
    // the renamed tests keep their records: t3 (was t2) reads d1.txt
    append(p, "inputs/d1.txt", "more\n");
    let sel = selection(p);
    assert_eq!(sel.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["t1", "t3"], "{sel:?}");
    // a removed line is reported
    write(p, "universe.txt", &(lines[1..].join("\n") + "\n"));
    let out = stdout(&retest(p, &["select"], 0));
    assert!(out.contains("1 test of the baseline is no longer in the suite: t1"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&retest(p, &["select", "--format", "json"], 0))).unwrap();
    assert_eq!(v["removed"], serde_json::json!(["t1"]));
}

/// A program the tracker cannot see into (statically linked) makes its test's
/// dependencies unknown: selected whatever changed, with the reason, until
/// its inputs are declared — then only when they change.
#[test]
fn a_static_binary_makes_its_test_unknown_until_its_inputs_are_declared() {
    let d = project();
    let p = d.path();
    write(p, "st.c", "#include <stdio.h>\nint main(void) { return fopen(\"inputs/d5.txt\", \"r\") == 0; }\n");
    let st = std::process::Command::new("cc").args(["-static", "-o", "st", "st.c"]).current_dir(p).status().unwrap();
    assert!(st.success(), "a static link needs libc.a (Debian: libc6-dev)");
    write(p, "retest.toml", &format!("{TESTS}\n[[test]]\nname = \"static\"\ncmd = \"./st\"\n"));
    let o = retest(p, &["run", "-j2"], 0);
    assert!(stderr(&o).contains("dependencies unknown for static:"), "{}", stderr(&o));
    let sel = selection(p);
    assert_eq!(sel.len(), 1, "{sel:?}");
    assert!(
        sel[0].1.starts_with("dependencies unknown:") && sel[0].1.contains("st ran and could not be observed"),
        "{sel:?}"
    );
    // declared inputs: known, and selected when one changes
    write(
        p,
        "retest.toml",
        &format!(
            "{TESTS}\n[dependencies.tests]\n\"stat*\" = [\"inputs/d5.txt\"]\n\n[[test]]\nname = \"static\"\ncmd = \"./st\"\n"
        ),
    );
    retest(p, &["run", "-j2"], 0);
    assert_eq!(selection(p), vec![]);
    append(p, "inputs/d5.txt", "u\n");
    let names: Vec<String> = selection(p).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["oracle", "static"]);
}

/// `[dependencies]` in retest.toml: a path the user ignores never selects,
/// also when it is ignored only after the run that recorded it; with `track =
/// false` only declared inputs count (an input of every test selects every
/// test), and `select` warns that other files are not compared.
#[test]
fn ignored_paths_and_declared_inputs_without_tracking() {
    let d = project();
    let p = d.path();
    let names = |sel: Vec<(String, String)>| sel.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    write(p, "retest.toml", &format!("[dependencies]\nignore = [\"inputs/d1.txt\"]\n\n{TESTS}"));
    append(p, "inputs/d1.txt", "three\n");
    assert_eq!(selection(p), vec![]);
    append(p, "inputs/d2.txt", "x\n");
    assert_eq!(names(selection(p)), ["cmd"]);

    write(p, "retest.toml", &format!("[dependencies]\ntrack = false\ninputs = [\"inputs/d3.txt\"]\n\n{TESTS}"));
    retest(p, &["run", "-j2"], 0);
    append(p, "inputs/d4.txt", "z\n");
    let v: serde_json::Value = serde_json::from_str(&stdout(&retest(p, &["select", "--format", "json"], 0))).unwrap();
    assert_eq!(v["tests_selected"], 0, "{v}");
    let warned = v["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("file tracking is off"));
    assert!(warned, "{v}");
    append(p, "inputs/d3.txt", "z\n");
    let sel = selection(p);
    assert_eq!(names(sel.clone()), ["cmd", "data", "oracle", "script", "stdin"]);
    assert!(sel.iter().all(|(_, why)| why == "file changed: inputs/d3.txt"), "{sel:?}");
}

/// With nothing built since the baseline, or a build that compiled nothing,
/// the code is the baseline's own: no code reason selects a test, also in a
/// program whose functions the front end names alike (`__attribute__((visibility("default")))` before the
/// return type, as cJSON's `CJSON_PUBLIC` writes them).
#[test]
fn nothing_built_selects_nothing_for_the_code() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut prog = String::from("#include <stdio.h>\n#include <stdlib.h>\n");
    for f in ["alpha", "beta", "gamma", "delta"] {
        prog.push_str(&format!(
            "__attribute__((visibility(\"default\"))) int {f}(int x) {{ if (x > {n}) return x - 1; return x + {n}; }}\n",
            n = f.len()
        ));
    }
    prog.push_str(
        "int main(int argc, char **argv) {\n    int x = atoi(argv[2]);\n    switch (argv[1][0]) {\n    case 'a': x = alpha(x); break;\n    case 'b': x = beta(x); break;\n    case 'g': x = gamma(x); break;\n    default: x = delta(x);\n    }\n    printf(\"%d\\n\", x);\n    return 0;\n}\n",
    );
    write(p, "prog.c", &prog);
    write(p, "Makefile", "prog: prog.c\n\t$(CC) -O0 -g -o prog prog.c\n");
    let tests: String = ["a", "b", "g", "d"]
        .iter()
        .flat_map(|f| ["1", "9"].map(|x| format!("[[test]]\nname = \"{f}{x}\"\ncmd = \"./prog {f} {x}\"\n\n")))
        .collect();
    write(p, "retest.toml", &tests);
    retest(p, &["init"], 0);
    retest(p, &["build", "--", "make", "-s"], 0);
    retest(p, &["run", "-j2"], 0);
    assert_eq!(selection(p), vec![]);
    // a build that compiles nothing leaves the code as it was
    retest(p, &["build", "--", "make", "-s"], 0);
    let out = stdout(&retest(p, &["select"], 0));
    assert!(out.starts_with("0 of 8 tests selected") && out.contains("nothing built since"), "{out}");
}
