//! `cargo xtask link-order`: which functions a release `toolgate` runs to
//! start and to answer a client's first calls, written to
//! `crates/toolgate/link-order.txt`. The binary's build script hands that
//! file to the linker (`--symbol-ordering-file`), which then places those
//! functions together at the start of the text.
//!
//! Why: the text is 34 MB and the code a server runs is spread over all of
//! it, while the kernel maps a file page and its neighbours (fault-around)
//! at each first touch. Unordered, an idle server had 23 MiB of text
//! resident for 4.8 MiB of functions it had run; ordered, 5.5 MiB.
//!
//! How: the server runs under valgrind's callgrind, which records every
//! function executed (not a sample), stateless and with a session, through
//! the calls a model makes first (`tools/list`, the three meta-tools, a
//! tool, a refused call). The names are the binary's own symbols, which are
//! stable across builds of the same sources with the same toolchain and
//! lock file; names the linker no longer finds are skipped, so a stale file
//! costs memory, never a failed build. Rerun after a toolchain or
//! dependency update, or when the idle memory in `docs/bench-mcp.md` grows.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::json;
use tokio::process::Command;

use super::servers;
use crate::workspace_root;

/// Where the build script reads the order from.
pub(crate) const ORDER_FILE: &str = "crates/toolgate/link-order.txt";

/// `cargo xtask link-order [--no-build]`.
pub(crate) fn run(args: &[&str]) -> Result<()> {
    let build = match args {
        [] => true,
        ["--no-build"] => false,
        _ => bail!("usage: cargo xtask link-order [--no-build]"),
    };
    let root = workspace_root();
    let found = std::process::Command::new("valgrind").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        bail!("`valgrind` is not installed (Debian: apt-get install valgrind)");
    }
    let toolgate = super::setup::release_toolgate(&root, build)?;
    let work = root.join("target/link-order");
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("clearing {}", work.display()))?;
    }
    std::fs::create_dir_all(&work)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let mut functions = BTreeSet::new();
    for sessions in [false, true] {
        let profile = runtime.block_on(profile(&toolgate, &work, sessions))?;
        let binary = std::fs::canonicalize(&toolgate)?;
        let found = executed_functions(&std::fs::read_to_string(&profile)?, &binary);
        eprintln!(
            "link-order: {} functions run {}",
            found.len(),
            if sessions { "with a session" } else { "stateless" }
        );
        functions.extend(found);
    }
    if functions.len() < 100 {
        bail!(
            "only {} functions of toolgate were seen: did callgrind profile the right binary?",
            functions.len()
        );
    }
    let rustc = std::process::Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let mut out = format!(
        "# The functions a release toolgate runs to start and to answer its first calls, stateless and with a\n\
         # session; crates/toolgate/build.rs has the linker place them first. Made by `cargo xtask link-order`\n\
         # (valgrind's callgrind) with {rustc}; {} symbols.\n",
        functions.len()
    );
    for name in &functions {
        out.push_str(name);
        out.push('\n');
    }
    let path = root.join(ORDER_FILE);
    std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("link-order: wrote {ORDER_FILE}; rebuild with `cargo build --release -p toolgate`");
    Ok(())
}

/// Start `toolgate serve` under callgrind on a provisioned database, make
/// the first calls of a client, stop it; the profile's path.
async fn profile(toolgate: &Path, work: &Path, sessions: bool) -> Result<PathBuf> {
    let slug = if sessions { "sessions" } else { "stateless" };
    let (db, key) = servers::prepare_toolgate(toolgate, work, slug)?;
    let out = work.join(format!("callgrind.{slug}.out"));
    let mut command = Command::new("valgrind");
    command
        .args(["--tool=callgrind", "--demangle=no"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(toolgate)
        .arg("--db")
        .arg(format!("sqlite:{}", db.display()))
        .args(["serve", "--listen", "127.0.0.1:0"]);
    if !sessions {
        command.arg("--stateless");
    }
    for var in ["TOOLGATE_CONFIG", "TOOLGATE_DATABASE_URL", "TOOLGATE_WEATHER_URL"] {
        command.env_remove(var);
    }
    let log = std::fs::File::create(work.join(format!("{slug}.stderr.log")))?;
    command
        .env("TOOLGATE_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .kill_on_drop(true);
    let mut child = command.spawn().context("starting toolgate under valgrind")?;
    let pid = child.id().context("the server has no pid")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let url = servers::serving_url(stdout, "toolgate under callgrind").await?;
    first_calls(&url, &key, sessions).await?;
    // SIGTERM: the server shuts down and callgrind writes its profile on exit.
    let status = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status()?;
    if !status.success() {
        bail!("kill -TERM {pid} failed");
    }
    let exited = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;
    match exited {
        Ok(Ok(_)) if out.exists() => Ok(out),
        Ok(Ok(status)) => bail!("toolgate exited ({status}) without a profile at {}", out.display()),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => bail!("toolgate did not stop within 60 s of SIGTERM"),
    }
}

/// What a client does first: list, read a guide and a schema, search,
/// call a tool a few times, and make one call the gateway refuses.
async fn first_calls(url: &str, key: &str, sessions: bool) -> Result<()> {
    let client = reqwest::Client::builder().tcp_nodelay(true).build()?;
    let session = if sessions { Some(servers::open_session(&client, url, Some(key)).await?) } else { None };
    let tool = |name: &str, arguments: serde_json::Value| json!({"name": name, "arguments": arguments});
    let weather = tool("execute_tool", json!({"tool_name": "query_weather", "parameters": {"city": "Oslo"}}));
    let mut calls = vec![
        ("tools/list", json!({})),
        ("tools/call", tool("get_skill_guide", json!({"skill_id": "travel-request"}))),
        ("tools/call", tool("get_tool_schema", json!({"query": "weather"}))),
        ("tools/call", tool("get_tool_schema", json!({"tool_name": "query_weather"}))),
        (
            "tools/call",
            tool("execute_tool", json!({"tool_name": "query_weather", "parameters": {"town": 1}})),
        ),
    ];
    calls.extend(std::iter::repeat_n(("tools/call", weather), 20));
    for (id, (method, params)) in calls.into_iter().enumerate() {
        let body = json!({"jsonrpc": "2.0", "id": id + 1, "method": method, "params": params}).to_string();
        let response = servers::post(&client, url, Some(key), session.as_deref(), body).send().await?;
        let status = response.status();
        let text = response.text().await?;
        if !status.is_success() || !text.contains(r#""result""#) {
            bail!("{method} answered HTTP {status}: {}", text.chars().take(300).collect::<String>());
        }
    }
    Ok(())
}

/// The names of the functions of `binary` that a callgrind profile saw run.
///
/// The format compresses names: `ob=(3) /path` defines object 3 and makes
/// it current, `ob=(3)` makes it current again; `fn=(7) name` and
/// `cfn=(7) name` define function 7 (a `'2` suffix marks recursion depth),
/// and each `fn=` line starts the costs of a function that ran, in the
/// current object.
pub(crate) fn executed_functions(profile: &str, binary: &Path) -> BTreeSet<String> {
    let binary = binary.to_string_lossy();
    let mut objects: std::collections::HashMap<&str, &str> = Default::default();
    let mut names: std::collections::HashMap<&str, &str> = Default::default();
    let mut in_binary = false;
    let mut found = BTreeSet::new();
    for line in profile.lines() {
        let Some((key, rest)) = line.split_once('=') else { continue };
        let (id, name) = match rest.strip_prefix('(').and_then(|r| r.split_once(')')) {
            Some((id, name)) => (id, name.strip_prefix(' ').filter(|n| !n.is_empty())),
            None => continue,
        };
        match key {
            "ob" | "cob" => {
                if let Some(name) = name {
                    objects.insert(id, name);
                }
                if key == "ob" {
                    in_binary = objects.get(id).is_some_and(|o| *o == binary);
                }
            }
            "fn" | "cfn" => {
                if let Some(name) = name {
                    names.insert(id, recursion_stripped(name));
                }
                if key == "fn" && in_binary {
                    // Callgrind names code without a symbol by its address, and
                    // its own entries in parentheses, `(below main)`.
                    if let Some(name) = names.get(id).filter(|n| !n.starts_with("0x") && !n.starts_with('('))
                    {
                        found.insert((*name).to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// `name'2` (callgrind's recursion level) → `name`.
fn recursion_stripped(name: &str) -> &str {
    match name.rsplit_once('\'') {
        Some((base, level)) if !level.is_empty() && level.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::executed_functions;

    #[test]
    fn functions_are_read_from_the_binary_only_through_name_compression() {
        let profile = "\
version: 1
cmd: /t/toolgate serve
ob=(1) /t/toolgate
fl=(1) ???
fn=(1) main
0 3
cob=(2) /lib/libc.so.6
cfn=(2) malloc
calls=1 0
0 5
cfn=(3) _ZN4core3fmt5write17h0123456789abcdefE'2
calls=1 0
0 2
ob=(2)
fn=(2)
0 5
ob=(1)
fn=(3)
0 2
fn=(4) 0x0000000000012345
0 1
fn=(5) sqlite3_initialize'3
0 1
fn=(6) (below main)
0 1
";
        let found = executed_functions(profile, Path::new("/t/toolgate"));
        let found: Vec<&str> = found.iter().map(String::as_str).collect();
        assert_eq!(found, ["_ZN4core3fmt5write17h0123456789abcdefE", "main", "sqlite3_initialize"]);
    }
}
