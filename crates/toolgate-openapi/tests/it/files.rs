//! Multi-file documents: operations, path items, parameters and schemas given as relative file
//! `$ref`s are read from the document's folder (never the network, never outside it); a
//! document given as text reports such operations instead of importing them empty.

use std::path::Path;

use toolgate_openapi::{Error, Options, import, import_file};

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const ROOT: &str = r#"openapi: "3.0.0"
info: {title: Split, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /v2/keys:
    get:
      $ref: "resources/keys/list.yml"
    post:
      $ref: "resources/keys/create.yml"
  /v2/keys/{key_id}:
    $ref: "paths/key.yml"
"#;

fn split_document(dir: &Path) {
    write(dir, "openapi.yaml", ROOT);
    write(
        dir,
        "resources/keys/list.yml",
        r#"operationId: keys_list
tags: [Keys]
parameters:
  - $ref: "../../shared/parameters.yml#/per_page"
responses: {"200": {description: ok}}
"#,
    );
    write(
        dir,
        "resources/keys/create.yml",
        r#"operationId: keys_create
tags: [Keys]
requestBody:
  required: true
  content:
    application/json:
      schema:
        $ref: "models/key.yml"
responses: {"201": {description: created}}
"#,
    );
    // A local reference inside a referenced file points into that file.
    write(
        dir,
        "resources/keys/models/key.yml",
        r##"type: object
required: [name]
properties:
  name: {type: string, maxLength: 255}
  public_key:
    $ref: "#/definitions/public_key"
definitions:
  public_key: {type: string, description: The whole public key.}
"##,
    );
    write(
        dir,
        "shared/parameters.yml",
        r#"per_page: {name: per_page, in: query, schema: {type: integer, minimum: 1, maximum: 200}}
"#,
    );
    write(
        dir,
        "paths/key.yml",
        r#"get:
  operationId: keys_get
  tags: [Keys]
  parameters:
    - {name: key_id, in: path, required: true, schema: {type: integer}}
  responses: {"200": {description: ok}}
"#,
    );
}

#[test]
fn operations_path_items_parameters_and_schemas_are_read_from_the_documents_folder() {
    let dir = tempfile::tempdir().unwrap();
    split_document(dir.path());
    let import = import_file(&dir.path().join("openapi.yaml"), &Options::default()).unwrap();
    assert!(import.skipped.is_empty(), "{:#?}", import.skipped);
    assert_eq!(import.ops(), 3, "{}", import.summary());
    let route = |op: &str| import.tables.iter().find_map(|t| t.route(op)).unwrap_or_else(|| panic!("{op}"));
    let per_page = route("keys_list").fields.iter().find(|f| f.name == "per_page").expect("shared parameter");
    assert_eq!((per_page.minimum, per_page.maximum), (Some(1.0), Some(200.0)));
    let create = route("keys_create");
    let names: Vec<&str> = create.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "public_key"]);
    assert!(create.fields[0].required && create.fields[0].max_length == Some(255));
    assert_eq!(create.fields[1].description.as_deref(), Some("The whole public key."));
    assert_eq!(route("keys_get").path, "/v2/keys/{key_id}");
}

#[test]
fn a_document_given_as_text_reports_its_file_references_instead_of_importing_them_empty() {
    let err = import(ROOT, &Options::default()).unwrap_err();
    let Error::Nothing { skipped } = err else { panic!("{err:?}") };
    assert_eq!(skipped.len(), 3, "{skipped:#?}");
    for s in &skipped {
        assert!(s.reason.contains("external $ref") && s.reason.contains("import its file"), "{s}");
    }
    assert_eq!(skipped[2].path, "/v2/keys/{key_id}");
}

fn refused(dir: &Path) -> String {
    match import_file(&dir.join("openapi.yaml"), &Options::default()) {
        Err(Error::Reference(message)) => message,
        other => panic!("{other:?}"),
    }
}

#[test]
fn network_references_files_outside_the_folder_and_missing_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    split_document(dir.path());
    let create = dir.path().join("resources/keys/create.yml");
    let original = std::fs::read_to_string(&create).unwrap();
    std::fs::write(&create, original.replace("models/key.yml", "https://evil.example/key.yml")).unwrap();
    let message = refused(dir.path());
    assert!(message.contains("https://evil.example/key.yml") && message.contains("network"), "{message}");

    std::fs::write(&create, original.replace("models/key.yml", "../../../../etc/passwd")).unwrap();
    let message = refused(dir.path());
    assert!(message.contains("outside the document's folder"), "{message}");

    std::fs::write(&create, original.replace("models/key.yml", "models/gone.yml")).unwrap();
    let message = refused(dir.path());
    assert!(message.contains("models/gone.yml") && message.contains("create.yml"), "{message}");

    // A referenced file that does not parse names itself.
    std::fs::write(&create, original).unwrap();
    write(dir.path(), "resources/keys/models/key.yml", "type: [unclosed\n");
    let err = import_file(&dir.path().join("openapi.yaml"), &Options::default()).unwrap_err();
    assert!(err.to_string().contains("key.yml"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_folder_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.yml", "type: string\n");
    let dir = tempfile::tempdir().unwrap();
    split_document(dir.path());
    std::os::unix::fs::symlink(
        outside.path().join("secret.yml"),
        dir.path().join("resources/keys/models/link.yml"),
    )
    .unwrap();
    let create = dir.path().join("resources/keys/create.yml");
    let original = std::fs::read_to_string(&create).unwrap();
    std::fs::write(&create, original.replace("models/key.yml", "models/link.yml")).unwrap();
    assert!(refused(dir.path()).contains("outside the document's folder"));
}

#[test]
fn files_that_reference_each_other_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    split_document(dir.path());
    // key.yml ↔ other.yml: a cycle of files (and of schemas, which ends at the depth limit).
    write(
        dir.path(),
        "resources/keys/models/key.yml",
        "type: object\nproperties:\n  name: {type: string}\n  other: {$ref: other.yml}\n",
    );
    write(
        dir.path(),
        "resources/keys/models/other.yml",
        "type: object\nproperties:\n  id: {type: string}\n  back: {$ref: key.yml}\n",
    );
    let import = import_file(&dir.path().join("openapi.yaml"), &Options::default()).unwrap();
    // The files are read once each; the reads around the recursive body are imported.
    for op in ["keys_list", "keys_get"] {
        assert!(import.tables.iter().any(|t| t.route(op).is_some()), "{op}: {}", import.summary());
    }
}

#[test]
fn a_properties_map_given_as_a_reference_keeps_its_members_types() {
    // DigitalOcean's `loadBalancers_add_droplets`: the `properties` map itself is a file
    // `$ref`; `droplet_ids` is an array of integers there, not "any value".
    let dir = tempfile::tempdir().unwrap();
    split_document(dir.path());
    write(
        dir.path(),
        "resources/keys/create.yml",
        r#"operationId: keys_create
tags: [Keys]
requestBody:
  required: true
  content:
    application/json:
      schema:
        properties:
          $ref: "models/attributes.yml#/load_balancer_droplet_ids"
        required: [droplet_ids]
responses: {"204": {description: done}}
"#,
    );
    write(
        dir.path(),
        "resources/keys/models/attributes.yml",
        "load_balancer_droplet_ids:\n  droplet_ids:\n    type: array\n    items: {type: integer}\n    description: The Droplets.\n",
    );
    let split = import_file(&dir.path().join("openapi.yaml"), &Options::default()).unwrap();
    assert!(split.skipped.is_empty(), "{:#?}", split.skipped);
    let create = split.tables.iter().find_map(|t| t.route("keys_create")).unwrap();
    let names: Vec<&str> = create.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["droplet_ids"], "no `$ref` member, no undeclared one");
    let ids = &create.fields[0];
    assert!(ids.required);
    assert_eq!(ids.ty, toolgate_schema::FieldType::Array);
    assert_eq!(ids.items.as_ref().map(|i| i.ty), Some(toolgate_schema::FieldType::Integer));
    assert_eq!(ids.description.as_deref(), Some("The Droplets."));

    // The same inside one document, beside a member given with it.
    let text = serde_json::json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "components": {"x-attributes": {"ids": {"ids": {"type": "array", "items": {"type": "integer"}}}}},
        "paths": {"/lb": {"post": {"operationId": "add", "requestBody": {"required": true, "content": {
            "application/json": {"schema": {"type": "object", "required": ["ids"], "properties": {
                "$ref": "#/components/x-attributes/ids", "tag": {"type": "string"}}}}}}}}}})
    .to_string();
    let one = import(&text, &Options::default()).unwrap();
    let add = one.tables.iter().find_map(|t| t.route("add")).unwrap();
    let shape: Vec<(&str, toolgate_schema::FieldType)> =
        add.fields.iter().map(|f| (f.name.as_str(), f.ty)).collect();
    assert_eq!(
        shape,
        [("ids", toolgate_schema::FieldType::Array), ("tag", toolgate_schema::FieldType::String)]
    );
}
