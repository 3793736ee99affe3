//! Token counts of what a model reads, in tokens of a real tokenizer that works offline
//! (tiktoken's `o200k_base`, shipped inside tiktoken-rs, loaded once per process).
//!
//! One estimate for everything that sizes model context: `toolgate budget` (the first-call
//! context per exposure mode and per domain) and the OpenAPI importer's limit on one
//! generated tool ([`tool`]).
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//!
//! // A text: what a description or a result costs the model.
//! let description = "Read pets in Petstore.";
//! let text = toolgate_tokens::count(description);
//! assert!(text > 3);
//! assert_eq!(toolgate_tokens::count(""), 0);
//!
//! // A tool as a tool list shows it: name, description and input schema together.
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"species": {"type": "string", "enum": ["cat", "dog"]}},
//!     "additionalProperties": false
//! });
//! let whole = toolgate_tokens::tool("query_pets", description, &schema);
//! assert!(whole > text, "the schema and the name count too");
//! println!("{whole} tokens ({})", toolgate_tokens::TOKENIZER);
//! ```
//!
//! # Cargo features
//!
//! None. The tokenizer's data is compiled in: counting needs no network and no files.
#![deny(missing_docs)]

use serde_json::{Value, json};

/// The name of the tokenizer the figures use.
pub const TOKENIZER: &str = "o200k_base (tiktoken-rs)";

/// Tokens of `text`.
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().encode_with_special_tokens(text).len()
}

/// Tokens of one tool as a model reads it in a tool list: its name, description and input
/// schema as one JSON object (`{"name", "description", "inputSchema"}`), which is what a
/// tool's size is measured by (its schema + description).
pub fn tool(name: &str, description: &str, input_schema: &Value) -> usize {
    count(&tool_text(name, description, input_schema))
}

/// Whether one tool ([`tool`]) costs at most `limit` tokens. A text of at most `limit` bytes
/// is within it without being tokenized (every `o200k_base` token stands for one byte at
/// least), so the tokenizer (about 45 MiB and 0.2 s to load) is loaded only for larger tools.
pub fn tool_within(name: &str, description: &str, input_schema: &Value, limit: usize) -> bool {
    let text = tool_text(name, description, input_schema);
    text.len() <= limit || count(&text) <= limit
}

fn tool_text(name: &str, description: &str, input_schema: &Value) -> String {
    json!({ "name": name, "description": description, "inputSchema": input_schema }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_within_the_limit_by_its_bytes_is_within_it_by_its_tokens() {
        let schema = json!({"type": "object", "properties": {"date": {"type": "string"}}});
        let tokens = tool("query_weather", "The weather of a day, in a city.", &schema);
        let bytes = tool_text("query_weather", "The weather of a day, in a city.", &schema).len();
        assert!(tokens <= bytes, "{tokens} tokens, {bytes} bytes");
        for limit in [tokens - 1, tokens, bytes, bytes + 1] {
            assert_eq!(
                tool_within("query_weather", "The weather of a day, in a city.", &schema, limit),
                tokens <= limit
            );
        }
    }

    #[test]
    fn counts_grow_with_the_text() {
        assert_eq!(count(""), 0);
        let one = count("update the database users");
        assert!(one >= 4, "{one}");
        assert!(count(&"update the database users ".repeat(10)) >= 9 * one);
    }

    #[test]
    fn a_tool_counts_its_schema_and_description() {
        let small = json!({"type": "object"});
        let big = json!({"type": "object", "properties": {"name": {"type": "string", "description": "The user's name."}}});
        assert!(tool("t", "d", &big) > tool("t", "d", &small));
        assert!(tool("t", "a longer description of the tool", &small) > tool("t", "d", &small));
    }
}
