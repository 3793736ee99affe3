//! The gateway's figures: the whole execute pipeline on a no-op read tool
//! with a 5-field schema, bare and with every layer on (issue goal: at most
//! 5 µs per call), the same tool called directly, validation of
//! a valid 5-field object, and schema generation for a 50-operation route table.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use gateway::{CallOptions, Gateway};
use schema_gen::{RouteTable, Validator};
use serde_json::{Value, json};
use tool_core::{Caller, FnTool, Tool, ToolContext, ToolOutput, ToolSpec};

fn five_field_spec() -> ToolSpec {
    ToolSpec::new(
        "search_flights",
        "Find flights.",
        json!({
            "type": "object",
            "properties": {
                "from": {"type": "string", "minLength": 3},
                "to": {"type": "string", "minLength": 3},
                "date": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "cabin": {"type": "string", "enum": ["economy", "business"]}
            },
            "required": ["from", "to", "date"],
            "additionalProperties": false
        }),
    )
}

fn params() -> Value {
    json!({"from": "PAR", "to": "OSL", "date": "2026-07-15", "limit": 10, "cabin": "economy"})
}

fn bench_execute(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let tool: Arc<dyn Tool> = Arc::new(FnTool::new(five_field_spec(), |_ctx, _p| {
        Box::pin(async { Ok(ToolOutput::json(Value::Null)) })
    }));
    let gw = Gateway::builder().tool(tool.clone()).build().unwrap();
    let ctx = ToolContext::new(Caller::new("u-1", "member"));
    let opts = CallOptions::default();

    // Every layer a served call goes through: the meta-tool (`execute_tool`
    // and its arguments' schema), the role policy, per-key rate and
    // concurrency limits counted in the in-memory store, the size and depth
    // limits, validation, the run, metrics and the envelope, with an audit
    // sink configured (a read is not recorded) and no trace subscriber.
    let limits = gateway::RateLimits {
        per_key: gateway::RateRule {
            requests: Some(u64::MAX / 2),
            interval_s: Some(3600),
            concurrent: Some(1_000),
        },
        tools: Default::default(),
    };
    let layered = Gateway::builder()
        .tool(tool.clone())
        .rate_limits(limits, Arc::new(gateway::MemoryRateStore::new()))
        .audit(Arc::new(NoAudit))
        .build()
        .unwrap();
    let mut keyed = ToolContext::new(Caller::new("u-1", "member"));
    keyed.caller.key_id = Some("k-1".into());
    let meta_args = json!({"tool_name": "search_flights", "parameters": params()});

    let mut group = c.benchmark_group("execute");
    group.bench_function("every_layer_execute_tool_read_5_fields", |b| {
        b.iter(|| rt.block_on(layered.call_meta(&keyed, "execute_tool", black_box(meta_args.clone()))))
    });
    group.bench_function("gateway_execute_noop_read_5_fields", |b| {
        b.iter(|| rt.block_on(gw.execute(&ctx, "search_flights", black_box(params()), &opts)))
    });
    group.bench_function("direct_tool_call_noop", |b| {
        b.iter(|| rt.block_on(tool.call(&ctx, black_box(params()))))
    });
    group.finish();
}

/// An audit trail that keeps nothing (reads are not recorded anyway).
#[derive(Debug)]
struct NoAudit;

#[tool_core::async_trait]
impl gateway::AuditSink for NoAudit {
    async fn record(&self, record: gateway::AuditRecord) {
        black_box(record);
    }
}

fn bench_validate(c: &mut Criterion) {
    let validator = Validator::new(&five_field_spec().input_schema).unwrap();
    let instance = params();
    c.bench_function("validate_valid_5_field_object", |b| {
        b.iter(|| validator.validate(black_box(&instance)))
    });
}

fn fifty_op_table() -> RouteTable {
    let mut routes = String::new();
    for i in 0..50 {
        routes.push_str(&format!(
            r#"
[[routes]]
op = "get_item_{i}"
method = "GET"
path = "/items/{{item_id}}/parts/{{part_id}}/v{i}"
summary = "Get part {i}"
[[routes.fields]]
name = "date"
type = "string"
format = "date"
required = true
[[routes.fields]]
name = "limit"
type = "integer"
minimum = 1
maximum = 100
"#
        ));
    }
    let text =
        format!("tool = \"query_items\"\ndescription = \"Reads items.\"\ndomain = \"items\"\n{routes}");
    RouteTable::from_toml_str(&text).unwrap()
}

fn bench_schema_gen(c: &mut Criterion) {
    let table = fifty_op_table();
    c.bench_function("schema_gen_50_operation_route_table", |b| b.iter(|| black_box(&table).schema()));
}

criterion_group!(benches, bench_execute, bench_validate, bench_schema_gen);
criterion_main!(benches);
