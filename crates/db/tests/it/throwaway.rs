//! A throwaway PostgreSQL 15 server in a temporary folder on an ephemeral
//! port, for tests that must restart or stop the database (never the
//! machine's server). `initdb` refuses to run as root, so as root the
//! server runs as the `postgres` user through `runuser`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The newest installed server's binaries (Debian layout: /usr/lib/postgresql/VERSION/bin).
fn bin() -> PathBuf {
    let newest = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path())))
        .max_by_key(|(version, _)| *version);
    newest.map_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"), |(_, path)| path.join("bin"))
}

/// A running (or stopped) throwaway server; stopped and deleted on drop.
pub(crate) struct ThrowawayPg {
    dir: tempfile::TempDir,
    port: u16,
    as_postgres: bool,
}

impl ThrowawayPg {
    /// Start a fresh server, or `None` (with a message) when PostgreSQL's
    /// binaries are missing and TOOLGATE_REQUIRE_PG is not 1.
    pub(crate) fn start() -> Option<Self> {
        let bin = bin();
        if !bin.join("initdb").exists() {
            assert!(
                std::env::var("TOOLGATE_REQUIRE_PG").as_deref() != Ok("1"),
                "TOOLGATE_REQUIRE_PG=1 but {}/initdb is missing",
                bin.display()
            );
            eprintln!("skipped: no PostgreSQL binaries in {}", bin.display());
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let as_postgres = is_root();
        if as_postgres {
            chown_postgres(dir.path());
        }
        let port = free_port();
        let pg = Self { dir, port, as_postgres };
        pg.run("initdb", &["-D", &pg.data(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
        pg.start_server();
        Some(pg)
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub(crate) fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Start the server (again) on the same port.
    pub(crate) fn start_server(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=40",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log").display().to_string();
        self.run("pg_ctl", &["-D", &self.data(), "-o", &options, "-l", &log, "-w", "start"]);
    }

    /// Stop the server: `fast` (what a restart or failover does: sessions
    /// are told and closed) or `immediate` (a crash).
    pub(crate) fn stop_server(&self, mode: &str) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", mode, "-w", "stop"]);
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let program = bin().join(tool);
        let output = if self.as_postgres {
            Command::new("runuser").arg("-u").arg("postgres").arg("--").arg(&program).args(args).output()
        } else {
            Command::new(&program).args(args).output()
        }
        .unwrap_or_else(|e| panic!("running {tool}: {e}"));
        assert!(
            output.status.success(),
            "{tool} {args:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for ThrowawayPg {
    fn drop(&mut self) {
        let program = bin().join("pg_ctl");
        let data = self.data();
        let args = ["-D", data.as_str(), "-m", "immediate", "-w", "stop"];
        let _ = if self.as_postgres {
            Command::new("runuser").arg("-u").arg("postgres").arg("--").arg(&program).args(args).output()
        } else {
            Command::new(&program).args(args).output()
        };
    }
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

fn chown_postgres(path: &Path) {
    let status = Command::new("chown").arg("postgres:").arg(path).status().expect("chown");
    assert!(status.success(), "chown postgres {}", path.display());
}

/// A port nobody listens on right now.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}
