//! Test discovery and execution: parallel runs, timeouts, trace collection.

pub mod trace;
