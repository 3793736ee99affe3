//! An operation's own `servers` and `security`: Box's upload host and Swagger Petstore's
//! `api_key` operations beside its OAuth ones become the route's `server` and `security`, the
//! printed `[[domains]]` entry lists the servers and the schemes' credentials, and what cannot
//! be called (a relative server, two credentials at once) is left out with the reason.

use serde_json::{Value, json};
use toolgate_openapi::Options;
use toolgate_schema::Route;

fn route<'a>(import: &'a toolgate_openapi::Import, op: &str) -> &'a Route {
    import.tables.iter().flat_map(|t| &t.routes).find(|r| r.op == op).unwrap_or_else(|| {
        panic!("no op {op}: {}", import.summary());
    })
}

fn get(id: &str, extra: Value) -> Value {
    let mut op = json!({"operationId": id, "summary": id, "responses": {"200": {"description": "ok"}}});
    op.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    op
}

#[test]
fn petstores_api_key_operations_name_their_scheme_and_the_entry_gives_it_a_credential() {
    let text = include_str!("fixtures/petstore-3.0.json");
    let import = toolgate_openapi::import(text, &Options::default()).unwrap();
    // The main scheme (the first declared: OAuth) is the domain's `auth`; only the others are named.
    assert_eq!(route(&import, "get_inventory").security, Some(vec!["api_key".to_owned()]));
    assert_eq!(route(&import, "get_pet_by_id").security, Some(vec!["api_key".to_owned()]));
    assert_eq!(route(&import, "add_pet").security, None);
    assert_eq!(route(&import, "login_user").security, None);
    let snippet = import.domain_snippet("routes");
    assert!(
        snippet.contains(
            r#"schemes = { api_key = { kind = "static", header = "api_key", env = "SWAGGER_PETSTORE_API_KEY_CREDENTIAL" } }"#
        ),
        "{snippet}"
    );
    assert!(snippet.contains("set SWAGGER_PETSTORE_API_KEY_CREDENTIAL in the environment"), "{snippet}");
    // The snippet is TOML a domain entry parses from.
    let parsed: toml::Value = toml::from_str(&snippet).unwrap_or_else(|e| panic!("{e}\n{snippet}"));
    assert_eq!(parsed["domains"][0]["schemes"]["api_key"]["header"].as_str(), Some("api_key"));
}

#[test]
fn an_operations_own_server_is_its_routes_and_the_entry_declares_it() {
    let upload =
        json!([{"url": "https://{host}/api/2.0", "variables": {"host": {"default": "upload.box.com"}}}]);
    let doc = json!({
        "openapi": "3.0.3",
        "info": {"title": "Box", "version": "1"},
        "servers": [{"url": "https://api.box.com/2.0"}],
        "security": [{"OAuth2Security": []}],
        "components": {"securitySchemes": {
            "OAuth2Security": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://x/t", "scopes": {}}}},
            "Pair": {"type": "apiKey", "in": "header", "name": "X-A"},
            "Other": {"type": "apiKey", "in": "header", "name": "X-B"}
        }},
        "paths": {
            "/files/{id}": {"get": get("get_file", json!({"parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]}))},
            "/files/{id}/content": {"get": get("get_file_content", json!({"servers": upload, "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]}))},
            // A path's own server, and an operation's that is the document's: no server of its own.
            "/zip": {"servers": [{"url": "https://dl.boxcloud.com/2.0/"}], "get": get("get_zip", json!({}))},
            "/same": {"get": get("get_same", json!({"servers": [{"url": "https://api.box.com/2.0/"}]}))},
            // Not callable: a relative server, an empty host, two credentials at once.
            "/relative": {"get": get("get_relative", json!({"servers": [{"url": "/v2"}]}))},
            "/nohost": {"get": get("get_nohost", json!({"servers": [{"url": "https://"}]}))},
            "/pair": {"get": get("get_pair", json!({"security": [{"Pair": [], "Other": []}]}))},
            // No credential, and a scheme the document does not declare.
            "/public": {"get": get("get_public", json!({"security": []}))},
            "/unknown": {"get": get("get_unknown", json!({"security": [{"Nope": []}]}))}
        }
    });
    let import = toolgate_openapi::import(&doc.to_string(), &Options::default()).unwrap();
    assert_eq!(route(&import, "get_file").server, None);
    assert_eq!(route(&import, "get_file_content").server.as_deref(), Some("https://upload.box.com/api/2.0"));
    assert_eq!(route(&import, "get_zip").server.as_deref(), Some("https://dl.boxcloud.com/2.0"));
    assert_eq!(route(&import, "get_same").server, None);
    assert_eq!(route(&import, "get_public").security, Some(Vec::new()));
    assert_eq!(import.servers, ["https://dl.boxcloud.com/2.0", "https://upload.box.com/api/2.0"]);
    let reasons: Vec<String> = import.skipped.iter().map(ToString::to_string).collect();
    let reason = |path: &str| reasons.iter().find(|r| r.starts_with(&format!("GET {path}:"))).cloned();
    assert!(reason("/relative").is_some_and(|r| r.contains("relative URL")), "{reasons:?}");
    assert!(reason("/nohost").is_some_and(|r| r.contains("no host")), "{reasons:?}");
    assert!(reason("/pair").is_some_and(|r| r.contains("several credentials at once")), "{reasons:?}");
    assert!(reason("/unknown").is_some_and(|r| r.contains("does not declare")), "{reasons:?}");
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    let snippet = import.domain_snippet("routes");
    let parsed: toml::Value = toml::from_str(&snippet).unwrap_or_else(|e| panic!("{e}\n{snippet}"));
    let servers = parsed["domains"][0]["servers"].as_table().unwrap();
    assert_eq!(servers.len(), 2, "{snippet}");
    assert_eq!(servers["https://upload.box.com/api/2.0"].as_str(), Some("https://upload.box.com/api/2.0"));
}
