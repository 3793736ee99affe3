//! What a run needs before it starts: an optimised build of itself and of
//! toolgate, wrk and taskset on the PATH, FastMCP in a virtualenv, and the
//! versions the report names.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::proc;
use super::servers::Programs;

/// FastMCP and the uvicorn speed-ups, pinned so that reruns compare alike.
const PY_PACKAGES: [&str; 3] = ["fastmcp==4.2.3", "uvloop==0.23.0", "httptools==0.9.0"];

/// The bare peer and the report code run in this process: it must be optimised.
pub(super) fn rerun_in_release(args: &[&str]) -> Result<()> {
    eprintln!("bench: re-running as a release build");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(crate::workspace_root())
        .args(["run", "--release", "--quiet", "--package", "xtask", "--", "bench"])
        .args(args)
        .status()
        .context("starting cargo")?;
    if !status.success() {
        bail!("the release run failed ({status})");
    }
    Ok(())
}

pub(super) fn programs(root: &Path, build: bool, fastmcp: bool) -> Result<Programs> {
    for tool in ["wrk", "taskset"] {
        let found = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            bail!("`{tool}` is not installed (Debian: apt-get install wrk util-linux)");
        }
    }
    let toolgate = release_toolgate(root, build)?;
    let python = root.join("target/bench-venv/bin/python");
    if fastmcp {
        ensure_venv(root, &python)?;
    }
    Ok(Programs {
        toolgate,
        xtask: std::env::current_exe().context("this program's path")?,
        python,
        fastmcp_script: root.join("bench/fastmcp_server.py"),
    })
}

/// The release `toolgate` binary, built first when `build`.
pub(super) fn release_toolgate(root: &Path, build: bool) -> Result<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let toolgate = target.join("release/toolgate");
    if build {
        eprintln!("bench: cargo build --release -p toolgate");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .current_dir(root)
            .args(["build", "--release", "--package", "toolgate"])
            .status()
            .context("starting cargo")?;
        if !status.success() {
            bail!("cargo build --release -p toolgate failed");
        }
    }
    if !toolgate.exists() {
        bail!("{} is missing: run `cargo build --release -p toolgate` first", toolgate.display());
    }
    Ok(toolgate)
}

/// FastMCP (pinned) in `target/bench-venv`, installed from the Python registry when missing.
fn ensure_venv(root: &Path, python: &Path) -> Result<()> {
    let pins: Vec<String> = PY_PACKAGES
        .iter()
        .filter_map(|p| p.split_once("=="))
        .map(|(name, version)| format!("importlib.metadata.version({name:?}) == {version:?}"))
        .collect();
    let check = format!("import importlib.metadata, sys; sys.exit(0 if {} else 1)", pins.join(" and "));
    if python.exists()
        && std::process::Command::new(python).args(["-c", &check]).status().is_ok_and(|s| s.success())
    {
        return Ok(());
    }
    if !python.exists() {
        let system = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let venv = root.join("target/bench-venv");
        let status = std::process::Command::new(&system)
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .with_context(|| format!("running {system} -m venv (install Python 3.10+ or set PYTHON)"))?;
        if !status.success() {
            bail!("{system} -m venv failed");
        }
    }
    eprintln!("bench: pip install {}", PY_PACKAGES.join(" "));
    let status = std::process::Command::new(python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(PY_PACKAGES)
        .status()
        .context("running pip")?;
    if !status.success() {
        bail!("pip install {} failed", PY_PACKAGES.join(" "));
    }
    Ok(())
}

/// What was measured, named for the report.
#[derive(Debug)]
pub(super) struct Versions {
    pub(super) commit: String,
    pub(super) rustc: String,
    pub(super) wrk: String,
    pub(super) python: String,
    pub(super) cpu: String,
    pub(super) kernel: String,
}

pub(super) fn versions(root: &Path, programs: &Programs) -> Versions {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .current_dir(root)
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let dirty = if git(&["status", "--porcelain", "--untracked-files=no"]).is_empty() {
        ""
    } else {
        " (with uncommitted changes)"
    };
    Versions {
        commit: format!("{}{dirty}", git(&["rev-parse", "--short", "HEAD"])),
        rustc: proc::output_of(Path::new("rustc"), &["--version"]),
        wrk: proc::output_of(Path::new("wrk"), &["--version"]),
        python: if programs.python.exists() {
            proc::output_of(&programs.python, &["--version"])
        } else {
            "not used".into()
        },
        cpu: proc::cpu_model(),
        kernel: proc::output_of(Path::new("uname"), &["-sr"]),
    }
}
