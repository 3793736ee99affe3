//! The execute pipeline, and skill tools that run their steps through it.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde_json::{Value, json};
use skills::{Skill, StepRunner};
use tool_core::{
    Caller, Envelope, ErrorCode, FieldError, Metadata, Payload, Signal, Tool, ToolContext, ToolError,
    ToolOutput, ToolResult, ToolSpec, names::is_injected_field,
};

use crate::audit::{AuditRecord, audited};
use crate::metrics::CallMetrics;
use crate::registry::{Entry, Inner};
use crate::trace::{TraceEvent, redact};
use crate::{CallOptions, Format, Gateway, Limits};

/// What a run produced before it became an envelope.
struct Ran {
    result: Result<(Value, Vec<Signal>), ToolError>,
    attempts: u32,
}

impl Gateway {
    /// Run a tool for a caller: lookup, authorization, limits, validation,
    /// execution under a timeout with the retry policy, then one envelope.
    /// Never panics, whatever `params` holds.
    pub async fn execute(
        &self,
        ctx: &ToolContext,
        tool: &str,
        params: Value,
        opts: &CallOptions,
    ) -> Envelope {
        let started = Instant::now();
        let inner = &*self.inner;
        let entry = inner.tools.get(tool);
        let slot = entry.map_or(inner.metrics.unknown_tool(), |e| e.slot);
        let write = entry.is_some_and(|e| !e.tool.spec().effect.is_read());
        // The audit trail keeps the parameters of writes and refused calls;
        // they are redacted before the call consumes them, and only then.
        let audit_params = match (&inner.audit, entry) {
            (Some(_), Some(e)) if write || self.authorize(&ctx.caller, e.tool.spec()).is_err() => {
                Some(redact(&params))
            }
            _ => None,
        };
        let traced = inner.trace.receiver_count() > 0;
        let mut traced_params = Value::Null;
        let in_flight = InFlight::enter(&inner.metrics);
        let ran = self.run(ctx, tool, params, opts, traced.then_some(&mut traced_params)).await;
        drop(in_flight);
        let elapsed = started.elapsed().as_secs_f64();
        let metadata = Metadata::now(tool, elapsed * 1000.0, ran.attempts);
        let envelope = match ran.result {
            Ok((result, signals)) => Envelope::ok(result, signals, metadata),
            Err(error) => Envelope::err(error, metadata),
        };
        inner.metrics.finished(slot, &ctx.caller.role, envelope.code(), elapsed);
        if let (Some(sink), Some(params)) = (&inner.audit, audit_params)
            && audited(write, envelope.code())
        {
            sink.record(AuditRecord::new(ctx, &envelope, params)).await;
        }
        if traced {
            let _ = inner.trace.send(TraceEvent::new(ctx, &envelope, traced_params));
        }
        envelope
    }

    /// Parse `params_json` and execute; text that is not JSON is `INVALID_PARAMS`.
    pub async fn execute_json(
        &self,
        ctx: &ToolContext,
        tool: &str,
        params_json: &str,
        opts: &CallOptions,
    ) -> Envelope {
        match serde_json::from_str::<Value>(params_json) {
            Ok(params) => self.execute(ctx, tool, params, opts).await,
            Err(e) => {
                let error = ToolError::invalid_params(vec![FieldError::new(
                    "",
                    "a JSON object",
                    &Value::Null,
                    format!("parameters are not valid JSON ({e}); send one JSON object"),
                )]);
                Envelope::err(error, Metadata::now(tool, 0.0, 0))
            }
        }
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        name: &str,
        params: Value,
        opts: &CallOptions,
        traced_params: Option<&mut Value>,
    ) -> Ran {
        let inner = &*self.inner;
        let Some(entry) = inner.tools.get(name) else {
            return Ran { result: Err(self.tool_not_found(&ctx.caller, name)), attempts: 0 };
        };
        if let Err(error) = self.authorize(&ctx.caller, entry.tool.spec()) {
            return Ran { result: Err(error), attempts: 0 };
        }
        // Held until the call is done: it owns the caller's concurrency slots.
        let _permit = match &inner.limiter {
            Some(limiter) => match limiter.admit(&ctx.caller, name).await {
                Ok(permit) => Some(permit),
                Err(error) => return Ran { result: Err(error), attempts: 0 },
            },
            None => None,
        };
        if let Err(error) = check_limits(&params, &inner.limits) {
            return Ran { result: Err(error), attempts: 0 };
        }
        if let Some(slot) = traced_params {
            *slot = redact(&params);
        }
        let params = if opts.openai_strict { schema_gen::export::openai_unwrap(params) } else { params };
        if let Err(error) = check_params(entry, &params) {
            return Ran { result: Err(error), attempts: 0 };
        }
        run_with_policy(entry, ctx, params, opts, &inner.limits).await
    }

    /// The authorization answer for one tool, as the model sees it.
    pub(crate) fn authorize(&self, caller: &Caller, spec: &ToolSpec) -> Result<(), ToolError> {
        self.inner.policy.decide(caller, spec).map_err(|denial| {
            let mut details = json!({ "tool": spec.name });
            if let Some(role) = denial.required_role() {
                details["required_role"] = json!(role);
            }
            ToolError::new(ErrorCode::PermissionDenied, denial.message(&spec.name)).with_details(details)
        })
    }

    /// `TOOL_NOT_FOUND` with up to three close names the caller may use.
    pub(crate) fn tool_not_found(&self, caller: &Caller, name: &str) -> ToolError {
        let visible = self.inner.order.iter().filter(|n| {
            self.inner.tools.get(*n).is_some_and(|e| self.inner.policy.visible(caller, e.tool.spec()))
        });
        let suggestions = closest(name, visible.map(String::as_str));
        let mut message = format!("there is no tool named `{}`.", short(name));
        if suggestions.is_empty() {
            message.push_str(" Use only tool names from the catalog.");
        } else {
            message.push_str(&format!(" Did you mean {}?", quoted(&suggestions)));
        }
        ToolError::new(ErrorCode::ToolNotFound, message).with_details(json!({ "suggestions": suggestions }))
    }
}

/// Counts a call in flight until dropped, so a cancelled call (its future
/// dropped mid-way) leaves the gauge too.
struct InFlight<'a>(&'a CallMetrics);

impl<'a> InFlight<'a> {
    fn enter(metrics: &'a CallMetrics) -> Self {
        metrics.started();
        Self(metrics)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.left();
    }
}

/// A name as the caller sent it, cut to 64 characters for messages.
pub(crate) fn short(name: &str) -> String {
    if name.chars().count() > 64 {
        format!("{}…", name.chars().take(64).collect::<String>())
    } else {
        name.to_owned()
    }
}

pub(crate) fn quoted(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// Up to three names close to `wanted`: same words in another order, a
/// substring, or a small edit distance.
pub(crate) fn closest<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let wanted = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = names
        .filter_map(|name| {
            let mut score = strsim::jaro_winkler(&wanted, name);
            if !wanted.is_empty() && (name.contains(wanted.as_str()) || wanted.contains(name)) {
                score = score.max(0.9);
            }
            let mut a: Vec<&str> = wanted.split('_').collect();
            let mut b: Vec<&str> = name.split('_').collect();
            a.sort_unstable();
            b.sort_unstable();
            if a == b {
                score = 1.0;
            }
            (score >= 0.75).then_some((score, name))
        })
        .collect();
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then_with(|| x.1.cmp(y.1)));
    scored.into_iter().take(3).map(|(_, n)| n.to_string()).collect()
}

/// Size and depth limits, checked without recursion so that any value,
/// however deep, gets an answer instead of a stack overflow.
pub(crate) fn check_limits(params: &Value, limits: &Limits) -> Result<(), ToolError> {
    let mut stack: Vec<(&Value, usize)> = vec![(params, 1)];
    let mut bytes = 0usize;
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Object(map) => {
                if depth > limits.max_depth {
                    return Err(limit_error(format!(
                        "parameters are nested deeper than {} levels; flatten them",
                        limits.max_depth
                    )));
                }
                bytes += 2;
                for (key, child) in map {
                    bytes += key.len() + 4;
                    stack.push((child, depth + 1));
                }
            }
            Value::Array(items) => {
                if depth > limits.max_depth {
                    return Err(limit_error(format!(
                        "parameters are nested deeper than {} levels; flatten them",
                        limits.max_depth
                    )));
                }
                bytes += 2 + items.len();
                stack.extend(items.iter().map(|child| (child, depth + 1)));
            }
            Value::String(s) => bytes += s.len() + 2,
            Value::Number(_) => bytes += 8,
            Value::Bool(_) | Value::Null => bytes += 5,
        }
        if bytes > limits.max_param_bytes {
            return Err(limit_error(format!(
                "parameters are larger than {} bytes; send less (e.g. ids instead of whole records)",
                limits.max_param_bytes
            )));
        }
    }
    Ok(())
}

fn limit_error(message: String) -> ToolError {
    ToolError::invalid_params(vec![FieldError::new("", "smaller parameters", &Value::Null, message)])
}

/// Context-injected names first (with a message that says where the value
/// comes from), then the schema, every error at once.
fn check_params(entry: &Entry, params: &Value) -> Result<(), ToolError> {
    if let Value::Object(map) = params {
        let injected: Vec<FieldError> = map
            .iter()
            .filter(|(k, _)| is_injected_field(k))
            .map(|(k, v)| {
                FieldError::new(
                    tool_core::params::pointer(k),
                    "no such parameter",
                    v,
                    format!("`{k}` is taken from the caller's session, never from parameters; remove it"),
                )
            })
            .collect();
        if !injected.is_empty() {
            return Err(ToolError::invalid_params(hide_secrets(injected)));
        }
    }
    let mut errors = entry.validator.validate(params).err().unwrap_or_default();
    // Cross-field rules a schema cannot express (a return before the
    // departure, ...), so the model gets every problem in one answer; a
    // field the schema already refused is not reported twice.
    let extra: Vec<FieldError> = entry
        .tool
        .check_params(params)
        .into_iter()
        .filter(|e| !errors.iter().any(|s| s.pointer == e.pointer))
        .collect();
    errors.extend(extra);
    if errors.is_empty() { Ok(()) } else { Err(ToolError::invalid_params(hide_secrets(errors))) }
}

/// An error about a secret-looking field (`api_key`, `token`, ...) never
/// repeats the value: not in `actual`, not in the message (which may quote it).
fn hide_secrets(errors: Vec<FieldError>) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut e| {
            let secret = e.pointer.split('/').any(crate::trace::is_secret)
                || e.message.split('`').skip(1).step_by(2).any(crate::trace::is_secret);
            if secret && !matches!(e.actual, Value::Null) {
                let field = e.pointer.rsplit('/').next().unwrap_or_default().to_owned();
                e.actual = Value::String("[redacted]".into());
                e.message = format!(
                    "`{field}` is not valid (expected {}); its value is not repeated here",
                    e.expected
                );
            }
            e
        })
        .collect()
}

/// Run under the timeout, retrying transient failures of retry-safe tools.
async fn run_with_policy(
    entry: &Entry,
    ctx: &ToolContext,
    params: Value,
    opts: &CallOptions,
    limits: &Limits,
) -> Ran {
    let spec = entry.tool.spec();
    let timeout = opts
        .timeout_ms
        .map(Duration::from_millis)
        .unwrap_or(spec.timeout)
        .min(Duration::from_millis(limits.max_timeout_ms));
    let retries = if spec.effect.is_retry_safe() {
        opts.retries.unwrap_or(limits.default_retries).min(limits.max_retries)
    } else {
        0
    };
    let delay = Duration::from_millis(opts.retry_delay_ms.unwrap_or(limits.default_retry_delay_ms));
    let mut attempts = 0u32;
    let mut params = Some(params);
    loop {
        attempts += 1;
        let last = attempts > retries;
        // The last attempt takes the parameters; earlier ones get a copy.
        let these =
            if last { params.take().unwrap_or(Value::Null) } else { params.clone().unwrap_or(Value::Null) };
        let error = match attempt(entry, ctx, these, timeout).await {
            Ok(output) => return Ran { result: convert(output, opts.format), attempts },
            Err(error) => error,
        };
        if !error.transient || last {
            let result = if attempts > 1 && error.transient {
                Err(exhausted(&spec.name, attempts, error))
            } else {
                Err(error)
            };
            return Ran { result, attempts };
        }
        tracing::debug!(tool = %spec.name, attempts, code = %error.code, "transient failure, retrying");
        if !delay.is_zero() {
            tokio::time::sleep(delay * attempts).await;
        }
    }
}

async fn attempt(entry: &Entry, ctx: &ToolContext, params: Value, timeout: Duration) -> ToolResult {
    let spec = entry.tool.spec();
    let mut ctx = ctx.clone();
    ctx.deadline = Some(Instant::now() + timeout);
    let call = AssertUnwindSafe(entry.tool.call(&ctx, params)).catch_unwind();
    match tokio::time::timeout(timeout, call).await {
        Ok(Ok(result)) => result,
        Ok(Err(_panic)) => {
            tracing::error!(tool = %spec.name, "tool panicked; answered INTERNAL_ERROR");
            Err(ToolError::internal())
        }
        Err(_elapsed) => Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "`{}` did not finish within {} ms. Try again later, or with a larger options.timeout_ms.",
                spec.name,
                timeout.as_millis()
            ),
        )
        .with_details(json!({ "timeout_ms": timeout.as_millis() as u64 }))),
    }
}

fn exhausted(tool: &str, attempts: u32, last: ToolError) -> ToolError {
    let message = format!(
        "`{tool}` failed {attempts} times; last error {}: {}. Tell the user it is not available right now.",
        last.code, last.message
    );
    ToolError::new(ErrorCode::RetryExhausted, message).with_details(json!({
        "attempts": attempts,
        "last_error": { "code": last.code, "message": last.message, "details": last.details },
    }))
}

fn convert(output: ToolOutput, format: Format) -> Result<(Value, Vec<Signal>), ToolError> {
    let value = match (output.payload, format) {
        (Payload::Json(value), _) => value,
        (Payload::Text(text), Format::Raw) => Value::String(text),
        (Payload::Text(text), Format::Json) => serde_json::from_str(&text).map_err(|e| {
            let preview = tool_core::params::shorten(&Value::String(text));
            ToolError::new(
                ErrorCode::ParseError,
                format!(
                    "the tool answered text that is not JSON ({e}). Call again with options.format = \"raw\" to read it as text."
                ),
            )
            .with_details(json!({ "preview": preview }))
        })?,
    };
    Ok((value, output.signals))
}

/// A skill with an orchestration block, served as the tool `run_<skill>`.
pub(crate) struct SkillTool {
    skill: Skill,
    spec: ToolSpec,
    gateway: Arc<OnceLock<Weak<Inner>>>,
}

impl SkillTool {
    pub(crate) fn new(
        skill: &Skill,
        tools: &BTreeMap<String, ToolSpec>,
        gateway: Arc<OnceLock<Weak<Inner>>>,
    ) -> Option<Self> {
        let spec = skill.tool_spec_with(&|name: &str| tools.get(name).cloned())?;
        Some(Self { skill: skill.clone(), spec, gateway })
    }
}

#[async_trait::async_trait]
impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult {
        let Some(inner) = self.gateway.get().and_then(Weak::upgrade) else {
            return Err(ToolError::unavailable("the gateway that runs this skill is shutting down"));
        };
        let runner = Gateway { inner };
        skills::orchestrate(&self.skill, &runner, ctx, params).await
    }
}

#[async_trait::async_trait]
impl StepRunner for Gateway {
    async fn run_step(&self, ctx: &ToolContext, tool: &str, params: Value, timeout: Duration) -> Envelope {
        let opts = CallOptions { timeout_ms: Some(timeout.as_millis() as u64), ..CallOptions::default() };
        self.execute(ctx, tool, params, &opts).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names() {
        let names = ["query_travel_order", "cancel_travel_order", "query_booking_record", "query_weather"];
        let got = closest("query_order", names.iter().copied());
        assert_eq!(got.first().map(String::as_str), Some("query_travel_order"));
        assert_eq!(closest("order_travel_query", names.iter().copied())[0], "query_travel_order");
        assert!(closest("zzzz", names.iter().copied()).is_empty());
        assert!(closest("query", names.iter().copied()).len() <= 3);
    }

    #[test]
    fn limits_answer_without_recursion() {
        let limits = Limits::default();
        let mut deep = json!(1);
        for _ in 0..100 {
            deep = json!([deep]);
        }
        let err = check_limits(&json!({ "a": deep }), &limits).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidParams);
        assert!(err.message.contains("nested deeper"));
        let big = json!({ "a": "x".repeat(limits.max_param_bytes + 1) });
        assert!(check_limits(&big, &limits).unwrap_err().message.contains("larger than"));
        check_limits(&json!({ "a": [1, 2, {"b": "c"}] }), &limits).unwrap();
    }
}
