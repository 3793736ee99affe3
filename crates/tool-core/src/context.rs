//! Who is calling and what the call may use: [`Caller`], [`ToolContext`], [`ProgressSink`].
//!
//! Everything here has one right value known to the system. Tools read the
//! user id, role, tenant, session and pass-through token from the context,
//! never from the model's parameters.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

/// A secret string (an auth token, an API key). Its `Debug` and `Display`
/// print `[redacted]`; the value is only reachable through [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wrap a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret value. Call this only where the value leaves for its
    /// rightful destination (an `Authorization` header, a cipher).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The identity of whoever makes the call, established by the transport
/// (an API key, a stdio configuration), never by the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The user the call acts for.
    pub user_id: String,
    /// The caller's role name in the deployment's role hierarchy.
    pub role: String,
    /// The tenant, where a deployment has several.
    pub tenant: Option<String>,
    /// The session (MCP session, chat) the call belongs to.
    pub session_id: Option<String>,
    /// The caller's token for pass-through to backends; redacted in Debug/Display.
    pub token: Option<Secret>,
    /// A named toolset that narrows what this caller may see (e.g. `read_only`).
    pub toolset: Option<String>,
    /// When set, only tools of these domains are visible (scoped exposure).
    pub domains: Option<Vec<String>>,
    /// The id (never the secret) of the API key that authenticated the
    /// caller, when one did: rate limits count per key, the audit trail names it.
    pub key_id: Option<String>,
}

impl Caller {
    /// A caller with a user id and a role, nothing else.
    pub fn new(user_id: impl Into<String>, role: impl Into<String>) -> Self {
        Self {
            user_id: user_id.into(),
            role: role.into(),
            tenant: None,
            session_id: None,
            token: None,
            toolset: None,
            domains: None,
            key_id: None,
        }
    }

    /// Set the id of the API key that authenticated this caller.
    pub fn with_key_id(mut self, key_id: impl Into<String>) -> Self {
        self.key_id = Some(key_id.into());
        self
    }

    /// Set the pass-through token.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(Secret::new(token));
        self
    }

    /// Set the session id.
    pub fn with_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Set the tenant.
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// Restrict to a named toolset.
    pub fn with_toolset(mut self, toolset: impl Into<String>) -> Self {
        self.toolset = Some(toolset.into());
        self
    }

    /// Restrict to some domains (scoped exposure).
    pub fn with_domains<I, S>(mut self, domains: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.domains = Some(domains.into_iter().map(Into::into).collect());
        self
    }
}

impl fmt::Display for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.user_id, self.role)?;
        if self.token.is_some() {
            f.write_str(" token=[redacted]")?;
        }
        Ok(())
    }
}

/// Where a running tool reports progress. The MCP server turns these into
/// `notifications/progress` when the client asked for them.
pub trait ProgressSink: Send + Sync {
    /// Report progress: `progress` of `total` (when known), with a message.
    fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>);
}

/// A progress sink that drops everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn report(&self, _progress: f64, _total: Option<f64>, _message: Option<&str>) {}
}

/// Everything a tool may know about the call besides its parameters.
#[derive(Clone)]
pub struct ToolContext {
    /// Who is calling.
    pub caller: Caller,
    /// Where to report progress.
    pub progress: Arc<dyn ProgressSink>,
    /// A trace id that ties together the events of one call.
    pub trace_id: String,
    /// When the call must be finished, if it has a limit.
    pub deadline: Option<Instant>,
}

impl ToolContext {
    /// A context for a caller, with no progress sink and no deadline.
    pub fn new(caller: Caller) -> Self {
        Self { caller, progress: Arc::new(NoProgress), trace_id: String::new(), deadline: None }
    }

    /// Set the progress sink.
    pub fn with_progress(mut self, progress: Arc<dyn ProgressSink>) -> Self {
        self.progress = progress;
        self
    }

    /// Set the trace id.
    pub fn with_trace_id(mut self, trace_id: impl Into<String>) -> Self {
        self.trace_id = trace_id.into();
        self
    }

    /// Set the deadline.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Report progress to the sink.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: &str) {
        self.progress.report(progress, total, Some(message));
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("caller", &self.caller)
            .field("trace_id", &self.trace_id)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_redacted_in_debug_and_display() {
        let caller = Caller::new("u1", "member").with_token("sk-very-secret-123");
        let debug = format!("{caller:?}");
        let display = format!("{caller}");
        let ctx = format!("{:?}", ToolContext::new(caller.clone()));
        for text in [&debug, &display, &ctx] {
            assert!(!text.contains("sk-very-secret-123"), "leaked in {text}");
        }
        assert!(debug.contains("[redacted]"));
        assert!(display.contains("[redacted]"));
        assert_eq!(caller.token.unwrap().expose(), "sk-very-secret-123");
    }
}
