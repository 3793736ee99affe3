//! Schemas for toolgate tools: route tables (TOML or JSON data files) and
//! typed Rust parameters become JSON Schema 2020-12; [`Validator`] checks
//! parameters against them once compiled and answers every problem as a
//! [`toolgate_core::FieldError`] written for the model; [`export`] reshapes a
//! [`toolgate_core::ToolSpec`] for MCP, OpenAI (strict), Anthropic and Gemini.
//!
//! The schema that is published is the schema that validates: exports only
//! reshape it within each provider's limits, and [`export::unwrap`] undoes
//! the one structural change (a root union moved under a wrapper property).

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
    Body, BodyEncoding, DATE_PATTERN, Field, FieldType, Items, Location, Method, OP_FIELD, Route, RouteTable,
    merge_required, path_variables,
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
