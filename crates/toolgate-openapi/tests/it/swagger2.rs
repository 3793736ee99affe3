//! Swagger 2.0: the classic Swagger Petstore 2.0 document (swagger-codegen's test resource,
//! `crates/toolgate/tests/openapi/SOURCE.md`) is read as the OpenAPI 3.0 document it maps to:
//! `host` + `basePath` as the server, `body` parameters as JSON bodies, `formData` as a form or
//! (with a file) multipart body, `type: file` as base64 text, `collectionFormat` as the way a query
//! array is joined, `securityDefinitions` as the schemes, `produces` as what `Accept` asks.

use serde_json::json;
use toolgate_openapi::Options;
use toolgate_schema::{Body, BodyEncoding, CollectionFormat, Route, Validator};

const PETSTORE: &str = include_str!("../../../toolgate/tests/openapi/petstore-swagger-2.0.yaml");

fn route<'a>(import: &'a toolgate_openapi::Import, op: &str) -> &'a Route {
    import.tables.iter().flat_map(|t| &t.routes).find(|r| r.op == op).unwrap_or_else(|| {
        panic!("no op {op}: {}", import.summary());
    })
}

#[test]
fn the_swagger_2_petstore_is_imported_as_its_openapi_3_equivalent() {
    let import = toolgate_openapi::import(PETSTORE, &Options::default()).unwrap();
    assert!(import.from_swagger2);
    assert!(import.summary().contains("read as OpenAPI 3.0 from Swagger 2.0"), "{}", import.summary());
    // All 20 operations: the two that take a JSON array as the whole body too, as one field
    // `users` (the array of User) sent as the body itself.
    assert_eq!(import.ops(), 20, "{}", import.summary());
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    for op in ["create_users_with_array_input", "create_users_with_list_input"] {
        let route = route(&import, op);
        assert_eq!(route.body_field.as_deref(), Some("users"), "{route:?}");
        let users = &route.fields[0];
        assert_eq!(route.fields.len(), 1, "{route:?}");
        assert!(users.required && users.ty == toolgate_schema::FieldType::Array, "{users:?}");
        assert!(users.items.as_deref().unwrap().fields.iter().any(|f| f.name == "username"));
    }
    // `collectionFormat: csv` (and 2.0's default): the items joined by commas.
    let status = route(&import, "find_pets_by_status").fields.iter().find(|f| f.name == "status").unwrap();
    assert_eq!(status.collection_format, Some(CollectionFormat::Csv));
    // `schemes: [http]`, `host`, `basePath`.
    assert_eq!(import.base_url.as_deref(), Some("http://petstore.swagger.io/v2"));
    // A required `body` parameter: the JSON body of the Pet schema, its own required fields kept.
    let add = route(&import, "add_pet");
    assert_eq!((add.body, add.body_encoding), (Body::Required, BodyEncoding::Json));
    let names: Vec<&str> = add.fields.iter().filter(|f| f.required).map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "photoUrls"]);
    // `formData` without a file: a urlencoded form; with one: multipart, the file as base64.
    assert_eq!(route(&import, "update_pet_with_form").body_encoding, BodyEncoding::Form);
    let upload = route(&import, "upload_file");
    assert_eq!(upload.body_encoding, BodyEncoding::Multipart);
    assert!(upload.fields.iter().any(|f| f.name == "file" && f.is_base64_file()), "{upload:?}");
    // `produces: [application/xml, application/json]`: JSON asked first.
    assert_eq!(route(&import, "get_pet_by_id").accept_header(), "application/json, application/xml;q=0.5");
    // `securityDefinitions`: OAuth is the main scheme, `api_key` the inventory's own.
    assert_eq!(route(&import, "get_inventory").security, Some(vec!["api_key".to_owned()]));
    assert!(import.domain_snippet("routes").contains(r#"api_key = { kind = "static", header = "api_key""#));
    // A `path` parameter's type and format moved into its schema, validated as such.
    let table = import.tables.iter().find(|t| t.route("get_order_by_id").is_some()).unwrap();
    let validator = Validator::new(&table.spec().unwrap().input_schema).unwrap();
    validator.validate(&json!({"op": "get_order_by_id", "orderId": 3})).unwrap();
    assert!(validator.validate(&json!({"op": "get_order_by_id", "orderId": 11})).is_err());
}

#[test]
fn query_arrays_keep_their_collection_format_and_an_unsendable_style_is_left_out() {
    let array = |name: &str, format: Option<&str>| {
        let mut p = json!({"name": name, "in": "query", "type": "array", "items": {"type": "string"}});
        if let Some(f) = format {
            p["collectionFormat"] = json!(f);
        }
        p
    };
    let doc = json!({
        "swagger": "2.0",
        "info": {"title": "Csv", "version": "1"},
        "host": "api.example.com",
        "paths": {
            "/items": {"get": {"operationId": "listItems", "parameters": [
                array("ids", None), array("tags", Some("multi")), array("words", Some("ssv")), array("codes", Some("pipes"))],
                "responses": {"200": {"description": "ok"}}}},
            "/tabs": {"get": {"operationId": "listTabs", "parameters": [array("t", Some("tsv"))],
                "responses": {"200": {"description": "ok"}}}}
        }
    });
    let import = toolgate_openapi::import(&doc.to_string(), &Options::default()).unwrap();
    assert_eq!(import.base_url.as_deref(), Some("https://api.example.com"));
    let formats: Vec<(String, Option<CollectionFormat>)> =
        route(&import, "list_items").fields.iter().map(|f| (f.name.clone(), f.collection_format)).collect();
    assert_eq!(
        formats,
        [
            ("ids".to_owned(), Some(CollectionFormat::Csv)),
            ("tags".to_owned(), None),
            ("words".to_owned(), Some(CollectionFormat::Ssv)),
            ("codes".to_owned(), Some(CollectionFormat::Pipes)),
        ]
    );
    let reasons: Vec<String> = import.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].starts_with("GET /tabs") && reasons[0].contains("`t`"), "{reasons:?}");
    let old = json!({"swagger": "1.2", "info": {"title": "t", "version": "1"}, "paths": {}}).to_string();
    let error = toolgate_openapi::import(&old, &Options::default()).unwrap_err();
    assert!(error.to_string().contains("Swagger \"1.2\""), "{error}");
}
