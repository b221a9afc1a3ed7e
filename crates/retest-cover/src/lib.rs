//! `retest-cover`: coverage reports from recorded edge coverage.
//!
//! * [`lines`] — line, branch and function coverage per source file.
//! * [`lcov`] — LCOV tracefiles.
//! * [`cobertura`] — Cobertura XML (Jenkins, GitLab).
//! * [`html`] — a self-contained HTML report with MC/DC tables.
//! * [`cfdg`] — control-flow decision graphs: decisions inferred from a CFG (001 §V).
//! * [`criteria`] — SC, DC, CC, D/CC, MCC, FPC and MC/DC on runs as edge sets (001 §VI).
//! * [`foreign`] — GCC and LLVM CFG dumps (DOT) annotated with their decisions (001 §VII).
//! * [`mcdc`] — MC/DC per decision evaluation (unique-cause, masking), decision path
//!   numbering, and where `retest cc --mcdc` records evaluations ([`mcdc::McdcLayout`]).
//! * [`plan`] — what a build records beyond edges (`--mcdc`, `--paths`).
//! * [`recover`] — keeping the coverage matrix exact across versions (RECOVER).
//! * [`report`] — the criteria and MC/DC of a whole test suite over its units.
//!
//! Architecture invariant: no I/O beyond the `std::io::Write` a writer is handed;
//! nothing about C.

pub mod cfdg;
pub mod cobertura;
pub mod criteria;
pub mod foreign;
pub mod html;
pub mod lcov;
pub mod lines;
pub mod mcdc;
pub mod plan;
pub mod recover;
pub mod report;
