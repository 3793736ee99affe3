//! The HTTP client of the direct path: hyper's pooled client for an `http://` upstream, and
//! reqwest (with the upstream's TLS set-up: system roots and `[tls] ca_file`) for an
//! `https://` one. On a plain connection reqwest's layers cost a direct call about a
//! quarter of its client side (callgrind: some 25 K instructions of a 390 K call, mostly
//! its redirect policy, which parses the URL again even under `Policy::none()`).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// An answer's body, whichever client read it.
pub(super) type Incoming = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// How long an unused connection to the upstream is kept (as the HTTP domains keep theirs).
const IDLE: Duration = Duration::from_secs(60);

pub(super) enum Wire {
    Plain(Client<HttpConnector, Full<Bytes>>),
    Tls(reqwest::Client),
}

/// A request that got no answer; `connect`: the connection could not be opened, so nothing
/// was sent.
#[derive(Debug)]
pub(super) struct Unsent {
    pub(super) connect: bool,
}

impl Wire {
    /// The client for `scheme`: `tls` for anything but `http`.
    pub(super) fn new(scheme: &str, tls: reqwest::Client) -> Self {
        if scheme != "http" {
            return Self::Tls(tls);
        }
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(IDLE)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Self::Plain(client)
    }

    pub(super) async fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Incoming>, Unsent> {
        match self {
            Self::Plain(client) => {
                let response = client
                    .request(request.map(Full::new))
                    .await
                    .map_err(|error| Unsent { connect: error.is_connect() })?;
                Ok(response.map(|body| body.map_err(Into::into).boxed_unsync()))
            }
            Self::Tls(client) => {
                // A request reqwest cannot take was not sent.
                let request = reqwest::Request::try_from(request).map_err(|_| Unsent { connect: true })?;
                let response =
                    client.execute(request).await.map_err(|error| Unsent { connect: error.is_connect() })?;
                Ok(http::Response::from(response).map(|body| body.map_err(Into::into).boxed_unsync()))
            }
        }
    }
}
