//! The runtime ABI, in one place: what the instrumenter writes into a unit,
//! what the C runtime (`retest-lang-c/runtime/retest_rt.{h,c}`) reads from it
//! and writes to trace files, and what the trace reader (`retest_run::trace`)
//! and the recorder expect, and how a unit's 16-byte hash is written.
//!
//! Every number both sides must agree on is defined here and nowhere else.
//! The C sources spell the same numbers as macros and an enum; the test
//! `abi_c_sources_agree` (in `retest-lang-c`) fails when they differ, and
//! `abi_doc_tables_agree` when `docs/trace-format.md` does. The tables of that
//! document are rendered by [`markdown_tables`].
//!
//! No I/O, no dependencies.

use std::fmt;

/// The version of the descriptor layout (`struct retest_tu`) the instrumenter
/// writes (`RETEST_ABI`).
pub const ABI: u32 = 3;
/// The descriptor version of units without execution counters: the one
/// before [`SectionKind::EdgeCounts`] (version 3). Only counted units declare
/// [`ABI`], so a default build's text and build hash stay what they were.
pub const ABI_UNCOUNTED: u32 = 2;
/// The oldest descriptor version the runtime still takes (`RETEST_ABI_OLDEST`).
pub const ABI_OLDEST: u32 = 1;

/// The kind of a cell section of a unit's descriptor (`struct retest_sect.kind`),
/// and of a section of a trace.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u32)]
pub enum SectionKind {
    /// Edge (branch) cells, one byte each.
    Edges = 1,
    /// MC/DC evaluation cells (`retest cc --mcdc`).
    Mcdc = 2,
    /// Path cells, and in traces the path-id sets of procedures with too many
    /// paths for cells (`retest cc --paths`).
    Paths = 3,
    /// Frames in flight: one `unsigned int` counter per procedure,
    /// incremented at entry and decremented at return; in a trace a cell is
    /// hit when its counter was not zero.
    Frames = 4,
    /// Edge cells as 4-byte words (ABI 2); the runtime writes them to traces
    /// as [`SectionKind::Edges`], so this kind never appears in a trace.
    EdgeWords = 5,
    /// Edge cells as 8-byte execution counters (`retest cc --counts`): each
    /// probe adds one to its cell's `unsigned long long` instead of storing a
    /// byte. The runtime writes them to traces twice: as
    /// [`SectionKind::Edges`] (hit when not zero) and as a section of this
    /// kind in the [`trace::Encoding::Counts`] encoding.
    EdgeCounts = 6,
}

impl SectionKind {
    /// Every kind, in the order of their codes.
    pub const ALL: [SectionKind; 6] = [
        SectionKind::Edges,
        SectionKind::Mcdc,
        SectionKind::Paths,
        SectionKind::Frames,
        SectionKind::EdgeWords,
        SectionKind::EdgeCounts,
    ];

    /// The number descriptors and traces hold.
    pub const fn code(self) -> u32 {
        self as u32
    }

    /// The kind with this number, if any.
    pub fn from_code(code: u32) -> Option<SectionKind> {
        SectionKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The enumerator of `retest_rt.h`.
    pub const fn c_name(self) -> &'static str {
        match self {
            SectionKind::Edges => "RETEST_SECT_EDGES",
            SectionKind::Mcdc => "RETEST_SECT_MCDC",
            SectionKind::Paths => "RETEST_SECT_PATHS",
            SectionKind::Frames => "RETEST_SECT_FRAMES",
            SectionKind::EdgeWords => "RETEST_SECT_EDGE_WORDS",
            SectionKind::EdgeCounts => "RETEST_SECT_EDGE_COUNTS",
        }
    }

    /// What a section of this kind holds, for the documentation.
    pub const fn meaning(self) -> &'static str {
        match self {
            SectionKind::Edges => "edge cells, one byte each",
            SectionKind::Mcdc => "MC/DC evaluation cells",
            SectionKind::Paths => "path cells; in traces also one id set per function that recorded path ids",
            SectionKind::Frames => {
                "frames in flight: one `unsigned int` counter per function; in traces a cell is hit when its counter was not zero"
            }
            SectionKind::EdgeWords => {
                "edge cells as 4-byte words (ABI 2); written to traces as kind 1, never found in one"
            }
            SectionKind::EdgeCounts => {
                "edge cells as 8-byte execution counters (ABI 3, `--counts`); written to traces as kind 1 and as kind 6 in encoding 3"
            }
        }
    }
}

/// [`SectionKind::Edges`] as a number.
pub const SECT_EDGES: u32 = SectionKind::Edges.code();
/// [`SectionKind::Mcdc`] as a number.
pub const SECT_MCDC: u32 = SectionKind::Mcdc.code();
/// [`SectionKind::Paths`] as a number.
pub const SECT_PATHS: u32 = SectionKind::Paths.code();
/// [`SectionKind::Frames`] as a number.
pub const SECT_FRAMES: u32 = SectionKind::Frames.code();
/// [`SectionKind::EdgeWords`] as a number.
pub const SECT_EDGE_WORDS: u32 = SectionKind::EdgeWords.code();
/// [`SectionKind::EdgeCounts`] as a number.
pub const SECT_EDGE_COUNTS: u32 = SectionKind::EdgeCounts.code();

/// The trace file format (`docs/trace-format.md`).
pub mod trace {
    /// First eight bytes of every trace file.
    pub const MAGIC: [u8; 8] = *b"RETESTTR";
    /// Last eight bytes of every trace file.
    pub const END_MAGIC: [u8; 8] = *b"RTEND\0\0\0";
    /// The format version.
    pub const VERSION: u32 = 1;
    /// Extension of finished traces: `<pid>-<nonce>-<seq>.rtt`.
    pub const TRACE_EXTENSION: &str = "rtt";
    /// Extension of live markers: `<pid>-<nonce>.live`.
    pub const LIVE_EXTENSION: &str = "live";

    /// Payload encoding of a trace section.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    #[repr(u32)]
    pub enum Encoding {
        /// `len` bytes, each 0 or 1.
        Raw = 0,
        /// `u32 count`, then `count` strictly increasing `u32` indices of the hit cells.
        Sparse = 1,
        /// `len` is a function number; `u32 count`, then `count` strictly increasing `u64` path ids.
        IdSet = 2,
        /// `len` is the number of cells; `u32 count`, then `count` pairs of a
        /// `u32` cell index (strictly increasing, `< len`) and its `u64`
        /// execution count (not zero).
        Counts = 3,
    }

    impl Encoding {
        /// Every encoding, in the order of their codes.
        pub const ALL: [Encoding; 4] = [Encoding::Raw, Encoding::Sparse, Encoding::IdSet, Encoding::Counts];

        /// The number a section holds.
        pub const fn code(self) -> u32 {
            self as u32
        }

        /// The encoding with this number, if any.
        pub fn from_code(code: u32) -> Option<Encoding> {
            Encoding::ALL.into_iter().find(|e| e.code() == code)
        }

        /// The runtime's macro (`retest_rt.c`).
        pub const fn c_name(self) -> &'static str {
            match self {
                Encoding::Raw => "RT_ENC_RAW",
                Encoding::Sparse => "RT_ENC_SPARSE",
                Encoding::IdSet => "RT_ENC_IDSET",
                Encoding::Counts => "RT_ENC_COUNTS",
            }
        }
    }

    /// One bit of a trace's `flags` field.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub struct Flag {
        /// The bit's value.
        pub bit: u32,
        /// Its name in the reader and the documentation.
        pub name: &'static str,
        /// The runtime's macro (`retest_rt.c`).
        pub c_name: &'static str,
    }

    /// Written by the fatal-signal handler; bits 8–15 hold the signal number.
    pub const SIGNAL: Flag = Flag { bit: 1 << 0, name: "SIGNAL", c_name: "RT_FLAG_SIGNAL" };
    /// Written just before an `exec*` call replaced the image.
    pub const BEFORE_EXEC: Flag = Flag { bit: 1 << 1, name: "BEFORE_EXEC", c_name: "RT_FLAG_EXEC" };
    /// Written by `_exit` / `_Exit`.
    pub const UNDERSCORE_EXIT: Flag = Flag { bit: 1 << 2, name: "UNDERSCORE_EXIT", c_name: "RT_FLAG_UEXIT" };
    /// Written at normal exit, or when the object holding the runtime was unloaded.
    pub const EXIT: Flag = Flag { bit: 1 << 3, name: "EXIT", c_name: "RT_FLAG_EXIT" };
    /// The runtime could not record everything: the coverage is a lower bound.
    pub const INCOMPLETE: Flag = Flag { bit: 1 << 4, name: "INCOMPLETE", c_name: "RT_FLAG_INCOMPLETE" };
    /// Other threads of the process may have been running.
    pub const THREADS: Flag = Flag { bit: 1 << 5, name: "THREADS", c_name: "RT_FLAG_THREADS" };
    /// The program installed a signal handler of its own.
    pub const HANDLER: Flag = Flag { bit: 1 << 6, name: "HANDLER", c_name: "RT_FLAG_HANDLER" };
    /// The program wrote into the runtime's guard, past the end of its own
    /// zero-initialised data: the runtime's state may be damaged.
    pub const CLOBBERED: Flag = Flag { bit: 1 << 7, name: "CLOBBERED", c_name: "RT_FLAG_CLOBBERED" };
    /// Every flag, in the order of their bits.
    pub const FLAGS: [Flag; 8] = [SIGNAL, BEFORE_EXEC, UNDERSCORE_EXIT, EXIT, INCOMPLETE, THREADS, HANDLER, CLOBBERED];
    /// With [`SIGNAL`], the signal number is `(flags >> SIGNAL_SHIFT) & 0xff`
    /// (`RT_FLAG_SIGNO_SHIFT`).
    pub const SIGNAL_SHIFT: u32 = 8;

    /// What the name of a file in a trace directory says.
    #[derive(Clone, PartialEq, Eq, Debug)]
    pub enum FileName<'a> {
        /// A finished trace of process `pid`.
        Trace { pid: u32, nonce: &'a str, seq: u32 },
        /// The live marker of process `pid`: it started and has not written its trace.
        Live { pid: u32, nonce: &'a str },
    }

    impl<'a> FileName<'a> {
        /// Reads a file name; `None` for anything else, temporaries
        /// (names starting with `.`) included.
        pub fn parse(name: &'a str) -> Option<FileName<'a>> {
            if name.starts_with('.') {
                return None;
            }
            let (stem, ext) = name.rsplit_once('.')?;
            let mut parts = stem.split('-');
            let pid = parts.next()?.parse().ok()?;
            let nonce = parts.next().filter(|n| !n.is_empty())?;
            let name = match ext {
                TRACE_EXTENSION => FileName::Trace { pid, nonce, seq: parts.next()?.parse().ok()? },
                LIVE_EXTENSION => FileName::Live { pid, nonce },
                _ => return None,
            };
            parts.next().is_none().then_some(name)
        }

        /// The process the file belongs to.
        pub fn pid(&self) -> u32 {
            match self {
                FileName::Trace { pid, .. } | FileName::Live { pid, .. } => *pid,
            }
        }
    }
}

/// The name of one instrumented build of a unit: a hash of the unit's
/// preprocessed text, its probe plan and what it records beyond edges. The
/// instrumenter writes it into the unit's descriptor, the runtime into every
/// trace section of the unit, and the store keys the build by it; a trace is
/// matched to its build, and to nothing else, through it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct BuildHash(pub [u8; 16]);

impl BuildHash {
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// 32 lower-case hexadecimal digits.
    pub fn hex(&self) -> String {
        hex(&self.0)
    }

    /// The hash of [`BuildHash::hex`]'s form.
    pub fn parse_hex(s: &str) -> Option<BuildHash> {
        parse_hex(s).map(BuildHash)
    }
}

impl fmt::Debug for BuildHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BuildHash({})", self.hex())
    }
}

impl fmt::Display for BuildHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

/// A 16-byte hash as 32 lower-case hexadecimal digits.
pub fn hex(h: &[u8; 16]) -> String {
    use fmt::Write;
    h.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// 32 hexadecimal digits as 16 bytes; anything else (a wrong length, a
/// non-digit) is `None`.
pub fn parse_hex(s: &str) -> Option<[u8; 16]> {
    if s.len() != 32 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The tables of `docs/trace-format.md` that this crate defines: section
/// kinds, encodings and flags. The document holds them verbatim.
pub fn markdown_tables() -> String {
    let mut s = String::from("| kind | `retest_rt.h` | holds |\n|---|---|---|\n");
    for k in SectionKind::ALL {
        s += &format!("| {} | `{}` | {} |\n", k.code(), k.c_name(), k.meaning());
    }
    s += "\n| encoding | `len` means | payload |\n|---|---|---|\n";
    for e in trace::Encoding::ALL {
        let (len, payload) = match e {
            trace::Encoding::Raw => ("number of cells", "`len` bytes, each 0 or 1"),
            trace::Encoding::Sparse => (
                "number of cells",
                "`u32 count`, then `count` × `u32` indices of the hit cells, strictly increasing, each `< len`",
            ),
            trace::Encoding::IdSet => {
                ("function number", "`u32 count`, then `count` × `u64` path ids, strictly increasing")
            }
            trace::Encoding::Counts => (
                "number of cells",
                "`u32 count`, then `count` × (`u32` cell index, strictly increasing, `< len`; `u64` execution count, not zero)",
            ),
        };
        s += &format!("| {} {:?} | {len} | {payload} |\n", e.code(), e);
    }
    s += "\n| flag bit | name | `retest_rt.c` |\n|---|---|---|\n";
    for f in trace::FLAGS {
        s += &format!("| {} | `{}` | `{}` |\n", f.bit.trailing_zeros(), f.name, f.c_name);
    }
    s += &format!(
        "| {}–{} | signal number, with `SIGNAL` | `RT_FLAG_SIGNO_SHIFT` |\n",
        trace::SIGNAL_SHIFT,
        trace::SIGNAL_SHIFT + 7
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::FileName;

    #[test]
    fn kinds_round_trip_and_are_distinct() {
        for k in SectionKind::ALL {
            assert_eq!(SectionKind::from_code(k.code()), Some(k));
        }
        assert_eq!(SectionKind::from_code(0), None);
        assert_eq!(SectionKind::from_code(7), None);
        for e in trace::Encoding::ALL {
            assert_eq!(trace::Encoding::from_code(e.code()), Some(e));
        }
        let bits: u32 = trace::FLAGS.iter().map(|f| f.bit).fold(0, |a, b| {
            assert_eq!(a & b, 0, "flag bits overlap");
            a | b
        });
        assert!(bits < 1 << trace::SIGNAL_SHIFT, "flags reach into the signal number");
    }

    #[test]
    fn file_names_parse() {
        assert_eq!(FileName::parse("4242-00ff-3.rtt"), Some(FileName::Trace { pid: 4242, nonce: "00ff", seq: 3 }));
        assert_eq!(FileName::parse("7-ab.live"), Some(FileName::Live { pid: 7, nonce: "ab" }));
        assert_eq!(FileName::parse("7-ab.live").map(|n| n.pid()), Some(7));
        for bad in
            [".4242-00ff-2.rtt.tmp", "4242-00ff.rtt", "x-00ff-1.rtt", "1-a-2-3.rtt", "1--2.rtt", "1-a.txt", "sub.rtt"]
        {
            assert_eq!(FileName::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn hashes_round_trip_in_hex() {
        let h = [0, 1, 0xab, 0xff, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0x10];
        assert_eq!(hex(&h), "0001abff0405060708090a0b0c0d0e10");
        assert_eq!(parse_hex(&hex(&h)), Some(h));
        assert_eq!(parse_hex(&hex(&h).to_uppercase()), Some(h));
        assert_eq!(parse_hex("0001"), None);
        assert_eq!(parse_hex(&"g".repeat(32)), None);
        assert_eq!(parse_hex(&"é".repeat(16)), None);
    }
}
