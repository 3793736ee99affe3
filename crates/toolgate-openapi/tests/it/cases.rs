//! The cases a document can hold, one small document each: `allOf` merged, local `$ref`s
//! (also recursive ones), bodies and parameters that cannot be mapped, security schemes, and
//! documents that are refused whole.

use serde_json::{Value, json};
use toolgate_openapi::{AuthHint, DomainBy, Error, Options};

fn doc(paths: Value, components: Value) -> String {
    json!({"openapi": "3.1.0", "info": {"title": "Shop API", "version": "1"},
           "servers": [{"url": "https://{host}/v1", "variables": {"host": {"default": "shop.example"}}}],
           "paths": paths, "components": components})
    .to_string()
}

fn run(text: &str) -> toolgate_openapi::Import {
    toolgate_openapi::import(text, &Options::default()).unwrap()
}

#[test]
fn all_of_is_merged_and_refs_are_followed() {
    let text = doc(
        json!({"/orders": {"post": {"tags": ["orders"], "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "allOf": [{"$ref": "#/components/schemas/Base"}, {"type": "object", "required": ["qty"],
                       "properties": {"qty": {"type": "integer", "exclusiveMinimum": 0, "maximum": 99}}}]}}}}}}}),
        json!({"schemas": {"Base": {"type": "object", "required": ["sku"], "properties": {
            "sku": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$", "description": "Stock unit"},
            "id": {"type": "string", "readOnly": true},
            "kind": {"type": ["string", "null"], "enum": ["a", "b", null]}}}}}),
    );
    let import = run(&text);
    assert_eq!(import.base_url.as_deref(), Some("https://shop.example/v1"));
    let route = &import.tables[0].routes[0];
    assert_eq!(import.tables[0].tool, "update_orders");
    assert_eq!(route.op, "post_orders", "method + path without an operationId");
    let f = |n: &str| route.fields.iter().find(|f| f.name == n).unwrap_or_else(|| panic!("no {n}"));
    assert!(f("sku").required && f("sku").pattern.is_some());
    assert_eq!(f("sku").description.as_deref(), Some("Stock unit"));
    assert!(f("qty").required);
    assert_eq!(
        (f("qty").minimum, f("qty").maximum),
        (Some(1.0), Some(99.0)),
        "exclusive bound of an integer"
    );
    assert_eq!(f("kind").enum_values, Some(vec![json!("a"), json!("b")]));
    assert!(route.fields.iter().all(|f| f.name != "id"), "readOnly left out");
}

#[test]
fn unmappable_operations_are_skipped_one_line_each_and_the_rest_is_kept() {
    let text = doc(
        json!({
            "/files": {"post": {"operationId": "upload", "requestBody": {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}}},
            "/items/{id}": {
                "get": {"operationId": "getItem", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}]},
                "put": {"operationId": "putItem", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
                        "requestBody": {"content": {"application/json": {"schema": {"oneOf": [{"type": "object"}, {"type": "string"}]}}}}},
                "delete": {"operationId": "dropItem", "parameters": [{"name": "session", "in": "cookie", "schema": {"type": "string"}}]},
                "head": {"operationId": "headItem"}
            },
            "/tree": {"post": {"operationId": "plant", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}},
            "/meta": {"patch": {"operationId": "setMeta", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"tags": {"type": "object"}}}}}}}}
        }),
        json!({"schemas": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}}}),
    );
    let import = run(&text);
    // The recursive tree is cut (its children a free-form object) and the free-form `tags`
    // mapped as one: both are imported now, as is the raw binary upload (its bytes as base64).
    let ops: Vec<&str> = import.tables.iter().flat_map(|t| t.ops()).collect();
    assert_eq!(ops, ["upload", "get_item", "set_meta", "plant"], "{}", import.summary());
    let lines: Vec<String> = import.skipped.iter().map(ToString::to_string).collect();
    let expect =
        [("PUT /items/{id}", "oneOf"), ("DELETE /items/{id}", "cookie"), ("HEAD /items/{id}", "HEAD")];
    assert_eq!(lines.len(), expect.len(), "{lines:#?}");
    for (at, why) in expect {
        assert!(lines.iter().any(|l| l.starts_with(at) && l.contains(why)), "{at} / {why}: {lines:#?}");
    }
}

#[test]
fn domains_come_from_tags_or_the_first_path_segment() {
    let get = |tag: &str| json!({"get": {"tags": [tag], "summary": "s"}});
    let text = doc(json!({"/v1/users/{id}": get("People"), "/api/teams": get("People")}), json!({}));
    let by_tag = run(&text);
    assert_eq!(by_tag.tables.iter().map(|t| t.tool.as_str()).collect::<Vec<_>>(), ["query_people"]);
    let by_path =
        toolgate_openapi::import(&text, &Options::default().with_domain_by(DomainBy::Path)).unwrap();
    let tools: Vec<&str> = by_path.tables.iter().map(|t| t.tool.as_str()).collect();
    assert_eq!(tools, ["query_teams", "query_users"]);
}

#[test]
fn security_schemes_become_the_auth_of_the_snippet() {
    let with = |schemes: Value, security: Value| {
        let mut d: Value = serde_json::from_str(&doc(
            json!({"/a": {"get": {"summary": "a"}}}),
            json!({"securitySchemes": schemes}),
        ))
        .unwrap();
        d["security"] = security;
        run(&d.to_string())
    };
    let key = with(json!({"k": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}), json!([{"k": []}]));
    assert_eq!(
        key.auth,
        AuthHint::Static { header: "X-Api-Key".into(), env: "SHOP_API_API_KEY".into(), note: None }
    );
    let snippet = key.domain_snippet("routes/shop");
    assert!(
        snippet.contains(r#"auth = { kind = "static", header = "X-Api-Key", env = "SHOP_API_API_KEY" }"#),
        "{snippet}"
    );
    assert!(snippet.contains("base_url = \"https://shop.example/v1\""), "{snippet}");
    let bearer = with(
        json!({"b": {"type": "http", "scheme": "bearer"}, "k": {"type": "apiKey", "in": "query", "name": "key"}}),
        json!([{"b": []}]),
    );
    assert_eq!(bearer.auth, AuthHint::BearerFromCaller);
    let query = with(json!({"k": {"type": "apiKey", "in": "query", "name": "key"}}), json!([]));
    assert!(
        matches!(&query.auth, AuthHint::None { note: Some(n) } if n.contains("query")),
        "{:?}",
        query.auth
    );
    assert!(
        run(&doc(json!({"/a": {"get": {"summary": "a"}}}), json!({})))
            .domain_snippet("r")
            .contains(r#"kind = "none""#)
    );
}

#[test]
fn documents_that_cannot_be_imported_say_why() {
    let swagger = json!({"swagger": "1.2", "info": {"title": "t", "version": "1"}, "paths": {}}).to_string();
    let err = toolgate_openapi::import(&swagger, &Options::default()).unwrap_err();
    assert!(matches!(err, Error::Version(_)) && err.to_string().contains("3.0 and 3.1"), "{err}");
    let err = toolgate_openapi::import("{not json", &Options::default()).unwrap_err();
    assert!(matches!(err, Error::Parse(_)), "{err}");
    let err = toolgate_openapi::import("openapi: 3.0.0\npaths: [1, 2", &Options::default()).unwrap_err();
    assert!(matches!(err, Error::Parse(_)), "{err}");
    let xml = json!({"schema": {"type": "object", "properties": {"a": {"type": "string"}}}});
    let only_bad =
        doc(json!({"/f": {"post": {"requestBody": {"content": {"application/xml": xml}}}}}), json!({}));
    let err = toolgate_openapi::import(&only_bad, &Options::default()).unwrap_err();
    assert!(err.to_string().contains("POST /f: its body is not JSON (application/xml)"), "{err}");
    let injected = doc(
        json!({"/me/{user_id}": {"get": {"parameters": [{"name": "user_id", "in": "path", "required": true, "schema": {"type": "string"}}]}}, "/ok": {"get": {}}}),
        json!({}),
    );
    // A reserved path variable is renamed for the model (see faithful.rs), not skipped.
    let import = run(&injected);
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    assert_eq!(
        import.tables[0].routes.iter().find(|r| r.op != "get_ok").unwrap().path,
        "/me/{target_user_id}"
    );
}

/// `[` nested `levels` deep.
fn deep(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn yaml_nested_100000_deep_is_refused_naming_the_depth_before_it_is_parsed() {
    let max = toolgate_core::nesting::MAX_DEPTH;
    let text = format!("openapi: 3.1.0\npaths: {}\n", deep(100_000));
    let err = toolgate_openapi::import(&text, &Options::default()).unwrap_err();
    assert!(matches!(&err, Error::TooDeep(deep) if deep.limit == max && deep.line == 2), "{err:?}");
    assert!(err.to_string().contains(&format!("nests deeper than {max} levels (line 2)")), "{err}");
    // Deep, then a syntax error: the parser is not reached (it would answer a parse error).
    let text = format!("openapi: 3.1.0\npaths: {}\nbroken: [1, 2\n", deep(max + 1));
    let err = toolgate_openapi::import(&text, &Options::default()).unwrap_err();
    assert!(matches!(err, Error::TooDeep(_)), "{err:?}");
    let text = format!("openapi: 3.1.0\npaths: {}\nbroken: [1, 2\n", deep(max - 1));
    let err = toolgate_openapi::import(&text, &Options::default()).unwrap_err();
    assert!(matches!(err, Error::Parse(_)), "one level less is the parser's: {err:?}");
}

#[test]
fn yaml_and_json_are_refused_at_the_same_depth() {
    let max = toolgate_core::nesting::MAX_DEPTH;
    // The document's own mapping is one level; `x-deep` holds the rest.
    for (levels, refused) in [(max - 1, false), (max, true)] {
        let yaml = format!(
            "openapi: 3.1.0\ninfo: {{title: t, version: '1'}}\npaths: {{}}\nx-deep: {}\n",
            deep(levels)
        );
        let json = format!(
            r#"{{"openapi": "3.1.0", "info": {{"title": "t", "version": "1"}}, "paths": {{}}, "x-deep": {}}}"#,
            deep(levels)
        );
        let yaml = toolgate_openapi::import(&yaml, &Options::default()).unwrap_err();
        let json = toolgate_openapi::import(&json, &Options::default()).unwrap_err();
        assert_eq!(matches!(yaml, Error::TooDeep(_)), refused, "{} levels: {yaml}", levels + 1);
        assert_eq!(
            matches!(&json, Error::Parse(m) if m.contains("recursion limit")),
            refused,
            "{} levels: {json}",
            levels + 1
        );
        if !refused {
            assert!(
                matches!((&yaml, &json), (Error::Nothing { .. }, Error::Nothing { .. })),
                "{yaml} / {json}"
            );
        }
    }
}

#[test]
fn a_real_yaml_document_scans_to_the_depth_the_parser_builds() {
    fn built(value: &serde_norway::Value) -> usize {
        use serde_norway::Value as Y;
        match value {
            Y::Sequence(items) => 1 + items.iter().map(built).max().unwrap_or(0),
            Y::Mapping(map) => 1 + map.iter().map(|(k, v)| built(k).max(built(v))).max().unwrap_or(0),
            Y::Tagged(tagged) => built(&tagged.value),
            _ => 0,
        }
    }
    let text = include_str!("fixtures/train-travel-3.1.yaml");
    let depth = built(&serde_norway::from_str(text).unwrap());
    let limit = |l: usize| toolgate_core::nesting::check_yaml_with(text, l).is_ok();
    assert!(limit(depth) && !limit(depth - 1), "the scan counts {depth} levels too");
}

#[test]
fn a_yaml_integer_beyond_64_bits_imports_as_a_float_like_json() {
    // A real API's spec (an int64 bound written as its float rounding) has these.
    let yaml = "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /items:\n    get:\n      parameters:\n        - {name: after, in: query, schema: {type: integer, minimum: -9223372036854776000, maximum: 18446744073709551616}}\n";
    let json = r#"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/items": {"get": {"parameters": [
        {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": -9223372036854776000, "maximum": 18446744073709551616}}]}}}}"#;
    let (yaml, json) = (run(yaml), run(json));
    let field = |i: &toolgate_openapi::Import| i.tables[0].routes[0].fields[0].clone();
    assert_eq!((field(&yaml).minimum, field(&yaml).maximum), (field(&json).minimum, field(&json).maximum));
    assert_eq!(field(&yaml).minimum, Some(-9.223372036854776e18));
}

#[test]
fn a_yaml_syntax_error_says_yaml_and_the_line() {
    let err =
        toolgate_openapi::import("openapi: 3.0.0\ninfo: {title: t}\npaths: [1, 2\n", &Options::default())
            .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("the document is not valid YAML: "), "{text}");
    assert!(text.contains("line "), "the parser's line is kept: {text}");
    assert!(!text.contains("neither"), "{text}");
    let err = toolgate_openapi::import("{\"openapi\": 3,\n}", &Options::default()).unwrap_err();
    assert!(err.to_string().starts_with("the document is not valid JSON: "), "{err}");
}

#[test]
fn the_suggested_domain_name_is_cut_at_a_word_boundary() {
    let named = |title: &str| {
        let text = json!({"openapi": "3.1.0", "info": {"title": title, "version": "1"}, "paths": {"/a": {"get": {}}}});
        run(&text.to_string()).name
    };
    // The real title that was cut to "spotify_web_api_with_fixes_and_i".
    assert_eq!(
        named("Spotify Web API with fixes and improvements from sonallux"),
        "spotify_web_api_with_fixes_and"
    );
    // A word ending right at the limit (32 characters) is kept whole.
    assert_eq!(named("abcdefghij klmnopqrst uvwxyzabcd efgh"), "abcdefghij_klmnopqrst_uvwxyzabcd");
    assert_eq!(named("Short API"), "short_api");
    // One word longer than the limit has no boundary to cut at.
    assert_eq!(named(&"x".repeat(40)), "x".repeat(32));
}

#[test]
fn a_word_every_tag_starts_with_is_left_out_of_the_tables_names() {
    // Twilio's tags all start with its API's version (`Api20100401Call`): its tools were
    // `update_api20100401_call` and the like. The tag's description still reaches its tables.
    let op = |tag: &str| json!({"get": {"operationId": format!("List{tag}"), "tags": [tag]}});
    let text = json!({
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "tags": [{"name": "Api20100401Queue", "description": "A line of callers\nwaiting for an agent."},
                 // As long as the shared word, ending in another table's name: not that table's.
                 {"name": "Zzzzzzzzzzz Call", "description": "Not about calls."}],
        "paths": {"/calls": op("Api20100401Call"), "/queues": op("Api20100401Queue"),
                  "/queues/{id}/members": op("Api20100401Member")}
    });
    let import = run(&text.to_string());
    let tools: Vec<&str> = import.tables.iter().map(|t| t.tool.as_str()).collect();
    assert_eq!(tools, ["query_call", "query_member", "query_queue"]);
    assert_eq!(import.tables[2].about, ["A line of callers waiting for an agent."]);
    assert!(import.tables[0].about.is_empty(), "{:?}", import.tables[0].about);
    // With two tags, or by path, names are as they were.
    let two = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
                     "paths": {"/calls": op("Api20100401Call"), "/queues": op("Api20100401Queue")}});
    let tools: Vec<String> = run(&two.to_string()).tables.into_iter().map(|t| t.tool).collect();
    assert_eq!(tools, ["query_api20100401_call", "query_api20100401_queue"]);
}

#[test]
fn what_a_path_item_says_of_its_operations_is_their_tables_about() {
    // Twilio describes its resources on its path items, its 88 tags have no description: its
    // tables had nothing for discovery to read beside the operations' summaries, 47 of which
    // are only "POST /2010-04-01/...". A path item's summary and description apply to all its
    // operations (OpenAPI 3.x), so they reach each table that holds one, once, after the
    // tag's description.
    let text = json!({
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "tags": [{"name": "Queue", "description": "Queues of calls."}],
        "paths": {
            "/participants": {"description": "Conference participants",
                              "get": {"operationId": "ListParticipant", "tags": ["Participant"]},
                              "post": {"operationId": "CreateParticipant", "tags": ["Participant"]}},
            "/participants/{sid}": {"description": "Conference participants",
                                    "parameters": [{"name": "sid", "in": "path", "required": true,
                                                    "schema": {"type": "string"}}],
                                    "delete": {"operationId": "DeleteParticipant", "tags": ["Participant"]}},
            "/queues": {"summary": "Queues", "description": "Calls *waiting* for an agent.\n\nMore.",
                        "get": {"operationId": "ListQueue", "tags": ["Queue"]}},
            "/queues/{sid}": {"parameters": [{"name": "sid", "in": "path", "required": true,
                                              "schema": {"type": "string"}}],
                              "get": {"operationId": "FetchQueue", "tags": ["Queue"]}}
        }
    });
    let import = run(&text.to_string());
    let about = |tool: &str| {
        let table = import.tables.iter().find(|t| t.tool == tool).unwrap_or_else(|| panic!("no {tool}"));
        table.about.iter().map(String::as_str).collect::<Vec<&str>>()
    };
    assert_eq!(import.tables.len(), 3);
    assert_eq!(about("query_participant"), ["Conference participants"]);
    assert_eq!(about("update_participant"), ["Conference participants"]);
    assert_eq!(about("query_queue"), ["Queues of calls.", "Queues", "Calls waiting for an agent."]);
    // Never part of what the model reads.
    for table in &import.tables {
        assert!(
            !table.description.contains("Conference participants") && !table.description.contains("waiting")
        );
    }
}
