//! Step 2: the bearer API key (every route but `/`), or the opt-in anonymous caller.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::{Shared, error_response};
use crate::handler::Authenticated;

/// The key of an `Authorization: Bearer <key>` header.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
}

pub(super) fn unauthorized(message: &str) -> Response {
    let mut response = error_response(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"toolgate\""));
    response
}

pub(super) async fn authenticate(
    State(shared): State<Arc<Shared>>,
    mut request: Request,
    next: Next,
) -> Response {
    let verified = match bearer(request.headers()) {
        None => match &shared.state.config.anonymous {
            // Opt-in only (conformance suites and local tools that cannot send headers).
            Some(caller) => crate::keys::VerifiedKey { id: "anonymous".into(), caller: caller.clone() },
            None => return unauthorized("send `Authorization: Bearer <API key>`"),
        },
        Some(key) => match shared.state.keys.verify(key).await {
            Ok(Some(verified)) => verified,
            Ok(None) => return unauthorized("the API key is not valid (unknown, revoked or malformed)"),
            Err(error) => {
                tracing::error!(%error, "the key store could not check an API key");
                return error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "UNAVAILABLE",
                    "the API key could not be checked right now; try again",
                );
            }
        },
    };
    // The key itself stays in the Authorization header, which no handler reads;
    // backend credentials, if any, come from the deployment's credential hook.
    let mut caller = match &shared.state.credentials {
        Some(hook) => hook.credentials(verified.caller).await,
        None => verified.caller,
    };
    // Rate limits count per key and the audit trail names it (the id, never the key).
    caller.key_id = Some(verified.id.clone());
    request.extensions_mut().insert(Authenticated { caller, key_id: verified.id });
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_keys_are_read_case_insensitively() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer tg_x"));
        assert_eq!(bearer(&headers), Some("tg_x"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic dXNlcg=="));
        assert_eq!(bearer(&headers), None);
    }
}
