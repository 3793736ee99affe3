//! Step 2: the bearer API key (every route but `/`), or the opt-in anonymous caller.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::{Shared, error_response};
use crate::handler::Authenticated;

/// The key id of requests served as the configured anonymous caller.
pub(super) const ANONYMOUS: &str = "anonymous";

/// What the `Authorization` header says.
#[derive(Debug, PartialEq, Eq)]
enum Credential<'a> {
    /// No header at all: the only request that may be anonymous.
    Missing,
    /// `Bearer <key>`.
    Bearer(&'a str),
    /// Anything else: another scheme, a bare `Bearer`, several headers, bytes that are not text.
    Malformed,
}

fn credential(headers: &HeaderMap) -> Credential<'_> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return if headers.contains_key(header::AUTHORIZATION) {
            Credential::Malformed
        } else {
            Credential::Missing
        };
    };
    let Some((scheme, key)) = value.to_str().ok().and_then(|v| v.trim().split_once(' ')) else {
        return Credential::Malformed;
    };
    let key = key.trim();
    if scheme.eq_ignore_ascii_case("bearer") && !key.is_empty() {
        Credential::Bearer(key)
    } else {
        Credential::Malformed
    }
}

pub(super) fn unauthorized(message: &str) -> Response {
    let mut response = error_response(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"toolgate\""));
    response
}

/// Step 2: the caller of a good key (or the configured anonymous caller)
/// goes into the request's extensions; `Err` is the `401`/`503` answer.
pub(super) async fn check(shared: &Shared, request: &mut Request) -> Result<(), Response> {
    let verified = match credential(request.headers()) {
        Credential::Missing => match &shared.state.config.anonymous {
            // Opt-in only (conformance suites and local tools that cannot send headers).
            Some(caller) => {
                Arc::new(crate::keys::VerifiedKey { id: ANONYMOUS.into(), caller: caller.clone() })
            }
            None => return Err(unauthorized("send `Authorization: Bearer <API key>`")),
        },
        // Never anonymous: a client that sends credentials meant to be someone.
        Credential::Malformed => {
            return Err(unauthorized("the Authorization header is not `Bearer <API key>`"));
        }
        // Shared with the key cache: the one copy of the caller is made below.
        Credential::Bearer(key) => match shared.state.keys.verify_shared(key).await {
            Ok(Some(verified)) => {
                // The connection carried a valid key: it leaves the unauthenticated ones' cap.
                if let Some(ticket) = request.extensions().get::<super::admission::Ticket>() {
                    ticket.proven();
                }
                verified
            }
            Ok(None) => return Err(unauthorized("the API key is not valid (unknown, revoked or malformed)")),
            Err(error) => {
                tracing::error!(%error, "the key store could not check an API key");
                return Err(error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "UNAVAILABLE",
                    "the API key could not be checked right now; try again",
                ));
            }
        },
    };
    // The key itself stays in the Authorization header, which no handler reads;
    // backend credentials, if any, come from the deployment's credential hook.
    let mut caller = verified.caller.clone();
    // Rate limits count per key and the audit trail names it (the id, never the key).
    caller.key_id = Some(verified.id.clone());
    let caller = match &shared.state.credentials {
        Some(hook) => hook.credentials(caller).await,
        None => caller,
    };
    request.extensions_mut().insert(Authenticated { caller, key_id: verified.id.clone() });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_keys_are_read_case_insensitively_and_nothing_else_passes() {
        let mut headers = HeaderMap::new();
        assert_eq!(credential(&headers), Credential::Missing);
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer tg_x"));
        assert_eq!(credential(&headers), Credential::Bearer("tg_x"));
        for bad in ["Basic dXNlcg==", "Bearer", "Bearer ", "Token tg_x", "tg_x", ""] {
            headers.insert(header::AUTHORIZATION, HeaderValue::from_static(bad));
            assert_eq!(credential(&headers), Credential::Malformed, "{bad:?}");
        }
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer tg_x"));
        headers.append(header::AUTHORIZATION, HeaderValue::from_static("Bearer tg_y"));
        assert_eq!(credential(&headers), Credential::Malformed);
    }
}
