//! Affected names: the precise handling of declaration changes (002 §3.1.4
//! "Handling variable and type declarations", 003 §5.4).
//!
//! A name is *affected* when the set of its declarations' texts differs between
//! the versions (a variable's type, a type's definition, an enumerator's value, a
//! prototype, a function defined or not), or when a declaration of the name
//! mentions an affected name (a variable whose type is a changed struct, a typedef
//! of it, ...), to a fixpoint. A statement that refers to an affected name counts
//! as modified; selection is postponed to the statements that do, instead of
//! selecting every test that enters the scope of the declaration.

use std::collections::{BTreeMap, HashMap, HashSet};

use retest_graph::Declaration;

/// Why a name is affected.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Why {
    /// What changed, for the explanation: the old and new declaration texts, or
    /// the affected name this one depends on.
    pub detail: String,
    /// Where (old version), if known: (file, line).
    pub old_at: Option<(String, u32)>,
    /// Where (new version), if known.
    pub new_at: Option<(String, u32)>,
}

/// A set of affected names with the reason for each.
#[derive(Clone, Debug, Default)]
pub struct Affected {
    pub names: BTreeMap<String, Why>,
}

impl Affected {
    pub fn contains(&self, n: &str) -> bool {
        self.names.contains_key(n)
    }

    /// The first affected name among `refs`.
    pub fn first_in<'r>(&self, refs: &'r [String]) -> Option<(&'r str, &Why)> {
        refs.iter().find_map(|r| self.names.get(r).map(|w| (r.as_str(), w)))
    }
}

/// A declaration with where it is, for explanations.
pub struct Decl<'a> {
    pub d: &'a Declaration,
    pub file: &'a str,
}

/// Per name, the set of its declarations' texts (sorted, without duplicates).
fn texts<'a>(decls: &[Decl<'a>]) -> HashMap<&'a str, Vec<&'a str>> {
    let mut m: HashMap<&str, Vec<&str>> = HashMap::with_capacity(decls.len());
    for d in decls {
        for n in &d.d.names {
            m.entry(n.as_str()).or_default().push(d.d.text.as_str());
        }
    }
    for t in m.values_mut() {
        if t.len() > 1 {
            t.sort_unstable();
            t.dedup();
        }
    }
    m
}

/// The items of sorted `a` that are not in sorted `b`, in order.
fn difference<'s, 'a>(a: &'s [&'a str], b: &'s [&'a str]) -> impl Iterator<Item = &'a str> + 's {
    a.iter().copied().filter(move |x| b.binary_search(x).is_err())
}

/// Whether a declaration's text is a system header's digest (`retest-lang-c`'s
/// `decls::sealed`: `#` and 16 hex digits).
fn is_sealed(text: &str) -> bool {
    text.len() == 17 && text.starts_with('#') && text[1..].bytes().all(|b| b.is_ascii_hexdigit())
}

fn short(s: &str) -> String {
    if s.chars().count() > 80 { format!("{}…", s.chars().take(80).collect::<String>()) } else { s.to_string() }
}

/// Affected names between two sets of declarations. `seeds` are names already
/// affected (e.g. globals, when computing a procedure's locals).
pub fn affected(old: &[Decl<'_>], new: &[Decl<'_>], seeds: &Affected) -> Affected {
    let (to, tn) = (texts(old), texts(new));
    let mut out = Affected::default();
    let names = to.keys().chain(tn.keys().filter(|n| !to.contains_key(*n))).copied();
    let empty = Vec::new();
    let locate = |decls: &[Decl<'_>], name: &str| -> Option<(String, u32)> {
        decls
            .iter()
            .find(|d| d.d.names.iter().any(|n| n == name))
            .and_then(|d| d.d.span.map(|s| (d.file.to_string(), s.line)))
    };
    // names affected through a system header's declaration: only these reach
    // other system headers' declarations (below)
    let mut system: HashSet<String> = HashSet::new();
    for n in names {
        let (a, b) = (to.get(n).unwrap_or(&empty), tn.get(n).unwrap_or(&empty));
        if a != b {
            if a.iter().filter(|t| is_sealed(t)).ne(b.iter().filter(|t| is_sealed(t))) {
                system.insert(n.to_string());
            }
            let show = |t: &str| {
                if t.starts_with('#') { "(in a system header)".to_string() } else { format!("`{}`", short(t)) }
            };
            let gone: Vec<&str> = difference(a, b).collect();
            let came: Vec<&str> = difference(b, a).collect();
            let detail = match (gone.first(), came.first()) {
                (Some(g), Some(c)) if !g.starts_with('#') && !c.starts_with('#') => {
                    // the part that differs (the two texts often share a long prefix),
                    // after the text's first words, which say what is declared
                    let head = |t: &str| t.split(' ').take(3).collect::<Vec<_>>().join(" ");
                    let (ge, ce) = crate::reason::diff_excerpt(g, c);
                    let with_head = |t: &str, e: String| {
                        if e.starts_with('…') { format!("{} {e}", head(t)) } else { e }
                    };
                    format!(
                        "the declaration of `{n}` changed: {} → {}",
                        show(&with_head(g, ge)),
                        show(&with_head(c, ce))
                    )
                }
                (Some(g), Some(c)) => format!("the declaration of `{n}` changed: {} → {}", show(g), show(c)),
                (Some(g), None) if b.is_empty() => format!("`{n}` is no longer declared (was {})", show(g)),
                (Some(g), None) => format!("a declaration of `{n}` is gone: {}", show(g)),
                (None, Some(c)) if a.is_empty() => format!("`{n}` is newly declared: {}", show(c)),
                (None, Some(c)) => format!("`{n}` has a new declaration: {}", show(c)),
                (None, None) => unreachable!("the sets differ"),
            };
            out.names.insert(n.to_string(), Why { detail, old_at: locate(old, n), new_at: locate(new, n) });
        }
    }
    // closure: a declaration that mentions an affected name affects its own names.
    // A system header's declaration (its text sealed to a digest) cannot refer to
    // the project's entities: a project name it mentions is another entity of
    // the same spelling (a member or parameter `path`, `result`, `it` of the
    // project and the library's). So it is reached only through names that a
    // system header's declaration made affected (`string` through a changed
    // `basic_string`), never through the project's. Without this, a changed
    // class reached `std::string` through such spellings, and every statement
    // using a string counted as modified.
    let all: Vec<&Decl<'_>> = old.iter().chain(new.iter()).collect();
    loop {
        let mut grew = false;
        for d in &all {
            let sealed = is_sealed(&d.d.text);
            let hit = d.d.mentions.iter().find(|m| {
                if sealed { system.contains(*m) } else { out.names.contains_key(*m) || seeds.names.contains_key(*m) }
            });
            if let Some(m) = hit {
                for n in &d.d.names {
                    if sealed && system.insert(n.clone()) {
                        grew = true;
                    }
                    if !out.names.contains_key(n) && !seeds.names.contains_key(n) {
                        out.names.insert(
                            n.clone(),
                            Why {
                                detail: format!("`{n}` is declared with `{m}`, which changed"),
                                old_at: locate(old, n),
                                new_at: locate(new, n),
                            },
                        );
                        grew = true;
                    }
                }
            }
        }
        if !grew {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use retest_graph::DeclKind;

    use super::*;

    fn d(kind: DeclKind, names: &[&str], text: &str, mentions: &[&str]) -> Declaration {
        Declaration {
            kind,
            names: names.iter().map(|s| s.to_string()).collect(),
            text: text.into(),
            mentions: mentions.iter().map(|s| s.to_string()).collect(),
            span: None,
        }
    }

    #[test]
    fn type_changes_reach_the_variables_declared_with_them() {
        let old = [
            d(DeclKind::Tag, &["pair"], "struct pair { int a , b ; }", &[]),
            d(DeclKind::Type, &["pair_t"], "typedef struct pair pair_t ;", &["pair"]),
            d(DeclKind::Variable, &["p"], "pair_t p ;", &["pair_t"]),
            d(DeclKind::Variable, &["q"], "int q ;", &[]),
        ];
        let mut new = old.clone();
        new[0] = d(DeclKind::Tag, &["pair"], "struct pair { long a , b ; }", &[]);
        fn wrap(v: &[Declaration]) -> Vec<Decl<'_>> {
            v.iter().map(|d| Decl { d, file: "x.h" }).collect()
        }
        let a = affected(&wrap(&old), &wrap(&new), &Affected::default());
        let names: Vec<&str> = a.names.keys().map(String::as_str).collect();
        assert_eq!(names, vec!["p", "pair", "pair_t"]);
        let detail = &a.names["pair"].detail;
        assert!(detail.contains("struct pair { int a , b") && detail.contains("struct pair { long a , b"), "{detail}");
    }

    /// A system header's declaration (sealed) is affected only by its own change:
    /// a project name of the same spelling as one it mentions does not reach it.
    #[test]
    fn a_project_change_does_not_reach_a_system_declaration_through_a_shared_spelling() {
        let old = [
            d(DeclKind::Tag, &["Node", "path"], "struct Node { int id_ ; string path ; }", &["string"]),
            d(DeclKind::Variable, &["cur"], "Node * cur ;", &["Node"]),
            d(DeclKind::Type, &["string"], "#00000000000000aa", &["basic_string"]),
            d(DeclKind::Tag, &["basic_string", "size"], "#00000000000000bb", &["path", "size_type"]),
        ];
        let mut new = old.clone();
        new[0] = d(DeclKind::Tag, &["Node", "path"], "struct Node { string path ; int id_ ; }", &["string"]);
        fn wrap(v: &[Declaration]) -> Vec<Decl<'_>> {
            v.iter().map(|d| Decl { d, file: "x.h" }).collect()
        }
        let a = affected(&wrap(&old), &wrap(&new), &Affected::default());
        let names: Vec<&str> = a.names.keys().map(String::as_str).collect();
        assert_eq!(names, vec!["Node", "cur", "path"]);
        // a system declaration's own change still counts, reaches the system
        // declarations that mention it, and from there the project
        let mut changed = old.clone();
        changed[3] = d(DeclKind::Tag, &["basic_string", "size"], "#00000000000000cc", &["path", "size_type"]);
        let a = affected(&wrap(&old), &wrap(&changed), &Affected::default());
        let names: Vec<&str> = a.names.keys().map(String::as_str).collect();
        assert_eq!(names, vec!["Node", "basic_string", "cur", "path", "size", "string"]);
        assert_eq!(
            a.names["basic_string"].detail,
            "the declaration of `basic_string` changed: (in a system header) → (in a system header)"
        );
        assert_eq!(a.names["string"].detail, "`string` is declared with `basic_string`, which changed");
    }

    #[test]
    fn a_changed_declaration_shows_the_part_that_differs() {
        let table = |op: &str| {
            format!(
                "static const struct binop binops [ ] = {{ {{ T_OR , 1 , op_or }} , {{ T_AND , 2 , op_and }} , {{ T_EQ , 3 , {op} }} }} ;"
            )
        };
        let (old, new) = (table("op_eq"), table("op_ne"));
        let (o, n) = (d(DeclKind::Variable, &["binops"], &old, &[]), d(DeclKind::Variable, &["binops"], &new, &[]));
        let a = affected(&[Decl { d: &o, file: "x.c" }], &[Decl { d: &n, file: "x.c" }], &Affected::default());
        let detail = &a.names["binops"].detail;
        assert!(detail.contains("op_eq") && detail.contains("op_ne"), "{detail}");
        let (before, after) = detail.split_once(" → ").unwrap();
        assert_ne!(before.rsplit(": ").next(), Some(after), "{detail}");
    }

    #[test]
    fn identical_declarations_in_several_units_are_one_text() {
        let x = d(DeclKind::Variable, &["x"], "extern int x ;", &[]);
        let old = vec![Decl { d: &x, file: "a.c" }];
        let new = vec![Decl { d: &x, file: "a.c" }, Decl { d: &x, file: "b.c" }];
        assert!(affected(&old, &new, &Affected::default()).names.is_empty());
    }

    #[test]
    fn seeds_propagate_into_locals() {
        let local = d(DeclKind::Variable, &["s"], "struct pair s ;", &["pair"]);
        let old = vec![Decl { d: &local, file: "f.c" }];
        let mut seeds = Affected::default();
        seeds.names.insert("pair".into(), Why { detail: "changed".into(), old_at: None, new_at: None });
        let a = affected(&old, &old, &seeds);
        assert!(a.contains("s"));
    }
}
