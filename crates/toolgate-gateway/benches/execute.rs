//! The gateway's figures: the whole execute pipeline on a no-op read tool
//! with a 5-field schema, bare and with every layer on (issue goal: at most
//! 5 µs per call), the same tool called directly, validation of
//! a valid 5-field object, schema generation for a 50-operation route table,
//! and ranked discovery (`get_tool_schema` with a `query`) over 300 tools.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolgate_core::{Caller, FnTool, Tool, ToolContext, ToolOutput, ToolSpec};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_schema::{RouteTable, Validator};

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
    let limits = toolgate_gateway::RateLimits::default().with_per_key(
        toolgate_gateway::RateRule::default()
            .with_requests(u64::MAX / 2)
            .with_interval_s(3600)
            .with_concurrent(1_000),
    );
    let layered = Gateway::builder()
        .tool(tool.clone())
        .rate_limits(limits, Arc::new(toolgate_gateway::MemoryRateStore::new()))
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

#[toolgate_core::async_trait]
impl toolgate_gateway::AuditSink for NoAudit {
    async fn record(&self, record: toolgate_gateway::AuditRecord) {
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

/// 300 route-table tools laid out as `openapi-import` writes them: per
/// domain a read tool and a write tool of four operations each, described by
/// the importer's sentence listing them.
fn three_hundred_tools() -> Vec<Arc<dyn Tool>> {
    const NOUNS: [&str; 30] = [
        "file",
        "folder",
        "task",
        "comment",
        "user",
        "group",
        "webhook",
        "project",
        "section",
        "story",
        "attachment",
        "invoice",
        "payment",
        "customer",
        "order",
        "product",
        "ticket",
        "message",
        "channel",
        "event",
        "report",
        "team",
        "workspace",
        "goal",
        "portfolio",
        "tag",
        "label",
        "issue",
        "release",
        "build",
    ];
    struct Nothing;
    #[toolgate_core::async_trait]
    impl toolgate_gateway::RouteHandler for Nothing {
        async fn handle(
            &self,
            _: &ToolContext,
            _: &toolgate_gateway::Route,
            _: Value,
        ) -> toolgate_core::ToolResult {
            Ok(ToolOutput::json(Value::Null))
        }
    }
    let handler: Arc<dyn toolgate_gateway::RouteHandler> = Arc::new(Nothing);
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    for i in 0..150 {
        let (noun, other) = (NOUNS[i % 30], NOUNS[(i * 7 + 3) % 30]);
        let domain = format!("{noun}s_{i}");
        for (verb, what, ops) in [
            (
                "query",
                "Read",
                [
                    ("GET", "list", "List"),
                    ("GET", "get", "Get"),
                    ("GET", "search", "Search"),
                    ("GET", "count", "Count"),
                ],
            ),
            (
                "update",
                "Change",
                [
                    ("POST", "create", "Create"),
                    ("PUT", "update", "Update"),
                    ("DELETE", "delete", "Delete"),
                    ("POST", "copy", "Copy"),
                ],
            ),
        ] {
            let listed: Vec<String> = ops
                .iter()
                .map(|(_, op, summary)| format!("`{op}_{noun}` ({summary} {noun} on a {other})"))
                .collect();
            let mut text = format!(
                "tool = \"{verb}_{domain}\"\ndescription = \"{what} {domain} in Some API. Operations: {}. Choose one with `op`.\"\ndomain = \"{domain}\"\ntags = [\"openapi\"]\n",
                listed.join("; ")
            );
            for (method, op, summary) in ops {
                let body = if matches!(method, "POST" | "PUT") { "body = \"none\"\n" } else { "" };
                text.push_str(&format!(
                    "[[routes]]\nop = \"{op}_{noun}\"\nmethod = \"{method}\"\npath = \"/{domain}/{op}/{{id}}\"\nsummary = \"{summary} {noun} on a {other}\"\n{body}"
                ));
            }
            let table = RouteTable::from_toml_str(&text).unwrap();
            tools.push(Arc::new(toolgate_gateway::RouteTool::new(table, handler.clone()).unwrap()));
        }
    }
    tools
}

fn bench_discovery(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let gw = Gateway::builder().tools(three_hundred_tools()).build().unwrap();
    let ctx = ToolContext::new(Caller::new("u-1", "member"));
    let args = json!({"query": "create a task on a file", "limit": 10});
    // The index is built on the first query of a snapshot; measured here is every later one.
    let first = rt.block_on(gw.call_meta(&ctx, "get_tool_schema", args.clone()));
    assert!(first.metadata.total.unwrap_or(0) > 0, "{first:?}");
    c.bench_function("discover_ranked_query_300_tools_top_10", |b| {
        b.iter(|| rt.block_on(gw.call_meta(&ctx, "get_tool_schema", black_box(args.clone()))))
    });
    // The same ranking with one tool in the answer: most of the above is
    // the ten tools' schemas copied into it.
    let one = json!({"query": "create a task on a file", "limit": 1});
    c.bench_function("discover_ranked_query_300_tools_top_1", |b| {
        b.iter(|| rt.block_on(gw.call_meta(&ctx, "get_tool_schema", black_box(one.clone()))))
    });
}

criterion_group!(benches, bench_execute, bench_validate, bench_schema_gen, bench_discovery);
criterion_main!(benches);
