//! Test discovery and execution: parallel runs, timeouts, trace collection.

pub mod deps;
pub mod discover;
pub mod exec;
pub mod files;
pub mod listing;
pub mod partition;
pub mod scratch;
pub mod trace;
