//! The coverage crate's integration tests, one test binary (each module was a
//! binary of its own; one binary links once, and `common` is compiled once).
//! Run one module with `cargo test -p retest-cover --test cover paper::`.

mod common;

mod foreign;
mod paper;
mod procedure;
mod properties;
mod reports;
mod scale;
mod suite;
