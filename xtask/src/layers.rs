//! The dependency-layer check: every crate's folder is named after its
//! package; internal crates may depend only on crates of lower layers, and
//! only the named crates may use MCP (rmcp) or a CLI parser (clap).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// Internal crates by layer, lowest first. A crate may depend only on crates
/// in strictly lower layers; crates of one layer never depend on each other
/// (so travel never depends on fitness).
pub(crate) const LAYERS: &[&[&str]] = &[
    &["toolgate-core", "toolgate-test-support", "toolgate-tokens", "toolgate-embed"],
    &["toolgate-authz", "toolgate-schema", "toolgate-db", "toolgate-oauth"],
    &["toolgate-skills", "toolgate-openapi"],
    &["toolgate-gateway"],
    &["toolgate-http", "toolgate-fitness-api", "toolgate-agent", "toolgate-fleet"],
    &["toolgate-travel", "toolgate-fitness", "toolgate-mcp-upstream"],
    &["toolgate-mcp"],
    &["toolgate"],
];

/// External crates that only some internal crates may use.
const ONLY: &[(&str, &[&str])] =
    &[("rmcp", &["toolgate-mcp", "toolgate-mcp-upstream"]), ("clap", &["toolgate"])];

fn layer_of(name: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&name))
}

/// The internal and external dependencies of every crate under `crates/`.
fn manifests(root: &Path) -> Result<BTreeMap<String, Vec<(String, &'static str)>>> {
    let mut out = BTreeMap::new();
    let dir = root.join("crates");
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path().join("Cargo.toml");
        if !path.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        let doc: toml::Table = text.parse().with_context(|| format!("parsing {}", path.display()))?;
        let name = doc
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
            .with_context(|| format!("{} has no package name", path.display()))?
            .to_owned();
        // One name for a crate: the folder is the package (crates/toolgate-core is `toolgate-core`).
        let folder = path.parent().and_then(Path::file_name).map(|f| f.to_string_lossy().into_owned());
        if folder.as_deref() != Some(name.as_str()) {
            bail!(
                "crates/{} holds the package `{name}`: name the folder after the package",
                folder.unwrap_or_default()
            );
        }
        let mut deps = Vec::new();
        for (section, kind) in [("dependencies", "normal"), ("build-dependencies", "build")] {
            if let Some(table) = doc.get(section).and_then(|d| d.as_table()) {
                deps.extend(table.keys().map(|k| (k.clone(), kind)));
            }
        }
        if let Some(table) = doc.get("dev-dependencies").and_then(|d| d.as_table()) {
            deps.extend(table.keys().map(|k| (k.clone(), "dev")));
        }
        out.insert(name, deps);
    }
    Ok(out)
}

/// Check every crate's dependencies against the layers.
pub(crate) fn check(root: &Path) -> Result<()> {
    let crates = manifests(root)?;
    let mut problems = Vec::new();
    for (name, deps) in &crates {
        let Some(mine) = layer_of(name) else {
            problems.push(format!("crate `{name}` has no layer; add it to LAYERS in xtask/src/layers.rs"));
            continue;
        };
        for (dep, kind) in deps {
            if let Some(theirs) = layer_of(dep) {
                // Tests may use a sibling or higher crate as a real peer (e.g. an
                // in-process backend), never as a build dependency.
                let ok = theirs < mine || (kind == &"dev" && dep != name);
                if !ok {
                    problems.push(format!(
                        "`{name}` (layer {mine}) depends on `{dep}` (layer {theirs}): dependencies must point down"
                    ));
                }
            }
            for (external, allowed) in ONLY {
                if dep == external && !allowed.contains(&name.as_str()) && kind != &"dev" {
                    problems.push(format!("`{name}` uses `{external}`; only {allowed:?} may"));
                }
            }
        }
    }
    if problems.is_empty() { Ok(()) } else { bail!("dependency layers broken:\n  {}", problems.join("\n  ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_point_down_the_layers() {
        check(&crate::workspace_root()).unwrap();
    }

    #[test]
    fn an_upward_dependency_is_caught() {
        let dir = std::env::temp_dir().join(format!("xtask-layers-{}", std::process::id()));
        let write = |krate: &str, deps: &str| {
            let d = dir.join("crates").join(krate);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("Cargo.toml"),
                format!("[package]\nname = \"{krate}\"\n[dependencies]\n{deps}"),
            )
            .unwrap();
        };
        write("toolgate-core", "toolgate-gateway = { path = \"../toolgate-gateway\" }\n");
        write("toolgate-gateway", "toolgate-core = { path = \"../toolgate-core\" }\n");
        write("toolgate-travel", "toolgate-fitness = { path = \"../toolgate-fitness\" }\nclap = \"4\"\n");
        write("toolgate-fitness", "");
        let err = check(&dir).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(err.contains("`toolgate-core` (layer 0) depends on `toolgate-gateway`"), "{err}");
        assert!(err.contains("`toolgate-travel` (layer 5) depends on `toolgate-fitness` (layer 5)"), "{err}");
        assert!(err.contains("`toolgate-travel` uses `clap`"), "{err}");
        assert!(!err.contains("`toolgate-gateway` (layer 3) depends"), "{err}");
    }
}
