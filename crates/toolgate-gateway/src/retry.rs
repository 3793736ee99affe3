//! One call's time and retry policy: a total deadline over every attempt
//! and pause, retries only of transient failures of retry-safe tools, a
//! doubling pause, and an answer that says how many attempts ran and why
//! it stopped.

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde_json::{Map, Value, json};
use toolgate_core::{ErrorCode, FailureKind, ToolContext, ToolError, ToolResult};

use crate::backend_errors::BackendErrors;
use crate::execute::convert;
use crate::registry::Entry;
use crate::{CallOptions, Format, Limits};

/// Why a failed call stopped trying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    /// The failure is not one that trying again can fix.
    Final,
    /// The tool is not safe to run twice (a write that is not idempotent).
    NotRetrySafe,
    /// Every attempt the call allowed has run.
    RetriesExhausted,
    /// Another attempt could not have finished before the call's deadline.
    Deadline,
}

impl Stopped {
    fn label(self) -> &'static str {
        match self {
            Self::Final => "final_error",
            Self::NotRetrySafe => "not_retry_safe",
            Self::RetriesExhausted => "retries_exhausted",
            Self::Deadline => "deadline",
        }
    }
}

/// The limits of one call, resolved from its options, the tool and the gateway.
pub(crate) struct Policy {
    /// When the whole call must be over, retries and pauses included.
    deadline: Instant,
    /// The total time the call was given, in milliseconds (for messages).
    budget_ms: u64,
    /// The longest one attempt may run (the tool's own limit).
    per_attempt: Duration,
    retries: u32,
    retry_safe: bool,
    first_delay: Duration,
    max_delay: Duration,
}

impl Policy {
    pub(crate) fn new(
        entry: &Entry,
        ctx: &ToolContext,
        opts: &CallOptions,
        limits: &Limits,
        started: Instant,
    ) -> Self {
        let spec = entry.tool.spec();
        let default_ms =
            if spec.effect.is_read() { limits.read_deadline_ms } else { spec.timeout.as_millis() as u64 };
        let budget_ms = opts.timeout_ms.unwrap_or(default_ms).clamp(1, limits.max_timeout_ms.max(1));
        let mut deadline = started + Duration::from_millis(budget_ms);
        // A caller further up (a skill step, a transport) may have less time.
        if let Some(outer) = ctx.deadline {
            deadline = deadline.min(outer);
        }
        let retry_safe = spec.effect.is_retry_safe();
        let retries = if retry_safe {
            opts.retries.unwrap_or(limits.default_retries).min(limits.max_retries)
        } else {
            0
        };
        let max_delay = Duration::from_millis(limits.max_retry_delay_ms);
        let first_delay = Duration::from_millis(opts.retry_delay_ms.unwrap_or(limits.default_retry_delay_ms))
            .min(max_delay);
        Self { deadline, budget_ms, per_attempt: spec.timeout, retries, retry_safe, first_delay, max_delay }
    }

    /// The pause before retry number `retry` (1-based): d, 2d, 4d, ... capped.
    fn pause(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.saturating_sub(1)).unwrap_or(u32::MAX);
        self.first_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// Run the tool until it succeeds, fails for good, runs out of retries
    /// or out of time. Answers the outcome and the number of attempts.
    pub(crate) async fn run(
        &self,
        entry: &Entry,
        ctx: &ToolContext,
        params: Value,
        format: Format,
        backend_errors: &BackendErrors,
    ) -> (Result<crate::execute::Converted, ToolError>, u32) {
        let tool = entry.tool.spec().name.as_str();
        let mut codes: Vec<ErrorCode> = Vec::new();
        let mut params = Some(params);
        loop {
            let attempts = codes.len() as u32 + 1;
            let begun = Instant::now();
            let timeout = self.per_attempt.min(self.deadline.saturating_duration_since(begun));
            // The last possible attempt takes the parameters; earlier ones get a copy.
            let last = attempts > self.retries;
            let these = if last { params.take() } else { params.clone() }.unwrap_or(Value::Null);
            // Said in messages: the call's whole time when that is what cut this attempt short.
            let limit_ms =
                if timeout < self.per_attempt { self.budget_ms } else { timeout.as_millis() as u64 };
            let error = match attempt(entry, ctx, these, timeout, limit_ms, self.budget_ms).await {
                Ok(output) => return (convert(output, format), attempts),
                Err(error) => error,
            };
            if let Some(failure) = &error.backend {
                backend_errors.count(entry.tool.spec(), failure);
            }
            codes.push(error.code);
            let pause = self.pause(attempts);
            let stopped = if !error.transient {
                Stopped::Final
            } else if !self.retry_safe {
                Stopped::NotRetrySafe
            } else if last {
                Stopped::RetriesExhausted
            } else if Instant::now() + pause + begun.elapsed().max(Duration::from_millis(1)) > self.deadline {
                // A retry starts only when, after the pause, at least as much
                // time is left as this attempt took: it could not finish otherwise.
                Stopped::Deadline
            } else {
                tracing::debug!(tool, attempts, code = %error.code, "transient failure, retrying");
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
                continue;
            };
            // A definite answer on the first try (not found, conflict, ...) goes back as it is.
            let error = if stopped == Stopped::Final && attempts == 1 {
                error
            } else {
                self.answer(tool, &codes, error, stopped)
            };
            return (Err(error), attempts);
        }
    }

    /// The error a failed call answers. One attempt, or every attempt
    /// failing the same way (all timed out, the backend down each time):
    /// that error itself, so the model reads `TIMEOUT` or `UNAVAILABLE` at
    /// the top. Different failures: `RETRY_EXHAUSTED` with the last one.
    /// Either way the details say how many attempts ran, why it stopped and
    /// whether trying again later may work (`retryable`).
    fn answer(&self, tool: &str, codes: &[ErrorCode], last: ToolError, stopped: Stopped) -> ToolError {
        let attempts = codes.len();
        // Trying again later is worth it only for a transient failure of a
        // tool that is safe to run twice.
        let retryable = last.transient && self.retry_safe;
        let mut error = if codes.iter().all(|c| *c == last.code) {
            let mut error = last;
            if attempts > 1 {
                error.message = format!(
                    "{} ({attempts} attempts within {} ms, all failed this way.)",
                    error.message.trim_end(),
                    self.budget_ms
                );
            }
            error
        } else {
            let message = format!(
                "`{tool}` failed {attempts} times; last error {}: {}",
                last.code,
                last.message.trim_end()
            );
            let mut error = ToolError::new(ErrorCode::RetryExhausted, message)
                .with_details(json!({ "last_error": { "code": last.code, "message": last.message, "details": last.details } }));
            error.signals = last.signals;
            error.transient = last.transient;
            error
        };
        if retryable && stopped != Stopped::Final {
            error
                .message
                .push_str(" Tell the user it is not available right now; the same call may work later.");
        }
        let mut details = match error.details.take() {
            Some(Value::Object(map)) => map,
            None => Map::new(),
            Some(other) => Map::from_iter([("cause".to_owned(), other)]),
        };
        details.insert("attempts".into(), json!(attempts));
        details.insert("stopped".into(), json!(stopped.label()));
        details.insert("retryable".into(), json!(retryable));
        details.insert("deadline_ms".into(), json!(self.budget_ms));
        error.details = Some(Value::Object(details));
        error
    }
}

/// One attempt under `timeout`; a panic becomes `INTERNAL_ERROR`.
async fn attempt(
    entry: &Entry,
    ctx: &ToolContext,
    params: Value,
    timeout: Duration,
    limit_ms: u64,
    budget_ms: u64,
) -> ToolResult {
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
                "`{}` did not finish within {} ms. Try again later, or with a larger options.timeout_ms (up to the limit).",
                spec.name, limit_ms
            ),
        )
        .with_details(json!({ "timeout_ms": limit_ms, "deadline_ms": budget_ms }))
        // Whatever the tool waits on (its API, database or upstream) did not answer in time.
        .backend_failure(FailureKind::Timeout)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_and_are_capped() {
        let policy = Policy {
            deadline: Instant::now(),
            budget_ms: 1,
            per_attempt: Duration::from_secs(1),
            retries: 5,
            retry_safe: true,
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
        };
        let pauses: Vec<u128> = (1..=5).map(|r| policy.pause(r).as_millis()).collect();
        assert_eq!(pauses, [100, 200, 400, 500, 500]);
        assert_eq!(policy.pause(200), Duration::from_millis(500));
    }
}
