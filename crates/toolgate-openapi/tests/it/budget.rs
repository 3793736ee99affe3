//! The per-tool budget on a document whose one operation is over it even with its texts
//! clipped: its deepest nested schemas are cut to free-form values until it fits, and a value
//! given there is sent as given; and the OpenAI document of the corpus
//! (`crates/toolgate/tests/openapi/`, see its SOURCE.md) gives no tool over the default limit.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use serde_json::{Value, json};
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_openapi::Options;
use toolgate_openapi::budget::{DEFAULT_TOOL_TOKENS, table_tokens};
use toolgate_schema::{FieldType, Items, RouteTable, Validator};

/// A document with one write whose body nests six levels of `Level{n}` schemas, each with a
/// `kind` of twelve values and two children.
fn deep_document() -> String {
    let mut schemas = serde_json::Map::new();
    for level in 0..6 {
        let kinds: Vec<String> = (0..12).map(|i| format!("level_{level}_kind_{i}")).collect();
        let mut properties =
            json!({"kind": {"type": "string", "enum": kinds, "description": "What this node is."}});
        if level < 5 {
            for child in ["left", "right"] {
                properties[child] = json!({"$ref": format!("#/components/schemas/Level{}", level + 1)});
            }
        }
        schemas.insert(format!("Level{level}"), json!({"type": "object", "properties": properties}));
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Trees", "version": "1"},
        "paths": {"/trees": {"post": {"operationId": "createTree", "tags": ["trees"],
            "summary": "Create a tree",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object", "required": ["name", "root"],
                "properties": {"name": {"type": "string"}, "root": {"$ref": "#/components/schemas/Level0"}}}}}},
            "responses": {"201": {"description": "Created", "content": {"application/json": {"schema": {"type": "object"}}}}}}}},
        "components": {"schemas": schemas}
    })
    .to_string()
}

/// The member names from `items` to the first shape cut to a free-form object.
fn path_to_cut(items: &Items) -> Option<Vec<String>> {
    if items.description.as_deref().is_some_and(|d| d.contains("(Cut: the schemas of its members")) {
        return Some(Vec::new());
    }
    items.fields.iter().find_map(|f| {
        let mut rest = path_to_cut(&f.shape)?;
        rest.insert(0, f.name.clone());
        Some(rest)
    })
}

type Log = Arc<Mutex<Vec<Bytes>>>;

async fn record(State(log): State<Log>, body: Bytes) -> String {
    log.lock().unwrap().push(body);
    r#"{"id": "t1"}"#.to_owned()
}

#[tokio::test]
async fn an_operation_over_the_budget_is_cut_to_fit_and_a_cut_member_is_sent_as_given() {
    let whole = toolgate_openapi::import(&deep_document(), &Options::default()).unwrap();
    let before = table_tokens(&whole.tables[0]);
    let limit = before / 3;
    let import =
        toolgate_openapi::import(&deep_document(), &Options::default().with_max_tool_tokens(limit)).unwrap();
    assert_eq!(import.tables.len(), 1, "{}", import.summary());
    let table = &import.tables[0];
    let tokens = table_tokens(table);
    assert!(tokens <= limit, "{tokens} tokens, limit {limit} (was {before})");
    assert_eq!(import.budget.over().count(), 0, "{}", import.budget);
    assert!(import.budget.changes[0].into[0].cut > 0, "{:?}", import.budget);
    assert!(import.summary().contains("nested schema(s) cut to free-form values"), "{}", import.summary());

    // Written and read back, the cut member is a free-form object that says what was cut.
    let back = RouteTable::from_toml_str(&toml::to_string(table).unwrap()).unwrap();
    assert_eq!(&back, table);
    let route = back.route("create_tree").unwrap();
    let root = &route.fields.iter().find(|f| f.name == "root").unwrap().shape;
    assert_eq!(root.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["kind", "left", "right"]);
    let at = path_to_cut(root).expect("a cut member under `root`");
    assert!(at.len() >= 2, "the deepest levels are cut first: {at:?}");
    let mut spot = root;
    for name in &at {
        spot = &spot.fields.iter().find(|f| f.name == *name).unwrap().shape;
    }
    assert_eq!((spot.ty, spot.fields.len()), (FieldType::Object, 0));
    assert_eq!(spot.values.as_deref(), Some(&Items::new(FieldType::Any)));
    let note = spot.description.as_deref().unwrap();
    assert!(
        note.contains("`kind`, `left`, `right`") && note.contains(&format!("{limit}-token limit")),
        "{note}"
    );

    // Any members there are valid, and sent to the API as given.
    let mut given = json!({"kind": "not_a_listed_kind", "extra": [1, {"deep": null}]});
    for name in at.iter().rev() {
        given = json!({ name.as_str(): given });
    }
    let params = json!({"op": "create_tree", "name": "oak", "root": given});
    let spec = back.spec().unwrap();
    Validator::new(&spec.input_schema).unwrap().validate(&params).unwrap_or_else(|e| panic!("{e:?}"));
    let log: Log = Arc::default();
    let app = Router::new().fallback(record).with_state(log.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let executor = HttpExecutor::new(&url, HttpOptions::default().auth(Auth::None)).unwrap();
    let prepared = executor.prepare(route, &params).unwrap();
    let result = executor.send(prepared, None, std::time::Duration::from_secs(5), &params).await;
    assert!(result.is_ok(), "{result:?}");
    let body = log.lock().unwrap().pop().expect("the backend got the call");
    let sent: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(sent, json!({"name": "oak", "root": params["root"]}));
    server.abort();
}

#[test]
fn the_openai_document_gives_no_tool_over_the_default_limit() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../toolgate/tests/openapi/openai-openapi.yaml.gz");
    let unpacked = std::process::Command::new("gzip").arg("-dc").arg(file).output().expect("gzip runs");
    assert!(unpacked.status.success(), "gzip -dc {file}");
    let text = String::from_utf8(unpacked.stdout).unwrap();
    let import = toolgate_openapi::import(&text, &Options::default()).unwrap();
    assert_eq!(import.budget.over().count(), 0, "{}", import.budget);
    for table in &import.tables {
        let tokens = table_tokens(table);
        assert!(tokens <= DEFAULT_TOOL_TOKENS, "{} is {tokens} tokens", table.tool);
        table.check().unwrap_or_else(|e| panic!("{}: {e}", table.tool));
    }
    // What made it fit: `createResponse` alone was over the limit with its texts clipped.
    let responses = import.tables.iter().find(|t| t.route("create_response").is_some()).unwrap();
    let cut = import.budget.changes.iter().flat_map(|c| &c.into).find(|p| p.tool == responses.tool).unwrap();
    assert!(cut.cut > 0, "{:?}", import.budget);
    assert!(import.budget.to_string().contains("nested schema(s) cut to free-form values"));
}
