//! Test support: skill folders in a tempdir, real `toolgate_core` tools, a
//! small registry that implements the `StepRunner` contract the way the
//! gateway does (lookup, time limit, envelope), and a `GuideView` over it.

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_authz::Policy;
use toolgate_core::{
    BoxFuture, Caller, Effect, Envelope, ErrorCode, FnTool, Metadata, Payload, Tool, ToolContext, ToolError,
    ToolResult, ToolSpec,
};
use toolgate_skills::{GuideView, StepRunner};

/// Write `dir/<folder>/SKILL.md`.
pub fn write_skill(dir: &Path, folder: &str, text: &str) {
    let folder = dir.join(folder);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("SKILL.md"), text).unwrap();
}

/// A closed object schema with the given properties.
pub fn schema(props: Value) -> Value {
    json!({"type": "object", "properties": props, "additionalProperties": false})
}

pub fn spec(name: &str, effect: Effect, role: &str, domain: &str) -> ToolSpec {
    ToolSpec::new(name, format!("Test tool `{name}`: answers what it was given."), schema(json!({})))
        .with_effect(effect)
        .with_role(role)
        .with_domain(domain)
}

/// A tool made of a spec and an async closure, as `Arc<dyn Tool>`.
pub fn tool<F>(spec: ToolSpec, f: F) -> Arc<dyn Tool>
where
    F: Fn(ToolContext, Value) -> BoxFuture<'static, ToolResult> + Send + Sync + 'static,
{
    Arc::new(FnTool::new(spec, f))
}

/// A tool that records its call and echoes its parameters.
pub fn echo(spec: ToolSpec, log: &Log) -> Arc<dyn Tool> {
    let log = log.clone();
    let name = spec.name.clone();
    tool(spec, move |_ctx, params| {
        log.push(&name);
        let name = name.clone();
        Box::pin(async move { Ok(toolgate_core::ToolOutput::json(json!({"tool": name, "params": params}))) })
    })
}

/// A tool that records its call and fails with `code`.
pub fn failing(spec: ToolSpec, log: &Log, code: ErrorCode) -> Arc<dyn Tool> {
    let log = log.clone();
    let name = spec.name.clone();
    tool(spec, move |_ctx, _params| {
        log.push(&name);
        Box::pin(async move { Err(ToolError::new(code, "the backend refused it")) })
    })
}

/// A tool that records its call, then sleeps.
pub fn sleeping(spec: ToolSpec, log: &Log, sleep: Duration) -> Arc<dyn Tool> {
    let log = log.clone();
    let name = spec.name.clone();
    tool(spec, move |_ctx, _params| {
        log.push(&name);
        Box::pin(async move {
            tokio::time::sleep(sleep).await;
            Ok(toolgate_core::ToolOutput::json(json!({"slept_ms": sleep.as_millis() as u64})))
        })
    })
}

/// The order tools were called in.
#[derive(Clone, Default, Debug)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, name: &str) {
        self.0.lock().unwrap().push(name.to_string());
    }

    pub fn calls(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Registered tools: the runner contract over real tools, like the gateway.
#[derive(Default)]
pub struct Registry {
    pub tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl Registry {
    pub fn new(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        Self { tools: tools.into_iter().map(|t| (t.spec().name.clone(), t)).collect() }
    }

    pub fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.tools.get(name).map(|t| t.spec().clone())
    }
}

#[async_trait::async_trait]
impl StepRunner for Registry {
    async fn run_step(&self, ctx: &ToolContext, tool: &str, params: Value, timeout: Duration) -> Envelope {
        let start = Instant::now();
        let ms = || start.elapsed().as_secs_f64() * 1000.0;
        let Some(t) = self.tools.get(tool) else {
            return Envelope::err(
                ToolError::new(ErrorCode::ToolNotFound, format!("no tool `{tool}`")),
                Metadata::now(tool, ms(), 0),
            );
        };
        match tokio::time::timeout(timeout, t.call(ctx, params)).await {
            Ok(Ok(out)) => {
                let result = match out.payload {
                    Payload::Json(v) => v,
                    Payload::Text(s) => Value::String(s),
                };
                Envelope::ok(result, out.signals, Metadata::now(tool, ms(), 1))
            }
            Ok(Err(e)) => Envelope::err(e, Metadata::now(tool, ms(), 1)),
            Err(_) => Envelope::err(
                ToolError::new(
                    ErrorCode::Timeout,
                    format!("`{tool}` timed out after {} ms", timeout.as_millis()),
                ),
                Metadata::now(tool, ms(), 1),
            ),
        }
    }
}

/// What one caller sees of a set of specs.
pub struct View {
    pub specs: BTreeMap<String, ToolSpec>,
    pub policy: Policy,
    pub caller: Caller,
}

impl GuideView for View {
    fn tool(&self, name: &str) -> Option<ToolSpec> {
        self.specs.get(name).cloned()
    }

    fn may_call(&self, name: &str) -> bool {
        self.specs.get(name).is_some_and(|s| self.policy.visible(&self.caller, s))
    }
}

pub fn ctx(role: &str) -> ToolContext {
    ToolContext::new(Caller::new("u1", role))
}
