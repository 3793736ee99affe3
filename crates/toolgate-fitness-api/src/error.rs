//! Errors: the library's `Error`, and `ApiError`, the JSON error every HTTP answer uses.

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// What the library functions (`connect`, `create_user`, `seed_demo`, ...) can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Connecting or migrating failed; the message names the cause (an unsupported URL,
    /// refused, authentication, unknown database), never a password.
    #[error(transparent)]
    Connect(#[from] toolgate_db::Error),
    /// An argument was refused; `field` names it.
    #[error("{field}: {message}")]
    Invalid {
        /// The argument that was refused.
        field: &'static str,
        /// Why, written for a person.
        message: String,
    },
    /// The thing already exists (e.g. a user id).
    #[error("{0}")]
    Conflict(String),
    /// The database failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// Binding or serving failed.
    #[error("io error: {0}")]
    Io(#[from] std::io::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One refused field in a request.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct FieldError {
    pub(crate) field: String,
    pub(crate) message: String,
}

/// The one error shape of the HTTP API:
/// `{"error": {"code", "message", "fields": [{"field", "message"}]}}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    fields: Vec<FieldError>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorInner<'a>,
}

#[derive(Serialize)]
struct ErrorInner<'a> {
    code: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    fields: &'a [FieldError],
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), fields: Vec::new() }
    }

    /// 400: a path or query value that cannot be used.
    pub(crate) fn bad_request(field: &str, message: impl Into<String>) -> Self {
        Self::fields(
            StatusCode::BAD_REQUEST,
            vec![FieldError { field: field.into(), message: message.into() }],
        )
    }

    /// 400 or 422 with every refused field at once; the message lists them all.
    pub(crate) fn fields(status: StatusCode, fields: Vec<FieldError>) -> Self {
        let list: Vec<String> = fields.iter().map(|f| format!("{}: {}", f.field, f.message)).collect();
        Self {
            status,
            code: "invalid_params",
            message: format!("invalid request: {}", list.join("; ")),
            fields,
        }
    }

    pub(crate) fn unauthorized(message: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub(crate) fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }

    pub(crate) fn route_not_found(method: &str, path: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "route_not_found",
            format!("no route {method} {path}; see the API's route list"),
        )
    }

    pub(crate) fn method_not_allowed(method: &str, path: &str) -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!("{path} does not accept {method}"),
        )
    }

    /// 500 with an opaque message; the cause goes to the log only.
    pub(crate) fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "fitness-api internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the request was not completed",
        )
    }

    #[cfg(test)]
    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body =
            ErrorBody { error: ErrorInner { code: self.code, message: &self.message, fields: &self.fields } };
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        if let sqlx::Error::Database(db) = &e
            && db.is_unique_violation()
        {
            return ApiError::conflict("the record conflicts with an existing one; read it and retry");
        }
        ApiError::internal(&e)
    }
}

/// Strips axum's fixed prefix ("Failed to deserialize ...: ") so the message starts at the field.
fn detail(text: String) -> String {
    match text.split_once(": ") {
        Some((_, rest)) if !rest.is_empty() => rest.to_owned(),
        _ => text,
    }
}

/// The field a serde message is about: the unknown or missing field it quotes, else its leading path.
fn field_of(message: &str) -> Option<&str> {
    for marker in ["unknown field `", "missing field `", "duplicate field `"] {
        if let Some(rest) = message.split_once(marker).map(|(_, rest)| rest) {
            return rest.split_once('`').map(|(name, _)| name);
        }
    }
    let (path, _) = message.split_once(": ")?;
    (!path.is_empty() && path != "." && !path.contains(' ')).then_some(path)
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let (status, field) = match &rejection {
            JsonRejection::JsonDataError(_) => (StatusCode::UNPROCESSABLE_ENTITY, "body"),
            JsonRejection::JsonSyntaxError(_) => (StatusCode::BAD_REQUEST, "body"),
            JsonRejection::MissingJsonContentType(_) => {
                return Self::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "send the body as JSON with `Content-Type: application/json`",
                );
            }
            _ => (rejection.status(), "body"),
        };
        let message = detail(rejection.body_text());
        let field = field_of(&message).unwrap_or(field).to_owned();
        Self::fields(status, vec![FieldError { field, message }])
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        let message = detail(rejection.body_text());
        let field = field_of(&message).unwrap_or("query").to_owned();
        Self::bad_request(&field, message)
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        Self::bad_request("path", detail(rejection.body_text()))
    }
}
