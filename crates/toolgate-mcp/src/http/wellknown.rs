//! `/.well-known/…`: the Protected Resource Metadata (RFC 9728) of the
//! configured sign-in, readable without a credential; everything else there,
//! and everything with no sign-in configured, is `404` (a `401` would send
//! MCP clients into dynamic client registration against nothing).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::{Shared, error_response};

pub(super) async fn metadata(State(shared): State<Arc<Shared>>, uri: Uri) -> Response {
    match &shared.auth.challenge {
        Some(challenge) if challenge.metadata_paths.iter().any(|p| p == uri.path()) => {
            Json(challenge.metadata.clone()).into_response()
        }
        Some(_) => error_response(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "nothing here; this server's OAuth metadata is at /.well-known/oauth-protected-resource",
        ),
        None => error_response(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "this server does not take OAuth sign-in (no [auth.oauth] configured): use an API key",
        ),
    }
}
