//! The web page at `/`: static HTML and plain JS, no build step, served
//! with a strict Content-Security-Policy. Its stylesheet (`/page.css`) and
//! the operator's section (`/admin.js`, shown to the highest role only, which
//! alone may call the `/api/admin/` routes it reads) are served beside it,
//! like it without a key.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// The page: embedded at build time.
const INDEX_HTML: &str = include_str!("../web/index.html");
const PAGE_CSS: &str = include_str!("../web/page.css");
const ADMIN_JS: &str = include_str!("../web/admin.js");

/// A static asset of the page: no sniffing, not cached across versions of the server.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = ([(header::CONTENT_TYPE, content_type)], body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

pub(super) async fn stylesheet() -> Response {
    asset("text/css; charset=utf-8", PAGE_CSS)
}

pub(super) async fn admin_script() -> Response {
    asset("text/javascript; charset=utf-8", ADMIN_JS)
}

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
            "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; connect-src 'self'; \
             img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
