//! Tool calls written in plain model text, for models without native tool
//! calling: a fenced JSON block, `<tool_call>` tags, or a bare JSON object,
//! with `name`/`tool_name` and `arguments`/`parameters`. A call that parses
//! goes through the same execute path; text that is malformed or ambiguous
//! runs nothing and says why. [`parse_all`] reads every call of a message
//! (an agent loop runs them all); [`parse`] insists on exactly one.

use serde_json::{Map, Value};
use toolgate_core::{Envelope, ErrorCode, Metadata, ToolContext, ToolError};

use crate::{CallOptions, EXECUTE_TOOL, Gateway};

/// A tool call found in text.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    /// The tool to run.
    pub tool: String,
    /// Its parameters.
    pub parameters: Value,
}

/// Why no call was taken from the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FallbackError {
    /// Nothing in the text looks like a tool call.
    #[error(
        "no tool call found: write one JSON object {{\"name\": ..., \"arguments\": {{...}}}} in a ```json block"
    )]
    NoCall,
    /// Something looks like a tool call but is not well formed.
    #[error("malformed tool call: {0}")]
    Malformed(String),
    /// More than one reading is possible; nothing was run.
    #[error("ambiguous tool call: {0}; nothing was run, send exactly one call")]
    Ambiguous(String),
}

/// Find the one tool call in `text`.
pub fn parse(text: &str) -> Result<ParsedCall, FallbackError> {
    let mut candidates = tagged(text);
    if candidates.is_empty() {
        candidates = fenced(text);
    }
    if candidates.is_empty() {
        let trimmed = text.trim();
        if trimmed.starts_with('{') {
            candidates.push(trimmed.to_owned());
        } else if let (Some(start), Some(end)) = (text.find('{'), text.rfind('}'))
            && start < end
        {
            candidates.push(text[start..=end].to_owned());
        }
    }
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    for candidate in &candidates {
        match interpret(candidate) {
            Ok(Some(call)) => calls.push(call),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    match (calls.len(), errors.len()) {
        (1, 0) => Ok(calls.remove(0)),
        (0, 0) => Err(FallbackError::NoCall),
        (0, _) => Err(FallbackError::Malformed(errors.remove(0))),
        (n, 0) => Err(FallbackError::Ambiguous(format!("found {n} tool calls"))),
        (n, m) => Err(FallbackError::Ambiguous(format!("found {n} tool calls and {m} malformed ones"))),
    }
}

/// Every tool call in `text`: each `<tool_call>` pair, else each fenced JSON
/// block, else the whole text when it is one JSON object; a JSON array of
/// calls counts as several. Text whose call markup does not parse is
/// `Malformed` (nothing runs, the model is told why); prose that merely
/// contains braces is `NoCall`, so a final answer is never mistaken for a call.
pub fn parse_all(text: &str) -> Result<Vec<ParsedCall>, FallbackError> {
    let mut candidates = tagged(text);
    if candidates.is_empty() {
        candidates = fenced(text);
    }
    if candidates.is_empty() && (text.trim().starts_with('{') || text.trim().starts_with("[{")) {
        candidates.push(text.trim().to_owned());
    }
    let mut calls = Vec::new();
    for (i, candidate) in candidates.iter().enumerate() {
        let items = match serde_json::from_str::<Value>(candidate) {
            Ok(Value::Array(items)) => items.into_iter().map(|v| v.to_string()).collect(),
            _ => vec![candidate.clone()],
        };
        for item in items {
            match interpret(&item) {
                Ok(Some(call)) => calls.push(call),
                Ok(None) => {}
                Err(e) => {
                    let which =
                        if candidates.len() > 1 { format!("call {}: ", i + 1) } else { String::new() };
                    return Err(FallbackError::Malformed(format!("{which}{e}")));
                }
            }
        }
    }
    if calls.is_empty() { Err(FallbackError::NoCall) } else { Ok(calls) }
}

/// Whether `text` carries call markup (a `<tool_call>` tag, a fenced JSON
/// object, or is itself a JSON object): such text is a call attempt, not an answer.
pub fn has_call_markup(text: &str) -> bool {
    let trimmed = text.trim();
    !tagged(text).is_empty()
        || !fenced(text).is_empty()
        || trimmed.starts_with('{')
        || trimmed.starts_with("[{")
}

/// The contents of every `<tool_call>...</tool_call>` pair.
fn tagged(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<tool_call>") {
        let after = &rest[start + "<tool_call>".len()..];
        match after.find("</tool_call>") {
            Some(end) => {
                out.push(after[..end].trim().to_owned());
                rest = &after[end + "</tool_call>".len()..];
            }
            None => {
                // An unclosed tag: take the rest, the JSON decides.
                out.push(after.trim().to_owned());
                break;
            }
        }
    }
    out
}

/// The contents of every fenced block that is tagged json or untagged and starts with `{`.
fn fenced(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut parts = text.split("```");
    parts.next();
    while let Some(block) = parts.next() {
        let (lang, body) = block.split_once('\n').unwrap_or((block, ""));
        let lang = lang.trim().to_lowercase();
        let body = body.trim();
        if (lang == "json" || lang.is_empty() || lang == "tool_call")
            && (body.starts_with('{') || body.starts_with("[{"))
        {
            out.push(body.to_owned());
        }
        // Skip the text between this block's closing fence and the next opening one.
        parts.next();
    }
    out
}

fn interpret(candidate: &str) -> Result<Option<ParsedCall>, String> {
    let value: Value = serde_json::from_str(candidate).map_err(|e| format!("not valid JSON ({e})"))?;
    let Value::Object(map) = value else {
        return Err("the call must be a JSON object".into());
    };
    let Some(tool) = one_of(&map, &["name", "tool_name", "tool"])? else {
        return Ok(None);
    };
    let Some(tool) = tool.as_str().map(str::to_owned) else {
        return Err("the tool name must be a string".into());
    };
    let parameters = match one_of(&map, &["arguments", "parameters", "args", "input"])? {
        None => Value::Object(Map::new()),
        // OpenAI-style arguments arrive as a JSON string.
        Some(Value::String(s)) => {
            serde_json::from_str(s).map_err(|e| format!("`arguments` is a string that is not JSON ({e})"))?
        }
        Some(v) => v.clone(),
    };
    // A model that wrote the meta-tool call in text: unwrap it.
    if tool == EXECUTE_TOOL
        && let Some(inner) = parameters.get("tool_name").and_then(Value::as_str)
    {
        let params = parameters.get("parameters").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        return Ok(Some(ParsedCall { tool: inner.to_owned(), parameters: params }));
    }
    Ok(Some(ParsedCall { tool, parameters }))
}

/// The value of exactly one of `keys`; two of them with different values is an error.
fn one_of<'a>(map: &'a Map<String, Value>, keys: &[&str]) -> Result<Option<&'a Value>, String> {
    let present: Vec<(&str, &Value)> = keys.iter().filter_map(|k| map.get(*k).map(|v| (*k, v))).collect();
    match present.as_slice() {
        [] => Ok(None),
        [(_, v)] => Ok(Some(v)),
        [(_, first), rest @ ..] if rest.iter().all(|(_, v)| v == first) => Ok(Some(first)),
        _ => Err(format!(
            "both {} are given with different values",
            present.iter().map(|(k, _)| format!("`{k}`")).collect::<Vec<_>>().join(" and ")
        )),
    }
}

impl Gateway {
    /// Find one tool call in model text and run it through [`Gateway::execute`].
    /// Text without exactly one well-formed call runs nothing and answers `PARSE_ERROR`.
    pub async fn execute_text(&self, ctx: &ToolContext, text: &str, opts: &CallOptions) -> Envelope {
        match parse(text) {
            Ok(call) => self.execute(ctx, &call.tool, call.parameters, opts).await,
            Err(e) => {
                let error = ToolError::new(ErrorCode::ParseError, e.to_string());
                Envelope::err(error, Metadata::now("", 0.0, 0))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(text: &str, expect: Result<(&str, Value), &str>) {
        let got = parse(text);
        match (got, expect) {
            (Ok(call), Ok((tool, params))) => {
                assert_eq!(call.tool, tool, "{text}");
                assert_eq!(call.parameters, params, "{text}");
            }
            (Err(e), Err(fragment)) => assert!(e.to_string().contains(fragment), "{text}: {e}"),
            (got, expect) => panic!("{text}: got {got:?}, expected {expect:?}"),
        }
    }

    #[test]
    fn formats_models_write() {
        check(
            "Sure.\n```json\n{\"name\": \"query_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\n",
            Ok(("query_weather", json!({"city": "Paris"}))),
        );
        check(
            "<tool_call>\n{\"name\": \"query_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>",
            Ok(("query_weather", json!({"city": "Oslo"}))),
        );
        check(
            "{\"tool_name\": \"query_weather\", \"parameters\": {\"city\": \"Rome\"}}",
            Ok(("query_weather", json!({"city": "Rome"}))),
        );
        check(
            "{\"name\": \"query_weather\", \"arguments\": \"{\\\"city\\\": \\\"Lima\\\"}\"}",
            Ok(("query_weather", json!({"city": "Lima"}))),
        );
        check(
            "I will call it: {\"name\": \"execute_tool\", \"arguments\": {\"tool_name\": \"query_weather\", \"parameters\": {\"city\": \"Kyiv\"}}} now",
            Ok(("query_weather", json!({"city": "Kyiv"}))),
        );
        check("<tool_call>{\"name\": \"list_things\"}</tool_call>", Ok(("list_things", json!({}))));
    }

    #[test]
    fn several_calls_in_one_message() {
        let names =
            |text: &str| -> Vec<String> { parse_all(text).unwrap().into_iter().map(|c| c.tool).collect() };
        assert_eq!(
            names(
                "<tool_call>{\"name\": \"a_b\"}</tool_call>\n<tool_call>{\"name\": \"c_d\", \"arguments\": {\"x\": 1}}</tool_call>"
            ),
            ["a_b", "c_d"]
        );
        assert_eq!(
            names("First:\n```json\n{\"name\": \"a_b\"}\n```\nthen\n```json\n{\"name\": \"c_d\"}\n```"),
            ["a_b", "c_d"]
        );
        assert_eq!(names("```json\n[{\"name\": \"a_b\"}, {\"tool_name\": \"c_d\"}]\n```"), ["a_b", "c_d"]);
        assert_eq!(names("{\"name\": \"a_b\", \"arguments\": {}}"), ["a_b"]);
        // An answer that merely mentions braces is not a call.
        assert_eq!(parse_all("The set {a, b} has two members."), Err(FallbackError::NoCall));
        assert!(!has_call_markup("The set {a, b} has two members."));
        let err = parse_all("<tool_call>{\"name\": \"a_b\"}</tool_call><tool_call>{\"name\": }</tool_call>")
            .unwrap_err();
        assert!(
            matches!(&err, FallbackError::Malformed(m) if m.starts_with("call 2: not valid JSON")),
            "{err}"
        );
        assert!(has_call_markup("<tool_call>{\"name\": }</tool_call>"));
    }

    #[test]
    fn malformed_and_ambiguous_text_runs_nothing() {
        check("just prose, no call", Err("no tool call found"));
        check(
            "```json\n{\"name\": \"query_weather\", \"arguments\": {\"city\": }\n```",
            Err("not valid JSON"),
        );
        check(
            "<tool_call>{\"name\": \"a_b\"}</tool_call><tool_call>{\"name\": \"c_d\"}</tool_call>",
            Err("found 2 tool calls"),
        );
        check("{\"name\": \"a_b\", \"tool_name\": \"c_d\"}", Err("different values"));
        check("{\"name\": 7}", Err("must be a string"));
        check("{\"name\": \"a_b\", \"arguments\": \"{oops\"}", Err("string that is not JSON"));
        check("{\"city\": \"Paris\"}", Err("no tool call found"));
    }
}
