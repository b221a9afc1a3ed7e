//! LCOV tracefiles (the format `genhtml` and most CI coverage services read).
//!
//! Counts are numbers of tests: `DA:<line>,<tests that executed it>`,
//! `FNDA:<tests that entered it>,<name>`, `BRDA:<line>,<decision>,<outcome>,<tests>`
//! (`-` when no test evaluated the decision) — except a line that a build
//! with counters holds (`retest build --counts`): its `DA` gives how many
//! times it ran, summed over the tests ([`crate::lines::LineCount::executions`]),
//! as gcov's tracefiles do.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::lines::FileCoverage;

pub fn write(files: &BTreeMap<String, FileCoverage>, test_name: &str, w: &mut dyn Write) -> io::Result<()> {
    for (path, fc) in files {
        writeln!(w, "TN:{test_name}")?;
        writeln!(w, "SF:{path}")?;
        // a function no run records has no count to give
        let mut fns: Vec<_> = fc.functions.iter().filter(|f| f.recorded).cloned().collect();
        fns.sort_by_key(|f| (f.line, f.name.clone()));
        for f in &fns {
            writeln!(w, "FN:{},{}", f.line, f.name)?;
        }
        for f in &fns {
            writeln!(w, "FNDA:{},{}", f.tests, f.name)?;
        }
        writeln!(w, "FNF:{}", fns.len())?;
        writeln!(w, "FNH:{}", fc.functions_hit())?;
        for (line, branches) in &fc.branches {
            let mut blocks: BTreeMap<u32, Vec<&crate::lines::Branch>> = BTreeMap::new();
            for b in branches {
                blocks.entry(b.block).or_default().push(b);
            }
            for (block, bs) in blocks {
                let evaluated = bs.iter().any(|b| b.tests > 0);
                for (i, b) in bs.iter().enumerate() {
                    let taken = if evaluated { b.tests.to_string() } else { "-".to_string() };
                    writeln!(w, "BRDA:{line},{block},{i},{taken}")?;
                }
            }
        }
        writeln!(w, "BRF:{}", fc.branches_total())?;
        writeln!(w, "BRH:{}", fc.branches_hit())?;
        for (line, c) in &fc.lines {
            writeln!(w, "DA:{line},{}", c.executions.unwrap_or(u64::from(c.tests)))?;
        }
        writeln!(w, "LF:{}", fc.lines.len())?;
        writeln!(w, "LH:{}", fc.lines_hit())?;
        writeln!(w, "end_of_record")?;
    }
    Ok(())
}
