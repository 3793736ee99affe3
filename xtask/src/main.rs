//! Dev automation for the toolgate workspace.
//!
//! - `cargo xtask codegen [--check]`: write (or check) the generated schemas and docs.
//! - `cargo xtask layers`: check that crate dependencies only point down the layers.
//! - `cargo xtask public-api [--check]`: write (or check, as a semver check) each library crate's public API snapshot.
//! - `cargo xtask bench mcp`: toolgate against FastMCP over streamable HTTP (writes docs/bench-mcp.md).
//! - `cargo xtask bench upstream`: toolgate in front of a Python SDK upstream against calling it directly (its section of docs/bench-mcp.md).
//! - `cargo xtask link-order`: profile what a release toolgate runs first (writes crates/toolgate/link-order.txt).

mod bench;
mod codegen;
mod layers;
mod public_api;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["codegen"] => codegen::run(Mode::Write),
        ["codegen", "--check"] => codegen::run(Mode::Check),
        ["layers"] => {
            layers::check(&workspace_root())?;
            eprintln!("layers: every dependency points down");
            Ok(())
        }
        ["public-api"] => public_api::run(Mode::Write),
        ["public-api", "--check"] => {
            public_api::run(Mode::Check)?;
            eprintln!("public-api: every library crate matches its snapshot");
            Ok(())
        }
        ["bench", rest @ ..] => bench::run(rest),
        ["link-order", rest @ ..] => bench::link_order::run(rest),
        _ => bail!(
            "usage: cargo xtask codegen [--check] | cargo xtask layers | cargo xtask public-api [--check] | cargo xtask bench mcp|upstream [options] | \
             cargo xtask link-order [--no-build]"
        ),
    }
}

/// Whether codegen writes files or only checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Write,
    Check,
}

/// The workspace root (the folder above xtask/).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The rust-analyzer pattern: write `contents` to `path` unless it is already
/// there; in check mode report a stale file instead of writing it.
pub(crate) fn ensure_file_contents(path: &Path, contents: &str, mode: Mode) -> Result<bool> {
    let current = std::fs::read_to_string(path).ok();
    if current.as_deref() == Some(contents) {
        return Ok(false);
    }
    let shown = path.strip_prefix(workspace_root()).unwrap_or(path).display().to_string();
    match mode {
        Mode::Check => bail!("{shown} is stale: run `cargo xtask codegen` and commit the result"),
        Mode::Write => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(path, contents).with_context(|| format!("writing {shown}"))?;
            eprintln!("updated {shown}");
            Ok(true)
        }
    }
}
