//! Trace files written by the C coverage runtime (format version 1).
//!
//! Every process image that ran instrumented code writes one trace file when
//! it ends (normal exit, fatal signal, `_exit`, or just before `exec`); the
//! runner unions the traces of all the processes a test started. The byte
//! layout and the runtime's behaviour are specified in
//! `docs/trace-format.md`; this module is the reference reader.
//!
//! The model:
//! - [`parse`] turns the bytes of one file into a [`Trace`]: per translation
//!   unit (identified by its 16-byte content hash) a list of [`Section`]s,
//!   each either the sorted indices of the hit cells of one cell array or a
//!   set of path ids recorded by `__retest_path_hit`. Parsing is strict:
//!   anything that does not follow the format is a [`TraceError`] that says
//!   what and where.
//! - [`read_dir`] reads a whole trace directory. One bad file never hides the
//!   others: per-file errors are collected next to the good traces, together
//!   with the leftover live markers of processes that died without writing
//!   their trace (SIGKILL, a crash inside the runtime, ...).
//! - [`Coverage`] (built by [`merge`] or [`TraceDir::coverage`]) is the union
//!   of any number of traces, keyed by (unit hash, section kind).
//! - [`write()`] produces the bytes the runtime would write, for tests and tools.
//!
//! A test's coverage is only trustworthy when [`TraceDir::is_complete`]
//! holds; otherwise the runner must treat the test as covering everything
//! (select it whenever anything changes).

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use retest_abi::trace::{self as abi, Encoding, FileName};
pub use retest_abi::trace::{END_MAGIC, LIVE_EXTENSION, MAGIC, TRACE_EXTENSION, VERSION};
pub use retest_abi::{SECT_EDGES, SECT_MCDC, SECT_PATHS};

/// Payload encodings of a section.
const ENC_RAW: u32 = Encoding::Raw.code();
const ENC_SPARSE: u32 = Encoding::Sparse.code();
const ENC_IDSET: u32 = Encoding::IdSet.code();
const ENC_COUNTS: u32 = Encoding::Counts.code();

/// magic, version, flags, pid, reserved, unit count.
const HEADER_LEN: usize = 8 + 4 + 4 + 8 + 8 + 4;
/// crc32 and end magic.
const TRAILER_LEN: usize = 4 + 8;

/// Identity of an instrumented translation unit's build.
pub use retest_abi::BuildHash as TuHash;

/// Why and how a trace was written (the `flags` header field).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraceFlags(pub u32);

impl TraceFlags {
    /// Written by the fatal-signal handler; [`TraceFlags::signal`] says which.
    pub const SIGNAL: TraceFlags = TraceFlags(abi::SIGNAL.bit);
    /// Written just before an `exec*` call replaced the image.
    pub const BEFORE_EXEC: TraceFlags = TraceFlags(abi::BEFORE_EXEC.bit);
    /// Written by `_exit` / `_Exit`.
    pub const UNDERSCORE_EXIT: TraceFlags = TraceFlags(abi::UNDERSCORE_EXIT.bit);
    /// Written at normal process exit (or when the object holding the
    /// runtime was unloaded).
    pub const EXIT: TraceFlags = TraceFlags(abi::EXIT.bit);
    /// The runtime could not record everything (out of memory for path ids,
    /// a unit with an unknown ABI version, ...): the coverage is a lower bound.
    pub const INCOMPLETE: TraceFlags = TraceFlags(abi::INCOMPLETE.bit);
    /// Other threads of the process may have been running when the trace
    /// was written: they may have been stopped part-way through a statement.
    pub const THREADS: TraceFlags = TraceFlags(abi::THREADS.bit);
    /// The program installed a signal handler of its own, which may have left
    /// a statement part-way (`longjmp` out of it, `exit` inside it).
    pub const HANDLER: TraceFlags = TraceFlags(abi::HANDLER.bit);
    /// The program wrote into the runtime's guard, past the end of its own
    /// zero-initialised data: the runtime's state, and so the trace, may be
    /// damaged.
    pub const CLOBBERED: TraceFlags = TraceFlags(abi::CLOBBERED.bit);

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: TraceFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The signal number, when the trace was written by the signal handler.
    pub fn signal(self) -> Option<u8> {
        self.contains(Self::SIGNAL).then_some((self.0 >> abi::SIGNAL_SHIFT) as u8)
    }

    /// Whether the runtime flagged this trace as a lower bound.
    pub fn is_incomplete(self) -> bool {
        self.contains(Self::INCOMPLETE)
    }

    /// Whether the program wrote into the runtime's guard.
    pub fn is_clobbered(self) -> bool {
        self.contains(Self::CLOBBERED)
    }

    /// Whether code may have been stopped part-way through a statement when
    /// the trace was written: by a fatal signal, in another thread, or by a
    /// handler of the program.
    pub fn stopped_part_way(self) -> bool {
        self.contains(Self::SIGNAL) || self.contains(Self::THREADS) || self.contains(Self::HANDLER)
    }
}

impl std::ops::BitOr for TraceFlags {
    type Output = TraceFlags;
    fn bitor(self, rhs: TraceFlags) -> TraceFlags {
        TraceFlags(self.0 | rhs.0)
    }
}

impl fmt::Debug for TraceFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<String> =
            abi::FLAGS.iter().filter(|fl| self.contains(TraceFlags(fl.bit))).map(|fl| fl.name.to_string()).collect();
        if let Some(sig) = self.signal() {
            names.push(format!("signo={sig}"));
        }
        write!(f, "TraceFlags({:#x}: {})", self.0, names.join("|"))
    }
}

/// One trace file: the coverage of one process image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// Format version of the file; [`parse`] only accepts [`VERSION`], and
    /// [`write()`] always writes [`VERSION`] whatever this field says.
    pub version: u32,
    pub flags: TraceFlags,
    /// Process id of the image that wrote the trace.
    pub pid: u64,
    /// One entry per registered unit, in no particular order. The same hash
    /// can occur more than once (a library loaded, unloaded and loaded
    /// again); readers union them.
    pub units: Vec<UnitTrace>,
}

/// The coverage of one translation unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitTrace {
    pub hash: TuHash,
    pub sections: Vec<Section>,
}

/// One section of a unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Section {
    /// A byte-cell array of `len` cells (raw or sparse on disk).
    Cells {
        /// `SECT_*`.
        kind: u32,
        /// Number of cells in the array.
        len: u32,
        /// Indices of the hit cells, strictly increasing, each `< len`.
        hit: Vec<u32>,
    },
    /// The path ids `__retest_path_hit` recorded for function `func`.
    IdSet {
        /// `SECT_*` (the runtime writes [`SECT_PATHS`]).
        kind: u32,
        /// Function number within the unit.
        func: u32,
        /// Strictly increasing path ids.
        ids: Vec<u64>,
    },
    /// Execution counts of a counter array of `len` cells (`retest cc
    /// --counts`): the runtime writes them after the same array's hit cells.
    Counts {
        /// `SECT_*` (the runtime writes `SECT_EDGE_COUNTS`).
        kind: u32,
        /// Number of cells in the array.
        len: u32,
        /// (cell, count) of the cells that ran: cells strictly increasing,
        /// each `< len`; counts not zero.
        counts: Vec<(u32, u64)>,
    },
}

/// Everything that can be wrong with a trace file or directory.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("not a retest trace file: it starts with {found:02x?}, expected \"RETESTTR\"")]
    BadMagic { found: Vec<u8> },
    #[error(
        "trace format version {found} is not supported (this retest reads version {supported}); \
         the runtime that wrote it is newer than this retest"
    )]
    UnsupportedVersion { found: u32, supported: u32 },
    #[error("trace truncated at byte {at} while reading {what}")]
    Truncated { at: usize, what: &'static str },
    #[error("trace checksum mismatch: stored {stored:#010x}, computed {computed:#010x}; the file is corrupt")]
    ChecksumMismatch { stored: u32, computed: u32 },
    #[error("trace has no valid trailer at byte {at} (expected crc32 and \"RTEND\\0\\0\\0\")")]
    BadTrailer { at: usize },
    #[error("{extra} unexpected bytes between the last unit and the trailer at byte {at}")]
    TrailingBytes { at: usize, extra: usize },
    #[error("unit {unit}, section {section}: unknown payload encoding {encoding}")]
    UnknownEncoding { unit: usize, section: usize, encoding: u32 },
    #[error("unit {unit}, section {section}: cell {index} is listed with a count of zero")]
    ZeroCount { unit: usize, section: usize, index: u32 },
    #[error("unit {unit}, section {section}: raw cell {index} holds {value}, expected 0 or 1")]
    BadCellValue { unit: usize, section: usize, index: u32, value: u8 },
    #[error("unit {unit}, section {section}: cell index {index} is out of range (the section has {len} cells)")]
    IndexOutOfRange { unit: usize, section: usize, index: u32, len: u32 },
    #[error("unit {unit}, section {section}: entry {position} is not greater than the one before it")]
    NotIncreasing { unit: usize, section: usize, position: usize },
    #[error(
        "unit {} kind {kind}: traces disagree on the number of cells ({first} vs {second}); \
         two different builds share one hash",
        hash.hex()
    )]
    LengthMismatch { hash: TuHash, kind: u32, first: u32, second: u32 },
}

/// Bounded little-endian cursor.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], TraceError> {
        match self.pos.checked_add(n) {
            Some(end) if end <= self.bytes.len() => {
                let slice = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(slice)
            }
            _ => Err(TraceError::Truncated { at: self.bytes.len(), what }),
        }
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, TraceError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, TraceError> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// `count` fixed-size items, checked against the remaining bytes before
    /// anything is allocated.
    fn items(&mut self, count: u32, size: usize, what: &'static str) -> Result<&'a [u8], TraceError> {
        let n = (count as usize).checked_mul(size).ok_or(TraceError::Truncated { at: self.bytes.len(), what })?;
        self.take(n, what)
    }
}

/// Parses one trace file.
///
/// Checks, in this order: magic, version (so that a newer format is reported
/// as such even if the rest changed), checksum (when the file ends with the
/// trailer), then the structure. A file cut short anywhere is reported as
/// [`TraceError::Truncated`] at its length.
pub fn parse(bytes: &[u8]) -> Result<Trace, TraceError> {
    if bytes.len() < MAGIC.len() {
        return Err(if MAGIC.starts_with(bytes) {
            TraceError::Truncated { at: bytes.len(), what: "magic" }
        } else {
            TraceError::BadMagic { found: bytes.to_vec() }
        });
    }
    if bytes[..8] != MAGIC {
        return Err(TraceError::BadMagic { found: bytes[..8].to_vec() });
    }
    let mut header = Cursor { bytes, pos: 8 };
    let version = header.u32("version")?;
    if version != VERSION {
        return Err(TraceError::UnsupportedVersion { found: version, supported: VERSION });
    }

    let has_trailer = bytes.len() >= HEADER_LEN + TRAILER_LEN && bytes.ends_with(&END_MAGIC);
    let body_end = if has_trailer {
        let crc_at = bytes.len() - TRAILER_LEN;
        let stored = u32::from_le_bytes(bytes[crc_at..crc_at + 4].try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&bytes[..crc_at]);
        if stored != computed {
            return Err(TraceError::ChecksumMismatch { stored, computed });
        }
        crc_at
    } else {
        bytes.len()
    };

    let mut c = Cursor { bytes: &bytes[..body_end], pos: 12 };
    let flags = TraceFlags(c.u32("flags")?);
    let pid = c.u64("pid")?;
    let _reserved = c.u64("reserved")?;
    let ntu = c.u32("unit count")?;
    let mut units = Vec::new();
    for unit in 0..ntu as usize {
        units.push(parse_unit(&mut c, unit)?);
    }

    if has_trailer {
        if c.pos != body_end {
            return Err(TraceError::TrailingBytes { at: c.pos, extra: body_end - c.pos });
        }
    } else if bytes.len() - c.pos < TRAILER_LEN {
        return Err(TraceError::Truncated { at: bytes.len(), what: "trailer" });
    } else {
        return Err(TraceError::BadTrailer { at: c.pos });
    }

    Ok(Trace { version, flags, pid, units })
}

fn parse_unit(c: &mut Cursor<'_>, unit: usize) -> Result<UnitTrace, TraceError> {
    let hash = TuHash(c.take(16, "unit hash")?.try_into().expect("16 bytes"));
    let nsect = c.u32("section count")?;
    let mut sections = Vec::new();
    for section in 0..nsect as usize {
        let kind = c.u32("section kind")?;
        let len = c.u32("section length")?;
        let encoding = c.u32("section encoding")?;
        sections.push(match encoding {
            ENC_RAW => {
                let cells = c.take(len as usize, "raw cells")?;
                let mut hit = Vec::new();
                for (index, &value) in cells.iter().enumerate() {
                    match value {
                        0 => {}
                        1 => hit.push(index as u32),
                        _ => {
                            return Err(TraceError::BadCellValue { unit, section, index: index as u32, value });
                        }
                    }
                }
                Section::Cells { kind, len, hit }
            }
            ENC_SPARSE => {
                let count = c.u32("sparse count")?;
                let raw = c.items(count, 4, "sparse indices")?;
                let mut hit = Vec::with_capacity(count as usize);
                for (position, b) in raw.chunks_exact(4).enumerate() {
                    let index = u32::from_le_bytes(b.try_into().expect("4 bytes"));
                    if index >= len {
                        return Err(TraceError::IndexOutOfRange { unit, section, index, len });
                    }
                    if hit.last().is_some_and(|&last| index <= last) {
                        return Err(TraceError::NotIncreasing { unit, section, position });
                    }
                    hit.push(index);
                }
                Section::Cells { kind, len, hit }
            }
            ENC_IDSET => {
                let count = c.u32("id count")?;
                let raw = c.items(count, 8, "path ids")?;
                let mut ids = Vec::with_capacity(count as usize);
                for (position, b) in raw.chunks_exact(8).enumerate() {
                    let id = u64::from_le_bytes(b.try_into().expect("8 bytes"));
                    if ids.last().is_some_and(|&last| id <= last) {
                        return Err(TraceError::NotIncreasing { unit, section, position });
                    }
                    ids.push(id);
                }
                Section::IdSet { kind, func: len, ids }
            }
            ENC_COUNTS => {
                let count = c.u32("count entries")?;
                let raw = c.items(count, 12, "counts")?;
                let mut counts: Vec<(u32, u64)> = Vec::with_capacity(count as usize);
                for (position, b) in raw.chunks_exact(12).enumerate() {
                    let index = u32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
                    let n = u64::from_le_bytes(b[4..].try_into().expect("8 bytes"));
                    if index >= len {
                        return Err(TraceError::IndexOutOfRange { unit, section, index, len });
                    }
                    if counts.last().is_some_and(|&(last, _)| index <= last) {
                        return Err(TraceError::NotIncreasing { unit, section, position });
                    }
                    if n == 0 {
                        return Err(TraceError::ZeroCount { unit, section, index });
                    }
                    counts.push((index, n));
                }
                Section::Counts { kind, len, counts }
            }
            encoding => {
                return Err(TraceError::UnknownEncoding { unit, section, encoding });
            }
        });
    }
    Ok(UnitTrace { hash, sections })
}

/// Serialises a trace exactly as the runtime would: version-1 layout, raw or
/// sparse encoding for cell sections (whichever is smaller; raw on a tie),
/// checksum and trailer. Hit indices and ids are sorted and deduplicated.
///
/// # Panics
/// If a hit index is not below its section's `len`.
pub fn write(trace: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    put_u32(&mut out, VERSION);
    put_u32(&mut out, trace.flags.0);
    put_u64(&mut out, trace.pid);
    put_u64(&mut out, 0);
    put_u32(&mut out, len_u32(trace.units.len()));
    for unit in &trace.units {
        out.extend_from_slice(unit.hash.as_bytes());
        put_u32(&mut out, len_u32(unit.sections.len()));
        for section in &unit.sections {
            match section {
                Section::Cells { kind, len, hit } => {
                    let mut hit = hit.clone();
                    hit.sort_unstable();
                    hit.dedup();
                    if let Some(&bad) = hit.iter().find(|&&i| i >= *len) {
                        panic!("hit index {bad} out of range for a section of {len} cells");
                    }
                    put_u32(&mut out, *kind);
                    put_u32(&mut out, *len);
                    if 4 + 4 * (hit.len() as u64) < u64::from(*len) {
                        put_u32(&mut out, ENC_SPARSE);
                        put_u32(&mut out, len_u32(hit.len()));
                        for i in hit {
                            put_u32(&mut out, i);
                        }
                    } else {
                        put_u32(&mut out, ENC_RAW);
                        let start = out.len();
                        out.resize(start + *len as usize, 0);
                        for i in hit {
                            out[start + i as usize] = 1;
                        }
                    }
                }
                Section::Counts { kind, len, counts } => {
                    let mut counts: Vec<(u32, u64)> = counts.iter().copied().filter(|&(_, n)| n != 0).collect();
                    counts.sort_unstable();
                    counts.dedup_by_key(|(i, _)| *i);
                    if let Some(&(bad, _)) = counts.iter().find(|&&(i, _)| i >= *len) {
                        panic!("counted cell {bad} out of range for a section of {len} cells");
                    }
                    put_u32(&mut out, *kind);
                    put_u32(&mut out, *len);
                    put_u32(&mut out, ENC_COUNTS);
                    put_u32(&mut out, len_u32(counts.len()));
                    for (i, n) in counts {
                        put_u32(&mut out, i);
                        put_u64(&mut out, n);
                    }
                }
                Section::IdSet { kind, func, ids } => {
                    let mut ids = ids.clone();
                    ids.sort_unstable();
                    ids.dedup();
                    put_u32(&mut out, *kind);
                    put_u32(&mut out, *func);
                    put_u32(&mut out, ENC_IDSET);
                    put_u32(&mut out, len_u32(ids.len()));
                    for id in ids {
                        put_u64(&mut out, id);
                    }
                }
            }
        }
    }
    let crc = crc32fast::hash(&out);
    put_u32(&mut out, crc);
    out.extend_from_slice(&END_MAGIC);
    out
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn len_u32(n: usize) -> u32 {
    u32::try_from(n).expect("count does not fit the u32 field of the trace format")
}

/// A parsed trace file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFile {
    pub path: PathBuf,
    pub trace: Trace,
}

/// A live marker left behind: a process image registered instrumented code
/// and then ended without writing its final trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveMarker {
    pub path: PathBuf,
    /// Process id, from the file name (`<pid>-<nonce>.live`).
    pub pid: Option<u64>,
    /// The command line the runtime stored in the marker (may be cut short
    /// at 1 KiB; empty if unavailable, or if the image died while writing its
    /// final trace over the marker).
    pub command: Vec<String>,
}

/// A file of the trace directory that could not be read or parsed.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub error: TraceError,
}

/// Contents of a trace directory after the processes of a test have ended.
#[derive(Debug, Default)]
pub struct TraceDir {
    /// Every `*.rtt` file that parsed, sorted by path.
    pub traces: Vec<TraceFile>,
    /// Every `*.live` marker, sorted by path.
    pub live: Vec<LiveMarker>,
    /// Every `*.rtt` or `*.live` file that could not be read or parsed.
    pub errors: Vec<FileError>,
}

impl TraceDir {
    /// Whether the recorded coverage is exact: no leftover marker, no
    /// unreadable file, no trace flagged incomplete. When this is false the
    /// runner must not trust the coverage for selection.
    pub fn is_complete(&self) -> bool {
        self.live.is_empty()
            && self.errors.is_empty()
            && self.traces.iter().all(|t| !t.trace.flags.is_incomplete() && !t.trace.flags.is_clobbered())
    }

    /// The names of every file read: traces, markers and unusable files.
    pub fn file_names(&self) -> impl Iterator<Item = &str> {
        let traces = self.traces.iter().map(|t| &t.path);
        let live = self.live.iter().map(|m| &m.path);
        let errors = self.errors.iter().map(|e| &e.path);
        traces.chain(live).chain(errors).filter_map(|p| p.file_name().and_then(|n| n.to_str()))
    }

    /// The union of all traces.
    pub fn coverage(&self) -> Result<Coverage, TraceError> {
        merge(self.traces.iter().map(|t| &t.trace))
    }
}

/// Reads every trace file and live marker in `dir`.
///
/// Temporary files (names starting with `.`), other extensions and
/// subdirectories are ignored. Only a failure to list `dir` itself is an
/// `Err`; problems with single files end up in [`TraceDir::errors`].
pub fn read_dir(dir: &Path) -> Result<TraceDir, TraceError> {
    let io_err = |source| TraceError::Io { path: dir.to_path_buf(), source };
    let mut paths = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_err)? {
        let entry = entry.map_err(io_err)?;
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') || entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        paths.push(path);
    }
    paths.sort();

    let mut out = TraceDir::default();
    for path in paths {
        match path.extension().and_then(|e| e.to_str()) {
            Some(TRACE_EXTENSION) => match fs::read(&path) {
                Ok(bytes) => match parse(&bytes) {
                    Ok(trace) => out.traces.push(TraceFile { path, trace }),
                    Err(error) => out.errors.push(FileError { path, error }),
                },
                Err(source) => {
                    out.errors.push(FileError { error: TraceError::Io { path: path.clone(), source }, path })
                }
            },
            Some(LIVE_EXTENSION) => {
                let pid =
                    path.file_name().and_then(|s| s.to_str()).and_then(FileName::parse).map(|n| u64::from(n.pid()));
                // a marker the image began to write its final trace over holds no command line
                let command = fs::read(&path)
                    .ok()
                    .filter(|b| b.is_empty() || !MAGIC.starts_with(&b[..b.len().min(MAGIC.len())]))
                    .map(|b| command_line(&b))
                    .unwrap_or_default();
                out.live.push(LiveMarker { path, pid, command });
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Name of the directory in the store into which the runtime reports images
/// that ran instrumented code without `RETEST_TRACE_DIR` (`RETEST_RT_UNRECORDED`
/// in the runtime; docs/trace-format.md). It exists only while `retest run` runs.
pub const UNRECORDED_DIR: &str = "unrecorded";

/// Log in [`UNRECORDED_DIR`] to which the runtime appends `<pgid> <pid>-<nonce>`
/// for every image that creates a live marker, so that a trace the test
/// removed is not taken for one never written.
pub const IMAGES_LOG: &str = ".images";

/// A report of one process image that ran instrumented code but recorded
/// nothing, because its environment lacked `RETEST_TRACE_DIR` (`env -i`, a
/// harness that builds the environment from scratch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrecorded {
    pub path: PathBuf,
    /// Process group of the image, from the file name (`<pgid>-<pid>-<nonce>`).
    pub group: u32,
    /// Process id of the image.
    pub pid: u32,
    /// Its command line (may be cut short; empty if unavailable).
    pub command: Vec<String>,
}

/// Every report in `dir` (an [`UNRECORDED_DIR`]), sorted by path; files whose
/// names do not parse are left out. A missing directory has none.
pub fn read_unrecorded(dir: &Path) -> Vec<Unrecorded> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<Unrecorded> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name();
            let mut parts = name.to_str()?.split('-');
            let group = parts.next()?.parse().ok()?;
            let pid = parts.next()?.parse().ok()?;
            let path = e.path();
            let command = fs::read(&path).map(|b| command_line(&b)).unwrap_or_default();
            Some(Unrecorded { path, group, pid, command })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The NUL-separated arguments the runtime stores (as in /proc/self/cmdline).
fn command_line(bytes: &[u8]) -> Vec<String> {
    bytes.split(|&c| c == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect()
}

/// Hit cells of one cell array, unioned over traces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellHits {
    /// Number of cells in the array.
    pub len: u32,
    /// Strictly increasing indices of the hit cells.
    pub hit: Vec<u32>,
}

/// Union of the coverage in any number of traces.
///
/// Cell arrays are keyed by (unit hash, section kind): the instrumenter
/// emits at most one section per kind in a unit. Path-id sets are keyed by
/// (unit hash, section kind, function number).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    cells: BTreeMap<(TuHash, u32), CellHits>,
    ids: BTreeMap<(TuHash, u32, u32), Vec<u64>>,
    /// Execution counts by (unit hash, kind): the array's length and, per
    /// cell that ran, the sum over traces (saturating).
    counts: BTreeMap<(TuHash, u32), (u32, BTreeMap<u32, u64>)>,
    incomplete: bool,
    stopped: bool,
    clobbered: bool,
}

impl Coverage {
    pub fn new() -> Coverage {
        Coverage::default()
    }

    /// Adds one trace. Fails (leaving `self` partly updated) if a cell array
    /// has a different length than in an earlier trace.
    pub fn add(&mut self, trace: &Trace) -> Result<(), TraceError> {
        self.incomplete |= trace.flags.is_incomplete();
        self.stopped |= trace.flags.stopped_part_way();
        self.clobbered |= trace.flags.is_clobbered();
        for unit in &trace.units {
            for section in &unit.sections {
                match section {
                    Section::Cells { kind, len, hit } => match self.cells.get_mut(&(unit.hash, *kind)) {
                        Some(acc) if acc.len != *len => {
                            return Err(TraceError::LengthMismatch {
                                hash: unit.hash,
                                kind: *kind,
                                first: acc.len,
                                second: *len,
                            });
                        }
                        Some(acc) => acc.hit = union_sorted(&acc.hit, hit),
                        None => {
                            self.cells.insert((unit.hash, *kind), CellHits { len: *len, hit: hit.clone() });
                        }
                    },
                    Section::IdSet { kind, func, ids } => {
                        let acc = self.ids.entry((unit.hash, *kind, *func)).or_default();
                        *acc = union_sorted(acc, ids);
                    }
                    Section::Counts { kind, len, counts } => {
                        let acc = self.counts.entry((unit.hash, *kind)).or_insert_with(|| (*len, BTreeMap::new()));
                        if acc.0 != *len {
                            return Err(TraceError::LengthMismatch {
                                hash: unit.hash,
                                kind: *kind,
                                first: acc.0,
                                second: *len,
                            });
                        }
                        for &(i, n) in counts {
                            let c = acc.1.entry(i).or_default();
                            *c = c.saturating_add(n);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Hit cells of the `kind` array of unit `hash`, if any trace had it.
    pub fn cells(&self, hash: &TuHash, kind: u32) -> Option<&CellHits> {
        self.cells.get(&(*hash, kind))
    }

    /// Path ids of function `func` of unit `hash`, if any were recorded.
    pub fn ids(&self, hash: &TuHash, kind: u32, func: u32) -> Option<&[u64]> {
        self.ids.get(&(*hash, kind, func)).map(Vec::as_slice)
    }

    /// All cell arrays: (hash, kind, hits), ordered by hash then kind.
    pub fn iter_cells(&self) -> impl Iterator<Item = (&TuHash, u32, &CellHits)> {
        self.cells.iter().map(|((h, k), c)| (h, *k, c))
    }

    /// Execution counts of the `kind` counter array of unit `hash`, summed
    /// over the traces (each process counts only what it ran itself: the
    /// runtime restarts a forked child's counters), if any trace had them.
    pub fn counts(&self, hash: &TuHash, kind: u32) -> Option<&BTreeMap<u32, u64>> {
        self.counts.get(&(*hash, kind)).map(|(_, c)| c)
    }

    /// All counter arrays: (hash, kind, len, counts), ordered by hash then kind.
    pub fn iter_counts(&self) -> impl Iterator<Item = (&TuHash, u32, u32, &BTreeMap<u32, u64>)> {
        self.counts.iter().map(|((h, k), (len, c))| (h, *k, *len, c))
    }

    /// All path-id sets: (hash, kind, func, ids), ordered by key.
    pub fn iter_ids(&self) -> impl Iterator<Item = (&TuHash, u32, u32, &[u64])> {
        self.ids.iter().map(|((h, k, f), ids)| (h, *k, *f, ids.as_slice()))
    }

    /// Whether any merged trace was flagged [`TraceFlags::INCOMPLETE`].
    pub fn is_incomplete(&self) -> bool {
        self.incomplete
    }

    /// Whether any merged trace was flagged [`TraceFlags::CLOBBERED`].
    pub fn is_clobbered(&self) -> bool {
        self.clobbered
    }

    /// Whether code may have been stopped part-way in any merged trace
    /// ([`TraceFlags::stopped_part_way`]).
    pub fn stopped_part_way(&self) -> bool {
        self.stopped
    }
}

/// The union of `traces`; see [`Coverage::add`].
pub fn merge<'a, I>(traces: I) -> Result<Coverage, TraceError>
where
    I: IntoIterator<Item = &'a Trace>,
{
    let mut cov = Coverage::new();
    for trace in traces {
        cov.add(trace)?;
    }
    Ok(cov)
}

/// Union of two strictly increasing sequences.
fn union_sorted<T: Ord + Copy>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn sample() -> Trace {
        Trace {
            version: VERSION,
            flags: TraceFlags::SIGNAL | TraceFlags(11 << 8),
            pid: 4242,
            units: vec![
                UnitTrace {
                    hash: TuHash([0xa1; 16]),
                    sections: vec![
                        // 2 of 100 hit: sparse (12 bytes) beats raw (100).
                        Section::Cells { kind: SECT_EDGES, len: 100, hit: vec![3, 99] },
                        // 3 of 6 hit: raw.
                        Section::Cells { kind: SECT_MCDC, len: 6, hit: vec![0, 2, 5] },
                        Section::IdSet { kind: SECT_PATHS, func: 7, ids: vec![1, 1 << 40, u64::MAX] },
                    ],
                },
                UnitTrace {
                    hash: TuHash([0xb2; 16]),
                    sections: vec![Section::Cells { kind: SECT_EDGES, len: 0, hit: vec![] }],
                },
            ],
        }
    }

    /// Header, one unit with one section, built by hand; `payload` follows
    /// the section's (kind, len, encoding). Checksum and trailer are valid.
    fn handmade(len: u32, encoding: u32, payload: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&MAGIC);
        put_u32(&mut b, VERSION);
        put_u32(&mut b, 0);
        put_u64(&mut b, 1);
        put_u64(&mut b, 0);
        put_u32(&mut b, 1);
        b.extend_from_slice(&[7; 16]);
        put_u32(&mut b, 1);
        put_u32(&mut b, SECT_EDGES);
        put_u32(&mut b, len);
        put_u32(&mut b, encoding);
        b.extend_from_slice(payload);
        seal(b)
    }

    /// Appends crc and end magic.
    fn seal(mut b: Vec<u8>) -> Vec<u8> {
        let crc = crc32fast::hash(&b);
        put_u32(&mut b, crc);
        b.extend_from_slice(&END_MAGIC);
        b
    }

    fn u32s(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn sample_round_trips_and_picks_the_smaller_encoding() {
        let t = sample();
        let bytes = write(&t);
        assert_eq!(parse(&bytes).unwrap(), t);
        // header 36 + unit hash 16 + nsect 4
        // + edges: 12 + count 4 + 2*4  + mcdc: 12 + 6  + idset: 12 + 4 + 3*8
        // + unit 2: 16 + 4 + 12 + trailer 12
        assert_eq!(bytes.len(), 36 + 20 + 24 + 18 + 40 + 32 + 12);
        assert_eq!(parse(&bytes).unwrap().flags.signal(), Some(11));
    }

    #[test]
    fn raw_wins_ties() {
        // 2 hits of 12 cells: sparse = 4 + 8 = 12 = raw.
        let t = Trace {
            version: VERSION,
            flags: TraceFlags::EXIT,
            pid: 1,
            units: vec![UnitTrace {
                hash: TuHash([0; 16]),
                sections: vec![Section::Cells { kind: SECT_EDGES, len: 12, hit: vec![1, 11] }],
            }],
        };
        let bytes = write(&t);
        let enc_at = HEADER_LEN + 16 + 4 + 8;
        assert_eq!(bytes[enc_at..enc_at + 4], ENC_RAW.to_le_bytes());
        assert_eq!(parse(&bytes).unwrap(), t);
    }

    #[test]
    fn write_normalises_unsorted_input() {
        let mut t = sample();
        t.units[0].sections[0] = Section::Cells { kind: SECT_EDGES, len: 100, hit: vec![99, 3, 3] };
        assert_eq!(parse(&write(&t)).unwrap(), sample());
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn write_rejects_out_of_range_hits() {
        let mut t = sample();
        t.units[0].sections[1] = Section::Cells { kind: SECT_MCDC, len: 6, hit: vec![6] };
        write(&t);
    }

    #[test]
    fn every_truncation_is_reported_at_its_length() {
        let bytes = write(&sample());
        for n in 0..bytes.len() {
            match parse(&bytes[..n]) {
                Err(TraceError::Truncated { at, .. }) => assert_eq!(at, n, "prefix of {n} bytes"),
                other => panic!("prefix of {n} bytes: expected Truncated, got {other:?}"),
            }
        }
    }

    #[test]
    fn every_flipped_body_byte_is_a_checksum_mismatch() {
        let bytes = write(&sample());
        let crc_at = bytes.len() - TRAILER_LEN;
        // Everything after the version and before the trailer is covered by
        // the checksum alone.
        for at in 12..crc_at + 4 {
            let mut bad = bytes.clone();
            bad[at] ^= 0x20;
            assert!(matches!(parse(&bad), Err(TraceError::ChecksumMismatch { .. })), "byte {at}: {:?}", parse(&bad));
        }
    }

    #[test]
    fn flipped_header_and_trailer_bytes() {
        let bytes = write(&sample());
        for at in 0..8 {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            assert!(matches!(parse(&bad), Err(TraceError::BadMagic { .. })), "byte {at}");
        }
        for at in 8..12 {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            assert!(matches!(parse(&bad), Err(TraceError::UnsupportedVersion { .. })), "byte {at}");
        }
        for at in bytes.len() - 8..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            match parse(&bad) {
                Err(TraceError::BadTrailer { at: pos }) => {
                    assert_eq!(pos, bytes.len() - TRAILER_LEN)
                }
                other => panic!("byte {at}: {other:?}"),
            }
        }
    }

    #[test]
    fn bad_magic() {
        let mut bytes = write(&sample());
        bytes[..8].copy_from_slice(b"GARBAGE!");
        match parse(&bytes) {
            Err(TraceError::BadMagic { found }) => assert_eq!(found, b"GARBAGE!"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse(b"ELF"), Err(TraceError::BadMagic { .. })));
        assert!(matches!(parse(b""), Err(TraceError::Truncated { at: 0, .. })));
        assert!(matches!(parse(b"RETE"), Err(TraceError::Truncated { at: 4, .. })));
    }

    #[test]
    fn future_version_is_rejected_before_anything_else() {
        let mut bytes = write(&sample());
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        // Checksum now wrong too: the version error still wins.
        match parse(&bytes) {
            Err(TraceError::UnsupportedVersion { found, supported }) => {
                assert_eq!((found, supported), (2, VERSION));
            }
            other => panic!("{other:?}"),
        }
        // And a short file of a newer version is not called truncated.
        let mut short = MAGIC.to_vec();
        short.extend_from_slice(&7u32.to_le_bytes());
        assert!(matches!(parse(&short), Err(TraceError::UnsupportedVersion { found: 7, .. })));
    }

    #[test]
    fn structural_errors_with_a_valid_checksum() {
        assert!(matches!(
            parse(&handmade(4, 9, &[])),
            Err(TraceError::UnknownEncoding { unit: 0, section: 0, encoding: 9 })
        ));
        assert!(matches!(
            parse(&handmade(4, ENC_RAW, &[0, 1, 2, 0])),
            Err(TraceError::BadCellValue { index: 2, value: 2, .. })
        ));
        assert!(matches!(
            parse(&handmade(10, ENC_SPARSE, &u32s(&[2, 3, 10]))), // count 2: 3, 10
            Err(TraceError::IndexOutOfRange { index: 10, len: 10, .. })
        ));
        assert!(matches!(
            parse(&handmade(10, ENC_SPARSE, &u32s(&[2, 5, 4]))),
            Err(TraceError::NotIncreasing { position: 1, .. })
        ));
        assert!(matches!(
            parse(&handmade(10, ENC_SPARSE, &u32s(&[2, 3, 3]))),
            Err(TraceError::NotIncreasing { position: 1, .. })
        ));
        let mut ids = 2u32.to_le_bytes().to_vec();
        ids.extend_from_slice(&9u64.to_le_bytes());
        ids.extend_from_slice(&9u64.to_le_bytes());
        assert!(matches!(parse(&handmade(0, ENC_IDSET, &ids)), Err(TraceError::NotIncreasing { position: 1, .. })));
        // A count larger than the file: truncated, and nothing huge allocated.
        assert!(matches!(
            parse(&handmade(10, ENC_SPARSE, &u32::MAX.to_le_bytes())),
            Err(TraceError::Truncated { what: "sparse indices", .. })
        ));
        // Valid payload (count 1, index 4) followed by junk before the trailer.
        let mut payload = u32s(&[1, 4]);
        payload.extend_from_slice(&[0xee; 3]);
        assert!(matches!(parse(&handmade(10, ENC_SPARSE, &payload)), Err(TraceError::TrailingBytes { extra: 3, .. })));
        // And the same file without the junk is fine.
        let t = parse(&handmade(10, ENC_SPARSE, &u32s(&[2, 1, 4]))).unwrap();
        assert_eq!(t.units[0].sections, vec![Section::Cells { kind: SECT_EDGES, len: 10, hit: vec![1, 4] }]);
    }

    #[test]
    fn errors_say_what_is_wrong() {
        // header (36) + unit hash (16) + half of the section count
        let msg = parse(&write(&sample())[..54]).unwrap_err().to_string();
        assert_eq!(msg, "trace truncated at byte 54 while reading section count");
        let mut bytes = write(&sample());
        bytes[8] = 3;
        assert!(parse(&bytes).unwrap_err().to_string().contains("version 3 is not supported"));
    }

    #[test]
    fn flags() {
        let f = TraceFlags::SIGNAL | TraceFlags(6 << 8) | TraceFlags::INCOMPLETE;
        assert_eq!(f.signal(), Some(6));
        assert!(f.is_incomplete());
        assert!(!f.contains(TraceFlags::EXIT));
        assert_eq!(TraceFlags::EXIT.signal(), None);
        assert_eq!(format!("{f:?}"), "TraceFlags(0x611: SIGNAL|INCOMPLETE|signo=6)");
        assert!(f.stopped_part_way() && TraceFlags::THREADS.stopped_part_way());
        assert!(!(TraceFlags::EXIT | TraceFlags::INCOMPLETE).stopped_part_way());
    }

    fn cells(kind: u32, len: u32, hit: &[u32]) -> Section {
        Section::Cells { kind, len, hit: hit.to_vec() }
    }

    fn trace(pid: u64, units: Vec<UnitTrace>) -> Trace {
        Trace { version: VERSION, flags: TraceFlags::EXIT, pid, units }
    }

    #[test]
    fn merge_adds_the_counts_of_each_process() {
        let a = TuHash([1; 16]);
        let counts =
            |c: &[(u32, u64)]| Section::Counts { kind: retest_abi::SECT_EDGE_COUNTS, len: 6, counts: c.to_vec() };
        let t1 = trace(1, vec![UnitTrace { hash: a, sections: vec![counts(&[(0, 1), (3, 10)])] }]);
        let t2 = trace(2, vec![UnitTrace { hash: a, sections: vec![counts(&[(3, 5), (5, u64::MAX)])] }]);
        let t3 = trace(3, vec![UnitTrace { hash: a, sections: vec![counts(&[(5, 2)])] }]);
        for t in [&t1, &t2, &t3] {
            assert_eq!(&parse(&write(t)).unwrap(), t);
        }
        let cov = merge([&t1, &t2, &t3]).unwrap();
        let got: Vec<(u32, u64)> =
            cov.counts(&a, retest_abi::SECT_EDGE_COUNTS).unwrap().iter().map(|(i, n)| (*i, *n)).collect();
        assert_eq!(got, vec![(0, 1), (3, 15), (5, u64::MAX)]);
    }

    #[test]
    fn merge_unions_per_hash_and_kind() {
        let a = TuHash([1; 16]);
        let b = TuHash([2; 16]);
        let t1 = trace(
            1,
            vec![UnitTrace {
                hash: a,
                sections: vec![
                    cells(SECT_EDGES, 8, &[0, 3]),
                    Section::IdSet { kind: SECT_PATHS, func: 2, ids: vec![5, 9] },
                ],
            }],
        );
        let t2 = trace(
            2,
            vec![
                UnitTrace {
                    hash: a,
                    sections: vec![
                        cells(SECT_EDGES, 8, &[3, 7]),
                        cells(SECT_MCDC, 2, &[1]),
                        Section::IdSet { kind: SECT_PATHS, func: 2, ids: vec![1, 9] },
                    ],
                },
                UnitTrace { hash: b, sections: vec![cells(SECT_EDGES, 4, &[])] },
            ],
        );
        let cov = merge([&t1, &t2]).unwrap();
        assert_eq!(cov.cells(&a, SECT_EDGES), Some(&CellHits { len: 8, hit: vec![0, 3, 7] }));
        assert_eq!(cov.cells(&a, SECT_MCDC).unwrap().hit, vec![1]);
        assert_eq!(cov.cells(&b, SECT_EDGES).unwrap().hit, Vec::<u32>::new());
        assert_eq!(cov.ids(&a, SECT_PATHS, 2), Some(&[1, 5, 9][..]));
        assert_eq!(cov.ids(&a, SECT_PATHS, 3), None);
        assert_eq!(cov.iter_cells().count(), 3);
        assert!(!cov.is_incomplete());

        let mut t3 = trace(3, vec![]);
        t3.flags = TraceFlags::INCOMPLETE;
        assert!(merge([&t1, &t3]).unwrap().is_incomplete());
        // stopped part-way: by a signal, or with other threads; not at exit or exec
        assert!(!cov.stopped_part_way() && !merge([&t1, &t3]).unwrap().stopped_part_way());
        for flags in [
            TraceFlags::SIGNAL | TraceFlags(11 << 8),
            TraceFlags::EXIT | TraceFlags::THREADS,
            TraceFlags::EXIT | TraceFlags::HANDLER,
        ] {
            t3.flags = flags;
            assert!(merge([&t1, &t3]).unwrap().stopped_part_way(), "{flags:?}");
        }
        t3.flags = TraceFlags::BEFORE_EXEC | TraceFlags::UNDERSCORE_EXIT;
        assert!(!merge([&t1, &t3]).unwrap().stopped_part_way());

        let bad = trace(4, vec![UnitTrace { hash: a, sections: vec![cells(SECT_EDGES, 9, &[])] }]);
        assert!(matches!(merge([&t1, &bad]), Err(TraceError::LengthMismatch { first: 8, second: 9, .. })));
    }

    #[test]
    fn read_dir_collects_traces_markers_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let good = write(&sample());
        fs::write(p.join("4242-00ff-0.rtt"), &good).unwrap();
        fs::write(p.join("4242-00ff-1.rtt"), &good[..good.len() - 1]).unwrap();
        fs::write(p.join(".4242-00ff-2.rtt.tmp"), b"partial").unwrap();
        fs::write(p.join("77-abcd.live"), b"./prog\0--flag\0").unwrap();
        fs::write(p.join("78-abcd.live"), &good[..good.len() / 2]).unwrap();
        fs::write(p.join("notes.txt"), b"ignored").unwrap();
        fs::create_dir(p.join("sub.rtt")).unwrap();

        let td = read_dir(p).unwrap();
        assert_eq!(td.traces.len(), 1);
        assert_eq!(td.traces[0].path, p.join("4242-00ff-0.rtt"));
        assert_eq!(td.traces[0].trace, sample());
        assert_eq!(td.errors.len(), 1);
        assert_eq!(td.errors[0].path, p.join("4242-00ff-1.rtt"));
        assert!(matches!(td.errors[0].error, TraceError::Truncated { .. }));
        assert_eq!(
            td.live,
            vec![
                LiveMarker {
                    path: p.join("77-abcd.live"),
                    pid: Some(77),
                    command: vec!["./prog".into(), "--flag".into()],
                },
                // died while writing its final trace over the marker
                LiveMarker { path: p.join("78-abcd.live"), pid: Some(78), command: vec![] },
            ]
        );
        assert!(!td.is_complete());
        assert_eq!(td.coverage().unwrap(), merge([&sample()]).unwrap());

        let empty = tempfile::tempdir().unwrap();
        let td = read_dir(empty.path()).unwrap();
        assert!(td.is_complete() && td.traces.is_empty());
        assert!(matches!(read_dir(&p.join("missing")), Err(TraceError::Io { .. })));
    }

    fn arb_section() -> impl Strategy<Value = Section> {
        prop_oneof![
            (any::<u32>(), 0u32..2000)
                .prop_flat_map(|(kind, len)| {
                    let hits = if len == 0 {
                        Just(BTreeSet::new()).boxed()
                    } else {
                        proptest::collection::btree_set(0..len, 0..(len as usize).min(200)).boxed()
                    };
                    (Just(kind), Just(len), hits)
                })
                .prop_map(|(kind, len, hit)| Section::Cells { kind, len, hit: hit.into_iter().collect() }),
            (any::<u32>(), any::<u32>(), proptest::collection::btree_set(any::<u64>(), 0..50))
                .prop_map(|(kind, func, ids)| Section::IdSet { kind, func, ids: ids.into_iter().collect() }),
            (any::<u32>(), 1u32..5000)
                .prop_flat_map(|(kind, len)| {
                    (Just(kind), Just(len), proptest::collection::btree_map(0..len, 1..=u64::MAX, 0..50))
                })
                .prop_map(|(kind, len, counts)| Section::Counts { kind, len, counts: counts.into_iter().collect() }),
        ]
    }

    fn arb_trace() -> impl Strategy<Value = Trace> {
        let unit = (any::<[u8; 16]>(), proptest::collection::vec(arb_section(), 0..5))
            .prop_map(|(hash, sections)| UnitTrace { hash: TuHash(hash), sections });
        (any::<u32>(), any::<u64>(), proptest::collection::vec(unit, 0..5)).prop_map(|(flags, pid, units)| Trace {
            version: VERSION,
            flags: TraceFlags(flags),
            pid,
            units,
        })
    }

    proptest! {
        #[test]
        fn round_trip(t in arb_trace()) {
            prop_assert_eq!(parse(&write(&t)).unwrap(), t);
        }

        #[test]
        fn any_flipped_bit_is_an_error(t in arb_trace(), at in any::<prop::sample::Index>(), bit in 0u8..8) {
            let mut bytes = write(&t);
            let at = at.index(bytes.len());
            bytes[at] ^= 1 << bit;
            prop_assert!(parse(&bytes).is_err());
        }

        #[test]
        fn any_truncation_is_an_error(t in arb_trace(), cut in any::<prop::sample::Index>()) {
            let bytes = write(&t);
            let n = cut.index(bytes.len());
            prop_assert!(parse(&bytes[..n]).is_err());
        }

        #[test]
        fn merge_is_the_union(a in arb_trace(), b in arb_trace()) {
            // Per (hash, kind): union of hits, as long as lengths agree.
            if let Ok(cov) = merge([&a, &b]) {
                for t in [&a, &b] {
                    for u in &t.units {
                        for s in &u.sections {
                            match s {
                                Section::Cells { kind, hit, .. } => {
                                    let got = &cov.cells(&u.hash, *kind).unwrap().hit;
                                    prop_assert!(hit.iter().all(|i| got.binary_search(i).is_ok()));
                                    prop_assert!(got.windows(2).all(|w| w[0] < w[1]));
                                }
                                Section::IdSet { kind, func, ids } => {
                                    let got = cov.ids(&u.hash, *kind, *func).unwrap();
                                    prop_assert!(ids.iter().all(|i| got.binary_search(i).is_ok()));
                                    prop_assert!(got.windows(2).all(|w| w[0] < w[1]));
                                }
                                Section::Counts { kind, counts, .. } => {
                                    // a merged count is at least each trace's own
                                    let got = cov.counts(&u.hash, *kind).unwrap();
                                    prop_assert!(counts.iter().all(|(i, n)| got.get(i).is_some_and(|g| g >= n)));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
