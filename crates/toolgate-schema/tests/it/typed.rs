//! Typed tools: schemars output with toolgate's post-processing.

#![allow(dead_code)] // the types exist for their schemas

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolgate_core::{Effect, SCHEMA_DIALECT, SpecError, ToolSpec};
use toolgate_schema::{Validator, typed_schema};

/// Parameters of a typed read tool.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SearchFlights {
    /// IATA code of the departure airport, e.g. "OSL".
    #[schemars(length(equal = 3))]
    pub origin: String,
    /// IATA code of the arrival airport.
    #[schemars(length(equal = 3))]
    pub destination: String,
    /// Departure day, YYYY-MM-DD.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub date: String,
    /// Cabin class.
    pub cabin: Option<Cabin>,
    /// At most this many results.
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// Passengers.
    pub passengers: Vec<Passenger>,
}

/// Cabin class.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Cabin {
    Economy,
    Business,
}

/// One passenger.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Passenger {
    /// Age in years.
    #[schemars(range(max = 130))]
    pub age: u8,
    /// Needs assistance.
    #[serde(default)]
    pub assistance: bool,
}

/// A typed tool whose operations are an internally tagged enum, like a route table.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum BookingRequest {
    /// Hold a seat for 15 minutes.
    HoldSeat {
        /// The flight.
        flight_id: String,
        /// Seat like "12A".
        seat: String,
    },
    /// Release a held seat.
    Release {
        /// The hold.
        hold_id: u64,
    },
}

/// A tool that wrongly asks the model for the user.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Leaky {
    pub user_id: String,
    pub city: String,
}

/// The typed specs the other tests reuse.
pub(crate) fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "search_flights",
            "Search flights between two airports on one day.",
            typed_schema::<SearchFlights>(),
        ),
        ToolSpec::new("book_seat", "Hold or release a seat.", typed_schema::<BookingRequest>())
            .with_effect(Effect::Write { idempotent: false }),
    ]
}

#[test]
fn typed_schema_is_2020_12_and_closed_everywhere() {
    let schema = typed_schema::<SearchFlights>();
    insta::assert_json_snapshot!("search_flights_schema", schema);
    assert_eq!(schema["$schema"], SCHEMA_DIALECT);
    assert!(schema.get("title").is_none(), "the Rust type name is not for the model");
    for (at, map) in crate::object_schemas(&schema) {
        let is_object = map.get("type") == Some(&json!("object")) || map.contains_key("properties");
        if is_object {
            assert_eq!(map.get("additionalProperties"), Some(&json!(false)), "open object at {at}");
        }
    }
    // including the one in $defs
    assert_eq!(schema["$defs"]["Passenger"]["additionalProperties"], false);
    ToolSpec::new("search_flights", "Search.", schema).check().unwrap();
}

#[test]
fn typed_schema_agrees_with_serde() {
    let v = Validator::new(&typed_schema::<SearchFlights>()).unwrap();
    let value = SearchFlights {
        origin: "OSL".into(),
        destination: "CDG".into(),
        date: "2026-07-15".into(),
        cabin: Some(Cabin::Business),
        limit: None,
        passengers: vec![Passenger { age: 40, assistance: false }],
    };
    let json = serde_json::to_value(&value).unwrap();
    assert!(v.is_valid(&json), "{:?}", v.validate(&json));
    // and what validates deserializes
    let ok = json!({"origin": "OSL", "destination": "CDG", "date": "2026-07-15", "passengers": [{"age": 3}]});
    assert!(v.is_valid(&ok));
    serde_json::from_value::<SearchFlights>(ok).unwrap();
}

#[test]
fn a_tagged_enum_root_dispatches_like_a_route_table() {
    let schema = typed_schema::<BookingRequest>();
    insta::assert_json_snapshot!("booking_request_schema", schema);
    assert_eq!(schema["type"], "object", "a root union of objects is an object");
    ToolSpec::new("book_seat", "Hold or release a seat.", schema.clone()).check().unwrap();
    let v = Validator::new(&schema).unwrap();
    assert_eq!(v.ops(), ["hold_seat", "release"]);
    let errors = v.validate(&json!({"op": "release", "hold_id": "h1", "seat": "1A"})).unwrap_err();
    let got: Vec<(&str, &str)> = errors.iter().map(|e| (e.pointer.as_str(), e.message.as_str())).collect();
    assert_eq!(
        got,
        [
            ("/hold_id", "`hold_id` must be an integer of at least 0, got a string \"h1\""),
            ("/seat", "`seat` is not a parameter of op `release`; allowed: hold_id. Remove it."),
        ]
    );
}

#[test]
fn injected_fields_are_caught_by_the_spec_check() {
    let schema = typed_schema::<Leaky>();
    let err = ToolSpec::new("query_weather", "Weather.", schema).check().unwrap_err();
    assert!(matches!(err, SpecError::InjectedField { ref field, .. } if field == "user_id"), "{err}");
}

#[test]
fn close_objects_respects_maps_and_composition() {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "mixed": {"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}]},
            "union": {"oneOf": [{"type": "object", "properties": {"x": {}}}]}
        }
    });
    toolgate_schema::close_objects(&mut schema);
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["properties"]["counts"]["additionalProperties"], json!({"type": "integer"}));
    assert_eq!(schema["properties"]["mixed"]["unevaluatedProperties"], false);
    assert!(schema["properties"]["mixed"].get("additionalProperties").is_none());
    assert!(schema["properties"]["union"].get("additionalProperties").is_none());
    assert_eq!(schema["properties"]["union"]["oneOf"][0]["additionalProperties"], false);
}
