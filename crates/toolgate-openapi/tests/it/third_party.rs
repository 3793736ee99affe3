//! Public third-party documents (see fixtures/SOURCE.md) import with a report, and every table
//! written loads back from its TOML text and validates its own example.

use serde_json::Value;
use toolgate_openapi::{AuthHint, Options};
use toolgate_schema::{RouteTable, Validator};

fn import(text: &str) -> toolgate_openapi::Import {
    let import = toolgate_openapi::import(text, &Options::default()).unwrap();
    for table in &import.tables {
        let toml = toml::to_string(table).unwrap();
        let back = RouteTable::from_toml_str(&toml).unwrap_or_else(|e| panic!("{}: {e}\n{toml}", table.tool));
        assert_eq!(&back, table, "{} survives TOML", table.tool);
        let spec = back.spec().unwrap();
        let validator = Validator::new(&spec.input_schema).unwrap();
        let example = spec.description.rsplit("Example: ").next().unwrap().trim_end_matches('.');
        let example: Value = serde_json::from_str(example).unwrap();
        validator.validate(&example).unwrap_or_else(|e| panic!("{}: {example} {e:?}", table.tool));
    }
    import
}

#[test]
fn petstore_3_0_json_imports_the_form_and_the_multipart_operations() {
    let import = import(include_str!("fixtures/petstore-3.0.json"));
    let tools: Vec<&str> = import.tables.iter().map(|t| t.tool.as_str()).collect();
    assert_eq!(
        tools,
        ["query_pet", "update_pet", "query_store", "update_store", "query_user", "update_user"]
    );
    let pet = import.tables.iter().find(|t| t.tool == "query_pet").unwrap();
    let get = pet.route("get_pet_by_id").expect("operationId in snake_case");
    assert_eq!(get.path, "/pet/{petId}");
    assert!(get.fields.iter().any(|f| f.name == "petId" && f.required));
    let reasons: Vec<String> = import.skipped.iter().map(ToString::to_string).collect();
    // uploadFile's multipart body is a multipart route, its `file` base64 text.
    assert!(!reasons.iter().any(|r| r.contains("/pet/{petId}/uploadImage")), "{reasons:#?}");
    let upload = import.tables.iter().find_map(|t| t.route("upload_file")).expect("imported");
    assert_eq!(upload.body_encoding, toolgate_schema::BodyEncoding::Multipart);
    let file = upload.fields.iter().find(|f| f.name == "file").unwrap();
    assert!(file.is_base64_file() && file.format.is_none(), "{file:?}");
    // The urlencoded form of updatePetWithForm is a form route now, no longer skipped.
    assert!(!reasons.iter().any(|r| r.contains("POST /pet/{petId}:")), "{reasons:#?}");
    let form = import.tables.iter().find_map(|t| t.route("update_pet_with_form")).expect("imported");
    assert_eq!(form.body_encoding, toolgate_schema::BodyEncoding::Form);
    let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["petId", "name", "status"]);
    let summary = import.summary();
    assert!(
        summary.contains("upload_file") && !summary.contains("skipped POST /pet/{petId}/uploadImage"),
        "{summary}"
    );
    // Its global requirement is OAuth 2 (bearer tokens) or an api_key header.
    assert!(matches!(import.auth, AuthHint::BearerFromCaller | AuthHint::Static { .. }), "{:?}", import.auth);
    assert!(import.domain_snippet("routes/petstore").contains("routes = \"routes/petstore\""));
}

#[test]
fn train_travel_3_1_yaml_imports_the_union_payment_as_a_union() {
    let import = import(include_str!("fixtures/train-travel-3.1.yaml"));
    assert_eq!(import.auth, AuthHint::BearerFromCaller, "{:?}", import.auth);
    let ops: Vec<&str> = import.tables.iter().flat_map(|t| t.ops()).collect();
    assert!(ops.contains(&"get_stations") && ops.contains(&"get_trips"), "{ops:?}");
    // create-booking's body is a `$ref` to Booking: its properties are the fields.
    let booking = import
        .tables
        .iter()
        .flat_map(|t| &t.routes)
        .find(|r| r.op == "create_booking")
        .expect("create_booking");
    let names: Vec<&str> = booking.fields.iter().map(|f| f.name.as_str()).collect();
    assert!(names.contains(&"trip_id") && names.contains(&"passenger_name"), "{names:?}");
    assert!(!names.contains(&"id"), "readOnly properties are not parameters: {names:?}");
    // The payment's `source` is an anyOf (card or bank account): imported as that union.
    assert!(import.skipped.is_empty(), "{:#?}", import.skipped);
    let payment = import.tables.iter().find(|t| t.route("create_booking_payment").is_some()).unwrap();
    let source = payment.route("create_booking_payment").unwrap().fields.iter().find(|f| f.name == "source");
    assert_eq!(source.map(|s| s.any_of.len()), Some(2), "{source:?}");
    let validator = Validator::new(&payment.spec().unwrap().input_schema).unwrap();
    let card = serde_json::json!({"object": "card", "name": "J. Doe", "number": "4242424242424242",
        "cvc": 123, "exp_month": 12, "exp_year": 2030, "address_country": "GB"});
    let bank = serde_json::json!({"object": "bank_account", "name": "J. Doe", "number": "00012345",
        "sort_code": "000123", "account_type": "individual", "bank_name": "Starling", "country": "GB"});
    let call = |source: &Value| serde_json::json!({"op": "create_booking_payment", "bookingId": "1725ff48-ab45-4bb5-9d02-88745177dedb", "amount": 49.99, "currency": "gbp", "source": source});
    for source in [&card, &bank] {
        validator.validate(&call(source)).unwrap_or_else(|e| panic!("{source}: {e:?}"));
    }
    // Neither branch: a card without its number, one whose `object` is not the `const` "card", a string.
    let mut broken = card.clone();
    broken.as_object_mut().unwrap().remove("number");
    let mut other = card.clone();
    other["object"] = "text".into();
    for source in [broken, other, serde_json::json!("card")] {
        assert!(validator.validate(&call(&source)).is_err(), "{source} must be refused");
    }
}

/// What a tag's description says about the things its operations act on reaches the tables
/// filed under it as `about` (for discovery's ranking, its first paragraph as plain words), and not their descriptions, which the
/// model reads; the written table keeps it. With domains by path there is no tag to read.
#[test]
fn a_tags_description_is_its_tables_about_and_not_their_description() {
    let text = include_str!("fixtures/train-travel-3.1.yaml");
    let import = import(text);
    let bookings = import.tables.iter().find(|t| t.tool == "update_bookings").expect("update_bookings");
    assert_eq!(
        bookings.about,
        ["Create and manage bookings for train trips, including passenger details and optional extras."]
    );
    assert!(!bookings.description.contains("optional extras"), "{}", bookings.description);
    let spec = bookings.spec().unwrap();
    assert_eq!(spec.about, bookings.about);
    // Payments' description is paragraphs of wrapped lines: its first paragraph, one line.
    let payments = import.tables.iter().find(|t| t.tool == "update_payments").expect("update_payments");
    assert_eq!(
        payments.about,
        ["Pay for bookings using a card or bank account, and view payment status and history."]
    );
    let written = toml::to_string(bookings).unwrap();
    assert_eq!(RouteTable::from_toml_str(&written).unwrap().about, bookings.about);
    let options = Options::default().with_domain_by(toolgate_openapi::DomainBy::Path);
    let by_path = toolgate_openapi::import(text, &options).unwrap();
    assert!(by_path.tables.iter().all(|t| t.about.is_empty()));
}
