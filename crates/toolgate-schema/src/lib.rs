//! Schemas for toolgate tools: route tables (TOML or JSON data files) and
//! typed Rust parameters become JSON Schema 2020-12; [`Validator`] checks
//! parameters against them once compiled and answers every problem as a
//! [`toolgate_core::FieldError`] written for the model; [`export`] reshapes a
//! [`toolgate_core::ToolSpec`] for MCP, OpenAI (strict), Anthropic and Gemini.
//!
//! The schema that is published is the schema that validates: exports only
//! reshape it within each provider's limits, and [`export::unwrap`] undoes
//! the one structural change (a root union moved under a wrapper property).
//!
//! # Example
//!
//! A route table (one tool, one `op` per backend route) becomes the tool's JSON Schema;
//! a [`Validator`] compiled from it lets a good call through and answers a bad one with
//! every problem, in words the model can act on.
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::ToolError;
//! use toolgate_schema::{RouteTable, Validator};
//!
//! let table = RouteTable::from_toml_str(
//!     r#"
//!     tool = "query_nutrition"
//!     description = "Read the caller's nutrition log. Dates are written YYYY-MM-DD."
//!     domain = "nutrition"
//!
//!     [[routes]]
//!     op = "list_meals"
//!     method = "GET"
//!     path = "/days/{date}/meals"
//!     summary = "The meals logged on one day"
//!
//!     [[routes.fields]]
//!     name = "date"
//!     type = "string"
//!     format = "date"
//!     description = "The day, YYYY-MM-DD"
//!
//!     [[routes.fields]]
//!     name = "meal_type"
//!     type = "string"
//!     enum = ["breakfast", "lunch", "dinner"]
//!     "#,
//! )?;
//! let spec = table.spec()?; // the ToolSpec, its contract checked
//! assert_eq!(spec.name, "query_nutrition");
//! let schema = table.schema(); // JSON Schema 2020-12, `op` first
//! assert_eq!(schema["type"], "object");
//!
//! let validator = Validator::new(&schema).expect("a route table's schema compiles");
//! assert!(validator.validate(&json!({"op": "list_meals", "date": "2026-07-15"})).is_ok());
//!
//! let errors = validator
//!     .validate(&json!({"op": "list_meals", "date": "2026-02-30", "meal_type": "brunch"}))
//!     .unwrap_err();
//! let pointers: Vec<&str> = errors.iter().map(|e| e.pointer.as_str()).collect();
//! assert_eq!(pointers, ["/date", "/meal_type"]);
//! // What the model reads: one INVALID_PARAMS answer listing both problems.
//! let answer = ToolError::invalid_params(errors);
//! // 2 invalid parameters: /date: `date` "2026-02-30" is not a real calendar date; check the
//! // month and the day; /meal_type: `meal_type` must be one of "breakfast", "lunch", "dinner";
//! // got "brunch"; did you mean "lunch"?. Fix all of them and call again.
//! assert!(answer.message.starts_with("2 invalid parameters"));
//! assert!(answer.message.contains("not a real calendar date"));
//! assert!(answer.message.contains(r#"did you mean "lunch"?"#));
//! # Ok::<(), toolgate_schema::Error>(())
//! ```
//!
//! # Cargo features
//!
//! None.
#![deny(missing_docs)]

use std::path::PathBuf;

mod describe;
pub mod export;
mod suggest;
mod table;
mod tool;
mod typed;
mod validate;
mod walk;

pub use suggest::suggest;
pub use table::{
    Body, BodyEncoding, CollectionFormat, DATE_PATTERN, Field, FieldType, Items, Location, Method, OP_FIELD,
    Route, RouteTable, merge_required, path_variables,
};
pub use tool::{PLAIN_TEXT, PLAIN_TEXT_WORDS, TypedTool, tool_fn};
pub use typed::{close_objects, typed_schema};
pub use validate::{SchemaError, Validator};

/// Why a route table could not be read or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("cannot read route table {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A problem found in a file (wraps the problem with the file's path).
    #[error("route table {}: {error}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        error: Box<Error>,
    },
    /// The file name ends in neither `.toml` nor `.json`.
    #[error("the file name must end in .toml or .json")]
    Extension,
    /// The text is not valid TOML/JSON or does not have the route-table shape.
    #[error("not a valid {format} route table: {message}")]
    Parse {
        /// `TOML` or `JSON`.
        format: &'static str,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The table parsed but breaks the rules; every problem is listed.
    #[error("route table `{tool}` has {} problem(s):\n- {}", problems.len(), problems.join("\n- "))]
    Invalid {
        /// The tool name.
        tool: String,
        /// One line per problem, each saying how to fix it.
        problems: Vec<String>,
    },
    /// GET routes and write routes in one table.
    #[error(
        "route table `{tool}` mixes reads ({}) with writes ({}); a tool either reads or writes, split it into two tools",
        reads.join(", "),
        writes.join(", ")
    )]
    MixedEffect {
        /// The tool name.
        tool: String,
        /// The GET operations.
        reads: Vec<String>,
        /// The write operations, with their methods.
        writes: Vec<String>,
    },
    /// The spec built from the table fails [`toolgate_core::ToolSpec::check`].
    #[error(transparent)]
    Spec(#[from] toolgate_core::SpecError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
