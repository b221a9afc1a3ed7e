//! The runner's integration tests, one test binary (each module was a
//! binary of its own; one binary links once).

mod deps;
mod discover;
mod exec;
mod runtime;
