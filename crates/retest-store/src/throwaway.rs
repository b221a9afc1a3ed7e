//! A throwaway PostgreSQL server for tests: `initdb` and `pg_ctl` in a
//! temporary directory, listening on a unix socket in it only, stopped when
//! dropped. The server binaries come from Debian's `postgresql` package
//! (`.ci/run` installs it); their absence fails the test that asked for a
//! server, with what to install. Nothing depends on a server outside the test.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A PostgreSQL server of its own, in a temporary directory; stopped on drop.
pub struct Throwaway {
    dir: tempfile::TempDir,
    bin: PathBuf,
    databases: std::sync::atomic::AtomicU32,
}

/// The directory of PostgreSQL's server binaries (the newest installed).
pub fn pg_bin() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file() && b.join("pg_ctl").is_file())
        .collect();
    found.sort_by_key(|p| {
        p.parent().and_then(|v| v.file_name()).and_then(|v| v.to_str()).and_then(|v| v.parse::<u32>().ok())
    });
    found.pop().expect("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: install Debian's `postgresql`")
}

fn euid() -> u32 {
    // `id -u`: no libc binding needed for one number
    let out = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("id -u prints a number")
}

/// Runs a server binary, as the `postgres` user when we are root (initdb
/// and the server refuse to run as root).
fn as_server_user(bin: &Path, args: &[&str]) -> std::process::Output {
    let mut c = if euid() == 0 {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    let out = c.args(args).output().expect("run a PostgreSQL server binary");
    assert!(
        out.status.success(),
        "{} {args:?}: {}{}",
        bin.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Throwaway {
    pub fn start() -> Throwaway {
        let bin = pg_bin();
        let dir = tempfile::Builder::new().prefix("retest-pg-").tempdir().expect("a temporary directory");
        if euid() == 0 {
            let st = Command::new("chown").arg("postgres").arg(dir.path()).status().expect("chown");
            assert!(st.success());
        }
        let data = dir.path().join("data");
        let (data, sock) = (data.to_str().unwrap(), dir.path().to_str().unwrap());
        as_server_user(&bin.join("initdb"), &["-D", data, "-A", "trust", "-U", "retest", "-E", "UTF8", "--no-sync"]);
        let opts = format!("-k {sock} -c listen_addresses= -c fsync=off -c max_connections=60");
        let log = dir.path().join("log");
        as_server_user(&bin.join("pg_ctl"), &["-D", data, "-o", &opts, "-l", log.to_str().unwrap(), "-w", "start"]);
        Throwaway { dir, bin, databases: 0.into() }
    }

    /// The directory the server's socket is in.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// `psql` on a database of the server: unaligned rows, `|` between columns.
    pub fn psql_on(&self, db: &str, args: &[&str]) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", self.dir.path().to_str().unwrap(), "-U", "retest", "-d", db, "-v", "ON_ERROR_STOP=1"])
            .args(["-At", "-F", "|"])
            .args(args)
            .output()
            .expect("run psql");
        assert!(out.status.success(), "psql {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `psql` on the server's `postgres` database.
    pub fn psql(&self, args: &[&str]) -> String {
        self.psql_on("postgres", args)
    }

    /// The URL of a database of the server.
    pub fn url(&self, db: &str) -> String {
        let host = self.dir.path().to_str().unwrap().replace('/', "%2F");
        format!("postgresql://retest@{host}/{db}")
    }

    /// Creates a new empty database; its URL.
    pub fn new_database(&self) -> String {
        let n = self.databases.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("store{n}");
        self.psql(&["-c", &format!("CREATE DATABASE {name}")]);
        self.url(&name)
    }

    /// Ends every client connection to the server (a dropped connection).
    pub fn drop_connections(&self) {
        self.psql(&["-c", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"]);
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = std::panic::catch_unwind(|| {
            as_server_user(&self.bin.join("pg_ctl"), &["-D", data.to_str().unwrap(), "-m", "immediate", "stop"])
        });
    }
}
