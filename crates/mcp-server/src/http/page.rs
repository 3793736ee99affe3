//! The web page at `/`: static HTML and plain JS, no build step, served
//! with a strict Content-Security-Policy.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// The page: embedded at build time.
const INDEX_HTML: &str = include_str!("../web/index.html");

/// The tab's icon. Browsers ask for `/favicon.ico` on their own, without
/// the key the page holds, so it is served like the page (Host checked, no key).
pub(super) async fn favicon() -> Response {
    let mut response =
        ([(header::CONTENT_TYPE, "image/svg+xml")], crate::mcp_shape::ICON_SVG).into_response();
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
    response
}

pub(super) async fn index() -> Response {
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX_HTML).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; \
             img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
