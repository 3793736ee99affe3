//! `toolgate budget` per domain and the importer's per-tool limit, as a user meets them: a
//! real document (Swagger Petstore 3.0, see openapi-import's fixtures/SOURCE.md) imported with
//! `toolgate import openapi`, declared in `[[domains]]`, then measured.

use std::path::Path;

use serde_json::Value;

const PETSTORE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../toolgate-openapi/tests/it/fixtures/petstore-3.0.json");

fn toolgate(args: &[&str]) -> (i32, String, String) {
    let out = crate::common::toolgate()
        .args(args)
        .env_remove("TOOLGATE_DATABASE_URL")
        .env_remove("TOOLGATE_CONFIG")
        .output()
        .expect("toolgate runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Import Petstore into `dir/routes` with these extra arguments; a configuration declaring it
/// as domain `petstore`. The import's output and the configuration's path.
fn import(dir: &Path, extra: &[&str]) -> (String, String) {
    let routes = dir.join("routes");
    let mut args = vec!["import", "openapi", PETSTORE, "--out", routes.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = toolgate(&args);
    assert_eq!(code, 0, "{out}{err}");
    let config = dir.join("toolgate.toml");
    let db = format!("sqlite:{}", dir.join("t.db").display());
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = {db:?}\n\n[[domains]]\nname = \"petstore\"\nbase_url = \"http://127.0.0.1:9\"\nroutes = {:?}\nauth = {{ kind = \"none\" }}\n",
            routes.display()
        ),
    )
    .unwrap();
    (out, config.to_str().unwrap().to_owned())
}

fn budget_json(config: &str, limit: &str) -> Value {
    let (code, out, err) = toolgate(&["--config", config, "budget", "--json", "--max-tool-tokens", limit]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn domain<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["domain"] == name)
        .unwrap_or_else(|| panic!("{report:#}"))
}

#[test]
fn budget_names_the_tools_over_the_limit_per_domain() {
    let dir = tempfile::tempdir().unwrap();
    let (_, config) = import(dir.path(), &[]);
    // Within the default limit nothing was split: Petstore's six tables.
    let report = budget_json(&config, "8000");
    let pets = domain(&report, "petstore");
    assert_eq!(pets["tools"], 6, "{pets:#}");
    assert_eq!(report["over_budget"], false, "{report:#}");
    assert_eq!(report["max_tool_tokens"], 8000);
    let largest = pets["largest_tokens"].as_u64().unwrap();
    assert!(largest > 300, "{pets:#}");
    let (direct, meta) = (pets["tokens_direct"].as_u64().unwrap(), pets["tokens_meta"].as_u64().unwrap());
    assert!(direct > meta && meta > 0, "direct {direct}, meta {meta}");
    // The demo's own domains are measured too, and the modes as before.
    assert!(domain(&report, "travel")["tools"].as_u64().unwrap() > 0);
    assert!(report["modes"].as_array().unwrap().iter().any(|m| m["mode"] == "meta"));

    // Below the largest tool's size, that tool is named, as JSON and as text.
    let limit = (largest - 1).to_string();
    let report = budget_json(&config, &limit);
    assert_eq!(report["over_budget"], true);
    let over = &domain(&report, "petstore")["over"];
    assert_eq!(over[0]["tool"], pets["largest_tool"], "{over:#}");
    assert_eq!(over[0]["tokens"].as_u64(), Some(largest));
    let (code, text, err) = toolgate(&["--config", &config, "budget", "--max-tool-tokens", &limit]);
    assert_eq!(code, 0, "{err}");
    let line = text.lines().find(|l| l.starts_with("petstore ")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("yes (1)"), "{line}");
    assert!(
        text.contains(&format!(
            "over the {limit}-token limit: {} ({largest} tokens",
            pets["largest_tool"].as_str().unwrap()
        )),
        "{text}"
    );
    assert!(text.contains("meta / direct: "), "the modes' lines stay: {text}");
}

#[test]
fn import_splits_a_tool_over_its_limit_and_budget_then_finds_none_over() {
    let dir = tempfile::tempdir().unwrap();
    let (out, config) = import(dir.path(), &["--max-tool-tokens", "300"]);
    assert!(out.contains("over the 300-token limit) into "), "the import says what it split: {out}");
    let routes = dir.path().join("routes");
    let mut ops = 0;
    for file in std::fs::read_dir(&routes).unwrap() {
        let table = toolgate_schema::RouteTable::load(file.unwrap().path()).unwrap();
        let spec = table.spec().unwrap();
        let tokens = toolgate::budget::domains::tool_tokens(&spec);
        assert!(tokens <= 300, "{} is {tokens} tokens", table.tool);
        ops += table.routes.len();
    }
    // Every operation the default import has is still there, only in more tools.
    let whole =
        toolgate_openapi::import(&std::fs::read_to_string(PETSTORE).unwrap(), &Default::default()).unwrap();
    assert_eq!(ops, whole.ops());
    let report = budget_json(&config, "300");
    let pets = domain(&report, "petstore");
    assert!(pets["tools"].as_u64().unwrap() > 6, "{pets:#}");
    assert_eq!(pets["over"], serde_json::json!([]), "{pets:#}");
    assert!(pets["largest_tokens"].as_u64().unwrap() <= 300);
}
