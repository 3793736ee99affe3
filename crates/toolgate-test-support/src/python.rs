//! The Python with the official MCP SDK (`TOOLGATE_PYTHON`, default
//! `python3`), for interop tests with a client and a server nobody here
//! wrote; required under `TOOLGATE_REQUIRE_INTEROP=1`.

use std::process::Stdio;

/// The flag that turns a missing SDK into a failure.
pub const REQUIRE: &str = "TOOLGATE_REQUIRE_INTEROP";

/// The Python to run, when `import_line` (e.g. `import mcp`) works in it;
/// otherwise `None` after saying why the test skipped.
pub fn with(import_line: &str) -> Option<String> {
    let mut python = crate::gate::var("TOOLGATE_PYTHON").unwrap_or_else(|| "python3".to_owned());
    // A relative path (e.g. `target/interop-venv/bin/python`) is relative to the workspace root.
    if python.contains('/') && !python.starts_with('/') {
        python = crate::workspace().join(python).display().to_string();
    }
    let found = std::process::Command::new(&python)
        .args(["-c", import_line])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let why = match found {
        Ok(status) if status.success() => return Some(python),
        Ok(_) => format!("`{python}` cannot `{import_line}` (pip install mcp)"),
        Err(error) => format!("`{python}` cannot be run ({error})"),
    };
    crate::gate::skip(REQUIRE, &format!("{why}; set TOOLGATE_PYTHON to a Python with `mcp` installed"));
    None
}
