//! The front end's integration tests, one test binary (each module was a
//! binary of its own; one binary links once).

mod abi;
mod builder_properties;
mod cfg_snapshots;
mod classes;
mod containment;
mod folding;
mod gnu_attributes;
mod instrument;
mod no_code_outside_a_cfg;
mod select_fixtures;
mod spans;
