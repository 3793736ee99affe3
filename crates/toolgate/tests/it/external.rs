//! The clients nobody here wrote that some tests drive: the official MCP
//! Python SDK and headless Chromium (playwright-core). Each finder answers
//! what to run, or `None` after printing why the test skips; under
//! `TOOLGATE_REQUIRE_INTEROP=1` / `TOOLGATE_REQUIRE_BROWSER=1` a missing
//! client is a failure instead (CI sets both). The same conventions as the
//! mcp-server and mcp-upstream interop tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A path from the environment; relative ones are relative to the workspace root.
fn env_path(var: &str, default: &str) -> PathBuf {
    let path = PathBuf::from(std::env::var(var).unwrap_or_else(|_| default.to_owned()));
    if path.is_absolute() || !path.to_string_lossy().contains('/') { path } else { workspace().join(path) }
}

fn skip_or_fail(require: &str, why: &str) {
    assert!(std::env::var(require).as_deref() != Ok("1"), "{require}=1 but {why}");
    eprintln!("skipped: {why}");
}

/// `TOOLGATE_PYTHON` (default `python3`) when it has the `mcp` package.
pub(crate) fn python() -> Option<PathBuf> {
    let python = env_path("TOOLGATE_PYTHON", "python3");
    let found = Command::new(&python).args(["-c", "import mcp"]).stdout(Stdio::null()).stderr(Stdio::null()).status();
    let why = match found {
        Ok(status) if status.success() => return Some(python),
        Ok(_) => format!("`{}` has no `mcp` module (pip install mcp)", python.display()),
        Err(error) => format!("`{}` cannot be run ({error})", python.display()),
    };
    skip_or_fail("TOOLGATE_REQUIRE_INTEROP", &why);
    None
}

/// (Chromium, the `node_modules` holding playwright-core): `TOOLGATE_CHROMIUM`
/// (default `/usr/bin/chromium`) and `TOOLGATE_NODE_MODULES` (default
/// `target/e2e-node/node_modules`).
pub(crate) fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = env_path("TOOLGATE_CHROMIUM", "/usr/bin/chromium");
    let modules = env_path("TOOLGATE_NODE_MODULES", "target/e2e-node/node_modules");
    let found = Command::new("node")
        .args(["-e", "require('playwright-core')"])
        .env("NODE_PATH", &modules)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let why = match found {
        _ if !chromium.exists() => format!("no Chromium at {} (apt-get install chromium)", chromium.display()),
        Ok(status) if status.success() => return Some((chromium, modules)),
        Ok(_) => format!("no playwright-core in {} (npm install playwright-core)", modules.display()),
        Err(error) => format!("`node` cannot be run ({error})"),
    };
    skip_or_fail("TOOLGATE_REQUIRE_BROWSER", &why);
    None
}
