//! Unions, free-form objects and schemas too deep for a table: `oneOf`/`anyOf` fields keep their
//! branches in the tool's schema (validated as such), `additionalProperties` objects take their
//! keys, and a recursive or very deep schema is cut to a free-form object with a note; body
//! members named like a parameter and header parameters are mapped too.

use serde_json::{Value, json};
use toolgate_openapi::Options;
use toolgate_schema::{FieldType, Location, RouteTable};

use crate::common::{find, import_doc, validator};

fn import(paths: Value, schemas: Value) -> toolgate_openapi::Import {
    import_doc("3.1.0", "U", paths, schemas)
}

#[test]
fn union_fields_keep_their_branches_and_are_validated_by_them() {
    let import = import(
        json!({"/things/{ref}": {"put": {"operationId": "put", "parameters": [
            {"name": "ref", "in": "path", "required": true, "schema": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "properties": {
                "size": {"oneOf": [{"type": "string", "enum": ["s", "m"]}, {"type": "integer", "minimum": 1}]},
                "either": {"type": ["string", "integer", "null"]},
                "shape": {"oneOf": [{"$ref": "#/components/schemas/Circle"}, {"$ref": "#/components/schemas/Square"}]}}}}}}}}}),
        json!({"Circle": {"type": "object", "required": ["r"], "properties": {"r": {"type": "number"}}},
               "Square": {"type": "object", "required": ["side"], "properties": {"side": {"type": "number"}}}}),
    );
    let (table, route) = find(&import, "put");
    let field = |n: &str| route.fields.iter().find(|f| f.name == n).unwrap();
    assert_eq!((field("size").ty, field("size").one_of.len()), (FieldType::Any, 2));
    assert!(field("either").nullable && field("either").any_of.len() == 2);
    let v = validator(table);
    let call = |extra: Value| {
        let mut c = json!({"op": "put", "ref": 7});
        c.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        c
    };
    for good in [
        json!({"size": "s"}),
        json!({"size": 3}),
        json!({"either": null}),
        json!({"either": 2}),
        json!({"shape": {"r": 1.5}}),
        json!({"shape": {"side": 2}}),
    ] {
        v.validate(&call(good.clone())).unwrap_or_else(|e| panic!("{good}: {e:?}"));
    }
    v.validate(&json!({"op": "put", "ref": "abc"})).expect("the path's union of scalars");
    for bad in [
        json!({"size": "xl"}),
        json!({"size": 0}),
        json!({"either": true}),
        json!({"shape": {"r": 1, "side": 2}}),
        json!({"shape": {}}),
    ] {
        assert!(v.validate(&call(bad.clone())).is_err(), "{bad} must be refused");
    }
    assert!(v.validate(&json!({"op": "put", "ref": [1]})).is_err());
}

#[test]
fn free_form_objects_and_maps_take_their_keys() {
    let import = import(
        json!({"/meta": {"patch": {"operationId": "set", "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "properties": {
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "anything": {"type": "object", "additionalProperties": true},
                "bare": {"type": "object"},
                "config": {"type": "object", "properties": {"pg.role": {"type": "string"}}},
                "untyped": {"description": "Any value."}}}}}}}}}),
        json!({}),
    );
    assert!(import.skipped.is_empty(), "{:#?}", import.skipped);
    let (table, route) = find(&import, "set");
    // A member that is not an identifier is one under a name that is, sent under its own.
    let config = route.fields.iter().find(|f| f.name == "config").unwrap();
    let role = &config.fields[0];
    assert_eq!((role.name.as_str(), role.wire_name.as_deref()), ("pg_role", Some("pg.role")), "{config:?}");
    assert!(role.description.as_deref().unwrap().contains("`pg.role`"), "{config:?}");
    let v = validator(table);
    let call = json!({"op": "set", "labels": {"env": "prod"}, "anything": {"a": [1, {"b": null}]}, "bare": {"x": 1},
        "config": {"pg_role": "admin"}, "untyped": [1, "two"]});
    v.validate(&call).unwrap();
    let executor =
        toolgate_http::HttpExecutor::new("http://127.0.0.1:9", toolgate_http::HttpOptions::default())
            .unwrap();
    let sent = executor.prepare(route, &call).unwrap().body.unwrap();
    assert_eq!(sent["config"], json!({"pg.role": "admin"}));
    assert!(v.validate(&json!({"op": "set", "labels": {"env": 1}})).is_err(), "a map of strings");
    assert!(v.validate(&json!({"op": "set", "anything": "text"})).is_err(), "still an object");
}

#[test]
fn recursive_and_too_deep_schemas_are_cut_to_a_free_form_object_with_a_note() {
    let mut deep = json!({"type": "string"});
    for _ in 0..30 {
        deep = json!({"type": "object", "properties": {"next": deep}});
    }
    let import = import(
        json!({"/tree": {"post": {"operationId": "plant", "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "properties": {"root": {"$ref": "#/components/schemas/Node"}, "deep": deep}}}}}}}}),
        json!({"Node": {"type": "object", "description": "A node.", "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            "parent": {"$ref": "#/components/schemas/Node"}}}}),
    );
    let (table, route) = find(&import, "plant");
    let root = route.fields.iter().find(|f| f.name == "root").unwrap();
    let parent = root.fields.iter().find(|f| f.name == "parent").unwrap();
    assert_eq!(parent.ty, FieldType::Object);
    assert!(parent.values.is_some() && parent.fields.is_empty());
    let note = parent.description.as_deref().unwrap();
    assert!(note.starts_with("A node.") && note.contains("`Node` contains itself"), "{note}");
    let mut depth = 0;
    let mut at = route.fields.iter().find(|f| f.name == "deep").unwrap().shape.clone();
    while let Some(next) = at.fields.first() {
        at = next.shape.clone();
        depth += 1;
    }
    assert!(depth <= 16 && at.values.is_some(), "cut at {depth}");
    assert!(at.description.as_deref().unwrap().contains("deeper than 16 levels"));
    let v = validator(table);
    v.validate(&json!({"op": "plant", "root": {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}], "parent": {"name": "p"}}}))
        .unwrap();
    assert!(v.validate(&json!({"op": "plant", "root": {"name": 1}})).is_err(), "the levels kept are checked");
}

#[test]
fn body_members_named_like_a_parameter_and_header_parameters_are_mapped() {
    let import = import(
        json!({"/agents/{uuid}": {"put": {"operationId": "update", "parameters": [
            {"name": "uuid", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "X-Dangerous", "in": "header", "required": true, "schema": {"type": "boolean"}},
            {"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}},
            {"name": "Accept", "in": "header", "schema": {"type": "string"}}],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
                "uuid": {"type": "string", "description": "The agent."}, "name": {"type": "string"}}}}}}}}}),
        json!({}),
    );
    let (_, route) = find(&import, "update");
    let names: Vec<(&str, &str, Location)> =
        route.fields.iter().map(|f| (f.name.as_str(), f.sent_name(), route.location(&f.name))).collect();
    assert_eq!(
        names,
        [
            ("uuid", "uuid", Location::Path),
            ("X_Dangerous", "X-Dangerous", Location::Header),
            ("Idempotency_Key", "Idempotency-Key", Location::Header),
            ("body_uuid", "uuid", Location::Body),
            ("name", "name", Location::Body),
        ]
    );
    let body_uuid = route.fields.iter().find(|f| f.name == "body_uuid").unwrap();
    assert!(body_uuid.description.as_deref().unwrap().starts_with("Sent in the body as `uuid`"));
    assert!(route.fields.iter().find(|f| f.name == "X_Dangerous").unwrap().required);
}

const AGENTS: &str = r#"{"openapi": "3.1.0", "info": {"title": "Agents", "version": "1"}, "paths": {
  "/agents/{uuid}": {
    "put": {"operationId": "update_agent", "tags": ["agents"], "parameters": [
        {"name": "uuid", "in": "path", "required": true, "schema": {"type": "string"}},
        {"name": "X-Dangerous", "in": "header", "required": true, "schema": {"type": "boolean"}}],
      "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["uuid"], "properties": {
        "uuid": {"type": "string"},
        "size": {"oneOf": [{"type": "string", "enum": ["s", "m"]}, {"type": "integer", "minimum": 1}]},
        "labels": {"type": "object", "additionalProperties": true}}}}}}},
    "delete": {"operationId": "delete_agent", "tags": ["agents"], "parameters": [
        {"name": "uuid", "in": "path", "required": true, "schema": {"type": "string"}},
        {"name": "force", "in": "query", "schema": {"type": "boolean"}}],
      "requestBody": {"content": {"application/json": {"schema": {"type": "object", "required": ["volumes"], "properties": {
        "volumes": {"type": "array", "items": {"type": "string"}}}}}}}}}}}"#;

#[test]
fn the_executor_sends_unions_free_form_objects_renamed_members_headers_and_a_deletes_body_as_documented() {
    let import = toolgate_openapi::import(AGENTS, &Options::default()).unwrap();
    assert!(import.skipped.is_empty(), "{}", import.summary());
    let table = RouteTable::from_toml_str(&toml::to_string(&import.tables[0]).unwrap()).unwrap();
    let executor =
        toolgate_http::HttpExecutor::new("http://127.0.0.1:9", toolgate_http::HttpOptions::default())
            .unwrap();
    let v = validator(&table);

    let call = json!({"op": "update_agent", "uuid": "a1", "X_Dangerous": true, "body_uuid": "a1",
        "size": 3, "labels": {"team": {"name": "x"}, "n": [1, 2]}});
    v.validate(&call).unwrap();
    let sent = executor.prepare(table.route("update_agent").unwrap(), &call).unwrap();
    assert_eq!(sent.url.as_str(), "http://127.0.0.1:9/agents/a1");
    assert_eq!(sent.headers, [("X-Dangerous".to_owned(), "true".to_owned())]);
    let body = Value::Object(sent.body.unwrap());
    assert_eq!(body, json!({"uuid": "a1", "size": 3, "labels": {"team": {"name": "x"}, "n": [1, 2]}}));
    assert!(
        v.validate(
            &json!({"op": "update_agent", "uuid": "a1", "X_Dangerous": true, "body_uuid": "a1", "size": 0})
        )
        .is_err()
    );

    // A DELETE's body: sent only when one of its fields is given; an optional body's fields optional.
    let delete = table.route("delete_agent").unwrap();
    let bare = json!({"op": "delete_agent", "uuid": "a1", "force": true});
    v.validate(&bare).unwrap();
    let sent = executor.prepare(delete, &bare).unwrap();
    assert_eq!((sent.url.as_str(), sent.body), ("http://127.0.0.1:9/agents/a1?force=true", None));
    let with_body = json!({"op": "delete_agent", "uuid": "a1", "volumes": ["v1"]});
    let sent = executor.prepare(delete, &with_body).unwrap();
    assert_eq!(sent.url.as_str(), "http://127.0.0.1:9/agents/a1");
    assert_eq!(sent.body.map(Value::Object), Some(json!({"volumes": ["v1"]})));
}

#[test]
fn required_names_the_properties_do_not_declare_stay_required_and_unnamable_members_are_renamed() {
    let import = import(
        json!({"/checks": {"post": {"operationId": "create_check", "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "type": "object", "required": ["name", "method"], "properties": {
                "name": {"type": "string"},
                "actionable_by": {"type": "object", "required": ["id"], "properties": {"login": {"type": "string"}}},
                "logtail": {"type": "object", "required": ["endpoint"], "properties": {
                    "endpoint": {"type": "string"}, "token": {"type": "string"}}}}}}}}}}}),
        json!({}),
    );
    let (table, route) = find(&import, "create_check");
    let method = route.fields.iter().find(|f| f.name == "method").expect("the undeclared required member");
    assert!(method.required && method.ty == FieldType::Any);
    let v = validator(table);
    let call = json!({"op": "create_check", "name": "n", "method": "GET",
        "actionable_by": {"id": "7", "login": "a@b"}, "logtail": {"endpoint": "https://l", "target_token": "t"}});
    v.validate(&call).unwrap();
    // `token` is a name toolgate fills in: the member is `target_token`, sent as `token`.
    let logtail = route.fields.iter().find(|f| f.name == "logtail").unwrap();
    let token = logtail.fields.iter().find(|f| f.name == "target_token").expect("renamed member");
    assert_eq!(token.wire_name.as_deref(), Some("token"));
    assert!(token.description.as_deref().unwrap().contains("`token`"), "{:?}", token.description);
    let executor =
        toolgate_http::HttpExecutor::new("http://127.0.0.1:9", toolgate_http::HttpOptions::default())
            .unwrap();
    let sent = executor.prepare(route, &call).unwrap().body.unwrap();
    assert_eq!(sent["logtail"], json!({"endpoint": "https://l", "token": "t"}));
    let mut without = call.clone();
    without.as_object_mut().unwrap().remove("method");
    assert!(v.validate(&without).is_err(), "`method` is still required");
    for (member, value) in
        [("actionable_by", json!({"login": "a@b"})), ("logtail", json!({"target_token": "t"}))]
    {
        let mut bad = call.clone();
        bad[member] = value.clone();
        assert!(v.validate(&bad).is_err(), "{member} {value} misses its required member");
    }
}

#[test]
fn a_member_with_a_reserved_name_keeps_its_object_typed_and_its_required_fields() {
    // Box's `post_integration_mappings_teams`: `partner_item` is an `allOf` of one `$ref`
    // whose required members include `tenant_id`, a name toolgate reserves for the caller.
    let import = import(
        json!({"/integration_mappings/teams": {"post": {"operationId": "post_integration_mappings_teams",
            "requestBody": {"content": {"application/json": {"schema": {"type": "object",
                "required": ["partner_item"],
                "properties": {"partner_item": {"allOf": [{"$ref": "#/components/schemas/Partner"}]}}}}}}}}}),
        json!({"Partner": {"type": "object", "required": ["id", "type", "tenant_id", "team_id"], "properties": {
            "type": {"type": "string", "enum": ["channel", "team"]},
            "id": {"type": "string"},
            "tenant_id": {"type": "string", "description": "ID of the tenant registered with Teams."},
            "team_id": {"type": "string"}}}}),
    );
    assert!(import.skipped.is_empty(), "{}", import.summary());
    let (table, route) = find(&import, "post_integration_mappings_teams");
    let item = route.fields.iter().find(|f| f.name == "partner_item").unwrap();
    assert_eq!(item.ty, FieldType::Object);
    assert!(item.values.is_none(), "a closed object, not a free-form one");
    let members: Vec<(&str, bool, Option<&str>)> =
        item.fields.iter().map(|f| (f.name.as_str(), f.required, f.wire_name.as_deref())).collect();
    assert_eq!(
        members,
        [
            ("type", true, None),
            ("id", true, None),
            ("target_tenant_id", true, Some("tenant_id")),
            ("team_id", true, None)
        ]
    );
    let v = validator(table);
    let call = json!({"op": "post_integration_mappings_teams",
        "partner_item": {"type": "channel", "id": "19:x", "target_tenant_id": "t1", "team_id": "g1"}});
    v.validate(&call).unwrap();
    let mut missing = call.clone();
    missing["partner_item"].as_object_mut().unwrap().remove("target_tenant_id");
    assert!(v.validate(&missing).is_err(), "the tenant is required by the API");
    let executor =
        toolgate_http::HttpExecutor::new("http://127.0.0.1:9", toolgate_http::HttpOptions::default())
            .unwrap();
    let sent = executor.prepare(route, &call).unwrap().body.unwrap();
    assert_eq!(
        sent["partner_item"],
        json!({"type": "channel", "id": "19:x", "tenant_id": "t1", "team_id": "g1"})
    );
}
