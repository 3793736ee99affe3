//! Documents written to attack whoever pastes the importer's output: a header name or server
//! URL that closes its TOML string and appends an `[[upstreams]]` table with a `command`, and
//! descriptions full of quotes and table headers. What is printed and written must parse back
//! to exactly the expected keys and strings.

use serde_json::{Value, json};
use toolgate_openapi::{AuthHint, Options};
use toolgate_schema::RouteTable;

/// What every field below tries: end the string, start a table `serve` would run.
const INJECT: &str =
    "\"\n[[upstreams]]\nname = \"evil\"\ncommand = [\"sh\", \"-c\", \"touch /tmp/pwned\"]\n#";

fn hostile(header: &str, server: &str) -> String {
    json!({"openapi": "3.0.3", "info": {"title": "Shop API", "version": "1"},
           "servers": [{"url": server}],
           "security": [{"key": []}],
           "paths": {"/items/{id}": {"get": {
               "operationId": "getItem", "tags": ["items"],
               "summary": format!("Get an item.{INJECT}"),
               "description": format!("'''{INJECT}\"\"\"{INJECT}"),
               "parameters": [{"name": "id", "in": "path", "required": true,
                               "description": format!("The id{INJECT}"), "schema": {"type": "integer"}}]}}},
           "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": header}}}})
    .to_string()
}

/// The printed entry parsed back: exactly one `[[domains]]` table and nothing else.
fn entry(snippet: &str) -> toml::Table {
    let doc: toml::Table = toml::from_str(snippet).unwrap_or_else(|e| panic!("{e}\n{snippet}"));
    assert_eq!(doc.keys().collect::<Vec<_>>(), ["domains"], "no other table: {snippet}");
    let domains = doc["domains"].as_array().unwrap();
    assert_eq!(domains.len(), 1, "{snippet}");
    let entry = domains[0].as_table().unwrap().clone();
    let mut keys: Vec<&str> = entry.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["auth", "base_url", "name", "routes", "timeout_ms"], "{snippet}");
    entry
}

#[test]
fn a_header_name_and_server_url_that_break_out_of_their_strings_are_left_out_with_the_reason() {
    let header = format!("X-Key{INJECT}");
    let server = format!("https://shop.example{INJECT}");
    let import = toolgate_openapi::import(&hostile(&header, &server), &Options::default()).unwrap();
    assert!(
        matches!(&import.auth, AuthHint::None { note: Some(n) } if n.contains("not a plain HTTP header name")),
        "{:?}",
        import.auth
    );
    assert_eq!(import.base_url, None);
    assert!(
        import.base_url_refused.is_some_and(|r| r.contains("plain URL")),
        "{:?}",
        import.base_url_refused
    );

    let snippet = import.domain_snippet("routes/shop");
    let entry = entry(&snippet);
    assert_eq!(entry["name"].as_str(), Some("shop_api"));
    assert_eq!(
        entry["base_url"].as_str(),
        Some("https://CHANGE-ME.example"),
        "the refused URL is not printed"
    );
    assert_eq!(entry["routes"].as_str(), Some("routes/shop"));
    assert_eq!(entry["auth"].as_table().unwrap().keys().collect::<Vec<_>>(), ["kind"]);
    assert_eq!(entry["auth"]["kind"].as_str(), Some("none"));
    assert_eq!(entry["timeout_ms"].as_integer(), Some(10_000));
    assert!(
        !snippet.contains("upstreams") && !snippet.contains("pwned"),
        "no document text printed: {snippet}"
    );
    assert!(snippet.contains("# servers[0].url was left out: "), "{snippet}");
    let summary = import.summary();
    assert!(summary.contains("left out servers[0].url: "), "{summary}");

    // Each alone: the other piece is kept.
    let kept_url =
        toolgate_openapi::import(&hostile(&header, "https://shop.example/v1/"), &Options::default()).unwrap();
    assert_eq!(kept_url.base_url.as_deref(), Some("https://shop.example/v1"));
    assert_eq!(entry_of(&kept_url)["base_url"].as_str(), Some("https://shop.example/v1"));
    let kept_key = toolgate_openapi::import(&hostile("X-Api-Key", &server), &Options::default()).unwrap();
    assert!(
        matches!(&kept_key.auth, AuthHint::Static { header, .. } if header == "X-Api-Key"),
        "{:?}",
        kept_key.auth
    );
}

fn entry_of(import: &toolgate_openapi::Import) -> toml::Table {
    entry(&import.domain_snippet("routes/shop"))
}

#[test]
fn server_urls_that_are_not_plain_http_urls_are_refused_and_plain_ones_kept() {
    for (url, reason) in [
        ("https://shop.example/v1\n", "plain URL"),
        ("https://shop.example/a b", "plain URL"),
        ("https://shop.example/\"x", "plain URL"),
        ("https://shöp.example", "plain URL"),
        ("https://user:pw@shop.example", "credentials"),
        ("https://shop.example/v1?key=1", "query"),
        ("https://{region}.shop.example", "server variable"),
        ("ftp://shop.example", "http:// and https://"),
        ("https:///v1", "no host"),
    ] {
        let import = toolgate_openapi::import(&hostile("X-Api-Key", url), &Options::default()).unwrap();
        assert_eq!(import.base_url, None, "{url:?}");
        assert!(
            import.base_url_refused.is_some_and(|r| r.contains(reason)),
            "{url:?}: {:?}",
            import.base_url_refused
        );
        assert_eq!(entry_of(&import)["base_url"].as_str(), Some("https://CHANGE-ME.example"));
    }
    for (url, kept) in [
        ("http://127.0.0.1:8080/api/", "http://127.0.0.1:8080/api"),
        ("https://[::1]:8443", "https://[::1]:8443"),
        ("https://api.example.com/v1/%7Euser;x=1", "https://api.example.com/v1/%7Euser;x=1"),
    ] {
        let import = toolgate_openapi::import(&hostile("X-Api-Key", url), &Options::default()).unwrap();
        assert_eq!((import.base_url.as_deref(), import.base_url_refused), (Some(kept), None), "{url:?}");
        assert_eq!(entry_of(&import)["base_url"].as_str(), Some(kept));
    }
    // A relative server stays what it was: no URL, no refusal, the hint to set one.
    let relative = toolgate_openapi::import(&hostile("X-Api-Key", "/v1"), &Options::default()).unwrap();
    assert_eq!((relative.base_url, relative.base_url_refused), (None, None));
}

#[test]
fn header_names_are_rfc_9110_tokens_and_every_printed_value_goes_through_the_serializer() {
    for bad in ["X Key", "X-Key:", "X\"Key", "X-Kéy", "", "X\tKey", "(X)"] {
        let import =
            toolgate_openapi::import(&hostile(bad, "https://shop.example"), &Options::default()).unwrap();
        assert!(matches!(import.auth, AuthHint::None { note: Some(_) }), "{bad:?}: {:?}", import.auth);
        assert_eq!(entry_of(&import)["auth"]["kind"].as_str(), Some("none"), "{bad:?}");
    }
    // Every token character is kept, and comes back as it was.
    let token = "X-Api_Key.v1!#$%&'*+^`|~";
    let import =
        toolgate_openapi::import(&hostile(token, "https://shop.example"), &Options::default()).unwrap();
    let auth = entry_of(&import)["auth"].as_table().unwrap().clone();
    assert_eq!(auth["kind"].as_str(), Some("static"));
    assert_eq!(auth["header"].as_str(), Some(token));
    assert_eq!(auth["env"].as_str(), Some("SHOP_API_API_KEY"));
    // The folder comes from the command line, and it too is a TOML string, not text pasted in.
    let dir = format!("routes/shop{INJECT}");
    let entry = entry(&import.domain_snippet(&dir));
    assert_eq!(entry["routes"].as_str(), Some(dir.as_str()));
}

#[test]
fn the_bearer_hint_is_valid_toml_with_a_comment_saying_a_backend_credential_is_needed() {
    let text = hostile("X-Api-Key", "https://shop.example");
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["components"]["securitySchemes"]["key"] = json!({"type": "oauth2", "flows": {}});
    let import = toolgate_openapi::import(&doc.to_string(), &Options::default()).unwrap();
    assert_eq!(import.auth, AuthHint::BearerFromCaller);
    let snippet = import.domain_snippet("routes/shop");
    assert_eq!(entry(&snippet)["auth"]["kind"].as_str(), Some("bearer_from_caller"));
    let comments: Vec<&str> = snippet.lines().filter(|l| l.starts_with('#')).collect();
    assert!(comments.iter().any(|l| l.contains("needs a token made for this backend")), "{snippet}");
    // Each suggested auth in the comments is itself a valid inline table of a kind the
    // configuration takes: a token exchange, client credentials, a static token.
    let suggested: Vec<toml::Table> = comments
        .iter()
        .filter_map(|l| l.split_once("auth = "))
        .map(|(_, rest)| toml::from_str(&format!("auth = {}", rest.split(" with ").next().unwrap())).unwrap())
        .collect();
    let kinds: Vec<&str> = suggested.iter().map(|t| t["auth"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["token_exchange", "client_credentials", "static"], "{snippet}");
    assert_eq!(suggested[0]["auth"]["client_secret"]["env"].as_str(), Some("SHOP_API_CLIENT_SECRET"));
    assert_eq!(suggested[2]["auth"]["env"].as_str(), Some("SHOP_API_API_KEY"));
}

#[test]
fn written_tables_parse_back_to_the_documents_strings() {
    let import =
        toolgate_openapi::import(&hostile("X-Api-Key", "https://shop.example"), &Options::default()).unwrap();
    let table = &import.tables[0];
    let route = &table.routes[0];
    assert_eq!(route.summary, "Get an item.\"", "the summary is the first line, quote kept");
    assert!(route.fields[0].description.as_deref().is_some_and(|d| d.contains(INJECT)));
    // As `toolgate import openapi` writes each table.
    let text = toml::to_string(table).unwrap();
    let raw: toml::Table = toml::from_str(&text).unwrap();
    assert!(!raw.contains_key("upstreams"), "{text}");
    let back = RouteTable::from_toml_str(&text).unwrap();
    assert_eq!(&back, table);
    assert_eq!(back.routes[0].summary, route.summary);
    assert_eq!(back.routes[0].fields[0].description, route.fields[0].description);
}

#[test]
fn printed_lines_of_document_text_stay_one_line() {
    let mut doc: Value = serde_json::from_str(&hostile("X-Api-Key", "https://shop.example")).unwrap();
    doc["info"]["title"] = json!(format!("Shop{INJECT}"));
    // A path that cannot be a route: skipped, and its line printed with the path in it.
    doc["paths"][format!("/x{INJECT}")] =
        json!({"post": {"requestBody": {"content": {"multipart/form-data": {}}}}});
    let import = toolgate_openapi::import(&doc.to_string(), &Options::default()).unwrap();
    assert_eq!(import.skipped.len(), 1, "{:?}", import.skipped);
    let summary = import.summary();
    assert!(
        summary.lines().all(|l| !l.starts_with('[') && !l.starts_with("command") && !l.starts_with("name")),
        "{summary}"
    );
    assert!(summary.contains("\\n[[upstreams]]"), "shown escaped: {summary}");
}

#[test]
fn the_entry_is_serialized_even_for_values_no_check_refused() {
    // The checks above refuse these; the serializer alone must still keep them strings.
    let doc = r#"{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
      "paths": {"/items": {"get": {"operationId": "listItems"}}}}"#;
    let mut import = toolgate_openapi::import(doc, &Options::default()).unwrap();
    import.name = format!("shop{INJECT}");
    import.base_url = Some(format!("https://shop.example{INJECT}"));
    import.auth = AuthHint::Static { header: format!("X{INJECT}"), env: format!("E{INJECT}"), note: None };
    let entry = entry(&import.domain_snippet("routes/shop"));
    assert_eq!(entry["name"].as_str(), Some(import.name.as_str()));
    assert_eq!(entry["base_url"].as_str(), import.base_url.as_deref());
    assert_eq!(entry["auth"]["header"].as_str(), Some(format!("X{INJECT}").as_str()));
    assert_eq!(entry["auth"]["env"].as_str(), Some(format!("E{INJECT}").as_str()));
}
