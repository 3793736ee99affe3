//! An upstream tool's MCP description as one of our [`ToolSpec`]s: the
//! naming rule, the effect, and the schema closed like ours.

use serde_json::Value;
use tool_core::names::NAMESPACE_SEPARATOR;
use tool_core::{Effect, ToolSpec};

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

/// The spec of an upstream tool, or why it is left out.
pub(crate) fn spec_for(config: &UpstreamConfig, tool: &rmcp::model::Tool) -> Result<ToolSpec, String> {
    let name = local_name(&config.name, &tool.name).ok_or_else(|| {
        format!("`{}`: the name is longer than 64 characters with its namespace", tool.name)
    })?;
    let description = match tool.description.as_deref().map(str::trim) {
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
        .with_tags(["upstream"])
        .with_timeout(config.timeout))
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
            assert!(tool_core::names::is_namespaced_tool_name(&name), "{name}");
        }
    }
}
