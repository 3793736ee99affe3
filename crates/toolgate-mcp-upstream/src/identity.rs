//! The caller's identity as HTTP headers, per request ([`IdentityMode::Header`]).
//!
//! rmcp's streamable HTTP client holds one session and one set of headers
//! for every request on it, so a header that differs per caller cannot be
//! configured on the transport. Instead each tool call carries a
//! [`CallerHeaders`] in its request's extensions (an in-process type map,
//! never serialized), and [`HeaderClient`], the HTTP client under the
//! transport, adds them to that one POST. Every other request (the
//! handshake, listings, the event stream, notifications) goes out with the
//! configured headers only, so a caller's id never lands on a request made
//! for someone else.
//!
//! A minted token ([`crate::UpstreamConfig::with_token_source`]) goes the
//! same way: the caller's own (`token_exchange`) rides in its tool call's
//! extensions as a [`CallToken`] and becomes that POST's `Authorization:
//! Bearer`; toolgate's own (`client_credentials`) is fetched from the
//! source for every request the client sends.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use futures::stream::BoxStream;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, GetExtensions};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use toolgate_core::{Caller, Secret};
use toolgate_http::TokenProvider;

use crate::IdentityMode;

/// Headers an identity may not take: credentials (toolgate's own key or
/// the caller's token must never be sent under a configurable name), and
/// the ones the MCP transport and HTTP itself own.
const RESERVED: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "host",
    "content-type",
    "content-length",
    "accept",
    "connection",
    "transfer-encoding",
    "last-event-id",
    "mcp-session-id",
    "mcp-protocol-version",
];

/// Checks the header names of an identity mode against the reserved ones and
/// the upstream's configured `headers`; the parsed names, user first.
pub(crate) fn header_names(
    identity: &IdentityMode,
    configured: &[(String, toolgate_core::Secret)],
) -> Result<Vec<HeaderName>, String> {
    let IdentityMode::Header { user, role } = identity else { return Ok(Vec::new()) };
    let mut names = Vec::with_capacity(2);
    for name in std::iter::once(user).chain(role) {
        let parsed = HeaderName::from_str(name)
            .map_err(|_| format!("identity header `{name}` is not a header name"))?;
        if RESERVED.contains(&parsed.as_str()) {
            return Err(format!(
                "identity header `{name}` is reserved (credentials and MCP transport headers cannot carry the caller); pick another name, e.g. `X-Toolgate-User`"
            ));
        }
        if configured.iter().any(|(other, _)| other.eq_ignore_ascii_case(name)) {
            return Err(format!("identity header `{name}` is also set in `headers`; use another name"));
        }
        if names.contains(&parsed) {
            return Err(format!("identity header `{name}` is named twice"));
        }
        names.push(parsed);
    }
    Ok(names)
}

/// Checks an upstream's identity settings (header names legal, not
/// reserved, not among its `headers`; header identity only over HTTP).
pub fn check_identity(config: &crate::UpstreamConfig) -> Result<(), String> {
    match (&config.identity, &config.transport) {
        (IdentityMode::Header { .. }, crate::Transport::Stdio { .. }) => Err(format!(
            "upstream `{}`: a header identity needs an HTTP upstream (`url`); a child process has no headers, use `identity = \"meta\"`",
            config.name
        )),
        (identity, crate::Transport::Http { headers, .. }) => header_names(identity, headers)
            .map(|_| ())
            .map_err(|e| format!("upstream `{}`: {e}", config.name)),
        _ => Ok(()),
    }
}

/// The identity header names of an upstream (empty unless it sends headers
/// and they are valid: [`connect`](crate::supervisor) refuses invalid ones).
pub(crate) fn names_of(config: &crate::UpstreamConfig) -> Vec<HeaderName> {
    match &config.transport {
        crate::Transport::Http { headers, .. } => header_names(&config.identity, headers).unwrap_or_default(),
        crate::Transport::Stdio { .. } => Vec::new(),
    }
}

/// Bytes of a header value that are percent-encoded: controls, space, `%`
/// and everything outside ASCII (header values are visible ASCII only).
const ENCODED: &AsciiSet = &CONTROLS.add(b' ').add(b'%');

/// The headers of one call, carried in its request's extensions.
#[derive(Clone, Debug)]
pub(crate) struct CallerHeaders(Arc<Vec<(HeaderName, HeaderValue)>>);

impl CallerHeaders {
    /// The caller's user id (and role, when a role header is configured);
    /// empty values are left out. Non-ASCII ids are percent-encoded.
    pub(crate) fn new(names: &[HeaderName], caller: &Caller) -> Self {
        let values = [caller.user_id.as_str(), caller.role.as_str()];
        let headers = names
            .iter()
            .zip(values)
            .filter(|(_, value)| !value.is_empty())
            .filter_map(|(name, value)| {
                let encoded = utf8_percent_encode(value, ENCODED).to_string();
                let mut value = HeaderValue::from_str(&encoded).ok()?;
                value.set_sensitive(true);
                Some((name.clone(), value))
            })
            .collect();
        Self(Arc::new(headers))
    }
}

impl CallerHeaders {
    /// The headers, for a request toolgate sends itself.
    pub(crate) fn pairs(&self) -> Vec<(HeaderName, HeaderValue)> {
        self.0.as_ref().clone()
    }
}

/// The token one tool call's POST carries as `Authorization: Bearer`, in
/// its request's extensions (fetched from the upstream's token source for
/// the call's caller before the call was sent). `Debug` shows no value.
#[derive(Clone)]
pub(crate) struct CallToken(pub(crate) Secret);

impl std::fmt::Debug for CallToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallToken([redacted])")
    }
}

/// An HTTP client that adds the [`CallerHeaders`] and [`CallToken`] of a
/// message to the POST that carries it, and toolgate's own token from
/// `service` (a source whose tokens are not the caller's) to every request;
/// otherwise it is `C`. The events of its answers are shown to `tasks` on the way
/// ([`crate::task_support`]).
#[derive(Clone)]
pub(crate) struct HeaderClient {
    pub(crate) inner: reqwest::Client,
    pub(crate) service: Option<TokenProvider>,
    pub(crate) tasks: Arc<crate::task_support::TaskTools>,
    /// Learns what the direct path of tool calls needs from the requests rmcp sends.
    pub(crate) direct: Arc<crate::direct::Direct>,
}

impl HeaderClient {
    /// The `Authorization` of a request that carries no call token: toolgate's
    /// own token, when the upstream has one, else what rmcp gave (none).
    async fn service_auth(
        &self,
        auth_header: Option<String>,
    ) -> Result<Option<String>, StreamableHttpError<reqwest::Error>> {
        let Some(service) = &self.service else { return Ok(auth_header) };
        // The caller is ignored by such a source: toolgate's own token is the same for all.
        let token = service.token(&Caller::new("toolgate", "")).await.map_err(|error| {
            StreamableHttpError::Io(std::io::Error::other(format!(
                "no token for the upstream: {}",
                error.message
            )))
        })?;
        Ok(Some(token.expose().to_owned()))
    }

    /// The `Authorization` and headers of the POST that carries `message`.
    async fn for_message(
        &self,
        message: &ClientJsonRpcMessage,
        auth_header: Option<String>,
        mut headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(Option<String>, HashMap<HeaderName, HeaderValue>), StreamableHttpError<reqwest::Error>> {
        let mut call_token = None;
        if let ClientJsonRpcMessage::Request(request) = message {
            let extensions = request.request.extensions();
            if let Some(caller) = extensions.get::<CallerHeaders>() {
                for (name, value) in caller.0.iter() {
                    headers.insert(name.clone(), value.clone());
                }
            }
            call_token = extensions.get::<CallToken>().map(|t| t.0.expose().to_owned());
        }
        let auth = match call_token {
            Some(token) => Some(token),
            None => self.service_auth(auth_header).await?,
        };
        Ok((auth, headers))
    }

    /// An answer whose event stream is tapped for tool listings.
    fn tapped(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        match response {
            StreamableHttpPostResponse::Sse(events, session) => StreamableHttpPostResponse::Sse(
                crate::task_support::tap_events(events, self.tasks.clone()),
                session,
            ),
            other => other,
        }
    }

    /// A `tools/list` sent by toolgate, its plain JSON answer read for task support
    /// ([`crate::listing`]); `None`: not a listing, or one for rmcp's client to send.
    async fn listing(
        &self,
        uri: &str,
        message: &ClientJsonRpcMessage,
        session_id: Option<&str>,
        auth: Option<&str>,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) -> Option<Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>> {
        let listing = crate::listing::Listing { uri, message, session_id, auth, headers };
        crate::listing::list(&self.inner, listing, &self.tasks).await
    }
}

impl StreamableHttpClient for HeaderClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.direct.before_post(&message, session_id.as_ref(), &custom_headers);
        let (auth_header, headers) = self.for_message(&message, auth_header, custom_headers).await?;
        if let Some(answer) =
            self.listing(&uri, &message, session_id.as_deref(), auth_header.as_deref(), &headers).await
        {
            return answer;
        }

        let answer = self.inner.post_message(uri, message, session_id, auth_header, headers).await;
        answer.map(|r| self.tapped(r))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.direct.before_post(&message, session_id.as_ref(), &custom_headers);
        let (auth_header, headers) = self.for_message(&message, auth_header, custom_headers).await?;
        if let Some(answer) =
            self.listing(&uri, &message, session_id.as_deref(), auth_header.as_deref(), &headers).await
        {
            return answer;
        }

        let answer = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                headers,
                max_sse_event_size,
            )
            .await;
        answer.map(|r| self.tapped(r))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.direct.before_post(&message, session_id.as_ref(), &custom_headers);
        let (auth_header, headers) = self.for_message(&message, auth_header, custom_headers).await?;
        if let Some(answer) =
            self.listing(&uri, &message, session_id.as_deref(), auth_header.as_deref(), &headers).await
        {
            return answer;
        }

        let answer = self
            .inner
            .post_message_with_response_limits(uri, message, session_id, auth_header, headers, limits)
            .await;
        answer.map(|r| self.tapped(r))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let auth_header = self.service_auth(auth_header).await?;
        self.inner.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let auth_header = self.service_auth(auth_header).await?;
        self.inner.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let auth_header = self.service_auth(auth_header).await?;
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UpstreamConfig;

    fn header(user: &str, role: Option<&str>) -> IdentityMode {
        IdentityMode::Header { user: user.into(), role: role.map(Into::into) }
    }

    #[test]
    fn identity_headers_may_not_be_credentials_or_configured_ones() {
        let mut config = UpstreamConfig::http("s", "http://127.0.0.1:1/mcp");
        config.identity = header("X-Toolgate-User", Some("X-Toolgate-Role"));
        assert_eq!(check_identity(&config), Ok(()));
        for (bad, expect) in [
            (header("Authorization", None), "reserved"),
            (header("mcp-session-id", None), "reserved"),
            (header("X-A", Some("x-a")), "twice"),
            (header("bad name", None), "not a header name"),
            (header("X-Api", None), "also set in `headers`"),
        ] {
            config.identity = bad;
            config.transport = crate::Transport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: vec![("x-api".into(), toolgate_core::Secret::new("k"))],
            };
            let err = check_identity(&config).unwrap_err();
            assert!(err.contains(expect), "{err}");
        }
        let mut child = UpstreamConfig::stdio("c", vec!["x".into()]);
        child.identity = header("X-Toolgate-User", None);
        assert!(check_identity(&child).unwrap_err().contains("HTTP upstream"));
    }

    #[test]
    fn values_are_visible_ascii_and_empty_ones_are_left_out() {
        let names = header_names(&header("X-User", Some("X-Role")), &[]).unwrap();
        let caller = Caller::new("zoë 1%", "member");
        let headers = CallerHeaders::new(&names, &caller);
        let values: Vec<&str> = headers.0.iter().map(|(_, v)| v.to_str().unwrap()).collect();
        assert_eq!(values, ["zo%C3%AB%201%25", "member"]);
        assert!(headers.0.iter().all(|(_, v)| v.is_sensitive()));
        let headers = CallerHeaders::new(&names, &Caller::new("", "member"));
        assert_eq!(headers.0.len(), 1, "no empty user header");
    }
}
