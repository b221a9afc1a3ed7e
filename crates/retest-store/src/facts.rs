//! What a selection needs to know of a unit it does not compare: the facts
//! of [`UnitFacts`], stored with every unit (table `unit_facts`) so that a
//! selection can leave the units a change did not touch undecoded.

use retest_graph::Unit;
use retest_graph::cfg::Declaration;
use serde::{Deserialize, Serialize};

/// The facts of one analysed unit that reach beyond it.
///
/// A unit whose preprocessed text is the same in both versions compares
/// equal to itself procedure by procedure; what it can still contribute to
/// a selection comes from the rest of the program. A selection that leaves
/// such a unit out needs from it only:
/// * the names it defines with external linkage — they decide how every
///   procedure of the program is named across versions (a name defined in
///   two units is qualified by its unit) and where calls by name go;
/// * whether it defines classes — a C++ class hierarchy spans units, so a
///   selection with classes anywhere compares every unit;
/// * the syntax error it holds outside any function, which every selection
///   warns about;
/// * every name it declares, mentions or refers to, as 64-bit hashes
///   ([`UnitFacts::may_name`]) — when a declaration elsewhere changed, the
///   unit can be left out only if it names none of what the change affects.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitFacts {
    /// Names of the procedures defined with external linkage, as often as defined.
    pub exported: Vec<String>,
    /// The unit defines classes in the project's files.
    pub classes: bool,
    /// A syntax error outside any procedure: where (`file:line`, when known) and what.
    pub unattributed_error: Option<(Option<String>, String)>,
    /// [`name_hash`] of every name of the unit, sorted, without duplicates.
    #[serde(skip)]
    pub names: Vec<u64>,
}

pub use retest_graph::summary::name_hash;

impl UnitFacts {
    pub fn of(u: &Unit) -> UnitFacts {
        let mut names: Vec<u64> = Vec::new();
        let decl = |d: &Declaration, names: &mut Vec<u64>| {
            names.extend(d.names.iter().chain(&d.mentions).map(|n| name_hash(n)));
        };
        for d in &u.decls {
            decl(d, &mut names);
        }
        for p in &u.procedures {
            names.push(name_hash(&p.name));
            for d in &p.locals {
                decl(d, &mut names);
            }
            for cfg in [&p.stmt, &p.cond] {
                for (_, n) in cfg.nodes() {
                    names.extend(n.refs.iter().chain(&n.calls).map(|r| name_hash(r)));
                    for d in &n.decls {
                        decl(d, &mut names);
                    }
                }
            }
        }
        names.sort_unstable();
        names.dedup();
        UnitFacts {
            exported: u.procedures.iter().filter(|p| !p.is_static).map(|p| p.name.clone()).collect(),
            classes: !u.classes.is_empty(),
            unattributed_error: u
                .unattributed_error
                .as_ref()
                .map(|p| (p.span.map(|s| format!("{}:{}", u.file_path(&s), s.line)), p.message.clone())),
            names,
        }
    }

    /// Whether the unit may name `name` (a hash collision answers yes).
    pub fn may_name(&self, name: &str) -> bool {
        self.names.binary_search(&name_hash(name)).is_ok()
    }

    /// The stored form: the JSON of the rest, its length before it (4 bytes,
    /// little-endian), then the name hashes (8 bytes each, little-endian).
    pub(crate) fn encode(&self) -> Vec<u8> {
        let json = serde_json::to_vec(self).expect("facts always serialise");
        let mut out = Vec::with_capacity(4 + json.len() + 8 * self.names.len());
        out.extend((json.len() as u32).to_le_bytes());
        out.extend(json);
        for h in &self.names {
            out.extend(h.to_le_bytes());
        }
        out
    }

    pub(crate) fn decode(b: &[u8]) -> Result<UnitFacts, String> {
        let (len, rest) = b.split_first_chunk::<4>().ok_or("too short")?;
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len || !(rest.len() - len).is_multiple_of(8) {
            return Err("torn".to_string());
        }
        let mut f: UnitFacts = serde_json::from_slice(&rest[..len]).map_err(|e| e.to_string())?;
        f.names = rest[len..].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        if !f.names.is_sorted() {
            return Err("names out of order".to_string());
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_read_back_as_written_and_torn_ones_are_refused() {
        let f = UnitFacts {
            exported: vec!["f".into(), "g".into()],
            classes: false,
            unattributed_error: Some((Some("a.c:3".into()), "syntax error".into())),
            names: {
                let mut v: Vec<u64> = ["f", "g", "x", "size_t"].iter().map(|n| name_hash(n)).collect();
                v.sort_unstable();
                v
            },
        };
        let b = f.encode();
        assert_eq!(UnitFacts::decode(&b).unwrap(), f);
        assert!(f.may_name("x") && f.may_name("size_t") && !f.may_name("y"));
        assert!(UnitFacts::decode(&b[..b.len() - 3]).is_err());
        assert!(UnitFacts::decode(&b[..2]).is_err());
    }

    #[test]
    fn the_name_hash_is_fnv_1a() {
        // the published FNV-1a 64 test values: stored hashes must never change
        assert_eq!(name_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(name_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(name_hash("foobar"), 0x8594_4171_f739_67e8);
    }
}
