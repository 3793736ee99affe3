//! What a write's route says about its request: no body when the operation has none, query
//! parameters marked as such, an optional body that keeps its own required fields, and the
//! media types its answers are documented in.

use serde_json::{Value, json};
use toolgate_openapi::Options;
use toolgate_schema::{Body, Location, Route};

fn routes(paths: Value) -> Vec<Route> {
    let text = json!({"openapi": "3.0.3", "info": {"title": "Real API", "version": "1"}, "paths": paths})
        .to_string();
    let import = toolgate_openapi::import(&text, &Options::default()).unwrap();
    assert!(import.skipped.is_empty(), "{}", import.summary());
    import.tables.into_iter().flat_map(|t| t.routes).collect()
}

fn route<'a>(routes: &'a [Route], op: &str) -> &'a Route {
    routes.iter().find(|r| r.op == op).unwrap_or_else(|| panic!("no op {op}"))
}

#[test]
fn a_write_without_a_request_body_sends_none_and_its_query_parameters_stay_query() {
    let routes = routes(json!({
        "/batches/{batch_id}/cancel": {"post": {"operationId": "cancelBatch",
            "parameters": [{"name": "batch_id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "ok", "content": {"application/json": {}}}}}},
        "/me/player/seek": {"put": {"operationId": "seekToPositionInCurrentlyPlayingTrack",
            "parameters": [{"name": "position_ms", "in": "query", "required": true, "schema": {"type": "integer"}},
                           {"name": "device_id", "in": "query", "schema": {"type": "string"}}],
            "responses": {"204": {"description": "done"}}}},
        "/notes": {"post": {"operationId": "addNote",
            "parameters": [{"name": "notify", "in": "query", "schema": {"type": "boolean"}}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}}}}}}
    }));
    let cancel = route(&routes, "cancel_batch");
    assert_eq!(cancel.body, Body::None, "no requestBody: no body, not `{{}}`");
    assert_eq!(cancel.location("batch_id"), Location::Path);
    let seek = route(&routes, "seek_to_position_in_currently_playing_track");
    assert_eq!(seek.body, Body::None);
    for name in ["position_ms", "device_id"] {
        let field = seek.fields.iter().find(|f| f.name == name).unwrap();
        assert_eq!(field.location, Some(Location::Query), "{name}");
    }
    // Query parameters beside a body were skipped before; now each goes where it belongs.
    let note = route(&routes, "add_note");
    assert_eq!(
        (note.body, note.location("notify"), note.location("text")),
        (Body::Required, Location::Query, Location::Body)
    );
    // The table written says so, and reads back the same.
    let mut table = toolgate_schema::RouteTable::new("update_things", "d", "things", routes.clone());
    table.required_role = "member".into();
    let text = toml::to_string(&table).unwrap();
    assert!(text.contains("body = \"none\"") && text.contains("in = \"query\""), "{text}");
    assert_eq!(toolgate_schema::RouteTable::from_toml_str(&text).unwrap().routes, routes);
}

#[test]
fn an_optional_body_keeps_its_required_fields_for_when_it_is_sent() {
    let text = json!({"openapi": "3.0.3", "info": {"title": "Box", "version": "1"}, "paths": {
        "/tasks": {"post": {"operationId": "post_tasks", "tags": ["tasks"],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object", "required": ["item"],
                "properties": {"item": {"type": "string"}, "message": {"type": "string"}}}}}}}}}})
    .to_string();
    let import = toolgate_openapi::import(&text, &Options::default()).unwrap();
    let table = &import.tables[0];
    let route = &table.routes[0];
    assert_eq!(route.body, Body::Optional);
    let item = route.fields.iter().find(|f| f.name == "item").unwrap();
    assert!(item.required, "the body's own required list is kept");
    // Required of the body, not of the call: a call without any body field stays valid.
    assert_eq!(table.schema()["oneOf"][0]["required"], json!(["op"]));
}

#[test]
fn accept_lists_the_documented_answer_types() {
    let routes = routes(json!({
        "/user/login": {"get": {"operationId": "loginUser", "responses": {
            "200": {"description": "ok", "content": {"application/xml": {}, "application/json; charset=utf-8": {}}},
            "400": {"description": "bad", "content": {"text/html": {}}}}}},
        "/pets": {"get": {"operationId": "listPets", "responses": {
            "200": {"description": "ok", "content": {"application/json": {}}}}}}
    }));
    let login = route(&routes, "login_user");
    assert_eq!(login.accept, ["application/xml", "application/json"], "2xx types only, without parameters");
    assert_eq!(login.accept_header(), "application/json, application/xml;q=0.5");
    let pets = route(&routes, "list_pets");
    assert!(pets.accept.is_empty(), "JSON only is the default and not written");
    assert_eq!(pets.accept_header(), "application/json");
}

#[test]
fn a_delete_with_a_documented_body_sends_it_as_a_write_does() {
    // DigitalOcean's `kubernetes_destroy_associatedResourcesSelective`: a required body whose
    // members are all optional. Prism: "Body parameter is required" when none is sent.
    let text = json!({"openapi": "3.0.3", "info": {"title": "Real API", "version": "1"}, "paths": {
        "/clusters/{cluster_id}/selective": {"delete": {"operationId": "destroy_selective", "tags": ["k"],
            "parameters": [{"name": "cluster_id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object",
                "properties": {"volumes": {"type": "array", "items": {"type": "string"}},
                               "load_balancers": {"type": "array", "items": {"type": "string"}}}}}}},
            "responses": {"204": {"description": "done"}}}},
        "/clusters/{cluster_id}": {"delete": {"operationId": "destroy", "tags": ["k"],
            "parameters": [{"name": "cluster_id", "in": "path", "required": true, "schema": {"type": "string"}},
                           {"name": "force", "in": "query", "schema": {"type": "boolean"}}],
            "responses": {"204": {"description": "done"}}}},
        "/clusters/{cluster_id}/volumes": {"delete": {"operationId": "detach", "tags": ["k"],
            "parameters": [{"name": "cluster_id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object", "required": ["ids"],
                "properties": {"ids": {"type": "array", "items": {"type": "string"}},
                               "reason": {"type": "string"}}}}}},
            "responses": {"204": {"description": "done"}}}}
    }})
    .to_string();
    let import = toolgate_openapi::import(&text, &Options::default()).unwrap();
    assert!(import.skipped.is_empty(), "{}", import.summary());
    // Through TOML, as `serve` reads it.
    let table =
        toolgate_schema::RouteTable::from_toml_str(&toml::to_string(&import.tables[0]).unwrap()).unwrap();
    let executor =
        toolgate_http::HttpExecutor::new("http://127.0.0.1:9", toolgate_http::HttpOptions::default())
            .unwrap();
    let prepare =
        |params: Value| executor.prepare(table.route(params["op"].as_str().unwrap()).unwrap(), &params);

    // Required: sent, `{}` when no member is given, its members in the body.
    let selective = table.route("destroy_selective").unwrap();
    assert_eq!(selective.body, Body::Required);
    let sent = prepare(json!({"op": "destroy_selective", "cluster_id": "c1"})).unwrap();
    assert_eq!(
        (sent.url.as_str(), sent.body),
        ("http://127.0.0.1:9/clusters/c1/selective", Some(Default::default()))
    );
    let sent = prepare(json!({"op": "destroy_selective", "cluster_id": "c1", "volumes": ["v1"]})).unwrap();
    assert_eq!(sent.body.map(Value::Object), Some(json!({"volumes": ["v1"]})));

    // No requestBody: no body, its other fields in the query.
    let destroy = table.route("destroy").unwrap();
    assert_eq!(destroy.body, Body::Required, "the default, written as nothing");
    let sent = prepare(json!({"op": "destroy", "cluster_id": "c1", "force": true})).unwrap();
    assert_eq!((sent.url.as_str(), sent.body), ("http://127.0.0.1:9/clusters/c1?force=true", None));

    // Optional: sent only when a member is given, and then with the body's required ones.
    let detach = table.route("detach").unwrap();
    assert_eq!(detach.body, Body::Optional);
    assert_eq!(prepare(json!({"op": "detach", "cluster_id": "c1"})).unwrap().body, None);
    let err = prepare(json!({"op": "detach", "cluster_id": "c1", "reason": "x"})).unwrap_err();
    assert!(err.message.contains("ids") || format!("{:?}", err.details).contains("ids"), "{err:?}");
    let sent = prepare(json!({"op": "detach", "cluster_id": "c1", "ids": ["v1"]})).unwrap();
    assert_eq!(sent.body.map(Value::Object), Some(json!({"ids": ["v1"]})));
    // The TOML says so.
    let written = toml::to_string(&import.tables[0]).unwrap();
    assert!(written.contains("body = \"optional\""), "{written}");
}
