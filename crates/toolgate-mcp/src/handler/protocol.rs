//! Small protocol answers shared by the handler's methods: clipped client text in
//! errors, malformed params of known methods, cancellation, and cursors.

use rmcp::ErrorData as McpError;
use rmcp::model::{ErrorCode as RpcCode, PaginatedRequestParams};

/// At most 100 characters of something a client sent, for an error message.
pub(super) fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(100).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Methods whose params rmcp could not read: it hands them over as custom
/// requests, which would otherwise be answered "method not found".
pub(super) const KNOWN_METHODS: &[(&str, &str)] = &[
    ("initialize", "{\"protocolVersion\": string, \"capabilities\": object, \"clientInfo\": object}"),
    ("tools/list", "{\"cursor\"?: string}"),
    ("tools/call", "{\"name\": string, \"arguments\"?: object}"),
    ("prompts/list", "{\"cursor\"?: string}"),
    ("prompts/get", "{\"name\": string, \"arguments\"?: object}"),
    ("ping", "{}"),
];

/// The JSON-RPC error for a request the client cancelled (it is not
/// delivered to a client that follows the spec; it ends the handler).
pub(super) fn cancelled() -> McpError {
    McpError::new(RpcCode::INVALID_REQUEST, "the request was cancelled by the client", None)
}

/// Every list is answered in one page and never hands out a `nextCursor`,
/// so any cursor a client sends is one this server did not issue: an
/// invalid parameter (-32602), as the spec's pagination section says.
pub(super) fn no_cursor(request: Option<&PaginatedRequestParams>, method: &str) -> Result<(), McpError> {
    match request.and_then(|r| r.cursor.as_ref()) {
        None => Ok(()),
        Some(_) => Err(McpError::invalid_params(
            format!(
                "invalid cursor: {method} answers every item in one page and issues no cursor; send the request without one"
            ),
            None,
        )),
    }
}
