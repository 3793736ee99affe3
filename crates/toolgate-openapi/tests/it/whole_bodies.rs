//! Bodies that are not an object of declared members, each one field sent as the body itself
//! (`body_field`): a JSON array (Petstore's `createUsersWithListInput`, `[User]`) as a field
//! named for its items, a free-form object (`additionalProperties` true or absent) as `body`,
//! and a raw binary body (`application/octet-stream`, `image/png`) as `content`, base64 text
//! the executor decodes and sends with the document's media type (`body_encoding = "binary"`),
//! and a string in another media type as text sent as it is (`body_encoding = "text"`).
//! What the executor prepares from each is checked too.

use serde_json::{Value, json};
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_openapi::Options;
use toolgate_schema::{Body, BodyEncoding, FieldType, Location};

use crate::common::{find, import_doc, validator};

fn import(paths: Value, schemas: Value) -> toolgate_openapi::Import {
    import_doc("3.0.3", "W", paths, schemas)
}

fn executor() -> HttpExecutor {
    HttpExecutor::new("http://127.0.0.1:9", HttpOptions::default().auth(Auth::None).max_upload_bytes(8))
        .unwrap()
}

fn body(content_type: &str, schema: Value) -> Value {
    json!({"required": true, "description": "What is sent.", "content": {content_type: {"schema": schema}}})
}

#[test]
fn petstore_3_0_maps_all_20_operations_and_sends_the_user_list_as_the_array_itself() {
    let text = include_str!("fixtures/petstore-3.0.json");
    let import = toolgate_openapi::import(text, &Options::default()).unwrap();
    assert_eq!(import.ops(), 20, "{}", import.summary());
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    let (table, route) = find(&import, "create_users_with_list_input");
    assert_eq!(route.body_field.as_deref(), Some("users"));
    assert_eq!(
        (route.body, route.body_encoding, route.content_type.as_deref()),
        (Body::Required, BodyEncoding::Json, None)
    );
    let users = &route.fields[0];
    assert_eq!((route.fields.len(), users.name.as_str(), users.ty), (1, "users", FieldType::Array));
    assert!(users.required);
    let description = users.description.as_deref().unwrap();
    assert!(description.starts_with("Sent as the request body itself: a JSON array."), "{description}");
    assert!(description.contains("List of user object"), "{description}");
    // The items are User objects, validated as any array field's.
    let v = validator(table);
    let good = json!({"op": "create_users_with_list_input", "users": [{"id": 1, "username": "ada"}]});
    v.validate(&good).expect("valid");
    let errors = v
        .validate(&json!({"op": "create_users_with_list_input", "users": [{"id": "one"}]}))
        .expect_err("an id is an integer");
    assert!(errors.iter().any(|e| e.pointer == "/users/0/id"), "{errors:?}");
    v.validate(&json!({"op": "create_users_with_list_input"})).expect_err("the body is required");
    let prepared = executor().prepare(route, &good).unwrap();
    assert_eq!(prepared.whole_body(), Some(("application/json", &br#"[{"id":1,"username":"ada"}]"#[..])));
}

#[test]
fn free_form_and_other_json_bodies_are_one_field_in_the_documents_json_type() {
    let import = import(
        json!({
            "/meta/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "post": {"operationId": "setMeta", "tags": ["m"], "requestBody": body("application/json",
                    json!({"type": "object", "additionalProperties": {"allOf": [{}, {"example": "Aaron"}]}}))},
                "patch": {"operationId": "noSchema", "tags": ["m"], "requestBody": {"content": {"application/json": {}}}},
                "put": {"operationId": "patchMeta", "tags": ["m"], "requestBody": body("application/json-patch+json",
                    json!({"type": "array", "items": {"$ref": "#/components/schemas/PatchOp"}}))},
                "delete": {"operationId": "dropKeys", "tags": ["m"], "requestBody": body("application/json",
                    json!({"type": "array", "items": {"type": "string"}}))}
            },
            "/levels": {"post": {"operationId": "addLevels", "tags": ["m"],
                "parameters": [{"name": "taxonomy_levels", "in": "query", "schema": {"type": "string"}}],
                "requestBody": body("application/json",
                    json!({"type": "array", "items": {"$ref": "#/components/schemas/TaxonomyLevel"}}))}},
            "/names": {"post": {"operationId": "setNames", "tags": ["m"], "requestBody": {"content": {
                "application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}}},
            "/ops": {"post": {"operationId": "runOps", "tags": ["m"], "requestBody": body("application/json",
                json!({"type": "array", "items": {"title": "A metadata update operation", "type": "object",
                    "properties": {"op": {"type": "string"}}}}))}},
            "/score": {"post": {"operationId": "setScore", "tags": ["m"], "requestBody": body("application/json",
                json!({"type": "number"}))}},
            "/form": {"post": {"operationId": "setForm", "tags": ["m"], "requestBody": {"content": {
                "application/x-www-form-urlencoded": {"schema": {"type": "object"}}}}}}
        }),
        json!({
            "PatchOp": {"type": "object", "required": ["op", "path"], "properties": {
                "op": {"type": "string", "enum": ["add", "remove"]}, "path": {"type": "string"}, "value": {}}},
            "TaxonomyLevel": {"type": "object", "properties": {"displayName": {"type": "string"}}}
        }),
    );
    let reasons: Vec<String> = import.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(reasons.len(), 1, "{reasons:#?}");
    assert!(reasons[0].starts_with("POST /form") && reasons[0].contains("not a form object"), "{reasons:#?}");

    // A free-form object: `body`, any members, sent as given.
    let (table, meta) = find(&import, "set_meta");
    assert_eq!(meta.body_field.as_deref(), Some("body"));
    let field = meta.fields.iter().find(|f| f.name == "body").unwrap();
    assert_eq!(field.ty, FieldType::Object);
    assert!(field.fields.is_empty() && field.values.is_some(), "{field:?}");
    let description = field.description.as_deref().unwrap();
    assert!(description.starts_with("Sent as the request body itself: a JSON object"), "{description}");
    let args = json!({"op": "set_meta", "id": "f1", "body": {"name": "Aaron", "n": [1, {"x": null}]}});
    validator(table).validate(&args).expect("any members");
    let prepared = executor().prepare(meta, &args).unwrap();
    let (content_type, bytes) = prepared.whole_body().unwrap();
    assert_eq!(content_type, "application/json");
    assert_eq!(serde_json::from_slice::<Value>(bytes).unwrap(), args["body"]);
    // No schema at all: any JSON value.
    let (_, any) = find(&import, "no_schema");
    assert_eq!((any.body_field.as_deref(), any.fields[1].ty), (Some("body"), FieldType::Any));
    assert_eq!(any.body, Body::Optional);
    assert!(!any.fields[1].required);

    // An array in a `+json` type: the type is kept, the items' required members too.
    let (table, patch) = find(&import, "patch_meta");
    assert_eq!(patch.body_field.as_deref(), Some("patch_ops"));
    assert_eq!(patch.content_type.as_deref(), Some("application/json-patch+json"));
    let args =
        json!({"op": "patch_meta", "id": "f1", "patch_ops": [{"op": "add", "path": "/a", "value": 1}]});
    validator(table).validate(&args).expect("valid");
    let errors = validator(table)
        .validate(&json!({"op": "patch_meta", "id": "f1", "patch_ops": [{"op": "add"}]}))
        .expect_err("`path` is required of an item");
    assert!(errors.iter().any(|e| e.pointer.starts_with("/patch_ops/0")), "{errors:?}");
    let prepared = executor().prepare(patch, &args).unwrap();
    assert_eq!(
        prepared.whole_body(),
        Some(("application/json-patch+json", &br#"[{"op":"add","path":"/a","value":1}]"#[..]))
    );

    // A DELETE's array body is in the body; a parameter of the same name keeps it.
    let (_, drop) = find(&import, "drop_keys");
    assert_eq!(drop.body_field.as_deref(), Some("items"));
    assert_eq!(drop.location("items"), Location::Body);
    let (_, levels) = find(&import, "add_levels");
    assert_eq!(levels.body_field.as_deref(), Some("body_taxonomy_levels"));
    assert_eq!(levels.location("taxonomy_levels"), Location::Query);
    let args =
        json!({"op": "add_levels", "taxonomy_levels": "q", "body_taxonomy_levels": [{"displayName": "A"}]});
    let prepared = executor().prepare(levels, &args).unwrap();
    assert_eq!(prepared.url.query(), Some("taxonomy_levels=q"));
    assert_eq!(prepared.whole_body().unwrap().1, br#"[{"displayName":"A"}]"#);
    // Items without a name: `items`; an optional body is sent only when given.
    let (_, names) = find(&import, "set_names");
    assert_eq!((names.body_field.as_deref(), names.body), (Some("items"), Body::Optional));
    assert!(executor().prepare(names, &json!({"op": "set_names"})).unwrap().whole_body().is_none());
    // Inline items with a title of a few words: named by it, without its article.
    let (_, ops) = find(&import, "run_ops");
    assert_eq!(ops.body_field.as_deref(), Some("metadata_update_operations"));
    // A number is a JSON body too.
    let (_, score) = find(&import, "set_score");
    let prepared = executor().prepare(score, &json!({"op": "set_score", "body": 2.5})).unwrap();
    assert_eq!(prepared.whole_body(), Some(("application/json", &b"2.5"[..])));
}

#[test]
fn a_raw_binary_body_is_base64_text_sent_decoded_in_the_documents_media_type() {
    let binary = json!({"type": "string", "format": "binary", "description": "The bytes of the part."});
    let import = import(
        json!({
            "/sessions/{id}": {"put": {"operationId": "uploadPart", "tags": ["f"],
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "digest", "in": "header", "required": true, "schema": {"type": "string"}}],
                "requestBody": body("application/octet-stream", binary.clone())}},
            "/avatar": {"post": {"operationId": "setAvatar", "tags": ["f"], "requestBody": {"content": {
                "image/png": {"schema": {"type": "string", "format": "binary"}},
                "image/jpeg": {"schema": {"type": "string", "format": "binary"}}}}}},
            "/any": {"post": {"operationId": "anyBytes", "tags": ["f"], "requestBody": {"content": {"*/*": {}}}}},
            "/image": {"post": {"operationId": "someImage", "tags": ["f"], "requestBody": {"content": {
                "image/*": {"schema": {"type": "string", "format": "binary"}}}}}},
            "/covers/{id}": {"put": {"operationId": "setCover", "tags": ["f"],
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "requestBody": body("image/jpeg", json!({"type": "string", "format": "base64",
                    "description": "Base64 encoded JPEG image data."}))}},
            "/gone": {"delete": {"operationId": "dropBytes", "tags": ["f"],
                "requestBody": body("application/octet-stream", binary)}}
        }),
        json!({}),
    );
    let reasons: Vec<String> = import.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(reasons.len(), 2, "{reasons:#?}");
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("POST /image") && r.contains("`image/*`, which names no one media type")),
        "{reasons:#?}"
    );
    assert!(
        reasons.iter().any(|r| r.starts_with("DELETE /gone") && r.contains("binary body")),
        "{reasons:#?}"
    );

    let (table, part) = find(&import, "upload_part");
    assert_eq!((part.body_encoding, part.body_field.as_deref()), (BodyEncoding::Binary, Some("content")));
    assert_eq!((part.body, part.content_type.as_deref()), (Body::Required, None));
    let content = part.fields.iter().find(|f| f.name == "content").unwrap();
    assert!(content.is_base64_file() && content.required && content.format.is_none(), "{content:?}");
    let description = content.description.as_deref().unwrap();
    assert!(description.contains("base64-encoded") && description.contains("`application/octet-stream`"));
    assert!(description.ends_with("The bytes of the part."), "{description}");
    let schema = table.schema();
    let branch =
        schema["oneOf"].as_array().unwrap().iter().find(|b| b["properties"]["op"]["const"] == "upload_part");
    assert_eq!(branch.unwrap()["properties"]["content"]["contentEncoding"], "base64");
    let args = json!({"op": "upload_part", "id": "s1", "digest": "sha=1", "content": "AP8Q"});
    validator(table).validate(&args).expect("valid");
    let prepared = executor().prepare(part, &args).unwrap();
    assert_eq!(prepared.whole_body(), Some(("application/octet-stream", &[0u8, 0xff, 0x10][..])));
    assert_eq!(prepared.headers, [("digest".to_owned(), "sha=1".to_owned())]);
    // Not base64, or over the upload limit (8 bytes here): refused before any request.
    for content in ["not base64!", "AAAAAAAAAAAA"] {
        let args = json!({"op": "upload_part", "id": "s1", "digest": "d", "content": content});
        let error = executor().prepare(part, &args).unwrap_err();
        assert_eq!(error.code, toolgate_core::ErrorCode::InvalidParams, "{content}: {error:?}");
    }

    // The first of several concrete types; `*/*` as application/octet-stream.
    let (_, avatar) = find(&import, "set_avatar");
    assert_eq!(avatar.content_type.as_deref(), Some("image/png"));
    let prepared = executor().prepare(avatar, &json!({"op": "set_avatar", "content": "iVBO"})).unwrap();
    assert_eq!(prepared.whole_body().unwrap().0, "image/png");
    let (_, any) = find(&import, "any_bytes");
    assert_eq!(
        (any.body_encoding, any.content_type_header()),
        (BodyEncoding::Binary, "application/octet-stream")
    );

    // A string in another media type (Spotify's playlist cover: base64 text as image/jpeg) is
    // a text body, sent as it is given.
    let (_, cover) = find(&import, "set_cover");
    assert_eq!(
        (cover.body_encoding, cover.content_type.as_deref()),
        (BodyEncoding::Text, Some("image/jpeg"))
    );
    let content = cover.fields.iter().find(|f| f.name == "content").unwrap();
    assert!(content.required && !content.is_base64_file(), "{content:?}");
    assert!(content.description.as_deref().unwrap().ends_with("Base64 encoded JPEG image data."));
    let prepared =
        executor().prepare(cover, &json!({"op": "set_cover", "id": "p", "content": "/9j/"})).unwrap();
    assert_eq!(prepared.whole_body(), Some(("image/jpeg", &b"/9j/"[..])));
}
