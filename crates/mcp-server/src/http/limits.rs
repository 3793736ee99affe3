//! Step 3: the declared body size (`Content-Length`), checked after the key so
//! that an anonymous caller learns nothing but `401`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::{Shared, error_response};

/// `413` for a body declared larger than the limit (rmcp and the `/mcp`
/// message check enforce the same limit on bodies without a length).
pub(super) async fn body_limit(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let max = shared.state.config.max_body_bytes;
    let too_long = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > max as u64);
    if too_long {
        return payload_too_large(max);
    }
    next.run(request).await
}

pub(super) fn payload_too_large(max: usize) -> Response {
    error_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        "PAYLOAD_TOO_LARGE",
        &format!("the request body is larger than {max} bytes"),
    )
}
