//! An upstream tool's MCP description as one of our [`ToolSpec`]s: the
//! naming rule, the effect, and the schema closed like ours.

use serde_json::Value;
use toolgate_core::names::NAMESPACE_SEPARATOR;
use toolgate_core::{Effect, ToolSpec};

use crate::UpstreamConfig;

/// Our name for an upstream tool: `<upstream>__<tool>`, with every character
/// of the tool's name outside `[A-Za-z0-9_-]` turned into `_`. `None` when
/// the result would be longer than 64 characters (model APIs refuse it).
pub fn local_name(upstream: &str, tool: &str) -> Option<String> {
    let tool: String = tool
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    let name = format!("{upstream}{NAMESPACE_SEPARATOR}{tool}");
    (name.len() <= 64 && !tool.is_empty()).then_some(name)
}

/// The most of an upstream tool's description we keep, in bytes; the rest is cut with a note.
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 8 * 1024;
/// The longest input schema we take from an upstream (its JSON text, in bytes).
pub(crate) const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// The most tools we take from one upstream; further ones are left out.
pub(crate) const MAX_TOOLS: usize = 256;
/// How much of a refused name goes into a log line.
const NAME_IN_LOG: usize = 80;

/// The spec of an upstream tool, or why it is left out (a sentence that quotes at most
/// [`NAME_IN_LOG`] characters of the name). A description past
/// [`MAX_DESCRIPTION_BYTES`] is clipped with a note; a schema past [`MAX_SCHEMA_BYTES`]
/// leaves the tool out. A tool that supports tasks (`tasks`: its listing's
/// `execution.taskSupport`) is tagged so ([`crate::task_support::TASK_TAG`]).
pub(crate) fn spec_for(
    config: &UpstreamConfig,
    tool: &rmcp::model::Tool,
    tasks: bool,
) -> Result<ToolSpec, String> {
    let shown = || {
        let head: String = tool.name.chars().take(NAME_IN_LOG).collect();
        if head.len() < tool.name.len() { format!("{head}…") } else { head }
    };
    let name = if config.prefix {
        local_name(&config.name, &tool.name).ok_or_else(|| {
            format!(
                "`{}` ({} characters): the name is longer than 64 characters with its namespace",
                shown(),
                tool.name.chars().count()
            )
        })?
    } else if toolgate_core::names::is_tool_name(&tool.name)
        || toolgate_core::names::is_namespaced_tool_name(&tool.name)
    {
        // Kept as it is (`prefix = false`): only a name the gateway takes as it is.
        tool.name.to_string()
    } else {
        return Err(format!(
            "`{}`: with `prefix = false` a tool keeps its name, and this one is not a snake_case verb_noun name (lowercase words joined by `_`) toolgate can serve",
            shown()
        ));
    };
    let schema_bytes = serde_json::to_vec(&*tool.input_schema).map_or(usize::MAX, |v| v.len());
    if schema_bytes > MAX_SCHEMA_BYTES {
        return Err(format!(
            "`{}`: its input schema is {schema_bytes} bytes, more than the {MAX_SCHEMA_BYTES} toolgate takes",
            shown()
        ));
    }
    let description = match tool.description.as_deref().map(str::trim) {
        Some(text) if text.len() > MAX_DESCRIPTION_BYTES => {
            tracing::warn!(
                upstream = %config.name, tool = %name, bytes = text.len(),
                "upstream tool description clipped to {MAX_DESCRIPTION_BYTES} bytes"
            );
            clip_description(text)
        }
        Some(text) if !text.is_empty() => text.to_owned(),
        _ => format!("Tool `{}` of the MCP server `{}`.", tool.name, config.name),
    };
    let mut schema = (*tool.input_schema).clone();
    // The model must send only the declared fields, as with our own tools; a
    // schema that says nothing about other fields is closed here. One that
    // explicitly allows them fails the registration check and is left out.
    if !schema.contains_key("additionalProperties") && !schema.contains_key("oneOf") {
        schema.insert("additionalProperties".into(), Value::Bool(false));
    }
    if !schema.contains_key("properties") && !schema.contains_key("oneOf") {
        schema.insert("properties".into(), Value::Object(Default::default()));
    }
    Ok(ToolSpec::new(name, description, Value::Object(schema))
        .with_effect(effect(config, tool))
        .with_role(config.required_role.clone())
        .with_domain(config.name.clone())
        .with_tags(["upstream"].into_iter().chain(tasks.then_some(crate::task_support::TASK_TAG)))
        .with_timeout(config.timeout))
}

/// The first [`MAX_DESCRIPTION_BYTES`] of `text` (at a character boundary) and a note that
/// the rest was cut.
fn clip_description(text: &str) -> String {
    let mut end = MAX_DESCRIPTION_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… (clipped by toolgate: the MCP server's description is {} bytes, {MAX_DESCRIPTION_BYTES} are kept)",
        text[..end].trim_end(),
        text.len()
    )
}

/// Read-only when the configuration says so, or when the annotations say so
/// and are trusted; otherwise a write (idempotent only by trusted annotation).
fn effect(config: &UpstreamConfig, tool: &rmcp::model::Tool) -> Effect {
    if config.read_only_tools.iter().any(|t| *t == tool.name) {
        return Effect::Read;
    }
    let annotations = tool.annotations.as_ref().filter(|_| config.trust_annotations);
    match annotations {
        Some(a) if a.read_only_hint == Some(true) => Effect::Read,
        Some(a) => Effect::Write { idempotent: a.idempotent_hint == Some(true) },
        None => Effect::Write { idempotent: false },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_legal_characters_and_a_length_bound() {
        assert_eq!(local_name("weather", "get_forecast").as_deref(), Some("weather__get_forecast"));
        assert_eq!(local_name("w", "get.forecast now").as_deref(), Some("w__get_forecast_now"));
        assert_eq!(local_name("w", "getForecast-v2").as_deref(), Some("w__getForecast-v2"));
        assert_eq!(local_name("w", &"x".repeat(70)), None);
        assert_eq!(local_name("w", ""), None);
        for name in [local_name("w", "a.b").unwrap(), local_name("weather", "get_forecast").unwrap()] {
            assert!(toolgate_core::names::is_namespaced_tool_name(&name), "{name}");
        }
    }

    #[test]
    fn a_long_description_is_clipped_at_a_character_boundary_with_a_note() {
        let text = "é".repeat(MAX_DESCRIPTION_BYTES);
        let clipped = clip_description(&text);
        assert!(clipped.starts_with("éé") && clipped.contains("clipped by toolgate"), "{clipped}");
        assert!(clipped.len() < MAX_DESCRIPTION_BYTES + 200, "{}", clipped.len());
    }
}
