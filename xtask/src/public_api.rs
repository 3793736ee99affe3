//! `cargo xtask public-api [--check]`: the public API of every publishable
//! library crate, one item per line, committed as `crates/<crate>/public-api.txt`
//! and compared in check mode (a `#[test]` runs it, so `cargo test` fails):
//! - a line gone (an item removed, a signature or a field changed) is a
//!   breaking change: refused unless the crate's version was bumped past the
//!   snapshot's in the semver sense (0.x: the minor, else the major);
//! - only lines added: the snapshot is stale, run `cargo xtask public-api`.
//!
//! Read from the sources with `syn` (no nightly rustdoc JSON): every `pub`
//! item of every module. The workspace denies `unreachable_pub`, so a `pub`
//! item is reachable from outside; items are listed under the module that
//! defines them, with `pub use` re-exports listed as such.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use quote::ToTokens;
use syn::{Attribute, Fields, ImplItem, Item, TraitItem, Visibility};

use crate::{Mode, workspace_root};

const FILE: &str = "public-api.txt";

/// Write or check every library crate's snapshot.
pub(crate) fn run(mode: Mode) -> Result<()> {
    let root = workspace_root();
    let mut problems = Vec::new();
    for (name, version, dir) in library_crates(&root)? {
        let lines = crate_api(&dir.join("src/lib.rs"))?;
        let path = dir.join(FILE);
        let text = render(&name, &version, &lines);
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old == text {
            continue;
        }
        match mode {
            Mode::Write => {
                std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
                eprintln!("public-api: wrote {}", path.display());
            }
            Mode::Check => problems.push(verdict(&name, &version, &old, &lines)),
        }
    }
    if !problems.is_empty() {
        bail!("{}", problems.join("\n\n"));
    }
    Ok(())
}

/// Why a snapshot differs: a break without a version bump, or only a stale file.
fn verdict(name: &str, version: &str, old: &str, lines: &BTreeSet<String>) -> String {
    let (old_version, old_lines) = parse(old);
    let removed: Vec<&String> = old_lines.difference(lines).collect();
    let added = lines.difference(&old_lines).count();
    if old.is_empty() {
        return format!("{name}: no {FILE} yet: run `cargo xtask public-api` and commit it");
    }
    if !removed.is_empty() && !is_breaking_bump(&old_version, version) {
        let shown: Vec<String> = removed.iter().take(12).map(|l| format!("  - {l}")).collect();
        return format!(
            "{name} {version}: {} item(s) of the public API removed or changed without a semver-breaking \
             version bump (the snapshot is of {old_version}); bump the version (0.x: the minor) or keep the \
             old item:\n{}{}",
            removed.len(),
            shown.join("\n"),
            if removed.len() > 12 {
                format!("\n  … and {} more", removed.len() - 12)
            } else {
                String::new()
            }
        );
    }
    format!(
        "{name}: {FILE} is stale ({added} added, {} removed): run `cargo xtask public-api` and commit the result",
        removed.len()
    )
}

/// Whether `new` may break what `old` offered: 0.x → a higher minor (or major), else a higher major.
fn is_breaking_bump(old: &str, new: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    let (o, n) = (parts(old), parts(new));
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    if at(&o, 0) == 0 && at(&n, 0) == 0 { at(&n, 1) > at(&o, 1) } else { at(&n, 0) > at(&o, 0) }
}

fn render(name: &str, version: &str, lines: &BTreeSet<String>) -> String {
    let mut out = format!(
        "# The public API of {name} {version}, written by `cargo xtask public-api`; checked in CI.\n"
    );
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn parse(text: &str) -> (String, BTreeSet<String>) {
    let mut lines = text.lines();
    let version = lines
        .next()
        .and_then(|header| header.split(", written").next())
        .and_then(|head| head.rsplit(' ').next())
        .unwrap_or("0.0.0")
        .to_owned();
    (version, lines.map(str::to_owned).collect())
}

/// (package name, version, folder) of every publishable crate with a library.
fn library_crates(root: &Path) -> Result<Vec<(String, String, PathBuf)>> {
    let workspace: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))?.parse()?;
    let workspace_version =
        workspace["workspace"]["package"]["version"].as_str().unwrap_or("0.0.0").to_owned();
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root.join("crates"))? {
        let dir = entry?.path();
        let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let manifest: toml::Table = text.parse().with_context(|| format!("parsing {}", dir.display()))?;
        let package = &manifest["package"];
        if package.get("publish").and_then(toml::Value::as_bool) == Some(false)
            || !dir.join("src/lib.rs").exists()
        {
            continue;
        }
        let name = package["name"].as_str().context("a package without a name")?.to_owned();
        let version = package
            .get("version")
            .and_then(toml::Value::as_str)
            .map_or_else(|| workspace_version.clone(), str::to_owned);
        out.push((name, version, dir));
    }
    out.sort();
    Ok(out)
}

/// Every public line of the crate whose root is `lib`.
fn crate_api(lib: &Path) -> Result<BTreeSet<String>> {
    let mut lines = BTreeSet::new();
    let mut types = BTreeSet::new();
    let mut impls = Vec::new();
    walk(lib, lib.parent().context("lib.rs has no folder")?, "crate", &mut lines, &mut types, &mut impls)?;
    // Trait implementations are part of the API only for the crate's public types.
    for (self_name, line) in impls {
        if types.contains(&self_name) {
            lines.insert(line);
        }
    }
    Ok(lines)
}

fn walk(
    file: &Path,
    dir: &Path,
    module: &str,
    lines: &mut BTreeSet<String>,
    types: &mut BTreeSet<String>,
    impls: &mut Vec<(String, String)>,
) -> Result<()> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let parsed = syn::parse_file(&text).with_context(|| format!("parsing {}", file.display()))?;
    items(&parsed.items, file, dir, module, lines, types, impls)
}

fn items(
    list: &[Item],
    file: &Path,
    dir: &Path,
    module: &str,
    lines: &mut BTreeSet<String>,
    types: &mut BTreeSet<String>,
    impls: &mut Vec<(String, String)>,
) -> Result<()> {
    for item in list {
        match item {
            Item::Mod(m) => {
                if is_test(&m.attrs) {
                    continue;
                }
                let child = format!("{module}::{}", m.ident);
                if let Some((_, inner)) = &m.content {
                    items(inner, file, &dir.join(m.ident.to_string()), &child, lines, types, impls)?;
                } else {
                    let name = m.ident.to_string();
                    let explicit = path_attr(&m.attrs).map(|p| dir.join(p));
                    let candidates = [dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")];
                    let found =
                        explicit.into_iter().chain(candidates).find(|p| p.exists()).with_context(|| {
                            format!("module `{child}` has no file beside {}", file.display())
                        })?;
                    walk(&found, &dir.join(&name), &child, lines, types, impls)?;
                }
            }
            Item::Fn(f) if is_pub(&f.vis) => {
                lines.insert(format!("{module}: {}{}", cfg(&f.attrs), sig(&f.sig)));
            }
            Item::Struct(s) if is_pub(&s.vis) => {
                types.insert(s.ident.to_string());
                let head = format!(
                    "{module}: {}{}pub struct {}{}",
                    cfg(&s.attrs),
                    marker(&s.attrs),
                    s.ident,
                    tokens(&s.generics)
                );
                let (fields, private) = fields(&s.fields);
                lines.insert(if private { format!("{head} (has private fields)") } else { head.clone() });
                for field in fields {
                    lines.insert(format!("{head} {{ {field} }}"));
                }
            }
            Item::Enum(e) if is_pub(&e.vis) => {
                types.insert(e.ident.to_string());
                let head = format!(
                    "{module}: {}{}pub enum {}{}",
                    cfg(&e.attrs),
                    marker(&e.attrs),
                    e.ident,
                    tokens(&e.generics)
                );
                lines.insert(head.clone());
                for variant in &e.variants {
                    let shape = match &variant.fields {
                        Fields::Unit => String::new(),
                        other => format!(" {}", tokens(other)),
                    };
                    lines.insert(format!("{head}::{}{}{shape}", marker(&variant.attrs), variant.ident));
                }
            }
            Item::Trait(t) if is_pub(&t.vis) => {
                types.insert(t.ident.to_string());
                let supertraits = if t.supertraits.is_empty() {
                    String::new()
                } else {
                    format!(": {}", t.supertraits.to_token_stream())
                };
                let head = format!(
                    "{module}: {}pub trait {}{}{supertraits}",
                    cfg(&t.attrs),
                    t.ident,
                    tokens(&t.generics)
                );
                lines.insert(head.clone());
                for member in &t.items {
                    let text = match member {
                        TraitItem::Fn(f) => {
                            format!("{}{}", sig(&f.sig), if f.default.is_some() { " (provided)" } else { "" })
                        }
                        TraitItem::Type(t) => format!("type {}", t.ident),
                        TraitItem::Const(c) => format!("const {}: {}", c.ident, tokens(&c.ty)),
                        _ => continue,
                    };
                    lines.insert(format!("{head} {{ {text} }}"));
                }
            }
            Item::Type(t) if is_pub(&t.vis) => {
                types.insert(t.ident.to_string());
                lines.insert(format!(
                    "{module}: {}pub type {}{} = {}",
                    cfg(&t.attrs),
                    t.ident,
                    tokens(&t.generics),
                    tokens(&t.ty)
                ));
            }
            Item::Const(c) if is_pub(&c.vis) => {
                lines.insert(format!("{module}: {}pub const {}: {}", cfg(&c.attrs), c.ident, tokens(&c.ty)));
            }
            Item::Static(s) if is_pub(&s.vis) => {
                lines.insert(format!("{module}: {}pub static {}: {}", cfg(&s.attrs), s.ident, tokens(&s.ty)));
            }
            Item::Use(u) if is_pub(&u.vis) => {
                lines.insert(format!("{module}: {}pub use {}", cfg(&u.attrs), tokens(&u.tree)));
            }
            Item::Macro(m) if m.attrs.iter().any(|a| a.path().is_ident("macro_export")) => {
                if let Some(ident) = &m.ident {
                    lines.insert(format!("crate: macro {ident}!"));
                }
            }
            Item::Impl(i) => {
                let self_name = last_segment(&i.self_ty);
                let generics = tokens(&i.generics);
                match &i.trait_ {
                    Some((negative, path, _)) => {
                        let not = if negative.is_some() { "!" } else { "" };
                        impls.push((
                            self_name,
                            format!(
                                "{module}: {}impl{generics} {not}{} for {}",
                                cfg(&i.attrs),
                                path.to_token_stream(),
                                tokens(&i.self_ty)
                            ),
                        ));
                    }
                    None => {
                        for member in &i.items {
                            let text = match member {
                                ImplItem::Fn(f) if is_pub(&f.vis) => {
                                    format!("{}{}", cfg(&f.attrs), sig(&f.sig))
                                }
                                ImplItem::Const(c) if is_pub(&c.vis) => {
                                    format!("pub const {}: {}", c.ident, tokens(&c.ty))
                                }
                                _ => continue,
                            };
                            lines.insert(format!(
                                "{module}: {}impl{generics} {} {{ {text} }}",
                                cfg(&i.attrs),
                                tokens(&i.self_ty)
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg") && a.to_token_stream().to_string().contains("test"))
}

fn path_attr(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// `#[cfg(...)]` of an item, as written, so feature-gated API is told apart.
fn cfg(attrs: &[Attribute]) -> String {
    attrs.iter().filter(|a| a.path().is_ident("cfg")).map(|a| format!("{} ", a.to_token_stream())).collect()
}

/// `#[non_exhaustive]`, which decides what users may construct and match.
fn marker(attrs: &[Attribute]) -> &'static str {
    if attrs.iter().any(|a| a.path().is_ident("non_exhaustive")) { "#[non_exhaustive] " } else { "" }
}

fn sig(sig: &syn::Signature) -> String {
    format!("pub {}", tokens(sig))
}

/// Public fields as `name: Type` (or `0: Type`), and whether any field is private.
fn fields(fields: &Fields) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut private = false;
    for (index, field) in fields.iter().enumerate() {
        if !is_pub(&field.vis) {
            private = true;
            continue;
        }
        let name = field.ident.as_ref().map_or_else(|| index.to_string(), ToString::to_string);
        out.push(format!("pub {name}: {}", tokens(&field.ty)));
    }
    (out, private)
}

fn last_segment(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
        syn::Type::Reference(r) => last_segment(&r.elem),
        _ => String::new(),
    }
}

/// Tokens as one line, spaced about as rustfmt would (`&self`, `Vec<String>`, `a::b`).
fn tokens(node: &impl ToTokens) -> String {
    let mut text = node.to_token_stream().to_string().split_whitespace().collect::<Vec<_>>().join(" ");
    for (from, to) in [
        (" :: ", "::"),
        (" : ", ": "),
        (":: ", "::"),
        ("& ", "&"),
        (" ,", ","),
        (" (", "("),
        ("( ", "("),
        (" )", ")"),
        (" < ", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ;", ";"),
        ("[ ", "["),
        (" ]", "]"),
        ("# [", "#["),
    ] {
        text = text.replace(from, to);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_snapshots_match_the_sources() {
        if let Err(error) = run(Mode::Check) {
            panic!("{error:#}");
        }
    }

    #[test]
    fn a_removed_line_needs_a_breaking_bump_and_an_added_one_only_a_new_snapshot() {
        let old = render(
            "demo",
            "0.3.0",
            &["crate: pub fn a ()".to_owned(), "crate: pub fn b ()".to_owned()].into(),
        );
        let added: BTreeSet<String> =
            ["crate: pub fn a ()", "crate: pub fn b ()", "crate: pub fn c ()"].map(str::to_owned).into();
        let removed: BTreeSet<String> = ["crate: pub fn a ()"].map(str::to_owned).into();
        assert!(verdict("demo", "0.3.0", &old, &added).contains("is stale (1 added, 0 removed)"));
        let refused = verdict("demo", "0.3.1", &old, &removed);
        assert!(
            refused.contains("1 item(s) of the public API removed") && refused.contains("pub fn b ()"),
            "{refused}"
        );
        assert!(verdict("demo", "0.4.0", &old, &removed).contains("is stale (0 added, 1 removed)"));
        assert!(is_breaking_bump("1.2.3", "2.0.0") && !is_breaking_bump("1.2.3", "1.3.0"));
        assert!(is_breaking_bump("0.3.0", "0.4.0") && !is_breaking_bump("0.3.0", "0.3.9"));
    }

    #[test]
    fn items_fields_variants_and_impls_are_listed() {
        let dir = tempfile_dir();
        std::fs::write(
            dir.join("lib.rs"),
            "pub mod a; mod hidden { pub fn inner() {} }\n\
             #[non_exhaustive] pub struct S { pub x: u8, y: u8 }\n\
             pub enum E { One, Two(u8) }\n\
             impl S { pub fn new() -> Self { S { x: 0, y: 0 } } fn private() {} }\n\
             impl Clone for S { fn clone(&self) -> Self { S { x: self.x, y: self.y } } }\n\
             struct P; impl Clone for P { fn clone(&self) -> Self { P } }\n",
        )
        .unwrap();
        std::fs::write(dir.join("a.rs"), "pub trait T { fn go(&self) -> u8; fn done(&self) {} }").unwrap();
        let lines = crate_api(&dir.join("lib.rs")).unwrap();
        let text: Vec<&str> = lines.iter().map(String::as_str).collect();
        for wanted in [
            "crate: #[non_exhaustive] pub struct S (has private fields)",
            "crate: #[non_exhaustive] pub struct S { pub x: u8 }",
            "crate: pub enum E::Two (u8)",
            "crate: impl S { pub fn new() -> Self }",
            "crate: impl Clone for S",
            "crate::a: pub trait T { pub fn go(&self) -> u8 }",
            "crate::a: pub trait T { pub fn done(&self) (provided) }",
            "crate::hidden: pub fn inner()",
        ] {
            assert!(text.contains(&wanted), "no `{wanted}` in {text:#?}");
        }
        assert!(!text.iter().any(|l| l.contains("private") && l.contains("fn")), "{text:#?}");
        assert!(!text.iter().any(|l| l.contains("for P")), "{text:#?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-public-api-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
