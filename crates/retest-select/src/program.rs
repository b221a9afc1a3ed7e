//! A program version as selection sees it: its units, the procedures defined in
//! them, how a procedure is identified across versions, and which procedures a
//! call by name can reach.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use retest_graph::summary::{Bodies, Summary};
use retest_graph::{Procedure, Unit};

/// One translation unit of a program version.
#[derive(Clone, Copy)]
pub struct UnitRef<'a> {
    /// Identity across versions (source path and output).
    pub key: &'a str,
    pub unit: &'a Unit,
    /// Identity compile flags; a change makes every procedure of the unit changed.
    pub flags: &'a str,
    /// Set in the new version when the unit could not be analysed at all (say, it
    /// no longer preprocesses): every procedure of its old version counts as changed.
    pub broken: Option<&'a str>,
    /// A stored unit read with its procedure bodies decoded on demand: `unit`
    /// is then a shell, its procedures' names, linkage, spans and digests
    /// without bodies, and [`Program::procedure`] reads bodies from here.
    pub bodies: Option<&'a dyn Bodies>,
}

impl<'a> UnitRef<'a> {
    /// All the unit's declarations, in order: a shell that leaves out the
    /// system headers' ones reads them on first use
    /// ([`Bodies::all_decls`](retest_graph::summary::Bodies::all_decls)).
    pub fn decls(&self) -> &'a [retest_graph::Declaration] {
        self.bodies.and_then(|b| b.all_decls()).unwrap_or(&self.unit.decls)
    }

    /// The digest of the system headers' declarations, when the shell's
    /// `decls` leave them out.
    pub fn sealed_digest(&self) -> Option<u128> {
        self.bodies.and_then(|b| b.sealed_digest())
    }

    /// The project's declarations, in order, when the shell's `decls` leave
    /// out the system headers' ones: a shell that leaves out the project's
    /// too reads them on first use
    /// ([`Bodies::own_decls`](retest_graph::summary::Bodies::own_decls)).
    pub fn own_decls(&self) -> &'a [retest_graph::Declaration] {
        self.bodies.and_then(|b| b.own_decls()).unwrap_or(&self.unit.decls)
    }

    /// The digest of the project's declarations, when the shell's `decls`
    /// leave them out.
    pub fn own_digest(&self) -> Option<u128> {
        self.bodies.and_then(|b| b.own_digest())
    }
}

/// A procedure of a program: (unit index, procedure index).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ProcRef {
    pub unit: usize,
    pub proc: usize,
}

/// A program version.
pub struct Program<'a> {
    pub units: Vec<UnitRef<'a>>,
    /// Procedures by name (all units).
    by_name: HashMap<&'a str, Vec<ProcRef>>,
    /// Names defined with external linkage in units left out of the program,
    /// with how often: units that are the same in both versions, which a
    /// selection need not compare (see [`Program::with_elsewhere`]).
    elsewhere: Option<&'a HashMap<String, usize>>,
}

impl<'a> Program<'a> {
    pub fn new(units: Vec<UnitRef<'a>>) -> Program<'a> {
        let mut by_name: HashMap<&'a str, Vec<ProcRef>> = HashMap::new();
        for (ui, u) in units.iter().enumerate() {
            for (pi, p) in u.unit.procedures.iter().enumerate() {
                by_name.entry(p.name.as_str()).or_default().push(ProcRef { unit: ui, proc: pi });
            }
        }
        Program { units, by_name, elsewhere: None }
    }

    /// This program, part of a larger one whose other units are the same in
    /// both versions and define the procedures `names` (name → how often)
    /// with external linkage. Those names still decide how procedures are
    /// named across versions ([`Keys`]): a name defined twice is qualified
    /// by its unit whether or not both units are here.
    ///
    /// Leaving such units out gives the selection of the whole program only
    /// when the change also leaves the rest of what they see alone — the
    /// caller checks that (`retest-engine`'s selection: the same units, the
    /// same externally visible names and address-taken procedures in every
    /// changed unit, no declaration change, no classes).
    pub fn with_elsewhere(mut self, names: &'a HashMap<String, usize>) -> Program<'a> {
        self.elsewhere = Some(names);
        self
    }

    /// Procedure `r` in full (its body decoded on first use).
    pub fn procedure(&self, r: ProcRef) -> &'a Procedure {
        let u = &self.units[r.unit];
        match u.bodies {
            Some(b) => b.body(r.proc),
            None => &u.unit.procedures[r.proc],
        }
    }

    /// Procedure `r`'s name, linkage, span, digest and `unanalysable`, and
    /// no more: its body may not be decoded (see [`UnitRef::bodies`]).
    pub fn head(&self, r: ProcRef) -> &'a Procedure {
        &self.units[r.unit].unit.procedures[r.proc]
    }

    /// Procedure `r`'s summary, when its unit is read with bodies on demand.
    pub fn summary(&self, r: ProcRef) -> Option<&'a Summary> {
        self.units[r.unit].bodies.map(|b| b.summary(r.proc))
    }

    /// Unit-wide number of each procedure's first condition-level edge in unit `ui`.
    pub fn edge_bases(&self, ui: usize) -> Vec<u32> {
        let u = &self.units[ui];
        match u.bodies {
            Some(b) => b.edge_bases(u.unit.procedures.len()),
            None => u.unit.edge_bases(),
        }
    }

    /// The first procedure body of either version that could not be decoded.
    pub fn body_error(&self) -> Option<String> {
        self.units.iter().find_map(|u| u.bodies.and_then(|b| b.error()))
    }

    pub fn unit(&self, r: ProcRef) -> &UnitRef<'a> {
        &self.units[r.unit]
    }

    pub fn procedures(&self) -> impl Iterator<Item = ProcRef> + '_ {
        self.units
            .iter()
            .enumerate()
            .flat_map(|(ui, u)| (0..u.unit.procedures.len()).map(move |pi| ProcRef { unit: ui, proc: pi }))
    }

    /// The procedures a direct call to `name` from unit `from` can reach: the
    /// unit's own `static` definition if it has one, otherwise every externally
    /// visible definition of the name (several when the project links several
    /// programs that each define it).
    pub fn resolve(&self, from: usize, name: &str) -> Vec<ProcRef> {
        let Some(all) = self.by_name.get(name) else { return Vec::new() };
        if let Some(local) = all.iter().find(|r| r.unit == from && self.head(**r).is_static) {
            return vec![*local];
        }
        all.iter().copied().filter(|r| !self.head(*r).is_static).collect()
    }

    /// Procedures whose address is taken anywhere (possible targets of calls
    /// through pointers), as keys.
    pub fn address_taken(&self, keys: &Keys) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (ui, u) in self.units.iter().enumerate() {
            for name in &u.unit.address_taken {
                for r in self.resolve(ui, name) {
                    out.insert(keys.key(self, r));
                }
            }
        }
        out
    }
}

/// How procedures are named across two versions: a `static` procedure by unit and
/// name; an externally visible one by name alone when the name is defined once in
/// each version (so it may move between units), else by unit and name.
pub struct Keys {
    ambiguous: HashSet<String>,
}

impl Keys {
    pub fn new(old: &Program<'_>, new: &Program<'_>) -> Keys {
        let mut ambiguous = HashSet::new();
        for p in [old, new] {
            let mut count: HashMap<&str, usize> = HashMap::new();
            for r in p.procedures() {
                let proc = p.head(r);
                if !proc.is_static {
                    *count.entry(proc.name.as_str()).or_default() += 1;
                }
            }
            // only names defined here are ever keyed: the units left out
            // add to their counts (looked up, not walked: at a fleet's
            // scale they define 10^5 names)
            if let Some(elsewhere) = p.elsewhere {
                for (name, c) in count.iter_mut() {
                    *c += elsewhere.get(*name).copied().unwrap_or(0);
                }
            }
            ambiguous.extend(count.into_iter().filter(|(_, c)| *c > 1).map(|(n, _)| n.to_string()));
        }
        Keys { ambiguous }
    }

    pub fn key(&self, p: &Program<'_>, r: ProcRef) -> String {
        let proc = p.head(r);
        if proc.is_static || self.ambiguous.contains(&proc.name) {
            format!("{}::{}", p.unit(r).key, proc.name)
        } else {
            proc.name.clone()
        }
    }
}

/// The pairing of procedures between two versions.
pub struct Pairing {
    pub old_to_new: BTreeMap<ProcRef, ProcRef>,
    pub new_to_old: BTreeMap<ProcRef, ProcRef>,
    pub old_keys: BTreeMap<ProcRef, String>,
    pub new_keys: BTreeMap<ProcRef, String>,
}

impl Pairing {
    pub fn new(old: &Program<'_>, new: &Program<'_>, keys: &Keys) -> Pairing {
        let old_keys: BTreeMap<ProcRef, String> = old.procedures().map(|r| (r, keys.key(old, r))).collect();
        let new_keys: BTreeMap<ProcRef, String> = new.procedures().map(|r| (r, keys.key(new, r))).collect();
        let by_key: HashMap<&str, ProcRef> = new_keys.iter().map(|(r, k)| (k.as_str(), *r)).collect();
        let mut old_to_new = BTreeMap::new();
        let mut new_to_old = BTreeMap::new();
        for (r, k) in &old_keys {
            if let Some(n) = by_key.get(k.as_str()) {
                old_to_new.insert(*r, *n);
                new_to_old.insert(*n, *r);
            }
        }
        Pairing { old_to_new, new_to_old, old_keys, new_keys }
    }
}
