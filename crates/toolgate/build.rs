//! Release builds of the binary link the functions a server runs to start
//! and to answer its first calls first (`link-order.txt`, made by `cargo
//! xtask link-order`): together they are 4.8 MB of a 34 MB text, and spread
//! over all of it they kept 23 MiB of it resident in an idle server (the
//! kernel maps a file page's neighbours with it); placed together, 5.5 MiB.
//!
//! Only where the linker is known to be LLD, which takes
//! `--symbol-ordering-file`: x86_64 Linux with rustc 1.90 or later and no
//! linker of the user's own. Elsewhere, and for debug builds, nothing
//! changes. Symbols the file names but the build lacks are skipped, so a
//! stale file costs memory, never a build.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=link-order.txt");
    println!("cargo::rerun-if-env-changed=TOOLGATE_LINK_ORDER");
    let order = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("link-order.txt");
    if env::var("PROFILE").as_deref() == Ok("release")
        && env::var("TOOLGATE_LINK_ORDER").as_deref() != Ok("0")
        && linker_is_rust_lld()
        && order.exists()
    {
        println!("cargo::rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", order.display());
        println!("cargo::rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// rustc links `x86_64-unknown-linux-gnu` with its own LLD since 1.90,
/// unless a linker (or linker flavour) is configured.
fn linker_is_rust_lld() -> bool {
    let target = env::var("TARGET").unwrap_or_default();
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    target == "x86_64-unknown-linux-gnu"
        && env::var_os("RUSTC_LINKER").is_none()
        && !flags.contains("linker")
        && !flags.contains("link-self-contained")
        && rustc_minor().is_some_and(|minor| minor >= 90)
}

/// The minor version of the compiler building this crate (`rustc 1.95.0 (…)` → 95).
fn rustc_minor() -> Option<u32> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = Command::new(rustc).arg("--version").output().ok()?;
    let version = String::from_utf8(output.stdout).ok()?;
    version.split_whitespace().nth(1)?.split('.').nth(1)?.parse().ok()
}
