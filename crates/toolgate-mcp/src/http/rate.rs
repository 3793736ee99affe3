//! Step 2b: requests per interval per API key at the transport, over every
//! route behind the key check: over the limit is `429` with `Retry-After`
//! (seconds) and a JSON body naming `RATE_LIMITED` and `retry_after_ms`.
//! Tool calls have their own limits in the gateway, answered as envelopes.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use axum::Json;
use axum::http::{Extensions, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::Shared;
use crate::handler::Authenticated;

/// HTTP requests one API key may make per interval, at the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpRate {
    /// Requests per interval.
    pub requests: u64,
    /// The interval.
    pub interval: Duration,
}

/// Step 2b: `Err` is the `429` answer.
/// (Takes the extensions, not the request: a body is not `Sync`.)
pub(super) async fn check(shared: &Shared, extensions: &Extensions) -> Result<(), Response> {
    let (Some(rate), Some(store)) = (&shared.state.config.http_rate, &shared.state.rate_store) else {
        return Ok(());
    };
    let Some(auth) = extensions.get::<Authenticated>() else {
        return Ok(());
    };
    match store.hit(&format!("http:key:{}", auth.principal), 1, rate.interval).await {
        Ok((count, left_ms)) if count > rate.requests => {
            shared.http_limited.fetch_add(1, Relaxed);
            Err(too_many(rate, left_ms))
        }
        Ok(_) => Ok(()),
        Err(error) => {
            // A limit protects; a counter outage must not stop every request.
            tracing::warn!(%error, "rate-limit store did not answer; the request is let through");
            Ok(())
        }
    }
}

fn too_many(rate: &HttpRate, retry_after_ms: u64) -> Response {
    let body = json!({"error": {
        "code": "RATE_LIMITED",
        "message": format!(
            "this API key may make {} requests per {} s; wait {retry_after_ms} ms",
            rate.requests,
            rate.interval.as_secs()
        ),
        "retry_after_ms": retry_after_ms,
    }});
    let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response();
    let seconds = retry_after_ms.div_ceil(1000).max(1);
    if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}
