//! Benchmarks: validation of a valid 5-field object (goal: median under 2 µs),
//! validation of a route-table (`oneOf`) call, and schema generation for a
//! 50-operation route table (goal: under 5 ms).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolgate_schema::{RouteTable, Validator};

fn five_fields() -> (Validator, serde_json::Value) {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "destination": {"type": "string", "minLength": 1},
            "departure_date": {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
            "nights": {"type": "integer", "minimum": 1, "maximum": 60},
            "cabin": {"type": "string", "enum": ["economy", "premium", "business"]},
            "refundable": {"type": "boolean"}
        },
        "required": ["destination", "departure_date", "nights"],
        "additionalProperties": false
    });
    let instance = json!({
        "destination": "Oslo", "departure_date": "2026-07-15", "nights": 3, "cabin": "economy", "refundable": true
    });
    (Validator::new(&schema).expect("compiles"), instance)
}

#[path = "../tests/fixtures/big_table.rs"]
mod big_table_fixture;
use big_table_fixture::big_table as table;

fn validation(c: &mut Criterion) {
    let (v, instance) = five_fields();
    assert!(v.is_valid(&instance));
    c.bench_function("validate/valid_5_fields", |b| b.iter(|| v.validate(black_box(&instance))));
    c.bench_function("is_valid/valid_5_fields", |b| b.iter(|| v.is_valid(black_box(&instance))));

    let table50 = table(50);
    let v = Validator::new(&table50.schema()).expect("compiles");
    let call =
        json!({"op": "get_thing_42", "thing_id": "t-1", "date": "2026-07-15", "status": "open", "limit": 10});
    assert!(v.is_valid(&call));
    c.bench_function("validate/route_table_50_ops_valid", |b| b.iter(|| v.validate(black_box(&call))));
    let bad = json!({"op": "get_thing_42", "date": "2026-02-30", "limit": "10", "foo": 1});
    assert!(!v.is_valid(&bad));
    c.bench_function("validate/route_table_50_ops_invalid", |b| b.iter(|| v.validate(black_box(&bad))));
    // the plain jsonschema oneOf, without dispatch by `op`, for comparison
    let plain = jsonschema::draft202012::new(&table50.schema()).expect("compiles");
    c.bench_function("jsonschema_oneof/route_table_50_ops_valid", |b| {
        b.iter(|| plain.is_valid(black_box(&call)))
    });
}

fn generation(c: &mut Criterion) {
    let table50 = table(50);
    c.bench_function("schema/route_table_50_ops", |b| b.iter(|| black_box(&table50).schema()));
    c.bench_function("spec/route_table_50_ops", |b| b.iter(|| black_box(&table50).spec()));
    let toml_text = toml::to_string(&table50).expect("serializes");
    c.bench_function("load_toml_and_compile/route_table_50_ops", |b| {
        b.iter(|| {
            let t = RouteTable::from_toml_str(black_box(&toml_text)).expect("parses");
            Validator::new(&t.schema()).expect("compiles")
        })
    });
}

criterion_group!(benches, validation, generation);
criterion_main!(benches);
