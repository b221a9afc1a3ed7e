//! Why an edge is dangerous — the explanation attached to every selected test.

use std::fmt;

/// A node in one version, for explanations.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct At {
    /// The procedure's key.
    pub procedure: String,
    /// Normalised text of the node (empty for entry/exit).
    pub text: String,
    pub file: String,
    pub line: u32,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What kind of difference makes an edge dangerous.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ReasonKind {
    /// The successor statement's text differs (including added and deleted code).
    Modified,
    /// The successor refers to a name whose declaration changed.
    Affected { name: String, detail: String },
    /// A procedure called by name resolves to different definitions.
    CallTargets { name: String, old: Vec<String>, new: Vec<String> },
    /// A member call's target set changed without its text: a polymorphic
    /// call node's out-edges are no longer equivalent (003 §5.2). `on` is
    /// the receiver's static type, empty when unknown (`by_name`: the set is
    /// every method of that name and arity).
    Dispatch { call: String, on: String, added: Vec<String>, removed: Vec<String> },
    /// The set of procedures reachable through pointers changed.
    IndirectTargets { added: Vec<String>, removed: Vec<String> },
    /// The procedure's signature (return type, parameters, qualifiers) changed.
    Signature,
    /// The compile flags of the procedure's translation unit changed.
    Flags { old: String, new: String },
    /// The procedure could not be analysed exactly and its text changed.
    Unanalysable(String),
    /// The procedure no longer exists.
    Removed,
    /// A case label was added to a switch: tests that took `default` may take it.
    CaseAdded(String),
    /// A case label was removed from a switch.
    CaseRemoved(String),
    /// The node's out-edges no longer correspond (its kind or branches changed).
    Structure,
}

/// The reason for one dangerous edge.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Reason {
    pub kind: ReasonKind,
    /// The old node the dangerous edge leads to (or the procedure's entry).
    pub old: Option<At>,
    /// Its counterpart in the new version, if any.
    pub new: Option<At>,
}

/// The part of two token texts that differs, with a little context:
/// `a b c d e` vs `a b X d e` → (`… b c d …`, `… b X d …`).
pub fn diff_excerpt(old: &str, new: &str) -> (String, String) {
    const CONTEXT: usize = 3;
    let (a, b): (Vec<&str>, Vec<&str>) = (old.split(' ').collect(), new.split(' ').collect());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a.iter().rev().zip(b.iter().rev()).take(max_suffix).take_while(|(x, y)| x == y).count();
    let show = |t: &[&str]| {
        let from = prefix.saturating_sub(CONTEXT);
        let to = (t.len() - suffix + CONTEXT).min(t.len());
        let mut out = String::new();
        if from > 0 {
            out.push_str("… ");
        }
        out.push_str(&t[from..to].join(" "));
        if to < t.len() {
            out.push_str(" …");
        }
        out
    };
    (show(&a), show(&b))
}

/// `text` in backquotes, cut at 60 characters.
pub(crate) fn quote(s: &str) -> String {
    let s =
        if s.chars().count() > 60 { format!("{}…", s.chars().take(60).collect::<String>()) } else { s.to_string() };
    format!("`{s}`")
}

impl fmt::Display for Reason {
    /// One line: what changed, where in both versions.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let old_at = self.old.as_ref().map(|a| a.to_string()).unwrap_or_default();
        let new_at = self.new.as_ref().map(|a| a.to_string()).unwrap_or_default();
        match &self.kind {
            ReasonKind::Modified => match (&self.old, &self.new) {
                (Some(o), Some(n)) if !o.text.is_empty() && !n.text.is_empty() => {
                    let (a, b) = diff_excerpt(&o.text, &n.text);
                    write!(f, "{} changed: {} → {} ({})", o, quote(&a), quote(&b), n)
                }
                (Some(o), Some(n)) if n.text.is_empty() => write!(f, "code removed at {o}: {}", quote(&o.text)),
                (Some(o), Some(n)) => write!(f, "code added at {n}: {} (before {o})", quote(&n.text)),
                (Some(o), None) => write!(f, "{o} changed: {}", quote(&o.text)),
                _ => write!(f, "code changed"),
            },
            ReasonKind::Affected { name, detail } => {
                write!(f, "{old_at} uses `{name}`: {detail}")
            }
            ReasonKind::CallTargets { name, old, new } => write!(
                f,
                "{old_at} calls `{name}`, which resolves to [{}] instead of [{}]",
                new.join(", "),
                old.join(", ")
            ),
            ReasonKind::Dispatch { call, on, added, removed } => {
                let through = if on.is_empty() {
                    "on an object of unknown static type: every method of that name and arity".to_string()
                } else {
                    format!("on a `{on}`")
                };
                write!(f, "{old_at} calls `{call}` ({through}), and the methods it may reach changed")?;
                if !added.is_empty() {
                    write!(f, " (+{})", added.join(", +"))?;
                }
                if !removed.is_empty() {
                    write!(f, " (-{})", removed.join(", -"))?;
                }
                Ok(())
            }
            ReasonKind::IndirectTargets { added, removed } => {
                write!(f, "{old_at} calls through a pointer and the procedures whose address is taken changed")?;
                if !added.is_empty() {
                    write!(f, " (+{})", added.join(", +"))?;
                }
                if !removed.is_empty() {
                    write!(f, " (-{})", removed.join(", -"))?;
                }
                Ok(())
            }
            ReasonKind::Signature => {
                let (a, b) = diff_excerpt(
                    self.old.as_ref().map(|a| a.text.as_str()).unwrap_or(""),
                    self.new.as_ref().map(|a| a.text.as_str()).unwrap_or(""),
                );
                write!(
                    f,
                    "the signature of {} changed: {} → {} ({new_at})",
                    self.old.as_ref().map(|a| a.procedure.as_str()).unwrap_or("?"),
                    quote(&a),
                    quote(&b)
                )
            }
            ReasonKind::Flags { old, new } => write!(
                f,
                "the compile flags of {}'s translation unit changed: {old} → {new}",
                self.old.as_ref().map(|a| a.procedure.as_str()).unwrap_or("?")
            ),
            ReasonKind::Unanalysable(why) => {
                write!(
                    f,
                    "{} changed and cannot be analysed exactly ({why})",
                    self.old.as_ref().map(|a| a.procedure.as_str()).unwrap_or("?")
                )?;
                if !new_at.is_empty() {
                    write!(f, " at {new_at}")?;
                }
                Ok(())
            }
            ReasonKind::Removed => write!(
                f,
                "{} was removed (was at {old_at})",
                self.old.as_ref().map(|a| a.procedure.as_str()).unwrap_or("?")
            ),
            ReasonKind::CaseAdded(l) => {
                write!(f, "case {l} added to the switch at {new_at}; tests that took `default` may take it")
            }
            ReasonKind::CaseRemoved(l) => write!(f, "case {l} removed from the switch at {old_at}"),
            ReasonKind::Structure => write!(f, "the branches of {old_at} changed ({new_at})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::diff_excerpt;

    #[test]
    fn excerpts_show_the_difference_with_context() {
        let (a, b) = diff_excerpt("a && b && c && ! ( x > 0 || y ) && z", "a && b && c && ! ( x > 1 || y ) && z");
        assert_eq!(a, "… ( x > 0 || y ) …");
        assert_eq!(b, "… ( x > 1 || y ) …");
        assert_eq!(diff_excerpt("x = 1 ;", "x = 2 ;"), ("x = 1 ;".to_string(), "x = 2 ;".to_string()));
        // an insertion: the old side shows only context
        let (a, b) = diff_excerpt("f ( a ) ;", "f ( a , b ) ;");
        assert_eq!((a.as_str(), b.as_str()), ("f ( a ) ;", "f ( a , b ) ;"));
    }
}
