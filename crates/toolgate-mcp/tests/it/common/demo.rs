//! A small real gateway for the tests and the `stdio_demo` example: a few
//! `toolgate_core::FnTool`s of every effect and role, and three skills.
//!
//! Shared by `tests/it/common/mod.rs` and `examples/stdio_demo.rs` (through
//! `#[path]`), so it uses only the crate's normal dependencies.

#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_core::{
    BoxFuture, Effect, FnTool, Signal, Tool, ToolContext, ToolError, ToolOutput, ToolResult, ToolSpec,
};
use toolgate_gateway::Gateway;
use toolgate_gateway::toolgate_skills::SkillSet;

/// The demo gateway and what its tools let a test observe.
#[derive(Debug, Clone)]
pub struct Demo {
    pub gateway: Gateway,
    /// How many `wait_forever` calls were dropped before they finished (cancelled).
    pub dropped: Arc<AtomicUsize>,
    /// How many `wait_forever` calls started.
    pub started: Arc<AtomicUsize>,
}

fn schema(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

fn tool<F>(spec: ToolSpec, f: F) -> Arc<dyn Tool>
where
    F: Fn(ToolContext, Value) -> BoxFuture<'static, ToolResult> + Send + Sync + 'static,
{
    Arc::new(FnTool::new(spec, f))
}

/// Counts a drop that happens before `finish` was called.
struct DropCounter {
    dropped: Arc<AtomicUsize>,
    finished: bool,
}

impl Drop for DropCounter {
    fn drop(&mut self) {
        if !self.finished {
            self.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

const SKILLS: &[(&str, &str)] = &[
    (
        "weather-check",
        "---\nname: weather-check\ndescription: Look up the weather for a city. Use when the user asks about the weather.\nrequired_role: guest\nsteps:\n  - title: Ask the forecast\n    tool: query_weather\n---\nAsk for the city if the user did not name it.\n",
    ),
    (
        "meal-logging",
        "---\nname: meal-logging\ndescription: Record a meal with its calories. Use when the user reports what they ate.\nrequired_role: member\nsteps:\n  - title: Log the meal\n    tool: log_meal\n---\nAsk for the calories when they are not known.\n",
    ),
    (
        "account-cleanup",
        "---\nname: account-cleanup\ndescription: Delete an account after confirmation. Use only when an administrator asks.\nrequired_role: admin\nsteps:\n  - title: Delete the account\n    tool: delete_account\n---\nAlways confirm first.\n",
    ),
];

/// Write the demo skills into a fresh folder under the system temp dir and load them.
fn skills() -> SkillSet {
    let unique = format!("toolgate-mcp-demo-{}-{}", std::process::id(), uuid::Uuid::new_v4().simple());
    let dir: PathBuf = std::env::temp_dir().join(unique);
    for (id, text) in SKILLS {
        let folder = dir.join(id);
        std::fs::create_dir_all(&folder).expect("temp dir is writable");
        std::fs::write(folder.join("SKILL.md"), text).expect("temp dir is writable");
    }
    let (set, errors) = SkillSet::load_dir(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(errors.iter().all(|e| !e.is_error()), "demo skills do not load: {errors:?}");
    set
}

/// Build the demo gateway.
pub fn demo() -> Demo {
    let dropped = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(AtomicUsize::new(0));

    let weather = tool(
        ToolSpec::new(
            "query_weather",
            "Forecast for a city. Call it when the user asks about the weather. Returns one entry per day. \
             Example: {\"city\": \"Oslo\", \"days\": 2}.",
            schema(
                json!({
                    "city": {"type": "string", "minLength": 1, "description": "City name."},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7, "description": "Days ahead, 1 to 7."}
                }),
                &["city"],
            ),
        )
        .with_domain("weather")
        .with_result_template("Weather in {{ result.city }}: {{ result.days }} day(s)."),
        |_ctx, params| {
            Box::pin(async move {
                let city = params["city"].as_str().unwrap_or_default().to_owned();
                let days = params["days"].as_u64().unwrap_or(1);
                let forecast: Vec<Value> = (1..=days).map(|d| json!({"day": d, "temp_c": 10 + d})).collect();
                Ok(ToolOutput::json(json!({"city": city, "days": days, "forecast": forecast})))
            })
        },
    );

    let steps = tool(
        ToolSpec::new(
            "count_steps",
            "Counts to `steps`, reporting progress after each one. Used to show progress notifications. \
             Example: {\"steps\": 3}.",
            schema(json!({"steps": {"type": "integer", "minimum": 1, "maximum": 20}}), &["steps"]),
        )
        .with_domain("fitness")
        .with_role("member"),
        |ctx, params| {
            Box::pin(async move {
                let steps = params["steps"].as_u64().unwrap_or(1);
                for i in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    ctx.progress(i as f64, Some(steps as f64), &format!("step {i} of {steps}"));
                }
                Ok(ToolOutput::json(json!({"counted": steps})))
            })
        },
    );

    let meal = tool(
        ToolSpec::new(
            "log_meal",
            "Records a meal. Call it when the user reports what they ate. Logging the same meal twice keeps one. \
             Example: {\"food\": \"apple\", \"calories\": 95}.",
            schema(
                json!({
                    "food": {"type": "string", "minLength": 1},
                    "calories": {"type": "integer", "minimum": 0, "maximum": 10000}
                }),
                &["food", "calories"],
            ),
        )
        .with_domain("nutrition")
        .with_role("member")
        .with_effect(Effect::Write { idempotent: true }),
        |ctx, params| {
            Box::pin(async move {
                // Whether a credential reached the tool (never its value).
                let has_token = !ctx.caller.credentials.is_empty();
                Ok(ToolOutput::json(json!({"logged": true, "user": ctx.caller.user_id, "has_token": has_token, "meal": params})))
            })
        },
    );

    let delete = tool(
        ToolSpec::new(
            "delete_account",
            "Deletes an account for good. Call it only when an administrator asks; it needs confirmation. \
             Example: {\"account\": \"acme\", \"confirm\": true}.",
            schema(
                json!({"account": {"type": "string", "minLength": 1}, "confirm": {"type": "boolean"}}),
                &["account"],
            ),
        )
        .with_domain("accounts")
        .with_role("admin")
        .with_effect(Effect::Write { idempotent: false }),
        |_ctx, params| {
            Box::pin(async move {
                if params["confirm"] != json!(true) {
                    return Ok(ToolOutput::json(json!({"deleted": false})).with_signal(
                        Signal::NeedConfirm {
                            message: "deleting an account cannot be undone".into(),
                            confirm_param: "confirm".into(),
                            confirm_value: json!(true),
                        },
                    ));
                }
                Err(ToolError::new(toolgate_core::ErrorCode::Conflict, "the demo keeps its accounts"))
            })
        },
    );

    let wait = {
        let dropped = dropped.clone();
        let started = started.clone();
        tool(
            ToolSpec::new(
                "wait_forever",
                "Waits `ms` milliseconds (default: an hour), then answers. Used to show cancellation \
                 and draining. Example: {}.",
                schema(json!({"ms": {"type": "integer", "minimum": 0}}), &[]),
            )
            .with_domain("fitness")
            .with_role("member")
            .with_tags([toolgate_mcp::LONG_RUNNING_TAG])
            .with_timeout(Duration::from_secs(3600)),
            move |_ctx, params| {
                let dropped = dropped.clone();
                let started = started.clone();
                Box::pin(async move {
                    started.fetch_add(1, Ordering::SeqCst);
                    let mut guard = DropCounter { dropped, finished: false };
                    let ms = params["ms"].as_u64().unwrap_or(3_600_000);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    guard.finished = true;
                    Ok(ToolOutput::json(json!({"waited": true})))
                })
            },
        )
    };

    let gateway = Gateway::builder()
        .tools([weather, steps, meal, delete, wait])
        .skills(skills())
        .build()
        .expect("the demo gateway builds");
    Demo { gateway, dropped, started }
}
