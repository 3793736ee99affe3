//! PostgreSQL for tests: the machine's server from `TOOLGATE_TEST_PG_URL`
//! (required under `TOOLGATE_REQUIRE_PG=1`), the SQLite-and-PostgreSQL pair
//! most store tests run on, and a throwaway server for tests that must stop,
//! restart or reconfigure it (never the machine's).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The flag that turns a missing PostgreSQL into a failure.
pub const REQUIRE: &str = "TOOLGATE_REQUIRE_PG";

/// The machine's PostgreSQL URL, or `None` after saying the test skipped.
pub fn url() -> Option<String> {
    crate::gate::url("TOOLGATE_TEST_PG_URL", REQUIRE)
}

/// One database a store test runs on: a fresh SQLite file, or the machine's PostgreSQL.
pub struct Backend {
    /// `sqlite` or `postgres`.
    pub name: &'static str,
    pub url: String,
    /// Keeps the SQLite file alive.
    _dir: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Backend {
    /// A fresh SQLite file `file` in a temporary directory.
    pub fn sqlite(file: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join(file).display());
        Self { name: "sqlite", url, _dir: Some(dir) }
    }

    /// The machine's PostgreSQL, or `None` after saying the test skipped.
    pub fn postgres() -> Option<Self> {
        url().map(|url| Self { name: "postgres", url, _dir: None })
    }

    /// A fresh SQLite file always; PostgreSQL when configured.
    pub fn all(file: &str) -> Vec<Self> {
        std::iter::once(Self::sqlite(file)).chain(Self::postgres()).collect()
    }

    pub fn is_pg(&self) -> bool {
        self.name == "postgres"
    }
}

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

/// A throwaway PostgreSQL server in a temporary folder on an ephemeral port;
/// stopped and deleted on drop. `initdb` refuses to run as root, so as root
/// the server runs as the `postgres` user through `runuser`.
#[derive(Debug)]
pub struct Throwaway {
    dir: tempfile::TempDir,
    port: u16,
    as_postgres: bool,
    options: String,
}

impl Throwaway {
    /// Start a fresh server, or `None` (with a message) when PostgreSQL's
    /// binaries are missing and TOOLGATE_REQUIRE_PG is not 1.
    pub fn start() -> Option<Self> {
        Self::start_with(None)
    }

    /// As [`Throwaway::start`], with `ssl=on` and this server certificate.
    pub fn start_tls(pki: &crate::tls::Pki) -> Option<Self> {
        Self::start_with(Some(pki))
    }

    fn start_with(pki: Option<&crate::tls::Pki>) -> Option<Self> {
        let bin = bin();
        if !bin.join("initdb").exists() {
            crate::gate::skip(
                REQUIRE,
                &format!("no PostgreSQL binaries: {}/initdb is missing", bin.display()),
            );
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let as_postgres = is_root();
        if as_postgres {
            chown_postgres(dir.path());
        }
        let options = if pki.is_some() { "-c max_connections=40 -c ssl=on" } else { "-c max_connections=40" }
            .to_owned();
        let pg = Self { dir, port: crate::process::free_port(), as_postgres, options };
        pg.run("initdb", &["-D", &pg.data(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
        if let Some(pki) = pki {
            pg.install_cert(pki);
        }
        pg.start_server();
        Some(pg)
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Start the server (again) on the same port.
    pub fn start_server(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off {}",
            self.port,
            self.dir.path().display(),
            self.options
        );
        let log = self.dir.path().join("log").display().to_string();
        self.run("pg_ctl", &["-D", &self.data(), "-o", &options, "-l", &log, "-w", "start"]);
    }

    /// Stop the server: `fast` (what a restart or failover does: sessions
    /// are told and closed) or `immediate` (a crash).
    pub fn stop_server(&self, mode: &str) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", mode, "-w", "stop"]);
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// `server.crt` and `server.key` in the data folder, owned by the server's user, mode 600.
    fn install_cert(&self, pki: &crate::tls::Pki) {
        let data = PathBuf::from(self.data());
        for (name, pem) in [("server.crt", &pki.cert_pem), ("server.key", &pki.key_pem)] {
            let file = data.join(name);
            std::fs::write(&file, pem).unwrap();
            if self.as_postgres {
                chown_postgres(&file);
            }
            assert!(Command::new("chmod").arg("600").arg(&file).status().unwrap().success());
        }
    }

    fn command(&self, tool: &str) -> Command {
        let program = bin().join(tool);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let output = self.command(tool).args(args).output().unwrap_or_else(|e| panic!("running {tool}: {e}"));
        assert!(
            output.status.success(),
            "{tool} {args:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self.command("pg_ctl").args(["-D", data.as_str(), "-m", "immediate", "-w", "stop"]).output();
    }
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

fn chown_postgres(path: &Path) {
    let status = Command::new("chown").arg("postgres:").arg(path).status().expect("chown");
    assert!(status.success(), "chown postgres {}", path.display());
}
