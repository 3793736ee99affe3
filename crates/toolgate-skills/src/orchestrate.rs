//! Running a skill's orchestration: the [`StepRunner`] contract the gateway
//! implements, [`orchestrate`] (sequential, parallel, routing, with step and
//! run time limits) and [`SkillTool`], the skill as a [`Tool`].

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use serde_json::{Value, json};
use tokio::time::Instant;
use toolgate_core::{
    Envelope, ErrorCode, FieldError, Metadata, Tool, ToolContext, ToolError, ToolOutput, ToolResult, ToolSpec,
};

use crate::skill::{Binding, Mode, OnError, Orchestration, Skill};

/// Runs one tool on behalf of an orchestration. The gateway implements it
/// with its whole pipeline (lookup, the caller's permissions, validation of
/// `params` against the tool's schema, the time limit, retries) so a step is
/// exactly the call the model could have made itself.
#[async_trait::async_trait]
pub trait StepRunner: Send + Sync {
    /// Call `tool` with `params` within `timeout`, and answer its envelope.
    async fn run_step(&self, ctx: &ToolContext, tool: &str, params: Value, timeout: Duration) -> Envelope;
}

/// What happened to one binding.
#[derive(Debug)]
enum Outcome {
    /// It ran (or hit its own step limit); the envelope says how it went.
    Ran(Envelope),
    /// It was cut off by the run's time limit.
    CutOff(Envelope),
    /// It never started: an earlier step failed in stop mode.
    AfterFailure,
    /// It never started: the run's time limit had passed.
    AfterTimeout,
}

impl Outcome {
    fn envelope(&self) -> Option<&Envelope> {
        match self {
            Outcome::Ran(e) | Outcome::CutOff(e) => Some(e),
            Outcome::AfterFailure | Outcome::AfterTimeout => None,
        }
    }

    fn failed(&self) -> bool {
        self.envelope().is_some_and(|e| !e.success)
    }
}

/// Run a skill's orchestration with `input` (already validated against the
/// `run_<skill>` schema by the gateway; only what this function needs is
/// checked again).
///
/// The result is `{"skill", "mode", "steps": [{"tool", "envelope"}],
/// "completed", "failed", "skipped": [tools that never started]}` (routing
/// adds `"route"`, the value that picked the tool). It is an error when:
///
/// - the run's time limit passes: `TIMEOUT`, whatever `on_error` says;
/// - a step fails in `stop` mode or in routing: `EXECUTION_ERROR` naming
///   the first failed step;
/// - every step fails in `continue` mode: `EXECUTION_ERROR`.
///
/// Every error carries the result object above as its `details`, so the
/// model sees what did happen. A routing value that picks no binding is
/// `INVALID_PARAMS` naming the valid values.
pub async fn orchestrate(
    skill: &Skill,
    runner: &dyn StepRunner,
    ctx: &ToolContext,
    input: Value,
) -> ToolResult {
    let Some(orch) = &skill.orchestration else {
        return Err(ToolError::new(
            ErrorCode::ToolNotFound,
            format!(
                "skill `{}` has no orchestration, so there is no `{}` tool; read its guide with get_skill_guide and call the steps one by one",
                skill.id,
                skill.tool_name()
            ),
        ));
    };
    if !input.is_object() {
        return Err(ToolError::invalid_params(vec![FieldError::new(
            "",
            "a JSON object",
            &input,
            format!("the input of `{}` must be a JSON object", skill.tool_name()),
        )]));
    }
    let started = Instant::now();
    let mut run_deadline = started + orch.timeout;
    if let Some(d) = ctx.deadline {
        run_deadline = run_deadline.min(Instant::from_std(d));
    }

    let (plan, route): (Vec<&Binding>, Option<Value>) = match orch.mode {
        Mode::Routing => {
            let (binding, value) = pick_route(orch, &input)?;
            (vec![binding], Some(value))
        }
        Mode::Sequential | Mode::Parallel => (orch.bindings.iter().collect(), None),
    };
    let total = plan.len();
    let done = AtomicUsize::new(0);
    let steps = Steps { runner, ctx, input: &input, orch, run_deadline, done: &done, total };

    let outcomes: Vec<Outcome> = match orch.mode {
        Mode::Sequential | Mode::Routing => {
            let mut outcomes = Vec::with_capacity(total);
            // Once set, what every later binding becomes without running.
            let mut halted: Option<fn() -> Outcome> = None;
            for binding in &plan {
                if let Some(skip) = halted {
                    outcomes.push(skip());
                    continue;
                }
                let outcome = steps.run(binding).await;
                if matches!(outcome, Outcome::CutOff(_) | Outcome::AfterTimeout) {
                    halted = Some(|| Outcome::AfterTimeout);
                } else if outcome.failed() && orch.on_error == OnError::Stop {
                    halted = Some(|| Outcome::AfterFailure);
                }
                outcomes.push(outcome);
            }
            outcomes
        }
        Mode::Parallel => {
            let stop = AtomicBool::new(false);
            let (steps, stop) = (&steps, &stop);
            // Futures built up front (they start on first poll): a stream
            // of closures over borrowed bindings trips the `Send` check.
            let futures: Vec<_> = plan
                .iter()
                .map(|&binding| async move {
                    if stop.load(Ordering::SeqCst) {
                        return Outcome::AfterFailure;
                    }
                    let outcome = steps.run(binding).await;
                    if outcome.failed() && orch.on_error == OnError::Stop {
                        stop.store(true, Ordering::SeqCst);
                    }
                    outcome
                })
                .collect();
            stream::iter(futures).buffered(orch.max_parallel.max(1)).collect().await
        }
    };

    finish(skill, orch, &plan, &outcomes, route, started)
}

/// The binding the `route_by` value picks, or `INVALID_PARAMS` naming the valid values.
#[allow(clippy::result_large_err, reason = "ToolError is the contract's error type")]
fn pick_route<'a>(orch: &'a Orchestration, input: &Value) -> Result<(&'a Binding, Value), ToolError> {
    let field = orch.route_by.as_deref().unwrap_or_default();
    let valid: Vec<String> =
        orch.bindings.iter().filter_map(|b| b.when.as_ref()).map(Value::to_string).collect();
    let valid = valid.join(", ");
    let value = input.get(field).filter(|v| !v.is_null());
    let Some(value) = value else {
        return Err(ToolError::invalid_params(vec![FieldError::new(
            format!("/{field}"),
            format!("one of {valid}"),
            &Value::Null,
            format!("`{field}` is required: it picks the tool to run; use one of {valid}"),
        )]));
    };
    match orch.bindings.iter().find(|b| b.when.as_ref() == Some(value)) {
        Some(b) => Ok((b, value.clone())),
        None => Err(ToolError::invalid_params(vec![FieldError::new(
            format!("/{field}"),
            format!("one of {valid}"),
            value,
            format!("`{field}` = {value} matches no route; use one of {valid}"),
        )])),
    }
}

/// What every step needs to run.
struct Steps<'a> {
    runner: &'a dyn StepRunner,
    ctx: &'a ToolContext,
    input: &'a Value,
    orch: &'a Orchestration,
    run_deadline: Instant,
    done: &'a AtomicUsize,
    total: usize,
}

impl Steps<'_> {
    /// Run one binding under the earlier of its step limit and the run's limit.
    async fn run(&self, binding: &Binding) -> Outcome {
        let now = Instant::now();
        if now >= self.run_deadline {
            return Outcome::AfterTimeout;
        }
        let step_deadline = now + self.orch.step_timeout;
        let cut_by_run = self.run_deadline < step_deadline;
        let deadline = if cut_by_run { self.run_deadline } else { step_deadline };
        let ctx = self.ctx.clone().with_deadline(deadline.into_std());
        let params = binding.params_for(self.input);
        let call = self.runner.run_step(&ctx, &binding.tool, params, deadline - now);
        let outcome = match tokio::time::timeout_at(deadline, call).await {
            Ok(envelope) if cut_by_run && !envelope.success && Instant::now() >= self.run_deadline => {
                Outcome::CutOff(envelope)
            }
            Ok(envelope) => Outcome::Ran(envelope),
            Err(_) => {
                let ms = now.elapsed().as_secs_f64() * 1000.0;
                if cut_by_run {
                    Outcome::CutOff(timeout_envelope(
                        &binding.tool,
                        ms,
                        format!(
                            "`{}` was still running when the skill run reached its time limit ({} ms); it was stopped",
                            binding.tool,
                            self.orch.timeout.as_millis()
                        ),
                    ))
                } else {
                    Outcome::Ran(timeout_envelope(
                        &binding.tool,
                        ms,
                        format!(
                            "`{}` did not finish within the step time limit ({} ms)",
                            binding.tool,
                            self.orch.step_timeout.as_millis()
                        ),
                    ))
                }
            }
        };
        let n = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        self.ctx.progress(n as f64, Some(self.total as f64), &format!("step `{}` finished", binding.tool));
        outcome
    }
}

fn timeout_envelope(tool: &str, ms: f64, message: String) -> Envelope {
    Envelope::err(ToolError::new(ErrorCode::Timeout, message), Metadata::now(tool, ms, 1))
}

/// The one result of the run, or the error that carries it.
#[allow(clippy::result_large_err, reason = "ToolResult is the contract's result type")]
fn finish(
    skill: &Skill,
    orch: &Orchestration,
    plan: &[&Binding],
    outcomes: &[Outcome],
    route: Option<Value>,
    started: Instant,
) -> ToolResult {
    let steps: Vec<Value> = plan
        .iter()
        .zip(outcomes)
        .filter_map(|(b, o)| o.envelope().map(|e| json!({"tool": b.tool, "envelope": e.to_value()})))
        .collect();
    let skipped: Vec<&str> = plan
        .iter()
        .zip(outcomes)
        .filter(|(_, o)| o.envelope().is_none())
        .map(|(b, _)| b.tool.as_str())
        .collect();
    let completed = outcomes.iter().filter(|o| o.envelope().is_some_and(|e| e.success)).count();
    let failed = outcomes.iter().filter(|o| o.failed()).count();
    let mut result = json!({
        "skill": skill.id,
        "mode": orch.mode.as_str(),
        "steps": steps,
        "completed": completed,
        "failed": failed,
        "skipped": skipped,
    });
    if let Some(route) = route {
        result["route"] = route;
    }
    let total = plan.len();
    let run = skill.tool_name();

    if outcomes.iter().any(|o| matches!(o, Outcome::CutOff(_) | Outcome::AfterTimeout)) {
        let ms = started.elapsed().as_millis();
        return Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "`{run}` did not finish within its time limit ({} ms, stopped after {ms} ms): {completed} of {total} steps completed, {failed} failed, {} did not run; `details.steps` has each finished step's envelope",
                orch.timeout.as_millis(),
                skipped.len()
            ),
        )
        .with_details(result));
    }
    let first_failure = plan.iter().zip(outcomes).enumerate().find(|(_, (_, o))| o.failed());
    let Some((i, (binding, outcome))) = first_failure else {
        return Ok(ToolOutput::json(result));
    };
    let (code, message) = outcome
        .envelope()
        .and_then(|e| e.error.as_ref())
        .map(|e| (e.code.as_str(), e.message.as_str()))
        .unwrap_or(("EXECUTION_ERROR", "no error message"));
    let stop = orch.mode == Mode::Routing || orch.on_error == OnError::Stop;
    if stop {
        let tail = if skipped.is_empty() {
            String::new()
        } else {
            format!("; not run: {}", skipped.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", "))
        };
        let which = if orch.mode == Mode::Routing {
            format!("the routed tool `{}`", binding.tool)
        } else {
            format!("step {} of {total} (`{}`)", i + 1, binding.tool)
        };
        return Err(ToolError::new(
            ErrorCode::ExecutionError,
            format!("`{run}` failed: {which} answered {code}: {message}{tail}. `details.steps` has each step's envelope"),
        )
        .with_details(result));
    }
    if completed == 0 {
        return Err(ToolError::new(
            ErrorCode::ExecutionError,
            format!(
                "`{run}` failed: every step failed; the first, `{}`, answered {code}: {message}. `details.steps` has each step's envelope",
                binding.tool
            ),
        )
        .with_details(result));
    }
    Ok(ToolOutput::json(result))
}

/// A skill with an orchestration as a [`Tool`]: its spec is the
/// `run_<skill>` spec and a call runs [`orchestrate`] with the given runner.
pub struct SkillTool {
    skill: Arc<Skill>,
    spec: ToolSpec,
    runner: Arc<dyn StepRunner>,
}

impl SkillTool {
    /// The tool of a skill, with the spec to publish (usually
    /// [`Skill::tool_spec_with`]); `None` when the skill has no orchestration.
    pub fn new(skill: Arc<Skill>, spec: ToolSpec, runner: Arc<dyn StepRunner>) -> Option<Self> {
        skill.orchestration.as_ref()?;
        Some(Self { skill, spec, runner })
    }

    /// The skill this tool runs.
    pub fn skill(&self) -> &Skill {
        &self.skill
    }
}

impl fmt::Debug for SkillTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillTool")
            .field("skill", &self.skill.id)
            .field("tool", &self.spec.name)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult {
        orchestrate(&self.skill, self.runner.as_ref(), ctx, params).await
    }
}
