//! The class hierarchy of a program version and the target sets of its member
//! calls (003 §5.2).
//!
//! A call `p->m(args)` whose receiver has static type `S` reaches the member
//! `m` that name lookup finds in `S` or, failing that, in its bases; when that
//! member is virtual (declared so, or overriding a virtual member of a base),
//! it may also reach every override of `m` in the classes derived from `S`.
//! Where the static type is not known, or names no class of the program, the
//! call may reach every member function named `m` that accepts that many
//! arguments — conservative, and said so in the target set's `why`.
//!
//! A target is named by the key its definition's procedure gets
//! (`ns::C::m(int) const`), whether or not the program defines it: a pure
//! virtual member, or one defined in a library, is a target too, so that a new
//! override of it changes the set. Classes are the union over every unit of
//! the program (a header's classes appear in every unit that includes it);
//! two classes of one last name are both taken.
//!
//! Selection compares a call's target set in the old hierarchy with its set
//! in the new one: a changed set means the polymorphic call node's out-edges
//! are no longer equivalent (`OutEdgesEquivalent`, 003 Fig. 5 lines 12–15),
//! and every test through the call is selected — a new or removed override,
//! a new base, a member that becomes or stops being virtual, a new overload
//! of the same arity.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use retest_graph::cfg::{Dispatch, Receiver};
use retest_graph::{Class, Method, MethodKind};

use crate::program::Program;

/// The classes of a program version.
#[derive(Default)]
pub struct Hierarchy<'a> {
    /// By last name; several when classes of that name differ.
    classes: BTreeMap<&'a str, Vec<&'a Class>>,
    /// Direct subclasses by base's last name.
    derived: BTreeMap<&'a str, BTreeSet<&'a str>>,
    /// Every method by name, for calls whose receiver is unknown.
    by_method: BTreeMap<&'a str, Vec<&'a Method>>,
    /// The targets of each call asked about so far: a program makes the same
    /// call (`it->size()` on an unknown receiver) in many places, and the
    /// comparison asks about each in both versions.
    memo: RefCell<HashMap<Dispatch, Rc<Targets>>>,
}

/// The targets of one member call.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Targets {
    /// Method keys (procedure names of their definitions).
    pub keys: BTreeSet<String>,
    /// The set is every method of the name and arity: the receiver's static
    /// type was not known (or named no class of the program).
    pub by_name: bool,
}

impl<'a> Hierarchy<'a> {
    pub fn new(p: &Program<'a>) -> Hierarchy<'a> {
        let mut h = Hierarchy::default();
        let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
        for u in &p.units {
            for c in &u.unit.classes {
                h.add(c, &mut seen);
            }
        }
        h
    }

    /// A hierarchy of the given classes (for tests and tools).
    pub fn of(classes: &'a [Class]) -> Hierarchy<'a> {
        let mut h = Hierarchy::default();
        let mut seen = BTreeSet::new();
        for c in classes {
            h.add(c, &mut seen);
        }
        h
    }

    fn add(&mut self, c: &'a Class, seen: &mut BTreeSet<(&'a str, &'a str)>) {
        let entry = self.classes.entry(c.last_name()).or_default();
        // the same class from several units (a header) counts once
        if entry.contains(&c) {
            return;
        }
        entry.push(c);
        for b in &c.bases {
            self.derived.entry(b.as_str()).or_default().insert(c.last_name());
        }
        for m in &c.methods {
            if seen.insert((c.name.as_str(), m.key.as_str())) {
                self.by_method.entry(m.name.as_str()).or_default().push(m);
            }
        }
    }

    /// The kind of the method whose key is `key`, if a class declares it.
    pub fn kind_of(&self, key: &str) -> Option<MethodKind> {
        let head = key.split('(').next().unwrap_or(key);
        let name = head.rsplit("::").next().unwrap_or(head);
        self.by_method.get(name)?.iter().find(|m| m.key == key).map(|m| m.kind)
    }

    /// The qualified names of the classes of last name `class` and of all
    /// their bases (transitively); `None` when there is no such class.
    pub fn with_bases(&self, class: &str) -> Option<BTreeSet<String>> {
        self.classes.get(class)?;
        let mut out = BTreeSet::new();
        let mut visited = BTreeSet::new();
        let mut stack = vec![class.to_string()];
        while let Some(name) = stack.pop() {
            if !visited.insert(name.clone()) {
                continue;
            }
            for c in self.classes.get(name.as_str()).into_iter().flatten() {
                out.insert(c.name.clone());
                stack.extend(c.bases.iter().cloned());
            }
        }
        Some(out)
    }

    /// The last names of the classes the program defines.
    pub fn class_names(&self) -> Vec<&'a str> {
        self.classes.keys().copied().collect()
    }

    /// Whether the program defines a class of this last name.
    pub fn has_class(&self, name: &str) -> bool {
        self.classes.contains_key(name)
    }

    /// The classes derived from `name`, directly or not (not `name` itself).
    pub fn subclasses(&self, name: &str) -> BTreeSet<&'a str> {
        let mut out = BTreeSet::new();
        let mut stack = vec![name];
        while let Some(c) = stack.pop() {
            for d in self.derived.get(c).into_iter().flatten() {
                if out.insert(*d) {
                    stack.push(d);
                }
            }
        }
        out.remove(name);
        out
    }

    /// The methods named `m` that name lookup finds from class `c`: those `c`
    /// declares, else those of its nearest bases (each base path searched).
    fn lookup(&self, c: &str, m: &str, args: u32) -> Vec<&'a Method> {
        let mut out = Vec::new();
        let mut visited = BTreeSet::new();
        let mut frontier = vec![c.to_string()];
        while !frontier.is_empty() && out.is_empty() {
            let mut next = Vec::new();
            for name in frontier {
                if !visited.insert(name.clone()) {
                    continue;
                }
                for class in self.classes.get(name.as_str()).into_iter().flatten() {
                    out.extend(class.methods.iter().filter(|x| x.name == m && x.accepts(args)));
                    next.extend(class.bases.iter().cloned());
                }
            }
            frontier = next;
        }
        out
    }

    /// Whether a member `m` found from `c` is virtual: declared so there or in
    /// any base of `c` (a member that overrides a virtual one is virtual).
    fn is_virtual(&self, c: &str, m: &str) -> bool {
        let mut visited = BTreeSet::new();
        let mut stack = vec![c.to_string()];
        while let Some(name) = stack.pop() {
            if !visited.insert(name.clone()) {
                continue;
            }
            for class in self.classes.get(name.as_str()).into_iter().flatten() {
                if class.methods.iter().any(|x| x.name == m && x.is_virtual) {
                    return true;
                }
                stack.extend(class.bases.iter().cloned());
            }
        }
        false
    }

    /// The methods a call may reach.
    pub fn targets(&self, d: &Dispatch) -> Rc<Targets> {
        if let Some(t) = self.memo.borrow().get(d) {
            return t.clone();
        }
        let t = Rc::new(self.find_targets(d));
        self.memo.borrow_mut().insert(d.clone(), t.clone());
        t
    }

    fn find_targets(&self, d: &Dispatch) -> Targets {
        let keys = |ms: &[&Method]| ms.iter().map(|m| m.key.clone()).collect::<BTreeSet<String>>();
        match &d.receiver {
            Receiver::Qualified(q) => {
                if !self.has_class(q) {
                    // a namespace, or a class the program does not define: a
                    // free function, resolved by name
                    return Targets::default();
                }
                Targets { keys: keys(&self.lookup(q, &d.name, d.args)), by_name: false }
            }
            Receiver::Object(s) if self.has_class(s) => {
                let found = self.lookup(s, &d.name, d.args);
                let mut out = keys(&found);
                if self.is_virtual(s, &d.name) {
                    for sub in self.subclasses(s) {
                        for class in self.classes.get(sub).into_iter().flatten() {
                            out.extend(
                                class
                                    .methods
                                    .iter()
                                    .filter(|x| x.name == d.name && x.accepts(d.args))
                                    .map(|x| x.key.clone()),
                            );
                        }
                    }
                }
                Targets { keys: out, by_name: false }
            }
            _ => Targets {
                keys: self
                    .by_method
                    .get(d.name.as_str())
                    .into_iter()
                    .flatten()
                    .filter(|m| m.accepts(d.args))
                    .map(|m| m.key.clone())
                    .collect(),
                by_name: true,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn method(class: &str, name: &str, params: u32, is_virtual: bool) -> Method {
        Method {
            name: name.into(),
            key: format!("{class}::{name}({})", vec!["int"; params as usize].join(", ")),
            kind: MethodKind::Ordinary,
            is_virtual,
            public: true,
            min_args: params,
            max_args: Some(params),
        }
    }

    fn class(name: &str, bases: &[&str], methods: Vec<Method>) -> Class {
        Class { name: name.into(), bases: bases.iter().map(|b| b.to_string()).collect(), methods, span: None }
    }

    fn call(name: &str, receiver: Receiver, args: u32) -> Dispatch {
        Dispatch { name: name.into(), receiver, args }
    }

    fn keys(t: Rc<Targets>) -> Vec<String> {
        t.keys.iter().cloned().collect()
    }

    /// 003 Fig. 13: `eptr->go(5)` with `Elevator *eptr` may reach
    /// `Elevator::go` and `AlarmElevator::go`; `Elevator::go(floor)` only the
    /// first; a call on an `AlarmElevator` only the override.
    #[test]
    fn a_virtual_call_reaches_the_overrides_below_its_static_type() {
        let classes = [
            class("Elevator", &[], vec![method("Elevator", "go", 1, true), method("Elevator", "up", 0, false)]),
            class("AlarmElevator", &["Elevator"], vec![method("AlarmElevator", "go", 1, false)]),
            class("Other", &[], vec![method("Other", "go", 1, true)]),
        ];
        let h = Hierarchy::of(&classes);
        let t = h.targets(&call("go", Receiver::Object("Elevator".into()), 1));
        assert_eq!(keys(t), ["AlarmElevator::go(int)", "Elevator::go(int)"]);
        let t = h.targets(&call("go", Receiver::Qualified("Elevator".into()), 1));
        assert_eq!(keys(t), ["Elevator::go(int)"]);
        let t = h.targets(&call("go", Receiver::Object("AlarmElevator".into()), 1));
        assert_eq!(keys(t), ["AlarmElevator::go(int)"]);
        // inherited, not virtual
        let t = h.targets(&call("up", Receiver::Object("AlarmElevator".into()), 0));
        assert_eq!(keys(t), ["Elevator::up()"]);
        // unknown receiver: every `go` of one argument
        let t = h.targets(&call("go", Receiver::Unknown, 1));
        assert!(t.by_name);
        assert_eq!(keys(t), ["AlarmElevator::go(int)", "Elevator::go(int)", "Other::go(int)"]);
        // a class the program does not define (`std::vector`): as unknown
        let t = h.targets(&call("go", Receiver::Object("vector".into()), 1));
        assert!(t.by_name);
    }

    /// The changes of 003 §5.2 that alter no call's text but its targets.
    #[test]
    fn hierarchy_changes_change_target_sets() {
        let base = || class("B", &[], vec![method("B", "m", 1, true)]);
        let old = [base(), class("D", &["B"], vec![])];
        let at = |classes: &[Class]| keys(Hierarchy::of(classes).targets(&call("m", Receiver::Object("B".into()), 1)));
        // a new override
        let added = [base(), class("D", &["B"], vec![method("D", "m", 1, false)])];
        assert_ne!(at(&old), at(&added));
        // a new base class: E now derives from B, and its m overrides
        let e = |bases: &[&str]| class("E", bases, vec![method("E", "m", 1, false)]);
        assert_ne!(at(&[base(), e(&[])]), at(&[base(), e(&["B"])]));
        // a member that stops being virtual
        let nonvirtual =
            [class("B", &[], vec![method("B", "m", 1, false)]), class("D", &["B"], vec![method("D", "m", 1, false)])];
        assert_ne!(at(&added), at(&nonvirtual));
        // a new overload of the same arity
        let mut overload = base();
        overload.methods.push(Method { key: "B::m(long)".into(), ..method("B", "m", 1, true) });
        assert_ne!(at(&[base()]), at(&[overload]));
        // an overload of another arity cannot win the call
        let mut other = base();
        other.methods.push(method("B", "m", 2, true));
        assert_eq!(at(&[base()]), at(&[other]));
    }

    #[test]
    fn lookup_stops_at_the_nearest_declaring_base_and_survives_cycles() {
        let classes = [
            class("A", &["C"], vec![method("A", "f", 0, false)]),
            class("B", &["A"], vec![method("B", "f", 0, false)]),
            class("C", &["B"], vec![]),
        ];
        let h = Hierarchy::of(&classes);
        assert_eq!(keys(h.targets(&call("f", Receiver::Object("C".into()), 0))), ["B::f()"]);
        assert!(h.subclasses("A").contains("B"));
    }
}
