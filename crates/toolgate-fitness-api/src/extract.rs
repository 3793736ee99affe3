//! Extractors that answer refusals in the API's JSON error shape instead of axum's plain text.

use axum::extract::{FromRequest, FromRequestParts};

use crate::error::ApiError;

/// `axum::Json`, with a JSON 400/415/422 naming the field when the body is refused.
#[derive(Debug, FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub(crate) struct ApiJson<T>(pub(crate) T);

/// `axum::extract::Path`, with a JSON 400 when a path variable cannot be decoded.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub(crate) struct ApiPath<T>(pub(crate) T);

/// `axum::extract::Query`, with a JSON 400 naming the parameter when the query is refused.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub(crate) struct ApiQuery<T>(pub(crate) T);
