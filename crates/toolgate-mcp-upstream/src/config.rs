//! [`UpstreamConfig`]: one other MCP server, as the binary read it from
//! `[[upstreams]]` (this crate never reads files or the environment).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use toolgate_core::{Secret, TokenSource};
use toolgate_http::TokenProvider;

/// How to reach an upstream server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Transport {
    /// A child process speaking MCP over its stdin/stdout; restarted when it dies.
    Stdio {
        /// The program and its arguments.
        command: Vec<String>,
        /// Extra environment variables for the child (values may be secrets).
        env: Vec<(String, Secret)>,
        /// The working folder, when not ours.
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint (`http://host/mcp`).
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`); never logged.
        headers: Vec<(String, Secret)>,
    },
}

/// What the upstream learns about our caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdentityMode {
    /// Nothing: every call reaches the upstream as toolgate itself (the default).
    #[default]
    None,
    /// The caller's user id, role and tenant in the request's `_meta`, under
    /// [`CALLER_META_KEY`]. Never a token, never an API key.
    Meta,
    /// The caller's user id as the HTTP header `user` (and the role as
    /// `role`, when set) on the POST of each of the caller's calls; other
    /// requests carry neither. HTTP upstreams only; never a credential
    /// header (see [`crate::check_identity`]).
    Header {
        /// The header carrying the user id, e.g. `X-Toolgate-User`.
        user: String,
        /// The header carrying the role, if any.
        role: Option<String>,
    },
}

/// The `_meta` key under which [`IdentityMode::Meta`] sends the caller.
pub const CALLER_META_KEY: &str = "io.toolgate/caller";

/// One upstream MCP server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UpstreamConfig {
    /// Namespace of its tools (`<name>__<tool>`) and prompts, and their domain.
    pub name: String,
    /// Put `<name>__` before the names of its tools and prompts (the default). `false`
    /// keeps the upstream's own names, so toolgate can stand transparently in front of
    /// one server; a name another source already has is then a collision
    /// ([`crate::Upstreams::collisions`]).
    pub prefix: bool,
    /// How to reach it.
    pub transport: Transport,
    /// The role its tools require unless `[authz.overrides]` says otherwise.
    pub required_role: String,
    /// Tools known to only read (retried after transient failures, no
    /// confirmation); every other tool is treated as a non-idempotent write.
    pub read_only_tools: Vec<String>,
    /// Believe the upstream's `readOnlyHint` / `idempotentHint` annotations.
    pub trust_annotations: bool,
    /// Default time limit of one call.
    pub timeout: Duration,
    /// What the upstream learns about our caller.
    pub identity: IdentityMode,
    /// How long the first connection may take before toolgate starts without it.
    pub connect_timeout: Duration,
    /// Pause before the first reconnection; doubled after each failure.
    pub backoff_min: Duration,
    /// Longest pause between reconnections.
    pub backoff_max: Duration,
    /// Certificate authorities an `https://` upstream may chain to besides the system roots,
    /// as PEM text (`[tls] ca_file`, shared with every TLS client of toolgate).
    pub ca_bundle_pem: Option<String>,
    /// Where an HTTP upstream's `Authorization: Bearer` token comes from, when it is minted
    /// ([`UpstreamConfig::with_token_source`]); `None`: only the configured `headers` are sent.
    pub auth: Option<TokenProvider>,
}

impl UpstreamConfig {
    /// An upstream with the defaults: role `member`, nothing read-only,
    /// 30 s per call, no identity, 10 s to connect, backoff 0.5 s to 30 s.
    pub fn new(name: impl Into<String>, transport: Transport) -> Self {
        Self {
            name: name.into(),
            prefix: true,
            transport,
            required_role: "member".into(),
            read_only_tools: Vec::new(),
            trust_annotations: false,
            timeout: Duration::from_secs(30),
            identity: IdentityMode::None,
            connect_timeout: Duration::from_secs(10),
            backoff_min: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            ca_bundle_pem: None,
            auth: None,
        }
    }

    /// A child process upstream.
    pub fn stdio(name: impl Into<String>, command: Vec<String>) -> Self {
        Self::new(name, Transport::Stdio { command, env: Vec::new(), cwd: None })
    }

    /// A streamable HTTP upstream.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(name, Transport::Http { url: url.into(), headers: Vec::new() })
    }

    /// Send a token minted by `source` as `Authorization: Bearer` (HTTP upstreams only):
    ///
    /// - a source of the caller's own tokens (`token_exchange`): on the POST of each of that
    ///   caller's tool calls, fetched for the caller before the call is sent (a source that
    ///   cannot give one fails the call with its error, and nothing is sent). The handshake,
    ///   listings, the event stream and notifications carry the configured `headers` only.
    /// - toolgate's own token (`client_credentials`): on every request, the handshake and
    ///   listings included, fetched through the source each time (it keeps the token and
    ///   renews it before it expires).
    ///
    /// The caller's own sign-in ([`toolgate_core::Caller::subject_token`]) and API keys are never
    /// sent. `headers` may not set `Authorization` as well ([`UpstreamConfig::check`]).
    pub fn with_token_source(mut self, source: Arc<dyn TokenSource>) -> Self {
        self.auth = Some(TokenProvider::new(source));
        self
    }

    /// Checks the settings that are known wrong before connecting: the identity mode
    /// ([`crate::check_identity`]) and the token source (an HTTP upstream, and no
    /// `Authorization` in `headers` beside it). The message names the upstream and the fix.
    pub fn check(&self) -> Result<(), String> {
        crate::check_identity(self)?;
        check_auth(self)
    }
}

/// Checks an upstream's token source: only over HTTP, and never together with an
/// `Authorization` in `headers`, since a request can carry only one.
pub(crate) fn check_auth(config: &UpstreamConfig) -> Result<(), String> {
    let Some(auth) = &config.auth else { return Ok(()) };
    match &config.transport {
        Transport::Stdio { .. } => Err(format!(
            "upstream `{}`: `auth` ({}) sends a token over HTTP, and a child process has none; give the upstream a `url`, or remove `auth`",
            config.name,
            auth.kind()
        )),
        Transport::Http { headers, .. } => {
            match headers.iter().find(|(name, _)| name.trim().eq_ignore_ascii_case("authorization")) {
                Some((name, _)) => Err(format!(
                    "upstream `{}`: `headers` sets `{name}` and `auth` ({}) sends a minted token in it; a request can carry only one: remove `{name}` from `headers`, or remove `auth`",
                    config.name,
                    auth.kind()
                )),
                None => Ok(()),
            }
        }
    }
}
