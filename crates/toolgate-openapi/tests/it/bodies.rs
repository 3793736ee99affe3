//! Bodies that are not one JSON object: a `multipart/form-data` body (file uploads) is a
//! multipart route whose `format: binary` members are files given as base64 text, sent decoded
//! by the executor; a body that is a `oneOf`/`anyOf` of objects is one route per branch, each
//! with its own fields and required ones, so that every call is valid against the document.

use serde_json::{Value, json};
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_schema::{BodyEncoding, Route};

use crate::common::{find, import_doc, validator};

fn import(paths: Value, schemas: Value) -> toolgate_openapi::Import {
    import_doc("3.1.0", "B", paths, schemas)
}

fn multipart(schema: Value, encoding: Value) -> Value {
    json!({"post": {"operationId": "upload", "tags": ["files"], "requestBody": {"required": true,
        "content": {"multipart/form-data": {"schema": schema, "encoding": encoding}}}}})
}

#[test]
fn a_multipart_body_is_a_multipart_route_with_its_files_as_base64_text() {
    let upload = json!({"type": "object", "required": ["file", "purpose"], "properties": {
        "file": {"type": "string", "format": "binary", "description": "The file."},
        "purpose": {"type": "string", "enum": ["batch", "vision"]},
        "attributes": {"type": "object", "properties": {"name": {"type": "string"}}},
        "images": {"type": "array", "items": {"type": "string", "format": "binary"}},
        "clip": {"type": "string", "contentMediaType": "audio/mpeg"},
        "n": {"type": "integer"}}});
    let import = import(
        json!({
            "/files": multipart(upload, json!({"images": {"contentType": "image/png, image/jpeg"}})),
            "/calls": {"post": {"operationId": "call", "requestBody": {"content": {"multipart/form-data": {
                "schema": {"type": "object", "properties": {"sdp": {"type": "string"}}},
                "encoding": {"sdp": {"contentType": "application/sdp"}}}}}}},
            "/raw": {"put": {"operationId": "raw", "requestBody": {"content": {"application/octet-stream": {
                "schema": {"type": "string", "format": "binary"}}}}}}
        }),
        json!({}),
    );
    let reasons: Vec<String> = import.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(reasons.len(), 1, "{reasons:#?}");
    assert!(
        reasons.iter().any(
            |r| r.starts_with("POST /calls") && r.contains("part `sdp` is to be sent as application/sdp")
        ),
        "{reasons:#?}"
    );
    // A raw octet-stream body is a binary route now (`whole_bodies.rs`).
    assert_eq!(find(&import, "raw").1.body_encoding, BodyEncoding::Binary);
    let (table, route) = find(&import, "upload");
    assert_eq!(route.body_encoding, BodyEncoding::Multipart);
    let field = |name: &str| route.fields.iter().find(|f| f.name == name).unwrap();
    assert!(field("file").is_base64_file() && field("file").required && field("file").format.is_none());
    assert!(
        field("file").description.as_deref().unwrap().starts_with("A file: give its bytes base64-encoded")
    );
    assert!(field("file").description.as_deref().unwrap().ends_with("The file."));
    assert!(field("images").items.as_deref().unwrap().is_base64_file());
    assert!(field("clip").is_base64_file(), "3.1 contentMediaType");
    assert!(!field("purpose").is_base64_file() && !field("n").is_base64_file());
    let schema = table.schema();
    let branch = schema["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["op"]["const"] == "upload")
        .unwrap();
    assert_eq!(branch["properties"]["file"]["contentEncoding"], "base64");
    assert_eq!(branch["properties"]["images"]["items"]["contentEncoding"], "base64");
    let v = validator(table);
    v.validate(&json!({"op": "upload", "file": "aGk=", "purpose": "batch"})).expect("valid");
    v.validate(&json!({"op": "upload", "purpose": "batch"})).expect_err("file is required");

    // The executor sends the table as written: the file decoded, the object as JSON.
    let executor = HttpExecutor::new("http://127.0.0.1:9", HttpOptions::default().auth(Auth::None)).unwrap();
    let params =
        json!({"op": "upload", "file": "aGk=", "purpose": "batch", "attributes": {"name": "a"}, "n": 2});
    let prepared = executor.prepare(route, &params).unwrap();
    let (content_type, bytes) = prepared.multipart().expect("a multipart body");
    let boundary =
        content_type.strip_prefix("multipart/form-data; boundary=").expect(&content_type).to_owned();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    for part in [
        "Content-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\nhi\r\n",
        "Content-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n",
        "Content-Disposition: form-data; name=\"attributes\"\r\nContent-Type: application/json\r\n\r\n{\"name\":\"a\"}\r\n",
        "Content-Disposition: form-data; name=\"n\"\r\n\r\n2\r\n",
    ] {
        assert!(text.contains(&format!("--{boundary}\r\n{part}")), "{part}: {text}");
    }
    assert!(text.ends_with(&format!("--{boundary}--\r\n")), "{text}");
}

#[test]
fn a_union_body_of_objects_is_one_route_per_branch_with_its_own_required_fields() {
    let import = import(
        json!({
            // OpenAI's file batches: shared members, and which of two lists is required.
            "/batches": {"post": {"operationId": "createBatch", "tags": ["b"], "summary": "Create a batch",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object", "additionalProperties": false,
                    "properties": {"file_ids": {"type": "array", "items": {"type": "string"}},
                        "files": {"type": "array", "items": {"type": "object", "properties": {"file_id": {"type": "string"}}}},
                        "attributes": {"type": "object", "additionalProperties": true}},
                    "anyOf": [{"required": ["file_ids"]}, {"required": ["files"]}]}}}}}},
            // Branches by reference, told apart by a discriminator.
            "/pets": {"post": {"operationId": "addPet", "tags": ["b"], "summary": "Add a pet",
                "requestBody": {"content": {"application/json": {"schema": {
                    "oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
                    "discriminator": {"propertyName": "kind", "mapping": {
                        "cat": "#/components/schemas/Cat", "dog": "#/components/schemas/Dog"}}}}}}}},
            // A branch that is not an object: nothing to give as fields.
            "/notes": {"post": {"operationId": "addNote", "tags": ["b"], "requestBody": {"content": {
                "application/json": {"schema": {"oneOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "string"}]}}}}}}
        }),
        json!({
            "Cat": {"type": "object", "required": ["name"], "properties": {
                "kind": {"type": "string"}, "name": {"type": "string"}, "lives": {"type": "integer"}}},
            "Dog": {"type": "object", "required": ["name", "breed"], "properties": {
                "kind": {"type": "string"}, "name": {"type": "string"}, "breed": {"type": "string"}}}
        }),
    );
    let reasons: Vec<String> = import.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(reasons.len(), 1, "{reasons:#?}");
    assert!(
        reasons[0].starts_with("POST /notes") && reasons[0].contains("a branch that is not an object"),
        "{reasons:#?}"
    );
    let names = |route: &Route| -> Vec<(String, bool)> {
        route.fields.iter().map(|f| (f.name.clone(), f.required)).collect()
    };
    let (table, ids) = find(&import, "create_batch_file_ids");
    assert_eq!(ids.summary, "Create a batch (body form with `file_ids`, one of 2)");
    assert_eq!(
        names(ids),
        [("file_ids".into(), true), ("attributes".into(), false)],
        "`files` is the other form's"
    );
    let (_, files) = find(&import, "create_batch_files");
    assert_eq!(names(files), [("attributes".into(), false), ("files".into(), true)]);
    assert!(table.route("create_batch").is_none());
    let v = validator(table);
    v.validate(&json!({"op": "create_batch_file_ids", "file_ids": ["f1"]})).expect("valid");
    v.validate(&json!({"op": "create_batch_file_ids", "file_ids": ["f1"], "files": []}))
        .expect_err("not this form's");
    v.validate(&json!({"op": "create_batch_files"})).expect_err("files is required");

    let (_, cat) = find(&import, "add_pet_cat");
    assert_eq!(cat.summary, "Add a pet (body form `cat`, one of 2)");
    assert_eq!(names(cat), [("kind".into(), true), ("name".into(), true), ("lives".into(), false)]);
    let kind = cat.fields.iter().find(|f| f.name == "kind").unwrap();
    assert_eq!(kind.enum_values, Some(vec![json!("cat")]), "the discriminator's value for this branch");
    let (_, dog) = find(&import, "add_pet_dog");
    assert_eq!(names(dog), [("kind".into(), true), ("name".into(), true), ("breed".into(), true)]);
    v.validate(&json!({"op": "add_pet_dog", "kind": "dog", "name": "Rex", "breed": "lab"})).expect("valid");
    v.validate(&json!({"op": "add_pet_dog", "kind": "cat", "name": "Rex", "breed": "lab"}))
        .expect_err("a dog's kind");
}
