//! Real APIs served faithfully: path keys with a `#fragment` (Box) or a `?query` (OpenAI),
//! nullable fields (3.0 `nullable`, 3.1 `type: [T, "null"]` and `anyOf` with `null`), and
//! parameter names the model may not see as they are (`user_id`, `StartTime<`, `filter.name`).

use serde_json::{Value, json};
use toolgate_openapi::Options;
use toolgate_schema::{Route, RouteTable, Validator};

fn import(doc: Value) -> toolgate_openapi::Import {
    let import = toolgate_openapi::import(&doc.to_string(), &Options::default()).unwrap();
    for table in &import.tables {
        let toml = toml::to_string(table).unwrap();
        let back = RouteTable::from_toml_str(&toml).unwrap_or_else(|e| panic!("{}: {e}\n{toml}", table.tool));
        assert_eq!(&back, table, "{} survives TOML", table.tool);
    }
    import
}

fn route<'a>(import: &'a toolgate_openapi::Import, op: &str) -> &'a Route {
    import.tables.iter().flat_map(|t| &t.routes).find(|r| r.op == op).unwrap_or_else(|| {
        panic!("no op {op}: {}", import.summary());
    })
}

fn validator(import: &toolgate_openapi::Import, tool: &str) -> Validator {
    let table = import.tables.iter().find(|t| t.tool == tool).unwrap();
    Validator::new(&table.spec().unwrap().input_schema).unwrap()
}

fn doc(version: &str, paths: Value) -> Value {
    json!({"openapi": version, "info": {"title": "Real API", "version": "1"}, "paths": paths})
}

#[test]
fn a_fragment_is_not_sent_and_a_query_in_the_path_key_is_the_routes_fixed_query() {
    let file_id = json!([{"name": "file_id", "in": "path", "required": true, "schema": {"type": "string"}}]);
    let import = import(doc(
        "3.0.3",
        json!({
            // Box: two operations on one path, told apart in the document by the fragment only.
            "/files/{file_id}": {"get": {"tags": ["Files"], "parameters": file_id}},
            "/files/{file_id}#get_shared_link": {"get": {"tags": ["Files"], "parameters": file_id,
                "summary": "Get the shared link of a file"}},
            // OpenAI: `?beta=true` in the key; a declared `beta` parameter is fixed by it.
            "/assistants?beta=true": {"get": {"operationId": "listAssistants", "parameters": [
                {"name": "beta", "in": "query", "schema": {"type": "string"}},
                {"name": "limit", "in": "query", "schema": {"type": "integer"}}]}},
        }),
    ));
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    let plain = route(&import, "get_files_file_id");
    let link = route(&import, "get_files_file_id_get_shared_link");
    assert_eq!(plain.path, "/files/{file_id}");
    assert_eq!(link.path, "/files/{file_id}", "the fragment is never sent");
    assert_eq!(link.summary, "Get the shared link of a file");
    let list = route(&import, "list_assistants");
    assert_eq!(list.path, "/assistants?beta=true");
    assert_eq!(list.path_template(), "/assistants");
    assert_eq!(list.fixed_query(), [("beta".to_owned(), "true".to_owned())]);
    let names: Vec<&str> = list.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["limit"], "the fixed `beta` is not the model's to set");
    assert_eq!(import.tables.iter().find(|t| t.routes.contains(list)).unwrap().domain, "assistants");
}

#[test]
fn nullable_fields_of_3_0_and_3_1_admit_null() {
    let body = |props: Value| {
        json!({"post": {"operationId": "createDroplet", "tags": ["droplets"], "requestBody": {"required": true,
            "content": {"application/json": {"schema": {"type": "object", "required": ["name"], "properties": props}}}}}})
    };
    // DigitalOcean (3.0): `tags: null` in its own examples.
    let old = import(doc(
        "3.0.0",
        json!({"/v2/droplets": body(json!({
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "nullable": true},
            "size": {"type": "string", "enum": ["s-1vcpu", "s-2vcpu"], "nullable": true},
        }))}),
    ));
    let new = import(doc(
        "3.1.0",
        json!({"/v2/droplets": body(json!({
            "name": {"type": "string"},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}},
            "size": {"anyOf": [{"type": "string", "enum": ["s-1vcpu", "s-2vcpu"]}, {"type": "null"}]},
        }))}),
    ));
    for import in [&old, &new] {
        let r = route(import, "create_droplet");
        assert!(r.fields.iter().filter(|f| f.name != "name").all(|f| f.nullable), "{:?}", r.fields);
        assert!(!r.fields.iter().find(|f| f.name == "name").unwrap().nullable);
        let v = validator(import, "update_droplets");
        v.validate(&json!({"op": "create_droplet", "name": "web-1", "tags": null, "size": null})).unwrap();
        v.validate(&json!({"op": "create_droplet", "name": "web-1", "tags": ["a"], "size": "s-1vcpu"}))
            .unwrap();
        assert!(v.validate(&json!({"op": "create_droplet", "name": null})).is_err(), "name is not nullable");
        assert!(v.validate(&json!({"op": "create_droplet", "name": "w", "size": "huge"})).is_err());
    }
    // A path parameter is never null, whatever its schema says.
    let path = import(doc(
        "3.1.0",
        json!({"/v2/droplets/{id}": {"get": {"tags": ["droplets"], "parameters": [
            {"name": "id", "in": "path", "required": true, "schema": {"type": ["integer", "null"]}},
            {"name": "page", "in": "query", "schema": {"type": "integer", "nullable": true}}]}}}),
    ));
    let r = &path.tables[0].routes[0];
    assert!(!r.fields.iter().find(|f| f.name == "id").unwrap().nullable);
    assert!(r.fields.iter().find(|f| f.name == "page").unwrap().nullable);
}

#[test]
fn reserved_and_non_identifier_names_are_renamed_for_the_model_and_kept_for_the_wire() {
    let import = import(doc(
        "3.0.3",
        json!({
            // A user-admin API: the path's `user_id` names the user looked at, not the caller.
            "/users/{user_id}/posts": {"get": {"operationId": "listUserPosts", "tags": ["users"], "parameters": [
                {"name": "user_id", "in": "path", "required": true, "schema": {"type": "string"},
                 "description": "The user."},
                {"name": "StartTime<", "in": "query", "schema": {"type": "string", "format": "date-time"}},
                {"name": "StartTime>", "in": "query", "schema": {"type": "string", "format": "date-time"}},
                {"name": "filter.name", "in": "query", "schema": {"type": "string"}},
                {"name": "op", "in": "query", "schema": {"type": "string"}}]}},
            "/groups/{group-id}/members": {"post": {"operationId": "addMember", "tags": ["users"], "parameters": [
                {"name": "group-id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "requestBody": {"content": {"application/json": {"schema": {"type": "object",
                    "required": ["userId"], "properties": {"userId": {"type": "string"}}}}}}}},
        }),
    ));
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    let list = route(&import, "list_user_posts");
    assert_eq!(list.path, "/users/{target_user_id}/posts", "a path variable's name is not sent");
    let f = |r: &Route, n: &str| {
        r.fields.iter().find(|f| f.name == n).cloned().unwrap_or_else(|| panic!("no {n}"))
    };
    let user = f(list, "target_user_id");
    assert!(user.required && user.wire_name.is_none());
    let text = user.description.as_deref().unwrap();
    assert!(text.contains("not the caller") && text.contains("The user."), "{text}");
    for (model, wire) in
        [("StartTime_lt", "StartTime<"), ("StartTime_gt", "StartTime>"), ("filter_name", "filter.name")]
    {
        assert_eq!(f(list, model).wire_name.as_deref(), Some(wire));
        assert_eq!(list.wire_name(model), wire);
    }
    let op = f(list, "target_op");
    assert_eq!(op.wire_name.as_deref(), Some("op"));
    assert_eq!(op.description.as_deref(), Some("Sent to the API as `op`."), "not about the caller");
    let add = route(&import, "add_member");
    assert_eq!(add.path, "/groups/{group_id}/members");
    let member = f(add, "target_user_id");
    assert_eq!((member.wire_name.as_deref(), member.required), (Some("userId"), true));
    // The model's names pass the tool's schema; the reserved ones are still refused.
    let v = validator(&import, "query_users");
    v.validate(
        &json!({"op": "list_user_posts", "target_user_id": "u1", "StartTime_lt": "2026-01-01T00:00:00Z"}),
    )
    .unwrap();
    assert!(v.validate(&json!({"op": "list_user_posts", "user_id": "u1"})).is_err());
}
