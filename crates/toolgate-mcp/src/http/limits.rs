//! Step 3: the declared body size (`Content-Length`), checked after the key so
//! that an anonymous caller learns nothing but `401`.

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::Response;

use super::{Shared, error_response};

/// `413` for a body declared larger than the limit (rmcp and the `/mcp`
/// message check enforce the same limit on bodies without a length).
pub(super) fn check(shared: &Shared, request: &Request) -> Result<(), Response> {
    let max = shared.state.config.max_body_bytes;
    let too_long = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > max as u64);
    if too_long { Err(payload_too_large(max)) } else { Ok(()) }
}

pub(super) fn payload_too_large(max: usize) -> Response {
    error_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        "PAYLOAD_TOO_LARGE",
        &format!("the request body is larger than {max} bytes"),
    )
}
