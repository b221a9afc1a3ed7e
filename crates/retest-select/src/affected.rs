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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use retest_graph::Declaration;
use retest_graph::cfg::EVERY_NAME;
// whether a declaration's text is a system header's digest
use retest_graph::cfg::is_sealed_text as is_sealed;

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
        self.names.contains_key(n) || self.every_name()
    }

    /// Whether every name is affected: a declaration of
    /// [`EVERY_NAME`] (a `using namespace` directive) changed.
    pub fn every_name(&self) -> bool {
        self.names.contains_key(EVERY_NAME)
    }

    /// The first affected name among `refs`; with [`EVERY_NAME`] affected,
    /// the first of them.
    pub fn first_in<'r>(&self, refs: &'r [String]) -> Option<(&'r str, &Why)> {
        refs.iter().find_map(|r| self.names.get(r).map(|w| (r.as_str(), w))).or_else(|| {
            let w = self.names.get(EVERY_NAME)?;
            refs.first().map(|r| (r.as_str(), w))
        })
    }
}

/// A declaration with where it is, for explanations.
pub struct Decl<'a> {
    pub d: &'a Declaration,
    pub file: &'a str,
}

/// Per name, the set of its declarations' texts (sorted, without duplicates).
#[cfg(test)]
fn texts<'a>(decls: &[Decl<'a>]) -> HashMap<&'a str, Vec<&'a str>> {
    declared(decls).into_iter().map(|(n, d)| (n, d.texts)).collect()
}

/// What the declarations of one name say.
#[derive(Default)]
struct Declared<'a> {
    /// Their texts, sorted, without duplicates.
    texts: Vec<&'a str>,
    /// Where the first of the project's declarations (in order) of the name
    /// is, if it has a span.
    first: Option<(&'a str, u32)>,
    /// Where the first system header's declaration of it is: a name is
    /// explained at the project's declaration, at a system header's only
    /// when it is affected through one (so that, when both versions declare
    /// the same through system headers, those need not be read to say
    /// where a name is).
    first_sealed: Option<(&'a str, u32)>,
    /// Whether a project's (a system header's) declaration came before.
    seen: bool,
    seen_sealed: bool,
}

/// Per name, its declarations' texts and first place, in one pass. A
/// declaration repeated in every unit that includes its header adds its text
/// once per unit: a text equal to the one added last is not added again,
/// so sorting sees the distinct ones.
fn declared<'a>(decls: &[Decl<'a>]) -> HashMap<&'a str, Declared<'a>> {
    let mut m: HashMap<&str, Declared<'a>> = HashMap::with_capacity(decls.len());
    for d in decls {
        let sealed = d.d.is_sealed();
        for n in &d.d.names {
            let e = m.entry(n.as_str()).or_default();
            let (first, seen) =
                if sealed { (&mut e.first_sealed, &mut e.seen_sealed) } else { (&mut e.first, &mut e.seen) };
            if !*seen {
                (*first, *seen) = (d.d.span.map(|s| (d.file, s.line)), true);
            }
            let t = d.d.text.as_str();
            if e.texts.last() != Some(&t) {
                e.texts.push(t);
            }
        }
    }
    for d in m.values_mut() {
        if d.texts.len() > 1 {
            d.texts.sort_unstable();
            d.texts.dedup();
        }
    }
    m
}

/// The items of sorted `a` that are not in sorted `b`, in order.
fn difference<'s, 'a>(a: &'s [&'a str], b: &'s [&'a str]) -> impl Iterator<Item = &'a str> + 's {
    a.iter().copied().filter(move |x| b.binary_search(x).is_err())
}

fn short(s: &str) -> String {
    if s.chars().count() > 80 { format!("{}…", s.chars().take(80).collect::<String>()) } else { s.to_string() }
}

/// Affected names between two sets of declarations. `seeds` are names already
/// affected (e.g. globals, when computing a procedure's locals).
pub fn affected(old: &[Decl<'_>], new: &[Decl<'_>], seeds: &Affected) -> Affected {
    let (to, tn) = (declared(old), declared(new));
    let mut out = Affected::default();
    let names = to.keys().chain(tn.keys().filter(|n| !to.contains_key(*n))).copied();
    let empty = Vec::new();
    let place = |m: &HashMap<&str, Declared<'_>>, name: &str, system: &HashSet<String>| -> Option<(String, u32)> {
        let d = m.get(name)?;
        let at = if d.seen || !system.contains(name) { d.first } else { d.first_sealed };
        at.map(|(f, l)| (f.to_string(), l))
    };
    // names affected through a system header's declaration: only these reach
    // other system headers' declarations (below)
    let mut system: HashSet<String> = HashSet::new();
    for n in names {
        let (a, b) = (to.get(n).map_or(&empty, |d| &d.texts), tn.get(n).map_or(&empty, |d| &d.texts));
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
                _ if n == EVERY_NAME => {
                    let all = |v: &[&str]| v.iter().map(|t| show(t)).collect::<Vec<_>>().join(", ");
                    let what = match (gone.is_empty(), came.is_empty()) {
                        (false, false) => format!("changed: {} → {}", all(&gone), all(&came)),
                        (true, _) => format!("was added: {}", all(&came)),
                        (_, true) => format!("was removed: {}", all(&gone)),
                    };
                    format!("a `using namespace` directive, which may change what any name means, {what}")
                }
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
                // said of the project's declarations, whatever system headers
                // declare: the same words when those are left out
                (Some(g), None) if b.iter().all(|t| is_sealed(t)) && !is_sealed(g) => {
                    format!("`{n}` is no longer declared (was {})", show(g))
                }
                (Some(g), None) => format!("a declaration of `{n}` is gone: {}", show(g)),
                (None, Some(c)) if a.iter().all(|t| is_sealed(t)) && !is_sealed(c) => {
                    format!("`{n}` is newly declared: {}", show(c))
                }
                (None, Some(c)) => format!("`{n}` has a new declaration: {}", show(c)),
                (None, None) => unreachable!("the sets differ"),
            };
            out.names
                .insert(n.to_string(), Why { detail, old_at: place(&to, n, &system), new_at: place(&tn, n, &system) });
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
    //
    // The fixpoint is computed as rounds over the declarations in order (old,
    // then new), a declaration seeing the names made affected before it in the
    // same round, and each declaration's reason naming the first of its
    // mentions affected when it is reached. Only declarations that mention an
    // affected name are visited: an index from each name to the declarations
    // mentioning it gives, when a name becomes affected, those still to come in
    // this round and those to visit in the next. A declaration reached once has
    // made all its names affected, so it is never visited again
    // (`the_indexed_closure_is_the_round_by_round_fixpoint`).
    let all: Vec<&Decl<'_>> = old.iter().chain(new.iter()).collect();
    let sealed: Vec<bool> = all.iter().map(|d| is_sealed(&d.d.text)).collect();
    // per name, the declarations that mention it: project ones and system ones
    let mut mentioned_by: [HashMap<&str, Vec<usize>>; 2] = [HashMap::new(), HashMap::new()];
    for (i, d) in all.iter().enumerate() {
        for m in &d.d.mentions {
            let v = mentioned_by[sealed[i] as usize].entry(m.as_str()).or_default();
            if v.last() != Some(&i) {
                v.push(i);
            }
        }
    }
    let mut done = vec![false; all.len()];
    let mut this_round: BTreeSet<usize> = BTreeSet::new();
    let mut next_round: BTreeSet<usize> = BTreeSet::new();
    // declarations reached by what is affected before the closure starts
    for (n, by) in mentioned_by[0].iter() {
        if out.names.contains_key(*n) || seeds.names.contains_key(*n) {
            this_round.extend(by.iter().copied());
        }
    }
    for (n, by) in mentioned_by[1].iter() {
        if system.contains(*n) {
            this_round.extend(by.iter().copied());
        }
    }
    loop {
        let Some(i) = this_round.pop_first() else {
            if next_round.is_empty() {
                break;
            }
            std::mem::swap(&mut this_round, &mut next_round);
            continue;
        };
        if done[i] {
            continue;
        }
        let d = all[i];
        let hit = d.d.mentions.iter().find(|m| {
            if sealed[i] { system.contains(*m) } else { out.names.contains_key(*m) || seeds.names.contains_key(*m) }
        });
        let Some(m) = hit else { continue };
        done[i] = true;
        let reach = |n: &str, which: usize, this_round: &mut BTreeSet<usize>, next_round: &mut BTreeSet<usize>| {
            for &j in mentioned_by[which].get(n).into_iter().flatten() {
                if !done[j] {
                    if j > i {
                        this_round.insert(j)
                    } else {
                        next_round.insert(j)
                    };
                }
            }
        };
        for n in &d.d.names {
            if sealed[i] && system.insert(n.clone()) {
                reach(n, 1, &mut this_round, &mut next_round);
            }
            if !out.names.contains_key(n) && !seeds.names.contains_key(n) {
                out.names.insert(
                    n.clone(),
                    Why {
                        detail: format!("`{n}` is declared with `{m}`, which changed"),
                        old_at: place(&to, n, &system),
                        new_at: place(&tn, n, &system),
                    },
                );
                reach(n, 0, &mut this_round, &mut next_round);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
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

    /// The closure as first written: rounds over every declaration until none
    /// adds a name (kept as the oracle of the indexed one).
    fn round_by_round(old: &[Decl<'_>], new: &[Decl<'_>], seeds: &Affected) -> Affected {
        // the first of the project's declarations of the name; without one,
        // the first system header's, for a name affected through one
        let locate = |decls: &[Decl<'_>], name: &str, system: &HashSet<String>| -> Option<(String, u32)> {
            let of = |d: &&Decl<'_>| d.d.names.iter().any(|n| n == name);
            let own = decls.iter().filter(of).find(|d| !d.d.is_sealed());
            let at = if own.is_some() || !system.contains(name) { own } else { decls.iter().find(of) };
            at.and_then(|d| d.d.span.map(|s| (d.file.to_string(), s.line)))
        };
        // the direct changes as the indexed version finds them (not under test here)
        let mut out = affected(old, new, seeds);
        let (to, tn) = (texts(old), texts(new));
        let empty = Vec::new();
        out.names.retain(|n, _| to.get(n.as_str()).unwrap_or(&empty) != tn.get(n.as_str()).unwrap_or(&empty));
        let mut system: HashSet<String> = out
            .names
            .keys()
            .filter(|n| {
                let (a, b) = (to.get(n.as_str()).unwrap_or(&empty), tn.get(n.as_str()).unwrap_or(&empty));
                a.iter().filter(|t| is_sealed(t)).ne(b.iter().filter(|t| is_sealed(t)))
            })
            .cloned()
            .collect();
        let all: Vec<&Decl<'_>> = old.iter().chain(new.iter()).collect();
        loop {
            let mut grew = false;
            for d in &all {
                let sealed = is_sealed(&d.d.text);
                let hit = d.d.mentions.iter().find(|m| {
                    if sealed {
                        system.contains(*m)
                    } else {
                        out.names.contains_key(*m) || seeds.names.contains_key(*m)
                    }
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
                                    old_at: locate(old, n, &system),
                                    new_at: locate(new, n, &system),
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

    type Raw = (Vec<u8>, u8, Vec<u8>, Option<u8>);

    fn arb_decls() -> impl Strategy<Value = Vec<Raw>> {
        // (names, text, mentions, span line) over 10 names and 6 texts (two sealed)
        prop::collection::vec(
            (
                prop::collection::vec(0u8..10, 1..3),
                0u8..6,
                prop::collection::vec(0u8..10, 0..4),
                prop::option::of(1u8..5),
            ),
            0..16,
        )
    }

    /// A version and the next: a few declarations' texts changed, one maybe added.
    fn arb_versions() -> impl Strategy<Value = (Vec<Raw>, Vec<Raw>)> {
        (arb_decls(), prop::collection::vec((0usize..16, 0u8..6), 0..3), prop::option::of(arb_decls())).prop_map(
            |(old, edits, extra)| {
                let mut new = old.clone();
                for (i, t) in edits {
                    if let Some(d) = new.get_mut(i) {
                        d.1 = t;
                    }
                }
                new.extend(extra.into_iter().flatten().take(1));
                (old, new)
            },
        )
    }

    fn build(v: &[Raw]) -> Vec<Declaration> {
        const TEXTS: [&str; 6] =
            ["int a ;", "long a ;", "struct s { int x ; }", "#00000000000000aa", "#00000000000000bb", "char * p ;"];
        v.iter()
            .map(|(names, text, mentions, line)| Declaration {
                kind: DeclKind::Variable,
                names: names.iter().map(|n| format!("n{n}")).collect(),
                text: TEXTS[*text as usize].into(),
                mentions: mentions.iter().map(|n| format!("n{n}")).collect(),
                span: line.map(|l| retest_graph::Span { file: 0, line: l as u32, col: 0, end_line: l as u32 }),
            })
            .collect()
    }

    proptest! {
        /// The indexed closure gives the names, reasons and places of the
        /// round-by-round fixpoint, with and without seeds.
        #[test]
        fn the_indexed_closure_is_the_round_by_round_fixpoint(
            (old, new) in arb_versions(), seeds in prop::collection::vec(0u8..10, 0..3)
        ) {
            let (old, new) = (build(&old), build(&new));
            let o: Vec<Decl<'_>> = old.iter().map(|d| Decl { d, file: "o.h" }).collect();
            let n: Vec<Decl<'_>> = new.iter().map(|d| Decl { d, file: "n.h" }).collect();
            let mut s = Affected::default();
            for x in seeds {
                s.names.insert(format!("n{x}"), Why { detail: "seed".into(), old_at: None, new_at: None });
            }
            for seeds in [Affected::default(), s] {
                let (a, b) = (affected(&o, &n, &seeds), round_by_round(&o, &n, &seeds));
                prop_assert_eq!(a.names, b.names);
            }
        }

        /// When both versions hold the same system headers' declarations
        /// (sealed), wherever they stand among the project's, leaving them
        /// out gives the same names, reasons and places: what selection does
        /// when the units' sealed digests are equal (`equiv::Ctx::new`).
        #[test]
        fn the_same_sealed_declarations_can_be_left_out(
            (old, new) in arb_versions(),
            system in arb_decls(),
            at_old in prop::collection::vec(0usize..32, 0..16),
            at_new in prop::collection::vec(0usize..32, 0..16),
        ) {
            let own = |v: Vec<Declaration>| -> Vec<Declaration> { v.into_iter().filter(|d| !d.is_sealed()).collect() };
            let (old, new) = (own(build(&old)), own(build(&new)));
            let system: Vec<Declaration> = build(&system).into_iter().filter(|d| d.is_sealed()).collect();
            // the same sealed declarations, each put in at some place
            let with = |own: &[Declaration], at: &[usize]| -> Vec<Declaration> {
                let mut all = own.to_vec();
                for (i, d) in system.iter().enumerate() {
                    let at = at.get(i).copied().unwrap_or(0) % (all.len() + 1);
                    all.insert(at, d.clone());
                }
                all
            };
            let (full_old, full_new) = (with(&old, &at_old), with(&new, &at_new));
            fn wrap<'d>(v: &'d [Declaration], file: &'static str) -> Vec<Decl<'d>> {
                v.iter().map(|d| Decl { d, file }).collect()
            }
            let left_out = affected(&wrap(&old, "o.h"), &wrap(&new, "n.h"), &Affected::default());
            let all = affected(&wrap(&full_old, "o.h"), &wrap(&full_new, "n.h"), &Affected::default());
            prop_assert_eq!(left_out.names, all.names);
        }

        /// When both versions' units declare the same lists (the same set
        /// of units' digests, whatever their order, places and how many
        /// units share a list), no name is affected: what selection does
        /// when the units' digests of their project declarations are equal
        /// (`equiv::Ctx::new`).
        #[test]
        fn the_same_units_declarations_affect_nothing(
            units in prop::collection::vec(arb_decls(), 1..5),
            order in prop::collection::vec(0usize..8, 1..10),
            lines in prop::collection::vec(prop::option::of(1u8..5), 0..16),
        ) {
            let old: Vec<Vec<Declaration>> = units.iter().map(|u| build(u)).collect();
            // the new version: the same lists, each at least once, in another
            // order, some repeated, their places moved
            let mut picks: Vec<usize> = (0..old.len()).collect();
            picks.extend(order.iter().map(|i| i % old.len()));
            let by = order[0] % picks.len();
            picks.rotate_left(by);
            let new: Vec<Vec<Declaration>> = picks
                .iter()
                .map(|&i| {
                    let mut u = old[i].clone();
                    for (d, l) in u.iter_mut().zip(&lines) {
                        d.span = l.map(|l| retest_graph::Span { file: 0, line: l as u32, col: 0, end_line: l as u32 });
                    }
                    u
                })
                .collect();
            fn wrap<'d>(units: &'d [Vec<Declaration>], file: &'static str) -> Vec<Decl<'d>> {
                units.iter().flatten().map(|d| Decl { d, file }).collect()
            }
            let a = affected(&wrap(&old, "o.h"), &wrap(&new, "n.h"), &Affected::default());
            prop_assert!(a.names.is_empty(), "{:?}", a.names);
        }
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

    /// A declaration of every name (a `using namespace` directive) that
    /// changes affects every name; one that stays affects none.
    #[test]
    fn a_changed_declaration_of_every_name_affects_every_name() {
        let d = |names: &[&str], text: &str| Declaration {
            kind: DeclKind::Other,
            names: names.iter().map(|n| n.to_string()).collect(),
            text: text.into(),
            mentions: vec![],
            span: None,
        };
        fn wrap(v: &[Declaration]) -> Vec<Decl<'_>> {
            v.iter().map(|d| Decl { d, file: "x.cc" }).collect()
        }
        let f = d(&["f"], "int f ( int ) ;");
        let directive = d(&["exact", EVERY_NAME], "using namespace exact ;");
        let (old, new) = (vec![f.clone()], vec![f, directive]);
        for (a, b) in [(&old, &new), (&new, &old)] {
            let got = affected(&wrap(a), &wrap(b), &Affected::default());
            assert!(got.every_name() && got.contains("anything"));
            let refs = vec!["v".to_string(), "g".to_string()];
            let (name, why) = got.first_in(&refs).unwrap();
            assert_eq!(name, "v");
            assert!(why.detail.contains("using namespace exact"), "{}", why.detail);
        }
        let same = affected(&wrap(&new), &wrap(&new), &Affected::default());
        assert!(!same.every_name() && same.first_in(&["f".to_string()]).is_none());
    }
}
