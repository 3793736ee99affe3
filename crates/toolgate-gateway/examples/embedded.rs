//! An agent builder's service: `toolgate-core` + `toolgate-gateway` (with `serde` and
//! `schemars` for the typed input). It registers a typed tool and a route table, prints the catalog a model would get, and
//! runs the three meta-tools the way a model would call them.
//!
//! Run: `cargo run -p toolgate-gateway --example embedded`

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolgate_gateway::toolgate_core::{
    Caller, FieldError, Tool, ToolContext, ToolError, ToolOutput, ToolResult, ToolSpec,
};
use toolgate_gateway::{Gateway, Route, RouteHandler, RouteTable, RouteTool, tool_fn};

/// A route table for a tiny note store, as a team would keep it in a data file.
const NOTES_TABLE: &str = r#"
tool = "update_note"
description = "Create or delete one of the caller's notes. Use op `put_note` to write a note under a slug (the same slug again replaces it), `delete_note` to remove one. Returns the note. Example: {\"op\": \"put_note\", \"slug\": \"trip\", \"text\": \"Pack the charger\"}."
domain = "notes"
required_role = "member"

[[routes]]
op = "put_note"
method = "PUT"
path = "/notes/{slug}"
summary = "Write a note"
[[routes.fields]]
name = "text"
type = "string"
required = true
description = "The note's text."

[[routes]]
op = "delete_note"
method = "DELETE"
path = "/notes/{slug}"
summary = "Delete a note"
"#;

/// The note store behind the table: in memory, keyed by (user, slug).
#[derive(Default)]
struct Notes(Mutex<BTreeMap<(String, String), String>>);

#[toolgate_gateway::toolgate_core::async_trait]
impl RouteHandler for Notes {
    async fn handle(&self, ctx: &ToolContext, route: &Route, params: Value) -> ToolResult {
        let slug = params["slug"].as_str().unwrap_or_default().to_owned();
        let key = (ctx.caller.user_id.clone(), slug.clone());
        let mut notes = self.0.lock().map_err(|_| ToolError::internal())?;
        match route.op.as_str() {
            "put_note" => {
                let text = params["text"].as_str().unwrap_or_default().to_owned();
                notes.insert(key, text.clone());
                Ok(ToolOutput::json(json!({"slug": slug, "text": text})))
            }
            _ => match notes.remove(&key) {
                Some(text) => Ok(ToolOutput::json(json!({"slug": slug, "deleted": text}))),
                None => Err(ToolError::not_found(format!("no note `{slug}`; list notes to see the slugs"))),
            },
        }
    }
}

/// A typed tool: the input type is the one declaration of the parameters
/// (schema, limits, check); `tool_fn` adds the spec and one async function.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct DaysUntil {
    /// First day, YYYY-MM-DD.
    #[schemars(with = "String", extend("format" = "date"))]
    from: chrono::NaiveDate,
    /// Last day, YYYY-MM-DD, not before `from`.
    #[schemars(with = "String", extend("format" = "date"))]
    to: chrono::NaiveDate,
}

fn days_until_tool() -> Arc<dyn Tool> {
    let spec = ToolSpec::new("count_days_until", "Count the days from `from` to `to`; use it for any date \
        arithmetic instead of guessing. Returns {days}. Example: {\"from\": \"2026-07-01\", \"to\": \"2026-07-15\"}.", json!({}))
        .with_domain("calendar")
        .with_result_template("{{ result.days }} days.");
    let tool =
        tool_fn(spec, |_ctx, i: DaysUntil| async move { Ok(json!({"days": (i.to - i.from).num_days()})) });
    let to_before_from = |i: &DaysUntil| {
        FieldError::new("/to", "a day on or after `from`", &json!(i.to), "`to` is before `from`")
    };
    Arc::new(tool.with_rules(move |i| (i.to < i.from).then(|| to_before_from(i)).into_iter().collect()))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let table = RouteTable::from_toml_str(NOTES_TABLE)?;
    let notes: Arc<dyn Tool> = Arc::new(RouteTool::new(table, Arc::new(Notes::default()))?);
    let gateway = Gateway::builder().tool(days_until_tool()).tool(notes).build()?;

    let member = ToolContext::new(Caller::new("ada", "member"));
    println!("--- catalog for ada (member) ---\n{}", gateway.catalog(&member.caller));

    let calls = [
        ("get_tool_schema", json!({"tool_name": "update_note"})),
        (
            "execute_tool",
            json!({"tool_name": "update_note", "parameters": {"op": "put_note", "slug": "trip", "text": "Pack the charger"}}),
        ),
        (
            "execute_tool",
            json!({"tool_name": "count_days_until", "parameters": {"from": "2026-07-01", "to": "2026-07-15"}}),
        ),
        (
            "execute_tool",
            json!({"tool_name": "count_days_until", "parameters": {"from": "2026-02-30", "to": "2026/07/15"}}),
        ),
        (
            "execute_tool",
            json!({"tool_name": "count_days_until", "parameters": {"from": "2026-07-15", "to": "2026-07-01"}}),
        ),
        (
            "execute_tool",
            json!({"tool_name": "update_note", "parameters": {"op": "put_note", "slug": "x", "user_id": "bob"}}),
        ),
    ];
    for (meta, args) in calls {
        let envelope = gateway.call_meta(&member, meta, args.clone()).await;
        println!("--- {meta} {args}\n{}", gateway.render_result(&envelope));
    }
    let guest = ToolContext::new(Caller::new("eve", "guest"));
    let envelope = gateway
        .call_meta(
            &guest,
            "execute_tool",
            json!({"tool_name": "update_note", "parameters": {"op": "delete_note", "slug": "trip"}}),
        )
        .await;
    println!("--- execute_tool as guest\n{}", gateway.render_result(&envelope));
    Ok(())
}
