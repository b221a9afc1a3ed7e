//! C++ classes and member calls as the front end hands them to selection: the
//! class hierarchy (bases, members, virtual markers, arity) and, per call, the
//! receiver's static type where the function's declarations tell it (003 §5.2).

use std::path::Path;

use retest_graph::cfg::{Dispatch, Receiver};
use retest_graph::{MethodKind, Unit};

fn unit(file: &str) -> Unit {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let pre = retest_lang_c::run_preprocessor("c++", &[], Path::new(file), &dir).expect("preprocess");
    retest_lang_c::cpp::analyze(&pre, &|f| !f.system, retest_lang_c::cpp::Dialect::DEFAULT).unit
}

/// The member calls of the statement of `procedure` whose text is `text`.
fn calls(u: &Unit, procedure: &str, text: &str) -> Vec<Dispatch> {
    let p = u.procedure(procedure).unwrap_or_else(|| panic!("no procedure {procedure}"));
    let (_, n) = p.stmt.nodes().find(|(_, n)| n.text == text).unwrap_or_else(|| panic!("no `{text}` in {procedure}"));
    n.dispatch.clone()
}

fn d(name: &str, receiver: Receiver, args: u32) -> Dispatch {
    Dispatch { name: name.into(), receiver, args }
}

#[test]
fn the_elevator_classes_are_a_hierarchy_with_virtual_go() {
    let u = unit("elevator.cc");
    let names: Vec<&str> = u.classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Alarm", "Elevator", "AlarmElevator"]);
    let elevator = &u.classes[1];
    let alarm_elevator = &u.classes[2];
    assert_eq!(alarm_elevator.bases, ["Elevator"]);
    let go = elevator.methods.iter().find(|m| m.name == "go").unwrap();
    assert!(go.is_virtual && go.public);
    assert_eq!((go.key.as_str(), go.min_args, go.max_args), ("Elevator::go(int)", 1, Some(1)));
    assert!(u.procedure(&go.key).is_some(), "a method's key is its procedure's name");
    let add = elevator.methods.iter().find(|m| m.name == "add").unwrap();
    assert!(!add.public && !add.is_virtual);
    let kinds: Vec<MethodKind> = elevator.methods.iter().map(|m| m.kind).collect();
    assert!(kinds.contains(&MethodKind::Constructor) && kinds.contains(&MethodKind::Destructor));
    // `void go(int floor) override` is virtual by its specifier
    assert!(alarm_elevator.methods.iter().any(|m| m.name == "go" && m.is_virtual));
}

#[test]
fn receivers_have_the_static_types_their_declarations_give() {
    let u = unit("elevator.cc");
    // `Elevator *eptr;` in main (003 Fig. 13)
    assert_eq!(
        calls(&u, "main(int, char**)", "eptr -> go ( floor ) ;"),
        [d("go", Receiver::Object("Elevator".into()), 1)]
    );
    // `new AlarmElevator(10)` runs a constructor of one argument
    assert!(calls(&u, "main(int, char**)", "eptr = new AlarmElevator ( 10 ) ;").contains(&d(
        "AlarmElevator",
        Receiver::Qualified("AlarmElevator".into()),
        1
    )));
    // a parameter `Alarm *x`
    assert_eq!(
        calls(&u, "AlarmElevator::check_alarm(Alarm*)", "x -> reset_alarm ( ) ;")[0],
        d("reset_alarm", Receiver::Object("Alarm".into()), 0)
    );
    // a qualified call does not dispatch
    assert_eq!(
        calls(&u, "AlarmElevator::go(int)", "Elevator :: go ( floor ) ;"),
        [d("go", Receiver::Qualified("Elevator".into()), 1)]
    );
    // an unqualified call in a method may be a member of its class
    assert_eq!(calls(&u, "Elevator::go(int)", "up ( ) ;"), [d("up", Receiver::Object("Elevator".into()), 0)]);
    // a data member `Alarm *elevAlarm` as an argument is no receiver; the call is on this
    assert_eq!(
        calls(&u, "AlarmElevator::check_weight(int)", "check_alarm ( elevAlarm ) ;"),
        [d("check_alarm", Receiver::Object("AlarmElevator".into()), 1)]
    );
}
