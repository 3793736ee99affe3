//! Resources toolgate serves itself ([`Resources`]): a tool's large result kept on the
//! server (a full itinerary plan) that the result links to and the same caller reads
//! with `resources/read`, instead of the whole of it passing through the model.

use serde_json::Value;

use crate::{BoxFuture, Caller, ToolError};

/// A family of resources under one URI template, e.g. `toolgate://plans/{plan_id}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceTemplate {
    /// The RFC 6570 URI template.
    pub uri_template: String,
    /// A short name.
    pub name: String,
    /// What the resources are, in words.
    pub description: String,
    /// The MIME type of their contents.
    pub mime_type: String,
}

/// A link from a tool's result to a resource it left on the server.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// A short name.
    pub name: String,
    /// What it is, in words.
    pub description: String,
    /// The MIME type of its contents.
    pub mime_type: String,
    /// Its size in bytes, when known.
    pub size: Option<u64>,
}

/// The contents of one resource, as text.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceText {
    /// The resource's URI.
    pub uri: String,
    /// The MIME type of `text`.
    pub mime_type: String,
    /// The contents.
    pub text: String,
}

/// Resources a tool source serves itself, each visible only to the callers it belongs to.
pub trait Resources: Send + Sync + std::fmt::Debug {
    /// The URI templates served.
    fn templates(&self) -> Vec<ResourceTemplate>;

    /// The link a successful result of `tool` carries, when it left a resource.
    fn link_for(&self, tool: &str, result: &Value) -> Option<ResourceLink>;

    /// Read `uri` for `caller`: `None` when the URI is not one of these templates';
    /// `Some(Err(NOT_FOUND))` when it is but this caller has no such resource.
    fn read<'a>(
        &'a self,
        caller: &'a Caller,
        uri: &'a str,
    ) -> Option<BoxFuture<'a, Result<ResourceText, ToolError>>>;
}
