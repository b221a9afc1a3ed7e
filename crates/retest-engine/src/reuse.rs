//! The wrapper's cache of analyses (`.retest/cache/`): what `retest cc` made of
//! a preprocessed text — the unit and its instrumentation under a probe plan —
//! kept under the text's [`AnalysisKey`], so that a build meeting the same text
//! again (the restoring rebuild after `run --selected`, a `make clean`, a
//! touched header that changes nothing, a branch switched back) compiles it
//! without analysing it: content-addressed, as ccache keeps objects.
//!
//! The key names the front end too (retest's version and the identity of its
//! executable), so a new retest never reads what an old one made. Each file
//! carries a checksum of what it holds; a file that is missing, torn or from
//! another format is not used and the text is analysed as without a cache.
//! Files are written under a temporary name and renamed, so concurrent
//! compiles (`make -j`) never read a half-written one. `RETEST_REUSE=0`
//! turns the cache off.
//!
//! The header regions of units ([`retest_lang_c::region`]) are kept here
//! too, under their key and the analyser's name, so a build's units after
//! the first are analysed without the headers the first ones included.
//!
//! Reading a file marks it used (its modification time); `retest build`
//! keeps the cache under [`MAX_BYTES`] by removing the least recently used
//! files ([`prune`]).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use retest_abi::{BuildHash, hex};
use retest_graph::Unit;
use retest_lang_c::region::{Region, RegionKey, Regions};
use retest_lang_c::wrap::{AnalysisKey, KeptInstrumentation, Reuse};

/// The cache directory in a store directory.
pub const DIR: &str = "cache";
/// Set to `0` to analyse every text, keeping nothing.
pub const ENV: &str = "RETEST_REUSE";
/// The size `retest build` keeps the cache under.
pub const MAX_BYTES: u64 = 512 << 20;
/// First bytes of every cache file; then the XXH3-128 of the rest.
const MAGIC: &[u8; 8] = b"RTCACHE1";

/// The cache of one store directory.
pub struct AnalysisCache {
    dir: PathBuf,
    analyser: String,
}

impl AnalysisCache {
    /// The cache of the store in `store_dir`; `None` when it is turned off or
    /// retest cannot name its own executable (then nothing could tell its
    /// analyses from another build's).
    pub fn new(store_dir: &Path) -> Option<AnalysisCache> {
        if std::env::var_os(ENV).is_some_and(|v| v == "0") {
            return None;
        }
        let exe = std::env::current_exe().ok()?;
        let meta = std::fs::metadata(&exe).ok()?;
        let modified = meta.modified().ok()?.duration_since(SystemTime::UNIX_EPOCH).ok()?;
        let analyser =
            format!("retest {} {} {} {}", env!("CARGO_PKG_VERSION"), exe.display(), meta.len(), modified.as_nanos());
        Some(AnalysisCache { dir: store_dir.join(DIR), analyser })
    }

    fn unit_file(&self, key: &AnalysisKey) -> PathBuf {
        self.dir.join(format!("{}.unit", hex(key)))
    }

    fn instrumentation_file(&self, key: &AnalysisKey, build: &BuildHash) -> PathBuf {
        self.dir.join(format!("{}-{}.ins", hex(key), hex(build.as_bytes())))
    }

    fn region_file(&self, key: &RegionKey) -> PathBuf {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(self.analyser.as_bytes());
        h.update(key);
        self.dir.join(format!("{}.sys", hex(&h.digest128().to_le_bytes())))
    }
}

impl Regions for AnalysisCache {
    fn region(&self, key: &RegionKey) -> Option<Region> {
        serde_json::from_slice(&read(&self.region_file(key))?).ok()
    }

    fn keep_region(&self, key: &RegionKey, region: &Region) {
        let file = self.region_file(key);
        if file.exists() || std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        if let Ok(bytes) = serde_json::to_vec(region) {
            write(&file, &bytes);
        }
    }
}

impl Reuse for AnalysisCache {
    fn analyser(&self) -> &str {
        &self.analyser
    }

    fn unit(&self, key: &AnalysisKey) -> Option<Unit> {
        retest_store::decode_unit(&read(&self.unit_file(key))?).ok()
    }

    fn instrumentation(&self, key: &AnalysisKey, build: &BuildHash) -> Option<KeptInstrumentation> {
        serde_json::from_slice(&read(&self.instrumentation_file(key, build))?).ok()
    }

    fn keep(&self, key: &AnalysisKey, unit: &Unit, build: &BuildHash, kept: &KeptInstrumentation) {
        // a cache that cannot be written is a cache that misses: never an error
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let Ok(ins) = serde_json::to_vec(kept) else { return };
        let unit_file = self.unit_file(key);
        if !unit_file.exists() {
            write(&unit_file, &retest_store::encode_unit(unit));
        }
        write(&self.instrumentation_file(key, build), &ins);
    }

    fn regions(&self) -> &dyn Regions {
        self
    }
}

/// The payload of a cache file, if it is whole; marks the file used.
fn read(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (sum, payload) = rest.split_at_checked(16)?;
    if sum != xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes() {
        return None;
    }
    if let Ok(f) = std::fs::File::options().append(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
    Some(payload.to_vec())
}

/// Writes a cache file whole or not at all: under a name of its own, then renamed.
fn write(path: &Path, payload: &[u8]) {
    let Some(name) = path.file_name() else { return };
    let tmp = path.with_file_name(format!(
        ".{}.{}.{:x}",
        name.to_string_lossy(),
        std::process::id(),
        SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0)
    ));
    let mut bytes = Vec::with_capacity(MAGIC.len() + 16 + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes());
    bytes.extend_from_slice(payload);
    if std::fs::write(&tmp, &bytes).is_err() || std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Removes the least recently used cache files of the store in `store_dir`
/// until they hold at most `max_bytes`, and temporaries a killed compile
/// left behind. Returns how many files went.
pub fn prune(store_dir: &Path, max_bytes: u64) -> usize {
    let Ok(entries) = std::fs::read_dir(store_dir.join(DIR)) else { return 0 };
    let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    let mut removed = 0;
    let an_hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
    for e in entries.flatten() {
        let Ok(meta) = e.metadata() else { continue };
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if e.file_name().to_string_lossy().starts_with('.') {
            // a temporary: still being written unless old
            if modified < an_hour_ago && std::fs::remove_file(e.path()).is_ok() {
                removed += 1;
            }
            continue;
        }
        files.push((modified, meta.len(), e.path()));
    }
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    files.sort();
    for (_, len, path) in files {
        if total <= max_bytes {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_or_altered_cache_file_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.unit");
        write(&path, b"what was kept");
        assert_eq!(read(&path).as_deref(), Some(&b"what was kept"[..]));
        let whole = std::fs::read(&path).unwrap();
        // torn: the write stopped part-way
        std::fs::write(&path, &whole[..whole.len() - 3]).unwrap();
        assert_eq!(read(&path), None);
        // altered: one byte of the payload changed
        let mut altered = whole.clone();
        *altered.last_mut().unwrap() ^= 1;
        std::fs::write(&path, &altered).unwrap();
        assert_eq!(read(&path), None);
        // another format
        std::fs::write(&path, b"RTCACHE0 something else entirely").unwrap();
        assert_eq!(read(&path), None);
    }

    #[test]
    fn a_kept_region_is_read_back_by_the_same_analyser_only() {
        let store = tempfile::tempdir().unwrap();
        let cache = AnalysisCache { dir: store.path().join(DIR), analyser: "retest 1 /bin/retest 10 20".into() };
        let mut region = Region::default();
        region.files.push("/usr/include/stdio.h".into());
        region.noreturn.insert("abort".into());
        region.uses.insert("stdout".into());
        let key = [7u8; 16];
        assert_eq!(cache.region(&key), None);
        cache.keep_region(&key, &region);
        assert_eq!(cache.region(&key), Some(region.clone()));
        assert_eq!(cache.region(&[8u8; 16]), None, "another key");
        let other = AnalysisCache { dir: cache.dir.clone(), analyser: "retest 1 /bin/retest 10 21".into() };
        assert_eq!(other.region(&key), None, "another build of retest does not read it");
        // a damaged file is a region not kept
        let file = cache.region_file(&key);
        let mut bytes = std::fs::read(&file).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(cache.region(&key), None);
    }

    #[test]
    fn pruning_removes_the_least_recently_used_files_first() {
        let store = tempfile::tempdir().unwrap();
        let dir = store.path().join(DIR);
        std::fs::create_dir_all(&dir).unwrap();
        let old = SystemTime::now() - std::time::Duration::from_secs(100);
        for (i, name) in ["a.unit", "b.unit", "c.unit"].iter().enumerate() {
            write(&dir.join(name), &[0u8; 1000]);
            let f = std::fs::File::options().append(true).open(dir.join(name)).unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i as u64 * 10)).unwrap();
        }
        // reading `a` makes it the most recently used
        assert!(read(&dir.join("a.unit")).is_some());
        let each = std::fs::metadata(dir.join("a.unit")).unwrap().len();
        assert_eq!(prune(store.path(), 2 * each), 1);
        assert!(!dir.join("b.unit").exists(), "the least recently used goes first");
        assert!(dir.join("a.unit").exists() && dir.join("c.unit").exists());
    }
}
