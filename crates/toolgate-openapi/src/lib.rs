//! OpenAPI import: an OpenAPI 3.0 or 3.1 document (JSON or YAML) becomes route tables, one
//! read tool (GET) and one write tool (POST, PUT, PATCH, DELETE) per domain, where a domain is
//! an OpenAPI tag or the first path segment.
//!
//! Local `$ref`s are resolved and `allOf` merged. Path, query and body fields keep their
//! types, formats, enums, bounds, nullability, required-ness and descriptions. A path key's
//! `#fragment` is dropped (it only tells operations apart in the document) and its `?key=value`
//! becomes the route's fixed query. A parameter name the model may not see as it is (`user_id`,
//! which toolgate fills from the caller; `StartTime<`, `filter.name`) is renamed for the model
//! (`target_user_id`, `StartTime_lt`, `filter_name`) and keeps its name on the wire (a path
//! variable renamed in the path, any other field through its `wire_name`).
//! A body is JSON when the operation offers JSON, else an `application/x-www-form-urlencoded`
//! form (Twilio's writes: `body_encoding = "form"`, scalars and arrays of scalars only).
//! `oneOf`/`anyOf` fields keep their branches (`one_of`/`any_of`, type `any` when they differ
//! in type), `additionalProperties` objects their `values` (a free-form object takes any
//! keys), an object whose member names a table cannot hold is taken whole as a free-form one,
//! and a schema nesting deeper than 16 levels or containing itself is cut there to a free-form
//! object, its description saying so. Header parameters are header fields; a body member named
//! like a parameter is `body_<name>` for the model; a DELETE's JSON body is sent when one of
//! its fields is given. A `multipart/form-data` body is a multipart route (its files base64
//! text), a body that is a `oneOf`/`anyOf` of objects one route per branch. A body that is not
//! an object of declared members is one field sent as the body itself (`body_field`): a JSON
//! array named for its items (`users` for `[User]`), a free-form object or any other JSON value
//! as `body`, in the document's JSON type (`content_type = "application/json-patch+json"`); a
//! raw binary body (`application/octet-stream`, `image/png`) is `content`, base64 text sent
//! decoded with that media type (`body_encoding = "binary"`), and a string in another media
//! type `content` sent as it is given (`body_encoding = "text"`). An operation that cannot be
//! mapped faithfully (an XML or other object body that is neither JSON, a form nor multipart,
//! a binary body of a wildcard type such as `image/*`, a union with a branch that is not an
//! object, a form with nested fields, cookies, a GET with a body) is skipped with one
//! [`Skipped`] line, and the rest is still imported; every table returned passes
//! [`toolgate_schema::RouteTable::check`].
//!
//! Use it to turn an existing HTTP API into toolgate tools without writing route tables by
//! hand (the `toolgate import openapi` command is this crate), or to check what an OpenAPI
//! document would give before serving it.
//!
//! # Example
//!
//! A tiny OpenAPI 3.1 document with one tag, `pets`: its GET becomes an operation of the read
//! tool `query_pets`, its POST one of the write tool `update_pets`.
//!
//! ```
//! use toolgate_openapi::{AuthHint, Options, import};
//!
//! let spec = r#"
//! openapi: 3.1.0
//! info: {title: Pet store, version: "1"}
//! servers: [{url: "https://pets.example/v1"}]
//! paths:
//!   /pets/{id}:
//!     get:
//!       operationId: getPet
//!       tags: [pets]
//!       summary: One pet by id
//!       parameters:
//!         - {name: id, in: path, required: true, schema: {type: integer}}
//!   /pets:
//!     post:
//!       operationId: addPet
//!       tags: [pets]
//!       requestBody:
//!         content:
//!           application/json:
//!             schema:
//!               type: object
//!               required: [name]
//!               properties: {name: {type: string}}
//! "#;
//! let import = import(spec, &Options::default()).unwrap();
//! let tools: Vec<&str> = import.tables.iter().map(|t| t.tool.as_str()).collect();
//! assert_eq!(tools, ["query_pets", "update_pets"]);
//! assert_eq!(import.tables[0].routes[0].op, "get_pet");
//! assert_eq!(import.tables[1].routes[0].op, "add_pet");
//! assert_eq!(import.base_url.as_deref(), Some("https://pets.example/v1"));
//! assert_eq!(import.auth, AuthHint::None { note: None });
//! assert!(import.skipped.is_empty());
//! ```
//!
//! # Cargo features
//!
//! None: the importer is plain synchronous code over `serde_json` and `serde_norway` (YAML).

#![deny(missing_docs)]

mod about;
mod auth;
pub mod budget;
mod bundle;
mod document;
mod multipart;
mod names;
mod operation;
mod schema;
mod servers;
mod swagger2;
mod union;
mod whole;

pub use auth::AuthHint;
pub use bundle::{MAX_FILES, MAX_TOTAL_BYTES};
pub use document::{DomainBy, Import, Options, Skipped, import, import_file};

/// Why a document could not be imported at all (single operations are skipped, not errors).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Not valid JSON (a document starting with `{`) or not valid YAML (any other); the
    /// message names which, with the parser's line and column.
    #[error("the document is not valid {0}")]
    Parse(String),
    /// YAML nested deeper than JSON may be ([`toolgate_core::nesting::MAX_DEPTH`]), refused
    /// before the YAML parser runs.
    #[error("{0}")]
    TooDeep(toolgate_core::nesting::TooDeep),
    /// A file `$ref` that cannot be read: over the network, outside the document's folder,
    /// missing, or beyond the limits ([`MAX_FILES`], [`MAX_TOTAL_BYTES`]); the message names it.
    #[error("{0}")]
    Reference(String),
    /// Not an OpenAPI 3.0/3.1 document.
    #[error("{0}")]
    Version(String),
    /// The document has no operation that could be imported.
    #[error("no operation could be imported ({} skipped):\n- {}", skipped.len(), skipped.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n- "))]
    Nothing {
        /// Why each operation was skipped.
        skipped: Vec<Skipped>,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
