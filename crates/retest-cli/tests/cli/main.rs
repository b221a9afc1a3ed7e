//! The CLI's integration tests, one test binary (each module was a binary of
//! its own, and each linked the whole of retest; one binary links once, and
//! `common` is compiled once). Run one module with
//! `cargo test -p retest-cli --test cli recover::`.

mod common;

mod algorithms;
mod cfdg_dot;
mod changed_units;
mod ci;
mod counts;
mod cpp;
mod criteria;
mod dependencies;
mod faults;
mod fleet;
mod gcov_crosscheck;
mod html_browser;
mod lcov_genhtml;
mod mcdc_oracle;
mod old_style;
mod packaging;
mod recording;
mod recover;
mod store_units;
mod unsteady;
mod walk;
mod workflow;
mod wrapper;
