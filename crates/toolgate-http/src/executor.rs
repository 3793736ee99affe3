//! [`HttpExecutor`]: runs one route-table operation as one HTTP request with the caller's credential for it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use reqwest::Url;
use serde_json::Value;
use toolgate_core::{ErrorCode, ProgressSink, Tool, ToolContext, ToolError, ToolResult};
use toolgate_gateway::{RouteHandler, RouteTool};
use toolgate_schema::{Method, Route, RouteTable};

use crate::prepare::{Prepared, with_body};
use crate::response::{Media, Sent, binary_too_large, map_answer, map_failure};
use crate::{Auth, Error, Result};

/// Bytes of an answer between two progress reports (see [`HttpExecutor::send_reporting`]).
pub const PROGRESS_STEP_BYTES: usize = 64 * 1024;

/// How an [`HttpExecutor`] talks to its backend.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Limit of one request, from connecting until the whole body is read. The tools built by
    /// [`HttpExecutor::tools`] get a slightly larger gateway timeout, so this one answers first.
    pub timeout: Duration,
    /// Largest response body read; a larger one is an `EXECUTION_ERROR`.
    pub max_response_bytes: usize,
    /// Largest binary answer returned (an image, a PDF, any body whose `Content-Type` is not
    /// JSON or text): images come back as image content, other files base64 in the payload,
    /// and a larger one is an `EXECUTION_ERROR` naming its size and this limit (read no
    /// further than the limit). Default 1 MiB: base64 makes it a third larger in the answer.
    pub max_binary_bytes: usize,
    /// Largest upload: the files of one multipart request (`body_encoding = "multipart"`)
    /// together, or the bytes of a binary body (`body_encoding = "binary"`), once decoded from
    /// the base64 text the model gives, or of a text body (`"text"`). More is `INVALID_PARAMS`
    /// naming the size and this limit, and nothing is sent. Default 1 MiB.
    pub max_upload_bytes: usize,
    /// How many characters of an unexpected body (a 5xx page, text that is not JSON) go into
    /// the error's details.
    pub preview_chars: usize,
    /// How messages name the backend, e.g. "the fitness API".
    pub backend_name: String,
    /// The backend's identity, e.g. `fitness` or a `[[domains]]` name: with
    /// [`Auth::BearerFromCaller`], only the caller's credential made for this backend
    /// ([`toolgate_core::Caller::credentials`] under this name) is sent. Empty (the default) matches
    /// no credential, so such an executor refuses every call that needs one.
    pub backend_id: String,
    /// Sent as `User-Agent`.
    pub user_agent: String,
    /// How requests authenticate (default: the caller's bearer credential for this backend).
    pub auth: Auth,
    /// Certificate authorities trusted besides the system roots, as PEM text (the content of
    /// `[tls] ca_file`; the binary reads the file).
    pub ca_bundle_pem: Option<String>,
    /// The credential of each named security scheme, for the routes that name theirs
    /// ([`Route::security`]): such a route sends the first of its schemes found here, else
    /// [`HttpOptions::auth`].
    pub schemes: BTreeMap<String, Auth>,
    /// Where the routes with their own server ([`Route::server`]) are called: the server as
    /// the route names it → the base URL called instead. A route whose server is not listed
    /// is refused when its tool is built, so no request (and no credential) goes to a host
    /// the configuration does not name.
    pub servers: BTreeMap<String, String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            max_response_bytes: 4 * 1024 * 1024,
            max_binary_bytes: 1024 * 1024,
            max_upload_bytes: 1024 * 1024,
            preview_chars: 500,
            backend_name: "the backend".to_owned(),
            backend_id: String::new(),
            user_agent: concat!("toolgate-http-tools/", env!("CARGO_PKG_VERSION")).to_owned(),
            auth: Auth::default(),
            ca_bundle_pem: None,
            schemes: BTreeMap::new(),
            servers: BTreeMap::new(),
        }
    }
}

impl HttpOptions {
    /// Set the request timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Set how messages name the backend.
    pub fn backend_name(mut self, name: impl Into<String>) -> Self {
        self.backend_name = name.into();
        self
    }

    /// Set the backend's identity: the name the callers' credentials for it are filed under.
    pub fn backend_id(mut self, id: impl Into<String>) -> Self {
        self.backend_id = id.into();
        self
    }

    /// Set how requests authenticate.
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    /// Set the credential of the security scheme `name` ([`HttpOptions::schemes`]).
    pub fn scheme(mut self, name: impl Into<String>, auth: Auth) -> Self {
        self.schemes.insert(name.into(), auth);
        self
    }

    /// Call the routes whose own server is `server` at `base_url` ([`HttpOptions::servers`]);
    /// `server` may be `base_url` itself.
    pub fn server(mut self, server: impl Into<String>, base_url: impl Into<String>) -> Self {
        self.servers.insert(server.into(), base_url.into());
        self
    }

    /// Trust these CAs (PEM text) besides the system roots.
    pub fn ca_bundle_pem(mut self, pem: impl Into<String>) -> Self {
        self.ca_bundle_pem = Some(pem.into());
        self
    }

    /// Set the largest response body read.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Set the largest binary answer (image, PDF, ...) returned.
    pub fn max_binary_bytes(mut self, bytes: usize) -> Self {
        self.max_binary_bytes = bytes;
        self
    }

    /// Set the largest upload ([`HttpOptions::max_upload_bytes`]).
    pub fn max_upload_bytes(mut self, bytes: usize) -> Self {
        self.max_upload_bytes = bytes;
        self
    }
}

/// Runs route-table operations against one HTTP backend. Cheap to share in an [`Arc`]; one
/// connection pool serves every tool built from it.
///
/// Per call: the operation's path variables are filled percent-encoded (no value can change the
/// path), each other field goes where [`Route::location`] says: by default GET and DELETE send
/// them as a query string and no body, POST, PUT and PATCH as a JSON object, or as
/// `application/x-www-form-urlencoded` pairs with `body_encoding = "form"`, one field's value
/// as the whole body with `body_field` (a JSON array, a free-form object, a binary body's
/// decoded bytes with `body_encoding = "binary"`, in the route's `content_type`) (none at all with
/// `body = "none"`, or with `body = "optional"` when no body field is given); `Accept` names the
/// media types the operation documents, JSON first ([`Route::accept_header`]); the caller's credential made for this backend (from
/// [`toolgate_core::Caller::credentials`], under [`HttpOptions::backend_id`]) goes in
/// `Authorization: Bearer`: a credential made for another backend is never sent. The result is
/// `{ok, status, method, path, payload}`. Every credential the request carried is removed from
/// whatever the backend answers (payload, messages, details) before any of it is kept or clipped.
///
/// | answer | code | tried again (reads only) |
/// |---|---|---|
/// | 2xx with JSON (or empty) | success | |
/// | 2xx, `image/png`, `image/jpeg`, `image/gif`, `image/webp` | success, the image as image content beside `{content: "image", media_type, bytes}` | |
/// | 2xx, another binary type (`application/pdf`, `application/octet-stream`, `image/svg+xml`, `audio/*`, ...) | success, `{content: "binary", media_type, bytes, base64}` | |
/// | 2xx binary over [`HttpOptions::max_binary_bytes`] | `EXECUTION_ERROR` with its size and the limit | no |
/// | 2xx text that is not JSON (`text/html`, `text/plain`, `text/csv`, XML, ...) | success, `{content: "text", media_type, chars, text}`, clipped (`truncated`, `note`) past 50,000 characters | |
/// | 2xx said to be JSON (or no type) that is not JSON | `PARSE_ERROR` | no |
/// | 400, 422 | `INVALID_PARAMS` with the backend's message and its reasons (`details.reasons`: `errors[]`, `invalid-params`, validation lists; the first ones in the message) | no |
/// | 401, 403 | `PERMISSION_DENIED` (credentials refused) | no |
/// | 404 | `NOT_FOUND` | no |
/// | 409 | `CONFLICT` | no |
/// | 429 | `UNAVAILABLE` | GET only |
/// | 5xx | `EXECUTION_ERROR`, body (truncated) in details | GET only |
/// | no answer in time | `TIMEOUT` | GET only |
/// | connection refused | `UNAVAILABLE` | GET only |
///
/// An error of any other method is never marked transient, so the gateway never repeats a
/// write on its own.
pub struct HttpExecutor {
    base: Url,
    /// [`HttpOptions::servers`], each base URL checked.
    servers: BTreeMap<String, Url>,
    client: Client,
    options: HttpOptions,
}

/// The executor's client: given, or built at the first call. Building one
/// reads the system's root certificates (a directory of files), which no
/// server start should pay for every backend it may never call.
enum Client {
    Given(reqwest::Client),
    Lazy { certs: Vec<reqwest::Certificate>, built: OnceLock<std::result::Result<reqwest::Client, String>> },
}

impl fmt::Debug for HttpExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpExecutor")
            .field("base", &self.base.as_str())
            .field("options", &self.options)
            .finish()
    }
}

/// The URL as it may be shown: at most 200 characters, any `user:password@` part redacted.
fn shown(url: &str) -> String {
    let url: String = url.chars().take(200).collect();
    match (url.find("://"), url.rfind('@')) {
        (Some(start), Some(at)) if at > start => format!("{}[redacted]{}", &url[..start + 3], &url[at..]),
        _ => url,
    }
}

pub(crate) fn check_base(base_url: &str) -> Result<Url> {
    let bad = |reason: &str| Error::BaseUrl { url: shown(base_url), reason: reason.to_owned() };
    let url = Url::parse(base_url).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("the scheme must be http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("the URL has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("credentials in the URL are refused; set the backend's auth instead"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("the base URL may not have a query or a fragment"));
    }
    Ok(url)
}

impl HttpExecutor {
    /// An executor for the backend at `base_url` (`http(s)://host[:port][/prefix]`), with its
    /// own connection pool. No proxy is used and redirects are not followed (a redirect could
    /// carry the caller's token elsewhere).
    ///
    /// The base URL, the auth settings and the CA bundle are checked here; the client itself
    /// is built at the first call (a client that cannot be built then answers `UNAVAILABLE`
    /// with the reason).
    pub fn new(base_url: &str, options: HttpOptions) -> Result<Self> {
        let certs = match &options.ca_bundle_pem {
            Some(pem) => crate::tls::parse_ca_bundle(pem)?,
            None => Vec::new(),
        };
        Self::checked(base_url, Client::Lazy { certs, built: OnceLock::new() }, options)
    }

    /// An executor that uses `client` (to share a pool or set TLS roots). Its own timeout,
    /// redirect and proxy settings apply, besides the per-request timeout of `options`.
    pub fn with_client(base_url: &str, client: reqwest::Client, options: HttpOptions) -> Result<Self> {
        Self::checked(base_url, Client::Given(client), options)
    }

    fn checked(base_url: &str, client: Client, options: HttpOptions) -> Result<Self> {
        options.auth.check()?;
        let servers = crate::targets::check(&options)?;
        Ok(Self { base: check_base(base_url)?, servers, client, options })
    }

    /// The client, built on first use.
    fn client(&self) -> std::result::Result<&reqwest::Client, ToolError> {
        let (certs, built) = match &self.client {
            Client::Given(client) => return Ok(client),
            Client::Lazy { certs, built } => (certs, built),
        };
        let built = built.get_or_init(|| {
            reqwest::Client::builder()
                .tls_certs_merge(certs.iter().cloned())
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .user_agent(self.options.user_agent.clone())
                .connect_timeout(self.options.timeout.min(Duration::from_secs(5)))
                .tcp_nodelay(true)
                .build()
                .map_err(|e| Error::Client(e).to_string())
        });
        built.as_ref().map_err(|reason| {
            ToolError::new(
                ErrorCode::Unavailable,
                format!("the backend `{}` cannot be called: {reason}", self.options.backend_name),
            )
        })
    }

    /// The base URL.
    pub fn base_url(&self) -> &Url {
        &self.base
    }

    /// The base URLs of the routes with their own server ([`HttpOptions::servers`], checked).
    pub(crate) fn servers(&self) -> &BTreeMap<String, Url> {
        &self.servers
    }

    /// The options.
    pub fn options(&self) -> &HttpOptions {
        &self.options
    }

    /// The gateway timeout of the tools built from this executor: the request timeout plus a
    /// margin, so that the executor's own, more precise answer comes first.
    pub fn tool_timeout(&self) -> Duration {
        self.options.timeout
            + (self.options.timeout / 10).clamp(Duration::from_millis(100), Duration::from_secs(1))
    }

    /// One tool from a route table, run by this executor.
    pub fn tool(self: &Arc<Self>, table: RouteTable) -> Result<RouteTool> {
        self.check_servers(&table)?;
        let timeout = self.tool_timeout();
        let handler: Arc<dyn RouteHandler> = self.clone();
        Ok(RouteTool::new(table, handler)?.map_spec(|spec| spec.with_timeout(timeout)))
    }

    /// One tool per route table, all run by this executor.
    pub fn tools(
        self: &Arc<Self>,
        tables: impl IntoIterator<Item = RouteTable>,
    ) -> Result<Vec<Arc<dyn Tool>>> {
        tables.into_iter().map(|t| Ok(Arc::new(self.tool(t)?) as Arc<dyn Tool>)).collect()
    }

    /// The time this request may take: the configured timeout, cut short by the call's deadline.
    fn budget(&self, ctx: &ToolContext) -> Duration {
        let Some(deadline) = ctx.deadline else { return self.options.timeout };
        let remaining = deadline.saturating_duration_since(Instant::now());
        // Leave the gateway a moment, so that its timer does not race ours.
        let margin = (remaining / 20).min(Duration::from_millis(50));
        self.options.timeout.min(remaining.saturating_sub(margin))
    }

    /// Sends a prepared request with `token` and maps the answer.
    pub async fn send(
        &self,
        prepared: Prepared,
        token: Option<&str>,
        timeout: Duration,
        params: &Value,
    ) -> ToolResult {
        self.send_reporting(prepared, token, timeout, params, &toolgate_core::NoProgress).await
    }

    /// [`HttpExecutor::send`], reporting a large answer's download to `progress`: one report
    /// per [`PROGRESS_STEP_BYTES`] received (of the `Content-Length` when the backend sends
    /// one), so a list over a long date range shows it is moving. A small answer reports
    /// nothing: its progress would only be noise.
    pub async fn send_reporting(
        &self,
        prepared: Prepared,
        token: Option<&str>,
        timeout: Duration,
        params: &Value,
        progress: &dyn ProgressSink,
    ) -> ToolResult {
        // Whose credential a refusal refuses: the caller's only when one of theirs was sent
        // (the weather provider, with the default auth, sends none).
        let callers_credential = token.is_some_and(|t| !t.is_empty());
        self.send_with(&self.options.auth, prepared, token, callers_credential, timeout, params, progress)
            .await
    }

    /// [`HttpExecutor::send_reporting`], saying whose credential `token` is: the caller's
    /// (`callers_credential`: a refusal is theirs to fix by signing in again) or toolgate's.
    #[allow(clippy::too_many_arguments)]
    async fn send_with(
        &self,
        auth: &Auth,
        prepared: Prepared,
        token: Option<&str>,
        callers_credential: bool,
        timeout: Duration,
        params: &Value,
        progress: &dyn ProgressSink,
    ) -> ToolResult {
        // Boxed: the exchange's future (reqwest's, the streamed body's) is
        // several kilobytes, and a tool that holds it inline, even on a path
        // that never sends, is copied whole each time its future moves.
        Box::pin(async move {
            let method = prepared.method;
            let secrets: Vec<&str> = match auth {
                Auth::Static { value, .. } => vec![value.expose()],
                _ => Vec::new(),
            }
            .into_iter()
            .chain(token)
            .filter(|s| !s.is_empty())
            .collect();
            let sent = Sent {
                method: method.as_str(),
                path: &prepared.path,
                read: method.is_read(),
                backend: &self.options.backend_name,
                preview_chars: self.options.preview_chars,
                max_binary_bytes: self.options.max_binary_bytes,
                callers_credential,
                secrets: &secrets,
                text_ok: prepared.accept.split(',').any(|m| {
                    let m = m.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
                    m != "application/json" && !m.ends_with("+json")
                }),
            };
            let http_method = match method {
                Method::Get => reqwest::Method::GET,
                Method::Post => reqwest::Method::POST,
                Method::Put => reqwest::Method::PUT,
                Method::Patch => reqwest::Method::PATCH,
                Method::Delete => reqwest::Method::DELETE,
            };
            // The budget runs from here: building the client at the executor's first call counts
            // against it, so that the answer stays this executor's, never the gateway's timer.
            let budget_ends = Instant::now() + timeout;
            let client = self.client()?;
            let mut request = client
                .request(http_method, prepared.url.clone())
                .timeout(budget_ends.saturating_duration_since(Instant::now()));
            request = match (auth, token) {
                (Auth::Static { header, value }, _) => {
                    let mut value = reqwest::header::HeaderValue::from_str(value.expose())
                        .unwrap_or_else(|_| reqwest::header::HeaderValue::from_static(""));
                    value.set_sensitive(true);
                    request.header(header.as_str(), value)
                }
                (_, Some(token)) => request.bearer_auth(token),
                (_, None) => request,
            };
            request = request.header(reqwest::header::ACCEPT, prepared.accept.as_str());
            for (name, value) in &prepared.headers {
                request = request.header(name.as_str(), value.as_str());
            }
            request = with_body(request, &prepared);
            let started = Instant::now();
            let outcome = async {
                let mut response = request.send().await?;
                let status = response.status();
                let content_type = response
                    .headers()
                    .get(reqwest::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                // A file (by its type) has its own limit, checked before reading when its size
                // is announced.
                let media = Media::of(content_type.as_deref());
                let binary = status.is_success() && media.is_binary();
                let limit =
                    if binary { self.options.max_binary_bytes } else { self.options.max_response_bytes };
                if binary && response.content_length().is_some_and(|n| n > limit as u64) {
                    return Ok((status, content_type, response.content_length(), None));
                }
                let total = response.content_length().map(|n| n as f64);
                let mut body = Vec::new();
                let mut next_report = PROGRESS_STEP_BYTES;
                while let Some(chunk) = response.chunk().await? {
                    if body.len() + chunk.len() > limit {
                        return Ok((status, content_type, response.content_length(), None));
                    }
                    body.extend_from_slice(&chunk);
                    if body.len() >= next_report {
                        next_report = body.len() + PROGRESS_STEP_BYTES;
                        let message = format!(
                            "receiving the answer of {} to {} {}: {} KiB so far",
                            sent.backend,
                            sent.method,
                            sent.path,
                            body.len() / 1024
                        );
                        progress.report(body.len() as f64, total, Some(&message));
                    }
                }
                Ok::<_, reqwest::Error>((status, content_type, None, Some(body)))
            }
            .await;
            let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
            match outcome {
                Ok((status, content_type, _, Some(body))) => {
                    tracing::debug!(
                        method = sent.method,
                        path = sent.path,
                        status = status.as_u16(),
                        elapsed_ms,
                        "backend answered"
                    );
                    map_answer(&sent, status, content_type.as_deref(), &body, params)
                }
                Ok((status, content_type, announced, None))
                    if status.is_success() && Media::of(content_type.as_deref()).is_binary() =>
                {
                    let media = Media::of(content_type.as_deref());
                    Err(binary_too_large(&sent, status, &media, announced))
                }
                Ok((status, _, _, None)) => Err(ToolError::new(
                    ErrorCode::ExecutionError,
                    format!(
                        "{} answered more than {} bytes to {} {}; ask for less (e.g. a shorter date range).",
                        sent.backend, self.options.max_response_bytes, sent.method, sent.path
                    ),
                )
                .with_details(
                    serde_json::json!({ "status": status.as_u16(), "method": sent.method, "path": sent.path }),
                )),
                Err(error) => {
                    tracing::debug!(
                        method = sent.method,
                        path = sent.path,
                        elapsed_ms,
                        timeout = error.is_timeout(),
                        connect = error.is_connect(),
                        "backend did not answer"
                    );
                    Err(map_failure(&sent, &error, timeout.as_millis()))
                }
            }
        })
        .await
    }
}

#[async_trait::async_trait]
impl RouteHandler for HttpExecutor {
    async fn handle(&self, ctx: &ToolContext, route: &Route, params: Value) -> ToolResult {
        let auth = self.auth_for(route);
        let token = match auth {
            Auth::BearerFromCaller => Some(self.caller_token(ctx)?),
            _ => None,
        };
        let prepared = self.prepare(route, &params)?;
        // A minted token is fetched once the parameters are known to be good (minting may be
        // a request of its own) and before any I/O to the backend: the source's error is the
        // call's, and nothing is sent.
        let minted = match auth {
            Auth::Token(provider) => Some((provider.token(&ctx.caller).await?, provider.is_callers())),
            _ => None,
        };
        let timeout = self.budget(ctx);
        if timeout.is_zero() {
            return Err(ToolError::new(
                ErrorCode::Timeout,
                format!(
                    "no time was left to call {}; try again with a larger timeout",
                    self.options.backend_name
                ),
            )
            .transient(route.method.is_read()));
        }
        let progress = ctx.progress.as_ref();
        match &minted {
            Some((token, callers)) => {
                self.send_with(auth, prepared, Some(token.expose()), *callers, timeout, &params, progress)
                    .await
            }
            None => {
                let callers = token.is_some_and(|t| !t.is_empty());
                self.send_with(auth, prepared, token, callers, timeout, &params, progress).await
            }
        }
    }
}

impl HttpExecutor {
    /// The caller's credential made for this backend, or why the call cannot be made. A
    /// credential made for any other backend is never looked at.
    fn caller_token<'c>(&self, ctx: &'c ToolContext) -> Result<&'c str, ToolError> {
        let own = ctx.caller.credentials.get(&self.options.backend_id);
        let Some(token) = own.filter(|t| !t.expose().trim().is_empty()) else {
            return Err(ToolError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "{} needs a credential made for it and this caller has none, so the call was not made. An operator must configure the credential of this domain (its `auth`: a static key, or a per-user credential issued for `{}`); do not retry.",
                    self.options.backend_name, self.options.backend_id
                ),
            ));
        };
        let token = token.expose().trim();
        if token.bytes().any(|b| b.is_ascii_control()) {
            return Err(ToolError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "the session's credentials for {} are malformed, so the call was not made. Tell the user to sign in again.",
                    self.options.backend_name
                ),
            ));
        }
        Ok(token)
    }
}
