//! Node equivalence between two versions — `Equivalent` of 002 §3.1 and
//! `Equiv` of 000 §3 — shared by every selection algorithm.
//!
//! Two statement-level nodes are equivalent when their kinds and normalised
//! texts are equal, they refer to no affected name (declaration changes), the
//! procedures their direct calls reach are the same in both versions, and, for a
//! call through a pointer, the set of procedures whose address is taken is
//! unchanged. The exit is equivalent only to the exit; declaration nodes compare
//! through affected names. Entries compare by signature, unit compile flags, and —
//! for a procedure the front end could not analyse — its whole text.

use std::collections::BTreeSet;

use retest_graph::NodeId;
use retest_graph::NodeKind;

use crate::affected::{Affected, Decl, affected};
use crate::hierarchy::Hierarchy;
use crate::program::{Keys, Pairing, ProcRef, Program, UnitRef};
use crate::reason::{At, ReasonKind};

/// The context in which nodes of two versions are compared.
pub struct Ctx<'p, 'a> {
    pub old: &'p Program<'a>,
    pub new: &'p Program<'a>,
    pub keys: Keys,
    pub pairing: Pairing,
    pub globals: Affected,
    /// Change in the set of address-taken procedures (added, removed).
    pub indirect_change: Option<(Vec<String>, Vec<String>)>,
    /// [`retest_graph::summary::name_hash`] of every name in `globals`.
    pub affected_hashes: std::collections::HashSet<u64>,
    /// The class hierarchies of both versions (C++).
    pub old_classes: Hierarchy<'a>,
    pub new_classes: Hierarchy<'a>,
}

/// A node of one version, located, for explanations.
pub fn at(p: &Program<'_>, keys: &Keys, r: ProcRef, n: NodeId) -> At {
    let proc = p.procedure(r);
    let node = proc.stmt.node(n);
    let unit = p.unit(r).unit;
    let span = node.span.or(proc.span);
    At {
        procedure: keys.key(p, r),
        text: match node.kind {
            NodeKind::Exit | NodeKind::Declaration => String::new(),
            _ => node.text.clone(),
        },
        file: span.map(|s| unit.file_path(&s).to_string()).unwrap_or_default(),
        line: span.map(|s| s.line).unwrap_or(0),
    }
}

impl<'p, 'a> Ctx<'p, 'a> {
    pub fn new(old: &'p Program<'a>, new: &'p Program<'a>) -> Ctx<'p, 'a> {
        let keys = Keys::new(old, new);
        let pairing = Pairing::new(old, new, &keys);
        // The system headers' declarations are left out when both versions
        // declare the same through them (the same digests of the units'
        // sealed declarations): the affected names are then the same. No
        // name then has sealed texts that differ, so none is affected
        // through a system header, and a sealed declaration is reached only
        // from such a name; a project's text never equals a sealed one, so
        // a name's texts differ exactly when its project texts do; and a
        // name the project declares is placed at its project declaration
        // (`summaries_prove_what_the_walk_finds` runs both ways).
        //
        // The project's declarations are left out too when, in addition,
        // both versions' units declare the same through them (the same
        // digests of the units' project declarations): affected names
        // depend only on the declarations each name has across the
        // program, and both versions then have the same, so no name is
        // affected (`summaries_prove_what_the_walk_finds`).
        let digests = |p: &Program<'_>, of: fn(&UnitRef<'_>) -> Option<u128>| -> Option<Vec<u128>> {
            let mut v: Vec<u128> = p.units.iter().map(of).collect::<Option<_>>()?;
            v.sort_unstable();
            v.dedup();
            Some(v)
        };
        let same = |of: fn(&UnitRef<'_>) -> Option<u128>| matches!((digests(old, of), digests(new, of)), (Some(a), Some(b)) if a == b);
        let shells_only = same(|u| u.sealed_digest());
        let globals = if shells_only && same(|u| u.own_digest()) {
            Affected::default()
        } else {
            let decls = |p: &'p Program<'a>| -> Vec<Decl<'a>> {
                p.units
                    .iter()
                    .flat_map(|u| {
                        let all = if shells_only { u.own_decls() } else { u.decls() };
                        all.iter()
                            .map(move |d| Decl { d, file: d.span.map(|s| u.unit.file_path(&s)).unwrap_or_default() })
                    })
                    .collect()
            };
            affected(&decls(old), &decls(new), &Affected::default())
        };
        let (ta, tb) = (old.address_taken(&keys), new.address_taken(&keys));
        let indirect_change =
            (ta != tb).then(|| (tb.difference(&ta).cloned().collect(), ta.difference(&tb).cloned().collect()));
        let affected_hashes = globals.names.keys().map(|n| retest_graph::summary::name_hash(n)).collect();
        Ctx {
            old,
            new,
            keys,
            pairing,
            affected_hashes,
            globals,
            indirect_change,
            old_classes: Hierarchy::new(old),
            new_classes: Hierarchy::new(new),
        }
    }

    /// Whether the entries of a procedure pair are equivalent; if not, why.
    pub fn entry_difference(&self, o: ProcRef, n: ProcRef) -> Option<ReasonKind> {
        let (po, pn) = (self.old.procedure(o), self.new.procedure(n));
        let (uo, un) = (self.old.unit(o), self.new.unit(n));
        if uo.flags != un.flags {
            return Some(ReasonKind::Flags { old: uo.flags.to_string(), new: un.flags.to_string() });
        }
        if let Some(why) = po.unanalysable.as_ref().or(pn.unanalysable.as_ref())
            && po.digest != pn.digest
        {
            return Some(ReasonKind::Unanalysable(why.clone()));
        }
        if po.stmt.node(po.stmt.entry()).text != pn.stmt.node(pn.stmt.entry()).text {
            return Some(ReasonKind::Signature);
        }
        None
    }

    /// `Equivalent(C, C')` for nodes of a procedure pair with local affected names.
    pub fn difference(&self, o: ProcRef, c: NodeId, n: ProcRef, c2: NodeId, locals: &Affected) -> Option<ReasonKind> {
        let (po, pn) = (self.old.procedure(o), self.new.procedure(n));
        let (a, b) = (po.stmt.node(c), pn.stmt.node(c2));
        if a.kind != b.kind {
            return Some(ReasonKind::Modified);
        }
        match a.kind {
            // the exit is equivalent only to the exit (000 §3, footnote 3)
            NodeKind::Exit => return None,
            // local declaration changes are handled through affected names
            NodeKind::Declaration => return None,
            _ => {}
        }
        if a.text != b.text {
            return Some(ReasonKind::Modified);
        }
        if let Some(kind) = self.dispatch_difference(&a.dispatch, &b.dispatch) {
            return Some(kind);
        }
        if let Some((name, why)) = self.dispatch_affected(&a.dispatch, &b.dispatch) {
            return Some(ReasonKind::Affected { name, detail: why });
        }
        if let Some((name, why)) = locals.first_in(&a.refs).or_else(|| self.globals.first_in(&a.refs)) {
            return Some(ReasonKind::Affected { name: name.to_string(), detail: why.detail.clone() });
        }
        for name in &a.calls {
            let ro: BTreeSet<String> =
                self.old.resolve(o.unit, name).into_iter().map(|r| self.pairing.old_keys[&r].clone()).collect();
            let rn: BTreeSet<String> =
                self.new.resolve(n.unit, name).into_iter().map(|r| self.pairing.new_keys[&r].clone()).collect();
            if ro != rn {
                return Some(ReasonKind::CallTargets {
                    name: name.clone(),
                    old: ro.into_iter().collect(),
                    new: rn.into_iter().collect(),
                });
            }
        }
        if a.indirect_call
            && let Some((added, removed)) = &self.indirect_change
        {
            return Some(ReasonKind::IndirectTargets { added: added.clone(), removed: removed.clone() });
        }
        None
    }

    /// `OutEdgesEquivalent` for the polymorphic call nodes within a
    /// statement (003 §5.2): whether each member call reaches the same
    /// methods in both versions' class hierarchies.
    pub fn dispatch_difference(
        &self,
        old: &[retest_graph::cfg::Dispatch],
        new: &[retest_graph::cfg::Dispatch],
    ) -> Option<ReasonKind> {
        use retest_graph::cfg::Receiver;
        if old.len() != new.len() {
            // the same text read another way (a unit stored before member
            // calls were recorded): no way to tell the targets apart
            let d = new.first().or(old.first())?;
            return Some(ReasonKind::Dispatch {
                call: d.name.clone(),
                on: String::new(),
                added: Vec::new(),
                removed: Vec::new(),
            });
        }
        for (d, d2) in old.iter().zip(new) {
            let (to, tn) = (self.old_classes.targets(d), self.new_classes.targets(d2));
            if to.keys != tn.keys || d != d2 {
                let on = match &d2.receiver {
                    Receiver::Object(c) | Receiver::Qualified(c) if !tn.by_name => c.clone(),
                    _ => String::new(),
                };
                return Some(ReasonKind::Dispatch {
                    call: d2.name.clone(),
                    on,
                    added: tn.keys.difference(&to.keys).cloned().collect(),
                    removed: to.keys.difference(&tn.keys).cloned().collect(),
                });
            }
        }
        None
    }

    /// A changed declaration of a method a member call may reach (a default
    /// argument, a return type): members are declared under their qualified
    /// names, found through the call's targets in either version.
    fn dispatch_affected(
        &self,
        old: &[retest_graph::cfg::Dispatch],
        new: &[retest_graph::cfg::Dispatch],
    ) -> Option<(String, String)> {
        for (d, d2) in old.iter().zip(new) {
            let (to, tn) = (self.old_classes.targets(d), self.new_classes.targets(d2));
            for k in to.keys.iter().chain(&tn.keys) {
                let name = retest_graph::unit::qualified_name(k);
                if let Some(why) = self.globals.names.get(name) {
                    return Some((name.to_string(), why.detail.clone()));
                }
            }
        }
        None
    }

    /// Affected local names of a procedure pair.
    pub fn locals(&self, o: ProcRef, n: ProcRef) -> Affected {
        let wrap = |p: &'p Program<'a>, r: ProcRef| -> Vec<Decl<'a>> {
            let u = p.unit(r).unit;
            p.procedure(r)
                .locals
                .iter()
                .map(|d| Decl { d, file: d.span.map(|s| u.file_path(&s)).unwrap_or_default() })
                .collect()
        };
        affected(&wrap(self.old, o), &wrap(self.new, n), &self.globals)
    }
}
