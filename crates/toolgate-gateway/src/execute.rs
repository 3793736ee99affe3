//! The execute pipeline: lookup, authorization, limits, validation, then
//! the run under one total deadline with the retry policy, and one envelope.

use std::time::Instant;

use serde_json::{Value, json};
use toolgate_core::{
    Answer, Caller, Envelope, ErrorCode, FieldError, Metadata, Payload, Signal, ToolContext, ToolError,
    ToolOutput, ToolSpec, names::is_injected_field,
};

use crate::audit::{AuditRecord, audited};
use crate::dynamic::Table;
use crate::echo::{self, clip_str};
use crate::metrics::CallMetrics;
use crate::registry::Entry;
use crate::retry::Policy;
use crate::trace::CallTrace;
use crate::{CallOptions, Format, Gateway, Limits};
use crate::{confirm, missing};

/// A successful run's result, its signals and the images beside it.
pub(crate) type Converted = (Value, Vec<Signal>, Vec<toolgate_core::Image>);

/// What a run produced before it became an envelope.
struct Ran {
    result: Result<Converted, ToolError>,
    attempts: u32,
}

/// What `execute` found before the run: the size and depth check, when the
/// call started (its deadline counts from there) and its trace.
struct Before<'a> {
    /// The snapshot the call runs on (tools, policy, limits), loaded once.
    table: &'a Table,
    limits: Result<(), ToolError>,
    started: Instant,
    trace: Option<&'a CallTrace>,
}

impl Ran {
    fn refused(error: ToolError) -> Self {
        Self { result: Err(error), attempts: 0 }
    }
}

impl Gateway {
    /// Run a tool for a caller: lookup, authorization, limits, validation,
    /// execution under one total deadline with the retry policy, then one
    /// envelope. Never panics, whatever `params` holds.
    pub async fn execute(
        &self,
        ctx: &ToolContext,
        tool: &str,
        params: Value,
        opts: &CallOptions,
    ) -> Envelope {
        let started = Instant::now();
        let inner = &*self.inner;
        // One snapshot for the whole call: its tool, the policy and the limits (a reload
        // swaps the next one in; this call keeps its own).
        let table = inner.tools();
        // Checked first (without recursion) so that the trace only ever
        // walks parameters of a sane size and depth.
        let limits = check_limits(&params, &table.settings.limits);
        let name = clip_str(tool);
        let trace = (inner.trace.receiver_count() > 0).then(|| {
            let shown = if limits.is_ok() { echo::traced(&params) } else { Value::Null };
            CallTrace::start(inner.trace.clone(), ctx, &name, shown)
        });
        let entry = table.tools.get(tool);
        let slot = entry.map_or(inner.metrics.unknown_tool(), |e| e.slot.min(inner.metrics.unknown_tool()));
        let write = entry.is_some_and(|e| !e.tool.spec().effect.is_read());
        // The audit trail keeps the parameters of writes and refused calls;
        // they are redacted before the call consumes them, and only then.
        let audit_params = match (&inner.audit, entry) {
            (Some(_), Some(e))
                if write || authorize(&table.settings.policy, &ctx.caller, e.tool.spec()).is_err() =>
            {
                Some(if limits.is_ok() { echo::traced(&params) } else { Value::Null })
            }
            _ => None,
        };
        let in_flight = InFlight::enter(&inner.metrics);
        let ran = self
            .run(ctx, tool, params, opts, Before { table: &table, limits, started, trace: trace.as_ref() })
            .await;
        drop(in_flight);
        let elapsed = started.elapsed().as_secs_f64();
        let metadata = Metadata::now(name, elapsed * 1000.0, ran.attempts);
        let envelope = match ran.result {
            Ok((result, signals, images)) => Envelope::ok(result, signals, metadata).with_images(images),
            Err(error) => Envelope::err(error, metadata),
        };
        inner.metrics.finished(slot, &ctx.caller.role, envelope.code(), elapsed);
        if let (Some(sink), Some(params)) = (&inner.audit, audit_params)
            && audited(write, envelope.code())
        {
            sink.record(AuditRecord::new(ctx, &envelope, params)).await;
        }
        if let Some(observer) = &inner.observer {
            observer.finished(ctx, &envelope);
        }
        if let Some(trace) = trace {
            trace.end(&envelope);
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
                // serde_json's message names a position, never the text itself.
                let error = ToolError::invalid_params(vec![FieldError::new(
                    "",
                    "a JSON object",
                    &Value::Null,
                    format!("parameters are not valid JSON ({e}); send one JSON object"),
                )]);
                Envelope::err(error, Metadata::now(clip_str(tool), 0.0, 0))
            }
        }
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        name: &str,
        params: Value,
        opts: &CallOptions,
        before: Before<'_>,
    ) -> Ran {
        let Before { table, limits, started, trace } = before;
        let inner = &*self.inner;
        let settings = &table.settings;
        let Some(entry) = table.tools.get(name) else {
            return Ran::refused(self.tool_not_found(&ctx.caller, name));
        };
        if let Err(error) = authorize(&settings.policy, &ctx.caller, entry.tool.spec()) {
            return Ran::refused(error);
        }
        // Held until the call is done: it owns the caller's concurrency slots.
        let _permit = match &inner.limiter {
            Some(limiter) => match limiter.admit(&ctx.caller, name).await {
                Ok(permit) => Some(permit),
                Err(error) => return Ran::refused(error),
            },
            None => None,
        };
        if let Err(error) = limits {
            return Ran::refused(error);
        }
        let params = if opts.openai_strict { toolgate_schema::export::openai_unwrap(params) } else { params };
        let mut started = started;
        let params = match (check_params(entry, &params), &ctx.asker) {
            (Ok(()), _) => params,
            (Err(error), Some(asker)) if settings.limits.ask_for_missing => {
                let timeout = std::time::Duration::from_millis(settings.limits.confirm_timeout_ms);
                let spec = entry.tool.spec();
                match missing::ask(asker.as_ref(), spec, params, error, timeout, trace).await {
                    Ok(filled) => {
                        if let Err(error) = check_params(entry, &filled) {
                            return Ran::refused(error);
                        }
                        // The person's time does not count in the call's deadline.
                        started = Instant::now();
                        filled
                    }
                    Err(error) => return Ran::refused(error),
                }
            }
            (Err(error), _) => return Ran::refused(error),
        };
        // A write whose person can be asked keeps its parameters, to run
        // again once they confirm.
        let asker = ctx.asker.as_ref().filter(|_| !entry.tool.spec().effect.is_read());
        let kept = asker.map(|_| params.clone());
        let policy = Policy::new(entry, ctx, opts, &settings.limits, started);
        let (result, attempts) = policy.run(entry, ctx, params, opts.format, &inner.backend_errors).await;
        let (Some(asker), Some(mut params), Ok((_, signals, _))) = (asker, kept, &result) else {
            return Ran { result, attempts };
        };
        let Some((message, param, value)) = confirm::wanted(signals) else {
            return Ran { result, attempts };
        };
        let timeout = std::time::Duration::from_millis(settings.limits.confirm_timeout_ms);
        let answer = confirm::ask(asker.as_ref(), name, message, timeout).await;
        if let Some(trace) = trace {
            trace.asked(message, confirm::outcome(&answer));
        }
        if let Answer::Unreachable(_) = answer {
            // The client could not take the question: the model gets the signal, as without an asker.
            return Ran { result, attempts };
        }
        if !answer.confirms() {
            return Ran { result: Ok(confirm::not_done(&answer, message)), attempts };
        }
        if let Some(map) = params.as_object_mut() {
            map.insert(param.to_owned(), value.clone());
        }
        // The confirming parameter is checked like any other; the write's
        // deadline starts now, not before the person answered.
        if let Err(error) = check_params(entry, &params) {
            return Ran { result: Err(error), attempts };
        }
        let policy = Policy::new(entry, ctx, opts, &settings.limits, Instant::now());
        let (result, again) = policy.run(entry, ctx, params, opts.format, &inner.backend_errors).await;
        Ran { result, attempts: attempts + again }
    }

    /// The authorization answer for one tool, as the model sees it.
    pub(crate) fn authorize(&self, caller: &Caller, spec: &ToolSpec) -> Result<(), ToolError> {
        authorize(&self.inner.policy(), caller, spec)
    }
}

/// The authorization answer of `policy` for one tool, as the model sees it.
fn authorize(policy: &toolgate_authz::Policy, caller: &Caller, spec: &ToolSpec) -> Result<(), ToolError> {
    policy.decide(caller, spec).map_err(|denial| {
        let mut details = json!({ "tool": spec.name });
        if let Some(role) = denial.required_role() {
            details["required_role"] = json!(role);
        }
        ToolError::new(ErrorCode::PermissionDenied, denial.message(&spec.name)).with_details(details)
    })
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
    let Value::Object(map) = params else {
        return Err(ToolError::invalid_params(vec![echo::not_an_object(params)]));
    };
    {
        let injected: Vec<FieldError> = map
            .iter()
            .filter(|(k, _)| is_injected_field(k))
            .map(|(k, v)| {
                FieldError::new(
                    toolgate_core::params::pointer(k),
                    "no such parameter",
                    v,
                    format!("`{k}` is taken from the caller's session, never from parameters; remove it"),
                )
            })
            .collect();
        if !injected.is_empty() {
            return Err(ToolError::invalid_params(echo::field_errors(injected)));
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
    if errors.is_empty() { Ok(()) } else { Err(ToolError::invalid_params(echo::field_errors(errors))) }
}

pub(crate) fn convert(output: ToolOutput, format: Format) -> Result<Converted, ToolError> {
    let value = match (output.payload, format) {
        (Payload::Json(value), _) => value,
        (Payload::Text(text), Format::Raw) => Value::String(text),
        (Payload::Text(text), Format::Json) => serde_json::from_str(&text).map_err(|e| {
            let preview = toolgate_core::params::shorten(&Value::String(text));
            ToolError::new(
                ErrorCode::ParseError,
                format!(
                    "the tool answered text that is not JSON ({e}). Call again with options.format = \"raw\" to read it as text."
                ),
            )
            .with_details(json!({ "preview": preview }))
        })?,
    };
    Ok((value, output.signals, output.images))
}

#[cfg(test)]
mod tests {
    use super::*;

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
