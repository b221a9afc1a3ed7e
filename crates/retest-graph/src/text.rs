//! A compact, stable text rendering of a CFG: one line per node, one indented line
//! per out-edge. Used for `retest cfg --format text` and for snapshot tests.

use std::io::{self, Write};

use crate::cfg::{Cfg, NodeKind};

/// Writes `cfg` as text. `file_name` names the file of a span (omitted when `None`).
pub fn write_text(cfg: &Cfg, file_name: Option<&dyn Fn(u32) -> String>, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "cfg {} ({} nodes, {} edges)", cfg.name(), cfg.node_count(), cfg.edge_count())?;
    for (id, n) in cfg.nodes() {
        let loc = match (n.span, file_name) {
            (Some(s), Some(f)) => format!("{}:{}", f(s.file), s.line),
            (Some(s), None) => format!("{}", s.line),
            (None, _) => "-".to_string(),
        };
        let text = match n.kind {
            NodeKind::Declaration if n.decls.is_empty() => "(no local declarations)".to_string(),
            _ => n.text.clone(),
        };
        write!(w, "  n{:<3} {:<11} {:<6} {}", id.0, n.kind.as_str(), loc, text)?;
        if !n.calls.is_empty() || n.indirect_call {
            let mut calls = n.calls.join(",");
            if n.indirect_call {
                if !calls.is_empty() {
                    calls.push(',');
                }
                calls.push_str("<indirect>");
            }
            write!(w, "   [calls {calls}]")?;
        }
        writeln!(w)?;
        for e in cfg.out_edges(id) {
            let e = cfg.edge(e);
            writeln!(w, "        {} -> n{}", e.label, e.dst.0)?;
        }
    }
    Ok(())
}

/// [`write_text`] into a `String`.
pub fn to_text(cfg: &Cfg, file_name: Option<&dyn Fn(u32) -> String>) -> String {
    let mut out = Vec::new();
    write_text(cfg, file_name, &mut out).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("CFG text is UTF-8")
}
