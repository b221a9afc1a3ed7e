//! The runner's integration tests, one test binary (each module was a
//! binary of its own; one binary links once).

mod deps;
mod discover;
mod exec;
mod runtime;

/// The C compiler the tests build with: `$CC`, else `cc`.
fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}
