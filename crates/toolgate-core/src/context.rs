//! Who is calling and what the call may use: [`Caller`], [`ToolContext`], [`ProgressSink`].
//!
//! Everything here has one right value known to the system. Tools read the
//! user id, role, tenant, session and backend credentials from the context,
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

/// The credentials a caller holds for backends, each bound to the one backend
/// (a domain's or upstream's name, e.g. `fitness`) it was made for: a tool
/// asks for its own backend's by name and can never pick up another's.
/// `Debug` names the backends, never a value.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials(Vec<(String, Secret)>);

impl Credentials {
    /// The credential made for `backend`, if the caller has one. An empty
    /// name has none.
    pub fn get(&self, backend: &str) -> Option<&Secret> {
        if backend.is_empty() {
            return None;
        }
        self.0.iter().find(|(b, _)| b == backend).map(|(_, s)| s)
    }

    /// File `secret` as the credential for `backend`, replacing an older one.
    /// An empty backend name files nothing.
    pub fn insert(&mut self, backend: impl Into<String>, secret: Secret) {
        let backend = backend.into();
        if backend.is_empty() {
            return;
        }
        match self.0.iter_mut().find(|(b, _)| *b == backend) {
            Some(slot) => slot.1 = secret,
            None => self.0.push((backend, secret)),
        }
    }

    /// Whether a credential is filed for `backend`.
    pub fn contains(&self, backend: &str) -> bool {
        self.get(backend).is_some()
    }

    /// Whether no credential is filed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The backends a credential is filed for (names only).
    pub fn backends(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(b, _)| b.as_str())
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.0.iter().map(|(b, _)| (b, "[redacted]"))).finish()
    }
}

/// The identity of whoever makes the call, established by the transport
/// (an API key, a stdio configuration), never by the model.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Caller {
    /// The user the call acts for.
    pub user_id: String,
    /// The caller's role name in the deployment's role hierarchy.
    pub role: String,
    /// The tenant, where a deployment has several.
    pub tenant: Option<String>,
    /// The session (MCP session, chat) the call belongs to.
    pub session_id: Option<String>,
    /// Credentials for backends, each usable only by the backend it was made
    /// for (there is no anonymous token every backend receives); redacted in
    /// Debug/Display.
    pub credentials: Credentials,
    /// A named toolset that narrows what this caller may see (e.g. `read_only`).
    pub toolset: Option<String>,
    /// When set, only tools of these domains are visible (scoped exposure).
    pub domains: Option<Vec<String>>,
    /// The id (never the secret) of the API key that authenticated the
    /// caller, when one did: rate limits count per key, the audit trail names it.
    pub key_id: Option<String>,
    /// The access token the caller signed in with (OAuth), kept only as the
    /// subject of a token exchange (RFC 8693) that gets a backend its own
    /// token for this user ([`TokenSource`]). Never sent to any backend
    /// itself, never logged (a [`Secret`]). `None` for API keys and stdio.
    pub subject_token: Option<Secret>,
}

impl Caller {
    /// A caller with a user id and a role, nothing else.
    pub fn new(user_id: impl Into<String>, role: impl Into<String>) -> Self {
        Self {
            user_id: user_id.into(),
            role: role.into(),
            tenant: None,
            session_id: None,
            credentials: Credentials::default(),
            toolset: None,
            domains: None,
            key_id: None,
            subject_token: None,
        }
    }

    /// Set the id of the API key that authenticated this caller.
    pub fn with_key_id(mut self, key_id: impl Into<String>) -> Self {
        self.key_id = Some(key_id.into());
        self
    }

    /// Replace every backend credential with `credentials`.
    pub fn with_credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = credentials;
        self
    }

    /// Add the credential made for `backend` (e.g. the fitness API's token
    /// for this user under `fitness`). Only that backend's tools receive it.
    pub fn with_credential(mut self, backend: impl Into<String>, secret: impl Into<String>) -> Self {
        self.credentials.insert(backend, Secret::new(secret));
        self
    }

    /// Set the access token the caller signed in with (see [`Caller::subject_token`]).
    pub fn with_subject_token(mut self, token: Secret) -> Self {
        self.subject_token = Some(token);
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
        for backend in self.credentials.backends() {
            write!(f, " credential[{backend}]=[redacted]")?;
        }
        Ok(())
    }
}

/// Where a backend's tools get the credential they send for a caller when it
/// is neither the caller's own stored one nor a fixed key: a token minted for
/// that backend alone, e.g. by exchanging the caller's sign-in
/// ([`Caller::subject_token`], RFC 8693) or by a client-credentials grant.
/// Implementations cache what they mint and never hand one caller's token
/// to another.
#[async_trait::async_trait]
pub trait TokenSource: Send + Sync + fmt::Debug + 'static {
    /// The kind, as configuration spells it (`token_exchange`, `client_credentials`).
    fn kind(&self) -> &'static str;

    /// The token to send to the backend for `caller`, or the error the call
    /// fails with (PERMISSION_DENIED when the caller cannot have one,
    /// UNAVAILABLE when the token service did not answer).
    async fn token(&self, caller: &Caller) -> Result<Secret, crate::ToolError>;
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
#[non_exhaustive]
pub struct ToolContext {
    /// Who is calling.
    pub caller: Caller,
    /// Where to report progress.
    pub progress: Arc<dyn ProgressSink>,
    /// A trace id that ties together the events of one call.
    pub trace_id: String,
    /// When the call must be finished, if it has a limit.
    pub deadline: Option<Instant>,
    /// Who can be asked (the person behind the call), when the client can be.
    pub asker: Option<Arc<dyn crate::Asker>>,
}

impl ToolContext {
    /// A context for a caller, with no progress sink and no deadline.
    pub fn new(caller: Caller) -> Self {
        Self { caller, progress: Arc::new(NoProgress), trace_id: String::new(), deadline: None, asker: None }
    }

    /// Set who can be asked.
    pub fn with_asker(mut self, asker: Arc<dyn crate::Asker>) -> Self {
        self.asker = Some(asker);
        self
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
    fn credentials_are_redacted_in_debug_and_display() {
        let caller = Caller::new("u1", "member").with_credential("fitness", "sk-very-secret-123");
        let debug = format!("{caller:?}");
        let display = format!("{caller}");
        let ctx = format!("{:?}", ToolContext::new(caller.clone()));
        for text in [&debug, &display, &ctx] {
            assert!(!text.contains("sk-very-secret-123"), "leaked in {text}");
        }
        assert!(debug.contains("[redacted]"));
        assert!(display.contains("[redacted]"));
        assert_eq!(caller.credentials.get("fitness").unwrap().expose(), "sk-very-secret-123");
    }

    #[test]
    fn a_credential_is_found_only_under_the_backend_it_was_made_for() {
        let mut credentials = Credentials::default();
        credentials.insert("fitness", Secret::new("fit_1"));
        credentials.insert("", Secret::new("nobody's"));
        assert_eq!(credentials.get("fitness").map(Secret::expose), Some("fit_1"));
        assert!(credentials.get("crm").is_none() && credentials.get("").is_none());
        credentials.insert("fitness", Secret::new("fit_2"));
        assert_eq!(credentials.get("fitness").map(Secret::expose), Some("fit_2"), "replaced, not added");
        assert_eq!(credentials.backends().collect::<Vec<_>>(), ["fitness"]);
    }
}
