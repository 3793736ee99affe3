//! Building route tables in code: [`RouteTable`], [`Route`], [`crate::Field`] and
//! [`crate::Items`] are `#[non_exhaustive]` (tables learn new keys), so code outside this
//! crate starts from a constructor and sets the public fields it needs.
//!
//! ```
//! use toolgate_schema::{Field, FieldType, Method, Route, RouteTable};
//!
//! let mut route = Route::new("get_weight", Method::Get, "/body/weight/{date}", "Weight measured on one day");
//! route.fields.push(Field::new("date", FieldType::String).required().format("date"));
//! let table = RouteTable::new("query_body", "Reads body measurements.", "body", vec![route]);
//! table.check().unwrap();
//! assert_eq!(table.required_role, "guest");
//! ```

use super::{Route, RouteTable};
use crate::Method;

/// The role a table is for when it names none: every caller.
pub(super) fn guest() -> String {
    "guest".to_owned()
}

impl RouteTable {
    /// A table of `routes` for the tool `tool`, readable by every role (`guest`), no tags,
    /// no result template. Check it with [`RouteTable::check`] before serving it.
    pub fn new(
        tool: impl Into<String>,
        description: impl Into<String>,
        domain: impl Into<String>,
        routes: Vec<Route>,
    ) -> Self {
        Self {
            tool: tool.into(),
            description: description.into(),
            domain: domain.into(),
            required_role: guest(),
            tags: Vec::new(),
            result_template: None,
            routes,
            about: Vec::new(),
        }
    }
}

impl Route {
    /// An operation without fields: a JSON body when its method sends one (`body =
    /// "required"`), `Accept: application/json`, the domain's server and credential.
    pub fn new(
        op: impl Into<String>,
        method: Method,
        path: impl Into<String>,
        summary: impl Into<String>,
    ) -> Self {
        Self {
            op: op.into(),
            method,
            path: path.into(),
            summary: summary.into(),
            fields: Vec::new(),
            body: Default::default(),
            body_encoding: Default::default(),
            body_field: None,
            content_type: None,
            accept: Vec::new(),
            server: None,
            security: None,
        }
    }
}
