//! Bring your own HTTP system, end to end as a newcomer does it: a real "notes" REST API on
//! 127.0.0.1 (axum, built here) described by an OpenAPI document; `toolgate import openapi`
//! writes the route tables and prints the `[[domains]]` entry; `toolgate check` accepts it
//! (and names every broken file once one is broken); `toolgate serve` with that entry serves
//! the tools, and MCP clients (ours, then the official Python SDK with a key scoped to the
//! declared name) call a read op and a write op that reach the API with the static key from
//! the environment, which is never shown.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use serde_json::{Value, json};
use toolgate_test_support::mcp;
use toolgate_test_support::process::{Running, output};

use crate::common::{self, key_of, rpc, serving};

const KEY: &str = "k-notes-5e6f";

const SPEC: &str = r#"
openapi: 3.0.3
info: {title: Notes API, version: "1"}
servers: [{url: "http://notes.invalid"}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Api-Key}
  schemas:
    NewNote:
      type: object
      required: [text]
      properties:
        text: {type: string, minLength: 1, maxLength: 200, description: The note}
        pinned: {type: boolean}
security: [{key: []}]
paths:
  /notes/{note_id}:
    get:
      operationId: getNote
      tags: [notes]
      summary: One note
      parameters:
        - {name: note_id, in: path, required: true, schema: {type: integer, minimum: 1}}
  /notes:
    post:
      operationId: createNote
      tags: [notes]
      summary: Write a note
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/NewNote'}
    put:
      operationId: replaceAll
      tags: [notes]
      requestBody:
        content:
          multipart/form-data:
            schema: {type: object}
"#;

type Notes = Arc<Mutex<Vec<Value>>>;

fn authorized(headers: &HeaderMap) -> bool {
    headers.get("x-api-key").and_then(|v| v.to_str().ok()) == Some(KEY)
        && headers.get("authorization").is_none()
}

async fn notes_api() -> (String, Notes) {
    let notes: Notes = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new()
        .route(
            "/notes/{id}",
            get(|State(n): State<Notes>, headers: HeaderMap, Path(id): Path<usize>| async move {
                if !authorized(&headers) {
                    return (StatusCode::UNAUTHORIZED, Json(json!({"error": "bad key"})));
                }
                match n.lock().unwrap().get(id.wrapping_sub(1)) {
                    Some(note) => (StatusCode::OK, Json(note.clone())),
                    None => (StatusCode::NOT_FOUND, Json(json!({"error": "no such note"}))),
                }
            }),
        )
        .route(
            "/notes",
            post(|State(n): State<Notes>, headers: HeaderMap, Json(body): Json<Value>| async move {
                if !authorized(&headers) {
                    return (StatusCode::UNAUTHORIZED, Json(json!({"error": "bad key"})));
                }
                let mut notes = n.lock().unwrap();
                let note = json!({"id": notes.len() + 1, "text": body["text"], "pinned": body["pinned"]});
                notes.push(note.clone());
                (StatusCode::CREATED, Json(note))
            }),
        )
        .with_state(notes.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, notes)
}

fn toolgate(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    output(common::toolgate().args(args).envs(env.iter().copied()))
}

/// `toolgate --config CFG serve --demo`: the address and alice's key from the banner.
fn serve(config: &str) -> (Running, String, String) {
    let (served, url, banner) = serving(
        common::toolgate()
            .args(["--config", config, "serve", "--demo", "--listen", "127.0.0.1:0"])
            .env("NOTES_API_API_KEY", KEY)
            .stderr(Stdio::null()),
    );
    (served, url, key_of(&banner, "alice"))
}

#[tokio::test(flavor = "multi_thread")]
async fn import_check_serve_and_call_a_read_and_a_write_over_mcp() {
    let (api, notes) = notes_api().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("notes.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    let routes = dir.path().join("routes");

    // 1. Import: tables written, the multipart op reported, the snippet printed.
    let (ok, out) =
        toolgate(&["import", "openapi", spec.to_str().unwrap(), "--out", routes.to_str().unwrap()], &[]);
    assert!(ok, "{out}");
    assert!(
        out.contains("2 operation(s) imported, 1 skipped") && out.contains("skipped PUT /notes"),
        "{out}"
    );
    let snippet = &out[out.find("[[domains]]").expect("a [[domains]] snippet")..];
    assert!(
        snippet.contains(r#"auth = { kind = "static", header = "X-Api-Key", env = "NOTES_API_API_KEY" }"#),
        "{snippet}"
    );
    let snippet = snippet.replace("http://notes.invalid", &api);
    let db = format!("sqlite:{}", dir.path().join("tg.db").display());
    let config = dir.path().join("toolgate.toml");
    std::fs::write(&config, format!("[database]\nurl = \"{db}\"\n\n{snippet}")).unwrap();
    let config = config.to_str().unwrap();

    // 2. Check: fine with the key set; without it, the variable is named, never a value.
    let (ok, out) = toolgate(&["--config", config, "check"], &[("NOTES_API_API_KEY", KEY)]);
    assert!(ok && out.starts_with("ok: domain `notes_api`: 2 table(s)"), "{out}");
    let (ok, out) = toolgate(&["--config", config, "check"], &[("NOTES_API_API_KEY", "")]);
    assert!(!ok && out.contains("`NOTES_API_API_KEY` is not set"), "{out}");

    // 3. Serve and call through MCP as alice (member).
    let (_served, url, key) = serve(config);
    let client = reqwest::Client::new();
    let endpoint = format!("{url}/mcp");
    let (session, _) = mcp::open_session(&client, &endpoint, Some(&key)).await;
    let call = mcp::execute_tool;
    let (_, _, write) = rpc(
        &client,
        &endpoint,
        Some(&key),
        Some(&session),
        &call(2, "update_notes", json!({"op": "create_note", "text": "buy milk", "pinned": true})),
    )
    .await;
    let env = &write["result"]["structuredContent"];
    assert_eq!(env["success"], true, "{write}");
    assert_eq!(env["result"]["status"], 201);
    assert_eq!(notes.lock().unwrap().len(), 1, "the write reached the API");
    let (_, _, read) = rpc(
        &client,
        &endpoint,
        Some(&key),
        Some(&session),
        &call(3, "query_notes", json!({"op": "get_note", "note_id": 1})),
    )
    .await;
    let env = &read["result"]["structuredContent"];
    assert_eq!(env["success"], true, "{read}");
    assert_eq!(env["result"]["payload"]["text"], "buy milk");
    let (_, _, bad) = rpc(
        &client,
        &endpoint,
        Some(&key),
        Some(&session),
        &call(4, "query_notes", json!({"op": "get_note", "note_id": 0})),
    )
    .await;
    assert_eq!(
        bad["result"]["structuredContent"]["error"]["code"], "INVALID_PARAMS",
        "the imported minimum holds: {bad}"
    );
    for answer in [&write, &read, &bad] {
        assert!(!answer.to_string().contains(KEY), "the static key never comes back: {answer}");
    }
    // 4. The official Python SDK, with a key scoped to the declared name, reads and writes.
    sdk_reads_and_writes_with_a_key_scoped_to_the_declared_domain(config, &url, &notes).await;

    let (ok, schema) =
        toolgate(&["--config", config, "schema", "update_notes"], &[("NOTES_API_API_KEY", KEY)]);
    assert!(ok && schema.contains("create_note") && !schema.contains(KEY), "{schema}");

    // 5. A broken table stops check and serve, naming every broken file.
    std::fs::write(routes.join("zz_broken.toml"), "tool = \"query_more\"\ndescription = \"x\"\ndomain = \"notes\"\n\n[[routes]]\nop = \"Bad Op\"\nmethod = \"GET\"\npath = \"/more\"\nsummary = \"s\"\n").unwrap();
    std::fs::write(routes.join("zz_syntax.toml"), "tool = \n").unwrap();
    let (ok, out) = toolgate(&["--config", config, "check"], &[("NOTES_API_API_KEY", KEY)]);
    assert!(!ok, "{out}");
    assert!(out.contains("zz_broken.toml:5: routes[0] (op `Bad Op`): `op` must be snake_case"), "{out}");
    assert!(out.contains("zz_syntax.toml:1:"), "{out}");
    let (ok, out) =
        toolgate(&["--config", config, "serve", "--listen", "127.0.0.1:0"], &[("NOTES_API_API_KEY", KEY)]);
    assert!(
        !ok && out.contains("nothing was started")
            && out.contains("zz_broken.toml")
            && out.contains("zz_syntax.toml"),
        "{out}"
    );
}

const SDK_CHECK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/byo_check.py");

/// A key scoped to `notes_api` (the `[[domains]]` name, not the tables' `notes`) sees that
/// domain's tools through the SDK client, writes and reads a note in the real API, and is
/// refused the other domains' tools.
async fn sdk_reads_and_writes_with_a_key_scoped_to_the_declared_domain(
    config: &str,
    url: &str,
    notes: &Notes,
) {
    let Some(python) =
        toolgate_test_support::python::with("from mcp.client.streamable_http import streamable_http_client")
    else {
        return;
    };
    let (ok, out) = toolgate(
        &[
            "--config",
            config,
            "keys",
            "create",
            "--user",
            "carol",
            "--role",
            "member",
            "--domains",
            "notes_api",
        ],
        &[("NOTES_API_API_KEY", KEY)],
    );
    assert!(ok, "{out}");
    let key = out.lines().find_map(|l| l.split('\t').nth(1)).expect("id and key").trim().to_owned();
    let before = notes.lock().unwrap().len();
    let output = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        tokio::process::Command::new(&python)
            .args([SDK_CHECK, &format!("{url}/mcp"), &key, "notes_api"])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("byo_check.py finishes within 2 minutes")
    .expect("byo_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "byo_check.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value =
        serde_json::from_str(stdout.lines().find_map(|l| l.strip_prefix("RESULT ")).unwrap()).unwrap();
    assert_eq!(result["read"]["payload"]["text"], "call the plumber", "{result}");
    let stored = notes.lock().unwrap();
    assert_eq!(stored.len(), before + 1, "the SDK's write reached the API");
    assert_eq!(stored[before]["text"], "call the plumber");
    assert_eq!(result["write"]["payload"]["id"], stored[before]["id"]);
}

/// A document written to attack whoever pastes the importer's output: its header name, server
/// URL, title and descriptions try to close their string and append an `[[upstreams]]` table
/// that `serve` would run; so does the document's file name, in the written tables' header.
#[test]
fn a_hostile_document_prints_an_entry_of_exactly_its_keys_and_writes_tables_of_its_strings() {
    const INJECT: &str =
        "\"\n[[upstreams]]\nname = \"evil\"\ncommand = [\"sh\", \"-c\", \"touch /tmp/pwned\"]\n#";
    let spec_text = json!({
        "openapi": "3.0.3", "info": {"title": format!("Notes{INJECT}"), "version": "1"},
        "servers": [{"url": format!("https://notes.example{INJECT}")}],
        "security": [{"key": []}],
        "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": format!("X-Key{INJECT}")}}},
        "paths": {
            "/notes/{id}": {"get": {"operationId": "getNote", "tags": ["notes"], "summary": format!("One note{INJECT}"),
                "description": format!("'''{INJECT}\"\"\"{INJECT}"),
                "parameters": [{"name": "id", "in": "path", "required": true, "description": format!("Id{INJECT}"),
                                "schema": {"type": "integer"}}]}},
            format!("/x{INJECT}"): {"put": {"requestBody": {"content": {"multipart/form-data": {}}}}}
        }
    })
    .to_string();
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec\nx = 1.json");
    std::fs::write(&spec, &spec_text).unwrap();
    let routes = dir.path().join("routes");
    let (ok, out) =
        toolgate(&["import", "openapi", spec.to_str().unwrap(), "--out", routes.to_str().unwrap()], &[]);
    assert!(ok, "{out}");
    assert!(
        out.lines().all(|l| !l.starts_with("[[upstreams]]") && !l.starts_with("command")),
        "no line of the document's own: {out}"
    );
    assert_eq!(out.lines().filter(|l| l.starts_with('[')).collect::<Vec<_>>(), ["[[domains]]"], "{out}");

    // The entry, pasted, is one `[[domains]]` table of the expected keys, nothing else.
    let snippet = &out[out.find("[[domains]]").unwrap()..];
    let parsed: toml::Table = toml::from_str(snippet).unwrap_or_else(|e| panic!("{e}\n{snippet}"));
    assert_eq!(parsed.keys().collect::<Vec<_>>(), ["domains"], "{snippet}");
    let entry = parsed["domains"].as_array().unwrap()[0].as_table().unwrap();
    let mut keys: Vec<&str> = entry.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["auth", "base_url", "name", "routes", "timeout_ms"], "{snippet}");
    assert_eq!(
        entry["name"].as_str(),
        Some("notes_upstreams_name_evil"),
        "the title in snake_case, cut at a word"
    );
    assert_eq!(entry["base_url"].as_str(), Some("https://CHANGE-ME.example"), "the refused URL left out");
    assert_eq!(entry["routes"].as_str(), Some(routes.to_str().unwrap()));
    assert_eq!(entry["auth"].to_string(), r#"{ kind = "none" }"#, "the refused header left out");
    assert!(
        snippet.contains("# servers[0].url was left out: ")
            && snippet.contains("not a plain HTTP header name"),
        "{snippet}"
    );

    // `check` reads the pasted file as one domain and no upstream.
    let config = dir.path().join("toolgate.toml");
    let db = format!("sqlite:{}", dir.path().join("tg.db").display());
    std::fs::write(&config, format!("[database]\nurl = \"{db}\"\n\n{snippet}")).unwrap();
    let (ok, checked) = toolgate(&["--config", config.to_str().unwrap(), "check"], &[]);
    assert!(ok && checked.starts_with("ok: domain `notes_upstreams_name_evil`: 1 table(s)"), "{checked}");
    let pasted: toml::Table = toml::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(pasted.keys().collect::<Vec<_>>(), ["database", "domains"], "no [[upstreams]]");

    // Each written table parses back to the strings the document holds.
    let expected = toolgate_openapi::import(&spec_text, &toolgate_openapi::Options::default()).unwrap();
    assert_eq!(expected.tables.len(), 1);
    for table in &expected.tables {
        let text = std::fs::read_to_string(routes.join(format!("{}.toml", table.tool))).unwrap();
        assert!(text.starts_with("# Imported from spec?x = 1.json by"), "{text}");
        let raw: toml::Table = toml::from_str(&text).unwrap();
        assert!(!raw.contains_key("upstreams") && !raw.contains_key("x"), "{text}");
        assert_eq!(&toolgate_schema::RouteTable::from_toml_str(&text).unwrap(), table);
        let route = &table.routes[0];
        assert_eq!(route.summary, "One note\"");
        assert_eq!(route.fields[0].description.as_deref(), Some(format!("Id{INJECT}").as_str()));
    }
}
