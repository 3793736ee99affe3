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

/// Token counts that remember the parts of the texts they counted, for counting many texts
/// that share large parts (a tool's schema with one operation more or less, as an importer
/// sizes its tools): the figures are [`count`]'s, exactly; only the same part is not
/// tokenized twice.
///
/// A text is counted in parts cut where `o200k_base`'s pre-tokenizer (which has no
/// look-behind, so the pieces on either side of such a place are the same alone as together)
/// always starts a new piece: where an ASCII letter is followed by two or more ASCII
/// punctuation characters (a letter run ends there, as only `'` continues one), and after that
/// run of punctuation where a letter or digit follows it (no letter follows its first
/// character, so the run is one piece). In a tool's JSON these are the places around `":"`,
/// `","` and `},{"`: each operation's branch of the `oneOf` is counted in the same parts in
/// every table it is in. A text holding a special token (`<|...`) is counted whole.
///
/// ```
/// let memo = toolgate_tokens::Memo::default();
/// let text = r#"{"oneOf":[{"type":"object"},{"type":"object"}]}"#;
/// assert_eq!(memo.count(text), toolgate_tokens::count(text));
/// assert_eq!(memo.count(text), toolgate_tokens::count(text), "the second time from memory");
/// ```
#[derive(Debug, Default)]
pub struct Memo {
    parts: std::cell::RefCell<std::collections::HashMap<Box<str>, usize>>,
}

impl Memo {
    /// Tokens of `text`, as [`count`] gives them.
    pub fn count(&self, text: &str) -> usize {
        let mut parts = self.parts.borrow_mut();
        let mut total = 0;
        for part in parts_of(text) {
            total += match parts.get(part) {
                Some(&n) => n,
                None => {
                    let n = count(part);
                    parts.insert(part.into(), n);
                    n
                }
            };
        }
        total
    }

    /// Tokens of one tool, as [`tool`] gives them.
    pub fn tool(&self, name: &str, description: &str, input_schema: &Value) -> usize {
        self.count(&tool_text(name, description, input_schema))
    }

    /// Whether one tool costs at most `limit` tokens, as [`tool_within`] says; with its tokens
    /// when they were counted (a text within `limit` bytes is not).
    pub fn tool_within(
        &self,
        name: &str,
        description: &str,
        input_schema: &Value,
        limit: usize,
    ) -> (bool, Option<usize>) {
        let text = tool_text(name, description, input_schema);
        if text.len() <= limit {
            return (true, None);
        }
        let n = self.count(&text);
        (n <= limit, Some(n))
    }
}

/// `text` cut into consecutive parts whose token counts add up to its own (see [`Memo`]).
fn parts_of(text: &str) -> Vec<&str> {
    // A special token (`<|endoftext|>`) is one token wherever it is: never cut into.
    if text.contains("<|") {
        return vec![text];
    }
    let b = text.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    let mut p = 1;
    while p + 1 < b.len() {
        if !(b[p - 1].is_ascii_alphabetic()
            && b[p].is_ascii_punctuation()
            && b[p] != b'\''
            && b[p + 1].is_ascii_punctuation())
        {
            p += 1;
            continue;
        }
        // A letter run ends at `p` (only `'` continues one), and no letter follows the
        // punctuation there, so the next piece is the whole run of punctuation.
        if p > start {
            parts.push(&text[start..p]);
            start = p;
        }
        let mut q = p + 1;
        while q < b.len() && b[q].is_ascii_punctuation() {
            q += 1;
        }
        if q < b.len() && b[q].is_ascii_alphanumeric() {
            parts.push(&text[start..q]);
            start = q;
        }
        p = q;
    }
    parts.push(&text[start..]);
    parts
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
    fn a_memo_counts_as_the_tokenizer_does() {
        let memo = Memo::default();
        let branch = |op: &str| {
            json!({"additionalProperties": false, "properties": {"op": {"const": op, "description": "Read the cats."},
                "kind": {"oneOf": [{"type": "string"}, {"type": "integer", "description": "A number\"},{\"x"}]}},
                "required": ["op"], "type": "object"})
        };
        let mut branches = Vec::new();
        for op in ["list_cats", "get_cat", "ÉtéCat", "x1"] {
            branches.push(branch(op));
            let schema = json!({"type": "object", "oneOf": branches});
            for name in ["query_cats", "q"] {
                let text = tool_text(name, "Cats. Operations: `list_cats`; \"quoted\"},{", &schema);
                assert!(parts_of(&text).len() > branches.len(), "{text}");
                assert_eq!(parts_of(&text).concat(), text);
                assert_eq!(memo.count(&text), count(&text), "{text}");
                assert_eq!(memo.tool(name, "d", &schema), tool(name, "d", &schema));
            }
        }
        for text in [
            "",
            "a",
            "a\"",
            "ab\"},{",
            "\"},{\"}",
            "x\":[{y\"}]z",
            "it's\",\"a",
            "a.\n\nb",
            "x<|endoftext|>\"y",
            "é\"}é",
            "a\"}1",
        ] {
            assert_eq!(parts_of(text).concat(), text);
            assert_eq!(memo.count(text), count(text), "{text:?}");
        }
        // Any text: this file's own source (code, prose, quotes, `'`, line breaks), as it is
        // and as a JSON string.
        // (Without its special-token examples, which make a text be counted whole.)
        let source = include_str!("lib.rs").replace("<|", "< |");
        assert!(parts_of(&source).len() > 100);
        assert_eq!(memo.count(&source), count(&source));
        let quoted = json!({"description": source, "lines": source.lines().collect::<Vec<_>>()}).to_string();
        assert!(parts_of(&quoted).len() > 100);
        assert_eq!(memo.count(&quoted), count(&quoted));
        let small = json!({"type": "object"});
        assert_eq!(memo.tool_within("t", "d", &small, 1000), (true, None));
        let n = tool("t", "d", &small);
        assert_eq!(memo.tool_within("t", "d", &small, 5), (n <= 5, Some(n)));
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
