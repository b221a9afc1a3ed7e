//! The evaluation harness of `retest` as a library: the `retest-bench` binary
//! drives it, and CI runs a small walk ([`walk`]) with the binary under test.

pub mod buildcost;
pub mod csmith;
pub mod driver;
pub mod estimate;
pub mod mutate;
pub mod overhead;
pub mod recover;
pub mod report;
pub mod safety;
pub mod scale;
pub mod suite;
pub mod walk;

use std::path::PathBuf;

/// One study subject.
pub struct Subject {
    pub name: String,
    /// Absolute path of the subject's directory.
    pub dir: PathBuf,
}

/// Settings shared by the subcommands.
pub struct Common {
    pub retest: PathBuf,
    pub work: PathBuf,
    pub subjects: Vec<Subject>,
    pub fresh: bool,
}
